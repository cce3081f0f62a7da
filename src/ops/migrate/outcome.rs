//! What `migrate` did or would do, as `migrate --json` shows it.

use super::*;

#[derive(Debug)]
pub struct MigrateOutcome {
    pub plan: Plan,
    /// `None` when V's manifest could not be read without downloading (dry run only).
    pub requires_canonical: Option<bool>,
    pub installed: Option<PathBuf>,
    pub commit: Option<String>,
    pub resumed: bool,
    pub noop: bool,
    /// The superbuild's lock, when this migration added V to it (or, dry, would).
    pub workspace_lock: Option<PathBuf>,
    /// Versions the superbuild's lock dropped (or, dry, would drop) because no member pins
    /// them after the migration: the lock then passes `install --locked`.
    pub lock_dropped: Vec<MethodVersion>,
    /// What the plan must say before it runs (a detached HEAD).
    pub warnings: Vec<String>,
    /// The plan's digest (`sha256:<hex>`): what a dry run shows for review, and what the
    /// real run applied.
    pub digest: Option<String>,
    pub dry_run: bool,
}

/// A moved or dropped file as the documents show it.
#[derive(serde::Serialize)]
pub(super) struct FileMove<'a> {
    from: &'a str,
    to: &'a str,
}

pub(super) fn file_moves<'a>(moves: impl IntoIterator<Item = &'a crate::relocate::Move>) -> Vec<FileMove<'a>> {
    moves
        .into_iter()
        .map(|m| FileMove {
            from: &m.from,
            to: &m.to,
        })
        .collect()
}

/// The adoption record's change as the documents show it.
#[derive(serde::Serialize)]
pub(super) struct AdoptionChange<'a> {
    before: &'a MethodVersion,
    after: &'a MethodVersion,
    path: &'a Path,
    rewritten: bool,
}

impl<'a> From<&'a Plan> for AdoptionChange<'a> {
    fn from(p: &'a Plan) -> Self {
        Self {
            before: &p.before.tool_version,
            after: &p.after.tool_version,
            path: &p.adoption_path,
            rewritten: p.write_record,
        }
    }
}

/// `a2c migrate version --json` (docs/json/migrate.schema.json).
impl serde::Serialize for MigrateOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            repo: &'a Path,
            from: &'a MethodVersion,
            to: &'a MethodVersion,
            moves: Vec<FileMove<'a>>,
            replaced: Vec<FileMove<'a>>,
            dropped: Vec<FileMove<'a>>,
            move_reason: Option<crate::relocate::MoveReason>,
            adoption: AdoptionChange<'a>,
            commit: &'a Option<String>,
            installed: &'a Option<PathBuf>,
            workspace_lock: &'a Option<PathBuf>,
            lock_dropped: &'a [MethodVersion],
            dry_run: bool,
            plan: &'a Option<String>,
            noop: bool,
            warnings: &'a [String],
        }
        let p = &self.plan;
        Doc {
            repo: &p.repo,
            from: &p.from,
            to: &p.to,
            moves: file_moves(&p.moves),
            replaced: file_moves(p.moves.iter().filter(|m| m.replaces)),
            dropped: file_moves(&p.dropped),
            move_reason: p.move_reason,
            adoption: p.into(),
            commit: &self.commit,
            installed: &self.installed,
            workspace_lock: &self.workspace_lock,
            lock_dropped: &self.lock_dropped,
            dry_run: self.dry_run,
            plan: &self.digest,
            noop: self.noop,
            warnings: &self.warnings,
        }
        .serialize(s)
    }
}
