//! The store, locked: [`LockedStore`] is what [`Store::lock`] returns, and the only value through
//! which anything is written into a store — a staging directory, a published version, a removed
//! one. Holding the store's cross-process lock is then a matter of types, not of discipline
//! (as cargo's `Filesystem`/`FileLock`).

use std::path::{Path, PathBuf};

use super::flock::StoreLock;
use super::{STAGING_DIR, Store, StoreError};
use crate::util::version::MethodVersion;

/// A store whose lock this process holds (released on drop).
#[derive(Debug)]
pub struct LockedStore<'a> {
    store: &'a Store,
    _lock: StoreLock,
    /// Sync the filesystem before publishing (the settings' `fsync`).
    fsync: bool,
}

impl Store {
    /// Takes the store's lock (saying so once through `waiting` when another process holds
    /// it, giving up after the settings' timeout), and with it the right to write into the
    /// store. The store must exist.
    pub fn lock(&self, settings: &super::Settings, waiting: &dyn Fn(&Path)) -> Result<LockedStore<'_>, StoreError> {
        Ok(LockedStore {
            store: self,
            _lock: StoreLock::acquire(&self.lock_file(), settings, waiting)?,
            fsync: settings.fsync,
        })
    }
}

impl Store {
    /// [`Store::lock`] when nobody holds the lock now; `None` when another process does.
    pub fn try_lock(&self, settings: &super::Settings) -> Result<Option<LockedStore<'_>>, StoreError> {
        Ok(StoreLock::try_acquire(&self.lock_file())?.map(|lock| LockedStore {
            store: self,
            _lock: lock,
            fsync: settings.fsync,
        }))
    }
}

impl LockedStore<'_> {
    pub fn store(&self) -> &Store {
        self.store
    }

    /// Replaces the workspace snapshot (`<store>/.workspace-snapshot`) with `text`, atomically.
    pub fn write_snapshot(&self, text: &str) -> std::io::Result<()> {
        crate::util::fs::write_atomic(&self.store.root().join(super::layout::SNAPSHOT_FILE), text.as_bytes())
    }

    /// Removes the workspace snapshot, if any: what it vouched for no longer holds.
    pub fn remove_snapshot(&self) -> std::io::Result<()> {
        match std::fs::remove_file(self.store.root().join(super::layout::SNAPSHOT_FILE)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// A fresh work directory for `version` in `<store>/.staging/` (0700: nobody else may enter
    /// a directory being extracted), removed on drop unless published.
    pub fn staging_dir(&self, version: &MethodVersion) -> std::io::Result<StagingDir> {
        let staging = crate::util::contain::create_dirs(self.store.root(), STAGING_DIR, 0o700)?;
        let dir = tempfile::Builder::new()
            .prefix(&format!("{version}-"))
            .tempdir_in(&staging)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{e} in `{}`", staging.display())))?
            .keep();
        Ok(StagingDir(Some(dir)))
    }

    /// Renames the complete tree `tree` (inside `staging`) into place as `version`; returns
    /// where. A stale version directory (no or another receipt) is first moved into staging,
    /// and removed with it.
    ///
    /// Durability: unless `A2C_FSYNC=0`, the store's filesystem is synced first, so that a
    /// power cut can never leave a published receipt over unwritten file data — the rename is
    /// then the only step that may be lost, and a lost rename is just a version not installed
    /// yet (docs/performance-history.md measures the cost).
    pub fn publish(&self, tree: &Path, version: &MethodVersion, staging: &StagingDir) -> std::io::Result<PathBuf> {
        let target = self.store.version_dir(version);
        let staging = staging.path();
        if self.fsync {
            crate::util::platform::sync_filesystem(staging).map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("failed to sync the store's filesystem at `{}`: {e}", staging.display()),
                )
            })?;
        }
        if fs_err::symlink_metadata(&target).is_ok() {
            fs_err::rename(&target, staging.join("replaced"))?;
        }
        fs_err::rename(tree, &target)?;
        Ok(target)
    }

    /// Removes everything in `<store>/.staging/`: only a killed run leaves anything there.
    pub fn clean_staging(&self) -> Result<Vec<PathBuf>, StoreError> {
        let staging = self.store.staging();
        let mut cleaned = Vec::new();
        let Ok(entries) = fs_err::read_dir(&staging) else {
            return Ok(cleaned);
        };
        for entry in entries {
            let path = entry?.path();
            crate::util::fs::remove_tree(&path)?;
            cleaned.push(path);
        }
        Ok(cleaned)
    }

    /// Removes the installed `version` at `dir`: out of sight first, in one rename into
    /// staging; then deleted.
    pub fn remove_version(&self, version: &MethodVersion, dir: &Path) -> std::io::Result<()> {
        let staging = crate::util::contain::create_dirs(self.store.root(), STAGING_DIR, 0o700)?;
        let doomed = staging.join(format!("gc-{version}-{}", std::process::id()));
        fs_err::rename(dir, &doomed)?;
        crate::util::fs::remove_tree(&doomed)
    }
}

/// A work directory in staging, removed on drop (what was published out of it is gone
/// already). Only a [`LockedStore`] makes one.
#[derive(Debug)]
pub struct StagingDir(Option<PathBuf>);

impl StagingDir {
    pub fn path(&self) -> &Path {
        self.0.as_deref().expect("not yet dropped")
    }
}

impl Drop for StagingDir {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = crate::util::fs::remove_tree(&p);
        }
    }
}
