//! OCI distribution registries as a transport (`oci://HOST[:PORT]/NAMESPACE/REPO`): a method
//! bundle is an OCI artifact — an image manifest with `artifactType`
//! [`ARTIFACT_TYPE`], the empty config, one layer (the bundle, its media type naming the
//! format) and annotations — tagged with the version. The layer's digest is the bundle's
//! sha256, so a lock is the same whichever transport served it.
//!
//! `oci://` speaks HTTPS, except to loopback hosts, where it speaks plain HTTP (as docker does
//! for registries on localhost), and to hosts listed in `A2C_OCI_PLAIN_HTTP` (the explicit
//! opt-in, like `oras --plain-http`).
//!
//! Yanks and the index's signature travel as the `a2c-index` artifact. A locked OCI source is
//! the blob URL of its sha256, so install reuses the HTTP download path. Written over a2c's own
//! client rather than `oci-client` 0.18, which has the same reqwest and rustls but adds chrono,
//! `oci-spec` (builder and derive macros), regex, tracing and a second base64, for the handful
//! of calls needed here (about 500 lines with the index artifact).

use reqwest::Method;
use serde_json::json;

use super::{Index, IndexEntry, RegistryError};
use crate::archive::Format;
use crate::net::{HttpClient, Payload};
use crate::util::digest::Sha256;
use crate::util::version::MethodVersion;

/// The `artifactType` of an a2c method bundle.
pub const ARTIFACT_TYPE: &str = "application/vnd.esys.a2c.bundle.v1";
const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const EMPTY_TYPE: &str = "application/vnd.oci.empty.v1+json";
const EMPTY_DIGEST: &str = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
/// The tag of the index artifact: the registry's index (the file registry's format, entries
/// `@sha256:<manifest digest>`), carrying yanks, `serial`, `expires` and, when signed, the
/// minisign signature of its bytes. Not a version, so the tag scan never takes it for one.
pub const INDEX_TAG: &str = "a2c-index";
/// The `artifactType` of the index artifact, and its layers' media types.
pub const INDEX_ARTIFACT_TYPE: &str = "application/vnd.esys.a2c.index.v1";
pub const INDEX_LAYER_TYPE: &str = "application/vnd.esys.a2c.index.v1+json";
pub const SIGNATURE_LAYER_TYPE: &str = "application/vnd.esys.a2c.index.v1.minisig";
/// Annotation keys.
/// The file name a layer is saved under by other clients (`oras pull`).
pub const ANNOTATION_TITLE: &str = "org.opencontainers.image.title";
pub const ANNOTATION_VERSION: &str = "org.opencontainers.image.version";
pub const ANNOTATION_TREE: &str = "esys.a2c.tree";
pub const ANNOTATION_MIN_A2C: &str = "esys.a2c.min-a2c";

/// The media type of a bundle layer of `format`.
pub fn layer_type(format: Format) -> &'static str {
    match format {
        Format::TarGz => "application/vnd.esys.a2c.bundle.v1.tar+gzip",
        Format::Zip => "application/vnd.esys.a2c.bundle.v1.zip",
        Format::Wheel => "application/vnd.esys.a2c.bundle.v1.wheel+zip",
    }
}

fn format_of(media_type: &str) -> Option<Format> {
    [Format::TarGz, Format::Zip, Format::Wheel]
        .into_iter()
        .find(|f| layer_type(*f) == media_type)
}

mod location;
pub use location::{KIND, OciLocation};

fn invalid(oci: &OciLocation, reason: String) -> RegistryError {
    RegistryError::InvalidIndex {
        location: oci.display(),
        reason,
    }
}

