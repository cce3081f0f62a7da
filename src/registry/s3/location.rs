//! Where an `s3://` registry is: its bucket and key prefix, the object store that reaches it
//! (signing with the environment's or the profile's credentials, through a2c's own client),
//! bundles' presigned URLs, and the store's errors in a2c's words.

use std::sync::Arc;

use object_store::aws::{AmazonS3, AmazonS3Builder};
use url::Url;

use super::super::RegistryError;
use super::super::objstore::{self, Bucket, BucketPath, Connector, Endpoint, SIGNED_FOR, SignedPut, Syntax};
use super::credentials::credential_source;
use super::profile;
use super::profile::AwsVariables;
use crate::net::HttpClient;

/// How an `s3://` location is written.
const SYNTAX: Syntax = Syntax {
    scheme: "s3",
    article: "an",
    written: "s3://BUCKET/PREFIX",
    host: "bucket",
    host_name: (
        is_bucket_name,
        "an S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens)",
    ),
    endpoint_variable: "AWS_ENDPOINT_URL",
    container: None,
};

/// A bucket and a key prefix: the location of a registry, or of one object in it (a lock
/// entry's bundle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location(BucketPath);

impl S3Location {
    pub(super) fn from_url(url: &Url) -> Result<Self, String> {
        BucketPath::parse(url, &SYNTAX).map(Self)
    }

    /// The environment's AWS variables with what the profile it names adds (the AWS CLI's
    /// shared files: see `profile`).
    fn with_profile(&self, aws: &AwsVariables) -> Result<AwsVariables, RegistryError> {
        profile::with_profile(aws).map_err(|e| self.refused(e.message, e.hint))
    }

    /// The object store for this bucket, signing with the credentials `aws` gives (see
    /// [`Self::with_profile`]) and speaking through `http`.
    fn s3_store(&self, http: &Arc<HttpClient>, aws: &AwsVariables) -> Result<AmazonS3, RegistryError> {
        let endpoint = endpoint(aws);
        self.check_credential_variables(aws)?;
        let mut builder = AmazonS3Builder::new();
        // Every AWS_* variable object_store knows, as its own `from_env` would read them (the
        // session read the environment; this reads what it was given).
        builder = objstore::configured(builder, &aws.vars, AmazonS3Builder::with_config, |_| true);
        // Virtual-hosted addressing with an endpoint of the user's: the bucket becomes the
        // endpoint's first label, as the AWS CLI's `addressing_style = virtual` makes it
        // (object_store would send every request to the endpoint as written, bucket-less).
        if let Some(endpoint) = &endpoint
            && aws
                .get("AWS_VIRTUAL_HOSTED_STYLE_REQUEST")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        {
            let hosted = self.virtual_hosted(endpoint)?;
            builder = builder.with_config(object_store::aws::AmazonS3ConfigKey::S3Endpoint, hosted);
        }
        // The AWS SDKs' variable for the instance metadata service's address (object_store
        // reads its own `AWS_METADATA_ENDPOINT`).
        if aws.get("AWS_METADATA_ENDPOINT").is_none()
            && let Some(imds) = aws.get("AWS_EC2_METADATA_SERVICE_ENDPOINT")
        {
            builder = builder.with_metadata_endpoint(imds.trim_end_matches('/'));
        }
        // The store's answers are documents; any other host's (IMDS, the container endpoint,
        // STS) a credential's.
        let mut builder = builder
            .with_client_options(objstore::client_options())
            .with_bucket_name(self.0.host())
            .with_http_connector(Connector::of(http, self.endpoint(aws).hosts, &[]))
            .with_retry(objstore::retries());
        if aws.get("AWS_REGION").is_none() && aws.get("AWS_DEFAULT_REGION").is_none() {
            builder = builder.with_region("us-east-1");
        }
        if let Some(endpoint) = &endpoint
            && objstore::endpoint_allowed(self, endpoint, "AWS_ENDPOINT_URL")?.scheme() == "http"
        {
            builder = builder.with_allow_http(true);
        }
        builder.build().map_err(|e| self.store_error(&e, aws))
    }

    /// `endpoint` with the bucket as its host's first label (`https://s3.example.internal` →
    /// `https://BUCKET.s3.example.internal`): refused for an IP address, which has no labels.
    fn virtual_hosted(&self, endpoint: &str) -> Result<String, RegistryError> {
        let mut url = Url::parse(endpoint)
            .map_err(|e| self.refused(format!("the endpoint `{endpoint}` is not a URL: {e}"), None))?;
        let Some(url::Host::Domain(host)) = url.host() else {
            return Err(self.refused(
                format!("AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true asks for the bucket in the host name, but the endpoint `{endpoint}` is an IP address"),
                Some("unset AWS_VIRTUAL_HOSTED_STYLE_REQUEST (path-style: the bucket in the path), or name the endpoint by a host name".into()),
            ));
        };
        let hosted = format!("{}.{host}", self.0.host());
        url.set_host(Some(&hosted))
            .map_err(|e| self.refused(format!("`{hosted}` is not a host name: {e}"), None))?;
        Ok(url.as_str().trim_end_matches('/').to_string())
    }
}

