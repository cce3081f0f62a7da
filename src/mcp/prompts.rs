//! The method's prompt files as MCP prompts: every file below `prompts/` of a repository's
//! method tree (the version its write contract names), `.md` or `.txt`. A file may open with
//! front matter between `---` lines (flat YAML, read by `util::yaml`): `name`, `description`
//! and `arguments` (a list of `- name:` entries with `description` and `required`); other
//! keys are left to other tools. Without front matter a prompt is named by its path below
//! `prompts/` without the extension (`review`, `git/commit`), and has no arguments. In the
//! text, `{{argument}}` is replaced by the argument's value, in one pass over the text: a
//! value is never read again (a value holding `{{other}}` stays as it is), `{{name}}` for a
//! name the prompt does not declare stays as written, and a rendered prompt longer than
//! [`MAX_RENDERED_BYTES`] is refused.
//!
//! A server started in a repository lists that repository's prompts under their own names; one
//! started at W (in no member) lists every member's, named `{repo}/{name}`.

use crate::util::yaml::{self, Item, Value};

use super::scope::{Repo, Scope};

/// One prompt of one repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptFile {
    /// As listed (with the repository prefix when the server serves several).
    pub name: String,
    pub description: Option<String>,
    pub arguments: Vec<Argument>,
    /// The text after the front matter.
    pub body: String,
    /// The file, below the tree (for messages).
    pub path: String,
}

/// A declared argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

/// The largest prompt file read.
const MAX_BYTES: u64 = 1 << 20;

/// The largest prompt rendered: its text with every argument's value in place (a 1 MiB file
/// with 4 MiB of arguments at most; more is refused before it is built).
pub const MAX_RENDERED_BYTES: usize = 4 << 20;

/// The repositories whose prompts are listed, with the prefix their names take.
fn listed(scope: &Scope) -> anyhow::Result<Vec<(Repo, String)>> {
    let repos = scope.repos()?;
    if let Some(home) = &scope.home
        && let Some(repo) = repos.iter().find(|r| &r.relative == home)
    {
        return Ok(vec![(repo.clone(), String::new())]);
    }
    Ok(repos
        .into_iter()
        .map(|r| {
            let prefix = format!("{}/", r.relative);
            (r, prefix)
        })
        .collect())
}

/// The prompts served, and the files below `prompts/` that are not (with why).
#[derive(Debug, Default)]
pub struct Prompts {
    pub found: Vec<PromptFile>,
    /// (file, why), for the error when a prompt asked for is not found.
    pub skipped: Vec<(String, String)>,
}

