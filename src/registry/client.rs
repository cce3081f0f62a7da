//! The HTTP(S) client: reqwest on rustls (ring), the platform's and webpki's roots plus extra
//! CAs from `A2C_CA_BUNDLE` / `SSL_CERT_FILE`, proxies from the environment, timeouts from
//! `A2C_HTTP_TIMEOUT`, a bearer token for the registry's host or netrc credentials by host,
//! and retries with exponential backoff and jitter. Async stays inside: callers use blocking
//! methods (each worker thread of an install drives its own download).

use std::collections::HashMap;
use std::fmt;
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_RANGE, RANGE, RETRY_AFTER};
use url::Url;

use crate::util::digest::{Hasher, Sha256};

/// Default seconds for connecting and for each read.
pub const DEFAULT_TIMEOUT: u64 = 30;
/// Default number of retries after a failed attempt.
pub const DEFAULT_RETRIES: u64 = 4;
/// Default minimum average transfer rate (bytes per second) over the low-speed window.
pub const DEFAULT_LOW_SPEED: u64 = 1024;
/// Default low-speed window, in seconds.
pub const DEFAULT_LOW_SPEED_TIME: u64 = 60;
/// Default cap on a document read into memory (an index): 64 MiB, far above any real index.
pub const DEFAULT_MAX_DOCUMENT: u64 = 64 * 1024 * 1024;

/// Why a request failed, worded for the user. Credentials never appear: URLs with userinfo are
/// refused before any request, and tokens are never formatted.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("invalid HTTP configuration: {0}")]
    Config(String),
    #[error("cannot resolve the host `{host}` of `{url}`")]
    Dns { url: String, host: String },
    #[error("{}", match proxy {
        Some(var) => format!("cannot reach `{host}` for `{url}` through the proxy set in {var}: {reason}"),
        None => format!("cannot connect to `{host}` for `{url}`: {reason}"),
    })]
    Connect {
        url: String,
        host: String,
        reason: String,
        proxy: Option<String>,
    },
    #[error("`{host}` answered in plain HTTP where a2c spoke HTTPS, for `{url}`")]
    NotTls { url: String, host: String },
    #[error("TLS failure talking to `{host}` for `{url}`: {reason}")]
    Tls { url: String, host: String, reason: String },
    #[error("`{url}` stalled: nothing arrived for {seconds} s")]
    Timeout { url: String, seconds: u64 },
    #[error("`{url}` trickled: {bytes} bytes in the last {seconds} s, below the minimum of {min} bytes/s")]
    TooSlow {
        url: String,
        bytes: u64,
        seconds: u64,
        min: u64,
    },
    #[error("`{url}` sent more than {cap} bytes, the most a2c reads into memory for a document")]
    DocumentTooBig { url: String, cap: u64 },
    #[error("`{url}` answered HTTP {status}")]
    Status {
        url: String,
        status: u16,
        /// Whether a credential was sent with the request.
        authorized: bool,
    },
    #[error("`{url}` has fewer bytes than the lock says: the server holds {actual}, the lock pins {expected}")]
    Short { url: String, actual: u64, expected: u64 },
    #[error("the proxy {proxy} refused the request for `{url}`: HTTP 407 Proxy Authentication Required")]
    ProxyAuth { url: String, proxy: String },
    #[error("the download of `{url}` broke off: {reason}")]
    Body { url: String, reason: String },
    #[error("`{url}` sent more than the {expected} bytes the lock pins")]
    TooLong { url: String, expected: u64 },
    #[error("sha256 mismatch for `{url}`: expected {expected}, got {actual}")]
    Mismatch {
        url: String,
        expected: String,
        actual: String,
    },
    #[error("`{url}` is not an HTTP(S) URL")]
    NotHttp { url: String },
    #[error("--offline: this needs the network, which --offline forbids")]
    Offline,
    #[error("cannot get a token for `{url}`: {reason}")]
    Token { url: String, reason: String },
    #[error(
        "cannot get a token for `{url}`: its token endpoint `{realm}` is on another host, so the credentials bound to `{}` were not sent there",
        host_of(url)
    )]
    TokenWithheld { url: String, realm: String },
    #[error(
        "`{url}` answered HTTP 401: the credential bound to it was held back, because the request goes in plain HTTP through the proxy `{proxy}`"
    )]
    HeldBack { url: String, proxy: String },
    #[error("`{url}` redirected to `{to}`, another origin, which answered HTTP 401: {}", match sent {
        true => "the credential bound to the first was not forwarded",
        false => "a2c holds no credential for it",
    })]
    NotForwarded {
        url: String,
        to: String,
        /// Whether a credential went to `url` itself.
        sent: bool,
    },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl HttpError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::Config(_) => "check the A2C_* and SSL_CERT_FILE variables (see docs/registries.md)".into(),
            Self::Dns { .. } => {
                "check the registry URL and your network or DNS; offline, use `a2c install --offline --from DIR`".into()
            }
            Self::Connect { proxy: Some(var), .. } => {
                format!(
                    "the connection goes through the proxy named by {var}: check it, or exclude the host with NO_PROXY"
                )
            }
            Self::Connect { .. } => "is the registry server up? Offline, use `a2c install --offline --from DIR`".into(),
            Self::NotTls { .. } => format!(
                "the server does not speak HTTPS: for an OCI registry you trust on this network, pass --plain-http or list its host in {} (credentials are never sent in clear text)",
                "A2C_OCI_PLAIN_HTTP"
            ),
            Self::Tls { .. } => format!(
                "if the registry uses a private CA, point {} (or SSL_CERT_FILE) at a PEM file holding it",
                crate::env::A2C_CA_BUNDLE
            ),
            Self::Timeout { .. } => format!("raise {} (seconds) on a slow network", crate::env::A2C_HTTP_TIMEOUT),
            Self::TooSlow { .. } => format!(
                "the server or the network is too slow: lower {} (bytes/s, 0 turns the check off) or raise {} (seconds)",
                crate::env::A2C_HTTP_LOW_SPEED,
                crate::env::A2C_HTTP_LOW_SPEED_TIME
            ),
            Self::DocumentTooBig { .. } => format!(
                "a registry index is a few KiB to MiB: check the URL; if this one really is that large, raise {}",
                crate::env::A2C_MAX_DOCUMENT_BYTES
            ),
            // The distribution API lives under `/v2/`: an OCI registry's credentials are docker's.
            Self::Status {
                status: 401,
                authorized: false,
                url,
            } if url.contains("/v2/") => format!(
                "the registry wants credentials: run `docker login HOST` (a2c reads docker's config.json, or DOCKER_CONFIG), or set {}=user:password and name the registry with --registry or {}",
                crate::env::A2C_REGISTRY_AUTH,
                crate::env::A2C_REGISTRY
            ),
            Self::Status {
                status: 401,
                authorized: false,
                ..
            } => format!(
                "the registry wants credentials: run `a2c login` for its host (or set {} and name the host with --registry, {} or {}), or add it to ~/.netrc",
                crate::env::A2C_REGISTRY_TOKEN,
                crate::env::A2C_REGISTRY,
                crate::env::A2C_TOKEN_HOSTS
            ),
            Self::Status { status: 401, .. } => {
                "the registry refused the credentials a2c sent: check that the token is valid and not expired".into()
            }
            Self::Status {
                status: 403,
                authorized: true,
                ..
            } => "the registry refused access with the credentials a2c sent: the token lacks the right, or the file's permissions on the server forbid it".into(),
            Self::Status { status: 403, .. } => {
                "the server forbids this file: check its permissions on the server (web server workers must be able to read it); if the registry needs credentials, run `a2c login` for its host".into()
            }
            Self::Short { .. } => {
                "the registry holds a truncated or different bundle than the one locked: tell the registry's owner; this version was not installed".into()
            }
            Self::ProxyAuth { proxy, .. } => {
                format!("check the credentials in {proxy} (http://user:password@host:port), or ask your network's admin")
            }
            Self::Status { status: 404, .. } => {
                "the registry no longer serves this file: a published bundle must never move; tell the registry's owner"
                    .into()
            }
            Self::Status { status, .. } if (400..500).contains(status) && !matches!(status, 408 | 429) => format!(
                "the server refused the request (HTTP {status}) and a retry would not change that: check the registry URL; if it is a tunnel to a registry that speaks HTTPS, reach it by a name its certificate holds"
            ),
            Self::Status { .. } | Self::Body { .. } => "the server failed repeatedly; try again later".into(),
            Self::TooLong { .. } | Self::Mismatch { .. } => {
                "the registry changed a published bundle, or the download was tampered with; this version was not installed"
                    .into()
            }
            Self::Token { .. } => {
                "the registry's token service misbehaves: try again later, or tell the registry's owner".into()
            }
            Self::TokenWithheld { realm, .. } => format!(
                "if `{}` is the registry's own token service, list it in {} (credentials go to a token endpoint on another host only when you name it)",
                host_of(realm),
                crate::env::A2C_TOKEN_HOSTS
            ),
            Self::HeldBack { url, .. } => format!(
                "a proxy would see the credential in clear text: reach `{}` directly by listing it in NO_PROXY (or serve it over HTTPS)",
                host_of(url)
            ),
            Self::NotForwarded { to, .. } => format!(
                "credentials go only to the host they are bound to, never along a redirect: if `{}` is yours, bind it with `a2c login {}` (or list it in {})",
                host_of(to),
                host_of(to),
                crate::env::A2C_TOKEN_HOSTS
            ),
            Self::Offline => "drop --offline, or work from what the cache and the lock already hold".into(),
            Self::NotHttp { .. } | Self::Io(_) => return None,
        })
    }
}

