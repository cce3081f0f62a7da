//! Where else a locked bundle is served: every registry configured now (`--registry`,
//! `A2C_REGISTRY`, the marker's `registry` and `mirrors`, `A2C_MIRRORS`), and for each
//! version still to fetch, the places whose index lists the locked bundle — and the ones
//! passed over, with why, for the error when no place serves it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::Session;
use crate::registry::RegistryLocation;
use crate::util::version::MethodVersion;
use crate::workspace::Context;

/// One place a locked bundle may be served from.
pub struct Place {
    pub location: RegistryLocation,
    /// For a registry's own mirror (`- url: R` with `mirrors:` in the marker): R as the
    /// marker names it, and where it is. Such a mirror is asked only for the bundles locked
    /// from R, and, when its kind's index gives no digests (a Conan remote), serves a bundle at
    /// the path the lock's source has below R.
    pub mirror_of: Option<(String, RegistryLocation)>,
}

/// Every registry configured now, in the order a locked bundle is looked for there:
/// `--registry`, `A2C_REGISTRY`, the marker's `registry` (each followed by its own mirrors),
/// the marker's `mirrors`, then `A2C_MIRRORS` (each once).
pub fn configured_registries(session: &Session, ctx: &Context, flag: Option<&str>) -> Vec<Place> {
    let mut texts: Vec<(String, PathBuf, Option<&String>)> = Vec::new();
    if let Some(f) = flag {
        texts.push((f.to_string(), ctx.start.clone(), None));
    }
    if let Some(env) = &session.registry {
        texts.push((env.clone(), ctx.start.clone(), None));
    }
    if let Some(ws) = &ctx.workspace {
        for r in &ws.marker.registries {
            texts.push((r.clone(), ws.root.clone(), None));
            for m in ws.marker.registry_mirrors.get(r).into_iter().flatten() {
                texts.push((m.clone(), ws.root.clone(), Some(r)));
            }
        }
        for m in &ws.marker.mirrors {
            texts.push((m.clone(), ws.root.clone(), None));
        }
    }
    for m in &session.mirrors {
        texts.push((m.clone(), ctx.start.clone(), None));
    }
    let mut out: Vec<Place> = Vec::new();
    for (text, base, mirror_of) in texts {
        let Ok(location) = RegistryLocation::parse(&text, &base) else {
            continue;
        };
        let mirror_of = match mirror_of {
            Some(r) => match RegistryLocation::parse(r, &base) {
                Ok(primary) => Some((r.clone(), primary)),
                Err(_) => continue,
            },
            None => None,
        };
        if !out.iter().any(|p| p.location == location) {
            out.push(Place { location, mirror_of });
        }
    }
    out
}

/// What [`alternatives`] found.
#[derive(Default)]
pub struct Alternatives {
    /// Where each version's locked bundle is served, by version, in order around the lock's
    /// own source.
    pub places: BTreeMap<MethodVersion, crate::store::Places>,
    /// The registries asked for a version and passed over, with why, by version.
    pub passed_over: BTreeMap<MethodVersion, Vec<String>>,
    /// Registries that could not be read (shown under `-v`).
    pub notes: Vec<String>,
}

