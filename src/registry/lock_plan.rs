//! The lock plan: pure, from the needed versions, the current lock and the index.

use std::collections::BTreeSet;

use super::{Index, RegistryError, RegistryLocation};
use crate::lock::{LockEntry, Lockfile};
use crate::method::METHOD_NAME;
use crate::util::version::MethodVersion;

/// What resolution decided.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LockPlan {
    #[serde(skip)]
    pub lock: Lockfile,
    pub added: Vec<MethodVersion>,
    pub updated: Vec<MethodVersion>,
    pub removed: Vec<MethodVersion>,
    /// Versions the lock keeps that the registry has yanked since (known when an index was
    /// given): they still install, and the user should hear of it.
    #[serde(skip)]
    pub yanked: Vec<MethodVersion>,
    /// Versions the lock keeps that the registry no longer lists at all (removed from a Conan
    /// remote or a package index): they install from a cache, mirror or vendored copy only.
    #[serde(skip)]
    pub gone: Vec<MethodVersion>,
    /// Versions the lock keeps at their locked revision while the registry serves a newer one
    /// (a Conan recipe's new revision): noted; `a2c lock --update V` takes it.
    #[serde(skip)]
    pub revised: Vec<MethodVersion>,
    /// Locked entries completed with what they lacked (the tree digest of a wheel an older
    /// a2c locked without one): the same bundle, recorded whole.
    pub completed: Vec<MethodVersion>,
}

impl LockPlan {
    pub fn changed(&self) -> bool {
        !(self.added.is_empty() && self.updated.is_empty() && self.removed.is_empty() && self.completed.is_empty())
    }
}

/// Options of a resolution.
#[derive(Debug, Clone, Default)]
pub struct LockPlanOptions {
    /// Re-resolve every needed version from the index (`a2c lock --update`).
    pub update: bool,
    /// With `update`: only these versions (`a2c lock --update V`, like `cargo update -p`).
    pub only: Option<BTreeSet<MethodVersion>>,
    /// Drop entries no member needs (`a2c lock`; `a2c install` keeps them).
    pub prune: bool,
}

/// One registry a resolution reads: its index, its location, and — when the marker lists
/// several — the name the lock records for it (the marker's own text for it).
#[derive(Debug, Clone, Copy)]
pub struct RegistryIndex<'a> {
    pub index: &'a Index,
    pub location: &'a RegistryLocation,
    pub name: Option<&'a str>,
}

impl RegistryIndex<'_> {
    /// Whether it lists `version` at all (an entry, a listing past its cap, something it cannot
    /// lock).
    fn lists(&self, version: &MethodVersion) -> bool {
        self.index.get(version).is_some()
            || self.index.listed.contains(version)
            || self.index.foreign.iter().any(|f| &f.version == version)
    }

    /// Whether its listing was read whole (only then can it say a version is gone).
    fn whole(&self) -> bool {
        self.index.truncated.is_none()
    }
}

fn lock_entry(source: &RegistryIndex<'_>, index_entry: &super::IndexEntry) -> Result<LockEntry, RegistryError> {
    let url = match &source.index.fetched_from {
        // After a redirect, relative URLs resolve against the final URL (RFC 3986 §5.1.3).
        Some(base) => base.join(&index_entry.url).map_err(|e| RegistryError::InvalidIndex {
            location: base.to_string(),
            reason: format!("entry url `{}` does not resolve: {e}", index_entry.url),
        })?,
        None => source.location.resolve_url(&index_entry.url)?,
    };
    Ok(LockEntry {
        name: METHOD_NAME.into(),
        version: index_entry.version.clone(),
        source: url.to_string(),
        sha256: index_entry.sha256,
        size: index_entry.size,
        format: index_entry.format,
        tree: index_entry.tree.clone(),
        registry: source.name.map(str::to_string),
    })
}

/// The registry a locked entry is held to: the one it records, else (a lock written with one
/// registry) the first that publishes its version, else the first. `None` when it records a
/// registry no longer configured (the entry is kept as it is).
fn origin<'s, 'a>(sources: &'s [RegistryIndex<'a>], entry: &LockEntry) -> Option<&'s RegistryIndex<'a>> {
    match &entry.registry {
        Some(name) => sources.iter().find(|s| s.name == Some(name.as_str())),
        None => sources
            .iter()
            .find(|s| s.index.get(&entry.version).is_some())
            .or(sources.first()),
    }
}

/// Where a bundle's `source` URL is, for telling a registry switched from a bundle changed in
/// place (a relative source is not compared): a file registry's directory; else the scheme,
/// host and port
/// (paths may be content-addressed — an OCI digest, devpi's hashed directories — and change
/// with the bundle on one server).
fn place(source: &str) -> Option<String> {
    let u = url::Url::parse(source).ok()?;
    Some(match u.scheme() {
        "file" => u.path().rsplit_once('/').map_or(String::new(), |(d, _)| d.to_string()),
        _ => format!(
            "{}://{}:{}",
            u.scheme(),
            u.host_str().unwrap_or_default(),
            u.port_or_known_default().unwrap_or(0)
        ),
    })
}

