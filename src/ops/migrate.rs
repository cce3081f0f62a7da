//! `a2c migrate version --to V`: preconditions → snapshot → obtain V's assets (lock +
//! install) → plan from V's manifest → apply (moves, adoption, one commit) — restoring the
//! snapshot on any failure before the commit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{OpsError, cache, lock_path, network};
use crate::lock::{LockEntry, Lockfile};
use crate::method::MethodManifest;
use crate::migrate::{self, Journal, Keep, MigrateError, Plan, git};
use crate::store::Reporter;
use crate::util::version::MethodVersion;
use crate::workspace::state_root::{CANONICAL_ROOT, LEGACY_ROOT};
use crate::workspace::{Context, Delivery, ToolStateRoot, WorkspaceError};

#[derive(Debug, Clone, Default)]
pub struct MigrateSettings {
    pub to: Option<MethodVersion>,
    pub dry_run: bool,
    pub no_commit: bool,
    pub allow_downgrade: bool,
    pub offline: bool,
    pub from: Option<PathBuf>,
    pub method_ref: Option<String>,
    pub delivery: Option<Delivery>,
    pub keep: Option<Keep>,
    /// Accept a signed index past its `expires`.
    pub allow_expired: bool,
    /// `--confirm sha256:<hex>`: apply only the plan with this digest (from a dry run).
    pub confirm: Option<String>,
}

#[derive(Debug)]
pub struct MigrateOutcome {
    pub plan: Plan,
    /// `None` when V's manifest could not be read without downloading (dry run only).
    pub requires_canonical: Option<bool>,
    pub installed: Option<PathBuf>,
    pub commit: Option<String>,
    pub resumed: bool,
    pub noop: bool,
    /// The superbuild's lock, when this migration added V to it (or, dry, would).
    pub workspace_lock: Option<PathBuf>,
    /// Versions the superbuild's lock dropped (or, dry, would drop) because no member pins
    /// them after the migration: the lock then passes `install --locked`.
    pub lock_dropped: Vec<MethodVersion>,
    /// What the plan must say before it runs (a detached HEAD).
    pub warnings: Vec<String>,
    /// The plan's digest (`sha256:<hex>`): what a dry run shows for review, and what the
    /// real run applied.
    pub digest: Option<String>,
    pub dry_run: bool,
}

/// A moved or dropped file as the documents show it.
#[derive(serde::Serialize)]
struct FileMove<'a> {
    from: &'a str,
    to: &'a str,
}

fn file_moves<'a>(moves: impl IntoIterator<Item = &'a crate::migrate::Move>) -> Vec<FileMove<'a>> {
    moves
        .into_iter()
        .map(|m| FileMove {
            from: &m.from,
            to: &m.to,
        })
        .collect()
}

/// The adoption record's change as the documents show it.
#[derive(serde::Serialize)]
struct AdoptionChange<'a> {
    before: &'a MethodVersion,
    after: &'a MethodVersion,
    path: &'a Path,
    rewritten: bool,
}

impl<'a> From<&'a Plan> for AdoptionChange<'a> {
    fn from(p: &'a Plan) -> Self {
        Self {
            before: &p.before.tool_version,
            after: &p.after.tool_version,
            path: &p.adoption_path,
            rewritten: p.write_record,
        }
    }
}

/// `a2c migrate version --json` (docs/json/migrate.schema.json).
impl serde::Serialize for MigrateOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            repo: &'a Path,
            from: &'a MethodVersion,
            to: &'a MethodVersion,
            moves: Vec<FileMove<'a>>,
            replaced: Vec<FileMove<'a>>,
            dropped: Vec<FileMove<'a>>,
            move_reason: Option<crate::migrate::MoveReason>,
            adoption: AdoptionChange<'a>,
            commit: &'a Option<String>,
            installed: &'a Option<PathBuf>,
            workspace_lock: &'a Option<PathBuf>,
            lock_dropped: &'a [MethodVersion],
            dry_run: bool,
            plan: &'a Option<String>,
            noop: bool,
            warnings: &'a [String],
        }
        let p = &self.plan;
        Doc {
            repo: &p.repo,
            from: &p.from,
            to: &p.to,
            moves: file_moves(&p.moves),
            replaced: file_moves(p.moves.iter().filter(|m| m.replaces)),
            dropped: file_moves(&p.dropped),
            move_reason: p.move_reason,
            adoption: p.into(),
            commit: &self.commit,
            installed: &self.installed,
            workspace_lock: &self.workspace_lock,
            lock_dropped: &self.lock_dropped,
            dry_run: self.dry_run,
            plan: &self.digest,
            noop: self.noop,
            warnings: &self.warnings,
        }
        .serialize(s)
    }
}

