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

use super::HttpError;
use super::auth::{Auth, Challenge, DockerCredential, bearer_challenge, is_loopback, run_helper, same_origin};
use super::retry::{Failure, Next, retry_after, retrying};
use super::tls::{error_chain, extra_roots, find_in_chain, install_crypto_provider, short_reason, tls_reason};
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
/// The most redirects one request follows (curl's `--max-redirs` default is 50, browsers' 20,
/// reqwest's and Python's 10 and 30): a registry needs two or three.
pub const MAX_REDIRECTS: usize = 10;
/// The longest token a token endpoint may give (it travels in a header on every request).
pub const MAX_TOKEN: usize = 64 * 1024;

/// Which credential the hops of one request carry while they stay on its origin (see
/// `HttpClient::follow`).
enum Sign<'a> {
    /// What the user bound to the hop's host (and the tokens it obtained).
    Bound,
    /// These Basic credentials (a token endpoint's exchange).
    Basic(&'a str, &'a str),
    /// None in a header: the body holds one (an OAuth2 refresh token), so it never leaves
    /// the origin.
    InBody,
    /// None.
    Anonymous,
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
    /// The proxy variable that is set, and the proxies, for messages.
    proxy_variable: Option<String>,
    proxies: super::proxy::ProxyEnv,
    /// Who hears of each retry.
    observer: Option<std::sync::Arc<super::RetryObserver>>,
    /// Who hears of each redirect hop.
    tracer: Option<std::sync::Arc<super::RetryObserver>>,
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

