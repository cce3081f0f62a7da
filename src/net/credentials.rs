//! `a2c login`'s credentials: tokens the user bound to hosts, one per host, in
//! `$XDG_CONFIG_HOME/a2c/credentials.toml` (mode 0600, owned by the user, never reached through
//! a link). A token stored for a host goes to that host only, whatever names it: the registry
//! on the command line, a marker, or a lock's `source` — the binding is the user's, never a
//! committed file's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use url::Url;

use super::HttpError;

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    hosts: BTreeMap<String, Entry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    token: String,
    /// With a user name, the token is that user's password or API token, sent as basic
    /// credentials (for an API that takes Basic credentials or trades them for a token); without, a bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    username: Option<String>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Entry { .. }") // never print a token
    }
}

/// The key a host is stored under: `host`, or `host:port` for a port that is not the scheme's
/// default (https 443, http 80).
pub fn host_entry(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    }
}

/// A host given as `a2c login HOST`: a URL (`https://reg.example.org/a2c/`), or a bare
/// `host[:port]` (https assumed).
pub fn parse_host(text: &str) -> Result<Url, HttpError> {
    let url = if text.contains("://") {
        Url::parse(text)
    } else {
        Url::parse(&format!("https://{text}/"))
    }
    .map_err(|_| HttpError::BadHost(format!("`{text}` is not a host, host:port or URL")))?;
    if url.host_str().is_none() || !url.username().is_empty() || url.password().is_some() {
        return Err(HttpError::BadHost(format!(
            "`{}` must name a host, without credentials",
            crate::util::redact::redact(text)
        )));
    }
    Ok(url)
}

fn read(path: &Path) -> Result<File, HttpError> {
    let Some(text) = crate::util::contain::read_config(path).map_err(HttpError::Io)? else {
        return Ok(File::default());
    };
    let meta = std::fs::symlink_metadata(path).map_err(HttpError::Io)?;
    if crate::util::platform::exposed_to_others(&meta) {
        return Err(HttpError::ExposedCredentials {
            path: path.to_path_buf(),
        });
    }
    // toml's messages may quote the file: never show them (tokens).
    toml::from_str(&text).map_err(|_| {
        HttpError::Config(format!(
            "cannot parse `{}` (its content is not shown: it holds tokens); fix it or delete it and run `a2c login` again",
            path.display()
        ))
    })
}

/// Every stored (host key, token) pair of the file `path` (the settings' `logins`).
pub fn load(path: Option<&Path>) -> Result<Vec<Login>, HttpError> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    Ok(read(path)?
        .hosts
        .into_iter()
        .map(|(host, e)| Login {
            host,
            username: e.username,
            token: e.token,
        })
        .collect())
}

/// One host's stored credential.
#[derive(Clone)]
pub struct Login {
    pub host: String,
    /// Sent as basic credentials with the token as password when set; else the token is a
    /// bearer token.
    pub username: Option<String>,
    pub token: String,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Login {{ host: {:?}, .. }}", self.host) // never print a token
    }
}

/// Stores `token` for the host of `url` in the file `path` (the settings' `logins`) and returns
/// the file written.
pub fn store(path: Option<&Path>, url: &Url, token: &str, username: Option<&str>) -> Result<PathBuf, HttpError> {
    let path = path
        .ok_or_else(|| HttpError::Config("neither XDG_CONFIG_HOME nor HOME is set".into()))?
        .to_path_buf();
    let mut file = read(&path)?;
    file.hosts.insert(
        host_entry(url),
        Entry {
            token: token.to_string(),
            username: username.map(str::to_string),
        },
    );
    write(&path, &file)?;
    Ok(path)
}

/// Removes the token of the host of `url` from the file `path`; `false` when there was none.
pub fn remove(path: Option<&Path>, url: &Url) -> Result<bool, HttpError> {
    let Some(path) = path else {
        return Ok(false);
    };
    let mut file = read(path)?;
    let removed = file.hosts.remove(&host_entry(url)).is_some();
    if removed {
        write(path, &file)?;
    }
    Ok(removed)
}

fn write(path: &Path, file: &File) -> Result<(), HttpError> {
    let dir = path.parent().expect("a file in a directory");
    if !dir.is_dir() {
        crate::util::platform::private_dir_builder()
            .recursive(true)
            .create(dir)
            .map_err(|e| {
                HttpError::Io(std::io::Error::new(
                    e.kind(),
                    format!("cannot create `{}`: {e}", dir.display()),
                ))
            })?;
    }
    crate::util::contain::refuse_link(dir).map_err(HttpError::Io)?;
    let text = format!(
        "# written by `a2c login`: tokens by host (keep this file private)\n{}",
        toml::to_string(file).expect("serializes")
    );
    // Private from the first byte: the temporary file is 0600 before a byte is written.
    crate::util::fs::write_atomic_mode(path, text.as_bytes(), 0o600).map_err(HttpError::Io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A credentials file others can read is refused with a `chmod 600` that works as
    /// printed (the path has a space and a quote in it).
    #[test]
    fn a_credentials_file_others_can_read_is_refused_with_a_command_that_fixes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("my a2c").join("it's credentials.toml");
        let url = Url::parse("https://reg.example.org/").unwrap();
        store(Some(&path), &url, "t0ken", None).unwrap();
        assert_eq!(load(Some(&path)).unwrap().len(), 1);
        crate::util::platform::set_mode(&path, 0o644).unwrap();
        let err = load(Some(&path)).unwrap_err();
        assert!(matches!(err, HttpError::ExposedCredentials { .. }), "{err}");
        let hint = err.hint().unwrap();
        let command = hint.split("run `").nth(1).and_then(|r| r.split('`').next()).unwrap();
        assert!(
            std::process::Command::new("sh")
                .args(["-c", command])
                .status()
                .unwrap()
                .success()
        );
        assert_eq!(load(Some(&path)).unwrap().len(), 1, "{command}");
    }
}
