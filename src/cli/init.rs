//! `a2c init [--registry R] [--members GLOB…]`: makes the current directory (or `-C DIR`) a
//! superbuild by writing its workspace marker, as `uv init` or `cargo new` start a project.

use clap::Args;

use super::{GlobalArgs, Outcome, Printer};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c init\n  a2c init --registry https://registry.example.org/a2c/\n  a2c init --members 'products/*' --members 'libs/*' --registry ../registry"
)]
pub struct InitArgs {
    /// The registry `lock` and `install` use: a path relative to the superbuild, or a file://,
    /// http(s)://, oci://, pypi+https://, conan+https://, s3://, gs:// or az:// location
    #[arg(long, value_name = "LOCATION")]
    pub registry: Option<String>,
    /// Which repositories below are members (a glob relative to the superbuild; repeatable).
    /// Default: every repository below that adopted A2C
    #[arg(long = "members", value_name = "GLOB")]
    pub members: Vec<String>,
}

pub fn run(args: &InitArgs, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let dir = global.start_dir()?;
    // A member of a superbuild is not made a second one, nested in it, without a word: its
    // commands would then use its own empty superbuild (`resolve` fails there).
    if let Ok(ctx) = crate::workspace::Context::discover(&dir, None)
        && let Some(ws) = ctx.workspace.as_ref().filter(|ws| ws.root != dir)
    {
        anyhow::bail!(
            "`{}` is a member of the superbuild `{}`: a marker here would nest a second superbuild in it, which its commands would then use instead. Run a2c in the superbuild (`a2c -C {} install`); to make this a superbuild of its own, take it out of that marker's `members:` first",
            dir.display(),
            ws.root.display(),
            crate::util::text::shell_quoted(&ws.root)
        );
    }
    // Refused now, not at the first `lock`: the location must parse (relative to W).
    let location = match &args.registry {
        Some(r) => Some(crate::registry::RegistryLocation::parse(r, &dir)?),
        None => None,
    };
    let created = crate::workspace::WorkspaceMarker::create(&dir, args.registry.as_deref(), &args.members)?;
    if printer.json {
        printer.json_doc(&created);
        return Ok(Outcome::Success);
    }
    // W that adopted already needs no `adopt` of its own.
    let adopted = crate::workspace::ToolStateRoot::detect(&dir)
        .ok()
        .flatten()
        .is_some_and(|s| s.has_adoption());
    printer.status(format!(
        "created the superbuild marker `{}`: commit it; then {}`a2c lock` and `a2c install` here",
        created.marker.display(),
        match adopted {
            true => "`a2c adopt --version V` in each other repository that has not adopted, ",
            false => "`a2c adopt --version V` in each repository, ",
        }
    ));
    // A file registry that is not there yet: `pack` creates it (a word now, not at `lock`).
    if let Some(dir) = location
        .as_ref()
        .and_then(|l| l.local_dir())
        .map(crate::util::paths::normalize)
        && !dir.exists()
    {
        printer.warn(format!(
            "the registry `{}` does not exist yet: publishing into it creates it (`a2c pack TREE --version V --registry {}`)",
            dir.display(),
            crate::util::text::shell_quoted(&dir)
        ));
    }
    if created.registry.is_none() {
        printer.status("no registry recorded: add `registry:` to the marker, or pass `--registry` to `a2c lock`");
    }
    Ok(Outcome::Success)
}
