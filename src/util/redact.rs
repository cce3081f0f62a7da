//! Credentials never shown: one redaction for every URL a2c prints, and the scrub every printed
//! line and document goes through.
//!
//! A URL is shown without its userinfo (`user:password@`, `token@` become `***@`) and, when its
//! query carries a credential — a parameter named for a signature, a credential, a token, a
//! secret, a password or a key, or a SAS's `sig` — without its query, marked `(signed)`: a
//! presigned or SAS URL is a credential for as long as it is valid. The rule names no cloud: any
//! signed URL, from any store, reads the same.

use std::borrow::Cow;

use url::Url;

/// The words that make a query parameter a credential (compared lowercase, as part of its name).
const CREDENTIAL_WORDS: [&str; 7] = [
    "signature",
    "credential",
    "token",
    "secret",
    "password",
    "passwd",
    "key",
];

/// The parameters that are a credential by their whole name (a SAS's signature).
const CREDENTIAL_NAMES: [&str; 2] = ["sig", "code"];

/// How a signed URL is marked once its query is left off.
pub const SIGNED: &str = "(signed)";

/// The shortest environment value [`scrub`] masks: shorter ones are no credential a cloud or a
/// registry issues, and would mask ordinary words.
pub const SHORTEST_SECRET: usize = 8;

/// `location` as a message shows it: userinfo masked, a credential-bearing query left off
/// ([`shown_url`]). The parsed URL decides what the userinfo is, so that every spelling the
/// parser accepts (`http:user:pw@host/`, `HTTP://…`, backslashes) is caught; text the parser
/// rejects loses everything between its scheme and the last `@` of its authority.
pub fn redact(location: &str) -> String {
    match Url::parse(location) {
        Ok(url) if url.has_host() || !location.contains('@') => {
            if !has_userinfo(&url) && !signed(&url) {
                return location.to_string();
            }
            shown_url(&url)
        }
        _ => textual_redact(location),
    }
}

/// `url` for a message: userinfo masked, and a query that carries a credential left off (the
/// URL then ends in ` (signed)`); any other URL as it is.
pub fn shown_url(url: &Url) -> String {
    let mut shown = url.clone();
    if has_userinfo(url) && (shown.set_username("***").is_err() || shown.set_password(None).is_err()) {
        return textual_redact(url.as_str());
    }
    if !signed(url) {
        return shown.to_string();
    }
    shown.set_query(None);
    format!("{shown} {SIGNED}")
}

fn has_userinfo(url: &Url) -> bool {
    !url.username().is_empty() || url.password().is_some()
}

/// Whether `url`'s query carries a credential.
pub fn signed(url: &Url) -> bool {
    url.query_pairs().any(|(name, _)| carries_credential(&name))
}

fn carries_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    CREDENTIAL_NAMES.contains(&name.as_str()) || CREDENTIAL_WORDS.iter().any(|w| name.contains(w))
}

fn textual_redact(location: &str) -> String {
    let Some(colon) = location.find(':') else {
        return location.to_string();
    };
    let (scheme, rest) = location.split_at(colon + 1);
    let body = rest.trim_start_matches(['/', '\\']);
    let slashes = &rest[..rest.len() - body.len()];
    let end = body.find(['/', '?', '#']).unwrap_or(body.len());
    let text = match body[..end].rfind('@') {
        Some(at) => format!("{scheme}{slashes}***@{}", &body[at + 1..]),
        None => location.to_string(),
    };
    // A query the parser could not read is left off whole when it may hold a credential.
    match text.split_once('?') {
        Some((head, query))
            if query
                .split('&')
                .any(|p| carries_credential(p.split('=').next().unwrap_or(p))) =>
        {
            format!("{head} {SIGNED}")
        }
        _ => text,
    }
}

