//! The command line: arguments, settings, output and diagnostics. Only this module prints, and
//! only this module uses clap and indicatif.

mod adopt;
mod agents;
mod cache;
mod completions;
mod doctor;
mod gc;
mod init;
mod install;
mod key;
mod list;
mod lock;
mod login;
mod mcp;
mod migrate;
mod pack;
mod printer;
mod progress;
mod resolve;
mod self_cmd;
mod vendor;
mod workspace;
mod yank;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use printer::Printer;

use crate::workspace::Context;

/// Installs pinned versions of A2C method assets side by side, verified, online or offline.
#[derive(Debug, Parser)]
#[command(name = "a2c", version = crate::LONG_VERSION, about, after_long_help = crate::env::help())]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Run as if a2c was started in DIR (discovery starts there, like `git -C`)
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub directory: Option<PathBuf>,
    /// Use DIR as the superbuild workspace root instead of discovering it
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print one machine-readable JSON document on stdout
    #[arg(long, global = true)]
    pub json: bool,
    /// Print only errors
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more detail on stderr
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// When to colour output on stderr (NO_COLOR is respected)
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Read no registry and download nothing: bundles come from the cache or `--from DIR`;
    /// what cannot be done without the network is an error naming it
    #[arg(long, global = true)]
    pub offline: bool,
    /// The lock exactly as it is, and no network: `--locked` and `--offline` together, as
    /// cargo means it (for `lock`, a check that changes nothing)
    #[arg(long, global = true)]
    pub frozen: bool,
    /// Work in parallel on N threads where work runs in parallel (install, vendor,
    /// doctor --deep; default: the number of cores)
    #[arg(long, short = 'j', global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Reach OCI registries (oci://) over plain HTTP, as `oras --plain-http` does (loopback
    /// registries always are; credentials never travel in clear text to any other host)
    #[arg(long, global = true)]
    pub plain_http: bool,
}

impl GlobalArgs {
    /// Where this run starts: `-C DIR` made absolute (resolved when it exists), else the current
    /// directory. Every command that needs a start directory takes it from here.
    pub fn start_dir(&self) -> anyhow::Result<PathBuf> {
        match &self.directory {
            Some(dir) => Ok(crate::util::paths::absolute(dir)),
            None => std::env::current_dir().map_err(|e| anyhow::anyhow!("cannot read the current directory: {e}")),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect the superbuild workspace
    #[command(subcommand)]
    Workspace(workspace::WorkspaceCommand),
    /// Print the method asset root for the current repository and a version
    Resolve(resolve::ResolveArgs),
    /// Resolve the union of write contracts against the registry and write a2c.lock
    Lock(lock::LockArgs),
    /// Install every locked version the members need, verified, side by side
    Install(install::InstallArgs),
    /// Pack a method tree into a deterministic bundle and publish it to a registry
    Pack(pack::PackArgs),
    /// Withdraw a published version from a registry (`--undo` brings it back)
    Yank(yank::YankArgs),
    /// Manage signing keys (minisign-compatible)
    #[command(subcommand)]
    Key(key::KeyCommand),
    /// Sign a registry's index with a secret key
    Sign(key::SignArgs),
    /// Copy every locked bundle into DIR, for `a2c install --offline --from DIR`
    Vendor(vendor::VendorArgs),
    /// Diagnose every member and version; exit 1 on any failure
    Doctor(doctor::DoctorArgs),
    /// Remove installed versions that no member pins
    Gc(gc::GcArgs),
    /// Migrate this repository's write contract
    #[command(subcommand)]
    Migrate(migrate::MigrateCommand),
    /// Make this directory a superbuild: write its workspace marker (and its registry)
    Init(init::InitArgs),
    /// Bootstrap: write a new adoption record under the canonical tool state root
    Adopt(adopt::AdoptArgs),
    /// Store a token for a registry host (read from standard input); sent to that host only
    Login(login::LoginArgs),
    /// Forget the token stored for a host
    Logout(login::LogoutArgs),
    /// The versions the members need, the lock pins, the store holds and the registry has
    List(list::ListArgs),
    /// The members whose version is behind the newest one the registry publishes
    Outdated(list::OutdatedArgs),
    /// Show, clean or prune the machine's cache of bundles and trees
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// Serve the workspace's method to agents over the Model Context Protocol (stdio)
    Mcp(mcp::McpArgs),
    /// Project each member's method where the agent runtimes the marker names look
    #[command(subcommand)]
    Agents(agents::AgentsCommand),
    /// Update a2c itself from its signed releases, or say what it is
    #[command(name = "self", subcommand)]
    SelfCmd(self_cmd::SelfCommand),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish)
    Completions(completions::CompletionsArgs),
    /// Print the man page (or write every page into a directory)
    Man(completions::ManArgs),
}

/// The colour clap uses for help and usage errors, read from the raw arguments before
/// parsing (`--color WHEN`, `--color=WHEN`), else `NO_COLOR`.
pub fn clap_color(args: impl IntoIterator<Item = std::ffi::OsString>) -> clap::ColorChoice {
    let args: Vec<String> = args.into_iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut when = None;
    for (i, a) in args.iter().enumerate() {
        if let Some(v) = a.strip_prefix("--color=") {
            when = Some(v.to_string());
        } else if a == "--color" {
            when = args.get(i + 1).cloned();
        } else if a == "--" {
            break;
        }
    }
    match when.as_deref() {
        Some("never") => clap::ColorChoice::Never,
        Some("always") => clap::ColorChoice::Always,
        _ if crate::env::no_color() => clap::ColorChoice::Never,
        _ => clap::ColorChoice::Auto,
    }
}

/// What a command reports back to `main`.
pub enum Outcome {
    Success,
    /// The command printed its result and failed (exit 1), e.g. an invalid member was listed.
    Failure,
}

impl Command {
    /// The registry the command line names (`--registry`), which the user chose.
    fn registry_flag(&self) -> Option<&str> {
        match self {
            Command::Lock(args) => args.registry.as_deref(),
            Command::Install(args) => args.registry.as_deref(),
            Command::Init(args) => args.registry.as_deref(),
            Command::Pack(args) => Some(&args.registry),
            Command::Yank(args) => Some(&args.registry),
            Command::Sign(args) => args.registry.as_deref(),
            _ => None,
        }
    }
}

/// What every command runs with: the session (the flags over the environment, read once), the
/// global options and the printer.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'a> {
    pub session: &'a crate::ops::Session,
    pub global: &'a GlobalArgs,
    pub printer: &'a Printer,
}

