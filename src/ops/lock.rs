//! `a2c lock`: resolve the union of write contracts against the registry and write `a2c.lock`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::config::repo_config_value;
use super::{OpsError, Session, lock_path, needs, network, registry_config};
use crate::lock::Lockfile;
use crate::registry::lock_plan::{LockPlan, LockPlanOptions, plan};
use crate::util::version::MethodVersion;
use crate::workspace::Context;

#[derive(Debug, Clone, Default)]
pub struct LockOptions {
    pub registry: Option<String>,
    pub allow_expired: bool,
    pub update: bool,
    /// With `update`: only these versions (empty: every needed one).
    pub update_only: Vec<MethodVersion>,
    pub check: bool,
    /// `--from DIR`: a directory `a2c vendor` wrote, whose manifest lists locked entries.
    pub from: Option<PathBuf>,
}

/// What `a2c lock` did; serialized as its `--json` document (docs/json/lock.schema.json).
#[derive(Debug, serde::Serialize)]
pub struct LockOutcome {
    #[serde(rename = "lock")]
    pub path: PathBuf,
    pub needed: BTreeSet<MethodVersion>,
    /// `--check`: needed but not locked.
    pub missing: Vec<MethodVersion>,
    /// `--check`: locked but not needed.
    pub unused: Vec<MethodVersion>,
    /// `added`, `updated`, `removed` (the lock itself is not part of the document).
    #[serde(flatten)]
    pub plan: LockPlan,
    #[serde(rename = "written")]
    pub wrote: bool,
    /// New or updated entries whose `source` could not be fetched, with why.
    #[serde(serialize_with = "unfetchable")]
    pub unfetchable: Vec<(MethodVersion, String)>,
    /// Locked versions the registry has yanked since (they stay locked and install; new locks
    /// refuse them). Known only when this run read the registry.
    pub yanked: Vec<MethodVersion>,
    /// Locked versions the registry no longer lists (removed from it): they stay locked and
    /// install from a cache, mirror or vendored copy. Known only when this run read the
    /// registry.
    pub gone: Vec<MethodVersion>,
    /// Locked versions the registry serves a newer revision of (a Conan remote): they stay
    /// locked at their revision; `a2c lock --update V` takes the newest.
    pub revised: Vec<MethodVersion>,
    /// What reading the registry passed over (OCI tags holding other artifacts, a capped
    /// listing), for `-v`.
    #[serde(skip)]
    pub notes: Vec<String>,
    /// Versions taken from a vendor manifest while keys are pinned: the keys sign registry
    /// indexes, never a manifest, so these are trusted as whoever carried it (said so).
    #[serde(skip)]
    pub unsigned_from_manifest: Vec<MethodVersion>,
}

/// `[{"version", "reason"}]`.
fn unfetchable<S: serde::Serializer>(list: &[(MethodVersion, String)], s: S) -> Result<S::Ok, S::Error> {
    crate::util::pairs_as(list, "version", "reason", s)
}

impl LockOutcome {
    /// `--check` passes when nothing is missing or unused.
    pub fn up_to_date(&self) -> bool {
        self.missing.is_empty() && self.unused.is_empty()
    }
}

