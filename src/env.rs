//! Every environment variable `a2c` reads, documented and read only here.
//!
//! | variable | meaning |
//! |---|---|
//! | `NO_COLOR` | any non-empty value disables colour (<https://no-color.org>) |
//! | `PWD` | the shell's working directory as the user reached it (links kept): when it is the directory a2c runs in, messages name paths by it |
//! | `A2C_REGISTRY` | registry URL used by `a2c lock` when `--registry` is not given |
//! | `A2C_CACHE_DIR` | the content-addressed bundle cache (default: `$XDG_CACHE_HOME/a2c`, else `~/.cache/a2c`; on Windows `%LOCALAPPDATA%\a2c\cache`) |
//! | `A2C_MAX_UNPACKED_BYTES` | extraction limit on total unpacked bytes (default 1 GiB) |
//! | `A2C_MAX_ENTRIES` | extraction limit on archive entries (default 100,000) |
//! | `A2C_LOCK_TIMEOUT` | seconds to wait for the store lock (default 300) |
//! | `A2C_HTTP_TIMEOUT` | seconds for connecting and for each read of an HTTP response (default 30) |
//! | `A2C_HTTP_RETRIES` | retries of a failed HTTP request (default 4) |
//! | `A2C_HTTP_LOW_SPEED` | bytes per second a transfer must average over the window below (default 1024; 0 = off) |
//! | `A2C_HTTP_LOW_SPEED_TIME` | seconds of that window (default 60) |
//! | `A2C_OCI_PLAIN_HTTP` | comma-separated hosts (or `*`) that `oci://` reaches over plain HTTP although they are not loopback |
//! | `DOCKER_CONFIG` | the directory of docker's `config.json`, whose `auths` credentials OCI registries get (default `~/.docker`) |
//! | `A2C_MIRRORS` | comma-separated registries tried for a locked bundle after the configured ones |
//! | `A2C_MAX_DOCUMENT_BYTES` | the largest index or other document read into memory over HTTP (default 67108864, 64 MiB) |
//! | `A2C_CA_BUNDLE` | a PEM file of extra CA certificates to trust (as is `SSL_CERT_FILE`) |
//! | `SSL_CERT_FILE` | a PEM file of extra CA certificates to trust |
//! | `AWS_CA_BUNDLE` | a PEM file of extra CA certificates to trust (the AWS CLI's variable, for an S3-compatible store on a private CA) |
//! | `A2C_REGISTRY_TOKEN` | a bearer token, sent only to hosts the user chose: `--registry`, `A2C_REGISTRY`, `A2C_TOKEN_HOSTS` |
//! | `A2C_REGISTRY_AUTH` | `user:password` (or `user:token`), sent as basic credentials — and, for an OCI registry, to its token endpoint — only to the hosts that may receive `A2C_REGISTRY_TOKEN` |
//! | `A2C_TOKEN_HOSTS` | comma-separated `host` or `host:port` entries that may receive `A2C_REGISTRY_TOKEN` and the netrc `default` login |
//! | `A2C_KEY_PASSWORD` | the password of an encrypted secret key, for `key generate`, `sign`, `pack --sign` and `yank --sign` without a terminal (a CI secret) |
//! | `A2C_FSYNC` | `0` skips the sync of the store's filesystem before a version is published (scratch machines); default on |
//! | `A2C_LINK_MODE` | how store versions are placed from the shared tree cache: `clone`, `hardlink` or `copy` (default: the fastest that works) |
//! | `A2C_MAX_BUNDLE_BYTES` | the largest bundle a lock may pin (default 4 GiB) |
//! | `A2C_PROGRESS` | `auto` (default: bars on a terminal, else a plain line per version started and finished), `lines` (also with `--json`, on stderr) or `none` |
//! | `A2C_INSTALL_BASE` | where `a2c self update` (and install-a2c.sh) read releases: an https:// or http:// URL, a file:// URL or a directory (default: the base a release build wrote in) |
//! | `A2C_RELEASE_KEY` | the public key (minisign line) `a2c self update` verifies releases with, when the binary holds none (a build from a checkout) |
//! | `CI` | set (to anything but empty, `0` or `false`) by CI services: `install` prints a line per version, never bars |
//! | `TERM` | `dumb`: no progress bars, a line per version instead |
//! | `NETRC` | the netrc file (default `~/.netrc`) for credentials by host |
//! | `HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY` | proxies, read by the HTTP client (lower case too) |
//! | `A2C_TEST_HOOK` | test builds only (feature `test-hooks`): `pause:<point>`, `pause-until:<point>:<file>`, `abort:<point>` or `fail:<point>` |
//! | `A2C_TEST_PORTABLE` | test builds only (feature `test-hooks`): `1` takes the portable Unix fallbacks of `util::platform` on Linux too |

