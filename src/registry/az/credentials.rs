//! Which credentials an `az://` registry's requests carry, named in the order object_store's
//! chain takes them, and the checks made before any is used: they are for this storage
//! account, the user named the account, no program is run for them, and Entra's endpoint is
//! reached over TLS.

use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use url::Url;

use super::location::AzLocation;
use crate::net::settings::CloudVariables;
use crate::registry::RegistryError;
use crate::registry::objstore::{self, Bucket as _};

/// The variables that say which storage account the credentials in the environment are for.
const ACCOUNT_VARIABLES: [&str; 2] = ["AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT"];

impl AzLocation {
    /// The environment's `AZURE_*` variables, checked: credentials named for another storage
    /// account are not used for this one, an account the user did not name gets none (`chosen`:
    /// the registries the user named), and no credential that runs a program is followed.
    pub(super) fn checked(&self, azure: &CloudVariables, chosen: &[String]) -> Result<CloudVariables, RegistryError> {
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
                self.path().container()
            )),
        ))
    }
}

/// Where the credentials come from, in the order object_store's chain takes them (for
/// messages; never the secret).
pub(super) fn credential_source(azure: &CloudVariables) -> String {
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
pub(super) fn sas(azure: &CloudVariables) -> Option<&str> {
    ["AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_SAS_KEY"]
        .iter()
        .find_map(|v| azure.get(v))
        .map(|s| s.trim_start_matches('?'))
}

/// `builder` given the credentials object_store knows among `azure`, as its own `from_env` would
/// read them; never an account, container, endpoint or emulator switch (the location and
/// ENDPOINT_VARIABLES say those), nor the Azure CLI or a credential type that would pick it.
pub(super) fn with_credentials(builder: MicrosoftAzureBuilder, azure: &CloudVariables) -> MicrosoftAzureBuilder {
    objstore::configured(builder, &azure.vars, MicrosoftAzureBuilder::with_config, |key| {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let l = AzLocation::from_url(&Url::parse("az://teamstore/methods").unwrap()).unwrap();
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
