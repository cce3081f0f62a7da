//! `a2c adopt --version V`: the bootstrap of a new repository, never the upgrade path.

use clap::Args;

use super::{Cx, Outcome, discover};
use crate::util::version::MethodVersion;
use crate::workspace::{AdoptionRecord, Delivery};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c adopt --version 1.4.0\n  a2c adopt --version 1.4.0 --delivery submodule --method-ref v1.4.0"
)]
pub struct AdoptArgs {
    /// The method version to adopt as the write contract (one exact version)
    #[arg(long, value_name = "V")]
    pub version: MethodVersion,
    /// How method assets reach this repository
    #[arg(long, value_name = "D", default_value = "package", value_parser = ["none", "copy", "submodule", "clone", "package"])]
    pub delivery: String,
    /// The method source's git ref, for clone or submodule delivery
    #[arg(long, value_name = "REF")]
    pub method_ref: Option<String>,
}

pub fn run(args: &AdoptArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let ctx = discover(global, printer)?;
    let repo = ctx.require_repo()?.to_path_buf();
    let delivery: Delivery = args.delivery.parse().map_err(anyhow::Error::msg)?;
    let record = AdoptionRecord::new(args.version.clone(), args.method_ref.clone(), Some(delivery));
    let adopted = crate::workspace::adoption::adopt(&repo, &record)?;
    // Discovered again: the repository is a member of its superbuild only now.
    if let Ok(after) = discover(global, printer)
        && let Some(warning) = crate::ops::check_published(session, &after, &args.version)
    {
        printer.warn(warning);
    }
    if printer.json {
        printer.json_doc(&adopted);
    } else {
        printer.status(format!(
            "adopted A2C {} in `{}` (wrote `{}`)",
            record.tool_version,
            repo.display(),
            adopted.path.display()
        ));
    }
    Ok(Outcome::Success)
}