impl HttpClient {
    /// Builds the client. `bound` are the registries the user chose: only their hosts get the
    /// token (see `Auth::load`).
    /// `logins` is the file of `a2c login`'s tokens.
    pub fn new(settings: &super::Settings, logins: Option<&Path>, bound: &[Url]) -> Result<Self, HttpError> {
        install_crypto_provider();
        let timeout = settings.timeout;
        let mut builder = reqwest::Client::builder()
            .user_agent(format!("a2c/{} (+https://github.com/esys/a2c)", crate::A2C_VERSION))
            .connect_timeout(Duration::from_secs(timeout))
            .read_timeout(Duration::from_secs(timeout))
            .tls_certs_merge(extra_roots(&settings.ca_bundles)?)
            // Proxies come from `super::proxy` only: NO_PROXY matched as curl and Python do.
            .no_proxy()
            // Redirects are followed by `follow`, hop by hop, deciding each hop's credential.
            .redirect(reqwest::redirect::Policy::none());
        if !settings.proxies.is_empty() {
            let route = settings.proxies.clone();
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
        })
    }

    /// GETs a small document (an index) with retries, and the URL it was finally read from
    /// (after redirects): relative URLs inside it resolve against that one (RFC 3986 §5.1.3).
    /// At most `A2C_MAX_DOCUMENT_BYTES` are read into memory.
    pub fn get_bytes(&self, url: &Url) -> Result<(Vec<u8>, Url), HttpError> {
        self.get_bytes_with(url, &[])
    }

    /// [`HttpClient::get_bytes`] with request `headers` (an `Accept` for content
    /// negotiation), and the response's `Content-Type`.
    pub fn get_bytes_with(&self, url: &Url, headers: &[(&str, String)]) -> Result<(Vec<u8>, Url), HttpError> {
        self.get_typed(url, headers).map(|(body, url, _)| (body, url))
    }

    /// The document at `url` (with request `headers`), the URL it was finally read from, and
    /// its `Content-Type` (empty when the server sent none).
    pub fn get_typed(&self, url: &Url, headers: &[(&str, String)]) -> Result<(Vec<u8>, Url, String), HttpError> {
        self.runtime.block_on(retrying(
            self.retries,
            self.observer.as_deref(),
            || self.get_once(url, headers),
            |_, _| Next::Backoff,
        ))
    }

    async fn get_once(&self, url: &Url, headers: &[(&str, String)]) -> Result<(Vec<u8>, Url, String), Failure> {
        let response = self.send_with(url, headers).await?;
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let final_url = response.url().clone();
        let body = self.read_capped(response, url, self.max_document).await?;
        Ok((body, final_url, content_type))
    }

    /// The body of `response` (from `url`), read as it streams in: at most `cap` bytes, else
    /// [`HttpError::DocumentTooBig`] without reading on (a `Content-Length` over the cap is
    /// refused before the first byte); the low-speed check applies.
    async fn read_capped(&self, response: reqwest::Response, url: &Url, cap: u64) -> Result<Vec<u8>, Failure> {
        let too_big = || {
            Failure::fatal(HttpError::DocumentTooBig {
                url: url.to_string(),
                cap,
            })
        };
        if response.content_length().is_some_and(|n| n > cap) {
            return Err(too_big());
        }
        let mut body = Vec::new();
        let mut rate = Rate::new(self.low_speed, self.low_speed_time, 0);
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.classify(url, &e))?;
            if (body.len() + chunk.len()) as u64 > cap {
                return Err(too_big());
            }
            body.extend_from_slice(&chunk);
            rate.check(url, body.len() as u64)?;
        }
        Ok(body)
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
            let (response, authorized) = self.follow(method, url, headers, body, Sign::Bound).await?;
            // A loopback port that speaks HTTPS answers plain HTTP with a 400 that says so, in
            // text (Go sends none, nginx text/html): speak HTTPS to it (its certificate is
            // checked as any other's). A JSON 400 is an API's own answer, left to the caller.
            if response.status() == StatusCode::BAD_REQUEST
                && url.scheme() == "http"
                && is_loopback(url)
                && !upgraded
                && !is_json(&response)
            {
                let body = read_prefix(response, 4096).await;
                let text = String::from_utf8_lossy(&body).to_string();
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
            // redirect to another origin the request is anonymous (see `follow`), and that
            // origin's challenge never gets this origin's credentials.
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
            // Conan's API takes no Basic credentials but a token its `users/authenticate`
            // endpoint gives for them: the user's credentials for this host go there, once.
            if response.status() == StatusCode::UNAUTHORIZED
                && !challenged
                && let Some(endpoint) = conan_authenticate_url(url)
                && self.auth.has_credential_for(url)
                && self.auth.basic_for(url).is_some()
            {
                challenged = true;
                self.fetch_conan_token(url, &endpoint).await?;
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

    /// Sends `method url` and follows its redirects here, hop by hop (never by the HTTP
    /// library, which compares each hop with the one before it): at most [`MAX_REDIRECTS`]
    /// hops, no URL twice, each hop told to the tracer. A hop carries the credential `sign`
    /// names only while the whole chain is still on `url`'s origin (scheme, host and port):
    /// once a hop has left it, no later hop carries one, even back on that origin, and https
    /// never goes down to http with one. 301, 302 and 303 turn a request with a body into a
    /// GET without it (as browsers, curl and Python do); 307 and 308 keep both, and a body
    /// that is itself a secret never leaves the origin. Returns the last hop's response and
    /// whether a credential went with it.
    async fn follow(
        &self,
        method: &reqwest::Method,
        url: &Url,
        headers: &[(&str, String)],
        body: Option<&Payload<'_>>,
        sign: Sign<'_>,
    ) -> Result<(reqwest::Response, bool), Failure> {
        let mut hop = url.clone();
        let mut method = method.clone();
        let mut body = body;
        let mut seen = vec![url.clone()];
        let mut left = false;
        loop {
            let on_origin = !left && same_origin(&hop, url);
            let request = self.client.request(method.clone(), hop.clone());
            let (mut request, authorized) = match (&sign, on_origin) {
                (Sign::Bound, true) => self.authorize(request, &hop),
                (Sign::Basic(user, password), true) => (request.basic_auth(user, Some(password)), true),
                _ => (request, false),
            };
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
            let response = request.send().await.map_err(|e| self.classify(&hop, &e))?;
            let status = response.status();
            let Some(location) = status
                .is_redirection()
                .then(|| response.headers().get(reqwest::header::LOCATION))
                .flatten()
            else {
                return Ok((response, authorized));
            };
            let redirect = |reason: String| {
                Failure::fatal(HttpError::Redirect {
                    url: url.to_string(),
                    reason,
                })
            };
            let next = location
                .to_str()
                .ok()
                .and_then(|l| hop.join(l).ok())
                .ok_or_else(|| redirect(format!("`{hop}` redirected to a location that is not a URL")))?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(redirect(format!(
                    "`{hop}` redirected to `{next}`, which is not HTTP(S)"
                )));
            }
            if seen.contains(&next) {
                return Err(redirect(format!(
                    "`{hop}` redirected back to `{next}`: a redirect loop"
                )));
            }
            if seen.len() > MAX_REDIRECTS {
                return Err(redirect(format!(
                    "it was still redirecting after {MAX_REDIRECTS} hops (the last to `{next}`)"
                )));
            }
            // 303 turns any request but a HEAD into a GET; 301 and 302 a POST (as browsers,
            // curl and Python do); 307 and 308 keep the method and the body.
            let to_get = match status.as_u16() {
                303 => method != reqwest::Method::HEAD,
                301 | 302 => method == reqwest::Method::POST,
                _ => false,
            };
            if to_get {
                method = reqwest::Method::GET;
                body = None;
            }
            let leaves = !same_origin(&next, url);
            if leaves && body.is_some() && matches!(sign, Sign::InBody) {
                return Err(redirect(format!(
                    "`{hop}` redirected a request whose body holds a credential to `{next}`, another origin: it was not sent there"
                )));
            }
            left |= leaves;
            if let Some(trace) = &self.tracer {
                let carries = match left {
                    true => "no credential: another origin than the first hop's",
                    false => "the first hop's credential: the same origin",
                };
                trace(&format!(
                    "`{hop}` answered HTTP {}: following it to `{next}` ({carries})",
                    status.as_u16()
                ));
            }
            seen.push(next.clone());
            hop = next;
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
        let (response, _) = if let Some(refresh) = &identity {
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
            let form = Payload::Bytes(form.finish().into_bytes());
            let headers = [("Content-Type", "application/x-www-form-urlencoded".to_string())];
            self.follow(&reqwest::Method::POST, &realm, &headers, Some(&form), Sign::InBody)
                .await?
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
            let sign = match &basic {
                Some((user, password)) => Sign::Basic(user, password),
                None => Sign::Anonymous,
            };
            self.follow(&reqwest::Method::GET, &query, &[], None, sign).await?
        };
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
        let body = self.read_capped(response, &realm, self.max_document).await?;
        let doc: serde_json::Value =
            serde_json::from_slice(&body).map_err(|_| bad("its token endpoint did not answer JSON".into()))?;
        let token = ["token", "access_token"]
            .iter()
            .find_map(|k| doc[k].as_str().filter(|t| !t.is_empty()))
            .ok_or_else(|| bad("its token endpoint gave no token".into()))?;
        if token.len() > MAX_TOKEN {
            return Err(bad(format!(
                "its token endpoint gave a token of {} bytes, over the {MAX_TOKEN} a2c sends in a header",
                token.len()
            )));
        }
        self.bearer.lock().unwrap_or_else(|p| p.into_inner()).insert(
            super::credentials::host_entry(url),
            (token.to_string(), with_credentials),
        );
        Ok(())
    }

    /// Exchanges the user's credentials for `url`'s host for a Conan token at `endpoint` (on
    /// the same origin), and keeps it for the host.
    async fn fetch_conan_token(&self, url: &Url, endpoint: &Url) -> Result<(), Failure> {
        let Some((user, password)) = self.auth.basic_for(url) else {
            return Ok(());
        };
        let (response, _) = self
            .follow(&reqwest::Method::GET, endpoint, &[], None, Sign::Basic(user, password))
            .await?;
        if !response.status().is_success() {
            return Err(Failure::fatal(HttpError::Status {
                url: endpoint.to_string(),
                status: response.status().as_u16(),
                authorized: true,
            }));
        }
        // A token is a line; an answer longer than any token is refused unread.
        let body = self.read_capped(response, endpoint, MAX_TOKEN as u64).await?;
        let token = String::from_utf8_lossy(&body).trim().to_string();
        if token.is_empty() || token.contains(char::is_whitespace) {
            return Err(Failure::fatal(HttpError::Token {
                url: url.to_string(),
                reason: "its users/authenticate endpoint gave no token".into(),
            }));
        }
        self.bearer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(super::credentials::host_entry(url), (token, true));
        Ok(())
    }

    async fn send(&self, url: &Url, range_from: Option<u64>) -> Result<reqwest::Response, Failure> {
        let range = range_from.map(|from| (RANGE.as_str(), format!("bytes={from}-")));
        self.send_with(url, range.as_slice()).await
    }

    /// A GET of `url` with `headers`: the response when it succeeded, else the failure (with
    /// the hints of a 401 and whether to retry).
    async fn send_with(&self, url: &Url, headers: &[(&str, String)]) -> Result<reqwest::Response, Failure> {
        let (response, authorized) = self.execute(&reqwest::Method::GET, url, headers, None).await?;
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
        let unbound = match status {
            StatusCode::UNAUTHORIZED if !authorized && !self.auth.binds(url) => self.auth.unbound_variable(url),
            _ => None,
        };
        let error = match (status, held_back) {
            (_, Some(proxy)) => HttpError::HeldBack {
                url: url.to_string(),
                proxy: super::credentials::host_entry(&proxy),
            },
            (StatusCode::UNAUTHORIZED, None) if let Some(variable) = unbound => HttpError::NotBound {
                url: url.to_string(),
                variable,
            },
            (StatusCode::PROXY_AUTHENTICATION_REQUIRED, None) => HttpError::ProxyAuth {
                url: url.to_string(),
                proxy: self
                    .proxy_variable
                    .clone()
                    .unwrap_or_else(|| "(from the system settings)".into()),
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
                    proxy: self
                        .proxy_variable
                        .clone()
                        .unwrap_or_else(|| "(from the system settings)".into()),
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
            let proxy = self
                .proxy_variable
                .clone()
                .filter(|_| self.proxies.proxy_for(url).is_some());
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
            let body = self
                .read_capped(response, url, self.max_document)
                .await
                .map_err(|f| f.error)?;
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
        let short = |actual| HttpError::Short {
            url: url.to_string(),
            actual,
            expected: size,
        };
        let restart = |restarted: &mut bool| {
            *restarted = true;
            match truncate(partial) {
                Ok(()) => Next::Now { counted: false },
                Err(e) => Next::Stop(e.into()),
            }
        };
        let mut restarted = false;
        let mut short_seen = None;
        let judge = |f: &Failure, tries: u64| match (&f.error, f.range_unsatisfiable) {
            // A server that says twice in a row that it holds fewer bytes than the lock pins
            // means it: that is no server fault, and no more retries help.
            (HttpError::Short { actual, .. }, _) if short_seen == Some(*actual) => Next::Stop(short(*actual)),
            (HttpError::Short { actual, .. }, _) if tries < self.retries => {
                short_seen = Some(*actual);
                Next::Now { counted: true }
            }
            // A resumed file that does not verify: start once more from zero (a fresh download
            // that does not verify is the server's bytes: no second try).
            (HttpError::Mismatch { .. }, _) if !restarted && resumed_from_partial => restart(&mut restarted),
            // The server's whole file is shorter than the lock says: no retry helps.
            (_, Some(Some(actual))) if actual < size => Next::Stop(short(actual)),
            (_, Some(_)) if !restarted => restart(&mut restarted),
            _ => Next::Backoff,
        };
        self.runtime.block_on(retrying(
            self.retries,
            self.observer.as_deref(),
            || self.download_once(url, partial, size, sha256, progress),
            judge,
        ))
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
        Ok(f) => f
            .set_len(0)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot empty `{}`: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// A client built on first use, so that offline and no-op runs never build one.
#[derive(Debug)]
pub struct LazyClient {
    bound: Vec<Url>,
    /// What the session gives the network: offline, plain-HTTP hosts, settings.
    network: super::Network,
    client: std::sync::Mutex<Option<std::sync::Arc<HttpClient>>>,
    /// Documents read through it (a registry's index), by URL: read once per client.
    documents: std::sync::Mutex<Vec<(Url, Document)>>,
    /// Negotiated documents (a package index's project page), by URL and `Accept`.
    typed: std::sync::Mutex<Vec<((Url, String), TypedDocument)>>,
    /// Sizes learned with a `HEAD`, by URL.
    sizes: std::sync::Mutex<Vec<(Url, Option<u64>)>>,
}

/// A document's bytes and the URL it was finally read from.
type Document = (Vec<u8>, Url);

/// The `users/authenticate` endpoint of the Conan API `url` belongs to (`…/v2/conans/…` →
/// `…/v2/users/authenticate`), on the same origin; `None` for any other URL.
fn conan_authenticate_url(url: &Url) -> Option<Url> {
    let path = url.path();
    let at = path.find("/v2/conans/")?;
    let mut endpoint = url.clone();
    endpoint.set_path(&format!("{}/v2/users/authenticate", &path[..at]));
    endpoint.set_query(None);
    endpoint.set_fragment(None);
    Some(endpoint)
}

/// A document's bytes, the URL it was finally read from, and its `Content-Type`.
type TypedDocument = (Vec<u8>, Url, String);

/// What `cache` holds for `key`, else what `fetch` gives (kept when it succeeds): each answer a
/// client caches per run is asked for once. The lock is not held while fetching.
fn once<K: PartialEq, T: Clone>(
    cache: &std::sync::Mutex<Vec<(K, T)>>,
    key: K,
    fetch: impl FnOnce() -> Result<T, HttpError>,
) -> Result<T, HttpError> {
    let known = cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.clone());
    if let Some(v) = known {
        return Ok(v);
    }
    let v = fetch()?;
    cache.lock().unwrap_or_else(|p| p.into_inner()).push((key, v.clone()));
    Ok(v)
}

impl LazyClient {
    /// A client built from `network` when first used; `bound` are the registries the user
    /// chose (see `Auth::load`). Usually made by [`super::Network::client`].
    pub fn new(network: super::Network, bound: Vec<Url>) -> Self {
        Self {
            bound,
            network,
            client: std::sync::Mutex::new(None),
            documents: std::sync::Mutex::new(Vec::new()),
            typed: std::sync::Mutex::new(Vec::new()),
            sizes: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The document at `url` asked for with `Accept: accept`, the URL it was finally read
    /// from and its `Content-Type` (see [`HttpClient::get_typed`]), fetched once by this client.
    pub fn typed_document(&self, url: &Url, accept: &str) -> Result<TypedDocument, HttpError> {
        once(&self.typed, (url.clone(), accept.to_string()), || {
            self.get()?.get_typed(url, &[("Accept", accept.to_string())])
        })
    }

    /// The size of the file at `url` from the `Content-Length` of a `HEAD` (`Ok(None)` when
    /// the server gives none), asked once by this client.
    pub fn head_size(&self, url: &Url) -> Result<Option<u64>, HttpError> {
        once(&self.sizes, url.clone(), || {
            let reply = self.get()?.call(reqwest::Method::HEAD, url, &[], None)?;
            if !(200..300).contains(&reply.status) {
                return Err(reply.error(url));
            }
            Ok(reply
                .headers
                .get(reqwest::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok()))
        })
    }

    /// What this client was made from (to make another, bound to other hosts).
    pub fn network(&self) -> &super::Network {
        &self.network
    }

    /// The document at `url` and the URL it was finally read from (see
    /// [`HttpClient::get_bytes`]), fetched once by this client whatever asks again.
    pub fn document(&self, url: &Url) -> Result<(Vec<u8>, Url), HttpError> {
        once(&self.documents, url.clone(), || self.get()?.get_bytes(url))
    }

    pub fn get(&self) -> Result<std::sync::Arc<HttpClient>, HttpError> {
        if self.network.offline {
            return Err(HttpError::Offline);
        }
        let mut slot = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let client = std::sync::Arc::new(HttpClient::new(
            self.network.settings()?,
            self.network.logins.as_deref(),
            &self.bound,
        )?);
        *slot = Some(client.clone());
        Ok(client)
    }
}

/// The first `max` bytes of `response`'s body (less when it ends or fails sooner); the rest is
/// never read.
async fn read_prefix(response: reqwest::Response, max: usize) -> Vec<u8> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while body.len() < max
        && let Some(Ok(chunk)) = stream.next().await
    {
        body.extend_from_slice(&chunk[..chunk.len().min(max - body.len())]);
    }
    body
}

/// Whether a response says its body is JSON (`application/json`, `…+json`).
fn is_json(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .is_some_and(|v| v == "application/json" || v.ends_with("+json"))
}