/// The manifest of `reference` (a tag or digest), its digest, or `None` when there is none.
fn manifest(
    http: &HttpClient,
    oci: &OciLocation,
    reference: &str,
) -> Result<Option<(serde_json::Value, String)>, RegistryError> {
    let url = oci.manifest_url(reference);
    let reply = http.call(Method::GET, &url, &[("Accept", MANIFEST_TYPE.to_string())], None)?;
    match reply.status {
        200 => {}
        404 => return Ok(None),
        _ => return Err(reply.error(&url).into()),
    }
    let (headers, body) = (reply.headers, reply.body);
    let digest = headers
        .get("docker-content-digest")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .unwrap_or_else(|| {
            format!(
                "sha256:{}",
                crate::util::digest::sha256_reader(&body[..])
                    .map(|(s, _)| s.to_hex())
                    .unwrap_or_default()
            )
        });
    let doc = serde_json::from_slice(&body).map_err(|e| invalid(oci, format!("manifest `{reference}`: {e}")))?;
    Ok(Some((doc, digest)))
}

/// The most version tags whose manifests one listing reads (one request each): a registry that
/// lists more gets its newest this many read, and the listing says what it left out.
pub const MAX_LISTED_MANIFESTS: usize = 1000;

/// The registry's versions as an index: the tags that are versions, each manifest's one layer.
/// With `wanted`, only those versions' manifests are read (the other version tags are kept in
/// `listed`, for messages); without, at most [`MAX_LISTED_MANIFESTS`], the newest first.
fn tags_index(http: &HttpClient, oci: &OciLocation, wanted: super::Wanted<'_>) -> Result<Index, RegistryError> {
    let url = oci.v2("tags/list");
    let reply = http.call(Method::GET, &url, &[], None)?;
    let body = &reply.body;
    let tags: Vec<String> = match reply.status {
        200 => {
            let doc: serde_json::Value =
                serde_json::from_slice(body).map_err(|e| invalid(oci, format!("tag list: {e}")))?;
            doc["tags"]
                .as_array()
                .map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_string)).collect())
                .unwrap_or_default()
        }
        404 => Vec::new(),
        _ => return Err(reply.error(&url).into()),
    };
    let mut index = Index::new();
    let mut versions: Vec<(MethodVersion, String)> = tags
        .into_iter()
        .filter_map(|t| t.parse::<MethodVersion>().ok().map(|v| (v, t)))
        .collect();
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    versions.dedup_by(|a, b| a.0 == b.0);
    let (read, skipped): (Vec<_>, Vec<_>) = match wanted {
        Some(w) => versions.into_iter().partition(|(v, _)| w.contains(v)),
        None => {
            let rest = versions.split_off(versions.len().min(MAX_LISTED_MANIFESTS));
            (versions, rest)
        }
    };
    if wanted.is_none() && !skipped.is_empty() {
        index.truncated = Some(format!(
            "`{}` lists {} version tags; only the newest {MAX_LISTED_MANIFESTS} were read (down to {})",
            oci.display(),
            read.len() + skipped.len(),
            read.last().map(|(v, _)| v.to_string()).unwrap_or_default()
        ));
    }
    index.listed = skipped.into_iter().map(|(v, _)| v).collect();
    for (version, tag) in read {
        let Some((doc, digest)) = manifest(http, oci, &tag)? else {
            continue;
        };
        if doc["artifactType"].as_str() != Some(ARTIFACT_TYPE) {
            // Another artifact under a version-like tag (an image, an `oras push` without
            // `--artifact-type`): not ours, and said so (`-v`, and when that version is pinned).
            index.foreign.push(super::index::Foreign {
                what: foreign(&tag, &doc),
                hint: format!(
                    "push {version} with `a2c pack --registry oci://…` (or with oras: `--artifact-type {ARTIFACT_TYPE}` and a layer of type `{}`)",
                    layer_type(Format::TarGz)
                ),
                version,
            });
            continue;
        }
        let layer = &doc["layers"][0];
        let bad = |what: &str| invalid(oci, format!("manifest of {version}: {what}"));
        let format = layer["mediaType"]
            .as_str()
            .and_then(format_of)
            .ok_or_else(|| bad("unknown layer media type"))?;
        let sha = layer["digest"]
            .as_str()
            .and_then(|d| d.strip_prefix("sha256:"))
            .and_then(|h| Sha256::parse(h).ok())
            .ok_or_else(|| bad("the layer digest is not sha256"))?;
        let size = layer["size"].as_u64().ok_or_else(|| bad("no layer size"))?;
        let tree = doc["annotations"][ANNOTATION_TREE].as_str().map(str::to_string);
        index.versions.push(IndexEntry {
            version,
            url: format!("{}@{digest}", oci.display()),
            sha256: sha,
            size,
            format,
            tree,
            yanked: false,
        });
    }
    index.versions.sort_by(|a, b| a.version.cmp(&b.version));
    Ok(index)
}

