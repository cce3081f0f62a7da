//! The lock, the store and the shared tree cache (docs/doctor.md, "Store").

use super::*;

pub(super) fn lock_findings(
    ctx: &Context,
    pinned: &BTreeMap<MethodVersion, Vec<PathBuf>>,
    out: &mut Vec<Finding>,
) -> Option<Lockfile> {
    let path = ctx.lock_path().ok()?;
    let lock = match Lockfile::read(&path) {
        Ok(lock) => lock.unwrap_or_default(),
        Err(e) => {
            out.push(finding(
                Code::LockInvalid,
                None,
                None,
                e.to_string(),
                "fix it, or delete it and run `a2c lock`",
            ));
            return None;
        }
    };
    for (version, repos) in pinned {
        if lock.get(version).is_none() {
            let names: Vec<String> = repos.iter().map(|r| r.display().to_string()).collect();
            out.push(finding(
                Code::LockMissingVersion,
                repos.first().cloned(),
                Some(version.clone()),
                format!(
                    "{version} is pinned by {} but not in `{}`",
                    names.join(", "),
                    path.display()
                ),
                "run `a2c lock` and commit the lock (`a2c install --locked` fails until then)",
            ));
        }
    }
    for entry in &lock.methods {
        if !pinned.contains_key(&entry.version) {
            out.push(finding(
                Code::LockUnusedEntry,
                None,
                Some(entry.version.clone()),
                format!("`{}` locks {} but no member here pins it", path.display(), entry.version),
                "if members are missing on this machine (a clone without them: bring them first, e.g. `git submodule update --init --recursive`), the lock is right; otherwise run `a2c lock` to drop it",
            ));
        }
    }
    Some(lock)
}

pub(super) fn store_findings(
    store: &crate::store::Store,
    cache: Option<&crate::store::Cache>,
    pinned: &BTreeMap<MethodVersion, Vec<PathBuf>>,
    lock: Option<&Lockfile>,
    options: DoctorOptions,
    out: &mut Vec<Finding>,
) {
    let installed = store.installed_versions();
    for link in store.linked_versions() {
        out.push(finding(
            Code::UnsafeLink,
            None,
            None,
            format!(
                "`{}` is a symbolic link, not an installed version: a2c never serves or removes anything through it",
                link.display()
            ),
            format!("delete the link `{}` and run `a2c install`", link.display()),
        ));
    }
    let mut deep_targets = Vec::new();
    let mut placed = Vec::new();
    for (version, dir) in &installed {
        let receipt = Receipt::read(dir);
        match (&receipt, lock.and_then(|l| l.get(version))) {
            (None, _) => out.push(finding(
                Code::StoreReceiptMissing,
                None,
                Some(version.clone()),
                format!(
                    "`{}` has no install receipt: a2c did not install it, or it was altered",
                    dir.display()
                ),
                format!(
                    "run `a2c install --reinstall {version}` (it replaces `{}`)",
                    dir.display()
                ),
            )),
            (Some(r), Some(entry)) if r.sha256 != entry.sha256 => out.push(finding(
                Code::StoreReceiptLockMismatch,
                None,
                Some(version.clone()),
                format!(
                    "`{}` was installed from bundle {} but the lock pins {}",
                    dir.display(),
                    r.sha256,
                    entry.sha256
                ),
                format!(
                    "run `a2c install`: it replaces `{}` with the locked bundle",
                    dir.display()
                ),
            )),
            _ => {}
        }
        if !pinned.contains_key(version) {
            out.push(finding(
                Code::StoreOrphanVersion,
                None,
                Some(version.clone()),
                format!("`{}` is installed but no member pins {version}", dir.display()),
                "run `a2c gc` to remove it",
            ));
        }
        if let Some(r) = &receipt {
            placed.push((r.sha256, dir.clone()));
        }
        if options.deep
            && let Some(r) = receipt
        {
            deep_targets.push((
                version.clone(),
                dir.clone(),
                r,
                lock.and_then(|l| l.get(version)).and_then(|e| e.tree.clone()),
            ));
        }
    }
    if options.deep {
        crate::testhook::point(crate::testhook::DOCTOR_DEEP);
    }
    out.extend(crate::doctor::deep::check(&deep_targets, options.jobs));
    match options.deep {
        true => tree_cache(cache, out),
        false => tree_cache_times(cache, &placed, out),
    }
    let staging = store.staging();
    if let Ok(entries) = fs_err::read_dir(&staging) {
        let leftovers: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !leftovers.is_empty() {
            out.push(finding(
                Code::StoreStagingLeftover,
                None,
                None,
                format!(
                    "`{}` holds leftovers of an interrupted install: {}",
                    staging.display(),
                    leftovers.join(", ")
                ),
                "the next `a2c install` removes them; when no a2c is running you may also delete them",
            ));
        }
    }
    let lock_file = store.lock_file();
    if let Some(pid) = StoreLock::stale_holder(&lock_file)
        && !Path::new(&format!("/proc/{pid}")).exists()
    {
        out.push(finding(
            Code::StoreStaleLock,
            None,
            None,
            format!(
                "`{}` names process {pid}, which died while holding the store",
                lock_file.display()
            ),
            "nothing to undo: installs are atomic; the next `a2c install` cleans up (you may delete the file)",
        ));
    }
}

