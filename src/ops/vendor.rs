//! `a2c vendor DIR`: every locked bundle, verified, copied into DIR with a manifest, for a
//! later `a2c install --offline --from DIR` on a machine with no network.

use crate::util::version::MethodVersion;
use std::path::{Path, PathBuf};

use super::{OpsError, lock_path, network};
use crate::lock::Lockfile;
use crate::store::Reporter;
use crate::workspace::Context;

pub use crate::lock::vendored::{VENDOR_MANIFEST, VendorManifest, VendoredBundle};

/// What `a2c vendor` did; serialized as its `--json` document.
#[derive(Debug, serde::Serialize)]
pub struct VendorOutcome {
    pub dir: PathBuf,
    /// The vendor manifest written in `dir`.
    pub manifest: PathBuf,
    #[serde(skip)]
    pub lock_path: PathBuf,
    pub bundles: Vec<VendoredBundle>,
    /// How each file was placed: `reflink`, `hardlink` or `copy`.
    #[serde(skip)]
    pub placed: Vec<&'static str>,
}

pub fn vendor(
    session: &super::Session,
    ctx: &Context,
    dir: &Path,
    jobs: usize,
    reporter: &dyn Reporter,
) -> Result<VendorOutcome, OpsError> {
    let lock_path = lock_path(ctx)?;
    let lock = Lockfile::read(&lock_path)?.ok_or_else(|| {
        OpsError::Config(format!(
            "no lockfile at `{}`: run `a2c lock` first",
            lock_path.display()
        ))
    })?;
    // The same limits as any install (they used to be the defaults whatever the environment).
    let client = std::sync::Arc::new(network(session, ctx, None)?);
    let mut options = super::install_context(session, ctx, None, jobs, client.clone())?;
    // Where the configured registries and mirrors serve each bundle not in the cache: tried
    // before the lock's source, as an install tries them.
    let uncached = lock
        .methods
        .iter()
        .filter(|e| options.cache.get(&e.sha256).is_none())
        .collect();
    let found = super::alternatives(session, ctx, None, uncached, &options, &client);
    options.alternatives = found.places;
    options.passed_over = found.passed_over;
    fs_err::create_dir_all(dir)?;
    // `cache clean` and `cache prune` wait until the bundles are copied out.
    let _cache = options.cache.lock_shared(&|p| reporter.waiting_for_lock(p)).ok();
    // Two entries never share one file: the second would overwrite the first, and the
    // vendored directory would not install offline.
    let mut names: std::collections::BTreeMap<String, &MethodVersion> = std::collections::BTreeMap::new();
    for entry in &lock.methods {
        if let Some(first) = names.insert(entry.file_name(), &entry.version) {
            return Err(OpsError::Config(format!(
                "`{}`: versions {first} and {} would both be vendored as `{}` (their `source`s end in the same file name): nothing was vendored; the registry must serve each version under a file name of its own",
                lock_path.display(),
                entry.version,
                entry.file_name(),
            )));
        }
    }
    let mut bundles = Vec::new();
    let mut placed = Vec::new();
    for entry in &lock.methods {
        let cached = crate::store::source::fetch_to_cache(entry, &options, reporter)?;
        // The lock (a repository's file) names the source: see `LockEntry::file_name`.
        let file = entry.file_name();
        placed.push(place(&cached, &dir.join(&file))?);
        bundles.push(VendoredBundle {
            version: entry.version.clone(),
            file,
            sha256: entry.sha256,
            size: entry.size,
            format: entry.format,
            // Exactly as locked (a relative source stays relative to the lock): `lock --from`
            // gives the entry back as it was.
            source: entry.source.clone(),
            tree: entry.tree.clone(),
        });
    }
    VendorManifest::new(bundles.clone()).write(dir)?;
    Ok(VendorOutcome {
        dir: dir.to_path_buf(),
        manifest: dir.join(VENDOR_MANIFEST),
        lock_path,
        bundles,
        placed,
    })
}

/// Places `src` at `dst` atomically: a reflink when the filesystem offers one, else a hard
/// link, else a copy (a cached bundle is never modified in place, so sharing it is safe). The
/// file is made beside `dst` under a random name that must not exist (each way creates it
/// exclusively: reflink and `link` fail on anything there, the copy opens it
/// `O_EXCL | O_NOFOLLOW`), so a link someone planted in DIR is never written through, and it
/// is removed on every failure.
fn place(src: &Path, dst: &Path) -> std::io::Result<&'static str> {
    let parent = dst.parent().unwrap_or(Path::new("."));
    let tmp = Temporary(parent.join(format!(".a2c-vendor-{:016x}.tmp", fastrand::u64(..))));
    let how = if crate::util::platform::reflink(src, &tmp.0).is_ok() {
        "reflink"
    } else if std::fs::hard_link(src, &tmp.0).is_ok() {
        "hardlink"
    } else {
        copy_new(src, &tmp.0)?;
        "copy"
    };
    fs_err::rename(&tmp.0, dst)?;
    // `tmp` is dropped, and so removed, after the rename too: a rename onto another link of
    // the same file (DIR already holds this bundle, hard-linked from the cache) does nothing
    // and succeeds, leaving `tmp` behind; after any other rename there is nothing to remove.
    drop(tmp);
    Ok(how)
}

/// A file this run made, removed when dropped (on every failure, and once it is renamed).
struct Temporary(PathBuf);

impl Drop for Temporary {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Copies `src` into the new file `tmp`, created exclusively without following a link.
fn copy_new(src: &Path, tmp: &Path) -> std::io::Result<()> {
    let mut from = fs_err::File::open(src)?;
    let mut to = crate::util::contain::open_write(tmp, crate::util::contain::Open::New, 0o644)?;
    std::io::copy(&mut from, &mut to).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("failed to copy `{}` to `{}`: {e}", src.display(), tmp.display()),
        )
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy never writes through a link planted at its name (another user's, in a shared
    /// DIR): it is refused and what the link points to is unchanged.
    #[test]
    fn the_copy_never_writes_through_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let (src, victim, tmp) = (
            dir.path().join("bundle"),
            dir.path().join("victim"),
            dir.path().join("t.tmp"),
        );
        fs_err::write(&src, b"bundle").unwrap();
        fs_err::write(&victim, b"precious").unwrap();
        crate::util::platform::symlink(&victim, &tmp).unwrap();
        let e = copy_new(&src, &tmp).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
        assert_eq!(fs_err::read(&victim).unwrap(), b"precious");
    }

    /// A failed placement leaves no temporary file behind.
    #[test]
    fn a_failed_placement_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("bundle");
        fs_err::write(&src, b"bundle").unwrap();
        let out = dir.path().join("out");
        fs_err::create_dir_all(out.join("taken/inside")).unwrap();
        assert!(
            place(&src, &out.join("taken")).is_err(),
            "a non-empty directory cannot be replaced"
        );
        let names: Vec<_> = fs_err::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["taken"]);
    }
}
