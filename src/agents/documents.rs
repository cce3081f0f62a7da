//! A method tree's rules (`rules/NAME.md`, instructions, optionally for some paths only) and
//! prompts (`prompts/NAME.md`), checked, and each written in the front matter a runtime reads.

use std::path::Path;

use super::AgentsError;
use super::skills::{split_front_matter, unquote};

/// What a method document is to a runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Instructions the agent follows (`rules/`).
    Rule,
    /// A prompt a user runs by name (`prompts/`).
    Prompt,
}

impl Kind {
    /// The method tree's folder of this kind.
    pub fn folder(self) -> &'static str {
        match self {
            Self::Rule => "rules",
            Self::Prompt => "prompts",
        }
    }

    /// The front matter keys a2c reads in a document of this kind (and checks).
    fn keys(self) -> &'static [&'static str] {
        match self {
            Self::Rule => &["description", "applies_to"],
            Self::Prompt => &["description"],
        }
    }
}

/// One rule or prompt of a method tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub kind: Kind,
    /// Its file's name without `.md`.
    pub name: String,
    pub description: Option<String>,
    /// The paths (globs, relative to the repository) a rule is for; empty: every path.
    pub applies_to: Vec<String>,
    /// Its text after the front matter.
    pub body: String,
}

/// The front matter a runtime reads on a projected document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Copilot's `.instructions.md`: `applyTo` (comma-separated globs, `**` for all) and
    /// `description`.
    CopilotInstructions,
    /// Cursor's `.mdc` rule: `description`, `globs` (comma-separated) and `alwaysApply`.
    CursorRule,
    /// Claude Code's `.claude/rules/`: `paths` (a list of globs), none for a rule on every path.
    ClaudeRule,
    /// A prompt file or command with its `description`, when it has one (Copilot, Claude Code).
    Described,
    /// The body alone (Cursor's commands are plain markdown).
    Plain,
}

/// Where and how a runtime reads one kind of document: its folder (relative to the
/// repository), the file name's ending after `a2c-NAME`, and the front matter it takes.
#[derive(Debug, PartialEq, Eq)]
pub struct Layout {
    pub folder: &'static str,
    pub suffix: &'static str,
    pub form: Form,
}

