//! The journal of a migration in progress, as discovery and `doctor` read it (`migrate` writes
//! it: its write side is an `impl Journal` there).

use std::path::Path;

use serde::{Deserialize, Serialize};

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
        let dot_git = repo.join(".git");
        match std::fs::symlink_metadata(&dot_git) {
            Ok(m) if m.is_dir() => serde_json::from_str(&fs_err::read_to_string(dot_git.join(JOURNAL_FILE)).ok()?).ok(),
            Ok(_) => Self::read(repo),
            Err(_) => None,
        }
    }

    pub fn read(repo: &Path) -> Option<Journal> {
        let path = crate::util::git::git_path(repo, JOURNAL_FILE)?;
        serde_json::from_str(&fs_err::read_to_string(path).ok()?).ok()
    }
}
