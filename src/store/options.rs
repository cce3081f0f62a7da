//! What an install is given and reports: its options, the progress callbacks, and where a
//! bundle came from — shared by the pipeline (`install`) and the bundle sources (`source`).

use std::path::{Path, PathBuf};

use super::cache::Cache;
use super::trees::LinkMode;
use crate::archive::Limits;
use crate::util::version::MethodVersion;

/// Progress callbacks; the CLI implements them (indicatif on a terminal, nothing otherwise).
pub trait Reporter: Sync {
    fn waiting_for_lock(&self, _path: &Path) {}
    /// How many versions this run installs, known before the first starts.
    fn plan(&self, _versions: usize) {}
    /// A version is installed (once per version, whatever it took).
    fn installed(&self, _version: &MethodVersion) {}
    fn start(&self, _version: &MethodVersion, _bytes: u64) {}
    fn finish(&self, _version: &MethodVersion, _bytes: u64) {}
    fn download_start(&self, _version: &MethodVersion, _bytes: u64) {}
    fn download_progress(&self, _version: &MethodVersion, _bytes_so_far: u64) {}
    fn download_finish(&self, _version: &MethodVersion) {}
}

/// A reporter that reports nothing.
pub struct Silent;
impl Reporter for Silent {}

/// How to install.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    pub store: super::Store,
    /// The bundle cache (always present: `a2c` falls back to `<store>/.cache`).
    pub cache: Cache,
    /// The HTTP client, built on first use; `None` reads no registry at all.
    pub network: Option<std::sync::Arc<crate::net::LazyClient>>,
    pub offline: bool,
    pub from: Option<PathBuf>,
    pub jobs: usize,
    pub limits: Limits,
    /// The file registry the user or the marker configured: a `file://` source inside it may be
    /// named in messages with its digest and size; one elsewhere (named by the lock alone) not.
    pub registry_dir: Option<PathBuf>,
    /// Where the configured registries and mirrors serve each locked bundle (by version, in
    /// order), found in their indexes with the locked sha256 and size: tried after the cache
    /// and `--from`, before the lock's own `source`.
    pub alternatives: std::collections::BTreeMap<MethodVersion, Vec<crate::lock::BundleLocation>>,
    /// How versions are placed from the shared tree cache; `None`: the fastest that works.
    pub link_mode: Option<LinkMode>,
    /// Versions to install again from a verified bundle even when installed (`--reinstall`):
    /// the repair of a tampered or broken version. The tree cache is not used for them.
    pub reinstall: std::collections::BTreeSet<MethodVersion>,
}

/// Where a bundle came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Cache,
    From,
    Registry,
    /// Placed from the shared tree cache: no bundle was read.
    #[serde(rename = "tree-cache")]
    TreeCache,
}
