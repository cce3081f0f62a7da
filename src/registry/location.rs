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
    /// A recipe on a Conan 2 remote (`conan+https://HOST/PATH[#NAME[@USER/CHANNEL]]`).
    Conan(ConanRemote),
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

/// A recipe on a Conan 2 remote: the remote's base URL, the recipe's name, and its user and
/// channel (`_` when it has none, as Conan's URLs spell it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConanRemote {
    /// `https://HOST/PATH/`, ending with `/`: `v1/ping` and `v2/…` are below it.
    pub base: Url,
    pub name: String,
    pub user: String,
    pub channel: String,
}

/// The recipe name a method is published under on a Conan remote, unless the location names
/// another.
pub const CONAN_DEFAULT_NAME: &str = "esys-a2c";

impl ConanRemote {
    /// Parses `conan+http(s)://HOST/PATH[#NAME[@USER/CHANNEL]]`; `Err(why)` for anything else.
    pub fn parse(url: &Url) -> Result<Self, String> {
        let inner = url
            .scheme()
            .strip_prefix("conan+")
            .filter(|s| matches!(*s, "http" | "https"))
            .ok_or("a Conan remote is `conan+https://HOST/PATH#NAME[@USER/CHANNEL]`")?;
        let rest = &url.as_str()[url.scheme().len()..];
        let mut base = Url::parse(&format!("{inner}{rest}")).map_err(|e| e.to_string())?;
        let reference = base
            .fragment()
            .filter(|f| !f.is_empty())
            .unwrap_or(CONAN_DEFAULT_NAME)
            .to_string();
        let (name, user, channel) = match reference.split_once('@') {
            None => (reference.as_str(), "_", "_"),
            Some((name, uc)) => match uc.split_once('/') {
                Some((user, channel)) => (name, user, channel),
                None => return Err(format!("`{reference}`: after `@` comes USER/CHANNEL")),
            },
        };
        let valid = |s: &str| {
            !s.is_empty()
                && s.len() <= 101
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.' | '+'))
        };
        if !valid(name) {
            return Err(format!(
                "`{name}` is not a Conan recipe name (lower case, digits, `-_.+`)"
            ));
        }
        let valid_uc = |s: &str| s == "_" || (valid(&s.to_ascii_lowercase()) && !s.is_empty());
        if !valid_uc(user) || !valid_uc(channel) {
            return Err(format!("`{user}/{channel}` is not a Conan user/channel"));
        }
        base.set_fragment(None);
        base.set_query(None);
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        Ok(Self {
            base,
            name: name.to_string(),
            user: user.to_string(),
            channel: channel.to_string(),
        })
    }

    /// `name/version@user/channel` as the search API lists it (`name/version` without them).
    pub fn reference(&self, version: &str) -> String {
        match (self.user.as_str(), self.channel.as_str()) {
            ("_", "_") => format!("{}/{version}", self.name),
            (u, c) => format!("{}/{version}@{u}/{c}", self.name),
        }
    }

    /// The search for the recipe's versions.
    pub fn search_url(&self) -> Url {
        let mut url = self.base.join("v2/conans/search").expect("a relative path joins");
        let pattern = match (self.user.as_str(), self.channel.as_str()) {
            ("_", "_") => format!("{}/*", self.name),
            (u, c) => format!("{}/*@{u}/{c}", self.name),
        };
        url.query_pairs_mut().append_pair("q", &pattern);
        url
    }

    /// `v2/conans/NAME/VERSION/USER/CHANNEL/` + `rest`.
    pub fn recipe_url(&self, version: &str, rest: &str) -> Url {
        self.base
            .join(&format!(
                "v2/conans/{}/{version}/{}/{}/{rest}",
                self.name, self.user, self.channel
            ))
            .expect("a relative path joins")
    }
}

impl std::fmt::Display for ConanRemote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "conan+{}#{}", self.base, self.name)?;
        match (self.user.as_str(), self.channel.as_str()) {
            ("_", "_") => Ok(()),
            (u, c) => write!(f, "@{u}/{c}"),
        }
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
