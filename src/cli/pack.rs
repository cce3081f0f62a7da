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
#[command(
    after_help = "Examples:\n  a2c pack ./method --version 1.4.0 --registry /srv/a2c\n  a2c pack ./method --version 1.4.0 --registry oci://ghcr.io/acme/a2c --sign a2c.key"
)]
pub struct PackArgs {
    /// The method tree to pack (holds a2c-method.toml)
    pub dir: PathBuf,
    /// The version to publish; the tree's manifest must declare it
    #[arg(long, value_name = "V")]
    pub version: MethodVersion,
    /// The registry: a file registry to add the bundle to (a path or file:// URL; created if
    /// missing), or an OCI registry to push it to (oci://HOST/NAMESPACE/REPO)
    #[arg(long, value_name = "DIR|oci://…")]
    pub registry: String,
    /// The bundle format
    #[arg(long, default_value = "tar.gz", value_parser = ["tar.gz", "zip"])]
    pub format: String,
    /// The deflate level, 1 (fastest) to 9 (smallest). The level is part of the bundle's
    /// bytes: the same tree at the same level gives the same bundle, at another level another
    #[arg(long, value_name = "N", default_value_t = crate::archive::DEFAULT_LEVEL, value_parser = clap::value_parser!(u32).range(1..=9))]
    pub level: u32,
    /// Deflate a tar.gz bundle on N threads, in independent 1 MiB blocks (N >= 2). Such a
    /// bundle's bytes are the same for any N >= 2 but differ from the default's (one deflate
    /// stream, N = 1): re-pack a published version with the setting it was published with
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,
    /// Sign the index with this secret key (from `a2c key generate`) after publishing (for
    /// an OCI registry: push the signed `a2c-index` artifact)
    #[arg(long, value_name = "KEYFILE")]
    pub sign: Option<PathBuf>,
}

fn deflate(args: &PackArgs) -> crate::archive::Deflate {
    crate::archive::Deflate {
        level: args.level,
        threads: usize::from(args.threads),
    }
}

pub fn run(args: &PackArgs, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let cwd = match &global.directory {
        Some(d) => crate::util::paths::absolute(d),
        None => std::env::current_dir()?,
    };
    let format: Format = args.format.parse().map_err(anyhow::Error::msg)?;
    if format == Format::Zip && args.threads > 1 {
        anyhow::bail!("--threads applies to tar.gz bundles; a zip bundle is deflated entry by entry, on one thread");
    }
    let registry = match RegistryLocation::parse(&args.registry, &cwd)? {
        RegistryLocation::Dir(dir) => dir,
        RegistryLocation::Oci(oci) => return push_oci(args, &cwd, format, &oci, printer),
        RegistryLocation::Http(url) => anyhow::bail!(
            "`a2c pack` publishes into a file registry, not `{url}`; pack locally, then upload the registry directory"
        ),
    };
    let tree = cwd.join(&args.dir);
    let key = args.sign.as_ref().map(|k| cwd.join(k));
    let published = publish(&tree, &args.version, format, &registry, key.as_deref(), deflate(args))?;
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
            "packed {} ({} files, {}) → `{}`",
            e.version,
            published.files,
            indicatif::HumanBytes(e.size),
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

/// `a2c pack DIR --version V --registry oci://…`: pack, then push as an OCI artifact tagged V.
fn push_oci(
    args: &PackArgs,
    cwd: &std::path::Path,
    format: Format,
    oci: &crate::registry::oci::OciRef,
    printer: &Printer,
) -> anyhow::Result<Outcome> {
    let tree = cwd.join(&args.dir);
    let manifest = crate::method::MethodManifest::read_tree(&tree)?;
    if manifest.version != args.version {
        anyhow::bail!(
            "`{}` declares version {} in its manifest, not {}",
            tree.display(),
            manifest.version,
            args.version
        );
    }
    let tmp = tempfile::NamedTempFile::new()?;
    let limits = crate::archive::Limits::from_env().map_err(anyhow::Error::msg)?;
    let packed = crate::archive::pack_tree(
        &tree,
        &format!("a2c-{}", args.version),
        format,
        tmp.path(),
        &limits,
        deflate(args),
    )?;
    let client = crate::registry::client::LazyClient::new(vec![oci.api.clone()]);
    let http = client.get()?;
    let pushed = crate::registry::oci::push(
        &http,
        oci,
        &args.version,
        format,
        tmp.path(),
        packed.size,
        &packed.sha256,
        &packed.tree,
        manifest.min_a2c.as_ref(),
    )?;
    match &args.sign {
        Some(key) => {
            crate::registry::oci::sign(&http, oci, &cwd.join(key), None)?;
        }
        None if pushed && crate::registry::oci::is_signed(&http, oci)? => printer.warn(format!(
            "the index of `{}` is signed and does not list {} yet: sign it (`a2c sign --registry {} --key KEYFILE`), or installs that pin its key do not see it",
            oci.display(),
            args.version,
            oci.display()
        )),
        None => {}
    }
    if printer.json {
        printer.json_doc(&json!({
            "version": args.version, "registry": oci.display(), "sha256": packed.sha256,
            "size": packed.size, "format": format, "tree": packed.tree, "changed": pushed,
        }));
    } else if pushed {
        printer.status(format!(
            "pushed {} ({} files, {}) to `{}:{}`",
            args.version,
            packed.files,
            indicatif::HumanBytes(packed.size),
            oci.display(),
            args.version
        ));
        printer.status(format!("sha256 {}", packed.sha256));
    } else {
        printer.status(format!(
            "{} is already in `{}` with the same content (sha256 {})",
            args.version,
            oci.display(),
            packed.sha256
        ));
    }
    Ok(Outcome::Success)
}
