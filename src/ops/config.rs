//! The workspace's configuration as operations read it: the lock's path, the store, the bundle
//! cache, the configured file registry, the repository config (`config.yaml`) and its trusted
//! keys.

use std::path::{Path, PathBuf};

use super::{OpsError, Session, registries};
use crate::workspace::Context;

/// Where the lockfile lives (see [`Context::lock_path`]).
pub fn lock_path(ctx: &Context) -> Result<PathBuf, OpsError> {
    Ok(ctx.lock_path()?)
}

/// The store of this context, checked (see [`crate::store::guard`]).
pub fn store(ctx: &Context) -> Result<crate::store::Store, OpsError> {
    Ok(crate::store::guard(ctx.store_owner()?)?)
}

/// The configured file registry's directory, if the registry is a directory.
pub fn registry_dir(session: &Session, ctx: &Context) -> Option<PathBuf> {
    registries(session, ctx, None)
        .ok()?
        .into_iter()
        .find_map(|r| r.location.local_dir().map(Path::to_path_buf))
}

/// The bundle cache: `A2C_CACHE_DIR`, the XDG cache, `~/.cache/a2c`, else `<store>/.cache`.
/// An existing cache that another user owns or can write is refused.
pub fn cache(session: &Session, store: &crate::store::Store) -> Result<crate::store::Cache, OpsError> {
    Ok(crate::store::Cache::for_store(store, &session.store)?)
}

/// The public keys pinned for this context: the marker's `trusted_keys:` in a superbuild,
/// else the repository's `{tool state root}/config.yaml` `trusted_keys:`.
pub fn trusted_keys(ctx: &Context) -> Vec<String> {
    match &ctx.workspace {
        Some(w) => w.marker.trusted_keys.clone(),
        None => ctx
            .repo
            .as_deref()
            .and_then(|r| crate::workspace::ToolStateRoot::detect(r).ok().flatten())
            .map(|state| repo_trusted_keys(&state.dir.join("config.yaml")))
            .unwrap_or_default(),
    }
}

/// A top-level scalar `key:` of a repository's `config.yaml` (the rest of the file is the
/// method's, so only that line is read).
pub(super) fn repo_config_value(path: &Path, key: &str) -> Option<String> {
    let text = crate::util::contain::read_config(path).ok()??;
    let line = text.lines().find(|l| l.starts_with(&format!("{key}:")))?;
    let entries = crate::util::yaml::parse_flat_mapping(line).ok()?;
    entries.into_iter().find_map(|e| match e.value {
        crate::util::yaml::Value::Scalar(s) if !s.is_null() && !s.text.trim().is_empty() => Some(s.text),
        _ => None,
    })
}

/// `trusted_keys:` of a repository's `config.yaml`. The file belongs to the method (it may hold
/// anything else, nested), so only that top-level entry is read: a line `trusted_keys:` at
/// column 0 and its list (inline, or `- item` lines below it).
fn repo_trusted_keys(path: &Path) -> Vec<String> {
    let Ok(Some(text)) = crate::util::contain::read_config(path) else {
        return Vec::new();
    };
    let Some((_, snippet)) = crate::util::yaml::top_level_entry(&text, "trusted_keys") else {
        return Vec::new();
    };
    match crate::util::yaml::parse_flat_mapping(&snippet) {
        Ok(entries) => entries
            .into_iter()
            .filter_map(|e| match e.value {
                crate::util::yaml::Value::List(items) => Some(items.into_iter().map(|i| i.text).collect::<Vec<_>>()),
                _ => None,
            })
            .flatten()
            .collect(),
        // Unreadable pins must not silently turn verification off: a key that cannot be
        // parsed is kept, and refused by the verifier with its text.
        Err(_) => vec![snippet.replace('\n', " ")],
    }
}

/// The file this context keeps its registry in: the workspace marker in a superbuild, else the
/// repository's `config.yaml` in its tool state root (`None` outside both).
pub fn registry_config(ctx: &Context) -> Option<PathBuf> {
    ctx.config_file()
}

/// A single repository's own settings file in its tool state root (`trusted_keys:`,
/// `registry:`, `agents:`); the rest of it belongs to the method.
pub const REPO_CONFIG: &str = crate::workspace::REPO_CONFIG;
