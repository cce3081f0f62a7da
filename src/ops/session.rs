//! The session: everything one run of `a2c` takes from its flags and its environment, read once
//! (here, through `env.rs`) and passed down to the operations — the network's settings and
//! credentials, the hosts reached over plain HTTP, whether the run is offline, who hears of
//! retries, the store's lock timeout, durability, size cap, link mode and cache directory, the
//! extraction limits, and the registries and mirrors the environment names. Nothing below
//! `ops` reads the environment; a long-lived caller (an agent, a test) builds as many sessions
//! as it likes, each with its own values.
//!
//! A malformed variable is kept as its message and reported by the operation that needs the
//! value, exactly as before there was a session: `a2c list` never fails on `A2C_HTTP_TIMEOUT`.

use std::sync::Arc;

use super::OpsError;
use crate::net::PlainHttp;
use crate::net::{HopTracer, RetryObserver};

/// What the command line adds to the environment.
#[derive(Default)]
pub struct Flags {
    /// `--offline` (or `--frozen`): no HTTP client may start.
    pub offline: bool,
    /// `--plain-http`: every `oci://` registry over plain HTTP.
    pub plain_http: bool,
    /// Who hears of each retry (the CLI under `-v`).
    pub retry_observer: Option<Arc<RetryObserver>>,
    /// Who hears of each redirect hop (the CLI under `-v`).
    pub hop_tracer: Option<Arc<HopTracer>>,
    /// The command's `--registry`, which the user named (credentials may be bound to it).
    pub registry: Option<String>,
}

/// One run's settings (see the module documentation).
#[derive(Clone, Debug)]
pub struct Session {
    /// What the network is given: offline, plain-HTTP hosts, settings and credentials.
    pub network: crate::net::Network,
    /// What the store is given: lock timeout, fsync, bundle size cap, link mode, cache.
    pub store: crate::store::Settings,
    /// The extraction and packing limits (`A2C_MAX_UNPACKED_BYTES`, `A2C_MAX_ENTRIES`).
    pub limits: Result<crate::archive::Limits, String>,
    /// `A2C_REGISTRY`: the registry when `--registry` is not given.
    pub registry: Option<String>,
    /// `A2C_MIRRORS`: registries tried for a locked bundle after the configured ones.
    pub mirrors: Vec<String>,
    /// When the run began: a workspace snapshot it writes records no path changed since (less
    /// the racy margin).
    pub began: std::time::SystemTime,
    /// Where the agent runtimes' user-level files are (`a2c agents mcp-config --write`).
    pub user_dirs: crate::agents::mcp_config::UserDirs,
    /// Where a2c's own releases are and the key that signs them (`a2c self update`).
    pub release: super::self_update::ReleaseSettings,
}

impl Default for Session {
    /// Online, every default, no variable read (tests and library callers).
    fn default() -> Self {
        Self {
            network: crate::net::Network {
                exchanges: crate::registry::token_exchanges(),
                ..Default::default()
            },
            store: Default::default(),
            limits: Ok(Default::default()),
            registry: None,
            mirrors: Vec::new(),
            began: std::time::SystemTime::now(),
            user_dirs: Default::default(),
            release: Default::default(),
        }
    }
}

impl Session {
    /// The session of a run: `flags` over the environment, read here once.
    pub fn from_env(flags: Flags) -> Self {
        let mut plain = crate::env::oci_plain_http();
        if flags.plain_http {
            plain.push("*".into());
        }
        let (registry, mirrors) = (crate::env::registry(), crate::env::mirrors());
        let settings = crate::net::Settings::from_env(&crate::registry::environment()).map(|mut s| {
            s.observer = flags.retry_observer;
            s.tracer = flags.hop_tracer;
            s
        });
        Self {
            network: crate::net::Network {
                offline: flags.offline,
                plain_http: PlainHttp(plain),
                logins: crate::env::credentials_path(),
                settings,
                exchanges: crate::registry::token_exchanges(),
                unbound: Default::default(),
                chosen: flags
                    .registry
                    .into_iter()
                    .chain(registry.clone())
                    .chain(mirrors.iter().cloned())
                    .collect(),
            },
            store: crate::store::Settings::from_env(),
            limits: crate::archive::Limits::from_env(),
            registry,
            mirrors,
            began: std::time::SystemTime::now(),
            user_dirs: crate::agents::mcp_config::UserDirs {
                home: crate::env::home(),
                vscode_user: crate::env::vscode_user_dir(),
            },
            release: super::self_update::ReleaseSettings {
                base: crate::env::text(crate::env::A2C_INSTALL_BASE),
                key: crate::env::text(crate::env::A2C_RELEASE_KEY),
            },
        }
    }

    /// Whether the run is offline (`--offline`, `--frozen`).
    pub fn offline(&self) -> bool {
        self.network.offline
    }

    /// The extraction limits, or the error naming the malformed variable.
    pub fn limits(&self) -> Result<crate::archive::Limits, OpsError> {
        self.limits.clone().map_err(OpsError::Config)
    }

    /// The link mode the environment chose, or the error naming it.
    pub fn link_mode(&self) -> Result<Option<crate::store::trees::LinkMode>, OpsError> {
        self.store.link_mode.clone().map_err(OpsError::Config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sessions in one process keep their own values: an offline one refuses the network
    /// while an online one builds its client, and the plain-HTTP opt-in of one is not the other's.
    #[test]
    fn sessions_are_values_not_process_globals() {
        let offline = Session {
            network: crate::net::Network {
                offline: true,
                plain_http: PlainHttp(vec!["*".into()]),
                ..Default::default()
            },
            ..Default::default()
        };
        let online = Session::default();
        assert!(matches!(
            offline.network.client(Vec::new()).client(),
            Err(crate::net::HttpError::Offline)
        ));
        assert!(online.network.client(Vec::new()).client().is_ok());
        let url = url::Url::parse("oci://reg.lan/esys/a2c").unwrap();
        let scheme = |s: &Session| {
            crate::registry::oci::OciLocation::parse(&url)
                .unwrap()
                .reached_with(&s.network.plain_http)
                .api
                .scheme()
                .to_string()
        };
        assert_eq!(scheme(&offline), "http");
        assert_eq!(scheme(&online), "https");
    }

    /// A malformed variable is the error of the operation that needs it, not of the session.
    #[test]
    fn a_malformed_setting_fails_only_where_it_is_used() {
        let session = Session {
            network: crate::net::Network {
                settings: Err("A2C_HTTP_TIMEOUT=`soon` is not a whole number".into()),
                ..Default::default()
            },
            limits: Err("A2C_MAX_ENTRIES=`many` is not a whole number of bytes/entries".into()),
            ..Default::default()
        };
        let err = session.network.client(Vec::new()).client().unwrap_err().to_string();
        assert!(err.contains("A2C_HTTP_TIMEOUT=`soon`"), "{err}");
        assert!(session.limits().unwrap_err().to_string().contains("A2C_MAX_ENTRIES"));
        assert!(session.link_mode().is_ok());
    }
}
