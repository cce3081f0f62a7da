//! The real `git`, run as a subprocess (no reimplementation of its formats).

use std::path::{Path, PathBuf};

use super::MigrateError;

pub fn git(repo: &Path, args: &[&str]) -> Result<String, MigrateError> {
    let out = crate::util::git::command(repo)
        .args(args)
        .output()
        .map_err(|e| MigrateError::Git {
            args: args.join(" "),
            reason: format!("cannot run git: {e}"),
        })?;
    if !out.status.success() {
        return Err(MigrateError::Git {
            args: args.join(" "),
            reason: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `true` when `repo` is the top of a git work tree.
pub fn is_work_tree(repo: &Path) -> bool {
    git(repo, &["rev-parse", "--is-inside-work-tree"]).is_ok_and(|o| o.trim() == "true")
}

/// The git index file of `repo`.
pub fn index_path(repo: &Path) -> Result<PathBuf, MigrateError> {
    let p = git(repo, &["rev-parse", "--git-path", "index"])?;
    Ok(repo.join(p.trim()))
}

/// A file inside `.git/` for a2c's own use (never committed).
pub fn git_dir_file(repo: &Path, name: &str) -> Result<PathBuf, MigrateError> {
    let p = git(repo, &["rev-parse", "--git-path", name])?;
    Ok(repo.join(p.trim()))
}

/// Paths (relative, `/`) under `pathspecs` with uncommitted changes: staged, unstaged or
/// untracked.
pub fn dirty(repo: &Path, pathspecs: &[&str]) -> Result<Vec<String>, MigrateError> {
    // --no-optional-locks: a status check must not refresh (rewrite) the index, or a dry run
    // or a restored failure would not leave the index byte for byte as it was.
    let mut args = vec![
        "--no-optional-locks",
        "status",
        "--porcelain=v1",
        "--untracked-files=all",
        "--",
    ];
    args.extend_from_slice(pathspecs);
    let out = git(repo, &args)?;
    Ok(out
        .lines()
        .filter(|l| l.len() > 3)
        .map(|l| l[3..].to_string())
        .collect())
}

/// `true` when HEAD is detached (not on a branch).
pub fn detached_head(repo: &Path) -> bool {
    git(repo, &["symbolic-ref", "-q", "HEAD"]).is_err() && git(repo, &["rev-parse", "--verify", "-q", "HEAD"]).is_ok()
}

/// `true` when `path` (relative) is tracked.
pub fn is_tracked(repo: &Path, path: &str) -> bool {
    git(repo, &["ls-files", "--error-unmatch", "--", path]).is_ok()
}
