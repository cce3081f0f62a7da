//! Operations: the one library function behind each command that spans several domain modules
//! (workspace → lock/registry → store). They return data; the CLI renders it.

pub mod gc;
pub mod install;
pub mod list;
pub mod lock;
pub mod migrate;
pub mod places;
pub mod registries;
pub mod resolve;
pub mod session;
pub mod vendor;

pub use places::{Alternatives, alternatives, configured_registries};
pub use registries::{
    ConfiguredRegistry, read_index, read_index_for, read_indexes, record_serial, registries, sources,
};
pub use session::{Flags, Session};

use crate::util::paths::JoinRel as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::registry::RegistryLocation;
use crate::util::version::MethodVersion;
use crate::workspace::{Context, WorkspaceError};

/// Errors of the operations, wrapping the domain errors.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error(transparent)]
    Registry(#[from] crate::registry::RegistryError),
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("member `{}` has no valid write contract: {reason}", path.display())]
    InvalidMember { path: PathBuf, reason: String },
    #[error("the lock `{}` lacks {} needed by the members, and {flag} forbids changing it", path.display(), join_versions(versions))]
    LockWouldChange {
        path: PathBuf,
        versions: Vec<MethodVersion>,
        flag: &'static str,
    },
    #[error("the lock `{}` pins {} that no member needs, and {flag} forbids changing it", path.display(), join_versions(versions))]
    LockHasUnused {
        path: PathBuf,
        versions: Vec<MethodVersion>,
        flag: &'static str,
    },
    #[error("--offline: {what}")]
    Offline { what: String },
    #[error("{flag}: there is no lock file at `{}`", path.display())]
    NoLockFile { path: PathBuf, flag: &'static str },
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Migrate(Box<crate::relocate::MigrateError>),
    #[error("--from: `{}` is not a directory", path.display())]
    FromNotDir { path: PathBuf },
    /// No registry is configured; `config` is the file this context keeps it in (the marker of
    /// a superbuild, else the repository's tool state `config.yaml`).
    #[error("no registry configured")]
    NoRegistry {
        config: Option<PathBuf>,
        /// Whether the command takes `--registry` (`migrate version` does not).
        flag: bool,
    },
    /// A migration failed, and putting the tool state back failed too: the original error
    /// first, then the restore's.
    #[error("{original}; putting the tool state back also failed: {restore}")]
    RollbackFailed { original: Box<OpsError>, restore: String },
    /// An error of one member of a superbuild-wide command (`migrate version --all`).
    #[error("member `{member}`: {error}")]
    InMember { member: String, error: Box<OpsError> },
    /// `migrate version --all` stopped at a member (rolled back); the ones before it stay
    /// migrated, the ones after it are untouched.
    #[error(
        "the migration to {to} stopped at member `{at}` (rolled back, exactly as it was): {error}\n  migrated: {}\n  untouched: {}",
        names(done),
        names(untouched)
    )]
    Stopped {
        to: MethodVersion,
        at: String,
        done: Vec<String>,
        untouched: Vec<String>,
        error: Box<OpsError>,
    },
}

fn names(v: &[String]) -> String {
    match v.is_empty() {
        true => "none".into(),
        false => v.join(", "),
    }
}

