//! Where a `gs://` registry is: its bucket and key prefix, the object store that reaches it
//! (signing with the environment's credentials, through a2c's own client), objects' signed
//! URLs, and the store's errors in a2c's words.

use std::sync::Arc;

use object_store::gcp::{GoogleCloudStorage, GoogleCloudStorageBuilder, GoogleConfigKey};
use url::Url;

use super::super::RegistryError;
use super::super::objstore::{self, Bucket, BucketPath, Connector, Endpoint, Syntax};
use crate::lock::BundleLocation;
use crate::net::HttpClient;
use crate::net::settings::CloudVariables;

/// Google's own endpoint for Cloud Storage.
const GOOGLE_ENDPOINT: &str = "https://storage.googleapis.com";

/// The variables that may name another endpoint (an emulator, a private service connect
/// address), first found first: object_store's, then the one Google's client libraries read.
const ENDPOINT_VARIABLES: [&str; 2] = ["GOOGLE_BASE_URL", "STORAGE_EMULATOR_HOST"];

/// The variables that name credentials, as object_store takes them: a service account's key
/// (the first three), an ADC file (the last).
const CREDENTIAL_VARIABLES: [&str; 4] = [
    "GOOGLE_SERVICE_ACCOUNT",
    "GOOGLE_SERVICE_ACCOUNT_PATH",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
];

/// How a `gs://` location is written.
const SYNTAX: Syntax = Syntax {
    scheme: "gs",
    article: "a",
    written: "gs://BUCKET/PREFIX",
    host: "bucket",
    host_name: (
        is_bucket_name,
        "a Cloud Storage bucket name (3 to 63 lowercase letters, digits, `-` and `_`, or dotted names of such parts)",
    ),
    endpoint_variable: "GOOGLE_BASE_URL",
    container: None,
};

/// A bucket and a key prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GsLocation(BucketPath);

impl GsLocation {
    pub(super) fn from_url(url: &Url) -> Result<Self, String> {
        BucketPath::parse(url, &SYNTAX).map(Self)
    }

    /// The endpoint: an override from the environment (with the variable that named it), else
    /// Google's own. `STORAGE_EMULATOR_HOST` may be a bare `host:port`, as Google's client
    /// libraries take it (plain HTTP: an emulator on loopback).
    fn endpoint_of(google: &CloudVariables) -> (String, Option<&'static str>) {
        match google.first_of(&ENDPOINT_VARIABLES) {
            Some((variable, endpoint)) => {
                let endpoint = endpoint.trim_end_matches('/');
                let endpoint = match endpoint.contains("://") {
                    true => endpoint.to_string(),
                    false => format!("http://{endpoint}"),
                };
                (endpoint, Some(variable))
            }
            None => (GOOGLE_ENDPOINT.to_string(), None),
        }
    }

    /// The endpoint, refused unless `https://` or on loopback when the environment names it.
    fn checked_endpoint(&self, google: &CloudVariables) -> Result<String, RegistryError> {
        let (endpoint, variable) = Self::endpoint_of(google);
        if let Some(variable) = variable {
            objstore::endpoint_allowed(self, &endpoint, variable)?;
        }
        Ok(endpoint)
    }

    /// The XML-API URL of this location's object (`ENDPOINT/BUCKET/KEY`), as a signed URL names
    /// it, for a download that carries the access token instead.
    fn object_url(&self, google: &CloudVariables) -> Result<Url, RegistryError> {
        let endpoint = self.checked_endpoint(google)?;
        let mut url = Url::parse(&endpoint)
            .map_err(|e| self.refused(format!("the endpoint `{endpoint}` is not a URL: {e}"), None))?;
        url.path_segments_mut()
            .map_err(|()| self.refused(format!("the endpoint `{endpoint}` cannot hold a path"), None))?
            .pop_if_empty()
            .push(self.0.host())
            .extend(self.0.key("").as_ref().split('/'));
        Ok(url)
    }

    /// Whether requests go unsigned: `STORAGE_EMULATOR_HOST` names the endpoint (an emulator)
    /// and no variable names credentials — as Google's client libraries take an emulator
    /// (anonymously), rather than asking gcloud's ADC file or a metadata server for a token.
    fn anonymous(google: &CloudVariables) -> bool {
        Self::endpoint_of(google).1 == Some("STORAGE_EMULATOR_HOST")
            && !CREDENTIAL_VARIABLES.iter().any(|v| google.get(v).is_some())
    }

