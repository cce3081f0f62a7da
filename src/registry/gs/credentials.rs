//! Which credentials a `gs://` registry's requests carry, named in the order object_store's
//! chain takes them: which of them sign a URL here (a service account's key) and which only
//! give a token, the metadata addresses never asked, and what reaches object_store's builder.

use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};

use super::location::GsLocation;
use crate::net::settings::CloudVariables;
use crate::registry::objstore;

/// The variables that name credentials, as object_store takes them: a service account's key
/// (the first three), an ADC file (the last).
pub(super) const CREDENTIAL_VARIABLES: [&str; 4] = [
    "GOOGLE_SERVICE_ACCOUNT",
    "GOOGLE_SERVICE_ACCOUNT_PATH",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
];

/// Where the credentials come from, in the order object_store's chain takes them (for
/// messages; never the secret).
pub(super) fn credential_source(google: &CloudVariables) -> String {
    let set = |name: &str| google.get(name).is_some();
    if GsLocation::anonymous(google) {
        "none: STORAGE_EMULATOR_HOST names an emulator, asked anonymously (set GOOGLE_APPLICATION_CREDENTIALS to sign)"
            .into()
    } else if let Some(variable) = ["GOOGLE_SERVICE_ACCOUNT", "GOOGLE_SERVICE_ACCOUNT_PATH"]
        .into_iter()
        .find(|v| set(v))
    {
        format!("the service account key file ({variable})")
    } else if set("GOOGLE_SERVICE_ACCOUNT_KEY") {
        "the service account key in GOOGLE_SERVICE_ACCOUNT_KEY".into()
    } else if set("GOOGLE_APPLICATION_CREDENTIALS") {
        "Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS)".into()
    } else {
        "Application Default Credentials (gcloud's application_default_credentials.json), else the metadata server (no GOOGLE_APPLICATION_CREDENTIALS or GOOGLE_SERVICE_ACCOUNT is set)"
            .into()
    }
}

/// The metadata addresses a2c never asks: Google's own when the user named another metadata
/// server (`GCE_METADATA_HOST`; object_store falls back to 169.254.169.254 when it fails, off
/// this machine), and both when an emulator is the store (`STORAGE_EMULATOR_HOST`: nothing
/// leaves the emulator's machine).
pub(super) fn off_limits(google: &CloudVariables) -> Vec<&'static str> {
    let named = ["GCE_METADATA_HOST", "GCE_METADATA_ROOT"]
        .iter()
        .any(|v| google.get(v).is_some());
    let emulator = GsLocation::endpoint_of(google).1 == Some("STORAGE_EMULATOR_HOST");
    let mut hosts = Vec::new();
    if (named || emulator) && google.get("GCE_METADATA_IP").is_none() {
        hosts.push(GOOGLE_METADATA_IP);
    }
    if emulator && !named {
        hosts.push(GOOGLE_METADATA_HOST);
    }
    hosts
}

/// Google's metadata server, as object_store asks it when the environment names none.
const GOOGLE_METADATA_IP: &str = "169.254.169.254";
const GOOGLE_METADATA_HOST: &str = "metadata.google.internal";

/// Whether the credentials hold a service account's private key, so that a URL is signed here:
/// a key named by `GOOGLE_SERVICE_ACCOUNT*`, or an ADC file (`GOOGLE_APPLICATION_CREDENTIALS`)
/// of type `service_account`. gcloud's own ADC file is a person's (`authorized_user`), and the
/// metadata server gives tokens only.
pub(super) fn signs_locally(google: &CloudVariables) -> bool {
    use std::io::Read as _;
    let (keys, adc) = CREDENTIAL_VARIABLES.split_at(3);
    if keys.iter().any(|name| google.get(name).is_some()) {
        return true;
    }
    debug_assert_eq!(adc, ["GOOGLE_APPLICATION_CREDENTIALS"]);
    let Some(path) = google.get("GOOGLE_APPLICATION_CREDENTIALS") else {
        return false;
    };
    let mut text = String::new();
    let read = fs_err::File::open(path).and_then(|f| f.take(1 << 20).read_to_string(&mut text));
    read.is_ok() && serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|v| v["type"] == "service_account")
}