use std::ffi::OsString;

/// a2c's own secret variables: removed from the environment of every program a2c starts (git,
/// the hooks a commit runs, docker's credential helpers), which have no use for them.
pub const SECRETS: &[&str] = &["A2C_REGISTRY_TOKEN", "A2C_REGISTRY_AUTH", "A2C_KEY_PASSWORD"];

/// Every variable whose value is a credential, a2c's own and the clouds' that its object-store
/// registries read: their values never appear in what a2c prints ([`secret_values`]).
pub const SECRET_VALUES: &[&str] = &[
    A2C_REGISTRY_TOKEN,
    A2C_REGISTRY_AUTH,
    A2C_KEY_PASSWORD,
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_ACCESS_KEY",
    "AZURE_STORAGE_MASTER_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_SAS_KEY",
    "AZURE_STORAGE_TOKEN",
    "AZURE_CLIENT_SECRET",
    "AZURE_STORAGE_CLIENT_SECRET",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
];

/// Every variable with its full description, for the man page's ENVIRONMENT section (kept in
/// step with the table above by a test).
pub const VARIABLES: &[(&str, &str)] = &[
    (
        "NO_COLOR",
        "any non-empty value disables colour (<https://no-color.org>)",
    ),
    (
        "PWD",
        "the shell's working directory as the user reached it (links kept): when it is the directory a2c runs in, messages name paths by it",
    ),
    (
        "A2C_REGISTRY",
        "registry URL used by `a2c lock` when `--registry` is not given",
    ),
    (
        "A2C_CACHE_DIR",
        "the content-addressed bundle cache (default: `$XDG_CACHE_HOME/a2c`, else `~/.cache/a2c`; on Windows `%LOCALAPPDATA%\\a2c\\cache`)",
    ),
    (
        "A2C_MAX_UNPACKED_BYTES",
        "extraction limit on total unpacked bytes (default 1 GiB)",
    ),
    (
        "A2C_MAX_ENTRIES",
        "extraction limit on archive entries (default 100,000)",
    ),
    ("A2C_LOCK_TIMEOUT", "seconds to wait for the store lock (default 300)"),
    (
        "A2C_HTTP_TIMEOUT",
        "seconds for connecting and for each read of an HTTP response (default 30)",
    ),
    ("A2C_HTTP_RETRIES", "retries of a failed HTTP request (default 4)"),
    (
        "A2C_HTTP_LOW_SPEED",
        "bytes per second a transfer must average over the window below (default 1024; 0 = off)",
    ),
    ("A2C_HTTP_LOW_SPEED_TIME", "seconds of that window (default 60)"),
    (
        "A2C_OCI_PLAIN_HTTP",
        "comma-separated hosts (or `*`) that `oci://` reaches over plain HTTP although they are not loopback",
    ),
    (
        "DOCKER_CONFIG",
        "the directory of docker's `config.json`, whose `auths` credentials OCI registries get (default `~/.docker`)",
    ),
    (
        "A2C_MIRRORS",
        "comma-separated registries tried for a locked bundle after the configured ones",
    ),
    (
        "A2C_MAX_DOCUMENT_BYTES",
        "the largest index or other document read into memory over HTTP (default 67108864, 64 MiB)",
    ),
    (
        "A2C_CA_BUNDLE",
        "a PEM file of extra CA certificates to trust (as is `SSL_CERT_FILE`)",
    ),
    ("SSL_CERT_FILE", "a PEM file of extra CA certificates to trust"),
    (
        "AWS_CA_BUNDLE",
        "a PEM file of extra CA certificates to trust (the AWS CLI's variable, for an S3-compatible store on a private CA)",
    ),
    (
        "A2C_REGISTRY_TOKEN",
        "a bearer token, sent only to hosts the user chose: `--registry`, `A2C_REGISTRY`, `A2C_TOKEN_HOSTS`",
    ),
    (
        "A2C_REGISTRY_AUTH",
        "`user:password` (or `user:token`), sent as basic credentials — and, for an OCI registry, to its token endpoint — only to the hosts that may receive `A2C_REGISTRY_TOKEN`",
    ),
    (
        "A2C_TOKEN_HOSTS",
        "comma-separated `host` or `host:port` entries that may receive `A2C_REGISTRY_TOKEN` and the netrc `default` login",
    ),
    (
        "A2C_KEY_PASSWORD",
        "the password of an encrypted secret key, for `key generate`, `sign`, `pack --sign` and `yank --sign` without a terminal (a CI secret)",
    ),
    (
        "A2C_FSYNC",
        "`0` skips the sync of the store's filesystem before a version is published (scratch machines); default on",
    ),
    (
        "A2C_LINK_MODE",
        "how store versions are placed from the shared tree cache: `clone`, `hardlink` or `copy` (default: the fastest that works)",
    ),
    (
        "A2C_MAX_BUNDLE_BYTES",
        "the largest bundle a lock may pin (default 4 GiB)",
    ),
    (
        "A2C_PROGRESS",
        "`auto` (default: bars on a terminal, else a plain line per version started and finished), `lines` (also with `--json`, on stderr) or `none`",
    ),
    (
        "A2C_INSTALL_BASE",
        "where `a2c self update` (and install-a2c.sh) read releases: an https:// or http:// URL, a file:// URL or a directory (default: the base a release build wrote in)",
    ),
    (
        "A2C_RELEASE_KEY",
        "the public key (minisign line) `a2c self update` verifies releases with, when the binary holds none (a build from a checkout)",
    ),
    (
        "CI",
        "set (to anything but empty, `0` or `false`) by CI services: `install` prints a line per version, never bars",
    ),
    ("TERM", "`dumb`: no progress bars, a line per version instead"),
    ("NETRC", "the netrc file (default `~/.netrc`) for credentials by host"),
    (
        "HTTPS_PROXY, HTTP_PROXY, NO_PROXY",
        "proxies, read by the HTTP client (lower case too)",
    ),
];

