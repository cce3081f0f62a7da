//! `a2c gc`: remove store versions no member pins, under the store lock, explaining each
//! decision; with `--cache`, prune cache bundles no visible lock references.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::install::Reporter;
use super::{Cache, StoreError};
use crate::util::digest::Sha256;
use crate::util::fs::remove_tree;
use crate::util::version::MethodVersion;

#[derive(Debug, Default, serde::Serialize)]
pub struct GcReport {
    /// Kept versions and the members pinning each.
    #[serde(serialize_with = "kept")]
    pub kept: Vec<(MethodVersion, Vec<PathBuf>)>,
    /// Removed (or, dry, to be removed) versions and their directories.
    #[serde(serialize_with = "removed")]
    pub removed: Vec<(MethodVersion, PathBuf)>,
    /// Removed (or, dry, to be removed) cache bundles.
    pub cache_removed: Vec<PathBuf>,
    /// Removed (or, dry, to be removed) trees of the shared tree cache.
    #[serde(rename = "cache_trees_removed")]
    pub trees_removed: Vec<PathBuf>,
}

fn kept<S: serde::Serializer>(list: &[(MethodVersion, Vec<PathBuf>)], s: S) -> Result<S::Ok, S::Error> {
    crate::util::pairs_as(list, "version", "members", s)
}

fn removed<S: serde::Serializer>(list: &[(MethodVersion, PathBuf)], s: S) -> Result<S::Ok, S::Error> {
    crate::util::pairs_as(list, "version", "path", s)
}

/// Removes every installed version not in `pinned`. With `cache`, also removes cache bundles
/// whose sha256 is not in the referenced set. `dry_run` changes nothing (not even the lock file).
/// What a cache prune keeps: the bundles the stores still need, computed under the cache's
/// exclusive lock (so that no install registers a store or fills the cache meanwhile).
pub type Needed<'a> = &'a dyn Fn() -> Result<BTreeSet<Sha256>, StoreError>;

pub fn gc(
    store: &super::Store,
    settings: &super::Settings,
    pinned: &BTreeMap<MethodVersion, Vec<PathBuf>>,
    cache: Option<(&Cache, Needed<'_>)>,
    dry_run: bool,
    reporter: &dyn Reporter,
) -> Result<GcReport, StoreError> {
    let locked = if dry_run || !store.root().is_dir() {
        None
    } else {
        Some(store.lock(settings, &|p| reporter.waiting_for_lock(p))?)
    };
    let _cache_lock = match (cache, dry_run) {
        (Some((cache, _)), false) => Some(cache.lock_exclusive(&|p| reporter.waiting_for_lock(p))?),
        _ => None,
    };
    let cache = match cache {
        Some((cache, needed)) => Some((cache, needed()?)),
        None => None,
    };
    let cache = cache.as_ref().map(|(c, n)| (*c, n));
    let mut report = GcReport::default();
    for (version, dir) in store.installed_versions() {
        match pinned.get(&version) {
            Some(members) => report.kept.push((version, members.clone())),
            None => {
                if let Some(locked) = &locked {
                    locked.remove_version(&version, &dir)?;
                }
                report.removed.push((version, dir));
            }
        }
    }
    if let Some((cache, referenced)) = cache {
        for partial in cache.stale_partials() {
            if !dry_run {
                fs_err::remove_file(&partial)?;
            }
            report.cache_removed.push(partial);
        }
        let bundles = cache.bundles();
        for entry in fs_err::read_dir(&bundles).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(sha) = Sha256::parse(&name) else { continue };
            if !referenced.contains(&sha) {
                if !dry_run {
                    fs_err::remove_file(entry.path())?;
                }
                report.cache_removed.push(entry.path());
            }
        }
        // A cached tree goes when no lock here references it and no store links it: a store
        // placed by hardlink shares its files (see `TreeCache::is_linked`).
        let trees = super::trees::TreeCache::new(&cache.dir);
        for stale in trees.stale_fills() {
            if !dry_run {
                remove_tree(&stale)?;
            }
            report.trees_removed.push(stale);
        }
        for (sha, root) in trees.list() {
            if referenced.contains(&sha) || super::trees::TreeCache::is_linked(&root) {
                continue;
            }
            if !dry_run {
                // Out of sight first, in one rename: a placement running now finds it gone.
                let doomed = trees.dir.join(format!(".gc-{}-{}", sha.to_hex(), std::process::id()));
                fs_err::rename(&root, &doomed)?;
                remove_tree(&doomed)?;
            }
            report.trees_removed.push(root);
        }
    }
    Ok(report)
}

