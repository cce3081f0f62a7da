//! Proxies from the environment, with `NO_PROXY` matched as curl and Python do — including
//! `*`, which bypasses every proxy for every host (IP addresses too), and entries with a port.
//! reqwest's own environment handling is switched off so that this is the only rule.

use std::net::IpAddr;

use url::Url;

/// One `NO_PROXY` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    /// `*`: every host.
    All,
    /// `example.org` or `.example.org`: that host and every subdomain; with `:port`, only that port.
    Domain { name: String, port: Option<u16> },
    /// `10.0.0.1`, `::1`, `[::1]:8080`, `10.0.0.0/8`.
    Net { net: ipnet::IpNet, port: Option<u16> },
}

/// The `NO_PROXY` list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoProxy(Vec<Entry>);

fn split_port(s: &str) -> (&str, Option<u16>) {
    // `[v6]:port`, `v6` (several colons: no port), `host:port`, `host`.
    if let Some(rest) = s.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((host, tail)) => (host, tail.strip_prefix(':').and_then(|p| p.parse().ok())),
            None => (s, None),
        };
    }
    match s.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(p) => (host, Some(p)),
            Err(_) => (s, None),
        },
        _ => (s, None),
    }
}

impl NoProxy {
    /// Parses a comma-separated `NO_PROXY` value (spaces allowed, case-insensitive).
    pub fn parse(text: &str) -> Self {
        let mut out = Vec::new();
        for raw in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let raw = raw.to_ascii_lowercase();
            if raw == "*" {
                out.push(Entry::All);
                continue;
            }
            if let Ok(net) = raw.parse::<ipnet::IpNet>() {
                out.push(Entry::Net { net, port: None });
                continue;
            }
            let (host, port) = split_port(&raw);
            if let Ok(net) = host.parse::<ipnet::IpNet>() {
                out.push(Entry::Net { net, port });
            } else if let Ok(ip) = host.parse::<IpAddr>() {
                out.push(Entry::Net {
                    net: ipnet::IpNet::from(ip),
                    port,
                });
            } else {
                let name = host.trim_start_matches("*.").trim_start_matches('.').to_string();
                if !name.is_empty() {
                    out.push(Entry::Domain { name, port });
                }
            }
        }
        Self(out)
    }

    /// `true` when `url` is reached directly.
    pub fn matches(&self, url: &Url) -> bool {
        let port = url.port_or_known_default();
        let port_ok = |p: &Option<u16>| p.is_none() || *p == port;
        let host = match url.host() {
            Some(h) => h,
            None => return false,
        };
        self.0.iter().any(|e| match (e, &host) {
            (Entry::All, _) => true,
            (Entry::Net { net, port: p }, url::Host::Ipv4(ip)) => port_ok(p) && net.contains(&IpAddr::V4(*ip)),
            (Entry::Net { net, port: p }, url::Host::Ipv6(ip)) => port_ok(p) && net.contains(&IpAddr::V6(*ip)),
            (Entry::Domain { name, port: p }, url::Host::Domain(d)) => {
                let d = d.to_ascii_lowercase();
                port_ok(p) && (d == *name || d.ends_with(&format!(".{name}")))
            }
            _ => false,
        })
    }
}

/// The proxies the environment names, and the hosts that bypass them.
#[derive(Debug, Clone, Default)]
pub struct ProxyEnv {
    pub http: Option<Url>,
    pub https: Option<Url>,
    pub no_proxy: NoProxy,
}

fn var(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| crate::env::text(n).filter(|v| !v.trim().is_empty()))
}

fn proxy_url(value: &str) -> Option<Url> {
    let value = value.trim();
    // `host:port` alone means an HTTP proxy, as curl reads it.
    let with_scheme = if value.contains("://") {
        value.to_string()
    } else {
        format!("http://{value}")
    };
    Url::parse(&with_scheme).ok()
}

impl ProxyEnv {
    /// `HTTPS_PROXY` / `https_proxy`, `HTTP_PROXY` / `http_proxy`, `ALL_PROXY` / `all_proxy`
    /// (for whichever of the two is unset), and `NO_PROXY` / `no_proxy`.
    pub fn from_env() -> Self {
        let all = var(&["ALL_PROXY", "all_proxy"]);
        let https = var(&["HTTPS_PROXY", "https_proxy"]).or_else(|| all.clone());
        let http = var(&["http_proxy", "HTTP_PROXY"]).or(all);
        Self {
            http: http.as_deref().and_then(proxy_url),
            https: https.as_deref().and_then(proxy_url),
            no_proxy: NoProxy::parse(&var(&["NO_PROXY", "no_proxy"]).unwrap_or_default()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.http.is_none() && self.https.is_none()
    }

    /// The proxy for `url`, or `None` to connect directly.
    pub fn proxy_for(&self, url: &Url) -> Option<Url> {
        if self.no_proxy.matches(url) {
            return None;
        }
        match url.scheme() {
            "https" => self.https.clone(),
            "http" => self.http.clone(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(list: &str, url: &str) -> bool {
        NoProxy::parse(list).matches(&Url::parse(url).unwrap())
    }

    #[test]
    fn every_no_proxy_form() {
        // `*`, for names and addresses alike.
        assert!(m("*", "http://127.0.0.1:8080/"));
        assert!(m("*", "https://reg.example.org/"));
        assert!(m("*", "http://[::1]:9/"));
        // Exact host, domain suffix, `.suffix`, `*.suffix`.
        for list in ["example.org", ".example.org", "*.example.org", " EXAMPLE.org "] {
            assert!(m(list, "https://example.org/"), "{list}");
            assert!(m(list, "https://reg.example.org/"), "{list}");
            assert!(!m(list, "https://notexample.org/"), "{list}");
            assert!(!m(list, "https://example.org.evil/"), "{list}");
        }
        // With a port: only that port (the scheme's default counts).
        assert!(m("example.org:8443", "https://reg.example.org:8443/"));
        assert!(!m("example.org:8443", "https://reg.example.org/"));
        assert!(m("example.org:443", "https://reg.example.org/"));
        // Addresses, CIDR, IPv6, with and without port.
        assert!(m("127.0.0.1", "http://127.0.0.1:1234/"));
        assert!(!m("127.0.0.1", "http://127.0.0.2/"));
        assert!(m("127.0.0.0/8", "http://127.9.9.9/"));
        assert!(!m("10.0.0.0/8", "http://127.0.0.1/"));
        assert!(m("127.0.0.1:1234", "http://127.0.0.1:1234/"));
        assert!(!m("127.0.0.1:1234", "http://127.0.0.1:1235/"));
        assert!(m("::1", "http://[::1]:80/"));
        assert!(m("[::1]:8080", "http://[::1]:8080/"));
        assert!(!m("[::1]:8080", "http://[::1]:8081/"));
        assert!(m("fd00::/8", "http://[fd12::1]/"));
        // Lists, and empty entries.
        assert!(m("a.org, ,127.0.0.1", "http://127.0.0.1/"));
        assert!(!m("", "http://127.0.0.1/"));
    }

    #[test]
    fn proxies_by_scheme() {
        let env = ProxyEnv {
            http: Some(Url::parse("http://p:3128").unwrap()),
            https: None,
            no_proxy: NoProxy::parse("internal.org"),
        };
        assert_eq!(
            env.proxy_for(&Url::parse("http://a.org/").unwrap()).unwrap().as_str(),
            "http://p:3128/"
        );
        assert!(env.proxy_for(&Url::parse("https://a.org/").unwrap()).is_none());
        assert!(env.proxy_for(&Url::parse("http://x.internal.org/").unwrap()).is_none());
    }
}
