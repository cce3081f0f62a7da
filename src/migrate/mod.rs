//! `a2c migrate version`: detect → plan → apply, inside a transaction that restores every
//! tool state file byte for byte, and the git index, if anything fails before the commit.
//! An interrupted run leaves a journal in `.git/` so that the next run resumes it forward
//! instead of dual-writing.

pub mod git;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::util::version::MethodVersion;
use crate::workspace::adoption::ADOPTION_FILE;
use crate::workspace::state_root::{CANONICAL_ROOT, LEGACY_ROOT};
use crate::workspace::{AdoptionRecord, Delivery};

/// Errors of a migration.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("`{}` is not a git repository", repo.display())]
    NotGit { repo: PathBuf },
    #[error("git {args} failed: {reason}")]
    Git { args: String, reason: String },
    #[error("tool state files have uncommitted changes: {}", paths.join(", "))]
    Dirty { paths: Vec<String> },
    #[error("{to} is older than the current write contract {from}")]
    Downgrade { from: MethodVersion, to: MethodVersion },
    #[error("`{}` and `{}` both exist and differ", legacy.display(), canonical.display())]
    Conflict { legacy: PathBuf, canonical: PathBuf },
    #[error("a migration to {journal} is in progress in this repository")]
    OtherInProgress { journal: MethodVersion },
    #[error("{0}")]
    Injected(String),
}

impl MigrateError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::NotGit { .. } => "run it inside the repository (or pass -C DIR)".into(),
            Self::Dirty { .. } => {
                "commit or stash those changes first, so that the migration commit holds only the migration".into()
            }
            Self::Downgrade { .. } => {
                "pass --allow-downgrade if you really mean to move the write contract back".into()
            }
            Self::Conflict { .. } => {
                "keep one of the two files (the canonical root wins once they are identical), then rerun".into()
            }
            Self::OtherInProgress { journal } => format!("finish it first: a2c migrate version --to {journal}"),
            Self::Git { .. } => "fix the git problem above (e.g. set user.name and user.email), then rerun".into(),
            Self::Io(e) => return crate::util::contain::refusal(e).map(|r| r.hint()),
            Self::Injected(_) => return None,
        })
    }
}

/// One file moved from the legacy to the canonical tool state root.
#[derive(Debug, Clone, Serialize)]
pub struct Move {
    pub from: String,
    pub to: String,
    pub tracked: bool,
}

/// What a migration will do.
#[derive(Debug, Clone)]
pub struct Plan {
    pub repo: PathBuf,
    pub from: MethodVersion,
    pub to: MethodVersion,
    pub moves: Vec<Move>,
    /// Legacy files identical to their canonical counterpart: removed.
    pub duplicates: Vec<Move>,
    pub adoption_path: PathBuf,
    pub before: AdoptionRecord,
    pub after: AdoptionRecord,
    /// `.a2c/` is removed at the end.
    pub remove_legacy: bool,
}

impl Plan {
    pub fn is_noop(&self) -> bool {
        self.moves.is_empty() && self.duplicates.is_empty() && !self.remove_legacy && self.before == self.after
    }

    pub fn commit_message(&self) -> String {
        let mut msg = format!("a2c: migrate write contract {} -> {}", self.from, self.to);
        if !self.moves.is_empty() {
            msg.push_str(&format!(
                "\n\nMove the tool state root {LEGACY_ROOT}/ -> {CANONICAL_ROOT}/ (required by {}).",
                self.to
            ));
        }
        msg.push_str("\n\nWritten by a2c migrate version.");
        msg
    }
}

/// Every file below the tool state root `root` of `repo` (relative to the root, sorted). A
/// link anywhere there, or on the way to it, is refused: a migration moves, snapshots and
/// commits only real files inside the repository, never what a link points to.
fn files_under(repo: &Path, root: &str) -> Result<Vec<String>, MigrateError> {
    if !crate::util::contain::check(repo, root)? {
        return Ok(Vec::new());
    }
    let dir = repo.join(root);
    let dir = dir.as_path();
    crate::util::contain::refuse_links_below(dir)?;
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| !e.file_type().is_dir())
        .filter_map(|e| crate::util::paths::relative_slash(dir, e.path()))
        .collect();
    out.sort();
    Ok(out)
}

