//! A method tree's skills (`skills/NAME/SKILL.md`), checked as the Agent Skills specification
//! says, and a `SKILL.md` renamed for its projection.

use std::collections::BTreeMap;
use std::path::Path;

use super::AgentsError;

/// A skill of a method tree: `skills/<name>/` holding `SKILL.md`.
#[derive(Debug, Clone)]
pub struct Skill {
    pub name: String,
    /// Its `SKILL.md`.
    pub text: String,
    /// Its other files, relative to its folder (`/`-separated), sorted.
    pub files: Vec<String>,
}

/// The keys the Agent Skills specification allows in a `SKILL.md` front matter.
const SKILL_KEYS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// A skill name as the Agent Skills specification takes it: 1 to 64 lowercase letters, digits
/// and hyphens, no hyphen first, last or twice in a row.
pub fn is_skill_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// Checks a `SKILL.md` in the folder `folder` as the Agent Skills specification requires: a
/// front matter (`---` lines) whose `name` is the folder's, a non-empty `description`, and no
/// key but the six it defines. `Err(why)`.
pub fn check_skill_md(text: &str, folder: &str) -> Result<(), String> {
    let front = front_matter(text).ok_or("it has no front matter (a `---` line, its keys, a `---` line)")?;
    let mut keys = BTreeMap::new();
    for line in front.lines() {
        if line.is_empty() || line.starts_with([' ', '\t', '#', '-']) {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!(
                "front matter line `{}` is no `key: value`",
                crate::util::text::visible(line)
            ));
        };
        if !SKILL_KEYS.contains(&key) {
            return Err(format!(
                "front matter key `{}` is not one of the Agent Skills keys ({})",
                crate::util::text::visible(key),
                SKILL_KEYS.join(", ")
            ));
        }
        if keys.insert(key, unquote(value.trim())).is_some() {
            return Err(format!("front matter key `{key}` is given twice"));
        }
    }
    match keys.get("name") {
        None => return Err("front matter has no `name`".into()),
        Some(name) if name != folder => {
            return Err(format!(
                "front matter `name: {name}` is not its folder's name `{folder}`"
            ));
        }
        Some(_) => {}
    }
    match keys.get("description") {
        Some(d) if !d.is_empty() => Ok(()),
        _ => Err("front matter has no `description`".into()),
    }
}

/// A YAML scalar without its surrounding quotes (`"…"` or `'…'`), as a front matter line gives it.
pub(super) fn unquote(value: &str) -> String {
    let quoted = |q: char| value.len() >= 2 && value.starts_with(q) && value.ends_with(q);
    match quoted('"') || quoted('\'') {
        true => value[1..value.len() - 1].to_string(),
        false => value.to_string(),
    }
}

/// The front matter of a markdown text: between a first line `---` and the next `---` line.
pub fn front_matter(text: &str) -> Option<&str> {
    split_front_matter(text).map(|(front, _)| front)
}

/// `(front matter, body)` of a markdown text that starts with a `---` line (`\n` or `\r\n`
/// line ends): the one reader of a front matter for skills, rules, prompts and `a2c mcp`.
pub fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---")?;
    let after = &rest[end + 4..];
    let body = after
        .strip_prefix("\r\n")
        .or_else(|| after.strip_prefix('\n'))
        .unwrap_or(after);
    Some((&rest[..end + 1], body))
}

/// `text` with its front matter's `name:` line set to `name` (the projected skill's own name).
pub(super) fn renamed(text: &str, name: &str) -> String {
    let Some(front) = front_matter(text) else {
        return text.to_string();
    };
    let start = text.len() - text.trim_start_matches("---\r\n").trim_start_matches("---\n").len();
    let front_end = start + front.len();
    let edited: String = front
        .lines()
        .map(|l| match l.starts_with("name:") {
            true => format!("name: {name}\n"),
            false => format!("{l}\n"),
        })
        .collect();
    format!("{}{edited}{}", &text[..start], &text[front_end..])
}

/// The skills of the method tree at `tree` (`skills/<name>/SKILL.md`), each checked; none when
/// the tree has no `skills/`. A link anywhere below `skills/` is refused.
pub fn skills(tree: &Path) -> Result<Vec<Skill>, AgentsError> {
    let dir = tree.join("skills");
    if !crate::util::contain::is_real_dir(&dir) {
        return Ok(Vec::new());
    }
    crate::util::contain::refuse_links_below(&dir)?;
    let mut names: Vec<String> = fs_err::read_dir(&dir)?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let folder = dir.join(&name);
        let bad = |reason: String| AgentsError::BadSkill {
            path: folder.clone(),
            reason,
        };
        if !is_skill_name(&name) {
            return Err(bad(
                "its folder's name is no skill name (1 to 64 lowercase letters, digits and single hyphens)".into(),
            ));
        }
        let md = folder.join("SKILL.md");
        let text = crate::util::contain::read_capped(&md, 1 << 20, "a skill")?
            .ok_or_else(|| bad("it has no SKILL.md".into()))?;
        let text = String::from_utf8(text).map_err(|_| bad("its SKILL.md is not UTF-8 text".into()))?;
        check_skill_md(&text, &name).map_err(|why| AgentsError::BadSkill {
            path: md.clone(),
            reason: why,
        })?;
        let mut files: Vec<String> = walkdir::WalkDir::new(&folder)
            .follow_links(false)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .filter_map(|e| {
                let rel = e
                    .path()
                    .strip_prefix(&folder)
                    .ok()?
                    .to_string_lossy()
                    .replace('\\', "/");
                (rel != "SKILL.md").then_some(rel)
            })
            .collect();
        files.sort();
        out.push(Skill { name, text, files });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_md_is_checked_as_the_agent_skills_specification_says() {
        let ok = "---\nname: review\ndescription: Review a change\n---\n# Review\n";
        assert_eq!(check_skill_md(ok, "review"), Ok(()));
        assert!(
            check_skill_md(ok, "other")
                .unwrap_err()
                .contains("not its folder's name")
        );
        assert!(check_skill_md("# no front matter\n", "review").is_err());
        let no_description = "---\nname: review\n---\n";
        assert!(
            check_skill_md(no_description, "review")
                .unwrap_err()
                .contains("description")
        );
        let extra = "---\nname: review\ndescription: d\nauthor: me\n---\n";
        assert!(check_skill_md(extra, "review").unwrap_err().contains("`author`"));
        assert!(is_skill_name("pdf-tools") && !is_skill_name("Bad") && !is_skill_name("a--b") && !is_skill_name("-a"));
        assert_eq!(
            renamed(ok, "a2c-review"),
            "---\nname: a2c-review\ndescription: Review a change\n---\n# Review\n"
        );
        assert_eq!(check_skill_md(&renamed(ok, "a2c-review"), "a2c-review"), Ok(()));
    }
}
