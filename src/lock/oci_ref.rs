//! A repository in an OCI distribution registry, `oci://HOST[:PORT]/NAMESPACE/REPO`: where its
//! distribution API is (HTTPS, plain HTTP to loopback or to hosts opted in), and its URLs. It
//! lives here, below `registry`, because a lock entry's `oci://` source is one (`lock` reaches
//! it, `net` names it not).

use url::Url;

use crate::net::PlainHttp;

/// A repository in an OCI registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciLocation {
    /// `http(s)://host[:port]/`: where the distribution API (`/v2/…`) is.
    pub api: Url,
    /// `namespace/repo`.
    pub repo: String,
}

impl OciLocation {
    /// Parses `oci://host[:port]/namespace/repo` (anything after `@` is a reference, ignored):
    /// its API is plain HTTP on loopback and on the hosts of `plain`, else HTTPS.
    pub fn parse(url: &Url, plain: &PlainHttp) -> Result<Self, String> {
        let host = url.host_str().ok_or("it names no host")?;
        let repo = url
            .path()
            .trim_matches('/')
            .split('@')
            .next()
            .unwrap_or_default()
            .to_string();
        if repo.is_empty() {
            return Err("it names no repository (oci://HOST/NAMESPACE/REPO)".into());
        }
        // Each component as the distribution spec names them: letters and digits, joined by
        // `.`, `_` or `-` (never `.` or `..` alone, which a URL would resolve away).
        let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        if !repo.split('/').all(|p| {
            p.bytes().next().as_ref().is_some_and(alnum)
                && p.bytes().last().as_ref().is_some_and(alnum)
                && p.bytes().all(|b| alnum(&b) || b"._-".contains(&b))
        }) {
            return Err(format!(
                "`{repo}` is not a valid OCI repository name (lower case, digits, `._-`, `/`)"
            ));
        }
        // `oci:` is not a special scheme, so its host is opaque text: read it as an HTTPS URL's
        // host (`127.0.000` is 127.0.0.0, `LOCALHOST` localhost), and judge loopback and the
        // plain-HTTP hosts by that, the host requests go to.
        let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
        let read = Url::parse(&format!("https://{host}/")).map_err(|e| e.to_string())?;
        let host = read.host_str().unwrap_or_default();
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let scheme = match crate::net::is_loopback(&read) || plain.allows(bare, url.port()) {
            true => "http",
            false => "https",
        };
        let api = Url::parse(&format!("{scheme}://{host}{port}/")).map_err(|e| e.to_string())?;
        Ok(Self { api, repo })
    }

    /// `oci://host[:port]/repo`.
    pub fn display(&self) -> String {
        let port = self.api.port().map(|p| format!(":{p}")).unwrap_or_default();
        format!("oci://{}{port}/{}", self.api.host_str().unwrap_or_default(), self.repo)
    }

    pub(crate) fn v2(&self, tail: &str) -> Url {
        self.api
            .join(&format!("v2/{}/{tail}", self.repo))
            .expect("a relative path joins")
    }

    pub fn blob_url(&self, digest: &str) -> Url {
        self.v2(&format!("blobs/{digest}"))
    }

    pub(crate) fn manifest_url(&self, reference: &str) -> Url {
        self.v2(&format!("manifests/{reference}"))
    }
}
