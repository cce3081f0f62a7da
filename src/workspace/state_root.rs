//! Tool state roots: canonical `.tools/esys/a2c/`, legacy `.a2c/`.

use crate::util::paths::JoinRel as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::adoption::{ADOPTION_FILE, AdoptionRecord, ReadError};
use crate::util::contain::At;

pub use crate::method::{CANONICAL_ROOT, LEGACY_ROOT};
pub use crate::store::layout::{LOCAL_DIR, STORE_DIR, create_local, owner_of};

/// Which tool state root a repository uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    Canonical,
    Legacy,
}

/// Files a2c itself keeps in `.tools/esys/a2c/` beside any layout: the workspace marker and the
/// lock. They never make that directory a repository's tool state root on their own.
pub const A2C_OWNED: &[&str] = &["workspace.yaml", "a2c.lock"];

/// The tool state root a repository reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolStateRoot {
    pub repo: PathBuf,
    pub layout: Layout,
    /// The directory read: `R/.tools/esys/a2c` or `R/.a2c`.
    pub dir: PathBuf,
    /// `true` when both roots hold tool state: a migration is unfinished. The root holding an
    /// adoption record is read (the canonical one when both do).
    pub both_present: bool,
    /// The other root's adoption record path, when both roots hold one.
    pub other_record: Option<PathBuf>,
    /// The root read holds an adoption record (a link there counts, so that reading it refuses
    /// it), as detected.
    record: bool,
}

/// What one root holds, checked without following links.
struct RootState {
    dir: bool,
    record: bool,
    /// Tool state files other than a2c's own (the marker and the lock).
    state_files: bool,
}

fn root_state(repo: At<'_>, root: &str) -> std::io::Result<RootState> {
    if !repo.check_dir(root)? {
        return Ok(RootState {
            dir: false,
            record: false,
            state_files: false,
        });
    }
    Ok(RootState {
        dir: true,
        // A link there counts, so that reading it refuses it rather than skipping it.
        record: repo
            .kind(Path::new(root).join(ADOPTION_FILE))
            .is_ok_and(|k| k.is_some()),
        // Listed only when the other root exists too (see `detect`).
        state_files: false,
    })
}

/// `true` when the root `root` of the repository `repo` holds tool state files other than
/// a2c's own (the marker and the lock); listed through the repository's handle when it has one.
fn holds_state_files(repo: At<'_>, root: &str) -> std::io::Result<bool> {
    Ok(repo
        .names(root)?
        .iter()
        .any(|name| !A2C_OWNED.iter().any(|n| name == *n)))
}

impl ToolStateRoot {
    /// The tool state root of `repo`, or `None` when it has neither. The root holding the
    /// adoption record decides (docs/concepts.md, "Tool state roots": the legacy record is read whenever the canonical
    /// one is absent), not which folder exists: a `.tools/esys/a2c/` holding only the marker,
    /// the lock or `config.yaml` does not hide a legacy `.a2c/adoption.yaml`. Every component of
    /// both roots is checked with `lstat`: a root (or `.tools`, `.tools/esys`) that is a
    /// symbolic link is refused, never followed.
    pub fn detect(repo: &Path) -> std::io::Result<Option<Self>> {
        Self::detect_at(At::Path(repo))
    }

    /// [`ToolStateRoot::detect`] of the repository `at` names (through its handle, when it is
    /// one: every check is then relative to it).
    pub fn detect_at(at: At<'_>) -> std::io::Result<Option<Self>> {
        let repo = at.path();
        let mut c = root_state(at, CANONICAL_ROOT)?;
        let mut l = root_state(at, LEGACY_ROOT)?;
        // Whether both roots hold state matters only when both exist: only then are they listed.
        if c.dir && l.dir {
            c.state_files = holds_state_files(at, CANONICAL_ROOT)?;
            l.state_files = holds_state_files(at, LEGACY_ROOT)?;
        }
        let layout = if c.record {
            Layout::Canonical
        } else if l.record {
            Layout::Legacy
        } else if c.dir {
            Layout::Canonical
        } else if l.dir {
            Layout::Legacy
        } else {
            return Ok(None);
        };
        let dir = match layout {
            Layout::Canonical => repo.join_rel(CANONICAL_ROOT),
            Layout::Legacy => repo.join(LEGACY_ROOT),
        };
        let other_record = (c.record && l.record).then(|| repo.join(LEGACY_ROOT).join(ADOPTION_FILE));
        Ok(Some(Self {
            repo: repo.to_path_buf(),
            layout,
            dir,
            both_present: (c.record || c.state_files) && (l.record || l.state_files),
            other_record,
            record: c.record || l.record,
        }))
    }

    /// The root a writer must use for `repo`: always the canonical one.
    pub fn canonical_dir(repo: &Path) -> PathBuf {
        crate::util::paths::join_exact(repo, CANONICAL_ROOT)
    }

    /// What [`ToolStateRoot::detect`] finds in `repo` whose only root is the canonical one,
    /// holding an adoption record (a workspace snapshot vouches for it).
    pub fn canonical_with_record(repo: &Path) -> Self {
        Self {
            repo: repo.to_path_buf(),
            layout: Layout::Canonical,
            dir: Self::canonical_dir(repo),
            both_present: false,
            other_record: None,
            record: true,
        }
    }

    /// Path of the adoption record in this root.
    pub fn adoption_path(&self) -> PathBuf {
        self.dir.join(ADOPTION_FILE)
    }

    /// `true` when this root holds an adoption record (a link there counts, so that reading it
    /// refuses it rather than skipping it).
    pub fn has_adoption(&self) -> bool {
        self.record
    }

    /// Reads the adoption record (the write contract) of this root.
    pub fn read_adoption(&self) -> Result<AdoptionRecord, ReadError> {
        AdoptionRecord::read(&self.adoption_path())
    }

    /// [`ToolStateRoot::read_adoption`] relative to `at`, a handle on the repository (or its
    /// path).
    pub fn read_adoption_at(&self, at: At<'_>) -> Result<AdoptionRecord, ReadError> {
        let root = match self.layout {
            Layout::Canonical => CANONICAL_ROOT,
            Layout::Legacy => LEGACY_ROOT,
        };
        AdoptionRecord::read_at(at, Path::new(root).join(ADOPTION_FILE))
    }

    /// The other root's adoption record, when both roots hold one, read relative to `at` as
    /// [`ToolStateRoot::read_adoption_at`] reads this root's.
    pub fn read_other_adoption_at(&self, at: At<'_>) -> Option<Result<AdoptionRecord, ReadError>> {
        let other = match self.layout {
            Layout::Canonical => LEGACY_ROOT,
            Layout::Legacy => CANONICAL_ROOT,
        };
        self.other_record
            .as_ref()
            .map(|_| AdoptionRecord::read_at(at, Path::new(other).join(ADOPTION_FILE)))
    }

    /// The warning every command that reads a both-roots repository must show.
    pub fn unfinished_migration_warning(&self) -> Option<String> {
        self.both_present.then(|| {
            format!(
                "`{}` has tool state in both `{CANONICAL_ROOT}/` and `{LEGACY_ROOT}/`: a migration is unfinished; reading `{}/` (finish it with `a2c migrate version`; `a2c doctor` names the exact command)",
                self.repo.display(),
                match self.layout {
                    Layout::Canonical => CANONICAL_ROOT,
                    Layout::Legacy => LEGACY_ROOT,
                }
            )
        })
    }
}
