//! An S3 bucket as a registry, `s3://BUCKET/PREFIX` as the AWS CLI writes it. Below the prefix
//! lies a static registry's layout (`index/esys/a2c.json`, its signature, `bundles/`), so
//! signed indexes, mirrors, vendor and offline installs work as for any other registry.
//!
//! Every request is signed (SigV4) by `object_store` with the AWS credential chain of the
//! user's environment — never anything a clone says: a marker may name `s3://…`, but the
//! endpoint (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`) and the credentials come from the
//! environment only. The requests go through a2c's own HTTP client (its TLS roots, proxies and
//! timeouts), which follows no redirect, so a signature never leaves the endpoint. Bundles are
//! fetched through a2c's download path (retries, progress, the digest check) from a URL
//! presigned for that one object. `a2c pack` writes create-only (`If-None-Match: *`) and
//! updates the index by a compare-and-swap on its ETag (`If-Match`).

use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt as _, PutMode, PutOptions, PutPayload, UpdateVersion};
use url::Url;

use super::handle::{Expiry, Landed, PublishError, PublishRequest, Published, Registry, Signed, Yanked};
use super::kind::{Kind, Location};
use super::location::INDEX_PATH;
use super::signing::SecretKey;
use super::{Index, IndexEntry, RegistryError, Wanted, signing};
use crate::net::settings::AwsVariables;
use crate::net::{HttpClient, LazyClient};
use crate::util::version::MethodVersion;

/// The S3 registry kind, as `registry::KINDS` registers it.
pub const KIND: Kind = Kind {
    schemes: &["s3"],
    syntax: "s3://BUCKET/PREFIX",
    parse: |url| Ok(Arc::new(S3Location::from_url(url)?)),
    pack_format: None,
    path: None,
    exchange: None,
};

/// How long a bundle's presigned URL stays valid: one download, with its retries.
const PRESIGNED_FOR: Duration = Duration::from_secs(3600);

/// How many times `a2c pack` re-reads the index when another publisher changed it between
/// its read and its write.
const INDEX_ATTEMPTS: usize = 5;

/// A bucket and a key prefix (no leading or trailing `/`; empty: the bucket's root). The
/// location of a registry, or of one object in it (a lock entry's bundle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    bucket: String,
    prefix: String,
}

impl S3Location {
    fn from_url(url: &Url) -> Result<Self, String> {
        let bucket = url.host_str().unwrap_or_default();
        if bucket.is_empty() {
            return Err("it names no bucket: write s3://BUCKET/PREFIX".into());
        }
        if !is_bucket_name(bucket) {
            return Err(format!(
                "`{bucket}` is not an S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens)"
            ));
        }
        if url.port().is_some() {
            return Err("an s3:// location names no port: the endpoint comes from AWS_ENDPOINT_URL".into());
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err("an s3:// location has no query or fragment".into());
        }
        let mut segments = Vec::new();
        for raw in url.path().split('/').filter(|s| !s.is_empty()) {
            let segment = percent_encoding::percent_decode_str(raw)
                .decode_utf8()
                .map_err(|_| format!("the key segment `{raw}` is not UTF-8 once decoded"))?;
            // A `?`, `#`, `%` or `\\` once decoded would read back as another URL or key.
            let special = |c: char| matches!(c, '/' | '?' | '#' | '%' | '\\') || c.is_control();
            if segment == "." || segment == ".." || segment.contains(special) {
                return Err(format!("the key segment `{raw}` is not a plain name"));
            }
            segments.push(segment.into_owned());
        }
        Ok(Self {
            bucket: bucket.to_string(),
            prefix: segments.join("/"),
        })
    }

    /// The key of `rel` (a `/`-separated path of plain names) below the prefix.
    fn key(&self, rel: &str) -> Key {
        match self.prefix.is_empty() {
            true => Key::from(rel),
            false => Key::from(format!("{}/{rel}", self.prefix)),
        }
    }

    /// The `s3://` URL of `rel` below the prefix (entries' URLs resolve against the index's).
    fn url_of(&self, rel: &str) -> Url {
        let text = match self.prefix.is_empty() {
            true => format!("s3://{}/{rel}", self.bucket),
            false => format!("s3://{}/{}/{rel}", self.bucket, self.prefix),
        };
        Url::parse(&text).expect("a bucket name and plain key segments make a URL")
    }

