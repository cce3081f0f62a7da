//! A Conan remote location: `conan+http(s)://HOST/PATH[#NAME[@USER/CHANNEL]]`, and the URLs of
//! the v2 REST API below it.

use std::sync::Arc;

use url::Url;

use crate::registry::PackPlan;
use crate::registry::handle::Registry;
use crate::registry::kind::{Kind, Location};
use crate::registry::location::{as_base, inner_url};

/// A recipe on a Conan 2 remote: the remote's base URL, the recipe's name, and its user and
/// channel (`_` when it has none, as Conan's URLs spell it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConanLocation {
    /// `https://HOST/PATH/`, ending with `/`: `v1/ping` and `v2/…` are below it.
    pub base: Url,
    pub name: String,
    pub user: String,
    pub channel: String,
}

/// The recipe name a method is published under on a Conan remote, unless the location names
/// another.
pub const CONAN_DEFAULT_NAME: &str = "esys-a2c";

impl ConanLocation {
    /// Parses `conan+http(s)://HOST/PATH[#NAME[@USER/CHANNEL]]`; `Err(why)` for anything else.
    pub fn parse(url: &Url) -> Result<Self, String> {
        let base = inner_url(
            url,
            "conan",
            "a Conan remote is `conan+https://HOST/PATH#NAME[@USER/CHANNEL]`",
        )?;
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
        Ok(Self {
            base: as_base(base),
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

impl std::fmt::Display for ConanLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "conan+{}#{}", self.base, self.name)?;
        match (self.user.as_str(), self.channel.as_str()) {
            ("_", "_") => Ok(()),
            (u, c) => write!(f, "@{u}/{c}"),
        }
    }
}

/// The Conan remote kind, as `registry::KINDS` registers it.
pub const KIND: Kind = Kind {
    schemes: &["conan+http", "conan+https"],
    syntax: "conan+https://HOST/PATH",
    parse: |url| Ok(Arc::new(ConanLocation::parse(url)?)),
    pack_format: Some("conan"),
    path: None,
    exchange: Some(|| Arc::new(super::ConanTokenExchange)),
    environment: &[],
};

impl Location for ConanLocation {
    fn shown(&self) -> String {
        self.to_string()
    }

    fn index_url(&self) -> Url {
        self.search_url()
    }

    fn http_base(&self) -> Option<Url> {
        Some(self.base.clone())
    }

    /// A Conan remote's package digest is known only by downloading it: a locked Conan package
    /// comes from its own `source`, whose URL pins both revisions.
    fn indexes_digests(&self) -> bool {
        false
    }

    fn open(&self, _: &crate::net::Network) -> Box<dyn Registry> {
        Box::new(super::ConanRegistry::new(self.clone()))
    }

    /// A newer recipe or package revision is routine in Conan: the locked one stays locked.
    fn revises_versions(&self) -> bool {
        true
    }

    /// A `401` no credential answered, with what a Conan user does about it: Conan's API wants
    /// the user and password `conan remote login` takes, exchanged for a token.
    fn hint(&self, e: &crate::net::HttpError) -> Option<String> {
        let crate::net::HttpError::Status {
            status: 401,
            authorized: false,
            ..
        } = e
        else {
            return None;
        };
        Some(format!(
            "the Conan remote wants credentials: run `a2c login {} --username NAME` (NAME the user `conan remote login` takes; the password on stdin), or set {}=user:password and bind its host with --registry, {} or {}, or put it in ~/.netrc",
            crate::net::credentials::host_entry(&self.base),
            crate::env::A2C_REGISTRY_AUTH,
            crate::env::A2C_REGISTRY,
            crate::env::A2C_TOKEN_HOSTS
        ))
    }

    /// A Conan remote takes Conan packages only: a2c writes the recipe that makes one.
    fn pack_plan(&self, format: Option<&str>) -> Result<PackPlan, String> {
        match format {
            Some("conan") | None => Ok(PackPlan::Recipe(Box::new(self.clone()))),
            Some(f) => Err(format!(
                "a Conan remote takes a Conan package, not a {f} bundle: leave --format out"
            )),
        }
    }
}
