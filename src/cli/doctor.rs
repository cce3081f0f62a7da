//! `a2c doctor [--deep]`.

use clap::Args;

use super::{Cx, Outcome, discover_members};
use crate::doctor::{DoctorOptions, Severity, diagnose};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c doctor\n  a2c doctor --deep --json")]
pub struct DoctorArgs {
    /// Also re-hash every installed tree against its receipt and the lock
    #[arg(long)]
    pub deep: bool,
}

pub fn run(args: &DoctorArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let ctx = discover_members(global, printer)?;
    // How a2c opens beneath its own directories here: `openat2` (Linux), or the no-follow walk
    // of one component at a time (macOS, other Unixes, old kernels).
    printer.detail(format!("containment: {}", crate::util::contain::beneath_mechanism()));
    let options = DoctorOptions {
        deep: args.deep,
        jobs: global.jobs.map_or_else(crate::ops::install::default_jobs, usize::from),
    };
    let mut report = diagnose(&ctx, options, &session.store)?;
    // The registry's word, when there is one to ask: versions pinned that it has yanked.
    let (yanked, note) = crate::ops::list::yanked_pins(session, &ctx);
    if let Some(note) = note {
        printer.detail(note);
    }
    report.add(yanked);
    let crate::doctor::Summary { fail, warn, info } = report.summary;
    if printer.json {
        printer.json_doc(&report);
    } else {
        let base = report
            .workspace
            .clone()
            .or_else(|| ctx.repo.clone())
            .unwrap_or_default();
        for f in &report.findings {
            let label = match f.severity {
                Severity::Fail => "fail",
                Severity::Warn => "warn",
                Severity::Info => "info",
            };
            let mut what = Vec::new();
            if let Some(repo) = &f.repo {
                what.push(crate::ops::display_under(&base, repo));
            }
            if let Some(v) = &f.version {
                what.push(v.to_string());
            }
            let what = if what.is_empty() {
                String::new()
            } else {
                format!(" [{}]", what.join(" "))
            };
            printer.data(format!("{label} {}{what}: {}", f.code, f.message));
            printer.data(format!("     hint: {}", f.hint));
        }
        let verdict = if fail > 0 { "problems found" } else { "healthy" };
        printer.data(format!("{verdict}: {fail} fail, {warn} warn, {info} info"));
    }
    Ok(if fail > 0 { Outcome::Failure } else { Outcome::Success })
}
