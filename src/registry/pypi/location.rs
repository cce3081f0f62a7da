//! A package index location: `pypi+http(s)://HOST/PATH/simple/[#PROJECT]`, its project page and
//! its upload endpoint.

use std::sync::Arc;

use url::Url;

use crate::registry::PackPlan;
use crate::registry::handle::Registry;
use crate::registry::kind::{Kind, Location, bundle_plan};
use crate::registry::location::{as_base, inner_url};

/// A project on a package index: the simple index's base URL and the project's normalized name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PypiLocation {
    /// `https://HOST/PATH/simple/`, ending with `/`.
    pub simple: Url,
    pub project: String,
}

impl PypiLocation {
    /// Parses `pypi+http(s)://…[#project]`; `Err(why)` for anything else.
    pub fn parse(url: &Url) -> Result<Self, String> {
        let simple = inner_url(url, "pypi", "a package index is `pypi+https://HOST/PATH/simple/`")?;
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
        Ok(Self {
            simple: as_base(simple),
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

impl std::fmt::Display for PypiLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pypi+{}#{}", self.simple, self.project)
    }
}

/// The package index kind, as `registry::KINDS` registers it.
pub const KIND: Kind = Kind::new(&["pypi+http", "pypi+https"], "pypi+https://HOST/simple/", |url| {
    Ok(Arc::new(PypiLocation::parse(url)?))
});

impl Location for PypiLocation {
    fn shown(&self) -> String {
        self.to_string()
    }

    fn index_url(&self) -> Url {
        self.page()
    }

    fn http_base(&self) -> Option<Url> {
        Some(self.simple.clone())
    }

    fn open(&self, network: &crate::net::Network) -> Box<dyn Registry> {
        Box::new(super::PypiRegistry::new(self.clone(), network.clone()))
    }

    /// A project the index does not have answers 404 on its page; an index behind a login
    /// takes a user and a password (or `__token__` and an API token), never a bearer token.
    fn hint(&self, e: &crate::net::HttpError) -> Option<String> {
        match e {
            crate::net::HttpError::Status {
                status: 401,
                authorized: false,
                ..
            } => Some(format!(
                "the index wants credentials: run `a2c login {} --username NAME` (the password, or an API token with NAME `__token__`, on stdin), or set {}=user:password and bind its host with --registry, {} or {}",
                crate::net::credentials::host_entry(&self.simple),
                crate::env::A2C_REGISTRY_AUTH,
                crate::env::A2C_REGISTRY,
                crate::env::A2C_TOKEN_HOSTS
            )),
            crate::net::HttpError::Status { status: 404, url, .. } if *url == self.page().as_str() => Some(format!(
                "the index has no project `{}`: publish a version there (`a2c pack DIR --version V --registry {self}`), or name the project the index holds after `#` in the registry location",
                self.project
            )),
            _ => None,
        }
    }

    /// A package index takes wheels.
    fn pack_plan(&self, format: Option<&str>) -> Result<PackPlan, String> {
        bundle_plan(format, crate::archive::Format::Wheel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_name_the_index_and_the_project() {
        let i = PypiLocation::parse(&Url::parse("pypi+https://pkgs.example.org/root/dev/+simple").unwrap()).unwrap();
        assert_eq!(i.simple.as_str(), "https://pkgs.example.org/root/dev/+simple/");
        assert_eq!(i.project, "esys-a2c");
        assert_eq!(i.page().as_str(), "https://pkgs.example.org/root/dev/+simple/esys-a2c/");
        assert_eq!(i.upload_url().as_str(), "https://pkgs.example.org/root/dev/");
        let i = PypiLocation::parse(&Url::parse("pypi+http://127.0.0.1:8080/simple/#Acme_Rules").unwrap()).unwrap();
        assert_eq!(i.project, "acme-rules");
        assert_eq!(i.to_string(), "pypi+http://127.0.0.1:8080/simple/#acme-rules");
        assert_eq!(i.upload_url().as_str(), "http://127.0.0.1:8080/");
        assert!(PypiLocation::parse(&Url::parse("pypi+ftp://h/simple/").unwrap()).is_err());
        assert!(PypiLocation::parse(&Url::parse("pypi+https://h/simple/#a%20b").unwrap()).is_err());
    }
}
