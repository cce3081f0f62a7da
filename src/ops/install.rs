//! `a2c install`: the union of write contracts → the lock → verified installs in the store →
//! local pointers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{
    OpsError, Session, cache, lock_path, needing, network, no_registry, read_indexes, record_serial, registries,
    registry_dir, relative_sources, sources, with_members,
};
use crate::lock::Lockfile;
use crate::store::{self, InstallReport, Reporter};
use crate::util::version::MethodVersion;
use crate::workspace::{Context, LocalPointer};

#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    /// `--registry`: where missing versions are locked from, and the first place a locked
    /// bundle is looked for.
    pub registry: Option<String>,
    /// Accept a signed index past its `expires`.
    pub allow_expired: bool,
    pub locked: bool,
    /// `--frozen` (`--locked` and `--offline`): errors name the flag the user gave.
    pub frozen: bool,
    pub from: Option<PathBuf>,
    pub jobs: Option<usize>,
    /// `--link-mode` (else `A2C_LINK_MODE`).
    pub link_mode: Option<crate::store::trees::LinkMode>,
    /// `--reinstall [V…]`: `Some(empty)` means every needed version.
    pub reinstall: Option<Vec<MethodVersion>>,
    /// `--version V…`: install exactly these published versions into the store, pinned by a
    /// member or not; the lock, the members and their pointers are left as they are.
    pub versions: Vec<MethodVersion>,
}

#[derive(Debug)]
/// What `a2c install` did; serialized as its `--json` document (docs/json/install.schema.json):
/// `installed`, `reused` and `cleaned` come from the store's report.
#[derive(serde::Serialize)]
pub struct InstallOutcome<'a> {
    pub workspace: Option<PathBuf>,
    pub store: PathBuf,
    #[serde(skip)]
    pub lock_path: PathBuf,
    /// Versions added to the lock by this run.
    #[serde(rename = "locked")]
    pub locked_now: Vec<MethodVersion>,
    #[serde(flatten)]
    pub report: InstallReport,
    /// Every member served, with its write contract (`[{"path", "version"}]`), borrowed from
    /// the members read.
    #[serde(serialize_with = "members")]
    pub members: Vec<(&'a Path, &'a MethodVersion)>,
    /// Members whose local pointer was written or refreshed.
    #[serde(skip)]
    pub pointers: usize,
    /// Registries skipped while looking for bundles (shown under `-v`).
    #[serde(skip)]
    pub notes: Vec<String>,
    /// Whether the workspace snapshot vouched for the members, or was written (under `-v`).
    #[serde(skip)]
    pub snapshot: Option<String>,
    /// Locked versions the registry has yanked since, when this run read it (they install; the
    /// user is told).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub yanked: Vec<MethodVersion>,
    /// Locked versions the registry serves a newer revision of (Conan), when this run read it:
    /// they stay locked at their revision until `a2c lock --update V`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub revised: Vec<MethodVersion>,
    /// The members' projection for the marker's `agents:` (absent when it names none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<super::agents::AgentsOutcome>,
    /// With `--version`: those of the versions that no member pins (`gc` would remove them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpinned: Vec<MethodVersion>,
    /// Outside a superbuild, a repository whose delivery is not `package` gets nothing
    /// installed: its path and delivery (the document names the delivery).
    #[serde(rename = "delivery", serialize_with = "delivery")]
    pub git_delivery: Option<(PathBuf, crate::workspace::Delivery)>,
}

fn members<S: serde::Serializer>(list: &[(&Path, &MethodVersion)], s: S) -> Result<S::Ok, S::Error> {
    crate::util::pairs_as(list, "path", "version", s)
}

fn delivery<S: serde::Serializer>(
    git: &Option<(PathBuf, crate::workspace::Delivery)>,
    s: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&git.as_ref().map(|(_, d)| d), s)
}

impl InstallOptions {
    /// The flag that asked for the lock as it is: `--frozen` or `--locked`.
    fn locked_flag(&self) -> &'static str {
        if self.frozen { "--frozen" } else { "--locked" }
    }
}

/// The default number of parallel installs: the machine's cores.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

