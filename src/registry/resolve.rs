//! Lock resolution: pure, from the needed versions, the current lock and the index.

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
pub struct ResolveOptions {
    /// Re-resolve every needed version from the index (`a2c lock --update`).
    pub update: bool,
    /// With `update`: only these versions (`a2c lock --update V`, like `cargo update -p`).
    pub only: Option<BTreeSet<MethodVersion>>,
    /// Drop entries no member needs (`a2c lock`; `a2c install` keeps them).
    pub prune: bool,
}

fn lock_entry(
    index: &super::Index,
    index_entry: &super::IndexEntry,
    location: &RegistryLocation,
) -> Result<LockEntry, RegistryError> {
    let source = match &index.fetched_from {
        // After a redirect, relative URLs resolve against the final URL (RFC 3986 §5.1.3).
        Some(base) => base.join(&index_entry.url).map_err(|e| RegistryError::InvalidIndex {
            location: base.to_string(),
            reason: format!("entry url `{}` does not resolve: {e}", index_entry.url),
        })?,
        None => location.resolve_url(&index_entry.url)?,
    };
    Ok(LockEntry {
        name: METHOD_NAME.into(),
        version: index_entry.version.clone(),
        source: source.to_string(),
        sha256: index_entry.sha256,
        size: index_entry.size,
        format: index_entry.format,
        tree: index_entry.tree.clone(),
    })
}

/// Resolves `needed` against `current` and, when given, the registry's index. Existing entries
/// are kept untouched; an index whose digest for a locked version differs is an error — but
/// for a registry whose versions gain revisions (Conan), where it is a newer revision, kept
/// locked and noted until `--update`; yanked versions are refused unless already locked.
pub fn plan(
    needed: &BTreeSet<MethodVersion>,
    current: &Lockfile,
    registry: Option<(&Index, &RegistryLocation)>,
    options: ResolveOptions,
) -> Result<LockPlan, RegistryError> {
    let mut out = LockPlan {
        lock: current.clone(),
        ..LockPlan::default()
    };
    for version in needed {
        let updating = options.update && options.only.as_ref().is_none_or(|o| o.contains(version));
        let locked = current.get(version);
        let published = registry.and_then(|(index, _)| index.get(version));
        match (locked, published) {
            (Some(l), Some(p)) if updating => {
                let (index, location) = registry.expect("published implies a registry");
                if p.yanked && l.sha256 != p.sha256 {
                    return Err(RegistryError::Yanked {
                        version: version.clone(),
                        location: location.to_string(),
                    });
                }
                let entry = lock_entry(index, p, location)?;
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
            }
            (Some(l), Some(p)) => {
                let (_, location) = registry.expect("published implies a registry");
                if l.sha256 != p.sha256 && location.revises_versions() {
                    out.revised.push(version.clone());
                } else if l.sha256 != p.sha256 {
                    return Err(RegistryError::ChangedLockedBundle {
                        version: version.clone(),
                        locked: l.sha256.to_hex(),
                        published: p.sha256.to_hex(),
                        location: location.to_string(),
                    });
                }
            }
            (Some(_), None) if updating => {
                let (index, location) = registry.ok_or(RegistryError::NoRegistry)?;
                return Err(RegistryError::NotPublished {
                    version: version.clone(),
                    location: location.to_string(),
                    available: super::available(index).into(),
                    pinned_by: Vec::new(),
                    other: index.foreign_at(version),
                });
            }
            (Some(_), None) => {}
            (None, Some(p)) => {
                let (index, location) = registry.expect("published implies a registry");
                if p.yanked {
                    return Err(RegistryError::Yanked {
                        version: version.clone(),
                        location: location.to_string(),
                    });
                }
                out.lock.upsert(lock_entry(index, p, location)?);
                out.added.push(version.clone());
            }
            (None, None) => match registry {
                None => return Err(RegistryError::NoRegistry),
                Some((index, location)) => {
                    return Err(RegistryError::NotPublished {
                        version: version.clone(),
                        location: location.to_string(),
                        available: super::available(index).into(),
                        pinned_by: Vec::new(),
                        other: index.foreign_at(version),
                    });
                }
            },
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
    if let Some((index, _)) = registry {
        out.yanked = out
            .lock
            .methods
            .iter()
            .filter(|m| index.get(&m.version).is_some_and(|e| e.yanked))
            .map(|m| m.version.clone())
            .collect();
        // Only a listing read whole can say a version is gone.
        if index.truncated.is_none() {
            out.gone = out
                .lock
                .methods
                .iter()
                .filter(|m| {
                    index.get(&m.version).is_none()
                        && !index.listed.contains(&m.version)
                        && !index.foreign.iter().any(|f| f.version == m.version)
                })
                .map(|m| m.version.clone())
                .collect();
        }
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
        RegistryLocation::parse("/reg", std::path::Path::new("/"), &Default::default()).unwrap()
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

    const KEEP: ResolveOptions = ResolveOptions {
        update: false,
        only: None,
        prune: false,
    };
    const LOCK: ResolveOptions = ResolveOptions {
        update: false,
        only: None,
        prune: true,
    };
    const UPDATE: ResolveOptions = ResolveOptions {
        update: true,
        only: None,
        prune: true,
    };

    /// Resolves `versions` against `lock` and the test registry `index`.
    fn run(
        versions: &[&str],
        lock: &Lockfile,
        index: &Index,
        options: ResolveOptions,
    ) -> Result<LockPlan, RegistryError> {
        let needed: BTreeSet<MethodVersion> = versions.iter().map(|s| v(s)).collect();
        plan(&needed, lock, Some((index, &reg())), options)
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
        let offline = plan(&needed, &first.lock, None, KEEP).unwrap();
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
        let e = plan(&missing, &Lockfile::default(), None, KEEP).unwrap_err();
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
