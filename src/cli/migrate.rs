//! `a2c migrate version --to V [--dry-run] [--no-commit] [--allow-downgrade]`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;

use super::progress::ProgressReporter;
use super::{GlobalArgs, Outcome, Printer, discover};
use crate::migrate::{Keep, MoveReason};
use crate::ops::migrate::{MigrateSettings, migrate};
use crate::util::version::MethodVersion;

#[derive(Debug, Subcommand)]
pub enum MigrateCommand {
    /// Move this repository's write contract to another method version, in one commit
    Version(VersionArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c migrate version --to 2.0.0 --dry-run      # prints the plan and `plan sha256:…`\n  a2c migrate version --to 2.0.0 --confirm sha256:…\n  a2c migrate version --to 2.0.0"
)]
pub struct VersionArgs {
    /// Accept a signed index past its `expires` (keys pinned in `trusted_keys:`)
    #[arg(long)]
    pub allow_expired: bool,
    /// The target method version (one exact version)
    #[arg(long, value_name = "V")]
    pub to: MethodVersion,
    /// Print the plan and its digest, and change nothing
    #[arg(long, conflicts_with = "confirm")]
    pub dry_run: bool,
    /// Apply only the reviewed plan with this digest (`plan sha256:<hex>` of a dry run): if
    /// anything it depends on changed since, name it and change nothing
    #[arg(long, value_name = "sha256:HEX")]
    pub confirm: Option<String>,
    /// Leave the change staged instead of committing it
    #[arg(long)]
    pub no_commit: bool,
    /// Allow a target older than the current write contract
    #[arg(long)]
    pub allow_downgrade: bool,
    /// A directory of bundles (see `a2c vendor`)
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Set the adoption record's method_ref (default: kept; a ref naming the old version follows it)
    #[arg(long, value_name = "REF")]
    pub method_ref: Option<String>,
    /// Set the adoption record's delivery (default: kept)
    #[arg(long, value_name = "D", value_parser = ["none", "copy", "submodule", "clone", "package"])]
    pub delivery: Option<String>,
    /// When a file exists in both tool state roots and differs: keep the `.tools/esys/a2c/`
    /// copy (drop the `.a2c/` one) or the `.a2c/` copy (move it over the other)
    #[arg(long, value_name = "SIDE", value_parser = ["canonical", "legacy"])]
    pub keep: Option<String>,
}