pub fn install<'a>(
    session: &super::Session,
    ctx: &'a Context,
    settings: &InstallOptions,
    reporter: &dyn Reporter,
) -> Result<InstallOutcome<'a>, OpsError> {
    if !settings.versions.is_empty() {
        return install_versions(session, ctx, settings, reporter);
    }
    let needing = needing(ctx)?;
    let needed: BTreeSet<MethodVersion> = needing
        .iter()
        .map(|(_, v)| *v)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .cloned()
        .collect();
    let lock_path = lock_path(ctx)?;
    let read = Lockfile::read(&lock_path)?;
    if settings.locked && read.is_none() {
        return Err(OpsError::NoLockFile {
            path: lock_path,
            flag: settings.locked_flag(),
        });
    }
    let mut lock = read.unwrap_or_default();
    let missing: Vec<MethodVersion> = needed.iter().filter(|v| lock.get(v).is_none()).cloned().collect();
    let mut locked_now = Vec::new();
    let mut yanked = Vec::new();
    let mut revised = Vec::new();
    // The registry is only read when something must be resolved or downloaded; offline, never.
    let flag = settings.registry.as_deref();
    let client = std::sync::Arc::new(network(session, ctx, flag)?);
    if !missing.is_empty() {
        if settings.locked || session.offline() {
            let flag = if settings.locked {
                settings.locked_flag()
            } else {
                "--offline"
            };
            return Err(OpsError::LockWouldChange {
                path: lock_path,
                versions: missing,
                flag,
            });
        }
        let mut planned = super::plan_missing(session, ctx, flag, &lock, &needed, &client, settings.allow_expired)?;
        // The entries exactly as `a2c lock` writes them (a wheel's tree digest pinned).
        super::lock::pin_trees(session, ctx, flag, &mut planned)?;
        locked_now = planned.added;
        yanked = planned.yanked;
        revised = planned.revised;
        lock = planned.lock;
    }
    // `--locked` means the lock as it is, exactly: an entry no member needs is a change too
    // (the one `a2c lock` would make, and `lock --check` reports).
    if settings.locked {
        let unused: Vec<MethodVersion> = lock
            .methods
            .iter()
            .map(|m| m.version.clone())
            .filter(|v| !needed.contains(v))
            .collect();
        if !unused.is_empty() {
            return Err(OpsError::LockHasUnused {
                flag: settings.locked_flag(),
                path: lock_path,
                versions: unused,
            });
        }
    }
    let entries: Vec<_> = needed.iter().filter_map(|v| lock.get(v).cloned()).collect();
    let (mut options, notes) = prepared_options(session, ctx, settings, &entries, &client)?;
    if settings.frozen {
        options.reach = crate::store::Reach::Offline("--frozen");
    }
    if let Some(list) = &settings.reinstall {
        if let Some(v) = list.iter().find(|v| !needed.contains(*v)) {
            return Err(OpsError::Config(format!(
                "--reinstall {v}: no member needs {v} (needed: {})",
                needed.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
            )));
        }
        options.reinstall = match list.is_empty() {
            true => needed.clone(),
            false => list.iter().cloned().collect(),
        };
    }
    let report = store::install::install(&entries, &options, reporter)?;
    // The lock gains what this run resolved only once it is installed: a failed install (a
    // bundle that is not what the registry said, a full disk) leaves the lock as it was.
    if !locked_now.is_empty() {
        lock.write(&lock_path)?;
    }
    // A version installed earlier (by a newer a2c sharing the store) is held to the same rule
    // as one installed now: this a2c must meet its `min_a2c`.
    for r in &report.reused {
        if let Ok(m) = crate::method::MethodManifest::read_tree(&r.path)
            && let Some(min) = m.needs_newer_a2c()
        {
            return Err(store::StoreError::NeedsNewerA2c {
                version: r.version.clone(),
                min: min.clone(),
                running: crate::A2C_VERSION.into(),
            }
            .into());
        }
    }
    let mut pointers = 0;
    // A snapshot vouches for every pointer too: it records each as this install wrote it.
    let vouched = matches!(ctx.snapshot(), Some(Ok(_)));
    if let Some(ws) = ctx.workspace.as_ref().filter(|_| !vouched) {
        // A member that is itself a superbuild root keeps its own marker: it never gets a
        // pointer, so its own workspace (and its own members) stay its own.
        let repos: Vec<&Path> = needing.iter().map(|(r, _)| *r).filter(|r| *r != ws.root).collect();
        let jobs = crate::util::parallel::metadata_jobs();
        let written = crate::util::parallel::run_parallel(&repos, jobs, |repo| {
            match crate::workspace::discovery::has_marker(repo) {
                true => Ok(false),
                false => LocalPointer::write(repo, &ws.root).map(|()| true),
            }
        });
        for w in written {
            pointers += usize::from(w?);
        }
    }
    // By path: in the members' order, which is the walk's (by name in each directory), then
    // by their bytes, which is `Path`'s order unless a name sorts before `/` (sorting 5,000
    // paths component by component cost a no-op install milliseconds), and by `Path`'s order
    // when that differs. A sorted list is only checked.
    let mut members = needing;
    if !members.is_sorted_by(|a, b| a.0.as_os_str() <= b.0.as_os_str()) {
        members.sort_unstable_by(|a, b| a.0.as_os_str().cmp(b.0.as_os_str()));
    }
    if !members.is_sorted() {
        members.sort();
    }
    let snapshot = keep_snapshot(session, ctx, &lock_path, &options.store, &needed);
    // Each member's method where its agents look: only when the marker names runtimes or this
    // machine adds some (a superbuild without either pays one look at the root).
    let agents = match super::agents::wanted(ctx) {
        true => Some(super::agents::sync(ctx)?),
        false => None,
    };
    Ok(InstallOutcome {
        agents,
        snapshot,
        yanked,
        revised,
        unpinned: Vec::new(),
        workspace: ctx.workspace.as_ref().map(|w| w.root.clone()),
        store: options.store.root().to_path_buf(),
        lock_path,
        locked_now,
        report,
        members,
        pointers,
        notes,
        git_delivery: super::git_delivery(ctx),
    })
}