    /// The object store for this bucket, signing with the credentials `google` gives and
    /// speaking through `http`.
    fn gs_store(&self, http: &Arc<HttpClient>, google: &CloudVariables) -> Result<GoogleCloudStorage, RegistryError> {
        let mut builder = with_credentials(GoogleCloudStorageBuilder::new(), google);
        let endpoint = self.checked_endpoint(google)?;
        builder =
            builder.with_client_options(objstore::client_options().with_allow_http(endpoint.starts_with("http:")));
        if Self::anonymous(google) {
            builder = builder.with_skip_signature(true);
        }
        // Always set: a service account key file's own `gcs_base_url` would otherwise send the
        // requests, and their tokens, where the file says.
        builder
            .with_base_url(&endpoint)
            .with_bucket_name(self.0.host())
            .with_http_connector(Connector::of(http, self.endpoint(google).hosts, &off_limits(google)))
            .with_retry(objstore::retries())
            .build()
            .map_err(|e| self.store_error(&e, google))
    }
}

/// Where the credentials come from, in the order object_store's chain takes them (for
/// messages; never the secret).
fn credential_source(google: &CloudVariables) -> String {
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
fn off_limits(google: &CloudVariables) -> Vec<&'static str> {
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
fn signs_locally(google: &CloudVariables) -> bool {
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

/// A bucket name as Cloud Storage takes it: 3 to 63 lowercase letters, digits, `-` and `_`,
/// starting and ending with a letter or digit; a dotted name up to 222, each part up to 63.
fn is_bucket_name(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let part = |p: &str| {
        (1..=63).contains(&p.len())
            && p.chars().all(|c| ok(c) || c == '-' || c == '_')
            && p.starts_with(ok)
            && p.ends_with(ok)
    };
    let limit = if name.contains('.') { 222 } else { 63 };
    (3..=limit).contains(&name.len()) && name.split('.').all(part)
}

impl Bucket for GsLocation {
    type Auth = CloudVariables;
    type Store = GoogleCloudStorage;

    fn path(&self) -> &BucketPath {
        &self.0
    }

    fn auth_from(&self, settings: &crate::net::Settings, _: &[String]) -> Result<CloudVariables, RegistryError> {
        Ok(settings.cloud.family(super::KIND.environment))
    }

    fn store(&self, http: &Arc<HttpClient>, google: &CloudVariables) -> Result<GoogleCloudStorage, RegistryError> {
        self.gs_store(http, google)
    }

    fn endpoint(&self, google: &CloudVariables) -> Endpoint {
        let (at, variable) = Self::endpoint_of(google);
        Endpoint::new(at, variable)
    }

    fn credential_source(&self, google: &CloudVariables) -> String {
        credential_source(google)
    }

    /// An emulator asked anonymously: fake-gcs-server takes no XML-API upload (how object_store
    /// writes) and checks no condition, so a2c writes nothing there.
    fn refuses_writes(&self, google: &CloudVariables) -> Option<RegistryError> {
        Self::anonymous(google).then(|| {
            self.refused(
                "STORAGE_EMULATOR_HOST names an emulator, asked anonymously: a2c reads a registry there but publishes, yanks and signs nothing (fake-gcs-server takes no XML-API upload and checks no condition)".into(),
                Some("publish to a directory (`a2c pack … --registry DIR`) and upload its files through the emulator's JSON API: docs/hosting.md, \"A Cloud Storage emulator\"".into()),
            )
        })
    }

    /// An emulator asked anonymously serves the object at its plain URL.
    fn unsigned_bundle(&self, google: &CloudVariables) -> Result<Option<BundleLocation>, RegistryError> {
        match Self::anonymous(google) {
            true => Ok(Some(BundleLocation::Http(self.object_url(google)?))),
            false => Ok(None),
        }
    }

    /// Credentials that hold no service account key (a person's own ADC, the metadata server)
    /// sign no URL: the object's XML-API URL and the access token they give, which the download
    /// sends to that origin alone — never IAM's signBlob, which a person cannot call and an
    /// instance's account may not. A key signs a URL (V4) locally.
    fn token_bundle(
        &self,
        http: &Arc<HttpClient>,
        google: &CloudVariables,
        store: &GoogleCloudStorage,
    ) -> Result<Option<BundleLocation>, RegistryError> {
        if signs_locally(google) {
            return Ok(None);
        }
        let credential = http
            .block_on(store.credentials().get_credential())
            .map_err(|e| self.store_error(&e, google))?;
        Ok(Some(BundleLocation::Bearer {
            url: self.object_url(google)?,
            token: crate::net::Bearer::new(credential.bearer.clone()),
        }))
    }

    /// A bundle's download refused: its signed URL or the access token sent with it (the
    /// index, read through object_store, says its credentials' source itself).
    fn download_refused(&self, _: &crate::net::Network) -> Option<String> {
        Some(format!(
            "Cloud Storage refused the credentials of your environment for `{}`: the account they are for (GOOGLE_SERVICE_ACCOUNT or GOOGLE_APPLICATION_CREDENTIALS, else gcloud's ADC file, else the metadata server) needs Storage Object Viewer on the bucket, and a person's ADC that expired is renewed by logging in again with gcloud",
            self.0.shown()
        ))
    }
}

/// `builder` given the credentials object_store knows among `google`, as its own `from_env`
/// would read them; never a bucket, an endpoint or a switch to skip signing (the location,
/// ENDPOINT_VARIABLES and `STORAGE_EMULATOR_HOST` say those).
fn with_credentials(builder: GoogleCloudStorageBuilder, google: &CloudVariables) -> GoogleCloudStorageBuilder {
    let credentials = objstore::config_keys(&google.vars, |key| {
        matches!(
            key,
            GoogleConfigKey::ServiceAccount
                | GoogleConfigKey::ServiceAccountKey
                | GoogleConfigKey::ApplicationCredentials
        )
    });
    credentials.fold(builder, |builder, (key, value)| builder.with_config(key, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::kind::Location as _;

    fn parse(text: &str) -> Result<GsLocation, String> {
        GsLocation::from_url(&Url::parse(text).unwrap())
    }

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

        let object = parse("gs://bucket/a2c/bundles/a2c-1.0.0.tar.gz").unwrap();
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

    #[test]
    fn the_endpoint_comes_from_the_environment_alone_and_plain_http_only_on_loopback() {
        let l = parse("gs://bucket/a2c").unwrap();
        assert_eq!(
            GsLocation::endpoint_of(&CloudVariables::of(&[])),
            (GOOGLE_ENDPOINT.to_string(), None)
        );
        assert_eq!(
            GsLocation::endpoint_of(&CloudVariables::of(&[("STORAGE_EMULATOR_HOST", "127.0.0.1:4443")])),
            ("http://127.0.0.1:4443".to_string(), Some("STORAGE_EMULATOR_HOST"))
        );
        let far = CloudVariables::of(&[("GOOGLE_BASE_URL", "http://storage.example.com/")]);
        let e = l.checked_endpoint(&far).unwrap_err().to_string();
        assert!(e.contains("not an https:// URL"), "{e}");
        assert!(
            credential_source(&CloudVariables::of(&[("GOOGLE_SERVICE_ACCOUNT", "/k.json")]))
                .contains("GOOGLE_SERVICE_ACCOUNT")
        );
        assert!(credential_source(&CloudVariables::of(&[])).contains("metadata server"));
    }

    #[test]
    fn an_emulator_is_asked_anonymously_unless_credentials_are_named() {
        let emulator = ("STORAGE_EMULATOR_HOST", "127.0.0.1:4443");
        assert!(GsLocation::anonymous(&CloudVariables::of(&[emulator])));
        assert!(credential_source(&CloudVariables::of(&[emulator])).starts_with("none: STORAGE_EMULATOR_HOST"));
        assert!(!GsLocation::anonymous(&CloudVariables::of(&[
            emulator,
            ("GOOGLE_APPLICATION_CREDENTIALS", "/k.json")
        ])));
        assert!(!GsLocation::anonymous(&CloudVariables::of(&[(
            "GOOGLE_BASE_URL",
            "http://127.0.0.1:4443"
        )])));
        assert!(!GsLocation::anonymous(&CloudVariables::of(&[])));
    }
}