impl Bucket for S3Location {
    type Auth = AwsVariables;
    type Store = AmazonS3;

    fn path(&self) -> &BucketPath {
        &self.0
    }

    /// The environment's AWS variables with what the profile they name adds.
    fn auth_from(&self, settings: &crate::net::Settings, _: &[String]) -> Result<AwsVariables, RegistryError> {
        self.with_profile(&AwsVariables::of(
            settings.cloud.family(super::KIND.environment),
            settings.home.as_deref(),
        ))
    }

    fn store(&self, http: &Arc<HttpClient>, aws: &AwsVariables) -> Result<AmazonS3, RegistryError> {
        self.s3_store(http, aws)
    }

    fn endpoint(&self, aws: &AwsVariables) -> Endpoint {
        match endpoint(aws) {
            Some(at) => Endpoint::new(at, Some("AWS_ENDPOINT_URL")),
            None => Endpoint {
                at: "AWS's endpoint".into(),
                shown: "AWS's own, from AWS_REGION".into(),
                hosts: vec!["amazonaws.com".into()],
            },
        }
    }

    fn credential_source(&self, aws: &AwsVariables) -> String {
        credential_source(aws)
    }

    /// Presigned for a `PUT` with `If-None-Match: *` bound to the signature.
    fn create_url(
        &self,
        http: &Arc<HttpClient>,
        aws: &AwsVariables,
        rel: &str,
    ) -> Result<Option<SignedPut>, RegistryError> {
        use object_store::signer::{HeaderValue, SignedUrlOptions, Signer as _};
        let store = self.s3_store(http, aws)?;
        let options =
            SignedUrlOptions::new().with_signed_header(reqwest::header::IF_NONE_MATCH, HeaderValue::from_static("*"));
        let url = http
            .block_on(store.signed_url_opts(reqwest::Method::PUT, &self.0.key(rel), SIGNED_FOR, &options))
            .map_err(|e| self.store_error(&e, aws))?;
        Ok(Some((url, vec![("If-None-Match", "*".into())])))
    }
}

/// The endpoint the environment names for S3, if any (`AWS_ENDPOINT_URL_S3` first, as the AWS
/// CLI reads it).
fn endpoint(aws: &AwsVariables) -> Option<String> {
    ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"]
        .iter()
        .find_map(|v| aws.get(v).map(str::to_string))
}

/// A bucket name as S3 takes it: 3 to 63 lowercase letters, digits, dots and hyphens, starting
/// and ending with a letter or digit.
fn is_bucket_name(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    (3..=63).contains(&name.len())
        && name.chars().all(|c| ok(c) || c == '.' || c == '-')
        && name.starts_with(ok)
        && name.ends_with(ok)
        && !name.contains("..")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::location::INDEX_PATH;

    /// Where a bundle's presigned URL points for these AWS variables (signing is local).
    fn presigned(vars: &[(&str, &str)]) -> Result<Url, RegistryError> {
        let aws = AwsVariables {
            vars: [("AWS_ACCESS_KEY_ID", "AKID"), ("AWS_SECRET_ACCESS_KEY", "secret")]
                .iter()
                .chain(vars)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        };
        let network = crate::net::Network::default();
        let http = network.unbound_client().unwrap();
        let location = S3Location::from_url(&Url::parse("s3://team-methods/a2c").unwrap()).unwrap();
        let store = location.s3_store(&http, &aws)?;
        Ok(http
            .block_on(object_store::signer::Signer::signed_url(
                &store,
                reqwest::Method::GET,
                &location.0.key(INDEX_PATH),
                SIGNED_FOR,
            ))
            .unwrap())
    }

    #[test]
    fn virtual_hosted_addressing_puts_the_bucket_in_the_endpoints_host() {
        let path_style = presigned(&[("AWS_ENDPOINT_URL", "https://s3.example.internal")]).unwrap();
        assert_eq!(path_style.host_str(), Some("s3.example.internal"));
        assert_eq!(path_style.path(), "/team-methods/a2c/index/esys/a2c.json");
        for (name, endpoint) in [
            ("AWS_ENDPOINT_URL", "https://s3.example.internal"),
            ("AWS_ENDPOINT_URL_S3", "https://s3.example.internal:9000/"),
        ] {
            let hosted = presigned(&[(name, endpoint), ("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "true")]).unwrap();
            assert_eq!(hosted.host_str(), Some("team-methods.s3.example.internal"), "{name}");
            assert_eq!(hosted.path(), "/a2c/index/esys/a2c.json", "{name}");
        }
        // AWS's own endpoint, virtual-hosted as object_store makes it.
        let aws = presigned(&[("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "true")]).unwrap();
        assert_eq!(aws.host_str(), Some("team-methods.s3.us-east-1.amazonaws.com"));
        let e = presigned(&[
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:9000"),
            ("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "true"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("is an IP address"), "{e}");
        assert!(e.hint().unwrap().contains("unset AWS_VIRTUAL_HOSTED_STYLE_REQUEST"));
    }
}
