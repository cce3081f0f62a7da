//! Which credentials an `s3://` registry's requests carry, named as the chain object_store
//! follows reads them, and the checks made of their variables before any request: where a
//! credential exchange sends a secret, and the container endpoint's token file.

use url::Url;

use super::S3Location;
use super::profile::AwsVariables;
use crate::registry::RegistryError;
use crate::registry::objstore;
use crate::registry::objstore::Bucket as _;

impl S3Location {
    /// The credential variables, checked before any request. The endpoints a credential exchange
    /// sends a secret to, as the store's own is: STS
    /// (`AWS_ENDPOINT_URL_STS`, which gets the web identity token) is `https://` or loopback;
    /// the container credentials endpoint (`AWS_CONTAINER_CREDENTIALS_FULL_URI`, which gets the
    /// authorization token) is `https://`, or plain HTTP to loopback or the addresses ECS and
    /// EKS serve it on — as the AWS SDKs allow it — and only with the token's file (object_store
    /// would ask the instance metadata service instead). `AWS_EC2_METADATA_DISABLED=true` with no
    /// other credentials is said at once, not after the instance metadata service is tried.
    pub(super) fn check_credential_variables(&self, aws: &AwsVariables) -> Result<(), RegistryError> {
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
}

/// How [`credential_source`] names the sources [`S3Location::check_credential_variables`] checks.
const WEB_IDENTITY: &str = "the web identity token";
const CONTAINER_FULL_URI: &str = "the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI";
const INSTANCE_METADATA: &str = "the instance metadata service";

/// Where the credentials come from, as the chain object_store follows reads it (for messages;
/// never the secret).
pub(super) fn credential_source(aws: &AwsVariables) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_for_a_credential_exchange_go_over_https_or_to_loopback_and_container_addresses() {
        let l = S3Location::from_url(&Url::parse("s3://team-bucket/a2c").unwrap()).unwrap();
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
}
