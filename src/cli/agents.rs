//! `a2c agents list`, `a2c agents sync` and `a2c agents clean`: each member's method projected
//! where the agent runtimes the marker names look (docs/agents.md).

use clap::Subcommand;

use super::{Cx, Outcome, Printer, discover_members};

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Each member's projection for the runtimes `agents:` names: its version, and what
    /// drifted (exit 1 when anything did)
    #[command(after_help = "Examples:\n  a2c agents list\n  a2c agents list --json")]
    List,
    /// Project every member's write-contract version for the runtimes `agents:` names (what
    /// `a2c install` does), repairing drift; with none named, remove every projection
    #[command(after_help = "Example:\n  a2c agents sync")]
    Sync,
    /// Remove every member's projection: exactly what its receipt lists
    #[command(after_help = "Example:\n  a2c agents clean")]
    Clean,
    /// Print the MCP server entry that makes RUNTIME start `a2c mcp`, and the file it goes in;
    /// with --write, add it to RUNTIME's user-level file (machine-local, every project)
    #[command(after_help = "Examples:\n  a2c agents mcp-config claude\n  a2c agents mcp-config codex --write")]
    McpConfig {
        /// The runtime (claude, codex, copilot, cursor)
        runtime: String,
        /// Add the entry to the runtime's user-level file (~/.claude.json, ~/.codex/config.toml,
        /// VS Code's user mcp.json, ~/.cursor/mcp.json), keeping all else in it; never a file
        /// of the repository
        #[arg(long)]
        write: bool,
    },
}

pub fn run(cmd: &AgentsCommand, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    if let AgentsCommand::McpConfig { runtime, write } = cmd {
        return mcp_config(runtime, *write, &session.user_dirs, printer);
    }
    let ctx = discover_members(global, printer)?;
    ctx.require_repo()?;
    match cmd {
        AgentsCommand::List => {
            let out = crate::ops::agents::list(&ctx)?;
            let drifted = out.members.iter().any(|m| !m.drift.is_empty());
            report(&out, printer, false);
            Ok(if drifted { Outcome::Failure } else { Outcome::Success })
        }
        AgentsCommand::Sync => {
            let out = crate::ops::agents::sync(&ctx)?;
            report(&out, printer, true);
            Ok(Outcome::Success)
        }
        AgentsCommand::McpConfig { .. } => unreachable!("answered above"),
        AgentsCommand::Clean => {
            let removed = crate::ops::agents::clean(&ctx)?;
            if printer.json {
                #[derive(serde::Serialize)]
                struct Cleaned<'a> {
                    removed: Vec<(&'a std::path::Path, &'a [String])>,
                }
                printer.json_doc(&Cleaned {
                    removed: removed.iter().map(|(p, r)| (p.as_path(), r.as_slice())).collect(),
                });
            } else {
                let count: usize = removed.iter().map(|(_, r)| r.len()).sum();
                printer.status(format!(
                    "removed {count} projected path(s) from {} member(s)",
                    removed.len()
                ));
            }
            Ok(Outcome::Success)
        }
    }
}

/// The projection of every member, in a line each (or the `--json` document).
pub(super) fn report(out: &crate::ops::agents::AgentsOutcome, printer: &Printer, synced: bool) {
    if printer.json {
        printer.json_doc(out);
        return;
    }
    if !out.local.is_empty() {
        let signed = |sign: char, ids: &[String]| ids.iter().map(move |id| format!("{sign}{id}")).collect::<Vec<_>>();
        let mut changes = signed('+', &out.local.add);
        changes.extend(signed('-', &out.local.drop));
        printer.status(format!(
            "the marker names [{}]; this machine {} ({}): [{}] projected here",
            out.tracked.join(", "),
            changes.join(" "),
            crate::agents::LOCAL,
            out.runtimes.join(", ")
        ));
    }
    if out.runtimes.is_empty() {
        printer.status(match out.local.is_empty() {
            true => "no agent runtime is named (`agents:` in the marker, or in a single repository's config.yaml): nothing is projected",
            false => "no agent runtime is projected on this machine",
        });
    }
    for m in &out.members {
        let what = match (&m.skipped, &m.version) {
            (Some(why), _) => format!("not projected: {why}"),
            (None, Some(v)) if !out.runtimes.is_empty() => {
                format!("{v} for {} ({} path(s))", out.runtimes.join(", "), m.entries)
            }
            _ => "nothing projected".into(),
        };
        printer.data(format!("{}: {what}", m.relative));
        for d in &m.drift {
            printer.data(format!("  drift: {d}"));
        }
    }
    if synced {
        let written: usize = out
            .members
            .iter()
            .filter_map(|m| m.synced.as_ref())
            .map(|s| s.written)
            .sum();
        printer.status(format!("projected: {written} path(s) written"));
    } else if out.members.iter().any(|m| !m.drift.is_empty()) {
        printer.status("run `a2c agents sync` to repair the projections that drifted");
    }
}

/// The runtime's MCP server entry for `a2c mcp`: the file on stderr, the entry on stdout (so
/// that `>>` or a paste takes the entry alone).
fn mcp_config(
    runtime: &str,
    write: bool,
    dirs: &crate::agents::mcp_config::UserDirs,
    printer: &Printer,
) -> anyhow::Result<Outcome> {
    let known = || {
        crate::agents::RUNTIMES
            .iter()
            .filter(|r| r.mcp.is_some())
            .map(|r| r.id)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(found) = crate::agents::RUNTIMES.iter().find(|r| r.id == runtime) else {
        anyhow::bail!(
            "`{}` is no runtime a2c knows (MCP clients: {})",
            crate::util::text::visible(runtime),
            known()
        );
    };
    let Some((file, entry)) = found.mcp else {
        anyhow::bail!(
            "`{runtime}` is a folder layout, not an MCP client: name the runtime that reads it ({})",
            known()
        );
    };
    if write {
        use crate::agents::mcp_config::Wrote;
        let wrote = crate::agents::mcp_config::write(runtime, dirs)?;
        let (Wrote::Added(path) | Wrote::Already(path)) = &wrote;
        let what = match wrote {
            Wrote::Added(_) => "added the `a2c` server to",
            Wrote::Already(_) => "the `a2c` server is already in",
        };
        printer.status(format!(
            "{what} `{}`: {} starts `a2c mcp` in every project it opens on this machine",
            path.display(),
            found.reader
        ));
        return Ok(Outcome::Success);
    }
    printer.status(format!("{} reads it from {file}:", found.reader));
    printer.data(entry);
    if let Some(user) = crate::agents::mcp_config::user_file(runtime, dirs) {
        printer.status(format!(
            "or, for every project on this machine: `a2c agents mcp-config {runtime} --write` adds it to `{}`",
            user.display()
        ));
    }
    Ok(Outcome::Success)
}
