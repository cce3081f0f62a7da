//! The install pipeline (DESIGN.md §4): for each needed version not installed and valid, take
//! the bundle from the cache, `--from DIR` or the registry, extract it into staging while
//! hashing it, verify digest, size, manifest and tree, write the receipt, and publish the
//! version with one rename — all under the store lock.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::cache::{Cache, TeeReader, files_of_size};
use super::flock::StoreLock;
use super::receipt::{Receipt, now_rfc3339};
use super::{STAGING_DIR, StoreError};
use crate::archive::{self, Limits};
use crate::lock::LockEntry;
use crate::method::{METHOD_NAME, MethodManifest};
use crate::util::digest::Sha256;
use crate::util::version::MethodVersion;

/// Progress callbacks; the CLI implements them (indicatif on a terminal, nothing otherwise).
pub trait Reporter: Sync {
    fn waiting_for_lock(&self, _path: &Path) {}
    fn start(&self, _version: &MethodVersion, _bytes: u64) {}
    fn finish(&self, _version: &MethodVersion, _bytes: u64) {}
    fn download_start(&self, _version: &MethodVersion, _bytes: u64) {}
    fn download_progress(&self, _version: &MethodVersion, _bytes_so_far: u64) {}
    fn download_finish(&self, _version: &MethodVersion) {}
}

/// A reporter that reports nothing.
pub struct Silent;
impl Reporter for Silent {}

/// How to install.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    pub store: super::Store,
    /// The bundle cache (always present: `a2c` falls back to `<store>/.cache`).
    pub cache: Cache,
    /// The HTTP client, built on first use; `None` reads no registry at all.
    pub network: Option<std::sync::Arc<crate::registry::client::LazyClient>>,
    pub offline: bool,
    pub from: Option<PathBuf>,
    pub jobs: usize,
    pub limits: Limits,
    /// The file registry the user or the marker configured: a `file://` source inside it may be
    /// named in messages with its digest and size; one elsewhere (named by the lock alone) not.
    pub registry_dir: Option<PathBuf>,
}

/// Where a bundle came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Cache,
    From,
    Registry,
}

#[derive(Debug, Clone)]
pub struct Installed {
    pub version: MethodVersion,
    pub path: PathBuf,
    pub sha256: Sha256,
    pub tree: String,
    pub source: Source,
    pub files: usize,
}

#[derive(Debug, Clone)]
pub struct Reused {
    pub version: MethodVersion,
    pub path: PathBuf,
}

#[derive(Debug, Default)]
pub struct InstallReport {
    pub installed: Vec<Installed>,
    pub reused: Vec<Reused>,
    /// Leftovers of killed runs that this run removed.
    pub cleaned: Vec<PathBuf>,
}

/// `true` when the store holds a receipt matching `entry` (see [`super::Store::is_installed`]).
pub fn is_installed(store: &super::Store, entry: &LockEntry) -> bool {
    store.is_installed(entry)
}

/// Installs every entry of `entries` into the store.
pub fn install(
    entries: &[LockEntry],
    options: &InstallOptions,
    reporter: &dyn Reporter,
) -> Result<InstallReport, StoreError> {
    let mut report = InstallReport::default();
    let pending: Vec<&LockEntry> = entries.iter().filter(|e| !options.store.is_installed(e)).collect();
    if pending.is_empty() && !options.store.staging_has_leftovers() {
        report.reused = entries.iter().map(|e| reused(&options.store, e)).collect();
        return Ok(report);
    }
    for entry in &pending {
        check_bundle_size(entry)?;
    }
    super::ensure(&options.store)?;
    let _lock = StoreLock::acquire(&options.store.lock_file(), &|p| reporter.waiting_for_lock(p))?;
    report.cleaned = clean_staging(&options.store)?;
    // Re-check under the lock: another process may have installed some meanwhile.
    let (todo, done): (Vec<&LockEntry>, Vec<&LockEntry>) = entries.iter().partition(|e| !options.store.is_installed(e));
    report.reused = done.into_iter().map(|e| reused(&options.store, e)).collect();
    let results = run_parallel(&todo, options.jobs, |entry| install_one(entry, options, reporter));
    let mut first_error = None;
    for result in results {
        match result {
            Ok(i) => report.installed.push(i),
            Err(e) if first_error.is_none() => first_error = Some(e),
            Err(_) => {}
        }
    }
    report.installed.sort_by(|a, b| a.version.cmp(&b.version));
    report.reused.sort_by(|a, b| a.version.cmp(&b.version));
    match first_error {
        Some(e) => Err(e),
        None => Ok(report),
    }
}