/// Where the configured registries and mirrors serve each of `pending` (the entries whose
/// bundles the caller still needs: not installed nor cached for `install`, not cached for
/// `vendor`) — the index entry of the same version with the locked sha256 and size. A registry
/// that cannot be read, does not list a version, or lists another bundle under it is passed
/// over, and said so: named when no place serves that version.
pub fn alternatives(
    session: &Session,
    ctx: &Context,
    flag: Option<&str>,
    pending: Vec<&crate::lock::LockEntry>,
    options: &crate::store::InstallContext,
    client: &crate::net::LazyClient,
) -> Alternatives {
    let mut out = Alternatives::default();
    if pending.is_empty() || options.offline_flag().is_some() {
        return out;
    }
    // Only the versions still to fetch are asked for (an OCI registry, a package index or a
    // Conan remote reads entries one by one).
    let wanted: std::collections::BTreeSet<MethodVersion> = pending.iter().map(|e| e.version.clone()).collect();
    // The versions whose lock source a configured registry already served in the order.
    let mut own_seen = std::collections::BTreeSet::new();
    for place in configured_registries(session, ctx, flag) {
        let location = &place.location;
        // A registry's own mirror serves only the bundles locked from that registry.
        let pending: Vec<&crate::lock::LockEntry> = match &place.mirror_of {
            Some((name, _)) => pending
                .iter()
                .copied()
                .filter(|e| e.registry.as_ref().is_none_or(|r| r == name))
                .collect(),
            None => pending.clone(),
        };
        if pending.is_empty() {
            continue;
        }
        if !location.indexes_digests() {
            if let Some((_, primary)) = &place.mirror_of {
                rebased(&mut out, session, location, primary, &pending);
            }
            continue;
        }
        let mut pass = |version: &MethodVersion, why: String| {
            out.passed_over
                .entry(version.clone())
                .or_default()
                .push(format!("the registry `{location}` {why}"));
        };
        let index = match crate::registry::read_index_trusted(location, client, &[], Some(&wanted)) {
            Ok(index) => index,
            Err(e) => {
                for entry in &pending {
                    pass(&entry.version, format!("was skipped: {e}"));
                }
                out.notes.push(format!("skipped the registry `{location}`: {e}"));
                continue;
            }
        };
        for entry in &pending {
            let Some(published) = index.get(&entry.version) else {
                pass(&entry.version, format!("does not list {}", entry.version));
                continue;
            };
            if published.sha256 != entry.sha256 || published.size != entry.size {
                // Another bundle under that version: never a candidate.
                pass(
                    &entry.version,
                    format!(
                        "lists another bundle as {} than the lock pins (sha256 {}, {} bytes): its index disagrees with the lock",
                        entry.version,
                        &published.sha256.to_hex()[..12],
                        published.size
                    ),
                );
                continue;
            }
            let url = match &index.fetched_from {
                Some(base) => base.join(&published.url).ok(),
                None => location.resolve_url(&published.url).ok(),
            };
            let Some(url) = url else { continue };
            let candidate = crate::lock::LockEntry {
                source: url.to_string(),
                ..(*entry).clone()
            };
            // The lock's own source is tried as itself, where its registry stands: the places
            // after it go after it (compared as written too: an object store's presigned URL
            // differs from one second to the next).
            let places = out.places.entry(entry.version.clone()).or_default();
            let own = candidate.source == entry.source || {
                let own = crate::registry::bundle_location(entry, &session.network, options.lock_dir.as_deref());
                crate::registry::bundle_location(&candidate, &session.network, None) == own
            };
            if own {
                own_seen.insert(entry.version.clone());
                continue;
            }
            let candidate = crate::registry::bundle_location(&candidate, &session.network, None);
            if places.iter().any(|p| *p == candidate) {
                continue;
            }
            match own_seen.contains(&entry.version) {
                true => places.after.push(candidate),
                false => places.before.push(candidate),
            }
        }
    }
    out
}

/// For a mirror of `primary` whose index gives no digests (a Conan remote's replica): each
/// entry's source at the same path below the mirror (verified against the lock, as every
/// place is); an entry whose source is not below `primary` is passed over, said so.
fn rebased(
    out: &mut Alternatives,
    session: &Session,
    mirror: &RegistryLocation,
    primary: &RegistryLocation,
    pending: &[&crate::lock::LockEntry],
) {
    let (Some(from), Some(to)) = (primary.http_base(), mirror.http_base()) else {
        return;
    };
    for entry in pending {
        let below = entry.source.strip_prefix(from.as_str());
        let Some(url) = below.and_then(|rest| to.join(rest).ok()) else {
            out.passed_over.entry(entry.version.clone()).or_default().push(format!(
                "the mirror `{mirror}` was not asked: the lock's source is not below `{primary}`"
            ));
            continue;
        };
        let candidate = crate::lock::LockEntry {
            source: url.to_string(),
            ..(*entry).clone()
        };
        // A registry's own mirror is asked after the registry, whose place is the lock's source.
        let candidate = crate::registry::bundle_location(&candidate, &session.network, None);
        let places = out.places.entry(entry.version.clone()).or_default();
        if !places.iter().any(|p| *p == candidate) {
            places.after.push(candidate);
        }
    }
}
