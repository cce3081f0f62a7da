//! What the members pin: which versions the superbuild (or the single repository) needs, and
//! who needs each.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::OpsError;
use crate::util::version::MethodVersion;
use crate::workspace::{Context, WorkspaceError};

/// Which members need which version: the union of write contracts.
pub type Needs = BTreeMap<MethodVersion, Vec<PathBuf>>;

/// The union of write contracts that `lock` and `install` serve. In a superbuild: every
/// member's, whatever its delivery (resolution looks in W's store first, so the superbuild
/// serves the whole checkout). In a single repository: its own, only when its delivery is
/// `package` (or unnamed); `copy`, `submodule` and `clone` deliver the assets by git at
/// `R/tools/ai-rules/`, and `none` delivers nothing. An invalid member is an error: the union
/// would be incomplete without it.
pub fn needs(ctx: &Context) -> Result<Needs, OpsError> {
    let mut needs = Needs::new();
    for (path, version) in needing(ctx)? {
        needs.entry(version.clone()).or_default().push(path.to_path_buf());
    }
    Ok(needs)
}

/// What [`needs`] gathers, borrowed from the members and in their order: each member that
/// needs a version, and the version.
pub fn needing(ctx: &Context) -> Result<Vec<(&Path, &MethodVersion)>, OpsError> {
    let single = ctx.workspace.is_none();
    let members = ctx.members()?;
    let mut needing = Vec::with_capacity(members.len());
    for member in members {
        let delivery = member.delivery();
        match &member.record {
            Ok(_) if single && delivery != Some(crate::workspace::Delivery::Package) => {}
            Ok(record) => needing.push((member.path.as_path(), &record.tool_version)),
            // Not an invalid record but none at all: the hint is `a2c adopt --version X`.
            Err(crate::workspace::discovery::MemberError::NotAdopted { repo }) => {
                return Err(WorkspaceError::NotAdopted { repo: repo.clone() }.into());
            }
            Err(reason) => {
                return Err(OpsError::InvalidMember {
                    path: member.path.clone(),
                    reason: reason.to_string(),
                });
            }
        }
    }
    Ok(needing)
}

/// Every version any adoption record of the members pins, legacy or canonical, whatever the
/// delivery: what `gc` must never remove. An unreadable member stops it rather than guess.
pub fn pinned(ctx: &Context) -> Result<Needs, OpsError> {
    let mut pinned = Needs::new();
    for member in ctx.members()? {
        if let Err(reason) = &member.record {
            return Err(OpsError::InvalidMember {
                path: member.path.clone(),
                reason: reason.to_string(),
            });
        }
        for v in member.pinned_versions() {
            pinned.entry(v.clone()).or_default().push(member.path.clone());
        }
    }
    Ok(pinned)
}

/// The delivery of the single repository outside a superbuild when it is not `package`: it
/// gets nothing from a single-repo install.
pub fn git_delivery(ctx: &Context) -> Option<(PathBuf, crate::workspace::Delivery)> {
    if ctx.workspace.is_some() {
        return None;
    }
    let member = ctx.members().ok()?.first()?;
    let delivery = member.delivery()?;
    (delivery != crate::workspace::Delivery::Package).then_some((member.path.clone(), delivery))
}
