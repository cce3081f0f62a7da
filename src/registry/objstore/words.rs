//! What the object-store kinds share besides the registry and the connector: a store's errors
//! in a2c's words, and the checks of an endpoint and a key segment.

use url::Url;

use super::{Bucket, Endpoint};
use crate::registry::RegistryError;
use crate::registry::kind::Location as _;

/// A TLS failure talking to `endpoint`, said as a2c says every one, when `e` is one.
fn tls_failure<B: Bucket>(bucket: &B, e: &object_store::Error, endpoint: &str) -> Option<RegistryError> {
    let reason = crate::net::tls::tls_reason(e)?;
    Some(bucket.refused(
        format!("TLS failure talking to `{endpoint}`: {reason}"),
        Some(format!(
            "if the store uses a private CA, point {} (or SSL_CERT_FILE, or AWS_CA_BUNDLE) at a PEM file holding it",
            crate::env::A2C_CA_BUNDLE
        )),
    ))
}

/// A store's error in a2c's words, for any kind: a TLS failure talking to the endpoint as every
/// TLS failure is said; else the failed request in a line (its object named as `object`), with
/// a hint naming where the credentials came from (`credentials`, never a secret) and, when it is
/// no refusal of them, the endpoint as `endpoint.shown` says it.
pub(super) fn store_refusal<B: Bucket>(
    bucket: &B,
    e: &object_store::Error,
    object: Option<Url>,
    endpoint: Endpoint,
    credentials: String,
) -> RegistryError {
    if let Some(refused) = tls_failure(bucket, e, &endpoint.at) {
        return refused;
    }
    // A request to another host than the store's is the credentials' own (a metadata service,
    // Entra, STS): it is what failed, not the endpoint.
    let elsewhere = requested(&chain(e)).is_some_and(|u| !super::connector::is_store(&endpoint.hosts, &u));
    let hint = match e {
        _ if elsewhere => Some(format!(
            "a2c could not get the credentials from {credentials}: check that it answers from this machine, or name credentials in the environment instead"
        )),
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } => Some(format!(
            "the store refused the credentials from {credentials}: check them, and that they may read (and, to publish, write) `{}`",
            bucket.shown()
        )),
        object_store::Error::NotFound { .. } => None,
        _ => Some(format!(
            "check the endpoint ({}) and the credentials (from {credentials})",
            endpoint.shown
        )),
    };
    bucket.refused(one_line(e, object.as_ref(), elsewhere), hint)
}

/// Whether an endpoint URL may be used: `https://`, or plain `http://` on loopback only (a
/// session token travels in a header). `variable` names where it came from.
pub(in crate::registry) fn endpoint_allowed<B: Bucket>(
    bucket: &B,
    endpoint: &str,
    variable: &str,
) -> Result<Url, RegistryError> {
    let url =
        Url::parse(endpoint).map_err(|e| bucket.refused(format!("{variable} `{endpoint}` is not a URL: {e}"), None))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if crate::net::is_loopback(&url) => Ok(url),
        _ => Err(bucket.refused(
            format!("{variable} `{endpoint}` is not an https:// URL (plain HTTP is taken on loopback only)"),
            Some(format!("set {variable} to the store's https:// address")),
        )),
    }
}

/// An object store's error in a line: the request and the status it met when the store says
/// them (`GET \`s3://…\` answered HTTP 403 Forbidden`), else its own first line without the
/// request's duration (never the response body a store appends).
fn one_line(e: &object_store::Error, object: Option<&Url>, elsewhere: bool) -> String {
    let text = chain(e);
    // A credential's token asked of its endpoint (a metadata server, Entra, STS) failed.
    let token = if elsewhere || text.contains("token request") {
        "getting a token: "
    } else {
        ""
    };
    // What a2c's client said of a request it sent for object_store names the request itself.
    if let Some(said) = said_by_a2c(e) {
        return format!("{token}{said}");
    }
    let verb = verb_of(&text);
    let status = text
        .find("status code: ")
        .and_then(|i| text[i + "status code: ".len()..].split(':').next())
        .map(str::trim);
    let requested = requested(&text).map(|url| crate::util::redact::shown_url(&url));
    match (verb, status, object, requested) {
        (Some(verb), Some(status), Some(object), _) => format!("{token}{verb} `{object}` answered HTTP {status}"),
        (Some(verb), Some(status), None, Some(url)) => format!("{token}{verb} `{url}` answered HTTP {status}"),
        // No answer: what the connection met (its innermost cause).
        (Some(verb), None, _, Some(url)) if text.contains(" - ") => {
            let cause = text.split_once(" - ").map_or("", |(_, c)| c);
            let cause = cause.rsplit_once("): ").map_or(cause, |(_, c)| c);
            format!(
                "{token}{verb} `{url}` failed: {}",
                cause.lines().next().unwrap_or_default()
            )
        }
        _ => {
            let first = text.lines().next().unwrap_or_default();
            // object_store's own prefix (`Generic MicrosoftAzure error: `) says nothing to a user.
            let first = match first.split_once(" error: ") {
                Some((head, rest)) if head.starts_with("Generic ") => rest,
                _ => first,
            };
            let first = match first.find(" in ").zip(first.find(" - ")) {
                Some((a, b)) if a < b => format!("{}{}", &first[..a], &first[b..]),
                _ => first.to_string(),
            };
            format!("{token}{first}")
        }
    }
}