/// What a version-like tag that is not an a2c bundle holds, for messages: its artifact type
/// and its layers (media type and title).
fn foreign(tag: &str, doc: &serde_json::Value) -> String {
    let kind = match doc["artifactType"].as_str() {
        Some(t) => format!("an artifact of type `{t}`"),
        None => match doc["config"]["mediaType"].as_str() {
            Some(c) if c != EMPTY_TYPE => format!("an artifact with config `{c}` and no artifactType"),
            _ => "an artifact with no artifactType (an `oras push` without `--artifact-type`?)".into(),
        },
    };
    let layers: Vec<String> = doc["layers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            let media = l["mediaType"].as_str().unwrap_or("?");
            match l["annotations"][ANNOTATION_TITLE].as_str() {
                Some(title) => format!("`{title}` ({media})"),
                None => format!("a `{media}` layer"),
            }
        })
        .collect();
    let layers = match layers.is_empty() {
        true => "no layer".to_string(),
        false => layers.join(", "),
    };
    format!("the tag `{tag}` holds {kind} carrying {layers}, not an a2c bundle")
}

/// A blob read into memory (a document: at most `A2C_MAX_DOCUMENT_BYTES`), checked against
/// its digest — content addressing is what makes any mirror safe.
fn document_blob(http: &HttpClient, oci: &OciLocation, digest: &str) -> Result<Vec<u8>, RegistryError> {
    let url = oci.blob_url(digest);
    let reply = http.call(Method::GET, &url, &[], None)?;
    if reply.status != 200 {
        return Err(reply.error(&url).into());
    }
    let actual = format!("sha256:{}", Sha256::of(&reply.body).to_hex());
    if actual != digest {
        return Err(invalid(oci, format!("the blob {digest} holds other bytes ({actual})")));
    }
    Ok(reply.body)
}

/// The index artifact (tag [`INDEX_TAG`]): the index bytes and the signature text, if any.
/// The index bytes and the signature text of the index artifact.
type IndexArtifact = (Vec<u8>, Option<String>);

