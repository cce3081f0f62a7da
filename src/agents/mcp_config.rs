//! `a2c agents mcp-config RUNTIME --write`: the runtime's `a2c` MCP server entry written into
//! its user-level file — machine-local, for every project the user opens, never a file of a
//! repository — beside whatever else the file holds, which is kept byte for byte.

use std::path::PathBuf;

use super::AgentsError;

/// Where the runtimes' user-level files are, from the user's directories (the session reads
/// them from the environment).
#[derive(Debug, Clone, Default)]
pub struct UserDirs {
    pub home: Option<PathBuf>,
    /// VS Code's user settings directory ([`crate::env::vscode_user_dir`]).
    pub vscode_user: Option<PathBuf>,
}

/// What `--write` did.
#[derive(Debug, PartialEq, Eq)]
pub enum Wrote {
    /// The entry was added to the file (made when missing).
    Added(PathBuf),
    /// The file already holds this very entry: nothing written.
    Already(PathBuf),
}

enum Format {
    Json,
    Toml,
}

/// The user-level file of `runtime`, its format, the table holding servers, and a2c's entry.
fn target(runtime: &str, dirs: &UserDirs) -> Option<(Option<PathBuf>, Format, &'static str, serde_json::Value)> {
    let plain = serde_json::json!({"command": "a2c", "args": ["mcp"]});
    let home = dirs.home.clone();
    Some(match runtime {
        "claude" => (home.map(|h| h.join(".claude.json")), Format::Json, "mcpServers", plain),
        "cursor" => (
            home.map(|h| h.join(".cursor").join("mcp.json")),
            Format::Json,
            "mcpServers",
            plain,
        ),
        "copilot" => (
            dirs.vscode_user.as_ref().map(|d| d.join("mcp.json")),
            Format::Json,
            "servers",
            serde_json::json!({"type": "stdio", "command": "a2c", "args": ["mcp"]}),
        ),
        "codex" => (
            home.map(|h| h.join(".codex").join("config.toml")),
            Format::Toml,
            "mcp_servers",
            plain,
        ),
        _ => return None,
    })
}

/// Where `--write` writes for `runtime` (`None`: no user-level file, or no home to find it in).
pub fn user_file(runtime: &str, dirs: &UserDirs) -> Option<PathBuf> {
    target(runtime, dirs)?.0
}

/// Writes `runtime`'s `a2c` entry into its user-level file.
pub fn write(runtime: &str, dirs: &UserDirs) -> Result<Wrote, AgentsError> {
    let Some((Some(path), format, table, entry)) = target(runtime, dirs) else {
        return Err(AgentsError::UserFile {
            runtime: runtime.to_string(),
            path: PathBuf::from("~"),
            reason: format!("`{runtime}` has no user-level MCP file a2c can find (is HOME set?)"),
        });
    };
    let refused = |reason: String| AgentsError::UserFile {
        runtime: runtime.to_string(),
        path: path.clone(),
        reason,
    };
    let text = match crate::util::contain::read_capped(&path, 64 << 20, "an MCP configuration") {
        Ok(Some(bytes)) => String::from_utf8(bytes).map_err(|_| refused("it is not UTF-8 text".into()))?,
        Ok(None) => String::new(),
        Err(e) => return Err(refused(e.to_string())),
    };
    let new = match format {
        Format::Json => json_with(&text, table, &entry).map_err(refused)?,
        Format::Toml => toml_with(&text, table, &entry).map_err(refused)?,
    };
    let Some(new) = new else {
        return Ok(Wrote::Already(path));
    };
    // The file keeps its mode (a runtime's own file may hold its tokens): a new one is the
    // user's alone.
    let mode = std::fs::symlink_metadata(&path).map_or(0o600, |m| {
        use crate::util::platform::MetaExt as _;
        m.mode() & 0o777
    });
    crate::util::fs::write_atomic_mode(&path, new.as_bytes(), mode).map_err(|e| refused(e.to_string()))?;
    Ok(Wrote::Added(path))
}

