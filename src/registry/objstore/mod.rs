//! What the object-store registry kinds share (`s3://`, `gs://`, `az://`): a bucket or container whose
//! prefix holds a static registry's layout (`index/esys/a2c.json`, its signature, `bundles/`),
//! read and written through `object_store` over a2c's own HTTP client. Publishing writes the
//! bundle create-only and changes the index by a compare-and-swap on its ETag; each kind says
//! where its objects are, how its requests are signed and how its errors read ([`Bucket`]).

use std::sync::{Arc, Mutex};

use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt as _, PutMode, PutOptions, PutPayload, UpdateVersion};
use url::Url;

use super::handle::{Expiry, Landed, PublishError, PublishRequest, Published, Registry, Signed, Yanked};
use super::kind::Location as _;
use super::location::INDEX_PATH;
use super::signing::SecretKey;
use super::{Index, IndexEntry, RegistryError, Wanted, signing};
use crate::net::{HttpClient, LazyClient, Network, Payload};
use crate::util::version::MethodVersion;

/// How many times `a2c pack` re-reads the index when another publisher changed it between
/// its read and its write.
const INDEX_ATTEMPTS: usize = 5;

/// The object `a2c pack` writes create-only below the prefix to learn whether the store honours
/// conditional writes (it stays: a store that honours them refuses each later write of it).
const PROBE_REL: &str = ".a2c-conditional-writes";
const PROBE_TEXT: &str =
    "a2c writes this object with If-None-Match: * to check that the store refuses the write once it exists\n";

mod bucket;
mod connector;
mod path;
mod words;

pub(super) use bucket::{Bucket, Endpoint, SIGNED_FOR};
pub(super) use connector::{Connector, client_options, retries};
pub(super) use path::{BucketPath, Syntax};
pub(super) use words::{endpoint_allowed, plain_segment};

/// A registry in an object store: a [`Bucket`] and the session's network.
pub(super) struct ObjectRegistry<B: Bucket> {
    bucket: B,
    network: Network,
    /// The credentials, read on first use.
    auth: Mutex<Option<B::Auth>>,
}

