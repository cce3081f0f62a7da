//! `a2c workspace path` and `a2c workspace members`.

use clap::Subcommand;
use serde_json::json;

use super::{GlobalArgs, Outcome, Printer, discover};
use crate::workspace::{Member, Workspace};

#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// Print the superbuild workspace root W (exit 1 outside a superbuild)
    #[command(after_help = "Example:\n  cd \"$(a2c workspace path)\"")]
    Path,
    /// List the members with their tool state root and write contract
    #[command(after_help = "Examples:\n  a2c workspace members\n  a2c workspace members --json")]
    Members,
}

pub fn run(cmd: &WorkspaceCommand, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let ctx = discover(global, printer)?;
    let ws = ctx.require_workspace()?;
    match cmd {
        WorkspaceCommand::Path => {
            if printer.json {
                printer.json_doc(&json!({ "workspace": ws.root }));
            } else {
                printer.data(ws.root.display().to_string());
            }
            Ok(Outcome::Success)
        }
        WorkspaceCommand::Members => members(&ctx, ws, printer),
    }
}

fn members(ctx: &crate::workspace::Context, ws: &Workspace, printer: &Printer) -> anyhow::Result<Outcome> {
    let members = ctx.members()?;
    for w in ctx.unfinished_migrations() {
        printer.warn(w);
    }
    let mut versions: Vec<_> = members.iter().filter_map(Member::version).cloned().collect();
    versions.sort();
    versions.dedup();
    let invalid = members.iter().filter(|m| m.record.is_err()).count();
    if printer.json {
        let list: Vec<_> = members.iter().map(member_json).collect();
        printer.json_doc(&json!({ "workspace": ws.root, "members": list, "versions": versions }));
    } else {
        printer.data(format!("workspace {}", ws.root.display()));
        let width = members.iter().map(|m| m.relative.len()).max().unwrap_or(1);
        for m in members {
            let layout = m.state.as_ref().map_or("-", |s| match s.layout {
                crate::workspace::Layout::Canonical => "canonical",
                crate::workspace::Layout::Legacy => "legacy",
            });
            match &m.record {
                Ok(r) => printer.data(format!(
                    "  {:<width$}  {:<9}  {:<10}  {}",
                    m.relative,
                    layout,
                    r.tool_version.to_string(),
                    r.delivery.map_or("-".to_string(), |d| d.to_string())
                )),
                Err(e) => printer.data(format!("  {:<width$}  {:<9}  error: {e}", m.relative, layout)),
            }
        }
        let list: Vec<String> = versions.iter().map(ToString::to_string).collect();
        printer.data(format!(
            "versions {}",
            if list.is_empty() {
                "-".to_string()
            } else {
                list.join(", ")
            }
        ));
    }
    if invalid > 0 {
        printer.error(&anyhow::anyhow!("{invalid} member(s) have no valid adoption record"));
        return Ok(Outcome::Failure);
    }
    Ok(Outcome::Success)
}

fn member_json(m: &Member) -> serde_json::Value {
    let mut v = json!({
        "path": m.path,
        "relative": m.relative,
        "tool_state_root": m.state.as_ref().map(|s| s.dir.clone()),
        "layout": m.state.as_ref().map(|s| s.layout),
    });
    match &m.record {
        Ok(r) => {
            v["version"] = json!(r.tool_version);
            v["delivery"] = json!(r.delivery);
        }
        Err(e) => v["error"] = json!(e.to_string()),
    }
    v
}
