//! The install pipeline (docs/concepts.md, "Registries, the lock, and installing"): for each needed version not installed and valid, take
//! the bundle from the cache, `--from DIR` or the registry, extract it into staging while
//! hashing it, verify digest, size, manifest and tree, write the receipt, and publish the
//! version with one rename — all under the store lock.

use std::path::{Path, PathBuf};

use super::StoreError;
use super::cache::TeeReader;
use super::flock::StoreLock;
use super::locked::LockedStore;
use super::receipt::Receipt;
use super::source::{Candidate, candidates, check_bundle_size, download, mismatch, open_bundle};
use super::trees::{LinkMode, PlaceError, TreeCache};
use crate::archive;
use crate::lock::LockEntry;
use crate::method::MethodManifest;
use crate::util::digest::Sha256;
use crate::util::version::MethodVersion;

pub use super::options::{InstallContext, Reporter, Silent, Source};

#[derive(Debug, Clone, serde::Serialize)]
pub struct Installed {
    pub version: MethodVersion,
    pub path: PathBuf,
    pub sha256: Sha256,
    pub tree: String,
    pub source: Source,
    /// For a bundle fetched from a registry or mirror: which (its URL, credentials redacted,
    /// or its path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_from: Option<String>,
    #[serde(skip)]
    pub files: usize,
    /// How the version shares its files with the tree cache, if it does.
    pub link_mode: Option<LinkMode>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Reused {
    pub version: MethodVersion,
    pub path: PathBuf,
}

#[derive(Debug, Default, serde::Serialize)]
pub struct InstallReport {
    pub installed: Vec<Installed>,
    pub reused: Vec<Reused>,
    /// Leftovers of killed runs that this run removed.
    pub cleaned: Vec<PathBuf>,
}

/// Installs every entry of `entries` into the store.
pub fn install(
    entries: &[LockEntry],
    options: &InstallContext,
    reporter: &dyn Reporter,
) -> Result<InstallReport, StoreError> {
    let mut report = InstallReport::default();
    let wanted = |e: &LockEntry| !options.store.is_installed(e) || options.reinstall.contains(&e.version);
    let pending: Vec<&LockEntry> = entries.iter().filter(|e| wanted(e)).collect();
    if pending.is_empty() && !options.store.staging_has_leftovers() {
        report.reused = entries.iter().map(|e| reused(&options.store, e)).collect();
        // A lock whose holder died: taking and releasing it clears the pid it left (what
        // doctor's `store-stale-lock` hint promises the next install does).
        let lock = options.store.lock_file();
        if StoreLock::stale_holder(&lock).is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            drop(
                options
                    .store
                    .lock(&options.settings, &|p| reporter.waiting_for_lock(p))?,
            );
        }
        return Ok(report);
    }
    for entry in &pending {
        check_bundle_size(entry, &options.settings)?;
    }
    super::ensure(&options.store)?;
    let locked = options
        .store
        .lock(&options.settings, &|p| reporter.waiting_for_lock(p))?;
    // Shared with other installs; `cache clean` and `cache prune` wait for it to end. A cache
    // that cannot even hold its lock fails below, where it is used, with its own message.
    let _cache = options.cache.lock_shared(&|p| reporter.waiting_for_lock(p)).ok();
    report.cleaned = locked.clean_staging()?;
    // So that `cache prune` elsewhere keeps what this store needs (best effort).
    let _ = options.cache.register_store(options.store.root());
    // Re-check under the lock: another process may have installed some meanwhile.
    let (todo, done): (Vec<&LockEntry>, Vec<&LockEntry>) = entries.iter().partition(|e| wanted(e));
    report.reused = done.into_iter().map(|e| reused(&options.store, e)).collect();
    reporter.plan(todo.len());
    let results = crate::util::parallel::run_parallel(&todo, options.jobs, |entry| {
        let result = install_one(entry, &locked, options, reporter);
        if result.is_ok() {
            reporter.installed(&entry.version);
        }
        result
    });
    let mut first_error = None;
    let mut failed = Vec::new();
    for (result, entry) in results.into_iter().zip(&todo) {
        match result {
            Ok(i) => report.installed.push(i),
            Err(e) => {
                failed.push(entry.version.clone());
                if first_error.is_none() {
                    first_error = Some(e);
                }
            }
        }
    }
    report.installed.sort_by(|a, b| a.version.cmp(&b.version));
    report.reused.sort_by(|a, b| a.version.cmp(&b.version));
    match first_error {
        // Say exactly what this run did install: those versions are in place and valid.
        Some(e) if !report.installed.is_empty() => Err(StoreError::Partly {
            source: Box::new(e),
            installed: report.installed.iter().map(|i| i.version.clone()).collect(),
            failed,
        }),
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

fn install_one(
    entry: &LockEntry,
    locked: &LockedStore<'_>,
    options: &InstallContext,
    reporter: &dyn Reporter,
) -> Result<Installed, StoreError> {
    if let Some(installed) = from_tree_cache(entry, locked, options, reporter)? {
        return Ok(installed);
    }
    let (candidates, looked) = candidates(entry, options)?;
    // Places that failed, with why: a dead or wrong mirror is skipped, and reported only if
    // every place fails.
    let mut failed: Vec<String> = Vec::new();
    // Registries passed over before (their index could not be read, disagrees with the lock or
    // lacks the version) are named first when no place served the bundle: each place asked.
    let passed: &[String] = options.passed_over.get(&entry.version).map_or(&[], Vec::as_slice);
    let all_failed = |failed: Vec<String>, hint: Option<String>| StoreError::AllSourcesFailed {
        version: entry.version.clone(),
        tried: passed.iter().cloned().chain(failed).collect(),
        hint,
    };
    // The lock's own source's failure (its candidate is `strict`): told alone when no other
    // place was asked, else its hint beside every place named. The places after it (its
    // registry's mirrors, the rest) are still tried.
    // With whether it failed to download (a download is said alone only when no registry was
    // passed over either).
    let mut own: Option<(StoreError, bool)> = None;
    for candidate in candidates {
        if let Some((url, bearer)) = &candidate.download {
            if let Err(e) = download(entry, url, bearer.as_ref(), options, reporter) {
                failed.push(match &e {
                    StoreError::Download { source, .. } => source.to_string(),
                    other => other.to_string(),
                });
                if candidate.strict {
                    own = Some((e, true));
                }
                continue;
            }
            crate::testhook::point(crate::testhook::AFTER_DOWNLOAD);
        } else if candidate.source == Source::Registry && !candidate.path.is_file() {
            failed.push(match std::fs::symlink_metadata(&candidate.path) {
                Ok(_) => format!("`{}` is not a regular file", candidate.path.display()),
                Err(_) => format!("`{}` does not exist", candidate.path.display()),
            });
            continue;
        }
        reporter.start(&entry.version, entry.size);
        let result = install_from(entry, &candidate, locked, options);
        reporter.finish(&entry.version, entry.size);
        match result {
            // Not the bundle after all: a corrupt cache entry (evicted), a `--from` file that
            // only had the right size, or a mirror serving other bytes. Try the next place.
            Err(StoreError::Mismatch(m)) if !candidate.strict => match candidate.source {
                Source::Cache => options.cache.evict(&entry.sha256),
                Source::Registry => failed.push(m.to_string()),
                Source::From | Source::TreeCache => {}
            },
            Err(e) if candidate.strict && candidate.source == Source::Registry => {
                failed.push(e.to_string());
                own = Some((e, false));
            }
            other => return other,
        }
    }
    match own {
        // The lock's own source alone could not serve it: its own error.
        Some((e, download)) if failed.len() == 1 && (!download || passed.is_empty()) => return Err(e),
        // What to do about the lock's own source (a private CA, credentials), every place named.
        Some((e, _)) => return Err(all_failed(failed, e.hint())),
        None => {}
    }
    if !failed.is_empty() {
        return Err(all_failed(failed, None));
    }
    Err(StoreError::Missing {
        version: entry.version.clone(),
        sha256: entry.sha256.to_hex(),
        looked,
        offline: options.offline_flag(),
        takes_from: true,
    })
}

fn install_from(
    entry: &LockEntry,
    candidate: &Candidate,
    locked: &LockedStore<'_>,
    options: &InstallContext,
) -> Result<Installed, StoreError> {
    let path = &candidate.path;
    let wrong =
        |what, expected: String, actual: String| mismatch(entry, what, path, expected, actual, candidate.reveal);
    let (file, actual_size) = open_bundle(path, entry.size)?;
    if candidate.source == Source::Cache {
        options.cache.touch(&entry.sha256);
    }
    if actual_size != entry.size {
        return Err(wrong(
            super::Checked::Size,
            format!("{} bytes", entry.size),
            format!("{actual_size} bytes"),
        ));
    }
    let mut partial = match candidate.tee_to_cache {
        true => Some(options.cache.partial(&entry.sha256)?),
        false => None,
    };
    let staging = locked.staging_dir(&entry.version)?;
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
                return Err(wrong(super::Checked::Sha256, entry.sha256.to_hex(), actual.to_hex()));
            }
            return Err(StoreError::Extract {
                version: entry.version.clone(),
                source_name,
                source: Box::new(source),
            });
        }
    };
    super::source::verify(
        entry,
        path,
        candidate.reveal,
        extracted.bundle_size,
        &extracted.bundle_sha256,
    )?;
    let bad_manifest = |reason: String| StoreError::BadManifest {
        version: entry.version.clone(),
        source_name: source_name.clone(),
        reason,
    };
    let manifest = MethodManifest::read_tree(&extracted.root).map_err(|e| {
        // Never name the staging directory: it is gone by the time the user reads this.
        bad_manifest(match e {
            crate::method::ManifestError::Missing { .. } => {
                format!(
                    "has no valid manifest: no `{}` at its root",
                    crate::method::MANIFEST_FILE
                )
            }
            crate::method::ManifestError::Invalid { reason, .. } => {
                format!("has no valid manifest: `{}`: {reason}", crate::method::MANIFEST_FILE)
            }
            crate::method::ManifestError::Io(e) => format!("has no valid manifest: {e}"),
        })
    })?;
    if manifest.version != entry.version {
        return Err(bad_manifest(format!(
            "declares version {} in its manifest",
            manifest.version
        )));
    }
    if let Some(min) = manifest.needs_newer_a2c() {
        // Exactly the locked bytes and a valid tree, only too new for this a2c: cached, so that
        // `doctor` can name its `min_a2c` and a newer a2c installs it without a download.
        if let Some(p) = partial {
            p.commit()?;
        }
        return Err(StoreError::NeedsNewerA2c {
            version: entry.version.clone(),
            min: min.clone(),
            running: crate::A2C_VERSION.into(),
        });
    }
    if let Some(tree) = &entry.tree
        && *tree != extracted.tree
    {
        return Err(wrong(super::Checked::TreeDigest, tree.clone(), extracted.tree));
    }
    let receipt = Receipt::new(
        entry,
        extracted.tree.clone(),
        extracted.files.len(),
        match candidate.source {
            Source::Registry => entry.source.clone(),
            _ => source_name.clone(),
        },
        None,
    );
    crate::util::contain::write_new(
        &extracted.root.join(crate::archive::TREE_FILE),
        &crate::util::digest::tree_lines(&extracted.files),
        0o444,
    )?;
    receipt.write(&extracted.root)?;
    crate::testhook::point(crate::testhook::AFTER_RECEIPT);
    // Belt and braces on top of extraction beneath a directory handle: nothing staged may be
    // a link when it is published.
    crate::util::contain::refuse_links_below(staging.path())?;
    if let Some(p) = partial {
        p.commit()?;
    }
    crate::testhook::point(crate::testhook::BEFORE_RENAME);
    let target = locked.publish(&extracted.root, &entry.version, &staging)?;
    crate::testhook::point(crate::testhook::AFTER_RENAME);
    // The shared tree cache records the verified tree where it now lives (a failure there
    // costs only speed): a later install into another store shares it from here.
    let _ = TreeCache::new(&options.cache.dir).record(entry, &target, &extracted.tree, &extracted.files);
    Ok(Installed {
        version: entry.version.clone(),
        path: target,
        sha256: entry.sha256,
        tree: extracted.tree,
        source: candidate.source.clone(),
        served_from: match (&candidate.download, &candidate.source) {
            (Some((url, _)), _) => Some(crate::util::redact::redact(url.as_str())),
            (None, Source::Registry) => Some(candidate.path.display().to_string()),
            (None, _) => None,
        },
        files: extracted.files.len(),
        link_mode: None,
    })
}