/// Every prompt served, sorted by name; files that cannot be read as prompts are skipped and
/// said why.
pub fn prompts(scope: &Scope) -> anyhow::Result<Prompts> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for (repo, prefix) in listed(scope)? {
        let Ok(tree) = &repo.tree else { continue };
        let dir = tree.join("prompts");
        if !crate::util::contain::check_dir(tree, "prompts").unwrap_or(false) {
            continue;
        }
        for entry in walkdir::WalkDir::new(&dir).follow_links(false).sort_by_file_name() {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            if !entry.file_type().is_file() || name.starts_with('.') {
                continue;
            }
            let Some(stem) = name.strip_suffix(".md").or_else(|| name.strip_suffix(".txt")) else {
                continue;
            };
            let Ok(below) = entry.path().strip_prefix(&dir) else {
                continue;
            };
            let below = below.to_string_lossy().replace('\\', "/");
            let path = format!("prompts/{below}");
            let default = match below.rsplit_once('/') {
                Some((parent, _)) => format!("{parent}/{stem}"),
                None => stem.to_string(),
            };
            // Read beneath the tree, never through a link (the walk's listing is only a list).
            let read = super::resources::read_file_below(tree, &path, MAX_BYTES, "a prompt may have").and_then(|b| {
                String::from_utf8(b).map_err(|_| format!("`{path}`: stream did not contain valid UTF-8"))
            });
            let text = match read {
                Ok(text) => text,
                Err(why) => {
                    skipped.push((path, why));
                    continue;
                }
            };
            match parse(&text, &default) {
                Ok(mut p) => {
                    p.name = format!("{prefix}{}", p.name);
                    p.path = format!("{}{}", prefix, path);
                    out.push(p);
                }
                Err(why) => skipped.push((format!("{prefix}{path}"), why)),
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup_by(|b, a| {
        if a.name == b.name {
            skipped.push((b.path.clone(), format!("another file is already named `{}`", a.name)));
            true
        } else {
            false
        }
    });
    Ok(Prompts { found: out, skipped })
}

/// A prompt file's text: its front matter, if any, and its body.
pub fn parse(text: &str, default_name: &str) -> Result<PromptFile, String> {
    let mut prompt = PromptFile {
        name: default_name.to_string(),
        description: None,
        arguments: Vec::new(),
        body: text.to_string(),
        path: String::new(),
    };
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return Ok(prompt);
    };
    let end = rest
        .find("\n---\n")
        .map(|i| (i, i + 5))
        .or_else(|| rest.strip_suffix("\n---").map(|r| (r.len(), rest.len())))
        .ok_or("the front matter opened by `---` is never closed by a `---` line")?;
    let entries = yaml::parse_flat_mapping(&rest[..end.0]).map_err(|e| format!("front matter {e}"))?;
    prompt.body = rest[end.1..].to_string();
    for entry in &entries {
        match (entry.key.as_str(), &entry.value) {
            ("name", Value::Scalar(s)) if !s.is_null() => {
                crate::util::paths::check_portable_relative(&s.text)
                    .map_err(|why| format!("front matter line {}: `name`: {why}", s.line))?;
                prompt.name = s.text.clone();
            }
            ("description", Value::Scalar(s)) if !s.is_null() => prompt.description = Some(s.text.clone()),
            ("arguments", Value::Items(items)) => {
                for item in items {
                    let Item::Mapping { line, entries } = item else {
                        return Err(format!(
                            "front matter line {}: each argument is `- name: …`",
                            entry.line
                        ));
                    };
                    prompt.arguments.push(argument(*line, entries)?);
                }
            }
            ("arguments", Value::List(list)) => {
                for s in list {
                    check_argument_name(s.line, &s.text)?;
                    prompt.arguments.push(Argument {
                        name: s.text.clone(),
                        description: None,
                        required: false,
                    });
                }
            }
            ("name" | "description" | "arguments", _) => {
                return Err(format!(
                    "front matter line {}: `{}` has the wrong shape",
                    entry.line, entry.key
                ));
            }
            _ => {} // another tool's key
        }
    }
    let mut declared = std::collections::HashSet::new();
    if let Some(twice) = prompt.arguments.iter().find(|a| !declared.insert(a.name.as_str())) {
        return Err(format!("front matter: the argument `{}` is declared twice", twice.name));
    }
    Ok(prompt)
}

/// An argument's name is letters, digits, `_` or `-`: what `{{name}}` can stand for.
fn check_argument_name(line: usize, name: &str) -> Result<(), String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(format!(
            "front matter line {line}: an argument needs a `name` of letters, digits, `_` or `-`, not `{name}`"
        ));
    }
    Ok(())
}

fn argument(line: usize, entries: &[yaml::Entry]) -> Result<Argument, String> {
    let mut arg = Argument {
        name: String::new(),
        description: None,
        required: false,
    };
    for e in entries {
        match (e.key.as_str(), &e.value) {
            ("name", Value::Scalar(s)) => arg.name = s.text.clone(),
            ("description", Value::Scalar(s)) => arg.description = Some(s.text.clone()),
            ("required", Value::Scalar(s)) if s.text == "true" || s.text == "false" => arg.required = s.text == "true",
            (key, _) => {
                return Err(format!(
                    "front matter line {}: argument key `{key}` (known: name, description, required: true|false)",
                    e.line
                ));
            }
        }
    }
    check_argument_name(line, &arg.name)?;
    Ok(arg)
}