/// Credentials, each bound to hosts by the user (never by a repository): see [`Auth::load`].
#[derive(Default)]
struct Auth {
    /// `a2c login` tokens, by `host[:port]` (see [`super::credentials::host_entry`]).
    logins: Vec<(String, String)>,
    /// docker's `config.json` `auths`, by `host[:port]`: the user's own binding of credentials
    /// to registry hosts (OCI registries).
    docker: Vec<(String, DockerCredential)>,
    /// docker's credential helpers: `credHelpers` by `host[:port]`, and the `credsStore`
    /// default. Run only when a registry asks for credentials none of the above gave.
    helpers: (HashMap<String, String>, Option<String>),
    /// The `A2C_REGISTRY_TOKEN` bearer token and the hosts it is bound to.
    token: Option<(Vec<HostKey>, String)>,
    /// `A2C_REGISTRY_AUTH` (`user`, `password`), bound to the same hosts as the token.
    basic: Option<(Vec<HostKey>, String, String)>,
    /// netrc `machine` entries: each bound by the user to its host.
    netrc: HashMap<String, (String, String)>,
    /// The netrc `default` entry: only for the hosts the user named (`bound`).
    netrc_default: Option<(String, String)>,
    /// Hosts the user chose: `--registry`, `A2C_REGISTRY`, `A2C_TOKEN_HOSTS`.
    bound: Vec<HostKey>,
    /// The proxies requests go through: a plain-HTTP request to a proxy carries no credential.
    proxies: super::proxy::ProxyEnv,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Auth { .. }") // never print credentials
    }
}

/// One credential from docker's `config.json`.
#[derive(Clone)]
enum DockerCredential {
    /// `auth`: base64 `user:password`.
    Basic(String, String),
    /// `identitytoken`: an OAuth2 refresh token for the registry's token endpoint.
    Identity(String),
}

/// docker's credentials: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`, its
/// `auths` entries that carry `identitytoken` or `auth` (base64 `user:password`), keyed by
/// `host[:port]`. A file that is absent or does not parse gives nothing (its content is never
/// shown).
fn docker_config() -> Option<serde_json::Value> {
    let path = crate::env::docker_config()?;
    let text = crate::util::contain::read_config(&path).ok()??;
    serde_json::from_str::<serde_json::Value>(&text).ok()
}

/// docker's credential helpers: `credHelpers` (by `host[:port]`) and `credsStore`.
fn docker_helpers(doc: &serde_json::Value) -> (HashMap<String, String>, Option<String>) {
    let valid = |name: &str| !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    let by_host = doc["credHelpers"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(host, name)| {
            let name = name.as_str().filter(|n| valid(n))?;
            Some((host.to_ascii_lowercase(), name.to_string()))
        })
        .collect();
    let store = doc["credsStore"].as_str().filter(|n| valid(n)).map(str::to_string);
    (by_host, store)
}

/// Asks docker's credential helper `name` (`docker-credential-NAME get`, the server on stdin)
/// for the credential of `server`; `None` when it has none or cannot run. Its output is never
/// shown (it holds the secret).
fn run_helper(name: &str, server: &str) -> Option<DockerCredential> {
    use std::io::Write;
    let mut child = std::process::Command::new(format!("docker-credential-{name}"))
        .arg("get")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(server.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    if !out.status.success() {
        return None;
    }
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let user = doc["Username"].as_str().unwrap_or_default();
    let secret = doc["Secret"].as_str().filter(|s| !s.is_empty())?;
    Some(match user {
        "<token>" => DockerCredential::Identity(secret.to_string()),
        _ => DockerCredential::Basic(user.to_string(), secret.to_string()),
    })
}

fn docker_auths(doc: &serde_json::Value) -> Vec<(String, DockerCredential)> {
    use base64::Engine;
    let mut out = Vec::new();
    for (key, value) in doc["auths"].as_object().into_iter().flatten() {
        let credential = if let Some(token) = value["identitytoken"].as_str().filter(|t| !t.is_empty()) {
            DockerCredential::Identity(token.to_string())
        } else {
            let Some(auth) = value["auth"].as_str() else { continue };
            let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(auth) else {
                continue;
            };
            let Some((user, password)) = String::from_utf8_lossy(&decoded)
                .split_once(':')
                .map(|(u, p)| (u.to_string(), p.to_string()))
            else {
                continue;
            };
            DockerCredential::Basic(user, password)
        };
        // Keys may be `host`, `host:port` or a URL (`https://host/v1/`).
        let host = key
            .split("://")
            .last()
            .unwrap_or(key)
            .split('/')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        out.push((host, credential));
    }
    out
}

/// `host[:port]` of a URL string, for messages.
fn host_of(url: &str) -> String {
    Url::parse(url).map_or_else(|_| url.to_string(), |u| super::credentials::host_entry(&u))
}

/// `true` when `a` and `b` have the same scheme, host and port (an origin, RFC 6454).
pub fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str().map(str::to_ascii_lowercase) == b.host_str().map(str::to_ascii_lowercase)
        && a.port_or_known_default() == b.port_or_known_default()
}

/// A host and port, lower case.
pub type HostKey = (String, Option<u16>);

/// The host and port of `url`, as credentials are bound to them.
pub fn host_key(url: &Url) -> HostKey {
    (
        url.host_str().unwrap_or_default().to_ascii_lowercase(),
        url.port_or_known_default(),
    )
}

/// `true` for a loopback host (127.0.0.0/8, ::1, localhost).
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

