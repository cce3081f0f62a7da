//! Everything the network takes from the session: timeouts, retries, the low-speed check, the
//! document cap, extra CA bundles, proxies, the credentials the user bound to hosts, the hosts
//! opted in to plain HTTP, who hears of retries, and whether the run is offline. The session
//! (`ops::Session`) reads them from the environment once ([`Settings::from_env`], through
//! `env.rs`) and hands a [`Network`] down; nothing in `net/` reads the environment itself.

use std::path::PathBuf;

use super::HttpError;
use super::proxy::ProxyEnv;

/// The network's settings (the network part of a session).
#[derive(Clone)]
pub struct Settings {
    pub timeout: u64,
    pub retries: u64,
    pub low_speed: u64,
    pub low_speed_time: u64,
    pub max_document: u64,
    /// Extra CA bundles, with the variable naming each.
    pub ca_bundles: Vec<(&'static str, PathBuf)>,
    pub proxies: ProxyEnv,
    /// The proxy variable that is set, for messages.
    pub proxy_variable: Option<String>,
    /// `A2C_TOKEN_HOSTS` entries.
    pub token_hosts: Vec<String>,
    /// `A2C_REGISTRY_TOKEN` (a secret: never shown).
    pub registry_token: Option<String>,
    /// `A2C_REGISTRY_AUTH` as (user, password) (a secret: never shown).
    pub registry_auth: Option<(String, String)>,
    pub docker_config: Option<PathBuf>,
    pub netrc: Option<PathBuf>,
    /// The variables of the families the registry kinds read (`Kind::environment`: a cloud's
    /// credentials, region and endpoint), each kind taking its own (never printed: they hold
    /// secrets).
    pub cloud: CloudVariables,
    /// The user's home directory, where a kind finds its cloud's shared files by default.
    pub home: Option<PathBuf>,
    /// Who hears of each retry (the CLI, under `-v`); nobody by default.
    pub observer: Option<std::sync::Arc<super::RetryObserver>>,
    /// Who hears of each redirect hop (the CLI, under `-v`); nobody by default.
    pub tracer: Option<std::sync::Arc<super::HopTracer>>,
}

/// What a session gives the network: whether the run is offline, the hosts reached over
/// plain HTTP, and the settings — or what is wrong with one of their variables, reported only
/// when a client is built (a run that never touches the network never fails on them).
#[derive(Clone, Debug)]
pub struct Network {
    pub offline: bool,
    pub plain_http: super::PlainHttp,
    /// The file of `a2c login`'s tokens (`None`: neither `XDG_CONFIG_HOME` nor `HOME` is set).
    pub logins: Option<PathBuf>,
    pub settings: Result<Settings, String>,
    /// The registry kinds' token exchanges (see [`super::exchange`]).
    pub exchanges: super::Exchanges,
    /// The client bound to no registry, built once and shared by every clone of this network
    /// (an object store's presigning asks for it once per bundle).
    pub unbound: Unbound,
    /// The registries the user named, as written — `--registry`, `A2C_REGISTRY`,
    /// `A2C_MIRRORS` — never those a committed marker or lock names: a kind whose clone-named
    /// location would choose where a credential goes sends it only to these.
    pub chosen: Vec<String>,
}

/// See [`Network::unbound_client`].
#[derive(Clone, Default)]
pub struct Unbound(std::sync::Arc<std::sync::Mutex<Option<std::sync::Arc<super::HttpClient>>>>);

impl std::fmt::Debug for Unbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Unbound { .. }")
    }
}

impl Network {
    /// The client bound to no registry (no credential goes anywhere with it), built on first
    /// use and shared by every clone of this network.
    pub fn unbound_client(&self) -> Result<std::sync::Arc<super::HttpClient>, HttpError> {
        let mut slot = crate::util::parallel::locked(&self.unbound.0);
        if let Some(client) = slot.as_ref() {
            return Ok(client.clone());
        }
        let client = self.client(Vec::new()).client()?;
        *slot = Some(client.clone());
        Ok(client)
    }

    /// A client bound to `bound` (the registries the user chose; see `Auth::load`), built on
    /// first use.
    pub fn client(&self, bound: Vec<url::Url>) -> super::LazyClient {
        super::LazyClient::new(self.clone(), bound)
    }

    /// The settings, or the error naming the malformed variable.
    pub fn settings(&self) -> Result<&Settings, HttpError> {
        self.settings.as_ref().map_err(|e| HttpError::Config(e.clone()))
    }
}

