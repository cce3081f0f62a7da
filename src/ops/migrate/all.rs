//! `migrate version --all`: every member of a superbuild that pins the same version, planned
//! together, applied member by member, the shared lock and store changed once.

use super::*;

/// What `--all` does with one member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberStatus {
    /// In the plan (a dry run, or not reached because an earlier member failed: see `Untouched`).
    Planned,
    /// Migrated; the commit, or `None` with `--no-commit` (left staged).
    Done(Option<String>),
    /// Not in the plan, and why (already at V, a newer contract, not adopted).
    Skipped(String),
    /// Its migration failed and was rolled back: the error.
    Failed(String),
    /// In the plan, but not reached: the run stopped at an earlier member.
    Untouched,
}

/// One member of a superbuild-wide migration.
#[derive(Debug)]
pub struct MemberMigration {
    /// The member's path relative to W (`.` for W itself).
    pub relative: String,
    pub repo: PathBuf,
    /// The contract it migrates from (its adoption record's, or the journal's when resuming).
    pub from: Option<MethodVersion>,
    pub plan: Option<Plan>,
    pub resumed: bool,
    pub status: MemberStatus,
}

#[derive(Debug)]
pub struct MigrateAllOutcome {
    pub to: MethodVersion,
    pub members: Vec<MemberMigration>,
    /// The combined plan's digest (`sha256:<hex>`).
    pub digest: String,
    pub installed: Option<PathBuf>,
    /// `None` when V's manifest could not be read without downloading (dry run only).
    pub requires_canonical: Option<bool>,
    /// W's lock, when V was (or, dry, would be) added to it.
    pub workspace_lock: Option<PathBuf>,
    /// Versions W's lock dropped (or, dry, would drop): no member pins them after the run.
    pub lock_dropped: Vec<MethodVersion>,
    pub warnings: Vec<String>,
    /// The member the run stopped at, with its error (the members after it are untouched).
    pub failure: Option<(String, OpsError)>,
    pub dry_run: bool,
}

impl MemberStatus {
    /// The name a document gives it.
    pub fn name(&self) -> &'static str {
        match self {
            MemberStatus::Planned => "planned",
            MemberStatus::Done(Some(_)) => "committed",
            MemberStatus::Done(None) => "staged",
            MemberStatus::Skipped(_) => "skipped",
            MemberStatus::Failed(_) => "failed",
            MemberStatus::Untouched => "untouched",
        }
    }
}

/// One member in `a2c migrate version --all --json`: its plan only when it has one and is not
/// skipped.
impl serde::Serialize for MemberMigration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            member: &'a str,
            repo: &'a Path,
            status: &'static str,
            from: &'a Option<MethodVersion>,
            resumed: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            reason: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            commit: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            moves: Option<Vec<FileMove<'a>>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            dropped: Option<Vec<FileMove<'a>>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            move_reason: Option<Option<crate::relocate::MoveReason>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            adoption: Option<AdoptionChange<'a>>,
        }
        let plan = self
            .plan
            .as_ref()
            .filter(|_| !matches!(self.status, MemberStatus::Skipped(_)));
        Doc {
            member: &self.relative,
            repo: &self.repo,
            status: self.status.name(),
            from: &self.from,
            resumed: self.resumed,
            reason: match &self.status {
                MemberStatus::Skipped(why) => Some(why),
                _ => None,
            },
            error: match &self.status {
                MemberStatus::Failed(e) => Some(e),
                _ => None,
            },
            commit: match &self.status {
                MemberStatus::Done(Some(c)) => Some(c),
                _ => None,
            },
            moves: plan.map(|p| file_moves(&p.moves)),
            dropped: plan.map(|p| file_moves(&p.dropped)),
            move_reason: plan.map(|p| p.move_reason),
            adoption: plan.map(AdoptionChange::from),
        }
        .serialize(s)
    }
}

/// `a2c migrate version --all --json` without its `error` (which the CLI adds from `failure`,
/// worded as the error it returns).
impl serde::Serialize for MigrateAllOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            all: bool,
            to: &'a MethodVersion,
            members: &'a [MemberMigration],
            installed: &'a Option<PathBuf>,
            workspace_lock: &'a Option<PathBuf>,
            lock_dropped: &'a [MethodVersion],
            dry_run: bool,
            plan: &'a str,
            warnings: &'a [String],
        }
        Doc {
            all: true,
            to: &self.to,
            members: &self.members,
            installed: &self.installed,
            workspace_lock: &self.workspace_lock,
            lock_dropped: &self.lock_dropped,
            dry_run: self.dry_run,
            plan: &self.digest,
            warnings: &self.warnings,
        }
        .serialize(s)
    }
}