/// The variables for `a2c --help`: each name with its whole description from [`VARIABLES`]
/// (backticks dropped), wrapped at 80 columns, never cut short.
pub fn help() -> String {
    const NAME: usize = 27;
    const WIDTH: usize = 80;
    let mut out = String::from("Environment (docs/concepts.md has the full list):");
    for (name, text) in VARIABLES {
        let text = text.replace('`', "");
        let mut line = format!("\n  {name:<w$}", w = NAME - 2);
        if line.len() > NAME + 1 {
            out.push_str(&line);
            line = format!("\n{:NAME$}", "");
        }
        let mut len = line.len() - 1;
        for word in text.split(' ') {
            if len + word.len() + 1 > WIDTH && len > NAME {
                out.push_str(&line);
                line = format!("\n{:NAME$}", "");
                len = NAME;
            }
            if len > NAME {
                line.push(' ');
                len += 1;
            }
            line.push_str(word);
            len += word.chars().count();
        }
        out.push_str(&line);
    }
    out
}

use std::path::PathBuf;

/// Names of the variables, so that messages can name them.
pub const NO_COLOR: &str = "NO_COLOR";
pub const PWD: &str = "PWD";
pub const A2C_REGISTRY: &str = "A2C_REGISTRY";
pub const A2C_CACHE_DIR: &str = "A2C_CACHE_DIR";
pub const A2C_MAX_UNPACKED_BYTES: &str = "A2C_MAX_UNPACKED_BYTES";
pub const A2C_MAX_ENTRIES: &str = "A2C_MAX_ENTRIES";
pub const A2C_LOCK_TIMEOUT: &str = "A2C_LOCK_TIMEOUT";
pub const A2C_TEST_HOOK: &str = "A2C_TEST_HOOK";
/// Test builds only: `1` forces the portable fallbacks of `util::platform`.
pub const A2C_TEST_PORTABLE: &str = "A2C_TEST_PORTABLE";
pub const A2C_HTTP_TIMEOUT: &str = "A2C_HTTP_TIMEOUT";
pub const A2C_HTTP_RETRIES: &str = "A2C_HTTP_RETRIES";
pub const A2C_HTTP_LOW_SPEED: &str = "A2C_HTTP_LOW_SPEED";
pub const A2C_HTTP_LOW_SPEED_TIME: &str = "A2C_HTTP_LOW_SPEED_TIME";
pub const A2C_MAX_DOCUMENT_BYTES: &str = "A2C_MAX_DOCUMENT_BYTES";
pub const A2C_MIRRORS: &str = "A2C_MIRRORS";
pub const A2C_INSTALL_BASE: &str = "A2C_INSTALL_BASE";
pub const A2C_RELEASE_KEY: &str = "A2C_RELEASE_KEY";