impl From<MigrateError> for OpsError {
    fn from(e: MigrateError) -> Self {
        OpsError::Migrate(Box::new(e))
    }
}

pub fn migrate(
    session: &super::Session,
    ctx: &Context,
    settings: &MigrateSettings,
    reporter: &dyn Reporter,
) -> Result<MigrateOutcome, OpsError> {
    let to = settings
        .to
        .clone()
        .ok_or_else(|| OpsError::Config("--to V is required".into()))?;
    // `--from` is checked before anything is read or written.
    let from_dir = super::from_dir(settings.from.as_deref())?;
    let repo = ctx.require_repo()?.to_path_buf();
    let Prepared {
        before,
        from,
        resumed,
        warnings,
    } = prepare(&repo, &to, settings, ctx.workspace.as_ref().map_or(&repo, |w| &w.root))?;
    let request = |requires_canonical: bool| request(settings, requires_canonical);
    let lock_path = lock_path(ctx)?;
    let in_workspace = ctx.workspace.is_some();
    if settings.dry_run {
        // V is resolved exactly as the real run would (lock, `--from`, registry) and fails
        // the same way; only the download of a bundle that is nowhere local is left out.
        let (entry, added) = lock_entry(session, ctx, &to, settings, from_dir.as_deref())?;
        let manifest = peek_manifest(session, ctx, &entry, from_dir.as_deref())?;
        runs_here(manifest.as_ref(), &to)?;
        let requires = manifest.as_ref().map(MethodManifest::requires_canonical_root);
        let plan = migrate::plan(&repo, &before, &to, &request(requires.unwrap_or(false)))?;
        let noop = plan.is_noop() && requires.is_some();
        let digest = migrate::digest::digest(&repo, &plan, &entry);
        // Kept under .git/ so that a confirmation that no longer matches can say what changed.
        let _ = migrate::digest::remember(&repo, &digest);
        return Ok(MigrateOutcome {
            digest: Some(digest.id()),
            plan,
            requires_canonical: requires,
            installed: None,
            commit: None,
            resumed,
            noop,
            lock_dropped: match noop {
                false => would_drop(ctx, &[repo.as_path()], &to)?,
                true => Vec::new(),
            },
            workspace_lock: (added && in_workspace).then_some(lock_path),
            warnings: if noop { Vec::new() } else { warnings },
            dry_run: true,
        });
    }
    // Everything this run may change is put back on any failure, or a panic, before the
    // commit: R's tool state, the git index, and W's lock.
    let others = match in_workspace {
        true => vec![lock_path.clone()],
        false => Vec::new(),
    };
    let tx = migrate::Transaction::begin(
        &repo,
        &Journal {
            from: from.clone(),
            to: to.clone(),
            step: Some(migrate::STEP_ASSETS.into()),
        },
        &others,
    )?;
    let result = (|| -> Result<MigrateOutcome, OpsError> {
        let (installed, added) = ensure_installed(session, ctx, &to, settings, from_dir.as_deref(), reporter)?;
        crate::testhook::fail_point(crate::testhook::MIGRATE_AFTER_INSTALL).map_err(MigrateError::Injected)?;
        let manifest = MethodManifest::read_tree(&installed)
            .map_err(|e| OpsError::Config(format!("cannot read the manifest of {to}: {e}")))?;
        runs_here(Some(&manifest), &to)?;
        let plan = migrate::plan(&repo, &before, &to, &request(manifest.requires_canonical_root()))?;
        let noop = plan.is_noop();
        let entry = Lockfile::read(&lock_path)?
            .and_then(|l| l.get(&to).cloned())
            .ok_or_else(|| OpsError::Config(format!("{to} is not in the lock after installing it")))?;
        let digest = migrate::digest::digest(&repo, &plan, &entry);
        // A reviewed plan is applied only if nothing it depends on changed since the review.
        if let Some(reviewed) = &settings.confirm
            && *reviewed != digest.id()
        {
            return Err(MigrateError::PlanChanged {
                reviewed: reviewed.clone(),
                now: digest.id(),
                changes: migrate::digest::changes(&[repo.as_path()], reviewed, &digest),
            }
            .into());
        }
        // A single repository pins only V afterwards: its lock keeps only V, before the move
        // and the commit, so that what is committed passes `install --locked`.
        let single_dropped = match (noop, in_workspace) {
            (false, false) => keep_only(&lock_path, &to)?,
            _ => Vec::new(),
        };
        let commit = if noop {
            None
        } else {
            migrate::apply(&plan, !settings.no_commit)?
        };
        // Versions no member pins any more leave W's lock (inside the transaction: put back
        // with everything else on a failure).
        let lock_dropped = match (noop, in_workspace) {
            (false, true) => drop_unpinned(ctx)?,
            _ => single_dropped,
        };
        Ok(MigrateOutcome {
            lock_dropped,
            plan,
            requires_canonical: Some(manifest.requires_canonical_root()),
            installed: Some(installed),
            commit,
            resumed,
            noop,
            workspace_lock: (added && in_workspace).then(|| lock_path.clone()),
            warnings: if noop { Vec::new() } else { warnings.clone() },
            digest: Some(digest.id()),
            dry_run: false,
        })
    })();
    match result {
        // Nothing to do: not even the lock V was added to stays changed.
        Ok(out) if out.noop => {
            tx.rollback()?;
            Ok(MigrateOutcome {
                workspace_lock: None,
                ..out
            })
        }
        Ok(out) => {
            tx.commit();
            Ok(out)
        }
        // The original error stays first; a failure to restore is added to it.
        Err(e) => Err(rolled_back(tx, e)),
    }
}

