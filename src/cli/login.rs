//! `a2c login HOST` and `a2c logout HOST`: bind a token to a host, as `cargo login` does.

use clap::Args;

use super::{Cx, Outcome};
use crate::net::credentials;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c login reg.example.org < token.txt\n  a2c login pkgs.example.org --username __token__   # a package index's API token\n  a2c login conan.example.org --username alice       # a Conan remote's password"
)]
pub struct LoginArgs {
    /// The registry's host (`reg.example.org`, `host:port`) or URL
    #[arg(value_name = "HOST")]
    pub host: String,
    /// Send the token as this user's password (basic credentials), as package indexes and
    /// Conan remotes take them; without it, the token is a bearer token
    #[arg(long, value_name = "NAME")]
    pub username: Option<String>,
    /// Read the token from standard input (the default; kept for scripts that say so)
    #[arg(long)]
    pub token_stdin: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c logout reg.example.org")]
pub struct LogoutArgs {
    /// The host whose token to forget
    #[arg(value_name = "HOST")]
    pub host: String,
}

pub fn login(args: &LoginArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, _, printer) = cx.parts();
    let url = credentials::parse_host(&args.host)?;
    let prompt = || {
        printer.status(format!(
            "paste the token for {} and press Enter (it is not shown)",
            credentials::host_entry(&url)
        ))
    };
    let line = crate::util::platform::read_secret_line(&prompt)?;
    let token = line.trim();
    if token.is_empty() {
        anyhow::bail!(
            "no token on standard input: pipe it in, e.g. `a2c login {} < token-file`",
            args.host
        );
    }
    if let Some(user) = &args.username
        && (user.is_empty() || user.contains([':', '\n', '\r']))
    {
        anyhow::bail!("--username `{user}`: a user name has no `:` and is not empty");
    }
    let path = credentials::store(session.network.logins.as_deref(), &url, token, args.username.as_deref())?;
    let host = credentials::host_entry(&url);
    if printer.json {
        /// `login --json` (docs/json/login.schema.json).
        #[derive(serde::Serialize)]
        struct Stored<'a> {
            host: &'a str,
            path: &'a std::path::Path,
        }
        printer.json_doc(&Stored {
            host: &host,
            path: &path,
        });
    } else {
        let what = match &args.username {
            Some(user) => format!("password of {user}"),
            None => "token".into(),
        };
        printer.status(format!(
            "{what} stored for {host} in `{}`: a2c sends it to {host} only (over HTTPS, or plain HTTP to loopback); the registry checks it at the next request",
            path.display()
        ));
        // A bare host is its default port only (netrc and A2C_TOKEN_HOSTS name every port of
        // a bare host): say so, with the form for another port.
        if url.port().is_none() {
            printer.status(format!(
                "it is bound to port {} of {host} only; for a registry on another port: `a2c login {host}:PORT`",
                url.port_or_known_default().unwrap_or(443)
            ));
        }
    }
    Ok(Outcome::Success)
}

pub fn logout(args: &LogoutArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, _, printer) = cx.parts();
    let url = credentials::parse_host(&args.host)?;
    let host = credentials::host_entry(&url);
    let removed = credentials::remove(session.network.logins.as_deref(), &url)?;
    if printer.json {
        /// `logout --json` (docs/json/logout.schema.json).
        #[derive(serde::Serialize)]
        struct Forgot<'a> {
            host: &'a str,
            removed: bool,
        }
        printer.json_doc(&Forgot { host: &host, removed });
    } else if removed {
        printer.status(format!("forgot the token of {host}"));
    } else {
        printer.status(format!("no token was stored for {host}"));
    }
    Ok(Outcome::Success)
}
