//! The real `git`, run as a subprocess (no reimplementation of its formats).

use std::path::{Path, PathBuf};

use super::MigrateError;

/// Runs `git args…` in `repo`, running no program the repository's configuration names (no
/// hooks, fsmonitor, pager or external diff).
pub fn git(repo: &Path, args: &[&str]) -> Result<String, MigrateError> {
    run(crate::util::git::command(repo), args)
}

/// `git commit args…` in `repo`: the one call that runs the repository's hooks, as `git
/// commit` there would.
pub fn commit(repo: &Path, args: &[&str]) -> Result<String, MigrateError> {
    let mut all = vec!["commit"];
    all.extend_from_slice(args);
    run(crate::util::git::committing(repo), &all)
}

fn run(mut cmd: std::process::Command, args: &[&str]) -> Result<String, MigrateError> {
    // The command as a shell takes it (a message with spaces quoted).
    let shown = shlex::try_join(args.iter().copied()).unwrap_or_else(|_| args.join(" "));
    let out = cmd
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| MigrateError::Git {
            args: shown.clone(),
            reason: format!("cannot run git: {e}"),
        })?;
    if !out.status.success() {
        return Err(MigrateError::Git {
            args: shown,
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
    // The repository's clean filters are turned off: a status runs them on a file whose time
    // changed, and a read runs no program the repository names.
    let filters = crate::util::git::no_filters(repo);
    let mut args: Vec<&str> = filters.iter().map(String::as_str).collect();
    args.extend([
        "--no-optional-locks",
        "status",
        "--porcelain=v1",
        "--untracked-files=all",
        "--ignore-submodules=all",
        "--",
    ]);
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

/// Checks that the git directory of `repo` (and its common directory) lies inside `within` (W,
/// or the repository itself outside a superbuild), so that a `.git` file never leads a
/// migration's writes and commit into another repository. Outside `within`, it is accepted
/// only when git itself registered it for `repo`: a worktree whose `gitdir` file names
/// `repo/.git`, or a submodule's git directory whose `core.worktree` is `repo`.
pub fn check_git_dir_within(repo: &Path, within: &Path) -> Result<(), MigrateError> {
    let out = git(repo, &["rev-parse", "--absolute-git-dir", "--git-common-dir"])?;
    let mut lines = out.lines();
    let canonical = |p: &str| dunce::canonicalize(repo.join(p)).unwrap_or_else(|_| repo.join(p));
    let (Some(dir), Some(common)) = (lines.next().map(canonical), lines.next().map(canonical)) else {
        return Err(MigrateError::NotGit { repo: repo.into() });
    };
    let within = dunce::canonicalize(within).unwrap_or_else(|_| within.into());
    let real_repo = dunce::canonicalize(repo).unwrap_or_else(|_| repo.into());
    if dir.starts_with(&within) && common.starts_with(&within) {
        return Ok(());
    }
    let names_repo = |text: &str, base: &Path| {
        let named = base.join(text.trim());
        dunce::canonicalize(&named).is_ok_and(|p| p == real_repo || p == real_repo.join(".git"))
    };
    let worktree = dir.parent() == Some(common.join("worktrees").as_path())
        && std::fs::read_to_string(dir.join("gitdir")).is_ok_and(|t| names_repo(&t, &dir));
    let submodule = dir == common
        && git(
            repo,
            &[
                "config",
                "--file",
                &dir.join("config").display().to_string(),
                "core.worktree",
            ],
        )
        .is_ok_and(|t| names_repo(&t, &dir));
    if worktree || submodule {
        return Ok(());
    }
    Err(MigrateError::GitDirOutside {
        repo: repo.into(),
        git_dir: dir,
        within,
    })
}
