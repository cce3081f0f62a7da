//! Where a bundle comes from: the cache, `--from DIR`, a file registry, or an HTTP(S)
//! registry (downloaded into the cache first). Candidate selection lives here, and one
//! [`verify`] checks size and sha256 for every source. A new source (a mirror, an OCI
//! registry) is one more [`crate::lock::BundleLocation`] arm, handled in `candidates` and
//! [`fetch_to_cache`].

use std::path::{Path, PathBuf};

use super::StoreError;
use super::cache::{TeeReader, files_of_size};
use super::flock::StoreLock;
use super::options::{InstallContext, Reach, Reporter, Source};
use crate::lock::{BundleLocation, LockEntry};
use crate::util::digest::Sha256;

/// A candidate bundle file, and whether a mismatch there is an error (true) or a reason to
/// try the next candidate (a corrupt cache entry, or a `--from` file that merely has the size).
pub(super) struct Candidate {
    pub(super) path: PathBuf,
    pub(super) source: Source,
    pub(super) tee_to_cache: bool,
    pub(super) strict: bool,
    /// Download this URL into the cache first (with the token its origin takes, where a
    /// registry kind gave one).
    pub(super) download: Option<(url::Url, Option<crate::net::Bearer>)>,
    /// Whether a mismatch may show this file's digest and size (see [`super::Mismatch`]).
    pub(super) reveal: bool,
}

impl Candidate {
    fn file(path: PathBuf, source: Source, tee_to_cache: bool, strict: bool) -> Self {
        Self {
            path,
            source,
            tee_to_cache,
            strict,
            download: None,
            reveal: true,
        }
    }
}

/// Refuses a lock entry whose pinned size is past the settings' maximum, before anything is read.
pub fn check_bundle_size(entry: &LockEntry, settings: &super::Settings) -> Result<(), StoreError> {
    let limit = settings.max_bundle_bytes.clone().map_err(StoreError::Config)?;
    if entry.size > limit {
        return Err(StoreError::TooBig {
            version: entry.version.clone(),
            size: entry.size,
            limit,
        });
    }
    Ok(())
}

/// Opens a bundle file to read: it must be a regular file (never a device or a fifo), and at
/// most `size + 1` bytes are ever read from it, so that a source past the pinned size fails
/// instead of filling the disk.
pub fn open_bundle(path: &Path, size: u64) -> Result<(std::io::Take<fs_err::File>, u64), StoreError> {
    let file = fs_err::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(crate::util::contain::refused(path, crate::util::contain::Why::NotFile).into());
    }
    Ok((std::io::Read::take(file, size + 1), meta.len()))
}

pub(super) fn candidates(
    entry: &LockEntry,
    options: &InstallContext,
) -> Result<(Vec<Candidate>, Vec<String>), StoreError> {
    let mut out = Vec::new();
    let mut looked = vec![format!("the cache `{}`", options.cache.dir.display())];
    if let Some(path) = options.cache.get(&entry.sha256) {
        out.push(Candidate::file(path, Source::Cache, false, false));
    }
    if let Some(dir) = &options.from {
        looked.push(format!("`{}`", dir.display()));
        let wanted = entry.file_name();
        let mut files = files_of_size(dir, entry.size);
        files.sort_by_key(|p| p.file_name().is_none_or(|n| n.to_string_lossy() != wanted));
        let named_exists = dir.join(&wanted).is_file();
        for path in files {
            let strict = path.file_name().is_some_and(|n| n.to_string_lossy() == wanted);
            out.push(Candidate::file(path, Source::From, true, strict));
        }
        // A file with the bundle's name but the wrong size is reported, not skipped.
        if named_exists && !out.iter().any(|c| c.source == Source::From && c.strict) {
            out.push(Candidate::file(dir.join(&wanted), Source::From, true, true));
        }
    }
    if let Reach::Online(_) = options.reach {
        // The registries and mirrors configured now, by digest (every candidate is verified
        // against the lock, so where a bundle comes from never changes what is trusted), the
        // lock's own source where its registry stands among them.
        let places = options.alternatives.get(&entry.version).cloned().unwrap_or_default();
        for alt in &places.before {
            alternative(alt, entry, options, &mut out, &mut looked);
        }
        let before = out.len();
        let place = crate::registry::bundle_location(entry, &options.network, options.lock_dir.as_deref());
        match &place {
            BundleLocation::Unavailable { source, reason, .. } => {
                looked.push(format!("the registry `{source}`, not reached: {reason}"));
            }
            _ => looked.push(format!("the registry `{}`", entry.source)),
        }
        match place {
            // Without the lock's source, the other places alone (a mirror still serves it).
            BundleLocation::Unavailable { .. } if before > 0 || !places.after.is_empty() => {}
            BundleLocation::Unavailable { source, reason, hint } => {
                return Err(StoreError::SourceUnavailable {
                    url: source,
                    reason,
                    hint,
                });
            }
            BundleLocation::File(path) => {
                let mut c = Candidate::file(path, Source::Registry, true, true);
                c.reveal = reveals(options, &c.path);
                out.push(c);
            }
            BundleLocation::Unsupported(url) => return Err(StoreError::UnsupportedSource { url }),
            BundleLocation::Http(_) | BundleLocation::Bearer { .. } => {
                let path = options.cache.path(&entry.sha256);
                out.push(Candidate {
                    path,
                    source: Source::Registry,
                    tee_to_cache: false,
                    strict: true,
                    download: place.into_download(),
                    reveal: true,
                });
            }
        }
        for alt in &places.after {
            alternative(alt, entry, options, &mut out, &mut looked);
        }
    }
    Ok((out, looked))
}

