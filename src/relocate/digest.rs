//! Plan digests (issue: plan, review, apply): a migration plan's digest covers every input its
//! apply depends on — the adoption records' bytes, each tool state file it moves or drops
//! (bytes and mode), the target's lock entry (sha256, tree), the commit message and HEAD — so
//! that `--confirm sha256:<hex>` applies exactly the plan that was reviewed, or nothing.
//!
//! A dry run also keeps the list of its inputs in `.git/a2c-plans/<hex>` (never committed), so
//! that a confirmation that no longer matches can name what changed since the review.

use crate::util::platform::MetaExt;
use std::path::{Path, PathBuf};

use super::{MigrateError, Plan};
use crate::lock::LockEntry;
use crate::util::digest::Sha256;
use crate::workspace::state_root::{CANONICAL_ROOT, LEGACY_ROOT};

/// A plan's digest and the inputs it covers: `(what, digest of it)`, in a fixed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanDigest {
    pub hex: String,
    pub inputs: Vec<(String, String)>,
}

impl PlanDigest {
    /// `sha256:<hex>`, as printed and as `--confirm` takes it.
    pub fn id(&self) -> String {
        format!("sha256:{}", self.hex)
    }
}

fn file_input(repo: &Path, rel: &str) -> (String, String) {
    let path = repo.join(rel);
    let value = match (std::fs::symlink_metadata(&path), std::fs::read(&path)) {
        (Ok(m), Ok(bytes)) => format!("{:o} {}", m.mode() & 0o7777, Sha256::of(&bytes).to_hex()),
        _ => "absent".into(),
    };
    (format!("file {rel}"), value)
}

/// The digest of `plan` in `repo` with the target's lock `entry`.
pub fn digest(repo: &Path, plan: &Plan, entry: &LockEntry) -> PlanDigest {
    let mut inputs = Vec::new();
    for root in [LEGACY_ROOT, CANONICAL_ROOT] {
        let (_, v) = file_input(repo, &format!("{root}/adoption.yaml"));
        inputs.push((format!("adoption record {root}/adoption.yaml"), v));
    }
    let mut files: Vec<&str> = plan
        .moves
        .iter()
        .chain(&plan.duplicates)
        .chain(&plan.dropped)
        .flat_map(|m| [m.from.as_str(), m.to.as_str()])
        // The lock is what the apply itself writes first (V added to it): its part of the
        // plan is the target's entry, below, not its bytes.
        .filter(|f| !f.ends_with(crate::lock::LOCK_FILE))
        .collect();
    files.sort_unstable();
    files.dedup();
    for f in files {
        inputs.push(file_input(repo, f));
    }
    inputs.push((
        format!("lock entry {}", entry.version),
        format!("{} {}", entry.sha256.to_hex(), entry.tree.as_deref().unwrap_or("-")),
    ));
    inputs.push((
        "commit message".into(),
        Sha256::of(plan.commit_message().as_bytes()).to_hex(),
    ));
    inputs.push((
        "HEAD".into(),
        crate::util::git::commit_of(repo, "HEAD").unwrap_or_else(|| "none".into()),
    ));
    let mut text = String::from("a2c-plan 1\n");
    for (k, v) in &inputs {
        text.push_str(&format!("{k}\t{v}\n"));
    }
    PlanDigest {
        hex: Sha256::of(text.as_bytes()).to_hex(),
        inputs,
    }
}