impl<'a> Cx<'a> {
    /// The three, for a command's body: `let (session, global, printer) = cx.parts();`.
    pub fn parts(&self) -> (&'a crate::ops::Session, &'a GlobalArgs, &'a Printer) {
        (self.session, self.global, self.printer)
    }
}

/// Runs the parsed command line and maps the result to an exit code.
pub fn run(cli: Cli) -> ExitCode {
    let printer = Printer::new(&cli.global);
    match dispatch(&cli, &printer) {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Failure) => ExitCode::from(1),
        Err(err) => {
            printer.error(&err);
            printer.json_error(&err, 1);
            ExitCode::from(1)
        }
    }
}

fn dispatch(cli: &Cli, printer: &Printer) -> anyhow::Result<Outcome> {
    // The session: the flags over the environment, read once, here.
    let session = &crate::ops::Session::from_env(crate::ops::Flags {
        offline: cli.global.offline || cli.global.frozen,
        plain_http: cli.global.plain_http,
        // Every retry is told, as cargo tells a spurious network error (not under -q).
        retry_observer: (!printer.quiet).then(|| {
            let printer = printer.clone();
            std::sync::Arc::new(move |line: &str| printer.warn(line)) as std::sync::Arc<crate::net::RetryObserver>
        }),
        // Each redirect hop is named under -v.
        hop_tracer: printer.verbose.then(|| {
            let printer = printer.clone();
            std::sync::Arc::new(move |line: &str| printer.detail(line)) as std::sync::Arc<crate::net::HopTracer>
        }),
        registry: cli.command.registry_flag().map(str::to_string),
    });
    let global = &cli.global;
    let cx = &Cx {
        session,
        global,
        printer,
    };
    match &cli.command {
        Command::Completions(args) => completions::completions(args, printer),
        Command::Mcp(args) => mcp::run(args, global),
        Command::Agents(cmd) => agents::run(cmd, cx),
        Command::Cache(cmd) => cache::run(cmd, cx),
        Command::List(args) => list::run(args, cx),
        Command::Outdated(args) => list::outdated(args, cx),
        Command::Man(args) => completions::man(args, printer),
        Command::Workspace(cmd) => workspace::run(cmd, global, printer),
        Command::Resolve(args) => resolve::run(args, global, printer),
        Command::Lock(args) => lock::run(args, cx),
        Command::Install(args) => install::run(args, cx),
        Command::Pack(args) => pack::run(args, cx),
        Command::Yank(args) => yank::run(args, cx),
        Command::Key(cmd) => key::key(cmd, global, printer),
        Command::SelfCmd(cmd) => self_cmd::run(cmd, cx),
        Command::Sign(args) => key::sign(args, cx),
        Command::Vendor(args) => vendor::run(args, cx),
        Command::Doctor(args) => doctor::run(args, cx),
        Command::Gc(args) => gc::run(args, cx),
        Command::Migrate(cmd) => migrate::run(cmd, cx),
        Command::Adopt(args) => adopt::run(args, cx),
        Command::Init(args) => init::run(args, global, printer),
        Command::Login(args) => login::login(args, cx),
        Command::Logout(args) => login::logout(args, cx),
    }
}

