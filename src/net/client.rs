//! The HTTP(S) client: reqwest on rustls (ring), the platform's and webpki's roots plus extra
//! CAs from `A2C_CA_BUNDLE` / `SSL_CERT_FILE`, proxies from the environment, timeouts from
//! `A2C_HTTP_TIMEOUT`, credentials by host, retries with exponential backoff and jitter; the
//! one GET vocabulary callers use. The request loop (redirects hop by hop, credentials,
//! challenges, bounded bodies) is `request.rs`, resumable downloads `download.rs`, the client
//! built on first use `lazy.rs`. Async stays inside: callers use blocking methods (each worker
//! thread of an install drives its own download).

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use url::Url;

use super::HttpError;
use super::auth::{Auth, DockerCredential};
use super::retry::{Next, retrying};
use super::tls::{error_chain, extra_roots, install_crypto_provider};

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
/// The most redirects one request follows (curl's `--max-redirs` default is 50, browsers' 20,
/// reqwest's and Python's 10 and 30): a registry needs two or three.
pub const MAX_REDIRECTS: usize = 10;
/// The longest token a token endpoint may give (it travels in a header on every request).
pub const MAX_TOKEN: usize = 64 * 1024;

/// A document read over HTTP.
#[derive(Debug, Clone)]
pub struct Document {
    pub body: Vec<u8>,
    /// The URL it was finally read from, after redirects: relative URLs inside it resolve
    /// against this one (RFC 3986 §5.1.3).
    pub url: Url,
    /// Its `Content-Type` (empty when the server sent none).
    pub content_type: String,
}

/// What one request sends besides its URL (which a redirect changes): its method, headers
/// and body.
#[derive(Clone, Copy)]
pub(super) struct Outgoing<'a> {
    pub(super) method: &'a reqwest::Method,
    pub(super) headers: &'a [(&'a str, String)],
    pub(super) body: Option<&'a Payload<'a>>,
}

impl<'a> Outgoing<'a> {
    /// A GET with `headers` and no body.
    pub(super) fn get(headers: &'a [(&'a str, String)]) -> Self {
        Outgoing {
            method: &reqwest::Method::GET,
            headers,
            body: None,
        }
    }
}

/// A request body for [`HttpClient::call`].
pub enum Payload<'a> {
    Bytes(Vec<u8>),
    /// A file of this many bytes, streamed (an upload of any size in constant memory).
    File(&'a Path, u64),
    /// `head`, then a file of this many bytes, then `tail`, streamed (a multipart upload of a
    /// file in constant memory; the file is opened again for each attempt).
    Framed {
        head: Vec<u8>,
        file: &'a Path,
        size: u64,
        tail: Vec<u8>,
    },
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
            url: crate::util::redact::shown_url(url),
            status: self.status,
            authorized: self.authorized,
            challenge: None,
        }
    }
}

/// How long a connection to a credential service on a link-local address may take (as its
/// SDKs wait).
const QUICK_CONNECT: Duration = Duration::from_secs(1);

