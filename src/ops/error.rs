//! The operations' errors, wrapping the domain errors, each with its hint.

use std::path::PathBuf;

use crate::util::version::{MethodVersion, join_versions};
use crate::workspace::WorkspaceError;

/// Errors of the operations, wrapping the domain errors.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error(transparent)]
    Registry(#[from] crate::registry::RegistryError),
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Agents(#[from] crate::agents::AgentsError),
    #[error("member `{}` has no valid write contract: {reason}", path.display())]
    InvalidMember { path: PathBuf, reason: String },
    #[error("the lock `{}` lacks {} needed by the members, and {flag} forbids changing it", path.display(), join_versions(versions))]
    LockWouldChange {
        path: PathBuf,
        versions: Vec<MethodVersion>,
        flag: &'static str,
    },
    #[error("the lock `{}` pins {} that no member needs, and {flag} forbids changing it", path.display(), join_versions(versions))]
    LockHasUnused {
        path: PathBuf,
        versions: Vec<MethodVersion>,
        flag: &'static str,
    },
    #[error("--offline: {what}")]
    Offline { what: String },
    #[error("{flag}: there is no lock file at `{}`", path.display())]
    NoLockFile { path: PathBuf, flag: &'static str },
    #[error("{0}")]
    Config(String),
    /// The registry had to be read and was not: why, and what to do when its error says.
    #[error("cannot tell {what}: the registry was not read ({reason})")]
    NotRead {
        what: &'static str,
        reason: String,
        hint: Option<String>,
    },
    #[error(transparent)]
    Migrate(Box<crate::relocate::MigrateError>),
    #[error("--from: `{}` is not a directory", path.display())]
    FromNotDir { path: PathBuf },
    /// No registry is configured; `config` is the file this context keeps it in (the marker of
    /// a superbuild, else the repository's tool state `config.yaml`).
    #[error("no registry configured")]
    NoRegistry {
        config: Option<PathBuf>,
        /// Whether the command takes `--registry` (`migrate version` does not).
        flag: bool,
    },
    /// A migration failed, and putting the tool state back failed too: the original error
    /// first, then the restore's.
    #[error("{original}; putting the tool state back also failed: {restore}")]
    RollbackFailed { original: Box<OpsError>, restore: String },
    /// An error of one member of a superbuild-wide command (`migrate version --all`).
    #[error("member `{member}`: {error}")]
    InMember { member: String, error: Box<OpsError> },
    /// `migrate version --all` stopped at a member (rolled back); the ones before it stay
    /// migrated, the ones after it are untouched.
    #[error(
        "the migration to {to} stopped at member `{at}` (rolled back, exactly as it was): {error}\n  migrated: {}\n  untouched: {}",
        names(done),
        names(untouched)
    )]
    Stopped {
        to: MethodVersion,
        at: String,
        done: Vec<String>,
        untouched: Vec<String>,
        error: Box<OpsError>,
    },
}

fn names(v: &[String]) -> String {
    match v.is_empty() {
        true => "none".into(),
        false => v.join(", "),
    }
}

impl OpsError {
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Workspace(e) => e.hint(),
            Self::NoRegistry { config, flag } => {
                // Only a command that takes `--registry` is told to pass it.
                let pass = if *flag { "pass `--registry URL`, " } else { "" };
                Some(match config {
                    Some(file) if file.ends_with(crate::workspace::marker::MARKER_PATH) => format!(
                        "{pass}set {}, or add `registry: URL` to the workspace marker `{}` (relative paths are relative to the superbuild)",
                        crate::env::A2C_REGISTRY,
                        file.display()
                    ),
                    Some(file) => format!(
                        "{pass}set {}, or add `registry: URL` to `{}` (this repository's own settings; a relative path is relative to the repository)",
                        crate::env::A2C_REGISTRY,
                        file.display()
                    ),
                    None => format!(
                        "{pass}set {}; `a2c init --registry URL` makes a superbuild that keeps it",
                        crate::env::A2C_REGISTRY
                    ),
                })
            }
            Self::Registry(e) => e.hint(),
            Self::Lock(e) => e.hint(),
            Self::Store(e) => e.hint(),
            Self::InvalidMember { .. } => {
                Some("fix the adoption record; `a2c workspace members` lists every member".into())
            }
            Self::LockWouldChange { .. } => {
                Some("run `a2c lock` (online) and commit the lock, then install again".into())
            }
            Self::LockHasUnused { .. } => Some(
                "if members are missing on this machine (a clone without them: `a2c doctor` names them; bring them first, e.g. `git submodule update --init --recursive`), install again once they are here; otherwise run `a2c lock` to drop them and commit the lock (as `a2c lock --check` asks)"
                    .into(),
            ),
            Self::Offline { .. } => Some(
                "run it online once, or pass `--from DIR` with a directory `a2c vendor` wrote (or copy a lock that has the version); then --offline works from the lock and the cache".into(),
            ),
            Self::NoLockFile { flag, .. } => Some(format!(
                "run `a2c lock` (online) and commit the lock, or drop {flag} to let install write it"
            )),
            Self::Migrate(e) => e.hint(),
            Self::FromNotDir { .. } => Some("pass the directory of bundles that `a2c vendor DIR` wrote".into()),
            Self::RollbackFailed { original, .. } => Some(format!(
                "{}check the repository with `git status`; `a2c migrate version` resumes or refuses from the journal in .git/",
                original.hint().map(|h| format!("{h}\n")).unwrap_or_default()
            )),
            Self::Io(e) => crate::util::contain::refusal(e)
                .map(|r| r.hint())
                .or_else(|| crate::util::fs::permission_hint(e)),
            Self::InMember { error, .. } => error.hint(),
            Self::Agents(e) => crate::util::hint::Hint::hint(e),
            Self::Stopped { to, error, .. } => Some(format!(
                "{}once it is fixed, rerun `a2c migrate version --to {to} --all`: migrated members are skipped and the rest continue",
                error.hint().map(|h| format!("{h}\n")).unwrap_or_default()
            )),
            Self::Config(_) => None,
            Self::NotRead { hint, .. } => hint.clone(),
        }
    }
}

impl crate::util::hint::Hint for OpsError {
    fn hint(&self) -> Option<String> {
        OpsError::hint(self)
    }
}
