//! `a2c gc`: remove store versions no member pins, under the store lock, explaining each
//! decision; with `--cache`, prune cache bundles no visible lock references.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::flock::StoreLock;
use super::install::{Reporter, remove_tree};
use super::{Cache, LOCK_FILE, STAGING_DIR, StoreError};
use crate::util::digest::Sha256;
use crate::util::version::MethodVersion;

/// `<store>/<V>/` directories whose name is a version, sorted. A link is never listed (its
/// `file_type` is not followed), so nothing outside the store is ever removed through one.
pub fn installed_versions(store: &Path) -> Vec<(MethodVersion, PathBuf)> {
    let mut out: Vec<(MethodVersion, PathBuf)> = fs_err::read_dir(store)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.starts_with('.') {
                        return None;
                    }
                    name.parse::<MethodVersion>().ok().map(|v| (v, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Entries of the store named like a version that are symbolic links (never installed).
pub fn linked_versions(store: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs_err::read_dir(store)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
                .filter(|e| e.file_name().to_string_lossy().parse::<MethodVersion>().is_ok())
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[derive(Debug, Default)]
pub struct GcReport {
    /// Kept versions and the members pinning each.
    pub kept: Vec<(MethodVersion, Vec<PathBuf>)>,
    /// Removed (or, dry, to be removed) versions and their directories.
    pub removed: Vec<(MethodVersion, PathBuf)>,
    /// Removed (or, dry, to be removed) cache bundles.
    pub cache_removed: Vec<PathBuf>,
}

/// Removes every installed version not in `pinned`. With `cache`, also removes cache bundles
/// whose sha256 is not in the referenced set. `dry_run` changes nothing (not even the lock file).
pub fn gc(
    store: &Path,
    pinned: &BTreeMap<MethodVersion, Vec<PathBuf>>,
    cache: Option<(&Cache, &BTreeSet<Sha256>)>,
    dry_run: bool,
    reporter: &dyn Reporter,
) -> Result<GcReport, StoreError> {
    let _lock = if dry_run || !store.is_dir() {
        None
    } else {
        Some(StoreLock::acquire(&store.join(LOCK_FILE), &|p| {
            reporter.waiting_for_lock(p)
        })?)
    };
    let mut report = GcReport::default();
    for (version, dir) in installed_versions(store) {
        match pinned.get(&version) {
            Some(members) => report.kept.push((version, members.clone())),
            None => {
                if !dry_run {
                    // Out of sight first, in one rename; then delete.
                    let staging = crate::util::contain::create_dirs(store, STAGING_DIR, 0o700)?;
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
    }
    Ok(report)
}
