//! The checks. Without `--deep` they read only small files (records, manifests, receipts, the
//! lock): no bundle is opened and nothing is hashed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Code, DoctorOptions, Finding, finding};
use crate::lock::Lockfile;
use crate::method::MethodManifest;
use crate::store::Receipt;
use crate::store::flock::StoreLock;
use crate::util::version::MethodVersion;
use crate::workspace::marker::{LocalPointer, POINTER_PATH};
use crate::workspace::resolve::{LEGACY_AI_RULES, Note, Rule, StoreMemo, resolve_with};
use crate::workspace::state_root::{CANONICAL_ROOT, LEGACY_ROOT, LOCAL_DIR};
use crate::workspace::{Context, Delivery, Layout, Member, WorkspaceError};

mod delivery;
mod resolution;
mod store;
mod tool_state;

use delivery::*;
use resolution::*;
use store::*;
use tool_state::*;

/// Members the superbuild expects that are not on this machine: a submodule W records (a
/// gitlink) that the marker selects and that is not checked out, and a member the marker names
/// by its path that is no repository here. A clone without its members otherwise looks healthy,
/// and the lock's pins look unused.
fn missing_members(ws: &crate::workspace::Workspace, members: &[Member], out: &mut Vec<Finding>) {
    // One set of the members' paths, each looked up once: linear in the members and gitlinks
    // (a scan of every member per gitlink was quadratic: 1.2 s at 5,000 members).
    let paths: std::collections::HashSet<&std::path::Path> = members.iter().map(|m| m.path.as_path()).collect();
    let found = |rel: &str| paths.contains(ws.root.join(rel).as_path());
    for rel in crate::util::git::gitlinks(&ws.root) {
        if ws.marker.selects(&rel) && !found(&rel) && !ws.root.join(&rel).join(".git").exists() {
            out.push(finding(
                Code::MemberMissing,
                Some(ws.root.join(&rel)),
                None,
                format!("the superbuild records `{rel}` as a submodule, but it is not checked out here"),
                format!(
                    "run `git -C {} submodule update --init --recursive`, then `a2c install`",
                    crate::util::text::shell_quoted(&ws.root)
                ),
            ));
        }
    }
    for rel in ws.marker.named_members() {
        let path = ws.root.join(rel);
        if !found(rel) && !path.join(".git").exists() {
            out.push(finding(
                Code::MemberMissing,
                Some(path.clone()),
                None,
                format!("the workspace marker names the member `{rel}`, but `{}` is no repository here", path.display()),
                "clone that repository there (or check it out as the superbuild's submodule), or drop it from the marker's `members:`",
            ));
        }
    }
}

/// What one doctor run learns once and every member shares: each store version's check, and
/// the newest a2c each resolved root's manifest asks for.
#[derive(Default)]
struct Memo(
    StoreMemo,
    std::sync::Mutex<std::collections::HashMap<PathBuf, Option<MethodVersion>>>,
    /// Whether runtimes are projected here (each member's projection is then checked).
    bool,
);