impl Auth {
    /// `bound` are the registries the user chose (on the command line or in the environment):
    /// `A2C_REGISTRY_TOKEN` and the netrc `default` entry go to their hosts only (and to the
    /// hosts listed in `A2C_TOKEN_HOSTS`); a netrc `machine` entry goes to its own host. A
    /// registry named only by a committed marker or lock gets nothing unless the user bound
    /// its host; and no credential ever travels over plain `http://` except to loopback.
    fn load(bound: &[Url], proxies: super::proxy::ProxyEnv) -> Result<Self, HttpError> {
        let mut hosts: Vec<HostKey> = bound.iter().map(host_key).collect();
        for entry in crate::env::token_hosts() {
            let url = Url::parse(&format!("https://{entry}/")).map_err(|_| {
                HttpError::Config(format!(
                    "{}: `{entry}` is not a host or host:port",
                    crate::env::A2C_TOKEN_HOSTS
                ))
            })?;
            let key = host_key(&url);
            // `host` alone binds every port of it.
            let explicit_port = entry.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok());
            hosts.push((key.0, explicit_port.then_some(key.1).flatten()));
        }
        let token = crate::env::registry_token().map(|t| (hosts.clone(), t));
        let basic = crate::env::registry_auth()
            .map_err(HttpError::Config)?
            .map(|(u, p)| (hosts.clone(), u, p));
        let docker = docker_config();
        let mut netrc = HashMap::new();
        let mut netrc_default = None;
        if let Some(path) = crate::env::netrc_path().filter(|p| p.is_file()) {
            // The parser's own messages may quote the file: never show them (tokens).
            let parsed = netrc::Netrc::from_file(&path).map_err(|_| {
                HttpError::Config(format!(
                    "cannot parse the netrc file `{}` (its content is not shown: it holds credentials)",
                    path.display()
                ))
            })?;
            for (host, a) in parsed.hosts {
                if host == "default" {
                    netrc_default = Some((a.login, a.password));
                } else {
                    netrc.insert(host.to_ascii_lowercase(), (a.login, a.password));
                }
            }
        }
        Ok(Self {
            docker: docker.as_ref().map(docker_auths).unwrap_or_default(),
            helpers: docker.as_ref().map(docker_helpers).unwrap_or_default(),
            logins: super::credentials::load()?,
            token,
            basic,
            netrc,
            netrc_default,
            bound: hosts,
            proxies,
        })
    }

    fn is_bound(hosts: &[HostKey], key: &HostKey) -> bool {
        hosts.iter().any(|(h, p)| *h == key.0 && (p.is_none() || *p == key.1))
    }

    #[cfg(test)]
    fn apply(&self, request: reqwest::RequestBuilder, url: &Url) -> reqwest::RequestBuilder {
        self.apply_and_tell(request, url).0
    }

    /// Adds the credential bound to `url`'s host, if any; `true` when one was added.
    fn apply_and_tell(&self, request: reqwest::RequestBuilder, url: &Url) -> (reqwest::RequestBuilder, bool) {
        if !self.may_carry(url) {
            return (request, false); // credentials never travel in clear text
        }
        let entry = super::credentials::host_entry(url);
        if let Some((_, token)) = self.logins.iter().find(|(h, _)| *h == entry) {
            return (request.bearer_auth(token), true);
        }
        let key = host_key(url);
        if let Some((hosts, token)) = &self.token
            && Self::is_bound(hosts, &key)
        {
            return (request.bearer_auth(token), true);
        }
        match self.basic_for(url) {
            Some((login, password)) => (request.basic_auth(login, Some(password)), true),
            None => (request, false),
        }
    }

    /// The user name and password bound to `url`'s host: docker's `auth`, `A2C_REGISTRY_AUTH`
    /// (bound hosts), a netrc `machine`, the netrc `default` (bound hosts).
    fn basic_for(&self, url: &Url) -> Option<(&str, &str)> {
        let entry = super::credentials::host_entry(url);
        let key = host_key(url);
        let docker = self.docker.iter().find_map(|(h, c)| match c {
            DockerCredential::Basic(u, p) if *h == entry => Some((u.as_str(), p.as_str())),
            _ => None,
        });
        let env = self
            .basic
            .as_ref()
            .filter(|(hosts, _, _)| Self::is_bound(hosts, &key))
            .map(|(_, u, p)| (u.as_str(), p.as_str()));
        let own = self.netrc.get(&key.0);
        let default = self
            .netrc_default
            .as_ref()
            .filter(|_| Self::is_bound(&self.bound, &key));
        docker
            .or(env)
            .or(own.or(default).map(|(u, p)| (u.as_str(), p.as_str())))
    }

    /// `true` when the user bound a credential to `url`'s own host (any source), so that a
    /// request sent there directly may carry it.
    fn has_credential_for(&self, url: &Url) -> bool {
        self.may_carry(url) && self.binds(url)
    }

    /// `true` when the user bound a credential to `url`'s host, whether or not it may travel.
    fn binds(&self, url: &Url) -> bool {
        let entry = super::credentials::host_entry(url);
        let key = host_key(url);
        self.logins.iter().any(|(h, _)| *h == entry)
            || self
                .token
                .as_ref()
                .is_some_and(|(hosts, _)| Self::is_bound(hosts, &key))
            || self.basic_for(url).is_some()
            || self.identity_for(url).is_some()
            || self.helper_for(url).is_some()
    }

    /// `true` when the user named `url`'s host (`--registry`, `A2C_REGISTRY`,
    /// `A2C_TOKEN_HOSTS`): a token endpoint on another host than its registry gets the
    /// registry's credentials only then.
    fn names_host(&self, url: &Url) -> bool {
        Self::is_bound(&self.bound, &host_key(url))
    }

    /// The credential helper docker's config names for `url`'s host, if any.
    fn helper_for(&self, url: &Url) -> Option<&str> {
        let entry = super::credentials::host_entry(url);
        self.helpers
            .0
            .get(&entry)
            .or(self.helpers.1.as_ref())
            .map(String::as_str)
    }

    /// docker's `identitytoken` for `url`'s host, if any.
    fn identity_for(&self, url: &Url) -> Option<&str> {
        let entry = super::credentials::host_entry(url);
        self.docker.iter().find_map(|(h, c)| match c {
            DockerCredential::Identity(t) if *h == entry => Some(t.as_str()),
            _ => None,
        })
    }
}

impl Auth {
    /// Credentials go over HTTPS, or to loopback directly; never in clear text across a
    /// network — a plain-HTTP request through a proxy shows them to the proxy, which may be
    /// anywhere (an HTTPS request goes through it in a tunnel).
    fn may_carry(&self, url: &Url) -> bool {
        url.scheme() == "https" || (is_loopback(url) && self.proxies.proxy_for(url).is_none())
    }

    /// The proxy a credential for `url` was held back from, if one was.
    fn held_back_by(&self, url: &Url) -> Option<Url> {
        (url.scheme() == "http" && is_loopback(url))
            .then(|| self.proxies.proxy_for(url))
            .flatten()
    }
}

/// A `WWW-Authenticate: Bearer realm=…,service=…,scope=…` challenge: the registry's token
/// endpoint (the distribution token protocol, as docker and oras follow it).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Challenge {
    realm: String,
    service: Option<String>,
    scope: Option<String>,
}

/// The Bearer challenge among `headers`' `WWW-Authenticate` values, if any.
fn bearer_challenge(headers: &reqwest::header::HeaderMap) -> Option<Challenge> {
    headers
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(parse_challenge)
}

