//! `a2c migrate version --to V [--dry-run] [--no-commit] [--allow-downgrade]`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;

use super::progress::ProgressReporter;
use super::{Cx, GlobalArgs, Outcome, Printer, discover};
use crate::ops::OpsError;
use crate::ops::migrate::{MemberStatus, MigrateAllOutcome, MigrateOptions, migrate, migrate_all};
use crate::relocate::{Keep, MoveReason};
use crate::util::version::MethodVersion;

#[derive(Debug, Subcommand)]
pub enum MigrateCommand {
    /// Move this repository's write contract to another method version, in one commit
    Version(VersionArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c migrate version --to 2.0.0 --dry-run      # prints the plan and `plan sha256:…`\n  a2c migrate version --to 2.0.0 --confirm sha256:…\n  a2c migrate version --to 2.0.0\n  a2c migrate version --to 2.0.0 --all --dry-run   # every member of the superbuild, one plan"
)]
pub struct VersionArgs {
    /// Accept a signed index past its `expires` (keys pinned in `trusted_keys:`)
    #[arg(long)]
    pub allow_expired: bool,
    /// The target method version (one exact version)
    #[arg(long, value_name = "V")]
    pub to: MethodVersion,
    /// Print the plan and its digest, and change nothing
    #[arg(long, conflicts_with = "confirm")]
    pub dry_run: bool,
    /// Apply only the reviewed plan with this digest (`plan sha256:<hex>` of a dry run): if
    /// anything it depends on changed since, name it and change nothing
    #[arg(long, value_name = "sha256:HEX", value_parser = plan_digest)]
    pub confirm: Option<String>,
    /// Approve the reviewed plan with this digest for an agent (`migrate_apply` of `a2c mcp`
    /// applies only plans so approved, once); only at a terminal, and changes nothing else
    #[arg(long, value_name = "sha256:HEX", value_parser = plan_digest, conflicts_with_all = ["confirm", "dry_run"])]
    pub approve: Option<String>,
    /// Apply only a plan the user approved with --approve (what `a2c mcp`'s migrate_apply runs)
    #[arg(long, hide = true, requires = "confirm")]
    pub approved_only: bool,
    /// Every member of the superbuild whose write contract is older than V: one plan, one
    /// digest, one commit per member, W's lock updated once (a newer contract is skipped)
    #[arg(long)]
    pub all: bool,
    /// Leave the change staged instead of committing it
    #[arg(long)]
    pub no_commit: bool,
    /// Allow a target older than the current write contract
    #[arg(long)]
    pub allow_downgrade: bool,
    /// A directory of bundles (see `a2c vendor`)
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Set the adoption record's method_ref (default: kept; a ref naming the old version follows it)
    #[arg(long, value_name = "REF")]
    pub method_ref: Option<String>,
    /// Set the adoption record's delivery (default: kept)
    #[arg(long, value_name = "D", value_parser = ["none", "copy", "submodule", "clone", "package"])]
    pub delivery: Option<String>,
    /// When a file exists in both tool state roots and differs: keep the `.tools/esys/a2c/`
    /// copy (drop the `.a2c/` one) or the `.a2c/` copy (move it over the other)
    #[arg(long, value_name = "SIDE", value_parser = ["canonical", "legacy"])]
    pub keep: Option<String>,
}

