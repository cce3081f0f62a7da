//! The hook through which a registry kind answers a `401` that the standard challenges do not
//! (a `WWW-Authenticate: Bearer` token service, a Basic challenge): an API that takes no Basic
//! credentials but a token its own endpoint gives for them. `net` names no kind: each kind
//! brings its [`TokenExchange`], the session hands them to the network ([`Exchanges`]), and the
//! client's one request loop asks them in turn (`HttpClient::execute`).

use std::sync::Arc;

use url::Url;

/// A registry kind's token exchange: where the Basic credentials the user bound to a host are
/// traded for a token, and how the answer holds it.
pub trait TokenExchange: Send + Sync {
    /// The endpoint where the credentials bound to `url`'s host are exchanged for a token, when
    /// `url` (refused with a `401`) belongs to this kind's API. It must be on `url`'s origin:
    /// the client refuses any other.
    fn endpoint(&self, url: &Url) -> Option<Url>;

    /// The token in the endpoint's answer (at most [`super::client::MAX_TOKEN`] bytes), if
    /// it holds one.
    fn token(&self, body: &[u8]) -> Option<String>;
}

/// The token exchanges of every registry kind, as the session gives them to the network.
#[derive(Clone, Default)]
pub struct Exchanges(pub Vec<Arc<dyn TokenExchange>>);

impl std::fmt::Debug for Exchanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Exchanges({})", self.0.len())
    }
}

impl Exchanges {
    /// The first exchange that claims `url`, with its endpoint on `url`'s origin.
    pub fn for_url(&self, url: &Url) -> Option<(&dyn TokenExchange, Url)> {
        self.0.iter().find_map(|x| {
            let endpoint = x.endpoint(url).filter(|e| super::same_origin(e, url))?;
            Some((x.as_ref(), endpoint))
        })
    }
}