pub fn run(cmd: &MigrateCommand, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let MigrateCommand::Version(args) = cmd;
    let ctx = discover(global, printer)?;
    let settings = MigrateSettings {
        allow_expired: args.allow_expired,
        to: Some(args.to.clone()),
        dry_run: args.dry_run,
        no_commit: args.no_commit,
        allow_downgrade: args.allow_downgrade,
        offline: global.offline || global.frozen,
        confirm: args.confirm.clone(),
        from: args.from.as_ref().map(|f| ctx.start.join(f)),
        method_ref: args.method_ref.clone(),
        delivery: args
            .delivery
            .as_deref()
            .map(|d| d.parse())
            .transpose()
            .map_err(anyhow::Error::msg)?,
        keep: args.keep.as_deref().map(|k| match k {
            "legacy" => Keep::Legacy,
            _ => Keep::Canonical,
        }),
    };
    let reporter = ProgressReporter::new(printer);
    let result = migrate(&ctx, &settings, &reporter);
    reporter.done();
    let out = result?;
    let p = &out.plan;
    for w in &out.warnings {
        printer.warn(w);
    }
    if printer.json {
        let files = |v: &[crate::migrate::Move]| {
            v.iter()
                .map(|m| json!({"from": m.from, "to": m.to}))
                .collect::<Vec<_>>()
        };
        printer.json_doc(&json!({
            "repo": p.repo,
            "from": p.from,
            "to": p.to,
            "moves": files(&p.moves),
            "replaced": files(&p.moves.iter().filter(|m| m.replaces).cloned().collect::<Vec<_>>()),
            "dropped": files(&p.dropped),
            "move_reason": p.move_reason,
            "adoption": {
                "before": p.before.tool_version, "after": p.after.tool_version,
                "path": p.adoption_path, "rewritten": p.write_record,
            },
            "commit": out.commit,
            "installed": out.installed,
            "workspace_lock": out.workspace_lock,
            "dry_run": args.dry_run,
            "plan": out.digest,
            "noop": out.noop,
            "warnings": out.warnings,
        }));
        return Ok(Outcome::Success);
    }
    if out.noop {
        printer.status(format!("already at {}: nothing to do", p.to));
        return Ok(Outcome::Success);
    }
    let verb = if args.dry_run { "would" } else { "did" };
    if out.resumed {
        printer.status(format!("resuming the interrupted migration {} -> {}", p.from, p.to));
    }
    match (&out.installed, args.dry_run) {
        (Some(path), _) => printer.status(format!("assets of {} installed at `{}`", p.to, path.display())),
        (None, true) => printer.status(format!("would lock and install {} first", p.to)),
        _ => {}
    }
    if let Some(lock) = &out.workspace_lock {
        printer.status(format!(
            "{} {} to the superbuild's lock `{}` (commit it in the superbuild)",
            if args.dry_run { "would add" } else { "added" },
            p.to,
            lock.display()
        ));
    }
    if out.requires_canonical.is_none() {
        printer.status(format!(
            "note: {}'s manifest is not available locally, so whether it requires `.tools/esys/a2c` is not known until its bundle is fetched",
            p.to
        ));
    }
    match p.move_reason {
        Some(MoveReason::Required) => printer.status(format!("{} requires `.tools/esys/a2c/`: the tool state root moves", p.to)),
        Some(MoveReason::Unfinished) => {
            printer.status("both tool state roots hold state: the move finishes the earlier migration")
        }
        Some(MoveReason::RecordWrite) => printer.status(
            "a2c never writes into `.a2c/`: the adoption record changes, so the tool state root moves to `.tools/esys/a2c/`",
        ),
        None => {}
    }
    for m in &p.moves {
        printer.status(format!(
            "{verb} {} {} -> {}{}",
            if m.tracked { "git mv" } else { "move" },
            m.from,
            m.to,
            if m.replaces {
                " (replacing the differing canonical copy: --keep legacy)"
            } else {
                ""
            }
        ));
    }
    for d in &p.duplicates {
        printer.status(format!("{verb} remove {} (identical to {})", d.from, d.to));
    }
    for d in &p.dropped {
        printer.status(format!(
            "{verb} remove {} (differs from {}; --keep canonical)",
            d.from, d.to
        ));
    }
    if p.remove_legacy {
        printer.status(format!("{verb} remove the empty `.a2c/`"));
    }
    if p.write_record {
        printer.status(format!(
            "{verb} set {} to tool_version {} (was {})",
            p.adoption_path.display(),
            p.after.tool_version,
            p.before.tool_version
        ));
    } else {
        printer.status(format!("the write contract stays {}", p.to));
    }
    match (&out.commit, args.dry_run, args.no_commit) {
        (Some(sha), _, _) => printer.status(format!(
            "committed {sha}: {}",
            p.commit_message().lines().next().unwrap_or_default()
        )),
        (None, true, false) => printer.status(format!(
            "would commit: {}",
            p.commit_message().lines().next().unwrap_or_default()
        )),
        (None, _, true) => printer.status("left staged (--no-commit): review with `git diff --cached`, then commit"),
        _ => {}
    }
    if let Some(digest) = &out.digest {
        match args.dry_run {
            true => printer.status(format!(
                "plan {digest}\napply exactly this plan with: a2c migrate version --to {} --confirm {digest}",
                p.to
            )),
            false => printer.status(format!("applied plan {digest}")),
        }
    }
    Ok(Outcome::Success)
}
