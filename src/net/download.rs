//! Resumable downloads: a bundle streamed into a given file, resuming what is there (Range),
//! hashing every byte, retrying transient failures, the low-speed check on the way.

use std::io::{Read, Seek, Write};
use std::path::Path;

use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::CONTENT_RANGE;
use url::Url;

use super::HttpError;
use super::client::HttpClient;
use super::request::Rate;
use super::retry::{Failure, Next, retrying};
use crate::util::digest::{Hasher, Sha256};

/// What one download fetches, and into which file: `size` bytes of `url` whose sha256 is
/// `sha256`, into `partial`. `bearer`: the token a registry kind obtained for `url`'s origin,
/// sent instead of what the user bound to its host (see [`super::Bearer`]).
#[derive(Clone, Copy)]
pub struct Fetch<'a> {
    pub url: &'a Url,
    pub bearer: Option<&'a super::Bearer>,
    pub partial: &'a Path,
    pub size: u64,
    pub sha256: &'a Sha256,
}

impl HttpClient {
    /// Downloads a [`Fetch`]'s URL into its `partial` file, resuming what is already there
    /// (Range), streaming and hashing every byte, retrying transient failures. Succeeds only
    /// when the file holds exactly `size` bytes whose sha256 is `sha256`; then the caller
    /// renames it into place. `progress` receives the bytes written so far.
    pub fn download(&self, fetch: Fetch<'_>, progress: &dyn Fn(u64)) -> Result<(), HttpError> {
        let Fetch { url, partial, size, .. } = fetch;
        let resumed_from_partial = std::fs::symlink_metadata(partial).is_ok_and(|m| m.len() > 0);
        let short = |actual| HttpError::Short {
            url: crate::util::redact::shown_url(url),
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
            || self.download_once(fetch, progress),
            judge,
        ))
    }

    async fn download_once(&self, fetch: Fetch<'_>, progress: &dyn Fn(u64)) -> Result<(), Failure> {
        let Fetch {
            url,
            bearer,
            partial,
            size,
            sha256,
        } = fetch;
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
        let response = self.send(url, (have > 0).then_some(have), bearer).await?;
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
                    url: crate::util::redact::shown_url(url),
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
                    url: crate::util::redact::shown_url(url),
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
                    url: crate::util::redact::shown_url(url),
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
            url: crate::util::redact::shown_url(url),
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