fn index_artifact(http: &HttpClient, oci: &OciLocation) -> Result<Option<IndexArtifact>, RegistryError> {
    let Some((doc, _)) = manifest(http, oci, INDEX_TAG)? else {
        return Ok(None);
    };
    if doc["artifactType"].as_str() != Some(INDEX_ARTIFACT_TYPE) {
        return Err(invalid(
            oci,
            format!("the tag `{INDEX_TAG}` holds another artifact than an a2c index"),
        ));
    }
    let layer = |media: &str| {
        doc["layers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|l| l["mediaType"].as_str() == Some(media))
            .and_then(|l| l["digest"].as_str())
            .map(str::to_string)
    };
    let index = layer(INDEX_LAYER_TYPE)
        .ok_or_else(|| invalid(oci, format!("the `{INDEX_TAG}` artifact has no index layer")))?;
    let bytes = document_blob(http, oci, &index)?;
    let signature = match layer(SIGNATURE_LAYER_TYPE) {
        Some(d) => Some(String::from_utf8_lossy(&document_blob(http, oci, &d)?).into_owned()),
        None => None,
    };
    Ok(Some((bytes, signature)))
}

/// Entry URLs in the index artifact are `@sha256:<manifest digest>`, relative to the registry
/// that serves it (so that a replica's copy names the replica): made absolute here.
fn absolute_urls(oci: &OciLocation, index: &mut Index) {
    for e in &mut index.versions {
        if e.url.starts_with('@') {
            e.url = format!("{}{}", oci.display(), e.url);
        }
    }
}

/// The registry's index. With `trusted` keys pinned, only the signed index artifact counts:
/// its minisign signature must verify with one of them before anything in it is parsed.
/// Without, the versions come from the tags, with the yanks of the index artifact if any.
pub fn read_index(
    http: &HttpClient,
    oci: &OciLocation,
    trusted: &[String],
    wanted: super::Wanted<'_>,
) -> Result<Index, RegistryError> {
    let artifact = index_artifact(http, oci)?;
    let shown = format!("{}:{INDEX_TAG}", oci.display());
    if !trusted.is_empty() {
        let (bytes, signature) = artifact.unwrap_or_default();
        super::signing::verify(&oci.display(), &bytes, signature.as_deref(), trusted)?;
        let text = String::from_utf8(bytes).map_err(|_| invalid(oci, "the index is not UTF-8".into()))?;
        let mut index = Index::parse(&text, &shown)?;
        absolute_urls(oci, &mut index);
        return Ok(index);
    }
    let mut index = tags_index(http, oci, wanted)?;
    if let Some((bytes, _)) = artifact {
        let text = String::from_utf8(bytes).map_err(|_| invalid(oci, "the index is not UTF-8".into()))?;
        let published = Index::parse(&text, &shown)?;
        for e in &mut index.versions {
            e.yanked = published.get(&e.version).is_some_and(|p| p.yanked);
        }
        index.serial = published.serial;
    }
    Ok(index)
}

/// Whether the index artifact carries a signature (a change without a key leaves it stale).
pub fn is_signed(http: &HttpClient, oci: &OciLocation) -> Result<bool, RegistryError> {
    Ok(index_artifact(http, oci)?.is_some_and(|(_, s)| s.is_some()))
}

/// The index to write next: the versions of the tags with the published yanks, `serial` one
/// above the published one, entry URLs relative (`@sha256:…`).
fn next_index(http: &HttpClient, oci: &OciLocation) -> Result<Index, RegistryError> {
    let mut index = read_index(http, oci, &[], None)?;
    if let Some(cut) = &index.truncated {
        return Err(invalid(
            oci,
            format!("{cut}: a2c will not rewrite its index from a partial listing"),
        ));
    }
    index.serial = Some(index.serial.unwrap_or(0) + 1);
    let prefix = oci.display();
    for e in &mut index.versions {
        if let Some(rest) = e.url.strip_prefix(&prefix) {
            e.url = rest.to_string();
        }
    }
    Ok(index)
}

/// Pushes `index` as the index artifact, signed with `key` when given (tag [`INDEX_TAG`]).
fn write_index(
    http: &HttpClient,
    oci: &OciLocation,
    index: &Index,
    key: Option<&super::signing::SecretKey>,
) -> Result<(), RegistryError> {
    let bytes = index.to_json().into_bytes();
    let mut layers = Vec::new();
    let mut blobs = vec![(INDEX_LAYER_TYPE, bytes.clone())];
    if let Some(key) = key {
        let signature = super::signing::sign(key, &bytes, "a2c index esys/a2c");
        blobs.push((SIGNATURE_LAYER_TYPE, signature.into_bytes()));
    }
    push_blob(http, oci, EMPTY_DIGEST, Payload::Bytes(b"{}".to_vec()))?;
    for (media, blob) in blobs {
        let digest = format!("sha256:{}", Sha256::of(&blob).to_hex());
        layers.push(json!({ "mediaType": media, "digest": digest, "size": blob.len() }));
        push_blob(http, oci, &digest, Payload::Bytes(blob))?;
    }
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "artifactType": INDEX_ARTIFACT_TYPE,
        "config": { "mediaType": EMPTY_TYPE, "digest": EMPTY_DIGEST, "size": 2 },
        "layers": layers,
        "annotations": { "esys.a2c.serial": index.serial.unwrap_or(0).to_string() },
    });
    put_manifest(http, oci, INDEX_TAG, &manifest)
}

