//! Where an `s3://` registry is: its bucket and key prefix, the object store that reaches it
//! (signing with the environment's or the profile's credentials, through a2c's own client),
//! bundles' presigned URLs, and the store's errors in a2c's words.

use std::sync::Arc;

use object_store::aws::{AmazonS3, AmazonS3Builder};
use url::Url;

use super::super::RegistryError;
use super::super::objstore::{self, Bucket, BucketPath, Connector, Endpoint, SIGNED_FOR, SignedPut, Syntax};
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
        for (key, value) in objstore::config_keys(&aws.vars, |_: &object_store::aws::AmazonS3ConfigKey| true) {
            builder = builder.with_config(key, value);
        }
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

    /// The credential variables, checked before any request. The endpoints a credential exchange
    /// sends a secret to, as the store's own is: STS
    /// (`AWS_ENDPOINT_URL_STS`, which gets the web identity token) is `https://` or loopback;
    /// the container credentials endpoint (`AWS_CONTAINER_CREDENTIALS_FULL_URI`, which gets the
    /// authorization token) is `https://`, or plain HTTP to loopback or the addresses ECS and
    /// EKS serve it on — as the AWS SDKs allow it — and only with the token's file (object_store
    /// would ask the instance metadata service instead). `AWS_EC2_METADATA_DISABLED=true` with no
    /// other credentials is said at once, not after the instance metadata service is tried.
    fn check_credential_variables(&self, aws: &AwsVariables) -> Result<(), RegistryError> {
        // Only the source the chain takes is checked: a variable the chain passes over (static
        // keys beside an ECS Anywhere endpoint) sends nothing anywhere.
        let source = credential_source(aws);
        let full_uri = "AWS_CONTAINER_CREDENTIALS_FULL_URI";
        if source.starts_with(WEB_IDENTITY)
            && let Some(sts) = aws.get("AWS_ENDPOINT_URL_STS")
        {
            objstore::endpoint_allowed(self, sts, "AWS_ENDPOINT_URL_STS")?;
        }
        if source.starts_with(CONTAINER_FULL_URI)
            && let Some(value) = aws.get(full_uri)
        {
            if aws.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE").is_none() {
                return Err(self.refused(
                    format!("{full_uri} is set without AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE, the file a2c reads the endpoint's authorization token from"),
                    Some("set AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE to the token's file (EKS Pod Identity sets it), or give the credentials as AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN".into()),
                ));
            }
            self.check_token_file(aws)?;
            let url =
                Url::parse(value).map_err(|e| self.refused(format!("{full_uri} `{value}` is not a URL: {e}"), None))?;
            let container_host = matches!(
                url.host(),
                Some(url::Host::Ipv4(ip)) if ip.octets() == [169, 254, 170, 2] || ip.octets() == [169, 254, 170, 23]
            ) || matches!(url.host(), Some(url::Host::Ipv6(ip)) if ip.segments() == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23]);
            let plain_ok = crate::net::is_loopback(&url) || container_host;
            if !(url.scheme() == "https" || url.scheme() == "http" && plain_ok) {
                return Err(self.refused(
                    format!("{full_uri} `{value}` is neither https:// nor a container credentials address (plain HTTP goes to loopback, 169.254.170.2, 169.254.170.23 or [fd00:ec2::23] only: the authorization token travels with it)"),
                    Some(format!("set {full_uri} to the endpoint's https:// address")),
                ));
            }
        }
        if source.starts_with(INSTANCE_METADATA)
            && aws
                .get("AWS_EC2_METADATA_DISABLED")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        {
            return Err(self.refused(
                "no AWS credentials: none in the environment or a profile, and AWS_EC2_METADATA_DISABLED=true turns the instance metadata service off".into(),
                Some("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE to a profile in ~/.aws/credentials".into()),
            ));
        }
        Ok(())
    }

    /// The container endpoint's authorization token file, which object_store reads into a
    /// header on each request (a line break or another control character there made it panic):
    /// readable, small, and one header value.
    fn check_token_file(&self, aws: &AwsVariables) -> Result<(), RegistryError> {
        let variable = "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE";
        let Some(path) = aws.get(variable) else {
            return Ok(());
        };
        let refused = |why: String| {
            self.refused(
                format!("{variable} `{path}` {why}"),
                Some(format!(
                    "write the token alone in the file, with no line break after it (printf '%s' \"$TOKEN\" > {path})"
                )),
            )
        };
        let meta = fs_err::metadata(path).map_err(|e| refused(format!("cannot be read: {e}")))?;
        if meta.len() > 16 * 1024 {
            return Err(refused(format!(
                "is {} bytes: an authorization token is a line of a few hundred",
                meta.len()
            )));
        }
        let token = fs_err::read(path).map_err(|e| refused(format!("cannot be read: {e}")))?;
        if let Some(at) = token.iter().position(|b| b.is_ascii_control() || *b >= 0x80) {
            let what = match token[at] {
                b'\n' | b'\r' if at + 2 >= token.len() => "ends in a line break",
                b'\n' | b'\r' => "holds a line break",
                _ => "holds a byte an HTTP header cannot carry",
            };
            return Err(refused(format!(
                "{what} (at byte {at}): the token goes in a header as it is"
            )));
        }
        Ok(())
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

/// How [`credential_source`] names the sources [`S3Location::check_credential_variables`] checks.
const WEB_IDENTITY: &str = "the web identity token";
const CONTAINER_FULL_URI: &str = "the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI";
const INSTANCE_METADATA: &str = "the instance metadata service";

/// Where the credentials come from, as the chain object_store follows reads it (for messages;
/// never the secret).
fn credential_source(aws: &AwsVariables) -> String {
    let set = |v: &str| aws.get(v).is_some();
    if let Some(profile) = &aws.profile {
        profile.clone()
    } else if set("AWS_ACCESS_KEY_ID") {
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY".into()
    } else if set("AWS_WEB_IDENTITY_TOKEN_FILE") && set("AWS_ROLE_ARN") {
        format!("{WEB_IDENTITY} (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN)")
    } else if set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
        "the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI)".into()
    } else if set("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
        format!("{CONTAINER_FULL_URI}, AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE)")
    } else {
        format!("{INSTANCE_METADATA} (no AWS_ACCESS_KEY_ID is set, and no profile in ~/.aws)")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::location::INDEX_PATH;

    fn parse(text: &str) -> Result<S3Location, String> {
        S3Location::from_url(&Url::parse(text).unwrap())
    }

    #[test]
    fn secrets_for_a_credential_exchange_go_over_https_or_to_loopback_and_container_addresses() {
        let l = parse("s3://team-bucket/a2c").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        fs_err::write(&token, "pod-identity-token").unwrap();
        let token = token.display().to_string();
        let token = token.as_str();
        let check = |vars: &[(&str, &str)]| {
            let aws = AwsVariables {
                vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
                ..Default::default()
            };
            l.check_credential_variables(&aws).map_err(|e| e.to_string())
        };
        let web = [
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/web"),
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
        ];
        for sts in ["https://sts.eu-west-1.amazonaws.com", "http://127.0.0.1:5000"] {
            assert_eq!(check(&[web[0], web[1], ("AWS_ENDPOINT_URL_STS", sts)]), Ok(()), "{sts}");
        }
        for uri in [
            "http://169.254.170.23/v1/credentials",
            "http://[fd00:ec2::23]/v1/credentials",
            "http://localhost:8080/creds",
            "https://creds.example.internal/v1",
        ] {
            let file = ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token);
            assert_eq!(
                check(&[("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri), file]),
                Ok(()),
                "{uri}"
            );
        }
        let e = check(&[web[0], web[1], ("AWS_ENDPOINT_URL_STS", "http://sts.example.com")]).unwrap_err();
        assert!(
            e.contains("AWS_ENDPOINT_URL_STS `http://sts.example.com` is not an https:// URL"),
            "{e}"
        );
        let e = check(&[
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://creds.example.com/v1"),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token),
        ])
        .unwrap_err();
        assert!(
            e.contains("is neither https:// nor a container credentials address"),
            "{e}"
        );
        // A token file as `echo` writes it (a line break at its end) would make object_store
        // panic building its header: refused, naming the file.
        let echoed = dir.path().join("echoed");
        fs_err::write(&echoed, "pod-identity-token\n").unwrap();
        let e = check(&[
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:9/v1"),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", echoed.to_str().unwrap()),
        ])
        .unwrap_err();
        assert!(e.contains("ends in a line break (at byte 18)"), "{e}");
        // Without the token's file object_store would quietly ask the instance metadata service.
        let e = check(&[("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:9/v1")]).unwrap_err();
        assert!(e.contains("without AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"), "{e}");
        let e = check(&[("AWS_EC2_METADATA_DISABLED", "true")]).unwrap_err();
        assert!(
            e.contains("AWS_EC2_METADATA_DISABLED=true turns the instance metadata service off"),
            "{e}"
        );
        assert_eq!(
            check(&[("AWS_EC2_METADATA_DISABLED", "true"), ("AWS_ACCESS_KEY_ID", "AKID")]),
            Ok(())
        );
        // A source the chain passes over is not checked: static keys beside ECS Anywhere's
        // endpoint (no token file), a plain STS endpoint with no web identity.
        let keys = ("AWS_ACCESS_KEY_ID", "AKID");
        assert_eq!(
            check(&[
                keys,
                ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://creds.example.com/v1")
            ]),
            Ok(())
        );
        assert_eq!(
            check(&[keys, ("AWS_ENDPOINT_URL_STS", "http://sts.example.com")]),
            Ok(())
        );
    }

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
        let location = parse("s3://team-methods/a2c").unwrap();
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
