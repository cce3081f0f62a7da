//! Where a registry lives and how its URLs resolve.

use std::path::{Path, PathBuf};

use url::Url;

use super::RegistryError;
pub use super::conan::ConanRemote;
pub use super::pypi::PypiIndex;

/// The index path inside a registry.
pub const INDEX_PATH: &str = "index/esys/a2c.json";

/// A registry: a directory (plain path or `file://` URL) or an HTTP(S) base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryLocation {
    Dir(PathBuf),
    Http(Url),
    /// An OCI distribution registry repository (`oci://HOST[:PORT]/NAMESPACE/REPO`).
    Oci(crate::lock::oci_ref::OciRef),
    /// A project on a Python package index (`pypi+https://HOST/PATH/simple/[#PROJECT]`).
    Pypi(PypiIndex),
    /// A recipe on a Conan 2 remote (`conan+https://HOST/PATH[#NAME[@USER/CHANNEL]]`).
    Conan(ConanRemote),
}

impl RegistryLocation {
    /// Parses a registry location; a relative path is relative to `base`; an `oci://` one is
    /// reached over plain HTTP on loopback and on the hosts of `plain`.
    pub fn parse(location: &str, base: &Path, plain: &crate::net::PlainHttp) -> Result<Self, RegistryError> {
        let bad = |reason: &str| RegistryError::BadLocation {
            location: redact(location),
            reason: reason.to_string(),
        };
        if location.trim().is_empty() {
            return Err(bad("it is empty"));
        }
        if let Ok(url) = Url::parse(location)
            && url.scheme().len() > 1
        {
            if !url.username().is_empty() || url.password().is_some() {
                return Err(RegistryError::CredentialsInUrl {
                    location: redact(location),
                });
            }
            return match url.scheme() {
                "file" => url
                    .to_file_path()
                    .map(Self::Dir)
                    .map_err(|_| bad("not a valid file:// URL")),
                "oci" => crate::lock::oci_ref::OciRef::parse(&url, plain)
                    .map(Self::Oci)
                    .map_err(|why| bad(&why)),
                "pypi+http" | "pypi+https" => PypiIndex::parse(&url).map(Self::Pypi).map_err(|why| bad(&why)),
                "conan+http" | "conan+https" => ConanRemote::parse(&url).map(Self::Conan).map_err(|why| bad(&why)),
                "http" | "https" => {
                    let mut url = url;
                    if !url.path().ends_with('/') {
                        url.set_path(&format!("{}/", url.path()));
                    }
                    Ok(Self::Http(url))
                }
                other => Err(bad(&format!("unsupported scheme `{other}`"))),
            };
        }
        Ok(Self::Dir(crate::util::paths::absolute(&base.join(location))))
    }

    /// The location of the index, as a URL.
    pub fn index_url(&self) -> Url {
        match self {
            Self::Dir(dir) => Url::from_file_path(dir.join(INDEX_PATH)).expect("absolute path"),
            Self::Http(base) => base.join(INDEX_PATH).expect("relative path joins"),
            Self::Oci(oci) => oci
                .api
                .join(&format!("v2/{}/tags/list", oci.repo))
                .expect("a relative path joins"),
            Self::Pypi(index) => index.page(),
            Self::Conan(remote) => remote.search_url(),
        }
    }

    /// Resolves an index entry's `url` (absolute, or relative to the index file).
    pub fn resolve_url(&self, url: &str) -> Result<Url, RegistryError> {
        self.index_url().join(url).map_err(|e| RegistryError::InvalidIndex {
            location: self.to_string(),
            reason: format!("entry url `{url}` does not resolve: {e}"),
        })
    }
}

impl RegistryLocation {
    /// The directory of a file registry (read and written with no network), else `None`.
    pub fn local_dir(&self) -> Option<&Path> {
        match self {
            Self::Dir(dir) => Some(dir),
            _ => None,
        }
    }

    /// Whether its index gives each bundle's sha256 and size without downloading the bundle, so
    /// that it may serve a locked bundle as an alternative to the lock's source. A Conan remote
    /// does not: its package's digest is known only by downloading it (a locked Conan package
    /// comes from its own `source`, whose URL pins both revisions).
    pub fn indexes_digests(&self) -> bool {
        !matches!(self, Self::Conan(_))
    }

    /// The base URL of an HTTP registry (whose host gets the token).
    pub fn http_base(&self) -> Option<Url> {
        match self {
            Self::Http(url) => Some(url.clone()),
            Self::Oci(oci) => Some(oci.api.clone()),
            Self::Pypi(index) => Some(index.simple.clone()),
            Self::Conan(remote) => Some(remote.base.clone()),
            Self::Dir(_) => None,
        }
    }
}

