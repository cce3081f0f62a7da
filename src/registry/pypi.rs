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
//! Publishing is the index's upload API (the one `twine upload` uses): `a2c pack --registry
//! pypi+…` packs the wheel and uploads it, refusing other bytes under a published version;
//! `twine upload` of a wheel `a2c pack --format wheel` wrote works as well. Yanking is the
//! index's business, and it carries no a2c signature (`yank` and `sign` say so).

use std::collections::BTreeMap;

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
use url::Url;

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

/// The anchors of a PEP 503 HTML page, as pip reads them: each `<a href="URL#sha256=…"
/// data-yanked…>`, its URL resolved against the page (or the page's first `<base href>` before
/// any anchor), its file name the last segment of the URL's path (percent-decoded), never the
/// anchor's text. `tl` tokenizes the page in linear time; a comment is no anchor, an attribute
/// value in quotes may hold `>`, and of two `href`s the first counts. Entities in attribute
/// values are decoded (`html-escape`).
fn parse_html(body: &[u8], page: &Url) -> Vec<PageFile> {
    let text = String::from_utf8_lossy(body);
    let Ok(dom) = tl::parse(&text, tl::ParserOptions::default()) else {
        return Vec::new();
    };
    // Attribute names are case-insensitive in HTML; of two with one name, the first counts.
    let attribute = |tag: &tl::HTMLTag, name: &str| -> Option<String> {
        let (_, raw) = tag.attributes().iter().find(|(k, _)| k.eq_ignore_ascii_case(name))?;
        Some(html_escape::decode_html_entities(&raw.unwrap_or_default()).into_owned())
    };
    let tags = || dom.nodes().iter().filter_map(|n| n.as_tag());
    let is = |tag: &tl::HTMLTag, name: &str| tag.name().as_utf8_str().eq_ignore_ascii_case(name);
    let base = tags()
        .take_while(|t| !is(t, "a"))
        .find(|t| is(t, "base"))
        .and_then(|t| attribute(t, "href"))
        .and_then(|href| page.join(&href).ok())
        .unwrap_or_else(|| page.clone());
    tags()
        .filter(|t| is(t, "a"))
        .filter_map(|a| {
            let href = attribute(a, "href").filter(|h| !h.is_empty())?;
            let mut url = base.join(&href).ok()?;
            let sha256 = url
                .fragment()
                .and_then(|f| f.strip_prefix("sha256="))
                .map(str::to_string);
            url.set_fragment(None);
            let last = url.path_segments()?.next_back()?.to_string();
            let filename = percent_encoding::percent_decode_str(&last)
                .decode_utf8_lossy()
                .into_owned();
            Some(PageFile {
                filename,
                url: url.to_string(),
                sha256,
                size: None,
                yanked: attribute(a, "data-yanked").is_some(),
            })
        })
        .collect()
}

pub struct PypiRegistry {
    index: PypiIndex,
    network: crate::net::Network,
}

impl PypiRegistry {
    pub fn new(index: PypiIndex, network: crate::net::Network) -> Self {
        Self { index, network }
    }