/// The first registry, in the marker's order, that publishes `version`, with its entry.
fn first_having<'s, 'a>(
    sources: &'s [RegistryIndex<'a>],
    version: &MethodVersion,
) -> Option<(&'s RegistryIndex<'a>, &'a super::IndexEntry)> {
    sources.iter().find_map(|s| s.index.get(version).map(|p| (s, p)))
}

/// `version` is in none of `sources`: what each has instead, for the error.
fn not_published(sources: &[RegistryIndex<'_>], version: &MethodVersion) -> RegistryError {
    if sources.is_empty() {
        return RegistryError::NoRegistry;
    }
    let mut available: Vec<MethodVersion> = sources.iter().flat_map(|s| super::available(s.index)).collect();
    available.sort();
    available.dedup();
    RegistryError::NotPublished {
        version: version.clone(),
        location: sources
            .iter()
            .map(|s| s.location.to_string())
            .collect::<Vec<_>>()
            .join("`, `"),
        available: available.into(),
        pinned_by: Vec::new(),
        other: sources.iter().find_map(|s| s.index.foreign_at(version)),
    }
}

/// Resolves `needed` against `current` and the registries read (`sources`, in the marker's
/// order; none: only what the lock holds). A version the lock lacks is taken from the first
/// registry that publishes it (yanked there: refused). A locked entry is kept untouched and held
/// to its own registry (the one it records, else the first that has its version): a digest there that differs is an error — but for a
/// registry whose versions gain revisions (Conan), a newer revision, kept locked and noted
/// until `--update` —, and it is gone only when its registry no longer lists it.
pub fn plan(
    needed: &BTreeSet<MethodVersion>,
    current: &Lockfile,
    sources: &[RegistryIndex<'_>],
    options: LockPlanOptions,
) -> Result<LockPlan, RegistryError> {
    let mut out = LockPlan {
        lock: current.clone(),
        ..LockPlan::default()
    };
    for version in needed {
        let updating = options.update && options.only.as_ref().is_none_or(|o| o.contains(version));
        match current.get(version) {
            Some(l) => {
                let own = origin(sources, l);
                let published = own.and_then(|s| s.index.get(version).map(|p| (s, p)));
                if updating {
                    // Re-resolved from its own registry while that has it, else the first that does.
                    let Some((source, p)) = published.or_else(|| first_having(sources, version)) else {
                        return Err(not_published(sources, version));
                    };
                    if p.yanked && l.sha256 != p.sha256 {
                        return Err(RegistryError::Yanked {
                            version: version.clone(),
                            location: source.location.to_string(),
                        });
                    }
                    let entry = lock_entry(source, p)?;
                    // A source the lock keeps relative to itself is the same bundle when all else is.
                    let same_bundle = crate::lock::is_relative_source(&l.source)
                        && crate::lock::LockEntry {
                            source: l.source.clone(),
                            ..entry.clone()
                        } == *l;
                    if &entry != l && !same_bundle {
                        out.updated.push(version.clone());
                        out.lock.upsert(entry);
                    }
                } else if let Some((source, p)) = published
                    && l.sha256 != p.sha256
                {
                    if source.location.revises_versions() {
                        out.revised.push(version.clone());
                    } else if !crate::lock::is_relative_source(&l.source)
                        && lock_entry(source, p).is_ok_and(|e| place(&e.source) != place(&l.source))
                    {
                        // Another bundle URL: the lock was made against another registry (the
                        // marker's `registry:` changed), not a bundle changed in place.
                        return Err(RegistryError::LockedFromElsewhere {
                            version: version.clone(),
                            locked_source: crate::util::redact::redact(&l.source),
                            location: source.location.to_string(),
                        });
                    } else {
                        return Err(RegistryError::ChangedLockedBundle {
                            version: version.clone(),
                            locked: l.sha256.to_hex(),
                            published: p.sha256.to_hex(),
                            location: source.location.to_string(),
                        });
                    }
                }
            }
            None => {
                let Some((source, p)) = first_having(sources, version) else {
                    return Err(not_published(sources, version));
                };
                if p.yanked {
                    return Err(RegistryError::Yanked {
                        version: version.clone(),
                        location: source.location.to_string(),
                    });
                }
                out.lock.upsert(lock_entry(source, p)?);
                out.added.push(version.clone());
            }
        }
    }
    if options.prune {
        let unused: Vec<MethodVersion> = current
            .methods
            .iter()
            .map(|m| m.version.clone())
            .filter(|v| !needed.contains(v))
            .collect();
        out.lock.methods.retain(|m| needed.contains(&m.version));
        out.removed = unused;
    }
    if !sources.is_empty() {
        out.yanked = out
            .lock
            .methods
            .iter()
            .filter(|m| {
                origin(sources, m)
                    .and_then(|s| s.index.get(&m.version))
                    .is_some_and(|e| e.yanked)
            })
            .map(|m| m.version.clone())
            .collect();
        // Gone from its own registry (one that records none: from every registry); only a
        // listing read whole can say so.
        out.gone = out
            .lock
            .methods
            .iter()
            .filter(|m| match &m.registry {
                Some(_) => origin(sources, m).is_some_and(|s| s.whole() && !s.lists(&m.version)),
                None => sources.iter().all(|s| s.whole() && !s.lists(&m.version)),
            })
            .map(|m| m.version.clone())
            .collect();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::Format;
    use crate::registry::IndexEntry;
    use crate::util::digest::Sha256;

    fn v(s: &str) -> MethodVersion {
        s.parse().unwrap()
    }

    fn published(version: &str, content: &[u8], yanked: bool) -> IndexEntry {
        IndexEntry {
            version: v(version),
            url: format!("../../bundles/a2c-{version}.tar.gz"),
            sha256: Sha256::of(content),
            size: content.len() as u64,
            format: Format::TarGz,
            tree: None,
            yanked,
        }
    }

    fn reg() -> RegistryLocation {
        RegistryLocation::parse("/reg", std::path::Path::new("/")).unwrap()
    }

    fn setup() -> (Index, RegistryLocation) {
        let mut index = Index::new();
        index.versions = vec![
            published("1.0.0", b"a", false),
            published("1.1.0", b"b", true),
            published("2.0.0", b"c", false),
        ];
        (index, reg())
    }

    const KEEP: LockPlanOptions = LockPlanOptions {
        update: false,
        only: None,
        prune: false,
    };
    const LOCK: LockPlanOptions = LockPlanOptions {
        update: false,
        only: None,
        prune: true,
    };
    const UPDATE: LockPlanOptions = LockPlanOptions {
        update: true,
        only: None,
        prune: true,
    };

    /// Resolves `versions` against `lock` and the test registry `index`.
    fn run(
        versions: &[&str],
        lock: &Lockfile,
        index: &Index,
        options: LockPlanOptions,
    ) -> Result<LockPlan, RegistryError> {
        let needed: BTreeSet<MethodVersion> = versions.iter().map(|s| v(s)).collect();
        let reg = reg();
        plan(
            &needed,
            lock,
            &[RegistryIndex {
                index,
                location: &reg,
                name: None,
            }],
            options,
        )
    }

    #[test]
    fn adds_missing_keeps_locked_and_prunes() {
        let (index, _) = setup();
        let first = run(&["1.0.0"], &Lockfile::default(), &index, LOCK).unwrap();
        assert_eq!(first.added, [v("1.0.0")]);
        assert_eq!(first.lock.methods[0].source, "file:///reg/bundles/a2c-1.0.0.tar.gz");
        let second = run(&["2.0.0"], &first.lock, &index, LOCK).unwrap();
        assert_eq!(second.added, [v("2.0.0")]);
        assert_eq!(second.removed, [v("1.0.0")]);
        let keep = run(&["2.0.0"], &first.lock, &index, KEEP).unwrap();
        assert_eq!(keep.lock.methods.len(), 2, "install does not prune");
        // Nothing to resolve: no registry needed.
        let needed: BTreeSet<_> = [v("1.0.0")].into();
        let offline = plan(&needed, &first.lock, &[], KEEP).unwrap();
        assert!(!offline.changed());
    }

    #[test]
    fn changed_bundles_and_yanks_are_refused() {
        let (mut index, _) = setup();
        let lock = run(&["1.0.0"], &Lockfile::default(), &index, KEEP).unwrap().lock;
        index.versions[0] = published("1.0.0", b"tampered", false);
        let e = run(&["1.0.0"], &lock, &index, KEEP).unwrap_err();
        assert!(e.to_string().contains("the registry changed a locked bundle"), "{e}");
        let updated = run(&["1.0.0"], &lock, &index, UPDATE).unwrap();
        assert_eq!(updated.updated, [v("1.0.0")]);
        let e = run(&["1.1.0"], &Lockfile::default(), &index, KEEP).unwrap_err();
        assert!(e.to_string().contains("yanked"), "{e}");
        let e = run(&["9.0.0"], &Lockfile::default(), &index, KEEP).unwrap_err();
        assert!(e.to_string().contains("not in the registry"), "{e}");
        let missing: BTreeSet<_> = [v("9.0.0")].into();
        let e = plan(&missing, &Lockfile::default(), &[], KEEP).unwrap_err();
        assert!(matches!(e, RegistryError::NoRegistry));
    }

    #[test]
    fn a_yanked_version_already_locked_stays() {
        let (mut index, _) = setup();
        index.versions[1].yanked = false;
        let lock = run(&["1.1.0"], &Lockfile::default(), &index, KEEP).unwrap().lock;
        index.versions[1].yanked = true;
        assert!(!run(&["1.1.0"], &lock, &index, KEEP).unwrap().changed());
        assert!(!run(&["1.1.0"], &lock, &index, UPDATE).unwrap().changed());
    }
}
