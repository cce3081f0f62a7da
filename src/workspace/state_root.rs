//! Tool state roots: canonical `.tools/esys/a2c/`, legacy `.a2c/`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::adoption::{ADOPTION_FILE, AdoptionRecord, ReadError};

/// The canonical tool state root, relative to a repository.
pub const CANONICAL_ROOT: &str = ".tools/esys/a2c";
/// The legacy tool state root, read only when the canonical one is absent.
pub const LEGACY_ROOT: &str = ".a2c";
/// The machine-local store directory, relative to W (superbuild) or R (single repo).
pub const STORE_DIR: &str = ".tools_local/esys/a2c";
/// The machine-local directory that holds the store: never committed.
pub const LOCAL_DIR: &str = ".tools_local";

/// The owner (W or R) of the store directory `store` (`<owner>/.tools_local/esys/a2c`).
pub fn owner_of(store: &Path) -> &Path {
    store
        .ancestors()
        .nth(Path::new(STORE_DIR).components().count())
        .unwrap_or(store)
}

/// Which tool state root a repository uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    Canonical,
    Legacy,
}

/// The tool state root a repository reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolStateRoot {
    pub repo: PathBuf,
    pub layout: Layout,
    /// The directory read: `R/.tools/esys/a2c` or `R/.a2c`.
    pub dir: PathBuf,
    /// `true` when both roots exist: a migration is unfinished; the canonical one is read.
    pub both_present: bool,
}

impl ToolStateRoot {
    /// The tool state root of `repo`, or `None` when it has neither. Every component of both
    /// roots is checked with `lstat`: a root (or `.tools`, `.tools/esys`) that is a symbolic
    /// link is refused, never followed.
    pub fn detect(repo: &Path) -> std::io::Result<Option<Self>> {
        let canonical = repo.join(CANONICAL_ROOT);
        let legacy = repo.join(LEGACY_ROOT);
        let has_c = crate::util::contain::check(repo, CANONICAL_ROOT)? && canonical.is_dir();
        let has_l = crate::util::contain::check(repo, LEGACY_ROOT)? && legacy.is_dir();
        let (layout, dir) = match (has_c, has_l) {
            (true, _) => (Layout::Canonical, canonical),
            (false, true) => (Layout::Legacy, legacy),
            (false, false) => return Ok(None),
        };
        Ok(Some(Self {
            repo: repo.to_path_buf(),
            layout,
            dir,
            both_present: has_c && has_l,
        }))
    }

    /// The root a writer must use for `repo`: always the canonical one.
    pub fn canonical_dir(repo: &Path) -> PathBuf {
        repo.join(CANONICAL_ROOT)
    }

    /// Path of the adoption record in this root.
    pub fn adoption_path(&self) -> PathBuf {
        self.dir.join(ADOPTION_FILE)
    }

    /// `true` when this root holds an adoption record (a link there counts, so that reading it
    /// refuses it rather than skipping it).
    pub fn has_adoption(&self) -> bool {
        std::fs::symlink_metadata(self.adoption_path()).is_ok()
    }

    /// Reads the adoption record (the write contract) of this root.
    pub fn read_adoption(&self) -> Result<AdoptionRecord, ReadError> {
        AdoptionRecord::read(&self.adoption_path())
    }

    /// The warning every command that reads a both-roots repository must show.
    pub fn unfinished_migration_warning(&self) -> Option<String> {
        self.both_present.then(|| {
            format!(
                "`{}` has both `{CANONICAL_ROOT}/` and `{LEGACY_ROOT}/`: a migration is unfinished; reading `{CANONICAL_ROOT}/` (finish it with `a2c migrate version`)",
                self.repo.display()
            )
        })
    }
}