/// A file of `rules/` or `prompts/` that is not projected, and why.
pub type LeftOut = (std::path::PathBuf, &'static str);

/// The largest rule or prompt a2c projects (a runtime loads it into every conversation).
const MAX_DOCUMENT: u64 = 1 << 20;

/// The rules and prompts of the method tree at `tree` that a2c projects, each checked, sorted
/// by kind and name — the regular `.md` files directly in `rules/` and `prompts/` (what lies
/// deeper is material they may name, served over MCP); and the files there it leaves out,
/// with why: a name that is no projectable name (`README.md`), or more than a runtime should
/// load into every conversation. A file it projects whose front matter is broken is refused.
pub fn documents(tree: &Path) -> Result<(Vec<Document>, Vec<LeftOut>), AgentsError> {
    let mut out = Vec::new();
    let mut left = Vec::new();
    for kind in [Kind::Rule, Kind::Prompt] {
        let dir = tree.join(kind.folder());
        if !crate::util::contain::is_real_dir(&dir) {
            continue;
        }
        // Links and other non-files are the packer's and the installer's to refuse: no
        // document is read through one.
        let mut files: Vec<(String, u64)> = fs_err::read_dir(&dir)?
            .filter_map(Result::ok)
            .filter_map(|e| {
                let meta = std::fs::symlink_metadata(e.path()).ok().filter(|m| m.is_file())?;
                let name = e.file_name().to_str()?.to_string();
                name.ends_with(".md").then_some((name, meta.len()))
            })
            .collect();
        files.sort();
        for (file, size) in files {
            let path = dir.join(&file);
            let name = file.trim_end_matches(".md").to_string();
            if !super::is_skill_name(&name) {
                left.push((
                    path,
                    "its name is no projectable name (lowercase letters, digits and single hyphens)",
                ));
                continue;
            }
            if size > MAX_DOCUMENT {
                left.push((path, "it is larger than 1 MiB"));
                continue;
            }
            let bad = |reason: String| AgentsError::BadDocument {
                path: path.clone(),
                reason,
            };
            let Some(bytes) = crate::util::contain::read_capped(&path, MAX_DOCUMENT, "a method document")? else {
                continue;
            };
            let text = String::from_utf8(bytes).map_err(|_| bad("it is not UTF-8 text".into()))?;
            out.push(parse(kind, name, &text).map_err(bad)?);
        }
    }
    Ok((out, left))
}

/// A document's front matter (optional) and body, checked. `Err(why)`.
pub fn parse(kind: Kind, name: String, text: &str) -> Result<Document, String> {
    let (front, body) = match split_front_matter(text) {
        Some(parts) => parts,
        None => ("", text),
    };
    let mut doc = Document {
        kind,
        name,
        description: None,
        applies_to: Vec::new(),
        body: body.to_string(),
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut lines = front.lines().peekable();
    while let Some(line) = lines.next() {
        // Blank lines, comments, and the indented or `-` lines of a key a2c does not read.
        if line.trim().is_empty() || line.trim_start().starts_with('#') || line.starts_with([' ', '\t', '-']) {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!(
                "front matter line `{}` is no `key: value`",
                crate::util::text::visible(line)
            ));
        };
        // Other keys are other tools' (a prompt's `name` and `arguments` are `a2c mcp`'s):
        // left as they are, not projected.
        if !kind.keys().contains(&key) {
            continue;
        }
        if seen.contains(&key) {
            return Err(format!("front matter key `{key}` is given twice"));
        }
        seen.push(key);
        let value = value.trim();
        match key {
            "description" => {
                let d = unquote(value);
                if d.contains(['\n', '\r']) || d.is_empty() {
                    return Err("`description` is one non-empty line".into());
                }
                doc.description = Some(d);
            }
            _ => {
                let mut globs = Vec::new();
                if value.is_empty() {
                    while let Some(item) = lines.peek().and_then(|l| l.trim_start().strip_prefix("- ")) {
                        globs.push(unquote(item.trim()));
                        lines.next();
                    }
                } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                    globs.extend(inner.split(',').map(|g| unquote(g.trim())).filter(|g| !g.is_empty()));
                } else {
                    globs.push(unquote(value));
                }
                if globs.is_empty() {
                    return Err("`applies_to` names no path: give globs, or leave it out for every path".into());
                }
                for g in &globs {
                    check_glob(g)?;
                }
                doc.applies_to = globs;
            }
        }
    }
    Ok(doc)
}

/// A glob of `applies_to`: relative to the repository, `/`-separated, no `..`, and no
/// character a runtime's list syntax would split or end on.
fn check_glob(glob: &str) -> Result<(), String> {
    let bad = |why: &str| {
        Err(format!(
            "`applies_to` glob `{}` {why}",
            crate::util::text::visible(glob)
        ))
    };
    if glob.is_empty() || glob.starts_with('/') || glob.contains('\\') || glob.split('/').any(|p| p == "..") {
        return bad("is not a path relative to the repository (`/`-separated, no `..`)");
    }
    if glob.contains([',', '"', '\'', '{', '}', '\n', '\r', '#']) || glob.chars().any(char::is_control) {
        return bad("has a character runtimes' glob lists cannot carry (`,` `\"` `'` `{` `}` `#`)");
    }
    Ok(())
}

