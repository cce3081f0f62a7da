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
    /// What the plan must say before it runs (a detached HEAD).
    pub warnings: Vec<String>,
    /// The plan's digest (`sha256:<hex>`): what a dry run shows for review, and what the
    /// real run applied.
    pub digest: Option<String>,
}

impl From<MigrateError> for OpsError {
    fn from(e: MigrateError) -> Self {
        OpsError::Migrate(Box::new(e))
    }
}

pub fn migrate(ctx: &Context, settings: &MigrateSettings, reporter: &dyn Reporter) -> Result<MigrateOutcome, OpsError> {
    let to = settings
        .to
        .clone()
        .ok_or_else(|| OpsError::Config("--to V is required".into()))?;
    // `--from` is checked before anything is read or written.
    let from_dir = super::from_dir(settings.from.as_deref())?;
    let repo = ctx.require_repo()?.to_path_buf();
    if !git::is_work_tree(&repo) {
        return Err(MigrateError::NotGit { repo }.into());
    }
    let state = ToolStateRoot::detect(&repo)?.ok_or_else(|| WorkspaceError::NotAdopted { repo: repo.clone() })?;
    if !state.has_adoption() {
        return Err(WorkspaceError::NotAdopted { repo: repo.clone() }.into());
    }
    let record = state.read_adoption().map_err(WorkspaceError::from)?;
    // Resume an interrupted migration to the same version; refuse one to another.
    let journal = Journal::read(&repo);
    let resumed = match &journal {
        Some(j) if j.to == to => true,
        Some(j) => return Err(MigrateError::OtherInProgress { journal: j.to.clone() }.into()),
        None => false,
    };
    let from = journal.as_ref().map_or(record.tool_version.clone(), |j| j.from.clone());
    if to < from && !settings.allow_downgrade {
        return Err(MigrateError::Downgrade { from, to }.into());
    }
    if !resumed {
        let dirty = git::dirty(&repo, &[LEGACY_ROOT, CANONICAL_ROOT])?;
        if !dirty.is_empty() {
            return Err(MigrateError::Dirty { paths: dirty }.into());
        }
    }
    let mut before = record.clone();
    before.tool_version = from.clone();
    let request = |requires_canonical: bool| migrate::Request {
        requires_canonical,
        method_ref: settings.method_ref.clone(),
        delivery: settings.delivery,
        keep: settings.keep,
    };
    let lock_path = lock_path(ctx)?;
    let in_workspace = ctx.workspace.is_some();
    let mut warnings = Vec::new();
    if git::detached_head(&repo) && !settings.no_commit {
        warnings.push(format!(
            "HEAD of `{}` is detached: the migration commit will be on no branch (check out a branch first, or pass --no-commit)",
            repo.display()
        ));
    }
    if settings.dry_run {
        // V is resolved exactly as the real run would (lock, `--from`, registry) and fails
        // the same way; only the download of a bundle that is nowhere local is left out.
        let (entry, added) = lock_entry(ctx, &to, settings, from_dir.as_deref())?;
        let manifest = peek_manifest(ctx, &entry, from_dir.as_deref())?;
        if let Some(min) = manifest.as_ref().and_then(|m| m.needs_newer_a2c()) {
            return Err(crate::store::StoreError::NeedsNewerA2c {
                version: to.clone(),
                min: min.clone(),
                running: crate::A2C_VERSION.into(),
            }
            .into());
        }
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
            workspace_lock: (added && in_workspace).then_some(lock_path),
            warnings: if noop { Vec::new() } else { warnings },
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
        },
        &others,
    )?;
    let result = (|| -> Result<MigrateOutcome, OpsError> {
        let (installed, added) = ensure_installed(ctx, &to, settings, from_dir.as_deref(), reporter)?;
        crate::testhook::fail_point(crate::testhook::MIGRATE_AFTER_INSTALL).map_err(MigrateError::Injected)?;
        let manifest = MethodManifest::read_tree(&installed)
            .map_err(|e| OpsError::Config(format!("cannot read the manifest of {to}: {e}")))?;
        if let Some(min) = manifest.needs_newer_a2c() {
            return Err(crate::store::StoreError::NeedsNewerA2c {
                version: to.clone(),
                min: min.clone(),
                running: crate::A2C_VERSION.into(),
            }
            .into());
        }
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
                changes: migrate::digest::changes(&repo, reviewed, &digest),
            }
            .into());
        }
        let commit = if noop {
            None
        } else {
            migrate::apply(&plan, !settings.no_commit)?
        };
        Ok(MigrateOutcome {
            plan,
            requires_canonical: Some(manifest.requires_canonical_root()),
            installed: Some(installed),
            commit,
            resumed,
            noop,
            workspace_lock: (added && in_workspace).then(|| lock_path.clone()),
            warnings: if noop { Vec::new() } else { warnings.clone() },
            digest: Some(digest.id()),
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
        Err(e) => match tx.rollback() {
            Ok(()) => Err(e),
            Err(restore) => Err(OpsError::RollbackFailed {
                original: Box::new(e),
                restore: restore.to_string(),
            }),
        },
    }
}