pub fn run(
    ctx: &Context,
    options: DoctorOptions,
    settings: &crate::store::Settings,
) -> Result<Vec<Finding>, WorkspaceError> {
    let mut out = Vec::new();
    let members = ctx.members()?;
    let ws_root = ctx.workspace.as_ref().map(|w| w.root.clone());
    // What the store must keep (every record) and what the lock must hold (the versions an
    // install serves: outside a superbuild, only a `package` delivery's).
    let mut pinned: BTreeMap<MethodVersion, Vec<PathBuf>> = BTreeMap::new();
    let mut locked: BTreeMap<MethodVersion, Vec<PathBuf>> = BTreeMap::new();
    // Each member's checks read only that member: they run in parallel, and their findings
    // are kept in member order.
    let owner = ctx.store_owner()?;
    let memo = Memo(Default::default(), Default::default(), ctx.projects_agents());
    let jobs = crate::util::parallel::metadata_jobs();
    // Members a workspace snapshot vouches for have one canonical root, a valid record, no
    // interrupted migration and the pointer install wrote: nothing of theirs to say there.
    let held = match ctx.snapshot() {
        Some(Ok(held)) => Some(held),
        _ => None,
    };
    let vouched = held.is_some();
    let numbered: Vec<(usize, &Member)> = members.iter().enumerate().collect();
    let per_member = crate::util::parallel::run_parallel(&numbered, jobs, |&(i, m)| {
        let mut out = Vec::new();
        if !vouched {
            tool_state(m, &mut out);
        }
        if let Ok(record) = &m.record {
            resolution(m, &record.tool_version, ws_root.as_deref(), &memo, &mut out);
        }
        if let Some(ws) = ws_root.as_ref().filter(|_| !vouched) {
            pointer(m, ws, &mut out);
        }
        // The snapshot's answer while the member's index is the very file it read.
        if m.path != owner && !held.is_some_and(|h| h.local_untracked(i, m)) {
            match crate::util::git::tracking(&m.path, LOCAL_DIR, vouched) {
                crate::util::git::Tracking::No => {}
                crate::util::git::Tracking::Yes => out.push(finding(
                    Code::LocalTracked,
                    Some(m.path.clone()),
                    None,
                    format!(
                        "git tracks `{}` or files under it: that directory is machine-local",
                        m.path.join(LOCAL_DIR).display()
                    ),
                    format!(
                        "run `git rm -r --cached {LOCAL_DIR}` in `{}` and commit (a2c writes `{LOCAL_DIR}/.gitignore` so this does not recur)",
                        m.path.display()
                    ),
                )),
                crate::util::git::Tracking::Unknown { reason, hint } => {
                    out.push(tracking_unknown(&m.path, &reason, hint))
                }
            }
        }
        out
    });
    for (m, findings) in members.iter().zip(per_member) {
        out.extend(findings);
        for v in m.pinned_versions() {
            pinned.entry(v.clone()).or_default().push(m.path.clone());
        }
        if let Ok(record) = &m.record
            && (ws_root.is_some() || m.delivery() == Some(Delivery::Package))
        {
            locked
                .entry(record.tool_version.clone())
                .or_default()
                .push(m.path.clone());
        }
    }
    if let Some(ws) = &ctx.workspace {
        workspace_ai_rules(&ws.root, &mut out);
        missing_members(ws, members, &mut out);
    }
    // A nested superbuild whose marker cannot be read: every command inside it fails closed,
    // so the outer doctor says so (the walk does not enter it).
    for nested in &ctx.nested() {
        if let Err(e) = crate::workspace::WorkspaceMarker::read(nested) {
            out.push(finding(
                Code::NestedMarkerInvalid,
                Some(nested.clone()),
                None,
                format!("the nested superbuild `{}` has a marker a2c cannot read: {e}", nested.display()),
                format!(
                    "fix its marker (`a2c doctor` in `{}` names the line), or remove it if that directory is no superbuild; until then every a2c command inside it fails",
                    nested.display()
                ),
            ));
        }
    }
    let lock = lock_findings(ctx, &locked, &mut out);
    match crate::store::guard(ctx.store_owner()?) {
        Ok(store) => {
            // The bundle cache the store installs from (unreadable: its checks are skipped).
            let cache = crate::store::Cache::for_store(&store, settings).ok();
            let lock_dir = ctx.lock_path().ok().and_then(|p| p.parent().map(Path::to_path_buf));
            too_old_for_unresolved(cache.as_ref(), lock.as_ref(), lock_dir.as_deref(), &mut out);
            store_findings(&store, cache.as_ref(), &pinned, lock.as_ref(), options, &mut out)
        }
        Err(crate::store::StoreError::Tracked { path }) => out.push(finding(
            Code::StoreTracked,
            None,
            None,
            format!(
                "`{}` is tracked by git: a2c's store is machine-local, and a committed one could pass off any files as installed versions; a2c refuses to use it",
                path.display()
            ),
            "run `git rm -r --cached .tools_local` in that repository, commit, then `a2c install`",
        )),
        Err(crate::store::StoreError::TrackingUnknown { path, reason, hint }) => {
            out.push(tracking_unknown(path.parent().unwrap_or(&path), &reason, hint))
        }
        Err(crate::store::StoreError::Io(e)) if crate::util::contain::refusal(&e).is_some() => out.push(finding(
            Code::UnsafeLink,
            None,
            None,
            e.to_string(),
            "replace the link with a real directory (or delete it), then run `a2c install`",
        )),
        Err(crate::store::StoreError::Io(e)) => return Err(e.into()),
        Err(e) => return Err(std::io::Error::other(e.to_string()).into()),
    }
    Ok(out)
}
