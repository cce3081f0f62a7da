//! Where a `gs://` registry is: its bucket and key prefix, the object store that reaches it
//! (signing with the environment's credentials, through a2c's own client), objects' signed
//! URLs, and the store's errors in a2c's words.

use std::sync::Arc;

use object_store::gcp::{GoogleCloudStorage, GoogleCloudStorageBuilder};
use url::Url;

use super::super::RegistryError;
use super::super::objstore::{self, Bucket, BucketPath, Connector, Endpoint, Syntax};
use super::credentials::{CREDENTIAL_VARIABLES, credential_source, off_limits, signs_locally, with_credentials};
use crate::lock::BundleLocation;
use crate::net::HttpClient;
use crate::net::settings::CloudVariables;

/// Google's own endpoint for Cloud Storage.
const GOOGLE_ENDPOINT: &str = "https://storage.googleapis.com";

/// The variables that may name another endpoint (an emulator, a private service connect
/// address), first found first: object_store's, then the one Google's client libraries read.
const ENDPOINT_VARIABLES: [&str; 2] = ["GOOGLE_BASE_URL", "STORAGE_EMULATOR_HOST"];

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
    pub(super) fn endpoint_of(google: &CloudVariables) -> (String, Option<&'static str>) {
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
    pub(super) fn object_url(&self, google: &CloudVariables) -> Result<Url, RegistryError> {
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
    pub(super) fn anonymous(google: &CloudVariables) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_comes_from_the_environment_alone_and_plain_http_only_on_loopback() {
        let l = GsLocation::from_url(&Url::parse("gs://bucket/a2c").unwrap()).unwrap();
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