/// What `a2c cache prune` (or `clean`) removed (or, dry, would remove), each with why;
/// serialized as its `--json` document (docs/json/cache-prune.schema.json).
#[derive(Debug, Default, serde::Serialize)]
pub struct PruneReport {
    /// The cache.
    pub cache: PathBuf,
    pub dry_run: bool,
    #[serde(serialize_with = "removed_with_reason")]
    pub removed: Vec<(PathBuf, String)>,
    /// Bytes freed (bundles and, for trees not linked, their files).
    pub bytes: u64,
}

/// `reason`, with the bundle's version when the tree cache knows it (`… (version 1.2.0)`).
fn with_version(trees: &super::trees::TreeCache, sha: &Sha256, reason: String) -> String {
    match trees.version_of(sha) {
        Some(v) => format!("{reason} (version {v})"),
        None => reason,
    }
}

fn removed_with_reason<S: serde::Serializer>(list: &[(PathBuf, String)], s: S) -> Result<S::Ok, S::Error> {
    crate::util::pairs_as(list, "path", "reason", s)
}

/// Prunes the cache: a bundle or tree entry goes when no store in `needed` needs it, or, with
/// `unused_for` (seconds), when it was not used for that long; a tree entry a store still holds
/// ([`super::trees::TreeCache::is_linked`]) never goes. Stale `.partial` files and fills go too.
pub fn prune_cache(
    cache: &Cache,
    needed: Needed<'_>,
    unused_for: Option<u64>,
    dry_run: bool,
    waiting: &dyn Fn(&std::path::Path),
) -> Result<PruneReport, StoreError> {
    let _lock = exclusive_unless_dry(cache, dry_run, waiting)?;
    let needed = &needed()?;
    let trees = super::trees::TreeCache::new(&cache.dir);
    let mut report = PruneReport {
        cache: cache.dir.clone(),
        dry_run,
        ..Default::default()
    };
    let old = |path: &std::path::Path| {
        unused_for.is_some_and(|limit| {
            fs_err::symlink_metadata(path)
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > limit)
        })
    };
    let why = |sha: &Sha256, path: &std::path::Path| -> Option<String> {
        if !needed.contains(sha) {
            Some("no store on this machine needs it".into())
        } else if old(path) {
            Some(format!(
                "unused for more than {} days",
                unused_for.unwrap_or(0) / 86_400
            ))
        } else {
            None
        }
    };
    for partial in cache.stale_partials() {
        // Counted before it goes: a dry run reports what removing it frees.
        report.bytes += fs_err::symlink_metadata(&partial).map(|m| m.len()).unwrap_or(0);
        if !dry_run {
            fs_err::remove_file(&partial)?;
        }
        report.removed.push((partial, "a stale partial download".into()));
    }
    for entry in fs_err::read_dir(cache.bundles()).into_iter().flatten().flatten() {
        let Ok(sha) = Sha256::parse(&entry.file_name().to_string_lossy()) else {
            continue;
        };
        if let Some(reason) = why(&sha, &entry.path()) {
            report.bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
            let reason = with_version(&trees, &sha, reason);
            if !dry_run {
                fs_err::remove_file(entry.path())?;
            }
            report.removed.push((entry.path(), reason));
        }
    }
    for stale in trees.stale_fills() {
        if !dry_run {
            remove_tree(&stale)?;
        }
        report.removed.push((stale, "a stale fill".into()));
    }
    for (sha, dir) in trees.list() {
        if super::trees::TreeCache::is_linked(&dir) {
            continue;
        }
        if let Some(reason) = why(&sha, &dir.join(super::trees::META_FILE)) {
            let reason = with_version(&trees, &sha, reason);
            if !dry_run {
                let doomed = trees.dir.join(format!(".gc-{}-{}", sha.to_hex(), std::process::id()));
                fs_err::rename(&dir, &doomed)?;
                remove_tree(&doomed)?;
            }
            report.removed.push((dir, reason));
        }
    }
    Ok(report)
}