/// After the full walk, keeps a snapshot of what it read for the next run (under the store
/// lock, if nobody holds it: the snapshot is worth no wait); a snapshot that no longer holds is
/// removed. Says what happened, for `-v`.
fn keep_snapshot(
    session: &super::Session,
    ctx: &Context,
    lock_path: &std::path::Path,
    store: &crate::store::Store,
    versions: &BTreeSet<MethodVersion>,
) -> Option<String> {
    use crate::workspace::snapshot::Snapshot;
    if ctx.snapshot()?.is_ok() {
        return None; // it vouched for this run: it still holds
    }
    let ws = ctx.workspace.as_ref()?;
    let (Some(seen), Ok(members)) = (ws.seen(), ctx.members()) else {
        return None;
    };
    let versions: Vec<MethodVersion> = versions.iter().cloned().collect();
    let taken = Snapshot::take(&ws.root, members, seen, lock_path, store, &versions, session.began);
    let locked = match store.try_lock(&session.store) {
        Ok(Some(locked)) => locked,
        Ok(None) => return Some("workspace snapshot not written: another a2c holds the store".into()),
        Err(e) => return Some(format!("workspace snapshot not written: {e}")),
    };
    Some(match taken {
        Ok(s) => match locked.write_snapshot(&s.render()) {
            Ok(()) => format!("workspace snapshot written ({} paths)", s.len()),
            Err(e) => format!("workspace snapshot not written: {e}"),
        },
        Err(not) => {
            let _ = locked.remove_snapshot();
            format!("no workspace snapshot written: {not}")
        }
    })
}

/// The install options of `settings` for `entries`: the session's, `--from`, `--jobs`,
/// `--link-mode`, and where the configured registries and mirrors serve each entry (with the
/// notes of the ones skipped) — the same for `install` and `install --version`.
fn prepared_options(
    session: &super::Session,
    ctx: &Context,
    settings: &InstallOptions,
    entries: &[crate::lock::LockEntry],
    client: &std::sync::Arc<crate::net::LazyClient>,
) -> Result<(store::InstallContext, Vec<String>), OpsError> {
    let mut options = super::install_context(
        session,
        ctx,
        settings.from.as_deref(),
        settings.jobs.unwrap_or_else(default_jobs),
        client.clone(),
    )?;
    let flag = settings.registry.as_deref();
    let pending = entries
        .iter()
        .filter(|e| !options.store.is_installed(e) && options.cache.get(&e.sha256).is_none())
        .collect();
    let found = super::alternatives(session, ctx, flag, pending, &options, client);
    options.alternatives = found.places;
    options.passed_over = found.passed_over;
    let notes = found.notes;
    if settings.link_mode.is_some() {
        options.link_mode = settings.link_mode;
    }
    Ok((options, notes))
}

