//! `a2c init [--registry R] [--members GLOB…]`: makes the current directory (or `-C DIR`) a
//! superbuild by writing its workspace marker, as `uv init` or `cargo new` start a project.

use clap::Args;

use super::{GlobalArgs, Outcome, Printer};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c init\n  a2c init --registry https://registry.example.org/a2c/\n  a2c init --members 'products/*' --members 'libs/*' --registry ../registry"
)]
pub struct InitArgs {
    /// The registry `lock` and `install` use (a URL, or a path relative to the superbuild)
    #[arg(long, value_name = "LOCATION")]
    pub registry: Option<String>,
    /// Which repositories below are members (a glob relative to the superbuild; repeatable).
    /// Default: every repository below that adopted A2C
    #[arg(long = "members", value_name = "GLOB")]
    pub members: Vec<String>,
}

pub fn run(
    args: &InitArgs,
    session: &crate::ops::Session,
    global: &GlobalArgs,
    printer: &Printer,
) -> anyhow::Result<Outcome> {
    let dir = match &global.directory {
        Some(d) => crate::util::paths::absolute(d),
        None => std::env::current_dir()?,
    };
    if let Some(r) = &args.registry {
        // Refused now, not at the first `lock`: the location must parse (relative to W).
        crate::registry::RegistryLocation::parse(r, &dir, session.plain_http())?;
    }
    let created = crate::workspace::WorkspaceMarker::create(&dir, args.registry.as_deref(), &args.members)?;
    if printer.json {
        printer.json_doc(&created);
        return Ok(Outcome::Success);
    }
    printer.status(format!(
        "created the superbuild marker `{}`: commit it; then `a2c adopt --version V` in each repository, `a2c lock` and `a2c install` here",
        created.marker.display()
    ));
    if created.registry.is_none() {
        printer.status("no registry recorded: add `registry:` to the marker, or pass `--registry` to `a2c lock`");
    }
    Ok(Outcome::Success)
}
