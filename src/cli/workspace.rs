//! `a2c workspace path` and `a2c workspace members`.

use clap::Subcommand;

use super::{GlobalArgs, Outcome, Printer, discover};
use crate::workspace::Workspace;

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
                /// `workspace path --json` (docs/json/workspace-root.schema.json).
                #[derive(serde::Serialize)]
                struct Root<'a> {
                    workspace: &'a std::path::Path,
                }
                printer.json_doc(&Root { workspace: &ws.root });
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
    super::note_snapshot(ctx, printer);
    for w in ctx.unfinished_migrations() {
        printer.warn(w);
    }
    let listing = crate::workspace::discovery::MemberListing::new(&ws.root, members);
    let versions = &listing.versions;
    let invalid = members.iter().filter(|m| m.record.is_err()).count();
    if printer.json {
        printer.json_doc(&listing);
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
