//! A package index location: `pypi+http(s)://HOST/PATH/simple/[#PROJECT]`, its project page and
//! its upload endpoint.

use url::Url;

use crate::registry::location::{as_base, inner_url};

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

impl std::fmt::Display for PypiIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pypi+{}#{}", self.simple, self.project)
    }
}