/// `a2c install --version V…`: each V's entry from the lock when it pins V, else from the
/// configured registry (exactly V, as `lock` would resolve it, its index verified the same
/// way), installed into the store like any other — without touching the lock, the members or
/// their pointers (as `rustup toolchain install` or `mise install` add one version).
fn install_versions<'a>(
    session: &super::Session,
    ctx: &'a Context,
    settings: &InstallOptions,
    reporter: &dyn Reporter,
) -> Result<InstallOutcome<'a>, OpsError> {
    let lock_path = lock_path(ctx)?;
    let lock = Lockfile::read(&lock_path)?.unwrap_or_default();
    let flag = settings.registry.as_deref();
    let client = std::sync::Arc::new(network(session, ctx, flag)?);
    let wanted: BTreeSet<MethodVersion> = settings.versions.iter().cloned().collect();
    let missing: BTreeSet<MethodVersion> = wanted.iter().filter(|v| lock.get(v).is_none()).cloned().collect();
    let resolved = match (missing.is_empty(), session.offline()) {
        (true, _) => lock.clone(),
        (false, true) => {
            return Err(OpsError::Offline {
                what: format!(
                    "the lock does not pin {}, and the registry needs the network",
                    super::join_versions(&missing.iter().cloned().collect::<Vec<_>>())
                ),
            });
        }
        (false, false) => {
            super::plan_missing(session, ctx, flag, &lock, &missing, &client, settings.allow_expired)?.lock
        }
    };
    let entries: Vec<_> = wanted.iter().filter_map(|v| resolved.get(v).cloned()).collect();
    let (options, notes) = prepared_options(session, ctx, settings, &entries, &client)?;
    let report = store::install::install(&entries, &options, reporter)?;
    let pinned: BTreeSet<MethodVersion> = super::pinned(ctx).map(|p| p.into_keys().collect()).unwrap_or_default();
    Ok(InstallOutcome {
        workspace: ctx.workspace.as_ref().map(|w| w.root.clone()),
        store: options.store.root().to_path_buf(),
        lock_path,
        locked_now: Vec::new(),
        report,
        members: Vec::new(),
        pointers: 0,
        notes,
        git_delivery: None,
        snapshot: None,
        yanked: Vec::new(),
        revised: Vec::new(),
        agents: None,
        unpinned: wanted.into_iter().filter(|v| !pinned.contains(v)).collect(),
    })
}

/// Adds the versions of `needed` that `lock` lacks, from the configured registry: what
/// `install` and `migrate` do when the lock lacks a version (no entry is dropped).
pub fn plan_missing(
    session: &Session,
    ctx: &Context,
    flag: Option<&str>,
    lock: &crate::lock::Lockfile,
    needed: &std::collections::BTreeSet<MethodVersion>,
    client: &crate::net::LazyClient,
    allow_expired: bool,
) -> Result<crate::registry::lock_plan::LockPlan, OpsError> {
    let registries = registries(session, ctx, flag)?;
    if registries.is_empty() {
        return Err(no_registry(ctx));
    }
    let indexes = read_indexes(ctx, &registries, client, allow_expired, Some(needed))?;
    let mut plan = crate::registry::lock_plan::plan(
        needed,
        lock,
        &sources(&registries, &indexes),
        crate::registry::lock_plan::LockPlanOptions::default(),
    )
    .map_err(|e| with_members(ctx, e))?;
    for (registry, index) in registries.iter().zip(&indexes) {
        record_serial(ctx, &mut plan.lock, registry, index);
    }
    relative_sources(session, ctx, flag, &mut plan);
    Ok(plan)
}

/// How an operation fetches bundles: the one builder of [`crate::store::InstallContext`] for
/// `install`, `migrate` and `vendor` (the store's cache, the network unless offline, `--from`,
/// the extraction limits from the environment, the configured file registry).
pub fn install_context(
    session: &Session,
    ctx: &Context,
    from: Option<&Path>,
    jobs: usize,
    client: std::sync::Arc<crate::net::LazyClient>,
) -> Result<crate::store::InstallContext, OpsError> {
    let store = super::store(ctx)?;
    Ok(crate::store::InstallContext {
        cache: cache(session, &store)?,
        reach: match session.offline() {
            true => crate::store::Reach::Offline("--offline"),
            false => crate::store::Reach::Online(client),
        },
        store,
        settings: session.store.clone(),
        network: session.network.clone(),
        lock_dir: ctx.lock_path().ok().and_then(|p| p.parent().map(Path::to_path_buf)),
        from: from_dir(from)?,
        jobs,
        limits: session.limits()?,
        registry_dir: registry_dir(session, ctx),
        alternatives: Default::default(),
        passed_over: Default::default(),
        link_mode: session.link_mode()?,
        reinstall: Default::default(),
    })
}

/// The `--from DIR` directory, absolute, checked to exist.
pub fn from_dir(from: Option<&Path>) -> Result<Option<PathBuf>, OpsError> {
    match from {
        None => Ok(None),
        Some(dir) if dir.is_dir() => Ok(Some(crate::util::paths::absolute(dir))),
        Some(dir) => Err(OpsError::FromNotDir {
            path: dir.to_path_buf(),
        }),
    }
}
