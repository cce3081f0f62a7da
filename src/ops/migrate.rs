//! `a2c migrate version --to V`: preconditions → snapshot → obtain V's assets (lock +
//! install) → plan from V's manifest → apply (moves, adoption, one commit) — restoring the
//! snapshot on any failure before the commit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{OpsError, cache, lock_path, network, registry_location};
use crate::lock::{LockEntry, Lockfile};
use crate::method::{METHOD_NAME, MethodManifest};
use crate::migrate::{self, Journal, MigrateError, Plan, Snapshot, git};
use crate::registry::resolve::{ResolveOptions, plan as resolve_plan};
use crate::store::{InstallOptions, Reporter};
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
}

#[derive(Debug)]
pub struct MigrateOutcome {
    pub plan: Plan,
    /// `None` when V's manifest could not be read without installing (dry run only).
    pub requires_canonical: Option<bool>,
    pub installed: Option<PathBuf>,
    pub commit: Option<String>,
    pub resumed: bool,
    pub noop: bool,
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
    let repo = ctx.require_repo()?.to_path_buf();
    if !git::is_work_tree(&repo) {
        return Err(MigrateError::NotGit { repo }.into());
    }
    let state = ToolStateRoot::detect(&repo)?.ok_or_else(|| WorkspaceError::NotAdopted { repo: repo.clone() })?;
    // Half-migrated repositories may hold the record only in the legacy root: read that one then.
    let record_path = [
        state.adoption_path(),
        repo.join(LEGACY_ROOT).join(crate::workspace::adoption::ADOPTION_FILE),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .ok_or_else(|| WorkspaceError::NotAdopted { repo: repo.clone() })?;
    let record = crate::workspace::AdoptionRecord::read(&record_path).map_err(WorkspaceError::from)?;
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
    if settings.dry_run {
        let requires = peek_manifest(ctx, &to, settings)?.map(|m| m.requires_canonical_root());
        let plan = migrate::plan(
            &repo,
            &before,
            &to,
            requires.unwrap_or(false),
            settings.method_ref.clone(),
            settings.delivery,
        )?;
        let noop = plan.is_noop() && requires.is_some();
        return Ok(MigrateOutcome {
            plan,
            requires_canonical: requires,
            installed: None,
            commit: None,
            resumed,
            noop,
        });
    }
    let snapshot = Snapshot::take(&repo)?;
    Journal {
        from: from.clone(),
        to: to.clone(),
    }
    .write(&repo)?;
    let result = (|| -> Result<MigrateOutcome, OpsError> {
        let installed = ensure_installed(ctx, &to, settings, reporter)?;
        crate::testhook::fail_point(crate::testhook::MIGRATE_AFTER_INSTALL).map_err(MigrateError::Injected)?;
        let manifest = MethodManifest::read_tree(&installed)
            .map_err(|e| OpsError::Config(format!("cannot read the manifest of {to}: {e}")))?;
        let plan = migrate::plan(
            &repo,
            &before,
            &to,
            manifest.requires_canonical_root(),
            settings.method_ref.clone(),
            settings.delivery,
        )?;
        let noop = plan.is_noop();
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
        })
    })();
    match result {
        Ok(out) => {
            Journal::remove(&repo);
            Ok(out)
        }
        Err(e) => {
            snapshot.restore()?;
            Journal::remove(&repo);
            Err(e)
        }
    }
}

