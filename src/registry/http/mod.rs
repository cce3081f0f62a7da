//! A static HTTP(S) registry: the same layout as a file registry, served by any web server.
//! a2c only reads it; publishing happens in the directory it is served from.

use super::handle::PublishError;
use super::handle::{Action, PublishRequest, Published, Registry, Signed, Yanked, read_only};
use super::{Index, RegistryError, RegistryLocation, Wanted, signing};
use crate::net::{HttpError, LazyClient};
use crate::util::version::MethodVersion;

pub struct HttpRegistry {
    location: RegistryLocation,
}

impl HttpRegistry {
    pub fn new(location: RegistryLocation) -> Self {
        Self { location }
    }

    /// The raw index bytes and the URL they were finally read from, read once per client (one
    /// per run): locking and then looking for bundles in the same registry must not fetch it
    /// twice.
    fn fetch(&self, client: &LazyClient) -> Result<(Vec<u8>, url::Url), RegistryError> {
        let url = self.location.index_url();
        let document = client.document(&url, None)?;
        Ok((document.body, document.url))
    }
}

impl Registry for HttpRegistry {
    fn shown(&self) -> String {
        self.location.to_string()
    }

    fn read_index(&self, client: &LazyClient, trusted: &[String], _: Wanted<'_>) -> Result<Index, RegistryError> {
        let (bytes, final_url) = self.fetch(client)?;
        let signature = || {
            let url = url::Url::parse(&format!("{}{}", self.location.index_url(), signing::SIGNATURE_SUFFIX))
                .expect("a URL plus a suffix");
            match client.fetch(&url) {
                Ok(document) => Ok(Some(String::from_utf8_lossy(&document.body).into_owned())),
                Err(HttpError::Status { status: 404 | 410, .. }) => Ok(None),
                Err(e) => Err(e.into()),
            }
        };
        let shown = self.location.index_url().to_string();
        super::trusted_index(&self.shown(), &shown, bytes, signature, trusted, Some(final_url))
    }

    fn publish(&self, _: &PublishRequest<'_>) -> Result<Published, PublishError> {
        Err(read_only(Action::Pack, &self.shown()))
    }

    fn yank(&self, _: &MethodVersion, _: bool, _: Option<&signing::SecretKey>) -> Result<Yanked, PublishError> {
        Err(read_only(Action::Yank, &self.shown()))
    }

    fn sign(&self, _: &signing::SecretKey, _: Option<u64>) -> Result<Signed, PublishError> {
        Err(read_only(Action::Sign, &self.shown()))
    }
}
