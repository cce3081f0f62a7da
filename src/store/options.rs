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

/// Default seconds to wait for the store lock (`A2C_LOCK_TIMEOUT`).
pub const DEFAULT_LOCK_TIMEOUT: u64 = 300;

/// The largest bundle a lock may pin: `A2C_MAX_BUNDLE_BYTES`, default 4 GiB.
pub const DEFAULT_MAX_BUNDLE_BYTES: u64 = 4 << 30;

/// What a session gives the store: the lock's patience, durability, the bundle size cap, how
/// versions are placed, and where the bundle cache is. A malformed variable is kept as its
/// message and reported only by the operation that needs the value.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Seconds to wait for a store or cache lock (`A2C_LOCK_TIMEOUT`).
    pub lock_timeout: Result<u64, String>,
    /// Sync the store's filesystem before a version is published (`A2C_FSYNC`).
    pub fsync: bool,
    /// The largest bundle a lock may pin (`A2C_MAX_BUNDLE_BYTES`).
    pub max_bundle_bytes: Result<u64, String>,
    /// How versions are placed from the shared tree cache (`A2C_LINK_MODE`); `None`: the
    /// fastest that works.
    pub link_mode: Result<Option<LinkMode>, String>,
    /// The bundle cache chosen by the environment (`A2C_CACHE_DIR`, the XDG cache, `~/.cache`),
    /// and the variable that chose it, if one did; `None`: `<store>/.cache`.
    pub cache_dir: Option<PathBuf>,
    pub cache_variable: Option<&'static str>,
}

impl Default for Settings {
    /// Every default, no cache directory of its own (tests and library callers).
    fn default() -> Self {
        Self {
            lock_timeout: Ok(DEFAULT_LOCK_TIMEOUT),
            fsync: true,
            max_bundle_bytes: Ok(DEFAULT_MAX_BUNDLE_BYTES),
            link_mode: Ok(None),
            cache_dir: None,
            cache_variable: None,
        }
    }
}

impl Settings {
    /// Reads them from the environment (the session's one reading).
    pub fn from_env() -> Self {
        let number = |name: &'static str, default: u64, unit: &str| {
            crate::env::number(name)
                .map_err(|(name, value)| format!("{name}=`{value}` is not a whole number of {unit}"))
                .map(|v| v.unwrap_or(default))
        };
        Self {
            lock_timeout: number(crate::env::A2C_LOCK_TIMEOUT, DEFAULT_LOCK_TIMEOUT, "seconds"),
            fsync: crate::env::fsync(),
            max_bundle_bytes: number(crate::env::A2C_MAX_BUNDLE_BYTES, DEFAULT_MAX_BUNDLE_BYTES, "bytes"),
            link_mode: LinkMode::parse_setting(crate::env::link_mode()),
            cache_dir: crate::env::cache_dir(),
            cache_variable: crate::env::cache_dir_from_variable().then_some(crate::env::A2C_CACHE_DIR),
        }
    }

    /// The lock timeout in seconds, or the error naming its variable.
    pub fn lock_timeout(&self) -> Result<u64, super::StoreError> {
        self.lock_timeout.clone().map_err(super::StoreError::Config)
    }
}

/// Whether an install reads registries: online, through the session's HTTP client (built on
/// first use); offline, never — with the flag that made the run so, which hints name.
#[derive(Debug, Clone)]
pub enum Reach {
    Online(std::sync::Arc<crate::net::LazyClient>),
    /// `--offline`, or `--frozen`.
    Offline(&'static str),
}

/// How to install.
#[derive(Debug, Clone)]
pub struct InstallContext {
    pub store: super::Store,
    /// The session's store settings (lock timeout, fsync, bundle size cap).
    pub settings: Settings,
    /// The session's network settings: how a registry kind's own address (an `oci://` lock
    /// source) is reached.
    pub network: crate::net::Network,
    /// The lock file's directory: a relative lock `source` is a path from there.
    pub lock_dir: Option<PathBuf>,
    /// The bundle cache (always present: `a2c` falls back to `<store>/.cache`).
    pub cache: Cache,
    /// Whether registries are read: the HTTP client, or offline.
    pub reach: Reach,
    pub from: Option<PathBuf>,
    pub jobs: usize,
    pub limits: Limits,
    /// The file registry the user or the marker configured: a `file://` source inside it may be
    /// named in messages with its digest and size; one elsewhere (named by the lock alone) not.
    pub registry_dir: Option<PathBuf>,
    /// Where the configured registries and mirrors serve each locked bundle (by version, in
    /// order), found in their indexes with the locked sha256 and size: tried after the cache
    /// and `--from`, the lock's own `source` where its registry stands among them.
    pub alternatives: std::collections::BTreeMap<MethodVersion, Places>,
    /// The configured registries and mirrors that were asked for a version and passed over,
    /// with why (its index could not be read, does not list it, lists another bundle under
    /// it): named beside every place that failed when none served it.
    pub passed_over: std::collections::BTreeMap<MethodVersion, Vec<String>>,
    /// How versions are placed from the shared tree cache; `None`: the fastest that works.
    pub link_mode: Option<LinkMode>,
    /// Versions to install again from a verified bundle even when installed (`--reinstall`):
    /// the repair of a tampered or broken version. The tree cache is not used for them.
    pub reinstall: std::collections::BTreeSet<MethodVersion>,
}

impl InstallContext {
    /// The flag that made the run offline (`--offline`, `--frozen`); `None` online.
    pub fn offline_flag(&self) -> Option<&'static str> {
        match self.reach {
            Reach::Online(_) => None,
            Reach::Offline(flag) => Some(flag),
        }
    }
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

/// The places that serve a locked bundle besides its `source`, in the order they are asked:
/// `before` it (registries configured ahead of the one the lock names, or all of them when no
/// configured registry is the lock's), the lock's own `source`, then `after` it (that
/// registry's mirrors and the rest): the configured registry is asked before its mirrors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Places {
    pub before: Vec<crate::lock::BundleLocation>,
    pub after: Vec<crate::lock::BundleLocation>,
}

impl Places {
    /// Every place, in order, the lock's source left out.
    pub fn iter(&self) -> impl Iterator<Item = &crate::lock::BundleLocation> {
        self.before.iter().chain(&self.after)
    }
}
