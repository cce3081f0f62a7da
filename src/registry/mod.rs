//! Registries: the index format (versioned), a location and the kind it is (`kind`; one
//! folder per kind: `dir`, `http`, `oci`, `pypi`, `conan`, `s3`, `gs`, `az`, each registered in
//! [`KINDS`]; the object stores' shared part is `objstore`), the
//! handle through which a2c reads, publishes, yanks and signs (`handle`), the pure lock plan
//! (`lock_plan`) and signed indexes (`signing`). The HTTP client is `net`'s.

pub mod az;
pub mod conan;
pub mod dir;
pub mod gs;
pub mod handle;
pub mod http;
pub mod index;
pub mod kind;
pub mod location;
mod objstore;
pub mod oci;
pub mod pypi;
pub mod s3;

pub use index::{Index, IndexEntry};
pub use location::{RegistryLocation, bundle_location};

use std::path::PathBuf;

use crate::util::version::MethodVersion;

/// Errors reading, resolving or publishing.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// An HTTP error with the hint of the registry kind that met it (a kind maps the errors
    /// it knows to its own words: `net` names no kind).
    #[error("{error}")]
    Refused {
        error: Box<crate::net::HttpError>,
        hint: String,
    },
    #[error("invalid registry location `{location}`: {reason}")]
    BadLocation { location: String, reason: String },
    /// An object store's answer (`s3://…`), in a2c's words, with what to check.
    #[error("`{location}`: {message}")]
    ObjectStore {
        location: String,
        message: String,
        hint: Option<String>,
    },
    #[error("invalid registry location `{location}`: credentials in the URL are not allowed")]
    CredentialsInUrl { location: String },
    #[error("no registry index at `{}`", path.display())]
    NoIndex { path: PathBuf },
    #[error("invalid registry index `{location}`: {reason}")]
    InvalidIndex { location: String, reason: String },
    #[error("unsupported registry index `{location}`: {why}")]
    IndexTooNew {
        location: String,
        why: crate::util::formats::FormatError,
    },
    /// `yank` (or `yank --undo`) of a version the registry never published.
    #[error("version {version} is not in the registry `{location}`: there is nothing to yank")]
    NothingToYank {
        version: MethodVersion,
        location: String,
        available: Box<[MethodVersion]>,
    },
    #[error("version {version} is not in the registry `{location}`{}{}", pinned(pinned_by), other.as_deref().map(|o| format!(": {}", o.what)).unwrap_or_default())]
    NotPublished {
        version: MethodVersion,
        location: String,
        /// What the registry holds under that version instead, when it holds something else
        /// (an OCI tag another client pushed).
        other: Option<Box<index::Foreign>>,
        /// The versions the registry has (not yanked), for the hint.
        available: Box<[MethodVersion]>,
        /// The members that pin it (filled by the caller that knows them).
        pinned_by: Vec<PathBuf>,
    },
    #[error("version {version} is yanked from the registry `{location}`")]
    Yanked { version: MethodVersion, location: String },
    #[error(
        "the registry changed a locked bundle: version {version} is locked with sha256 {locked}, the registry `{location}` now says {published}"
    )]
    ChangedLockedBundle {
        version: MethodVersion,
        locked: String,
        published: String,
        location: String,
    },
    /// The lock's bundle of `version` came from another place than the registry configured
    /// now, which publishes another bundle under that version.
    #[error(
        "version {version} is locked from `{locked_source}`, and the registry configured now, `{location}`, publishes another bundle under it"
    )]
    LockedFromElsewhere {
        version: MethodVersion,
        locked_source: String,
        location: String,
    },
    #[error(
        "version {version} is already published in `{index}` with different content (sha256 {existing}, the new bundle is {new})"
    )]
    AlreadyPublished {
        version: MethodVersion,
        /// Where the version is published: the index file, or the registry as shown.
        index: String,
        existing: String,
        new: String,
        /// The files are the published version's (its tree digest matches): only the packing
        /// differs.
        same_tree: bool,
    },
    #[error("no registry configured")]
    NoRegistry,
    #[error(transparent)]
    Http(Box<crate::net::HttpError>),
    #[error(transparent)]
    Signature(#[from] signing::SignError),
    #[error("the signed index of `{location}` expired at {expires}")]
    Expired { location: String, expires: String },
    #[error(
        "the signed index of `{location}` has serial {serial}, lower than the {recorded} the lock recorded: an older index is being replayed (rollback)"
    )]
    Rollback {
        location: String,
        serial: String,
        recorded: u64,
    },
}