/// Parses `Bearer k="v", k2=v2`: quoted values may hold commas and `\`-escapes.
fn parse_challenge(value: &str) -> Option<Challenge> {
    let value = value.trim_start();
    let (scheme, mut rest) = value.split_at(value.find(char::is_whitespace)?);
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let mut params = HashMap::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().to_ascii_lowercase();
        rest = &rest[eq + 1..];
        let mut val = String::new();
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            val.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => val.push(c),
                }
            }
            rest = &quoted[end.min(quoted.len())..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            val = rest[..end].trim().to_string();
            rest = &rest[end..];
        }
        params.insert(key, val);
    }
    Some(Challenge {
        realm: params.remove("realm")?,
        service: params.remove("service"),
        scope: params.remove("scope"),
    })
}

/// A request body for [`HttpClient::call`].
pub enum Payload<'a> {
    Bytes(Vec<u8>),
    /// A file of this many bytes, streamed (an upload of any size in constant memory).
    File(&'a Path, u64),
}

/// The answer to [`HttpClient::call`].
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
    /// Whether a credential was sent (for the 401/403 hints).
    pub authorized: bool,
}

impl Reply {
    /// The error of an unexpected status.
    pub fn error(&self, url: &Url) -> HttpError {
        HttpError::Status {
            url: url.to_string(),
            status: self.status,
            authorized: self.authorized,
        }
    }
}

/// A configured HTTP client.
pub struct HttpClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
    auth: Auth,
    /// Tokens from registries' token endpoints (Bearer challenges), by `host[:port]`, and
    /// whether the user's credentials obtained them.
    bearer: std::sync::Mutex<HashMap<String, (String, bool)>>,
    /// What docker's credential helpers gave, by `host[:port]` (asked once per host and run).
    helped: std::sync::Mutex<HashMap<String, Option<DockerCredential>>>,
    /// Loopback `host:port`s that answered plain HTTP with "this port speaks HTTPS" (an
    /// `ssh -L` or `kubectl port-forward` tunnel to a TLS registry): spoken to in HTTPS from
    /// then on, for the rest of the run.
    tls_loopback: std::sync::Mutex<std::collections::HashSet<String>>,
    timeout: u64,
    retries: u64,
    low_speed: u64,
    low_speed_time: u64,
    max_document: u64,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HttpClient { .. }") // never print credentials or tokens
    }
}

/// The low-speed check (as curl's `--speed-limit` / `--speed-time`): over each window of
/// `window` seconds, at least `min` bytes per second on average.
struct Rate {
    start: std::time::Instant,
    base: u64,
    min: u64,
    window: u64,
}

impl Rate {
    fn new(min: u64, window: u64, have: u64) -> Self {
        Self {
            start: std::time::Instant::now(),
            base: have,
            min,
            window,
        }
    }

    /// Called with the running byte count whenever bytes arrive.
    #[allow(clippy::result_large_err)] // an internal attempt result, as in the async paths
    fn check(&mut self, url: &Url, total: u64) -> Result<(), Failure> {
        if self.min == 0 || self.window == 0 {
            return Ok(());
        }
        let elapsed = self.start.elapsed().as_secs();
        if elapsed < self.window {
            return Ok(());
        }
        let bytes = total - self.base;
        if bytes < self.min.saturating_mul(elapsed) {
            return Err(Failure::fatal(HttpError::TooSlow {
                url: url.to_string(),
                bytes,
                seconds: elapsed,
                min: self.min,
            }));
        }
        self.start = std::time::Instant::now();
        self.base = total;
        Ok(())
    }
}

fn number(name: &'static str, default: u64) -> Result<u64, HttpError> {
    crate::env::number(name)
        .map_err(|(name, value)| HttpError::Config(format!("{name}=`{value}` is not a whole number")))
        .map(|v| v.unwrap_or(default))
}

fn extra_roots() -> Result<Vec<reqwest::Certificate>, HttpError> {
    let mut roots: Vec<reqwest::Certificate> = webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .filter_map(|der| reqwest::Certificate::from_der(der.as_ref()).ok())
        .collect();
    for (var, path) in crate::env::ca_bundles() {
        let pem = fs_err::read(&path).map_err(|e| HttpError::Config(format!("{var}: {e}")))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
            HttpError::Config(format!(
                "{var}: `{}` is not a PEM certificate bundle: {e}",
                path.display()
            ))
        })?;
        if certs.is_empty() {
            return Err(HttpError::Config(format!(
                "{var}: `{}` holds no certificate",
                path.display()
            )));
        }
        roots.extend(certs);
    }
    Ok(roots)
}

