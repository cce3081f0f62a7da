//! The method's skills over MCP's skills extension (SEP-2640, `io.modelcontextprotocol/skills`),
//! for the clients that declare it: `skills/list` lists the skills of the write-contract
//! version of the repository the server was started in — the version that repository is
//! bound to, never another — and `skills/get` answers for the skills of every version a served
//! repository is bound to. Each skill's files are resources `skill://a2c/{version}/{name}/{file}`
//! (the version is the organizational prefix, the skill's name the last segment), read from
//! the installed tree a2c verified, each listed with the sha256 of its bytes.

use rmcp::model::{Skill, SkillFrontmatter, SkillResource, SkillResources};

use super::scope::{Repo, Scope};

/// Every skill URI starts with this.
pub const PREFIX: &str = "skill://a2c/";

/// The skill URI of `file` of skill `name` of `version`.
fn uri(version: &str, name: &str, file: &str) -> String {
    format!("{PREFIX}{version}/{name}/{file}")
}

/// `(version, name, file)` of a skill URI a2c serves; `None` for any other.
fn parse(uri: &str) -> Option<(String, String, String)> {
    let rest = uri.strip_prefix(PREFIX)?;
    let (version, rest) = rest.split_once('/')?;
    let (name, file) = rest.split_once('/')?;
    let plain = |s: &str| !s.is_empty() && !s.contains(['%', '?', '#', '\\']);
    let file_ok = plain(file) && file.split('/').all(|seg| !matches!(seg, "" | "." | ".."));
    (plain(version) && crate::agents::is_skill_name(name) && file_ok)
        .then(|| (version.to_string(), name.to_string(), file.to_string()))
}

/// The method tree of `version`, when a served repository is bound to it.
fn tree_of(repos: &[Repo], version: &str) -> Option<std::path::PathBuf> {
    repos
        .iter()
        .find(|r| r.contract.as_ref().is_ok_and(|v| v.to_string() == version))
        .and_then(|r| r.tree.as_ref().ok().cloned())
}

