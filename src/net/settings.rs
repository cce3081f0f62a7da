//! Everything the network takes from the environment, read once, in one place
//! ([`Settings::from_env`], through `env.rs`), and handed to the client it builds: timeouts,
//! retries, the low-speed check, the document cap, extra CA bundles, proxies, and the
//! credentials the user bound to hosts. Nothing below it reads the environment.

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
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Settings { .. }") // never print credentials
    }
}

impl Settings {
    /// Reads them from the environment; a malformed value is an error naming its variable.
    pub fn from_env() -> Result<Self, HttpError> {
        use super::client::{
            DEFAULT_LOW_SPEED, DEFAULT_LOW_SPEED_TIME, DEFAULT_MAX_DOCUMENT, DEFAULT_RETRIES, DEFAULT_TIMEOUT,
        };
        let number = |name: &'static str, default: u64| {
            crate::env::number(name)
                .map_err(|(name, value)| HttpError::Config(format!("{name}=`{value}` is not a whole number")))
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
            registry_auth: crate::env::registry_auth().map_err(HttpError::Config)?,
            docker_config: crate::env::docker_config(),
            netrc: crate::env::netrc_path(),
        })
    }
}
