//! The one request loop: every request goes through `HttpClient::follow`, which follows
//! redirects hop by hop and decides each hop's credential against the first hop's origin;
//! `HttpClient::execute` answers a challenge once (a Bearer token service, a registry kind's
//! [`super::TokenExchange`], docker's credential helper), and upgrades a loopback port that
//! speaks TLS. Every body read into memory is capped (`read_capped`), and a failure is
//! classified once (`classify`) with whether to retry.

use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_RANGE, RANGE, RETRY_AFTER};
use url::Url;

use super::HttpError;
use super::auth::{DockerCredential, bearer_challenge, is_loopback, same_origin};
use super::client::{HttpClient, MAX_REDIRECTS, Outgoing, Payload};
use super::retry::{Failure, retry_after};
use super::tls::{error_chain, find_in_chain, short_reason, tls_reason};

/// Which credential the hops of one request carry while they stay on its origin (see
/// `HttpClient::follow`).
#[derive(Clone, Copy)]
pub(super) enum HopCredential<'a> {
    /// What the user bound to the hop's host (and the tokens it obtained).
    Bound,
    /// These Basic credentials (a token endpoint's exchange).
    Basic(&'a str, &'a str),
    /// This bearer token, which a registry kind obtained for the request's origin (and nothing
    /// the user bound to the host).
    Bearer(&'a str),
    /// None in a header: the body holds one (an OAuth2 refresh token), so it never leaves
    /// the origin.
    InBody,
    /// None.
    Anonymous,
}

/// The low-speed check (as curl's `--speed-limit` / `--speed-time`): over each window of
/// `window` seconds, at least `min` bytes per second on average.
pub(super) struct Rate {
    start: std::time::Instant,
    base: u64,
    min: u64,
    window: u64,
}

impl Rate {
    pub(super) fn new(min: u64, window: u64, have: u64) -> Self {
        Self {
            start: std::time::Instant::now(),
            base: have,
            min,
            window,
        }
    }

