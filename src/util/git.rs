//! Questions to the real `git` that every module may ask (read-only, no optional locks).

use std::path::Path;
use std::process::{Command, Stdio};

/// git's repository-locating variables (`git rev-parse --local-env-vars`): set inside git hooks
/// and some IDE terminals, they would point git at another repository than the one a2c means.
pub const LOCAL_ENV: &[&str] = &[
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
];

/// Settings that keep git from running a program a repository's own `.git/config` names
/// (a member unpacked from a tarball carries one): no fsmonitor, no pager, no external diff.
/// Hooks are turned off separately ([`command`]), so that only a commit runs them.
const NO_PROGRAMS: &[&str] = &[
    "--no-pager",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "diff.external=",
    "-c",
    "core.untrackedCache=false",
];

/// `git -C dir`, with git's repository-locating variables cleared (it runs on `dir`'s
/// repository and no other), and running no program the repository's configuration names:
/// no fsmonitor, pager, external diff or hook. Every git call a2c makes starts here, except a
/// commit ([`committing`]).
pub fn command(dir: &Path) -> Command {
    let mut cmd = committing(dir);
    cmd.args(["-c", "core.hooksPath=/dev/null"]);
    cmd
}

/// As [`command`], but with the repository's hooks on: for `git commit`, which runs them as
/// `git commit` in that repository would (docs/security.md).
pub fn committing(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    for var in LOCAL_ENV {
        cmd.env_remove(var);
    }
    cmd.env("GIT_TERMINAL_PROMPT", "0");
    cmd.arg("-C").arg(dir).current_dir(dir).args(NO_PROGRAMS);
    cmd
}

/// `-c filter.NAME.clean= -c filter.NAME.smudge= -c filter.NAME.process=` for every filter
/// driver the configuration of `dir`'s repository defines: a read such as `git status` runs a
/// clean filter on a file whose time changed, so a read-only question turns them all off.
/// (Reading the configuration runs nothing.)
pub fn no_filters(dir: &Path) -> Vec<String> {
    let out = command(dir)
        .args(["config", "--null", "--get-regexp", r"^filter\."])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let Ok(out) = out else { return Vec::new() };
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter_map(|entry| {
            let key = entry.split('\n').next()?;
            let rest = key.strip_prefix("filter.")?;
            Some(rest.rsplit_once('.')?.0.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
        .iter()
        .flat_map(|n| ["clean", "smudge", "process"].map(|k| ["-c".to_string(), format!("filter.{n}.{k}=")]))
        .flatten()
        .collect()
}

/// `true` when git tracks any file under `rel` in the work tree at `dir` (or in the repository
/// that contains `dir`). Outside a git repository, or without git, nothing is tracked. When the
/// index plainly holds no such path, git is not even started (a doctor over thousands of
/// members asks this of each). `git_dir_checked`: the caller knows `dir/.git` is a directory,
/// no link (a workspace snapshot vouches for it), so it is not looked at again.
pub fn tracks_anything_under(dir: &Path, rel: &str, git_dir_checked: bool) -> bool {
    let needle = format!("{}/", rel.trim_end_matches('/'));
    if super::git_index::lacks_prefix(dir, needle.as_bytes(), git_dir_checked) == Some(true) {
        return false;
    }
    command(dir)
        .args(["--no-optional-locks", "ls-files", "-z", "--cached", "--", rel])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|out| out.status.success() && !out.stdout.is_empty())
}

/// Runs a read-only git query in `dir`; its trimmed stdout on success. Never runs an
/// fsmonitor or hooks, and takes no optional locks.
fn query(dir: &Path, args: &[&str]) -> Option<String> {
    let out = command(dir)
        .arg("--no-optional-locks")
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The path of `name` inside the git directory of the repository at `dir` (`rev-parse
/// --git-path`: a worktree's or submodule's `.git` may be a file naming it elsewhere).
pub fn git_path(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    query(dir, &["rev-parse", "--git-path", name]).map(|p| dir.join(p))
}

/// `true` when `dir` is the top of a git work tree of its own (a clone or a checked-out
/// submodule), not merely a directory inside the enclosing repository.
pub fn is_own_work_tree(dir: &Path) -> bool {
    let Some(top) = query(dir, &["rev-parse", "--show-toplevel"]) else {
        return false;
    };
    match (std::fs::canonicalize(top), std::fs::canonicalize(dir)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The commit `rev` names in the repository at `dir`, if it names one.
pub fn commit_of(dir: &Path, rev: &str) -> Option<String> {
    query(dir, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")]).filter(|s| !s.is_empty())
}

/// `true` when `rel` is registered in `repo` as a submodule: a gitlink in the index and a
/// `path = rel` entry in `.gitmodules`.
pub fn is_submodule(repo: &Path, rel: &str) -> bool {
    let gitlink = query(repo, &["ls-files", "--stage", "--", rel]).is_some_and(|s| s.starts_with("160000 "));
    let listed = query(
        repo,
        &[
            "config",
            "--file",
            ".gitmodules",
            "--get-regexp",
            r"^submodule\..*\.path$",
        ],
    )
    .is_some_and(|s| s.lines().any(|l| l.split_whitespace().nth(1) == Some(rel)));
    gitlink && listed
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs the real git in `dir` with a test identity and no user configuration.
    pub(crate) fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn tracked_under_asks_git_only_when_the_index_cannot_tell() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "."]);
        assert!(!tracks_anything_under(d, ".tools_local", false));
        std::fs::create_dir_all(d.join("sub/.tools_local")).unwrap();
        std::fs::write(d.join("sub/.tools_local/x"), "x").unwrap();
        git(d, &["add", "-f", "sub/.tools_local/x"]);
        assert!(!tracks_anything_under(d, ".tools_local", false));
        // From a directory that is no work tree's root, git is asked.
        assert!(tracks_anything_under(&d.join("sub"), ".tools_local", false));
        std::fs::create_dir_all(d.join(".tools_local")).unwrap();
        std::fs::write(d.join(".tools_local/y"), "y").unwrap();
        git(d, &["add", "-f", ".tools_local/y"]);
        assert!(tracks_anything_under(d, ".tools_local", false));
    }
}