impl OpsError {
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Workspace(e) => e.hint(),
            Self::NoRegistry { config, flag } => {
                // Only a command that takes `--registry` is told to pass it.
                let pass = if *flag { "pass `--registry URL`, " } else { "" };
                Some(match config {
                    Some(file) if file.ends_with(crate::workspace::marker::MARKER_PATH) => format!(
                        "{pass}set {}, or add `registry: URL` to the workspace marker `{}` (relative paths are relative to the superbuild)",
                        crate::env::A2C_REGISTRY,
                        file.display()
                    ),
                    Some(file) => format!(
                        "{pass}set {}, or add `registry: URL` to `{}` (this repository's own settings; a relative path is relative to the repository)",
                        crate::env::A2C_REGISTRY,
                        file.display()
                    ),
                    None => format!(
                        "{pass}set {}; `a2c init --registry URL` makes a superbuild that keeps it",
                        crate::env::A2C_REGISTRY
                    ),
                })
            }
            Self::Registry(e) => e.hint(),
            Self::Lock(e) => e.hint(),
            Self::Store(e) => e.hint(),
            Self::InvalidMember { .. } => {
                Some("fix the adoption record; `a2c workspace members` lists every member".into())
            }
            Self::LockWouldChange { .. } => {
                Some("run `a2c lock` (online) and commit the lock, then install again".into())
            }
            Self::LockHasUnused { .. } => Some(
                "if members are missing on this machine (a clone without them: `a2c doctor` names them; bring them first, e.g. `git submodule update --init --recursive`), install again once they are here; otherwise run `a2c lock` to drop them and commit the lock (as `a2c lock --check` asks)"
                    .into(),
            ),
            Self::Offline { .. } => Some(
                "run it online once, or pass `--from DIR` with a directory `a2c vendor` wrote (or copy a lock that has the version); then --offline works from the lock and the cache".into(),
            ),
            Self::NoLockFile { flag, .. } => Some(format!(
                "run `a2c lock` (online) and commit the lock, or drop {flag} to let install write it"
            )),
            Self::Migrate(e) => e.hint(),
            Self::FromNotDir { .. } => Some("pass the directory of bundles that `a2c vendor DIR` wrote".into()),
            Self::RollbackFailed { original, .. } => Some(format!(
                "{}check the repository with `git status`; `a2c migrate version` resumes or refuses from the journal in .git/",
                original.hint().map(|h| format!("{h}\n")).unwrap_or_default()
            )),
            Self::Io(e) => crate::util::contain::refusal(e)
                .map(|r| r.hint())
                .or_else(|| crate::util::fs::permission_hint(e)),
            Self::InMember { error, .. } => error.hint(),
            Self::Stopped { to, error, .. } => Some(format!(
                "{}once it is fixed, rerun `a2c migrate version --to {to} --all`: migrated members are skipped and the rest continue",
                error.hint().map(|h| format!("{h}\n")).unwrap_or_default()
            )),
            Self::Config(_) => None,
        }
    }
}

/// `1.2.0, 1.4.0`, or `version 1.2.0` for one.
pub fn join_versions(versions: &[MethodVersion]) -> String {
    let names: Vec<String> = versions.iter().map(ToString::to_string).collect();
    match names.len() {
        1 => format!("version {}", names[0]),
        _ => format!("versions {}", names.join(", ")),
    }
}

/// Which members need which version: the union of write contracts.
pub type Needs = BTreeMap<MethodVersion, Vec<PathBuf>>;

/// The union of write contracts that `lock` and `install` serve. In a superbuild: every
/// member's, whatever its delivery (resolution looks in W's store first, so the superbuild
/// serves the whole checkout). In a single repository: its own, only when its delivery is
/// `package` (or unnamed); `copy`, `submodule` and `clone` deliver the assets by git at
/// `R/tools/ai-rules/`, and `none` delivers nothing. An invalid member is an error: the union
/// would be incomplete without it.
pub fn needs(ctx: &Context) -> Result<Needs, OpsError> {
    let mut needs = Needs::new();
    for (path, version) in needing(ctx)? {
        needs.entry(version.clone()).or_default().push(path.to_path_buf());
    }
    Ok(needs)
}

/// What [`needs`] gathers, borrowed from the members and in their order: each member that
/// needs a version, and the version.
pub fn needing(ctx: &Context) -> Result<Vec<(&Path, &MethodVersion)>, OpsError> {
    let single = ctx.workspace.is_none();
    let members = ctx.members()?;
    let mut needing = Vec::with_capacity(members.len());
    for member in members {
        let delivery = member.delivery();
        match &member.record {
            Ok(_) if single && delivery != Some(crate::workspace::Delivery::Package) => {}
            Ok(record) => needing.push((member.path.as_path(), &record.tool_version)),
            // Not an invalid record but none at all: the hint is `a2c adopt --version X`.
            Err(crate::workspace::discovery::MemberError::NotAdopted { repo }) => {
                return Err(WorkspaceError::NotAdopted { repo: repo.clone() }.into());
            }
            Err(reason) => {
                return Err(OpsError::InvalidMember {
                    path: member.path.clone(),
                    reason: reason.to_string(),
                });
            }
        }
    }
    Ok(needing)
}

/// Every version any adoption record of the members pins, legacy or canonical, whatever the
/// delivery: what `gc` must never remove. An unreadable member stops it rather than guess.
pub fn pinned(ctx: &Context) -> Result<Needs, OpsError> {
    let mut pinned = Needs::new();
    for member in ctx.members()? {
        if let Err(reason) = &member.record {
            return Err(OpsError::InvalidMember {
                path: member.path.clone(),
                reason: reason.to_string(),
            });
        }
        for v in member.pinned_versions() {
            pinned.entry(v.clone()).or_default().push(member.path.clone());
        }
    }
    Ok(pinned)
}