/// A URL signed for one `PUT` and the headers to send with it.
pub(super) type SignedPut = (Url, Vec<(&'static str, String)>);

/// An object's bytes and its version (for a compare-and-swap), or `None` when there is none.
type Fetched = Option<(Vec<u8>, UpdateVersion)>;

impl<B: Bucket> ObjectRegistry<B> {
    pub(super) fn new(bucket: B, network: Network) -> Self {
        Self {
            bucket,
            network,
            auth: Mutex::new(None),
        }
    }

    fn client(&self) -> Result<Arc<HttpClient>, RegistryError> {
        Ok(self.network.client(Vec::new()).client()?)
    }

    /// The credentials, when the kind writes with them ([`Bucket::refuses_writes`]).
    fn writer(&self) -> Result<B::Auth, RegistryError> {
        let auth = self.auth()?;
        match self.bucket.refuses_writes(&auth) {
            Some(refused) => Err(refused),
            None => Ok(auth),
        }
    }

    fn auth(&self) -> Result<B::Auth, RegistryError> {
        let mut slot = crate::util::parallel::locked(&self.auth);
        if let Some(auth) = slot.as_ref() {
            return Ok(auth.clone());
        }
        let auth = self.bucket.auth_from(self.network.settings()?, &self.network.chosen)?;
        *slot = Some(auth.clone());
        Ok(auth)
    }

    fn store(&self, http: &Arc<HttpClient>) -> Result<Arc<dyn ObjectStore>, RegistryError> {
        Ok(Arc::new(self.bucket.store(http, &self.auth()?)?))
    }

    fn index_url(&self) -> Url {
        self.bucket.path().url_of(INDEX_PATH)
    }

    fn shown_index(&self) -> String {
        self.index_url().to_string()
    }

    /// The object `rel`, read whole (an index or a signature: bounded by the document cap).
    fn get(&self, http: &Arc<HttpClient>, store: &dyn ObjectStore, rel: &str) -> Result<Fetched, RegistryError> {
        let key = self.bucket.path().key(rel);
        let cap = self.network.settings()?.max_document;
        let auth = &self.auth()?;
        http.block_on(async {
            let result = match store.get(&key).await {
                Ok(r) => r,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(self.bucket.store_error(&e, auth)),
            };
            if result.meta.size > cap {
                return Err(self.bucket.refused(
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
            let bytes = result.bytes().await.map_err(|e| self.bucket.store_error(&e, auth))?;
            Ok(Some((bytes.to_vec(), version)))
        })
    }

    /// Writes `bytes` at `rel` as `mode` says; `Ok(false)` when the condition failed (the
    /// object exists, or changed since it was read).
    fn put(
        &self,
        http: &Arc<HttpClient>,
        store: &dyn ObjectStore,
        rel: &str,
        bytes: Vec<u8>,
        mode: PutMode,
    ) -> Result<bool, RegistryError> {
        let key = self.bucket.path().key(rel);
        let auth = &self.auth()?;
        let options = PutOptions {
            mode,
            ..Default::default()
        };
        http.block_on(async {
            match store.put_opts(&key, PutPayload::from(bytes), options).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => Ok(false),
                Err(e) => Err(self.bucket.store_error(&e, auth)),
            }
        })
    }

    /// Writes the file at `path` to `rel` create-only: streamed to a URL signed for it where
    /// the kind gives one, else read whole and written through object_store. `Ok(false)` when
    /// an object is already there.
    fn create_from_file(
        &self,
        http: &Arc<HttpClient>,
        store: &dyn ObjectStore,
        rel: &str,
        path: &std::path::Path,
    ) -> Result<bool, PublishError> {
        let auth = &self.auth()?;
        let Some((url, headers)) = self.bucket.create_url(http, auth, rel)? else {
            return Ok(self.put(http, store, rel, fs_err::read(path)?, PutMode::Create)?);
        };
        let size = fs_err::metadata(path)?.len();
        let reply = http
            .call(reqwest::Method::PUT, &url, &headers, Some(Payload::File(path, size)))
            .map_err(RegistryError::from)?;
        match reqwest::StatusCode::from_u16(reply.status).unwrap_or(reqwest::StatusCode::BAD_GATEWAY) {
            status if status.is_success() => Ok(true),
            // 412: S3's answer to `If-None-Match: *` over an object; 409: Azure's.
            reqwest::StatusCode::PRECONDITION_FAILED | reqwest::StatusCode::CONFLICT => Ok(false),
            status => Err(self
                .bucket
                .store_error(&answered(&self.bucket.path().key(rel), status), auth)
                .into()),
        }
    }

    /// Whether the store honours a create-only write: the probe object written with
    /// `If-None-Match: *` is refused once it exists (a first write that lands is tried once
    /// more). A store that takes both writes ignores the condition (Garage does): refused
    /// unless `allowed`, for there create-only bundles and the index's compare-and-swap hold
    /// nothing; allowed, a warning says so.
    fn check_conditional_writes(
        &self,
        http: &Arc<HttpClient>,
        store: &dyn ObjectStore,
        allowed: bool,
    ) -> Result<Vec<String>, PublishError> {
        let probe = || self.put(http, store, PROBE_REL, PROBE_TEXT.as_bytes().to_vec(), PutMode::Create);
        if !probe()? || !probe()? {
            return Ok(Vec::new());
        }
        let ignored = format!(
            "`{}` ignores conditional writes: `{}` was written create-only (If-None-Match: *) over itself",
            self.bucket.shown(),
            self.bucket.path().url_of(PROBE_REL)
        );
        if allowed {
            return Ok(vec![format!(
                "{ignored}; publishing anyway (--allow-unconditional-writes): nothing stops another publisher from overwriting a version or the index"
            )]);
        }
        Err(self
            .bucket
            .refused(
                format!("{ignored}, so a published version could be overwritten and two publishers could both win"),
                Some("publish to a store that honours If-None-Match (Amazon S3, Cloud Storage, Azure Blob Storage, Ceph RGW, MinIO, SeaweedFS), or from one place only with --allow-unconditional-writes".into()),
            )
            .into())
    }

    /// The index and its version, or a new index (and `None`) when the registry has none yet.
    fn read_for_update(
        &self,
        http: &Arc<HttpClient>,
        store: &dyn ObjectStore,
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

impl<B: Bucket> Registry for ObjectRegistry<B> {
    fn shown(&self) -> String {
        self.bucket.shown()
    }

    fn read_index(&self, _: &LazyClient, trusted: &[String], _: Wanted<'_>) -> Result<Index, RegistryError> {
        let http = self.client()?;
        let store = self.store(&http)?;
        let Some((bytes, _)) = self.get(&http, store.as_ref(), INDEX_PATH)? else {
            return Err(self.no_index());
        };
        let signature = || {
            Ok(self
                .get(&http, store.as_ref(), &signature_rel())?
                .map(|(bytes, _)| String::from_utf8_lossy(&bytes).into_owned()))
        };
        super::trusted_index(
            &self.shown(),
            &self.shown_index(),
            bytes,
            signature,
            trusted,
            Some(self.index_url()),
        )
    }

    fn publish(&self, r: &PublishRequest<'_>) -> Result<Published, PublishError> {
        self.writer()?;
        let (_, tmp, packed) = super::handle::pack_to_temp(r)?;
        let http = self.client()?;
        let store = self.store(&http)?;
        let store = store.as_ref();
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
                registry: self.bucket.shown(),
                verb: "uploaded",
                target: self.bucket.path().url_of(&bundle_rel).to_string(),
            },
            warnings,
        };
        // Whether the index lists this version already: with these bytes (nothing to write),
        // else refused.
        let listed = |index: &Index| match index.get(r.version) {
            None => Ok(false),
            Some(existing) if existing.sha256 == packed.sha256 => Ok(true),
            Some(existing) => Err(PublishError::from(RegistryError::AlreadyPublished {
                version: r.version.clone(),
                index: self.shown_index(),
                existing: existing.sha256.to_hex(),
                new: packed.sha256.to_hex(),
                same_tree: existing.tree.as_deref() == Some(packed.tree.as_str()),
            })),
        };
        // Said before any write: publishing again what is there needs no write access.
        if listed(&self.read_for_update(&http, store)?.0)? {
            return Ok(published(false, Vec::new()));
        }
        let mut warnings = self.check_conditional_writes(&http, store, r.allow_unconditional)?;
        let mut bundle_written = false;
        let added = self.edit_index(&http, store, r.sign, "add", |index| {
            if listed(index)? {
                return Ok(None);
            }
            // The bundle, create-only: an object already there under its name is this bundle
            // only if its bytes are (a publish that stopped before its index update).
            if !bundle_written {
                if !self.create_from_file(&http, store, &bundle_rel, tmp.path())? {
                    let there = self
                        .get(&http, store, &bundle_rel)?
                        .map(|(b, _)| crate::util::digest::Sha256::of(&b));
                    if there != Some(packed.sha256) {
                        return Err(self
                            .bucket
                            .refused(
                                format!(
                                    "`{}` already holds other bytes than {} {} packs to, and the index does not list it",
                                    self.bucket.path().url_of(&bundle_rel),
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
        warnings.extend(self.stale_signature(&http, store, changed && r.sign.is_none())?);
        Ok(published(changed, warnings))
    }

    fn yank(&self, version: &MethodVersion, undo: bool, sign: Option<&SecretKey>) -> Result<Yanked, PublishError> {
        self.writer()?;
        let http = self.client()?;
        let store = self.store(&http)?;
        let store = store.as_ref();
        let what = if undo { "restore" } else { "yank" };
        let changed = self
            .edit_index(&http, store, sign, what, |index| {
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
            warnings: self.stale_signature(&http, store, changed && sign.is_none())?,
        })
    }

    fn sign(&self, key: &SecretKey, expiry: Expiry) -> Result<Signed, PublishError> {
        self.writer()?;
        let http = self.client()?;
        let store = self.store(&http)?;
        let store = store.as_ref();
        let now = crate::util::time::now_rfc3339();
        let mut past = None;
        let edited = self.edit_index(&http, store, Some(key), "sign", |index| {
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
            let Some((bytes, _)) = self.get(&http, store, INDEX_PATH)? else {
                return Err(self.no_index().into());
            };
            self.write_signature(&http, store, key, &bytes)?;
        }
        let registry = self.bucket.shown();
        Ok(Signed {
            signature: self.bucket.path().url_of(&signature_rel()).to_string(),
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

/// `version` with its ETag unquoted (`"abc"` → `abc`), as Ceph RGW 16 compares `If-Match`.
fn bare_etag(version: &UpdateVersion) -> UpdateVersion {
    UpdateVersion {
        e_tag: version.e_tag.as_deref().map(|t| {
            t.strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .unwrap_or(t)
                .to_string()
        }),
        version: version.version.clone(),
    }
}

/// A store's refusal of a write a2c sent itself, as object_store says one (so each kind's
/// wording and hint apply): the request and its status.
fn answered(key: &Key, status: reqwest::StatusCode) -> object_store::Error {
    let path = key.to_string();
    let source = format!("Error performing PUT {key}: Server returned non-2xx status code: {status}").into();
    match status.as_u16() {
        401 => object_store::Error::Unauthenticated { path, source },
        403 => object_store::Error::PermissionDenied { path, source },
        404 => object_store::Error::NotFound { path, source },
        _ => object_store::Error::Generic {
            store: "object store",
            source,
        },
    }
}

/// The index's signature, below the prefix.
fn signature_rel() -> String {
    format!("{INDEX_PATH}{}", signing::SIGNATURE_SUFFIX)
}

impl<B: Bucket> ObjectRegistry<B> {
    /// Changes the index with `edit` (`Ok(None)`: it changed nothing) by a compare-and-swap on
    /// its ETag — created only if absent, replaced only if unchanged since it was read — reading
    /// it again when another writer won; then signs what it wrote with `sign`. `what` names the
    /// change for the error when every attempt lost.
    fn edit_index<T>(
        &self,
        http: &Arc<HttpClient>,
        store: &dyn ObjectStore,
        sign: Option<&SecretKey>,
        what: &str,
        mut edit: impl FnMut(&mut Index) -> Result<Option<T>, PublishError>,
    ) -> Result<Option<T>, PublishError> {
        // Whether the store compares `If-Match` with the bare ETag, without the quotes it
        // answers with (Ceph RGW 16 does, so it refuses every quoted one).
        let mut bare = false;
        for _ in 0..INDEX_ATTEMPTS {
            let (mut index, version) = self.read_for_update(http, store)?;
            let Some(done) = edit(&mut index)? else {
                return Ok(None);
            };
            index.serial = Some(index.serial.unwrap_or(0) + 1);
            let text = index.to_json();
            let mode = match &version {
                Some(v) if bare => PutMode::Update(bare_etag(v)),
                Some(v) => PutMode::Update(v.clone()),
                None => PutMode::Create,
            };
            if !self.put(http, store, INDEX_PATH, text.clone().into_bytes(), mode)? {
                // Another writer changed the index first (read it again), or the store refused
                // a condition that holds: the index is as it was read.
                let Some(read) = version else { continue };
                if self.etag_now(http, store)? != read.e_tag {
                    continue;
                }
                if !bare && bare_etag(&read) != read {
                    bare = true;
                    continue;
                }
                return Err(self.ignores_if_match(what).into());
            }
            if let Some(key) = sign {
                self.write_signature(http, store, key, text.as_bytes())?;
            }
            return Ok(Some(done));
        }
        Err(self
            .bucket
            .refused(
                format!("the index changed under each of {INDEX_ATTEMPTS} attempts to {what}"),
                Some("others are writing to this registry: run the command again".into()),
            )
            .into())
    }

    /// The index's ETag as the store says it is now (`None`: there is none).
    fn etag_now(&self, http: &Arc<HttpClient>, store: &dyn ObjectStore) -> Result<Option<String>, RegistryError> {
        let key = self.bucket.path().key(INDEX_PATH);
        let auth = &self.auth()?;
        http.block_on(async {
            match store.head(&key).await {
                Ok(meta) => Ok(meta.e_tag),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(self.bucket.store_error(&e, auth)),
            }
        })
    }

    /// The store refused to replace the index on the condition that it is unchanged, though it
    /// was: it does not honour `If-Match`, so the index cannot be changed safely there.
    fn ignores_if_match(&self, what: &str) -> RegistryError {
        self.bucket.refused(
            format!(
                "the store refused to {what} with the index replaced only if unchanged (If-Match on its ETag), though `{}` had not changed",
                self.shown_index()
            ),
            Some("publish to a store that honours If-Match on a write (Amazon S3, Cloud Storage, Azure Blob Storage, Ceph RGW, MinIO, SeaweedFS)".into()),
        )
    }

    fn write_signature(
        &self,
        http: &Arc<HttpClient>,
        store: &dyn ObjectStore,
        key: &SecretKey,
        index: &[u8],
    ) -> Result<(), PublishError> {
        let text = signing::sign(key, index, "a2c index esys/a2c");
        self.put(http, store, &signature_rel(), text.into_bytes(), PutMode::Overwrite)?;
        Ok(())
    }

    /// The warning for a signed index that a change without a key left stale (when `changed`).
    fn stale_signature(
        &self,
        http: &Arc<HttpClient>,
        store: &dyn ObjectStore,
        changed: bool,
    ) -> Result<Vec<String>, PublishError> {
        if !changed || self.get(http, store, &signature_rel())?.is_none() {
            return Ok(Vec::new());
        }
        let registry = self.bucket.shown();
        Ok(vec![format!(
            "the index of `{registry}` is signed and changed: re-sign it (`a2c sign --registry {registry} --key KEYFILE`), or installs that pin its key refuse it"
        )])
    }

    fn no_index(&self) -> RegistryError {
        self.bucket.refused(
            format!("no registry index at `{}`", self.shown_index()),
            Some(format!(
                "check the location: a registry holds `{INDEX_PATH}` below its prefix; `a2c pack --registry {}` creates it",
                self.bucket.shown()
            )),
        )
    }
}

/// `builder` given, by `with`, each of `vars` whose lower-cased name parses as a `K` (an
/// object_store builder's configuration key, as that builder's own `from_env` reads the
/// environment) that `taken` takes.
pub(in crate::registry) fn configured<B, K: std::str::FromStr>(
    builder: B,
    vars: &[(String, String)],
    with: impl Fn(B, K, String) -> B,
    taken: impl Fn(&K) -> bool,
) -> B {
    vars.iter()
        .filter_map(|(name, value)| Some((name.to_ascii_lowercase().parse().ok()?, value)))
        .filter(|(key, _)| taken(key))
        .fold(builder, |builder, (key, value)| with(builder, key, value.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_etag_loses_its_quotes_only() {
        let v = |tag: &str| UpdateVersion {
            e_tag: Some(tag.into()),
            version: Some("7".into()),
        };
        assert_eq!(bare_etag(&v("\"79e7e210\"")), v("79e7e210"));
        assert_eq!(bare_etag(&v("79e7e210")), v("79e7e210"));
        assert_eq!(bare_etag(&v("W/\"x\"")), v("W/\"x\""));
        assert_eq!(bare_etag(&v("\"")), v("\""));
    }
}
