//! OCI distribution registries as a transport (`oci://HOST[:PORT]/NAMESPACE/REPO`): a method
//! bundle is an OCI artifact — an image manifest with `artifactType`
//! [`ARTIFACT_TYPE`], the empty config, one layer (the bundle, its media type naming the
//! format) and annotations — tagged with the version. The layer's digest is the bundle's
//! sha256, so a lock is the same whichever transport served it.
//!
//! `oci://` speaks HTTPS, except to loopback hosts, where it speaks plain HTTP (as docker does
//! for registries on localhost), and to hosts listed in `A2C_OCI_PLAIN_HTTP` (the explicit
//! opt-in, like `oras --plain-http`).

use reqwest::Method;
use serde_json::json;
use url::Url;

use super::client::HttpClient;
use super::{Index, IndexEntry, RegistryError};
use crate::archive::Format;
use crate::util::digest::Sha256;
use crate::util::version::MethodVersion;

/// The `artifactType` of an a2c method bundle.
pub const ARTIFACT_TYPE: &str = "application/vnd.esys.a2c.bundle.v1";
const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const EMPTY_TYPE: &str = "application/vnd.oci.empty.v1+json";
const EMPTY_DIGEST: &str = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
/// Annotation keys.
pub const ANNOTATION_VERSION: &str = "org.opencontainers.image.version";
pub const ANNOTATION_TREE: &str = "esys.a2c.tree";
pub const ANNOTATION_MIN_A2C: &str = "esys.a2c.min-a2c";

/// The media type of a bundle layer of `format`.
pub fn layer_type(format: Format) -> &'static str {
    match format {
        Format::TarGz => "application/vnd.esys.a2c.bundle.v1.tar+gzip",
        Format::Zip => "application/vnd.esys.a2c.bundle.v1.zip",
    }
}

fn format_of(media_type: &str) -> Option<Format> {
    [Format::TarGz, Format::Zip]
        .into_iter()
        .find(|f| layer_type(*f) == media_type)
}

/// A repository in an OCI registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciRef {
    /// `http(s)://host[:port]/`: where the distribution API (`/v2/…`) is.
    pub api: Url,
    /// `namespace/repo`.
    pub repo: String,
}

impl OciRef {
    /// Parses `oci://host[:port]/namespace/repo` (anything after `@` is a reference, ignored).
    pub fn parse(url: &Url) -> Result<Self, String> {
        Self::parse_with(url, &crate::env::oci_plain_http())
    }

    /// [`OciRef::parse`] with the hosts opted in to plain HTTP (`A2C_OCI_PLAIN_HTTP`).
    pub fn parse_with(url: &Url, plain_hosts: &[String]) -> Result<Self, String> {
        let host = url.host_str().ok_or("it names no host")?;
        let repo = url
            .path()
            .trim_matches('/')
            .split('@')
            .next()
            .unwrap_or_default()
            .to_string();
        if repo.is_empty() {
            return Err("it names no repository (oci://HOST/NAMESPACE/REPO)".into());
        }
        if !repo.split('/').all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        }) {
            return Err(format!(
                "`{repo}` is not a valid OCI repository name (lower case, digits, `._-`, `/`)"
            ));
        }
        // `oci:` is not a special scheme, so its host is opaque text: judge loopback by it.
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let loopback =
            bare.eq_ignore_ascii_case("localhost") || bare.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
        let plain = plain_hosts.iter().any(|h| {
            h == "*"
                || h.eq_ignore_ascii_case(bare)
                || h.eq_ignore_ascii_case(&format!(
                    "{bare}{}",
                    url.port().map(|p| format!(":{p}")).unwrap_or_default()
                ))
        });
        let scheme = if loopback || plain { "http" } else { "https" };
        let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
        let api = Url::parse(&format!("{scheme}://{host}{port}/")).map_err(|e| e.to_string())?;
        Ok(Self { api, repo })
    }

    /// `oci://host[:port]/repo`.
    pub fn display(&self) -> String {
        let port = self.api.port().map(|p| format!(":{p}")).unwrap_or_default();
        format!("oci://{}{port}/{}", self.api.host_str().unwrap_or_default(), self.repo)
    }

    fn v2(&self, tail: &str) -> Url {
        self.api
            .join(&format!("v2/{}/{tail}", self.repo))
            .expect("a relative path joins")
    }

    pub fn blob_url(&self, digest: &str) -> Url {
        self.v2(&format!("blobs/{digest}"))
    }

    fn manifest_url(&self, reference: &str) -> Url {
        self.v2(&format!("manifests/{reference}"))
    }
}

