//! Discovery of the repository R and the superbuild workspace W, and enumeration of members.

use std::path::{Path, PathBuf};

use super::WorkspaceError;
use super::marker::{LocalPointer, MARKER_PATH, WorkspaceMarker};
pub use super::member::{Member, MemberError, MemberListing, Seen};
use super::state_root::ToolStateRoot;
use crate::util::contain::{At, FileKind};
use crate::util::paths::{absolute, relative_slash};

/// Directory names never descended into when enumerating members.
pub const SKIPPED_DIRS: &[&str] = &[".git", ".tools_local", "target", "node_modules"];

/// `true` when `relative` (to W, `/`-separated) is a method checkout: `tools/ai-rules` of W or
/// of any repository below it (ADR §6, the superbuild workflow). It carries the method's own
/// adoption record, but a2c never takes it for a member and never writes into it.
pub fn is_method_checkout(relative: &str) -> bool {
    let checkout: Vec<&str> = super::resolve::LEGACY_AI_RULES.split('/').collect();
    let segments: Vec<&str> = relative.split('/').collect();
    segments.windows(checkout.len()).any(|w| w == checkout.as_slice())
}

/// `true` when `dir` is a git repository (holds a `.git` directory or file).
pub fn is_git_repo(dir: &Path) -> bool {
    is_git_repo_at(At::Path(dir))
}

/// [`is_git_repo`] of the directory `at` names (its handle, or its path).
fn is_git_repo_at(at: At<'_>) -> bool {
    matches!(at.kind_followed(".git"), Some(FileKind::Dir | FileKind::File))
}

/// The nearest git repository at or above `start`.
pub fn find_repo(start: &Path) -> Option<PathBuf> {
    start.ancestors().find(|d| is_git_repo(d)).map(Path::to_path_buf)
}

/// `true` when `dir` holds the workspace marker (a link there counts: reading it refuses it).
pub fn has_marker(dir: &Path) -> bool {
    has_marker_at(At::Path(dir))
}

/// [`has_marker`] of the directory `at` names (its handle, or its path).
fn has_marker_at(at: At<'_>) -> bool {
    at.kind(MARKER_PATH).is_ok_and(|k| k.is_some())
}

/// `true` when `dir` is a repository holding a tool state root. A directory holding a workspace
/// marker always has `.tools/esys/a2c/` (the marker lives there), so for it only an adoption
/// record counts.
pub fn holds_tool_state(dir: &Path) -> bool {
    holds(&ToolStateRoot::detect(dir), has_marker(dir))
}

/// [`holds_tool_state`] from a detection already made and whether the directory holds a marker.
fn holds(detected: &std::io::Result<Option<ToolStateRoot>>, marker: bool) -> bool {
    match detected {
        Err(_) => true, // listed, so that its refusal is reported rather than skipped
        Ok(None) => false,
        Ok(Some(state)) => !marker || state.has_adoption(),
    }
}

/// A superbuild workspace W and its marker.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub root: PathBuf,
    pub marker: WorkspaceMarker,
    /// The nested workspaces [`Workspace::members`] found below W (directories holding a
    /// marker of their own, which the walk does not enter), for `doctor`.
    nested: std::sync::OnceLock<Vec<PathBuf>>,
    /// What the last walk listed and considered (for the workspace snapshot).
    seen: std::sync::OnceLock<Seen>,
}

impl Workspace {
    /// Opens the workspace at `root` (which must hold the marker).
    pub fn open(root: &Path) -> Result<Self, WorkspaceError> {
        let root = absolute(root);
        if !has_marker(&root) {
            return Err(WorkspaceError::NoMarker { path: root });
        }
        let marker = WorkspaceMarker::read(&root)?;
        Ok(Self {
            root,
            marker,
            nested: std::sync::OnceLock::new(),
            seen: std::sync::OnceLock::new(),
        })
    }

    /// `true` when `repo` (absolute, canonical) is a member of this workspace: below W (or W
    /// itself), reached without entering a skipped directory or a nested workspace, selected by
    /// the globs, and holding a tool state root.
    pub fn is_member(&self, repo: &Path) -> bool {
        let Some(relative) = relative_slash(&self.root, repo) else {
            return false;
        };
        if relative == "." {
            return holds_tool_state(repo);
        }
        if is_method_checkout(&relative) {
            return false;
        }
        let mut dir = self.root.clone();
        let segments: Vec<&str> = relative.split('/').collect();
        for (i, seg) in segments.iter().enumerate() {
            if SKIPPED_DIRS.contains(seg) {
                return false;
            }
            dir.push(seg);
            let is_last = i + 1 == segments.len();
            if !is_last && has_marker(&dir) {
                return false; // inside a nested workspace: that one owns it
            }
        }
        is_git_repo(repo) && holds_tool_state(repo) && self.marker.selects(&relative)
    }

