//! The answers to a challenge a request may meet (a `401`), each given once per request by
//! `HttpClient::execute`: a `WWW-Authenticate: Bearer` token service (the registry token
//! protocol), a registry kind's [`super::TokenExchange`], docker's credential helpers. The
//! user's credentials go only where the user bound them, never in clear text, and a token
//! they obtained travels as they do.

use url::Url;

use super::HttpError;
use super::auth::{Challenge, DockerCredential, run_helper};
use super::client::{HttpClient, MAX_TOKEN, Outgoing, Payload};
use super::request::HopCredential;
use super::retry::Failure;

impl HttpClient {
    /// The credential docker's credential helper for `url`'s host gives (run at most once per
    /// host), when a registry asks for credentials the user bound no other way.
    pub(super) fn helper_credential(&self, url: &Url) -> Option<DockerCredential> {
        if !self.auth.may_carry(url) {
            return None;
        }
        let name = self.auth.helper_for(url)?;
        let entry = super::credentials::host_entry(url);
        if let Some(known) = crate::util::parallel::locked(&self.helped).get(&entry) {
            return known.clone();
        }
        let got = run_helper(name, &entry);
        crate::util::parallel::locked(&self.helped).insert(entry, got.clone());
        got
    }

    /// Asks the token endpoint of `challenge` for a token for `url`'s host, and keeps it. The
    /// user's credentials for the registry's host go along (docker's `identitytoken` as an
    /// OAuth2 refresh token, else a user name and password), never in clear text.
    pub(super) async fn fetch_token(&self, url: &Url, challenge: &Challenge) -> Result<(), Failure> {
        let bad = |reason: String| {
            Failure::fatal(HttpError::Token {
                url: url.to_string(),
                reason,
            })
        };
        let realm = Url::parse(&challenge.realm)
            .ok()
            .filter(|r| matches!(r.scheme(), "http" | "https"))
            .ok_or_else(|| {
                bad(format!(
                    "its token endpoint `{}` is not an HTTP(S) URL",
                    challenge.realm
                ))
            })?;
        // The registry's credentials go to its own host's token endpoint, or to one on a host
        // the user named; never to a realm another host chose.
        let own_realm = realm.host_str().map(str::to_ascii_lowercase) == url.host_str().map(str::to_ascii_lowercase)
            || self.auth.names_host(&realm);
        let secure = own_realm && self.auth.may_carry(&realm) && self.auth.may_carry(url);
        let (mut identity, mut basic) = match secure {
            true => (
                self.auth.identity_for(url).map(str::to_string),
                self.auth.basic_for(url).map(|(u, p)| (u.to_string(), p.to_string())),
            ),
            false => (None, None),
        };
        if secure && identity.is_none() && basic.is_none() {
            match self.helper_credential(url) {
                Some(DockerCredential::Identity(t)) => identity = Some(t),
                Some(DockerCredential::Basic(u, p)) => basic = Some((u, p)),
                None => {}
            }
        }
        let scopes: Vec<&str> = challenge
            .scope
            .as_deref()
            .map(|s| s.split(' ').filter(|s| !s.is_empty()).collect())
            .unwrap_or_default();
        let with_credentials = identity.is_some() || basic.is_some();
        let (response, _) = if let Some(refresh) = &identity {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "refresh_token")
                .append_pair("refresh_token", refresh)
                .append_pair("client_id", "a2c");
            if let Some(service) = &challenge.service {
                form.append_pair("service", service);
            }
            if !scopes.is_empty() {
                form.append_pair("scope", &scopes.join(" "));
            }
            let form = Payload::Bytes(form.finish().into_bytes());
            let headers = [("Content-Type", "application/x-www-form-urlencoded".to_string())];
            let out = Outgoing {
                method: &reqwest::Method::POST,
                headers: &headers,
                body: Some(&form),
            };
            self.follow(&realm, out, HopCredential::InBody).await?
        } else {
            let mut query = realm.clone();
            {
                let mut pairs = query.query_pairs_mut();
                if let Some(service) = &challenge.service {
                    pairs.append_pair("service", service);
                }
                for scope in &scopes {
                    pairs.append_pair("scope", scope);
                }
            }
            let sign = match &basic {
                Some((user, password)) => HopCredential::Basic(user, password),
                None => HopCredential::Anonymous,
            };
            self.follow(&query, Outgoing::get(&[]), sign).await?
        };
        let withheld = !own_realm && self.auth.has_credential_for(url);
        if withheld && matches!(response.status().as_u16(), 401 | 403) {
            return Err(Failure::fatal(HttpError::TokenWithheld {
                url: url.to_string(),
                realm: realm.to_string(),
            }));
        }
        if !response.status().is_success() {
            return Err(Failure::fatal(HttpError::Status {
                url: realm.to_string(),
                status: response.status().as_u16(),
                authorized: with_credentials,
                challenge: None,
            }));
        }
        let body = self.read_capped(response, &realm, self.max_document).await?;
        let doc: serde_json::Value =
            serde_json::from_slice(&body).map_err(|_| bad("its token endpoint did not answer JSON".into()))?;
        let token = ["token", "access_token"]
            .iter()
            .find_map(|k| doc[k].as_str().filter(|t| !t.is_empty()))
            .ok_or_else(|| bad("its token endpoint gave no token".into()))?;
        if token.len() > MAX_TOKEN {
            return Err(bad(format!(
                "its token endpoint gave a token of {} bytes, over the {MAX_TOKEN} a2c sends in a header",
                token.len()
            )));
        }
        crate::util::parallel::locked(&self.bearer).insert(
            super::credentials::host_entry(url),
            (token.to_string(), with_credentials),
        );
        Ok(())
    }

    /// Exchanges the user's credentials for `url`'s host for a token at `endpoint` (on the same
    /// origin) as `exchange` reads it, and keeps it for the host.
    pub(super) async fn exchange_token(
        &self,
        url: &Url,
        endpoint: &Url,
        exchange: &dyn super::TokenExchange,
    ) -> Result<(), Failure> {
        let Some((user, password)) = self.auth.basic_for(url) else {
            return Ok(());
        };
        let (response, _) = self
            .follow(endpoint, Outgoing::get(&[]), HopCredential::Basic(user, password))
            .await?;
        if !response.status().is_success() {
            return Err(Failure::fatal(HttpError::Status {
                url: endpoint.to_string(),
                status: response.status().as_u16(),
                authorized: true,
                challenge: None,
            }));
        }
        // A token is a line; an answer longer than any token is refused unread.
        let body = self.read_capped(response, endpoint, MAX_TOKEN as u64).await?;
        let Some(token) = exchange.token(&body).filter(|t| !t.is_empty() && t.len() <= MAX_TOKEN) else {
            return Err(Failure::fatal(HttpError::Token {
                url: url.to_string(),
                reason: format!("its token endpoint `{endpoint}` gave no token"),
            }));
        };
        crate::util::parallel::locked(&self.bearer).insert(super::credentials::host_entry(url), (token, true));
        Ok(())
    }
}
