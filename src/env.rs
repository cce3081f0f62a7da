//! Every environment variable `a2c` reads, declared once ([`VARIABLES`]: its name, what it
//! does, whose it is, whether it holds a secret) and read only here. The constants naming them,
//! `a2c --help`'s list, the man page's ENVIRONMENT section and the secrets a2c masks come from
//! those declarations; docs/concepts.md's table is held to them by a test. Besides a2c's own:
//! the platform's (its home and configuration directories, the shell's working directory, the
//! conventions other tools share: proxies, CA bundles, `NO_COLOR`, `CI`) and the clouds' (the
//! families the object-store registry kinds read as their clouds' SDKs do, `Kind::environment`).

use std::ffi::OsString;

/// Whose a variable is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// a2c's own (`A2C_*`).
    A2c,
    /// The platform's, or a convention a2c shares with other tools.
    Platform,
    /// A cloud's, read for an object-store registry's client.
    Cloud,
}

/// One declared variable (or family: `AWS_*`).
#[derive(Debug, Clone, Copy)]
pub struct Variable {
    /// Its name; a family's ends in `*`; names read alike are listed together.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    pub whose: Whose,
    /// Its value is a credential: never printed, and a2c's own are kept from the programs it
    /// starts.
    pub secret: bool,
    /// Listed by `a2c --help` and the man page (the platform's directories, the clouds' own
    /// variables and the test builds' switches are not).
    pub listed: bool,
}

impl Variable {
    const fn new(whose: Whose, description: &'static str) -> Self {
        Self {
            name: "",
            description,
            whose,
            secret: false,
            listed: true,
        }
    }

    const fn a2c(description: &'static str) -> Self {
        Self::new(Whose::A2c, description)
    }

    const fn platform(description: &'static str) -> Self {
        Self::new(Whose::Platform, description)
    }

    /// A cloud's, read for its object-store kind's client (not listed by `--help`).
    const fn cloud(description: &'static str) -> Self {
        Self::new(Whose::Cloud, description).unlisted()
    }

    const fn secret(self) -> Self {
        Self { secret: true, ..self }
    }

    const fn unlisted(self) -> Self {
        Self { listed: false, ..self }
    }

    const fn listed(self) -> Self {
        Self { listed: true, ..self }
    }
}

