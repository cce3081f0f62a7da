//! `a2c install [--offline] [--locked] [--from DIR] [--jobs N]`.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::progress::ProgressReporter;
use super::{Cx, Outcome, discover_members};
use crate::ops::install::{InstallOptions, install};
use crate::ops::{display_under, join_versions};
use crate::util::version::MethodVersion;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c install\n  a2c install --locked --jobs 4\n  a2c install --offline --from ./vendor\n  a2c install --link-mode copy"
)]
pub struct InstallArgs {
    /// Accept a signed index past its `expires` (keys pinned in `trusted_keys:`)
    #[arg(long)]
    pub allow_expired: bool,
    /// The registry to lock missing versions from and to look for bundles in first (else
    /// A2C_REGISTRY, then the marker's `registry`): a path, or a file://, http(s)://, oci://,
    /// pypi+https://, conan+https://, s3://, gs:// or az:// location
    #[arg(long, value_name = "URL")]
    pub registry: Option<String>,
    /// Fail if the lock would change
    #[arg(long)]
    pub locked: bool,
    /// A directory of bundles (matched by sha256, whatever their names)
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// How versions are placed from the shared tree cache (default: clone, else hardlink, else
    /// copy — the fastest that works)
    #[arg(long, value_name = "MODE", env = crate::env::A2C_LINK_MODE, value_parser = LinkModeParser)]
    pub link_mode: Option<crate::store::trees::LinkMode>,
    /// Install these versions again from their verified bundles even if installed (all the
    /// members need, without a version): repairs a tampered or broken version
    #[arg(long, value_name = "V", num_args = 0..)]
    pub reinstall: Option<Vec<MethodVersion>>,
    /// Install exactly this published version into the store, whether or not a member pins
    /// it (repeatable); the lock and the members are left as they are
    #[arg(long = "version", value_name = "V", conflicts_with_all = ["reinstall", "locked"])]
    pub versions: Vec<MethodVersion>,
}

/// `--link-mode` (or `A2C_LINK_MODE`, through clap's `env`): the store's type parses the names
/// (no clap below cli/); a bad value names where it came from.
#[derive(Clone)]
struct LinkModeParser;

impl clap::builder::TypedValueParser for LinkModeParser {
    type Value = crate::store::trees::LinkMode;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        let text = value.to_string_lossy();
        text.parse().map_err(|()| {
            let from_env = crate::env::link_mode().is_some_and(|v| *v == *text);
            let source = match from_env {
                true => format!("{}=`{text}`", crate::env::A2C_LINK_MODE),
                false => format!("--link-mode `{text}`"),
            };
            clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!(
                    "{source} is not a link mode: use {}\n",
                    crate::store::trees::LinkMode::NAMES.join(", ")
                ),
            )
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            crate::store::trees::LinkMode::NAMES
                .iter()
                .map(|n| clap::builder::PossibleValue::new(*n)),
        ))
    }
}

pub fn run(args: &InstallArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let started = Instant::now();
    // Never freed: the process ends right after, and freeing thousands of members one by one
    // (the members, the snapshot, the outcome's list) cost a no-op install about a millisecond
    // at 5,000 members for nothing. Nothing in them holds a lock or an unflushed file.
    let ctx = std::mem::ManuallyDrop::new(discover_members(global, printer)?);
    let settings = InstallOptions {
        allow_expired: args.allow_expired,
        registry: args.registry.clone(),
        locked: args.locked || global.frozen,
        frozen: global.frozen,
        from: args.from.as_ref().map(|f| ctx.start.join(f)),
        jobs: global.jobs.map(usize::from),
        link_mode: args.link_mode,
        reinstall: args.reinstall.clone(),
        versions: args.versions.clone(),
    };
    let reporter = ProgressReporter::new(printer);
    let result = install(session, &ctx, &settings, &reporter);
    reporter.done();
    let out = std::mem::ManuallyDrop::new(result?);
    for note in out.notes.iter().chain(&out.snapshot) {
        printer.detail(note);
    }
    for version in &out.yanked {
        printer.warn(format!(
            "{version} is yanked in the registry: it stays locked and installs, but no new lock takes it; `a2c outdated` names the members on it"
        ));
    }
    for version in &out.revised {
        printer.note(super::lock::revised_note(version));
    }
    let base = out.workspace.clone().or_else(|| ctx.repo.clone()).unwrap_or_default();
    if printer.json {
        printer.json_doc(&*out);
        return Ok(Outcome::Success);
    }
    if let Some((repo, delivery)) = &out.git_delivery {
        printer.status(format!(
            "`{}` has delivery `{delivery}`: {}; nothing to install",
            repo.display(),
            match delivery {
                crate::workspace::Delivery::None => "it takes no method assets".to_string(),
                _ => format!(
                    "its method assets come by git at `{}`",
                    crate::workspace::resolve::LEGACY_AI_RULES
                ),
            }
        ));
        return Ok(Outcome::Success);
    }
    for path in &out.report.cleaned {
        printer.status(format!("cleaned leftover `{}` of an interrupted run", path.display()));
    }
    if !out.locked_now.is_empty() {
        printer.status(format!(
            "locked {} in `{}`",
            join_versions(&out.locked_now),
            out.lock_path.display()
        ));
    }
    for i in &out.report.installed {
        let from = match (&i.source, i.link_mode) {
            (crate::store::Source::TreeCache, Some(mode)) => format!("the tree cache by {}", mode.as_str()),
            (source, _) => source_name(source).to_string(),
        };
        printer.status(format!(
            "installed {} ({} files, from {from}) → {}",
            i.version,
            i.files,
            display_under(&base, &i.path)
        ));
    }
    printer.detail(format!("store `{}`", out.store.display()));
    let seconds = started.elapsed().as_secs_f64();
    let installed = out.report.installed.len();
    let reused = out.report.reused.len();
    let versions = if installed + reused == 1 { "version" } else { "versions" };
    let members = if out.members.len() == 1 { "member" } else { "members" };
    if !args.versions.is_empty() {
        let unpinned = out.unpinned.iter().map(|v| v.to_string()).collect::<Vec<_>>();
        printer.status(format!(
            "{} {} in the store ({seconds:.2}s){}",
            join_versions(&args.versions),
            if installed == 0 {
                "already installed"
            } else {
                "installed"
            },
            match unpinned.is_empty() {
                true => String::new(),
                false => format!(
                    "; no member pins {}: `a2c gc` removes it until one does",
                    unpinned.join(", ")
                ),
            }
        ));
    } else if installed == 0 {
        printer.status(format!(
            "up to date: {reused} {versions} already installed for {} {members} ({seconds:.2}s)",
            out.members.len()
        ));
    } else {
        printer.status(format!(
            "installed {installed}, reused {reused} — {} {members} served ({seconds:.2}s)",
            out.members.len()
        ));
    }
    Ok(Outcome::Success)
}

fn source_name(source: &crate::store::Source) -> &'static str {
    match source {
        crate::store::Source::Cache => "the cache",
        crate::store::Source::From => "--from",
        crate::store::Source::Registry => "the registry",
        crate::store::Source::TreeCache => "the tree cache",
    }
}
