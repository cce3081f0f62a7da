//! A Python package index as a registry: the "simple" repository API (PEP 503 HTML, PEP 691
//! JSON), read as pip reads it, each version of the method one wheel of one project.
//!
//! The location is `pypi+https://HOST/PATH/simple/` (the index pip's `--index-url` names),
//! with the project after a `#` when it is not the method's own (`esys-a2c`):
//! `pypi+https://pypi.example.org/simple/#acme-method`. The project's page is read with
//! content negotiation (PEP 691 JSON when the server offers it, HTML otherwise); each wheel on
//! it (PEP 427 file names, the project's normalized name) is a version; `data-yanked` /
//! `yanked` is a2c's yank; the sha256 comes from the `hashes` (JSON) or the URL's `#sha256=`
//! fragment (HTML) and is required; the size from the JSON `size` (PEP 700), else, for the
//! versions a lock needs, from a `HEAD` of the file. A version with two wheels is an error that
//! names them, for the versions that are wanted. Files that are not wheels (sdists) are passed
//! over. The download is the lock's like any other: the wheel's URL, sha256 and size, checked.
//!
//! Publishing is the index's own upload API: `a2c pack --format wheel` makes the wheel and
//! `twine upload` puts it there; yanking is the index's business, and it carries no a2c
//! signature (`pack`, `yank` and `sign` say so, with what to run instead).

use std::collections::BTreeMap;

use url::Url;

use super::handle::{PublishRequest, Published, Registry, Signed, Yanked};
use super::index::IndexEntry;
pub use super::location::PypiIndex;
use super::publish::PublishError;
use super::{Index, RegistryError, Wanted, signing};
use crate::archive::Format;
use crate::archive::wheel;
use crate::net::LazyClient;
use crate::util::digest::Sha256;
use crate::util::version::MethodVersion;

/// One file the project page lists.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PageFile {
    filename: String,
    url: String,
    sha256: Option<String>,
    size: Option<u64>,
    yanked: bool,
}

const JSON_TYPE: &str = "application/vnd.pypi.simple.v1+json";

/// Without wanted versions, how many file sizes are asked for with a `HEAD` at most.
const MAX_HEADS: usize = 50;

/// The files of a PEP 691 JSON page.
fn parse_json(body: &[u8]) -> Result<Vec<PageFile>, String> {
    #[derive(serde::Deserialize)]
    struct Page {
        files: Vec<File>,
    }
    #[derive(serde::Deserialize)]
    struct File {
        filename: String,
        url: String,
        #[serde(default)]
        hashes: BTreeMap<String, String>,
        #[serde(default)]
        size: Option<u64>,
        #[serde(default)]
        yanked: serde_json::Value,
    }
    let page: Page = serde_json::from_slice(body).map_err(|e| format!("not a PEP 691 page: {e}"))?;
    Ok(page
        .files
        .into_iter()
        .map(|f| PageFile {
            sha256: f.hashes.get("sha256").cloned(),
            yanked: match &f.yanked {
                serde_json::Value::Bool(b) => *b,
                serde_json::Value::String(_) => true,
                _ => false,
            },
            filename: f.filename,
            url: f.url,
            size: f.size,
        })
        .collect())
}

/// The anchors of a PEP 503 HTML page: each `<a href="URL#sha256=…" data-yanked…>NAME</a>`.
fn parse_html(body: &[u8]) -> Vec<PageFile> {
    let text = String::from_utf8_lossy(body);
    let mut files = Vec::new();
    let lower = text.to_ascii_lowercase();
    let mut at = 0;
    while let Some(start) = lower[at..].find("<a").map(|i| at + i) {
        let Some(tag_end) = lower[start..].find('>').map(|i| start + i) else {
            break;
        };
        let Some(close) = lower[tag_end..].find("</a").map(|i| tag_end + i) else {
            break;
        };
        at = close;
        // `<a` followed by whitespace: not `<abbr>`.
        if !text[start + 2..].starts_with(|c: char| c.is_ascii_whitespace()) {
            continue;
        }
        let attributes = attributes(&text[start + 2..tag_end]);
        let Some(href) = attributes.get("href") else { continue };
        let href = unescape(href);
        let (url, fragment) = href.split_once('#').unwrap_or((href.as_str(), ""));
        let sha256 = fragment.strip_prefix("sha256=").map(str::to_string);
        let name = unescape(text[tag_end + 1..close].trim());
        let filename = match name.is_empty() {
            true => url.rsplit('/').next().unwrap_or_default().to_string(),
            false => name,
        };
        files.push(PageFile {
            filename,
            url: url.to_string(),
            sha256,
            size: None,
            yanked: attributes.contains_key("data-yanked"),
        });
    }
    files
}