/// The delivery of the single repository outside a superbuild when it is not `package`: it
/// gets nothing from a single-repo install.
pub fn git_delivery(ctx: &Context) -> Option<(PathBuf, crate::workspace::Delivery)> {
    if ctx.workspace.is_some() {
        return None;
    }
    let member = ctx.members().ok()?.first()?;
    let delivery = member.delivery()?;
    (delivery != crate::workspace::Delivery::Package).then_some((member.path.clone(), delivery))
}

/// Where the lockfile lives (see [`Context::lock_path`]).
pub fn lock_path(ctx: &Context) -> Result<PathBuf, OpsError> {
    Ok(ctx.lock_path()?)
}

/// The store of this context, checked (see [`crate::store::guard`]).
pub fn store(ctx: &Context) -> Result<crate::store::Store, OpsError> {
    Ok(crate::store::guard(ctx.store_owner()?)?)
}

/// The configured file registry's directory, if the registry is a directory.
pub fn registry_dir(session: &Session, ctx: &Context) -> Option<PathBuf> {
    registries(session, ctx, None)
        .ok()?
        .into_iter()
        .find_map(|r| r.location.local_dir().map(Path::to_path_buf))
}

/// The bundle cache: `A2C_CACHE_DIR`, the XDG cache, `~/.cache/a2c`, else `<store>/.cache`.
/// An existing cache that another user owns or can write is refused.
pub fn cache(session: &Session, store: &crate::store::Store) -> Result<crate::store::Cache, OpsError> {
    Ok(crate::store::Cache::for_store(store, &session.store)?)
}

/// The public keys pinned for this context: the marker's `trusted_keys:` in a superbuild,
/// else the repository's `{tool state root}/config.yaml` `trusted_keys:`.
pub fn trusted_keys(ctx: &Context) -> Vec<String> {
    match &ctx.workspace {
        Some(w) => w.marker.trusted_keys.clone(),
        None => ctx
            .repo
            .as_deref()
            .and_then(|r| crate::workspace::ToolStateRoot::detect(r).ok().flatten())
            .map(|state| repo_trusted_keys(&state.dir.join("config.yaml")))
            .unwrap_or_default(),
    }
}

/// `trusted_keys:` of a repository's `config.yaml`. The file belongs to the method (it may hold
/// anything else, nested), so only that top-level entry is read: a line `trusted_keys:` at
/// column 0 and its list (inline, or `- item` lines below it).
/// A top-level scalar `key:` of a repository's `config.yaml` (the rest of the file is the
/// method's, so only that line is read).
fn repo_config_value(path: &Path, key: &str) -> Option<String> {
    let text = crate::util::contain::read_config(path).ok()??;
    let line = text.lines().find(|l| l.starts_with(&format!("{key}:")))?;
    let entries = crate::util::yaml::parse_flat_mapping(line).ok()?;
    entries.into_iter().find_map(|e| match e.value {
        crate::util::yaml::Value::Scalar(s) if !s.is_null() && !s.text.trim().is_empty() => Some(s.text),
        _ => None,
    })
}

fn repo_trusted_keys(path: &Path) -> Vec<String> {
    let Ok(Some(text)) = crate::util::contain::read_config(path) else {
        return Vec::new();
    };
    let mut lines = text.lines().skip_while(|l| !l.starts_with("trusted_keys:"));
    let Some(first) = lines.next() else {
        return Vec::new();
    };
    let mut snippet = vec![first.to_string()];
    snippet.extend(
        lines
            .take_while(|l| l.starts_with(' ') || l.starts_with('-') || l.trim().is_empty())
            .map(str::to_string),
    );
    match crate::util::yaml::parse_flat_mapping(&snippet.join("\n")) {
        Ok(entries) => entries
            .into_iter()
            .filter_map(|e| match e.value {
                crate::util::yaml::Value::List(items) => Some(items.into_iter().map(|i| i.text).collect::<Vec<_>>()),
                _ => None,
            })
            .flatten()
            .collect(),
        // Unreadable pins must not silently turn verification off: a key that cannot be
        // parsed is kept, and refused by the verifier with its text.
        Err(_) => vec![snippet.join(" ")],
    }
}

