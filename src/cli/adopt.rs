//! `a2c adopt --version V`: the bootstrap of a new repository, never the upgrade path.

use clap::Args;
use serde_json::json;

use super::{GlobalArgs, Outcome, Printer, discover};
use crate::util::version::MethodVersion;
use crate::workspace::adoption::ADOPTION_FILE;
use crate::workspace::state_root::LEGACY_ROOT;
use crate::workspace::{AdoptionRecord, Delivery, ToolStateRoot, WorkspaceError};

#[derive(Debug, Args)]
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

pub fn run(args: &AdoptArgs, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let ctx = discover(global, printer)?;
    let repo = ctx.require_repo()?.to_path_buf();
    let canonical = ToolStateRoot::canonical_dir(&repo).join(ADOPTION_FILE);
    let legacy = repo.join(LEGACY_ROOT).join(ADOPTION_FILE);
    crate::util::contain::check(&repo, crate::workspace::state_root::LEGACY_ROOT)?;
    crate::util::contain::check(&repo, crate::workspace::state_root::CANONICAL_ROOT)?;
    for existing in [&canonical, &legacy] {
        if std::fs::symlink_metadata(existing).is_ok() {
            return Err(WorkspaceError::AlreadyAdopted { path: existing.clone() }.into());
        }
    }
    let delivery: Delivery = args.delivery.parse().map_err(anyhow::Error::msg)?;
    let record = AdoptionRecord::new(args.version.clone(), args.method_ref.clone(), Some(delivery));
    crate::util::contain::create_dirs(&repo, crate::workspace::state_root::CANONICAL_ROOT, 0o755)?;
    crate::util::fs::write_atomic(&canonical, record.to_yaml().as_bytes())
        .map_err(|e| anyhow::anyhow!("failed to write `{}`: {e}", canonical.display()))?;
    if printer.json {
        printer.json_doc(
            &json!({ "repo": repo, "path": canonical, "version": record.tool_version, "delivery": delivery }),
        );
    } else {
        printer.status(format!(
            "adopted A2C {} in `{}` (wrote `{}`)",
            record.tool_version,
            repo.display(),
            canonical.display()
        ));
    }
    Ok(Outcome::Success)
}
