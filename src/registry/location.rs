//! Where a registry lives and how its URLs resolve.

use std::path::{Path, PathBuf};

use url::Url;

use super::RegistryError;

/// The index path inside a registry.
pub const INDEX_PATH: &str = "index/esys/a2c.json";

/// A registry: a directory (plain path or `file://` URL) or an HTTP(S) base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryLocation {
    Dir(PathBuf),
    Http(Url),
    /// An OCI distribution registry repository (`oci://HOST[:PORT]/NAMESPACE/REPO`).
    Oci(crate::net::oci_ref::OciRef),
    /// A project on a Python package index (`pypi+https://HOST/PATH/simple/[#PROJECT]`).
    Pypi(PypiIndex),
}

impl RegistryLocation {
    /// Parses a registry location; a relative path is relative to `base`; an `oci://` one is
    /// reached over plain HTTP on loopback and on the hosts of `plain`.
    pub fn parse(location: &str, base: &Path, plain: &crate::net::oci_ref::PlainHttp) -> Result<Self, RegistryError> {
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
                "oci" => crate::net::oci_ref::OciRef::parse(&url, plain)
                    .map(Self::Oci)
                    .map_err(|why| bad(&why)),
                "pypi+http" | "pypi+https" => PypiIndex::parse(&url).map(Self::Pypi).map_err(|why| bad(&why)),
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
    /// The base URL of an HTTP registry (whose host gets the token).
    pub fn http_base(&self) -> Option<Url> {
        match self {
            Self::Http(url) => Some(url.clone()),
            Self::Oci(oci) => Some(oci.api.clone()),
            Self::Pypi(index) => Some(index.simple.clone()),
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
        }
    }
}

/// A project on a package index: the simple index's base URL and the project's normalized name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PypiIndex {
    /// `https://HOST/PATH/simple/`, ending with `/`.
    pub simple: Url,
    pub project: String,
}

impl PypiIndex {
    /// Parses `pypi+http(s)://…[#project]`; `Err(why)` for anything else.
    pub fn parse(url: &Url) -> Result<Self, String> {
        let inner = url
            .scheme()
            .strip_prefix("pypi+")
            .filter(|s| matches!(*s, "http" | "https"))
            .ok_or("a package index is `pypi+https://HOST/PATH/simple/`")?;
        let text = url.as_str();
        let rest = &text[url.scheme().len()..];
        let mut simple = Url::parse(&format!("{inner}{rest}")).map_err(|e| e.to_string())?;
        let project = match simple.fragment() {
            Some(p) if !p.is_empty() => p.to_string(),
            _ => crate::archive::wheel::DEFAULT_PROJECT.to_string(),
        };
        if !project
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(format!(
                "`{project}` is not a project name (letters, digits, `-`, `_`, `.`)"
            ));
        }
        simple.set_fragment(None);
        simple.set_query(None);
        if !simple.path().ends_with('/') {
            simple.set_path(&format!("{}/", simple.path()));
        }
        Ok(Self {
            simple,
            project: crate::archive::wheel::normalize(&project),
        })
    }

    /// The project's page: `{simple}{project}/`.
    pub fn page(&self) -> Url {
        self.simple
            .join(&format!("{}/", self.project))
            .expect("a normalized name joins")
    }

    /// The upload endpoint of the index (`…/simple/` → `…/`, as pypiserver takes it;
    /// `…/+simple/` → `…/`, as devpi does).
    pub fn upload_url(&self) -> Url {
        let path = self.simple.path().trim_end_matches('/');
        // devpi: `/USER/INDEX/+simple/` uploads to `/USER/INDEX/`.
        let base = path
            .strip_suffix("+simple")
            .or_else(|| path.strip_suffix("simple"))
            .unwrap_or(path);
        let mut url = self.simple.clone();
        url.set_path(if base.ends_with('/') { base } else { "/" });
        url
    }
}

impl std::fmt::Display for PypiIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pypi+{}#{}", self.simple, self.project)
    }
}

pub use crate::util::redact::redact;

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
