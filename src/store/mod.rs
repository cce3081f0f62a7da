//! The store `<X>/.tools_local/esys/a2c/`: verified, side-by-side installs of method versions,
//! the content-addressed bundle cache, receipts and the cross-process store lock.
//!
//! Layout of a store:
//!
//! ```text
//! <store>/<V>/                      an installed tree (read-only files), published by one rename
//! <store>/<V>/.a2c-receipt.json     its install receipt, written last
//! <store>/.staging/                 work directories of a running install (cleaned under the lock)
//! <store>/.lock                     the store lock (flock), holding the holder's pid
//! ```

pub mod cache;
pub mod flock;
pub mod gc;
pub mod install;
pub mod receipt;

use std::path::PathBuf;

pub use cache::Cache;
pub use install::{InstallOptions, InstallReport, Installed, Reporter, Reused, Source};
pub use receipt::Receipt;

use crate::util::version::MethodVersion;

/// The staging directory inside a store.
pub const STAGING_DIR: &str = ".staging";
/// The lock file inside a store.
pub const LOCK_FILE: &str = ".lock";

/// Errors of the install pipeline.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Config(String),
    #[error("timed out waiting for the store lock `{}` after {seconds} s", path.display())]
    LockTimeout { path: PathBuf, seconds: u64 },
    #[error("failed to install version {version} from `{source_name}`")]
    Extract {
        version: MethodVersion,
        source_name: String,
        #[source]
        source: crate::archive::ArchiveError,
    },
    #[error(transparent)]
    Mismatch(Box<Mismatch>),
    #[error("the bundle of version {version} from `{source_name}` {reason}")]
    BadManifest {
        version: MethodVersion,
        source_name: String,
        reason: String,
    },
    #[error("no bundle for version {version} (sha256 {sha256}); looked in {}", looked.join(", "))]
    Missing {
        version: MethodVersion,
        sha256: String,
        looked: Vec<String>,
        offline: bool,
    },
    #[error("cannot fetch `{url}`: a2c reads file://, http:// and https:// sources")]
    UnsupportedSource { url: String },
    #[error("failed to download version {version}")]
    Download {
        version: MethodVersion,
        #[source]
        source: Box<crate::registry::client::HttpError>,
    },
}

/// A bundle that is not the one the lock pins.
#[derive(Debug, thiserror::Error)]
#[error("{what} mismatch for version {version} from `{source_name}`: expected {expected}, got {actual}")]
pub struct Mismatch {
    pub version: MethodVersion,
    pub what: &'static str,
    pub source_name: String,
    pub expected: String,
    pub actual: String,
}

impl StoreError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::LockTimeout { .. } => format!(
                "another a2c process is installing into this store; wait for it, or raise {} (seconds)",
                crate::env::A2C_LOCK_TIMEOUT
            ),
            Self::Extract { source, .. } => return source.hint(),
            Self::Mismatch(_) => {
                "the bundle is not the one the lock pins: the registry changed a published bundle, or the file was tampered with; nothing was installed".into()
            }
            Self::BadManifest { .. } => "the bundle does not hold the method version it claims; tell the registry's owner".into(),
            Self::Missing { offline: true, .. } => {
                "pass `--from DIR` with the bundles (see `a2c vendor`), or run without `--offline`".into()
            }
            Self::Missing { .. } => "check the lock's `source`, or pass `--from DIR`".into(),
            Self::UnsupportedSource { .. } => "install offline with `a2c install --offline --from DIR`".into(),
            Self::Download { source, .. } => return source.hint(),
            Self::Config(_) | Self::Io(_) => return None,
        })
    }
}
