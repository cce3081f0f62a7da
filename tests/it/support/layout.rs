//! The superbuild layout's paths, relative to the test's temp root, so that a test names what it
//! reads (`layout::lock("w")`) instead of spelling the layout out: one place to change it.

/// The lock of the superbuild (or repository) at `ws`.
pub fn lock(ws: &str) -> String {
    format!("{ws}/.tools/esys/a2c/a2c.lock")
}

/// The store: every installed version of the method, below `ws`.
pub fn store(ws: &str) -> String {
    format!("{ws}/.tools_local/esys/a2c")
}

/// The installed tree of `version`.
pub fn installed(ws: &str, version: &str) -> String {
    format!("{}/{version}", store(ws))
}

/// A file of the installed tree of `version`.
pub fn installed_file(ws: &str, version: &str, file: &str) -> String {
    format!("{}/{file}", installed(ws, version))
}

/// The store's staging directory (trees being extracted).
pub fn staging(ws: &str) -> String {
    format!("{}/.staging", store(ws))
}

/// The store's lock file (one writer at a time).
pub fn store_lock(ws: &str) -> String {
    format!("{}/.lock", store(ws))
}

/// A member's pointer to its workspace's store.
pub fn pointer(ws: &str) -> String {
    format!("{}/workspace.yaml", store(ws))
}
