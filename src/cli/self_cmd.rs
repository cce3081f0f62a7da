//! `a2c self update` and `a2c self version` (the work: `ops::self_update`).

use clap::{Args, Subcommand};

use super::{Cx, GlobalArgs, Outcome, Printer};
use crate::ops::self_update::{self, Installed, UpdateRequest, Updated};

#[derive(Debug, Subcommand)]
pub enum SelfCommand {
    /// Replace this a2c with a release, verified first (signature, sha256, `--version`)
    #[command(
        after_help = "Releases are read from --from, else A2C_INSTALL_BASE, else the base a release build wrote into a2c:\nBASE/latest, BASE/VERSION/SHA256SUMS (signed by the release key: SHA256SUMS.minisig) and the archives.\nAn a2c installed by pip, pipx, uv or cargo is left to that tool (the error names its command).\n\nExamples:\n  a2c self update\n  a2c self update --to 1.4.0\n  a2c --offline self update --from /mnt/mirror/a2c\n  a2c self update --to 1.2.0 --allow-downgrade"
    )]
    Update(UpdateArgs),
    /// Print this a2c's version, target, how it was installed and where it updates from
    Version,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The version to install (default: the newest, as BASE/latest names it)
    #[arg(long, value_name = "X.Y.Z")]
    pub to: Option<String>,
    /// Where the releases are: an https:// or http:// URL, a file:// URL or a directory (a
    /// mirror; offline with --offline)
    #[arg(long, value_name = "BASE")]
    pub from: Option<String>,
    /// Install a version older than this one
    #[arg(long)]
    pub allow_downgrade: bool,
    /// Download and verify everything, replace nothing
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(cmd: &SelfCommand, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    match cmd {
        SelfCommand::Update(args) => update(args, session, global, printer),
        SelfCommand::Version => version(session, printer),
    }
}

fn update(
    args: &UpdateArgs,
    session: &crate::ops::Session,
    global: &GlobalArgs,
    printer: &Printer,
) -> anyhow::Result<Outcome> {
    let request = UpdateRequest {
        to: args.to.clone(),
        from: args.from.clone(),
        allow_downgrade: args.allow_downgrade,
        dry_run: args.dry_run,
    };
    let start = global.start_dir()?;
    let say = |line: &str| printer.status(line);
    match self_update::update(&request, &session.release, &session.network, &start, &say)? {
        Updated::Current { version } => printer.status(format!("a2c {version} is already installed: nothing to do")),
        Updated::Replaced {
            from,
            to,
            exe,
            archive,
            key_id,
            dry_run,
        } => {
            let verified =
                format!("{archive} verified (SHA256SUMS signed by release key {key_id}, sha256, `a2c --version`)");
            match dry_run {
                true => printer.status(format!("{verified}; dry run: `{}` stays a2c {from}", exe.display())),
                false => printer.status(format!("{verified}; `{}`: a2c {from} -> {to}", exe.display())),
            }
        }
    }
    Ok(Outcome::Success)
}

fn version(session: &crate::ops::Session, printer: &Printer) -> anyhow::Result<Outcome> {
    printer.data(format!("a2c {}", crate::LONG_VERSION));
    printer.data(format!("target: {}", self_update::BUILD_TARGET));
    let installed = Installed::detect().map_err(|e| anyhow::anyhow!("cannot find the running a2c: {e}"))?;
    let how = match &installed {
        Installed::Standalone(exe) => format!("{} (standalone: `a2c self update` updates it)", exe.display()),
        Installed::Python { exe, env } => format!(
            "{} (into the Python environment {}: `{}` updates it)",
            exe.display(),
            env.display(),
            installed.update_command(None)
        ),
        Installed::Cargo { exe } => format!(
            "{} (by cargo: `{}` updates it)",
            exe.display(),
            installed.update_command(None)
        ),
        Installed::Checkout { exe, .. } => format!(
            "{} (built in a checkout: `{}` updates it)",
            exe.display(),
            installed.update_command(None)
        ),
    };
    printer.data(format!("installed: {how}"));
    let base = match (session.release.base.clone(), self_update::built_in_base()) {
        (Some(b), _) => format!("{b} (A2C_INSTALL_BASE)"),
        (None, Some(b)) => format!("{b} (built in)"),
        (None, None) => "none built in: give --from or A2C_INSTALL_BASE".into(),
    };
    printer.data(format!("release base: {base}"));
    let key = match (self_update::built_in_key(), session.release.key.clone()) {
        (Some(k), _) => format!("{} (built in)", key_id(k)),
        (None, Some(k)) => format!("{} (A2C_RELEASE_KEY)", key_id(&k)),
        (None, None) => "none built in: set A2C_RELEASE_KEY".into(),
    };
    printer.data(format!("release key: {key}"));
    Ok(Outcome::Success)
}

fn key_id(key: &str) -> String {
    crate::registry::signing::public_key_id(key).unwrap_or_else(|_| "an unreadable key".into())
}