pub fn lock(session: &super::Session, ctx: &Context, options: &LockOptions) -> Result<LockOutcome, OpsError> {
    let needed: BTreeSet<MethodVersion> = needs(ctx)?.into_keys().collect();
    if let Some(v) = options.update_only.iter().find(|v| !needed.contains(*v)) {
        return Err(OpsError::Config(format!(
            "--update {v}: no member needs {v}, so the lock has nothing to update for it"
        )));
    }
    let path = lock_path(ctx)?;
    let current = Lockfile::read(&path)?.unwrap_or_default();
    let locked: BTreeSet<MethodVersion> = current.methods.iter().map(|m| m.version.clone()).collect();
    let missing: Vec<_> = needed.difference(&locked).cloned().collect();
    let unused: Vec<_> = locked.difference(&needed).cloned().collect();
    if options.check {
        let plan = LockPlan {
            lock: current,
            ..LockPlan::default()
        };
        return Ok(LockOutcome {
            path,
            needed,
            missing,
            unused,
            plan,
            wrote: false,
            unfetchable: Vec::new(),
            yanked: Vec::new(),
            gone: Vec::new(),
            revised: Vec::new(),
            notes: Vec::new(),
            unsigned_from_manifest: Vec::new(),
        });
    }
    let from = super::from_dir(options.from.as_deref())?;
    // A version the lock lacks may come from a vendor manifest (`--from DIR`): its entry exactly
    // as it was locked where the bundles were vendored. Offline, before any registry.
    let mut current = current;
    let mut vendored = Vec::new();
    if let Some(dir) = &from
        && !missing.is_empty()
        && let Some(manifest) = crate::lock::vendored::VendorManifest::read(dir)?
    {
        for v in &missing {
            if let Some(entry) = manifest.entry(v) {
                current.upsert(entry);
                vendored.push(v.clone());
            }
        }
    }
    let missing: Vec<MethodVersion> = missing.into_iter().filter(|v| !vendored.contains(v)).collect();
    let unsigned_from_manifest = match super::trusted_keys(ctx).is_empty() {
        true => Vec::new(),
        false => vendored.clone(),
    };
    // Offline, the registries are read only when each is a directory on this machine (no
    // network).
    let registries = super::registries(session, ctx, options.registry.as_deref())?;
    let remote = registries.iter().find(|r| r.location.local_dir().is_none());
    let local = !registries.is_empty() && remote.is_none();
    if session.offline() && !local && (options.update || !missing.is_empty()) {
        let registry = match remote {
            Some(r) => format!("the registry `{}` needs the network", r.location),
            None => "no registry is configured".into(),
        };
        let vendor = match (&from, options.update) {
            (_, true) => String::new(),
            (Some(dir), false) => format!("; `{}` (--from) does not list it", dir.display()),
            (None, false) => "; no --from DIR with a vendor manifest was given".into(),
        };
        return Err(OpsError::Offline {
            what: match options.update {
                true => format!("--update re-resolves from the registry, and {registry}"),
                false => format!(
                    "the lock lacks {} needed by the members: {registry}{vendor}",
                    super::join_versions(&missing)
                ),
            },
        });
    }
    // The registries are read when something must be resolved, or to check the locked entries
    // against them when any is configured.
    let registries = match session.offline() && !local {
        true => Vec::new(),
        false => registries,
    };
    let client = network(session, ctx, options.registry.as_deref())?;
    let must = options.update || !missing.is_empty() || options.registry.is_some();
    let mut indexes = Vec::new();
    for r in &registries {
        match super::read_index_for(ctx, r, &client, options.allow_expired, Some(&needed)) {
            Ok(index) => indexes.push(index),
            Err(e) if must => return Err(e),
            // Only checking locked entries: an unreachable registry is no error (and with one
            // unread, none is checked: a version would seem gone from the others), but a
            // signature that fails is (fail closed).
            Err(
                e @ OpsError::Registry(
                    crate::registry::RegistryError::Signature(_)
                    | crate::registry::RegistryError::Expired { .. }
                    | crate::registry::RegistryError::Rollback { .. },
                ),
            ) => return Err(e),
            Err(_) => {
                indexes.clear();
                break;
            }
        }
    }
    let notes: Vec<String> = indexes
        .iter()
        .flat_map(|i| {
            i.foreign
                .iter()
                .map(|f| format!("passed over: {}", f.what))
                .chain(i.truncated.clone())
        })
        .collect();
    let sources = match indexes.len() == registries.len() {
        true => super::sources(&registries, &indexes),
        false => Vec::new(),
    };
    let plan = plan(
        &needed,
        &current,
        &sources,
        LockPlanOptions {
            update: options.update,
            only: (!options.update_only.is_empty()).then(|| options.update_only.iter().cloned().collect()),
            prune: true,
        },
    )
    .map_err(|e| super::with_members(ctx, e))?;
    let mut plan = plan;
    // A package index gives no tree digest: the new wheels are fetched into the cache and
    // extracted once, so that the lock pins their tree as for any bundle (and the install
    // that follows finds them cached).
    if !session.offline() && !options.check {
        pin_trees(session, ctx, options.registry.as_deref(), &mut plan)?;
    }
    super::relative_sources(session, ctx, options.registry.as_deref(), &mut plan);
    // Entries taken from the vendor manifest are additions to the lock on disk.
    plan.added.extend(vendored);
    plan.added.sort();
    plan.added.dedup();
    let recorded = (plan.lock.index_serial, plan.lock.index_serials.clone());
    for (registry, index) in registries.iter().zip(&indexes) {
        super::record_serial(ctx, &mut plan.lock, registry, index);
    }
    let wrote = plan.changed()
        || !path.exists()
        || (plan.lock.index_serial, &plan.lock.index_serials) != (recorded.0, &recorded.1);
    if wrote {
        plan.lock.write(&path)?;
    }
    let unfetchable = match session.offline() {
        true => Vec::new(),
        false => check_sources(&plan, &client),
    };
    let yanked = plan.yanked.clone();
    let gone = plan.gone.clone();
    let revised = plan.revised.clone();
    Ok(LockOutcome {
        revised,
        path,
        needed,
        missing: Vec::new(),
        unused: Vec::new(),
        plan,
        wrote,
        unfetchable,
        yanked,
        gone,
        notes,
        unsigned_from_manifest,
    })
}