    /// The object store for this bucket, signing with the environment's credentials and
    /// speaking through `http`.
    fn store(&self, http: &HttpClient, aws: &AwsVariables) -> Result<AmazonS3, RegistryError> {
        let endpoint = endpoint(aws);
        let mut builder = AmazonS3Builder::new();
        // Every AWS_* variable object_store knows, as its own `from_env` would read them (the
        // session read the environment; this reads what it was given).
        for (name, value) in &aws.0 {
            if let Ok(key) = name
                .to_ascii_lowercase()
                .parse::<object_store::aws::AmazonS3ConfigKey>()
            {
                builder = builder.with_config(key, value);
            }
        }
        let mut builder = builder
            .with_bucket_name(&self.bucket)
            .with_http_connector(Connector(http.reqwest()))
            .with_retry(object_store::RetryConfig {
                backoff: Default::default(),
                max_retries: 2,
                retry_timeout: Duration::from_secs(60),
            });
        if aws.get("AWS_REGION").is_none() && aws.get("AWS_DEFAULT_REGION").is_none() {
            builder = builder.with_region("us-east-1");
        }
        if let Some(endpoint) = &endpoint {
            let url = Url::parse(endpoint)
                .map_err(|e| self.refused(format!("AWS_ENDPOINT_URL `{endpoint}` is not a URL: {e}"), None))?;
            match url.scheme() {
                "https" => {}
                // Plain HTTP only on this machine: a session token travels in a header.
                "http" if crate::net::is_loopback(&url) => builder = builder.with_allow_http(true),
                _ => {
                    return Err(self.refused(
                        format!("AWS_ENDPOINT_URL `{endpoint}` is not an https:// URL (plain HTTP is taken on loopback only)"),
                        Some("set AWS_ENDPOINT_URL to the store's https:// address".into()),
                    ));
                }
            }
        }
        builder.build().map_err(|e| self.store_error(&e, aws))
    }

    /// `message`, said of this location, with `hint`.
    fn refused(&self, message: String, hint: Option<String>) -> RegistryError {
        RegistryError::ObjectStore {
            location: self.display(),
            message,
            hint,
        }
    }

    /// An object store's error in a2c's words: what failed, where, and which credentials and
    /// endpoint were used (never a secret).
    fn store_error(&self, e: &object_store::Error, aws: &AwsVariables) -> RegistryError {
        let object = match e {
            object_store::Error::NotFound { path, .. }
            | object_store::Error::PermissionDenied { path, .. }
            | object_store::Error::Unauthenticated { path, .. }
            | object_store::Error::AlreadyExists { path, .. }
            | object_store::Error::Precondition { path, .. } => {
                Url::parse(&format!("s3://{}/{path}", self.bucket)).ok()
            }
            _ => None,
        };
        let hint = match e {
            object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } => {
                Some(format!(
                    "the store refused the credentials from {}: check them, and that they may read (and, to publish, write) `{}`",
                    credential_source(aws),
                    self.display()
                ))
            }
            object_store::Error::NotFound { .. } => None,
            _ => Some(format!(
                "check the endpoint ({}) and the credentials (from {})",
                endpoint(aws).map_or("AWS's own, from AWS_REGION".to_string(), |e| format!(
                    "`{e}`, from AWS_ENDPOINT_URL"
                )),
                credential_source(aws)
            )),
        };
        self.refused(one_line(e, object.as_ref()), hint)
    }

    fn display(&self) -> String {
        match self.prefix.is_empty() {
            true => format!("s3://{}", self.bucket),
            false => format!("s3://{}/{}", self.bucket, self.prefix),
        }
    }
}

/// The endpoint the environment names for S3, if any (`AWS_ENDPOINT_URL_S3` first, as the AWS
/// CLI reads it).
fn endpoint(aws: &AwsVariables) -> Option<String> {
    ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"]
        .iter()
        .find_map(|v| aws.get(v).map(str::to_string))
}

