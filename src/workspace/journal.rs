//! The journal of a migration in progress, in the repository's git directory: written by
//! `migrate` step by step, read by discovery and `doctor`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::util::contain::{At, FileKind};
use crate::util::version::MethodVersion;

/// The journal of a migration in progress, in `.git/` (never committed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Journal {
    pub from: MethodVersion,
    pub to: MethodVersion,
    /// The step the migration was at, for `doctor` to name (absent in journals of a2c before
    /// 0.3, and until the first step starts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
}

pub const JOURNAL_FILE: &str = "a2c-migrate.json";

/// The steps a journal names, in order.
pub const STEP_ASSETS: &str = "installing the target version's assets";
pub const STEP_MOVES: &str = "moving the tool state files";
pub const STEP_RECORD: &str = "writing the adoption record";
pub const STEP_COMMIT: &str = "staging and committing";

/// Where the journal of `repo` is (`rev-parse --git-path`: a worktree's or submodule's `.git`
/// may be a file naming its git directory elsewhere).
fn path_of(repo: &Path) -> std::io::Result<std::path::PathBuf> {
    crate::util::git::git_path(repo, JOURNAL_FILE).ok_or_else(|| {
        std::io::Error::other(format!(
            "git cannot name the git directory of `{}` to keep the migration's journal in",
            repo.display()
        ))
    })
}

impl Journal {
    /// The journal of an interrupted migration of `repo`, cheaply: read straight from
    /// `.git/` when that is a directory (no git process; doctor asks for every member), else
    /// through git (a worktree or submodule, whose `.git` is a file).
    pub fn pending(repo: &Path) -> Option<Journal> {
        Self::pending_at(At::Path(repo))
    }

    /// [`Journal::pending`] of the repository `at` names (through its handle, when it is one).
    pub fn pending_at(at: At<'_>) -> Option<Journal> {
        match at.kind(".git") {
            Ok(Some(FileKind::Dir)) => {
                serde_json::from_str(&at.read_to_string(Path::new(".git").join(JOURNAL_FILE)).ok()?).ok()
            }
            Ok(Some(_)) => Self::read(at.path()),
            _ => None,
        }
    }

    pub fn read(repo: &Path) -> Option<Journal> {
        let path = crate::util::git::git_path(repo, JOURNAL_FILE)?;
        serde_json::from_str(&fs_err::read_to_string(path).ok()?).ok()
    }

    /// Writes the journal of `repo`, atomically.
    pub fn write(&self, repo: &Path) -> std::io::Result<()> {
        let path = path_of(repo)?;
        crate::util::fs::write_atomic(&path, serde_json::to_string(self).expect("serializes").as_bytes())
    }

    /// Records that the migration of `repo` reached `step` (one of the `STEP_*` names).
    pub fn step(repo: &Path, step: &str) -> std::io::Result<()> {
        match Self::read(repo) {
            Some(mut j) => {
                j.step = Some(step.to_string());
                j.write(repo)
            }
            None => Ok(()),
        }
    }

    /// Removes the journal of `repo` (a finished or rolled-back migration).
    pub fn remove(repo: &Path) {
        if let Ok(path) = path_of(repo) {
            let _ = fs_err::remove_file(path);
        }
    }
}