impl std::fmt::Display for RegistryLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Dir(d) => write!(f, "{}", d.display()),
            Self::Http(u) => write!(f, "{u}"),
            Self::Oci(oci) => f.write_str(&oci.display()),
            Self::Pypi(index) => write!(f, "{index}"),
            Self::Conan(remote) => write!(f, "{remote}"),
        }
    }
}

pub use crate::util::redact::redact;

/// The URL inside `KIND+http(s)://…` (`pypi+https://h/simple/` → `https://h/simple/`), with
/// its fragment kept for the kind to read; `Err(usage)` for any other scheme.
pub fn inner_url(url: &Url, kind: &str, usage: &str) -> Result<Url, String> {
    let inner = url
        .scheme()
        .strip_prefix(kind)
        .and_then(|s| s.strip_prefix('+'))
        .filter(|s| matches!(*s, "http" | "https"))
        .ok_or_else(|| usage.to_string())?;
    let rest = &url.as_str()[url.scheme().len()..];
    Url::parse(&format!("{inner}{rest}")).map_err(|e| e.to_string())
}

/// `url` as a base: no fragment, no query, its path ending in `/`.
pub fn as_base(mut url: Url) -> Url {
    url.set_fragment(None);
    url.set_query(None);
    if !url.path().ends_with('/') {
        url.set_path(&format!("{}/", url.path()));
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_name_the_index_and_the_project() {
        let i = PypiIndex::parse(&Url::parse("pypi+https://pkgs.example.org/root/dev/+simple").unwrap()).unwrap();
        assert_eq!(i.simple.as_str(), "https://pkgs.example.org/root/dev/+simple/");
        assert_eq!(i.project, "esys-a2c");
        assert_eq!(i.page().as_str(), "https://pkgs.example.org/root/dev/+simple/esys-a2c/");
        assert_eq!(i.upload_url().as_str(), "https://pkgs.example.org/root/dev/");
        let i = PypiIndex::parse(&Url::parse("pypi+http://127.0.0.1:8080/simple/#Acme_Rules").unwrap()).unwrap();
        assert_eq!(i.project, "acme-rules");
        assert_eq!(i.to_string(), "pypi+http://127.0.0.1:8080/simple/#acme-rules");
        assert_eq!(i.upload_url().as_str(), "http://127.0.0.1:8080/");
        assert!(PypiIndex::parse(&Url::parse("pypi+ftp://h/simple/").unwrap()).is_err());
        assert!(PypiIndex::parse(&Url::parse("pypi+https://h/simple/#a%20b").unwrap()).is_err());
    }

    #[test]
    fn locations_parse_and_urls_resolve() {
        let base = Path::new("/w");
        let dir = RegistryLocation::parse("../reg", base, &Default::default()).unwrap();
        assert!(matches!(&dir, RegistryLocation::Dir(p) if p.ends_with("reg")));
        let file = RegistryLocation::parse("file:///srv/reg", base, &Default::default()).unwrap();
        assert_eq!(file, RegistryLocation::Dir(PathBuf::from("/srv/reg")));
        let u = file.resolve_url("../../bundles/a2c-1.0.0.tar.gz").unwrap();
        assert_eq!(u.as_str(), "file:///srv/reg/bundles/a2c-1.0.0.tar.gz");
        assert_eq!(
            u.to_file_path().unwrap(),
            PathBuf::from("/srv/reg/bundles/a2c-1.0.0.tar.gz")
        );
        let http = RegistryLocation::parse("https://e.org/a2c", base, &Default::default()).unwrap();
        assert_eq!(
            http.resolve_url("../../bundles/x.zip").unwrap().as_str(),
            "https://e.org/a2c/bundles/x.zip"
        );
        assert_eq!(
            http.resolve_url("https://cdn.e.org/x.zip").unwrap().as_str(),
            "https://cdn.e.org/x.zip"
        );
        let e = RegistryLocation::parse("https://u:secret@e.org/", base, &Default::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("https://***@e.org/") && !e.contains("secret"), "{e}");
        assert!(RegistryLocation::parse("ftp://e.org/", base, &Default::default()).is_err());
        assert!(!redact("https://u:secret@/tmp/x").contains("secret"));
        for leaky in [
            "http:user:pw@host/",
            "HTTP://user:pw@host/x",
            "http:\\\\user:pw@host/",
            "https://tok3n@host/",
            "ftp://user:pw@host/",
            "weird:user:pw@host",
            "https://u:p@[::1/",
        ] {
            let r = redact(leaky);
            assert!(!r.contains("pw") && !r.contains("tok3n"), "{leaky} -> {r}");
        }
        assert_eq!(redact("https://e.org/a@b"), "https://e.org/a@b");
        assert!(RegistryLocation::parse("", base, &Default::default()).is_err());
    }
}