pub fn run(cmd: &MigrateCommand, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let MigrateCommand::Version(args) = cmd;
    if args.approve.is_some() && !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return Err(crate::relocate::MigrateError::ApproveNeedsTerminal.into());
    }
    let ctx = discover(global, printer)?;
    let settings = MigrateOptions {
        allow_expired: args.allow_expired,
        to: Some(args.to.clone()),
        dry_run: args.dry_run || args.approve.is_some(),
        approve: args.approve.clone(),
        approved_only: args.approved_only,
        no_commit: args.no_commit,
        allow_downgrade: args.allow_downgrade,
        confirm: args.confirm.clone(),
        from: args.from.as_ref().map(|f| ctx.start.join(f)),
        method_ref: args.method_ref.clone(),
        delivery: args
            .delivery
            .as_deref()
            .map(|d| d.parse())
            .transpose()
            .map_err(anyhow::Error::msg)?,
        keep: args.keep.as_deref().map(|k| match k {
            "legacy" => Keep::Legacy,
            _ => Keep::Canonical,
        }),
    };
    let reporter = ProgressReporter::new(printer);
    if args.all {
        let result = migrate_all(session, &ctx, &settings, &reporter);
        reporter.done();
        return print_all(
            result?,
            args,
            global,
            printer,
            ctx.workspace.as_ref().map(|w| w.root.as_path()),
        );
    }
    let result = migrate(session, &ctx, &settings, &reporter);
    reporter.done();
    let out = result?;
    let p = &out.plan;
    for w in &out.warnings {
        printer.warn(w);
    }
    if printer.json {
        printer.json_doc(&out);
        return Ok(Outcome::Success);
    }
    if out.noop {
        printer.status(format!("already at {}: nothing to do", p.to));
        return Ok(Outcome::Success);
    }
    let dry = args.dry_run || args.approve.is_some();
    let verb = if dry { "would" } else { "did" };
    if out.resumed {
        printer.status(format!("resuming the interrupted migration {} -> {}", p.from, p.to));
    }
    match (&out.installed, dry) {
        (Some(path), false) => printer.status(format!("assets of {} installed at `{}`", p.to, path.display())),
        // A dry run: V locked and installed already, or what the run would do first.
        (Some(path), true) => printer.status(format!("assets of {} are installed at `{}`", p.to, path.display())),
        (None, true) => printer.status(format!("would lock and install {} first", p.to)),
        _ => {}
    }
    let committed: Vec<&std::path::Path> = match (&out.commit, ctx.repo.as_deref()) {
        (Some(_), Some(repo)) => vec![repo],
        _ => Vec::new(),
    };
    superbuild_lock(
        printer,
        ctx.workspace.as_ref().map(|w| w.root.as_path()),
        (out.workspace_lock.as_deref(), &out.lock_dropped),
        &committed,
        &p.to,
        dry,
    );
    if out.requires_canonical.is_none() {
        printer.status(format!(
            "note: {}'s manifest is not available locally, so whether it requires `.tools/esys/a2c` is not known until its bundle is fetched",
            p.to
        ));
    }
    print_steps(printer, p, verb, "");
    match (&out.commit, dry, args.no_commit) {
        (Some(sha), _, _) => printer.status(format!(
            "committed {sha}: {}",
            p.commit_message().lines().next().unwrap_or_default()
        )),
        (None, true, false) => printer.status(format!(
            "would commit: {}",
            p.commit_message().lines().next().unwrap_or_default()
        )),
        (None, _, true) => printer.status("left staged (--no-commit): review with `git diff --cached`, then commit"),
        _ => {}
    }
    if let Some(digest) = &out.digest {
        printer.status(done_with_plan(args, global, digest));
    }
    Ok(Outcome::Success)
}

/// The plan's last line: its digest and the command that applies exactly it (with every flag
/// that shaped it: `--offline`, `--from DIR`, …), or that it was approved or applied.
fn done_with_plan(args: &VersionArgs, global: &GlobalArgs, digest: &str) -> String {
    match (args.dry_run, &args.approve) {
        (_, Some(_)) => format!(
            "approved plan {digest}: an agent's `migrate_apply` may now apply it, once\nor apply it yourself with: {}",
            again(args, global, digest)
        ),
        (true, None) => format!(
            "plan {digest}\napply exactly this plan with: {}",
            again(args, global, digest)
        ),
        (false, None) => format!("applied plan {digest}"),
    }
}

/// This command again, applying exactly the plan `digest`: the flags that shaped the plan, as
/// they were given, so that it runs where the user stands.
fn again(args: &VersionArgs, global: &GlobalArgs, digest: &str) -> String {
    let quoted = |p: &std::path::Path| crate::util::text::shell_quoted(p);
    let mut words = vec!["a2c".to_string()];
    for (on, flag) in [
        (global.offline, "--offline"),
        (global.frozen, "--frozen"),
        (global.plain_http, "--plain-http"),
    ] {
        if on {
            words.push(flag.into());
        }
    }
    if let Some(dir) = &global.directory {
        words.push(format!("-C {}", quoted(dir)));
    }
    if let Some(w) = &global.workspace {
        words.push(format!("--workspace {}", quoted(w)));
    }
    words.push(format!("migrate version --to {}", args.to));
    for (on, flag) in [
        (args.all, "--all"),
        (args.allow_downgrade, "--allow-downgrade"),
        (args.allow_expired, "--allow-expired"),
        (args.no_commit, "--no-commit"),
    ] {
        if on {
            words.push(flag.into());
        }
    }
    if let Some(from) = &args.from {
        words.push(format!("--from {}", quoted(from)));
    }
    let text = |s: &str| crate::util::text::shell_quoted(std::path::Path::new(s));
    for (value, flag) in [
        (args.method_ref.as_deref(), "--method-ref"),
        (args.delivery.as_deref(), "--delivery"),
        (args.keep.as_deref(), "--keep"),
    ] {
        if let Some(v) = value {
            words.push(format!("{flag} {}", text(v)));
        }
    }
    words.push(format!("--confirm {digest}"));
    words.join(" ")
}

