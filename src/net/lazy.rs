//! A client built on first use (offline and no-op runs never build one), and the answers it
//! caches for the run: documents, negotiated pages, sizes learned with a `HEAD`.

use url::Url;

use super::HttpError;
use super::client::{Document, HttpClient};

/// What a document was asked for with: its URL and the `Accept` sent.
type Asked = (Url, Option<String>);

/// A client built on first use, so that offline and no-op runs never build one.
#[derive(Debug)]
pub struct LazyClient {
    bound: Vec<Url>,
    /// What the session gives the network: offline, plain-HTTP hosts, settings.
    network: super::Network,
    client: std::sync::Mutex<Option<std::sync::Arc<HttpClient>>>,
    /// Documents read through it (a registry's index), by URL: read once per client.
    /// Documents read through it (an index, a project page), by URL and `Accept`: read once
    /// per client.
    documents: std::sync::Mutex<Vec<(Asked, Document)>>,
    /// Sizes learned with a `HEAD`, by URL.
    sizes: std::sync::Mutex<Vec<(Url, Option<u64>)>>,
}

/// What `cache` holds for `key`, else what `fetch` gives (kept when it succeeds): each answer a
/// client caches per run is asked for once. The lock is not held while fetching.
fn once<K: PartialEq, T: Clone>(
    cache: &std::sync::Mutex<Vec<(K, T)>>,
    key: K,
    fetch: impl FnOnce() -> Result<T, HttpError>,
) -> Result<T, HttpError> {
    let known = crate::util::parallel::locked(cache)
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.clone());
    if let Some(v) = known {
        return Ok(v);
    }
    let v = fetch()?;
    crate::util::parallel::locked(cache).push((key, v.clone()));
    Ok(v)
}

impl LazyClient {
    /// A client built from `network` when first used; `bound` are the registries the user
    /// chose (see `Auth::load`). Usually made by [`super::Network::client`].
    pub fn new(network: super::Network, bound: Vec<Url>) -> Self {
        Self {
            bound,
            network,
            client: std::sync::Mutex::new(None),
            documents: std::sync::Mutex::new(Vec::new()),
            sizes: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The document at `url` (asked for with `Accept: accept` when given), read once by this
    /// client whatever asks again (locking and then looking for bundles in the same registry
    /// read its index once).
    pub fn document(&self, url: &Url, accept: Option<&str>) -> Result<Document, HttpError> {
        once(&self.documents, (url.clone(), accept.map(str::to_string)), || {
            self.client()?.get_document(url, accept)
        })
    }

    /// The document at `url`, read now (an API answer or a file that is read once anyway).
    pub fn fetch(&self, url: &Url) -> Result<Document, HttpError> {
        self.client()?.get_document(url, None)
    }

    /// The size of the file at `url` from the `Content-Length` of a `HEAD` (`Ok(None)` when
    /// the server gives none), asked once by this client.
    pub fn head_size(&self, url: &Url) -> Result<Option<u64>, HttpError> {
        once(&self.sizes, url.clone(), || {
            let reply = self.client()?.call(reqwest::Method::HEAD, url, &[], None)?;
            if !(200..300).contains(&reply.status) {
                return Err(reply.error(url));
            }
            Ok(reply
                .headers
                .get(reqwest::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok()))
        })
    }

    /// What this client was made from (to make another, bound to other hosts).
    pub fn network(&self) -> &super::Network {
        &self.network
    }

    /// The client itself, built on first use (for the calls other than a document's GET).
    pub fn client(&self) -> Result<std::sync::Arc<HttpClient>, HttpError> {
        if self.network.offline {
            return Err(HttpError::Offline);
        }
        let mut slot = crate::util::parallel::locked(&self.client);
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let client = std::sync::Arc::new(HttpClient::new(
            self.network.settings()?,
            self.network.logins.as_deref(),
            &self.bound,
            self.network.exchanges.clone(),
        )?);
        *slot = Some(client.clone());
        Ok(client)
    }
}