/// What the stores that installed from `cache` still need (but `except`, whose needs the
/// caller knows): the bundles their locks pin and those of their installed versions. A store
/// that is gone needs nothing.
pub fn needed_by_stores(cache: &Cache, except: Option<&std::path::Path>) -> Result<BTreeSet<Sha256>, StoreError> {
    let mut needed = BTreeSet::new();
    for root in cache.stores()?.into_iter().filter(|r| Some(r.as_path()) != except) {
        if !crate::util::contain::is_real_dir(&root) {
            continue; // gone (or replaced by a link): it needs nothing
        }
        let store = super::Store::at(root.clone());
        for (_, dir) in store.installed_versions() {
            if let Some(r) = super::Receipt::read(&dir) {
                needed.insert(r.sha256);
            }
        }
        // The lock sits in the tool state of the store's owner (W or R).
        let repo = store.owner();
        for lock in [".tools/esys/a2c/a2c.lock", ".a2c/a2c.lock"] {
            // Never through a link a repository committed (its checkout may be another now).
            if crate::util::contain::check(repo, lock).unwrap_or(false)
                && let Ok(Some(l)) = crate::lock::Lockfile::read(&repo.join(lock))
            {
                needed.extend(l.methods.iter().map(|m| m.sha256));
            }
        }
    }
    Ok(needed)
}

/// The cache's exclusive lock, which a dry run (it changes nothing) does not take.
fn exclusive_unless_dry(
    cache: &Cache,
    dry_run: bool,
    waiting: &dyn Fn(&std::path::Path),
) -> Result<Option<super::cache::CacheLock>, StoreError> {
    Ok(match dry_run {
        true => None,
        false => Some(cache.lock_exclusive(waiting)?),
    })
}

/// `a2c cache clean`: every bundle, partial download and tree entry. Lock files stay (removing
/// one another process waits on would let two hold it); stores keep their files, hardlinked
/// or not.
pub fn clean_cache(
    cache: &Cache,
    dry_run: bool,
    waiting: &dyn Fn(&std::path::Path),
) -> Result<PruneReport, StoreError> {
    let _lock = exclusive_unless_dry(cache, dry_run, waiting)?;
    let mut report = PruneReport {
        cache: cache.dir.clone(),
        dry_run,
        ..Default::default()
    };
    let trees = super::trees::TreeCache::new(&cache.dir);
    // Named before anything goes: the versions are read from the tree entries' origins.
    let named = |path: &std::path::Path| {
        path.file_name()
            .and_then(|n| Sha256::parse(&n.to_string_lossy()).ok())
            .map_or_else(|| "clean".to_string(), |sha| with_version(&trees, &sha, "clean".into()))
    };
    let mut listed = Vec::new();
    for entry in fs_err::read_dir(cache.bundles()).into_iter().flatten().flatten() {
        report.bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
        listed.push((entry.path(), named(&entry.path())));
    }
    for entry in fs_err::read_dir(&trees.dir).into_iter().flatten().flatten() {
        listed.push((entry.path(), named(&entry.path())));
    }
    for (path, reason) in listed {
        if !dry_run {
            remove_tree(&path)?;
        }
        report.removed.push((path, reason));
    }
    Ok(report)
}