/// Installs `entry` from the shared tree cache, when it holds the tree (or another store of this
/// machine does: it is shared into the cache first). `None` when it cannot (not cached,
/// tampered — then evicted —, or gone): the bundle path installs it. Runs under the bundle's
/// cache lock, released before the bundle path takes it for a download: a placement's check
/// of each cached file and the record of the change times its hard links move are one step.
fn from_tree_cache(
    entry: &LockEntry,
    locked: &LockedStore<'_>,
    options: &InstallContext,
    reporter: &dyn Reporter,
) -> Result<Option<Installed>, StoreError> {
    let trees = TreeCache::new(&options.cache.dir);
    if options.reinstall.contains(&entry.version) || !trees.path(&entry.sha256).is_dir() {
        return Ok(None);
    }
    let _lock = StoreLock::acquire(&options.cache.lock_path(&entry.sha256)?, &options.settings, &|p| {
        reporter.waiting_for_lock(p)
    })?;
    let cached = trees.lookup(entry).and_then(|c| match c.origin {
        None => Some(c),
        Some(_) => match trees.promote(&c, entry, options.link_mode) {
            Ok(promoted) => Some(promoted),
            Err(PlaceError::Tampered(_)) => {
                trees.evict(&entry.sha256);
                None
            }
            Err(_) => None,
        },
    });
    let Some(cached) = cached else { return Ok(None) };
    reporter.start(&entry.version, entry.size);
    let placed = place_from_tree_cache(entry, &cached, &trees, locked, options);
    reporter.finish(&entry.version, entry.size);
    match placed {
        Ok(installed) => Ok(Some(installed)),
        // Tampered or gone: never placed again; the bundle path installs it.
        Err(None) => Ok(None),
        Err(Some(e)) => Err(e),
    }
}

