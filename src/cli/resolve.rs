//! `a2c resolve [--version V]`.

use clap::Args;

use super::{GlobalArgs, Outcome, Printer, discover};
use crate::util::version::MethodVersion;

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c resolve\n  cat \"$(a2c resolve)/rules/core.md\"\n  a2c resolve --json")]
pub struct ResolveArgs {
    /// The method version (default: the repository's write contract)
    #[arg(long, value_name = "V")]
    pub version: Option<MethodVersion>,
}

pub fn run(args: &ResolveArgs, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let ctx = discover(global, printer)?;
    super::warn_pending(ctx.require_repo()?, printer);
    let mut resolution = crate::ops::resolve::resolve(&ctx, args.version.as_ref())?;
    for w in &resolution.warnings {
        printer.warn(w);
    }
    if printer.json {
        printer.json_doc(&resolution);
    }
    if let Some(e) = resolution.failure.take() {
        return Err(e.into());
    }
    if !printer.json {
        if let Some(root) = &resolution.root {
            printer.data(root.display().to_string());
        }
        if let Some(rule) = resolution.rule {
            printer.detail(format!("found by rule {rule}"));
        }
    }
    Ok(Outcome::Success)
}
