//! `a2c doctor`: for every member and every version, whether what the write contract promises
//! is really there. Checks produce findings with stable codes (documented in docs/doctor.md);
//! nothing here prints or changes anything.

mod checks;
mod deep;

use std::path::PathBuf;

use serde::Serialize;

use crate::util::version::MethodVersion;
use crate::workspace::Context;

/// How bad a finding is. `fail` makes `a2c doctor` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Fail,
    Warn,
    Info,
}

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub code: &'static str,
    pub severity: Severity,
    pub repo: Option<PathBuf>,
    pub version: Option<MethodVersion>,
    pub message: String,
    pub hint: String,
}

/// Every finding code, with its severity, for docs and tests.
pub const CODES: &[(&str, Severity)] = &[
    ("tool-state-both-roots", Severity::Warn),
    ("tool-state-roots-disagree", Severity::Fail),
    ("tool-state-legacy", Severity::Info),
    ("adoption-missing", Severity::Fail),
    ("adoption-invalid", Severity::Fail),
    ("unresolved", Severity::Fail),
    ("resolved-legacy-ai-rules", Severity::Info),
    ("manifest-version-mismatch", Severity::Fail),
    ("workspace-ai-rules-method-tree", Severity::Warn),
    ("a2c-too-old", Severity::Fail),
    ("lock-missing-version", Severity::Fail),
    ("lock-unused-entry", Severity::Info),
    ("lock-invalid", Severity::Fail),
    ("store-tree-modified", Severity::Fail),
    ("store-receipt-missing", Severity::Warn),
    ("store-receipt-lock-mismatch", Severity::Fail),
    ("store-orphan-version", Severity::Info),
    ("store-staging-leftover", Severity::Warn),
    ("store-stale-lock", Severity::Warn),
    ("pointer-stale", Severity::Warn),
    ("store-tracked", Severity::Fail),
    ("unsafe-link", Severity::Fail),
    ("local-tracked", Severity::Warn),
    ("delivery-none", Severity::Info),
    ("delivery-served-by-workspace", Severity::Info),
    ("delivery-tree-missing", Severity::Fail),
    ("delivery-not-submodule", Severity::Fail),
    ("delivery-not-checked-out", Severity::Fail),
    ("delivery-ref-mismatch", Severity::Fail),
];

/// What `a2c doctor` found.
#[derive(Debug, Serialize)]
pub struct Report {
    pub workspace: Option<PathBuf>,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == severity).count()
    }
}

/// Options of a diagnosis.
#[derive(Debug, Clone, Copy, Default)]
pub struct DoctorOptions {
    /// Re-hash every installed tree (in parallel) against its receipt and the lock.
    pub deep: bool,
    pub jobs: usize,
}

/// Diagnoses the workspace (every member) or the single repository.
pub fn diagnose(ctx: &Context, options: DoctorOptions) -> Result<Report, crate::workspace::WorkspaceError> {
    let mut findings = checks::run(ctx, options)?;
    findings.sort_by(|a, b| (a.severity, &a.repo, &a.version, a.code).cmp(&(b.severity, &b.repo, &b.version, b.code)));
    Ok(Report {
        workspace: ctx.workspace.as_ref().map(|w| w.root.clone()),
        findings,
    })
}

/// The severity of `code` (every code the checks emit is listed in [`CODES`]).
pub(crate) fn severity_of(code: &str) -> Severity {
    CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, s)| *s)
        .unwrap_or(Severity::Fail)
}

pub(crate) fn finding(
    code: &'static str,
    repo: Option<PathBuf>,
    version: Option<MethodVersion>,
    message: String,
    hint: impl Into<String>,
) -> Finding {
    Finding {
        code,
        severity: severity_of(code),
        repo,
        version,
        message,
        hint: hint.into(),
    }
}
