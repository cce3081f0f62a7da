//! Method asset resolution (ADR-0024 §3): which tree holds the method assets of version V for
//! repository R.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::WorkspaceError;
use super::state_root::STORE_DIR;
use crate::method::MethodManifest;
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

/// Whether the store version directory `dir` of `owner` may be handed out: reached without a
/// link, a real directory, in a store git does not track (a committed store could pass off any
/// files as an installed version). `Err` says why not.
fn store_version(owner: &Path, dir: &Path) -> Result<bool, String> {
    let rel = dir.strip_prefix(owner).unwrap_or(dir);
    match crate::util::contain::check(owner, rel) {
        Ok(true) if crate::util::contain::is_real_dir(dir) => {}
        Ok(_) => return Ok(false),
        Err(e) => return Err(e.to_string()),
    }
    if crate::util::git::tracks_anything_under(owner, super::state_root::LOCAL_DIR) {
        return Err(format!(
            "`{}` is tracked by git: a2c's store is machine-local, so it is not used",
            owner.join(super::state_root::LOCAL_DIR).display()
        ));
    }
    Ok(true)
}

/// Resolves the method asset root for (R, V): the first that exists of `W/.tools_local/esys/a2c/V/`,
/// `R/.tools_local/esys/a2c/V/`, and `R/tools/ai-rules/` when its manifest declares V.
/// `W/tools/ai-rules/` is never a method asset root.
pub fn resolve(repo: &Path, workspace: Option<&Path>, version: &MethodVersion) -> Result<Resolution, WorkspaceError> {
    let mut looked = Vec::new();
    let mut notes = Vec::new();
    let mut candidates = Vec::new();
    if let Some(w) = workspace {
        candidates.push((w.join(STORE_DIR).join(version.to_string()), Rule::WorkspaceStore));
    }
    if workspace != Some(repo) {
        candidates.push((repo.join(STORE_DIR).join(version.to_string()), Rule::RepoStore));
    }
    for (dir, rule) in candidates {
        let owner = super::state_root::owner_of(dir.parent().unwrap_or(&dir));
        match store_version(owner, &dir) {
            Ok(true) => return Ok(Resolution { root: dir, rule }),
            Ok(false) => {}
            Err(why) => notes.push(why),
        }
        looked.push(dir);
    }
    let legacy = repo.join(LEGACY_AI_RULES);
    let is_workspace_root = workspace == Some(repo);
    if is_workspace_root {
        if legacy.is_dir() {
            notes.push(format!(
                "`{}` is superbuild-workflow, never a method asset root",
                legacy.display()
            ));
        }
    } else {
        looked.push(legacy.clone());
        match MethodManifest::read_tree(&legacy) {
            Ok(m) if m.version == *version => {
                return Ok(Resolution {
                    root: legacy,
                    rule: Rule::LegacyAiRules,
                });
            }
            Ok(m) => notes.push(format!(
                "`{}` holds method version {}, not {version}",
                legacy.display(),
                m.version
            )),
            Err(crate::method::ManifestError::Missing { .. }) if !legacy.is_dir() => {}
            Err(e) => notes.push(format!("`{}` is not a method tree: {e}", legacy.display())),
        }
    }
    if let Some(w) = workspace.filter(|w| *w != repo) {
        let ws_rules = w.join(LEGACY_AI_RULES);
        if ws_rules.join(crate::method::MANIFEST_FILE).is_file() {
            notes.push(format!(
                "`{}` is superbuild-workflow, never a method asset root",
                ws_rules.display()
            ));
        }
    }
    Err(WorkspaceError::NotResolved {
        repo: repo.to_path_buf(),
        version: version.clone(),
        looked,
        notes,
    })
}