    /// Called with the running byte count whenever bytes arrive.
    #[allow(clippy::result_large_err)] // an internal attempt result, as in the async paths
    pub(super) fn check(&mut self, url: &Url, total: u64) -> Result<(), Failure> {
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
                url: crate::util::redact::shown_url(url),
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
    pub(super) async fn get_once(&self, url: &Url, headers: &[(&str, String)]) -> Result<super::Document, Failure> {
        let response = self.send_with(url, headers, HopCredential::Bound).await?;
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let final_url = response.url().clone();
        let body = self.read_capped(response, url, self.max_document).await?;
        Ok(super::Document {
            body,
            url: final_url,
            content_type,
        })
    }

    /// The body of `response` (from `url`), read as it streams in: at most `cap` bytes, else
    /// [`HttpError::DocumentTooBig`] without reading on (a `Content-Length` over the cap is
    /// refused before the first byte); the low-speed check applies.
    pub(super) async fn read_capped(
        &self,
        response: reqwest::Response,
        url: &Url,
        cap: u64,
    ) -> Result<Vec<u8>, Failure> {
        let too_big = || {
            Failure::fatal(HttpError::DocumentTooBig {
                url: crate::util::redact::shown_url(url),
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
        let token = crate::util::parallel::locked(&self.bearer).get(&entry).cloned();
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
                let helped = crate::util::parallel::locked(&self.helped).get(&entry).cloned();
                match helped.flatten() {
                    Some(DockerCredential::Basic(user, password)) => (request.basic_auth(user, Some(password)), true),
                    _ => (request, false),
                }
            }
        }
    }

    /// Sends one request; a `401` with a Bearer challenge is answered once: the token endpoint
    /// the registry names is asked for a token (with the credentials the user bound to the
    /// registry's host, if any) and the request is sent again with it.
    pub(super) async fn execute(&self, url: &Url, out: Outgoing<'_>) -> Result<(reqwest::Response, bool), Failure> {
        self.execute_as(url, out, HopCredential::Bound).await
    }

    /// [`Self::execute`], carrying `credential`: with other than [`HopCredential::Bound`] (a token a
    /// registry kind obtained), nothing the user bound is sent and no challenge is answered: the
    /// `401` is the answer.
    async fn execute_as(
        &self,
        url: &Url,
        out: Outgoing<'_>,
        credential: HopCredential<'_>,
    ) -> Result<(reqwest::Response, bool), Failure> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Failure::fatal(HttpError::NotHttp {
                url: crate::util::redact::shown_url(url),
            }));
        }
        // A request that carries no credential of the user's answers no challenge with one.
        let mut challenged = !matches!(credential, HopCredential::Bound);
        // Where the request goes: `url`, or once, the origin a redirect led to when the user
        // bound a credential to that origin itself.
        let mut target = self.over_tls_if_known(url);
        let mut followed = false;
        let mut upgraded = false;
        loop {
            let url = &target;
            let (response, authorized) = self.follow(url, out, credential).await?;
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
                    crate::util::parallel::locked(&self.tls_loopback).insert(super::credentials::host_entry(url));
                    target = self.over_tls_if_known(url);
                    continue;
                }
                return Err(Failure::fatal(HttpError::Status {
                    url: crate::util::redact::shown_url(url),
                    status: 400,
                    authorized,
                    challenge: None,
                }));
            }
            // A challenge is answered only by the origin the request was sent to: after a
            // redirect to another origin the request is anonymous (see `follow`), and that
            // origin's challenge never gets this origin's credentials.
            if response.status() == StatusCode::UNAUTHORIZED && !same_origin(url, response.url()) {
                let landed = response.url().clone();
                if !followed && !challenged && self.auth.has_credential_for(&landed) {
                    followed = true;
                    target = landed;
                    continue;
                }
                return Err(Failure::fatal(HttpError::NotForwarded {
                    url: crate::util::redact::shown_url(url),
                    to: landed.to_string(),
                    sent: authorized,
                }));
            }
            // A token service names its endpoint as the realm; a realm that is no URL (RFC
            // 6750's `Bearer realm="a2c"`) only says a bearer token is wanted: the 401 stands,
            // and says which credential would answer it.
            if response.status() == StatusCode::UNAUTHORIZED
                && !challenged
                && let Some(challenge) = bearer_challenge(response.headers())
                    .filter(|c| Url::parse(&c.realm).is_ok_and(|r| matches!(r.scheme(), "http" | "https")))
            {
                challenged = true;
                self.fetch_token(url, &challenge).await?;
                continue;
            }
            // An API that takes no Basic credentials but a token its own endpoint gives for
            // them (a registry kind's exchange): the user's credentials for this host go
            // there, on the same origin, once.
            if response.status() == StatusCode::UNAUTHORIZED
                && !challenged
                && self.auth.has_credential_for(url)
                && self.auth.basic_for(url).is_some()
                && let Some((exchange, endpoint)) = self.exchanges.for_url(url)
            {
                challenged = true;
                self.exchange_token(url, &endpoint, exchange).await?;
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
    /// hops, no URL twice, each hop told to the tracer. A hop carries the credential `credential`
    /// names only while the whole chain is still on `url`'s origin (scheme, host and port):
    /// once a hop has left it, no later hop carries one, even back on that origin, and https
    /// never goes down to http with one. 301, 302 and 303 turn a request with a body into a
    /// GET without it (as browsers, curl and Python do); 307 and 308 keep both, and a body
    /// that is itself a secret never leaves the origin. Returns the last hop's response and
    /// whether a credential went with it.
    pub(super) async fn follow(
        &self,
        url: &Url,
        out: Outgoing<'_>,
        credential: HopCredential<'_>,
    ) -> Result<(reqwest::Response, bool), Failure> {
        let Outgoing { method, headers, body } = out;
        let mut hop = url.clone();
        let mut method = method.clone();
        let mut body = body;
        let mut seen = vec![url.clone()];
        let mut left = false;
        loop {
            let on_origin = !left && same_origin(&hop, url);
            let request = self.client.request(method.clone(), hop.clone());
            let (mut request, authorized) = match (&credential, on_origin) {
                (HopCredential::Bound, true) => self.authorize(request, &hop),
                (HopCredential::Basic(user, password), true) => (request.basic_auth(user, Some(password)), true),
                (HopCredential::Bearer(token), true) if self.auth.may_carry(&hop) => (request.bearer_auth(token), true),
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
                Some(Payload::Framed { head, file, size, tail }) => {
                    let opened = std::fs::File::open(file)
                        .map_err(|e| Failure::io(std::io::Error::new(e.kind(), format!("{}: {e}", file.display()))))?;
                    let length = head.len() as u64 + size + tail.len() as u64;
                    request = request
                        .header(reqwest::header::CONTENT_LENGTH, length.to_string())
                        .body(reqwest::Body::wrap_stream(framed(head.clone(), opened, tail.clone())));
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
                    url: crate::util::redact::shown_url(url),
                    reason,
                })
            };
            // Every URL a message or the tracer names is shown as every URL is: a signed one
            // without its signature.
            let shown = crate::util::redact::shown_url;
            let mut next = location
                .to_str()
                .ok()
                .and_then(|l| hop.join(l).ok())
                .ok_or_else(|| redirect(format!("`{}` redirected to a location that is not a URL", shown(&hop))))?;
            // A `Location` naming `user:password@` is a credential a server put there: the
            // HTTP library would send it as Basic to that host, and every message would print
            // it. It is dropped before the next hop is used, shown or sent anywhere.
            let _ = next.set_username("");
            let _ = next.set_password(None);
            if !matches!(next.scheme(), "http" | "https") {
                return Err(redirect(format!(
                    "`{}` redirected to `{}`, which is not HTTP(S)",
                    shown(&hop),
                    shown(&next)
                )));
            }
            if seen.contains(&next) {
                return Err(redirect(format!(
                    "`{}` redirected back to `{}`: a redirect loop",
                    shown(&hop),
                    shown(&next)
                )));
            }
            if seen.len() > MAX_REDIRECTS {
                return Err(redirect(format!(
                    "it was still redirecting after {MAX_REDIRECTS} hops (the last to `{}`)",
                    shown(&next)
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
            if leaves && body.is_some() && matches!(credential, HopCredential::InBody) {
                return Err(redirect(format!(
                    "`{}` redirected a request whose body holds a credential to `{}`, another origin: it was not sent there",
                    shown(&hop),
                    shown(&next)
                )));
            }
            left |= leaves;
            if let Some(trace) = &self.tracer {
                let carries = match left {
                    true => "no credential: another origin than the first hop's",
                    false => "the first hop's credential: the same origin",
                };
                trace(&format!(
                    "`{}` answered HTTP {}: following it to `{}` ({carries})",
                    shown(&hop),
                    status.as_u16(),
                    shown(&next)
                ));
            }
            seen.push(next.clone());
            hop = next;
        }
    }

    /// `url` in HTTPS when its loopback `host:port` was found to speak it this run.
    fn over_tls_if_known(&self, url: &Url) -> Url {
        let known = url.scheme() == "http"
            && crate::util::parallel::locked(&self.tls_loopback).contains(&super::credentials::host_entry(url));
        if !known {
            return url.clone();
        }
        let mut tls = url.clone();
        let _ = tls.set_scheme("https");
        tls
    }

    /// A GET of `url` from byte `range_from` on, carrying `bearer` (see [`super::Bearer`]) where
    /// given, else what the user bound to its host.
    pub(super) async fn send(
        &self,
        url: &Url,
        range_from: Option<u64>,
        bearer: Option<&super::Bearer>,
    ) -> Result<reqwest::Response, Failure> {
        let range = range_from.map(|from| (RANGE.as_str(), format!("bytes={from}-")));
        let credential = bearer.map_or(HopCredential::Bound, |b| HopCredential::Bearer(b.token()));
        self.send_with(url, range.as_slice(), credential).await
    }

    /// A GET of `url` with `headers`: the response when it succeeded, else the failure (with
    /// the hints of a 401 and whether to retry).
    async fn send_with(
        &self,
        url: &Url,
        headers: &[(&str, String)],
        credential: HopCredential<'_>,
    ) -> Result<reqwest::Response, Failure> {
        let (response, authorized) = self.execute_as(url, Outgoing::get(headers), credential).await?;
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
                url: crate::util::redact::shown_url(url),
                proxy: super::credentials::host_entry(&proxy),
            },
            (StatusCode::UNAUTHORIZED, None) if let Some(variable) = unbound => HttpError::NotBound {
                url: crate::util::redact::shown_url(url),
                variable,
            },
            (StatusCode::PROXY_AUTHENTICATION_REQUIRED, None) => HttpError::ProxyAuth {
                url: crate::util::redact::shown_url(url),
                proxy: self
                    .proxy_variable
                    .clone()
                    .unwrap_or_else(|| "(from the system settings)".into()),
            },
            (_, None) => HttpError::Status {
                url: crate::util::redact::shown_url(url),
                status: status.as_u16(),
                authorized,
                challenge: (status == StatusCode::UNAUTHORIZED).then(|| {
                    let basic = response
                        .headers()
                        .get_all(reqwest::header::WWW_AUTHENTICATE)
                        .iter()
                        .filter_map(|v| v.to_str().ok())
                        .any(|v| v.trim_start().get(..5).is_some_and(|s| s.eq_ignore_ascii_case("basic")));
                    let login = authorized
                        .then(|| self.auth.stored_login(url))
                        .flatten()
                        .map(|l| (l.host.clone(), l.username.clone()));
                    Box::new(super::errors::Unauthorized { basic, login })
                }),
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

    pub(super) fn classify(&self, url: &Url, e: &reqwest::Error) -> Failure {
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
                    url: crate::util::redact::shown_url(url),
                    host,
                },
                false,
            )
        } else if let Some(reason) = tls {
            (
                HttpError::Tls {
                    url: crate::util::redact::shown_url(url),
                    host,
                    reason,
                },
                false,
            )
        } else if lower.contains("proxy authorization required") || lower.contains("proxy authentication required") {
            (
                HttpError::ProxyAuth {
                    url: crate::util::redact::shown_url(url),
                    proxy: self
                        .proxy_variable
                        .clone()
                        .unwrap_or_else(|| "(from the system settings)".into()),
                },
                false,
            )
        } else if e.is_timeout() && e.is_connect() {
            // No connection within the connect timeout: nothing was sent, so it is tried again
            // as any refused connection is (a stall, below, was an answer that stopped).
            (
                HttpError::Connect {
                    url: crate::util::redact::shown_url(url),
                    host,
                    reason: "no connection within the connect timeout".into(),
                    proxy: None,
                },
                true,
            )
        } else if e.is_timeout() {
            (
                HttpError::Timeout {
                    url: crate::util::redact::shown_url(url),
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
                    url: crate::util::redact::shown_url(url),
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
                    url: crate::util::redact::shown_url(url),
                    host,
                    reason: short_reason(&chain),
                    proxy,
                },
                true,
            )
        } else {
            (
                HttpError::Body {
                    url: crate::util::redact::shown_url(url),
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
}

/// `head`, the content of `file` read 64 KiB at a time, then `tail`: one request body, never
/// whole in memory.
fn framed(
    head: Vec<u8>,
    file: std::fs::File,
    tail: Vec<u8>,
) -> futures_util::stream::BoxStream<'static, std::io::Result<Vec<u8>>> {
    use std::io::Read;
    let chunks = futures_util::stream::unfold(Some(file), |file| async move {
        let mut file = file?;
        let mut chunk = vec![0u8; 64 * 1024];
        match file.read(&mut chunk) {
            Ok(0) => None,
            Ok(n) => {
                chunk.truncate(n);
                Some((Ok(chunk), Some(file)))
            }
            Err(e) => Some((Err(e), None)),
        }
    });
    futures_util::stream::iter([Ok(head)])
        .chain(chunks)
        .chain(futures_util::stream::iter([Ok(tail)]))
        .boxed()
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