/// Where the credentials come from, as the chain object_store follows reads it (for messages;
/// never the secret).
fn credential_source(aws: &AwsVariables) -> &'static str {
    let set = |v: &str| aws.get(v).is_some();
    if set("AWS_ACCESS_KEY_ID") {
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    } else if set("AWS_WEB_IDENTITY_TOKEN_FILE") {
        "the web identity token (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN)"
    } else if set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") || set("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
        "the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_*)"
    } else {
        "the instance metadata service (no AWS_ACCESS_KEY_ID is set)"
    }
}

/// An object store's error in a line: the request and the status it met when the store says
/// them (`GET \`s3://…\` answered HTTP 403 Forbidden`), else its own first line without the
/// request's duration (never the response body a store appends).
fn one_line(e: &object_store::Error, object: Option<&Url>) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    let verb = ["GET", "PUT", "HEAD", "DELETE", "POST"]
        .into_iter()
        .find(|v| text.contains(&format!("performing {v} ")));
    let status = text
        .find("status code: ")
        .and_then(|i| text[i + "status code: ".len()..].split(':').next())
        .map(str::trim);
    match (verb, status, object) {
        (Some(verb), Some(status), Some(object)) => format!("{verb} `{object}` answered HTTP {status}"),
        _ => {
            let first = text.lines().next().unwrap_or_default();
            match first.find(" in ").zip(first.find(" - ")) {
                Some((a, b)) if a < b => format!("{}{}", &first[..a], &first[b..]),
                _ => first.to_string(),
            }
        }
    }
}

/// A bucket name as S3 takes it: 3 to 63 lowercase letters, digits, dots and hyphens, starting
/// and ending with a letter or digit.
fn is_bucket_name(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    (3..=63).contains(&name.len())
        && name.chars().all(|c| ok(c) || c == '.' || c == '-')
        && name.starts_with(ok)
        && name.ends_with(ok)
        && !name.contains("..")
}

/// object_store's requests, sent by a2c's reqwest client.
#[derive(Debug)]
struct Connector(reqwest::Client);

impl object_store::client::HttpConnector for Connector {
    fn connect(&self, _: &object_store::ClientOptions) -> object_store::Result<object_store::client::HttpClient> {
        Ok(object_store::client::HttpClient::new(self.0.clone()))
    }
}

impl Location for S3Location {
    fn shown(&self) -> String {
        self.display()
    }

    fn index_url(&self) -> Url {
        self.url_of(INDEX_PATH)
    }

    fn http_base(&self) -> Option<Url> {
        None
    }

    /// The lock entry's source is this object: a URL presigned for a GET of it.
    fn bundle_url(&self, _: &crate::util::digest::Sha256, network: &crate::net::Network) -> Option<Url> {
        let http = network.client(Vec::new()).client().ok()?;
        let store = self.store(&http, &network.settings().ok()?.aws).ok()?;
        let key = Key::from(self.prefix.as_str());
        http.block_on(object_store::signer::Signer::signed_url(
            &store,
            reqwest::Method::GET,
            &key,
            PRESIGNED_FOR,
        ))
        .ok()
    }

    fn open(&self, network: &crate::net::Network) -> Box<dyn Registry> {
        Box::new(S3Registry {
            location: self.clone(),
            network: network.clone(),
        })
    }
}

pub struct S3Registry {
    location: S3Location,
    network: crate::net::Network,
}

/// An object's bytes and its version (for a compare-and-swap), or `None` when there is none.
type Fetched = Option<(Vec<u8>, UpdateVersion)>;

impl S3Registry {
    fn client(&self) -> Result<Arc<HttpClient>, RegistryError> {
        Ok(self.network.client(Vec::new()).client()?)
    }

    fn aws(&self) -> Result<&AwsVariables, RegistryError> {
        Ok(&self.network.settings()?.aws)
    }

