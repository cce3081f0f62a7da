//! Members: one repository of a superbuild (or the single repository outside one) as a2c
//! reads it — its tool state root, adoption record, interrupted migration — and how a listing of
//! them is serialized.

use std::path::{Path, PathBuf};

use super::adoption::{AdoptionRecord, ReadError};
use super::state_root::ToolStateRoot;
use crate::util::contain::At;
use crate::util::version::MethodVersion;

/// What a walk of W read: the directories it listed, and every candidate it considered with
/// whether it is a git repository (members among them), and the nested superbuilds it found.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    pub walked: Vec<PathBuf>,
    pub candidates: Vec<(PathBuf, bool)>,
    pub nested: Vec<PathBuf>,
}

/// Why a member has no valid write contract.
#[derive(Debug, Clone, thiserror::Error)]
pub enum MemberError {
    /// Its tool state root (or a component of it) is a link, or otherwise refused.
    #[error("{0}")]
    Refused(String),
    #[error("`{}` has not adopted A2C: no adoption record in `{}` or `{}`", repo.display(), super::state_root::CANONICAL_ROOT, super::state_root::LEGACY_ROOT)]
    NotAdopted { repo: PathBuf },
    #[error("adoption record `{}` is missing", path.display())]
    MissingRecord { path: PathBuf },
    /// No record where one is expected because a migration was interrupted mid-way.
    #[error("a migration {from} -> {to} of `{}` is pending (interrupted): rerun `a2c migrate version --to {to}` there to resume it; do not delete its journal in .git/", repo.display())]
    MigrationPending {
        repo: PathBuf,
        from: MethodVersion,
        to: MethodVersion,
    },
    /// The record could not be read (I/O, a link, a non-file).
    #[error("{0}")]
    Unreadable(String),
    #[error(transparent)]
    Invalid(#[from] super::AdoptionError),
}

/// One member repository of a workspace, or the single repository outside one.
#[derive(Debug, Clone)]
pub struct Member {
    pub path: PathBuf,
    /// R relative to W with `/` separators; `.` for W itself (and for a single repo).
    pub relative: String,
    pub state: Option<ToolStateRoot>,
    /// Why the tool state root was refused (a link), if it was.
    pub refused: Option<String>,
    /// The adoption record, or why it could not be read.
    pub record: Result<AdoptionRecord, MemberError>,
    /// The version the other root's record pins, when both roots hold one (an unfinished
    /// migration): `gc` keeps it too, and `doctor` compares the two.
    pub other_version: Option<MethodVersion>,
    /// The journal of a migration of this member that was interrupted, if any.
    pub pending: Option<Box<super::journal::Journal>>,
}

/// A member in `workspace members --json` (docs/json/workspace-members.schema.json): its
/// paths, tool state root and layout, then its contract and delivery, or why its record could
/// not be read.
impl serde::Serialize for Member {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            path: &'a Path,
            relative: &'a str,
            tool_state_root: Option<&'a Path>,
            layout: Option<super::Layout>,
            #[serde(skip_serializing_if = "Option::is_none")]
            version: Option<&'a MethodVersion>,
            #[serde(skip_serializing_if = "Option::is_none")]
            delivery: Option<Option<super::Delivery>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<String>,
        }
        let record = self.record.as_ref().ok();
        Doc {
            path: &self.path,
            relative: &self.relative,
            tool_state_root: self.state.as_ref().map(|st| st.dir.as_path()),
            layout: self.state.as_ref().map(|st| st.layout),
            version: record.map(|r| &r.tool_version),
            delivery: record.map(|r| r.delivery),
            error: self.record.as_ref().err().map(ToString::to_string),
        }
        .serialize(s)
    }
}

/// `a2c workspace members --json`: W, every member, and the versions they pin.
#[derive(serde::Serialize)]
pub struct MemberListing<'a> {
    pub workspace: &'a Path,
    pub members: &'a [Member],
    pub versions: Vec<MethodVersion>,
}

impl<'a> MemberListing<'a> {
    pub fn new(workspace: &'a Path, members: &'a [Member]) -> Self {
        let mut versions: Vec<_> = members.iter().filter_map(Member::version).cloned().collect();
        versions.sort();
        versions.dedup();
        Self {
            workspace,
            members,
            versions,
        }
    }
}

impl Member {
    /// Reads the member at `path`.
    pub fn read(path: PathBuf, relative: String) -> Self {
        let detected = ToolStateRoot::detect(&path);
        Self::read_detected(At::Path(&path), relative, detected)
    }

    /// Reads the member `at` names (its handle, or its path) whose tool state root was
    /// detected already.
    pub(super) fn read_detected(
        at: At<'_>,
        relative: String,
        detected: std::io::Result<Option<ToolStateRoot>>,
    ) -> Self {
        let path = at.path().to_path_buf();
        let (state, refused) = match detected {
            Ok(state) => (state, None),
            Err(e) => (None, Some(e.to_string())),
        };
        // Boxed: rare, and a member is built for each of thousands on every run.
        let pending = super::journal::Journal::pending_at(at).map(Box::new);
        let record = match &state {
            None if refused.is_some() => Err(MemberError::Refused(refused.clone().unwrap_or_default())),
            None | Some(_) if state.as_ref().is_none_or(|s| !s.has_adoption()) && pending.is_some() => {
                let j = pending.as_deref().cloned().expect("checked");
                Err(MemberError::MigrationPending {
                    repo: path.clone(),
                    from: j.from,
                    to: j.to,
                })
            }
            None => Err(MemberError::NotAdopted { repo: path.clone() }),
            Some(s) if !s.has_adoption() => Err(MemberError::MissingRecord {
                path: s.adoption_path(),
            }),
            Some(s) => s.read_adoption_at(at).map_err(|e| match e {
                ReadError::Io(e) => MemberError::Unreadable(e.to_string()),
                ReadError::Invalid(e) => MemberError::Invalid(e),
            }),
        };
        let other_version = state
            .as_ref()
            .and_then(|s| s.read_other_adoption_at(at))
            .and_then(|r| r.ok())
            .map(|r| r.tool_version);
        Self {
            path,
            relative,
            state,
            refused,
            record,
            other_version,
            pending,
        }
    }

    /// The write contract, when the record is valid.
    pub fn version(&self) -> Option<&MethodVersion> {
        self.record.as_ref().ok().map(|r| &r.tool_version)
    }

    /// How method assets reach this member (`package` when the record names none).
    pub fn delivery(&self) -> Option<super::Delivery> {
        self.record
            .as_ref()
            .ok()
            .map(|r| r.delivery.unwrap_or(super::Delivery::Package))
    }

    /// Every version an adoption record of this member pins: the write contract and, in an
    /// unfinished migration, the other root's.
    pub fn pinned_versions(&self) -> impl Iterator<Item = &MethodVersion> {
        self.version().into_iter().chain(self.other_version.as_ref())
    }
}

impl crate::util::hint::Hint for MemberError {
    fn hint(&self) -> Option<String> {
        Some("fix that member's adoption record; `a2c workspace members` lists every member".into())
    }
}
