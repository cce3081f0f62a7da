//! Requests another library builds and a2c sends for it (object_store's, for the object-store
//! registries): the same contract as a2c's own — its client and timeouts, its retries told as
//! its own are, and every answer's body read under a cap and the low-speed check.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use url::Url;

use super::request::Rate;
use super::retry::{Failure, Next, retry_after, retrying};
use super::{HttpClient, HttpError};

/// The answers a relayed request is tried again on, as net's own requests are: too many
/// requests, and a server's failure.
fn retried(status: reqwest::StatusCode) -> bool {
    status == reqwest::StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

impl HttpClient {
    /// Sends the request `make` builds (anew for each try) on `client` (this client's
    /// [`Self::reqwest`], or its quick-connect twin), with `retries` ([`Self::retries`] for a store):
    /// a failed connection, a stall, a `429` or a `5xx` is tried again up to that many times,
    /// each try told as every retry is. The last answer comes back whatever its status (the
    /// library says what it means); its body is read under `cap` bytes and the low-speed check
    /// ([`Bounded`]).
    pub async fn relay(
        &self,
        client: &reqwest::Client,
        make: impl Fn() -> reqwest::Request,
        cap: u64,
        retries: u64,
    ) -> Result<::http::Response<Bounded>, HttpError> {
        let last: Mutex<Option<reqwest::Response>> = Mutex::new(None);
        let attempt = || {
            let request = make();
            let url = request.url().clone();
            let sent = client.execute(request);
            let last = &last;
            async move {
                let response = sent.await.map_err(|e| self.classify(&url, &e))?;
                let status = response.status();
                if !retried(status) {
                    return Ok(response);
                }
                let wait = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(retry_after);
                *crate::util::parallel::locked(last) = Some(response);
                Err(Failure {
                    error: HttpError::Status {
                        url: crate::util::redact::shown_url(&url),
                        status: status.as_u16(),
                        authorized: false,
                        challenge: None,
                    },
                    retry: true,
                    retry_after: wait,
                    range_unsatisfiable: None,
                })
            }
        };
        let outcome = retrying(retries, self.observer.as_deref(), attempt, |_, _| Next::Backoff).await;
        let response = match outcome {
            Ok(response) => response,
            // The answer that was tried again and again: the library words it.
            Err(HttpError::Status { .. }) => match crate::util::parallel::locked(&last).take() {
                Some(response) => response,
                None => unreachable!("a status failure keeps its answer"),
            },
            Err(e) => return Err(e),
        };
        let url = response.url().clone();
        let response: ::http::Response<reqwest::Body> = response.into();
        let (parts, body) = response.into_parts();
        let rate = Rate::new(self.low_speed, self.low_speed_time, 0);
        Ok(::http::Response::from_parts(
            parts,
            Bounded {
                inner: body,
                url: Arc::new(url),
                read: 0,
                cap,
                rate,
                timeout: self.timeout,
            },
        ))
    }
}

/// An answer's body as it arrives, cut off past `cap` bytes whatever its `Content-Length` said,
/// and failed when it trickles below the low-speed minimum (a stall is the client's read
/// timeout).
pub struct Bounded {
    inner: reqwest::Body,
    url: Arc<Url>,
    read: u64,
    cap: u64,
    rate: Rate,
    /// `A2C_HTTP_TIMEOUT`, for the message of a stall.
    timeout: u64,
}

impl Body for Bounded {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        let this = &mut *self;
        let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(this.failed(&e)))),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => return Poll::Pending,
        };
        if let Some(data) = frame.data_ref() {
            this.read += data.len() as u64;
            if this.read > this.cap {
                return Poll::Ready(Some(Err(HttpError::DocumentTooBig {
                    url: crate::util::redact::shown_url(&this.url),
                    cap: this.cap,
                })));
            }
            if let Err(f) = this.rate.check(&this.url, this.read) {
                return Poll::Ready(Some(Err(f.error)));
            }
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        // Never more than the cap: a reader sizing its buffer by the hint allocates no more.
        let mut hint = SizeHint::new();
        hint.set_lower(self.inner.size_hint().lower().min(self.cap));
        hint
    }
}

impl Bounded {
    fn failed(&self, e: &reqwest::Error) -> HttpError {
        match e.is_timeout() {
            true => HttpError::Timeout {
                url: crate::util::redact::shown_url(&self.url),
                seconds: self.timeout,
            },
            false => HttpError::Body {
                url: crate::util::redact::shown_url(&self.url),
                reason: super::tls::error_chain(e),
            },
        }
    }
}