    /// The object `rel`, read whole (an index or a signature: bounded by the document cap).
    fn get(&self, http: &HttpClient, store: &AmazonS3, rel: &str) -> Result<Fetched, RegistryError> {
        let key = self.location.key(rel);
        let cap = self.network.settings()?.max_document;
        let aws = self.aws()?;
        http.block_on(async {
            let result = match store.get(&key).await {
                Ok(r) => r,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(self.location.store_error(&e, aws)),
            };
            if result.meta.size > cap {
                return Err(self.location.refused(
                    format!(
                        "`{key}` is {} bytes, more than the {cap} a2c reads for a document",
                        result.meta.size
                    ),
                    Some("raise A2C_MAX_DOCUMENT_BYTES if this index is really that large".into()),
                ));
            }
            let version = UpdateVersion {
                e_tag: result.meta.e_tag.clone(),
                version: result.meta.version.clone(),
            };
            let bytes = result.bytes().await.map_err(|e| self.location.store_error(&e, aws))?;
            Ok(Some((bytes.to_vec(), version)))
        })
    }

    /// Writes `bytes` at `rel` as `mode` says; `Ok(false)` when the condition failed (the
    /// object exists, or changed since it was read).
    fn put(
        &self,
        http: &HttpClient,
        store: &AmazonS3,
        rel: &str,
        bytes: Vec<u8>,
        mode: PutMode,
    ) -> Result<bool, RegistryError> {
        let key = self.location.key(rel);
        let aws = self.aws()?;
        let options = PutOptions {
            mode,
            ..Default::default()
        };
        http.block_on(async {
            match store.put_opts(&key, PutPayload::from(bytes), options).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => Ok(false),
                Err(e) => Err(self.location.store_error(&e, aws)),
            }
        })
    }

    fn shown_index(&self) -> String {
        self.location.index_url().to_string()
    }

    /// The index and its version, or a new index (and `None`) when the registry has none yet.
    fn read_for_update(
        &self,
        http: &HttpClient,
        store: &AmazonS3,
    ) -> Result<(Index, Option<UpdateVersion>), PublishError> {
        match self.get(http, store, INDEX_PATH)? {
            None => Ok((Index::new(), None)),
            Some((bytes, version)) => {
                let text = String::from_utf8(bytes).map_err(|_| RegistryError::InvalidIndex {
                    location: self.shown_index(),
                    reason: "the index is not UTF-8 text".into(),
                })?;
                Ok((Index::parse(&text, &self.shown_index())?, Some(version)))
            }
        }
    }
}

impl Registry for S3Registry {
    fn shown(&self) -> String {
        self.location.display()
    }

    fn read_index(&self, _: &LazyClient, trusted: &[String], _: Wanted<'_>) -> Result<Index, RegistryError> {
        let http = self.client()?;
        let store = self.location.store(&http, self.aws()?)?;
        let Some((bytes, _)) = self.get(&http, &store, INDEX_PATH)? else {
            return Err(self.no_index());
        };
        let signature = || {
            Ok(self
                .get(&http, &store, &signature_rel())?
                .map(|(bytes, _)| String::from_utf8_lossy(&bytes).into_owned()))
        };
        super::trusted_index(
            &self.shown(),
            &self.shown_index(),
            bytes,
            signature,
            trusted,
            Some(self.location.index_url()),
        )
    }

