//! What makes a bucket a registry location: the hooks each object-store kind gives
//! ([`Bucket`]), and the [`Location`] every `Bucket` is, written once.

use std::sync::Arc;
use std::time::Duration;

use object_store::ObjectStore;
use object_store::signer::Signer;
use url::Url;

use super::words::{object_of, store_refusal};
use super::{BucketPath, ObjectRegistry, SignedPut};
use crate::lock::BundleLocation;
use crate::net::{HttpClient, Network, Settings};
use crate::registry::RegistryError;
use crate::registry::handle::Registry;
use crate::registry::kind::Location;
use crate::registry::location::INDEX_PATH;
use crate::util::digest::Sha256;

/// How long a URL signed for one object stays valid: one download, with its retries.
pub(in crate::registry) const SIGNED_FOR: Duration = Duration::from_secs(3600);

/// The words for a bundle's signed URL the store refused (`401`/`403`): the credentials it was
/// signed with, from `credentials` (never a secret), are wrong or may not read `bucket`.
fn refused_signed_url<B: Bucket>(bucket: &B, credentials: String) -> String {
    format!(
        "the store refused the URL signed with the credentials from {credentials}: check them, and that they may read `{}`",
        bucket.shown()
    )
}

/// The `host[:port]` of an endpoint URL, as [`Connector::of`] takes a store's (nothing when it
/// is no URL: every answer is then held to a credential's cap).
pub(super) fn authority_of(endpoint: &str) -> Vec<String> {
    let Ok(url) = Url::parse(endpoint) else {
        return Vec::new();
    };
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => vec![format!("{host}:{port}")],
        None => vec![host.to_string()],
    }
}

/// A store's endpoint, as a kind's error words name it.
pub(in crate::registry) struct Endpoint {
    /// The endpoint's URL, as a TLS failure names it.
    pub at: String,
    /// As a hint shows it: with the variable that named it, or where the default comes from.
    pub shown: String,
    /// The `host[:port]`s whose answers are the store's (see [`Connector::of`]); a request to
    /// any other host is a credential's.
    pub hosts: Vec<String>,
}

impl Endpoint {
    /// The endpoint at `at`, named by `variable` (`None`: the service's own).
    pub(in crate::registry) fn new(at: String, variable: Option<&str>) -> Self {
        Self {
            shown: match variable {
                Some(variable) => format!("`{at}`, from {variable}"),
                None => format!("`{at}`"),
            },
            hosts: authority_of(&at),
            at,
        }
    }
}

/// A bucket (or container) and prefix of one cloud: where its objects are ([`BucketPath`]), what
/// signs its requests, and its errors' words. Every `Bucket` is a registry [`Location`]: what
/// the kinds share is written once here, what differs is each kind's hooks.
pub(in crate::registry) trait Bucket: Clone + std::fmt::Debug + Send + Sync + 'static {
    /// The credentials and endpoint the environment gives (read once per registry).
    type Auth: Clone + Send + Sync + 'static;
    /// The kind's object store (which also signs URLs).
    type Store: ObjectStore + Signer;

    /// Where its objects are.
    fn path(&self) -> &BucketPath;
    /// The credentials and endpoint, from the session's settings (never from a clone); `chosen`:
    /// the registries the user named.
    fn auth_from(&self, settings: &Settings, chosen: &[String]) -> Result<Self::Auth, RegistryError>;
    /// The object store, signing with `auth` and speaking through `http`.
    fn store(&self, http: &Arc<HttpClient>, auth: &Self::Auth) -> Result<Self::Store, RegistryError>;
    /// The store's endpoint with `auth`.
    fn endpoint(&self, auth: &Self::Auth) -> Endpoint;
    /// Where the credentials come from, for messages (never a secret).
    fn credential_source(&self, auth: &Self::Auth) -> String;

    /// A URL signed for a `PUT` of `rel` and the headers that make it create-only, for a bundle
    /// streamed from its file in constant memory; `None` where the kind writes it whole, through
    /// object_store.
    fn create_url(&self, _: &Arc<HttpClient>, _: &Self::Auth, _: &str) -> Result<Option<SignedPut>, RegistryError> {
        Ok(None)
    }

    /// Why nothing is written there with `auth`, when nothing is (an emulator asked
    /// anonymously takes no upload): said before any request.
    fn refuses_writes(&self, _: &Self::Auth) -> Option<RegistryError> {
        None
    }

    /// A bundle's source that needs no signing here (a URL with the environment's SAS, an
    /// emulator's plain URL); `None`: see [`Self::token_bundle`], else a URL presigned for its GET.
    fn unsigned_bundle(&self, _: &Self::Auth) -> Result<Option<BundleLocation>, RegistryError> {
        Ok(None)
    }

    /// A bundle's source as its URL and the credentials' access token, for credentials that
    /// cannot sign a URL; `None`: a URL presigned for its GET.
    fn token_bundle(
        &self,
        _: &Arc<HttpClient>,
        _: &Self::Auth,
        _: &Self::Store,
    ) -> Result<Option<BundleLocation>, RegistryError> {
        Ok(None)
    }

    /// The words for a bundle's download the store refused (`401`/`403`): by default, the
    /// credentials its URL was signed with.
    fn download_refused(&self, network: &Network) -> Option<String> {
        let auth = self.auth_from(network.settings().ok()?, &network.chosen).ok()?;
        Some(refused_signed_url(self, self.credential_source(&auth)))
    }

    /// `e` in a2c's words, with where the credentials came from (never a secret).
    fn store_error(&self, e: &object_store::Error, auth: &Self::Auth) -> RegistryError {
        let object = object_of(e).and_then(|key| self.path().object_url(key));
        store_refusal(self, e, object, self.endpoint(auth), self.credential_source(auth))
    }

    /// `message`, said of this location, with `hint`.
    fn refused(&self, message: String, hint: Option<String>) -> RegistryError {
        RegistryError::ObjectStore {
            location: self.path().shown(),
            message,
            hint,
        }
    }
}

