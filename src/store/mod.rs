//! The store `<X>/.tools_local/esys/a2c/`: verified, side-by-side installs of method versions,
//! the content-addressed bundle cache, receipts and the cross-process store lock.
//!
//! Its layout is [`layout::Store`]'s to know.

pub mod cache;
pub mod flock;
pub mod gc;
pub mod install;
pub mod layout;
pub mod locked;
pub mod options;
pub mod receipt;
pub mod source;
pub mod trees;

use std::path::{Path, PathBuf};

pub use cache::Cache;
pub use install::{InstallContext, InstallReport, Installed, Reporter, Reused, Source};
pub use layout::{LOCAL_DIR, STAGING_DIR, STORE_DIR, STORE_LOCK, Store, create_local, owner_of};
pub use options::{Places, Reach, Settings};
pub use receipt::Receipt;

use crate::util::version::MethodVersion;

/// Checks the store of `owner` (W, or R outside a superbuild) before anything reads or writes
/// it: no component of `.tools_local/esys/a2c/` (nor `.staging`, `.lock`) may be a symbolic
/// link, and nothing under `.tools_local/` may be tracked by git (a store is machine-local:
/// one a repository commits would let it forge installed versions).
pub fn guard(owner: &Path) -> Result<Store, StoreError> {
    let store_rel = Path::new(STORE_DIR);
    for rel in [store_rel.join(STAGING_DIR), store_rel.join(STORE_LOCK)] {
        crate::util::contain::check(owner, rel)?;
    }
    match crate::util::git::tracking(owner, LOCAL_DIR, false) {
        crate::util::git::Tracking::No => {}
        crate::util::git::Tracking::Yes => {
            return Err(StoreError::Tracked {
                path: owner.join(LOCAL_DIR),
            });
        }
        crate::util::git::Tracking::Unknown { reason, hint } => {
            return Err(StoreError::TrackingUnknown {
                path: owner.join(LOCAL_DIR),
                reason,
                hint,
            });
        }
    }
    Ok(Store::of(owner))
}

/// Creates the store and its private staging directory without following links; a new
/// `.tools_local/` gets a `.gitignore` of `*`, so that git never shows the store.
pub fn ensure(store: &Store) -> Result<(), StoreError> {
    create_local(store.owner())?;
    crate::util::contain::create_dirs(store.root(), STAGING_DIR, 0o700)?;
    Ok(())
}

/// Errors of the install pipeline.
/// `1.0.0, 2.0.0`.
fn versions(v: &[MethodVersion]) -> String {
    v.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Some versions failed while others of the same run were installed: exactly which
    /// versions were and were not installed, then (as the cause) the first failure.
    #[error("did not install {} (this run installed {})", versions(failed), versions(installed))]
    Partly {
        source: Box<StoreError>,
        installed: Vec<crate::util::version::MethodVersion>,
        failed: Vec<crate::util::version::MethodVersion>,
    },
    #[error("{0}")]
    Config(String),
    #[error("timed out waiting for the store lock `{}` after {seconds} s", path.display())]
    LockTimeout { path: PathBuf, seconds: u64 },
    #[error("failed to install version {version} from `{source_name}`")]
    Extract {
        version: MethodVersion,
        source_name: String,
        #[source]
        source: Box<crate::archive::ArchiveError>,
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
        /// The flag that made the run offline (`--offline`, `--frozen`), when it was.
        offline: Option<&'static str>,
        /// Whether the command takes `--from DIR` (`install` does; `vendor`, which copies from
        /// the cache, does not).
        takes_from: bool,
    },
    #[error("`{}` is tracked by git, but a2c's store is machine-local: a repository that commits it could pass off any files as an installed version", path.display())]
    Tracked { path: PathBuf },
    #[error("cannot tell whether git tracks `{}` ({reason}): a store git may track is not trusted", path.display())]
    TrackingUnknown {
        path: PathBuf,
        reason: String,
        hint: String,
    },
    #[error("the lock pins a bundle of {size} bytes for version {version}, more than the {limit} bytes allowed")]
    TooBig {
        version: MethodVersion,
        size: u64,
        limit: u64,
    },
    #[error("method {version} needs a2c >= {min}, this is {running}")]
    NeedsNewerA2c {
        version: MethodVersion,
        min: MethodVersion,
        running: String,
    },
    #[error("no place served version {version}; tried, in order:{}", tried.iter().map(|t| format!("\n  - {t}")).collect::<String>())]
    AllSourcesFailed {
        version: MethodVersion,
        tried: Vec<String>,
        /// What to do about the lock's own source, when its failure says (a private CA).
        hint: Option<String>,
    },
    #[error("cannot fetch `{url}`: a2c reads file://, http:// and https:// sources")]
    UnsupportedSource { url: String },
    /// A registry kind's address that cannot give a URL now (an `s3://` object without usable
    /// credentials).
    #[error("cannot fetch `{url}`: {reason}")]
    SourceUnavailable {
        url: String,
        reason: String,
        hint: Option<String>,
    },
    /// The disk holding the cache filled up while a bundle was downloaded into it; the partial
    /// download was removed.
    #[error("the disk holding the cache `{}` is full: {version} was not downloaded (its partial download was removed)", cache.display())]
    DiskFull { version: MethodVersion, cache: PathBuf },
    #[error("failed to download version {version}")]
    Download {
        version: MethodVersion,
        #[source]
        source: Box<crate::net::HttpError>,
        /// The words of the kind the lock's source belongs to, when it has its own.
        hint: Option<String>,
    },
}