    fn publish(&self, r: &PublishRequest<'_>) -> Result<Published, PublishError> {
        let (_, tmp, packed) = super::handle::pack_to_temp(r)?;
        let http = self.client()?;
        let store = self.location.store(&http, self.aws()?)?;
        let name = crate::lock::bundle_name(r.version, r.format);
        let bundle_rel = format!("bundles/{name}");
        let published = |changed: bool, warnings: Vec<String>| Published {
            version: r.version.clone(),
            sha256: packed.sha256,
            size: packed.size,
            format: r.format,
            tree: Some(packed.tree.clone()),
            files: packed.files,
            changed,
            landed: Landed::Pushed {
                registry: self.location.display(),
                verb: "uploaded",
                target: self.location.url_of(&bundle_rel).to_string(),
            },
            warnings,
        };
        let mut bundle_written = false;
        let added = self.edit_index(&http, &store, r.sign, "add", |index| {
            if let Some(existing) = index.get(r.version) {
                if existing.sha256 != packed.sha256 {
                    return Err(RegistryError::AlreadyPublished {
                        version: r.version.clone(),
                        index: self.shown_index(),
                        existing: existing.sha256.to_hex(),
                        new: packed.sha256.to_hex(),
                        same_tree: existing.tree.as_deref() == Some(packed.tree.as_str()),
                    }
                    .into());
                }
                return Ok(None);
            }
            // The bundle, create-only: an object already there under its name is this bundle
            // only if its bytes are (a publish that stopped before its index update).
            if !bundle_written {
                let bytes = fs_err::read(tmp.path())?;
                if !self.put(&http, &store, &bundle_rel, bytes, PutMode::Create)? {
                    let there = self
                        .get(&http, &store, &bundle_rel)?
                        .map(|(b, _)| crate::util::digest::Sha256::of(&b));
                    if there != Some(packed.sha256) {
                        return Err(self
                            .location
                            .refused(
                                format!(
                                    "`{}` already holds other bytes than {} {} packs to, and the index does not list it",
                                    self.location.url_of(&bundle_rel),
                                    r.version,
                                    r.tree.display()
                                ),
                                Some("a publish of other content stopped half-way, or another tool wrote there: remove that object after checking it".into()),
                            )
                            .into());
                    }
                }
                bundle_written = true;
            }
            index.versions.push(IndexEntry {
                version: r.version.clone(),
                url: format!("../../bundles/{name}"),
                sha256: packed.sha256,
                size: packed.size,
                format: r.format,
                tree: Some(packed.tree.clone()),
                yanked: false,
            });
            Ok(Some(()))
        })?;
        let changed = added.is_some();
        let warnings = self.stale_signature(&http, &store, changed && r.sign.is_none())?;
        Ok(published(changed, warnings))
    }

    fn yank(&self, version: &MethodVersion, undo: bool, sign: Option<&SecretKey>) -> Result<Yanked, PublishError> {
        let http = self.client()?;
        let store = self.location.store(&http, self.aws()?)?;
        let what = if undo { "restore" } else { "yank" };
        let changed = self
            .edit_index(&http, &store, sign, what, |index| {
                let entry = super::entry_to_yank(index, version, self.shown_index())?;
                if entry.yanked != undo {
                    return Ok(None);
                }
                entry.yanked = !undo;
                Ok(Some(()))
            })?
            .is_some();
        Ok(Yanked {
            version: version.clone(),
            yanked: !undo,
            changed,
            warnings: self.stale_signature(&http, &store, changed && sign.is_none())?,
        })
    }

    fn sign(&self, key: &SecretKey, expiry: Expiry) -> Result<Signed, PublishError> {
        let http = self.client()?;
        let store = self.location.store(&http, self.aws()?)?;
        let now = crate::util::time::now_rfc3339();
        let mut past = None;
        let edited = self.edit_index(&http, &store, Some(key), "sign", |index| {
            past = match (expiry, &index.expires) {
                (Expiry::Keep, Some(at)) if *at < now => Some(at.clone()),
                _ => None,
            };
            let expires = match expiry {
                Expiry::Keep => index.expires.clone(),
                Expiry::InDays(days) => Some(crate::util::time::rfc3339_after(days as i64 * 86_400)),
                Expiry::Never => None,
            };
            if expires == index.expires {
                return Ok(None);
            }
            index.expires = expires;
            Ok(Some(()))
        })?;
        if edited.is_none() {
            // The index as it is: signed as read.
            let Some((bytes, _)) = self.get(&http, &store, INDEX_PATH)? else {
                return Err(self.no_index().into());
            };
            self.write_signature(&http, &store, key, &bytes)?;
        }
        let registry = self.location.display();
        Ok(Signed {
            signature: self.location.url_of(&signature_rel()).to_string(),
            rebuilt: None,
            warnings: past
                .map(|at| {
                    format!(
                        "the index expired at {at} and keeps that expiry: installs that pin its key refuse it; `a2c sign --registry {registry} --key KEYFILE --expires-in DAYS` sets a new one, `--no-expiry` drops it"
                    )
                })
                .into_iter()
                .collect(),
        })
    }
}

/// The index's signature, below the prefix.
fn signature_rel() -> String {
    format!("{INDEX_PATH}{}", signing::SIGNATURE_SUFFIX)
}

