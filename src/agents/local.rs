//! A user's own additions to and removals from the tracked set of runtimes, for this machine
//! only: `ROOT/.tools_local/esys/a2c/agents.yaml` (ROOT: the superbuild's root) — local state
//! git never tracks, so it never becomes the repository's intent, and the marker's `agents:`
//! is never rewritten for one person's editor.
//!
//! ```yaml
//! add: [cursor]
//! drop: [claude]
//! ```

use std::path::Path;

use super::AgentsError;

/// The file, relative to the root.
pub const LOCAL: &str = ".tools_local/esys/a2c/agents.yaml";

/// This machine's changes to the tracked set.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Local {
    /// Runtimes projected here besides the tracked ones.
    pub add: Vec<String>,
    /// Tracked runtimes not projected here.
    pub drop: Vec<String>,
}

impl Local {
    /// The file under `root`, checked: each list a set of known ids (as `agents:` is), no id in
    /// both; none when it is absent.
    pub fn read(root: &Path) -> Result<Self, AgentsError> {
        let path = root.join(LOCAL);
        let Some(text) = crate::util::contain::read_config(&path)? else {
            return Ok(Self::default());
        };
        let bad = |reason: String| AgentsError::BadLocal {
            path: path.clone(),
            reason,
        };
        let entries = crate::util::yaml::parse_flat_mapping(&text).map_err(|e| bad(e.to_string()))?;
        let mut local = Self::default();
        for entry in entries {
            let items: Vec<String> = match &entry.value {
                crate::util::yaml::Value::List(items) => items.iter().map(|s| s.text.clone()).collect(),
                crate::util::yaml::Value::Scalar(s) if s.is_null() => Vec::new(),
                _ => {
                    return Err(bad(format!(
                        "line {}: `{}` is a list of runtime ids",
                        entry.line, entry.key
                    )));
                }
            };
            let ids =
                super::parse_ids(&items).map_err(|why| bad(format!("line {}: `{}`: {why}", entry.line, entry.key)))?;
            match entry.key.as_str() {
                "add" => local.add = ids,
                "drop" => local.drop = ids,
                other => {
                    return Err(bad(format!(
                        "line {}: `{}` is not a key of this file (add, drop)",
                        entry.line,
                        crate::util::text::visible(other)
                    )));
                }
            }
        }
        if let Some(both) = local.add.iter().find(|id| local.drop.contains(id)) {
            return Err(bad(format!("`{both}` is both added and dropped")));
        }
        Ok(local)
    }

    /// The runtimes projected on this machine: `tracked` with these changes, sorted.
    pub fn apply(&self, tracked: &[String]) -> Vec<String> {
        let mut ids: Vec<String> = tracked
            .iter()
            .chain(&self.add)
            .filter(|id| !self.drop.contains(id))
            .cloned()
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.drop.is_empty()
    }
}

/// `agents:` of a single repository's `config.yaml` (the runtimes its method is projected for,
/// as a superbuild's marker names them): a set of runtime ids, checked; empty without it.
pub fn repo_intent(path: &Path) -> Result<Vec<String>, AgentsError> {
    let bad = |reason: String| AgentsError::BadIntent {
        path: path.to_path_buf(),
        reason,
    };
    let text = crate::util::contain::read_config(path)?.unwrap_or_default();
    let Some((line, snippet)) = crate::util::yaml::top_level_entry(&text, "agents") else {
        return Ok(Vec::new());
    };
    let entries = crate::util::yaml::parse_flat_mapping(&snippet).map_err(|e| bad(format!("line {line}: {e}")))?;
    let items: Vec<String> = match entries.into_iter().next().map(|e| e.value) {
        Some(crate::util::yaml::Value::List(items)) => items.into_iter().map(|i| i.text).collect(),
        Some(crate::util::yaml::Value::Scalar(s)) if s.is_null() => Vec::new(),
        _ => return Err(bad(format!("line {line}: `agents` is a list of runtime ids"))),
    };
    super::parse_ids(&items).map_err(|why| bad(format!("line {line}: `agents`: {why}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machines_changes_apply_to_the_tracked_set() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let local = Local {
            add: s(&["cursor"]),
            drop: s(&["claude"]),
        };
        assert_eq!(local.apply(&s(&["claude", "codex"])), s(&["codex", "cursor"]));
        assert_eq!(local.apply(&[]), s(&["cursor"]));
        assert_eq!(Local::default().apply(&s(&["codex"])), s(&["codex"]));
    }
}
