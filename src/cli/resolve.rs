//! `a2c resolve [--version V]`.

use clap::Args;
use serde_json::json;

use super::{GlobalArgs, Outcome, Printer, discover};
use crate::util::version::MethodVersion;
use crate::workspace::{Member, WorkspaceError, resolve};

#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// The method version (default: the repository's write contract)
    #[arg(long, value_name = "V")]
    pub version: Option<MethodVersion>,
}

pub fn run(args: &ResolveArgs, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let ctx = discover(global, printer)?;
    let repo = ctx.require_repo()?.to_path_buf();
    let member = Member::read(repo.clone(), ".".into());
    super::workspace::warn_unfinished(std::slice::from_ref(&member), printer);
    let version = match &args.version {
        Some(v) => v.clone(),
        None => {
            let state = member.state.as_ref().filter(|s| s.has_adoption());
            let state = state.ok_or_else(|| WorkspaceError::NotAdopted { repo: repo.clone() })?;
            state.read_adoption().map_err(WorkspaceError::from)?.tool_version
        }
    };
    let ws_root = ctx.workspace.as_ref().map(|w| w.root.clone());
    let result = resolve::resolve(&repo, ws_root.as_deref(), &version);
    if printer.json {
        let (root, rule) = match &result {
            Ok(r) => (Some(r.root.clone()), Some(r.rule.as_str())),
            Err(_) => (None, None),
        };
        printer
            .json_doc(&json!({ "repo": repo, "version": version, "workspace": ws_root, "root": root, "rule": rule }));
    }
    let resolution = result?;
    if !printer.json {
        printer.data(resolution.root.display().to_string());
        printer.detail(format!("found by rule {}", resolution.rule.as_str()));
    }
    Ok(Outcome::Success)
}
