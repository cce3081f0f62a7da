//! A static HTTP(S) registry: the same layout as a file registry, served by any web server.
//! a2c only reads it; publishing happens in the directory it is served from.

use super::handle::Registry;
use super::kind::{Kind, Location};
use super::{Index, RegistryError, Wanted, signing};
use crate::net::{HttpError, LazyClient};

/// The static HTTP(S) registry kind, as `registry::KINDS` registers it.
pub const KIND: Kind = Kind {
    schemes: &["http", "https"],
    syntax: "an https:// URL",
    parse: |url| {
        let mut url = url.clone();
        if !url.path().ends_with('/') {
            url.set_path(&format!("{}/", url.path()));
        }
        Ok(std::sync::Arc::new(HttpLocation(url)))
    },
    pack_format: None,
    path: None,
    exchange: None,
    environment: &[],
};

/// A static registry's base URL (its path ends with `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLocation(url::Url);

impl Location for HttpLocation {
    fn shown(&self) -> String {
        self.0.to_string()
    }

    fn index_url(&self) -> url::Url {
        self.0.join(super::location::INDEX_PATH).expect("a relative path joins")
    }

    fn http_base(&self) -> Option<url::Url> {
        Some(self.0.clone())
    }

    fn open(&self, _: &crate::net::Network) -> Box<dyn super::handle::Registry> {
        Box::new(HttpRegistry { location: self.clone() })
    }
}

pub struct HttpRegistry {
    location: HttpLocation,
}

impl HttpRegistry {
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
        self.location.shown()
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
}