    /// The version's file on the index now: `None` when the project or the version is not
    /// there yet.
    fn published(&self, client: &LazyClient, version: &MethodVersion) -> Result<Option<IndexEntry>, RegistryError> {
        let wanted = std::collections::BTreeSet::from([version.clone()]);
        match self.read_index(client, &[], Some(&wanted)) {
            Ok(index) => Ok(index.versions.into_iter().find(|e| &e.version == version)),
            Err(RegistryError::Http(e)) if matches!(*e, crate::net::HttpError::Status { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
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
        // A package index carries no a2c signature: pinned keys cannot be honoured.
        signing::unsigned_unless_unpinned(&self.shown(), trusted)?;
        let accept = format!("{JSON_TYPE}, text/html;q=0.1");
        let (body, page, content_type) = client.typed_document(&self.index.page(), &accept)?;
        let files = match content_type.split(';').next().map(str::trim) {
            Some(JSON_TYPE) => parse_json(&body).map_err(|e| self.invalid(format!("`{page}`: {e}")))?,
            _ => parse_html(&body, &page),
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
            // A page on a server names files on servers: never a path on this machine.
            if !matches!(url.scheme(), "http" | "https") {
                return Err(self.invalid(format!(
                    "`{}`: its URL `{}` is not http(s): a package index names files on a server",
                    file.filename,
                    crate::util::redact::redact(url.as_str())
                )));
            }
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
                    client.head_size(&url)?.ok_or_else(|| {
                        self.invalid(format!(
                            "`{}`: the index gives no size, and a HEAD of the file gives no Content-Length",
                            file.filename
                        ))
                    })?
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

    /// Packs the tree as the project's wheel and uploads it with the index's upload API (the
    /// one `twine upload` uses: a `multipart/form-data` POST with `:action=file_upload`), the
    /// credentials bound to the index's host going with it. The same bytes already there
    /// change nothing; other bytes under a published version are refused before the upload.
    fn publish(&self, r: &PublishRequest<'_>) -> Result<Published, PublishError> {
        if r.format != Format::Wheel {
            return Err(self.not_here("pack"));
        }
        if r.sign.is_some() {
            return Err(self.not_here("sign"));
        }
        super::publish::tree_of_version(r.tree, r.version)?;
        let version = r.version.to_string();
        let tmp = tempfile::NamedTempFile::new()?;
        let top = format!("{}-{version}", wheel::escaped(&self.index.project));
        let packed = crate::archive::pack_tree(r.tree, &top, Format::Wheel, tmp.path(), r.limits, r.deflate)?;
        let client = self.network.client(vec![self.index.simple.clone()]);
        let published = |changed| Published {
            version: r.version.clone(),
            sha256: packed.sha256,
            size: packed.size,
            format: Format::Wheel,
            tree: Some(packed.tree.clone()),
            files: packed.files,
            changed,
            landed: super::handle::Landed::Pushed {
                registry: self.shown(),
                verb: "uploaded",
                target: self.shown(),
            },
            warnings: Vec::new(),
        };
        match self.published(&client, r.version)? {
            Some(existing) if existing.sha256 == packed.sha256 => return Ok(published(false)),
            Some(existing) => {
                return Err(RegistryError::AlreadyPublished {
                    version: r.version.clone(),
                    index: std::path::PathBuf::from(self.shown()),
                    existing: existing.sha256.to_hex(),
                    new: packed.sha256.to_hex(),
                    same_tree: false,
                }
                .into());
            }
            None => {}
        }
        let file_name = wheel::file_name(&self.index.project, &version);
        let bytes = fs_err::read(tmp.path())?;
        let boundary = format!("a2c-{}", &packed.sha256.to_hex()[..32]);
        let body = multipart(
            &boundary,
            &[
                (":action", "file_upload"),
                ("protocol_version", "1"),
                ("metadata_version", "2.1"),
                ("name", &self.index.project),
                ("version", &version),
                ("filetype", "bdist_wheel"),
                ("pyversion", "py3"),
                ("sha256_digest", &packed.sha256.to_hex()),
            ],
            ("content", &file_name, &bytes),
        );
        let url = self.index.upload_url();
        let reply = client.get().map_err(RegistryError::from)?.call(
            reqwest::Method::POST,
            &url,
            &[("Content-Type", format!("multipart/form-data; boundary={boundary}"))],
            Some(crate::net::client::Payload::Bytes(body)),
        );
        let reply = reply.map_err(RegistryError::from)?;
        match reply.status {
            200..=299 => Ok(published(true)),
            // Another upload won the race, or the index keeps files it was given once.
            409 => match self.published(&client, r.version)? {
                Some(existing) if existing.sha256 == packed.sha256 => Ok(published(false)),
                _ => Err(RegistryError::from(reply.error(&url)).into()),
            },
            _ => Err(RegistryError::from(reply.error(&url)).into()),
        }
    }

    fn yank(&self, _: &MethodVersion, _: bool, _: Option<&signing::SecretKey>) -> Result<Yanked, PublishError> {
        Err(self.not_here("yank"))
    }

    fn sign(&self, _: &signing::SecretKey, _: Option<u64>) -> Result<Signed, PublishError> {
        Err(self.not_here("sign"))
    }
}

/// A `multipart/form-data` body: text `fields`, then one file field (name, file name, bytes).
fn multipart(boundary: &str, fields: &[(&str, &str)], (field, file_name, bytes): (&str, &str, &[u8])) -> Vec<u8> {
    let mut body = Vec::with_capacity(bytes.len() + 1024);
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Url {
        Url::parse("https://pypi.example.org/simple/esys-a2c/").unwrap()
    }

    #[test]
    fn html_pages_read_as_pip_reads_them() {
        let page_bytes = br#"<!DOCTYPE html><html><body>
            <a href="/packages/esys_a2c-1.0.0-py3-none-any.whl#sha256=ab12">esys_a2c-1.0.0-py3-none-any.whl</a><br>
            <A HREF='../../p/esys_a2c-1.1.0-py3-none-any.whl#sha256=cd34' data-yanked="broken &amp; replaced">esys_a2c-1.1.0-py3-none-any.whl</A>
            <abbr title="x">not a link</abbr>
            <a href="esys-a2c-1.0.0.tar.gz">esys-a2c-1.0.0.tar.gz</a>
        </body></html>"#;
        let files = parse_html(page_bytes, &page());
        assert_eq!(files.len(), 3, "{files:?}");
        assert_eq!(
            files[0].url,
            "https://pypi.example.org/packages/esys_a2c-1.0.0-py3-none-any.whl"
        );
        assert_eq!(files[0].sha256.as_deref(), Some("ab12"));
        assert!(!files[0].yanked);
        assert_eq!(files[1].filename, "esys_a2c-1.1.0-py3-none-any.whl");
        assert_eq!(
            files[1].url,
            "https://pypi.example.org/p/esys_a2c-1.1.0-py3-none-any.whl"
        );
        assert!(files[1].yanked);
        assert_eq!(files[2].sha256, None);
    }

    /// Issue 38: what the hand-written reader got wrong, each as pip reads it.
    #[test]
    fn comments_quotes_base_and_names_as_pip_reads_them() {
        let page_bytes = br#"<html><head><base href="https://cdn.example.net/files/"></head><body>
            <!-- <a href="evil-9.9.9-py3-none-any.whl#sha256=ff">esys_a2c-9.9.9-py3-none-any.whl</a> -->
            <a href="esys_a2c-1.0.0-py3-none-any.whl#sha256=ab" data-requires-python=">=3.8">whatever text</a>
            <a href="esys_a2c-1.1.0-py3-none-any.whl#sha256=cd" href="other-1.1.0-py3-none-any.whl">x</a>
            <a href="esys_a2c-1.2.0%2Blocal-py3-none-any.whl?x=1&amp;y=2#sha256=ef">y</a>
        </body></html>"#;
        let files = parse_html(page_bytes, &page());
        let names: Vec<&str> = files.iter().map(|f| f.filename.as_str()).collect();
        assert_eq!(
            names,
            [
                "esys_a2c-1.0.0-py3-none-any.whl",
                "esys_a2c-1.1.0-py3-none-any.whl",
                "esys_a2c-1.2.0+local-py3-none-any.whl"
            ],
            "{files:?}"
        );
        assert_eq!(
            files[0].url,
            "https://cdn.example.net/files/esys_a2c-1.0.0-py3-none-any.whl"
        );
        assert_eq!(
            files[2].url,
            "https://cdn.example.net/files/esys_a2c-1.2.0%2Blocal-py3-none-any.whl?x=1&y=2"
        );
        assert_eq!(files[2].sha256.as_deref(), Some("ef"));
    }

    /// Issue 38: a page of 4 MiB of `&` with no `;` (and of unclosed tags) is read, its anchor
    /// found (the old reader took ~8.7 s for 512 KiB of `&`, and four times as long per
    /// doubling: this test would not end). The time is measured in bench/, not asserted here.
    #[test]
    fn a_hostile_page_is_read_in_linear_time() {
        for filler in [&b"&"[..], b"<a href=\"", b"<!--", b"<"] {
            let mut bytes = b"<a href=\"esys_a2c-1.0.0-py3-none-any.whl#sha256=ab\">x</a>".to_vec();
            while bytes.len() < 4 << 20 {
                bytes.extend_from_slice(filler);
            }
            let files = parse_html(&bytes, &page());
            assert_eq!(
                files.first().map(|f| f.filename.as_str()),
                Some("esys_a2c-1.0.0-py3-none-any.whl")
            );
        }
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