    /// Every member, sorted by relative path. W itself is a member when it has adopted A2C.
    /// Symlinks are never followed, so nothing outside W is listed; nested workspaces are
    /// members at most themselves: their own members belong to them.
    pub fn members(&self) -> Result<Vec<Member>, WorkspaceError> {
        // The walk only lists git repositories (one `stat` of `.git` per directory); their tool
        // state is then detected and their records read in parallel, each detected once.
        // W itself is a member when it holds tool state (with its marker: an adoption record).
        let mut candidates: Vec<Candidate> = vec![(self.root.clone(), ".".into(), Some(true))];
        let mut nested_walked = Vec::new();
        let mut walked = vec![self.root.clone()];
        self.walk(
            &self.root,
            1,
            self.marker.max_depth(),
            (&mut candidates, &mut nested_walked, &mut walked),
        )?;
        let jobs = crate::util::parallel::metadata_jobs();
        let read = crate::util::parallel::run_parallel(&candidates, jobs, |(dir, relative, marker)| {
            // Everything below the candidate is reached relative to one handle on it, short
            // paths instead of W's whole path every time (its path when it cannot be opened:
            // the same checks then say why).
            let handle = crate::util::contain::DirHandle::open(dir).ok();
            let at = handle.as_ref().map_or(At::Path(dir), At::Handle);
            let marker = match marker {
                Some(m) => *m,
                None if !is_git_repo_at(at) => return (None, false, false),
                None => has_marker_at(at),
            };
            let detected = ToolStateRoot::detect_at(at);
            let member = holds(&detected, marker).then(|| Member::read_detected(at, relative.clone(), detected));
            (member, marker && relative != ".", true)
        });
        let mut nested: Vec<PathBuf> = candidates
            .iter()
            .zip(&read)
            .filter(|(_, (_, nested, _))| *nested)
            .map(|((dir, _, _), _)| dir.clone())
            .collect();
        nested.extend(nested_walked);
        nested.sort();
        nested.dedup();
        let seen = Seen {
            walked,
            candidates: candidates
                .iter()
                .zip(&read)
                .map(|((dir, _, _), (_, _, git))| (dir.clone(), *git))
                .collect(),
            nested: nested.clone(),
        };
        let _ = self.seen.set(seen);
        let _ = self.nested.set(nested);
        let mut members: Vec<Member> = read.into_iter().filter_map(|(m, _, _)| m).collect();
        members.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(members)
    }

    /// The nested workspaces below W found by [`Workspace::members`] (empty before it ran).
    pub fn nested(&self) -> &[PathBuf] {
        self.nested.get().map_or(&[], Vec::as_slice)
    }

    /// What [`Workspace::members`] listed and considered (`None` before it ran, or when the
    /// members came from the snapshot).
    pub fn seen(&self) -> Option<&Seen> {
        self.seen.get()
    }
}

impl Workspace {
    /// Lists the git repositories below `dir` (at `depth`, 1 for W's children) that the member
    /// globs select, with whether each holds a marker. Links are never followed; skipped
    /// directories and the inside of a nested workspace are not entered; a directory at the
    /// deepest level the globs allow is checked but never opened.
    fn walk(
        &self,
        dir: &Path,
        depth: usize,
        max_depth: Option<usize>,
        (out, nested, walked): (&mut Vec<Candidate>, &mut Vec<PathBuf>, &mut Vec<PathBuf>),
    ) -> std::io::Result<()> {
        let listing_failed =
            |e: std::io::Error| std::io::Error::other(format!("failed to list `{}`: {e}", dir.display()));
        // Listed, then closed before descending: one open directory at a time, however deep.
        let mut dirs = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(listing_failed)? {
            let entry = entry.map_err(listing_failed)?;
            // The entry's own type (`d_type`, else an `lstat`): a link is never a directory here.
            let name = entry.file_name();
            if entry.file_type().map_err(listing_failed)?.is_dir() && !SKIPPED_DIRS.iter().any(|s| name == *s) {
                dirs.push(entry.path());
            }
        }
        for path in dirs {
            let relative = relative_slash(&self.root, &path).unwrap_or_default();
            if is_method_checkout(&relative) {
                continue; // the method's own checkout: never a member, never entered
            }
            if max_depth.is_some_and(|max| depth >= max) {
                // The deepest level: nothing below is walked, so whether it is a repository
                // and holds a marker is checked later, in parallel.
                if self.marker.selects(&relative) {
                    out.push((path, relative, None));
                }
                continue;
            }
            let marker = has_marker(&path);
            if marker {
                nested.push(path.clone());
            }
            if self.marker.selects(&relative) && is_git_repo(&path) {
                out.push((path.clone(), relative, Some(marker)));
            }
            if !marker {
                walked.push(path.clone());
                self.walk(&path, depth + 1, max_depth, (&mut *out, &mut *nested, &mut *walked))?;
            }
        }
        Ok(())
    }
}