/// Refuses V when its manifest asks for a newer a2c than this one.
fn runs_here(manifest: Option<&MethodManifest>, to: &MethodVersion) -> Result<(), OpsError> {
    match manifest.and_then(MethodManifest::needs_newer_a2c) {
        Some(min) => Err(crate::store::StoreError::NeedsNewerA2c {
            version: to.clone(),
            min: min.clone(),
            running: crate::A2C_VERSION.into(),
        }
        .into()),
        None => Ok(()),
    }
}

/// Rolls `tx` back after `e`: the original error stays first; a failure to restore is added.
fn rolled_back(tx: migrate::Transaction, e: OpsError) -> OpsError {
    match tx.rollback() {
        Ok(()) => e,
        Err(restore) => OpsError::RollbackFailed {
            original: Box::new(e),
            restore: restore.to_string(),
        },
    }
}

/// What a migration of one repository starts from, checked: its adoption record (with the
/// contract it migrates from), whether it resumes an interrupted run, and what the plan must
/// say before it runs.
struct Prepared {
    before: crate::workspace::AdoptionRecord,
    from: MethodVersion,
    resumed: bool,
    warnings: Vec<String>,
}

/// The preconditions of migrating `repo` to `to`: a git work tree that has adopted, no
/// interrupted migration to another version, no downgrade unless allowed, and clean tool
/// state unless resuming; and a git directory inside `within` (W, or the repository itself),
/// so that nothing is written or committed into a repository a `.git` file names elsewhere.
fn prepare(repo: &Path, to: &MethodVersion, settings: &MigrateSettings, within: &Path) -> Result<Prepared, OpsError> {
    let repo = repo.to_path_buf();
    if !git::is_work_tree(&repo) {
        return Err(MigrateError::NotGit { repo }.into());
    }
    git::check_git_dir_within(&repo, within)?;
    let state = ToolStateRoot::detect(&repo)?.ok_or_else(|| WorkspaceError::NotAdopted { repo: repo.clone() })?;
    if !state.has_adoption() {
        return Err(WorkspaceError::NotAdopted { repo: repo.clone() }.into());
    }
    let record = state.read_adoption().map_err(WorkspaceError::from)?;
    // Resume an interrupted migration to the same version; refuse one to another.
    let journal = Journal::read(&repo);
    let resumed = match &journal {
        Some(j) if j.to == *to => true,
        Some(j) => return Err(MigrateError::OtherInProgress { journal: j.to.clone() }.into()),
        None => false,
    };
    let from = journal.as_ref().map_or(record.tool_version.clone(), |j| j.from.clone());
    if *to < from && !settings.allow_downgrade {
        return Err(MigrateError::Downgrade { from, to: to.clone() }.into());
    }
    if !resumed {
        // a2c's own lock (written by `lock` and `install`, untracked until someone commits it)
        // is no user's change: it moves with the migration and lands in its commit.
        let own = |p: &String| {
            [LEGACY_ROOT, CANONICAL_ROOT]
                .iter()
                .any(|root| *p == format!("{root}/{}", crate::lock::LOCK_FILE))
        };
        let dirty: Vec<String> = git::dirty(&repo, &[LEGACY_ROOT, CANONICAL_ROOT])?
            .into_iter()
            .filter(|p| !own(p))
            .collect();
        if !dirty.is_empty() {
            return Err(MigrateError::Dirty { paths: dirty }.into());
        }
    }
    let mut before = record;
    before.tool_version = from.clone();
    let mut warnings = Vec::new();
    if git::detached_head(&repo) && !settings.no_commit {
        warnings.push(format!(
            "HEAD of `{}` is detached: the migration commit will be on no branch (check out a branch first, or pass --no-commit)",
            repo.display()
        ));
    }
    Ok(Prepared {
        before,
        from,
        resumed,
        warnings,
    })
}