impl S3Registry {
    /// Changes the index with `edit` (`Ok(None)`: it changed nothing) by a compare-and-swap on
    /// its ETag — created only if absent, replaced only if unchanged since it was read — reading
    /// it again when another writer won; then signs what it wrote with `sign`. `what` names the
    /// change for the error when every attempt lost.
    fn edit_index<T>(
        &self,
        http: &HttpClient,
        store: &AmazonS3,
        sign: Option<&SecretKey>,
        what: &str,
        mut edit: impl FnMut(&mut Index) -> Result<Option<T>, PublishError>,
    ) -> Result<Option<T>, PublishError> {
        for _ in 0..INDEX_ATTEMPTS {
            let (mut index, version) = self.read_for_update(http, store)?;
            let Some(done) = edit(&mut index)? else {
                return Ok(None);
            };
            index.serial = Some(index.serial.unwrap_or(0) + 1);
            let text = index.to_json();
            let mode = match version {
                Some(v) => PutMode::Update(v),
                None => PutMode::Create,
            };
            if !self.put(http, store, INDEX_PATH, text.clone().into_bytes(), mode)? {
                continue; // another writer changed the index first: read it again
            }
            if let Some(key) = sign {
                self.write_signature(http, store, key, text.as_bytes())?;
            }
            return Ok(Some(done));
        }
        Err(self
            .location
            .refused(
                format!("the index changed under each of {INDEX_ATTEMPTS} attempts to {what}"),
                Some("others are writing to this registry: run the command again".into()),
            )
            .into())
    }

    fn write_signature(
        &self,
        http: &HttpClient,
        store: &AmazonS3,
        key: &SecretKey,
        index: &[u8],
    ) -> Result<(), PublishError> {
        let text = signing::sign(key, index, "a2c index esys/a2c");
        self.put(http, store, &signature_rel(), text.into_bytes(), PutMode::Overwrite)?;
        Ok(())
    }

    /// The warning for a signed index that a change without a key left stale (when `changed`).
    fn stale_signature(&self, http: &HttpClient, store: &AmazonS3, changed: bool) -> Result<Vec<String>, PublishError> {
        if !changed || self.get(http, store, &signature_rel())?.is_none() {
            return Ok(Vec::new());
        }
        let registry = self.location.display();
        Ok(vec![format!(
            "the index of `{registry}` is signed and changed: re-sign it (`a2c sign --registry {registry} --key KEYFILE`), or installs that pin its key refuse it"
        )])
    }

    fn no_index(&self) -> RegistryError {
        self.location.refused(
            format!("no registry index at `{}`", self.shown_index()),
            Some(format!(
                "check the location: a registry holds `{INDEX_PATH}` below its prefix; `a2c pack --registry {}` creates it",
                self.location.display()
            )),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<S3Location, String> {
        S3Location::from_url(&Url::parse(text).unwrap())
    }

    #[test]
    fn locations_are_a_bucket_and_plain_key_segments() {
        let l = parse("s3://team-bucket/methods/a2c/").unwrap();
        assert_eq!(l.display(), "s3://team-bucket/methods/a2c");
        assert_eq!(l.key(INDEX_PATH).as_ref(), "methods/a2c/index/esys/a2c.json");
        assert_eq!(
            l.index_url().join("../../bundles/a2c-1.0.0.tar.gz").unwrap().as_str(),
            "s3://team-bucket/methods/a2c/bundles/a2c-1.0.0.tar.gz"
        );
        // Dot segments are the URL's own (RFC 3986): resolved by the parser, within the bucket.
        assert_eq!(parse("s3://team-bucket/a/%2e%2e/b").unwrap().prefix, "b");
        let root = parse("s3://team-bucket").unwrap();
        assert_eq!(root.key(INDEX_PATH).as_ref(), INDEX_PATH);
        for (bad, why) in [
            ("s3:///x", "names no bucket"),
            ("s3://Team/x", "not an S3 bucket name"),
            ("s3://ab/x", "not an S3 bucket name"),
            ("s3://b-ucket:9000/x", "names no port"),
            ("s3://bucket/x?versionId=1", "no query"),
            ("s3://bucket/a/%0Ab", "not a plain name"),
            ("s3://bucket/a/x%2Fy", "not a plain name"),
            ("s3://bucket/a%23b/c", "not a plain name"),
            ("s3://bucket/a%3Fb", "not a plain name"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
