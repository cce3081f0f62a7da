//! The hosts reached over plain HTTP although they are not loopback, as the user opted them in.

/// The hosts a registry whose address names no scheme reaches over plain HTTP although they
/// are not loopback: `host` or `host:port` entries, or `*` for every host (the session reads
/// them from the environment and `--plain-http`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlainHttp(pub Vec<String>);

impl PlainHttp {
    /// Whether `host` (bare, no brackets) at `port` is opted in.
    pub fn allows(&self, host: &str, port: Option<u16>) -> bool {
        let with_port = format!("{host}{}", port.map(|p| format!(":{p}")).unwrap_or_default());
        self.0
            .iter()
            .any(|h| h == "*" || h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(&with_port))
    }
}
