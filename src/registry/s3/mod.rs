//! An S3 bucket as a registry, `s3://BUCKET/PREFIX` as the AWS CLI writes it. Below the prefix
//! lies a static registry's layout (`index/esys/a2c.json`, its signature, `bundles/`), so
//! signed indexes, mirrors, vendor and offline installs work as for any other registry.
//!
//! Every request is signed (SigV4) by `object_store` with the AWS credential chain of the
//! user's environment and AWS files (`profile`) — never anything a clone says: a marker may
//! name `s3://…`, but the endpoint (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, a profile's
//! `endpoint_url`) and the credentials come from the environment and `~/.aws` only. The requests go through a2c's own HTTP client (its TLS roots, proxies and
//! timeouts), which follows no redirect, so a signature never leaves the endpoint. Bundles are
//! fetched through a2c's download path (retries, progress, the digest check) from a URL
//! presigned for that one object. `a2c pack` writes create-only (`If-None-Match: *`) and
//! updates the index by a compare-and-swap on its ETag (`If-Match`).

use std::sync::Arc;

use object_store::aws::AmazonS3;
use object_store::{ObjectStore, ObjectStoreExt as _, PutMode, PutOptions, PutPayload, UpdateVersion};

use super::handle::{Expiry, Landed, PublishError, PublishRequest, Published, Registry, Signed, Yanked};
use super::kind::{Kind, Location};
use super::location::INDEX_PATH;
use super::signing::SecretKey;
use super::{Index, IndexEntry, RegistryError, Wanted, signing};
use crate::net::settings::AwsVariables;
use crate::net::{HttpClient, LazyClient};
use crate::util::version::MethodVersion;

mod location;
mod profile;

pub use location::S3Location;

/// The S3 registry kind, as `registry::KINDS` registers it.
pub const KIND: Kind = Kind {
    schemes: &["s3"],
    syntax: "s3://BUCKET/PREFIX",
    parse: |url| Ok(Arc::new(S3Location::from_url(url)?)),
    pack_format: None,
    path: None,
    exchange: None,
};

/// How many times `a2c pack` re-reads the index when another publisher changed it between
/// its read and its write.
const INDEX_ATTEMPTS: usize = 5;
pub struct S3Registry {
    location: S3Location,
    network: crate::net::Network,
    /// The AWS variables with the profile's, read on first use.
    aws: std::sync::Mutex<Option<AwsVariables>>,
}

/// An object's bytes and its version (for a compare-and-swap), or `None` when there is none.
type Fetched = Option<(Vec<u8>, UpdateVersion)>;

impl S3Registry {
    fn client(&self) -> Result<Arc<HttpClient>, RegistryError> {
        Ok(self.network.client(Vec::new()).client()?)
    }

    fn aws(&self) -> Result<AwsVariables, RegistryError> {
        let mut slot = self.aws.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(aws) = slot.as_ref() {
            return Ok(aws.clone());
        }
        let aws = self.location.with_profile(&self.network.settings()?.aws)?;
        *slot = Some(aws.clone());
        Ok(aws)
    }

    /// The object `rel`, read whole (an index or a signature: bounded by the document cap).
    fn get(&self, http: &HttpClient, store: &AmazonS3, rel: &str) -> Result<Fetched, RegistryError> {
        let key = self.location.key(rel);
        let cap = self.network.settings()?.max_document;
        let aws = &self.aws()?;
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
        let aws = &self.aws()?;
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
        let store = self.location.store(&http, &self.aws()?)?;
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
        let store = self.location.store(&http, &self.aws()?)?;
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
        let store = self.location.store(&http, &self.aws()?)?;
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
        let store = self.location.store(&http, &self.aws()?)?;
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
