//! `a2c list` and `a2c outdated`: the versions the members need, the lock pins, the store
//! holds and the registry publishes, side by side; and the members behind the newest.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::{OpsError, lock_path, needs, network};
use crate::lock::Lockfile;
use crate::util::version::MethodVersion;
use crate::workspace::Context;

/// What the registry says of a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RegistryState {
    Published,
    Yanked,
    Absent,
    /// The registry holds something under the version that a2c cannot lock (a Conan recipe
    /// revision with several package ids, an OCI tag of another artifact): the note says why.
    Unusable,
}

/// One version in any of the four places.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub version: MethodVersion,
    /// The members pinning it.
    pub members: Vec<PathBuf>,
    pub locked: bool,
    pub installed: bool,
    /// `None` when the registry was not read (offline, none configured, or unreachable).
    pub registry: Option<RegistryState>,
}

/// `a2c list`; serialized as its `--json` document.
#[derive(Debug, serde::Serialize)]
pub struct Listing {
    #[serde(rename = "versions")]
    pub rows: Vec<Row>,
    pub registry: Option<String>,
    /// Why the registry was not read, when it was not; else what reading it passed over (a
    /// version it cannot lock, a capped listing's rest).
    pub registry_note: Option<String>,
    /// What to do about the registry that was not read, when its error says (credentials, a
    /// private CA).
    #[serde(skip)]
    pub registry_hint: Option<String>,
    /// Whether the registry's index was read.
    #[serde(skip)]
    pub read: bool,
    /// Whether the marker lists several registries (`registry` then names them all).
    #[serde(skip)]
    pub several: bool,
    /// Whether it was read whole (a capped listing cannot say a version is gone).
    #[serde(skip)]
    pub truncated: bool,
}

impl Listing {
    /// The newest version the registry publishes (not yanked).
    pub fn newest(&self) -> Option<&MethodVersion> {
        self.rows
            .iter()
            .filter(|r| r.registry == Some(RegistryState::Published))
            .map(|r| &r.version)
            .max()
    }
}