/// `A2C_MIRRORS`, split on commas.
pub fn mirrors() -> Vec<String> {
    list(A2C_MIRRORS, &[','])
}

/// A variable holding a list, split on `separators`, entries trimmed, empty ones dropped.
fn list(name: &str, separators: &[char]) -> Vec<String> {
    string(name)
        .map(|v| {
            v.split(separators)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
pub const A2C_CA_BUNDLE: &str = "A2C_CA_BUNDLE";
pub const SSL_CERT_FILE: &str = "SSL_CERT_FILE";
pub const AWS_CA_BUNDLE: &str = "AWS_CA_BUNDLE";
pub const A2C_REGISTRY_TOKEN: &str = "A2C_REGISTRY_TOKEN";
pub const A2C_REGISTRY_AUTH: &str = "A2C_REGISTRY_AUTH";
pub const A2C_OCI_PLAIN_HTTP: &str = "A2C_OCI_PLAIN_HTTP";
pub const NETRC: &str = "NETRC";
pub const A2C_TOKEN_HOSTS: &str = "A2C_TOKEN_HOSTS";
pub const A2C_MAX_BUNDLE_BYTES: &str = "A2C_MAX_BUNDLE_BYTES";
pub const A2C_LINK_MODE: &str = "A2C_LINK_MODE";
pub const A2C_FSYNC: &str = "A2C_FSYNC";

/// `false` when `A2C_FSYNC=0` (or `false`, `no`, `off`): no sync before publishing a version.
pub fn fsync() -> bool {
    !matches!(
        string(A2C_FSYNC).map(|v| v.to_ascii_lowercase()).as_deref(),
        Some("0" | "false" | "no" | "off")
    )
}

pub const A2C_PROGRESS: &str = "A2C_PROGRESS";
pub const CI: &str = "CI";
pub const TERM: &str = "TERM";

/// Whether a CI service runs a2c (`CI` set to anything but empty, `0` or `false`).
pub fn ci() -> bool {
    var(CI).is_some_and(|v| v != "false" && v != "0")
}

/// Whether the terminal says it is dumb (`TERM=dumb`).
pub fn dumb_terminal() -> bool {
    string(TERM).is_some_and(|t| t == "dumb")
}

/// `A2C_PROGRESS`, if set.
pub fn progress() -> Option<String> {
    string(A2C_PROGRESS)
}

/// `A2C_LINK_MODE`, if set.
pub fn link_mode() -> Option<String> {
    string(A2C_LINK_MODE)
}

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

fn string(name: &str) -> Option<String> {
    var(name).and_then(|v| v.into_string().ok())
}

/// The variable `name` as text, for the few readers of variables a2c does not own (the proxy
/// variables, which `net::proxy` interprets as curl does).
pub fn text(name: &str) -> Option<String> {
    string(name)
}

/// The shell's logical working directory (`PWD`: the path the user `cd`'d by, links kept), for
/// naming paths as the user typed them; the caller checks it is the working directory.
pub fn logical_cwd() -> Option<PathBuf> {
    var(PWD).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// `true` when `NO_COLOR` is set to a non-empty value.
pub fn no_color() -> bool {
    var(NO_COLOR).is_some()
}

/// The registry URL from `A2C_REGISTRY`, if set.
pub fn registry() -> Option<String> {
    string(A2C_REGISTRY)
}

/// The bundle cache directory: `A2C_CACHE_DIR`, else the platform's own
/// ([`user_dir`]: `$XDG_CACHE_HOME/a2c`, else
/// `~/.cache/a2c`; on Windows `%LOCALAPPDATA%\a2c\cache`).
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = var(A2C_CACHE_DIR) {
        return Some(PathBuf::from(dir));
    }
    user_dir(UserDir::Cache, var)
}

/// The user's home directory (`HOME`; on Windows `USERPROFILE`, else `HOME`).
pub fn home() -> Option<PathBuf> {
    user_dir(UserDir::Home, var)
}

/// VS Code's user settings directory, where its user-level `mcp.json` is: on Linux
/// `$XDG_CONFIG_HOME/Code/User` (else `~/.config/Code/User`), on macOS
/// `~/Library/Application Support/Code/User`, on Windows `%APPDATA%\Code\User`.
pub fn vscode_user_dir() -> Option<PathBuf> {
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    if cfg!(windows) {
        absolute("APPDATA").map(|d| d.join("Code").join("User"))
    } else if cfg!(target_os = "macos") {
        home().map(|h| h.join("Library").join("Application Support").join("Code").join("User"))
    } else {
        absolute("XDG_CONFIG_HOME")
            .or_else(|| home().map(|h| h.join(".config")))
            .map(|d| d.join("Code").join("User"))
    }
}

/// `A2C_OCI_PLAIN_HTTP`: comma-separated `host` or `host:port` entries (or `*`) that `oci://`
/// reaches over plain HTTP although they are not loopback (`--plain-http` adds `*`, in the
/// session).
pub fn oci_plain_http() -> Vec<String> {
    list(A2C_OCI_PLAIN_HTTP, &[','])
}

/// Every variable of `families` that is set, sorted: a family is a name, or a prefix ending in
/// `_` (`AWS_`) for every variable it begins — the registry kinds' (`Kind::environment`), which
/// configure an object store's client as its cloud's SDKs read the environment.
pub fn families(families: &[&str]) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, v)| in_families(k, families) && !v.is_empty())
        .collect();
    vars.sort();
    vars
}

