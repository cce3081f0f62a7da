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

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Fail => "fail",
            Severity::Warn => "warn",
            Severity::Info => "info",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub code: Code,
    pub severity: Severity,
    pub repo: Option<PathBuf>,
    pub version: Option<MethodVersion>,
    pub message: String,
    pub hint: String,
}

/// A finding's stable code: its name, severity and documentation anchor in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    ToolStateBothRoots,
    ToolStateRootsDisagree,
    ToolStateLegacy,
    AdoptionMissing,
    AdoptionInvalid,
    Unresolved,
    ResolvedLegacyAiRules,
    AgentsDrift,
    ManifestVersionMismatch,
    WorkspaceAiRulesMethodTree,
    A2cTooOld,
    LockMissingVersion,
    LockUnusedEntry,
    LockInvalid,
    StoreTreeModified,
    CacheTreeModified,
    MigrationPending,
    StoreReceiptMissing,
    StoreReceiptLockMismatch,
    StoreOrphanVersion,
    StoreStagingLeftover,
    StoreStaleLock,
    PointerStale,
    StoreTracked,
    UnsafeLink,
    LocalTracked,
    /// git cannot say whether a `.tools_local/` is tracked (an index it cannot read).
    TrackingUnknown,
    DeliveryNone,
    DeliveryServedByWorkspace,
    DeliveryTreeMissing,
    DeliveryNotSubmodule,
    DeliveryNotCheckedOut,
    DeliveryRefMismatch,
    MemberMissing,
    NestedMarkerInvalid,
    /// A member pins a version the registry has yanked (checked when the registry is read).
    VersionYanked,
}

