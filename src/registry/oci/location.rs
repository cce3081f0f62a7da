//! The OCI kind's address, `oci://HOST[:PORT]/NAMESPACE/REPO` ([`OciLocation`], kept in `lock`
//! because a lock entry's source may be one), as a registry location.

use std::sync::Arc;

use url::Url;

use super::OciLocation;
use crate::net::HttpError;
use crate::registry::handle::Registry;
use crate::registry::kind::{Kind, Location};

/// The OCI distribution registry kind, as `registry::KINDS` registers it.
pub const KIND: Kind = Kind {
    schemes: &["oci"],
    syntax: "oci://HOST/REPO",
    parse: |url, plain| Ok(Arc::new(OciLocation::parse(url, plain)?)),
    pack_format: None,
    path: None,
    exchange: None,
};

impl Location for OciLocation {
    fn shown(&self) -> String {
        self.display()
    }

    /// Its tag list stands for an index (each tag a version's manifest).
    fn index_url(&self) -> Url {
        self.v2("tags/list")
    }

    fn http_base(&self) -> Option<Url> {
        Some(self.api.clone())
    }

    fn open(&self, network: &crate::net::Network) -> Box<dyn Registry> {
        Box::new(super::OciRegistry::new(self.clone(), network.clone()))
    }

    /// An OCI registry's credentials are docker's; its plain-HTTP hosts are named, not implied
    /// by the URL.
    fn hint(&self, e: &HttpError) -> Option<String> {
        match e {
            HttpError::Status {
                status: 401,
                authorized: false,
                ..
            } => Some(format!(
                "the registry wants credentials: run `docker login HOST` (a2c reads docker's config.json, or DOCKER_CONFIG), or set {}=user:password and name the registry with --registry or {}",
                crate::env::A2C_REGISTRY_AUTH,
                crate::env::A2C_REGISTRY
            )),
            HttpError::NotTls { .. } => Some(format!(
                "the server does not speak HTTPS: for an OCI registry you trust on this network, pass --plain-http or list its host in {} (credentials are never sent in clear text)",
                crate::env::A2C_OCI_PLAIN_HTTP
            )),
            _ => None,
        }
    }
}