/// `text` (a JSON object, or nothing) with `table.a2c` set to `entry`: `None` when it is
/// already so. Only the entry's bytes are added; everything else stays as written.
fn json_with(text: &str, table: &str, entry: &serde_json::Value) -> Result<Option<String>, String> {
    if text.trim().is_empty() {
        let doc = serde_json::json!({ table: { "a2c": entry } });
        return Ok(Some(format!("{}\n", serde_json::to_string_pretty(&doc).expect("JSON"))));
    }
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("it is no JSON a2c can read: {e}"))?;
    let Some(top) = doc.as_object() else {
        return Err("it is no JSON object".into());
    };
    let one_line = serde_json::to_string(entry).expect("JSON");
    let new = match top.get(table) {
        Some(servers) => {
            let Some(servers) = servers.as_object() else {
                return Err(format!("its `{table}` is no object"));
            };
            match servers.get("a2c") {
                Some(existing) if existing == entry => return Ok(None),
                Some(existing) => {
                    return Err(format!(
                        "its `{table}` already has an `a2c` server that is not this entry ({existing})"
                    ));
                }
                None => {
                    let at = object_open(text, Some(table)).ok_or("a2c cannot find where its servers start")?;
                    let comma = if servers.is_empty() { "" } else { "," };
                    format!("{}\n    \"a2c\": {one_line}{comma}{}", &text[..at], &text[at..])
                }
            }
        }
        None => {
            let at = object_open(text, None).ok_or("a2c cannot find where it starts")?;
            let comma = if top.is_empty() { "" } else { "," };
            format!(
                "{}\n  \"{table}\": {{ \"a2c\": {one_line} }}{comma}{}",
                &text[..at],
                &text[at..]
            )
        }
    };
    // What was written is read back: the same document with the entry added, or nothing.
    let back: serde_json::Value =
        serde_json::from_str(&new).map_err(|e| format!("a2c could not add its entry ({e})"))?;
    let mut expected = doc;
    expected[table]["a2c"] = entry.clone();
    match back == expected {
        true => Ok(Some(new)),
        false => Err("a2c could not add its entry without changing another".into()),
    }
}

/// The byte just after the `{` that opens the value of the top-level `key` of the JSON object
/// `text` (with no key: the object itself).
fn object_open(text: &str, key: Option<&str>) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    let mut last_key: Option<(usize, usize)> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                last_key = (depth == 1).then_some((start, i));
            }
            b'{' => {
                if depth == 0 && key.is_none() {
                    return Some(i + 1);
                }
                if depth == 1
                    && let (Some(want), Some((a, b))) = (key, last_key)
                    && &text[a..b] == want
                {
                    return Some(i + 1);
                }
                depth += 1;
                last_key = None;
            }
            b'[' => {
                depth += 1;
                last_key = None;
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' => last_key = None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// `text` (TOML, or nothing) with `[table.a2c]` set to `entry`, appended: `None` when it is
/// already so.
fn toml_with(text: &str, table: &str, entry: &serde_json::Value) -> Result<Option<String>, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| format!("it is no TOML a2c can read: {e}"))?;
    let wanted: toml::Value = toml::Value::try_from(entry).expect("an entry is TOML");
    if let Some(existing) = doc.get(table).and_then(|t| t.get("a2c")) {
        return match existing == &wanted {
            true => Ok(None),
            false => Err(format!(
                "its `{table}` already has an `a2c` server that is not this entry"
            )),
        };
    }
    let mut new = text.to_string();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    if !new.is_empty() {
        new.push('\n');
    }
    new.push_str(&format!("[{table}.a2c]\ncommand = \"a2c\"\nargs = [\"mcp\"]\n"));
    let back: toml::Table = toml::from_str(&new).map_err(|e| format!("a2c could not add its entry ({e})"))?;
    match back.get(table).and_then(|t| t.get("a2c")) == Some(&wanted) {
        true => Ok(Some(new)),
        false => Err("a2c could not add its entry without changing another".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_is_added_and_everything_else_kept() {
        let entry = serde_json::json!({"command": "a2c", "args": ["mcp"]});
        let theirs = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  }\n}\n";
        let new = json_with(theirs, "mcpServers", &entry).unwrap().unwrap();
        assert!(new.starts_with("{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"a2c\": {\"args\":[\"mcp\"],\"command\":\"a2c\"},\n    \"other\""), "{new}");
        assert_eq!(json_with(&new, "mcpServers", &entry).unwrap(), None, "once");
        let none = json_with("{\"a\": [1, {\"mcpServers\": 2}]}", "mcpServers", &entry)
            .unwrap()
            .unwrap();
        let doc: serde_json::Value = serde_json::from_str(&none).unwrap();
        assert_eq!(doc["mcpServers"]["a2c"], entry);
        assert_eq!(doc["a"], serde_json::json!([1, {"mcpServers": 2}]));
        assert!(json_with("{}", "mcpServers", &entry).unwrap().is_some());
        let other = "{\"mcpServers\": {\"a2c\": {\"command\": \"evil\"}}}";
        assert!(
            json_with(other, "mcpServers", &entry)
                .unwrap_err()
                .contains("not this entry")
        );
        assert!(
            json_with("[1]", "mcpServers", &entry)
                .unwrap_err()
                .contains("no JSON object")
        );
        assert!(
            json_with("{\"mcpServers\": 3}", "mcpServers", &entry)
                .unwrap_err()
                .contains("no object")
        );

        let toml_text = "model = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let new = toml_with(toml_text, "mcp_servers", &entry).unwrap().unwrap();
        assert!(new.starts_with(toml_text), "{new}");
        assert!(new.ends_with("[mcp_servers.a2c]\ncommand = \"a2c\"\nargs = [\"mcp\"]\n"));
        assert_eq!(toml_with(&new, "mcp_servers", &entry).unwrap(), None);
        let inline = "mcp_servers = { other = { command = \"x\" } }\n";
        assert!(
            toml_with(inline, "mcp_servers", &entry)
                .unwrap_err()
                .contains("could not add")
        );
    }
}
