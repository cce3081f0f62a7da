//! Named points of the install and migrate pipelines where a test build can pause, abort or
//! fail, to prove that a crash or an error at that point leaves a valid state. Compiled to nothing without the
//! `test-hooks` feature.

/// Install points, in pipeline order.
pub const AFTER_DOWNLOAD: &str = "after-download";
pub const MID_EXTRACTION: &str = "mid-extraction";
pub const AFTER_RECEIPT: &str = "after-receipt";
pub const BEFORE_RENAME: &str = "before-rename";
pub const AFTER_RENAME: &str = "after-rename";

/// Migrate points.
pub const MIGRATE_AFTER_INSTALL: &str = "migrate-after-install";
pub const MIGRATE_MID_MOVES: &str = "migrate-mid-moves";
pub const MIGRATE_BEFORE_COMMIT: &str = "migrate-before-commit";
pub const MIGRATE_BETWEEN_MEMBERS: &str = "migrate-between-members";
/// Restoring a migration's snapshot (a failure here leaves the journal in place).
pub const MIGRATE_RESTORE: &str = "migrate-restore";
/// `a2c mcp`: before a tool's child command starts (requests held in flight).
pub const MCP_COMMAND: &str = "mcp-command";
/// `doctor --deep`: before the installed trees are hashed (a long doctor to cancel).
pub const DOCTOR_DEEP: &str = "doctor-deep";
/// A secret's prompt is on the screen, its line not yet read (a test types at that instant).
pub const SECRET_PROMPTED: &str = "secret-prompted";

/// An injected failure at `name` when `A2C_TEST_HOOK` is `fail:<name>` (test builds only): the
/// caller treats it as any other error, so its rollback runs.
#[cfg(feature = "test-hooks")]
pub fn fail_point(name: &str) -> Result<(), String> {
    match crate::env::test_hook().as_deref().and_then(|h| h.split_once(':')) {
        Some(("fail", p)) if p == name => Err(format!("injected failure at {name}")),
        _ => {
            point(name);
            Ok(())
        }
    }
}

#[cfg(not(feature = "test-hooks"))]
#[inline(always)]
pub fn fail_point(_name: &str) -> Result<(), String> {
    Ok(())
}

/// Pauses (60 s, long enough for a test to kill the process) or aborts at `name` when
/// `A2C_TEST_HOOK` asks for it.
#[cfg(feature = "test-hooks")]
pub fn point(name: &str) {
    let Some(hook) = crate::env::test_hook() else { return };
    match hook.split_once(':') {
        Some(("pause", p)) if p == name => {
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
        // `pause-until:<point>:<file>`: wait (60 s at most) until the test creates `file`.
        Some(("pause-until", rest)) if rest.split_once(':').is_some_and(|(p, _)| p == name) => {
            let file = rest.split_once(':').map(|(_, f)| f.to_string()).unwrap_or_default();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while !std::path::Path::new(&file).exists() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        Some(("abort", p)) if p == name => std::process::abort(),
        // A panic unwinds: guards (the migration's transaction) must still roll back.
        Some(("panic", p)) if p == name => panic!("test hook: injected panic at {name}"),
        _ => {}
    }
}

#[cfg(not(feature = "test-hooks"))]
#[inline(always)]
pub fn point(_name: &str) {}