/// Adds V to the lock (W's in a superbuild, else R's) when missing and installs it. Offline,
/// the lock entry may come from a vendor manifest in `--from DIR`.
fn ensure_installed(
    ctx: &Context,
    version: &MethodVersion,
    settings: &MigrateSettings,
    reporter: &dyn Reporter,
) -> Result<PathBuf, OpsError> {
    let lock_path = lock_path(ctx)?;
    let mut lock = Lockfile::read(&lock_path)?.unwrap_or_default();
    let location = if settings.offline {
        None
    } else {
        registry_location(ctx, None)?
    };
    let client = std::sync::Arc::new(network(ctx, None)?);
    if lock.get(version).is_none() {
        match (
            settings.offline,
            settings.from.as_deref().and_then(|d| vendored_entry(d, version)),
        ) {
            (true, Some(entry)) => lock.upsert(entry),
            (true, None) => {
                return Err(OpsError::LockWouldChange {
                    path: lock_path,
                    versions: vec![version.clone()],
                    flag: "--offline",
                });
            }
            (false, _) => {
                let location = location.as_ref().ok_or(crate::registry::RegistryError::NoRegistry)?;
                let index = crate::registry::read_index(location, &client)?;
                let needed: BTreeSet<MethodVersion> = [version.clone()].into();
                lock = resolve_plan(&needed, &lock, Some((&index, location)), ResolveOptions::default())?.lock;
            }
        }
        lock.write(&lock_path)?;
    }
    let entry = lock.get(version).cloned().expect("locked above");
    let store = super::store(ctx)?;
    let options = InstallOptions {
        cache: cache(&store)?,
        network: (!settings.offline).then_some(client),
        store: store.clone(),
        offline: settings.offline,
        from: super::from_dir(settings.from.as_deref())?,
        jobs: 1,
        limits: crate::archive::Limits::from_env().map_err(OpsError::Config)?,
        registry_dir: super::registry_dir(ctx),
    };
    crate::store::install::install(std::slice::from_ref(&entry), &options, reporter)?;
    Ok(store.join(version.to_string()))
}

/// The lock entry of `version` from `dir/a2c-vendor.json`, if it lists it.
fn vendored_entry(dir: &Path, version: &MethodVersion) -> Option<LockEntry> {
    let text = fs_err::read_to_string(dir.join(super::vendor::VENDOR_MANIFEST)).ok()?;
    let doc: serde_json::Value = serde_json::from_str(&text).ok()?;
    let b = doc["bundles"]
        .as_array()?
        .iter()
        .find(|b| b["version"].as_str() == Some(&version.to_string()))?;
    Some(LockEntry {
        name: METHOD_NAME.into(),
        version: version.clone(),
        source: b["source"].as_str()?.to_string(),
        sha256: crate::util::digest::Sha256::parse(b["sha256"].as_str()?).ok()?,
        size: b["size"].as_u64()?,
        format: serde_json::from_value(b["format"].clone()).ok()?,
        tree: None,
    })
}

/// V's manifest without changing anything: from the store when installed, else from a local
/// bundle (cache, `--from`, file registry) extracted into a temporary directory.
fn peek_manifest(
    ctx: &Context,
    version: &MethodVersion,
    settings: &MigrateSettings,
) -> Result<Option<MethodManifest>, OpsError> {
    let store = super::store(ctx)?;
    if let Ok(m) = MethodManifest::read_tree(&store.join(version.to_string())) {
        return Ok(Some(m));
    }
    let locked = Lockfile::read(&lock_path(ctx)?)?.and_then(|l| l.get(version).cloned());
    let entry = match locked {
        Some(e) => e,
        None => {
            // Not locked yet: the registry's index says which bundle it would be (read-only).
            let Some(location) = registry_location(ctx, None)?.filter(|_| !settings.offline) else {
                return Ok(None);
            };
            let index = crate::registry::read_index(&location, &network(ctx, None)?)?;
            let needed: BTreeSet<MethodVersion> = [version.clone()].into();
            match resolve_plan(
                &needed,
                &Lockfile::default(),
                Some((&index, &location)),
                ResolveOptions::default(),
            ) {
                Ok(p) => p.lock.methods.into_iter().next().expect("one version resolved"),
                Err(_) => return Ok(None),
            }
        }
    };
    let mut bundles = vec![cache(&store)?.path(&entry.sha256)];
    if let Some(dir) = &settings.from {
        bundles.extend(crate::store::cache::files_of_size(dir, entry.size));
    }
    bundles.extend(crate::registry::location::file_path(&entry.source));
    for path in bundles.into_iter().filter(|p| p.is_file()) {
        let tmp = tempfile::tempdir()?;
        let file = fs_err::File::open(&path)?;
        if let Ok(x) = crate::archive::extract(file, entry.format, tmp.path(), &crate::archive::Limits::default())
            && x.bundle_sha256 == entry.sha256
            && let Ok(m) = MethodManifest::read_tree(&x.root)
        {
            return Ok(Some(m));
        }
    }
    Ok(None)
}
