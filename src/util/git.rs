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
    let mut hooks = std::ffi::OsString::from("core.hooksPath=");
    hooks.push(crate::util::platform::no_hooks_dir());
    cmd.arg("-c").arg(hooks);
    cmd
}

/// As [`command`], but with the repository's hooks on: for `git commit`, which runs them as
/// `git commit` in that repository would (docs/security.md).
pub fn committing(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    for var in LOCAL_ENV {
        cmd.env_remove(var);
    }
    // A hook a commit runs is the member's own program: a2c's secrets never reach it.
    for var in crate::env::SECRETS {
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

/// Whether git tracks a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tracking {
    /// Nothing is tracked at or under the path (or `dir` is in no git repository, or git is
    /// not installed).
    No,
    /// git tracks the path itself (a submodule's gitlink) or something under it.
    Yes,
    /// git cannot say (its index is unreadable to it, or is no regular file), or cannot be
    /// asked (it is not installed, inside a repository a2c cannot read alone): why, and what
    /// the user does about it.
    Unknown { reason: String, hint: String },
}

/// What to do when git cannot read the index of the repository at `repo` (a format it does
/// not know, a damaged file, a FIFO or directory in its place): remove it and let git rebuild
/// it from the last commit. `git read-tree HEAD` alone reads the old index first, and fails.
pub fn rebuild_index(repo: &Path) -> String {
    let quote = crate::util::text::shell_quoted;
    format!(
        "remove the index git cannot read and rebuild it from the last commit: `rm -rf {} && git -C {} read-tree HEAD` (changes staged but not committed are staged again with `git add`)",
        quote(&repo.join(".git/index")),
        quote(repo)
    )
}

/// Whether `dir` or a directory above it holds a `.git` (a directory, a file or anything else):
/// where git would find a repository, so that "not tracked" cannot be said without it.
fn in_a_repository(dir: &Path) -> bool {
    dir.ancestors()
        .any(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
}

/// How long `git ls-files` may take before its answer counts as unknown (a FIFO that git opens
/// through a `.git` file blocks it forever).
const LS_FILES_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether git tracks `rel` or any path under it in the work tree at `dir` (or in the
/// repository that contains `dir`): a file, a link or a submodule's gitlink named `rel`
/// itself. When the index plainly holds no such path, git is not even started (a doctor over
/// thousands of members asks this of each). `git_dir_checked`: the caller knows `dir/.git` is
/// a directory, no link (a workspace snapshot vouches for it), so it is not looked at again.
/// A git that fails, or an index that is no regular file, answers [`Tracking::Unknown`]: the
/// caller trusts nothing it would have trusted had the answer been `No`.
pub fn tracking(dir: &Path, rel: &str, git_dir_checked: bool) -> Tracking {
    let rel = rel.trim_end_matches('/');
    let unknown = |reason: String| Tracking::Unknown {
        reason,
        hint: rebuild_index(dir),
    };
    match super::git_index::lacks_path(dir, rel, git_dir_checked) {
        super::git_index::Answer::Lacks => return Tracking::No,
        super::git_index::Answer::NotAFile(why) => return unknown(why),
        super::git_index::Answer::AskGit => {}
    }
    let mut cmd = command(dir);
    cmd.args(["--no-optional-locks", "ls-files", "-z", "--cached", "--", rel]);
    let out = match output_within(cmd, LS_FILES_TIMEOUT) {
        Ok(out) => out,
        // No git outside any repository: nothing is tracked. Inside one whose index a2c could
        // not read alone, git's answer is needed: not having it is no "not tracked".
        Err(_) if !in_a_repository(dir) => return Tracking::No,
        Err(e) => {
            return Tracking::Unknown {
                reason: format!(
                    "`{}` is in a git repository whose index a2c cannot read alone, and git could not be started ({e})",
                    dir.display()
                ),
                hint: "install git (a2c asks it what the index holds), then run the command again".into(),
            };
        }
    };
    let Some(out) = out else {
        return unknown(format!(
            "`git ls-files` in `{}` did not answer within {} s",
            dir.display(),
            LS_FILES_TIMEOUT.as_secs()
        ));
    };
    if out.status.success() {
        return match out.stdout.is_empty() {
            true => Tracking::No,
            false => Tracking::Yes,
        };
    }
    // Outside any repository nothing is tracked; inside one, git failed to read its index.
    if query(dir, &["rev-parse", "--git-dir"]).is_none() {
        return Tracking::No;
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let said = said
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("it failed")
        .trim();
    unknown(format!(
        "git cannot read the index of `{}`: {}",
        dir.display(),
        crate::util::text::quoted_short(said)
    ))
}

/// Runs `cmd` (stdin closed, stdout and stderr captured): its output, `Ok(None)` when it was
/// still running after `limit` (it is killed), `Err` when it could not start.
fn output_within(mut cmd: Command, limit: std::time::Duration) -> std::io::Result<Option<std::process::Output>> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let readers = std::thread::spawn(move || {
        use std::io::Read;
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let err_reader = std::thread::spawn(move || {
            if let Some(e) = stderr.as_mut() {
                let _ = e.take(64 * 1024).read_to_end(&mut err);
            }
            err
        });
        if let Some(o) = stdout.as_mut() {
            let _ = o.read_to_end(&mut out);
        }
        (out, err_reader.join().unwrap_or_default())
    });
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(50));
    };
    let (stdout, stderr) = readers.join().unwrap_or_default();
    Ok(Some(std::process::Output { status, stdout, stderr }))
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

/// The file git reads the repository at `dir`'s own excludes from (`info/exclude` in its
/// common git directory), found as git finds it without starting git when it can be read off
/// the disk: `dir/.git` a directory, or a `.git` file (a submodule's, a worktree's) naming its
/// git directory, whose `commondir` (a worktree's) names where `info/` is. Anything else is
/// asked of git ([`git_path`]).
pub fn info_exclude(dir: &Path) -> Option<std::path::PathBuf> {
    let dot_git = dir.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git.join("info").join("exclude"));
    }
    let read_small = |path: &Path| -> Option<String> {
        let bytes = crate::util::contain::read_capped(path, 4096, "a git pointer").ok()??;
        String::from_utf8(bytes).ok()
    };
    let named = meta
        .is_file()
        .then(|| read_small(&dot_git))
        .flatten()
        .and_then(|text| Some(text.strip_prefix("gitdir: ")?.trim_end().to_string()))
        .filter(|p| !p.is_empty() && !p.contains('\n'));
    let Some(named) = named else {
        return git_path(dir, "info/exclude");
    };
    let git_dir = dir.join(named);
    let common = match read_small(&git_dir.join("commondir")) {
        Some(rel) => git_dir.join(rel.trim_end()),
        None if std::fs::symlink_metadata(git_dir.join("HEAD")).is_ok() => git_dir,
        None => return git_path(dir, "info/exclude"),
    };
    Some(common.join("info").join("exclude"))
}

