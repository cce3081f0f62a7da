//! Where a registry lives and how its URLs resolve.

use std::path::Path;
use std::sync::Arc;

use url::Url;

use super::RegistryError;
use super::kind::Location;

/// The index path inside a registry.
pub const INDEX_PATH: &str = "index/esys/a2c.json";

/// Where the locked bundle of `entry` is fetched: its `source` as `LockEntry::location` reads
/// it, with a registry kind's own address (`oci://HOST/REPO`) asked of the kind its scheme
/// registers (OCI: the layer's blob by the locked digest, reached as `network` says). A scheme no
/// kind takes, or a kind that gives no bundle URL, is unsupported; a kind that cannot give one
/// now (S3 without usable credentials) says why.
pub fn bundle_location(
    entry: &crate::lock::LockEntry,
    network: &crate::net::Network,
    lock_dir: Option<&Path>,
) -> crate::lock::BundleLocation {
    use crate::lock::BundleLocation;
    let Some(url) = entry.kind_address() else {
        return entry.location(lock_dir);
    };
    let location = super::KINDS
        .iter()
        .find(|k| k.schemes.contains(&url.scheme()))
        .and_then(|kind| (kind.parse)(&url).ok());
    match location.map(|location| location.bundle_at(&entry.sha256, network)) {
        Some(Ok(Some(place))) => place,
        Some(Err(e)) => BundleLocation::Unavailable {
            source: redact(&entry.source),
            reason: e.to_string(),
            hint: e.hint(),
        },
        None | Some(Ok(None)) => BundleLocation::Unsupported(redact(&entry.source)),
    }
}

/// A registry location: a directory (plain path or `file://` URL), an HTTP(S) base URL, or a
/// location of another kind (`oci://`, `pypi+https://`, `conan+https://`). Its kind is behind
/// [`Location`]: nothing outside `registry/` knows which it is.
#[derive(Clone)]
pub struct RegistryLocation(Arc<dyn Location>);

impl RegistryLocation {
    /// Parses a registry location with the kind its scheme registers (`registry::KINDS`); a
    /// path is relative to `base`. What a kind reads of the session (an OCI registry's
    /// plain-HTTP opt-in) it reads when it is opened.
    pub fn parse(location: &str, base: &Path) -> Result<Self, RegistryError> {
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
            let Some(kind) = super::KINDS.iter().find(|k| k.schemes.contains(&url.scheme())) else {
                return Err(bad(&format!("unsupported scheme `{}`", url.scheme())));
            };
            let parsed = (kind.parse)(&url).map(Self).map_err(|why| bad(&why))?;
            // A kind reads a URL of its own inside this one (`pypi+http:///u@h/` is
            // `http://u@h/`): what it will reach carries no credentials either.
            let reached = parsed.index_url();
            if !reached.username().is_empty() || reached.password().is_some() {
                return Err(RegistryError::CredentialsInUrl {
                    location: redact(location),
                });
            }
            return Ok(parsed);
        }
        let path = crate::util::paths::absolute(&base.join(location));
        let from_path = super::KINDS
            .iter()
            .find_map(|k| k.path)
            .expect("one registry kind takes paths");
        Ok(Self(from_path(&path)))
    }

    /// How a registry may be written, from every kind's syntax, for hints.
    pub fn syntaxes() -> String {
        let all: Vec<&str> = super::KINDS.iter().map(|k| k.syntax).collect();
        match all.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }

    /// The location of the index, as a URL.
    pub fn index_url(&self) -> Url {
        self.0.index_url()
    }

    /// Resolves an index entry's `url` (absolute, or relative to the index file).
    pub fn resolve_url(&self, url: &str) -> Result<Url, RegistryError> {
        self.index_url().join(url).map_err(|e| RegistryError::InvalidIndex {
            location: self.to_string(),
            reason: format!("entry url `{url}` does not resolve: {e}"),
        })
    }

    /// The directory of a file registry (read and written with no network), else `None`.
    pub fn local_dir(&self) -> Option<&Path> {
        self.0.local_dir()
    }

    /// Whether its index gives each bundle's sha256 and size without downloading the bundle, so
    /// that it may serve a locked bundle as an alternative to the lock's source. A Conan remote
    /// does not: its package's digest is known only by downloading it (a locked Conan package
    /// comes from its own `source`, whose URL pins both revisions).
    pub fn indexes_digests(&self) -> bool {
        self.0.indexes_digests()
    }

    /// Whether a version may gain new revisions (see [`Location::revises_versions`]).
    pub fn revises_versions(&self) -> bool {
        self.0.revises_versions()
    }

    /// Whether `a2c pack` checks it for conditional writes (see
    /// [`Location::probes_conditional_writes`]).
    pub fn probes_conditional_writes(&self) -> bool {
        self.0.probes_conditional_writes()
    }

    /// The base URL of an HTTP registry (whose host gets the token).
    pub fn http_base(&self) -> Option<Url> {
        self.0.http_base()
    }

    /// Its handle.
    pub fn open(&self, network: &crate::net::Network) -> Box<dyn super::handle::Registry> {
        Box::new(super::kind::KindHandle {
            location: self.0.clone(),
            handle: self.0.open(network),
        })
    }

    /// The kind's own words for an HTTP error met on its behalf (`None`: the network's).
    pub fn hint(&self, e: &crate::net::HttpError) -> Option<String> {
        self.0.hint(e)
    }

    /// See [`super::kind::Location::refused_hint`].
    pub fn refused_hint(&self, network: &crate::net::Network) -> Option<String> {
        self.0.refused_hint(network)
    }

    /// What `a2c pack` makes for it with `--format` as given: the kind's default format when
    /// none is (a wheel for a package index, a recipe for a Conan remote, else tar.gz), and an
    /// error naming what to pass when the format does not fit the kind.
    pub fn pack_plan(&self, format: Option<&str>) -> Result<super::PackPlan, String> {
        self.0.pack_plan(format)
    }
}