/// What a bundle was checked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    Size,
    Sha256,
    TreeDigest,
}

impl std::fmt::Display for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Checked::Size => "size",
            Checked::Sha256 => "sha256",
            Checked::TreeDigest => "tree digest",
        })
    }
}

/// A bundle that is not the one the lock pins. A source the lock alone named outside any
/// registry (`file:///home/…`) is reported without its digest or size (`reveal: false`): a
/// repository must not learn facts about files outside it through a2c's messages.
#[derive(Debug)]
pub struct Mismatch {
    pub version: MethodVersion,
    pub what: Checked,
    pub source_name: String,
    pub expected: String,
    pub actual: String,
    pub reveal: bool,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.reveal {
            write!(
                f,
                "{} mismatch for version {} from `{}`: expected {}, got {}",
                self.what, self.version, self.source_name, self.expected, self.actual
            )
        } else {
            write!(
                f,
                "`{}` is not the bundle the lock pins for version {} ({} differs)",
                self.source_name, self.version, self.what
            )
        }
    }
}

impl std::error::Error for Mismatch {}

impl StoreError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::Partly { source, failed, .. } => {
                let inner = source.hint().map(|h| format!("{h}\n")).unwrap_or_default();
                format!(
                    "{inner}what was installed stays installed; `a2c install` again installs {} once the cause is fixed",
                    versions(failed)
                )
            }
            Self::LockTimeout { .. } => format!(
                "another a2c process is installing into this store; wait for it, or raise {} (seconds)",
                crate::env::A2C_LOCK_TIMEOUT
            ),
            Self::Extract { source, .. } => return source.hint(),
            Self::Mismatch(m) if m.what == Checked::TreeDigest => {
                "the bundle's sha256 matches the lock, but its files do not match the tree digest its index entry declares: the registry published an entry whose tree differs from its bundle — a publishing error, not tampering; tell the registry's owner (`a2c pack` writes both from one tree); this version was not installed".into()
            }
            Self::Mismatch(_) => {
                "the bundle is not the one the lock pins: the registry changed a published bundle, or the file was tampered with; this version was not installed".into()
            }
            Self::BadManifest { .. } => "the bundle does not hold the method version it claims; tell the registry's owner".into(),
            Self::Missing {
                offline: Some(flag),
                takes_from: true,
                ..
            } => {
                format!("pass `--from DIR` with the bundles (see `a2c vendor`), or run without `{flag}`")
            }
            Self::Missing {
                offline: Some(flag),
                takes_from: false,
                ..
            } => format!(
                "run it without `{flag}` to download them, or fill the cache first with `a2c install {flag} --from DIR` from bundles `a2c vendor` wrote elsewhere"
            ),
            Self::Missing { takes_from: true, .. } => "check the lock's `source`, or pass `--from DIR`".into(),
            Self::Missing { .. } => "check the lock's `source` and that its registry serves it".into(),
            Self::Tracked { path } => format!(
                "remove it from git (`git rm -r --cached {}`) and commit; a2c reinstalls what the lock pins",
                path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
            ),
            Self::TrackingUnknown { hint, .. } => hint.clone(),
            Self::TooBig { .. } => format!(
                "check the lock entry; if the bundle really is that large, raise {}",
                crate::env::A2C_MAX_BUNDLE_BYTES
            ),
            Self::NeedsNewerA2c { min, .. } => format!(
                "{}; nothing of this version was installed",
                crate::util::installed::upgrade_hint(&min.to_string())
            ),
            Self::AllSourcesFailed { hint: Some(hint), .. } => {
                format!("{hint}; every configured registry, mirror and the lock's source was tried (`-v` shows skipped registries)")
            }
            Self::AllSourcesFailed { hint: None, .. } => {
                "every configured registry, mirror and the lock's source was tried; check them (`-v` shows skipped registries), or install offline with `--from DIR`".into()
            }
            Self::UnsupportedSource { .. } => "install offline with `a2c install --offline --from DIR`".into(),
            Self::SourceUnavailable { hint, .. } => return hint.clone(),
            Self::Download { source, hint, .. } => return hint.clone().or_else(|| source.hint()),
            Self::DiskFull { cache, .. } => format!(
                "free space on the disk of `{}`: `a2c cache prune` removes the bundles and trees no store on this machine needs (`a2c cache prune --dry-run` says how much), or set {} to a cache on a larger disk",
                cache.display(),
                crate::env::A2C_CACHE_DIR
            ),
            Self::Io(e) => {
                return crate::util::contain::refusal(e)
                    .map(|r| r.hint())
                    .or_else(|| crate::util::fs::permission_hint(e));
            }
            Self::Config(_) => return None,
        })
    }
}

impl crate::util::hint::Hint for StoreError {
    fn hint(&self) -> Option<String> {
        StoreError::hint(self)
    }
}
