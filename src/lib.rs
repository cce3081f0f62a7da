//! `a2c` installs pinned versions of A2C method assets side by side, verified.
//!
//! The library is silent: it never prints. Commands in [`cli`] call one library function each
//! and render the result. See `docs/architecture.md` for the codemap.
//!
//! # Discovery and resolution, for other tools
//!
//! A tool that needs a repository's method links this library instead of re-implementing
//! discovery: [`workspace::Context::discover`] finds the repository R and its superbuild W from
//! any directory, as every a2c command does, and [`ops::resolve::resolve`] gives the method
//! asset root of R's write contract (or of another version, for reading only), the rule that
//! found it, or why none did. This example adopts a repository at 1.4.0 and resolves it —
//! nothing is installed, so the resolution names what is missing:
//!
//! ```
//! # fn main() -> anyhow::Result<()> {
//! let dir = tempfile::tempdir()?;
//! let repo = dir.path().join("app");
//! std::fs::create_dir_all(repo.join(".git"))?; // a repository (what `git init` leaves)
//! std::fs::create_dir_all(repo.join(".tools/esys/a2c"))?;
//! std::fs::write(repo.join(".tools/esys/a2c/adoption.yaml"), "schema_version: 2\ntool_version: 1.4.0\n")?;
//!
//! let ctx = a2c::workspace::Context::discover(&repo, None)?;
//! let resolution = a2c::ops::resolve::resolve(&ctx, None)?;
//! assert_eq!(resolution.write_contract.map(|v| v.to_string()).as_deref(), Some("1.4.0"));
//! match (&resolution.root, &resolution.failure) {
//!     (Some(root), _) => println!("the method of 1.4.0 is at {}", root.display()),
//!     (None, Some(why)) => println!("not installed: {why}"), // `a2c install` fixes it
//!     (None, None) => unreachable!("a resolution has a root or a reason"),
//! }
//! assert!(resolution.root.is_none() && resolution.failure.is_some());
//! # Ok(())
//! # }
//! ```

pub mod agents;
pub mod archive;
pub mod cli;
pub mod doctor;
pub mod env;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod lock;
pub mod mcp;
pub mod method;
pub mod net;
pub mod ops;
pub mod registry;
pub mod relocate;
pub mod store;
pub mod testhook;
pub mod util;
pub mod workspace;

/// The version of this `a2c` build.
pub const A2C_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The version of every `--json` document's shape (its `schema` key; docs/json.md), the same
/// in the documents `a2c mcp` answers with.
pub const JSON_SCHEMA: u64 = 1;
/// `--version`: the version, and the commit and its date when built from git.
pub const LONG_VERSION: &str = env!("A2C_LONG_VERSION");
