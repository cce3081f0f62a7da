//! `a2c gc`: remove store versions no member pins, under the store lock, explaining each
//! decision; with `--cache`, prune cache bundles no visible lock references.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::flock::StoreLock;
use super::install::Reporter;
use super::{Cache, STAGING_DIR, StoreError};
use crate::util::digest::Sha256;
use crate::util::fs::remove_tree;
use crate::util::version::MethodVersion;

#[derive(Debug, Default)]
pub struct GcReport {
    /// Kept versions and the members pinning each.
    pub kept: Vec<(MethodVersion, Vec<PathBuf>)>,
    /// Removed (or, dry, to be removed) versions and their directories.
    pub removed: Vec<(MethodVersion, PathBuf)>,
    /// Removed (or, dry, to be removed) cache bundles.
    pub cache_removed: Vec<PathBuf>,
    /// Removed (or, dry, to be removed) trees of the shared tree cache.
    pub trees_removed: Vec<PathBuf>,
}

/// Removes every installed version not in `pinned`. With `cache`, also removes cache bundles
/// whose sha256 is not in the referenced set. `dry_run` changes nothing (not even the lock file).
pub fn gc(
    store: &super::Store,
    pinned: &BTreeMap<MethodVersion, Vec<PathBuf>>,
    cache: Option<(&Cache, &BTreeSet<Sha256>)>,
    dry_run: bool,
    reporter: &dyn Reporter,
) -> Result<GcReport, StoreError> {
    let _lock = if dry_run || !store.root().is_dir() {
        None
    } else {
        Some(StoreLock::acquire(&store.lock_file(), &|p| {
            reporter.waiting_for_lock(p)
        })?)
    };
    let mut report = GcReport::default();
    for (version, dir) in store.installed_versions() {
        match pinned.get(&version) {
            Some(members) => report.kept.push((version, members.clone())),
            None => {
                if !dry_run {
                    // Out of sight first, in one rename; then delete.
                    let staging = crate::util::contain::create_dirs(store.root(), STAGING_DIR, 0o700)?;
                    let doomed = staging.join(format!("gc-{version}-{}", std::process::id()));
                    fs_err::rename(&dir, &doomed)?;
                    remove_tree(&doomed)?;
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
