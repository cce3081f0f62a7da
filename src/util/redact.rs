//! Credentials never shown: a location's userinfo is masked in every message.

use url::Url;

/// `location` with any userinfo (`user:password@`, `token@`) replaced by `***@`, for
/// messages. The parsed URL decides what the userinfo is, so that every spelling the parser
/// accepts (`http:user:pw@host/`, `HTTP://…`, backslashes) is caught; text the parser rejects
/// loses everything between its scheme and the last `@` of its authority.
pub fn redact(location: &str) -> String {
    if let Ok(mut url) = Url::parse(location) {
        if url.username().is_empty() && url.password().is_none() {
            return url_text_unless_userinfo(location, &url);
        }
        if url.set_username("***").is_ok() && url.set_password(None).is_ok() {
            return url.to_string();
        }
    }
    textual_redact(location)
}

/// The original text when the parser found no userinfo, unless the text still holds an `@`
/// in what could be an authority (then the textual rule applies, to be safe).
fn url_text_unless_userinfo(location: &str, url: &Url) -> String {
    if url.has_host() || !location.contains('@') {
        return location.to_string();
    }
    textual_redact(location)
}

fn textual_redact(location: &str) -> String {
    let Some(colon) = location.find(':') else {
        return location.to_string();
    };
    let (scheme, rest) = location.split_at(colon + 1);
    let body = rest.trim_start_matches(['/', '\\']);
    let slashes = &rest[..rest.len() - body.len()];
    let end = body.find(['/', '?', '#']).unwrap_or(body.len());
    match body[..end].rfind('@') {
        Some(at) => format!("{scheme}{slashes}***@{}", &body[at + 1..]),
        None => location.to_string(),
    }
}

/// `url` for a message: a URL presigned for an object store (its query carries a signature:
/// S3's `X-Amz-Signature=…`, Google's `X-Goog-Signature=…`, an Azure SAS's `sig=…`) is shown
/// without its query, which is a
/// credential for as long as it is valid; any other URL as it is.
pub fn shown_url(url: &Url) -> String {
    let presigned = url.query_pairs().any(|(k, _)| {
        [
            "X-Amz-Signature",
            "X-Amz-Credential",
            "X-Goog-Signature",
            "X-Goog-Credential",
        ]
        .iter()
        .any(|name| k.eq_ignore_ascii_case(name))
            || k == "sig"
    });
    if !presigned {
        return url.to_string();
    }
    let mut shown = url.clone();
    shown.set_query(None);
    format!("{shown} (presigned)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_clouds_signed_urls_are_shown_without_their_signature() {
        for signed in [
            "https://b.s3.amazonaws.com/k?X-Amz-Credential=AK%2F1&X-Amz-Signature=abc",
            "https://storage.googleapis.com/b/k?X-Goog-Credential=a%40p&X-Goog-Signature=abc",
            "https://acct.blob.core.windows.net/c/k?sv=2021&sig=abc",
        ] {
            let shown = shown_url(&Url::parse(signed).unwrap());
            assert!(!shown.contains("abc") && shown.ends_with("(presigned)"), "{shown}");
        }
        let plain = Url::parse("https://host/k?v=1").unwrap();
        assert_eq!(shown_url(&plain), "https://host/k?v=1");
    }
}
