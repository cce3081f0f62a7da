//! Why a request failed, worded for the user, and what to do about it.

use url::Url;

/// Why a request failed, worded for the user. Credentials never appear: URLs with userinfo are
/// refused before any request, and tokens are never formatted.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("invalid HTTP configuration: {0}")]
    Config(String),
    /// `a2c login`'s credentials file is readable or writable by others.
    #[error("`{}` holds tokens but is readable or writable by others (or owned by another user)", path.display())]
    ExposedCredentials { path: std::path::PathBuf },
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
        /// For a 401: what the server asked for and what was sent, for the hint.
        challenge: Option<Box<Unauthorized>>,
    },
    #[error(
        "`{url}` has fewer bytes than recorded for it (by the registry's index, or the lock): the server holds {actual}, {expected} are recorded"
    )]
    Short { url: String, actual: u64, expected: u64 },
    #[error("the proxy {proxy} refused the request for `{url}`: HTTP 407 Proxy Authentication Required")]
    ProxyAuth { url: String, proxy: String },
    #[error("the download of `{url}` broke off: {reason}")]
    Body { url: String, reason: String },
    #[error("`{url}` sent more than the {expected} bytes recorded for it (by the registry's index, or the lock)")]
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
    /// `a2c login`/`logout`'s argument is not one plain host (a typo, credentials in a URL).
    #[error("{0}")]
    BadHost(String),
    /// A 401 from a host the user's environment credential is not bound to: it was held back.
    #[error("`{url}` answered HTTP 401: it wants credentials, and {variable} was held back from it")]
    NotBound { url: String, variable: &'static str },
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
    /// A redirect chain a2c would not follow (a loop, too many hops, not HTTP(S), a secret
    /// body to another origin).
    #[error("`{url}`: {reason}")]
    Redirect { url: String, reason: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl HttpError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::Config(_) => "check the A2C_* and SSL_CERT_FILE variables (see docs/registries.md)".into(),
            Self::ExposedCredentials { path } => format!(
                "run `chmod 600 {}` as its owner (a2c reads no credentials file others can read)",
                crate::util::text::shell_quoted(path)
            ),
            Self::Dns { .. } => {
                "check the registry URL and your network or DNS; offline, use `a2c install --offline --from DIR`".into()
            }
            Self::Connect { proxy: Some(var), .. } => {
                format!(
                    "the connection goes through the proxy named by {var}: check it, or exclude the host with NO_PROXY"
                )
            }
            Self::Connect { .. } => "is the registry server up? Without the network, `--offline` works from the lock and the cache (and `--from DIR` from bundles `a2c vendor` wrote)".into(),
            Self::NotTls { .. } => "the server does not speak HTTPS: check the URL's scheme, and use `http://` only for a server you trust on this network (credentials are never sent in clear text)".into(),
            Self::Tls { .. } => format!(
                "if the registry uses a private CA, point {} (or SSL_CERT_FILE) at a PEM file holding it",
                crate::env::A2C_CA_BUNDLE
            ),
            Self::Timeout { .. } => format!(
                "the server took the request but sent nothing: check that it is up and answering (a stall is tried again once at most: a server that stalls twice is hung, not slow); only on a slow network raise {} (seconds)",
                crate::env::A2C_HTTP_TIMEOUT
            ),
            Self::TooSlow { .. } => format!(
                "the server or the network is too slow: lower {} (bytes/s, 0 turns the check off) or raise {} (seconds)",
                crate::env::A2C_HTTP_LOW_SPEED,
                crate::env::A2C_HTTP_LOW_SPEED_TIME
            ),
            Self::DocumentTooBig { .. } => format!(
                "a registry index is a few KiB to MiB: check the URL; if this one really is that large, raise {}",
                crate::env::A2C_MAX_DOCUMENT_BYTES
            ),
            Self::Status {
                status: 401,
                authorized: false,
                challenge,
                url,
            } if challenge.as_ref().is_some_and(|c| c.basic) => format!(
                "the registry asks for a user name and password: run `a2c login {} --username USER` (the password on standard input), or set {}=user:password and {}, or add it to ~/.netrc",
                host_of(url),
                crate::env::A2C_REGISTRY_AUTH,
                name_the_host(),
            ),
            Self::Status {
                status: 401,
                authorized: false,
                url,
                ..
            } => format!(
                "the registry wants credentials: run `a2c login {}` (or set {} and {}), or add it to ~/.netrc",
                host_of(url),
                crate::env::A2C_REGISTRY_TOKEN,
                name_the_host(),
            ),
            Self::Status {
                status: 401, challenge, ..
            } if let Some((host, user)) = challenge.as_ref().and_then(|c| c.login.as_ref()) => match user {
                Some(user) => format!(
                    "the registry refused the password stored for `{host}` (as {user}) by `a2c login`: store the right one with `a2c login {host} --username {user}`, or remove it with `a2c logout {host}`"
                ),
                None => format!(
                    "the registry refused the token stored for `{host}` by `a2c login`: store a valid one with `a2c login {host}`, or remove it with `a2c logout {host}`"
                ),
            },
            Self::Status {
                status: 401, challenge, ..
            } if challenge.as_ref().is_some_and(|c| c.basic) => {
                "the registry refused the user name and password a2c sent: check them (A2C_REGISTRY_AUTH, netrc or docker's config)".into()
            }
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
                "the registry changed a published bundle, its index gives a wrong size or digest, or the download was tampered with; this version was not installed or locked"
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
            Self::BadHost(_) => "name the host alone — `reg.example.org`, `host:port` or `https://host/` — and give the token on standard input, never in the URL".into(),
            Self::NotBound { url, variable } => format!(
                "a2c sends {variable} only to the hosts you name, never to one a committed marker names: bind `{host}` with `{}={host}` (or --registry, {}), or store a token for it with `a2c login {host}`",
                crate::env::A2C_TOKEN_HOSTS,
                crate::env::A2C_REGISTRY,
                host = host_of(url)
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
            Self::Redirect { .. } => {
                "point the registry at the URL that serves it (run again with -v to see each hop)".into()
            }
            Self::NotHttp { .. } | Self::Io(_) => return None,
        })
    }
}

/// `host[:port]` of a URL string, for messages.
/// What a 401 says beside its status: the scheme the server asked for and the stored login
/// that was sent, so that the hint names the command that fixes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unauthorized {
    /// The server's challenge is `Basic` (a user name and password), not a token.
    pub basic: bool,
    /// The `a2c login` stored for the host that was sent: its host and user name (`None` for
    /// a token).
    pub login: Option<(String, Option<String>)>,
}

/// How a credential set in the environment is bound to a registry's host.
fn name_the_host() -> String {
    format!(
        "name the host with --registry, {} or {}",
        crate::env::A2C_REGISTRY,
        crate::env::A2C_TOKEN_HOSTS
    )
}

pub(super) fn host_of(url: &str) -> String {
    Url::parse(url).map_or_else(|_| url.to_string(), |u| super::credentials::host_entry(&u))
}

impl crate::util::hint::Hint for HttpError {
    fn hint(&self) -> Option<String> {
        HttpError::hint(self)
    }
}
