//! `a2c resolve [--version V]`.

use clap::Args;
use serde_json::json;

use super::{GlobalArgs, Outcome, Printer, discover};
use crate::util::version::MethodVersion;
use crate::workspace::{Member, WorkspaceError, resolve};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c resolve\n  cat \"$(a2c resolve)/rules/core.md\"\n  a2c resolve --json")]
pub struct ResolveArgs {
    /// The method version (default: the repository's write contract)
    #[arg(long, value_name = "V")]
    pub version: Option<MethodVersion>,
}

pub fn run(args: &ResolveArgs, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let ctx = discover(global, printer)?;
    let repo = ctx.require_repo()?.to_path_buf();
    super::warn_pending(&repo, printer);
    let member = Member::read(repo.clone(), ".".into());
    if let Some(w) = member.state.as_ref().and_then(|s| s.unfinished_migration_warning()) {
        printer.warn(w);
    }
    let contract = member.version().cloned();
    let version = match &args.version {
        Some(v) => v.clone(),
        None => match (&member.record, &member.state) {
            (Ok(r), _) => r.tool_version.clone(),
            (Err(_), Some(s)) if s.has_adoption() => s.read_adoption().map_err(WorkspaceError::from)?.tool_version,
            _ => return Err(WorkspaceError::NotAdopted { repo: repo.clone() }.into()),
        },
    };
    // ADR-0024 §2: a version other than the write contract may be mounted for reading only.
    let read_only = contract.as_ref() != Some(&version);
    if read_only {
        printer.warn(match &contract {
            Some(c) => format!(
                "{version} is a read-only mount, not the write contract of `{}` ({c}): author nothing under {version}'s rules",
                repo.display()
            ),
            None => format!(
                "`{}` has no write contract: {version} is a read-only mount",
                repo.display()
            ),
        });
    }
    let ws_root = ctx.workspace.as_ref().map(|w| w.root.clone());
    let result = resolve::resolve(&repo, ws_root.as_deref(), &version);
    if let Ok(r) = &result
        && let Ok(m) = crate::method::MethodManifest::read_tree(&r.root)
        && let Some(min) = m.needs_newer_a2c()
    {
        printer.warn(format!(
            "method {version} needs a2c >= {min}, this is {}: upgrade a2c before working under its rules",
            crate::A2C_VERSION
        ));
    }
    if printer.json {
        let (root, rule) = match &result {
            Ok(r) => (Some(r.root.clone()), Some(r.rule.as_str())),
            Err(_) => (None, None),
        };
        printer.json_doc(&json!({
            "repo": repo, "version": version, "workspace": ws_root, "root": root, "rule": rule,
            "write_contract": contract, "read_only": read_only,
        }));
    }
    let resolution = result?;
    if !printer.json {
        printer.data(resolution.root.display().to_string());
        printer.detail(format!("found by rule {}", resolution.rule.as_str()));
    }
    Ok(Outcome::Success)
}