/// `a2c migrate version --to V --all`: plans every member of the superbuild whose write contract
/// is older than V (or whose tool state root must move), as one plan with one digest, then
/// applies it member by member — one commit per member, W's lock updated once. A member that
/// fails is rolled back and the run stops there: members before it stay committed, the rest are
/// untouched, and a rerun continues (a committed member is then already at V; an interrupted one
/// resumes from its journal).
pub fn migrate_all(
    session: &crate::ops::Session,
    ctx: &Context,
    settings: &MigrateOptions,
    reporter: &dyn Reporter,
) -> Result<MigrateAllOutcome, OpsError> {
    let (to, from_dir) = target(settings)?;
    let w_root = ctx.require_workspace()?.root.clone();
    let lock_path = lock_path(ctx)?;
    // V's lock entry and manifest, once for every member. The real run installs V first (the
    // store only: W's lock is written after every member's preconditions hold).
    let install = (!settings.dry_run).then_some(reporter);
    let Resolved {
        entry,
        added,
        installed,
        requires,
    } = lock_and_install(session, ctx, &to, settings, from_dir.as_deref(), install)?;
    // Plan every member before anything is written: a member that cannot be migrated stops
    // the whole run here, named.
    let mut members = Vec::new();
    let mut digests = Vec::new();
    let mut warnings = Vec::new();
    for m in ctx.members()? {
        let in_member = |e: OpsError| OpsError::InMember {
            member: m.relative.clone(),
            error: Box::new(e),
        };
        let mut mm = MemberMigration {
            relative: m.relative.clone(),
            repo: m.path.clone(),
            from: None,
            plan: None,
            resumed: false,
            status: MemberStatus::Planned,
        };
        let state = ToolStateRoot::detect(&m.path).ok().flatten();
        let pending = Journal::pending(&m.path);
        if !state.as_ref().is_some_and(|s| s.has_adoption()) && pending.is_none() {
            mm.status = MemberStatus::Skipped("has not adopted (run `a2c adopt` in it first)".into());
            digests.push(None);
            members.push(mm);
            continue;
        }
        // A newer contract is skipped, never downgraded, unless --allow-downgrade.
        let current = state.and_then(|s| s.read_adoption().ok()).map(|r| r.tool_version);
        if pending.is_none()
            && let Some(cur) = &current
            && *cur > to
            && !settings.allow_downgrade
        {
            mm.from = Some(cur.clone());
            mm.status = MemberStatus::Skipped(format!(
                "its contract {cur} is newer than {to} (never downgraded without --allow-downgrade)"
            ));
            digests.push(None);
            members.push(mm);
            continue;
        }
        let prepared = prepare(&m.path, &to, settings, &w_root).map_err(in_member)?;
        let plan = relocate::plan(
            &m.path,
            &prepared.before,
            &to,
            &request(settings, requires.unwrap_or(false)),
        )
        .map_err(|e| in_member(e.into()))?;
        mm.from = Some(prepared.from.clone());
        mm.resumed = prepared.resumed;
        if plan.is_noop() && requires.is_some() && !prepared.resumed {
            mm.status = MemberStatus::Skipped(format!("already at {to}"));
            digests.push(None);
        } else {
            warnings.extend(prepared.warnings);
            digests.push(Some(relocate::digest::digest(&m.path, &plan, &entry)));
        }
        mm.plan = Some(plan);
        members.push(mm);
    }
    let reasons: Vec<String> = members
        .iter()
        .map(|m| match &m.status {
            MemberStatus::Skipped(why) => why.clone(),
            _ => String::new(),
        })
        .collect();
    let parts: Vec<(&str, relocate::digest::Part<'_>)> = members
        .iter()
        .zip(&digests)
        .zip(&reasons)
        .map(|((m, d), why)| {
            let part = match d {
                Some(d) => relocate::digest::Part::Planned(d),
                None => relocate::digest::Part::Skipped(why),
            };
            (m.relative.as_str(), part)
        })
        .collect();
    let digest = relocate::digest::combine(&parts);
    let planned: Vec<&Path> = members
        .iter()
        .filter(|m| m.status == MemberStatus::Planned)
        .map(|m| m.repo.as_path())
        .collect();
    let mut out = MigrateAllOutcome {
        to: to.clone(),
        digest: digest.id(),
        installed,
        requires_canonical: requires,
        workspace_lock: added.then(|| lock_path.clone()),
        lock_dropped: Vec::new(),
        warnings,
        failure: None,
        members: Vec::new(),
        dry_run: settings.dry_run,
    };
    if settings.dry_run {
        // Kept in each planned member's `.git/`, so that a confirmation that no longer matches
        // can say what changed.
        for repo in &planned {
            let _ = relocate::digest::remember(repo, &digest);
        }
        if let Some(approved) = &settings.approve {
            let repos: Vec<&Path> = members.iter().map(|m| m.repo.as_path()).collect();
            super::reviewed_is(approved, &digest, &repos)?;
            for repo in &planned {
                relocate::digest::approve(repo, &digest)?;
            }
        }
        out.lock_dropped = would_drop(ctx, &planned, &to)?;
        out.members = members;
        return Ok(out);
    }
    if let Some(reviewed) = &settings.confirm {
        let repos: Vec<&Path> = members.iter().map(|m| m.repo.as_path()).collect();
        super::reviewed_is(reviewed, &digest, &repos)?;
    }
    // An agent's apply needs the user's approval in every member the plan changes.
    if settings.approved_only && !planned.iter().all(|repo| relocate::digest::is_approved(repo, &digest)) {
        return Err(MigrateError::NotApproved {
            digest: digest.id(),
            approve: settings.approve_command(&w_root, true, &digest.id()),
        }
        .into());
    }
    if planned.is_empty() {
        out.workspace_lock = None;
        out.members = members;
        return Ok(out);
    }
    // W's lock gains V once; it is put back only if no member is migrated.
    let lock_before = crate::util::contain::read_config(&lock_path)?;
    if added {
        add_to_lock(ctx, &entry)?;
    }
    let mut stopped = false;
    let mut any_done = false;
    for (mm, reviewed) in members.iter_mut().zip(&digests) {
        if mm.status != MemberStatus::Planned {
            continue;
        }
        if stopped {
            mm.status = MemberStatus::Untouched;
            continue;
        }
        match migrate_member(mm, &to, &entry, reviewed.as_ref(), requires.unwrap_or(false), settings) {
            Ok(commit) => {
                mm.status = MemberStatus::Done(commit);
                relocate::digest::consume_id(&mm.repo, &out.digest);
                any_done = true;
                crate::testhook::point(crate::testhook::MIGRATE_BETWEEN_MEMBERS);
            }
            Err(e) => {
                mm.status = MemberStatus::Failed(e.to_string());
                out.failure = Some((mm.relative.clone(), e));
                stopped = true;
            }
        }
    }
    if !any_done && added {
        match &lock_before {
            Some(text) => crate::util::fs::write_atomic(&lock_path, text.as_bytes())?,
            None => fs_err::remove_file(&lock_path)?,
        }
        out.workspace_lock = None;
    }
    if any_done {
        out.lock_dropped = drop_unpinned(ctx)?;
        out.warnings.extend(crate::ops::agents::after_migrate(ctx));
    }
    out.members = members;
    Ok(out)
}

/// Applies one member's part of a superbuild-wide plan in its own transaction (its tool state,
/// its index, its journal): planned again from the files as they are now, and applied only if
/// that is still the reviewed part. Returns the commit.
pub(super) fn migrate_member(
    mm: &mut MemberMigration,
    to: &MethodVersion,
    entry: &LockEntry,
    reviewed: Option<&relocate::digest::PlanDigest>,
    requires: bool,
    settings: &MigrateOptions,
) -> Result<Option<String>, OpsError> {
    let planned = mm.plan.clone().expect("a planned member has a plan");
    let from = mm.from.clone().unwrap_or_else(|| planned.from.clone());
    let tx = relocate::Transaction::begin(
        &mm.repo,
        &Journal {
            from,
            to: to.clone(),
            step: None,
        },
        &[],
    )?;
    let result = (|| -> Result<Option<String>, OpsError> {
        let plan = relocate::plan(&mm.repo, &planned.before, to, &request(settings, requires))?;
        let now = relocate::digest::digest(&mm.repo, &plan, entry);
        if let Some(reviewed) = reviewed
            && reviewed.hex != now.hex
        {
            return Err(MigrateError::PlanChanged {
                reviewed: reviewed.id(),
                now: now.id(),
                changes: relocate::digest::diff(&reviewed.inputs, &now.inputs),
            }
            .into());
        }
        mm.plan = Some(plan.clone());
        Ok(relocate::apply(&plan, !settings.no_commit)?)
    })();
    match result {
        Ok(commit) => {
            tx.commit();
            Ok(commit)
        }
        Err(e) => Err(rolled_back(tx, e)),
    }
}
