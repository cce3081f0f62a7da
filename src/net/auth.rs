//! Credentials, each bound to hosts by the user (never by a repository): `a2c login` tokens,
//! `A2C_REGISTRY_TOKEN` / `A2C_REGISTRY_AUTH`, netrc, docker's `config.json` and credential
//! helpers; which host may receive which, never in clear text and never along a redirect; and
//! the registry token protocol's `WWW-Authenticate: Bearer` challenges.

use std::collections::HashMap;
use std::fmt;

use url::Url;

use super::HttpError;

/// Credentials, each bound to hosts by the user (never by a repository): see [`Auth::load`].
#[derive(Default)]
pub(super) struct Auth {
    /// `a2c login` tokens, by `host[:port]` (see [`super::credentials::host_entry`]).
    logins: Vec<super::credentials::Login>,
    /// docker's `config.json` `auths`, by `host[:port]`: the user's own binding of credentials
    /// to registry hosts (as `docker login` writes them).
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
pub(super) enum DockerCredential {
    /// `auth`: base64 `user:password`.
    Basic(String, String),
    /// `identitytoken`: an OAuth2 refresh token for the registry's token endpoint.
    Identity(String),
}

/// docker's credentials: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`, its
/// `auths` entries that carry `identitytoken` or `auth` (base64 `user:password`), keyed by
/// `host[:port]`. A file that is absent or does not parse gives nothing (its content is never
/// shown).
fn docker_config(path: Option<&std::path::Path>) -> Option<serde_json::Value> {
    let path = path?;
    let text = crate::util::contain::read_config(path).ok()??;
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
pub(super) fn run_helper(name: &str, server: &str) -> Option<DockerCredential> {
    use std::io::Write;
    let mut helper = std::process::Command::new(format!("docker-credential-{name}"));
    for var in crate::env::SECRETS {
        helper.env_remove(var);
    }
    let mut child = helper
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

/// A bearer token a registry kind obtained for one object's origin (an object store's bundle
/// read with credentials that cannot sign a URL): a download sends it only while its hops stay on the
/// origin of the URL it goes with, never to another, and never over plain HTTP but on loopback.
/// Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Bearer(String);

impl Bearer {
    pub fn new(token: String) -> Self {
        Self(token)
    }

    pub(super) fn token(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Bearer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Bearer(..)")
    }
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
    pub(super) fn load(
        bound: &[Url],
        settings: &super::Settings,
        logins: Option<&std::path::Path>,
    ) -> Result<Self, HttpError> {
        let mut hosts: Vec<HostKey> = bound.iter().map(host_key).collect();
        for entry in &settings.token_hosts {
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
        let token = settings.registry_token.clone().map(|t| (hosts.clone(), t));
        let basic = settings.registry_auth.clone().map(|(u, p)| (hosts.clone(), u, p));
        let docker = docker_config(settings.docker_config.as_deref());
        let mut netrc = HashMap::new();
        let mut netrc_default = None;
        if let Some(path) = settings.netrc.as_ref().filter(|p| p.is_file()) {
            // The parser's own messages may quote the file: never show them (tokens).
            let parsed = netrc::Netrc::from_file(path).map_err(|_| {
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
            logins: super::credentials::load(logins)?,
            token,
            basic,
            netrc,
            netrc_default,
            bound: hosts,
            proxies: settings.proxies.clone(),
        })
    }

    pub(super) fn is_bound(hosts: &[HostKey], key: &HostKey) -> bool {
        hosts.iter().any(|(h, p)| *h == key.0 && (p.is_none() || *p == key.1))
    }

    #[cfg(test)]
    fn apply(&self, request: reqwest::RequestBuilder, url: &Url) -> reqwest::RequestBuilder {
        self.apply_and_tell(request, url).0
    }

    /// Adds the credential bound to `url`'s host, if any; `true` when one was added.
    pub(super) fn apply_and_tell(
        &self,
        request: reqwest::RequestBuilder,
        url: &Url,
    ) -> (reqwest::RequestBuilder, bool) {
        if !self.may_carry(url) {
            return (request, false); // credentials never travel in clear text
        }
        let entry = super::credentials::host_entry(url);
        if let Some(login) = self.logins.iter().find(|l| l.host == entry) {
            return match &login.username {
                Some(user) => (request.basic_auth(user, Some(&login.token)), true),
                None => (request.bearer_auth(&login.token), true),
            };
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

    /// The `a2c login` stored for `url`'s host, when one is (it is what `apply_and_tell` sends
    /// first).
    pub(super) fn stored_login(&self, url: &Url) -> Option<&super::credentials::Login> {
        let entry = super::credentials::host_entry(url);
        self.logins.iter().find(|l| l.host == entry)
    }

    /// The user name and password bound to `url`'s host: `a2c login --username`'s, docker's
    /// `auth`, `A2C_REGISTRY_AUTH`
    /// (bound hosts), a netrc `machine`, the netrc `default` (bound hosts).
    pub(super) fn basic_for(&self, url: &Url) -> Option<(&str, &str)> {
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
        // `a2c login HOST --username U`: the user's own choice for this host, first.
        let login = self
            .logins
            .iter()
            .find(|l| l.host == entry)
            .and_then(|l| l.username.as_deref().map(|u| (u, l.token.as_str())));
        login
            .or(docker)
            .or(env)
            .or(own.or(default).map(|(u, p)| (u.as_str(), p.as_str())))
    }

    /// `true` when the user bound a credential to `url`'s own host (any source), so that a
    /// request sent there directly may carry it.
    pub(super) fn has_credential_for(&self, url: &Url) -> bool {
        self.may_carry(url) && self.binds(url)
    }

    /// `true` when the user bound a credential to `url`'s host, whether or not it may travel.
    /// docker's `credsStore` names a helper for every host, not a credential for this one: it
    /// does not count (only a `credHelpers` entry for the host does).
    pub(super) fn binds(&self, url: &Url) -> bool {
        let entry = super::credentials::host_entry(url);
        let key = host_key(url);
        self.logins.iter().any(|l| l.host == entry)
            || self
                .token
                .as_ref()
                .is_some_and(|(hosts, _)| Self::is_bound(hosts, &key))
            || self.basic_for(url).is_some()
            || self.identity_for(url).is_some()
            || self.helpers.0.contains_key(&entry)
    }

    /// `true` when the user named `url`'s host (`--registry`, `A2C_REGISTRY`,
    /// `A2C_TOKEN_HOSTS`): a token endpoint on another host than its registry gets the
    /// registry's credentials only then.
    pub(super) fn names_host(&self, url: &Url) -> bool {
        Self::is_bound(&self.bound, &host_key(url))
    }

    /// The credential helper docker's config names for `url`'s host, if any.
    pub(super) fn helper_for(&self, url: &Url) -> Option<&str> {
        let entry = super::credentials::host_entry(url);
        self.helpers
            .0
            .get(&entry)
            .or(self.helpers.1.as_ref())
            .map(String::as_str)
    }

    /// docker's `identitytoken` for `url`'s host, if any.
    pub(super) fn identity_for(&self, url: &Url) -> Option<&str> {
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
    pub(super) fn may_carry(&self, url: &Url) -> bool {
        url.scheme() == "https" || (is_loopback(url) && self.proxies.proxy_for(url).is_none())
    }

    /// The proxy a credential for `url` was held back from, if one was.
    /// The environment credential (`A2C_REGISTRY_TOKEN`, else `A2C_REGISTRY_AUTH`) that is set
    /// but not bound to `url`'s host, and so was not sent: a 401 there says so.
    pub(super) fn unbound_variable(&self, url: &Url) -> Option<&'static str> {
        let key = host_key(url);
        if self
            .token
            .as_ref()
            .is_some_and(|(hosts, _)| !Self::is_bound(hosts, &key))
        {
            return Some(crate::env::A2C_REGISTRY_TOKEN);
        }
        self.basic
            .as_ref()
            .is_some_and(|(hosts, _, _)| !Self::is_bound(hosts, &key))
            .then_some(crate::env::A2C_REGISTRY_AUTH)
    }

    pub(super) fn held_back_by(&self, url: &Url) -> Option<Url> {
        (url.scheme() == "http" && is_loopback(url))
            .then(|| self.proxies.proxy_for(url))
            .flatten()
    }
}

/// A `WWW-Authenticate: Bearer realm=…,service=…,scope=…` challenge: the registry's token
/// endpoint (the distribution token protocol, as docker and oras follow it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Challenge {
    pub(super) realm: String,
    pub(super) service: Option<String>,
    pub(super) scope: Option<String>,
}

/// The Bearer challenge among `headers`' `WWW-Authenticate` values, if any.
pub(super) fn bearer_challenge(headers: &reqwest::header::HeaderMap) -> Option<Challenge> {
    headers
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(parse_challenge)
}

/// The Bearer challenge in one `WWW-Authenticate` value, which may list several challenges
/// (`Basic realm="x", Bearer realm="y"`, as a proxy joins headers): read by `http-auth` to
/// RFC 9110 §11.6.1 (quoted values may hold commas and `\`-escapes), up to the first syntax
/// error. Parameter names compare in any case; a Bearer challenge without `realm` is none.
pub(super) fn parse_challenge(value: &str) -> Option<Challenge> {
    let bearer = http_auth::parser::ChallengeParser::new(value)
        .map_while(Result::ok)
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))?;
    let param = |name: &str| {
        let (_, v) = bearer.params.iter().find(|(k, _)| k.eq_ignore_ascii_case(name))?;
        Some(v.to_unescaped())
    };
    Some(Challenge {
        realm: param("realm")?,
        service: param("service"),
        scope: param("scope"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Authorization header `auth` puts on a GET of `url`.
    fn header(auth: &Auth, url: &str) -> Option<String> {
        super::super::install_crypto_provider();
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
        let c = parse_challenge(r#"bearer REALM="https://r/t" , error=insufficient_scope, service="a\"b""#).unwrap();
        assert_eq!(c.realm, "https://r/t");
        assert_eq!(c.service.as_deref(), Some("a\"b"));
        assert_eq!(c.scope, None);
        assert_eq!(parse_challenge(r#"Basic realm="registry""#), None);
        let c = parse_challenge(r#"Basic realm="registry", Bearer realm="https://r/t",scope=x"#).unwrap();
        assert_eq!(
            (c.realm.as_str(), c.scope.as_deref()),
            ("https://r/t", Some("x")),
            "the second of two challenges"
        );
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