/// The steps of one repository's plan, each line prefixed with `indent`; `verb` is "would"
/// (dry run) or "did".
fn print_steps(printer: &Printer, p: &crate::relocate::Plan, verb: &str, indent: &str) {
    let line = |text: String| printer.status(format!("{indent}{text}"));
    match p.move_reason {
        Some(MoveReason::Required) => line(format!("{} requires `.tools/esys/a2c/`: the tool state root moves", p.to)),
        Some(MoveReason::Unfinished) => {
            line("both tool state roots hold state: the move finishes the earlier migration".into())
        }
        Some(MoveReason::RecordWrite) => line(
            "a2c never writes into `.a2c/`: the adoption record changes, so the tool state root moves to `.tools/esys/a2c/`".into(),
        ),
        None => {}
    }
    for m in &p.moves {
        line(format!(
            "{verb} {} {} -> {}{}",
            if m.tracked { "git mv" } else { "move" },
            m.from,
            m.to,
            if m.replaces {
                " (replacing the differing canonical copy: --keep legacy)"
            } else {
                ""
            }
        ));
    }
    for d in &p.duplicates {
        line(format!("{verb} remove {} (identical to {})", d.from, d.to));
    }
    for d in &p.dropped {
        line(format!(
            "{verb} remove {} (differs from {}; --keep canonical)",
            d.from, d.to
        ));
    }
    if p.remove_legacy {
        line(format!("{verb} remove the empty `.a2c/`"));
    }
    if p.write_record {
        // Under `--all` (indented, below the member's name) the path is the member's own.
        let path = match indent.is_empty() {
            true => p.adoption_path.as_path(),
            false => p.adoption_path.strip_prefix(&p.repo).unwrap_or(&p.adoption_path),
        };
        line(format!(
            "{verb} set {} to tool_version {} (was {})",
            path.display(),
            p.after.tool_version,
            p.before.tool_version
        ));
    } else {
        line(format!("the write contract stays {}", p.to));
    }
    // A delivery or method ref the record changes is said too (it was hidden).
    for change in p.record_changes() {
        line(format!("{verb} set {change}"));
    }
}

/// `--all`: the combined plan (dry run) or what was done, member by member, and the digest.
/// A run that stopped at a member prints what it did, then fails with which members were
/// migrated and which were not touched.
fn print_all(
    mut out: MigrateAllOutcome,
    args: &VersionArgs,
    global: &GlobalArgs,
    printer: &Printer,
    w: Option<&std::path::Path>,
) -> anyhow::Result<Outcome> {
    for w in &out.warnings {
        printer.warn(w);
    }
    let to = &out.to;
    let dry = args.dry_run || args.approve.is_some();
    let stopped = out.failure.take().map(|(at, e)| {
        let names = |pred: fn(&MemberStatus) -> bool| {
            out.members
                .iter()
                .filter(|m| pred(&m.status))
                .map(|m| m.relative.clone())
                .collect::<Vec<_>>()
        };
        OpsError::Stopped {
            to: to.clone(),
            at,
            done: names(|s| matches!(s, MemberStatus::Done(_))),
            untouched: names(|s| matches!(s, MemberStatus::Untouched)),
            error: Box::new(e),
        }
    });
    if printer.json {
        let mut doc = serde_json::to_value(&out).expect("serializes");
        if let Some(err) = &stopped {
            doc["error"] = json!({
                "code": "stopped",
                "message": err.to_string(),
                "causes": [],
                "hint": err.hint(),
            });
        }
        printer.json_doc(&doc);
    } else {
        let verb = if dry { "would" } else { "did" };
        for m in &out.members {
            let from = m.from.as_ref().map(|f| format!("{f} -> {to}")).unwrap_or_default();
            match &m.status {
                MemberStatus::Skipped(why) => printer.status(format!("skip {}: {why}", m.relative)),
                MemberStatus::Untouched => printer.status(format!("untouched {}: not reached ({from})", m.relative)),
                status => {
                    let resumed = if m.resumed {
                        " (resuming the interrupted migration)"
                    } else {
                        ""
                    };
                    printer.status(format!("member {}: {from}{resumed}", m.relative));
                    if let Some(p) = &m.plan {
                        print_steps(printer, p, verb, "  ");
                    }
                    match status {
                        MemberStatus::Done(Some(sha)) => printer.status(format!(
                            "  committed {sha}: {}",
                            m.plan
                                .as_ref()
                                .map(|p| p.commit_message())
                                .unwrap_or_default()
                                .lines()
                                .next()
                                .unwrap_or_default()
                        )),
                        MemberStatus::Done(None) => printer.status("  left staged (--no-commit)"),
                        MemberStatus::Failed(_) => printer.status("  failed: rolled back, exactly as it was"),
                        _ => {}
                    }
                }
            }
        }
        let planned = out
            .members
            .iter()
            .filter(|m| !matches!(m.status, MemberStatus::Skipped(_)))
            .count();
        if planned == 0 {
            printer.status(format!("every member is at {to} or skipped: nothing to do"));
        }
        let committed: Vec<&std::path::Path> = out
            .members
            .iter()
            .filter(|m| matches!(m.status, MemberStatus::Done(Some(_))))
            .map(|m| m.repo.as_path())
            .collect();
        superbuild_lock(
            printer,
            w,
            (out.workspace_lock.as_deref(), &out.lock_dropped),
            &committed,
            to,
            dry,
        );
        if out.requires_canonical.is_none() {
            printer.status(format!(
                "note: {to}'s manifest is not available locally, so whether it requires `.tools/esys/a2c` is not known until its bundle is fetched"
            ));
        }
        if dry || stopped.is_none() {
            printer.status(done_with_plan(args, global, &out.digest));
        }
    }
    match stopped {
        Some(err) => Err(err.into()),
        None => Ok(Outcome::Success),
    }
}

