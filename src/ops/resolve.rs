//! `a2c resolve [--version V]`: where the method assets of a version are for this repository,
//! by the resolution order of docs/concepts.md ("Resolution"), and whether that version is the write contract.

use std::path::PathBuf;

use serde::Serialize;

use super::OpsError;
use crate::util::version::MethodVersion;
use crate::workspace::{Context, Member, WorkspaceError};

/// What `resolve` found; serialized as the `--json` document (docs/json/resolve.schema.json).
#[derive(Debug, Serialize)]
pub struct ResolveOutcome {
    pub repo: PathBuf,
    pub version: MethodVersion,
    pub workspace: Option<PathBuf>,
    /// The method asset root, when one resolves.
    pub root: Option<PathBuf>,
    /// The rule that found it.
    pub rule: Option<&'static str>,
    pub write_contract: Option<MethodVersion>,
    /// `version` is not the write contract: a mount for reading only (docs/concepts.md, "Resolution").
    pub read_only: bool,
    /// What the user should know (an unfinished migration, a read-only mount, a method that
    /// needs a newer a2c).
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// Why nothing resolved, when nothing did (the document is still printed).
    #[serde(skip)]
    pub failure: Option<WorkspaceError>,
}

/// Resolves `version` (default: the repository's write contract) for the repository of `ctx`.
pub fn resolve(ctx: &Context, version: Option<&MethodVersion>) -> Result<ResolveOutcome, OpsError> {
    let repo = ctx.require_repo()?.to_path_buf();
    let member = Member::read(repo.clone(), ".".into());
    let mut warnings: Vec<String> = member
        .state
        .as_ref()
        .and_then(|s| s.unfinished_migration_warning())
        .into_iter()
        .collect();
    let contract = member.version().cloned();
    let version = match version {
        Some(v) => v.clone(),
        None => match (&member.record, &member.state) {
            (Ok(r), _) => r.tool_version.clone(),
            (Err(_), Some(s)) if s.has_adoption() => s.read_adoption().map_err(WorkspaceError::from)?.tool_version,
            _ if ctx.workspace.as_ref().is_some_and(|w| w.root == repo) => {
                return Err(WorkspaceError::SuperbuildRoot { root: repo.clone() }.into());
            }
            _ => return Err(WorkspaceError::NotAdopted { repo: repo.clone() }.into()),
        },
    };
    // A version other than the write contract may be mounted for reading only.
    let read_only = contract.as_ref() != Some(&version);
    if read_only {
        warnings.push(match &contract {
            Some(c) => format!(
                "{version} is a read-only mount, not the write contract of `{}` ({c}): author nothing under {version}'s rules",
                repo.display()
            ),
            None => format!("`{}` has no write contract: {version} is a read-only mount", repo.display()),
        });
    }
    let workspace = ctx.workspace.as_ref().map(|w| w.root.clone());
    let found = crate::workspace::resolve::resolve(&repo, workspace.as_deref(), &version);
    if let Ok(r) = &found
        && let Ok(m) = crate::method::MethodManifest::read_tree(&r.root)
        && let Some(min) = m.needs_newer_a2c()
    {
        warnings.push(format!(
            "method {version} needs a2c >= {min}, this is {}: upgrade a2c before working under its rules",
            crate::A2C_VERSION
        ));
    }
    let (root, rule, failure) = match found {
        Ok(r) => (Some(r.root), Some(r.rule.as_str()), None),
        Err(e) => (None, None, Some(e)),
    };
    Ok(ResolveOutcome {
        repo,
        version,
        workspace,
        root,
        rule,
        write_contract: contract,
        read_only,
        warnings,
        failure,
    })
}
