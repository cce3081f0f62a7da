//! What the server serves: the workspace W it was started in (or the one repository, outside
//! a superbuild), its repositories, each with its write contract and the method asset root
//! docs/concepts.md ("Resolution") resolves for it — read again on each request, so that a migrate or an install
//! is seen as soon as it is made.

use std::path::{Path, PathBuf};

use crate::util::version::MethodVersion;
use crate::workspace::{Context, Member};

/// Where the server was started and what it serves.
#[derive(Debug, Clone)]
pub struct Scope {
    /// W, or R outside a superbuild.
    pub root: PathBuf,
    /// Whether `root` is a superbuild (else one repository).
    pub superbuild: bool,
    /// The repository the server was started in, relative to `root` (its prompts are listed
    /// under their own names), when it was started inside one.
    pub home: Option<String>,
}

/// One repository served, as a request sees it.
#[derive(Debug, Clone)]
pub struct Repo {
    /// Its path relative to the root (`.` for the root itself): the `{repo}` of every URI.
    pub relative: String,
    pub path: PathBuf,
    /// Its write contract, or why it has none.
    pub contract: Result<MethodVersion, String>,
    /// The method asset root of its write contract (docs/concepts.md, "Resolution"), or the finding that explains
    /// why there is none (never another version's tree).
    pub tree: Result<PathBuf, String>,
}

impl Scope {
    /// The scope of a server started in `start` (`--workspace` as `workspace`).
    pub fn discover(start: &Path, workspace: Option<&Path>) -> anyhow::Result<Self> {
        let ctx = Context::discover(start, workspace)?;
        let home_of = |root: &Path| {
            ctx.repo
                .as_deref()
                .and_then(|r| r.strip_prefix(root).ok())
                .map(|rel| match rel.as_os_str().is_empty() {
                    true => ".".to_string(),
                    false => rel.to_string_lossy().replace('\\', "/"),
                })
        };
        match (&ctx.workspace, &ctx.repo) {
            (Some(ws), _) => Ok(Self {
                home: home_of(&ws.root),
                root: ws.root.clone(),
                superbuild: true,
            }),
            (None, Some(repo)) => Ok(Self {
                root: repo.clone(),
                superbuild: false,
                home: Some(".".into()),
            }),
            (None, None) => anyhow::bail!(
                "`{}` is neither in a superbuild nor in a git repository: start `a2c mcp` in the repository (or superbuild) an agent works in",
                start.display()
            ),
        }
    }

    /// Every repository served, in order, read now.
    pub fn repos(&self) -> anyhow::Result<Vec<Repo>> {
        let workspace = self.superbuild.then_some(self.root.as_path());
        let members: Vec<Member> = match self.superbuild {
            true => Context::discover(&self.root, Some(&self.root))?.members()?.to_vec(),
            false => vec![Member::read(self.root.clone(), ".".into())],
        };
        Ok(members.iter().map(|m| repo(m, workspace)).collect())
    }

    /// The repository `relative` names, read now; `None` when it is not served.
    pub fn repo(&self, relative: &str) -> anyhow::Result<Option<Repo>> {
        Ok(self.repos()?.into_iter().find(|r| r.relative == relative))
    }
}

fn repo(m: &Member, workspace: Option<&Path>) -> Repo {
    let contract = m
        .record
        .as_ref()
        .map(|r| r.tool_version.clone())
        .map_err(|e| e.to_string());
    let tree = match &contract {
        Ok(v) => crate::workspace::resolve::resolve(&m.path, workspace, v)
            .map(|r| r.root)
            .map_err(|e| format!("{e}; `a2c install` installs {v}")),
        Err(e) => Err(format!("no write contract: {e}")),
    };
    Repo {
        relative: m.relative.clone(),
        path: m.path.clone(),
        contract,
        tree,
    }
}
