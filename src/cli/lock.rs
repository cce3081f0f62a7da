//! `a2c lock [--registry URL] [--update] [--check]`.

use clap::Args;

use super::{Cx, Outcome, discover_members};
use crate::ops::join_versions;
use crate::ops::lock::{LockOptions, lock};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c lock\n  a2c lock --registry https://reg.example.org/a2c/\n  a2c lock --check\n  a2c lock --offline --from vendor/   # entries from a2c-vendor.json, no network"
)]
pub struct LockArgs {
    /// Accept a signed index past its `expires` (keys pinned in `trusted_keys:`)
    #[arg(long)]
    pub allow_expired: bool,
    /// The registry: a path, or a file://, http(s)://, oci://, pypi+https://, conan+https://,
    /// s3://, gs:// or az:// location (default: A2C_REGISTRY, else the marker's `registry:`,
    /// one or a list)
    #[arg(long, value_name = "URL")]
    pub registry: Option<String>,
    /// Re-resolve from the registry every needed version, or only the versions given (like
    /// `cargo update -p`): accepts a bundle the registry changed, deliberately
    #[arg(long, value_name = "V", num_args = 0.., conflicts_with = "check")]
    pub update: Option<Vec<crate::util::version::MethodVersion>>,
    /// Write nothing; exit 1 when the lock lacks a needed version or holds one nobody needs
    #[arg(long)]
    pub check: bool,
    /// A directory `a2c vendor` wrote: a version the lock lacks is taken from its
    /// `a2c-vendor.json` (with --offline, before any registry)
    #[arg(long, value_name = "DIR")]
    pub from: Option<std::path::PathBuf>,
}

pub fn run(args: &LockArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let ctx = discover_members(global, printer)?;
    let options = LockOptions {
        allow_expired: args.allow_expired,
        registry: args.registry.clone(),
        update: args.update.is_some(),
        update_only: args.update.clone().unwrap_or_default(),
        check: args.check || global.frozen,
        from: args.from.as_ref().map(|f| ctx.start.join(f)),
    };
    let out = lock(session, &ctx, &options)?;
    for note in &out.notes {
        printer.detail(note);
    }
    if let (false, Some(dir)) = (out.unsigned_from_manifest.is_empty(), &args.from) {
        printer.warn(format!(
            "took {} from the vendor manifest `{}`, which no pinned key covers (the keys sign registry indexes, never a manifest): trust it as you trust whoever made it, and review the lock's new entries before committing",
            out.unsigned_from_manifest.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
            dir.join(crate::lock::vendored::VENDOR_MANIFEST).display()
        ));
    }
    for version in &out.yanked {
        printer.warn(format!(
            "{version} is yanked in the registry: it stays locked and installs, but no new lock takes it; move its members to another version (`a2c outdated` names them)"
        ));
    }
    for version in &out.gone {
        printer.warn(format!(
            "{version} is locked but the registry no longer lists it (removed): it installs only from the cache, a mirror or a vendored copy; move its members to another version (`a2c outdated` names them)"
        ));
    }
    for version in &out.revised {
        printer.note(revised_note(version));
    }
    for (version, why) in &out.unfetchable {
        printer.warn(format!(
            "the lock records a source for {version} that cannot be fetched now: {why}; `a2c install` will fail until the registry serves it"
        ));
    }
    if printer.json {
        printer.json_doc(&out);
    }
    if args.check || global.frozen {
        if out.up_to_date() {
            printer.status(format!(
                "`{}` is up to date ({} locked)",
                out.path.display(),
                out.needed.len()
            ));
            return Ok(Outcome::Success);
        }
        let mut problems = Vec::new();
        if !out.path.exists() {
            // No file is not a file that lacks versions: say which it is.
            printer.error(&anyhow::anyhow!("there is no lock file at `{}`", out.path.display()));
            printer.status("hint: run `a2c lock` and commit the lock it writes");
            return Ok(Outcome::Failure);
        }
        if !out.missing.is_empty() {
            problems.push(format!("lacks {}", join_versions(&out.missing)));
        }
        if !out.unused.is_empty() {
            problems.push(format!("holds {} that no member needs", join_versions(&out.unused)));
        }
        printer.error(&anyhow::anyhow!(
            "the lock `{}` {}",
            out.path.display(),
            problems.join(" and ")
        ));
        printer.status("hint: run `a2c lock` and commit the result");
        return Ok(Outcome::Failure);
    }
    for (what, versions) in [
        ("added", &out.plan.added),
        ("updated", &out.plan.updated),
        ("removed", &out.plan.removed),
        ("pinned the tree digest of", &out.plan.completed),
    ] {
        if !versions.is_empty() {
            printer.status(format!("{what} {}", join_versions(versions)));
        }
    }
    if out.wrote {
        printer.status(format!(
            "wrote `{}` ({} locked)",
            out.path.display(),
            out.plan.lock.methods.len()
        ));
    } else {
        printer.status(format!(
            "`{}` is up to date ({} locked)",
            out.path.display(),
            out.plan.lock.methods.len()
        ));
    }
    Ok(Outcome::Success)
}

/// The note for a locked version the registry serves a newer revision of.
pub(super) fn revised_note(version: &crate::util::version::MethodVersion) -> String {
    format!(
        "the registry has a newer revision of {version}: the lock keeps the revision it pins (still served); `a2c lock --update {version}` takes the newest"
    )
}