impl Default for Network {
    /// Online, no variable set: the defaults (for tests and library callers).
    fn default() -> Self {
        Self {
            offline: false,
            plain_http: Default::default(),
            logins: None,
            settings: Ok(Settings::defaults()),
            exchanges: Default::default(),
            unbound: Default::default(),
            chosen: Vec::new(),
        }
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Settings { .. }") // never print credentials
    }
}

impl Settings {
    /// Every setting at its default, no proxy, no credential, no file read.
    pub fn defaults() -> Self {
        use super::client::{
            DEFAULT_LOW_SPEED, DEFAULT_LOW_SPEED_TIME, DEFAULT_MAX_DOCUMENT, DEFAULT_RETRIES, DEFAULT_TIMEOUT,
        };
        Self {
            timeout: DEFAULT_TIMEOUT,
            retries: DEFAULT_RETRIES,
            low_speed: DEFAULT_LOW_SPEED,
            low_speed_time: DEFAULT_LOW_SPEED_TIME,
            max_document: DEFAULT_MAX_DOCUMENT,
            ca_bundles: Vec::new(),
            proxies: ProxyEnv::default(),
            proxy_variable: None,
            token_hosts: Vec::new(),
            registry_token: None,
            registry_auth: None,
            docker_config: None,
            netrc: None,
            cloud: CloudVariables::default(),
            home: None,
            observer: None,
            tracer: None,
        }
    }

    /// Reads them from the environment (the session's one reading), with the variables of
    /// `families` (a name ending in `_` stands for every variable it begins); a malformed value
    /// is an error naming its variable.
    pub fn from_env(families: &[&str]) -> Result<Self, String> {
        use super::client::{
            DEFAULT_LOW_SPEED, DEFAULT_LOW_SPEED_TIME, DEFAULT_MAX_DOCUMENT, DEFAULT_RETRIES, DEFAULT_TIMEOUT,
        };
        let number = |name: &'static str, default: u64| {
            crate::env::number(name)
                .map_err(|(name, value)| format!("{name}=`{value}` is not a whole number"))
                .map(|v| v.unwrap_or(default))
        };
        Ok(Self {
            timeout: number(crate::env::A2C_HTTP_TIMEOUT, DEFAULT_TIMEOUT)?.max(1),
            retries: number(crate::env::A2C_HTTP_RETRIES, DEFAULT_RETRIES)?,
            low_speed: number(crate::env::A2C_HTTP_LOW_SPEED, DEFAULT_LOW_SPEED)?,
            low_speed_time: number(crate::env::A2C_HTTP_LOW_SPEED_TIME, DEFAULT_LOW_SPEED_TIME)?,
            max_document: number(crate::env::A2C_MAX_DOCUMENT_BYTES, DEFAULT_MAX_DOCUMENT)?,
            ca_bundles: crate::env::ca_bundles(),
            proxies: ProxyEnv::from_env(),
            proxy_variable: crate::env::proxy_configured(),
            token_hosts: crate::env::token_hosts(),
            registry_token: crate::env::registry_token(),
            registry_auth: crate::env::registry_auth()?,
            docker_config: crate::env::docker_config(),
            netrc: crate::env::netrc_path(),
            cloud: CloudVariables {
                vars: crate::env::families(families),
            },
            home: crate::env::home(),
            observer: None,
            tracer: None,
        })
    }
}

/// The variables of the registry kinds' families as the session read them, sorted by name; each
/// kind reads its own ([`Self::family`]). Their `Debug` names the variables only.
#[derive(Clone, Default)]
pub struct CloudVariables {
    pub vars: Vec<(String, String)>,
}

impl CloudVariables {
    /// These variables, as a kind's tests give them.
    #[cfg(test)]
    pub fn of(pairs: &[(&str, &str)]) -> Self {
        let vars = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        CloudVariables { vars: vars.collect() }
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The variables of `families` (as [`Settings::from_env`] takes them).
    pub fn family(&self, families: &[&str]) -> CloudVariables {
        let vars = self
            .vars
            .iter()
            .filter(|(name, _)| crate::env::in_families(name, families));
        CloudVariables {
            vars: vars.cloned().collect(),
        }
    }

    /// The first of `names` that is set, and its value.
    pub fn first_of(&self, names: &[&'static str]) -> Option<(&'static str, &str)> {
        names.iter().find_map(|name| self.get(name).map(|value| (*name, value)))
    }
}

impl std::fmt::Debug for CloudVariables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.vars.iter().map(|(k, _)| k)).finish()
    }
}