/// `adopt`'s check that `version` exists somewhere: the lock pins it, or the configured
/// registry has it. `Some(warning)` when it does not, or when the registry cannot be read
/// (adopting works offline: this is a warning, never a refusal). No registry: no check.
pub fn check_published(session: &Session, ctx: &Context, version: &MethodVersion) -> Option<String> {
    if let Ok(path) = lock_path(ctx)
        && let Ok(Some(lock)) = crate::lock::Lockfile::read(&path)
        && lock.get(version).is_some()
    {
        return None;
    }
    let registries = registries(session, ctx, None).ok()?;
    let first = registries.first()?;
    let client = network(session, ctx, None).ok()?;
    let mut available = Vec::new();
    for r in &registries {
        match read_index(ctx, &r.location, &client, true) {
            Ok(index) if index.get(version).is_some_and(|e| !e.yanked) => return None,
            Ok(index) => available.extend(crate::registry::available(&index)),
            Err(e) => return Some(format!("could not check that version {version} is published: {e}")),
        }
    }
    available.sort();
    available.dedup();
    let (location, have) = match registries.len() {
        1 => (format!("the registry `{}`", first.location), "it has"),
        _ => ("any of the registries".to_string(), "they have"),
    };
    Some(format!(
        "version {version} is not in {location} ({have} {}): `a2c lock` and `a2c install` fail until it is published",
        available.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
    ))
}

/// A version the registry lacks is named with the members that pin it.
pub fn with_members(ctx: &Context, e: crate::registry::RegistryError) -> OpsError {
    match e {
        crate::registry::RegistryError::NotPublished {
            version,
            location,
            available,
            pinned_by,
            other,
        } => crate::registry::RegistryError::NotPublished {
            other,
            pinned_by: match pinned_by.is_empty() {
                true => needs(ctx).ok().and_then(|mut n| n.remove(&version)).unwrap_or_default(),
                false => pinned_by,
            },
            version,
            location,
            available,
        }
        .into(),
        crate::registry::RegistryError::NoRegistry => no_registry(ctx),
        other => other.into(),
    }
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

/// The file this context keeps its registry in: the workspace marker in a superbuild, else the
/// repository's `config.yaml` in its tool state root (`None` outside both).
pub fn registry_config(ctx: &Context) -> Option<PathBuf> {
    match &ctx.workspace {
        Some(ws) => Some(ws.root.join_rel(crate::workspace::marker::MARKER_PATH)),
        None => ctx
            .repo
            .as_deref()
            .and_then(|r| crate::workspace::ToolStateRoot::detect(r).ok().flatten())
            .map(|state| state.dir.join(REPO_CONFIG)),
    }
}

/// A single repository's own settings file in its tool state root (`trusted_keys:`,
/// `registry:`); the rest of it belongs to the method.
pub const REPO_CONFIG: &str = "config.yaml";

/// "No registry", naming where this context would keep one.
pub fn no_registry(ctx: &Context) -> OpsError {
    OpsError::NoRegistry {
        config: registry_config(ctx),
        flag: true,
    }
}

/// Adds the versions of `needed` that `lock` lacks, from the configured registry: what
/// `install` and `migrate` do when the lock lacks a version (no entry is dropped).
pub fn resolve_missing(
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
pub fn install_options(
    session: &Session,
    ctx: &Context,
    offline: bool,
    from: Option<&Path>,
    jobs: usize,
    client: std::sync::Arc<crate::net::LazyClient>,
) -> Result<crate::store::InstallContext, OpsError> {
    let store = store(ctx)?;
    Ok(crate::store::InstallContext {
        cache: cache(session, &store)?,
        network: (!offline).then_some(client),
        store,
        settings: session.store.clone(),
        plain_http: session.plain_http().clone(),
        lock_dir: ctx.lock_path().ok().and_then(|p| p.parent().map(Path::to_path_buf)),
        offline,
        offline_flag: "--offline",
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

/// The HTTP client, built only if a request is made. Credentials are bound to the registry
/// the user chose (`--registry` or `A2C_REGISTRY`), never to one a committed marker names.
pub fn network(session: &Session, ctx: &Context, flag: Option<&str>) -> Result<crate::net::LazyClient, OpsError> {
    let chosen = match flag.or(session.registry.as_deref()) {
        Some(location) => RegistryLocation::parse(location, &ctx.start, session.plain_http())?.http_base(),
        None => None,
    };
    Ok(session.network.client(chosen.into_iter().collect()))
}

/// The relative display of `path` under `base`, or the path itself.
pub fn display_under(base: &Path, path: &Path) -> String {
    crate::util::paths::relative_slash(base, path).unwrap_or_else(|| path.display().to_string())
}

impl crate::util::hint::Hint for OpsError {
    fn hint(&self) -> Option<String> {
        OpsError::hint(self)
    }
}