impl<B: Bucket> Location for B {
    fn shown(&self) -> String {
        self.path().shown()
    }

    fn index_url(&self) -> Url {
        self.path().url_of(INDEX_PATH)
    }

    fn http_base(&self) -> Option<Url> {
        None
    }

    fn probes_conditional_writes(&self) -> bool {
        true
    }

    /// The lock entry's source is this object: a URL that needs no signing, or one with an
    /// access token, where the kind gives them; else a URL presigned for a GET of it (signing
    /// is local: no request is sent), or why it cannot be (the credentials).
    fn bundle_at(&self, _: &Sha256, network: &Network) -> Result<Option<BundleLocation>, RegistryError> {
        let settings = network.settings().map_err(|e| self.refused(e.to_string(), e.hint()))?;
        let auth = self.auth_from(settings, &network.chosen)?;
        if let Some(source) = self.unsigned_bundle(&auth)? {
            return Ok(Some(source));
        }
        let http = network
            .unbound_client()
            .map_err(|e| self.refused(e.to_string(), e.hint()))?;
        let store = self.store(&http, &auth)?;
        if let Some(source) = self.token_bundle(&http, &auth, &store)? {
            return Ok(Some(source));
        }
        let url = http
            .block_on(store.signed_url(reqwest::Method::GET, &self.path().key(""), SIGNED_FOR))
            .map_err(|e| self.store_error(&e, &auth))?;
        Ok(Some(BundleLocation::Http(url)))
    }

    fn open(&self, network: &Network) -> Box<dyn Registry> {
        Box::new(ObjectRegistry::new(self.clone(), network.clone()))
    }

    fn refused_hint(&self, network: &Network) -> Option<String> {
        self.download_refused(network)
    }
}

#[cfg(test)]
mod tests {
    /// The URLs the object-store kinds sign read as signed to the one redaction (which names no
    /// cloud): each cloud's parameter names for its signature, credential and token.
    #[test]
    fn every_kinds_signed_urls_are_redacted() {
        for signed in [
            "https://b.s3.amazonaws.com/k?X-Amz-Credential=AK%2F1&X-Amz-Signature=abc",
            "https://b.s3.amazonaws.com/k?X-Amz-Security-Token=abc",
            "https://storage.googleapis.com/b/k?X-Goog-Credential=a%40p&X-Goog-Signature=abc",
            "https://acct.blob.core.windows.net/c/k?sv=2021&sp=r&se=2099&sig=abc",
        ] {
            let shown = crate::util::redact::redact(signed);
            assert!(!shown.contains("abc") && shown.ends_with(" (signed)"), "{shown}");
        }
    }
}
