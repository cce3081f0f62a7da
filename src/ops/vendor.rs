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
    let options = super::install_options(
        session,
        ctx,
        session.offline(),
        None,
        jobs,
        std::sync::Arc::new(network(session, ctx, None)?),
    )?;
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
/// link, else a copy (a cached bundle is never modified in place, so sharing it is safe).
fn place(src: &Path, dst: &Path) -> std::io::Result<&'static str> {
    let parent = dst.parent().unwrap_or(Path::new("."));
    let tmp = parent.join(format!(".a2c-vendor-{}.tmp", std::process::id()));
    let _ = fs_err::remove_file(&tmp);
    let how = if reflink_copy::reflink(src, &tmp).is_ok() {
        "reflink"
    } else if std::fs::hard_link(src, &tmp).is_ok() {
        "hardlink"
    } else {
        fs_err::copy(src, &tmp)?;
        "copy"
    };
    fs_err::rename(&tmp, dst)?;
    Ok(how)
}