/// A reqwest client on a2c's settings: its user agent, these timeouts, the CA bundles, the
/// proxies (`super::proxy`'s, never reqwest's own), no redirect followed.
fn build(
    connect: Duration,
    read: Duration,
    ca_bundles: &[(&'static str, std::path::PathBuf)],
    proxies: &super::proxy::ProxyEnv,
) -> Result<reqwest::Client, HttpError> {
    let mut builder = reqwest::Client::builder()
        .user_agent(format!("a2c/{} (+https://github.com/esys/a2c)", crate::A2C_VERSION))
        .connect_timeout(connect)
        .read_timeout(read)
        .tls_certs_merge(extra_roots(ca_bundles)?)
        // Proxies come from `super::proxy` only: NO_PROXY matched as curl and Python do.
        .no_proxy()
        // Redirects are followed by `follow`, hop by hop, deciding each hop's credential.
        .redirect(reqwest::redirect::Policy::none());
    if !proxies.is_empty() {
        let route = proxies.clone();
        builder = builder.proxy(reqwest::Proxy::custom(move |url| route.proxy_for(url)));
    }
    builder.build().map_err(|e| HttpError::Config(error_chain(&e)))
}

/// A configured HTTP client.
pub struct HttpClient {
    pub(super) client: reqwest::Client,
    /// The same client but for its connect timeout, one second (see
    /// [`Self::reqwest_quick_connect`]); built on first use.
    quick: std::sync::Mutex<Option<reqwest::Client>>,
    /// What that client is built from.
    ca_bundles: Vec<(&'static str, std::path::PathBuf)>,
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) auth: Auth,
    /// Tokens from registries' token endpoints (Bearer challenges), by `host[:port]`, and
    /// whether the user's credentials obtained them.
    pub(super) bearer: std::sync::Mutex<HashMap<String, (String, bool)>>,
    /// What docker's credential helpers gave, by `host[:port]` (asked once per host and run).
    pub(super) helped: std::sync::Mutex<HashMap<String, Option<DockerCredential>>>,
    /// Loopback `host:port`s that answered plain HTTP with "this port speaks HTTPS" (an
    /// `ssh -L` or `kubectl port-forward` tunnel to a TLS registry): spoken to in HTTPS from
    /// then on, for the rest of the run.
    pub(super) tls_loopback: std::sync::Mutex<std::collections::HashSet<String>>,
    pub(super) timeout: u64,
    pub(super) retries: u64,
    pub(super) low_speed: u64,
    pub(super) low_speed_time: u64,
    pub(super) max_document: u64,
    /// The proxy variable that is set, and the proxies, for messages.
    pub(super) proxy_variable: Option<String>,
    pub(super) proxies: super::proxy::ProxyEnv,
    /// Who hears of each retry.
    pub(super) observer: Option<std::sync::Arc<super::RetryObserver>>,
    /// Who hears of each redirect hop.
    pub(super) tracer: Option<std::sync::Arc<super::HopTracer>>,
    /// The registry kinds' token exchanges.
    pub(super) exchanges: super::Exchanges,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HttpClient { .. }") // never print credentials or tokens
    }
}

impl HttpClient {
    /// Builds the client. `bound` are the registries the user chose: only their hosts get the
    /// token (see `Auth::load`).
    /// `logins` is the file of `a2c login`'s tokens.
    pub fn new(
        settings: &super::Settings,
        logins: Option<&Path>,
        bound: &[Url],
        exchanges: super::Exchanges,
    ) -> Result<Self, HttpError> {
        install_crypto_provider();
        let timeout = settings.timeout;
        let client = build(
            Duration::from_secs(timeout),
            Duration::from_secs(timeout),
            &settings.ca_bundles,
            &settings.proxies,
        )?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("a2c-http")
            .enable_all()
            .build()
            .map_err(|e| HttpError::Config(format!("cannot start the HTTP runtime: {e}")))?;
        Ok(Self {
            client,
            quick: std::sync::Mutex::new(None),
            ca_bundles: settings.ca_bundles.clone(),
            runtime,
            auth: Auth::load(bound, settings, logins)?,
            bearer: std::sync::Mutex::new(HashMap::new()),
            helped: std::sync::Mutex::new(HashMap::new()),
            tls_loopback: std::sync::Mutex::new(std::collections::HashSet::new()),
            timeout,
            retries: settings.retries,
            low_speed: settings.low_speed,
            low_speed_time: settings.low_speed_time,
            max_document: settings.max_document,
            proxy_variable: settings.proxy_variable.clone(),
            proxies: settings.proxies.clone(),
            observer: settings.observer.clone(),
            tracer: settings.tracer.clone(),
            exchanges,
        })
    }

    /// The reqwest client itself, for a client library that speaks an API of its own over
    /// a2c's connection settings (an object store's signed requests): the same TLS roots,
    /// proxies, timeouts and user agent, and no redirect followed.
    /// How many times a failed request is tried again (`A2C_HTTP_RETRIES`).
    pub fn retries(&self) -> u64 {
        self.retries
    }

    /// The most a2c reads into memory for a document (`A2C_MAX_DOCUMENT_BYTES`).
    pub fn max_document(&self) -> u64 {
        self.max_document
    }

    pub fn reqwest(&self) -> reqwest::Client {
        self.client.clone()
    }

    /// [`Self::reqwest`] with a one-second connect timeout: for a credential service on a
    /// link-local address, which answers at once where it exists (a registry kind says when).
    /// Elsewhere, on a laptop, that address may swallow a connection, which the service's own
    /// SDKs give up on after a second, not after `A2C_HTTP_TIMEOUT` and each retry.
    pub fn reqwest_quick_connect(&self) -> reqwest::Client {
        let mut slot = crate::util::parallel::locked(&self.quick);
        slot.get_or_insert_with(|| {
            let read = Duration::from_secs(self.timeout);
            build(QUICK_CONNECT, read, &self.ca_bundles, &self.proxies).unwrap_or_else(|_| self.client.clone())
        })
        .clone()
    }

    /// Runs `work` on this client's runtime, to its end.
    pub fn block_on<F: std::future::Future>(&self, work: F) -> F::Output {
        self.runtime.block_on(work)
    }

    /// GETs a document (an index, a project page, an API answer) with retries: at most
    /// `A2C_MAX_DOCUMENT_BYTES` read into memory, asked for with `Accept: accept` when given.
    /// The one GET of a document; [`super::LazyClient::document`] keeps its answer for the run.
    pub fn get_document(&self, url: &Url, accept: Option<&str>) -> Result<Document, HttpError> {
        let headers: Vec<(&str, String)> = accept.map(|a| ("Accept", a.to_string())).into_iter().collect();
        self.runtime.block_on(retrying(
            self.retries,
            self.observer.as_deref(),
            || self.get_once(url, &headers),
            |_, _| Next::Backoff,
        ))
    }

    /// One request of any method (a registry API's calls and writes): the status, the headers
    /// and the body (at most `A2C_MAX_DOCUMENT_BYTES` of it). Credentials bound to the host are
    /// sent. A `GET` or `HEAD` whose request or answer was lost in transit (a connection the
    /// server closed as it was reused, a reset) is sent again as a document's GET is; a write
    /// never is — whether it landed is for its caller to find out.
    pub fn call(
        &self,
        method: reqwest::Method,
        url: &Url,
        headers: &[(&str, String)],
        body: Option<Payload<'_>>,
    ) -> Result<Reply, HttpError> {
        let safe = body.is_none() && matches!(method, reqwest::Method::GET | reqwest::Method::HEAD);
        let out = Outgoing {
            method: &method,
            headers,
            body: body.as_ref(),
        };
        let attempt = || async {
            let (response, authorized) = self.execute(url, out).await?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = self.read_capped(response, url, self.max_document).await?;
            Ok(Reply {
                status,
                headers,
                body,
                authorized,
            })
        };
        let retries = if safe { self.retries } else { 0 };
        self.runtime
            .block_on(retrying(retries, self.observer.as_deref(), attempt, |_, _| {
                Next::Backoff
            }))
    }

    /// Checks that `url` can be fetched: a GET whose headers are read and whose body is not
    /// (the connection is dropped), tried again as a download is when it fails in a way that
    /// may pass (a request lost on a connection the server closed as it was reused, a 503).
    /// `bearer`: the token a registry kind obtained for `url`'s origin (see [`super::Bearer`]).
    pub fn probe(&self, url: &Url, bearer: Option<&super::Bearer>) -> Result<(), HttpError> {
        self.runtime.block_on(retrying(
            self.retries,
            self.observer.as_deref(),
            || async { self.send(url, Some(0), bearer).await.map(drop) },
            |_, _| Next::Backoff,
        ))
    }
}