/// The words of a2c's own client in `e`'s causes (a request it sent, or would not send, for
/// object_store): already a2c's, naming the request.
fn said_by_a2c(e: &object_store::Error) -> Option<String> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<crate::net::HttpError>() || s.is::<super::connector::NotAsked>() {
            return Some(s.to_string());
        }
        source = s.source();
    }
    None
}

/// An error's text with its causes', each once.
fn chain(e: &object_store::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    text
}

/// The method object_store's line says it was performing.
fn verb_of(text: &str) -> Option<&'static str> {
    ["GET", "PUT", "HEAD", "DELETE", "POST"]
        .into_iter()
        .find(|v| text.contains(&format!("performing {v} ")))
}

/// The URL object_store's line names after the method, without its query (object_store names a
/// store's object by its key, a credential's request by its URL).
fn requested(text: &str) -> Option<Url> {
    let named = match verb_of(text) {
        Some(verb) => {
            let at = text.find(&format!("performing {verb} "))? + "performing ".len() + verb.len() + 1;
            text[at..].split_whitespace().next()?
        }
        // a2c's own words name it between backticks.
        None => text.split('`').find(|part| part.starts_with("http"))?,
    };
    let mut url = Url::parse(named).ok()?;
    url.set_query(None);
    Some(url)
}

/// The path of the object an error names, when it names one (`NotFound`, `PermissionDenied`,
/// …): for [`one_line`].
pub(super) fn object_of(e: &object_store::Error) -> Option<&str> {
    match e {
        object_store::Error::NotFound { path, .. }
        | object_store::Error::PermissionDenied { path, .. }
        | object_store::Error::Unauthenticated { path, .. }
        | object_store::Error::AlreadyExists { path, .. }
        | object_store::Error::Precondition { path, .. } => Some(path),
        _ => None,
    }
}

/// One plain key segment of a location's path, percent-decoded: no `.`, `..`, separators,
/// query or escape characters once decoded.
pub(in crate::registry) fn plain_segment(raw: &str) -> Result<String, String> {
    let segment = percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| format!("the key segment `{raw}` is not UTF-8 once decoded"))?;
    // A `?`, `#`, `%` or `\\` once decoded would read back as another URL or key.
    let special = |c: char| matches!(c, '/' | '?' | '#' | '%' | '\\') || c.is_control();
    if segment == "." || segment == ".." || segment.contains(special) {
        return Err(format!("the key segment `{raw}` is not a plain name"));
    }
    Ok(segment.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic(store: &'static str, text: &str) -> object_store::Error {
        object_store::Error::Generic {
            store,
            source: text.to_string().into(),
        }
    }

    #[test]
    fn a_store_s_error_reads_as_the_request_and_its_answer() {
        let redirected = generic(
            "GCS",
            "Error performing GET http://127.0.0.1:9/methods/a2c%2Findex%2Fesys%2Fa2c.json?alt=media in 2ms - Server returned non-2xx status code: 307 Temporary Redirect: ",
        );
        assert_eq!(
            one_line(&redirected, None, false),
            "GET `http://127.0.0.1:9/methods/a2c%2Findex%2Fesys%2Fa2c.json` answered HTTP 307 Temporary Redirect"
        );
        let token = generic(
            "MicrosoftAzure",
            "Error performing token request: Error performing GET http://169.254.169.254/metadata/identity/oauth2/token?api-version=2019-08-01&resource=x in 1ms - Server returned non-2xx status code: 403 Forbidden: denied",
        );
        assert_eq!(
            one_line(&token, None, false),
            "getting a token: GET `http://169.254.169.254/metadata/identity/oauth2/token` answered HTTP 403 Forbidden"
        );
        let unanswered = generic(
            "S3",
            "Error performing PUT http://127.0.0.1:9/latest/api/token - HTTP error: error sending request: client error (Connect): tcp connect error: deadline has elapsed",
        );
        assert_eq!(
            one_line(&unanswered, None, false),
            "PUT `http://127.0.0.1:9/latest/api/token` failed: tcp connect error: deadline has elapsed"
        );
        let other = generic("MicrosoftAzure", "Error decoding the user delegation key: bad XML");
        assert_eq!(
            one_line(&other, None, false),
            "Error decoding the user delegation key: bad XML"
        );
    }
}
