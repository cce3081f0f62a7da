//! `a2c agents sync|list|clean`, and the projection `install` and `migrate` make: in every
//! member of a superbuild whose marker names runtimes (`agents:`), the method tree of that
//! member's write contract — the root `a2c resolve` gives it, never W's or another member's —
//! projected where those runtimes look ([`crate::agents`]).

use std::path::{Path, PathBuf};

use super::OpsError;
use crate::workspace::Context;

/// One member's projection, as `a2c agents list` and `sync` report it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MemberProjection {
    pub path: PathBuf,
    pub relative: String,
    /// Its write contract, when it has one.
    pub version: Option<String>,
    /// The runtimes projected for.
    pub runtimes: Vec<String>,
    /// The paths its receipt lists.
    pub entries: usize,
    /// What drifted from the receipt (edited, removed, another version's); empty: in step.
    pub drift: Vec<String>,
    /// Why nothing was projected (no contract, its version not installed), when so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// With `sync`: paths written, removed and left as they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synced: Option<crate::agents::Synced>,
}

/// `a2c agents list --json`'s document.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AgentsOutcome {
    /// The runtimes projected on this machine: the tracked ones with this machine's changes.
    pub runtimes: Vec<String>,
    /// The runtimes the marker names (the repository's intent).
    pub tracked: Vec<String>,
    /// This machine's changes (`.tools_local/esys/a2c/agents.yaml` under the root).
    pub local: crate::agents::Local,
    pub members: Vec<MemberProjection>,
}

/// A member's write contract and the method tree it resolves to, or why it has none here.
type Tree = Result<(String, PathBuf), String>;

/// Each member with its write contract's method tree (or why it has none here); outside a
/// superbuild, the repository alone.
fn members(ctx: &Context) -> Result<Vec<(crate::workspace::Member, Tree)>, OpsError> {
    let ws_root = ctx.workspace.as_ref().map(|w| w.root.clone());
    let members = ctx.members()?.to_vec();
    Ok(members
        .into_iter()
        .map(|m| {
            let tree = match &m.record {
                Ok(record) => {
                    let v = record.tool_version.clone();
                    crate::workspace::resolve::resolve(&m.path, ws_root.as_deref(), &v)
                        .map(|r| (v.to_string(), r.root))
                        .map_err(|e| format!("{e}; `a2c install` installs {v}"))
                }
                Err(e) => Err(format!("no write contract: {e}")),
            };
            (m, tree)
        })
        .collect())
}

/// The runtimes the repository names, this machine's changes, and the set they make here.
fn runtimes(ctx: &Context) -> Result<(Vec<String>, crate::agents::Local, Vec<String>), OpsError> {
    let r = ctx.agent_runtimes()?;
    Ok((r.tracked, r.local, r.ids))
}

/// Whether anything is to be projected or kept in step here ([`Context::projects_agents`]).
pub fn wanted(ctx: &Context) -> bool {
    ctx.projects_agents()
}

/// Projects every member's tree for the marker's runtimes (none: each member's projection is
/// removed). A member whose tree is not installed is skipped, said so; a path the team owns is
/// refused before anything of that member is written.
pub fn sync(ctx: &Context) -> Result<AgentsOutcome, OpsError> {
    let (tracked, local, ids) = runtimes(ctx)?;
    let mut out = Vec::new();
    // Members on one version share its plan (the tree read, each file rendered, once).
    let mut plans: std::collections::HashMap<PathBuf, crate::agents::Planned> = Default::default();
    for (m, tree) in members(ctx)? {
        let mut report = report_of(&m, &tree, &ids);
        match (&tree, ids.is_empty()) {
            (_, true) => {
                crate::agents::clean(&m.path)?;
            }
            (Ok((version, root)), false) => {
                if !plans.contains_key(root) {
                    plans.insert(root.clone(), crate::agents::plan(root, version, &ids)?);
                }
                report.synced = Some(crate::agents::sync(&m.path, &plans[root])?);
            }
            (Err(why), false) => report.skipped = Some(why.clone()),
        }
        finish(&m.path, &tree, &mut report)?;
        out.push(report);
    }
    Ok(outcome((tracked, local, ids), out))
}

/// After a migration: the members' projections follow their new write contracts (when the
/// marker names runtimes). A failure is said as a warning: the migration itself stands.
pub fn after_migrate(ctx: &Context) -> Option<String> {
    let root = ctx.agents_root()?.to_path_buf();
    if !wanted(ctx) {
        return None;
    }
    // The members as they are now (the migration rewrote their records).
    let flag = ctx.workspace.as_ref().map(|_| root.as_path());
    let ctx = Context::discover(&root, flag).ok()?;
    sync(&ctx).err().map(|e| {
        let hint = e.hint().map(|h| format!(" ({h})")).unwrap_or_default();
        format!("the agents' projections were not brought to the new version: {e}{hint}")
    })
}

/// Every member's projection and its drift, changing nothing.
pub fn list(ctx: &Context) -> Result<AgentsOutcome, OpsError> {
    let (tracked, local, ids) = runtimes(ctx)?;
    let mut out = Vec::new();
    for (m, tree) in members(ctx)? {
        let mut report = report_of(&m, &tree, &ids);
        if let Err(why) = &tree {
            report.skipped = Some(why.clone());
        }
        finish(&m.path, &tree, &mut report)?;
        out.push(report);
    }
    Ok(outcome((tracked, local, ids), out))
}

/// Removes every member's projection: exactly what each receipt lists. The paths removed, by
/// member.
pub fn clean(ctx: &Context) -> Result<Vec<(PathBuf, Vec<String>)>, OpsError> {
    let mut out = Vec::new();
    for (m, _) in members(ctx)? {
        let removed = crate::agents::clean(&m.path)?;
        if !removed.is_empty() {
            out.push((m.path, removed));
        }
    }
    Ok(out)
}

/// The document of `sync` and `list`: the runtimes (named, this machine's, projected here) and
/// each member's projection.
fn outcome(
    (tracked, local, runtimes): (Vec<String>, crate::agents::Local, Vec<String>),
    members: Vec<MemberProjection>,
) -> AgentsOutcome {
    AgentsOutcome {
        runtimes,
        tracked,
        local,
        members,
    }
}

fn report_of(m: &crate::workspace::Member, tree: &Tree, ids: &[String]) -> MemberProjection {
    MemberProjection {
        path: m.path.clone(),
        relative: m.relative.clone(),
        version: tree.as_ref().ok().map(|(v, _)| v.clone()),
        runtimes: ids.to_vec(),
        entries: 0,
        drift: Vec::new(),
        skipped: None,
        synced: None,
    }
}

fn finish(repo: &Path, tree: &Tree, report: &mut MemberProjection) -> Result<(), OpsError> {
    let receipt = crate::agents::Receipt::read(repo)?;
    report.entries = receipt.as_ref().map_or(0, |r| r.entries.len());
    if let Ok((version, _)) = tree {
        report.drift = crate::agents::drift(repo, version)?;
    }
    Ok(())
}