/// One member of a superbuild-wide plan (`--all`): its own plan's digest, or why it is skipped.
pub enum Part<'a> {
    Planned(&'a PlanDigest),
    Skipped(&'a str),
}

/// The digest of a superbuild-wide plan: every member in order, planned (with each input of its
/// own plan, named after the member) or skipped (with why), so that a member that joins, leaves
/// or changes changes the digest.
pub fn combine(parts: &[(&str, Part<'_>)]) -> PlanDigest {
    let mut inputs = Vec::new();
    for (member, part) in parts {
        match part {
            Part::Planned(d) => inputs.extend(
                d.inputs
                    .iter()
                    .map(|(k, v)| (format!("member {member}: {k}"), v.clone())),
            ),
            Part::Skipped(why) => inputs.push((format!("member {member}"), format!("skipped: {why}"))),
        }
    }
    let mut text = String::from("a2c-plan-all 1\n");
    for (k, v) in &inputs {
        text.push_str(&format!("{k}\t{v}\n"));
    }
    PlanDigest {
        hex: Sha256::of(text.as_bytes()).to_hex(),
        inputs,
    }
}

/// Keeps the inputs of a reviewed plan (a dry run) under `.git/`, for naming changes later.
pub fn remember(repo: &Path, d: &PlanDigest) -> Result<(), MigrateError> {
    let dir = super::git::git_dir_file(repo, "a2c-plans")?;
    fs_err::create_dir_all(&dir)?;
    let mut text = String::new();
    for (k, v) in &d.inputs {
        text.push_str(&format!("{k}\t{v}\n"));
    }
    crate::util::fs::write_atomic(&dir.join(&d.hex), text.as_bytes())?;
    Ok(())
}

/// The file that says the user approved the plan `hex` in a terminal: beside the kept
/// review, a name no dry run writes.
fn approval(repo: &Path, hex: &str) -> Result<PathBuf, MigrateError> {
    Ok(super::git::git_dir_file(repo, "a2c-plans")?.join(format!("{hex}.approved")))
}

/// Records that the user approved the plan `d` (`a2c migrate version --approve`, which only a
/// terminal may run): `migrate_apply` may then apply it, once.
pub fn approve(repo: &Path, d: &PlanDigest) -> Result<(), MigrateError> {
    remember(repo, d)?;
    crate::util::fs::write_atomic(&approval(repo, &d.hex)?, d.id().as_bytes())?;
    Ok(())
}

/// Whether the user approved the plan `d` for `repo`.
pub fn is_approved(repo: &Path, d: &PlanDigest) -> bool {
    approval(repo, &d.hex)
        .ok()
        .and_then(|p| crate::util::contain::read_config(&p).ok().flatten())
        .is_some_and(|text| text == d.id())
}

/// Removes the approval of the plan `id` (`sha256:<hex>`) once it is applied: an approval
/// is good for one run.
pub fn consume_id(repo: &Path, id: &str) {
    let hex = id.strip_prefix("sha256:").unwrap_or(id);
    if Sha256::parse(hex).is_ok()
        && let Ok(p) = approval(repo, hex)
    {
        let _ = std::fs::remove_file(p);
    }
}

/// What differs between the reviewed plan `reviewed` (`sha256:<hex>`) and `now`: each input
/// that changed, was added or went away, when the review's inputs were kept (in the first of
/// `repos` that has them); else a summary.
pub fn changes(repos: &[&Path], reviewed: &str, now: &PlanDigest) -> Vec<String> {
    let hex = reviewed.strip_prefix("sha256:").unwrap_or(reviewed);
    // Only a digest names a kept review: never a path.
    let kept = Sha256::parse(hex).ok().and_then(|_| {
        repos.iter().find_map(|repo| {
            let dir = super::git::git_dir_file(repo, "a2c-plans").ok()?;
            crate::util::contain::read_config(&dir.join(hex)).ok().flatten()
        })
    });
    let Some(kept) = kept else {
        return vec![format!(
            "the plan is now {} (the reviewed plan's inputs are not known here: review it again with --dry-run)",
            now.id()
        )];
    };
    let before: Vec<(String, String)> = kept
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    diff(&before, &now.inputs)
}

/// Each input of `now` that changed since `before`, was added, or went away.
pub fn diff(before: &[(String, String)], now: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in now {
        match before.iter().find(|(bk, _)| bk == k) {
            Some((_, bv)) if bv == v => {}
            Some((_, bv)) => out.push(describe(k, bv, v)),
            None => out.push(format!("{k} is new in the plan")),
        }
    }
    for (k, _) in before {
        if !now.iter().any(|(nk, _)| nk == k) {
            out.push(format!("{k} is no longer in the plan"));
        }
    }
    out
}

fn describe(what: &str, before: &str, now: &str) -> String {
    // `member <path>: <input>` in a superbuild-wide plan.
    if let Some(rest) = what.strip_prefix("member ")
        && let Some((member, input)) = rest.split_once(": ")
    {
        return format!("member {member}: {}", describe(input, before, now));
    }
    if what == "HEAD" {
        return format!("HEAD moved from {} to {}", short(before), short(now));
    }
    let mode = |v: &str| v.split_once(' ').map(|(m, _)| m.to_string());
    let body = |v: &str| v.split_once(' ').map(|(_, b)| b.to_string());
    if what.starts_with("file ") && before != "absent" && now != "absent" && body(before) == body(now) {
        return format!(
            "{what}: its mode changed ({} -> {})",
            mode(before).unwrap_or_default(),
            mode(now).unwrap_or_default()
        );
    }
    format!("{what} changed")
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}