fn request(settings: &MigrateSettings, requires_canonical: bool) -> migrate::Request {
    migrate::Request {
        requires_canonical,
        method_ref: settings.method_ref.clone(),
        delivery: settings.delivery,
        keep: settings.keep,
    }
}

/// V's lock entry as an install would obtain it, without writing: from the lock; else, offline,
/// from a vendor manifest in `--from DIR`; else from the registry. `true` when it is not in
/// the lock yet.
fn lock_entry(
    session: &super::Session,
    ctx: &Context,
    version: &MethodVersion,
    settings: &MigrateSettings,
    from: Option<&Path>,
) -> Result<(LockEntry, bool), OpsError> {
    let lock_path = lock_path(ctx)?;
    let lock = Lockfile::read(&lock_path)?.unwrap_or_default();
    if let Some(entry) = lock.get(version) {
        return Ok((entry.clone(), false));
    }
    if settings.offline {
        let vendored = match from {
            Some(dir) => vendored_entry(dir, version)?,
            None => None,
        };
        return match vendored {
            Some(entry) => Ok((entry, true)),
            None => Err(OpsError::LockWouldChange {
                path: lock_path,
                versions: vec![version.clone()],
                flag: "--offline",
            }),
        };
    }
    let needed: BTreeSet<MethodVersion> = [version.clone()].into();
    let planned = super::resolve_missing(
        session,
        ctx,
        None,
        &lock,
        &needed,
        &network(session, ctx, None)?,
        settings.allow_expired,
    )?;
    let entry = planned.lock.get(version).cloned().expect("resolved above");
    Ok((entry, true))
}

/// Adds V to the lock (W's in a superbuild, else R's) when missing and installs it. Returns
/// the installed tree and whether the lock gained V.
fn ensure_installed(
    session: &super::Session,
    ctx: &Context,
    version: &MethodVersion,
    settings: &MigrateSettings,
    from: Option<&Path>,
    reporter: &dyn Reporter,
) -> Result<(PathBuf, bool), OpsError> {
    let (entry, added) = lock_entry(session, ctx, version, settings, from)?;
    if added {
        add_to_lock(ctx, &entry)?;
    }
    Ok((install_entry(session, ctx, &entry, settings, from, reporter)?, added))
}

fn add_to_lock(ctx: &Context, entry: &LockEntry) -> Result<(), OpsError> {
    let lock_path = lock_path(ctx)?;
    let mut lock = Lockfile::read(&lock_path)?.unwrap_or_default();
    lock.upsert(entry.clone());
    lock.write(&lock_path)?;
    Ok(())
}

/// Installs `entry` into the store (the lock is not touched). Returns the installed tree.
fn install_entry(
    session: &super::Session,
    ctx: &Context,
    entry: &LockEntry,
    settings: &MigrateSettings,
    from: Option<&Path>,
    reporter: &dyn Reporter,
) -> Result<PathBuf, OpsError> {
    let client = std::sync::Arc::new(network(session, ctx, None)?);
    let options = super::install_options(session, ctx, settings.offline, from, 1, client)?;
    crate::store::install::install(std::slice::from_ref(entry), &options, reporter)?;
    Ok(options.store.version_dir(&entry.version))
}

/// The lock entry of `version` from `dir/a2c-vendor.json`, if it lists it.
fn vendored_entry(dir: &Path, version: &MethodVersion) -> Result<Option<LockEntry>, OpsError> {
    Ok(crate::lock::vendored::VendorManifest::read(dir)?.and_then(|m| m.entry(version)))
}

