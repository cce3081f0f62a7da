//! The repository model: discovery of W and R, members, tool state roots, adoption records,
//! and method asset resolution. Nothing here prints; warnings are returned to the caller.

pub mod adoption;
mod agents_intent;
pub mod discovery;
pub mod journal;
pub mod marker;
pub mod member;
pub mod resolve;
pub mod snapshot;
pub mod state_root;

use std::path::PathBuf;

pub use adoption::{AdoptionError, AdoptionRecord, Delivery};
pub use agents_intent::{REPO_CONFIG, Runtimes};
pub use discovery::{Context, Member, MemberError, Workspace};
pub use marker::{LocalPointer, WorkspaceMarker};
pub use resolve::{Resolution, Rule};
pub use state_root::{Layout, ToolStateRoot};

use crate::util::version::MethodVersion;

/// Errors of the repository model.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Adoption(#[from] AdoptionError),
    #[error(transparent)]
    Marker(#[from] marker::MarkerError),
    #[error("`{}` is not inside a git repository", start.display())]
    NotInRepo { start: PathBuf },
    #[error("`{}` is not inside a superbuild workspace", start.display())]
    NotInWorkspace { start: PathBuf },
    #[error("`{}` is not a superbuild workspace: `{}` does not exist", path.display(), path.join(marker::MARKER_PATH).display())]
    NoMarker { path: PathBuf },
    #[error("`{}` has not adopted A2C: no adoption record in `{}` or `{}`", repo.display(), state_root::CANONICAL_ROOT, state_root::LEGACY_ROOT)]
    NotAdopted { repo: PathBuf },
    /// `resolve` at W itself: the superbuild's root is no member (adopting there would make it
    /// one).
    #[error("`{}` is the superbuild's root, not one of its members: each member resolves its own method assets", root.display())]
    SuperbuildRoot { root: PathBuf },
    #[error("no method asset root for version {version} of `{}` (looked in {})", repo.display(), looked.iter().map(|p| format!("`{}`", p.display())).collect::<Vec<_>>().join(", "))]
    NotResolved {
        repo: PathBuf,
        version: MethodVersion,
        looked: Vec<PathBuf>,
        notes: Vec<resolve::Note>,
    },
    #[error("`{}` already exists", path.display())]
    AlreadyAdopted { path: PathBuf },
    #[error("`{}` already holds tool state: this repository was adopted in the legacy layout", path.display())]
    LegacyState { path: PathBuf },
}

impl From<adoption::ReadError> for WorkspaceError {
    fn from(e: adoption::ReadError) -> Self {
        match e {
            adoption::ReadError::Io(e) => Self::Io(e),
            adoption::ReadError::Invalid(e) => Self::Adoption(e),
        }
    }
}

impl WorkspaceError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::Adoption(_) => "fix the file by hand; `a2c adopt` refuses to overwrite an existing record".into(),
            Self::Marker(m) if m.what == marker::MarkerKind::Pointer => {
                format!("delete `{}`; `a2c install` writes it anew", m.path.display())
            }
            Self::Marker(_) => "fix the workspace marker; see docs/concepts.md for its keys".into(),
            Self::NotInRepo { .. } => "run a2c inside a git repository, or pass `-C DIR`".into(),
            Self::NotInWorkspace { .. } => format!(
                "a superbuild root holds `{}`; pass `--workspace DIR` to name one explicitly",
                marker::MARKER_PATH
            ),
            Self::NoMarker { .. } => format!("create `{}` with `schema_version: 1`", marker::MARKER_PATH),
            Self::NotAdopted { .. } => "run `a2c adopt --version X.Y.Z` to adopt A2C in this repository".into(),
            Self::SuperbuildRoot { root } => format!(
                "run it inside a member, or name one: `a2c -C MEMBER resolve` (`a2c -C {} workspace members` lists them)",
                crate::util::text::shell_quoted(root)
            ),
            Self::NotResolved { version, notes, .. } => {
                let mut hint = format!(
                    "run `a2c install` when a member pins {version}; else `a2c install --version {version}` installs it into the store"
                );
                for note in notes {
                    hint.push_str("\nnote: ");
                    hint.push_str(&note.to_string());
                }
                hint
            }
            Self::LegacyState { .. } => "restore its `adoption.yaml` from git if it was lost, then move the repository with `a2c migrate version --to X.Y.Z` (it moves `.a2c/` to `.tools/esys/a2c/` in one commit); adopt never creates a second tool state root".into(),
            Self::AlreadyAdopted { .. } => {
                "to move an adopted repository to another version, run `a2c migrate version --to X.Y.Z`".into()
            }
            Self::Io(e) => return crate::util::contain::refusal(e).map(|r| r.hint()),
        })
    }
}

impl crate::util::hint::Hint for WorkspaceError {
    fn hint(&self) -> Option<String> {
        WorkspaceError::hint(self)
    }
}
