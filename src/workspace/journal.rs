//! The journal of a migration in progress, as discovery and `doctor` read it (`migrate` writes
//! it: its write side is an `impl Journal` there).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::util::contain::{At, Kind};
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
            Ok(Some(Kind::Dir)) => {
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
}
