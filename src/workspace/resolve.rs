//! Method asset resolution (docs/concepts.md, "Resolution"): which tree holds the method assets of version V for
//! repository R.

use crate::util::paths::JoinRel as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::WorkspaceError;
use crate::method::MethodManifest;
use crate::store::Store;
use crate::util::version::MethodVersion;

/// The legacy delivery mount inside R.
pub const LEGACY_AI_RULES: &str = "tools/ai-rules";

/// The rule that found a method asset root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// `W/.tools_local/esys/a2c/V/`
    WorkspaceStore,
    /// `R/.tools_local/esys/a2c/V/`
    RepoStore,
    /// `R/tools/ai-rules/` holding a method tree of version V
    LegacyAiRules,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::WorkspaceStore => "workspace-store",
            Rule::RepoStore => "repo-store",
            Rule::LegacyAiRules => "legacy-ai-rules",
        }
    }
}

/// A resolved method asset root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub root: PathBuf,
    pub rule: Rule,
}

/// Why a candidate was passed over: carried by [`WorkspaceError::NotResolved`], so that
/// `doctor` can name the exact problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// A tree whose manifest names another version (drift).
    Drift {
        path: PathBuf,
        found: MethodVersion,
        wanted: MethodVersion,
    },
    /// A link on the way to a candidate, or a candidate that is one.
    Link(String),
    /// Anything else: a store git tracks, a tree without a valid manifest, the workspace's
    /// superbuild-workflow tree.
    Other(String),
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Note::Drift { path, found, wanted } => write!(
                f,
                "`{}` holds method version {found}, not {wanted}: drift, so it is not used",
                path.display()
            ),
            Note::Link(s) | Note::Other(s) => f.write_str(s),
        }
    }
}

/// Whether the store version directory `dir` of `owner` may be handed out: reached without a
/// link, a real directory, in a store git does not track (a committed store could pass off any
/// files as an installed version). `Err` says why not.
fn store_version(owner: &Path, dir: &Path) -> Result<bool, Note> {
    let rel = dir.strip_prefix(owner).unwrap_or(dir);
    match crate::util::contain::check(owner, rel) {
        Ok(true) if crate::util::contain::is_real_dir(dir) => {}
        Ok(_) => return Ok(false),
        Err(e) => return Err(Note::Link(e.to_string())),
    }
    match crate::util::git::tracking(owner, super::state_root::LOCAL_DIR, false) {
        crate::util::git::Tracking::No => {}
        crate::util::git::Tracking::Yes => {
            return Err(Note::Other(format!(
                "`{}` is tracked by git: a2c's store is machine-local, so it is not used",
                owner.join(super::state_root::LOCAL_DIR).display()
            )));
        }
        crate::util::git::Tracking::Unknown { reason, .. } => {
            return Err(Note::Other(format!(
                "cannot tell whether git tracks `{}` ({reason}), so it is not used",
                owner.join(super::state_root::LOCAL_DIR).display()
            )));
        }
    }
    Ok(true)
}

/// A candidate tree must say it is version V (docs/concepts.md, "Resolution": the resolved root is checked
/// against the write contract).
fn manifest_is(tree: &Path, version: &MethodVersion) -> Result<(), Note> {
    match MethodManifest::read_tree(tree) {
        Ok(m) if m.version == *version => Ok(()),
        Ok(m) => Err(Note::Drift {
            path: tree.to_path_buf(),
            found: m.version,
            wanted: version.clone(),
        }),
        Err(e) => Err(Note::Other(format!("`{}` is not a method tree: {e}", tree.display()))),
    }
}