/// What the superbuild's lock gained (V) and lost (versions no member pins any more), and how
/// to commit it: the migration commits each member, never W. W's commit takes the lock and,
/// for each `committed` member that W records as a submodule, its new commit (the gitlink): a
/// colleague's `git clone --recurse-submodules` then checks out the migrated members.
fn superbuild_lock(
    printer: &Printer,
    w: Option<&std::path::Path>,
    (added, dropped): (Option<&std::path::Path>, &[crate::util::version::MethodVersion]),
    committed: &[&std::path::Path],
    to: &crate::util::version::MethodVersion,
    dry: bool,
) {
    if let Some(lock) = added {
        printer.status(format!(
            "{} {to} to the superbuild's lock `{}`",
            if dry { "would add" } else { "added" },
            lock.display()
        ));
    }
    if !dropped.is_empty() {
        printer.status(format!(
            "{} {} from {}: no member pins {} any more",
            if dry { "would drop" } else { "dropped" },
            crate::ops::join_versions(dropped),
            if w.is_some() {
                "the superbuild's lock"
            } else {
                "the lock (in the migration commit)"
            },
            if dropped.len() == 1 { "it" } else { "them" }
        ));
    }
    let Some(w) = w.filter(|w| !dry && crate::util::git::is_own_work_tree(w)) else {
        return;
    };
    let lock_changed = added.is_some() || !dropped.is_empty();
    // The members W records as submodules whose commit moved.
    let links: Vec<String> = match committed.is_empty() {
        true => Vec::new(),
        false => {
            let recorded: std::collections::HashSet<String> = crate::util::git::gitlinks(w).into_iter().collect();
            committed
                .iter()
                .filter_map(|m| m.strip_prefix(w).ok())
                .map(|rel| rel.to_string_lossy().replace('\\', "/"))
                .filter(|rel| recorded.contains(rel))
                .collect()
        }
    };
    if !lock_changed && links.is_empty() {
        return;
    }
    let shown = w.to_string_lossy();
    let quoted = |text: &str| {
        shlex::try_quote(text)
            .map(|q| q.into_owned())
            .unwrap_or_else(|_| ".".into())
    };
    let mut paths: Vec<String> = lock_changed
        .then(|| ".tools/esys/a2c/a2c.lock".to_string())
        .into_iter()
        .collect();
    paths.extend(links.iter().map(|l| quoted(l)));
    let message = match (lock_changed, links.is_empty()) {
        (true, true) => format!("a2c: lock {to}"),
        _ => format!("a2c: migrate to {to}"),
    };
    let w = quoted(&shown);
    printer.status(format!(
        "to commit: git -C {w} add {} && git -C {w} commit -m \"{message}\"",
        paths.join(" ")
    ));
}

/// `--confirm`'s value: a whole plan digest, `sha256:` and 64 lower-case hex digits, as a dry run
/// prints it. Anything else (a prefix, a truncated copy) is a usage error, never a changed plan.
fn plan_digest(value: &str) -> Result<String, String> {
    let hex = value.strip_prefix("sha256:").unwrap_or("");
    match hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        true => Ok(value.to_string()),
        false => Err(format!(
            "`{value}` is not a plan digest: give the whole `sha256:<64 hex digits>` that `--dry-run` printed as `plan …`"
        )),
    }
}