/// The tree digest of every wheel entry that has none (a package index gives no tree digest):
/// its bundle fetched into the cache (verified against the entry) and extracted into a scratch
/// directory with the archive policy of any install — a wheel that would not install fails,
/// naming it. So the lock pins the tree whichever command locked the wheel (`lock`, or an
/// `install` that locked it), and an entry an older a2c wrote without one is completed
/// (`completed`). `flag`: the `--registry` the user named, whose host the credentials go to
/// (as for the index read that found these entries).
pub(super) fn pin_trees(
    session: &super::Session,
    ctx: &Context,
    flag: Option<&str>,
    plan: &mut LockPlan,
) -> Result<(), OpsError> {
    let wanting: Vec<usize> = plan
        .lock
        .methods
        .iter()
        .enumerate()
        .filter(|(_, m)| m.tree.is_none() && m.format == crate::archive::Format::Wheel)
        .map(|(i, _)| i)
        .collect();
    if wanting.is_empty() {
        return Ok(());
    }
    let options = super::install_context(session, ctx, None, 1, std::sync::Arc::new(network(session, ctx, flag)?))?;
    for i in wanting {
        let entry = &plan.lock.methods[i];
        let cached = crate::store::source::fetch_to_cache(entry, &options, &crate::store::options::Silent)?;
        let scratch = tempfile::tempdir()?;
        let extracted = crate::archive::extract(
            fs_err::File::open(&cached)?,
            entry.format,
            scratch.path(),
            &options.limits,
        )
        .map_err(|e| OpsError::Config(format!("version {}: its wheel does not install: {e}", entry.version)))?;
        plan.lock.methods[i].tree = Some(extracted.tree);
        let version = &plan.lock.methods[i].version;
        if !plan.added.contains(version) && !plan.updated.contains(version) {
            plan.completed.push(version.clone());
        }
    }
    Ok(())
}

/// One request per new or updated HTTP(S) entry: can what the lock now records be fetched?
/// (A registry behind a redirect, or with a wrong base URL, would otherwise fail only at
/// install time, on another machine.)
pub fn check_sources(plan: &LockPlan, client: &crate::net::LazyClient) -> Vec<(MethodVersion, String)> {
    let mut out = Vec::new();
    for version in plan.added.iter().chain(&plan.updated) {
        let Some(entry) = plan.lock.get(version) else { continue };
        let Some((url, bearer)) = crate::registry::bundle_location(entry, client.network(), None).into_download()
        else {
            continue;
        };
        let result = client.client().and_then(|c| c.probe(&url, bearer.as_ref()));
        if let Err(e) = result {
            out.push((version.clone(), e.to_string()));
        }
    }
    out
}

/// When the registry is a directory named by a relative path (`registry: ../reg` in the marker
/// or a repository's config, or a relative `--registry`/`A2C_REGISTRY`), the entries `plan`
/// adds or updates are locked by paths relative to the lock file: a committed lock then holds
/// no machine's absolute paths, and works wherever the superbuild and its registry are checked
/// out side by side.
pub fn relative_sources(
    session: &Session,
    ctx: &Context,
    flag: Option<&str>,
    plan: &mut crate::registry::lock_plan::LockPlan,
) {
    let text = match (flag, &session.registry, &ctx.workspace) {
        (Some(f), _, _) => Some(f.to_string()),
        (None, Some(env), _) => Some(env.clone()),
        (None, None, Some(ws)) => ws.marker.registries.first().cloned(),
        (None, None, None) => registry_config(ctx).and_then(|c| repo_config_value(&c, "registry")),
    };
    let Some(dir) = lock_path(ctx).ok().and_then(|p| p.parent().map(Path::to_path_buf)) else {
        return;
    };
    // Each entry by the registry it came from: the one it records (several in the marker), else
    // the one registry.
    let changed: Vec<MethodVersion> = plan
        .added
        .iter()
        .chain(&plan.updated)
        .filter(|v| {
            let recorded = plan.lock.get(v).and_then(|e| e.registry.clone());
            recorded
                .or_else(|| text.clone())
                .is_some_and(|t| crate::lock::is_relative_source(&t))
        })
        .cloned()
        .collect();
    plan.lock.relativize_sources(&changed, &dir);
}
