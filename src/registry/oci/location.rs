//! The OCI kind's address, `oci://HOST[:PORT]/NAMESPACE/REPO` ([`OciLocation`]): where its
//! distribution API is (HTTPS; plain HTTP to loopback or to hosts opted in), its URLs, and what
//! it is as a registry location — including where a lock entry whose `source` is an `oci://`
//! address fetches its bundle (the layer's blob, by the locked digest).

use std::sync::Arc;

use url::Url;

use crate::lock::BundleLocation;
use crate::net::{HttpError, PlainHttp};
use crate::registry::handle::Registry;
use crate::registry::kind::{Kind, Location};
use crate::util::digest::Sha256;

/// The OCI distribution registry kind, as `registry::KINDS` registers it.
pub const KIND: Kind = Kind::new(&["oci"], "oci://HOST/REPO", |url| {
    Ok(Arc::new(OciLocation::parse(url)?))
});

/// A repository in an OCI registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciLocation {
    /// `http(s)://host[:port]/`: where the distribution API (`/v2/…`) is.
    pub api: Url,
    /// The port the address names, if any.
    port: Option<u16>,
    /// `namespace/repo`.
    pub repo: String,
}

impl OciLocation {
    /// Parses `oci://host[:port]/namespace/repo` (anything after `@` is a reference, ignored):
    /// its API is plain HTTP on loopback, else HTTPS — until [`Self::reached_with`] the hosts
    /// the user opted into plain HTTP, which the session's network carries.
    pub fn parse(url: &Url) -> Result<Self, String> {
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
        // Each component as the distribution spec names them: letters and digits, joined by
        // `.`, `_` or `-` (never `.` or `..` alone, which a URL would resolve away).
        let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        if !repo.split('/').all(|p| {
            p.bytes().next().as_ref().is_some_and(alnum)
                && p.bytes().last().as_ref().is_some_and(alnum)
                && p.bytes().all(|b| alnum(&b) || b"._-".contains(&b))
        }) {
            return Err(format!(
                "`{repo}` is not a valid OCI repository name (lower case, digits, `._-`, `/`)"
            ));
        }
        // `oci:` is not a special scheme, so its host is opaque text: read it as an HTTPS URL's
        // host (`127.0.000` is 127.0.0.0, `LOCALHOST` localhost), and judge loopback (and, later,
        // the plain-HTTP hosts) by that, the host requests go to.
        let read = Url::parse(&format!("https://{host}/")).map_err(|e| e.to_string())?;
        let plain = crate::net::is_loopback(&read);
        Self::at(read.host_str().unwrap_or_default(), url.port(), plain, repo)
    }

    fn at(host: &str, port: Option<u16>, plain: bool, repo: String) -> Result<Self, String> {
        let scheme = if plain { "http" } else { "https" };
        let shown_port = port.map(|p| format!(":{p}")).unwrap_or_default();
        let api = Url::parse(&format!("{scheme}://{host}{shown_port}/")).map_err(|e| e.to_string())?;
        Ok(Self { api, port, repo })
    }

    /// The same repository as requests reach it: over plain HTTP when `plain` (the hosts the
    /// user opted in with `--plain-http` or `A2C_OCI_PLAIN_HTTP`) names its host.
    pub fn reached_with(&self, plain: &PlainHttp) -> Self {
        let host = self.api.host_str().unwrap_or_default();
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        match self.api.scheme() == "https" && plain.allows(bare, self.port) {
            true => Self::at(host, self.port, true, self.repo.clone()).unwrap_or_else(|_| self.clone()),
            false => self.clone(),
        }
    }

    /// `oci://host[:port]/repo`.
    pub fn display(&self) -> String {
        let port = self.api.port().map(|p| format!(":{p}")).unwrap_or_default();
        format!("oci://{}{port}/{}", self.api.host_str().unwrap_or_default(), self.repo)
    }

    pub(crate) fn v2(&self, tail: &str) -> Url {
        self.api
            .join(&format!("v2/{}/{tail}", self.repo))
            .expect("a relative path joins")
    }

    pub fn blob_url(&self, digest: &str) -> Url {
        self.v2(&format!("blobs/{digest}"))
    }

    pub(crate) fn manifest_url(&self, reference: &str) -> Url {
        self.v2(&format!("manifests/{reference}"))
    }
}

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

    /// A lock entry whose source is this repository: its layer's blob, by the locked digest.
    fn bundle_at(
        &self,
        sha256: &Sha256,
        network: &crate::net::Network,
    ) -> Result<Option<BundleLocation>, super::super::RegistryError> {
        let reached = self.reached_with(&network.plain_http);
        Ok(Some(BundleLocation::Http(
            reached.blob_url(&format!("sha256:{}", sha256.to_hex())),
        )))
    }

    fn open(&self, network: &crate::net::Network) -> Box<dyn Registry> {
        let reached = self.reached_with(&network.plain_http);
        Box::new(super::OciRegistry::new(reached, network.clone()))
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