/// A directory the walk found: its path, its path relative to W, and whether it holds a marker
/// (`None`: not checked yet, nor whether it is a git repository — see [`Workspace::walk`]).
type Candidate = (PathBuf, String, Option<bool>);

/// What discovery found from a starting directory.
#[derive(Debug)]
pub struct Context {
    /// Where discovery started (`-C DIR` or the current directory), absolute.
    pub start: PathBuf,
    /// The nearest git repository R, if any.
    pub repo: Option<PathBuf>,
    /// The workspace W R belongs to, if any.
    pub workspace: Option<Workspace>,
    /// Things the user should know (printed by the CLI on stderr).
    pub warnings: Vec<String>,
    /// The members, enumerated once per run.
    members: std::sync::OnceLock<Vec<Member>>,
    /// The workspace snapshot the members came from, when one vouched for them; else why
    /// none did (set with the members).
    snapshot: std::sync::OnceLock<Result<super::snapshot::HeldSnapshot, String>>,
}

impl Context {
    /// Discovers R and W from `start`. `workspace_flag` (`--workspace DIR`) names W explicitly.
    ///
    /// W is, in order: the `--workspace` directory; the target of R's local pointer when that
    /// target holds the marker and lists R (a stale pointer is ignored with a warning); else the
    /// nearest directory at or above R whose marker lists R (or is R itself).
    pub fn discover(start: &Path, workspace_flag: Option<&Path>) -> Result<Self, WorkspaceError> {
        let start = absolute(start);
        if !start.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("directory `{}` does not exist", start.display()),
            )
            .into());
        }
        let repo = find_repo(&start);
        let mut warnings = Vec::new();
        let workspace = match workspace_flag {
            Some(dir) => Some(Workspace::open(dir)?),
            None => Self::find_workspace(&start, repo.as_deref(), &mut warnings)?,
        };
        Ok(Self {
            start,
            repo,
            workspace,
            warnings,
            members: std::sync::OnceLock::new(),
            snapshot: std::sync::OnceLock::new(),
        })
    }

    fn find_workspace(
        start: &Path,
        repo: Option<&Path>,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Workspace>, WorkspaceError> {
        if let Some(repo) = repo {
            // A repository's own marker always wins over a pointer: a superbuild root that is
            // also a member of an outer superbuild is its own workspace.
            if has_marker(repo) {
                return Ok(Some(Workspace::open(repo)?));
            }
            match LocalPointer::read(repo) {
                Ok(Some(pointer)) => match Self::check_pointer(repo, &pointer) {
                    Ok(ws) => return Ok(Some(ws)),
                    Err(why) => warnings.push(format!(
                        "ignoring stale local pointer `{}`: {why}; run `a2c install` in the superbuild that lists this repository to rewrite it, or delete the file",
                        repo.join(super::marker::POINTER_PATH).display()
                    )),
                },
                Ok(None) => {}
                Err(e) => warnings.push(format!("ignoring local pointer: {e}")),
            }
        }
        let from = repo.unwrap_or(start);
        for dir in from.ancestors() {
            if !has_marker(dir) {
                continue;
            }
            let ws = Workspace::open(dir)?;
            if repo.is_none_or(|r| r == ws.root || ws.is_member(r)) {
                return Ok(Some(ws));
            }
        }
        Ok(None)
    }

    fn check_pointer(repo: &Path, pointer: &LocalPointer) -> Result<Workspace, String> {
        let target = &pointer.workspace_root;
        if !has_marker(target) {
            return Err(format!("`{}` holds no `{MARKER_PATH}`", target.display()));
        }
        let ws = Workspace::open(target).map_err(|e| e.to_string())?;
        // Never past a nearer marker: `is_member` refuses a repository inside a nested
        // workspace, and a repository holding its own marker never reads its pointer.
        if repo != ws.root && !ws.is_member(repo) {
            return Err(format!(
                "`{}` does not list this repository as a member",
                ws.root.display()
            ));
        }
        Ok(ws)
    }

    /// R, or an error when discovery started outside any git repository.
    pub fn require_repo(&self) -> Result<&Path, WorkspaceError> {
        self.repo.as_deref().ok_or_else(|| WorkspaceError::NotInRepo {
            start: self.start.clone(),
        })
    }

    /// W, or an error when not in a superbuild.
    pub fn require_workspace(&self) -> Result<&Workspace, WorkspaceError> {
        self.workspace.as_ref().ok_or_else(|| WorkspaceError::NotInWorkspace {
            start: self.start.clone(),
        })
    }

    /// Members the current command covers: every member of W, or R alone outside a superbuild.
    /// Enumerated once per run.
    pub fn members(&self) -> Result<&[Member], WorkspaceError> {
        if let Some(members) = self.members.get() {
            return Ok(members);
        }
        let members = match &self.workspace {
            Some(ws) => {
                // The snapshot the last install kept, when every identity it records holds:
                // the same members, without the walk or a single record read.
                let store = crate::store::Store::of(&ws.root);
                let (members, snapshot) = match super::snapshot::Snapshot::load_valid(&ws.root, store.root()) {
                    Ok((vouched, members)) => (members, Ok(vouched)),
                    Err(why) => (ws.members()?, Err(why)),
                };
                let _ = self.snapshot.set(snapshot);
                members
            }
            None => {
                let repo = self.require_repo()?;
                vec![Member::read(repo.to_path_buf(), ".".into())]
            }
        };
        Ok(self.members.get_or_init(|| members))
    }

    /// The snapshot the members came from (`Err`: why none was used; `None` before the members
    /// were read, or outside a superbuild).
    pub fn snapshot(&self) -> Option<&Result<super::snapshot::HeldSnapshot, String>> {
        self.snapshot.get()
    }

    /// The nested superbuilds below W: from the walk, or from the snapshot that replaced it.
    pub fn nested(&self) -> Vec<PathBuf> {
        match (self.snapshot(), &self.workspace) {
            (Some(Ok(s)), _) => s.nested(),
            (_, Some(ws)) => ws.nested().to_vec(),
            (_, None) => Vec::new(),
        }
    }

    /// Where the lockfile lives: beside the marker in a superbuild, else in the repository's
    /// own tool state root — the one holding its adoption record, legacy `.a2c/` included, so
    /// that a legacy repository keeps one root and migration moves the lock with the rest.
    pub fn lock_path(&self) -> Result<PathBuf, WorkspaceError> {
        if let Some(ws) = &self.workspace {
            crate::util::contain::check(&ws.root, super::state_root::CANONICAL_ROOT)?;
            return Ok(ToolStateRoot::canonical_dir(&ws.root).join(crate::lock::LOCK_FILE));
        }
        let repo = self.require_repo()?;
        match ToolStateRoot::detect(repo)? {
            Some(state) => Ok(state.dir.join(crate::lock::LOCK_FILE)),
            None => Err(WorkspaceError::NotAdopted {
                repo: repo.to_path_buf(),
            }),
        }
    }

    /// The warning of every member whose migration is unfinished (both roots hold tool state),
    /// for the CLI to print once.
    pub fn unfinished_migrations(&self) -> Vec<String> {
        self.members()
            .unwrap_or_default()
            .iter()
            .filter_map(|m| m.state.as_ref().and_then(|s| s.unfinished_migration_warning()))
            .collect()
    }

    /// Who owns the store: W in a superbuild, else R.
    pub fn store_owner(&self) -> Result<&Path, WorkspaceError> {
        match &self.workspace {
            Some(ws) => Ok(&ws.root),
            None => self.require_repo(),
        }
    }
}

#[cfg(test)]
mod method_checkout_tests {
    #[test]
    fn tools_ai_rules_anywhere_is_a_method_checkout() {
        for yes in ["tools/ai-rules", "p/app/tools/ai-rules", "tools/ai-rules/sub"] {
            assert!(super::is_method_checkout(yes), "{yes}");
        }
        for no in ["tools", "mytools/ai-rules", "tools/ai-rules2", "p/tools"] {
            assert!(!super::is_method_checkout(no), "{no}");
        }
    }
}
