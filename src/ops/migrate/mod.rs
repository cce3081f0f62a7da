//! `a2c migrate version --to V`: preconditions → snapshot → obtain V's assets (lock +
//! install) → plan from V's manifest → apply (moves, adoption, one commit) — restoring the
//! snapshot on any failure before the commit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{OpsError, cache, lock_path, network};
use crate::lock::{LockEntry, Lockfile};
use crate::method::MethodManifest;
use crate::relocate::{self, Journal, Keep, MigrateError, Plan, git};
use crate::store::Reporter;
use crate::util::version::MethodVersion;
use crate::workspace::state_root::{CANONICAL_ROOT, LEGACY_ROOT};
use crate::workspace::{Context, Delivery, ToolStateRoot, WorkspaceError};

mod all;
mod outcome;

pub use all::{MemberMigration, MemberStatus, MigrateAllOutcome, migrate_all};
pub use outcome::MigrateOutcome;
use outcome::*;

#[derive(Debug, Clone, Default)]
pub struct MigrateOptions {
    pub to: Option<MethodVersion>,
    pub dry_run: bool,
    pub no_commit: bool,
    pub allow_downgrade: bool,
    pub from: Option<PathBuf>,
    pub method_ref: Option<String>,
    pub delivery: Option<Delivery>,
    pub keep: Option<Keep>,
    /// Accept a signed index past its `expires`.
    pub allow_expired: bool,
    /// `--confirm sha256:<hex>`: apply only the plan with this digest (from a dry run).
    pub confirm: Option<String>,
    /// `--approve sha256:<hex>` (with `dry_run`): change nothing, but record that the user
    /// approved the plan with this digest (the CLI allows it only in a terminal), for
    /// `migrate_apply`.
    pub approve: Option<String>,
    /// Apply only a plan the user approved (`migrate_apply` of `a2c mcp`).
    pub approved_only: bool,
}

impl MigrateOptions {
    /// The command that approves `digest` for `dir` (in a terminal, where the user stands).
    pub fn approve_command(&self, dir: &Path, all: bool, digest: &str) -> String {
        let to = self.to.as_ref().map(|v| v.to_string()).unwrap_or_default();
        format!(
            "a2c -C {} migrate version --to {to}{} --approve {digest}",
            crate::util::text::shell_quoted(dir),
            if all { " --all" } else { "" },
        )
    }
}

/// A target the registry lacks (a typo): the versions its hint offers are only those a
/// migration from `from` may take — newer ones, unless `--allow-downgrade` — so that the
/// version picked from it is not refused next as a downgrade.
fn newer_only(e: OpsError, from: &MethodVersion, settings: &MigrateOptions) -> OpsError {
    match e {
        OpsError::Registry(crate::registry::RegistryError::NotPublished {
            version,
            location,
            available,
            pinned_by,
            other,
        }) if !settings.allow_downgrade && available.iter().any(|v| v > from) => {
            crate::registry::RegistryError::NotPublished {
                available: available.iter().filter(|v| *v > from).cloned().collect(),
                version,
                location,
                pinned_by,
                other,
            }
            .into()
        }
        other => other,
    }
}

/// Refuses a reviewed (or approved) digest that is not the plan's now, naming what changed.
fn reviewed_is(reviewed: &str, now: &relocate::digest::PlanDigest, repos: &[&Path]) -> Result<(), MigrateError> {
    if reviewed == now.id() {
        return Ok(());
    }
    Err(MigrateError::PlanChanged {
        reviewed: reviewed.to_string(),
        now: now.id(),
        changes: relocate::digest::changes(repos, reviewed, now),
    })
}

impl From<MigrateError> for OpsError {
    fn from(e: MigrateError) -> Self {
        OpsError::Migrate(Box::new(e))
    }
}