/// Refuses `R/tools/ai-rules` when it, or an ancestor inside R, is a symbolic link: such a
/// mount could hand out `W/tools/ai-rules` (superbuild-workflow) or anything outside R. The
/// note names the link and, when it leads to `W/tools/ai-rules` or out of R, says so.
fn legacy_mount_link(repo: &Path, workspace: Option<&Path>) -> Option<Note> {
    let legacy = repo.join_rel(LEGACY_AI_RULES);
    crate::util::contain::check(repo, LEGACY_AI_RULES).err()?;
    let target = dunce::canonicalize(&legacy).ok();
    let ws_rules = workspace.map(|w| w.join_rel(LEGACY_AI_RULES));
    let leads = match (&target, &ws_rules) {
        (Some(t), Some(w)) if dunce::canonicalize(w).is_ok_and(|w| w == *t) => format!(
            "it resolves to `{}`, the superbuild-workflow tree, which is never a method asset root",
            w.display()
        ),
        (Some(t), _) if !t.starts_with(dunce::canonicalize(repo).unwrap_or_else(|_| repo.to_path_buf())) => {
            format!("it resolves outside `{}`", repo.display())
        }
        _ => "a method asset root is never reached through a link".into(),
    };
    Some(Note::Link(format!(
        "`{}` is a symbolic link or lies under one: {leads}; a2c refuses it",
        legacy.display()
    )))
}

/// Resolves the method asset root for (R, V): the first that exists of `W/.tools_local/esys/a2c/V/`,
/// `R/.tools_local/esys/a2c/V/`, and `R/tools/ai-rules/`, each only when its manifest declares
/// V and no link leads to it. `W/tools/ai-rules/` is never a method asset root.
pub fn resolve(repo: &Path, workspace: Option<&Path>, version: &MethodVersion) -> Result<Resolution, WorkspaceError> {
    resolve_with(repo, workspace, version, None)
}

/// What each store version directory resolved to, remembered for one run that changes no store
/// (`doctor` resolves thousands of members against a few versions of one store).
#[derive(Debug, Default)]
pub struct StoreMemo(std::sync::Mutex<std::collections::HashMap<PathBuf, Result<bool, Note>>>);

/// [`resolve`], with the store checks remembered in `memo` when given.
pub fn resolve_with(
    repo: &Path,
    workspace: Option<&Path>,
    version: &MethodVersion,
    memo: Option<&StoreMemo>,
) -> Result<Resolution, WorkspaceError> {
    let mut looked = Vec::new();
    let mut notes = Vec::new();
    let mut candidates = Vec::new();
    if let Some(w) = workspace {
        candidates.push((Store::of(w), Rule::WorkspaceStore));
    }
    if workspace != Some(repo) {
        candidates.push((Store::of(repo), Rule::RepoStore));
    }
    for (store, rule) in candidates {
        let dir = store.version_dir(version);
        let check = || {
            store_version(store.owner(), &dir).and_then(|ok| match ok {
                true => manifest_is(&dir, version).map(|()| true),
                false => Ok(false),
            })
        };
        let checked = match memo {
            Some(memo) => {
                let known = crate::util::parallel::locked(&memo.0).get(&dir).cloned();
                known.unwrap_or_else(|| {
                    let r = check();
                    crate::util::parallel::locked(&memo.0).insert(dir.clone(), r.clone());
                    r
                })
            }
            None => check(),
        };
        match checked {
            Ok(true) => return Ok(Resolution { root: dir, rule }),
            Ok(false) => {}
            Err(note) => notes.push(note),
        }
        looked.push(dir);
    }
    let legacy = repo.join_rel(LEGACY_AI_RULES);
    let is_workspace_root = workspace == Some(repo);
    if is_workspace_root {
        if legacy.is_dir() {
            notes.push(Note::Other(format!(
                "`{}` is superbuild-workflow, never a method asset root",
                legacy.display()
            )));
        }
    } else if let Some(note) = legacy_mount_link(repo, workspace) {
        looked.push(legacy);
        notes.push(note);
    } else {
        looked.push(legacy.clone());
        if std::fs::symlink_metadata(&legacy).is_ok() {
            match manifest_is(&legacy, version) {
                Ok(()) => {
                    return Ok(Resolution {
                        root: legacy,
                        rule: Rule::LegacyAiRules,
                    });
                }
                Err(note) => notes.push(note),
            }
        }
    }
    if let Some(w) = workspace.filter(|w| *w != repo) {
        let ws_rules = w.join_rel(LEGACY_AI_RULES);
        if ws_rules.join(crate::method::MANIFEST_FILE).is_file() {
            notes.push(Note::Other(format!(
                "`{}` is superbuild-workflow, never a method asset root",
                ws_rules.display()
            )));
        }
    }
    Err(WorkspaceError::NotResolved {
        repo: repo.to_path_buf(),
        version: version.clone(),
        looked,
        notes,
    })
}
