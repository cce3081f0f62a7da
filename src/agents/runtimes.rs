//! The agent runtimes a2c projects for — one entry each: its id, the folder it reads skills
//! from, and the layout of its rules and prompts — and `agents:` read as a set of their ids.

use super::{Form, Kind, Layout, PREFIX};

/// A runtime a2c projects for: its id (what `agents:` names) and the folder, relative to R,
/// where it reads skills.
#[derive(Debug, PartialEq, Eq)]
pub struct Runtime {
    pub id: &'static str,
    /// The folder of its skills, relative to the repository.
    pub skills: &'static str,
    /// Where it reads instructions (the method's `rules/`), when it reads them from files of
    /// their own in the repository.
    pub rules: Option<Layout>,
    /// Where it reads prompts or commands (the method's `prompts/`), likewise.
    pub prompts: Option<Layout>,
    /// Who reads that folder (for `a2c agents list` and the docs).
    pub reader: &'static str,
    /// Its MCP server entry for `a2c mcp`: the file it is read from and the entry
    /// (`a2c agents mcp-config`); `None` for a layout that is no MCP client.
    pub mcp: Option<(&'static str, &'static str)>,
}

const MCP_JSON: &str = r#"{ "mcpServers": { "a2c": { "command": "a2c", "args": ["mcp"] } } }"#;

/// Every runtime a2c projects for: one line each. Several read the shared Agent Skills layout
/// (`.agents/skills/`), which is then written once.
pub const RUNTIMES: &[Runtime] = &[
    Runtime {
        id: "agent-skills",
        skills: ".agents/skills",
        rules: None,
        prompts: None,
        reader: "the Agent Skills layout (Codex, Copilot, Gemini CLI, Cursor, opencode, …)",
        mcp: None,
    },
    Runtime {
        id: "claude",
        skills: ".claude/skills",
        rules: Some(Layout {
            folder: ".claude/rules",
            suffix: ".md",
            form: Form::ClaudeRule,
        }),
        prompts: Some(Layout {
            folder: ".claude/commands",
            suffix: ".md",
            form: Form::Described,
        }),
        reader: "Claude Code",
        mcp: Some((".mcp.json (the repository's root)", MCP_JSON)),
    },
    Runtime {
        id: "codex",
        skills: ".agents/skills",
        // Codex reads instructions from AGENTS.md (the team's, committed) and prompts from
        // ~/.codex/prompts (the user's, for every repository): no file of its own per repository.
        rules: None,
        prompts: None,
        reader: "OpenAI Codex (the Agent Skills layout)",
        mcp: Some((
            "~/.codex/config.toml",
            "[mcp_servers.a2c]\ncommand = \"a2c\"\nargs = [\"mcp\"]",
        )),
    },
    Runtime {
        id: "copilot",
        skills: ".agents/skills",
        rules: Some(Layout {
            folder: ".github/instructions",
            suffix: ".instructions.md",
            form: Form::CopilotInstructions,
        }),
        prompts: Some(Layout {
            folder: ".github/prompts",
            suffix: ".prompt.md",
            form: Form::Described,
        }),
        reader: "GitHub Copilot (the Agent Skills layout)",
        mcp: Some((
            ".vscode/mcp.json (VS Code's agent mode)",
            r#"{ "servers": { "a2c": { "type": "stdio", "command": "a2c", "args": ["mcp"] } } }"#,
        )),
    },
    Runtime {
        id: "cursor",
        skills: ".agents/skills",
        rules: Some(Layout {
            folder: ".cursor/rules",
            suffix: ".mdc",
            form: Form::CursorRule,
        }),
        prompts: Some(Layout {
            folder: ".cursor/commands",
            suffix: ".md",
            form: Form::Plain,
        }),
        reader: "Cursor (the Agent Skills layout)",
        mcp: Some((".cursor/mcp.json (the repository)", MCP_JSON)),
    },
];

/// `agents:` as a set: each item a known runtime id, none twice, sorted; `auto` and `none` are
/// command-line words, never stored intent. `Err(why)` names the item.
pub fn parse_ids(items: &[String]) -> Result<Vec<String>, String> {
    let mut ids: Vec<String> = Vec::new();
    for item in items {
        if item == "auto" || item == "none" {
            return Err(format!(
                "`{item}` is not a runtime: `agents:` lists the runtimes this repository supports (empty: none)"
            ));
        }
        if !RUNTIMES.iter().any(|r| r.id == item) {
            return Err(format!(
                "`{}` is not a runtime a2c projects for (known: {})",
                crate::util::text::visible(item),
                RUNTIMES.iter().map(|r| r.id).collect::<Vec<_>>().join(", ")
            ));
        }
        if ids.contains(item) {
            return Err(format!("`{item}` is listed twice: `agents:` is a set"));
        }
        ids.push(item.clone());
    }
    ids.sort();
    Ok(ids)
}

/// The skills folders of `ids` (relative to R), each once, sorted.
pub fn folders(ids: &[String]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = selected(ids).map(|r| r.skills).collect();
    out.sort();
    out.dedup();
    out
}

pub(super) fn selected(ids: &[String]) -> impl Iterator<Item = &'static Runtime> + '_ {
    RUNTIMES.iter().filter(|r| ids.iter().any(|id| id == r.id))
}

impl Runtime {
    /// Its layout for documents of `kind`.
    pub fn layout(&self, kind: Kind) -> Option<&Layout> {
        match kind {
            Kind::Rule => self.rules.as_ref(),
            Kind::Prompt => self.prompts.as_ref(),
        }
    }

    /// Every folder it reads a2c's projection from (skills, rules, prompts).
    pub(super) fn folders(&self) -> impl Iterator<Item = &'static str> + '_ {
        [
            Some(self.skills),
            self.rules.as_ref().map(|l| l.folder),
            self.prompts.as_ref().map(|l| l.folder),
        ]
        .into_iter()
        .flatten()
    }
}

/// The projected file of document `name` in `layout`, relative to R.
pub(super) fn document_path(layout: &Layout, name: &str) -> String {
    format!("{}/{PREFIX}{name}{}", layout.folder, layout.suffix)
}