/// The entry of one skill of the tree at `tree` (`version`): its front matter verbatim as
/// JSON, and every file with its digest.
fn entry(tree: &std::path::Path, version: &str, skill: &crate::agents::Skill) -> Result<Skill, String> {
    let front = crate::agents::front_matter(&skill.text).ok_or("its SKILL.md has no front matter")?;
    let mut fields: serde_json::Map<String, serde_json::Value> =
        serde_saphyr::from_str(front).map_err(|e| format!("its front matter cannot be read: {e}"))?;
    let text = |key: &str, fields: &mut serde_json::Map<String, serde_json::Value>| {
        fields
            .remove(key)
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let mut frontmatter = SkillFrontmatter::new(text("name", &mut fields), text("description", &mut fields));
    frontmatter.extra = fields;
    let dir = tree.join("skills").join(&skill.name);
    let mut resources = vec![SkillResource::from_bytes(
        uri(version, &skill.name, "SKILL.md"),
        skill.text.as_bytes(),
    )];
    for file in &skill.files {
        let bytes =
            super::resources::read_file_below(&dir, file, super::resources::MAX_BYTES, "a skill's file may have")?;
        resources.push(SkillResource::from_bytes(uri(version, &skill.name, file), &bytes));
    }
    Ok(Skill::new(
        uri(version, &skill.name, "SKILL.md"),
        frontmatter,
        SkillResources::Files(resources),
    ))
}

/// The skills of the write-contract version of the repository the server was started in
/// (none when it has none installed, or was started where no repository adopted A2C).
pub fn list(scope: &Scope) -> Result<Vec<Skill>, String> {
    let repos = scope.repos().map_err(|e| e.to_string())?;
    let Some(home) = scope
        .home
        .as_deref()
        .and_then(|h| repos.iter().find(|r| r.relative == h))
    else {
        return Ok(Vec::new());
    };
    let (Ok(version), Ok(tree)) = (&home.contract, &home.tree) else {
        return Ok(Vec::new());
    };
    let version = version.to_string();
    crate::agents::skills(tree)
        .map_err(|e| e.to_string())?
        .iter()
        .map(|s| entry(tree, &version, s))
        .collect()
}

/// The entry of the skill whose `SKILL.md` is at `uri`, of a version a served repository is
/// bound to; `Err(why)` for any other URI (the caller answers `-32602`).
pub fn get(scope: &Scope, uri_asked: &str) -> Result<Skill, String> {
    let unknown = || {
        format!(
            "`{uri_asked}` is no skill a2c serves here (skill://a2c/VERSION/NAME/SKILL.md, VERSION a served repository's write contract)"
        )
    };
    let (version, name, file) = parse(uri_asked).ok_or_else(unknown)?;
    if file != "SKILL.md" {
        return Err(unknown());
    }
    let repos = scope.repos().map_err(|e| e.to_string())?;
    let tree = tree_of(&repos, &version).ok_or_else(unknown)?;
    let skills = crate::agents::skills(&tree).map_err(|e| e.to_string())?;
    let skill = skills.iter().find(|s| s.name == name).ok_or_else(unknown)?;
    entry(&tree, &version, skill)
}

/// Whether `uri` is a skill resource (read by [`read`], not by the method resources).
pub fn is_skill_uri(uri: &str) -> bool {
    uri.starts_with("skill://")
}

/// The bytes of the skill file at `uri`: `SKILL.md` or a file the skill's entry lists.
pub fn read(scope: &Scope, uri_asked: &str) -> Result<(String, Vec<u8>), String> {
    let unknown = || format!("`{uri_asked}` is no file of a skill a2c serves here");
    let (version, name, file) = parse(uri_asked).ok_or_else(unknown)?;
    let repos = scope.repos().map_err(|e| e.to_string())?;
    let tree = tree_of(&repos, &version).ok_or_else(unknown)?;
    let skills = crate::agents::skills(&tree).map_err(|e| e.to_string())?;
    let skill = skills.iter().find(|s| s.name == name).ok_or_else(unknown)?;
    if file == "SKILL.md" {
        return Ok((file, skill.text.clone().into_bytes()));
    }
    if !skill.files.contains(&file) {
        return Err(unknown());
    }
    let dir = tree.join("skills").join(&name);
    super::resources::read_file_below(&dir, &file, super::resources::MAX_BYTES, "a skill's file may have")
        .map(|bytes| (file, bytes))
}

#[cfg(test)]
mod tests {
    /// A SKILL.md with Windows line ends (which `a2c pack` takes) is listed with its front
    /// matter, as one with `\n` ends is.
    #[test]
    fn a_skill_with_crlf_line_ends_is_served() {
        let skill = crate::agents::Skill {
            name: "review".into(),
            text: "---\r\nname: review\r\ndescription: Review a change\r\n---\r\n# Review\r\n".into(),
            files: Vec::new(),
        };
        crate::agents::check_skill_md(&skill.text, "review").unwrap();
        let entry = super::entry(std::path::Path::new("/nowhere"), "1.0.0", &skill).unwrap();
        assert_eq!(entry.frontmatter.name, "review");
        assert_eq!(entry.frontmatter.description, "Review a change");
        assert_eq!(entry.uri, "skill://a2c/1.0.0/review/SKILL.md");
    }

    #[test]
    fn skill_uris_name_a_version_a_skill_and_a_file() {
        assert_eq!(
            super::parse("skill://a2c/1.4.0/review/scripts/check.sh"),
            Some(("1.4.0".into(), "review".into(), "scripts/check.sh".into()))
        );
        for bad in [
            "skill://a2c/1.4.0/review/../../x",
            "skill://a2c/1.4.0/Review/SKILL.md",
            "skill://other/1.4.0/review/SKILL.md",
            "skill://a2c/1.4.0/review/",
            "skill://a2c/1.4.0/review/a%2F..",
        ] {
            assert_eq!(super::parse(bad), None, "{bad}");
        }
    }
}
