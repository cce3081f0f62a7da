//! Where an `s3://` registry is: its bucket and key prefix, the object store that reaches it
//! (signing with the environment's or the profile's credentials, through a2c's own client),
//! bundles' presigned URLs, and the store's errors in a2c's words.

use std::time::Duration;

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as Key;
use url::Url;

use super::super::RegistryError;
use super::super::handle::Registry;
use super::super::kind::Location;
use super::super::location::INDEX_PATH;
use super::{S3Registry, profile};
use crate::net::HttpClient;
use crate::net::settings::AwsVariables;

/// How long a bundle's presigned URL stays valid: one download, with its retries.
const PRESIGNED_FOR: Duration = Duration::from_secs(3600);

/// A bucket and a key prefix (no leading or trailing `/`; empty: the bucket's root). The
/// location of a registry, or of one object in it (a lock entry's bundle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    bucket: String,
    prefix: String,
}

impl S3Location {
    pub(super) fn from_url(url: &Url) -> Result<Self, String> {
        let bucket = url.host_str().unwrap_or_default();
        if bucket.is_empty() {
            return Err("it names no bucket: write s3://BUCKET/PREFIX".into());
        }
        if !is_bucket_name(bucket) {
            return Err(format!(
                "`{bucket}` is not an S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens)"
            ));
        }
        if url.port().is_some() {
            return Err("an s3:// location names no port: the endpoint comes from AWS_ENDPOINT_URL".into());
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err("an s3:// location has no query or fragment".into());
        }
        let mut segments = Vec::new();
        for raw in url.path().split('/').filter(|s| !s.is_empty()) {
            let segment = percent_encoding::percent_decode_str(raw)
                .decode_utf8()
                .map_err(|_| format!("the key segment `{raw}` is not UTF-8 once decoded"))?;
            // A `?`, `#`, `%` or `\\` once decoded would read back as another URL or key.
            let special = |c: char| matches!(c, '/' | '?' | '#' | '%' | '\\') || c.is_control();
            if segment == "." || segment == ".." || segment.contains(special) {
                return Err(format!("the key segment `{raw}` is not a plain name"));
            }
            segments.push(segment.into_owned());
        }
        Ok(Self {
            bucket: bucket.to_string(),
            prefix: segments.join("/"),
        })
    }

    /// The key of `rel` (a `/`-separated path of plain names) below the prefix.
    pub(super) fn key(&self, rel: &str) -> Key {
        match self.prefix.is_empty() {
            true => Key::from(rel),
            false => Key::from(format!("{}/{rel}", self.prefix)),
        }
    }

    /// The `s3://` URL of `rel` below the prefix (entries' URLs resolve against the index's).
    pub(super) fn url_of(&self, rel: &str) -> Url {
        let text = match self.prefix.is_empty() {
            true => format!("s3://{}/{rel}", self.bucket),
            false => format!("s3://{}/{}/{rel}", self.bucket, self.prefix),
        };
        Url::parse(&text).expect("a bucket name and plain key segments make a URL")
    }

    /// The environment's AWS variables with what the profile it names adds (the AWS CLI's
    /// shared files: see `profile`).
    pub(super) fn with_profile(&self, aws: &AwsVariables) -> Result<AwsVariables, RegistryError> {
        profile::with_profile(aws).map_err(|e| self.refused(e.message, e.hint))
    }

    /// The object store for this bucket, signing with the credentials `aws` gives (see
    /// [`Self::with_profile`]) and speaking through `http`.
    pub(super) fn store(&self, http: &HttpClient, aws: &AwsVariables) -> Result<AmazonS3, RegistryError> {
        let endpoint = endpoint(aws);
        let mut builder = AmazonS3Builder::new();
        // Every AWS_* variable object_store knows, as its own `from_env` would read them (the
        // session read the environment; this reads what it was given).
        for (name, value) in &aws.vars {
            if let Ok(key) = name
                .to_ascii_lowercase()
                .parse::<object_store::aws::AmazonS3ConfigKey>()
            {
                builder = builder.with_config(key, value);
            }
        }
        let mut builder = builder
            .with_bucket_name(&self.bucket)
            .with_http_connector(Connector(http.reqwest()))
            .with_retry(object_store::RetryConfig {
                backoff: Default::default(),
                max_retries: 2,
                retry_timeout: Duration::from_secs(60),
            });
        if aws.get("AWS_REGION").is_none() && aws.get("AWS_DEFAULT_REGION").is_none() {
            builder = builder.with_region("us-east-1");
        }
        if let Some(endpoint) = &endpoint {
            let url = Url::parse(endpoint)
                .map_err(|e| self.refused(format!("AWS_ENDPOINT_URL `{endpoint}` is not a URL: {e}"), None))?;
            match url.scheme() {
                "https" => {}
                // Plain HTTP only on this machine: a session token travels in a header.
                "http" if crate::net::is_loopback(&url) => builder = builder.with_allow_http(true),
                _ => {
                    return Err(self.refused(
                        format!("AWS_ENDPOINT_URL `{endpoint}` is not an https:// URL (plain HTTP is taken on loopback only)"),
                        Some("set AWS_ENDPOINT_URL to the store's https:// address".into()),
                    ));
                }
            }
        }
        builder.build().map_err(|e| self.store_error(&e, aws))
    }

