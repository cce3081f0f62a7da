//! The tool-state move of one repository, as `a2c migrate version` makes it (the command is
//! `ops::migrate`): detect → plan → apply, inside a transaction that restores every
//! tool state file byte for byte, and the git index, if anything fails before the commit.
//! An interrupted run leaves a journal in `.git/` so that the next run resumes it forward
//! instead of dual-writing.

pub mod digest;
pub mod git;

use crate::util::paths::JoinRel as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::util::version::MethodVersion;
use crate::workspace::adoption::ADOPTION_FILE;
use crate::workspace::state_root::{CANONICAL_ROOT, LEGACY_ROOT};
use crate::workspace::{AdoptionRecord, Delivery};

/// Errors of a migration.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The new digest is not said: it must come from a new review, not from this message.
    #[error("the plan changed since it was reviewed ({reviewed}): {}", changes.join("; "))]
    PlanChanged {
        reviewed: String,
        now: String,
        changes: Vec<String>,
    },
    #[error("`{}` is not a git repository", repo.display())]
    NotGit { repo: PathBuf },
    #[error("git {args} failed: {reason}")]
    Git { args: String, reason: String },
    #[error("tool state files have uncommitted changes: {}", paths.join(", "))]
    Dirty { paths: Vec<String> },
    #[error("{to} is older than the current write contract {from}")]
    Downgrade { from: MethodVersion, to: MethodVersion },
    #[error("`{}` and `{}` both exist and differ", legacy.display(), canonical.display())]
    Conflict {
        legacy: PathBuf,
        canonical: PathBuf,
        to: MethodVersion,
    },
    #[error("a migration to {journal} is in progress in this repository")]
    OtherInProgress { journal: MethodVersion },
    #[error("the git directory of `{}` is `{}`, outside `{}`: a2c writes and commits only into repositories inside it", repo.display(), git_dir.display(), within.display())]
    GitDirOutside {
        repo: PathBuf,
        git_dir: PathBuf,
        within: PathBuf,
    },
    /// `migrate_apply` (MCP) of a plan the user never approved in a terminal.
    #[error(
        "the user has not approved the plan {digest} in a terminal: an agent may apply only a plan the user approved"
    )]
    NotApproved {
        digest: String,
        /// The command that approves it, runnable anywhere (`a2c -C DIR migrate version …`).
        approve: String,
    },
    /// `--approve` where standard input is not a terminal (an agent's tool, a pipe).
    #[error(
        "`--approve` approves a plan for an agent, so only a person at a terminal may run it: standard input is not a terminal"
    )]
    ApproveNeedsTerminal,
    #[error("{0}")]
    Injected(String),
}

impl MigrateError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::PlanChanged { .. } => {
                "nothing was changed: review the new plan with `--dry-run`, and confirm the digest it prints only once you have read it".into()
            }
            Self::NotGit { .. } => "run it inside the repository (or pass -C DIR)".into(),
            Self::Dirty { .. } => {
                "commit or stash those changes first, so that the migration commit holds only the migration".into()
            }
            Self::Downgrade { .. } => {
                "pass --allow-downgrade if you really mean to move the write contract back".into()
            }
            Self::Conflict { to, .. } => format!(
                "pick a side for every file that differs: `a2c migrate version --to {to} --keep canonical` drops the `.a2c/` copies, `--keep legacy` moves them over the canonical ones (see the plan with --dry-run)"
            ),
            Self::OtherInProgress { journal } => format!("finish it first: a2c migrate version --to {journal}"),
            Self::GitDirOutside { repo, .. } => format!(
                "`{}` is a `.git` file naming another repository, and neither a worktree nor a submodule git registered for this directory: if it came with an unpacked archive, delete it and clone the repository instead",
                repo.join(".git").display()
            ),
            Self::Git { args, reason } => git_hint(args, reason),
            Self::Io(e) => return crate::util::contain::refusal(e).map(|r| r.hint()),
            Self::NotApproved { approve, .. } => format!(
                "ask the user to read the plan and approve it in a terminal (an agent's tools cannot): {approve}"
            ),
            Self::ApproveNeedsTerminal => {
                "run it yourself in a terminal, after reading the plan (`--dry-run`); to apply the plan yourself, use `--confirm` instead".into()
            }
            Self::Injected(_) => return None,
        })
    }
}

