//! Where an `az://` registry is: its storage account, container and key prefix, the object
//! store that reaches it (signing with the environment's credentials, through a2c's own
//! client), blobs' signed URLs, and the store's errors in a2c's words.

use std::sync::Arc;

use object_store::azure::{AzureConfigKey, MicrosoftAzure, MicrosoftAzureBuilder};
use object_store::path::Path as Key;
use url::Url;

use super::super::RegistryError;
use super::super::objstore::{self, Bucket, BucketPath, Connector, Endpoint, SIGNED_FOR, SignedPut, Syntax};
use crate::lock::BundleLocation;
use crate::net::HttpClient;
use crate::net::settings::CloudVariables;

/// The variables that may name another endpoint than the account's own (Azurite, a sovereign
/// cloud), first found first.
const ENDPOINT_VARIABLES: [&str; 2] = ["AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT"];

/// The variables that say which storage account the credentials in the environment are for.
const ACCOUNT_VARIABLES: [&str; 2] = ["AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT"];

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

    fn account(&self) -> &str {
        self.0.host()
    }

    /// The environment's `AZURE_*` variables, checked: credentials named for another storage
    /// account are not used for this one, an account the user did not name gets none (`chosen`:
    /// the registries the user named), and no credential that runs a program is followed.
    fn checked(&self, azure: &CloudVariables, chosen: &[String]) -> Result<CloudVariables, RegistryError> {
        if let Some((variable, named)) = azure.first_of(&ACCOUNT_VARIABLES)
            && named != self.account()
        {
            return Err(self.refused(
                format!(
                    "the credentials in the environment are for the storage account `{named}` ({variable}), and this location names `{}`",
                    self.account()
                ),
                Some(format!(
                    "set {variable}={} with that account's credentials, or name the registry az://{named}/…",
                    self.account()
                )),
            ));
        }
        self.bound(azure, chosen)?;
        if azure
            .get("AZURE_USE_AZURE_CLI")
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
        {
            return Err(self.refused(
                "AZURE_USE_AZURE_CLI asks for credentials from the `az` program, which a2c does not run".into(),
                Some(
                    "give the token it holds instead: export AZURE_STORAGE_TOKEN=\"$(az account get-access-token --resource https://storage.azure.com/ --query accessToken --output tsv)\""
                        .into(),
                ),
            ));
        }
        // Entra's token endpoint gets the client secret or the federated token: never in clear
        // text across a network.
        for (name, value) in &azure.vars {
            if matches!(
                name.to_ascii_lowercase().parse::<AzureConfigKey>(),
                Ok(AzureConfigKey::AuthorityHost)
            ) {
                objstore::endpoint_allowed(self, value, name)?;
            }
        }
        Ok(azure.clone())
    }

    /// The account's name is the host every Azure credential goes to (`ACCOUNT.blob.core.windows.net`),
    /// so the user names it: in `AZURE_STORAGE_ACCOUNT_NAME` (or `AZURE_STORAGE_ACCOUNT`), or in a
    /// registry they named (`--registry`, `A2C_REGISTRY`, `A2C_MIRRORS`). One that only a
    /// committed marker, lock entry or mirror names is refused before any request, whatever the
    /// credential (a key, a SAS, a token, a managed identity's).
    fn bound(&self, azure: &CloudVariables, chosen: &[String]) -> Result<(), RegistryError> {
        let named = ACCOUNT_VARIABLES.iter().filter_map(|v| azure.get(v));
        let chosen = chosen
            .iter()
            .filter_map(|c| Url::parse(c).ok())
            .filter(|u| u.scheme() == "az")
            .filter_map(|u| u.host_str().map(str::to_string))
            .collect::<Vec<_>>();
        if named
            .into_iter()
            .chain(chosen.iter().map(String::as_str))
            .any(|a| a == self.account())
        {
            return Ok(());
        }
        Err(self.refused(
            format!(
                "the storage account `{}` is named by the workspace (its marker, lock or mirrors), not by you: a2c sends no Azure credential to an account you did not name",
                self.account()
            ),
            Some(format!(
                "if you trust it, name it yourself: export AZURE_STORAGE_ACCOUNT_NAME={} (with that account's credentials), or pass --registry az://{}/{}/…",
                self.account(),
                self.account(),
                self.0.container()
            )),
        ))
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

/// Where the credentials come from, in the order object_store's chain takes them (for
/// messages; never the secret).
fn credential_source(azure: &CloudVariables) -> String {
    let set = |names: &[&str]| names.iter().any(|v| azure.get(v).is_some());
    let client = set(&["AZURE_CLIENT_ID", "AZURE_STORAGE_CLIENT_ID"]);
    let tenant = set(&["AZURE_TENANT_ID", "AZURE_STORAGE_TENANT_ID", "AZURE_AUTHORITY_ID"]);
    if set(&["AZURE_STORAGE_TOKEN"]) {
        "AZURE_STORAGE_TOKEN".into()
    } else if set(&[
        "AZURE_STORAGE_ACCOUNT_KEY",
        "AZURE_STORAGE_ACCESS_KEY",
        "AZURE_STORAGE_MASTER_KEY",
    ]) {
        "the account key (AZURE_STORAGE_ACCOUNT_KEY)".into()
    } else if client && tenant && set(&["AZURE_FEDERATED_TOKEN_FILE"]) {
        "the workload identity (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE)".into()
    } else if client && tenant && set(&["AZURE_CLIENT_SECRET", "AZURE_STORAGE_CLIENT_SECRET"]) {
        "the service principal (AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, AZURE_TENANT_ID)".into()
    } else if sas(azure).is_some() {
        "the SAS token (AZURE_STORAGE_SAS_TOKEN)".into()
    } else {
        "the managed identity (no AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_SAS_TOKEN or service principal is set)"
            .into()
    }
}

/// The SAS token the environment gives, without a leading `?`.
fn sas(azure: &CloudVariables) -> Option<&str> {
    ["AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_SAS_KEY"]
        .iter()
        .find_map(|v| azure.get(v))
        .map(|s| s.trim_start_matches('?'))
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

/// `builder` given the credentials object_store knows among `azure`, as its own `from_env` would
/// read them; never an account, container, endpoint or emulator switch (the location and
/// ENDPOINT_VARIABLES say those), nor the Azure CLI or a credential type that would pick it.
fn with_credentials(builder: MicrosoftAzureBuilder, azure: &CloudVariables) -> MicrosoftAzureBuilder {
    let credentials = objstore::config_keys(&azure.vars, |key| {
        matches!(
            key,
            AzureConfigKey::AccessKey
                | AzureConfigKey::ClientId
                | AzureConfigKey::ClientSecret
                | AzureConfigKey::AuthorityId
                | AzureConfigKey::AuthorityHost
                | AzureConfigKey::SasKey
                | AzureConfigKey::Token
                | AzureConfigKey::MsiEndpoint
                | AzureConfigKey::ObjectId
                | AzureConfigKey::MsiResourceId
                | AzureConfigKey::FederatedTokenFile
        )
    });
    credentials.fold(builder, |builder, (key, value)| builder.with_config(key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AzLocation, String> {
        AzLocation::from_url(&Url::parse(text).unwrap())
    }

    /// Only credentials reach object_store's builder: an emulator or Azure CLI switch, a
    /// container or an account set in the environment is not taken from there.
    #[test]
    fn only_credentials_reach_the_store_builder() {
        let vars = CloudVariables::of(&[
            ("AZURE_STORAGE_ACCOUNT_KEY", "a2V5"),
            ("AZURE_USE_AZURE_CLI", "true"),
            ("AZURE_STORAGE_USE_EMULATOR", "true"),
            ("AZURE_CONTAINER_NAME", "elsewhere"),
            ("AZURE_STORAGE_ACCOUNT_NAME", "otheraccount"),
        ]);
        let builder = with_credentials(MicrosoftAzureBuilder::new(), &vars);
        assert_eq!(
            builder.get_config_value(&AzureConfigKey::AccessKey).as_deref(),
            Some("a2V5")
        );
        assert_eq!(
            builder.get_config_value(&AzureConfigKey::UseAzureCli).as_deref(),
            Some("false")
        );
        assert_eq!(
            builder.get_config_value(&AzureConfigKey::UseEmulator).as_deref(),
            Some("false")
        );
        assert_eq!(builder.get_config_value(&AzureConfigKey::ContainerName), None);
        assert_eq!(builder.get_config_value(&AzureConfigKey::AccountName), None);
    }

    #[test]
    fn credentials_for_another_account_or_from_a_program_are_refused() {
        let l = parse("az://teamstore/methods").unwrap();
        let vars = CloudVariables::of;
        let other = vars(&[
            ("AZURE_STORAGE_ACCOUNT_NAME", "otherstore"),
            ("AZURE_STORAGE_ACCOUNT_KEY", "a2V5"),
        ]);
        // An account the user named nowhere gets no credential: not the key, not a managed
        // identity's token (no variable at all).
        for env in [vars(&[("AZURE_STORAGE_ACCOUNT_KEY", "a2V5")]), vars(&[])] {
            let e = l.checked(&env, &["az://otherstore/methods".into()]).unwrap_err();
            assert!(e.to_string().contains("`teamstore` is named by the workspace"), "{e}");
            assert!(
                e.hint().unwrap().contains("AZURE_STORAGE_ACCOUNT_NAME=teamstore"),
                "{e}"
            );
            assert!(l.checked(&env, &["az://teamstore/other/x".into()]).is_ok());
        }
        let e = l.checked(&other, &[]).unwrap_err().to_string();
        assert!(e.contains("are for the storage account `otherstore`"), "{e}");
        let same = vars(&[
            ("AZURE_STORAGE_ACCOUNT_NAME", "teamstore"),
            ("AZURE_STORAGE_ACCOUNT_KEY", "a2V5"),
        ]);
        assert!(l.checked(&same, &[]).is_ok());
        let chosen = vec!["az://teamstore/methods".to_string()];
        let cli = vars(&[("AZURE_USE_AZURE_CLI", "true")]);
        let e = l.checked(&cli, &chosen).unwrap_err();
        assert!(e.hint().unwrap().contains("az account get-access-token"), "{e}");
        assert_eq!(
            credential_source(&vars(&[])),
            credential_source(&vars(&[("AZURE_OTHER", "x")]))
        );
        assert!(credential_source(&vars(&[("AZURE_STORAGE_SAS_TOKEN", "?sv=1")])).starts_with("the SAS token"));
        // Entra's token endpoint gets the client secret: https://, or loopback.
        let clear = vars(&[("AZURE_AUTHORITY_HOST", "http://login.example.com")]);
        let e = l.checked(&clear, &chosen).unwrap_err().to_string();
        assert!(
            e.contains("AZURE_AUTHORITY_HOST `http://login.example.com` is not an https:// URL"),
            "{e}"
        );
        for fine in ["https://login.microsoftonline.us", "http://127.0.0.1:8443"] {
            assert!(
                l.checked(&vars(&[("AZURE_AUTHORITY_HOST", fine)]), &chosen).is_ok(),
                "{fine}"
            );
        }
    }
}
