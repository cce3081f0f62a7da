//! TLS: the trusted roots (webpki's, plus `A2C_CA_BUNDLE` / `SSL_CERT_FILE`), the crypto
//! provider, and telling a TLS failure apart in reqwest's error chain.

use super::HttpError;

pub(super) fn extra_roots(
    ca_bundles: &[(&'static str, std::path::PathBuf)],
) -> Result<Vec<reqwest::Certificate>, HttpError> {
    let mut roots: Vec<reqwest::Certificate> = webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .filter_map(|der| reqwest::Certificate::from_der(der.as_ref()).ok())
        .collect();
    for (var, path) in ca_bundles {
        let pem = fs_err::read(path).map_err(|e| HttpError::Config(format!("{var}: {e}")))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
            HttpError::Config(format!(
                "{var}: `{}` is not a PEM certificate bundle: {e}",
                path.display()
            ))
        })?;
        if certs.is_empty() {
            return Err(HttpError::Config(format!(
                "{var}: `{}` holds no certificate",
                path.display()
            )));
        }
        roots.extend(certs);
    }
    Ok(roots)
}

/// Installs ring as the process's rustls crypto provider (idempotent).
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

pub(super) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    parts.join(": ")
}

/// The innermost cause, which is what a user can act on.
pub(super) fn short_reason(chain: &str) -> String {
    chain.rsplit(": ").next().unwrap_or(chain).to_string()
}

/// The first error of type `T` in `e`'s chain, looking inside `io::Error`s too (hyper wraps
/// rustls' errors in one): errors are told apart by type, not by their text.
pub(super) fn find_in_chain<'a, T: std::error::Error + 'static>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut source = Some(e);
    while let Some(s) = source {
        if let Some(t) = s.downcast_ref::<T>() {
            return Some(t);
        }
        // An `io::Error`'s `source()` skips the error it wraps (which may wrap another):
        // descend into it instead.
        source = match s.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => s.source(),
        };
    }
    None
}

/// The TLS error in `e`'s chain, if any (a request another crate sent through a2c's client too:
/// an object store's).
pub fn tls_reason(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    if let Some(super::HttpError::Tls { reason, .. }) = find_in_chain::<super::HttpError>(e) {
        return Some(reason.clone());
    }
    find_in_chain::<rustls::Error>(e).map(|t| t.to_string())
}
