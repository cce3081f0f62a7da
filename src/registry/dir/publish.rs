//! Publishing into a file registry: `a2c pack`.

use crate::registry::signing::SecretKey;
use crate::util::paths::JoinRel as _;
use std::path::{Path, PathBuf};

use crate::archive::{self, PackedBundle};
pub use crate::registry::handle::PublishError;
use crate::registry::location::INDEX_PATH;
use crate::registry::{Index, IndexEntry, RegistryError};
use crate::util::version::MethodVersion;

/// What publishing into the directory wrote.
#[derive(Debug, Clone)]
pub struct Written {
    pub entry: IndexEntry,
    pub bundle_path: PathBuf,
    pub index_path: PathBuf,
    pub files: usize,
    /// `false` when the same bundle was already published (nothing changed).
    pub changed: bool,
}

/// The file registry's publish lock, `index/esys/.a2c-publish.lock` (flock), held while the
/// index is read, changed and written; released on drop.
pub struct PublishLock {
    _file: std::fs::File,
}

/// The paths a2c writes in a file registry, relative to its root.
const INDEX_DIR: &str = "index/esys";
const BUNDLES_DIR: &str = "bundles";
const LOCK_NAME: &str = ".a2c-publish.lock";

/// Checks, before anything is created, that no path a2c writes in the file registry
/// `registry` is a link or goes through one (`index/esys/a2c.json`, its signature and lock,
/// `bundles/`): a registry directory is held to the store's no-follow rules. The root itself
/// is the user's choice.
fn check_layout(registry: &Path) -> Result<(), PublishError> {
    fs_err::create_dir_all(registry)?;
    let signature = format!("{INDEX_PATH}{}", crate::registry::signing::SIGNATURE_SUFFIX);
    for rel in [INDEX_PATH, &signature, &format!("{INDEX_DIR}/{LOCK_NAME}"), BUNDLES_DIR] {
        crate::util::contain::check(registry, rel)?;
    }
    Ok(())
}

impl PublishLock {
    pub fn acquire(registry: &Path) -> Result<Self, PublishError> {
        check_layout(registry)?;
        let dir = crate::util::contain::create_dirs(registry, INDEX_DIR, 0o755)?;
        let path = dir.join(LOCK_NAME);
        let file = crate::util::contain::open_write(&path, crate::util::contain::Open::Existing, 0o644)?;
        file.lock()
            .map_err(|e| std::io::Error::new(e.kind(), format!("failed to lock `{}`: {e}", path.display())))?;
        Ok(Self { _file: file })
    }
}

/// Writes the index atomically, its `serial` one higher than before.
fn write_index(path: &Path, index: &mut Index) -> Result<(), PublishError> {
    index.serial = Some(index.serial.unwrap_or(0) + 1);
    crate::util::fs::write_atomic(path, index.to_json().as_bytes())?;
    Ok(())
}

/// The index at `path`, or a new one when there is none yet.
fn read_index_file(path: &Path) -> Result<Index, PublishError> {
    // Never through a link (`check_layout` refused one; this closes the race).
    match crate::util::contain::read_config(path)? {
        Some(text) => Ok(Index::parse(&text, &path.display().to_string())?),
        None => Ok(Index::new()),
    }
}

/// Marks `version` yanked (or, with `undo`, not yanked) in the file registry `registry`, under
/// its publish lock. `Ok(false)` when it already was.
pub fn yank(registry: &Path, version: &MethodVersion, undo: bool) -> Result<bool, PublishError> {
    let _lock = PublishLock::acquire(registry)?;
    let index_path = registry.join_rel(INDEX_PATH);
    let mut index = read_index_file(&index_path)?;
    let entry = crate::registry::entry_to_yank(&mut index, version, index_path.display().to_string())?;
    if entry.yanked != undo {
        return Ok(false);
    }
    entry.yanked = !undo;
    write_index(&index_path, &mut index)?;
    Ok(true)
}