/// V's manifest without changing anything: from the store when installed, else from a local
/// bundle (cache, `--from`, file registry) extracted into a temporary directory.
fn peek_manifest(
    session: &super::Session,
    ctx: &Context,
    entry: &LockEntry,
    from: Option<&Path>,
) -> Result<Option<MethodManifest>, OpsError> {
    let store = super::store(ctx)?;
    let installed = store.version_dir(&entry.version);
    if store.is_installed(entry)
        && let Ok(m) = MethodManifest::read_tree(&installed)
    {
        return Ok(Some(m));
    }
    let mut bundles = vec![cache(session, &store)?.path(&entry.sha256)];
    if let Some(dir) = from {
        bundles.extend(crate::store::cache::files_of_size(dir, entry.size));
    }
    let lock_dir = lock_path(ctx).ok().and_then(|p| p.parent().map(Path::to_path_buf));
    if let crate::lock::BundleLocation::File(path) = entry.location(session.plain_http(), lock_dir.as_deref()) {
        bundles.push(path);
    }
    for path in bundles.into_iter().filter(|p| p.is_file()) {
        let tmp = tempfile::tempdir()?;
        let file = fs_err::File::open(&path)?;
        // The limits any install has; a temporary directory outside R, because a dry run
        // writes nothing there (not even a store).
        let limits = session.limits()?;
        if let Ok(x) = crate::archive::extract(file, entry.format, tmp.path(), &limits)
            && x.bundle_sha256 == entry.sha256
            && let Ok(m) = MethodManifest::read_tree(&x.root)
        {
            return Ok(Some(m));
        }
    }
    Ok(None)
}

/// What `--all` does with one member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberStatus {
    /// In the plan (a dry run, or not reached because an earlier member failed: see `Untouched`).
    Planned,
    /// Migrated; the commit, or `None` with `--no-commit` (left staged).
    Done(Option<String>),
    /// Not in the plan, and why (already at V, a newer contract, not adopted).
    Skipped(String),
    /// Its migration failed and was rolled back: the error.
    Failed(String),
    /// In the plan, but not reached: the run stopped at an earlier member.
    Untouched,
}

/// One member of a superbuild-wide migration.
#[derive(Debug)]
pub struct MemberMigration {
    /// The member's path relative to W (`.` for W itself).
    pub relative: String,
    pub repo: PathBuf,
    /// The contract it migrates from (its adoption record's, or the journal's when resuming).
    pub from: Option<MethodVersion>,
    pub plan: Option<Plan>,
    pub resumed: bool,
    pub status: MemberStatus,
}

#[derive(Debug)]
pub struct MigrateAllOutcome {
    pub to: MethodVersion,
    pub members: Vec<MemberMigration>,
    /// The combined plan's digest (`sha256:<hex>`).
    pub digest: String,
    pub installed: Option<PathBuf>,
    /// `None` when V's manifest could not be read without downloading (dry run only).
    pub requires_canonical: Option<bool>,
    /// W's lock, when V was (or, dry, would be) added to it.
    pub workspace_lock: Option<PathBuf>,
    /// Versions W's lock dropped (or, dry, would drop): no member pins them after the run.
    pub lock_dropped: Vec<MethodVersion>,
    pub warnings: Vec<String>,
    /// The member the run stopped at, with its error (the members after it are untouched).
    pub failure: Option<(String, OpsError)>,
    pub dry_run: bool,
}

impl MemberStatus {
    /// The name a document gives it.
    pub fn name(&self) -> &'static str {
        match self {
            MemberStatus::Planned => "planned",
            MemberStatus::Done(Some(_)) => "committed",
            MemberStatus::Done(None) => "staged",
            MemberStatus::Skipped(_) => "skipped",
            MemberStatus::Failed(_) => "failed",
            MemberStatus::Untouched => "untouched",
        }
    }
}

