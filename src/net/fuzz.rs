//! The fuzz targets' bodies for what the network layer reads (feature `fuzzing`):
//! `WWW-Authenticate` challenges, `NO_PROXY` lists and netrc files. Each asserts what must
//! hold, not only "no panic"; `src/fuzzing/` holds the others.

use url::Url;

use super::auth::{Auth, parse_challenge};
use super::proxy::NoProxy;

/// A `WWW-Authenticate` value: a Bearer challenge read, written back with quoted values and
/// read again, is the same challenge (every value survives commas, quotes and backslashes).
pub fn challenge(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Some(c) = parse_challenge(text) else { return };
    let quote = |v: &str| format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""));
    let mut again = format!("Bearer realm={}", quote(&c.realm));
    for (key, value) in [("service", &c.service), ("scope", &c.scope)] {
        if let Some(v) = value {
            again.push_str(&format!(",{key}={}", quote(v)));
        }
    }
    assert_eq!(parse_challenge(&again).as_ref(), Some(&c), "{again:?}");
}

/// A `NO_PROXY` list: read the same in any case; `*` bypasses the proxy for every host; a
/// list of one domain bypasses it for that domain and its subdomains (on its port, when it
/// names one), never for a longer name that merely ends the same.
pub fn no_proxy(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let list = NoProxy::parse(text);
    assert_eq!(NoProxy::parse(&text.to_ascii_uppercase()), list);
    let url = |s: &str| Url::parse(s).ok();
    if text.split(',').any(|e| e.trim() == "*") {
        for u in ["https://example.org/", "http://10.1.2.3:8080/", "https://[::1]/"] {
            assert!(list.matches(&Url::parse(u).expect("a URL")), "{u}");
        }
    }
    let entry = text.trim().to_ascii_lowercase();
    let (host, port) = match entry.rsplit_once(':') {
        Some((h, p)) if p.bytes().all(|b| b.is_ascii_digit()) => match p.parse::<u16>() {
            Ok(p) if p > 0 => (h, Some(p)),
            _ => return,
        },
        _ => (entry.as_str(), None),
    };
    let name = host.trim_start_matches("*.").trim_start_matches('.');
    let domain = !name.is_empty()
        && name
            .split('.')
            .all(|l| !l.is_empty() && l.len() < 64 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        && name.bytes().any(|b| b.is_ascii_alphabetic())
        && name.parse::<ipnet::IpNet>().is_err();
    let Some(own) = url(&format!("https://{name}/")).filter(|_| domain && !entry.contains(',')) else {
        return;
    };
    // Each domain URL on the entry's port (443 when it names none).
    let at = |host: &str| {
        url(&match port {
            Some(p) => format!("https://{host}:{p}/"),
            None => format!("https://{host}/"),
        })
    };
    let (Some(own_port), Some(sub), Some(longer)) = (at(name), at(&format!("sub.{name}")), at(&format!("x{name}")))
    else {
        return;
    };
    assert!(list.matches(&own_port), "{entry} does not bypass {own_port}");
    assert!(list.matches(&sub), "{entry} does not bypass {sub}");
    assert!(!list.matches(&longer), "{entry} bypasses {longer}");
    if let Some(p) = port {
        let other = if p == 443 { 8443 } else { 443 };
        let mut elsewhere = own.clone();
        let _ = elsewhere.set_port(Some(other));
        assert!(!list.matches(&elsewhere), "{entry} bypasses {elsewhere}");
    }
}

/// A netrc file: its credentials go only where the user bound them — a `machine` entry to its
/// own host, the `default` entry to the hosts the user named — and never over plain HTTP
/// across a network, whatever the file holds.
pub fn netrc(data: &[u8]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("netrc");
    std::fs::write(&path, data).expect("the netrc file");
    let mut settings = super::Settings::defaults();
    settings.netrc = Some(path);
    let named = Url::parse("https://named.example/").expect("a URL");
    let Ok(auth) = Auth::load(std::slice::from_ref(&named), &settings, None) else {
        return;
    };
    let text = String::from_utf8_lossy(data).to_ascii_lowercase();
    let elsewhere = Url::parse("https://elsewhere.invalid/").expect("a URL");
    if !text.contains("elsewhere") {
        assert!(
            !auth.has_credential_for(&elsewhere),
            "a credential goes to a host the file never names"
        );
    }
    for plain in ["http://named.example/", "http://elsewhere.invalid/", "http://10.0.0.1/"] {
        let u = Url::parse(plain).expect("a URL");
        assert!(
            !auth.has_credential_for(&u),
            "a credential goes in clear text to {plain}"
        );
    }
}
