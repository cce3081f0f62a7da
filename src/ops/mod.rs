//! Operations: the one library function behind each command that spans several domain modules
//! (workspace → lock/registry → store). They return data; the CLI renders it. This file is
//! their list and what they share, re-exported: the errors (`error`), what the members pin
//! (`pins`), the workspace's configuration as operations read it (`config`).

pub mod agents;
pub mod config;
pub mod error;
pub mod gc;
pub mod install;
pub mod list;
pub mod lock;
pub mod migrate;
pub mod pins;
pub mod places;
pub mod registries;
pub mod resolve;
pub mod self_update;
pub mod session;
pub mod vendor;

pub use crate::util::paths::display_under;
pub use crate::util::version::join_versions;
pub use config::{REPO_CONFIG, cache, lock_path, registry_config, registry_dir, store, trusted_keys};
pub use error::OpsError;
pub use install::{from_dir, install_context, plan_missing};
pub use lock::relative_sources;
pub use pins::{Needs, git_delivery, needing, needs, pinned};
pub use places::{Alternatives, alternatives, configured_registries};
pub use registries::{
    ConfiguredRegistry, check_published, network, no_registry, read_index, read_index_for, read_indexes, record_serial,
    registries, sources, with_members,
};
pub use session::{Flags, Session};