/// The attributes of a tag (`name="value"`, `name='value'`, `name=value`, `name`), names in
/// lower case.
fn attributes(tag: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = tag.trim_start();
    while !rest.is_empty() {
        let name_end = rest
            .find(|c: char| c == '=' || c.is_ascii_whitespace() || c == '/')
            .unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        rest = rest[name_end..].trim_start();
        let value = if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start();
            match after.chars().next() {
                Some(q @ ('"' | '\'')) => {
                    let end = after[1..].find(q).map_or(after.len(), |i| i + 1);
                    rest = after.get(end + 1..).unwrap_or_default();
                    after[1..end].to_string()
                }
                _ => {
                    let end = after.find(|c: char| c.is_ascii_whitespace()).unwrap_or(after.len());
                    rest = &after[end..];
                    after[..end].to_string()
                }
            }
        } else {
            if name.is_empty() {
                rest = rest.get(1..).unwrap_or_default();
            }
            String::new()
        };
        if !name.is_empty() {
            out.insert(name, value);
        }
        rest = rest.trim_start();
    }
    out
}

/// The five entities HTML escapes in attribute values and text, and numeric ones.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest.find(';').filter(|&e| e <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e if e.starts_with("#x") || e.starts_with("#X") => {
                u32::from_str_radix(&e[2..], 16).ok().and_then(char::from_u32)
            }
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

pub struct PypiRegistry {
    index: PypiIndex,
}

impl PypiRegistry {
    pub fn new(index: PypiIndex) -> Self {
        Self { index }
    }

    /// What a2c leaves to the index's own tools (`twine upload`, its yank).
    fn not_here(&self, what: &'static str) -> PublishError {
        PublishError::PackageIndex {
            what,
            location: self.index.to_string(),
        }
    }

    fn invalid(&self, reason: String) -> RegistryError {
        RegistryError::InvalidIndex {
            location: self.index.to_string(),
            reason,
        }
    }
}

impl Registry for PypiRegistry {
    fn shown(&self) -> String {
        self.index.to_string()
    }

    fn read_index(&self, client: &LazyClient, trusted: &[String], wanted: Wanted<'_>) -> Result<Index, RegistryError> {
        if !trusted.is_empty() {
            // A package index carries no a2c signature: pinned keys cannot be honoured.
            return Err(signing::SignError::Unsigned {
                registry: self.shown(),
                keys: trusted
                    .iter()
                    .map(|k| signing::public_key_id(k))
                    .collect::<Result<Vec<_>, _>>()?
                    .join(", "),
            }
            .into());
        }
        let http = client.get()?;
        let accept = format!("{JSON_TYPE}, text/html;q=0.1");
        let (body, page, content_type) = http.get_typed(&self.index.page(), &[("Accept", accept)])?;
        let files = match content_type.split(';').next().map(str::trim) {
            Some(JSON_TYPE) => parse_json(&body).map_err(|e| self.invalid(format!("`{page}`: {e}")))?,
            _ => parse_html(&body),
        };
        // Each wheel of the project, by version.
        let mut by_version: BTreeMap<MethodVersion, Vec<PageFile>> = BTreeMap::new();
        let mut foreign = Vec::new();
        for f in files {
            let Some((dist, version)) = wheel::parse_file_name(&f.filename) else {
                continue;
            };
            if dist != self.index.project {
                continue;
            }
            match version.parse::<MethodVersion>() {
                Ok(v) => by_version.entry(v).or_default().push(f),
                Err(_) => foreign.push(f.filename),
            }
        }
        let mut index = Index::new();
        index.fetched_from = Some(page.clone());
        // Without `wanted`, every version is read, newest first, until [`MAX_HEADS`] sizes were
        // asked for with a `HEAD` (an HTML page gives none); the rest are listed, not read.
        let mut heads = 0;
        let mut skipped = 0;
        for (version, files) in by_version.into_iter().rev() {
            let needed = match wanted {
                Some(w) => w.contains(&version),
                None if heads < MAX_HEADS => true,
                None => {
                    skipped += 1;
                    false
                }
            };
            let file = match files.as_slice() {
                [one] => one,
                many if needed => {
                    let names: Vec<&str> = many.iter().map(|f| f.filename.as_str()).collect();
                    return Err(self.invalid(format!(
                        "{version} has {} wheels ({}): a method version is one wheel",
                        many.len(),
                        names.join(", ")
                    )));
                }
                _ => {
                    index.listed.push(version);
                    continue;
                }
            };
            if !needed {
                index.listed.push(version);
                continue;
            }
            let url = page
                .join(&file.url)
                .map_err(|e| self.invalid(format!("`{}`: its URL does not resolve: {e}", file.filename)))?;
            let sha256 = file.sha256.as_deref().ok_or_else(|| {
                self.invalid(format!(
                    "`{}` has no sha256 on the project page: a2c pins every file by its hash",
                    file.filename
                ))
            })?;
            let sha256 = Sha256::parse(&sha256.to_ascii_lowercase())
                .map_err(|e| self.invalid(format!("`{}`: its sha256: {e}", file.filename)))?;
            let size = match file.size {
                Some(size) => size,
                None => {
                    heads += 1;
                    head_size(&http, &url).map_err(|why| self.invalid(format!("`{}`: {why}", file.filename)))?
                }
            };
            index.versions.push(IndexEntry {
                version,
                url: url.to_string(),
                sha256,
                size,
                format: Format::Wheel,
                tree: None,
                yanked: file.yanked,
            });
        }
        index.versions.reverse();
        if skipped > 0 {
            index.truncated = Some(format!(
                "`{}` lists {skipped} older versions whose sizes were not asked for (the newest {MAX_HEADS} were)",
                self.index.page()
            ));
        }
        if !foreign.is_empty() {
            index.truncated.get_or_insert_with(|| {
                format!(
                    "wheels whose versions a2c cannot read were passed over: {}",
                    foreign.join(", ")
                )
            });
        }
        Ok(index)
    }

