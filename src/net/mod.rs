//! The network: one HTTP(S) client (reqwest on rustls with ring), split by concern —
//! `client` (the client and its GET vocabulary), `request` (the one request loop: redirects hop
//! by hop, credentials, challenges, bounded bodies), `download` (resumable downloads), `lazy`
//! (the client built on first use), `challenge` (the answers to a `401`), `exchange` (a registry kind's token
//! exchange), `auth` (credentials by host, the token
//! protocol), `retry` (one retry loop, backoff), `tls` (roots, errors), `errors` (what failed
//! and the hint), `proxy` (the proxy variables, `NO_PROXY`), `credentials` (`a2c login`'s
//! token file). Async stays inside: callers use blocking methods.

pub mod auth;
pub mod challenge;
pub mod client;
pub mod credentials;
pub mod download;
pub mod errors;
pub mod exchange;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
pub mod lazy;
pub mod plain_http;
pub mod proxy;
pub mod relay;
pub mod request;
pub mod retry;
pub mod settings;
pub mod tls;

pub use auth::{Bearer, HostKey, host_key, is_loopback, same_origin};
pub use client::{
    DEFAULT_LOW_SPEED, DEFAULT_LOW_SPEED_TIME, DEFAULT_MAX_DOCUMENT, DEFAULT_RETRIES, DEFAULT_TIMEOUT, Document,
    HttpClient, Payload, Reply,
};
pub use errors::HttpError;
pub use exchange::{Exchanges, TokenExchange};
pub use lazy::LazyClient;
pub use plain_http::PlainHttp;
pub use relay::Bounded;
pub use retry::{HopTracer, RetryObserver};
pub use settings::{Network, Settings};
pub use tls::install_crypto_provider;