/// The candidate a configured registry or mirror gives for `entry` (named in `looked`).
fn alternative(
    alt: &BundleLocation,
    entry: &LockEntry,
    options: &InstallContext,
    out: &mut Vec<Candidate>,
    looked: &mut Vec<String>,
) {
    match alt {
        BundleLocation::File(path) => {
            looked.push(format!("`{}`", path.display()));
            // A mirror a committed marker names may lie outside every registry the user
            // configured: its file's digest and size are not shown then.
            let mut c = Candidate::file(path.clone(), Source::Registry, true, false);
            c.reveal = reveals(options, &c.path);
            out.push(c);
        }
        BundleLocation::Http(url) | BundleLocation::Bearer { url, .. } => {
            looked.push(format!("`{}`", crate::util::redact::shown_url(url)));
            out.push(Candidate {
                path: options.cache.path(&entry.sha256),
                source: Source::Registry,
                tee_to_cache: false,
                strict: false,
                download: alt.clone().into_download(),
                reveal: true,
            });
        }
        BundleLocation::Unavailable { source, reason, .. } => {
            looked.push(format!("`{source}`, not reached: {reason}"));
        }
        BundleLocation::Unsupported(_) => {}
    }
}

/// `true` when a `file://` source lies inside the configured file registry.
fn reveals(options: &InstallContext, path: &Path) -> bool {
    options
        .registry_dir
        .as_ref()
        .is_some_and(|dir| crate::util::paths::absolute(path).starts_with(dir))
}

/// Makes sure the bundle of `entry` is in the cache, verified: re-hashes a cached copy,
/// else copies it from a file registry or downloads it. Used by `a2c vendor`.
pub fn fetch_to_cache(
    entry: &LockEntry,
    options: &InstallContext,
    reporter: &dyn Reporter,
) -> Result<PathBuf, StoreError> {
    check_bundle_size(entry, &options.settings)?;
    if let Some(path) = options.cache.get(&entry.sha256) {
        let (file, _) = open_bundle(&path, entry.size)?;
        let (sha, size) = crate::util::digest::sha256_reader(file)?;
        if sha == entry.sha256 && size == entry.size {
            return Ok(path);
        }
        options.cache.evict(&entry.sha256);
    }
    if let Reach::Offline(flag) = options.reach {
        return Err(StoreError::Missing {
            version: entry.version.clone(),
            sha256: entry.sha256.to_hex(),
            looked: vec![format!("the cache `{}`", options.cache.dir.display())],
            offline: Some(flag),
            takes_from: false,
        });
    }
    // The configured registries and mirrors that serve it, as an install tries them (each
    // verified against the lock), the lock's own source where its registry stands among them;
    // when none serves it, the lock's source's error is the one told.
    let places = options.alternatives.get(&entry.version).cloned().unwrap_or_default();
    for place in places.before {
        if let Ok(path) = fetch_from(entry, place, options, reporter) {
            return Ok(path);
        }
    }
    let source = crate::registry::bundle_location(entry, &options.network, options.lock_dir.as_deref());
    let own = match fetch_from(entry, source, options, reporter) {
        Ok(path) => return Ok(path),
        Err(e) => e,
    };
    for place in places.after {
        if let Ok(path) = fetch_from(entry, place, options, reporter) {
            return Ok(path);
        }
    }
    Err(own)
}