/// `a2c sign --registry oci://…`: the index of the tags (and the published yanks), a new
/// serial, `expires` when asked, signed with `key` and pushed as the index artifact.
pub fn sign(
    http: &HttpClient,
    oci: &OciLocation,
    key: &super::signing::SecretKey,
    expiry: super::handle::Expiry,
) -> Result<Index, RegistryError> {
    let mut index = next_index(http, oci)?;
    index.expires = match expiry {
        super::handle::Expiry::InDays(days) => Some(crate::util::time::rfc3339_after(days as i64 * 86_400)),
        // The index artifact is rebuilt from the tags: it keeps no earlier expiry.
        super::handle::Expiry::Keep | super::handle::Expiry::Never => None,
    };
    write_index(http, oci, &index, Some(key))?;
    Ok(index)
}

/// `a2c yank --registry oci://…`: marks `version` yanked (or not, `undo`) in the index
/// artifact; signed with `key` when given. `Ok(false)` when nothing changed.
pub fn yank(
    http: &HttpClient,
    oci: &OciLocation,
    version: &MethodVersion,
    undo: bool,
    key: Option<&super::signing::SecretKey>,
) -> Result<bool, RegistryError> {
    let mut index = next_index(http, oci)?;
    let available = super::available(&index);
    let Some(entry) = index.versions.iter_mut().find(|e| &e.version == version) else {
        let other = index.foreign_at(version);
        return Err(match other {
            Some(other) => RegistryError::NotPublished {
                version: version.clone(),
                location: oci.display(),
                available: available.into(),
                pinned_by: Vec::new(),
                other: Some(other),
            },
            None => RegistryError::NothingToYank {
                version: version.clone(),
                location: oci.display(),
                available: available.into(),
            },
        });
    };
    if entry.yanked != undo {
        return Ok(false);
    }
    entry.yanked = !undo;
    write_index(http, oci, &index, key)?;
    Ok(true)
}

fn put_manifest(
    http: &HttpClient,
    oci: &OciLocation,
    tag: &str,
    manifest: &serde_json::Value,
) -> Result<(), RegistryError> {
    let url = oci.manifest_url(tag);
    let reply = http.call(
        Method::PUT,
        &url,
        &[("Content-Type", MANIFEST_TYPE.to_string())],
        Some(Payload::Bytes(serde_json::to_vec(manifest).expect("serializes"))),
    )?;
    if reply.status != 201 {
        return Err(reply.error(&url).into());
    }
    Ok(())
}

fn push_blob(http: &HttpClient, oci: &OciLocation, digest: &str, bytes: Payload<'_>) -> Result<(), RegistryError> {
    let head = oci.blob_url(digest);
    if http.call(Method::HEAD, &head, &[], None)?.status == 200 {
        return Ok(()); // content-addressed: already there
    }
    let start = oci.v2("blobs/uploads/");
    let reply = http.call(Method::POST, &start, &[], None)?;
    if reply.status != 202 {
        return Err(reply.error(&start).into());
    }
    let location = reply
        .headers
        .get("location")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| invalid(oci, "the upload answer has no Location".into()))?;
    let mut url = start.join(location).map_err(|e| invalid(oci, e.to_string()))?;
    url.query_pairs_mut().append_pair("digest", digest);
    let reply = http.call(
        Method::PUT,
        &url,
        &[("Content-Type", "application/octet-stream".to_string())],
        Some(bytes),
    )?;
    if reply.status != 201 {
        return Err(reply.error(&url).into());
    }
    Ok(())
}

