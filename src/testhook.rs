//! Named points of the install pipeline where a test build can pause or abort the process, to
//! prove that a crash at that point leaves a valid state. Compiled to nothing without the
//! `test-hooks` feature.

/// Install points, in pipeline order.
pub const MID_EXTRACTION: &str = "mid-extraction";
pub const AFTER_RECEIPT: &str = "after-receipt";
pub const BEFORE_RENAME: &str = "before-rename";
pub const AFTER_RENAME: &str = "after-rename";

/// Pauses (60 s, long enough for a test to kill the process) or aborts at `name` when
/// `A2C_TEST_HOOK` asks for it.
#[cfg(feature = "test-hooks")]
pub fn point(name: &str) {
    let Some(hook) = crate::env::test_hook() else { return };
    match hook.split_once(':') {
        Some(("pause", p)) if p == name => {
            eprintln!("test hook: paused at {name}");
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
        Some(("abort", p)) if p == name => std::process::abort(),
        _ => {}
    }
}

#[cfg(not(feature = "test-hooks"))]
#[inline(always)]
pub fn point(_name: &str) {}