impl RegistryError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::ObjectStore { hint, .. } => return hint.clone(),
            Self::NoIndex { .. } => "check the registry location: a registry holds `index/esys/a2c.json`".into(),
            Self::InvalidIndex { .. } => "the registry's index is malformed; tell the registry's owner".into(),
            Self::IndexTooNew { .. } => "upgrade a2c to read this registry".into(),
            Self::NotPublished { other: Some(other), .. } => other.hint.clone(),
            Self::NotPublished { version, available, .. } if available.is_empty() => {
                format!("the registry has no version yet: publish {version} with `a2c pack`")
            }
            Self::NotPublished { version, available, .. } => format!(
                "the registry has {}: pin one of those (`a2c migrate version --to V` in the member), or publish {version} with `a2c pack`",
                available.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
            ),
            Self::NothingToYank { available, .. } if available.is_empty() => {
                "the registry publishes no version yet: `a2c list` shows what it holds".into()
            }
            Self::NothingToYank { available, .. } => format!(
                "yank one of the versions it publishes ({}); `a2c list` shows them with their state",
                available.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
            ),
            Self::Yanked { .. } => "yanked versions are refused unless already locked; pin another version".into(),
            Self::LockedFromElsewhere { .. } => {
                "the lock was made against another registry: to take this one's bundles, run `a2c lock --update` and commit the lock; to keep the locked ones, configure the registry they came from again (or list it under `mirrors:`)".into()
            }
            Self::ChangedLockedBundle { .. } => {
                "a published bundle must never change: ask the registry's owner; to accept the new bundle deliberately, run `a2c lock --update`".into()
            }
            Self::AlreadyPublished { same_tree: true, .. } => "the files are the published version's (the tree digests match): only how they were packed differs; pack with the settings the version was published with (`--level`, `--threads`, `--format`)".into(),
            Self::AlreadyPublished { .. } => "publish the changed tree under a new version".into(),
            Self::NoRegistry => format!(
                "pass `--registry URL`, set {}, or add `registry:` to the workspace marker (`a2c init --registry URL` writes one)",
                crate::env::A2C_REGISTRY
            ),
            Self::CredentialsInUrl { .. } => format!(
                "bind a token to the host with `a2c login HOST` (or set {}, or add the host to ~/.netrc) instead",
                crate::env::A2C_REGISTRY_TOKEN
            ),
            Self::BadLocation { .. } => format!("a registry is {}", RegistryLocation::syntaxes()),
            Self::Http(e) if matches!(**e, crate::net::HttpError::Status { status: 404, .. }) => {
                let crate::net::HttpError::Status { url, .. } = &**e else { unreachable!() };
                format!("no registry index at `{url}`: check the registry URL (a registry serves `index/esys/a2c.json`)")
            }
            Self::Http(e) => return e.hint(),
            Self::Refused { hint, .. } => hint.clone(),
            Self::Signature(e) => return e.hint(),
            Self::Expired { .. } => "ask the registry's owner to re-sign it (`a2c sign --expires-in DAYS`); to use it anyway, pass --allow-expired".into(),
            Self::Rollback { .. } => "a mirror or the registry host serves a stale index: use another, or tell the registry's owner; the lock is unchanged".into(),
            Self::Io(_) => return None,
        })
    }
}

pub mod lock_plan;
pub mod signing;