fn reused(store: &super::Store, e: &LockEntry) -> Reused {
    Reused {
        version: e.version.clone(),
        path: store.version_dir(&e.version),
    }
}

/// Removes everything in `<store>/.staging/`: only a killed run leaves anything there, and we
/// hold the store lock.
fn clean_staging(store: &super::Store) -> Result<Vec<PathBuf>, StoreError> {
    let staging = store.staging();
    let mut cleaned = Vec::new();
    let Ok(entries) = fs_err::read_dir(&staging) else {
        return Ok(cleaned);
    };
    for entry in entries {
        let path = entry?.path();
        remove_tree(&path)?;
        cleaned.push(path);
    }
    Ok(cleaned)
}

/// Removes a file or a directory tree.
pub fn remove_tree(path: &Path) -> std::io::Result<()> {
    match fs_err::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs_err::remove_dir_all(path),
        Ok(_) => fs_err::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Runs `f` on every item with up to `jobs` worker threads; the results come in item order.
fn run_parallel<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let out = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    out.lock()
                        .expect("no worker panics while holding the lock")
                        .push((i, r));
                }
            });
        }
    });
    // In the items' order, whatever order they finished in: the first error reported is
    // then always the same one.
    let mut out = out.into_inner().expect("workers are done");
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// A work directory in staging, removed on drop unless taken.
struct StagingDir(Option<PathBuf>);

impl StagingDir {
    fn new(store: &super::Store, version: &MethodVersion) -> std::io::Result<Self> {
        let staging = crate::util::contain::create_dirs(store.root(), STAGING_DIR, 0o700)?;
        // tempfile creates it 0700: nobody else may enter a directory being extracted.
        let dir = tempfile::Builder::new()
            .prefix(&format!("{version}-"))
            .tempdir_in(&staging)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{e} in `{}`", staging.display())))?
            .keep();
        Ok(Self(Some(dir)))
    }

    fn path(&self) -> &Path {
        self.0.as_deref().expect("not yet dropped")
    }
}

impl Drop for StagingDir {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = remove_tree(&p);
        }
    }
}

