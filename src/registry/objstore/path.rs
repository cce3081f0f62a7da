//! Where a bucket registry's objects are, for every object-store kind: its scheme, its bucket
//! (Azure: its storage account and container) and its key prefix — parsed from the location the
//! user writes, and giving each object's key, its URL in the kind's scheme and the location as
//! it is shown.

use object_store::path::Path as Key;
use url::Url;

/// How a kind's locations are written, for [`BucketPath::parse`] and its errors.
pub(in crate::registry) struct Syntax {
    /// The scheme (`s3`).
    pub scheme: &'static str,
    /// The article a message puts before `SCHEME://` (`an s3:// location`).
    pub article: &'static str,
    /// The location's syntax (`s3://BUCKET/PREFIX`).
    pub written: &'static str,
    /// What the URL's host names (`bucket`, `storage account`).
    pub host: &'static str,
    /// Whether a host is a name the service takes, and what such a name is (`an S3 bucket name
    /// (3 to 63 …)`).
    pub host_name: NameRule,
    /// The variable that names the endpoint instead of a port in the location.
    pub endpoint_variable: &'static str,
    /// The container's name check and what such a name is, for a kind whose first path segment
    /// is its container (Azure).
    pub container: Option<NameRule>,
}

/// Whether a name is one the service takes, and what such a name is, for the error.
pub(in crate::registry) type NameRule = (fn(&str) -> bool, &'static str);

/// `name` when `check` takes it, else why not (`` `Team` is not an S3 bucket name (…) ``).
fn named((check, what): NameRule, name: &str) -> Result<(), String> {
    match check(name) {
        true => Ok(()),
        false => Err(format!("`{name}` is not {what}")),
    }
}

/// A bucket (or an account's container) and a key prefix (no leading or trailing `/`; empty:
/// the bucket's root): a registry's location, or one object's (a lock entry's bundle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::registry) struct BucketPath {
    scheme: &'static str,
    /// The URL's host: the bucket, or the storage account.
    host: String,
    /// The container, where the kind has one in its path.
    container: Option<String>,
    prefix: String,
}