fn pinned(by: &[PathBuf]) -> String {
    match by {
        [] => String::new(),
        _ => format!(
            ", pinned by {}",
            by.iter()
                .map(|p| format!("`{}`", p.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The entry of `version` in `index` (read from `location`), to yank or restore; refused,
/// naming the versions there are, when the index lacks it.
pub fn entry_to_yank<'a>(
    index: &'a mut Index,
    version: &MethodVersion,
    location: String,
) -> Result<&'a mut IndexEntry, RegistryError> {
    let available = available(index);
    index
        .versions
        .iter_mut()
        .find(|e| e.version == *version)
        .ok_or_else(|| RegistryError::NothingToYank {
            version: version.clone(),
            location,
            available: available.into(),
        })
}

/// The versions of `index` a lock may take (not yanked), for messages.
pub fn available(index: &Index) -> Vec<MethodVersion> {
    let mut out: Vec<MethodVersion> = index
        .versions
        .iter()
        .filter(|e| !e.yanked)
        .map(|e| e.version.clone())
        .chain(index.listed.iter().cloned())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The versions a caller needs from an index, when it needs only some: an OCI registry then
/// reads only their manifests. `None`: every version (up to the listing cap).
pub type Wanted<'a> = Option<&'a std::collections::BTreeSet<MethodVersion>>;

impl From<crate::net::HttpError> for RegistryError {
    fn from(e: crate::net::HttpError) -> Self {
        Self::Http(Box::new(e))
    }
}

/// Reads the index of `location` (over HTTP with `client`), trusting it as it is.
pub fn read_index(location: &RegistryLocation, client: &crate::net::LazyClient) -> Result<Index, RegistryError> {
    read_index_trusted(location, client, &[], None)
}

/// Every registry kind, in the order their syntaxes are listed: **the one line that registers a
/// kind** (docs/architecture.md, "Adding a registry kind"), kept on one line
/// (`.ci/kinds-stand-alone` takes each kind out by its entry).
#[rustfmt::skip]
pub const KINDS: &[&kind::Kind] = &[&dir::KIND, &http::KIND, &oci::KIND, &pypi::KIND, &conan::KIND, &s3::KIND, &gs::KIND, &az::KIND];

/// What `a2c pack` makes for a registry, decided by its kind (the CLI asks, never matches on
/// the kind itself).
#[derive(Debug)]
pub enum PackPlan {
    /// A bundle of this format, published through the registry's handle.
    Bundle(crate::archive::Format),
    /// A recipe another tool publishes (a Conan remote takes Conan packages only: `conan
    /// create` and `conan upload` publish the recipe a2c writes).
    Recipe(Box<dyn handle::RecipeWriter>),
}

/// The environment variables the registry kinds read besides a2c's (`Kind::environment`), for
/// the session's one reading of them.
pub fn environment() -> Vec<&'static str> {
    KINDS.iter().flat_map(|k| k.environment.iter().copied()).collect()
}

/// The token exchanges of the registry kinds that have one (the session hands them to the
/// network: `net` names no kind).
pub fn token_exchanges() -> crate::net::Exchanges {
    crate::net::Exchanges(KINDS.iter().filter_map(|k| k.exchange).map(|make| make()).collect())
}

/// The words of the kind a lock entry's `source` belongs to for an HTTP error met fetching it
/// (an `oci://` source's `401` is "run `docker login`"); `None`: the network's words.
pub fn source_hint(source: &str, e: &crate::net::HttpError, network: &crate::net::Network) -> Option<String> {
    let location = RegistryLocation::parse(source, std::path::Path::new("/")).ok()?;
    match e {
        crate::net::HttpError::Status { status: 401 | 403, .. } => {
            location.refused_hint(network).or_else(|| location.hint(e))
        }
        _ => location.hint(e),
    }
}

/// Reads the index of `location` through its handle; when `trusted` public keys are pinned, its
/// minisign signature must verify with one of them **before** anything in it is parsed or
/// trusted.
pub fn read_index_trusted(
    location: &RegistryLocation,
    client: &crate::net::LazyClient,
    trusted: &[String],
    wanted: Wanted<'_>,
) -> Result<Index, RegistryError> {
    location.open(client.network()).read_index(client, trusted, wanted)
}

/// An index file's `bytes`, as read from `shown_index`: with `trusted` keys, the signature
/// `signature` gives must verify first; then parsed. `fetched_from` is the URL it was finally
/// read from (entry URLs resolve against it, RFC 3986 §5.1.3).
pub(crate) fn trusted_index(
    location: &str,
    shown_index: &str,
    bytes: Vec<u8>,
    signature: impl FnOnce() -> Result<Option<String>, RegistryError>,
    trusted: &[String],
    fetched_from: Option<url::Url>,
) -> Result<Index, RegistryError> {
    if !trusted.is_empty() {
        let sig = signature()?;
        signing::verify(location, &bytes, sig.as_deref(), trusted)?;
    }
    let text = String::from_utf8(bytes).map_err(|_| RegistryError::InvalidIndex {
        location: shown_index.to_string(),
        reason: "the index is not UTF-8 text (a compressed or binary body?)".into(),
    })?;
    let mut index = Index::parse(&text, shown_index)?;
    index.fetched_from = fetched_from;
    Ok(index)
}

impl crate::util::hint::Hint for RegistryError {
    fn hint(&self) -> Option<String> {
        RegistryError::hint(self)
    }
}
