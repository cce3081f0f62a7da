//! `a2c list` and `a2c outdated`.

use clap::Args;

use super::{Cx, Outcome, discover_members};
use crate::ops::display_under;
use crate::ops::list::{RegistryState, list};
use crate::util::version::MethodVersion;

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c list\n  a2c list --offline --json")]
pub struct ListArgs {}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c outdated\n  a2c outdated --json")]
pub struct OutdatedArgs {}

pub fn run(args: &ListArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let ctx = discover_members(global, printer)?;
    let _ = args;
    let listing = list(session, &ctx)?;
    match (&listing.registry_note, listing.read) {
        (Some(note), true) => printer.note(note),
        (Some(note), false) => printer.note(format!("the registry was not read ({note}): its column shows `?`")),
        (None, _) => {}
    }
    if printer.json {
        printer.json_doc(&listing);
        return Ok(Outcome::Success);
    }
    let base = super::display_base(&ctx);
    let yes = |b: bool| if b { "yes" } else { "-" };
    printer.data(format!(
        "{:<12} {:<7} {:<10} {:<10} members",
        "version", "locked", "installed", "registry"
    ));
    for r in &listing.rows {
        let registry = match r.registry {
            Some(RegistryState::Published) => "published",
            Some(RegistryState::Yanked) => "yanked",
            Some(RegistryState::Absent) => "absent",
            Some(RegistryState::Unusable) => "unusable",
            None => "?",
        };
        let members: Vec<String> = r.members.iter().map(|m| display_under(&base, m)).collect();
        printer.data(format!(
            "{:<12} {:<7} {:<10} {:<10} {}",
            r.version.to_string(),
            yes(r.locked),
            yes(r.installed),
            registry,
            if members.is_empty() {
                "-".to_string()
            } else {
                members.join(", ")
            }
        ));
    }
    Ok(Outcome::Success)
}

pub fn outdated(_args: &OutdatedArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let ctx = discover_members(global, printer)?;
    let out = crate::ops::list::outdated(session, &ctx)?;
    if printer.json {
        printer.json_doc(&out);
        return Ok(Outcome::Success);
    }
    let crate::ops::list::Outdated {
        newest,
        members: behind,
        yanked,
        gone,
        note,
        several,
    } = out;
    if let Some(note) = &note {
        printer.status(format!("note: {note}"));
    }
    let base = super::display_base(&ctx);
    // A yanked contract is never current, whatever its number: said first, and never hidden
    // behind "every member is on …".
    // Where a member on a yanked or removed version can go: forward to the newest, or nowhere
    // (moving to an older version is a downgrade `migrate --all` refuses).
    let forward = |version: &MethodVersion, what: &str| match &newest {
        Some(n) if n > version => (format!("move to {n}"), true),
        Some(n) => (
            format!(
                "no newer version is published (moving to {n} would be a downgrade: `a2c migrate version --to {n} --allow-downgrade` in the member); {what}"
            ),
            false,
        ),
        None => (format!("the registry publishes no version; {what}"), false),
    };
    let mut movable = behind.len();
    for (path, version) in &yanked {
        let (to, moves) = forward(version, "it stays locked and installs");
        movable += usize::from(moves);
        printer.data(format!("{}: {version} is yanked → {to}", display_under(&base, path)));
    }
    for (path, version) in &gone {
        let (to, moves) = forward(
            version,
            "it stays locked and installs from the cache, a mirror or a vendored copy",
        );
        movable += usize::from(moves);
        printer.data(format!(
            "{}: {version} is no longer in {} (removed) → {to}",
            display_under(&base, path),
            if several {
                "any of the registries"
            } else {
                "the registry"
            }
        ));
    }
    let Some(newest) = newest else {
        if yanked.is_empty() && gone.is_empty() {
            printer.status("the registry publishes no version yet");
        }
        return Ok(Outcome::Success);
    };
    for (path, version) in &behind {
        printer.data(format!("{}: {version} → {newest}", display_under(&base, path)));
    }
    match (movable, yanked.len() + gone.len(), ctx.workspace.is_some()) {
        (0, 0, _) => printer.status(format!("every member is on {newest}, the newest published version")),
        (0, _, _) => printer.status(format!(
            "no member can move forward: {newest}, the newest published version, is older than their contract"
        )),
        // The review first, as docs/migration.md teaches: the dry run prints the plan and the
        // `--confirm` command that applies exactly it.
        (n, _, true) => printer.status(format!(
            "{n} member(s) to move to {newest}: review the plan with `a2c migrate version --to {newest} --all --dry-run` in the superbuild, then apply it with the `--confirm` command it prints"
        )),
        (_, _, false) => printer.status(format!(
            "review the move with `a2c migrate version --to {newest} --dry-run`, then apply it with the `--confirm` command it prints"
        )),
    }
    Ok(Outcome::Success)
}