/// Places `entry` from its cached tree: built in staging by clone, hardlink or copy, checked
/// file by file against the cache's record, given its own receipt, published with one
/// rename. `Err(None)` when the cached tree is tampered (then evicted) or gone: install from
/// the bundle instead.
fn place_from_tree_cache(
    entry: &LockEntry,
    cached: &super::trees::CachedTree,
    trees: &TreeCache,
    locked: &LockedStore<'_>,
    options: &InstallContext,
) -> Result<Installed, Option<StoreError>> {
    let staging = locked.staging_dir(&entry.version).map_err(|e| Some(e.into()))?;
    let tree_dir = staging.path().join("tree");
    fs_err::create_dir(&tree_dir).map_err(|e| Some(e.into()))?;
    let mode = match trees.place(cached, &tree_dir, options.link_mode) {
        Ok(mode) => mode,
        Err(PlaceError::Tampered(_)) => {
            trees.evict(&entry.sha256);
            return Err(None);
        }
        Err(PlaceError::Gone) => return Err(None),
        Err(PlaceError::Io(e)) => return Err(Some(e.into())),
    };
    super::cache::touch(&trees.path(&entry.sha256).join(super::trees::META_FILE));
    let receipt = Receipt::new(
        entry,
        cached.tree.clone(),
        cached.files(),
        entry.source.clone(),
        Some(mode),
    );
    let finish = || -> Result<PathBuf, StoreError> {
        receipt.write(&tree_dir)?;
        crate::util::contain::refuse_links_below(staging.path())?;
        crate::testhook::point(crate::testhook::BEFORE_RENAME);
        Ok(locked.publish(&tree_dir, &entry.version, &staging)?)
    };
    let path = finish().map_err(Some)?;
    Ok(Installed {
        version: entry.version.clone(),
        path,
        sha256: entry.sha256,
        tree: cached.tree.clone(),
        source: Source::TreeCache,
        served_from: None,
        files: cached.files(),
        link_mode: Some(mode),
    })
}
