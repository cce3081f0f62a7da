//! The registries a run reads and their indexes: `--registry`, `A2C_REGISTRY`, the marker's
//! `registry:` (one or several, in order) or a single repository's `config.yaml`; each index
//! verified against the pinned keys, fresh, and not older than the serial the lock recorded
//! for that registry.

use std::path::Path;

use super::config::repo_config_value;
use super::{OpsError, Session, lock_path, needs, registry_config, trusted_keys};
use crate::registry::RegistryLocation;
use crate::util::version::MethodVersion;
use crate::workspace::Context;

/// A registry a resolution reads, and — when the marker lists several — the name its lock
/// entries record (the marker's text for it).
#[derive(Debug, Clone)]
pub struct ConfiguredRegistry {
    pub location: RegistryLocation,
    pub name: Option<String>,
}

/// The registries, in the order a version is looked for: `--registry`, else `A2C_REGISTRY`
/// (one, relative to the start directory), else the marker's `registry:` (one, or a list —
/// a version is taken from the first that publishes it —, relative to W), else a single
/// repository's `config.yaml` (relative to R).
pub fn registries(session: &Session, ctx: &Context, flag: Option<&str>) -> Result<Vec<ConfiguredRegistry>, OpsError> {
    let one = |text: &str, base: &Path| -> Result<Vec<ConfiguredRegistry>, OpsError> {
        Ok(vec![ConfiguredRegistry {
            location: RegistryLocation::parse(text, base)?,
            name: None,
        }])
    };
    if let Some(flag) = flag {
        return one(flag, &ctx.start);
    }
    if let Some(env) = &session.registry {
        return one(env, &ctx.start);
    }
    match &ctx.workspace {
        Some(ws) => {
            let several = ws.marker.registries.len() > 1;
            ws.marker
                .registries
                .iter()
                .map(|r| {
                    Ok(ConfiguredRegistry {
                        location: RegistryLocation::parse(r, &ws.root)?,
                        name: several.then(|| r.clone()),
                    })
                })
                .collect()
        }
        // A single repository keeps it in its tool state `config.yaml` (relative to R).
        None => match (ctx.repo.as_deref(), registry_config(ctx)) {
            (Some(repo), Some(config)) => match repo_config_value(&config, "registry") {
                Some(r) => one(&r, repo),
                None => Ok(Vec::new()),
            },
            _ => Ok(Vec::new()),
        },
    }
}

/// The indexes of `registries`, read (as [`read_index_for`] does), in their order.
pub fn read_indexes(
    ctx: &Context,
    registries: &[ConfiguredRegistry],
    client: &crate::net::LazyClient,
    allow_expired: bool,
    wanted: crate::registry::Wanted<'_>,
) -> Result<Vec<crate::registry::Index>, OpsError> {
    registries
        .iter()
        .map(|r| read_index_for(ctx, r, client, allow_expired, wanted))
        .collect()
}

/// The sources a resolution reads: each registry with its index.
pub fn sources<'a>(
    registries: &'a [ConfiguredRegistry],
    indexes: &'a [crate::registry::Index],
) -> Vec<crate::registry::lock_plan::RegistryIndex<'a>> {
    registries
        .iter()
        .zip(indexes)
        .map(|(r, index)| crate::registry::lock_plan::RegistryIndex {
            index,
            location: &r.location,
            name: r.name.as_deref(),
        })
        .collect()
}

/// Reads the index of `location`, verified against the workspace's trusted keys when it pins
/// any (fail closed: nothing in an unverified index is trusted).
pub fn read_index(
    ctx: &Context,
    location: &RegistryLocation,
    client: &crate::net::LazyClient,
    allow_expired: bool,
) -> Result<crate::registry::Index, OpsError> {
    let one = ConfiguredRegistry {
        location: location.clone(),
        name: None,
    };
    read_index_for(ctx, &one, client, allow_expired, None)
}

/// [`read_index`] for a caller that needs only the versions in `wanted` (an OCI registry then
/// reads only their manifests).
pub fn read_index_for(
    ctx: &Context,
    registry: &ConfiguredRegistry,
    client: &crate::net::LazyClient,
    allow_expired: bool,
    wanted: crate::registry::Wanted<'_>,
) -> Result<crate::registry::Index, OpsError> {
    use crate::registry::RegistryError;
    let location = &registry.location;
    let keys = trusted_keys(ctx);
    let index = crate::registry::read_index_trusted(location, client, &keys, wanted)?;
    if keys.is_empty() {
        return Ok(index);
    }
    // With keys pinned, the index must also be fresh: not past its `expires` (unless
    // `allow_expired`), and its `serial` not lower than the one the lock recorded.
    if let Some(expires) = &index.expires
        && *expires < crate::util::time::now_rfc3339()
        && !allow_expired
    {
        return Err(RegistryError::Expired {
            location: location.to_string(),
            expires: expires.clone(),
        }
        .into());
    }
    // Fail closed: a lock that cannot be read cannot vouch that this index is not older.
    let recorded = match lock_path(ctx).ok() {
        Some(path) => crate::lock::Lockfile::read(&path)?.and_then(|l| l.serial_of(registry.name.as_deref())),
        None => None,
    };
    if let Some(recorded) = recorded
        && index.serial.is_none_or(|s| s < recorded)
    {
        return Err(RegistryError::Rollback {
            location: location.to_string(),
            serial: index.serial.map_or("none".into(), |s| s.to_string()),
            recorded,
        }
        .into());
    }
    Ok(index)
}

/// The serial a lock records after resolving against `index` of `registry`: the higher of
/// the two, when keys are pinned (a serial of an unsigned index proves nothing) — each of
/// several registries its own.
pub fn record_serial(
    ctx: &Context,
    lock: &mut crate::lock::Lockfile,
    registry: &ConfiguredRegistry,
    index: &crate::registry::Index,
) {
    if trusted_keys(ctx).is_empty() {
        return;
    }
    if let Some(serial) = index.serial {
        let highest = lock
            .serial_of(registry.name.as_deref())
            .map_or(serial, |r| r.max(serial));
        match &registry.name {
            Some(name) => {
                lock.index_serials.insert(name.clone(), highest);
            }
            None => lock.index_serial = Some(highest),
        }
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

/// "No registry", naming where this context would keep one.
pub fn no_registry(ctx: &Context) -> OpsError {
    OpsError::NoRegistry {
        config: registry_config(ctx),
        flag: true,
    }
}

/// The HTTP client, built only if a request is made. Credentials are bound to the registry
/// the user chose (`--registry` or `A2C_REGISTRY`), never to one a committed marker names.
pub fn network(session: &Session, ctx: &Context, flag: Option<&str>) -> Result<crate::net::LazyClient, OpsError> {
    let chosen = match flag.or(session.registry.as_deref()) {
        Some(location) => RegistryLocation::parse(location, &ctx.start)?.http_base(),
        None => None,
    };
    Ok(session.network.client(chosen.into_iter().collect()))
}