impl Code {
    /// Every code, for docs and tests.
    pub const ALL: &[Code] = &[
        Code::ToolStateBothRoots,
        Code::ToolStateRootsDisagree,
        Code::ToolStateLegacy,
        Code::AdoptionMissing,
        Code::AdoptionInvalid,
        Code::Unresolved,
        Code::ResolvedLegacyAiRules,
        Code::AgentsDrift,
        Code::ManifestVersionMismatch,
        Code::WorkspaceAiRulesMethodTree,
        Code::A2cTooOld,
        Code::LockMissingVersion,
        Code::LockUnusedEntry,
        Code::LockInvalid,
        Code::StoreTreeModified,
        Code::CacheTreeModified,
        Code::MigrationPending,
        Code::StoreReceiptMissing,
        Code::StoreReceiptLockMismatch,
        Code::StoreOrphanVersion,
        Code::StoreStagingLeftover,
        Code::StoreStaleLock,
        Code::PointerStale,
        Code::StoreTracked,
        Code::UnsafeLink,
        Code::LocalTracked,
        Code::TrackingUnknown,
        Code::DeliveryNone,
        Code::DeliveryServedByWorkspace,
        Code::DeliveryTreeMissing,
        Code::DeliveryNotSubmodule,
        Code::DeliveryNotCheckedOut,
        Code::DeliveryRefMismatch,
        Code::MemberMissing,
        Code::NestedMarkerInvalid,
        Code::VersionYanked,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::ToolStateBothRoots => "tool-state-both-roots",
            Code::ToolStateRootsDisagree => "tool-state-roots-disagree",
            Code::ToolStateLegacy => "tool-state-legacy",
            Code::AdoptionMissing => "adoption-missing",
            Code::AdoptionInvalid => "adoption-invalid",
            Code::Unresolved => "unresolved",
            Code::ResolvedLegacyAiRules => "resolved-legacy-ai-rules",
            Code::AgentsDrift => "agents-drift",
            Code::ManifestVersionMismatch => "manifest-version-mismatch",
            Code::WorkspaceAiRulesMethodTree => "workspace-ai-rules-method-tree",
            Code::A2cTooOld => "a2c-too-old",
            Code::LockMissingVersion => "lock-missing-version",
            Code::LockUnusedEntry => "lock-unused-entry",
            Code::LockInvalid => "lock-invalid",
            Code::StoreTreeModified => "store-tree-modified",
            Code::CacheTreeModified => "cache-tree-modified",
            Code::MigrationPending => "migration-pending",
            Code::StoreReceiptMissing => "store-receipt-missing",
            Code::StoreReceiptLockMismatch => "store-receipt-lock-mismatch",
            Code::StoreOrphanVersion => "store-orphan-version",
            Code::StoreStagingLeftover => "store-staging-leftover",
            Code::StoreStaleLock => "store-stale-lock",
            Code::PointerStale => "pointer-stale",
            Code::StoreTracked => "store-tracked",
            Code::UnsafeLink => "unsafe-link",
            Code::LocalTracked => "local-tracked",
            Code::TrackingUnknown => "tracking-unknown",
            Code::DeliveryNone => "delivery-none",
            Code::DeliveryServedByWorkspace => "delivery-served-by-workspace",
            Code::NestedMarkerInvalid => "nested-marker-invalid",
            Code::DeliveryTreeMissing => "delivery-tree-missing",
            Code::DeliveryNotSubmodule => "delivery-not-submodule",
            Code::DeliveryNotCheckedOut => "delivery-not-checked-out",
            Code::DeliveryRefMismatch => "delivery-ref-mismatch",
            Code::MemberMissing => "member-missing",
            Code::VersionYanked => "version-yanked",
        }
    }

    pub fn severity(self) -> Severity {
        match self {
            Code::ToolStateBothRoots => Severity::Warn,
            Code::ToolStateRootsDisagree => Severity::Fail,
            Code::ToolStateLegacy => Severity::Info,
            Code::AdoptionMissing => Severity::Fail,
            Code::AdoptionInvalid => Severity::Fail,
            Code::Unresolved => Severity::Fail,
            Code::ResolvedLegacyAiRules => Severity::Info,
            Code::AgentsDrift => Severity::Warn,
            Code::ManifestVersionMismatch => Severity::Fail,
            Code::WorkspaceAiRulesMethodTree => Severity::Warn,
            Code::A2cTooOld => Severity::Fail,
            Code::LockMissingVersion => Severity::Fail,
            Code::LockUnusedEntry => Severity::Info,
            Code::LockInvalid => Severity::Fail,
            Code::StoreTreeModified => Severity::Fail,
            Code::CacheTreeModified => Severity::Fail,
            Code::MigrationPending => Severity::Warn,
            Code::StoreReceiptMissing => Severity::Warn,
            Code::StoreReceiptLockMismatch => Severity::Fail,
            Code::StoreOrphanVersion => Severity::Info,
            Code::StoreStagingLeftover => Severity::Warn,
            Code::StoreStaleLock => Severity::Warn,
            Code::PointerStale => Severity::Warn,
            Code::StoreTracked => Severity::Fail,
            Code::UnsafeLink => Severity::Fail,
            Code::LocalTracked => Severity::Warn,
            Code::TrackingUnknown => Severity::Fail,
            Code::DeliveryNone => Severity::Info,
            Code::DeliveryServedByWorkspace => Severity::Info,
            Code::NestedMarkerInvalid => Severity::Fail,
            Code::DeliveryTreeMissing => Severity::Fail,
            Code::DeliveryNotSubmodule => Severity::Fail,
            Code::DeliveryNotCheckedOut => Severity::Fail,
            Code::DeliveryRefMismatch => Severity::Fail,
            Code::MemberMissing => Severity::Fail,
            Code::VersionYanked => Severity::Warn,
        }
    }

    /// Its section in docs/doctor.md (`### \`code\` (severity)`).
    pub fn anchor(self) -> String {
        format!("docs/doctor.md#{}-{}", self.as_str(), self.severity().as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

// Ordered by name, so that findings sort as they always have.
impl PartialOrd for Code {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Code {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// What `a2c doctor` found; serialized as `doctor --json` (docs/json/doctor.schema.json).
#[derive(Debug, Serialize)]
pub struct Report {
    pub workspace: Option<PathBuf>,
    pub findings: Vec<Finding>,
    /// The findings counted by severity.
    pub summary: Summary,
}

/// How many findings of each severity a report holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub fail: usize,
    pub warn: usize,
    pub info: usize,
}

impl Report {
    /// Adds findings made outside the local checks (the registry's), in the report's order,
    /// and counts them.
    pub fn add(&mut self, findings: Vec<Finding>) {
        self.findings.extend(findings);
        sort(&mut self.findings);
        self.summary = summary(&self.findings);
    }
}

fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| (a.severity, &a.repo, &a.version, a.code).cmp(&(b.severity, &b.repo, &b.version, b.code)));
}

fn summary(findings: &[Finding]) -> Summary {
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    Summary {
        fail: count(Severity::Fail),
        warn: count(Severity::Warn),
        info: count(Severity::Info),
    }
}

/// Options of a diagnosis.
#[derive(Debug, Clone, Copy, Default)]
pub struct DoctorOptions {
    /// Re-hash every installed tree (in parallel) against its receipt and the lock.
    pub deep: bool,
    pub jobs: usize,
}

/// Diagnoses the workspace (every member) or the single repository; `settings` say where the
/// bundle cache is.
pub fn diagnose(
    ctx: &Context,
    options: DoctorOptions,
    settings: &crate::store::Settings,
) -> Result<Report, crate::workspace::WorkspaceError> {
    let mut findings = checks::run(ctx, options, settings)?;
    sort(&mut findings);
    let summary = summary(&findings);
    Ok(Report {
        workspace: ctx.workspace.as_ref().map(|w| w.root.clone()),
        findings,
        summary,
    })
}

pub fn finding(
    code: Code,
    repo: Option<PathBuf>,
    version: Option<MethodVersion>,
    message: String,
    hint: impl Into<String>,
) -> Finding {
    Finding {
        code,
        severity: code.severity(),
        repo,
        version,
        message,
        hint: hint.into(),
    }
}