/// A candidate bundle file, and whether a mismatch there is an error (true) or a reason to
/// try the next candidate (a corrupt cache entry, or a `--from` file that merely has the size).
struct Candidate {
    path: PathBuf,
    source: Source,
    tee_to_cache: bool,
    strict: bool,
    /// Download this URL into the cache first.
    download: Option<url::Url>,
    /// Whether a mismatch may show this file's digest and size (see [`super::Mismatch`]).
    reveal: bool,
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

/// The largest bundle a lock may pin: `A2C_MAX_BUNDLE_BYTES`, default 4 GiB.
pub const DEFAULT_MAX_BUNDLE_BYTES: u64 = 4 << 30;

/// Refuses a lock entry whose pinned size is past the maximum, before anything is read.
pub fn check_bundle_size(entry: &LockEntry) -> Result<(), StoreError> {
    let limit = crate::env::number(crate::env::A2C_MAX_BUNDLE_BYTES)
        .map_err(|(name, value)| StoreError::Config(format!("{name}=`{value}` is not a whole number of bytes")))?
        .unwrap_or(DEFAULT_MAX_BUNDLE_BYTES);
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
fn open_bundle(path: &Path, size: u64) -> Result<(std::io::Take<fs_err::File>, u64), StoreError> {
    let file = fs_err::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(crate::util::contain::refused(path, crate::util::contain::Why::NotFile).into());
    }
    Ok((std::io::Read::take(file, size + 1), meta.len()))
}

fn candidates(entry: &LockEntry, options: &InstallOptions) -> Result<(Vec<Candidate>, Vec<String>), StoreError> {
    let mut out = Vec::new();
    let mut looked = vec![format!("the cache `{}`", options.cache.dir.display())];
    if let Some(path) = options.cache.get(&entry.sha256) {
        out.push(Candidate::file(path, Source::Cache, false, false));
    }
    if let Some(dir) = &options.from {
        looked.push(format!("`{}`", dir.display()));
        let wanted = entry.source.rsplit('/').next().unwrap_or_default().to_string();
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
    if let Some(_network) = options.network.as_ref().filter(|_| !options.offline) {
        looked.push(format!("the registry `{}`", entry.source));
        match crate::registry::location::file_path(&entry.source) {
            Some(path) => {
                let mut c = Candidate::file(path, Source::Registry, true, true);
                c.reveal = reveals(options, &c.path);
                out.push(c);
            }
            None => {
                let url = http_source(entry)?;
                let path = options.cache.path(&entry.sha256);
                out.push(Candidate {
                    path,
                    source: Source::Registry,
                    tee_to_cache: false,
                    strict: true,
                    download: Some(url),
                    reveal: true,
                });
            }
        }
    }
    Ok((out, looked))
}

/// `true` when a `file://` source lies inside the configured file registry.
fn reveals(options: &InstallOptions, path: &Path) -> bool {
    options
        .registry_dir
        .as_ref()
        .is_some_and(|dir| crate::util::paths::absolute(path).starts_with(dir))
}

fn install_one(entry: &LockEntry, options: &InstallOptions, reporter: &dyn Reporter) -> Result<Installed, StoreError> {
    let (candidates, looked) = candidates(entry, options)?;
    for candidate in candidates {
        if let Some(url) = &candidate.download {
            download(entry, url, options, reporter)?;
            crate::testhook::point(crate::testhook::AFTER_DOWNLOAD);
        } else if candidate.source == Source::Registry && !candidate.path.is_file() {
            break;
        }
        reporter.start(&entry.version, entry.size);
        let result = install_from(entry, &candidate, options);
        reporter.finish(&entry.version, entry.size);
        match result {
            // Not the bundle after all: a corrupt cache entry (evicted) or a `--from` file that
            // only had the right size. Try the next place.
            Err(StoreError::Mismatch(_)) if !candidate.strict => {
                if candidate.source == Source::Cache {
                    options.cache.evict(&entry.sha256);
                }
            }
            other => return other,
        }
    }
    Err(StoreError::Missing {
        version: entry.version.clone(),
        sha256: entry.sha256.to_hex(),
        looked,
        offline: options.offline,
    })
}

/// Makes sure the bundle of `entry` is in the cache, verified: re-hashes a cached copy,
/// else copies it from a file registry or downloads it. Used by `a2c vendor`.
pub fn fetch_to_cache(
    entry: &LockEntry,
    options: &InstallOptions,
    reporter: &dyn Reporter,
) -> Result<PathBuf, StoreError> {
    check_bundle_size(entry)?;
    if let Some(path) = options.cache.get(&entry.sha256) {
        let (file, _) = open_bundle(&path, entry.size)?;
        let (sha, size) = crate::util::digest::sha256_reader(file)?;
        if sha == entry.sha256 && size == entry.size {
            return Ok(path);
        }
        options.cache.evict(&entry.sha256);
    }
    if options.network.is_none() || options.offline {
        return Err(StoreError::Missing {
            version: entry.version.clone(),
            sha256: entry.sha256.to_hex(),
            looked: vec![format!("the cache `{}`", options.cache.dir.display())],
            offline: true,
        });
    }
    match crate::registry::location::file_path(&entry.source) {
        Some(path) => {
            let reveal = reveals(options, &path);
            let (file, _) = open_bundle(&path, entry.size)?;
            let mut partial = options.cache.partial(&entry.sha256)?;
            let mut reader = crate::util::digest::HashingReader::new(TeeReader::new(file, Some(partial.writer())));
            std::io::copy(&mut reader, &mut std::io::sink())?;
            let (sha, size) = reader.finish()?;
            if size != entry.size {
                return Err(mismatch(
                    entry,
                    "size",
                    &path,
                    format!("{} bytes", entry.size),
                    format!("{size} bytes"),
                    reveal,
                ));
            }
            if sha != entry.sha256 {
                return Err(mismatch(
                    entry,
                    "sha256",
                    &path,
                    entry.sha256.to_hex(),
                    sha.to_hex(),
                    reveal,
                ));
            }
            Ok(partial.commit()?)
        }
        None => {
            let url = http_source(entry)?;
            download(entry, &url, options, reporter)?;
            Ok(options.cache.path(&entry.sha256))
        }
    }
}

/// The lock entry's source as an HTTP(S) URL, or why it cannot be fetched (redacted).
fn http_source(entry: &LockEntry) -> Result<url::Url, StoreError> {
    url::Url::parse(&entry.source)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| StoreError::UnsupportedSource {
            url: crate::registry::location::redact(&entry.source),
        })
}

/// Downloads the bundle of `entry` into the cache (resuming a `.partial` left by an earlier
/// run), verified before the rename. Another process downloading the same bundle is waited for.
fn download(
    entry: &LockEntry,
    url: &url::Url,
    options: &InstallOptions,
    reporter: &dyn Reporter,
) -> Result<(), StoreError> {
    let network = options.network.as_ref().expect("download candidates need the network");
    let fail = |source: crate::registry::client::HttpError| StoreError::Download {
        version: entry.version.clone(),
        source: Box::new(source),
    };
    let _lock = StoreLock::acquire(&options.cache.lock_path(&entry.sha256)?, &|p| {
        reporter.waiting_for_lock(p)
    })?;
    if options.cache.get(&entry.sha256).is_some() {
        return Ok(()); // another process finished it meanwhile
    }
    let client = network.get().map_err(fail)?;
    let partial = options.cache.partial_path(&entry.sha256)?;
    reporter.download_start(&entry.version, entry.size);
    let result = client.download(url, &partial, entry.size, &entry.sha256, &|bytes| {
        reporter.download_progress(&entry.version, bytes)
    });
    reporter.download_finish(&entry.version);
    match result {
        Ok(()) => {
            options.cache.commit_partial(&entry.sha256)?;
            Ok(())
        }
        Err(e) => {
            // Keep a partial only when it can be resumed: never an empty one, and never one
            // that failed verification or that the server cannot complete.
            let empty = fs_err::symlink_metadata(&partial).is_ok_and(|m| m.is_file() && m.len() == 0);
            if empty
                || matches!(
                    e,
                    crate::registry::client::HttpError::Mismatch { .. }
                        | crate::registry::client::HttpError::TooLong { .. }
                        | crate::registry::client::HttpError::Short { .. }
                )
            {
                let _ = fs_err::remove_file(&partial);
            }
            Err(fail(e))
        }
    }
}

fn mismatch(
    entry: &LockEntry,
    what: &'static str,
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

fn install_from(entry: &LockEntry, candidate: &Candidate, options: &InstallOptions) -> Result<Installed, StoreError> {
    let path = &candidate.path;
    let wrong =
        |what, expected: String, actual: String| mismatch(entry, what, path, expected, actual, candidate.reveal);
    let (file, actual_size) = open_bundle(path, entry.size)?;
    if actual_size != entry.size {
        return Err(wrong(
            "size",
            format!("{} bytes", entry.size),
            format!("{actual_size} bytes"),
        ));
    }
    let mut partial = match candidate.tee_to_cache {
        true => Some(options.cache.partial(&entry.sha256)?),
        false => None,
    };
    let staging = StagingDir::new(&options.store, &entry.version)?;
    let tree_dir = staging.path().join("tree");
    fs_err::create_dir(&tree_dir)?;
    let source_name = path.display().to_string();
    let extracted = {
        let copy = partial.as_mut().map(|p| p.writer() as &mut dyn std::io::Write);
        let reader = TeeReader::new(std::io::BufReader::with_capacity(256 * 1024, file), copy);
        archive::extract(reader, entry.format, &tree_dir, &options.limits)
    };
    let extracted = match extracted {
        Ok(x) => x,
        Err(source) => {
            // A corrupt stream is first of all a digest problem: say so when the digest is off.
            let (actual, _) = crate::util::digest::sha256_reader(open_bundle(path, entry.size)?.0)?;
            if actual != entry.sha256 {
                return Err(wrong("sha256", entry.sha256.to_hex(), actual.to_hex()));
            }
            return Err(StoreError::Extract {
                version: entry.version.clone(),
                source_name,
                source,
            });
        }
    };
    if extracted.bundle_size != entry.size {
        return Err(wrong(
            "size",
            format!("{} bytes", entry.size),
            format!("{} bytes", extracted.bundle_size),
        ));
    }
    if extracted.bundle_sha256 != entry.sha256 {
        return Err(wrong("sha256", entry.sha256.to_hex(), extracted.bundle_sha256.to_hex()));
    }
    let bad_manifest = |reason: String| StoreError::BadManifest {
        version: entry.version.clone(),
        source_name: source_name.clone(),
        reason,
    };
    let manifest =
        MethodManifest::read_tree(&extracted.root).map_err(|e| bad_manifest(format!("has no valid manifest: {e}")))?;
    if manifest.version != entry.version {
        return Err(bad_manifest(format!(
            "declares version {} in its manifest",
            manifest.version
        )));
    }
    if let Some(min) = manifest.needs_newer_a2c() {
        return Err(StoreError::NeedsNewerA2c {
            version: entry.version.clone(),
            min: min.clone(),
            running: crate::A2C_VERSION.into(),
        });
    }
    if let Some(tree) = &entry.tree
        && *tree != extracted.tree
    {
        return Err(wrong("tree digest", tree.clone(), extracted.tree));
    }
    let receipt = Receipt {
        schema: super::receipt::RECEIPT_SCHEMA,
        name: METHOD_NAME.into(),
        version: entry.version.clone(),
        sha256: entry.sha256,
        size: entry.size,
        format: entry.format,
        tree: extracted.tree.clone(),
        files: extracted.files.len(),
        source: match candidate.source {
            Source::Registry => entry.source.clone(),
            _ => source_name.clone(),
        },
        a2c_version: crate::A2C_VERSION.into(),
        installed_at: now_rfc3339(),
    };
    write_read_only(
        &extracted.root.join(crate::archive::TREE_FILE),
        &crate::util::digest::tree_lines(&extracted.files),
    )?;
    receipt.write(&extracted.root)?;
    crate::testhook::point(crate::testhook::AFTER_RECEIPT);
    // Belt and braces on top of extraction beneath a directory handle: nothing staged may be
    // a link when it is published.
    crate::util::contain::refuse_links_below(staging.path())?;
    if let Some(p) = partial {
        p.commit()?;
    }
    let target = options.store.version_dir(&entry.version);
    crate::testhook::point(crate::testhook::BEFORE_RENAME);
    publish(&extracted.root, &target, staging.path())?;
    crate::testhook::point(crate::testhook::AFTER_RENAME);
    Ok(Installed {
        version: entry.version.clone(),
        path: target,
        sha256: entry.sha256,
        tree: extracted.tree,
        source: candidate.source.clone(),
        files: extracted.files.len(),
    })
}

fn write_read_only(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::util::contain::write_new(path, bytes, 0o444)
}

/// Renames `tree` to `target`. A stale `target` (no or another receipt) is first moved into
/// `staging` and removed afterwards.
fn publish(tree: &Path, target: &Path, staging: &Path) -> std::io::Result<()> {
    if fs_err::symlink_metadata(target).is_ok() {
        let old = staging.join("replaced");
        fs_err::rename(target, &old)?;
    }
    fs_err::rename(tree, target)
}