/// Whether the variable `name` is of one of `families` (see [`families`]).
pub fn in_families(name: &str, families: &[&str]) -> bool {
    families.iter().any(|f| match f.ends_with('_') {
        true => name.starts_with(f),
        false => name == *f,
    })
}

/// docker's `config.json`: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`.
pub fn docker_config() -> Option<PathBuf> {
    var("DOCKER_CONFIG")
        .map(|d| PathBuf::from(d).join("config.json"))
        .or_else(|| home().map(|h| h.join(".docker").join("config.json")))
}

/// The file of `a2c login`'s credentials: `$XDG_CONFIG_HOME/a2c/credentials.toml`, else
/// `~/.config/a2c/credentials.toml`; on Windows `%APPDATA%\a2c\credentials.toml`.
pub fn credentials_path() -> Option<PathBuf> {
    let dir = user_dir(UserDir::Config, var)?;
    Some(dir.join("credentials.toml"))
}

/// A numeric variable: `Ok(None)` when unset, `Err((name, value))` when not a number.
pub fn number(name: &'static str) -> Result<Option<u64>, (&'static str, String)> {
    match string(name) {
        None => Ok(None),
        Some(raw) => raw
            .trim()
            .replace('_', "")
            .parse::<u64>()
            .map(Some)
            .map_err(|_| (name, raw)),
    }
}