/// The body with every `{{argument}}` replaced, in one pass; a required argument missing, an
/// argument the prompt does not declare, or a rendered text over [`MAX_RENDERED_BYTES`] is
/// refused.
pub fn render(prompt: &PromptFile, given: &serde_json::Map<String, serde_json::Value>) -> Result<String, String> {
    if let Some(unknown) = given.keys().find(|k| !prompt.arguments.iter().any(|a| &a.name == *k)) {
        return Err(format!("the prompt `{}` takes no argument `{unknown}`", prompt.name));
    }
    let mut values = std::collections::HashMap::new();
    for arg in &prompt.arguments {
        let value = match given.get(&arg.name) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None if arg.required => {
                return Err(format!(
                    "the prompt `{}` needs the argument `{}`",
                    prompt.name, arg.name
                ));
            }
            None => String::new(),
        };
        values.insert(arg.name.as_str(), value);
    }
    let too_long = |len: usize| {
        format!(
            "the prompt `{}` would render to {len} bytes or more, more than {MAX_RENDERED_BYTES}: pass shorter arguments",
            prompt.name
        )
    };
    let mut out = String::new();
    let mut rest = prompt.body.as_str();
    while let Some(open) = rest.find("{{") {
        let (before, after) = rest.split_at(open);
        out.push_str(before);
        let value = after[2..]
            .find("}}")
            .and_then(|close| values.get(&after[2..2 + close]).map(|v| (v, close)));
        match value {
            Some((value, close)) => {
                if out.len() + value.len() > MAX_RENDERED_BYTES {
                    return Err(too_long(out.len() + value.len()));
                }
                out.push_str(value);
                rest = &after[close + 4..];
            }
            None => {
                out.push_str("{{");
                rest = &after[2..];
            }
        }
    }
    out.push_str(rest);
    if out.len() > MAX_RENDERED_BYTES {
        return Err(too_long(out.len()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_names_describes_and_declares_arguments() {
        let text = "---\nname: review\ndescription: Review a change\narguments:\n  - name: change\n    description: what to review\n    required: true\n  - name: focus\nowner: someone\n---\nReview {{change}} for {{focus}}.\n";
        let p = parse(text, "fallback").unwrap();
        assert_eq!(p.name, "review");
        assert_eq!(p.description.as_deref(), Some("Review a change"));
        assert_eq!(p.arguments.len(), 2);
        assert!(p.arguments[0].required && !p.arguments[1].required);
        let mut args = serde_json::Map::new();
        args.insert("change".into(), "PR 7".into());
        assert_eq!(render(&p, &args).unwrap(), "Review PR 7 for .\n");
        assert!(
            render(&p, &serde_json::Map::new())
                .unwrap_err()
                .contains("needs the argument `change`")
        );
        args.insert("other".into(), "x".into());
        assert!(render(&p, &args).unwrap_err().contains("no argument `other`"));
        let plain = parse("Just text.\n", "git/commit").unwrap();
        assert_eq!(
            (plain.name.as_str(), plain.body.as_str()),
            ("git/commit", "Just text.\n")
        );
        for (bad, why) in [
            ("---\nname: x\n", "never closed"),
            ("---\nname: ../x\n---\n", "`..`"),
            ("---\narguments:\n  - required: maybe\n---\n", "argument key `required`"),
            ("---\narguments:\n  - description: d\n---\n", "needs a `name`"),
            ("---\nname: [a]\n---\n", "wrong shape"),
            ("---\narguments: [a, '']\n---\n", "not ``"),
            ("---\narguments: [a, 'b c']\n---\n", "not `b c`"),
            ("---\narguments: [a, '{{b}}']\n---\n", "not `{{b}}`"),
            ("---\narguments: [a, b, a]\n---\n", "`a` is declared twice"),
            (
                "---\narguments:\n  - name: a\n  - name: a\n---\n",
                "`a` is declared twice",
            ),
        ] {
            let e = parse(bad, "d").unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    fn args(pairs: &[(&str, &str)]) -> serde_json::Map<String, serde_json::Value> {
        pairs.iter().map(|(k, v)| (k.to_string(), (*v).into())).collect()
    }

    /// One pass: a value is never rewritten by a later argument, an undeclared `{{x}}` and an
    /// unclosed `{{` stay as written.
    #[test]
    fn rendering_never_reads_a_value_again() {
        let p = parse("---\narguments: [a, b]\n---\nA={{a}} B={{b}} C={{c}} {{a", "d").unwrap();
        let out = render(&p, &args(&[("a", "{{b}}"), ("b", "X")])).unwrap();
        assert_eq!(out, "A={{b}} B=X C={{c}} {{a");
    }

    /// A prompt whose arguments would render past the cap is refused before it is built: 1 MiB
    /// of `{{a}}` with a 10 KB value once needed gigabytes.
    #[test]
    fn a_rendered_prompt_is_capped() {
        let body = "{{a}}".repeat((1 << 20) / 5);
        let p = parse(&format!("---\narguments: [a]\n---\n{body}"), "d").unwrap();
        let e = render(&p, &args(&[("a", &"x".repeat(10_000))])).unwrap_err();
        assert!(e.contains("more than 4194304"), "{e}");
        let ok = render(&p, &args(&[("a", "xyz")])).unwrap();
        assert_eq!(ok.len(), 3 * ((1 << 20) / 5));
    }
}