/// `text` as a2c prints it: every URL in it through [`redact`], and every value of `secrets` (the
/// secret variables' values, [`SHORTEST_SECRET`] characters or more) replaced by `***`. The
/// backstop under every line and document the CLI prints: a message that named a signed URL or
/// a secret by mistake still shows neither.
pub fn scrub<'a>(text: &'a str, secrets: &[String]) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    if text.contains("://") {
        out = Cow::Owned(scrub_urls(text));
    }
    for secret in secrets.iter().filter(|s| s.len() >= SHORTEST_SECRET) {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), "***"));
        }
    }
    out
}

/// Every `scheme://…` run of `text` (up to a space, a quote, a backtick or an angle bracket)
/// that parses as a URL through [`shown_url`].
fn scrub_urls(text: &str) -> String {
    let ends = |c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '<' | '>');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(sep) = rest.find("://") {
        // The scheme's first byte: just after the last character that cannot be in a scheme
        // (whatever its width: text around a URL may be any UTF-8).
        let start = rest[..sep]
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let end = rest[sep..].find(ends).map_or(rest.len(), |i| sep + i);
        out.push_str(&rest[..start]);
        let url = &rest[start..end];
        // Only what parses as a URL is one: a pattern in a hint (`http://user:password@host:port`)
        // stays as written.
        match Url::parse(url) {
            Ok(parsed) if start < sep && (has_userinfo(&parsed) || signed(&parsed)) => {
                out.push_str(&shown_url(&parsed));
            }
            _ => out.push_str(url),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_urls_are_shown_without_their_query() {
        for signed in [
            "https://b.store.example/k?X-Vendor-Credential=AK%2F1&X-Vendor-Signature=abc",
            "https://b.store.example/k?X-Vendor-Security-Token=abc",
            "https://store.example/c/k?sv=2021&sp=r&se=2099&sig=abc",
            "https://host/k?access_token=abc",
            "https://host/k?SessionToken=abc",
            "https://host/k?key=abc",
        ] {
            let shown = shown_url(&Url::parse(signed).unwrap());
            assert!(!shown.contains("abc") && shown.ends_with(" (signed)"), "{shown}");
            assert_eq!(redact(signed), shown);
        }
        let plain = Url::parse("https://host/k?v=1&digest=sha256:1").unwrap();
        assert_eq!(shown_url(&plain), "https://host/k?v=1&digest=sha256:1");
    }

    #[test]
    fn userinfo_is_masked_in_every_spelling() {
        assert_eq!(redact("https://u:secret@h/x"), "https://***@h/x");
        assert_eq!(redact("https://u:pw@h/x?sig=1"), "https://***@h/x (signed)");
        assert!(!redact("https://u:secret@/tmp/x").contains("secret"));
        assert_eq!(redact("https://e.org/a@b"), "https://e.org/a@b");
        assert_eq!(redact("not a url"), "not a url");
    }

    #[test]
    fn the_scrub_redacts_every_url_in_a_text_and_every_secret() {
        let text = "GET `https://a:b@h/k?X-Amz-Signature=s1` redirected to \"http://x/y?sig=s2\" (https://ok/z)";
        assert_eq!(
            scrub(text, &[]),
            "GET `https://***@h/k (signed)` redirected to \"http://x/y (signed)\" (https://ok/z)"
        );
        assert_eq!(
            scrub("at `http://127.0.0.1:80`", &[]),
            "at `http://127.0.0.1:80`",
            "as written"
        );
        let secrets = vec!["s3cr3t-value".to_string(), "short".to_string()];
        assert_eq!(scrub("key s3cr3t-value, short", &secrets), "key ***, short");
        assert!(matches!(scrub("nothing here", &secrets), Cow::Borrowed(_)));
        // Text of any width around a URL (a path or a message in another language).
        assert_eq!(scrub("café→https://u:p@h/x", &[]), "café→https://***@h/x");
        assert_eq!(scrub("→://x", &[]), "→://x");
        let pattern = "set HTTP_PROXY (http://user:password@host:port)";
        assert_eq!(scrub(pattern, &[]), pattern);
    }
}