/// Installs ring as the process's rustls crypto provider (idempotent).
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl HttpClient {
    /// Builds the client. `bound` are the registries the user chose: only their hosts get the
    /// token (see `Auth::load`).
    pub fn new(bound: &[Url]) -> Result<Self, HttpError> {
        install_crypto_provider();
        let timeout = number(crate::env::A2C_HTTP_TIMEOUT, DEFAULT_TIMEOUT)?.max(1);
        let retries = number(crate::env::A2C_HTTP_RETRIES, DEFAULT_RETRIES)?;
        let mut builder = reqwest::Client::builder()
            .user_agent(format!("a2c/{} (+https://github.com/esys/a2c)", crate::A2C_VERSION))
            .connect_timeout(Duration::from_secs(timeout))
            .read_timeout(Duration::from_secs(timeout))
            .tls_certs_merge(extra_roots()?)
            // Proxies come from `super::proxy` only: NO_PROXY matched as curl and Python do.
            .no_proxy();
        let proxies = super::proxy::ProxyEnv::from_env();
        if !proxies.is_empty() {
            let route = proxies.clone();
            builder = builder.proxy(reqwest::Proxy::custom(move |url| route.proxy_for(url)));
        }
        let client = builder.build().map_err(|e| HttpError::Config(error_chain(&e)))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("a2c-http")
            .enable_all()
            .build()
            .map_err(|e| HttpError::Config(format!("cannot start the HTTP runtime: {e}")))?;
        Ok(Self {
            client,
            runtime,
            auth: Auth::load(bound, proxies)?,
            bearer: std::sync::Mutex::new(HashMap::new()),
            helped: std::sync::Mutex::new(HashMap::new()),
            tls_loopback: std::sync::Mutex::new(std::collections::HashSet::new()),
            timeout,
            retries,
            low_speed: number(crate::env::A2C_HTTP_LOW_SPEED, DEFAULT_LOW_SPEED)?,
            low_speed_time: number(crate::env::A2C_HTTP_LOW_SPEED_TIME, DEFAULT_LOW_SPEED_TIME)?,
            max_document: number(crate::env::A2C_MAX_DOCUMENT_BYTES, DEFAULT_MAX_DOCUMENT)?,
        })
    }

    /// GETs a small document (an index) with retries, and the URL it was finally read from
    /// (after redirects): relative URLs inside it resolve against that one (RFC 3986 §5.1.3).
    /// At most `A2C_MAX_DOCUMENT_BYTES` are read into memory.
    pub fn get_bytes(&self, url: &Url) -> Result<(Vec<u8>, Url), HttpError> {
        self.runtime.block_on(async {
            let mut attempt = 0;
            loop {
                match self.get_once(url).await {
                    Ok(bytes) => return Ok(bytes),
                    Err(f) if f.retry && attempt < self.retries => {
                        attempt += 1;
                        let wait = backoff(attempt, f.retry_after);
                        note_retry(&f.error, attempt, self.retries, wait);
                        tokio::time::sleep(wait).await;
                    }
                    Err(f) => return Err(f.error),
                }
            }
        })
    }

    async fn get_once(&self, url: &Url) -> Result<(Vec<u8>, Url), Failure> {
        let response = self.send(url, None).await?;
        let final_url = response.url().clone();
        let too_big = || {
            Failure::fatal(HttpError::DocumentTooBig {
                url: url.to_string(),
                cap: self.max_document,
            })
        };
        if response.content_length().is_some_and(|n| n > self.max_document) {
            return Err(too_big());
        }
        let mut body = Vec::new();
        let mut rate = Rate::new(self.low_speed, self.low_speed_time, 0);
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.classify(url, &e))?;
            if (body.len() + chunk.len()) as u64 > self.max_document {
                return Err(too_big());
            }
            body.extend_from_slice(&chunk);
            rate.check(url, body.len() as u64)?;
        }
        Ok((body, final_url))
    }

    /// The credential for `url`: a token its registry's token endpoint gave, else the one the
    /// user bound to its host; `true` when the user's credentials are in it.
    fn authorize(&self, request: reqwest::RequestBuilder, url: &Url) -> (reqwest::RequestBuilder, bool) {
        let entry = super::credentials::host_entry(url);
        let token = self
            .bearer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&entry)
            .cloned();
        match token {
            // A token the user's credentials obtained travels as they do: never in clear text.
            Some((token, with_credentials)) if !with_credentials || self.auth.may_carry(url) => {
                (request.bearer_auth(token), with_credentials)
            }
            _ => {
                let (request, authorized) = self.auth.apply_and_tell(request, url);
                if authorized || !self.auth.may_carry(url) {
                    return (request, authorized);
                }
                let helped = self
                    .helped
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(&entry)
                    .cloned();
                match helped.flatten() {
                    Some(DockerCredential::Basic(user, password)) => (request.basic_auth(user, Some(password)), true),
                    _ => (request, false),
                }
            }
        }
    }

    /// The credential docker's credential helper for `url`'s host gives (run at most once per
    /// host), when a registry asks for credentials the user bound no other way.
    fn helper_credential(&self, url: &Url) -> Option<DockerCredential> {
        if !self.auth.may_carry(url) {
            return None;
        }
        let name = self.auth.helper_for(url)?;
        let entry = super::credentials::host_entry(url);
        if let Some(known) = self.helped.lock().unwrap_or_else(|p| p.into_inner()).get(&entry) {
            return known.clone();
        }
        let got = run_helper(name, &entry);
        self.helped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(entry, got.clone());
        got
    }

    /// Sends one request; a `401` with a Bearer challenge is answered once: the token endpoint
    /// the registry names is asked for a token (with the credentials the user bound to the
    /// registry's host, if any) and the request is sent again with it.
    async fn execute(
        &self,
        method: &reqwest::Method,
        url: &Url,
        headers: &[(&str, String)],
        body: Option<&Payload<'_>>,
    ) -> Result<(reqwest::Response, bool), Failure> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Failure::fatal(HttpError::NotHttp { url: url.to_string() }));
        }
        let mut challenged = false;
        // Where the request goes: `url`, or once, the origin a redirect led to when the user
        // bound a credential to that origin itself.
        let mut target = self.over_tls_if_known(url);
        let mut followed = false;
        let mut upgraded = false;
        loop {
            let url = &target;
            let (mut request, authorized) = self.authorize(self.client.request(method.clone(), url.clone()), url);
            for (k, v) in headers {
                request = request.header(*k, v);
            }
            match body {
                Some(Payload::Bytes(b)) => request = request.body(b.to_vec()),
                // Streamed from the file, never read into memory; opened again on a retry.
                Some(Payload::File(path, size)) => {
                    let file = tokio::fs::File::open(path)
                        .await
                        .map_err(|e| Failure::io(std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))))?;
                    request = request
                        .header(reqwest::header::CONTENT_LENGTH, size.to_string())
                        .body(reqwest::Body::from(file));
                }
                None => {}
            }
            let response = request.send().await.map_err(|e| self.classify(url, &e))?;
            // A loopback port that speaks HTTPS answers plain HTTP with a 400 that says so:
            // speak HTTPS to it (its certificate is checked as any other's).
            if response.status() == StatusCode::BAD_REQUEST && url.scheme() == "http" && is_loopback(url) && !upgraded {
                let body = response.bytes().await.unwrap_or_default();
                let text = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_string();
                // nginx: "The plain HTTP request was sent to HTTPS port"; Go (the distribution
                // registry): "Client sent an HTTP request to an HTTPS server."
                if text.contains("HTTPS") {
                    upgraded = true;
                    self.tls_loopback
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(super::credentials::host_entry(url));
                    target = self.over_tls_if_known(url);
                    continue;
                }
                return Err(Failure::fatal(HttpError::Status {
                    url: url.to_string(),
                    status: 400,
                    authorized,
                }));
            }
            // A challenge is answered only by the origin the request was sent to: after a
            // redirect to another origin the request is anonymous (reqwest dropped the
            // header), and that origin's challenge never gets this origin's credentials.
            if response.status() == StatusCode::UNAUTHORIZED && !same_origin(url, response.url()) {
                let landed = response.url().clone();
                if !followed && self.auth.has_credential_for(&landed) {
                    followed = true;
                    target = landed;
                    continue;
                }
                return Err(Failure::fatal(HttpError::NotForwarded {
                    url: url.to_string(),
                    to: landed.to_string(),
                    sent: authorized,
                }));
            }
            if response.status() == StatusCode::UNAUTHORIZED
                && !challenged
                && let Some(challenge) = bearer_challenge(response.headers())
            {
                challenged = true;
                self.fetch_token(url, &challenge).await?;
                continue;
            }
            // A Basic challenge no bound credential answered: docker's credential helper may.
            if response.status() == StatusCode::UNAUTHORIZED
                && !challenged
                && !authorized
                && matches!(self.helper_credential(url), Some(DockerCredential::Basic(..)))
            {
                challenged = true;
                continue;
            }
            return Ok((response, authorized));
        }
    }

    /// `url` in HTTPS when its loopback `host:port` was found to speak it this run.
    fn over_tls_if_known(&self, url: &Url) -> Url {
        let known = url.scheme() == "http"
            && self
                .tls_loopback
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&super::credentials::host_entry(url));
        if !known {
            return url.clone();
        }
        let mut tls = url.clone();
        let _ = tls.set_scheme("https");
        tls
    }

    /// Asks the token endpoint of `challenge` for a token for `url`'s host, and keeps it. The
    /// user's credentials for the registry's host go along (docker's `identitytoken` as an
    /// OAuth2 refresh token, else a user name and password), never in clear text.
    async fn fetch_token(&self, url: &Url, challenge: &Challenge) -> Result<(), Failure> {
        let bad = |reason: String| {
            Failure::fatal(HttpError::Token {
                url: url.to_string(),
                reason,
            })
        };
        let realm = Url::parse(&challenge.realm)
            .ok()
            .filter(|r| matches!(r.scheme(), "http" | "https"))
            .ok_or_else(|| {
                bad(format!(
                    "its token endpoint `{}` is not an HTTP(S) URL",
                    challenge.realm
                ))
            })?;
        // The registry's credentials go to its own host's token endpoint, or to one on a host
        // the user named; never to a realm another host chose.
        let own_realm = realm.host_str().map(str::to_ascii_lowercase) == url.host_str().map(str::to_ascii_lowercase)
            || self.auth.names_host(&realm);
        let secure = own_realm && self.auth.may_carry(&realm) && self.auth.may_carry(url);
        let (mut identity, mut basic) = match secure {
            true => (
                self.auth.identity_for(url).map(str::to_string),
                self.auth.basic_for(url).map(|(u, p)| (u.to_string(), p.to_string())),
            ),
            false => (None, None),
        };
        if secure && identity.is_none() && basic.is_none() {
            match self.helper_credential(url) {
                Some(DockerCredential::Identity(t)) => identity = Some(t),
                Some(DockerCredential::Basic(u, p)) => basic = Some((u, p)),
                None => {}
            }
        }
        let scopes: Vec<&str> = challenge
            .scope
            .as_deref()
            .map(|s| s.split(' ').filter(|s| !s.is_empty()).collect())
            .unwrap_or_default();
        let with_credentials = identity.is_some() || basic.is_some();
        let request = if let Some(refresh) = &identity {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "refresh_token")
                .append_pair("refresh_token", refresh)
                .append_pair("client_id", "a2c");
            if let Some(service) = &challenge.service {
                form.append_pair("service", service);
            }
            if !scopes.is_empty() {
                form.append_pair("scope", &scopes.join(" "));
            }
            self.client
                .post(realm.clone())
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(form.finish())
        } else {
            let mut query = realm.clone();
            {
                let mut pairs = query.query_pairs_mut();
                if let Some(service) = &challenge.service {
                    pairs.append_pair("service", service);
                }
                for scope in &scopes {
                    pairs.append_pair("scope", scope);
                }
            }
            let request = self.client.get(query);
            match &basic {
                Some((user, password)) => request.basic_auth(user, Some(password)),
                None => request,
            }
        };
        let response = request.send().await.map_err(|e| self.classify(&realm, &e))?;
        let withheld = !own_realm && self.auth.has_credential_for(url);
        if withheld && matches!(response.status().as_u16(), 401 | 403) {
            return Err(Failure::fatal(HttpError::TokenWithheld {
                url: url.to_string(),
                realm: realm.to_string(),
            }));
        }
        if !response.status().is_success() {
            return Err(Failure::fatal(HttpError::Status {
                url: realm.to_string(),
                status: response.status().as_u16(),
                authorized: with_credentials,
            }));
        }
        if response.content_length().is_some_and(|n| n > self.max_document) {
            return Err(bad("its token endpoint sent an oversized answer".into()));
        }
        let body = response.bytes().await.map_err(|e| self.classify(&realm, &e))?;
        let doc: serde_json::Value =
            serde_json::from_slice(&body).map_err(|_| bad("its token endpoint did not answer JSON".into()))?;
        let token = ["token", "access_token"]
            .iter()
            .find_map(|k| doc[k].as_str().filter(|t| !t.is_empty()))
            .ok_or_else(|| bad("its token endpoint gave no token".into()))?;
        self.bearer.lock().unwrap_or_else(|p| p.into_inner()).insert(
            super::credentials::host_entry(url),
            (token.to_string(), with_credentials),
        );
        Ok(())
    }

    async fn send(&self, url: &Url, range_from: Option<u64>) -> Result<reqwest::Response, Failure> {
        let range = range_from.map(|from| (RANGE.as_str(), format!("bytes={from}-")));
        let (response, authorized) = self.execute(&reqwest::Method::GET, url, range.as_slice(), None).await?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(retry_after);
        let held_back = match status {
            StatusCode::UNAUTHORIZED if !authorized && self.auth.binds(url) => self.auth.held_back_by(url),
            _ => None,
        };
        let error = match (status, held_back) {
            (_, Some(proxy)) => HttpError::HeldBack {
                url: url.to_string(),
                proxy: super::credentials::host_entry(&proxy),
            },
            (StatusCode::PROXY_AUTHENTICATION_REQUIRED, None) => HttpError::ProxyAuth {
                url: url.to_string(),
                proxy: crate::env::proxy_configured().unwrap_or_else(|| "(from the system settings)".into()),
            },
            (_, None) => HttpError::Status {
                url: url.to_string(),
                status: status.as_u16(),
                authorized,
            },
        };
        let total = response
            .headers()
            .get(CONTENT_RANGE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("bytes */"))
            .and_then(|n| n.trim().parse::<u64>().ok());
        let retry = status.is_server_error()
            || status == StatusCode::TOO_MANY_REQUESTS
            || status == StatusCode::REQUEST_TIMEOUT;
        Err(Failure {
            error,
            retry,
            retry_after,
            range_unsatisfiable: (status == StatusCode::RANGE_NOT_SATISFIABLE).then_some(total),
        })
    }

    fn classify(&self, url: &Url, e: &reqwest::Error) -> Failure {
        let host = url.host_str().unwrap_or_default().to_string();
        let chain = error_chain(e);
        let lower = chain.to_ascii_lowercase();
        let tls = tls_reason(e).or_else(|| {
            ["certificate", "unknownissuer", "handshake", "tls"]
                .iter()
                .any(|w| lower.contains(w))
                .then(|| short_reason(&chain))
        });
        let (error, retry) = if find_in_chain::<rustls::Error>(e).is_some_and(|t| {
            matches!(
                t,
                rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)
            )
        }) {
            (
                HttpError::NotTls {
                    url: url.to_string(),
                    host,
                },
                false,
            )
        } else if let Some(reason) = tls {
            (
                HttpError::Tls {
                    url: url.to_string(),
                    host,
                    reason,
                },
                false,
            )
        } else if lower.contains("proxy authorization required") || lower.contains("proxy authentication required") {
            (
                HttpError::ProxyAuth {
                    url: url.to_string(),
                    proxy: crate::env::proxy_configured().unwrap_or_else(|| "(from the system settings)".into()),
                },
                false,
            )
        } else if e.is_timeout() {
            (
                HttpError::Timeout {
                    url: url.to_string(),
                    seconds: self.timeout,
                },
                true,
            )
        } else if lower.contains("dns error")
            || lower.contains("failed to lookup address")
            || lower.contains("name or service not known")
        {
            (
                HttpError::Dns {
                    url: url.to_string(),
                    host,
                },
                false,
            )
        } else if e.is_connect() {
            // The proxy, when one applies to this URL, is what could not be reached (a
            // host NO_PROXY excludes is reached directly).
            let proxy =
                crate::env::proxy_configured().filter(|_| super::proxy::ProxyEnv::from_env().proxy_for(url).is_some());
            (
                HttpError::Connect {
                    url: url.to_string(),
                    host,
                    reason: short_reason(&chain),
                    proxy,
                },
                true,
            )
        } else {
            (
                HttpError::Body {
                    url: url.to_string(),
                    reason: short_reason(&chain),
                },
                true,
            )
        };
        Failure {
            error,
            retry,
            retry_after: None,
            range_unsatisfiable: None,
        }
    }

    /// One request of any method (the OCI distribution API): the status, the headers and the
    /// body (at most `A2C_MAX_DOCUMENT_BYTES` of it). Credentials bound to the host are sent;
    /// no retries.
    pub fn call(
        &self,
        method: reqwest::Method,
        url: &Url,
        headers: &[(&str, String)],
        body: Option<Payload<'_>>,
    ) -> Result<Reply, HttpError> {
        self.runtime.block_on(async {
            let (response, authorized) = self
                .execute(&method, url, headers, body.as_ref())
                .await
                .map_err(|f| f.error)?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let mut body = Vec::new();
            let mut stream = response.bytes_stream();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| self.classify(url, &e).error)?;
                if (body.len() + chunk.len()) as u64 > self.max_document {
                    return Err(HttpError::DocumentTooBig {
                        url: url.to_string(),
                        cap: self.max_document,
                    });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Reply {
                status,
                headers,
                body,
                authorized,
            })
        })
    }

    /// Checks that `url` can be fetched: one GET whose headers are read and whose body is not
    /// (the connection is dropped). No retries: this is a check, not a download.
    pub fn probe(&self, url: &Url) -> Result<(), HttpError> {
        self.runtime
            .block_on(async { self.send(url, Some(0)).await.map(drop).map_err(|f| f.error) })
    }

    /// Downloads `url` into `partial`, resuming what is already there (Range), streaming and
    /// hashing every byte, retrying transient failures. Succeeds only when the file holds
    /// exactly `size` bytes whose sha256 is `sha256`; then the caller renames it into place.
    /// `progress` receives the bytes written so far.
    pub fn download(
        &self,
        url: &Url,
        partial: &Path,
        size: u64,
        sha256: &Sha256,
        progress: &dyn Fn(u64),
    ) -> Result<(), HttpError> {
        let resumed_from_partial = std::fs::symlink_metadata(partial).is_ok_and(|m| m.len() > 0);
        self.runtime.block_on(async {
            let mut attempt = 0;
            let mut restarted = false;
            let mut short_seen = None;
            loop {
                match self.download_once(url, partial, size, sha256, progress).await {
                    Ok(()) => return Ok(()),
                    // A server that says twice in a row that it holds fewer bytes than the lock
                    // pins means it: that is no server fault, and no more retries help.
                    Err(Failure {
                        error: HttpError::Short { actual, .. },
                        ..
                    }) if short_seen == Some(actual) => {
                        return Err(HttpError::Short {
                            url: url.to_string(),
                            actual,
                            expected: size,
                        });
                    }
                    Err(Failure {
                        error: HttpError::Short { actual, .. },
                        ..
                    }) if attempt < self.retries => {
                        short_seen = Some(actual);
                        attempt += 1;
                    }
                    // A resumed file that does not verify: start once more from zero (a fresh
                    // download that does not verify is the server's bytes: no second try).
                    Err(f) if matches!(f.error, HttpError::Mismatch { .. }) && !restarted && resumed_from_partial => {
                        restarted = true;
                        truncate(partial)?;
                    }
                    // The server's whole file is shorter than the lock says: no retry helps.
                    Err(Failure {
                        range_unsatisfiable: Some(Some(actual)),
                        ..
                    }) if actual < size => {
                        return Err(HttpError::Short {
                            url: url.to_string(),
                            actual,
                            expected: size,
                        });
                    }
                    Err(f) if f.range_unsatisfiable.is_some() && !restarted => {
                        restarted = true;
                        truncate(partial)?;
                    }
                    Err(f) if f.retry && attempt < self.retries => {
                        attempt += 1;
                        let wait = backoff(attempt, f.retry_after);
                        note_retry(&f.error, attempt, self.retries, wait);
                        tokio::time::sleep(wait).await;
                    }
                    Err(f) => return Err(f.error),
                }
            }
        })
    }

    async fn download_once(
        &self,
        url: &Url,
        partial: &Path,
        size: u64,
        sha256: &Sha256,
        progress: &dyn Fn(u64),
    ) -> Result<(), Failure> {
        // Resume only from a regular file this user owns; never through a link.
        let file = crate::util::contain::open_write(
            partial,
            crate::util::contain::Open::Existing,
            crate::util::fs::default_mode(),
        )
        .map_err(Failure::io)?;
        let mut file = fs_err::File::from_parts(file, partial);
        let mut have = file.metadata().map_err(Failure::io)?.len();
        if have > size {
            file.set_len(0).map_err(Failure::io)?;
            have = 0;
        }
        // Hash what an earlier attempt left, so that the digest covers the whole file.
        let mut hasher = Hasher::default();
        if have > 0 {
            hash_prefix(&mut file, have, &mut hasher).map_err(Failure::io)?;
        }
        if have == size {
            return verify(url, hasher, sha256);
        }
        let response = self.send(url, (have > 0).then_some(have)).await?;
        let resumed = response.status() == StatusCode::PARTIAL_CONTENT
            && response
                .headers()
                .get(CONTENT_RANGE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with(&format!("bytes {have}-")));
        if !resumed {
            // The server sent the whole file: start over.
            file.set_len(0).map_err(Failure::io)?;
            hasher = Hasher::default();
            have = 0;
        }
        // The server says how much it holds: fewer bytes than the lock pins is final.
        let total = match resumed {
            true => response
                .headers()
                .get(CONTENT_RANGE)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.rsplit_once('/'))
                .and_then(|(_, n)| n.trim().parse::<u64>().ok()),
            false => response
                .content_length()
                .filter(|_| response.status() == StatusCode::OK),
        };
        if let Some(actual) = total.filter(|n| *n < size) {
            // Confirmed by one more request before it is final (see `download`).
            return Err(Failure {
                error: HttpError::Short {
                    url: url.to_string(),
                    actual,
                    expected: size,
                },
                retry: true,
                retry_after: None,
                range_unsatisfiable: None,
            });
        }
        let mut rate = Rate::new(self.low_speed, self.low_speed_time, have);
        file.seek(std::io::SeekFrom::Start(have)).map_err(Failure::io)?;
        progress(have);
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.classify(url, &e))?;
            if have + chunk.len() as u64 > size {
                drop(file);
                truncate(partial).map_err(Failure::io)?;
                return Err(Failure::fatal(HttpError::TooLong {
                    url: url.to_string(),
                    expected: size,
                }));
            }
            file.write_all(&chunk).map_err(Failure::io)?;
            hasher.update(&chunk);
            have += chunk.len() as u64;
            progress(have);
            rate.check(url, have)?;
        }
        file.flush().map_err(Failure::io)?;
        if have < size {
            let reason = format!("the body ended after {have} of {size} bytes");
            return Err(Failure {
                error: HttpError::Body {
                    url: url.to_string(),
                    reason,
                },
                retry: true,
                retry_after: None,
                range_unsatisfiable: None,
            });
        }
        verify(url, hasher, sha256)
    }
}