/// One member in `a2c migrate version --all --json`: its plan only when it has one and is not
/// skipped.
impl serde::Serialize for MemberMigration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            member: &'a str,
            repo: &'a Path,
            status: &'static str,
            from: &'a Option<MethodVersion>,
            resumed: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            reason: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            commit: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            moves: Option<Vec<FileMove<'a>>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            dropped: Option<Vec<FileMove<'a>>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            move_reason: Option<Option<crate::migrate::MoveReason>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            adoption: Option<AdoptionChange<'a>>,
        }
        let plan = self
            .plan
            .as_ref()
            .filter(|_| !matches!(self.status, MemberStatus::Skipped(_)));
        Doc {
            member: &self.relative,
            repo: &self.repo,
            status: self.status.name(),
            from: &self.from,
            resumed: self.resumed,
            reason: match &self.status {
                MemberStatus::Skipped(why) => Some(why),
                _ => None,
            },
            error: match &self.status {
                MemberStatus::Failed(e) => Some(e),
                _ => None,
            },
            commit: match &self.status {
                MemberStatus::Done(Some(c)) => Some(c),
                _ => None,
            },
            moves: plan.map(|p| file_moves(&p.moves)),
            dropped: plan.map(|p| file_moves(&p.dropped)),
            move_reason: plan.map(|p| p.move_reason),
            adoption: plan.map(AdoptionChange::from),
        }
        .serialize(s)
    }
}

/// `a2c migrate version --all --json` without its `error` (which the CLI adds from `failure`,
/// worded as the error it returns).
impl serde::Serialize for MigrateAllOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            all: bool,
            to: &'a MethodVersion,
            members: &'a [MemberMigration],
            installed: &'a Option<PathBuf>,
            workspace_lock: &'a Option<PathBuf>,
            lock_dropped: &'a [MethodVersion],
            dry_run: bool,
            plan: &'a str,
            warnings: &'a [String],
        }
        Doc {
            all: true,
            to: &self.to,
            members: &self.members,
            installed: &self.installed,
            workspace_lock: &self.workspace_lock,
            lock_dropped: &self.lock_dropped,
            dry_run: self.dry_run,
            plan: &self.digest,
            warnings: &self.warnings,
        }
        .serialize(s)
    }
}

