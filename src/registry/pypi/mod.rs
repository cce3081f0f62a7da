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
//! pypi+…` packs the wheel and uploads it as a multipart POST streamed from the file (never
//! whole in memory, opened again per attempt), refusing other bytes under a published version;
//! `twine upload` of a wheel `a2c pack --format wheel` wrote works as well. Yanking is the
//! index's business, and it carries no a2c signature (`yank` and `sign` say so).

use std::collections::BTreeMap;

use super::handle::{Action, PublishRequest, Published, Registry};
use super::index::IndexEntry;
mod location;
mod page;

use super::handle::PublishError;
use super::{Index, RegistryError, Wanted, signing};
use crate::archive::Format;
use crate::archive::wheel;
use crate::net::LazyClient;
use crate::util::digest::Sha256;
use crate::util::version::MethodVersion;
pub use location::{KIND, PypiLocation};
use page::{JSON_TYPE, PageFile, parse_html, parse_json};

/// Without wanted versions, how many file sizes are asked for with a `HEAD` at most.
const MAX_HEADS: usize = 50;

pub struct PypiRegistry {
    index: PypiLocation,
    network: crate::net::Network,
}

impl PypiRegistry {
    pub fn new(index: PypiLocation, network: crate::net::Network) -> Self {
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

    /// What a2c leaves to the index's own tools (`twine upload`, its yank), in a package
    /// index's words.
    fn not_here(&self, action: Action) -> PublishError {
        let location = self.index.to_string();
        let (message, hint) = match action {
            Action::Pack => (
                format!("a package index (`{location}`) takes wheels: `a2c pack --format wheel`"),
                "leave `--format` out (a package index gets a wheel), or pack a wheel into a directory and `twine upload` it",
            ),
            Action::Yank => (
                format!("`a2c yank` does not edit the package index `{location}`"),
                "yank the file on the index itself (its web page or API): a2c reads a yanked file as a yanked version",
            ),
            Action::Sign => (
                format!("a package index (`{location}`) carries no a2c signature"),
                "pin the wheels by their hashes (every lock does); signed indexes are a2c's own registries",
            ),
        };
        PublishError::Refused {
            message,
            hint: Some(hint.into()),
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
        let crate::net::Document {
            body,
            url: page,
            content_type,
        } = client.document(&self.index.page(), Some(&accept))?;
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
            return Err(self.not_here(Action::Pack));
        }
        if r.sign.is_some() {
            return Err(self.not_here(Action::Sign));
        }
        super::handle::tree_of_version(r.tree, r.version)?;
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
                    index: self.shown().to_string(),
                    existing: existing.sha256.to_hex(),
                    new: packed.sha256.to_hex(),
                    same_tree: false,
                }
                .into());
            }
            None => {}
        }
        let file_name = wheel::file_name(&self.index.project, &version);
        let boundary = format!("a2c-{}", &packed.sha256.to_hex()[..32]);
        let (head, tail) = multipart(
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
            ("content", &file_name),
        );
        let url = self.index.upload_url();
        // Streamed from the packed file, on every attempt: the wheel is never in memory.
        let reply = client.client().map_err(RegistryError::from)?.call(
            reqwest::Method::POST,
            &url,
            &[("Content-Type", format!("multipart/form-data; boundary={boundary}"))],
            Some(crate::net::Payload::Framed {
                head,
                file: tmp.path(),
                size: packed.size,
                tail,
            }),
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

    fn refuse(&self, action: Action) -> PublishError {
        self.not_here(action)
    }
}

/// A `multipart/form-data` body around one file: what comes before the file's bytes (the text
/// `fields`, then the file field's header) and what comes after them.
fn multipart(boundary: &str, fields: &[(&str, &str)], (field, file_name): (&str, &str)) -> (Vec<u8>, Vec<u8>) {
    let mut head = Vec::with_capacity(1024);
    for (name, value) in fields {
        head.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    head.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    (head, format!("\r\n--{boundary}--\r\n").into_bytes())
}

/// The project page readers on arbitrary bytes (feature `fuzzing`): never panic, in linear
/// time (libFuzzer's `-timeout`); every file the HTML reader keeps has an absolute URL without
/// its fragment (the `#sha256=` digest is taken out of it) and is named by that URL's last path
/// segment, never by the anchor's text; a JSON page read as plain JSON lists the same files,
/// URLs and digests. `tests/it/fuzz_corpus.rs` compares the HTML reader with Python's
/// `html.parser`.
#[cfg(feature = "fuzzing")]
pub fn fuzz_page(data: &[u8]) {
    for f in page::parse_html(data, &fuzz_base()) {
        let url = url::Url::parse(&f.url).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        assert!(url.fragment().is_none(), "{f:?}");
        let last = url.path_segments().and_then(|mut s| s.next_back()).unwrap_or_default();
        assert_eq!(
            percent_encoding::percent_decode_str(last).decode_utf8_lossy(),
            f.filename
        );
    }
    // PEP 691 JSON: a second reading, as plain JSON, gives the same files in the same order.
    if let Ok(files) = page::parse_json(data) {
        let doc: serde_json::Value = serde_json::from_slice(data).expect("a page read is JSON");
        let listed = doc["files"].as_array().expect("a page read lists files");
        assert_eq!(files.len(), listed.len());
        for (f, raw) in files.iter().zip(listed) {
            assert_eq!(
                (Some(f.filename.as_str()), Some(f.url.as_str())),
                (raw["filename"].as_str(), raw["url"].as_str())
            );
            assert_eq!(f.sha256.as_deref(), raw["hashes"]["sha256"].as_str());
        }
    }
}

/// The page URL the fuzz targets read pages at.
#[cfg(feature = "fuzzing")]
fn fuzz_base() -> url::Url {
    url::Url::parse("https://pkgs.example.org/simple/esys-a2c/").expect("a URL")
}

/// What the PEP 503 reader keeps of `data` read at `https://pkgs.example.org/simple/esys-a2c/`
/// (feature `fuzzing`): each file's name, URL and sha256, for the test that compares it with a
/// reference reading (Python's `html.parser`, as pip reads pages).
#[cfg(feature = "fuzzing")]
pub fn fuzz_html_files(data: &[u8]) -> Vec<(String, String, Option<String>)> {
    page::parse_html(data, &fuzz_base())
        .into_iter()
        .map(|f| (f.filename, f.url, f.sha256))
        .collect()
}