    /// `message`, said of this location, with `hint`.
    pub(super) fn refused(&self, message: String, hint: Option<String>) -> RegistryError {
        RegistryError::ObjectStore {
            location: self.display(),
            message,
            hint,
        }
    }

    /// An object store's error in a2c's words: what failed, where, and which credentials and
    /// endpoint were used (never a secret).
    pub(super) fn store_error(&self, e: &object_store::Error, aws: &AwsVariables) -> RegistryError {
        let object = match e {
            object_store::Error::NotFound { path, .. }
            | object_store::Error::PermissionDenied { path, .. }
            | object_store::Error::Unauthenticated { path, .. }
            | object_store::Error::AlreadyExists { path, .. }
            | object_store::Error::Precondition { path, .. } => {
                Url::parse(&format!("s3://{}/{path}", self.bucket)).ok()
            }
            _ => None,
        };
        // The store's certificate not trusted: said as every TLS failure of a2c's is (object_store
        // would bury it in its retries' words).
        if let Some(reason) = crate::net::tls::tls_reason(e) {
            let endpoint = endpoint(aws).unwrap_or_else(|| "AWS's endpoint".into());
            return self.refused(
                format!("TLS failure talking to `{endpoint}`: {reason}"),
                Some(format!(
                    "if the store uses a private CA, point {} (or SSL_CERT_FILE, or AWS_CA_BUNDLE) at a PEM file holding it",
                    crate::env::A2C_CA_BUNDLE
                )),
            );
        }
        let hint = match e {
            object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } => {
                Some(format!(
                    "the store refused the credentials from {}: check them, and that they may read (and, to publish, write) `{}`",
                    credential_source(aws),
                    self.display()
                ))
            }
            object_store::Error::NotFound { .. } => None,
            _ => Some(format!(
                "check the endpoint ({}) and the credentials (from {})",
                endpoint(aws).map_or("AWS's own, from AWS_REGION".to_string(), |e| format!(
                    "`{e}`, from AWS_ENDPOINT_URL"
                )),
                credential_source(aws)
            )),
        };
        self.refused(one_line(e, object.as_ref()), hint)
    }

    pub(super) fn display(&self) -> String {
        match self.prefix.is_empty() {
            true => format!("s3://{}", self.bucket),
            false => format!("s3://{}/{}", self.bucket, self.prefix),
        }
    }
}

/// The endpoint the environment names for S3, if any (`AWS_ENDPOINT_URL_S3` first, as the AWS
/// CLI reads it).
fn endpoint(aws: &AwsVariables) -> Option<String> {
    ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"]
        .iter()
        .find_map(|v| aws.get(v).map(str::to_string))
}

/// Where the credentials come from, as the chain object_store follows reads it (for messages;
/// never the secret).
fn credential_source(aws: &AwsVariables) -> String {
    let set = |v: &str| aws.get(v).is_some();
    if let Some(profile) = &aws.profile {
        profile.clone()
    } else if set("AWS_ACCESS_KEY_ID") {
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY".into()
    } else if set("AWS_WEB_IDENTITY_TOKEN_FILE") {
        "the web identity token (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN)".into()
    } else if set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") || set("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
        "the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_*)".into()
    } else {
        "the instance metadata service (no AWS_ACCESS_KEY_ID is set, and no profile in ~/.aws)".into()
    }
}