/// The bundle of `entry` from `place` into the cache, verified.
fn fetch_from(
    entry: &LockEntry,
    place: BundleLocation,
    options: &InstallContext,
    reporter: &dyn Reporter,
) -> Result<PathBuf, StoreError> {
    match place {
        BundleLocation::File(path) => {
            let reveal = reveals(options, &path);
            let (file, _) = open_bundle(&path, entry.size)?;
            let mut partial = options.cache.partial(&entry.sha256)?;
            let mut reader = crate::util::digest::HashingReader::new(TeeReader::new(file, Some(partial.writer())));
            std::io::copy(&mut reader, &mut std::io::sink())?;
            let (sha, size) = reader.finish()?;
            verify(entry, &path, reveal, size, &sha)?;
            Ok(partial.commit()?)
        }
        BundleLocation::Http(url) => {
            download(entry, &url, None, options, reporter)?;
            Ok(options.cache.path(&entry.sha256))
        }
        BundleLocation::Bearer { url, token } => {
            download(entry, &url, Some(&token), options, reporter)?;
            Ok(options.cache.path(&entry.sha256))
        }
        BundleLocation::Unsupported(url) => Err(StoreError::UnsupportedSource { url }),
        BundleLocation::Unavailable { source, reason, hint } => Err(StoreError::SourceUnavailable {
            url: source,
            reason,
            hint,
        }),
    }
}

/// Downloads the bundle of `entry` into the cache (resuming a `.partial` left by an earlier
/// run), verified before the rename. Another process downloading the same bundle is waited for.
pub(super) fn download(
    entry: &LockEntry,
    url: &url::Url,
    bearer: Option<&crate::net::Bearer>,
    options: &InstallContext,
    reporter: &dyn Reporter,
) -> Result<(), StoreError> {
    let Reach::Online(network) = &options.reach else {
        unreachable!("download candidates are made online only")
    };
    let fail = |source: crate::net::HttpError| StoreError::Download {
        version: entry.version.clone(),
        hint: crate::registry::source_hint(&entry.source, &source, &options.network),
        source: Box::new(source),
    };
    let _lock = StoreLock::acquire(&options.cache.lock_path(&entry.sha256)?, &options.settings, &|p| {
        reporter.waiting_for_lock(p)
    })?;
    if options.cache.get(&entry.sha256).is_some() {
        return Ok(()); // another process finished it meanwhile
    }
    let client = network.client().map_err(fail)?;
    let partial = options.cache.partial_path(&entry.sha256)?;
    reporter.download_start(&entry.version, entry.size);
    let fetch = crate::net::download::Fetch {
        url,
        bearer,
        partial: &partial,
        size: entry.size,
        sha256: &entry.sha256,
    };
    let result = client.download(fetch, &|bytes| reporter.download_progress(&entry.version, bytes));
    reporter.download_finish(&entry.version);
    match result {
        Ok(()) => {
            options.cache.commit_partial(&entry.sha256)?;
            Ok(())
        }
        Err(e) => {
            // Keep a partial only when it can be resumed: never an empty one, never one that
            // failed verification or that the server cannot complete, and never one that filled
            // the disk (it would keep it full).
            let empty = fs_err::symlink_metadata(&partial).is_ok_and(|m| m.is_file() && m.len() == 0);
            let full = matches!(&e, crate::net::HttpError::Io(io) if is_disk_full(io));
            if empty
                || full
                || matches!(
                    e,
                    crate::net::HttpError::Mismatch { .. }
                        | crate::net::HttpError::TooLong { .. }
                        | crate::net::HttpError::Short { .. }
                )
            {
                let _ = fs_err::remove_file(&partial);
            }
            if full {
                return Err(StoreError::DiskFull {
                    version: entry.version.clone(),
                    cache: options.cache.dir.clone(),
                });
            }
            Err(fail(e))
        }
    }
}

/// No space left (or a quota reached) on the disk written to.
pub fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

pub(super) fn mismatch(
    entry: &LockEntry,
    what: super::Checked,
    source: &Path,
    expected: String,
    actual: String,
    reveal: bool,
) -> StoreError {
    StoreError::Mismatch(Box::new(super::Mismatch {
        version: entry.version.clone(),
        what,
        source_name: source.display().to_string(),
        expected,
        actual,
        reveal,
    }))
}

/// The one check every source passes: exactly the size, then exactly the sha256, the lock
/// pins. `reveal` says whether the error may show what the file holds (see
/// [`super::Mismatch`]).
pub fn verify(entry: &LockEntry, path: &Path, reveal: bool, size: u64, sha256: &Sha256) -> Result<(), StoreError> {
    if size != entry.size {
        return Err(mismatch(
            entry,
            super::Checked::Size,
            path,
            format!("{} bytes", entry.size),
            format!("{size} bytes"),
            reveal,
        ));
    }
    if *sha256 != entry.sha256 {
        return Err(mismatch(
            entry,
            super::Checked::Sha256,
            path,
            entry.sha256.to_hex(),
            sha256.to_hex(),
            reveal,
        ));
    }
    Ok(())
}
