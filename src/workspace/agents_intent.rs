//! Which agent runtimes a2c projects the method for here: the repository's intent (the
//! marker's `agents:` in a superbuild, else `agents:` of the repository's `config.yaml`) with
//! this machine's changes (`ROOT/.tools_local/esys/a2c/agents.yaml`, [`crate::agents::Local`]).

use std::path::{Path, PathBuf};

use super::Context;
use crate::agents::{AgentsError, LOCAL, Local};
use crate::util::paths::JoinRel as _;

/// A single repository's own settings file in its tool state root (`trusted_keys:`,
/// `registry:`, `agents:`); the rest of it belongs to the method.
pub const REPO_CONFIG: &str = "config.yaml";

/// The runtimes named, this machine's changes, and the set they make here.
#[derive(Debug, Clone, Default)]
pub struct Runtimes {
    pub tracked: Vec<String>,
    pub local: Local,
    pub ids: Vec<String>,
}

impl Context {
    /// The file this context keeps its settings in: the workspace marker in a superbuild, else
    /// the repository's `config.yaml` in its tool state root (`None` outside both).
    pub fn config_file(&self) -> Option<PathBuf> {
        match &self.workspace {
            Some(ws) => Some(ws.root.join_rel(super::marker::MARKER_PATH)),
            None => self
                .repo
                .as_deref()
                .and_then(|r| super::ToolStateRoot::detect(r).ok().flatten())
                .map(|state| state.dir.join(REPO_CONFIG)),
        }
    }

    /// The root whose intent and local state name the runtimes: W, else the repository.
    pub fn agents_root(&self) -> Option<&Path> {
        match &self.workspace {
            Some(ws) => Some(&ws.root),
            None => self.repo.as_deref(),
        }
    }

    fn tracked_runtimes(&self) -> Result<Vec<String>, AgentsError> {
        if let Some(ws) = &self.workspace {
            return Ok(ws.marker.agents.clone());
        }
        match self.config_file() {
            Some(config) => crate::agents::repo_intent(&config),
            None => Ok(Vec::new()),
        }
    }

    /// The runtimes the repository names, this machine's changes, and the set projected here.
    pub fn agent_runtimes(&self) -> Result<Runtimes, AgentsError> {
        let Some(root) = self.agents_root() else {
            return Ok(Runtimes::default());
        };
        let tracked = self.tracked_runtimes()?;
        let local = Local::read(root)?;
        let ids = local.apply(&tracked);
        Ok(Runtimes { tracked, local, ids })
    }

    /// Whether anything is to be projected or kept in step here: the repository names
    /// runtimes (a broken `agents:` counts: it is then said), or this machine's file exists —
    /// one look at the root in a superbuild, none per member.
    pub fn projects_agents(&self) -> bool {
        let local = || {
            self.agents_root()
                .is_some_and(|r| std::fs::symlink_metadata(r.join(LOCAL)).is_ok())
        };
        match &self.workspace {
            Some(ws) => !ws.marker.agents.is_empty() || local(),
            None => local() || self.tracked_runtimes().map_or(true, |t| !t.is_empty()),
        }
    }
}
