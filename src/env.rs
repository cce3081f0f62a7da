//! Every environment variable `a2c` reads, documented and read only here.
//!
//! | variable | meaning |
//! |---|---|
//! | `NO_COLOR` | any non-empty value disables colour (<https://no-color.org>) |
//! | `A2C_REGISTRY` | registry URL used by `a2c lock` when `--registry` is not given |
//! | `A2C_CACHE_DIR` | the content-addressed bundle cache (default: `$XDG_CACHE_HOME/a2c`, else `~/.cache/a2c`) |
//! | `A2C_MAX_UNPACKED_BYTES` | extraction limit on total unpacked bytes (default 1 GiB) |
//! | `A2C_MAX_ENTRIES` | extraction limit on archive entries (default 100,000) |
//! | `A2C_LOCK_TIMEOUT` | seconds to wait for the store lock (default 300) |
//! | `A2C_TEST_HOOK` | test builds only (feature `test-hooks`): `pause:<point>` or `abort:<point>` |

use std::ffi::OsString;
use std::path::PathBuf;

/// Names of the variables, so that messages can name them.
pub const NO_COLOR: &str = "NO_COLOR";
pub const A2C_REGISTRY: &str = "A2C_REGISTRY";
pub const A2C_CACHE_DIR: &str = "A2C_CACHE_DIR";
pub const A2C_MAX_UNPACKED_BYTES: &str = "A2C_MAX_UNPACKED_BYTES";
pub const A2C_MAX_ENTRIES: &str = "A2C_MAX_ENTRIES";
pub const A2C_LOCK_TIMEOUT: &str = "A2C_LOCK_TIMEOUT";
pub const A2C_TEST_HOOK: &str = "A2C_TEST_HOOK";

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

fn string(name: &str) -> Option<String> {
    var(name).and_then(|v| v.into_string().ok())
}

/// `true` when `NO_COLOR` is set to a non-empty value.
pub fn no_color() -> bool {
    var(NO_COLOR).is_some()
}

/// The registry URL from `A2C_REGISTRY`, if set.
pub fn registry() -> Option<String> {
    string(A2C_REGISTRY)
}

/// The bundle cache directory: `A2C_CACHE_DIR`, else `$XDG_CACHE_HOME/a2c`, else `~/.cache/a2c`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = var(A2C_CACHE_DIR) {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = var("XDG_CACHE_HOME").map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Some(xdg.join("a2c"));
    }
    var("HOME").map(|home| PathBuf::from(home).join(".cache").join("a2c"))
}

/// A numeric variable: `Ok(None)` when unset, `Err((name, value))` when not a number.
pub fn number(name: &'static str) -> Result<Option<u64>, (&'static str, String)> {
    match string(name) {
        None => Ok(None),
        Some(raw) => raw
            .trim()
            .replace('_', "")
            .parse::<u64>()
            .map(Some)
            .map_err(|_| (name, raw)),
    }
}

/// The test hook, `pause:<point>` or `abort:<point>` (read only by test builds).
pub fn test_hook() -> Option<String> {
    string(A2C_TEST_HOOK)
}
