//! `a2c list` and `a2c outdated`.

use clap::Args;

use super::{GlobalArgs, Outcome, Printer, discover_members};
use crate::ops::display_under;
use crate::ops::list::{Published, list};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c list\n  a2c list --offline --json")]
pub struct ListArgs {}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c outdated\n  a2c outdated --json")]
pub struct OutdatedArgs {}

pub fn run(
    args: &ListArgs,
    session: &crate::ops::Session,
    global: &GlobalArgs,
    printer: &Printer,
) -> anyhow::Result<Outcome> {
    let ctx = discover_members(global, printer)?;
    let _ = args;
    let listing = list(session, &ctx)?;
    if let Some(note) = &listing.registry_note {
        printer.detail(format!("registry not read: {note}"));
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
            Some(Published::Published) => "published",
            Some(Published::Yanked) => "yanked",
            Some(Published::Absent) => "absent",
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

pub fn outdated(
    _args: &OutdatedArgs,
    session: &crate::ops::Session,
    global: &GlobalArgs,
    printer: &Printer,
) -> anyhow::Result<Outcome> {
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
    } = out;
    if let Some(note) = &note {
        printer.status(format!("note: {note}"));
    }
    let base = super::display_base(&ctx);
    // A yanked contract is never current, whatever its number: said first, and never hidden
    // behind "every member is on …".
    for (path, version) in &yanked {
        let to = match &newest {
            Some(n) if n > version => format!("move to {n}"),
            _ => "no newer version is published".into(),
        };
        printer.data(format!("{}: {version} is yanked → {to}", display_under(&base, path)));
    }
    for (path, version) in &gone {
        let to = match &newest {
            Some(n) => format!("move to {n}"),
            None => "the registry publishes no version".into(),
        };
        printer.data(format!(
            "{}: {version} is no longer in the registry (removed) → {to}",
            display_under(&base, path)
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
    match (behind.len() + yanked.len() + gone.len(), ctx.workspace.is_some()) {
        (0, _) => printer.status(format!("every member is on {newest}, the newest published version")),
        (n, true) => printer.status(format!(
            "{n} member(s) to move to {newest}: `a2c migrate version --to {newest} --all` in the superbuild"
        )),
        (_, false) => printer.status(format!("move it with `a2c migrate version --to {newest}`")),
    }
    Ok(Outcome::Success)
}