/// Discovers R and W from the global options and prints discovery warnings.
pub(crate) fn discover(global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Context> {
    let start = global.start_dir()?;
    let ctx = Context::discover(&start, global.workspace.as_deref())?;
    for w in &ctx.warnings {
        printer.warn(w);
    }
    Ok(ctx)
}

/// [`discover`], then one warning per member whose migration is unfinished (both tool state
/// roots hold state), for every command that reads the members.
pub(crate) fn discover_members(global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Context> {
    let ctx = discover(global, printer)?;
    for w in ctx.unfinished_migrations() {
        printer.warn(w);
    }
    if let Ok(members) = ctx.members() {
        for m in members.iter() {
            if let Some(j) = &m.pending {
                printer.warn(pending_warning(&m.path, j));
            }
        }
    }
    note_snapshot(&ctx, printer);
    Ok(ctx)
}

/// Under `-v`: whether the workspace snapshot vouched for the members just read, or why not.
pub(crate) fn note_snapshot(ctx: &Context, printer: &Printer) {
    match ctx.snapshot() {
        Some(Ok(s)) => printer.detail(format!(
            "workspace snapshot: {} paths unchanged; the members were not walked ({} members' git indexes recorded as tracking nothing under `.tools_local`)",
            s.len(),
            s.indexes()
        )),
        Some(Err(why)) => printer.detail(format!("workspace snapshot not used: {why}")),
        None => {}
    }
}

/// What paths in human output are shown relative to: W, else the repository.
pub(crate) fn display_base(ctx: &Context) -> PathBuf {
    ctx.workspace
        .as_ref()
        .map(|w| w.root.clone())
        .or_else(|| ctx.repo.clone())
        .unwrap_or_default()
}

/// A migration of `repo` interrupted mid-way (its journal in `.git/`) is said first: what a
/// command reads there may be half moved.
pub(crate) fn warn_pending(repo: &std::path::Path, printer: &Printer) {
    if let Some(j) = crate::relocate::Journal::pending(repo) {
        printer.warn(pending_warning(repo, &j));
    }
}

fn pending_warning(repo: &std::path::Path, j: &crate::relocate::Journal) -> String {
    format!(
        "a migration {} -> {} of `{}` is pending (interrupted): rerun `a2c migrate version --to {}` there to resume it; do not delete its journal in .git/",
        j.from,
        j.to,
        repo.display(),
        j.to
    )
}

/// The hint of `cause` when it is one of `$t` (every error type of a2c: see the test below),
/// and the list of their names.
macro_rules! hinted {
    ($($t:ty),* $(,)?) => {
        fn hint_of(cause: &(dyn std::error::Error + 'static)) -> Option<Option<String>> {
            $(
                if let Some(e) = cause.downcast_ref::<$t>() {
                    return Some(crate::util::hint::Hint::hint(e));
                }
            )*
            None
        }
        #[cfg(test)]
        const HINTED: &[&str] = &[$(stringify!($t)),*];
    };
}

hinted!(
    crate::ops::OpsError,
    crate::workspace::WorkspaceError,
    crate::workspace::MemberError,
    crate::workspace::AdoptionError,
    crate::workspace::adoption::ReadError,
    crate::workspace::marker::MarkerError,
    crate::registry::RegistryError,
    crate::registry::handle::PublishError,
    crate::registry::signing::SignError,
    crate::registry::signing::KeyError,
    crate::store::StoreError,
    crate::lock::LockError,
    crate::archive::ArchiveError,
    crate::net::HttpError,
    crate::relocate::MigrateError,
    crate::method::ManifestError,
    crate::util::yaml::YamlError,
    crate::util::version::VersionError,
    crate::util::contain::Refused,
    crate::agents::AgentsError,
    crate::ops::self_update::UpdateError,
);

/// The hint attached to an error anywhere in its chain: the first error in it that has one
/// (an I/O error carries one only when it is a refusal).
pub(crate) fn hint(err: &anyhow::Error) -> Option<String> {
    err.chain().find_map(|cause| {
        if let Some(e) = cause.downcast_ref::<std::io::Error>() {
            return crate::util::contain::refusal(e).and_then(crate::util::hint::Hint::hint);
        }
        hint_of(cause).flatten()
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every `thiserror` error type of the crate is in the hint table (so none silently loses
    /// its hint), and the table names no type that does not exist.
    #[test]
    fn every_error_type_has_a_hint() {
        let mut found = Vec::new();
        for entry in walkdir::WalkDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")) {
            let entry = entry.unwrap();
            if entry.path().extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                if line.trim_start().starts_with("#[derive(") && line.contains("thiserror::Error") {
                    let decl = lines[i + 1..]
                        .iter()
                        .find(|l| l.contains("enum ") || l.contains("struct "))
                        .unwrap();
                    let name = decl
                        .split_whitespace()
                        .skip_while(|w| *w != "enum" && *w != "struct")
                        .nth(1)
                        .unwrap()
                        .trim_end_matches('{')
                        .to_string();
                    found.push(name);
                }
            }
        }
        let listed: Vec<String> = super::HINTED
            .iter()
            .map(|t| t.rsplit("::").next().unwrap().trim().to_string())
            .collect();
        for name in &found {
            assert!(
                listed.contains(name),
                "`{name}` derives thiserror::Error but is not in cli's hint table"
            );
        }
        assert_eq!(found.len(), listed.len(), "{found:?} vs {listed:?}");
    }

    #[test]
    fn arguments_are_consistent() {
        super::Cli::command().debug_assert();
    }
}
