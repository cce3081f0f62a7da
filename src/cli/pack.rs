//! `a2c pack DIR --version V --registry DIR [--format tar.gz|zip]`.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::{GlobalArgs, Outcome, Printer};
use crate::archive::Format;
use crate::registry::RegistryLocation;
use crate::registry::publish::publish;
use crate::util::version::MethodVersion;

#[derive(Debug, Args)]
pub struct PackArgs {
    /// The method tree to pack (holds a2c-method.toml)
    pub dir: PathBuf,
    /// The version to publish; the tree's manifest must declare it
    #[arg(long, value_name = "V")]
    pub version: MethodVersion,
    /// The file registry to add the bundle to (a path or file:// URL; created if missing)
    #[arg(long, value_name = "DIR")]
    pub registry: String,
    /// The bundle format
    #[arg(long, default_value = "tar.gz", value_parser = ["tar.gz", "zip"])]
    pub format: String,
    /// Sign the index with this secret key (from `a2c key generate`) after publishing
    #[arg(long, value_name = "KEYFILE")]
    pub sign: Option<PathBuf>,
}

pub fn run(args: &PackArgs, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let cwd = match &global.directory {
        Some(d) => crate::util::paths::absolute(d),
        None => std::env::current_dir()?,
    };
    let format: Format = args.format.parse().map_err(anyhow::Error::msg)?;
    let registry = match RegistryLocation::parse(&args.registry, &cwd)? {
        RegistryLocation::Dir(dir) => dir,
        RegistryLocation::Http(url) => anyhow::bail!(
            "`a2c pack` publishes into a file registry, not `{url}`; pack locally, then upload the registry directory"
        ),
    };
    let tree = cwd.join(&args.dir);
    let key = args.sign.as_ref().map(|k| cwd.join(k));
    let published = publish(&tree, &args.version, format, &registry, key.as_deref())?;
    if key.is_none() && published.changed && crate::registry::publish::is_signed(&registry) {
        printer.warn(format!(
            "the index of `{}` is signed and changed: re-sign it (`a2c sign --registry DIR --key KEYFILE`), or installs that pin its key refuse it",
            registry.display()
        ));
    }
    let e = &published.entry;
    if printer.json {
        printer.json_doc(&json!({
            "version": e.version, "bundle": published.bundle_path, "index": published.index_path,
            "sha256": e.sha256, "size": e.size, "format": e.format, "tree": e.tree, "files": published.files,
            "changed": published.changed,
        }));
    } else if published.changed {
        printer.status(format!(
            "packed {} ({} files, {} bytes) → `{}`",
            e.version,
            published.files,
            e.size,
            published.bundle_path.display()
        ));
        printer.status(format!("sha256 {}", e.sha256));
        printer.status(format!("added to `{}`", published.index_path.display()));
    } else {
        printer.status(format!(
            "{} is already published with the same content (sha256 {})",
            e.version, e.sha256
        ));
    }
    Ok(Outcome::Success)
}