impl std::fmt::Debug for RegistryLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for RegistryLocation {
    fn eq(&self, other: &Self) -> bool {
        self.0.shown() == other.0.shown()
    }
}

impl Eq for RegistryLocation {}

impl std::fmt::Display for RegistryLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.shown())
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
    use std::path::PathBuf;

    #[test]
    fn locations_parse_and_urls_resolve() {
        let base = Path::new("/w");
        let dir = RegistryLocation::parse("../reg", base).unwrap();
        assert!(dir.local_dir().is_some_and(|p| p.ends_with("reg")), "{dir:?}");
        let file = RegistryLocation::parse("file:///srv/reg", base).unwrap();
        assert_eq!(file.local_dir(), Some(Path::new("/srv/reg")));
        assert_eq!(file, RegistryLocation::parse("/srv/reg", base).unwrap());
        let u = file.resolve_url("../../bundles/a2c-1.0.0.tar.gz").unwrap();
        assert_eq!(u.as_str(), "file:///srv/reg/bundles/a2c-1.0.0.tar.gz");
        assert_eq!(
            u.to_file_path().unwrap(),
            PathBuf::from("/srv/reg/bundles/a2c-1.0.0.tar.gz")
        );
        let http = RegistryLocation::parse("https://e.org/a2c", base).unwrap();
        assert_eq!(
            http.resolve_url("../../bundles/x.zip").unwrap().as_str(),
            "https://e.org/a2c/bundles/x.zip"
        );
        assert_eq!(
            http.resolve_url("https://cdn.e.org/x.zip").unwrap().as_str(),
            "https://cdn.e.org/x.zip"
        );
        let e = RegistryLocation::parse("https://u:secret@e.org/", base)
            .unwrap_err()
            .to_string();
        assert!(e.contains("https://***@e.org/") && !e.contains("secret"), "{e}");
        assert!(RegistryLocation::parse("ftp://e.org/", base).is_err());
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
        assert!(RegistryLocation::parse("", base).is_err());
        assert_eq!(
            RegistryLocation::syntaxes(),
            "a path, a file:// URL, an https:// URL, oci://HOST/REPO, pypi+https://HOST/simple/, conan+https://HOST/PATH, s3://BUCKET/PREFIX, gs://BUCKET/PREFIX or az://ACCOUNT/CONTAINER/PREFIX"
        );
    }
}
