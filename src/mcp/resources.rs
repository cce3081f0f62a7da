//! The method's files as MCP resources: `a2c://method/{repo}/-/{path}`, where `{repo}` is the
//! repository's path relative to W (`.` for W itself) and `{path}` a file below the method
//! asset root of that repository's write contract — listed and read from that version's tree
//! only. a2c's own bookkeeping in the store (names starting `.a2c-`) is not a resource; a path
//! with `..`, an absolute one, a link on the way or anything but a regular file is refused.

use std::path::{Path, PathBuf};

use super::scope::{Repo, Scope};

/// The scheme and authority every resource URI starts with.
pub const PREFIX: &str = "a2c://method/";
/// Between the repository and the path in a URI: a repository whose path has a segment `-`
/// cannot be addressed (the first `/-/` ends the repository).
pub const SEPARATOR: &str = "/-/";
/// The URI template for any file below a repository's method tree.
pub const TEMPLATE: &str = "a2c://method/{repo}/-/{path}";
/// The most a resource may hold (a method file is text, and small).
pub const MAX_BYTES: u64 = 4 << 20;
/// Resources per page of `resources/list`.
pub const PAGE: usize = 500;

/// The URI of `path` (slash-separated, below the tree) of `repo`.
pub fn uri(repo: &str, path: &str) -> String {
    format!("{PREFIX}{repo}{SEPARATOR}{path}")
}

/// A resource URI taken apart: the repository and the path below its tree, each checked.
pub fn parse(uri: &str) -> Result<(String, String), String> {
    let rest = uri
        .strip_prefix(PREFIX)
        .ok_or_else(|| format!("`{uri}` is not an a2c resource: they are written {TEMPLATE}"))?;
    let (repo, path) = rest
        .split_once(SEPARATOR)
        .ok_or_else(|| format!("`{uri}` names no path: write {TEMPLATE}"))?;
    if repo != "." {
        crate::util::paths::check_portable_relative(repo).map_err(|why| format!("the repository `{repo}`: {why}"))?;
    }
    crate::util::paths::check_portable_relative(path).map_err(|why| format!("the path `{path}`: {why}"))?;
    if path.split('/').any(|seg| seg.starts_with(".a2c-")) {
        return Err(format!("`{path}` is a2c's own bookkeeping, not a method file"));
    }
    Ok((repo.to_string(), path.to_string()))
}

/// Every file of `repo`'s tree, as (URI, path below the tree, size), sorted by path.
pub fn files(repo: &Repo) -> Vec<(String, String, u64)> {
    let Ok(tree) = &repo.tree else { return Vec::new() };
    let mut out: Vec<(String, String, u64)> = walkdir::WalkDir::new(tree)
        .follow_links(false)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| !e.file_name().to_string_lossy().starts_with(".a2c-"))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let rel = e.path().strip_prefix(tree).ok()?.to_str()?.to_string();
            let size = e.metadata().ok()?.len();
            Some((uri(&repo.relative, &rel), rel, size))
        })
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

/// Reads `uri`: the file below the tree of its repository's write contract. Every refusal is
/// a sentence naming what was asked and why.
pub fn read(scope: &Scope, uri: &str) -> Result<(PathBuf, String), String> {
    let (relative, path) = parse(uri)?;
    let repo = scope.repo(&relative).map_err(|e| e.to_string())?.ok_or_else(|| {
        format!(
            "`{relative}` is no repository of `{}` that adopted A2C",
            scope.root.display()
        )
    })?;
    let tree = repo
        .tree
        .as_ref()
        .map_err(|why| format!("`{relative}` has no method tree: {why}"))?;
    read_below(tree, &path).map(|text| (tree.join(&path), text))
}

/// The text of `path` below `tree`: no link on the way or at the end, a regular file of at
/// most [`MAX_BYTES`], UTF-8 — opened beneath the tree without following a link (not checked
/// and then opened by path: a directory swapped for a link in between serves nothing).
fn read_below(tree: &Path, path: &str) -> Result<String, String> {
    let bytes = read_file_below(tree, path, MAX_BYTES, "a resource may have")?;
    String::from_utf8(bytes).map_err(|_| format!("`{path}`: stream did not contain valid UTF-8"))
}

/// The bytes of the regular file `path` below `tree`, at most `cap`, read beneath the tree
/// (`contain::Beneath`); every refusal a sentence naming `path`.
pub fn read_file_below(tree: &Path, path: &str, cap: u64, what: &str) -> Result<Vec<u8>, String> {
    let refused = |e: std::io::Error| match crate::util::contain::refusal(&e) {
        Some(r) if matches!(r.why, crate::util::contain::Why::NotFile) => format!("`{path}` is not a regular file"),
        Some(_) => format!("`{path}` is refused: {e}"),
        None => format!("`{path}`: {e}"),
    };
    let beneath = crate::util::contain::Beneath::open(tree).map_err(refused)?;
    beneath
        .read_capped(Path::new(path), cap, what)
        .map_err(refused)?
        .ok_or_else(|| format!("`{path}` is not in the method tree"))
}

/// The MIME type a client is told for `path`.
pub fn mime(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("md") => "text/markdown",
        Some("toml") => "application/toml",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        _ => "text/plain",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_and_hostile_ones_are_refused() {
        let u = uri("products/app", "rules/core.md");
        assert_eq!(u, "a2c://method/products/app/-/rules/core.md");
        assert_eq!(parse(&u).unwrap(), ("products/app".into(), "rules/core.md".into()));
        assert_eq!(parse("a2c://method/./-/a.md").unwrap().0, ".");
        for (bad, why) in [
            ("file:///etc/passwd", "not an a2c resource"),
            ("a2c://method/app/rules/x.md", "names no path"),
            ("a2c://method/app/-/../../etc/passwd", "`..`"),
            ("a2c://method/app/-//etc/passwd", "absolute"),
            ("a2c://method/../x/-/a.md", "`..`"),
            ("a2c://method/app/-/.a2c-receipt.json", "bookkeeping"),
            ("a2c://method/app/-/rules\\x.md", "backslash"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
