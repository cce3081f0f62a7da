//! object_store's requests, sent by a2c ([`HttpClient::relay`]): a2c's reqwest client (its TLS
//! roots, proxies and timeouts; it follows no redirect, so a signature never leaves the
//! endpoint), a2c's retries told as its own are (object_store's own loop is off), and every
//! answer's body bounded — the store's at `A2C_MAX_DOCUMENT_BYTES`, a credential's token answer
//! at [`CREDENTIAL_ANSWER`] — whatever its `Content-Length` says.

use std::sync::{Arc, Mutex};

use http_body_util::BodyExt as _;
use object_store::client::{HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpResponseBody, HttpService};
use url::Url;

use crate::net::HttpClient;

/// The most a2c reads of an answer from another host than the store's: a credential's token
/// (a metadata service's, a container endpoint's, Entra's, STS's) is a few kilobytes.
pub(in crate::registry) const CREDENTIAL_ANSWER: u64 = 256 * 1024;

/// Builds object_store's clients: each sends through a2c ([`Service`]).
#[derive(Debug)]
pub(in crate::registry) struct Connector {
    http: Arc<HttpClient>,
    /// The store's own `host[:port]`s (its endpoint; a host alone also covers its
    /// subdomains, for virtual-hosted buckets): answers from anywhere else are a credential's.
    store: Vec<String>,
    /// Hosts never asked (a cloud's default metadata address, when the user named another).
    off_limits: Vec<String>,
    /// The last failure, said again when object_store falls back to a host off limits.
    last_failure: Arc<Mutex<Option<String>>>,
}

impl Connector {
    /// The connector of a store at `store` (its endpoint's `host[:port]`s, see [`Connector`]),
    /// never asking `off_limits`: object_store's fallback to a cloud's default address after
    /// the one the user named failed fails with that failure instead.
    pub(in crate::registry) fn of(http: &Arc<HttpClient>, store: Vec<String>, off_limits: &[&str]) -> Self {
        Self {
            http: http.clone(),
            store,
            off_limits: off_limits.iter().map(|h| h.to_string()).collect(),
            last_failure: Default::default(),
        }
    }
}

/// A request a2c would not send, with why (the failure it falls back from, when there is one).
/// Never the error a user sees: a kind's error words it (`words::said_by_a2c`).
#[derive(Debug)]
pub(super) struct NotAsked(String);

impl std::fmt::Display for NotAsked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAsked {}

impl object_store::client::HttpConnector for Connector {
    fn connect(&self, options: &object_store::ClientOptions) -> object_store::Result<object_store::client::HttpClient> {
        // object_store asks a cloud's metadata service with a connect timeout of its own (the
        // store's options carry none: `client_options`); that one gets a second to connect, as
        // the clouds' SDKs give it, on a2c's client otherwise.
        let metadata = options
            .get_config_value(&object_store::ClientConfigKey::ConnectTimeout)
            .is_some();
        let client = match metadata {
            true => self.http.reqwest_quick_connect(),
            false => self.http.reqwest(),
        };
        Ok(object_store::client::HttpClient::new(Service {
            http: self.http.clone(),
            // A metadata service answers at once where it exists: one more try, not the
            // store's count, before the chain says it is not there.
            retries: match metadata {
                true => self.http.retries().min(1),
                false => self.http.retries(),
            },
            client,
            store: self.store.clone(),
            off_limits: self.off_limits.clone(),
            last_failure: self.last_failure.clone(),
        }))
    }
}

/// The options every object store is built with: no connect timeout of object_store's (a2c's
/// client has `A2C_HTTP_TIMEOUT`'s), so that only its metadata requests carry one.
pub(in crate::registry) fn client_options() -> object_store::ClientOptions {
    object_store::ClientOptions::new().with_connect_timeout_disabled()
}

/// object_store's retries: none of its own — a2c's client retries each request as it retries
/// its own ([`HttpClient::relay`]).
pub(in crate::registry) fn retries() -> object_store::RetryConfig {
    object_store::RetryConfig {
        backoff: Default::default(),
        max_retries: 0,
        retry_timeout: std::time::Duration::from_secs(60),
    }
}

/// One object_store client: its requests relayed by a2c.
#[derive(Debug)]
struct Service {
    http: Arc<HttpClient>,
    retries: u64,
    client: reqwest::Client,
    store: Vec<String>,
    off_limits: Vec<String>,
    last_failure: Arc<Mutex<Option<String>>>,
}

impl Service {
    /// The most a2c reads of an answer from `url`: a document from the store, a token from
    /// anywhere else.
    fn cap(&self, url: &Url) -> u64 {
        match is_store(&self.store, url) {
            true => self.http.max_document(),
            false => CREDENTIAL_ANSWER.min(self.http.max_document()),
        }
    }
}

/// Whether `url` is the store's, whose `host[:port]`s are `store` (a host alone also covers its
/// subdomains, for virtual-hosted buckets); any other is a credential's.
pub(super) fn is_store(store: &[String], url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.clone(),
    };
    store.iter().any(|s| {
        let s = s.to_ascii_lowercase();
        s == authority || (!s.contains(':') && (host == s || host.ends_with(&format!(".{s}"))))
    })
}

#[async_trait::async_trait]
impl HttpService for Service {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let (parts, body) = request.into_parts();
        let url = Url::parse(&parts.uri.to_string()).map_err(|e| HttpError::new(HttpErrorKind::Unknown, e))?;
        let host = url.host_str().unwrap_or_default();
        if self.off_limits.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            let last = crate::util::parallel::locked(&self.last_failure).clone();
            let why =
                last.unwrap_or_else(|| format!("a2c does not ask `{host}`: the environment names another address"));
            return Err(HttpError::new(HttpErrorKind::Connect, NotAsked(why)));
        }
        let cap = self.cap(&url);
        let make = || {
            let mut request = reqwest::Request::new(parts.method.clone(), url.clone());
            *request.headers_mut() = parts.headers.clone();
            *request.body_mut() = Some(reqwest::Body::wrap(body.clone()));
            request
        };
        let response = self
            .http
            .relay(&self.client, make, cap, self.retries)
            .await
            .map_err(|e| {
                *crate::util::parallel::locked(&self.last_failure) = Some(e.to_string());
                let kind = match &e {
                    crate::net::HttpError::Timeout { .. } => HttpErrorKind::Timeout,
                    crate::net::HttpError::Connect { .. } | crate::net::HttpError::Dns { .. } => HttpErrorKind::Connect,
                    _ => HttpErrorKind::Request,
                };
                HttpError::new(kind, e)
            })?;
        let (parts, body) = response.into_parts();
        let last = self.last_failure.clone();
        let body = body.map_err(move |e| {
            *crate::util::parallel::locked(&last) = Some(e.to_string());
            HttpError::new(HttpErrorKind::Decode, e)
        });
        Ok(HttpResponse::from_parts(parts, HttpResponseBody::new(body)))
    }
}