/// The paths the repository at `dir` records as submodules (gitlinks in its index, `/`
/// separated, relative to `dir`); empty when `dir` is no git repository of its own.
pub fn gitlinks(dir: &Path) -> Vec<String> {
    if !is_own_work_tree(dir) {
        return Vec::new();
    }
    let filters = no_filters(dir);
    let mut args: Vec<&str> = filters.iter().map(String::as_str).collect();
    args.extend(["ls-files", "--stage", "-z"]);
    let Ok(out) = command(dir)
        .arg("--no-optional-locks")
        .args(&args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    out.stdout
        .split(|b| *b == 0)
        .filter_map(|entry| {
            let entry = std::str::from_utf8(entry).ok()?;
            let (meta, path) = entry.split_once('\t')?;
            meta.starts_with("160000 ").then(|| path.to_string())
        })
        .collect()
}

/// `true` when `dir` is the top of a git work tree of its own (a clone or a checked-out
/// submodule), not merely a directory inside the enclosing repository.
pub fn is_own_work_tree(dir: &Path) -> bool {
    let Some(top) = query(dir, &["rev-parse", "--show-toplevel"]) else {
        return false;
    };
    match (dunce::canonicalize(top), dunce::canonicalize(dir)) {
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

    /// The excludes file read off the disk is the one git names, for a plain clone, a clone
    /// whose `.git` is a file naming its git directory (as a submodule's is), and a worktree
    /// (whose excludes are its main repository's).
    #[test]
    fn the_excludes_file_is_the_one_git_reads() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        git(base, &["init", "-q", "main"]);
        git(&base.join("main"), &["commit", "-q", "--allow-empty", "-m", "c"]);
        git(&base.join("main"), &["worktree", "add", "-q", "../wt"]);
        git(base, &["clone", "-q", "--separate-git-dir=sep.git", "main", "separate"]);
        for repo in ["main", "wt", "separate"] {
            let repo = base.join(repo);
            let fast = info_exclude(&repo).unwrap();
            let asked = git_path(&repo, "info/exclude").unwrap();
            let real = |p: &Path| dunce::canonicalize(p.parent().unwrap()).unwrap();
            assert_eq!(real(&fast), real(&asked), "{}", repo.display());
            assert_eq!(fast.file_name(), asked.file_name());
        }
        assert!(!std::fs::symlink_metadata(base.join("wt/.git")).unwrap().is_dir());
    }

    #[test]
    fn tracked_under_asks_git_only_when_the_index_cannot_tell() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "."]);
        assert_eq!(tracking(d, ".tools_local", false), Tracking::No);
        std::fs::create_dir_all(d.join("sub/.tools_local")).unwrap();
        std::fs::write(d.join("sub/.tools_local/x"), "x").unwrap();
        git(d, &["add", "-f", "sub/.tools_local/x"]);
        assert_eq!(tracking(d, ".tools_local", false), Tracking::No);
        // From a directory that is no work tree's root, git is asked.
        assert_eq!(tracking(&d.join("sub"), ".tools_local", false), Tracking::Yes);
        std::fs::create_dir_all(d.join(".tools_local")).unwrap();
        std::fs::write(d.join(".tools_local/y"), "y").unwrap();
        git(d, &["add", "-f", ".tools_local/y"]);
        assert_eq!(tracking(d, ".tools_local", false), Tracking::Yes);
        // Outside any repository, nothing is tracked.
        let outside = tempfile::tempdir().unwrap();
        assert_eq!(tracking(outside.path(), ".tools_local", false), Tracking::No);
    }

    /// An index git itself cannot read (a version it does not know) is no "nothing
    /// tracked": the answer is unknown, with git's reason.
    #[test]
    fn an_index_git_cannot_read_is_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "."]);
        std::fs::create_dir_all(d.join(".tools_local")).unwrap();
        std::fs::write(d.join(".tools_local/y"), "y").unwrap();
        git(d, &["add", "-f", ".tools_local/y"]);
        let mut index = std::fs::read(d.join(".git/index")).unwrap();
        index[7] = 9; // format 9: no git reads it
        std::fs::write(d.join(".git/index"), &index).unwrap();
        match tracking(d, ".tools_local", false) {
            Tracking::Unknown { reason, hint } => {
                assert!(reason.contains("git cannot read the index"), "{reason}");
                assert!(hint.contains("read-tree HEAD"), "{hint}");
            }
            other => panic!("{other:?}"),
        }
    }
}