/// V's lock entry as an install would obtain it, without writing: from the lock; else, offline,
/// from a vendor manifest in `--from DIR`; else from the registry. `true` when it is not in
/// the lock yet.
fn lock_entry(
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
    let planned = super::resolve_missing(ctx, None, &lock, &needed, &network(ctx, None)?, settings.allow_expired)?;
    let entry = planned.lock.get(version).cloned().expect("resolved above");
    Ok((entry, true))
}

/// Adds V to the lock (W's in a superbuild, else R's) when missing and installs it. Returns
/// the installed tree and whether the lock gained V.
fn ensure_installed(
    ctx: &Context,
    version: &MethodVersion,
    settings: &MigrateSettings,
    from: Option<&Path>,
    reporter: &dyn Reporter,
) -> Result<(PathBuf, bool), OpsError> {
    let (entry, added) = lock_entry(ctx, version, settings, from)?;
    if added {
        let lock_path = lock_path(ctx)?;
        let mut lock = Lockfile::read(&lock_path)?.unwrap_or_default();
        lock.upsert(entry.clone());
        lock.write(&lock_path)?;
    }
    let client = std::sync::Arc::new(network(ctx, None)?);
    let options = super::install_options(ctx, settings.offline, from, 1, client)?;
    crate::store::install::install(std::slice::from_ref(&entry), &options, reporter)?;
    Ok((options.store.version_dir(version), added))
}

/// The lock entry of `version` from `dir/a2c-vendor.json`, if it lists it.
fn vendored_entry(dir: &Path, version: &MethodVersion) -> Result<Option<LockEntry>, OpsError> {
    Ok(crate::lock::vendored::VendorManifest::read(dir)?.and_then(|m| m.entry(version)))
}

/// V's manifest without changing anything: from the store when installed, else from a local
/// bundle (cache, `--from`, file registry) extracted into a temporary directory.
fn peek_manifest(ctx: &Context, entry: &LockEntry, from: Option<&Path>) -> Result<Option<MethodManifest>, OpsError> {
    let store = super::store(ctx)?;
    let installed = store.version_dir(&entry.version);
    if store.is_installed(entry)
        && let Ok(m) = MethodManifest::read_tree(&installed)
    {
        return Ok(Some(m));
    }
    let mut bundles = vec![cache(&store)?.path(&entry.sha256)];
    if let Some(dir) = from {
        bundles.extend(crate::store::cache::files_of_size(dir, entry.size));
    }
    if let crate::lock::BundleLocation::File(path) = entry.location() {
        bundles.push(path);
    }
    for path in bundles.into_iter().filter(|p| p.is_file()) {
        let tmp = tempfile::tempdir()?;
        let file = fs_err::File::open(&path)?;
        // The limits any install has; a temporary directory outside R, because a dry run
        // writes nothing there (not even a store).
        let limits = crate::archive::Limits::from_env().map_err(OpsError::Config)?;
        if let Ok(x) = crate::archive::extract(file, entry.format, tmp.path(), &limits)
            && x.bundle_sha256 == entry.sha256
            && let Ok(m) = MethodManifest::read_tree(&x.root)
        {
            return Ok(Some(m));
        }
    }
    Ok(None)
}