impl BucketPath {
    /// `url` as `syntax` reads it: a valid host name, no port, query or fragment, and plain key
    /// segments (`Err(why)`, for the kind's parse error).
    pub(in crate::registry) fn parse(url: &Url, syntax: &Syntax) -> Result<Self, String> {
        let Syntax {
            scheme,
            article,
            written,
            ..
        } = syntax;
        let host = url.host_str().unwrap_or_default();
        if host.is_empty() {
            return Err(format!("it names no {}: write {written}", syntax.host));
        }
        named(syntax.host_name, host)?;
        if url.port().is_some() {
            return Err(format!(
                "{article} {scheme}:// location names no port: the endpoint comes from {}",
                syntax.endpoint_variable
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(format!("{article} {scheme}:// location has no query or fragment"));
        }
        let mut segments = url.path().split('/').filter(|s| !s.is_empty());
        let container = match syntax.container {
            None => None,
            Some(check) => {
                let Some(container) = segments.next() else {
                    return Err(format!("it names no container: write {written}"));
                };
                named(check, container)?;
                Some(container.to_string())
            }
        };
        let prefix = segments
            .map(super::plain_segment)
            .collect::<Result<Vec<_>, _>>()?
            .join("/");
        Ok(Self {
            scheme,
            host: host.to_string(),
            container,
            prefix,
        })
    }

    /// The bucket, or the storage account (the URL's host).
    pub(in crate::registry) fn host(&self) -> &str {
        &self.host
    }

    /// The container, for a kind that has one.
    pub(in crate::registry) fn container(&self) -> &str {
        self.container.as_deref().unwrap_or_default()
    }

    /// What follows `SCHEME://` up to the prefix: the bucket, or `ACCOUNT/CONTAINER`.
    fn root(&self) -> String {
        match self.container() {
            "" => self.host.clone(),
            container => format!("{}/{container}", self.host),
        }
    }

    /// `rel` (a `/`-separated path of plain names) below the prefix; the prefix itself for "".
    fn below(&self, rel: &str) -> String {
        match (self.prefix.is_empty(), rel.is_empty()) {
            (true, _) => rel.to_string(),
            (false, true) => self.prefix.clone(),
            (false, false) => format!("{}/{rel}", self.prefix),
        }
    }

    /// The key of `rel` below the prefix (`""`: the prefix's own, the object a bundle's location
    /// names).
    pub(in crate::registry) fn key(&self, rel: &str) -> Key {
        Key::from(self.below(rel))
    }

    /// The URL of `rel` below the prefix, in the kind's scheme (entries' URLs resolve against
    /// the index's).
    pub(in crate::registry) fn url_of(&self, rel: &str) -> Url {
        Url::parse(&format!("{}://{}/{}", self.scheme, self.root(), self.below(rel)))
            .expect("a checked host and plain key segments make a URL")
    }

    /// The URL of the object whose key is `key` (as a store's error names it).
    pub(in crate::registry) fn object_url(&self, key: &str) -> Option<Url> {
        Url::parse(&format!("{}://{}/{key}", self.scheme, self.root())).ok()
    }

    /// The location as the user writes it, without a trailing `/` (`s3://BUCKET/PREFIX`).
    pub(in crate::registry) fn shown(&self) -> String {
        match self.prefix.is_empty() {
            true => format!("{}://{}", self.scheme, self.root()),
            false => format!("{}://{}/{}", self.scheme, self.root(), self.prefix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::location::{INDEX_PATH, RegistryLocation};

    /// Every object-store kind's locations, parsed as a2c parses any location: shown without
    /// a trailing `/`, bundles' URLs resolved within the prefix, each malformed one refused.
    #[test]
    fn locations_are_a_bucket_or_container_and_plain_key_segments() {
        let parse = |text: &str| RegistryLocation::parse(text, std::path::Path::new("/"));
        for (text, shown) in [
            ("s3://team-bucket/methods/a2c/", "s3://team-bucket/methods/a2c"),
            ("gs://team_bucket/methods/a2c/", "gs://team_bucket/methods/a2c"),
            ("az://teamstore/methods/a2c/", "az://teamstore/methods/a2c"),
            ("s3://team-bucket", "s3://team-bucket"),
            ("gs://team.example.com", "gs://team.example.com"),
            ("az://teamstore/methods", "az://teamstore/methods"),
            // Dot segments are the URL's own (RFC 3986): resolved by the parser, within the bucket.
            ("s3://team-bucket/a/%2e%2e/b", "s3://team-bucket/b"),
        ] {
            let l = parse(text).unwrap();
            assert_eq!(l.to_string(), shown, "{text}");
            assert_eq!(
                l.index_url().join("../../bundles/a2c-1.0.0.tar.gz").unwrap().as_str(),
                format!("{shown}/bundles/a2c-1.0.0.tar.gz"),
                "{text}"
            );
        }
        for (bad, why) in [
            ("s3:///x", "names no bucket: write s3://BUCKET/PREFIX"),
            ("s3://Team/x", "`Team` is not an S3 bucket name"),
            ("s3://ab/x", "not an S3 bucket name"),
            (
                "s3://b-ucket:9000/x",
                "an s3:// location names no port: the endpoint comes from AWS_ENDPOINT_URL",
            ),
            (
                "s3://bucket/x?versionId=1",
                "an s3:// location has no query or fragment",
            ),
            ("s3://bucket/a/%0Ab", "not a plain name"),
            ("s3://bucket/a/x%2Fy", "not a plain name"),
            ("s3://bucket/a%23b/c", "not a plain name"),
            ("s3://bucket/a%3Fb", "not a plain name"),
            ("gs:///x", "names no bucket: write gs://BUCKET/PREFIX"),
            ("gs://Team/x", "not a Cloud Storage bucket name"),
            ("gs://ab/x", "not a Cloud Storage bucket name"),
            ("gs://-bucket/x", "not a Cloud Storage bucket name"),
            ("gs://a..b/x", "not a Cloud Storage bucket name"),
            (
                "gs://bucket:443/x",
                "a gs:// location names no port: the endpoint comes from GOOGLE_BASE_URL",
            ),
            ("gs://bucket/x?generation=1", "a gs:// location has no query"),
            ("gs://bucket/a/x%2Fy", "not a plain name"),
            (
                "az:///x/y",
                "names no storage account: write az://ACCOUNT/CONTAINER/PREFIX",
            ),
            ("az://Team/x", "not an Azure storage account name"),
            ("az://team-store/methods", "not an Azure storage account name"),
            (
                "az://teamstore",
                "names no container: write az://ACCOUNT/CONTAINER/PREFIX",
            ),
            ("az://teamstore/Methods", "`Methods` is not an Azure container name"),
            ("az://teamstore/a--b", "not an Azure container name"),
            (
                "az://teamstore:10000/methods",
                "names no port: the endpoint comes from AZURE_STORAGE_ENDPOINT",
            ),
            ("az://teamstore/methods/x?sv=1", "no query"),
            ("az://teamstore/methods/a%2Fb", "not a plain name"),
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    /// Keys are below the prefix, the container (where there is one) outside them; the bundle a
    /// location names is its prefix's own key.
    #[test]
    fn keys_are_below_the_prefix() {
        let syntax = |container: Option<NameRule>| Syntax {
            scheme: "x",
            article: "an",
            written: "x://HOST/PREFIX",
            host: "bucket",
            host_name: (|_| true, "a name"),
            endpoint_variable: "X_ENDPOINT",
            container,
        };
        let path = |text: &str, container| BucketPath::parse(&Url::parse(text).unwrap(), &syntax(container)).unwrap();
        let bucket = path("x://bucket/methods/a2c", None);
        assert_eq!(bucket.key(INDEX_PATH).as_ref(), "methods/a2c/index/esys/a2c.json");
        assert_eq!(bucket.key("").as_ref(), "methods/a2c");
        assert_eq!(path("x://bucket", None).key(INDEX_PATH).as_ref(), INDEX_PATH);
        let container = path("x://account/methods/a2c", Some((|_| true, "a container")));
        assert_eq!(container.key(INDEX_PATH).as_ref(), "a2c/index/esys/a2c.json");
        assert_eq!(container.url_of("k").as_str(), "x://account/methods/a2c/k");
        assert_eq!(
            container.object_url("a2c/k").unwrap().as_str(),
            "x://account/methods/a2c/k"
        );
        assert_eq!(container.container(), "methods");
        assert_eq!(container.host(), "account");
    }
}