/// Which copy wins when a file exists in both tool state roots and the two differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Keep {
    Canonical,
    Legacy,
}

/// One file moved from the legacy to the canonical tool state root.
#[derive(Debug, Clone, Serialize)]
pub struct Move {
    pub from: String,
    pub to: String,
    pub tracked: bool,
    /// `--keep legacy`: this file replaces a differing canonical copy.
    pub replaces: bool,
}

/// Why the tool state root moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MoveReason {
    /// V's manifest declares `tool_state_root = ".tools/esys/a2c"`.
    Required,
    /// Both roots hold tool state: the move finishes an earlier migration.
    Unfinished,
    /// The adoption record must be rewritten and a2c never writes into `.a2c/`.
    RecordWrite,
}

/// What a migration will do.
#[derive(Debug, Clone)]
pub struct Plan {
    pub repo: PathBuf,
    pub from: MethodVersion,
    pub to: MethodVersion,
    pub moves: Vec<Move>,
    /// Legacy files identical to their canonical counterpart, or (`--keep canonical`)
    /// differing from it: removed.
    pub duplicates: Vec<Move>,
    /// Legacy files dropped because they differ and `--keep canonical` was given.
    pub dropped: Vec<Move>,
    pub adoption_path: PathBuf,
    pub before: AdoptionRecord,
    pub after: AdoptionRecord,
    /// The adoption record is rewritten (the contract, ref or delivery changes).
    pub write_record: bool,
    /// `.a2c/` is removed at the end.
    pub remove_legacy: bool,
    pub move_reason: Option<MoveReason>,
}

impl Plan {
    pub fn is_noop(&self) -> bool {
        self.moves.is_empty()
            && self.duplicates.is_empty()
            && self.dropped.is_empty()
            && !self.remove_legacy
            && !self.write_record
    }

