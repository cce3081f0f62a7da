//! The static registry: its index format (versioned), the client that reads it (`file://`
//! URLs and plain paths; HTTP arrives with the HTTP issue), resolution (pure) and publishing
//! into a file registry (`a2c pack`).

pub mod index;
pub mod location;
pub mod publish;

pub use index::{Index, IndexEntry};
pub use location::RegistryLocation;

use std::path::PathBuf;

use crate::util::version::MethodVersion;

/// Errors reading, resolving or publishing.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("invalid registry location `{location}`: {reason}")]
    BadLocation { location: String, reason: String },
    #[error("no registry index at `{}`", path.display())]
    NoIndex { path: PathBuf },
    #[error("invalid registry index `{location}`: {reason}")]
    InvalidIndex { location: String, reason: String },
    #[error(
        "unsupported registry index `{location}`: found v{found}, this a2c supports up to v{}",
        index::INDEX_SCHEMA
    )]
    IndexTooNew { location: String, found: u64 },
    #[error("version {version} is not in the registry `{location}`")]
    NotPublished { version: MethodVersion, location: String },
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
    #[error("version {version} is already published in `{}` with different content (sha256 {existing}, the new bundle is {new})", index.display())]
    AlreadyPublished {
        version: MethodVersion,
        index: PathBuf,
        existing: String,
        new: String,
    },
    #[error("the registry `{location}` is served over {scheme}, which this a2c build cannot read yet")]
    UnsupportedScheme { location: String, scheme: String },
    #[error("no registry configured")]
    NoRegistry,
}

impl RegistryError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::NoIndex { .. } => "check the registry location: a registry holds `index/esys/a2c.json`".into(),
            Self::InvalidIndex { .. } => "the registry's index is malformed; tell the registry's owner".into(),
            Self::IndexTooNew { .. } => "upgrade a2c to read this registry".into(),
            Self::NotPublished { .. } => "publish it with `a2c pack`, or pin a version the registry has".into(),
            Self::Yanked { .. } => "yanked versions are refused unless already locked; pin another version".into(),
            Self::ChangedLockedBundle { .. } => {
                "a published bundle must never change: ask the registry's owner; to accept the new bundle deliberately, run `a2c lock --update`".into()
            }
            Self::AlreadyPublished { .. } => "publish the changed tree under a new version".into(),
            Self::UnsupportedScheme { .. } => {
                "use a file registry (a path or file:// URL), or install offline with `a2c install --offline --from DIR`".into()
            }
            Self::NoRegistry => format!(
                "pass `--registry URL`, set {}, or add `registry:` to the workspace marker",
                crate::env::A2C_REGISTRY
            ),
            Self::BadLocation { .. } => "a registry is a path, a file:// URL or an https:// URL".into(),
            Self::Io(_) => return None,
        })
    }
}

pub mod resolve;

/// Reads the index of `location`.
pub fn read_index(location: &RegistryLocation) -> Result<Index, RegistryError> {
    match location {
        RegistryLocation::Dir(dir) => {
            let path = dir.join(location::INDEX_PATH);
            let text = match fs_err::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(RegistryError::NoIndex { path }),
                Err(e) => return Err(e.into()),
            };
            Index::parse(&text, &path.display().to_string())
        }
        RegistryLocation::Http(url) => Err(RegistryError::UnsupportedScheme {
            location: url.to_string(),
            scheme: url.scheme().to_string(),
        }),
    }
}