/// A YAML double-quoted string.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The text of `doc` as a runtime reading `form` takes it.
pub fn render(doc: &Document, form: Form) -> String {
    let mut front = Vec::new();
    let description = doc.description.as_deref();
    match form {
        Form::CopilotInstructions => {
            let globs = match doc.applies_to.is_empty() {
                true => "**".to_string(),
                false => doc.applies_to.join(","),
            };
            front.push(format!("applyTo: {}", quoted(&globs)));
            front.extend(description.map(|d| format!("description: {}", quoted(d))));
        }
        Form::CursorRule => {
            front.push(format!("description: {}", description.unwrap_or_default()));
            front.push(format!("globs: {}", doc.applies_to.join(",")));
            front.push(format!("alwaysApply: {}", doc.applies_to.is_empty()));
        }
        Form::ClaudeRule => {
            if !doc.applies_to.is_empty() {
                front.push("paths:".into());
                front.extend(doc.applies_to.iter().map(|g| format!("  - {}", quoted(g))));
            }
        }
        Form::Described => front.extend(description.map(|d| format!("description: {}", quoted(d)))),
        Form::Plain => {}
    }
    match front.is_empty() {
        true => doc.body.clone(),
        false => format!("---\n{}\n---\n{}", front.join("\n"), doc.body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(kind: Kind, text: &str) -> Result<Document, String> {
        parse(kind, "review".into(), text)
    }

    #[test]
    fn a_rules_front_matter_is_read_and_checked() {
        let r = doc(
            Kind::Rule,
            "---\ndescription: \"Review rules\"\napplies_to:\n  - \"src/**/*.rs\"\n  - docs/**\n---\n# Review\n",
        )
        .unwrap();
        assert_eq!(r.description.as_deref(), Some("Review rules"));
        assert_eq!(r.applies_to, ["src/**/*.rs", "docs/**"]);
        assert_eq!(r.body, "# Review\n");
        let inline = doc(Kind::Rule, "---\napplies_to: [src/**, \"tests/**\"]\n---\nx\n").unwrap();
        assert_eq!(inline.applies_to, ["src/**", "tests/**"]);
        assert_eq!(
            doc(Kind::Rule, "# no front matter\n").unwrap().body,
            "# no front matter\n"
        );
        let refusals = [
            (
                Kind::Rule,
                "---\napplies_to: ../secret/**\n---\n",
                "not a path relative",
            ),
            (Kind::Rule, "---\napplies_to: /etc/**\n---\n", "not a path relative"),
            (Kind::Rule, "---\napplies_to: \"src/{a,b}/**\"\n---\n", "cannot carry"),
            (Kind::Rule, "---\napplies_to:\n---\n", "names no path"),
            (Kind::Rule, "---\ndescription: a\ndescription: b\n---\n", "twice"),
            (Kind::Rule, "---\njust words\n---\n", "no `key: value`"),
            (Kind::Prompt, "---\ndescription:\n---\n", "one non-empty line"),
        ];
        // Keys a2c does not read are other tools' (an MCP prompt's `name` and `arguments`).
        let mcp =
            "---\nname: review\ndescription: Review\narguments:\n  - name: change\n    required: true\n---\nBody\n";
        let p = doc(Kind::Prompt, mcp).unwrap();
        assert_eq!((p.description.as_deref(), p.body.as_str()), (Some("Review"), "Body\n"));
        assert!(doc(Kind::Rule, "---\nalwaysApply: true\n---\nx\n").is_ok());
        for (kind, text, why) in refusals {
            let err = doc(kind, text).unwrap_err();
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }

    #[test]
    fn each_runtime_gets_the_front_matter_it_reads() {
        let r = doc(
            Kind::Rule,
            "---\ndescription: Say \"why\"\napplies_to: [src/**, docs/*.md]\n---\nBody\n",
        )
        .unwrap();
        let every = doc(Kind::Rule, "Body\n").unwrap();
        let p = doc(Kind::Prompt, "---\ndescription: Review a change\n---\nReview it.\n").unwrap();
        #[rustfmt::skip]
        let rendered = [
            (&r, Form::CopilotInstructions, "---\napplyTo: \"src/**,docs/*.md\"\ndescription: \"Say \\\"why\\\"\"\n---\nBody\n"),
            (&r, Form::CursorRule, "---\ndescription: Say \"why\"\nglobs: src/**,docs/*.md\nalwaysApply: false\n---\nBody\n"),
            (&r, Form::ClaudeRule, "---\npaths:\n  - \"src/**\"\n  - \"docs/*.md\"\n---\nBody\n"),
            (&every, Form::ClaudeRule, "Body\n"),
            (&every, Form::CopilotInstructions, "---\napplyTo: \"**\"\n---\nBody\n"),
            (&every, Form::CursorRule, "---\ndescription: \nglobs: \nalwaysApply: true\n---\nBody\n"),
            (&p, Form::Described, "---\ndescription: \"Review a change\"\n---\nReview it.\n"),
            (&p, Form::Plain, "Review it.\n"),
        ];
        for (document, form, want) in rendered {
            assert_eq!(render(document, form), want, "{form:?}");
        }
    }
}
