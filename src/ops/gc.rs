//! `a2c gc`: the pinned set is the union of every member's write contract (every member of W
//! in a superbuild, legacy ones included); an unreadable member stops it rather than guess.

use std::collections::BTreeSet;

use super::{OpsError, cache, lock_path, pinned};
use crate::lock::Lockfile;
use crate::store::Reporter;
use crate::store::gc::GcReport;
use crate::workspace::Context;

#[derive(Debug)]
/// What `a2c gc` did (or, dry, would do); serialized as its `--json` document.
#[derive(serde::Serialize)]
pub struct GcOutcome {
    pub store: std::path::PathBuf,
    pub dry_run: bool,
    #[serde(flatten)]
    pub report: GcReport,
    /// Agent projections no runtime wants any more (`agents:` emptied), removed (or, dry, to
    /// be removed): each member's paths, exactly as its receipt lists them.
    pub projections_removed: Vec<ProjectionRemoved>,
}

/// One member's stale projection.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProjectionRemoved {
    pub member: std::path::PathBuf,
    pub paths: Vec<String>,
}

pub fn gc(
    session: &super::Session,
    ctx: &Context,
    dry_run: bool,
    prune_cache: bool,
    reporter: &dyn Reporter,
) -> Result<GcOutcome, OpsError> {
    let pinned = pinned(ctx)?;
    let store = super::store(ctx)?;
    let cache = cache(session, &store)?;
    // What this lock pins, and what every other store installing from this cache needs
    // (computed under the cache's lock).
    let locked: BTreeSet<_> = match prune_cache {
        true => Lockfile::read(&lock_path(ctx)?)?
            .unwrap_or_default()
            .methods
            .iter()
            .map(|m| m.sha256)
            .collect(),
        false => BTreeSet::new(),
    };
    let referenced = || -> Result<BTreeSet<_>, crate::store::StoreError> {
        let mut all = locked.clone();
        all.extend(crate::store::gc::needed_by_stores(&cache, Some(store.root()))?);
        Ok(all)
    };
    let report = crate::store::gc::gc(
        &store,
        &session.store,
        &pinned,
        prune_cache.then_some((&cache, &referenced as crate::store::gc::Needed<'_>)),
        dry_run,
        reporter,
    )?;
    Ok(GcOutcome {
        store: store.root().to_path_buf(),
        dry_run,
        report,
        projections_removed: stale_projections(ctx, dry_run)?,
    })
}

/// With no runtime named here any more, the projections members still hold (they would point
/// into versions this gc may remove): removed exactly as their receipts list them. Nothing is
/// looked at while runtimes are named (`install` and `agents sync` keep those in step).
fn stale_projections(ctx: &Context, dry_run: bool) -> Result<Vec<ProjectionRemoved>, OpsError> {
    if ctx.projects_agents() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for m in ctx.members()? {
        let Some(receipt) = crate::agents::Receipt::read(&m.path)? else {
            continue;
        };
        // The files and links it lists (the folders a2c made go with them).
        let paths = receipt.entries.iter().map(|e| e.path.clone()).collect();
        if !dry_run {
            crate::agents::clean(&m.path)?;
        }
        out.push(ProjectionRemoved {
            member: m.path.clone(),
            paths,
        });
    }
    Ok(out)
}