/// Signs the index of the file registry `registry` with the secret key `key`, under its
/// publish lock: writes `index/esys/a2c.json.minisig` atomically. Returns its path.
/// With `Expiry::InDays`, the index first gets an `expires` that many days from now (and a
/// new serial); with `Never`, loses it. Also returns, with `Keep`, an `expires` already past
/// that the index keeps (for a warning).
pub fn sign_index(
    registry: &Path,
    key: &SecretKey,
    expiry: crate::registry::handle::Expiry,
) -> Result<(PathBuf, Option<String>), PublishError> {
    use crate::registry::handle::Expiry;
    let _lock = PublishLock::acquire(registry)?;
    let index_path = registry.join_rel(INDEX_PATH);
    let mut index = read_index_file(&index_path)?;
    let past = match (expiry, &index.expires) {
        (Expiry::Keep, Some(at)) if *at < crate::util::time::now_rfc3339() => Some(at.clone()),
        _ => None,
    };
    let expires = match expiry {
        Expiry::Keep => index.expires.clone(),
        Expiry::InDays(days) => Some(crate::util::time::rfc3339_after(days as i64 * 86_400)),
        Expiry::Never => None,
    };
    if expires != index.expires {
        index.expires = expires;
        write_index(&index_path, &mut index)?;
    }
    Ok((write_signature(registry, key)?, past))
}

fn write_signature(registry: &Path, key: &SecretKey) -> Result<PathBuf, PublishError> {
    let index_path = registry.join_rel(INDEX_PATH);
    let bytes = crate::util::contain::read_config(&index_path)?
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("`{}` does not exist", index_path.display()),
            )
        })?
        .into_bytes();
    let text = crate::registry::signing::sign(key, &bytes, "a2c index esys/a2c");
    let path = registry.join(format!("{INDEX_PATH}{}", crate::registry::signing::SIGNATURE_SUFFIX));
    crate::util::fs::write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// `true` when the registry's index carries a signature file (which a change without a key
/// leaves stale).
pub fn is_signed(registry: &Path) -> bool {
    registry
        .join(format!("{INDEX_PATH}{}", crate::registry::signing::SIGNATURE_SUFFIX))
        .is_file()
}

pub use crate::lock::bundle_name;

pub use crate::registry::handle::tree_of_version;

/// Packs `tree` as `version` into the file registry `registry` and adds it to the index.
/// Refuses a tree whose manifest is not `version`, and an already published version whose
/// content differs.
pub fn publish(
    tree: &Path,
    version: &MethodVersion,
    (format, deflate, limits): (archive::Format, archive::Deflate, &archive::Limits),
    registry: &Path,
    sign: Option<&SecretKey>,
) -> Result<Written, PublishError> {
    tree_of_version(tree, version)?;
    let index_path = registry.join_rel(INDEX_PATH);
    check_layout(registry)?;
    let bundles = crate::util::contain::create_dirs(registry, BUNDLES_DIR, 0o755)?;
    let name = bundle_name(version, format);
    // Pack first (the slow part), outside the lock; only the index update is serialized.
    let tmp = tempfile::Builder::new().prefix(".a2c-pack-").tempfile_in(&bundles)?;
    let packed: PackedBundle = archive::pack_tree(
        tree,
        &archive::bundle_top(version, format),
        format,
        tmp.path(),
        limits,
        deflate,
    )?;
    // Under the registry's publish lock: re-read the index, then write it atomically, so that
    // concurrent `a2c pack` runs never lose each other's versions.
    let _lock = PublishLock::acquire(registry)?;
    let mut index = read_index_file(&index_path)?;
    let entry = IndexEntry {
        version: version.clone(),
        url: format!("../../bundles/{name}"),
        sha256: packed.sha256,
        size: packed.size,
        format,
        tree: Some(packed.tree.clone()),
        yanked: false,
    };
    let bundle_path = bundles.join(&name);
    if let Some(existing) = index.get(version) {
        if existing.sha256 != packed.sha256 {
            return Err(RegistryError::AlreadyPublished {
                version: version.clone(),
                index: index_path.display().to_string(),
                existing: existing.sha256.to_hex(),
                new: packed.sha256.to_hex(),
                same_tree: existing.tree.as_deref() == Some(packed.tree.as_str()),
            }
            .into());
        }
        return Ok(Written {
            entry: existing.clone(),
            bundle_path,
            index_path,
            files: packed.files,
            changed: false,
        });
    }
    // Registries are served as static files: bundles get the default mode (0644 under umask
    // 022), like the index, so that a web server running as another user can read them.
    crate::util::platform::set_mode(tmp.path(), crate::util::fs::default_mode())?;
    tmp.persist(&bundle_path).map_err(|e| e.error)?;
    index.versions.push(entry.clone());
    write_index(&index_path, &mut index)?;
    if let Some(key) = sign {
        write_signature(registry, key)?;
    }
    Ok(Written {
        entry,
        bundle_path,
        index_path,
        files: packed.files,
        changed: true,
    })
}
