//! The method's files as MCP resources: `a2c://method/{+repo}/-/{+path}`, where `{repo}` is
//! the repository's path relative to W (`.` for W itself) and `{path}` a file below the method
//! asset root of that repository's write contract — listed and read from that version's tree
//! only. a2c's own bookkeeping in the store (names starting `.a2c-`) is not a resource; a path
//! with `..`, an absolute one, a link on the way or anything but a regular file is refused.
//!
//! URIs are RFC 3986 URIs: a listed one percent-encodes every byte of a name but the unreserved
//! characters and `/` (a space is `%20`, `%` is `%25`, `é` is `%C3%A9`, a segment `-` is
//! `%2D`), and a read decodes the repository and the path exactly once — so the template's
//! reserved expansion (`encodeURI`, as the TypeScript SDK expands `{+path}`), a client's
//! `new URL(uri).href` and the listed form all name one file, and a name that only looks
//! encoded (`with%20space.md`) is reached only as `with%2520space.md`. A text file is served
//! as `text` with its MIME type, any other as a base64 `blob`.

use std::path::Path;

use super::scope::{Repo, Scope};

/// The scheme and authority every resource URI starts with.
pub const PREFIX: &str = "a2c://method/";
/// Between the repository and the path in a URI: a repository whose path has a segment `-`
/// cannot be addressed (the first `/-/` ends the repository).
pub const SEPARATOR: &str = "/-/";
/// The URI template for any file below a repository's method tree (RFC 6570 reserved
/// expansion: a client keeps the `/` of `products/app` and `rules/core.md`).
pub const TEMPLATE: &str = "a2c://method/{+repo}/-/{+path}";
/// The most a resource may hold (a method file is text, and small).
pub const MAX_BYTES: u64 = 4 << 20;
/// Resources per page of `resources/list`.
pub const PAGE: usize = 500;

/// What a listed URI encodes: every byte but the unreserved characters and `/`.
const ENCODED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// `name` (slash-separated) as a URI writes it: percent-encoded, a segment `-` as `%2D` (so
/// that the only `/-/` is the separator).
fn encode(name: &str) -> String {
    name.split('/')
        .map(|seg| match seg {
            "-" => "%2D".to_string(),
            seg => percent_encoding::utf8_percent_encode(seg, ENCODED).to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A URI's part decoded exactly once: every `%` starts a `%XX` escape, and the bytes are UTF-8.
fn decode(part: &str, what: &str) -> Result<String, String> {
    let bytes = part.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%'
            && !(bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)))
        {
            return Err(format!("the {what} `{part}`: a `%` must start an escape such as `%25`"));
        }
    }
    percent_encoding::percent_decode_str(part)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| format!("the {what} `{part}`: its escapes are not UTF-8"))
}

/// The URI of `path` (slash-separated, below the tree) of `repo`.
pub fn uri(repo: &str, path: &str) -> String {
    format!("{PREFIX}{}{SEPARATOR}{}", encode(repo), encode(path))
}

/// A resource URI taken apart: the repository and the path below its tree, each decoded once
/// and checked.
pub fn parse(uri: &str) -> Result<(String, String), String> {
    let rest = uri
        .strip_prefix(PREFIX)
        .ok_or_else(|| format!("`{uri}` is not an a2c resource: they are written {TEMPLATE}"))?;
    let (repo, path) = rest
        .split_once(SEPARATOR)
        .ok_or_else(|| format!("`{uri}` names no path: write {TEMPLATE}"))?;
    let (repo, path) = (decode(repo, "repository")?, decode(path, "path")?);
    let (repo, path) = (repo.as_str(), path.as_str());
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

/// Reads `uri`: the bytes of the file below the tree of its repository's write contract, and
/// its path below the tree. Every refusal is a sentence naming what was asked and why.
pub fn read(scope: &Scope, uri: &str) -> Result<(String, Vec<u8>), String> {
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
    // No link on the way or at the end, a regular file of at most MAX_BYTES — opened beneath
    // the tree without following a link (not checked and then opened by path: a directory
    // swapped for a link in between serves nothing).
    read_file_below(tree, &path, MAX_BYTES, "a resource may have").map(|bytes| (path, bytes))
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

/// The MIME type of `path` by its extension, when a2c knows it.
pub fn mime(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    Some(match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "toml" => "application/toml",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "js" | "mjs" => "text/javascript",
        "py" => "text/x-python",
        "sh" => "application/x-sh",
        "rs" => "text/x-rust",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/vnd.microsoft.icon",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        _ => return None,
    })
}

/// What a read serves: UTF-8 bytes as `text` (with the extension's MIME type, else
/// `text/plain`), any other as a base64 `blob` (the extension's type, else
/// `application/octet-stream`).
pub fn contents(uri: String, path: &str, bytes: Vec<u8>) -> rmcp::model::ResourceContents {
    use base64::Engine;
    match String::from_utf8(bytes) {
        Ok(text) => rmcp::model::ResourceContents::TextResourceContents {
            uri,
            mime_type: Some(mime(path).unwrap_or("text/plain").into()),
            text,
            meta: None,
        },
        Err(e) => rmcp::model::ResourceContents::BlobResourceContents {
            uri,
            mime_type: Some(mime(path).unwrap_or("application/octet-stream").into()),
            blob: base64::engine::general_purpose::STANDARD.encode(e.into_bytes()),
            meta: None,
        },
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
        // Encoded once, decoded once: every spelling of a name is that name.
        for (name, listed) in [
            ("with space.md", "with%20space.md"),
            ("100%.md", "100%25.md"),
            ("with%20space.md", "with%2520space.md"),
            ("café.md", "caf%C3%A9.md"),
            ("a?b#c.md", "a%3Fb%23c.md"),
            ("x/-/y.md", "x/%2D/y.md"),
        ] {
            let u = uri("p/app", name);
            assert_eq!(u, format!("a2c://method/p/app/-/{listed}"));
            assert_eq!(parse(&u).unwrap().1, name, "{u}");
        }
        assert_eq!(parse("a2c://method/p/app/-/with space.md").unwrap().1, "with space.md");
        assert_eq!(
            parse("a2c://method/p%2Fapp/-/rules%2Fcore.md").unwrap(),
            ("p/app".into(), "rules/core.md".into())
        );
        assert!(
            parse("a2c://method/p/app/-/100%.md")
                .unwrap_err()
                .contains("must start an escape")
        );
        assert!(parse("a2c://method/p/app/-/%FF.md").unwrap_err().contains("not UTF-8"));
        assert!(
            parse("a2c://method/p/app/-/..%2F..%2Fetc%2Fpasswd")
                .unwrap_err()
                .contains("`..`")
        );
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
