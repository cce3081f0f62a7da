//! `a2c mcp [--allow-write]`: the MCP server over stdio (see `crate::mcp`).

use clap::Args;

use super::{GlobalArgs, Outcome};

#[derive(Debug, Args)]
#[command(
    after_help = "An agent runtime starts it in the repository the agent works in; docs/agents.md has the configuration for Claude Code, Codex, Cursor and others.\n\nExamples:\n  a2c mcp\n  a2c mcp --allow-write"
)]
pub struct McpArgs {
    /// Offer the tools that change the workspace: `install`, and `migrate_apply` of a plan
    /// digest the user approved
    #[arg(long)]
    pub allow_write: bool,
}

pub fn run(args: &McpArgs, global: &GlobalArgs) -> anyhow::Result<Outcome> {
    let start = global.start_dir()?;
    let exe = std::env::current_exe().map_err(|e| anyhow::anyhow!("cannot find this a2c binary: {e}"))?;
    crate::mcp::serve(crate::mcp::Options {
        start,
        workspace: global.workspace.clone(),
        allow_write: args.allow_write,
        exe,
    })?;
    Ok(Outcome::Success)
}
