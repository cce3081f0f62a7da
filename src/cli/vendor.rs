//! `a2c vendor DIR`.

use std::path::PathBuf;

use clap::Args;

use super::progress::ProgressReporter;
use super::{Cx, Outcome, discover};
use crate::ops::vendor::vendor;

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c vendor ./vendor\n  a2c install --offline --from ./vendor   # later, anywhere")]
pub struct VendorArgs {
    /// The directory to copy every locked bundle into (created if missing)
    pub dir: PathBuf,
}

pub fn run(args: &VendorArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let ctx = discover(global, printer)?;
    let dir = ctx.start.join(&args.dir);
    let reporter = ProgressReporter::new(printer);
    let jobs = global.jobs.map_or_else(crate::ops::install::default_jobs, usize::from);
    let result = vendor(session, &ctx, &dir, jobs, &reporter);
    reporter.done();
    let out = result?;
    if printer.json {
        printer.json_doc(&out);
        return Ok(Outcome::Success);
    }
    for (b, how) in out.bundles.iter().zip(&out.placed) {
        printer.status(format!("vendored {} → {} ({how})", b.version, b.file));
    }
    printer.status(format!(
        "{} {} in `{}`; install {} anywhere with `a2c install --offline --from {}`",
        out.bundles.len(),
        if out.bundles.len() == 1 { "bundle" } else { "bundles" },
        out.dir.display(),
        if out.bundles.len() == 1 { "it" } else { "them" },
        // Pasted into a shell as is: quoted when the path has spaces or quotes.
        shlex::try_quote(&args.dir.to_string_lossy())
            .map_or_else(|_| args.dir.display().to_string(), |q| q.into_owned())
    ));
    Ok(Outcome::Success)
}
