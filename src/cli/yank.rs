//! `a2c yank V --registry DIR [--undo]`: withdraw a published version (or bring it back).

use clap::Args;

use super::{Cx, Outcome, Printer};
use crate::registry::RegistryLocation;
use crate::util::version::MethodVersion;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c yank 1.4.0 --registry /srv/a2c\n  a2c yank 1.4.0 --registry /srv/a2c --undo --sign a2c.key"
)]
pub struct YankArgs {
    /// The version to yank (one exact version)
    #[arg(value_name = "V")]
    pub version: MethodVersion,
    /// The registry: a file registry (a path or file:// URL), an OCI registry
    /// (oci://HOST/NAMESPACE/REPO: the yank is recorded in its `a2c-index` artifact) or an object
    /// store (s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, az://ACCOUNT/CONTAINER/PREFIX: its index
    /// changed in place); a
    /// package index (pypi+https://…) or a Conan remote (conan+https://…) refuses, naming the
    /// command of its own tool
    #[arg(long, value_name = "LOCATION")]
    pub registry: String,
    /// Bring a yanked version back
    #[arg(long)]
    pub undo: bool,
    /// Re-sign the index with this secret key afterwards
    #[arg(long, value_name = "KEYFILE")]
    pub sign: Option<std::path::PathBuf>,
}

pub fn run(args: &YankArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let cwd = global.start_dir()?;
    let registry = RegistryLocation::parse(&args.registry, &cwd)?.open(&session.network);
    let key = match &args.sign {
        Some(k) => Some(super::key::unlock(&cwd.join(k), printer)?),
        None => None,
    };
    let yanked = registry.yank(&args.version, args.undo, key.as_ref())?;
    for w in &yanked.warnings {
        printer.warn(w);
    }
    Ok(report(args, &registry.shown(), &yanked, printer))
}

fn report(args: &YankArgs, registry: &str, yanked: &crate::registry::handle::Yanked, printer: &Printer) -> Outcome {
    let state = if args.undo { "available" } else { "yanked" };
    if printer.json {
        printer.json_doc(yanked);
    } else if yanked.changed {
        printer.status(format!(
            "{} is now {state} in `{registry}`{}",
            args.version,
            if args.undo {
                ""
            } else {
                ": new locks refuse it; locks that already pin it keep installing it"
            }
        ));
    } else {
        printer.status(format!("{} was already {state}: nothing changed", args.version));
    }
    Outcome::Success
}