/// The test hook, `pause:<point>` or `abort:<point>` (read only by test builds).
pub fn test_hook() -> Option<String> {
    string(A2C_TEST_HOOK)
}

/// `A2C_TEST_PORTABLE=1`: take the portable Unix fallbacks instead of the Linux-only calls
/// (read only by test builds; see `util::platform`).
pub fn test_portable() -> bool {
    string(A2C_TEST_PORTABLE).is_some_and(|v| v == "1")
}

/// Extra CA bundles to trust: `A2C_CA_BUNDLE`, `SSL_CERT_FILE` and `AWS_CA_BUNDLE`, with the
/// variable naming each.
pub fn ca_bundles() -> Vec<(&'static str, PathBuf)> {
    [A2C_CA_BUNDLE, SSL_CERT_FILE, AWS_CA_BUNDLE]
        .into_iter()
        .filter_map(|name| var(name).map(|v| (name, PathBuf::from(v))))
        .collect()
}

pub const A2C_KEY_PASSWORD: &str = "A2C_KEY_PASSWORD";

/// The password of an encrypted secret key, when the run has no terminal to ask on.
pub fn key_password() -> Option<String> {
    string(A2C_KEY_PASSWORD)
}

/// The bearer token for the registry's host.
pub fn registry_token() -> Option<String> {
    string(A2C_REGISTRY_TOKEN)
}

/// `A2C_REGISTRY_AUTH`: `user:password`, split at the first colon; `Err` when it has none.
pub fn registry_auth() -> Result<Option<(String, String)>, String> {
    match string(A2C_REGISTRY_AUTH) {
        None => Ok(None),
        Some(v) => v
            .split_once(':')
            .map(|(u, p)| Some((u.to_string(), p.to_string())))
            .ok_or_else(|| format!("{A2C_REGISTRY_AUTH} must be `user:password` (its value is not shown)")),
    }
}

/// The values of the [`SECRET_VALUES`] variables that are set (and of their parts a message
/// could hold alone: `A2C_REGISTRY_AUTH`'s password, a SAS token without its `?`), for the
/// printer to mask.
pub fn secret_values() -> Vec<String> {
    let mut values = Vec::new();
    for name in SECRET_VALUES {
        let Some(value) = string(name) else { continue };
        if let Some((_, password)) = value.split_once(':') {
            values.push(password.to_string());
        }
        if let Some(bare) = value.strip_prefix('?') {
            values.push(bare.to_string());
        }
        values.push(value);
    }
    values
}

/// Hosts the user binds `A2C_REGISTRY_TOKEN` to, beside the registry they name.
pub fn token_hosts() -> Vec<String> {
    list(A2C_TOKEN_HOSTS, &[',', ' '])
}

/// `true` when `A2C_CACHE_DIR` chose the cache directory.
pub fn cache_dir_from_variable() -> bool {
    var(A2C_CACHE_DIR).is_some()
}

/// The netrc file: `NETRC`, else `~/.netrc`.
pub fn netrc_path() -> Option<PathBuf> {
    var(NETRC)
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".netrc")))
}

/// `true` when a proxy variable is set (to word connection errors).
pub fn proxy_configured() -> Option<String> {
    [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ]
    .into_iter()
    .find_map(|name| string(name).map(|_| name.to_string()))
}