#[allow(clippy::result_large_err)] // an internal attempt result, as in the async paths
fn verify(url: &Url, hasher: Hasher, sha256: &Sha256) -> Result<(), Failure> {
    let actual = hasher.finish();
    if actual != *sha256 {
        return Err(Failure::fatal(HttpError::Mismatch {
            url: url.to_string(),
            expected: sha256.to_hex(),
            actual: actual.to_hex(),
        }));
    }
    Ok(())
}

fn hash_prefix(file: &mut fs_err::File, len: u64, hasher: &mut Hasher) -> std::io::Result<()> {
    file.seek(std::io::SeekFrom::Start(0))?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut reader = file.take(len);
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        hasher.update(&buf[..n]);
    }
}

fn truncate(path: &Path) -> std::io::Result<()> {
    match crate::util::contain::open_write(path, crate::util::contain::Open::Existing, 0o600) {
        Ok(f) => f.set_len(0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// One failed attempt: the error, and whether trying again may help.
struct Failure {
    error: HttpError,
    retry: bool,
    retry_after: Option<Duration>,
    /// A 416, with the complete length the server gave (`Content-Range: bytes */N`), if any.
    range_unsatisfiable: Option<Option<u64>>,
}

impl Failure {
    fn fatal(error: HttpError) -> Self {
        Self {
            error,
            retry: false,
            retry_after: None,
            range_unsatisfiable: None,
        }
    }

    fn io(e: std::io::Error) -> Self {
        Self::fatal(HttpError::Io(e))
    }
}

/// Who hears of retries (the CLI, under `-v`); nobody by default.
static RETRY_OBSERVER: std::sync::OnceLock<RetryObserver> = std::sync::OnceLock::new();

/// A listener for retries: one line each.
pub type RetryObserver = Box<dyn Fn(&str) + Send + Sync>;

/// Makes every retry of every client call `observer` with one line: what failed, which try
/// comes next, and after how long.
pub fn observe_retries(observer: RetryObserver) {
    let _ = RETRY_OBSERVER.set(observer);
}

fn note_retry(error: &HttpError, attempt: u64, retries: u64, wait: Duration) {
    if let Some(observe) = RETRY_OBSERVER.get() {
        observe(&format!(
            "retry {attempt} of {retries} in {:.1} s: {error}",
            wait.as_secs_f64()
        ));
    }
}

/// A `Retry-After` value (RFC 9110 §10.2.3): seconds, or an HTTP-date; at most 60 s.
fn retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<u64>() {
        Ok(seconds) => Duration::from_secs(seconds),
        Err(_) => httpdate::parse_http_date(value)
            .ok()?
            .duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    };
    Some(wait.min(Duration::from_secs(60)))
}

/// Exponential backoff with jitter: 250 ms, 500 ms, 1 s, 2 s … (capped at 8 s), each ±50%,
/// unless the server asked for a delay (`Retry-After`).
fn backoff(attempt: u64, retry_after: Option<Duration>) -> Duration {
    if let Some(d) = retry_after {
        return d;
    }
    let base = 250u64.saturating_mul(1 << attempt.saturating_sub(1).min(5)).min(8_000);
    Duration::from_millis(base / 2 + fastrand::u64(0..=base))
}

fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    parts.join(": ")
}

/// The innermost cause, which is what a user can act on.
fn short_reason(chain: &str) -> String {
    chain.rsplit(": ").next().unwrap_or(chain).to_string()
}

/// The first error of type `T` in `e`'s chain, looking inside `io::Error`s too (hyper wraps
/// rustls' errors in one): errors are told apart by type, not by their text.
fn find_in_chain<T: std::error::Error + 'static>(e: &reqwest::Error) -> Option<&T> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(t) = s.downcast_ref::<T>() {
            return Some(t);
        }
        // An `io::Error`'s `source()` skips the error it wraps (which may wrap another):
        // descend into it instead.
        source = match s.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => s.source(),
        };
    }
    None
}

