//! Where everything of a store lives: the one place that joins store paths.
//!
//! ```text
//! <owner>/.tools_local/                  machine-local, with a `.gitignore` of `*`
//! <owner>/.tools_local/esys/a2c/         the store root
//! <store>/<V>/                           an installed tree (read-only files), published by one rename
//! <store>/<V>/.a2c-receipt.json          its install receipt, written last
//! <store>/.staging/                      work directories of a running install (cleaned under the lock)
//! <store>/.lock                          the store lock (flock), holding the holder's pid
//! <store>/.workspace-snapshot            W's members and the identities that vouch for them
//! ```

use crate::util::paths::JoinRel as _;
use std::path::{Path, PathBuf};

use crate::lock::LockEntry;
use crate::util::version::MethodVersion;

/// The store directory, relative to its owner: W (superbuild) or R (single repository).
pub const STORE_DIR: &str = ".tools_local/esys/a2c";
/// The machine-local directory that holds the store: never committed.
pub const LOCAL_DIR: &str = ".tools_local";
/// The staging directory inside a store.
pub const STAGING_DIR: &str = ".staging";
/// The lock file inside a store.
pub const STORE_LOCK: &str = ".lock";
/// The workspace snapshot inside a store (`workspace::snapshot`).
pub const SNAPSHOT_FILE: &str = ".workspace-snapshot";

/// The owner (W or R) of the store directory `store` (`<owner>/.tools_local/esys/a2c`).
pub fn owner_of(store: &Path) -> &Path {
    store
        .ancestors()
        .nth(Path::new(STORE_DIR).components().count())
        .unwrap_or(store)
}

/// Creates `<owner>/.tools_local/esys/a2c` without following links, and returns it. A new
/// `.tools_local/` gets a `.gitignore` of `*`, so that git never shows it (as uv does for
/// `.venv`): everything a2c keeps there is machine-local.
pub fn create_local(owner: &Path) -> std::io::Result<PathBuf> {
    let fresh = !crate::util::contain::check(owner, LOCAL_DIR)?;
    let dir = crate::util::contain::create_dirs(owner, STORE_DIR, 0o755)?;
    if fresh {
        let path = owner.join(LOCAL_DIR).join(".gitignore");
        match crate::util::contain::write_new(&path, b"# written by a2c: this directory is machine-local\n*\n", 0o644) {
            // A concurrent a2c created `.tools_local/` and wrote it first.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            other => other?,
        }
    }
    Ok(dir)
}

/// A store: its root and its layout. Creating one touches nothing on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// The store of `owner` (W or R): `<owner>/.tools_local/esys/a2c`.
    pub fn of(owner: &Path) -> Self {
        Self {
            root: owner.join_rel(STORE_DIR),
        }
    }

    /// The store rooted at `root` (`<owner>/.tools_local/esys/a2c`).
    pub fn at(root: PathBuf) -> Self {
        Self { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// W or R.
    pub fn owner(&self) -> &Path {
        owner_of(&self.root)
    }

    /// `<store>/<V>`.
    pub fn version_dir(&self, version: &MethodVersion) -> PathBuf {
        self.root.join(version.to_string())
    }

    /// `<store>/.staging`.
    pub fn staging(&self) -> PathBuf {
        self.root.join(STAGING_DIR)
    }

    /// `<store>/.lock`.
    pub fn lock_file(&self) -> PathBuf {
        self.root.join(STORE_LOCK)
    }

    /// `true` when `<store>/<V>/` is a real directory holding a receipt that matches `entry`
    /// (fast: reads one small file, hashes nothing). A link is never installed.
    pub fn is_installed(&self, entry: &LockEntry) -> bool {
        let dir = self.version_dir(&entry.version);
        crate::util::contain::is_real_dir(&dir)
            && super::Receipt::read(&dir).is_some_and(|r| {
                r.version == entry.version
                    && r.sha256 == entry.sha256
                    && entry.tree.as_ref().is_none_or(|t| *t == r.tree)
            })
    }

    /// `true` when `<store>/.staging/` holds anything (a killed run's leftovers).
    pub fn staging_has_leftovers(&self) -> bool {
        fs_err::read_dir(self.staging()).is_ok_and(|mut d| d.next().is_some())
    }

    /// `<store>/<V>/` directories whose name is a version, sorted. A link is never listed (its
    /// file type is not followed), so nothing outside the store is ever removed through one.
    pub fn installed_versions(&self) -> Vec<(MethodVersion, PathBuf)> {
        let mut out: Vec<(MethodVersion, PathBuf)> = self
            .entries_named_like_versions()
            .into_iter()
            .filter(|(_, p, t)| {
                let _ = p;
                t.is_dir()
            })
            .map(|(v, p, _)| (v, p))
            .collect();
        out.sort();
        out
    }

    /// Entries of the store named like a version that are symbolic links (never installed).
    pub fn linked_versions(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .entries_named_like_versions()
            .into_iter()
            .filter(|(_, _, t)| t.is_symlink())
            .map(|(_, p, _)| p)
            .collect();
        out.sort();
        out
    }

    fn entries_named_like_versions(&self) -> Vec<(MethodVersion, PathBuf, std::fs::FileType)> {
        fs_err::read_dir(&self.root)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        if name.starts_with('.') {
                            return None;
                        }
                        let version = name.parse::<MethodVersion>().ok()?;
                        Some((version, e.path(), e.file_type().ok()?))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}