/// Pushes `bundle` (the packed file, `size` bytes, streamed) as `version`. `Ok(false)` when
/// that version is already there with the same layer; other bytes under it are refused.
#[allow(clippy::too_many_arguments)]
pub fn push(
    http: &HttpClient,
    oci: &OciLocation,
    version: &MethodVersion,
    format: Format,
    bundle: &std::path::Path,
    size: u64,
    sha256: &Sha256,
    tree: &str,
    min_a2c: Option<&MethodVersion>,
) -> Result<bool, RegistryError> {
    let layer_digest = format!("sha256:{}", sha256.to_hex());
    if let Some((doc, _)) = manifest(http, oci, &version.to_string())? {
        let existing = doc["layers"][0]["digest"].as_str().unwrap_or_default().to_string();
        if existing == layer_digest {
            return Ok(false);
        }
        return Err(RegistryError::AlreadyPublished {
            version: version.clone(),
            index: oci.display().to_string(),
            existing: existing.trim_start_matches("sha256:").to_string(),
            new: sha256.to_hex(),
            same_tree: doc["annotations"][ANNOTATION_TREE].as_str() == Some(tree),
        });
    }
    push_blob(http, oci, EMPTY_DIGEST, Payload::Bytes(b"{}".to_vec()))?;
    push_blob(http, oci, &layer_digest, Payload::File(bundle, size))?;
    let mut annotations = json!({ ANNOTATION_VERSION: version.to_string(), ANNOTATION_TREE: tree });
    if let Some(min) = min_a2c {
        annotations[ANNOTATION_MIN_A2C] = json!(min.to_string());
    }
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "artifactType": ARTIFACT_TYPE,
        "config": { "mediaType": EMPTY_TYPE, "digest": EMPTY_DIGEST, "size": 2 },
        // The title is the file name other clients (oras pull) save the layer under.
        "layers": [{
            "mediaType": layer_type(format),
            "digest": layer_digest,
            "size": size,
            "annotations": { ANNOTATION_TITLE: format!("a2c-{version}.{}", format.extension()) },
        }],
        "annotations": annotations,
    });
    put_manifest(http, oci, &version.to_string(), &manifest)?;
    Ok(true)
}

/// An OCI distribution registry repository (`oci://HOST/NAMESPACE/REPO`): versions are tags,
/// each a manifest whose one layer is the bundle; the index travels as the `a2c-index`
/// artifact.
pub struct OciRegistry {
    oci: OciLocation,
    network: crate::net::Network,
}

impl OciRegistry {
    pub fn new(oci: OciLocation, network: crate::net::Network) -> Self {
        Self { oci, network }
    }

    /// A client whose credentials are bound to this registry's host (the user named it).
    fn client(&self) -> Result<std::sync::Arc<HttpClient>, RegistryError> {
        Ok(self.network.client(vec![self.oci.api.clone()]).client()?)
    }
}

impl super::handle::Registry for OciRegistry {
    fn shown(&self) -> String {
        self.oci.display()
    }

    fn read_index(
        &self,
        client: &crate::net::LazyClient,
        trusted: &[String],
        wanted: super::Wanted<'_>,
    ) -> Result<Index, RegistryError> {
        read_index(&*client.client()?, &self.oci, trusted, wanted)
    }

    fn publish(
        &self,
        r: &super::handle::PublishRequest<'_>,
    ) -> Result<super::handle::Published, super::handle::PublishError> {
        let (manifest, tmp, packed) = super::handle::pack_to_temp(r)?;
        let http = self.client()?;
        let pushed = push(
            &http,
            &self.oci,
            r.version,
            r.format,
            tmp.path(),
            packed.size,
            &packed.sha256,
            &packed.tree,
            manifest.min_a2c.as_ref(),
        )?;
        let mut warnings = Vec::new();
        match r.sign {
            Some(key) => {
                sign(&http, &self.oci, key, super::handle::Expiry::Keep)?;
            }
            None if pushed && is_signed(&http, &self.oci)? => warnings.push(format!(
                "the index of `{}` is signed and does not list {} yet: sign it (`a2c sign --registry {} --key KEYFILE`), or installs that pin its key do not see it",
                self.oci.display(),
                r.version,
                self.oci.display()
            )),
            None => {}
        }
        Ok(super::handle::Published {
            version: r.version.clone(),
            sha256: packed.sha256,
            size: packed.size,
            format: r.format,
            tree: Some(packed.tree),
            files: packed.files,
            changed: pushed,
            landed: super::handle::Landed::Pushed {
                registry: self.oci.display(),
                verb: "pushed",
                target: format!("{}:{}", self.oci.display(), r.version),
            },
            warnings,
        })
    }