/// The directories a2c keeps per user, where each platform's tools keep theirs (the one
/// platform question outside `util::platform`: env is below it, and these are the
/// environment's own conventions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserDir {
    /// The user's home: `HOME`; on Windows `USERPROFILE` (as `std::env::home_dir` and cargo
    /// read it), else `HOME`.
    Home,
    /// a2c's bundle cache: `$XDG_CACHE_HOME/a2c`, else `~/.cache/a2c`; on Windows
    /// `%LOCALAPPDATA%\a2c\cache` (machine-local, not roamed: where uv and pip keep theirs).
    Cache,
    /// a2c's configuration (`a2c login`'s credentials): `$XDG_CONFIG_HOME/a2c`, else
    /// `~/.config/a2c`; on Windows `%APPDATA%\a2c` (roamed with the profile).
    Config,
}

/// Where `dir` is, from the variables `var` reads (a relative `XDG_*` is ignored, as the XDG
/// specification says); `None` when none of them is set.
pub fn user_dir(dir: UserDir, var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let home = || {
        if cfg!(windows) {
            var("USERPROFILE").or_else(|| var("HOME")).map(PathBuf::from)
        } else {
            var("HOME").map(PathBuf::from)
        }
    };
    match dir {
        UserDir::Home => home(),
        UserDir::Cache if cfg!(windows) => absolute("LOCALAPPDATA").map(|d| d.join("a2c").join("cache")),
        UserDir::Config if cfg!(windows) => absolute("APPDATA").map(|d| d.join("a2c")),
        UserDir::Cache => absolute("XDG_CACHE_HOME")
            .map(|d| d.join("a2c"))
            .or_else(|| home().map(|h| h.join(".cache").join("a2c"))),
        UserDir::Config => absolute("XDG_CONFIG_HOME")
            .map(|d| d.join("a2c"))
            .or_else(|| home().map(|h| h.join(".config").join("a2c"))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_directory_is_where_the_platform_keeps_it() {
        use super::{UserDir, user_dir};
        use std::path::PathBuf;
        let vars = |set: &'static [(&'static str, &'static str)]| {
            move |name: &str| set.iter().find(|(n, _)| *n == name).map(|(_, v)| v.into())
        };
        let home = if cfg!(windows) { "C:\\Users\\u" } else { "/home/u" };
        let set: &[(&str, &str)] = &[("HOME", "/home/u")];
        if cfg!(windows) {
            let set: &'static [(&str, &str)] = &[
                ("USERPROFILE", "C:\\Users\\u"),
                ("LOCALAPPDATA", "C:\\Users\\u\\AppData\\Local"),
                ("APPDATA", "C:\\Users\\u\\AppData\\Roaming"),
            ];
            assert_eq!(user_dir(UserDir::Home, vars(set)), Some(PathBuf::from(home)));
            let cache = user_dir(UserDir::Cache, vars(set)).unwrap();
            assert!(cache.ends_with("AppData\\Local\\a2c\\cache"), "{cache:?}");
            let config = user_dir(UserDir::Config, vars(set)).unwrap();
            assert!(config.ends_with("AppData\\Roaming\\a2c"), "{config:?}");
        } else {
            assert_eq!(user_dir(UserDir::Home, vars(set)), Some(PathBuf::from(home)));
            assert_eq!(
                user_dir(UserDir::Cache, vars(set)),
                Some(PathBuf::from("/home/u/.cache/a2c"))
            );
            assert_eq!(
                user_dir(UserDir::Config, vars(set)),
                Some(PathBuf::from("/home/u/.config/a2c"))
            );
            let xdg: &[(&str, &str)] = &[
                ("HOME", "/home/u"),
                ("XDG_CACHE_HOME", "/c"),
                ("XDG_CONFIG_HOME", "rel"),
            ];
            assert_eq!(user_dir(UserDir::Cache, vars(xdg)), Some(PathBuf::from("/c/a2c")));
            assert_eq!(
                user_dir(UserDir::Config, vars(xdg)),
                Some(PathBuf::from("/home/u/.config/a2c")),
                "a relative XDG_CONFIG_HOME is ignored"
            );
            let profile_only: &[(&str, &str)] = &[("USERPROFILE", "/p")];
            assert_eq!(
                user_dir(UserDir::Home, vars(profile_only)),
                None,
                "USERPROFILE is Windows's"
            );
        }
    }
}