fn invalid(oci: &OciRef, reason: String) -> RegistryError {
    RegistryError::InvalidIndex {
        location: oci.display(),
        reason,
    }
}

/// The manifest of `reference` (a tag or digest), its digest, or `None` when there is none.
fn manifest(
    http: &HttpClient,
    oci: &OciRef,
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

/// The registry's versions as an index: the tags that are versions, each manifest's one layer.
pub fn read_index(http: &HttpClient, oci: &OciRef) -> Result<Index, RegistryError> {
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
    for tag in tags {
        let Ok(version) = tag.parse::<MethodVersion>() else {
            continue;
        };
        let Some((doc, digest)) = manifest(http, oci, &tag)? else {
            continue;
        };
        if doc["artifactType"].as_str() != Some(ARTIFACT_TYPE) {
            continue; // another artifact under a version-like tag: not ours
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

fn push_blob(http: &HttpClient, oci: &OciRef, digest: &str, bytes: Vec<u8>) -> Result<(), RegistryError> {
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

/// Pushes `bundle` (the packed file's bytes) as `version`. `Ok(false)` when that version is
/// already there with the same layer; other bytes under it are refused.
#[allow(clippy::too_many_arguments)]
pub fn push(
    http: &HttpClient,
    oci: &OciRef,
    version: &MethodVersion,
    format: Format,
    bundle: Vec<u8>,
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
            index: std::path::PathBuf::from(oci.display()),
            existing: existing.trim_start_matches("sha256:").to_string(),
            new: sha256.to_hex(),
        });
    }
    let size = bundle.len();
    push_blob(http, oci, EMPTY_DIGEST, b"{}".to_vec())?;
    push_blob(http, oci, &layer_digest, bundle)?;
    let mut annotations = json!({ ANNOTATION_VERSION: version.to_string(), ANNOTATION_TREE: tree });
    if let Some(min) = min_a2c {
        annotations[ANNOTATION_MIN_A2C] = json!(min.to_string());
    }
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "artifactType": ARTIFACT_TYPE,
        "config": { "mediaType": EMPTY_TYPE, "digest": EMPTY_DIGEST, "size": 2 },
        "layers": [{ "mediaType": layer_type(format), "digest": layer_digest, "size": size }],
        "annotations": annotations,
    });
    let url = oci.manifest_url(&version.to_string());
    let reply = http.call(
        Method::PUT,
        &url,
        &[("Content-Type", MANIFEST_TYPE.to_string())],
        Some(serde_json::to_vec(&manifest).expect("serializes")),
    )?;
    if reply.status != 201 {
        return Err(reply.error(&url).into());
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_except_loopback() {
        let p = |s: &str| OciRef::parse(&Url::parse(s).unwrap()).unwrap();
        assert_eq!(
            p("oci://127.0.0.1:5000/esys/a2c").api.as_str(),
            "http://127.0.0.1:5000/"
        );
        assert_eq!(p("oci://localhost/esys/a2c").api.as_str(), "http://localhost/");
        assert_eq!(p("oci://ghcr.io/esys/a2c").api.as_str(), "https://ghcr.io/");
        assert_eq!(p("oci://ghcr.io/esys/a2c@sha256:00").repo, "esys/a2c");
        assert!(OciRef::parse(&Url::parse("oci://ghcr.io/").unwrap()).is_err());
        assert!(OciRef::parse(&Url::parse("oci://ghcr.io/Upper/Case").unwrap()).is_err());
        // The explicit opt-in: by host, by host:port, or `*`.
        let with = |s: &str, plain: &[&str]| {
            let plain: Vec<String> = plain.iter().map(|p| p.to_string()).collect();
            OciRef::parse_with(&Url::parse(s).unwrap(), &plain)
                .unwrap()
                .api
                .scheme()
                .to_string()
        };
        assert_eq!(with("oci://reg.lan/a2c", &["reg.lan"]), "http");
        assert_eq!(with("oci://reg.lan:5000/a2c", &["reg.lan:5000"]), "http");
        assert_eq!(with("oci://reg.lan:5000/a2c", &["reg.lan:5001"]), "https");
        assert_eq!(with("oci://other.lan/a2c", &["reg.lan"]), "https");
        assert_eq!(with("oci://other.lan/a2c", &["*"]), "http");
    }
}
