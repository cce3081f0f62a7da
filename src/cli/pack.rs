//! `a2c pack DIR --version V --registry DIR [--format tar.gz|zip|wheel]`.

use std::path::PathBuf;

use clap::Args;

use super::{Cx, Outcome, Printer};
use crate::archive::Format;
use crate::registry::RegistryLocation;
use crate::registry::handle::Landed;
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
    /// missing), an OCI registry to push it to (oci://HOST/NAMESPACE/REPO), a Python package
    /// index to upload a wheel to (pypi+https://HOST/simple/[#PROJECT]), a Conan remote to
    /// write a recipe for (conan+https://HOST/PATH[#NAME]), or an object store to upload the
    /// bundle to, create-only (s3://BUCKET/PREFIX, gs://BUCKET/PREFIX,
    /// az://ACCOUNT/CONTAINER/PREFIX)
    #[arg(long, value_name = "LOCATION")]
    pub registry: String,
    /// The bundle format (`wheel`: a Python wheel whose package directory holds the tree, for
    /// pip and package indexes; `conan`: a Conan recipe beside the tree, for a Conan remote)
    /// [default: tar.gz; wheel for a package index; conan for a Conan remote]
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(crate::registry::kind::pack_formats()))]
    pub format: Option<String>,
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
    /// Publish to an object store that ignores conditional writes (Garage does), which a2c
    /// refuses by default: there a published version can be overwritten and two publishers can
    /// both win, so publish from one place only
    #[arg(long)]
    pub allow_unconditional_writes: bool,
}

fn deflate(args: &PackArgs) -> crate::archive::Deflate {
    crate::archive::Deflate {
        level: args.level,
        threads: usize::from(args.threads),
    }
}

pub fn run(args: &PackArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let cwd = global.start_dir()?;
    let location = RegistryLocation::parse(&args.registry, &cwd)?;
    let format = match location.pack_plan(args.format.as_deref()).map_err(anyhow::Error::msg)? {
        crate::registry::PackPlan::Recipe(writer) => return write_recipe(args, &cwd, writer.as_ref(), printer),
        crate::registry::PackPlan::Bundle(format) => format,
    };
    if format != Format::TarGz && args.threads > 1 {
        anyhow::bail!(
            "--threads applies to tar.gz bundles; a {format} bundle is deflated entry by entry, on one thread"
        );
    }
    if args.allow_unconditional_writes && !location.probes_conditional_writes() {
        anyhow::bail!(
            "--allow-unconditional-writes applies to object-store registries (s3://, gs://, az://), which a2c checks for conditional writes; `{location}` is not one: run the command without it"
        );
    }
    let registry = location.open(&session.network);
    let tree = cwd.join(&args.dir);
    // What it offers agents — skills (`skills/<name>/SKILL.md`, checked as the Agent Skills
    // specification says), rules and prompts — checked before anything is published: a broken
    // one is refused, named.
    crate::agents::skills(&tree)?;
    let unprojected = crate::agents::documents(&tree)?.1;
    let key = match &args.sign {
        Some(k) => Some(super::key::unlock(&cwd.join(k), printer)?),
        None => None,
    };
    let p = registry.publish(&crate::registry::handle::PublishRequest {
        tree: &tree,
        version: &args.version,
        format,
        sign: key.as_ref(),
        deflate: deflate(args),
        limits: &session.limits()?,
        allow_unconditional: args.allow_unconditional_writes,
    })?;
    for w in &p.warnings {
        printer.warn(w);
    }
    for (path, why) in unprojected {
        printer.warn(format!(
            "`{}` is packed, but not projected for agent runtimes: {why}",
            path.display()
        ));
    }
    match (&p.landed, printer.json) {
        (_, true) => printer.json_doc(&p),
        (Landed::Files { bundle, index }, false) if p.changed => {
            printer.status(format!(
                "packed {} ({} files, {}) → `{}`",
                p.version,
                p.files,
                indicatif::HumanBytes(p.size),
                bundle.display()
            ));
            printer.status(format!("sha256 {}", p.sha256));
            printer.status(format!("added to `{}`", index.display()));
        }
        (Landed::Pushed { verb, target, .. }, false) if p.changed => {
            printer.status(format!(
                "{verb} {} ({} files, {}) to `{target}`",
                p.version,
                p.files,
                indicatif::HumanBytes(p.size),
            ));
            printer.status(format!("sha256 {}", p.sha256));
        }
        (Landed::Files { .. }, false) => printer.status(format!(
            "{} is already published with the same content (sha256 {})",
            p.version, p.sha256
        )),
        (Landed::Pushed { registry, .. }, false) => printer.status(format!(
            "{} is already in `{registry}` with the same content (sha256 {})",
            p.version, p.sha256
        )),
    }
    // `--sign`: the index was signed after the change (or left as it was when nothing changed).
    if let (Some((path, key)), false, true) = (args.sign.as_ref().zip(key.as_ref()), printer.json, p.changed) {
        printer.status(format!("signed the index with `{}` (key {})", path.display(), key.id()));
    }
    Ok(Outcome::Success)
}

/// `a2c pack DIR --version V --registry conan+…`: the recipe that packages the method tree as
/// it is, written beside the tree, and the commands that create and upload it with the kind's
/// own tool (a2c does not call it).
fn write_recipe(
    args: &PackArgs,
    cwd: &std::path::Path,
    writer: &dyn crate::registry::handle::RecipeWriter,
    printer: &Printer,
) -> anyhow::Result<Outcome> {
    let tree = crate::util::paths::normalize(&cwd.join(&args.dir));
    let r = writer.write_recipe(&tree, &args.version)?;
    if printer.json {
        printer.json_doc(&r);
    } else {
        printer.status(format!(
            "wrote the {} recipe `{}` for {}",
            r.tool,
            r.recipe.display(),
            r.reference
        ));
        printer.status(format!(
            "publish it with the {} client: `{}`, then `{}` ({})",
            r.tool, r.create, r.upload, r.placeholder
        ));
    }
    Ok(Outcome::Success)
}