/// Plans a migration of `repo` from `before` to version `to`.
pub fn plan(
    repo: &Path,
    before: &AdoptionRecord,
    to: &MethodVersion,
    requires_canonical: bool,
    method_ref: Option<String>,
    delivery: Option<Delivery>,
) -> Result<Plan, MigrateError> {
    let legacy = repo.join(LEGACY_ROOT);
    let canonical = repo.join(CANONICAL_ROOT);
    let both = legacy.is_dir() && canonical.is_dir();
    let move_all = legacy.is_dir() && (requires_canonical || both);
    let (mut moves, mut duplicates) = (Vec::new(), Vec::new());
    if move_all {
        for rel in files_under(repo, LEGACY_ROOT)? {
            let (src, dst) = (legacy.join(&rel), canonical.join(&rel));
            let m = Move {
                from: format!("{LEGACY_ROOT}/{rel}"),
                to: format!("{CANONICAL_ROOT}/{rel}"),
                tracked: git::is_tracked(repo, &format!("{LEGACY_ROOT}/{rel}")),
            };
            if dst.exists() {
                if fs_err::read(&src)? != fs_err::read(&dst)? {
                    return Err(MigrateError::Conflict {
                        legacy: src,
                        canonical: dst,
                    });
                }
                duplicates.push(m);
            } else {
                moves.push(m);
            }
        }
    }
    let root = if move_all || canonical.is_dir() || !legacy.is_dir() {
        &canonical
    } else {
        &legacy
    };
    let mut after = AdoptionRecord::new(
        to.clone(),
        method_ref.or(before.method_ref.clone()),
        delivery.or(before.delivery),
    );
    if after.method_ref.as_deref() == Some(&format!("v{}", before.tool_version)) {
        after.method_ref = Some(format!("v{to}")); // a ref that named the old version follows it
    }
    Ok(Plan {
        repo: repo.to_path_buf(),
        from: before.tool_version.clone(),
        to: to.clone(),
        moves,
        duplicates,
        adoption_path: root.join(ADOPTION_FILE),
        before: before.clone(),
        after,
        remove_legacy: move_all,
    })
}

/// The journal of a migration in progress, in `.git/` (never committed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Journal {
    pub from: MethodVersion,
    pub to: MethodVersion,
}

pub const JOURNAL_FILE: &str = "a2c-migrate.json";

impl Journal {
    pub fn read(repo: &Path) -> Option<Journal> {
        let path = git::git_dir_file(repo, JOURNAL_FILE).ok()?;
        serde_json::from_str(&fs_err::read_to_string(path).ok()?).ok()
    }

    pub fn write(&self, repo: &Path) -> Result<(), MigrateError> {
        let path = git::git_dir_file(repo, JOURNAL_FILE)?;
        crate::util::fs::write_atomic(&path, serde_json::to_string(self).expect("serializes").as_bytes())?;
        Ok(())
    }

    pub fn remove(repo: &Path) {
        if let Ok(path) = git::git_dir_file(repo, JOURNAL_FILE) {
            let _ = fs_err::remove_file(path);
        }
    }
}

/// Every tool state file and the git index as they were, to put back on failure.
pub struct Snapshot {
    repo: PathBuf,
    files: Vec<(PathBuf, Vec<u8>, u32)>,
    index: Option<(PathBuf, Vec<u8>)>,
    roots_existed: [bool; 2],
}

impl Snapshot {
    pub fn take(repo: &Path) -> Result<Self, MigrateError> {
        use std::os::unix::fs::PermissionsExt;
        let mut files = Vec::new();
        let mut roots_existed = [false; 2];
        for (i, root) in [LEGACY_ROOT, CANONICAL_ROOT].iter().enumerate() {
            let dir = repo.join(root);
            roots_existed[i] = crate::util::contain::is_real_dir(&dir);
            for rel in files_under(repo, root)? {
                let path = dir.join(&rel);
                let mode = fs_err::symlink_metadata(&path)?.permissions().mode();
                files.push((path.clone(), fs_err::read(&path)?, mode));
            }
        }
        let index_path = git::index_path(repo)?;
        let index = fs_err::read(&index_path).ok().map(|b| (index_path, b));
        Ok(Self {
            repo: repo.to_path_buf(),
            files,
            index,
            roots_existed,
        })
    }

