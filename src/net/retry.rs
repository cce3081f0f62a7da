//! Retries: one failed attempt and whether trying again may help, the backoff with jitter,
//! `Retry-After`, and who hears of each retry.

use std::time::Duration;

use super::HttpError;

/// One failed attempt: the error, and whether trying again may help.
pub(super) struct Failure {
    pub(super) error: HttpError,
    pub(super) retry: bool,
    pub(super) retry_after: Option<Duration>,
    /// A 416, with the complete length the server gave (`Content-Range: bytes */N`), if any.
    pub(super) range_unsatisfiable: Option<Option<u64>>,
}

impl Failure {
    pub(super) fn fatal(error: HttpError) -> Self {
        Self {
            error,
            retry: false,
            retry_after: None,
            range_unsatisfiable: None,
        }
    }

    pub(super) fn io(e: std::io::Error) -> Self {
        Self::fatal(HttpError::Io(e))
    }
}

/// A listener for retries (the session's, set by the CLI under `-v`): one line each — what
/// failed, which try comes next, and after how long.
pub type RetryObserver = dyn Fn(&str) + Send + Sync;

/// A listener for redirect hops (the session's, set by the CLI under `-v`): one line each —
/// the hop, its answer, where it goes next and whether a credential goes with it.
pub type HopTracer = dyn Fn(&str) + Send + Sync;

fn note_retry(observer: Option<&RetryObserver>, error: &HttpError, attempt: u64, retries: u64, wait: Duration) {
    if let Some(observe) = observer {
        // A stall is tried again once: the count told is the count made.
        let last = match error {
            HttpError::Timeout { .. } if attempt < retries => " (the last if it stalls again)",
            _ => "",
        };
        observe(&format!(
            "retry {attempt} of {retries} in {:.1} s{last}: {error}",
            wait.as_secs_f64()
        ));
    }
}

/// A `Retry-After` value (RFC 9110 §10.2.3): seconds, or an HTTP-date; at most 60 s.
pub(super) fn retry_after(value: &str) -> Option<Duration> {
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
pub(super) fn backoff(attempt: u64, retry_after: Option<Duration>) -> Duration {
    if let Some(d) = retry_after {
        return d;
    }
    let base = 250u64.saturating_mul(1 << attempt.saturating_sub(1).min(5)).min(8_000);
    Duration::from_millis(base / 2 + fastrand::u64(0..=base))
}

/// What to do after a failed attempt (see [`retrying`]).
pub(super) enum Next {
    /// Try again after the backoff while tries remain, when the failure says trying again may
    /// help; else fail with its error.
    Backoff,
    /// Try again at once: `counted` uses up a try (a short answer seen once), a restart from
    /// zero does not.
    Now { counted: bool },
    /// Give up with this error.
    Stop(HttpError),
}

/// The client's one retry loop: runs `attempt` until it succeeds, `judge` says to stop, or
/// `retries` tries after the first are used up, waiting the backoff (or `Retry-After`) between
/// tries and telling the observer of each.
pub(super) async fn retrying<T, F, Fut>(
    retries: u64,
    observer: Option<&RetryObserver>,
    mut attempt: F,
    mut judge: impl FnMut(&Failure, u64) -> Next,
) -> Result<T, HttpError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Failure>>,
{
    let mut tries = 0;
    // A stall (nothing arrived for the whole timeout) is tried again once: a server that
    // stalls twice in a row is hung, and waiting out every retry on it took minutes.
    let mut stalled = false;
    loop {
        let failure = match attempt().await {
            Ok(value) => return Ok(value),
            Err(f) => f,
        };
        let stall = matches!(failure.error, HttpError::Timeout { .. });
        if stall && std::mem::replace(&mut stalled, true) {
            return Err(failure.error);
        }
        match judge(&failure, tries) {
            Next::Stop(error) => return Err(error),
            Next::Now { counted } => tries += u64::from(counted),
            Next::Backoff if failure.retry && tries < retries => {
                tries += 1;
                let wait = backoff(tries, failure.retry_after);
                note_retry(observer, &failure.error, tries, retries, wait);
                tokio::time::sleep(wait).await;
            }
            Next::Backoff => return Err(failure.error),
        }
    }
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
}