/// `a2c migrate version --to V --all`: plans every member of the superbuild whose write contract
/// is older than V (or whose tool state root must move), as one plan with one digest, then
/// applies it member by member — one commit per member, W's lock updated once. A member that
/// fails is rolled back and the run stops there: members before it stay committed, the rest are
/// untouched, and a rerun continues (a committed member is then already at V; an interrupted one
/// resumes from its journal).
pub fn migrate_all(
    session: &super::Session,
    ctx: &Context,
    settings: &MigrateSettings,
    reporter: &dyn Reporter,
) -> Result<MigrateAllOutcome, OpsError> {
    let to = settings
        .to
        .clone()
        .ok_or_else(|| OpsError::Config("--to V is required".into()))?;
    let from_dir = super::from_dir(settings.from.as_deref())?;
    let w_root = ctx.require_workspace()?.root.clone();
    let lock_path = lock_path(ctx)?;
    // V's lock entry and manifest, once for every member. The real run installs V first (the
    // store only: W's lock is written after every member's preconditions hold).
    let (entry, added) = lock_entry(session, ctx, &to, settings, from_dir.as_deref())?;
    let (installed, manifest) = if settings.dry_run {
        (None, peek_manifest(session, ctx, &entry, from_dir.as_deref())?)
    } else {
        let tree = install_entry(session, ctx, &entry, settings, from_dir.as_deref(), reporter)?;
        let manifest = MethodManifest::read_tree(&tree)
            .map_err(|e| OpsError::Config(format!("cannot read the manifest of {to}: {e}")))?;
        (Some(tree), Some(manifest))
    };
    runs_here(manifest.as_ref(), &to)?;
    let requires = manifest.as_ref().map(MethodManifest::requires_canonical_root);
    // Plan every member before anything is written: a member that cannot be migrated stops
    // the whole run here, named.
    let mut members = Vec::new();
    let mut digests = Vec::new();
    let mut warnings = Vec::new();
    for m in ctx.members()? {
        let in_member = |e: OpsError| OpsError::InMember {
            member: m.relative.clone(),
            error: Box::new(e),
        };
        let mut mm = MemberMigration {
            relative: m.relative.clone(),
            repo: m.path.clone(),
            from: None,
            plan: None,
            resumed: false,
            status: MemberStatus::Planned,
        };
        let state = ToolStateRoot::detect(&m.path).ok().flatten();
        let pending = Journal::pending(&m.path);
        if !state.as_ref().is_some_and(|s| s.has_adoption()) && pending.is_none() {
            mm.status = MemberStatus::Skipped("has not adopted (run `a2c adopt` in it first)".into());
            digests.push(None);
            members.push(mm);
            continue;
        }
        // A newer contract is skipped, never downgraded, unless --allow-downgrade.
        let current = state.and_then(|s| s.read_adoption().ok()).map(|r| r.tool_version);
        if pending.is_none()
            && let Some(cur) = &current
            && *cur > to
            && !settings.allow_downgrade
        {
            mm.from = Some(cur.clone());
            mm.status = MemberStatus::Skipped(format!(
                "its contract {cur} is newer than {to} (never downgraded without --allow-downgrade)"
            ));
            digests.push(None);
            members.push(mm);
            continue;
        }
        let prepared = prepare(&m.path, &to, settings, &w_root).map_err(in_member)?;
        let plan = migrate::plan(
            &m.path,
            &prepared.before,
            &to,
            &request(settings, requires.unwrap_or(false)),
        )
        .map_err(|e| in_member(e.into()))?;
        mm.from = Some(prepared.from.clone());
        mm.resumed = prepared.resumed;
        if plan.is_noop() && requires.is_some() && !prepared.resumed {
            mm.status = MemberStatus::Skipped(format!("already at {to}"));
            digests.push(None);
        } else {
            warnings.extend(prepared.warnings);
            digests.push(Some(migrate::digest::digest(&m.path, &plan, &entry)));
        }
        mm.plan = Some(plan);
        members.push(mm);
    }
    let reasons: Vec<String> = members
        .iter()
        .map(|m| match &m.status {
            MemberStatus::Skipped(why) => why.clone(),
            _ => String::new(),
        })
        .collect();
    let parts: Vec<(&str, migrate::digest::Part<'_>)> = members
        .iter()
        .zip(&digests)
        .zip(&reasons)
        .map(|((m, d), why)| {
            let part = match d {
                Some(d) => migrate::digest::Part::Planned(d),
                None => migrate::digest::Part::Skipped(why),
            };
            (m.relative.as_str(), part)
        })
        .collect();
    let digest = migrate::digest::combine(&parts);
    let planned: Vec<&Path> = members
        .iter()
        .filter(|m| m.status == MemberStatus::Planned)
        .map(|m| m.repo.as_path())
        .collect();
    let mut out = MigrateAllOutcome {
        to: to.clone(),
        digest: digest.id(),
        installed,
        requires_canonical: requires,
        workspace_lock: added.then(|| lock_path.clone()),
        lock_dropped: Vec::new(),
        warnings,
        failure: None,
        members: Vec::new(),
        dry_run: settings.dry_run,
    };
    if settings.dry_run {
        // Kept in each planned member's `.git/`, so that a confirmation that no longer matches
        // can say what changed.
        for repo in &planned {
            let _ = migrate::digest::remember(repo, &digest);
        }
        out.lock_dropped = would_drop(ctx, &planned, &to)?;
        out.members = members;
        return Ok(out);
    }
    if let Some(reviewed) = &settings.confirm
        && *reviewed != digest.id()
    {
        let repos: Vec<&Path> = members.iter().map(|m| m.repo.as_path()).collect();
        return Err(MigrateError::PlanChanged {
            reviewed: reviewed.clone(),
            now: digest.id(),
            changes: migrate::digest::changes(&repos, reviewed, &digest),
        }
        .into());
    }
    if planned.is_empty() {
        out.workspace_lock = None;
        out.members = members;
        return Ok(out);
    }
    // W's lock gains V once; it is put back only if no member is migrated.
    let lock_before = crate::util::contain::read_config(&lock_path)?;
    if added {
        add_to_lock(ctx, &entry)?;
    }
    let mut stopped = false;
    let mut any_done = false;
    for (mm, reviewed) in members.iter_mut().zip(&digests) {
        if mm.status != MemberStatus::Planned {
            continue;
        }
        if stopped {
            mm.status = MemberStatus::Untouched;
            continue;
        }
        match migrate_member(mm, &to, &entry, reviewed.as_ref(), requires.unwrap_or(false), settings) {
            Ok(commit) => {
                mm.status = MemberStatus::Done(commit);
                any_done = true;
                crate::testhook::point(crate::testhook::MIGRATE_BETWEEN_MEMBERS);
            }
            Err(e) => {
                mm.status = MemberStatus::Failed(e.to_string());
                out.failure = Some((mm.relative.clone(), e));
                stopped = true;
            }
        }
    }
    if !any_done && added {
        match &lock_before {
            Some(text) => crate::util::fs::write_atomic(&lock_path, text.as_bytes())?,
            None => fs_err::remove_file(&lock_path)?,
        }
        out.workspace_lock = None;
    }
    if any_done {
        out.lock_dropped = drop_unpinned(ctx)?;
    }
    out.members = members;
    Ok(out)
}

/// Drops from the superbuild's lock every version no member pins any more (read afresh: the
/// migration changed the records), so that `install --locked` passes right after. The
/// versions dropped.
fn drop_unpinned(ctx: &Context) -> Result<Vec<MethodVersion>, OpsError> {
    let Some(w) = &ctx.workspace else { return Ok(Vec::new()) };
    let fresh = Context::discover(&w.root, Some(&w.root))?;
    let needed = super::needs(&fresh)?;
    retain_in_lock(&lock_path(ctx)?, |v| needed.contains_key(v))
}

/// Drops from the lock at `path` every version but `to` (a single repository's lock after its
/// migration). The versions dropped.
fn keep_only(path: &Path, to: &MethodVersion) -> Result<Vec<MethodVersion>, OpsError> {
    retain_in_lock(path, |v| v == to)
}

/// Keeps in the lock at `path` (when there is one) only the versions `keep` accepts, writing
/// it only if that drops any. The versions dropped.
fn retain_in_lock(path: &Path, keep: impl Fn(&MethodVersion) -> bool) -> Result<Vec<MethodVersion>, OpsError> {
    let Some(mut lock) = Lockfile::read(path)? else {
        return Ok(Vec::new());
    };
    let dropped = not_kept(&lock, &keep);
    if !dropped.is_empty() {
        lock.methods.retain(|m| keep(&m.version));
        lock.write(path)?;
    }
    Ok(dropped)
}

/// The versions of `lock` that `keep` does not accept.
fn not_kept(lock: &Lockfile, keep: impl Fn(&MethodVersion) -> bool) -> Vec<MethodVersion> {
    lock.methods
        .iter()
        .filter(|m| !keep(&m.version))
        .map(|m| m.version.clone())
        .collect()
}

/// What [`drop_unpinned`] would drop once the members at `migrating` pin `to`.
fn would_drop(ctx: &Context, migrating: &[&Path], to: &MethodVersion) -> Result<Vec<MethodVersion>, OpsError> {
    let needed = super::needs(ctx)?;
    let Some(lock) = Lockfile::read(&lock_path(ctx)?)? else {
        return Ok(Vec::new());
    };
    Ok(not_kept(&lock, |v| {
        v == to
            || needed
                .get(v)
                .is_some_and(|members| members.iter().any(|m| !migrating.contains(&m.as_path())))
    }))
}

/// Applies one member's part of a superbuild-wide plan in its own transaction (its tool state,
/// its index, its journal): planned again from the files as they are now, and applied only if
/// that is still the reviewed part. Returns the commit.
fn migrate_member(
    mm: &mut MemberMigration,
    to: &MethodVersion,
    entry: &LockEntry,
    reviewed: Option<&migrate::digest::PlanDigest>,
    requires: bool,
    settings: &MigrateSettings,
) -> Result<Option<String>, OpsError> {
    let planned = mm.plan.clone().expect("a planned member has a plan");
    let from = mm.from.clone().unwrap_or_else(|| planned.from.clone());
    let tx = migrate::Transaction::begin(
        &mm.repo,
        &Journal {
            from,
            to: to.clone(),
            step: None,
        },
        &[],
    )?;
    let result = (|| -> Result<Option<String>, OpsError> {
        let plan = migrate::plan(&mm.repo, &planned.before, to, &request(settings, requires))?;
        let now = migrate::digest::digest(&mm.repo, &plan, entry);
        if let Some(reviewed) = reviewed
            && reviewed.hex != now.hex
        {
            return Err(MigrateError::PlanChanged {
                reviewed: reviewed.id(),
                now: now.id(),
                changes: migrate::digest::diff(&reviewed.inputs, &now.inputs),
            }
            .into());
        }
        mm.plan = Some(plan.clone());
        Ok(migrate::apply(&plan, !settings.no_commit)?)
    })();
    match result {
        Ok(commit) => {
            tx.commit();
            Ok(commit)
        }
        Err(e) => Err(rolled_back(tx, e)),
    }
}