    /// What the record says of delivery and method ref, before and after, when that changes
    /// (`delivery package -> copy`, `method_ref v1 -> v2`).
    pub fn record_changes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let shown = |d: Option<crate::workspace::Delivery>| d.map_or("(none)".to_string(), |d| d.to_string());
        if self.before.delivery != self.after.delivery {
            out.push(format!(
                "delivery {} -> {}",
                shown(self.before.delivery),
                shown(self.after.delivery)
            ));
        }
        if self.before.method_ref != self.after.method_ref {
            let shown = |r: &Option<String>| r.clone().unwrap_or_else(|| "(none)".into());
            out.push(format!(
                "method_ref {} -> {}",
                shown(&self.before.method_ref),
                shown(&self.after.method_ref)
            ));
        }
        out
    }

    pub fn commit_message(&self) -> String {
        let moved = !self.moves.is_empty() || self.remove_legacy;
        let changes = self.record_changes();
        let mut msg = match (self.from == self.to, moved) {
            (false, _) => format!("a2c: migrate write contract {} -> {}", self.from, self.to),
            (true, true) => format!(
                "a2c: move the tool state root {LEGACY_ROOT}/ -> {CANONICAL_ROOT}/ (write contract {} unchanged)",
                self.to
            ),
            // Nothing moved: say what the record changes (a delivery, a method ref).
            (true, false) => format!("a2c: {} (write contract {} unchanged)", changes.join(", "), self.to),
        };
        if !changes.is_empty() && (self.from != self.to || moved) {
            msg.push_str(&format!("\n\nThe adoption record changes: {}.", changes.join(", ")));
        }
        if !self.moves.is_empty() && self.from != self.to {
            let why = match self.move_reason {
                Some(MoveReason::Required) => format!("required by {}", self.to),
                Some(MoveReason::Unfinished) => "finishing an earlier migration".into(),
                _ => format!("a2c writes the adoption record only under {CANONICAL_ROOT}/"),
            };
            msg.push_str(&format!(
                "\n\nMove the tool state root {LEGACY_ROOT}/ -> {CANONICAL_ROOT}/ ({why})."
            ));
            if self.write_record {
                msg.push_str(&format!(
                    "\nThe adoption record is moved and rewritten: its history is\n`git log -- {LEGACY_ROOT}/adoption.yaml {CANONICAL_ROOT}/adoption.yaml`."
                ));
            }
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

/// What a migration is asked to do besides the target version.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub requires_canonical: bool,
    pub method_ref: Option<String>,
    pub delivery: Option<Delivery>,
    pub keep: Option<Keep>,
}

/// Plans a migration of `repo` from `before` to version `to`.
///
/// The rules (docs/migration.md): a2c never writes into `.a2c/`; the adoption record is
/// rewritten only when the contract, `method_ref` or `delivery` changes, and then under
/// `.tools/esys/a2c/`, so a legacy repository moves its whole tool state root in the same
/// commit; the root also moves when V's manifest requires it or both roots hold state.
pub fn plan(repo: &Path, before: &AdoptionRecord, to: &MethodVersion, req: &Request) -> Result<Plan, MigrateError> {
    let legacy = repo.join(LEGACY_ROOT);
    let canonical = repo.join_rel(CANONICAL_ROOT);
    let state = crate::workspace::ToolStateRoot::detect(repo)?;
    let both = state.as_ref().is_some_and(|s| s.both_present);
    let record_in_legacy = state
        .as_ref()
        .is_some_and(|s| s.layout == crate::workspace::Layout::Legacy);
    let legacy_files = files_under(repo, LEGACY_ROOT)?;
    let mut after = AdoptionRecord::new(
        to.clone(),
        req.method_ref.clone().or(before.method_ref.clone()),
        req.delivery.or(before.delivery),
    );
    if req.method_ref.is_none() && after.method_ref.as_deref() == Some(&format!("v{}", before.tool_version)) {
        after.method_ref = Some(format!("v{to}")); // a ref that named the old version follows it
    }
    let changes = after.tool_version != before.tool_version
        || after.method_ref != before.method_ref
        || after.delivery != before.delivery;
    let move_reason = if legacy_files.is_empty() {
        None
    } else if req.requires_canonical {
        Some(MoveReason::Required)
    } else if both {
        Some(MoveReason::Unfinished)
    } else if record_in_legacy && changes {
        Some(MoveReason::RecordWrite)
    } else {
        None
    };
    let (mut moves, mut duplicates, mut dropped) = (Vec::new(), Vec::new(), Vec::new());
    let mut record_conflict = false;
    if move_reason.is_some() {
        for rel in &legacy_files {
            let (src, dst) = (legacy.join(rel), canonical.join(rel));
            let mut m = Move {
                from: format!("{LEGACY_ROOT}/{rel}"),
                to: format!("{CANONICAL_ROOT}/{rel}"),
                tracked: git::is_tracked(repo, &format!("{LEGACY_ROOT}/{rel}")),
                replaces: false,
            };
            if !dst.exists() {
                moves.push(m);
            } else if fs_err::read(&src)? == fs_err::read(&dst)? {
                duplicates.push(m);
            } else {
                record_conflict |= rel == ADOPTION_FILE;
                match req.keep {
                    None => {
                        return Err(MigrateError::Conflict {
                            legacy: src,
                            canonical: dst,
                            to: to.clone(),
                        });
                    }
                    Some(Keep::Canonical) => dropped.push(m),
                    Some(Keep::Legacy) => {
                        m.replaces = true;
                        moves.push(m);
                    }
                }
            }
        }
    }
    let root = if move_reason.is_some() || !record_in_legacy {
        &canonical
    } else {
        &legacy
    };
    // A record taken from the legacy side must still end up naming the target.
    let write_record = changes || (record_conflict && req.keep == Some(Keep::Legacy));
    Ok(Plan {
        repo: repo.to_path_buf(),
        from: before.tool_version.clone(),
        to: to.clone(),
        moves,
        duplicates,
        dropped,
        adoption_path: root.join(ADOPTION_FILE),
        before: before.clone(),
        after,
        write_record,
        remove_legacy: move_reason.is_some(),
        move_reason,
    })
}

pub use crate::workspace::journal::{JOURNAL_FILE, Journal, STEP_ASSETS, STEP_COMMIT, STEP_MOVES, STEP_RECORD};

/// Every tool state file and the git index as they were, to put back on failure (what a
/// migration rolls back to; not the workspace snapshot of `workspace::snapshot`).
pub struct SavedState {
    repo: PathBuf,
    files: Vec<(PathBuf, Vec<u8>, u32)>,
    index: Option<(PathBuf, Vec<u8>)>,
    roots_existed: [bool; 2],
}

impl SavedState {
    /// Saves `repo`'s tool state files and git index.
    pub fn save(repo: &Path) -> Result<Self, MigrateError> {
        use crate::util::platform::MetaExt;
        let mut files = Vec::new();
        let mut roots_existed = [false; 2];
        for (i, root) in [LEGACY_ROOT, CANONICAL_ROOT].iter().enumerate() {
            let dir = repo.join(root);
            roots_existed[i] = crate::util::contain::is_real_dir(&dir);
            for rel in files_under(repo, root)? {
                let path = dir.join(&rel);
                let mode = fs_err::symlink_metadata(&path)?.mode();
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
        crate::testhook::fail_point(crate::testhook::MIGRATE_RESTORE).map_err(MigrateError::Injected)?;
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
            crate::util::platform::set_mode(path, *mode)?;
        }
        if let Some((path, bytes)) = &self.index {
            fs_err::write(path, bytes)?;
        }
        Ok(())
    }
}

/// A migration in progress: the snapshot of every tool state file and the git index, the
/// bytes (or absence) of other files it may change (W's lock), and the journal. Rolled back on
/// drop — on an error or a panic alike — unless [`Transaction::commit`] was called, as
/// rustup's `Transaction` does. [`Transaction::rollback`] does the same and reports a failure
/// to restore, so that the caller keeps its original error first.
pub struct Transaction {
    repo: PathBuf,
    snapshot: SavedState,
    others: Vec<(PathBuf, Option<Vec<u8>>)>,
    done: bool,
}

impl Transaction {
    /// Snapshots `repo`'s tool state and the files `others`, then writes `journal`.
    pub fn begin(repo: &Path, journal: &Journal, others: &[PathBuf]) -> Result<Self, MigrateError> {
        let snapshot = SavedState::save(repo)?;
        let mut saved = Vec::new();
        for path in others {
            let bytes = crate::util::contain::read_config(path)?.map(String::into_bytes);
            saved.push((path.clone(), bytes));
        }
        let tx = Self {
            repo: repo.to_path_buf(),
            snapshot,
            others: saved,
            done: false,
        };
        journal.write(repo)?;
        Ok(tx)
    }

    /// Keeps everything: removes the journal.
    pub fn commit(mut self) {
        self.done = true;
        Journal::remove(&self.repo);
    }

    /// Puts every file back as it was and removes the journal.
    pub fn rollback(mut self) -> Result<(), MigrateError> {
        self.done = true;
        self.restore()
    }

    fn restore(&self) -> Result<(), MigrateError> {
        let mut first = self.snapshot.restore().err();
        for (path, bytes) in &self.others {
            let r = match bytes {
                Some(b) => crate::util::fs::write_atomic(path, b),
                None if std::fs::symlink_metadata(path).is_ok() => std::fs::remove_file(path),
                None => Ok(()),
            };
            if let Err(e) = r {
                first.get_or_insert(e.into());
            }
        }
        match first {
            None => {
                Journal::remove(&self.repo);
                Ok(())
            }
            // Not rolled back entirely: the journal stays (every command and `doctor` then say
            // a migration is pending), naming what failed, so the next run resumes from it.
            Some(e) => {
                let _ = Journal::step(&self.repo, &format!("rolling back, which failed: {e}"));
                Err(e)
            }
        }
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.restore();
        }
    }
}

/// Applies `plan` (the assets are already installed). Returns the commit, if one was made.
pub fn apply(plan: &Plan, commit: bool) -> Result<Option<String>, MigrateError> {
    let repo = &plan.repo;
    let injected = |p: &str| crate::testhook::fail_point(p).map_err(MigrateError::Injected);
    Journal::step(repo, STEP_MOVES)?;
    for (i, m) in plan.moves.iter().enumerate() {
        let dst = repo.join(&m.to);
        if let Some(parent) = dst.parent() {
            fs_err::create_dir_all(parent)?;
        }
        match (m.tracked, m.replaces) {
            (true, false) => {
                git::git(repo, &["mv", "--", &m.from, &m.to])?;
            }
            (true, true) => {
                git::git(repo, &["mv", "-f", "--", &m.from, &m.to])?;
            }
            (false, _) => fs_err::rename(repo.join(&m.from), &dst)?,
        }
        if i == 0 {
            injected(crate::testhook::MIGRATE_MID_MOVES)?;
        }
    }
    for d in plan.duplicates.iter().chain(&plan.dropped) {
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
    if plan.write_record {
        Journal::step(repo, STEP_RECORD)?;
        // Never into `.a2c/`: `plan` puts a record that changes under the canonical root.
        debug_assert!(!plan.adoption_path.starts_with(repo.join(LEGACY_ROOT)));
        crate::util::contain::create_dirs(repo, CANONICAL_ROOT, 0o755)?;
        crate::util::fs::write_atomic(&plan.adoption_path, plan.after.to_yaml().as_bytes())?;
    }
    Journal::step(repo, STEP_COMMIT)?;
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
            "--no-ext-diff",
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
    // Nothing staged: a resumed run whose earlier run committed and was stopped before it
    // removed its journal. There is nothing left to commit.
    if paths.is_empty() {
        return Ok(None);
    }
    let message = plan.commit_message();
    let mut args = vec!["-q", "-m", &message, "--"];
    args.extend(paths.iter().map(String::as_str));
    git::commit(repo, &args)?;
    Ok(Some(git::git(repo, &["rev-parse", "HEAD"])?.trim().to_string()))
}

/// Files present in both tool state roots of `repo` whose contents differ (relative to the
/// roots), sorted: what stops a migration until a side is picked with `--keep`.
pub fn differing_files(repo: &Path) -> Result<Vec<String>, MigrateError> {
    let (legacy, canonical) = (repo.join(LEGACY_ROOT), repo.join_rel(CANONICAL_ROOT));
    let mut out = Vec::new();
    for rel in files_under(repo, LEGACY_ROOT)? {
        let dst = canonical.join(&rel);
        if dst.is_file() && fs_err::read(legacy.join(&rel))? != fs_err::read(&dst)? {
            out.push(rel);
        }
    }
    Ok(out)
}

impl crate::util::hint::Hint for MigrateError {
    fn hint(&self) -> Option<String> {
        MigrateError::hint(self)
    }
}
/// What to do about a failed `git args`, by what git said: its identity unset, a commit the
/// repository's hooks refused (git then says nothing of its own: the hook's output is the
/// reason), or another git problem.
fn git_hint(args: &str, reason: &str) -> String {
    let identity = ["tell me who you are", "user.email", "user.name", "empty ident"];
    if identity.iter().any(|w| reason.contains(w)) {
        return "set git's identity (`git config --global user.name NAME` and `git config --global user.email EMAIL`), then rerun".into();
    }
    if args.starts_with("commit") {
        return "the commit was refused, by a hook the repository runs on commit when the reason above is not git's own: fix what it reports, then rerun".into();
    }
    "fix the git problem above, then rerun".into()
}

#[cfg(test)]
mod tests {
    /// Each failed git call gets the hint that fits it: a hook's refusal is not git's identity.
    #[test]
    fn a_git_failure_is_hinted_by_what_failed() {
        let identity = super::git_hint(
            "commit -q -m x",
            "Author identity unknown\n*** Please tell me who you are.",
        );
        assert!(identity.contains("git config --global user.name"), "{identity}");
        let hook = super::git_hint("commit -q -m x", "hook: no");
        assert!(
            hook.contains("refused, by a hook") && !hook.contains("user.name"),
            "{hook}"
        );
        let other = super::git_hint("mv a b", "fatal: bad source");
        assert_eq!(other, "fix the git problem above, then rerun");
    }
}