/// The TLS error in `e`'s chain, if any.
fn tls_reason(e: &reqwest::Error) -> Option<String> {
    find_in_chain::<rustls::Error>(e).map(|t| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_and_honours_retry_after() {
        for attempt in 1..8 {
            let base = 250u64 * (1 << (attempt - 1).min(5));
            let base = base.min(8_000);
            let d = backoff(attempt, None).as_millis() as u64;
            assert!(d >= base / 2 && d <= base / 2 + base, "attempt {attempt}: {d}");
        }
        assert_eq!(backoff(3, Some(Duration::from_secs(7))), Duration::from_secs(7));
    }

    #[test]
    fn retry_after_takes_seconds_or_an_http_date() {
        assert_eq!(retry_after(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(retry_after("3600"), Some(Duration::from_secs(60)), "capped");
        let soon = std::time::SystemTime::now() + Duration::from_secs(20);
        let d = retry_after(&httpdate::fmt_http_date(soon)).unwrap();
        assert!(d > Duration::from_secs(17) && d <= Duration::from_secs(20), "{d:?}");
        assert_eq!(
            retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO),
            "past"
        );
        assert_eq!(retry_after("soon"), None);
    }

    /// The Authorization header `auth` puts on a GET of `url`.
    fn header(auth: &Auth, url: &str) -> Option<String> {
        install_crypto_provider();
        let url = Url::parse(url).unwrap();
        let request = auth
            .apply(reqwest::Client::new().get(url.clone()), &url)
            .build()
            .unwrap();
        request
            .headers()
            .get("authorization")
            .map(|h| h.to_str().unwrap().to_string())
    }

    fn bound(urls: &[&str]) -> Vec<HostKey> {
        urls.iter().map(|u| host_key(&Url::parse(u).unwrap())).collect()
    }

    #[test]
    fn token_goes_to_bound_hosts_only_and_never_in_clear_text() {
        let hosts = bound(&["https://reg.example.org/a2c/", "http://127.0.0.1:8080/"]);
        let auth = Auth {
            token: Some((hosts.clone(), "t0ken".into())),
            bound: hosts,
            ..Auth::default()
        };
        assert_eq!(
            header(&auth, "https://reg.example.org/x").as_deref(),
            Some("Bearer t0ken")
        );
        assert_eq!(header(&auth, "https://cdn.example.org/x"), None);
        assert_eq!(header(&auth, "https://reg.example.org:8443/x"), None);
        assert_eq!(header(&auth, "http://reg.example.org:443/x"), None, "plain http");
        assert_eq!(
            header(&auth, "http://127.0.0.1:8080/x").as_deref(),
            Some("Bearer t0ken"),
            "loopback may be plain"
        );
        assert_eq!(format!("{auth:?}"), "Auth { .. }");
    }

    #[test]
    fn bearer_challenges_parse_with_quoted_commas() {
        let c = parse_challenge(
            r#"Bearer realm="https://auth.example.org/token",service="registry.example.org",scope="repository:esys/a2c:pull,push""#,
        )
        .unwrap();
        assert_eq!(c.realm, "https://auth.example.org/token");
        assert_eq!(c.service.as_deref(), Some("registry.example.org"));
        assert_eq!(c.scope.as_deref(), Some("repository:esys/a2c:pull,push"));
        let c = parse_challenge(r#"bearer  realm=https://r/t , error="insufficient_scope", service="a\"b""#).unwrap();
        assert_eq!(c.realm, "https://r/t");
        assert_eq!(c.service.as_deref(), Some("a\"b"));
        assert_eq!(c.scope, None);
        assert_eq!(parse_challenge(r#"Basic realm="registry""#), None);
        assert_eq!(parse_challenge("Bearer service=x"), None, "no realm");
    }

    #[test]
    fn netrc_machines_by_host_and_default_only_for_bound_hosts() {
        let netrc = HashMap::from([("cdn.example.org".to_string(), ("a".to_string(), "b".to_string()))]);
        let auth = Auth {
            netrc,
            netrc_default: Some(("d".into(), "e".into())),
            bound: bound(&["https://mine.example.org/"]),
            ..Auth::default()
        };
        assert_eq!(
            header(&auth, "https://CDN.example.org/x").as_deref(),
            Some("Basic YTpi")
        );
        assert_eq!(header(&auth, "http://cdn.example.org/x"), None, "plain http");
        assert_eq!(
            header(&auth, "https://other.example.org/x"),
            None,
            "a repository's registry"
        );
        assert_eq!(
            header(&auth, "https://mine.example.org/x").as_deref(),
            Some("Basic ZDpl")
        );
    }
}

/// A client built on first use, so that offline and no-op runs never build one.
#[derive(Debug)]
pub struct LazyClient {
    bound: Vec<Url>,
    client: std::sync::Mutex<Option<std::sync::Arc<HttpClient>>>,
}

impl LazyClient {
    /// `bound` are the registries the user chose (see `Auth::load`).
    pub fn new(bound: Vec<Url>) -> Self {
        Self {
            bound,
            client: std::sync::Mutex::new(None),
        }
    }

    pub fn get(&self) -> Result<std::sync::Arc<HttpClient>, HttpError> {
        if crate::env::offline() {
            return Err(HttpError::Offline);
        }
        let mut slot = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let client = std::sync::Arc::new(HttpClient::new(&self.bound)?);
        *slot = Some(client.clone());
        Ok(client)
    }
}