    fn publish(&self, _: &PublishRequest<'_>) -> Result<Published, PublishError> {
        Err(self.not_here("pack"))
    }

    fn yank(&self, _: &MethodVersion, _: bool, _: Option<&signing::SecretKey>) -> Result<Yanked, PublishError> {
        Err(self.not_here("yank"))
    }

    fn sign(&self, _: &signing::SecretKey, _: Option<u64>) -> Result<Signed, PublishError> {
        Err(self.not_here("sign"))
    }
}

/// The size of the file at `url`, from the `Content-Length` of a `HEAD`.
fn head_size(http: &crate::net::HttpClient, url: &Url) -> Result<u64, String> {
    let reply = http
        .call(reqwest::Method::HEAD, url, &[], None)
        .map_err(|e| e.to_string())?;
    if !(200..300).contains(&reply.status) {
        return Err(reply.error(url).to_string());
    }
    reply
        .headers
        .get(reqwest::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| "the index gives no size, and a HEAD of the file gives no Content-Length".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_pages_read_as_pip_reads_them() {
        let page = br#"<!DOCTYPE html><html><body>
            <a href="/packages/esys_a2c-1.0.0-py3-none-any.whl#sha256=ab12">esys_a2c-1.0.0-py3-none-any.whl</a><br>
            <A HREF='../../p/esys_a2c-1.1.0-py3-none-any.whl#sha256=cd34' data-yanked="broken &amp; replaced">esys_a2c-1.1.0-py3-none-any.whl</A>
            <abbr title="x">not a link</abbr>
            <a href="esys-a2c-1.0.0.tar.gz">esys-a2c-1.0.0.tar.gz</a>
        </body></html>"#;
        let files = parse_html(page);
        assert_eq!(files.len(), 3, "{files:?}");
        assert_eq!(files[0].url, "/packages/esys_a2c-1.0.0-py3-none-any.whl");
        assert_eq!(files[0].sha256.as_deref(), Some("ab12"));
        assert!(!files[0].yanked);
        assert_eq!(files[1].filename, "esys_a2c-1.1.0-py3-none-any.whl");
        assert!(files[1].yanked);
        assert_eq!(files[2].sha256, None);
        assert_eq!(unescape("a&amp;b&#x41;&#66;&bogus;"), "a&bAB&bogus;");
    }

    #[test]
    fn json_pages_read_hashes_sizes_and_yanks() {
        let page = br#"{"meta":{"api-version":"1.1"},"name":"esys-a2c","files":[
            {"filename":"esys_a2c-1.0.0-py3-none-any.whl","url":"https://f/x.whl","hashes":{"sha256":"ab"},"size":10,"yanked":false},
            {"filename":"esys_a2c-1.1.0-py3-none-any.whl","url":"y.whl","hashes":{},"yanked":"bad build"}]}"#;
        let files = parse_json(page).unwrap();
        assert_eq!(files[0].size, Some(10));
        assert_eq!(files[0].sha256.as_deref(), Some("ab"));
        assert!(files[1].yanked && files[1].sha256.is_none());
        assert!(parse_json(b"<html>").is_err());
    }
}