/// Without `--deep`: the cached trees this store's versions came from, each file's type, size,
/// mode and times against the record (no content read): an in-place edit through a hard link
/// moves the change time, which nothing puts back.
pub(super) fn tree_cache_times(
    cache: Option<&crate::store::Cache>,
    placed: &[(crate::util::digest::Sha256, PathBuf)],
    out: &mut Vec<Finding>,
) {
    let Some(cache) = cache else {
        return;
    };
    let trees = crate::store::trees::TreeCache::new(&cache.dir);
    let mut seen = std::collections::BTreeSet::new();
    for (sha, version_dir) in placed.iter().filter(|(s, _)| seen.insert(*s)) {
        let root = trees.path(sha);
        // Only a tree that shares its files with this store can be edited through it (copies
        // and clones cannot); `doctor --deep` re-hashes every cached tree.
        if !crate::store::trees::TreeCache::has_tree(&root)
            || !crate::store::trees::TreeCache::shares_files_with(&root, version_dir)
        {
            continue;
        }
        if let Err(why) = crate::store::trees::TreeCache::check_times(&root) {
            out.push(tampered_tree(&root, &why));
        }
    }
}

pub(super) fn tampered_tree(root: &Path, why: &str) -> Finding {
    finding(
        Code::CacheTreeModified,
        None,
        None,
        format!(
            "the cached tree `{}` no longer matches what was cached: {why}",
            root.display()
        ),
        format!(
            "remove `{}` (the next install that needs it extracts its bundle again); versions placed from it by hardlink share its files: check them with `a2c doctor --deep` in each superbuild",
            root.display()
        ),
    )
}

/// `--deep`: every tree of the shared tree cache re-hashed against its file list and record
/// (a file changed there would be placed into every store that links it).
pub(super) fn tree_cache(cache: Option<&crate::store::Cache>, out: &mut Vec<Finding>) {
    let Some(cache) = cache else {
        return;
    };
    let trees = crate::store::trees::TreeCache::new(&cache.dir);
    for (_, root) in trees.list() {
        if !crate::store::trees::TreeCache::has_tree(&root) {
            continue; // a record only: its files are a store's, which --deep checks there
        }
        if let Err(why) = crate::store::trees::TreeCache::verify(&root) {
            out.push(tampered_tree(&root, &why));
        }
    }
}

/// git cannot say whether `.tools_local/` in `repo` is tracked: nothing there is trusted.
/// The hint is the one `util::git::tracking` gave with the reason.
pub(super) fn tracking_unknown(repo: &std::path::Path, reason: &str, hint: String) -> super::Finding {
    finding(
        Code::TrackingUnknown,
        Some(repo.to_path_buf()),
        None,
        format!(
            "cannot tell whether git tracks `{}`: {reason}; a2c trusts no store or pointer there",
            repo.join(LOCAL_DIR).display()
        ),
        hint,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What git could not say becomes a failing finding naming the repository, git's reason
    /// and a command to run there.
    #[test]
    fn an_unknown_tracking_fails_and_says_why() {
        let repo = Path::new("/w/p/app");
        let f = tracking_unknown(
            repo,
            "git cannot read the index of `/w/p/app`: bad",
            crate::util::git::rebuild_index(repo),
        );
        assert_eq!(f.code, Code::TrackingUnknown);
        assert_eq!(f.severity, crate::doctor::Severity::Fail);
        assert!(
            f.message.contains("/w/p/app/.tools_local") && f.message.contains("bad"),
            "{}",
            f.message
        );
        assert!(
            f.hint
                .contains("rm -rf /w/p/app/.git/index && git -C /w/p/app read-tree HEAD"),
            "{}",
            f.hint
        );
        let t = tampered_tree(Path::new("/c/trees/ab"), "`x` has other content");
        assert_eq!(t.code, Code::CacheTreeModified);
        assert!(t.hint.contains("remove `/c/trees/ab`"), "{}", t.hint);
    }
}