pub fn list(session: &super::Session, ctx: &Context) -> Result<Listing, OpsError> {
    let offline = session.offline();
    let needs = needs(ctx)?;
    let lock = Lockfile::read(&lock_path(ctx)?)?.unwrap_or_default();
    let store = super::store(ctx)?;
    // A locked version is installed when the store holds what the lock pins; one the lock does
    // not pin (`install --version V`, a member gone) when the store holds it, receipt and all.
    let installed: BTreeSet<MethodVersion> = store
        .installed_versions()
        .into_iter()
        .filter(|(v, path)| match lock.get(v) {
            Some(e) => store.is_installed(e),
            None => path.join(crate::archive::RECEIPT_FILE).is_file(),
        })
        .map(|(v, _)| v)
        .collect();
    let registries = super::registries(session, ctx, None)?;
    let mut registry_hint = None;
    let (indexes, note) = match (registries.is_empty(), offline) {
        (true, _) => (
            None,
            Some(match super::registry_config(ctx) {
                Some(file) => format!("no registry configured: add `registry: URL` to `{}`", file.display()),
                None => "no registry configured".to_string(),
            }),
        ),
        (false, true) => (None, Some("offline".to_string())),
        (false, false) => match super::read_indexes(ctx, &registries, &network(session, ctx, None)?, false, None) {
            Ok(indexes) => {
                let notes: Vec<String> = indexes
                    .iter()
                    .flat_map(|index| {
                        index
                            .foreign
                            .iter()
                            .map(|f| format!("{} passed over: {} ({})", f.version, f.what, f.hint))
                            .chain(index.truncated.clone())
                    })
                    .collect();
                (Some(indexes), (!notes.is_empty()).then(|| notes.join("; ")))
            }
            Err(e) => {
                registry_hint = e.hint();
                (None, Some(e.to_string()))
            }
        },
    };
    let mut versions: BTreeSet<MethodVersion> = needs.keys().cloned().collect();
    versions.extend(lock.methods.iter().map(|m| m.version.clone()));
    versions.extend(installed.iter().cloned());
    for index in indexes.iter().flatten() {
        versions.extend(index.versions.iter().map(|e| e.version.clone()));
        versions.extend(index.listed.iter().cloned());
        versions.extend(index.foreign.iter().map(|f| f.version.clone()));
    }
    // What the registries say of a version: the first that has it, in the marker's order (the
    // one a lock takes it from).
    let state = |indexes: &[crate::registry::Index], v: &MethodVersion| {
        indexes
            .iter()
            .find_map(|i| match i.get(v) {
                Some(e) if e.yanked => Some(RegistryState::Yanked),
                Some(_) => Some(RegistryState::Published),
                // Listed, its entry not read (past a listing's cap): published, as far as known.
                None if i.listed.contains(v) => Some(RegistryState::Published),
                None if i.foreign.iter().any(|f| &f.version == v) => Some(RegistryState::Unusable),
                None => None,
            })
            .unwrap_or(RegistryState::Absent)
    };
    let rows = versions
        .into_iter()
        .map(|v| Row {
            members: needs.get(&v).cloned().unwrap_or_default(),
            locked: lock.get(&v).is_some(),
            installed: installed.contains(&v),
            registry: indexes.as_deref().map(|i| state(i, &v)),
            version: v,
        })
        .collect();
    Ok(Listing {
        rows,
        registry: (!registries.is_empty()).then(|| {
            registries
                .iter()
                .map(|r| r.location.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        }),
        several: registries.len() > 1,
        registry_note: note,
        registry_hint,
        read: indexes.is_some(),
        truncated: indexes.iter().flatten().any(|i| i.truncated.is_some()),
    })
}

/// What `a2c outdated` reports; serialized as its `--json` document
/// (docs/json/outdated.schema.json).
#[derive(Debug, serde::Serialize)]
pub struct Outdated {
    /// The newest version the registry publishes (`None`: it publishes none).
    pub newest: Option<MethodVersion>,
    /// Every member whose write contract is older, with that contract.
    #[serde(serialize_with = "behind")]
    pub members: Vec<(PathBuf, MethodVersion)>,
    /// Every member whose write contract the registry has yanked, with that contract (newer
    /// than `newest` or not: a yanked version is never current).
    #[serde(serialize_with = "behind")]
    pub yanked: Vec<(PathBuf, MethodVersion)>,
    /// Every member whose write contract the registry no longer lists (removed from it).
    #[serde(serialize_with = "behind")]
    pub gone: Vec<(PathBuf, MethodVersion)>,
    /// What a capped listing left out (said, not part of the document).
    #[serde(skip)]
    pub note: Option<String>,
    /// Whether the marker lists several registries (a removed version is then in none).
    #[serde(skip)]
    pub several: bool,
}

fn behind<S: serde::Serializer>(list: &[(PathBuf, MethodVersion)], s: S) -> Result<S::Ok, S::Error> {
    crate::util::pairs_as(list, "path", "version", s)
}

/// `a2c outdated`: the members whose write contract is older than the newest version the
/// registry publishes. The registry must be read (offline, or none configured, is an error).
pub fn outdated(session: &super::Session, ctx: &Context) -> Result<Outdated, OpsError> {
    let listing = list(session, ctx)?;
    if !listing.read {
        return Err(OpsError::NotRead {
            what: "what is outdated",
            reason: listing
                .registry_note
                .clone()
                .unwrap_or_else(|| "no reason given".into()),
            hint: listing.registry_hint.clone(),
        });
    }
    let newest = listing.newest().cloned();
    let of = |rows: &mut dyn Iterator<Item = &Row>| -> Vec<(PathBuf, MethodVersion)> {
        rows.flat_map(|r| r.members.iter().map(move |m| (m.clone(), r.version.clone())))
            .collect()
    };
    // Only a listing read whole can say a version is gone.
    let is_gone = |r: &Row| !listing.truncated && r.registry == Some(RegistryState::Absent);
    let members = of(&mut listing.rows.iter().filter(|r| {
        r.registry != Some(RegistryState::Yanked) && !is_gone(r) && newest.as_ref().is_some_and(|n| r.version < *n)
    }));
    let yanked = of(&mut listing
        .rows
        .iter()
        .filter(|r| r.registry == Some(RegistryState::Yanked)));
    let gone = of(&mut listing.rows.iter().filter(|r| is_gone(r)));
    let note = listing.registry_note.clone();
    Ok(Outdated {
        newest,
        members,
        yanked,
        gone,
        note,
        several: listing.several,
    })
}

/// `doctor`'s look at the registry (when one is configured and the run is online): a finding
/// for every version a member pins that the registry has yanked. A registry that cannot be read
/// gives no finding, only a note (why), for `-v`; nothing here ever fails `doctor` (its own
/// checks report what is wrong locally).
pub fn yanked_pins(session: &super::Session, ctx: &Context) -> (Vec<crate::doctor::Finding>, Option<String>) {
    match yanked_findings(session, ctx) {
        Ok(found) => found,
        Err(e) => (Vec::new(), Some(format!("the registry was not asked about yanks: {e}"))),
    }
}

fn yanked_findings(
    session: &super::Session,
    ctx: &Context,
) -> Result<(Vec<crate::doctor::Finding>, Option<String>), OpsError> {
    if session.offline() {
        return Ok((Vec::new(), Some("the registry was not read: --offline".into())));
    }
    let registries = super::registries(session, ctx, None)?;
    if registries.is_empty() {
        return Ok((Vec::new(), None));
    }
    let client = network(session, ctx, None)?;
    let mut indexes = Vec::new();
    for r in &registries {
        match super::read_index(ctx, &r.location, &client, true) {
            Ok(index) => indexes.push((index, &r.location)),
            Err(e) => {
                return Ok((
                    Vec::new(),
                    Some(format!("the registry `{}` was not read: {e}", r.location)),
                ));
            }
        }
    }
    let newest = indexes.iter().flat_map(|(i, _)| crate::registry::available(i)).max();
    let mut findings = Vec::new();
    for (version, members) in needs(ctx)? {
        // The registry a lock takes the version from: the first that has it.
        let Some((_, location)) = indexes.iter().find(|(i, _)| i.get(&version).is_some()) else {
            continue;
        };
        if !indexes
            .iter()
            .find_map(|(i, _)| i.get(&version))
            .is_some_and(|e| e.yanked)
        {
            continue;
        }
        for member in members {
            let quoted = crate::util::text::shell_quoted(&member);
            findings.push(crate::doctor::finding(
                crate::doctor::Code::VersionYanked,
                Some(member),
                Some(version.clone()),
                format!("{version} is yanked in the registry `{location}`: it still installs from the lock, but no new lock takes it"),
                match &newest {
                    // Run from wherever doctor was: the member named by `-C`.
                    Some(n) if *n > version => format!(
                        "move the member to a published version: `a2c -C {quoted} migrate version --to {n}`"
                    ),
                    _ => format!(
                        "the registry publishes no version newer than {version} (a write contract never goes back): ask its owner to publish one"
                    ),
                },
            ));
        }
    }
    Ok((findings, None))
}
