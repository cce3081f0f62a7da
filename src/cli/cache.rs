//! `a2c cache dir|clean|prune`: the machine's bundle and tree cache, as `cargo`'s and `uv`'s
//! cache commands.

use clap::{Args, Subcommand};

use super::{Cx, GlobalArgs, Outcome, Printer, discover};

#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Print the cache directory
    #[command(after_help = "Example:\n  du -sh \"$(a2c cache dir)\"")]
    Dir,
    /// Remove every cached bundle and tree (installed versions keep their files)
    #[command(after_help = "Examples:\n  a2c cache clean --dry-run\n  a2c cache clean")]
    Clean(CleanArgs),
    /// Remove what no store on this machine needs, or what was not used for DAYS days
    #[command(after_help = "Examples:\n  a2c cache prune\n  a2c cache prune --unused-for 30 --dry-run")]
    Prune(PruneArgs),
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Say what would be removed, and change nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Say what would be removed, and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Also remove what a store needs but no install used for DAYS days (it is fetched again
    /// when needed); a tree a store links is never removed
    #[arg(long, value_name = "DAYS")]
    pub unused_for: Option<u64>,
}

/// The cache: `A2C_CACHE_DIR`, `$XDG_CACHE_HOME/a2c` or `~/.cache/a2c`; else the fallback
/// inside the store of the repository or superbuild a2c runs in.
fn cache(session: &crate::ops::Session, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<crate::store::Cache> {
    if let Some(dir) = &session.store.cache_dir {
        return Ok(crate::store::Cache::open(dir.clone(), session.store.cache_variable)?);
    }
    let ctx = discover(global, printer)?;
    Ok(crate::ops::cache(session, &crate::ops::store(&ctx)?)?)
}

pub fn run(cmd: &CacheCommand, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let cache = cache(session, global, printer)?;
    match cmd {
        CacheCommand::Dir => {
            if printer.json {
                /// `cache dir --json` (docs/json/cache-dir.schema.json).
                #[derive(serde::Serialize)]
                struct Dir<'a> {
                    cache: &'a std::path::Path,
                }
                printer.json_doc(&Dir { cache: &cache.dir });
            } else {
                printer.data(cache.dir.display().to_string());
            }
        }
        CacheCommand::Clean(args) => {
            let report = crate::store::gc::clean_cache(&cache, args.dry_run, &|p| waiting(printer, p))?;
            report_removed(printer, &cache, &report, args.dry_run);
        }
        CacheCommand::Prune(args) => {
            let report = crate::store::gc::prune_cache(
                &cache,
                &|| crate::store::gc::needed_by_stores(&cache, None),
                args.unused_for.map(|d| d.saturating_mul(86_400)),
                args.dry_run,
                &|p| waiting(printer, p),
            )?;
            report_removed(printer, &cache, &report, args.dry_run);
        }
    }
    Ok(Outcome::Success)
}

/// Said once when another a2c holds the cache (an install): clean and prune wait for it.
fn waiting(printer: &Printer, lock: &std::path::Path) {
    printer.status(format!(
        "waiting for lock on `{}` (an a2c install is using the cache)",
        lock.display()
    ));
}

fn report_removed(printer: &Printer, cache: &crate::store::Cache, report: &crate::store::gc::PruneReport, dry: bool) {
    let verb = if dry { "would remove" } else { "removed" };
    if printer.json {
        printer.json_doc(report);
        return;
    }
    for (path, why) in &report.removed {
        printer.listing(format!("{verb} {}: {why}", path.display()));
    }
    printer.status(format!(
        "{verb} {} entries ({}) from `{}`",
        report.removed.len(),
        indicatif::HumanBytes(report.bytes),
        cache.dir.display()
    ));
}