pub fn migrate(
    session: &super::Session,
    ctx: &Context,
    settings: &MigrateOptions,
    reporter: &dyn Reporter,
) -> Result<MigrateOutcome, OpsError> {
    let (to, from_dir) = target(settings)?;
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
        let Resolved {
            entry, added, requires, ..
        } = lock_and_install(session, ctx, &to, settings, from_dir.as_deref(), None)
            .map_err(|e| newer_only(e, &from, settings))?;
        let plan = relocate::plan(&repo, &before, &to, &request(requires.unwrap_or(false)))?;
        let noop = plan.is_noop() && requires.is_some();
        let digest = relocate::digest::digest(&repo, &plan, &entry);
        // Kept under .git/ so that a confirmation that no longer matches can say what changed.
        let _ = relocate::digest::remember(&repo, &digest);
        if let Some(approved) = &settings.approve {
            reviewed_is(approved, &digest, &[repo.as_path()])?;
            relocate::digest::approve(&repo, &digest)?;
        }
        // Where V's assets already are, when the store holds them (the run would not install).
        let store = super::store(ctx)?;
        let installed = store.is_installed(&entry).then(|| store.version_dir(&entry.version));
        return Ok(MigrateOutcome {
            digest: Some(digest.id()),
            plan,
            requires_canonical: requires,
            installed,
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
    let tx = relocate::Transaction::begin(
        &repo,
        &Journal {
            from: from.clone(),
            to: to.clone(),
            step: Some(relocate::STEP_ASSETS.into()),
        },
        &others,
    )?;
    let result = (|| -> Result<MigrateOutcome, OpsError> {
        let (installed, added) = ensure_installed(session, ctx, &to, settings, from_dir.as_deref(), reporter)
            .map_err(|e| newer_only(e, &from, settings))?;
        crate::testhook::fail_point(crate::testhook::MIGRATE_AFTER_INSTALL).map_err(MigrateError::Injected)?;
        let manifest = MethodManifest::read_tree(&installed)
            .map_err(|e| OpsError::Config(format!("cannot read the manifest of {to}: {e}")))?;
        runs_here(Some(&manifest), &to)?;
        let plan = relocate::plan(&repo, &before, &to, &request(manifest.requires_canonical_root()))?;
        let noop = plan.is_noop();
        let entry = Lockfile::read(&lock_path)?
            .and_then(|l| l.get(&to).cloned())
            .ok_or_else(|| OpsError::Config(format!("{to} is not in the lock after installing it")))?;
        let digest = relocate::digest::digest(&repo, &plan, &entry);
        // A reviewed plan is applied only if nothing it depends on changed since the review.
        if let Some(reviewed) = &settings.confirm {
            reviewed_is(reviewed, &digest, &[repo.as_path()])?;
        }
        if settings.approved_only && !relocate::digest::is_approved(&repo, &digest) {
            return Err(MigrateError::NotApproved {
                digest: digest.id(),
                approve: settings.approve_command(&repo, false, &digest.id()),
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
            relocate::apply(&plan, !settings.no_commit)?
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
        Ok(mut out) => {
            tx.commit();
            if let Some(digest) = &out.digest {
                relocate::digest::consume_id(&repo, digest);
            }
            out.warnings.extend(crate::ops::agents::after_migrate(ctx));
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
fn rolled_back(tx: relocate::Transaction, e: OpsError) -> OpsError {
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
fn prepare(repo: &Path, to: &MethodVersion, settings: &MigrateOptions, within: &Path) -> Result<Prepared, OpsError> {
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

/// `--to V` (required) and `--from DIR` (checked before anything is read or written).
fn target(settings: &MigrateOptions) -> Result<(MethodVersion, Option<PathBuf>), OpsError> {
    let to = settings
        .to
        .clone()
        .ok_or_else(|| OpsError::Config("--to V is required".into()))?;
    Ok((to, super::from_dir(settings.from.as_deref())?))
}

/// V as a migration needs it before planning: its lock entry, and its manifest.
struct Resolved {
    entry: LockEntry,
    /// Whether V was (or, dry, would be) added to the lock.
    added: bool,
    /// The installed tree (a real run).
    installed: Option<PathBuf>,
    /// Whether V's manifest requires the canonical tool state root; `None` when a dry run
    /// could not read it without downloading V.
    requires: Option<bool>,
}

/// Locks V exactly as the real run would (lock, `--from`, registry; a V this a2c cannot
/// run refused), and with `install` installs it (the store only: the lock is the caller's);
/// without, a dry run reads its manifest only when V is local.
fn lock_and_install(
    session: &super::Session,
    ctx: &Context,
    to: &MethodVersion,
    settings: &MigrateOptions,
    from_dir: Option<&Path>,
    install: Option<&dyn Reporter>,
) -> Result<Resolved, OpsError> {
    let (entry, added) = lock_entry(session, ctx, to, settings, from_dir)?;
    let (installed, manifest) = match install {
        None => (None, peek_manifest(session, ctx, &entry, from_dir)?),
        Some(reporter) => {
            let tree = install_entry(session, ctx, &entry, from_dir, reporter)?;
            let manifest = MethodManifest::read_tree(&tree)
                .map_err(|e| OpsError::Config(format!("cannot read the manifest of {to}: {e}")))?;
            (Some(tree), Some(manifest))
        }
    };
    runs_here(manifest.as_ref(), to)?;
    Ok(Resolved {
        entry,
        added,
        installed,
        requires: manifest.as_ref().map(MethodManifest::requires_canonical_root),
    })
}

fn request(settings: &MigrateOptions, requires_canonical: bool) -> relocate::Request {
    relocate::Request {
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
    settings: &MigrateOptions,
    from: Option<&Path>,
) -> Result<(LockEntry, bool), OpsError> {
    let lock_path = lock_path(ctx)?;
    let lock = Lockfile::read(&lock_path)?.unwrap_or_default();
    if let Some(entry) = lock.get(version) {
        return Ok((entry.clone(), false));
    }
    if session.offline() {
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
    let planned = super::plan_missing(
        session,
        ctx,
        None,
        &lock,
        &needed,
        &network(session, ctx, None)?,
        settings.allow_expired,
    )
    .map_err(|e| match e {
        // `migrate version` takes no `--registry`: its hint does not name one.
        OpsError::NoRegistry { config, .. } => OpsError::NoRegistry { config, flag: false },
        other => other,
    })?;
    let entry = planned.lock.get(version).cloned().expect("resolved above");
    Ok((entry, true))
}

/// Adds V to the lock (W's in a superbuild, else R's) when missing and installs it. Returns
/// the installed tree and whether the lock gained V.
fn ensure_installed(
    session: &super::Session,
    ctx: &Context,
    version: &MethodVersion,
    settings: &MigrateOptions,
    from: Option<&Path>,
    reporter: &dyn Reporter,
) -> Result<(PathBuf, bool), OpsError> {
    let (entry, added) = lock_entry(session, ctx, version, settings, from)?;
    if added {
        add_to_lock(ctx, &entry)?;
    }
    Ok((install_entry(session, ctx, &entry, from, reporter)?, added))
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
    from: Option<&Path>,
    reporter: &dyn Reporter,
) -> Result<PathBuf, OpsError> {
    let client = std::sync::Arc::new(network(session, ctx, None)?);
    let options = super::install_context(session, ctx, from, 1, client)?;
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
    if let crate::lock::BundleLocation::File(path) =
        crate::registry::bundle_location(entry, &session.network, lock_dir.as_deref())
    {
        bundles.push(path);
    }
    for path in bundles.into_iter().filter(|p| p.is_file()) {
        // The digest first: only the locked bundle itself is ever extracted (a file of
        // another content — a committed lock's relative source may name anything — is passed
        // over unread past its size), then under the limits any install has, into a temporary
        // directory outside R, because a dry run writes nothing there (not even a store).
        if !entry.is_bundle_at(&path) {
            continue;
        }
        let tmp = tempfile::tempdir()?;
        let file = fs_err::File::open(&path)?;
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