/// The declarations: `NAME => Variable::…;` declares `pub const NAME` (its own name) with the
/// variable; an unnamed entry (`"NAME" => …;`) a family or a group read alike.
macro_rules! declare {
    (
        named { $($(#[$attr:meta])* $konst:ident => $decl:expr;)* }
        unnamed { $($name:literal => $other:expr;)* }
    ) => {
        $($(#[$attr])* pub const $konst: &str = stringify!($konst);)*
        /// Every variable a2c reads, in `--help`'s order.
        pub const VARIABLES: &[Variable] = &[
            $(Variable { name: stringify!($konst), ..$decl },)*
            $(Variable { name: $name, ..$other },)*
        ];
    };
}

declare! {
    named {
        NO_COLOR => Variable::platform("any non-empty value disables colour (<https://no-color.org>)");
        PWD => Variable::platform("the shell's working directory as the user reached it (links kept): when it is the directory a2c runs in, messages name paths by it");
        A2C_REGISTRY => Variable::a2c("registry URL used by `a2c lock` when `--registry` is not given");
        A2C_CACHE_DIR => Variable::a2c("the content-addressed bundle cache (default: `$XDG_CACHE_HOME/a2c`, else `~/.cache/a2c`; on Windows `%LOCALAPPDATA%\\a2c\\cache`)");
        A2C_MAX_UNPACKED_BYTES => Variable::a2c("extraction limit on total unpacked bytes (default 1 GiB)");
        A2C_MAX_ENTRIES => Variable::a2c("extraction limit on archive entries (default 100,000)");
        A2C_LOCK_TIMEOUT => Variable::a2c("seconds to wait for the store lock (default 300)");
        A2C_HTTP_TIMEOUT => Variable::a2c("seconds for connecting and for each read of an HTTP response (default 30)");
        A2C_HTTP_RETRIES => Variable::a2c("retries of a failed HTTP request (default 4)");
        A2C_HTTP_LOW_SPEED => Variable::a2c("bytes per second a transfer must average over the window below (default 1024; 0 = off)");
        A2C_HTTP_LOW_SPEED_TIME => Variable::a2c("seconds of that window (default 60)");
        A2C_OCI_PLAIN_HTTP => Variable::a2c("comma-separated hosts (or `*`) that `oci://` reaches over plain HTTP although they are not loopback");
        DOCKER_CONFIG => Variable::platform("the directory of docker's `config.json`, whose `auths` credentials OCI registries get (default `~/.docker`)");
        A2C_MIRRORS => Variable::a2c("comma-separated registries tried for a locked bundle after the configured ones");
        A2C_MAX_DOCUMENT_BYTES => Variable::a2c("the largest index or other document read into memory over HTTP (default 67108864, 64 MiB)");
        A2C_CA_BUNDLE => Variable::a2c("a PEM file of extra CA certificates to trust (as is `SSL_CERT_FILE`)");
        SSL_CERT_FILE => Variable::platform("a PEM file of extra CA certificates to trust");
        AWS_CA_BUNDLE => Variable::cloud("a PEM file of extra CA certificates to trust (the AWS CLI's variable, for an S3-compatible store on a private CA)").listed();
        A2C_REGISTRY_TOKEN => Variable::a2c("a bearer token, sent only to hosts the user chose: `--registry`, `A2C_REGISTRY`, `A2C_TOKEN_HOSTS`").secret();
        A2C_REGISTRY_AUTH => Variable::a2c("`user:password` (or `user:token`), sent as basic credentials — and, for an OCI registry, to its token endpoint — only to the hosts that may receive `A2C_REGISTRY_TOKEN`").secret();
        A2C_TOKEN_HOSTS => Variable::a2c("comma-separated `host` or `host:port` entries that may receive `A2C_REGISTRY_TOKEN` and the netrc `default` login");
        A2C_KEY_PASSWORD => Variable::a2c("the password of an encrypted secret key, for `key generate`, `sign`, `pack --sign` and `yank --sign` without a terminal (a CI secret)").secret();
        A2C_FSYNC => Variable::a2c("`0` skips the sync of the store's filesystem before a version is published (scratch machines); default on");
        A2C_LINK_MODE => Variable::a2c("how store versions are placed from the shared tree cache: `clone`, `hardlink` or `copy` (default: the fastest that works)");
        A2C_MAX_BUNDLE_BYTES => Variable::a2c("the largest bundle a lock may pin (default 4 GiB)");
        A2C_PROGRESS => Variable::a2c("`auto` (default: bars on a terminal, else a plain line per version started and finished), `lines` (also with `--json`, on stderr) or `none`");
        A2C_INSTALL_BASE => Variable::a2c("where `a2c self update` (and install-a2c.sh) read releases: an https:// or http:// URL, a file:// URL or a directory (default: the base a release build wrote in)");
        A2C_RELEASE_KEY => Variable::a2c("the public key (minisign line) `a2c self update` verifies releases with, when the binary holds none (a build from a checkout)");
        CI => Variable::platform("set (to anything but empty, `0` or `false`) by CI services: `install` prints a line per version, never bars");
        TERM => Variable::platform("`dumb`: no progress bars, a line per version instead");
        NETRC => Variable::platform("the netrc file (default `~/.netrc`) for credentials by host");
        /// Test builds only: `pause:<point>`, `pause-until:<point>:<file>`, `abort:<point>` or
        /// `fail:<point>` (feature `test-hooks`).
        A2C_TEST_HOOK => Variable::a2c("test builds only (feature `test-hooks`): `pause:<point>`, `pause-until:<point>:<file>`, `abort:<point>` or `fail:<point>`").unlisted();
        /// Test builds only: `1` forces the portable fallbacks of `util::platform`.
        A2C_TEST_PORTABLE => Variable::a2c("test builds only (feature `test-hooks`): `1` takes the portable Unix fallbacks of `util::platform` on Linux too").unlisted();
        HOME => Variable::platform("the user's home (on Windows `USERPROFILE` first): `~` in every default path").unlisted();
        USERPROFILE => Variable::platform("the user's home on Windows").unlisted();
        XDG_CACHE_HOME => Variable::platform("the cache directory's parent, where absolute (default `~/.cache`)").unlisted();
        XDG_CONFIG_HOME => Variable::platform("where `a2c login` keeps `a2c/credentials.toml`, where absolute (default `~/.config`); VS Code's user settings below it").unlisted();
        LOCALAPPDATA => Variable::platform("the cache directory's parent on Windows").unlisted();
        APPDATA => Variable::platform("the configuration directory's parent on Windows (and VS Code's user settings)").unlisted();
    }
    unnamed {
        "HTTPS_PROXY, HTTP_PROXY, NO_PROXY" => Variable::platform("proxies, read by the HTTP client (lower case too)");
        "ALL_PROXY" => Variable::platform("a proxy for every scheme (lower case too)").unlisted();
        "AWS_*" => Variable::cloud("an `s3://` registry's client, as the AWS SDKs read them: credentials, region, endpoint (`AWS_ENDPOINT_URL`), profile and shared files, web identity, container and instance credentials");
        "AWS_SECRET_ACCESS_KEY" => Variable::cloud("AWS's secret key").secret();
        "AWS_SESSION_TOKEN" => Variable::cloud("AWS's session token").secret();
        "AZURE_*" => Variable::cloud("an `az://` registry's client, as the Azure SDKs read them: the storage account, its key, a SAS, a token, a service principal, a workload or managed identity, the endpoint (`AZURE_STORAGE_ENDPOINT`)");
        "AZURE_STORAGE_ACCOUNT_KEY" => Variable::cloud("an Azure storage account's key").secret();
        "AZURE_STORAGE_ACCESS_KEY" => Variable::cloud("an Azure storage account's key").secret();
        "AZURE_STORAGE_MASTER_KEY" => Variable::cloud("an Azure storage account's key").secret();
        "AZURE_STORAGE_SAS_TOKEN" => Variable::cloud("an Azure SAS").secret();
        "AZURE_STORAGE_SAS_KEY" => Variable::cloud("an Azure SAS").secret();
        "AZURE_STORAGE_TOKEN" => Variable::cloud("an Azure bearer token").secret();
        "AZURE_CLIENT_SECRET" => Variable::cloud("an Azure service principal's secret").secret();
        "AZURE_STORAGE_CLIENT_SECRET" => Variable::cloud("an Azure service principal's secret").secret();
        "GOOGLE_*" => Variable::cloud("a `gs://` registry's client: a service account key (`GOOGLE_SERVICE_ACCOUNT`, `GOOGLE_SERVICE_ACCOUNT_KEY`), Application Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`), the endpoint (`GOOGLE_BASE_URL`)");
        "GOOGLE_SERVICE_ACCOUNT_KEY" => Variable::cloud("a Google service account's key").secret();
        "GCE_METADATA_*" => Variable::cloud("the metadata server a `gs://` registry's credentials come from, when not Google's own");
        "STORAGE_EMULATOR_HOST" => Variable::cloud("a Cloud Storage emulator, as Google's client libraries take it (`host:port`: plain HTTP, anonymous unless credentials are named)");
    }
}

/// Whether the variable `name` holds a credential (its value is never printed).
pub fn is_secret(name: &str) -> bool {
    VARIABLES.iter().any(|v| v.secret && v.name == name)
}

/// a2c's own secret variables: removed from the environment of every program a2c starts (git,
/// the hooks a commit runs, docker's credential helpers), which have no use for them. (The
/// declarations' a2c secrets, as a test checks.)
pub const SECRETS: &[&str] = &[A2C_REGISTRY_TOKEN, A2C_REGISTRY_AUTH, A2C_KEY_PASSWORD];

/// The variables `a2c --help` and the man page list.
pub fn listed() -> impl Iterator<Item = &'static Variable> {
    VARIABLES.iter().filter(|v| v.listed)
}

/// The variables for `a2c --help`: each listed name with its whole description
/// (backticks dropped), wrapped at 80 columns, never cut short.
pub fn help() -> String {
    const NAME: usize = 27;
    const WIDTH: usize = 80;
    let mut out = String::from("Environment (docs/concepts.md has the full list):");
    for Variable { name, description, .. } in listed() {
        let text = description.replace('`', "");
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

/// `false` when `A2C_FSYNC=0` (or `false`, `no`, `off`): no sync before publishing a version.
pub fn fsync() -> bool {
    !matches!(
        string(A2C_FSYNC).map(|v| v.to_ascii_lowercase()).as_deref(),
        Some("0" | "false" | "no" | "off")
    )
}

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
        absolute(APPDATA).map(|d| d.join("Code").join("User"))
    } else if cfg!(target_os = "macos") {
        home().map(|h| h.join("Library").join("Application Support").join("Code").join("User"))
    } else {
        absolute(XDG_CONFIG_HOME)
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
/// A variable whose name or value is not UTF-8 is no family's (no SDK reads it either), and one
/// outside them is never looked at: `std::env::vars` would panic on either.
pub fn families(families: &[&str]) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
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
    var(DOCKER_CONFIG)
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

/// The values of the secret variables that are set (and of their parts a message
/// could hold alone: `A2C_REGISTRY_AUTH`'s password, a SAS token without its `?`), for the
/// printer to mask.
pub fn secret_values() -> Vec<String> {
    let mut values = Vec::new();
    for name in VARIABLES.iter().filter(|v| v.secret).map(|v| v.name) {
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
            var(USERPROFILE).or_else(|| var(HOME)).map(PathBuf::from)
        } else {
            var(HOME).map(PathBuf::from)
        }
    };
    match dir {
        UserDir::Home => home(),
        UserDir::Cache if cfg!(windows) => absolute(LOCALAPPDATA).map(|d| d.join("a2c").join("cache")),
        UserDir::Config if cfg!(windows) => absolute(APPDATA).map(|d| d.join("a2c")),
        UserDir::Cache => absolute(XDG_CACHE_HOME)
            .map(|d| d.join("a2c"))
            .or_else(|| home().map(|h| h.join(".cache").join("a2c"))),
        UserDir::Config => absolute(XDG_CONFIG_HOME)
            .map(|d| d.join("a2c"))
            .or_else(|| home().map(|h| h.join(".config").join("a2c"))),
    }
}

#[cfg(test)]
mod tests {
    /// The declarations hold together: `SECRETS` are the declared a2c secrets; each registry
    /// kind's variable family (`Kind::environment`) is declared as a cloud's, and each cloud
    /// secret belongs to one.
    #[test]
    fn the_declarations_cover_every_variable_read() {
        use super::{SECRETS, VARIABLES, Whose, in_families};
        let own: Vec<&str> = VARIABLES
            .iter()
            .filter(|v| v.secret && v.whose == Whose::A2c)
            .map(|v| v.name)
            .collect();
        assert_eq!(own, SECRETS);
        let families = crate::registry::environment();
        assert!(!families.is_empty());
        for family in &families {
            let declared = match family.strip_suffix('_') {
                Some(_) => format!("{family}*"),
                None => family.to_string(),
            };
            let v = VARIABLES.iter().find(|v| v.name == declared);
            assert!(
                v.is_some_and(|v| v.whose == Whose::Cloud),
                "{family} is not declared a cloud's"
            );
        }
        for v in VARIABLES
            .iter()
            .filter(|v| v.whose == Whose::Cloud && !v.name.ends_with('*'))
        {
            assert!(in_families(v.name, &families), "{} is in no kind's family", v.name);
        }
    }

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
