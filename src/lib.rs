//! `a2c` installs pinned versions of A2C method assets side by side, verified.
//!
//! The library is silent: it never prints. Commands in [`cli`] call one library function each
//! and render the result. See `docs/architecture.md` for the codemap.

pub mod archive;
pub mod cli;
pub mod doctor;
pub mod env;
pub mod lock;
pub mod mcp;
pub mod method;
pub mod migrate;
pub mod net;
pub mod ops;
pub mod registry;
pub mod store;
pub mod testhook;
pub mod util;
pub mod workspace;

/// The version of this `a2c` build.
pub const A2C_VERSION: &str = env!("CARGO_PKG_VERSION");
/// `--version`: the version, and the commit and its date when built from git.
pub const LONG_VERSION: &str = env!("A2C_LONG_VERSION");
