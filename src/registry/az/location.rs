//! Where an `az://` registry is: its storage account, container and key prefix, the object
//! store that reaches it (signing with the environment's credentials, through a2c's own
//! client), blobs' signed URLs, and the store's errors in a2c's words.

use std::sync::Arc;

use object_store::azure::{MicrosoftAzure, MicrosoftAzureBuilder};
use object_store::path::Path as Key;
use url::Url;

use super::super::RegistryError;
use super::super::objstore::{self, Bucket, BucketPath, Connector, Endpoint, SIGNED_FOR, SignedPut, Syntax};
use super::credentials::{credential_source, sas, with_credentials};
use crate::lock::BundleLocation;
use crate::net::HttpClient;
use crate::net::settings::CloudVariables;

/// The variables that may name another endpoint than the account's own (Azurite, a sovereign
/// cloud), first found first.
const ENDPOINT_VARIABLES: [&str; 2] = ["AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT"];

/// How an `az://` location is written.
const SYNTAX: Syntax = Syntax {
    scheme: "az",
    article: "an",
    written: "az://ACCOUNT/CONTAINER/PREFIX",
    host: "storage account",
    host_name: (
        is_account_name,
        "an Azure storage account name (3 to 24 lowercase letters and digits)",
    ),
    endpoint_variable: "AZURE_STORAGE_ENDPOINT",
    container: Some((
        is_container_name,
        "an Azure container name (3 to 63 lowercase letters, digits and single hyphens)",
    )),
};

/// A storage account, a container and a key prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AzLocation(BucketPath);

impl AzLocation {
    pub(super) fn from_url(url: &Url) -> Result<Self, String> {
        BucketPath::parse(url, &SYNTAX).map(Self)
    }

    pub(super) fn account(&self) -> &str {
        self.0.host()
    }

    /// The endpoint of the account's blobs: an override from the environment, else Azure's own.
    fn endpoint_of(&self, azure: &CloudVariables) -> (String, Option<&'static str>) {
        match azure.first_of(&ENDPOINT_VARIABLES) {
            Some((variable, endpoint)) => (endpoint.trim_end_matches('/').to_string(), Some(variable)),
            None => (format!("https://{}.blob.core.windows.net", self.account()), None),
        }
    }

    /// The object store for this container, signing with the credentials `azure` gives and
    /// speaking through `http`.
    fn az_store(&self, http: &Arc<HttpClient>, azure: &CloudVariables) -> Result<MicrosoftAzure, RegistryError> {
        let mut builder = with_credentials(MicrosoftAzureBuilder::new(), azure)
            .with_client_options(objstore::client_options())
            .with_account(self.account())
            .with_container_name(self.0.container())
            .with_http_connector(Connector::of(http, self.endpoint(azure).hosts, &[]))
            .with_retry(objstore::retries());
        if let (endpoint, Some(variable)) = self.endpoint_of(azure) {
            if objstore::endpoint_allowed(self, &endpoint, variable)?.scheme() == "http" {
                builder = builder.with_allow_http(true);
            }
            builder = builder.with_endpoint(endpoint);
        }
        builder.build().map_err(|e| self.store_error(&e, azure))
    }

    /// The blob `key`'s URL at the endpoint (the path object_store requests).
    fn blob_url(&self, azure: &CloudVariables, key: &Key) -> Result<Url, RegistryError> {
        let (endpoint, variable) = self.endpoint_of(azure);
        let mut url = objstore::endpoint_allowed(self, &endpoint, variable.unwrap_or("the endpoint"))?;
        url.path_segments_mut()
            .map_err(|_| self.refused(format!("`{endpoint}` cannot hold a path"), None))?
            .pop_if_empty()
            .push(self.0.container())
            .extend(key.parts().map(|p| p.as_ref().to_string()));
        Ok(url)
    }
}

/// A storage account name as Azure takes it: 3 to 24 lowercase letters and digits.
fn is_account_name(name: &str) -> bool {
    (3..=24).contains(&name.len()) && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// A container name as Azure takes it: 3 to 63 lowercase letters, digits and hyphens, starting
/// and ending with a letter or digit, no two hyphens in a row.
fn is_container_name(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    (3..=63).contains(&name.len())
        && name.chars().all(|c| ok(c) || c == '-')
        && name.starts_with(ok)
        && name.ends_with(ok)
        && !name.contains("--")
}

impl Bucket for AzLocation {
    type Auth = CloudVariables;
    type Store = MicrosoftAzure;

    fn path(&self) -> &BucketPath {
        &self.0
    }

    fn auth_from(&self, settings: &crate::net::Settings, chosen: &[String]) -> Result<CloudVariables, RegistryError> {
        self.checked(&settings.cloud.family(super::KIND.environment), chosen)
    }

    fn store(&self, http: &Arc<HttpClient>, azure: &CloudVariables) -> Result<MicrosoftAzure, RegistryError> {
        self.az_store(http, azure)
    }

    fn endpoint(&self, azure: &CloudVariables) -> Endpoint {
        let (at, variable) = self.endpoint_of(azure);
        Endpoint::new(at, variable)
    }

    fn credential_source(&self, azure: &CloudVariables) -> String {
        credential_source(azure)
    }

    /// With the environment's SAS token: the blob's URL with it.
    fn unsigned_bundle(&self, azure: &CloudVariables) -> Result<Option<BundleLocation>, RegistryError> {
        if !credential_source(azure).starts_with("the SAS token") {
            return Ok(None);
        }
        let mut url = self.blob_url(azure, &self.0.key(""))?;
        url.set_query(sas(azure));
        Ok(Some(BundleLocation::Http(url)))
    }

    /// Put Blob at a URL with the environment's SAS token, else signed for a `PUT` (as a
    /// bundle's GET is), with `If-None-Match: *`.
    fn create_url(
        &self,
        http: &Arc<HttpClient>,
        azure: &CloudVariables,
        rel: &str,
    ) -> Result<Option<SignedPut>, RegistryError> {
        let key = self.0.key(rel);
        let url = if credential_source(azure).starts_with("the SAS token") {
            let mut url = self.blob_url(azure, &key)?;
            url.set_query(sas(azure));
            url
        } else {
            let store = self.az_store(http, azure)?;
            http.block_on(object_store::signer::Signer::signed_url(
                &store,
                reqwest::Method::PUT,
                &key,
                SIGNED_FOR,
            ))
            .map_err(|e| self.store_error(&e, azure))?
        };
        let headers = vec![("If-None-Match", "*".into()), ("x-ms-blob-type", "BlockBlob".into())];
        Ok(Some((url, headers)))
    }
}