/// An object store's error in a line: the request and the status it met when the store says
/// them (`GET \`s3://…\` answered HTTP 403 Forbidden`), else its own first line without the
/// request's duration (never the response body a store appends).
fn one_line(e: &object_store::Error, object: Option<&Url>) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    let verb = ["GET", "PUT", "HEAD", "DELETE", "POST"]
        .into_iter()
        .find(|v| text.contains(&format!("performing {v} ")));
    let status = text
        .find("status code: ")
        .and_then(|i| text[i + "status code: ".len()..].split(':').next())
        .map(str::trim);
    match (verb, status, object) {
        (Some(verb), Some(status), Some(object)) => format!("{verb} `{object}` answered HTTP {status}"),
        _ => {
            let first = text.lines().next().unwrap_or_default();
            match first.find(" in ").zip(first.find(" - ")) {
                Some((a, b)) if a < b => format!("{}{}", &first[..a], &first[b..]),
                _ => first.to_string(),
            }
        }
    }
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

/// object_store's requests, sent by a2c's reqwest client.
#[derive(Debug)]
struct Connector(reqwest::Client);

impl object_store::client::HttpConnector for Connector {
    fn connect(&self, _: &object_store::ClientOptions) -> object_store::Result<object_store::client::HttpClient> {
        Ok(object_store::client::HttpClient::new(self.0.clone()))
    }
}

impl Location for S3Location {
    fn shown(&self) -> String {
        self.display()
    }

    fn index_url(&self) -> Url {
        self.url_of(INDEX_PATH)
    }

    fn http_base(&self) -> Option<Url> {
        None
    }

    /// The lock entry's source is this object: a URL presigned for a GET of it (no request is
    /// sent: signing is local), or why it cannot be (the credentials).
    fn bundle_url(
        &self,
        _: &crate::util::digest::Sha256,
        network: &crate::net::Network,
    ) -> Result<Option<Url>, RegistryError> {
        let http = network
            .unbound_client()
            .map_err(|e| self.refused(e.to_string(), e.hint()))?;
        let settings = network.settings().map_err(|e| self.refused(e.to_string(), e.hint()))?;
        let aws = self.with_profile(&settings.aws)?;
        let store = self.store(&http, &aws)?;
        let key = Key::from(self.prefix.as_str());
        let url = http
            .block_on(object_store::signer::Signer::signed_url(
                &store,
                reqwest::Method::GET,
                &key,
                PRESIGNED_FOR,
            ))
            .map_err(|e| self.store_error(&e, &aws))?;
        Ok(Some(url))
    }

    fn open(&self, network: &crate::net::Network) -> Box<dyn Registry> {
        Box::new(S3Registry {
            location: self.clone(),
            network: network.clone(),
            aws: std::sync::Mutex::new(None),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<S3Location, String> {
        S3Location::from_url(&Url::parse(text).unwrap())
    }

    #[test]
    fn locations_are_a_bucket_and_plain_key_segments() {
        let l = parse("s3://team-bucket/methods/a2c/").unwrap();
        assert_eq!(l.display(), "s3://team-bucket/methods/a2c");
        assert_eq!(l.key(INDEX_PATH).as_ref(), "methods/a2c/index/esys/a2c.json");
        assert_eq!(
            l.index_url().join("../../bundles/a2c-1.0.0.tar.gz").unwrap().as_str(),
            "s3://team-bucket/methods/a2c/bundles/a2c-1.0.0.tar.gz"
        );
        // Dot segments are the URL's own (RFC 3986): resolved by the parser, within the bucket.
        assert_eq!(parse("s3://team-bucket/a/%2e%2e/b").unwrap().prefix, "b");
        let root = parse("s3://team-bucket").unwrap();
        assert_eq!(root.key(INDEX_PATH).as_ref(), INDEX_PATH);
        for (bad, why) in [
            ("s3:///x", "names no bucket"),
            ("s3://Team/x", "not an S3 bucket name"),
            ("s3://ab/x", "not an S3 bucket name"),
            ("s3://b-ucket:9000/x", "names no port"),
            ("s3://bucket/x?versionId=1", "no query"),
            ("s3://bucket/a/%0Ab", "not a plain name"),
            ("s3://bucket/a/x%2Fy", "not a plain name"),
            ("s3://bucket/a%23b/c", "not a plain name"),
            ("s3://bucket/a%3Fb", "not a plain name"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