    /// Puts every file and the index back as they were.
    pub fn restore(&self) -> Result<(), MigrateError> {
        use std::os::unix::fs::PermissionsExt;
        for (i, root) in [LEGACY_ROOT, CANONICAL_ROOT].iter().enumerate() {
            let dir = self.repo.join(root);
            for rel in files_under(&self.repo, root)? {
                let path = dir.join(&rel);
                if !self.files.iter().any(|(p, _, _)| *p == path) {
                    fs_err::remove_file(&path)?;
                }
            }
            if !self.roots_existed[i] && dir.is_dir() && files_under(&self.repo, root)?.is_empty() {
                fs_err::remove_dir_all(&dir)?;
            }
        }
        for (path, bytes, mode) in &self.files {
            if let Some(parent) = path.parent() {
                fs_err::create_dir_all(parent)?;
            }
            fs_err::write(path, bytes)?;
            fs_err::set_permissions(path, std::fs::Permissions::from_mode(*mode))?;
        }
        if let Some((path, bytes)) = &self.index {
            fs_err::write(path, bytes)?;
        }
        Ok(())
    }
}

/// Applies `plan` (the assets are already installed). Returns the commit, if one was made.
pub fn apply(plan: &Plan, commit: bool) -> Result<Option<String>, MigrateError> {
    let repo = &plan.repo;
    let injected = |p: &str| crate::testhook::fail_point(p).map_err(MigrateError::Injected);
    for (i, m) in plan.moves.iter().enumerate() {
        let dst = repo.join(&m.to);
        if let Some(parent) = dst.parent() {
            fs_err::create_dir_all(parent)?;
        }
        if m.tracked {
            git::git(repo, &["mv", "--", &m.from, &m.to])?;
        } else {
            fs_err::rename(repo.join(&m.from), &dst)?;
        }
        if i == 0 {
            injected(crate::testhook::MIGRATE_MID_MOVES)?;
        }
    }
    for d in &plan.duplicates {
        if d.tracked {
            git::git(repo, &["rm", "-q", "--", &d.from])?;
        } else {
            fs_err::remove_file(repo.join(&d.from))?;
        }
    }
    if plan.remove_legacy {
        let legacy = repo.join(LEGACY_ROOT);
        if legacy.is_dir() && files_under(repo, LEGACY_ROOT)?.is_empty() {
            fs_err::remove_dir_all(&legacy)?;
        }
    }
    crate::util::fs::write_atomic(&plan.adoption_path, plan.after.to_yaml().as_bytes())?;
    let mut stage = vec!["add", "-A", "--"];
    let roots: Vec<&str> = [CANONICAL_ROOT, LEGACY_ROOT]
        .into_iter()
        .filter(|r| repo.join(r).exists())
        .collect();
    stage.extend(&roots);
    if !roots.is_empty() {
        git::git(repo, &stage)?;
    }
    injected(crate::testhook::MIGRATE_BEFORE_COMMIT)?;
    if !commit {
        return Ok(None);
    }
    // Commit exactly what is staged under the tool state roots (this run's changes and, when
    // resuming, the earlier run's): unrelated staged work stays staged, out of this commit.
    let staged = git::git(
        repo,
        &[
            "diff",
            "--cached",
            "--name-only",
            "--no-renames",
            "-z",
            "--",
            LEGACY_ROOT,
            CANONICAL_ROOT,
        ],
    )?;
    let paths: Vec<String> = staged
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    let message = plan.commit_message();
    let mut args = vec!["commit", "-q", "-m", &message, "--"];
    args.extend(paths.iter().map(String::as_str));
    git::git(repo, &args)?;
    Ok(Some(git::git(repo, &["rev-parse", "HEAD"])?.trim().to_string()))
}
