//! `a2c gc [--dry-run] [--cache]`.

use clap::Args;

use super::progress::ProgressReporter;
use super::{Cx, Outcome, discover_members};
use crate::ops::display_under;

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c gc --dry-run\n  a2c gc --cache")]
pub struct GcArgs {
    /// Say what would be removed, and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Also remove cache bundles that the lock does not reference, and cached trees that it
    /// does not reference and that no store links
    #[arg(long)]
    pub cache: bool,
}

pub fn run(args: &GcArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let ctx = discover_members(global, printer)?;
    let reporter = ProgressReporter::new(printer);
    let result = crate::ops::gc::gc(session, &ctx, args.dry_run, args.cache, &reporter);
    reporter.done();
    let out = result?;
    let base = super::display_base(&ctx);
    let r = &out.report;
    if printer.json {
        printer.json_doc(&out);
        return Ok(Outcome::Success);
    }
    let removed = if args.dry_run { "would remove" } else { "removed" };
    for (v, members) in &r.kept {
        let names: Vec<String> = members.iter().map(|m| display_under(&base, m)).collect();
        printer.listing(format!("kept {v}: {}", names.join(", ")));
    }
    for (v, _) in &r.removed {
        printer.listing(format!("{removed} {v}: no member pins it"));
    }
    for p in &r.cache_removed {
        printer.listing(format!("{removed} cache bundle {}: no lock references it", p.display()));
    }
    for p in &out.projections_removed {
        printer.listing(format!(
            "{removed} the agents' projection in {} ({} path(s)): no runtime is named any more",
            display_under(&base, &p.member),
            p.paths.len()
        ));
    }
    for p in &r.trees_removed {
        printer.listing(format!(
            "{removed} cached tree {}: no lock references it and no store links it",
            p.display()
        ));
    }
    printer.status(format!(
        "{} kept, {} {removed}{}",
        r.kept.len(),
        r.removed.len(),
        if args.cache {
            format!(
                ", {} cache bundle(s) and {} cached tree(s) {removed}",
                r.cache_removed.len(),
                r.trees_removed.len()
            )
        } else {
            String::new()
        }
    ));
    Ok(Outcome::Success)
}