    fn yank(
        &self,
        version: &MethodVersion,
        undo: bool,
        key: Option<&super::signing::SecretKey>,
    ) -> Result<super::handle::Yanked, super::handle::PublishError> {
        let http = self.client()?;
        let signed = is_signed(&http, &self.oci)?;
        let changed = yank(&http, &self.oci, version, undo, key)?;
        let mut warnings = Vec::new();
        if changed && signed && key.is_none() {
            warnings.push(format!(
                "the index of `{}` was signed: it is now unsigned; re-sign it (`a2c sign --registry {} --key KEYFILE`), or installs that pin its key refuse it",
                self.oci.display(),
                self.oci.display()
            ));
        }
        Ok(super::handle::Yanked {
            version: version.clone(),
            yanked: !undo,
            changed,
            warnings,
        })
    }

    fn sign(
        &self,
        key: &super::signing::SecretKey,
        expiry: super::handle::Expiry,
    ) -> Result<super::handle::Signed, super::handle::PublishError> {
        let index = sign(&*self.client()?, &self.oci, key, expiry)?;
        Ok(super::handle::Signed {
            signature: format!("{}:{INDEX_TAG}", self.oci.display()),
            rebuilt: Some((index.serial.unwrap_or(0), index.versions.len())),
            warnings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use url::Url;

    #[test]
    fn https_except_loopback() {
        let p = |s: &str| OciLocation::parse(&Url::parse(s).unwrap()).unwrap();
        assert_eq!(
            p("oci://127.0.0.1:5000/esys/a2c").api.as_str(),
            "http://127.0.0.1:5000/"
        );
        assert_eq!(p("oci://localhost/esys/a2c").api.as_str(), "http://localhost/");
        assert_eq!(p("oci://ghcr.io/esys/a2c").api.as_str(), "https://ghcr.io/");
        assert_eq!(p("oci://ghcr.io/esys/a2c@sha256:00").repo, "esys/a2c");
        assert!(OciLocation::parse(&Url::parse("oci://ghcr.io/").unwrap()).is_err());
        assert!(OciLocation::parse(&Url::parse("oci://ghcr.io/Upper/Case").unwrap()).is_err());
        // The explicit opt-in: by host, by host:port, or `*`.
        let with = |s: &str, plain: &[&str]| {
            let plain: Vec<String> = plain.iter().map(|p| p.to_string()).collect();
            OciLocation::parse(&Url::parse(s).unwrap())
                .unwrap()
                .reached_with(&crate::net::PlainHttp(plain))
                .api
                .as_str()
                .to_string()
        };
        assert_eq!(with("oci://reg.lan/a2c", &["reg.lan"]), "http://reg.lan/");
        assert_eq!(
            with("oci://reg.lan:5000/a2c", &["reg.lan:5000"]),
            "http://reg.lan:5000/"
        );
        assert_eq!(with("oci://reg.lan:443/a2c", &["reg.lan"]), "http://reg.lan:443/");
        assert_eq!(
            with("oci://reg.lan:5000/a2c", &["reg.lan:5001"]),
            "https://reg.lan:5000/"
        );
        assert_eq!(with("oci://other.lan/a2c", &["reg.lan"]), "https://other.lan/");
        assert_eq!(with("oci://other.lan/a2c", &["*"]), "http://other.lan/");
    }
}