/// `builder` given the credentials object_store knows among `google`, as its own `from_env`
/// would read them; never a bucket, an endpoint or a switch to skip signing (the location,
/// ENDPOINT_VARIABLES and `STORAGE_EMULATOR_HOST` say those).
pub(super) fn with_credentials(
    builder: GoogleCloudStorageBuilder,
    google: &CloudVariables,
) -> GoogleCloudStorageBuilder {
    objstore::configured(builder, &google.vars, GoogleCloudStorageBuilder::with_config, |key| {
        matches!(
            key,
            GoogleConfigKey::ServiceAccount
                | GoogleConfigKey::ServiceAccountKey
                | GoogleConfigKey::ApplicationCredentials
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::BundleLocation;
    use crate::registry::kind::Location as _;

    /// Only credentials reach object_store's builder: a bucket or a switch to skip signing set
    /// in the environment is not taken from there.
    #[test]
    fn only_credentials_reach_the_store_builder() {
        let vars = CloudVariables::of(&[
            ("GOOGLE_SERVICE_ACCOUNT", "/keys/sa.json"),
            ("GOOGLE_BUCKET", "elsewhere"),
            ("GOOGLE_SKIP_SIGNATURE", "true"),
        ]);
        let builder = with_credentials(GoogleCloudStorageBuilder::new(), &vars);
        assert_eq!(
            builder.get_config_value(&GoogleConfigKey::ServiceAccount).as_deref(),
            Some("/keys/sa.json")
        );
        assert_eq!(builder.get_config_value(&GoogleConfigKey::Bucket), None);
        assert_eq!(
            builder.get_config_value(&GoogleConfigKey::SkipSignature).as_deref(),
            Some("false")
        );
    }

    #[test]
    fn only_a_service_account_key_signs_urls_and_other_credentials_send_a_token_to_the_object() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, kind: &str| {
            let path = dir.path().join(name);
            fs_err::write(&path, format!(r#"{{"type":"{kind}"}}"#)).unwrap();
            path.display().to_string()
        };
        let (service, person) = (file("sa.json", "service_account"), file("user.json", "authorized_user"));
        assert!(signs_locally(&CloudVariables::of(&[(
            "GOOGLE_SERVICE_ACCOUNT",
            "/k.json"
        )])));
        assert!(signs_locally(&CloudVariables::of(&[(
            "GOOGLE_SERVICE_ACCOUNT_KEY",
            "{}"
        )])));
        assert!(signs_locally(&CloudVariables::of(&[(
            "GOOGLE_APPLICATION_CREDENTIALS",
            service.as_str()
        )])));
        assert!(!signs_locally(&CloudVariables::of(&[(
            "GOOGLE_APPLICATION_CREDENTIALS",
            person.as_str()
        )])));
        assert!(!signs_locally(&CloudVariables::of(&[(
            "GOOGLE_APPLICATION_CREDENTIALS",
            "/nonexistent.json"
        )])));
        assert!(!signs_locally(&CloudVariables::of(&[])));

        let object =
            GsLocation::from_url(&url::Url::parse("gs://bucket/a2c/bundles/a2c-1.0.0.tar.gz").unwrap()).unwrap();
        assert_eq!(
            object.object_url(&CloudVariables::of(&[])).unwrap().as_str(),
            "https://storage.googleapis.com/bucket/a2c/bundles/a2c-1.0.0.tar.gz"
        );
        let emulator = CloudVariables::of(&[("STORAGE_EMULATOR_HOST", "127.0.0.1:4443/")]);
        assert_eq!(
            object.object_url(&emulator).unwrap().as_str(),
            "http://127.0.0.1:4443/bucket/a2c/bundles/a2c-1.0.0.tar.gz"
        );
        let far = CloudVariables::of(&[("GOOGLE_BASE_URL", "http://storage.example.com")]);
        assert!(
            object.object_url(&far).is_err(),
            "a token is never sent in clear text across a network"
        );
        let token = crate::net::Bearer::new("ya29.secret".into());
        assert!(
            !format!(
                "{:?}",
                BundleLocation::Bearer {
                    url: object.index_url(),
                    token
                }
            )
            .contains("ya29")
        );
    }
}
