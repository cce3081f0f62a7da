//! `a2c self update` and `a2c self version`: a2c replacing its own binary with a release, as
//! install-a2c.sh installs one (docs/install.md).
//!
//! A release lives under a base (a URL, a `file://` URL or a directory): `BASE/latest` names the
//! newest version, `BASE/VERSION/SHA256SUMS` lists every archive's sha256 and
//! `BASE/VERSION/SHA256SUMS.minisig` signs that list with the release key. The base is
//! `--from`, else `A2C_INSTALL_BASE`, else the one a release build wrote into the binary; the
//! key is the one a release build wrote in, else `A2C_RELEASE_KEY` (a team's own releases of a
//! build from a checkout). Nothing is replaced before the list's signature and the archive's
//! sha256 verify and the new binary has answered `--version` with the version asked for; the
//! running binary is then swapped in one rename (`self-replace`, which also handles Windows'
//! rule that a running program cannot be overwritten). Any refusal leaves a2c as it was.
//!
//! A binary another tool installed (pip, pipx or `uv tool` into a Python environment; `cargo
//! install`) is not replaced: that tool's records would no longer match; the refusal names the
//! command that updates it.

use std::io::Read;
use std::path::{Path, PathBuf};

use semver::Version;
use url::Url;

pub use crate::util::installed::{Installed, upgrade_hint};

/// The target this binary was built for (`x86_64-unknown-linux-gnu`, …).
pub const BUILD_TARGET: &str = env!("A2C_BUILD_TARGET");

/// The largest file of a release read (an archive, the list, its signature, `latest`).
const MAX_RELEASE_FILE: u64 = 256 << 20;

/// The release base a release build wrote into this binary (none in a build from a checkout).
pub fn built_in_base() -> Option<&'static str> {
    option_env!("A2C_RELEASE_BASE").filter(|b| !b.trim().is_empty())
}

/// The release key a release build wrote into this binary (none in a build from a checkout).
pub fn built_in_key() -> Option<&'static str> {
    option_env!("A2C_RELEASE_KEY").filter(|k| !k.trim().is_empty() && !k.starts_with('@'))
}

/// Why `self update` did not replace a2c, and what to do.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct UpdateError {
    message: String,
    hint: Option<String>,
}

impl UpdateError {
    fn new(message: impl Into<String>, hint: impl Into<Option<String>>) -> Self {
        Self {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

impl crate::util::hint::Hint for UpdateError {
    fn hint(&self) -> Option<String> {
        self.hint.clone()
    }
}

/// Where releases are read from.
#[derive(Debug, Clone)]
enum Base {
    Url(Url),
    Dir(PathBuf),
}

impl Base {
    fn parse(text: &str, start: &Path) -> Result<Self, UpdateError> {
        let text = text.trim().trim_end_matches('/');
        if text.starts_with("file://") {
            let url = Url::parse(text).map_err(|e| bad_base(text, &e.to_string()))?;
            let dir = url.to_file_path().map_err(|()| bad_base(text, "not a local path"))?;
            return Ok(Self::Dir(dir));
        }
        if text.starts_with("http://") || text.starts_with("https://") {
            let url = Url::parse(&format!("{text}/")).map_err(|e| bad_base(text, &e.to_string()))?;
            return Ok(Self::Url(url));
        }
        if text.contains("://") {
            return Err(bad_base(
                text,
                "only https://, http://, file:// and directories hold releases",
            ));
        }
        Ok(Self::Dir(start.join(text)))
    }

    fn shown(&self) -> String {
        match self {
            Self::Url(u) => crate::util::redact::shown_url(u).trim_end_matches('/').to_string(),
            Self::Dir(d) => d.display().to_string(),
        }
    }

    fn name(&self, rel: &str) -> String {
        format!("{}/{rel}", self.shown())
    }

    /// The file `rel` below the base, at most [`MAX_RELEASE_FILE`] bytes.
    fn read(&self, rel: &str, net: &crate::net::LazyClient) -> Result<Vec<u8>, UpdateError> {
        let layout = "the release base (--from or A2C_INSTALL_BASE) holds a2c's releases: `latest`, then VERSION/SHA256SUMS, its .minisig and the archives";
        let cannot = |why: String| {
            UpdateError::new(
                format!("cannot read `{}`: {why}", self.name(rel)),
                Some(format!("check that {layout}")),
            )
        };
        match self {
            Self::Url(base) => {
                let url = base.join(rel).map_err(|e| cannot(e.to_string()))?;
                let doc = net.fetch(&url).map_err(|e| {
                    // A server's answer (a 404: no such release) or the network (retried already).
                    let hint = match &e {
                        crate::net::HttpError::Status { .. } => format!("check that {layout}"),
                        _ => format!("run the command again (a2c already retried it; A2C_HTTP_RETRIES sets how often); if it fails again, check that {layout}"),
                    };
                    UpdateError::new(format!("cannot read `{}`: {e}", self.name(rel)), Some(hint))
                })?;
                Ok(doc.body.to_vec())
            }
            Self::Dir(dir) => {
                let path = dir.join(rel);
                let file = std::fs::File::open(&path).map_err(|e| cannot(e.to_string()))?;
                let mut bytes = Vec::new();
                file.take(MAX_RELEASE_FILE + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| cannot(e.to_string()))?;
                if bytes.len() as u64 > MAX_RELEASE_FILE {
                    return Err(cannot(format!("larger than {MAX_RELEASE_FILE} bytes")));
                }
                Ok(bytes)
            }
        }
    }
}

fn bad_base(text: &str, why: &str) -> UpdateError {
    UpdateError::new(
        format!("`{text}` is no release base: {why}"),
        Some("give an https:// URL, a file:// URL or a directory (--from, or A2C_INSTALL_BASE)".into()),
    )
}

/// What the environment says of releases (read by the session).
#[derive(Debug, Clone, Default)]
pub struct ReleaseSettings {
    /// `A2C_INSTALL_BASE`: where releases are read from.
    pub base: Option<String>,
    /// `A2C_RELEASE_KEY`: the key they are verified with, when the binary holds none.
    pub key: Option<String>,
}

/// What `self update` was asked.
#[derive(Debug, Clone, Default)]
pub struct UpdateRequest {
    /// The version to install (the newest, `BASE/latest`, when `None`).
    pub to: Option<String>,
    /// The release base (`--from`): a URL, a `file://` URL or a directory.
    pub from: Option<String>,
    pub allow_downgrade: bool,
    /// Verify everything, replace nothing.
    pub dry_run: bool,
}

/// What `self update` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Updated {
    /// Already that version: nothing replaced.
    Current { version: String },
    /// Verified and (unless a dry run) swapped in.
    Replaced {
        from: String,
        to: String,
        exe: PathBuf,
        archive: String,
        key_id: String,
        dry_run: bool,
    },
}

/// The archive names this binary's target may take, best first: its own, then the release's
/// equivalent (a Linux build takes the static musl one; Windows either toolchain's).
fn archive_targets() -> Vec<&'static str> {
    let mut out = vec![BUILD_TARGET];
    let equivalent: &[&'static str] = match BUILD_TARGET {
        t if t.starts_with("x86_64-unknown-linux") => &["x86_64-unknown-linux-musl"],
        t if t.starts_with("aarch64-unknown-linux") => &["aarch64-unknown-linux-musl"],
        t if t.starts_with("x86_64-pc-windows") => &["x86_64-pc-windows-msvc", "x86_64-pc-windows-gnu"],
        _ => &[],
    };
    out.extend(equivalent.iter().filter(|t| **t != BUILD_TARGET));
    out
}

fn parse_version(text: &str, what: &str) -> Result<Version, UpdateError> {
    Version::parse(text.trim()).map_err(|e| {
        UpdateError::new(
            format!("{what} `{}` is no version: {e}", text.trim()),
            Some("give a version as X.Y.Z (`a2c self update --to 1.4.0`)".into()),
        )
    })
}

/// Replaces the running a2c with the release `request` names, verified first.
pub fn update(
    request: &UpdateRequest,
    release: &ReleaseSettings,
    network: &crate::net::Network,
    start: &Path,
    say: &dyn Fn(&str),
) -> Result<Updated, UpdateError> {
    let installed =
        Installed::detect().map_err(|e| UpdateError::new(format!("cannot find the running a2c: {e}"), None))?;
    let exe = match &installed {
        Installed::Standalone(exe) => exe.clone(),
        Installed::Python { exe, .. } | Installed::Cargo { exe } => {
            let by = match &installed {
                Installed::Python { env, .. } => {
                    format!("into the Python environment `{}` (pip, pipx or uv)", env.display())
                }
                _ => "by `cargo install`".to_string(),
            };
            return Err(UpdateError::new(
                format!(
                    "`{}` was installed {by}: a2c does not replace it behind that tool's back",
                    exe.display()
                ),
                Some(format!("run `{}`", installed.update_command(request.to.as_deref()))),
            ));
        }
        Installed::Checkout { exe, root } => {
            return Err(UpdateError::new(
                format!(
                    "`{}` was built in the checkout `{}`: a2c does not replace a build",
                    exe.display(),
                    root.display()
                ),
                Some(format!(
                    "update the checkout and build again (`{}`), or install a release with install-a2c.sh",
                    installed.update_command(None)
                )),
            ));
        }
    };
    let chosen = request.from.clone().or_else(|| release.base.clone());
    let base_text = chosen.clone().or_else(|| built_in_base().map(str::to_string)).ok_or_else(|| {
        UpdateError::new(
            "this a2c knows no release base: it was not built by a release build",
            Some("give the URL or directory that holds a2c's releases: `a2c self update --from DIR` or A2C_INSTALL_BASE".into()),
        )
    })?;
    let base = Base::parse(&base_text, start)?;
    let key = match built_in_key() {
        Some(k) => k.to_string(),
        None => release.key.clone().ok_or_else(|| {
            UpdateError::new(
                "this a2c holds no release key (it was not built by a release build), so no release can be verified",
                Some("set A2C_RELEASE_KEY to the release key's public line (the second line of its .pub file), or install with install-a2c.sh".into()),
            )
        })?,
    };
    if matches!(base, Base::Url(_)) && network.offline {
        return Err(UpdateError::new(
            format!("`{}` is on the network, and a2c runs offline", base.shown()),
            Some("give a directory that mirrors the releases: `a2c self update --from DIR`".into()),
        ));
    }
    // Credentials go only to a base the user named.
    let bound: Vec<Url> = match (&base, &chosen) {
        (Base::Url(u), Some(_)) => vec![u.clone()],
        _ => Vec::new(),
    };
    let net = network.client(bound);
    let current = parse_version(crate::A2C_VERSION, "this a2c's version")?;
    let wanted = match &request.to {
        Some(v) => parse_version(v, "the version")?,
        None => {
            let latest = base.read("latest", &net)?;
            parse_version(&String::from_utf8_lossy(&latest), &format!("`{}`", base.name("latest")))?
        }
    };
    if wanted == current {
        return Ok(Updated::Current {
            version: current.to_string(),
        });
    }
    if wanted < current && !request.allow_downgrade {
        return Err(UpdateError::new(
            format!("{wanted} is older than this a2c ({current}): not a downgrade unless asked"),
            Some(format!("run `a2c self update --to {wanted} --allow-downgrade`")),
        ));
    }
    say(&format!("verifying a2c {wanted} from {}", base.shown()));
    let sums_rel = format!("{wanted}/SHA256SUMS");
    let sums = base.read(&sums_rel, &net)?;
    let signature = base.read(&format!("{sums_rel}.minisig"), &net)?;
    let signature = String::from_utf8_lossy(&signature);
    let key_id = verify(&base.name(&sums_rel), &sums, &signature, &key)?;
    let sums = String::from_utf8_lossy(&sums);
    let (archive, digest) = archive_targets()
        .into_iter()
        .find_map(|t| {
            let ext = if t.contains("windows") { "zip" } else { "tar.gz" };
            let name = format!("a2c-{wanted}-{t}.{ext}");
            listed(&sums, &name).map(|d| (name, d))
        })
        .ok_or_else(|| {
            UpdateError::new(
                format!("`{}` lists no archive of {wanted} for {BUILD_TARGET}", base.name(&sums_rel)),
                Some("pick a version built for this machine (`a2c self update --to X.Y.Z`), or build it with release/build.sh".into()),
            )
        })?;
    let bytes = base.read(&format!("{wanted}/{archive}"), &net)?;
    let got = crate::util::digest::Sha256::of(&bytes).to_string();
    if got != digest {
        return Err(UpdateError::new(
            format!(
                "`{}` has sha256 {got}, its signed SHA256SUMS says {digest}: nothing was replaced",
                base.name(&format!("{wanted}/{archive}"))
            ),
            Some("download again later; if it persists, the release base serves a damaged or altered archive: tell whoever runs it".into()),
        ));
    }
    let top = archive
        .strip_suffix(".tar.gz")
        .or_else(|| archive.strip_suffix(".zip"))
        .unwrap_or(&archive);
    let binary = binary_of(&bytes, &archive, top).map_err(|why| {
        UpdateError::new(
            format!("`{archive}` {why}: nothing was replaced"),
            Some("the archive is not one release/build.sh packs: report it to whoever publishes the release".into()),
        )
    })?;
    // The new binary, beside the running one (same file system: the swap is a rename), run once.
    let dir = exe.parent().unwrap_or(Path::new("."));
    let staged = stage(dir, &binary).map_err(|e| {
        UpdateError::new(
            format!("cannot write the new a2c into `{}`: {e}", dir.display()),
            Some(format!(
                "make `{}` writable, or reinstall a2c with install-a2c.sh --prefix DIR",
                dir.display()
            )),
        )
    })?;
    // Its environment kept: Windows needs SystemRoot and the like to start a program at all.
    let said = std::process::Command::new(staged.path())
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let says_version = said
        .as_deref()
        .ok()
        .and_then(|s| s.split_whitespace().nth(1))
        .is_some_and(|v| v == wanted.to_string());
    if !says_version {
        let what = match &said {
            Ok(s) => format!("answers `{}`", s.trim()),
            Err(e) => format!("does not run here ({e})"),
        };
        return Err(UpdateError::new(
            format!("the a2c in `{archive}` {what}, not `a2c {wanted}`: nothing was replaced"),
            Some("the archive is not the release it is named for: report it to whoever publishes the release".into()),
        ));
    }
    if !request.dry_run {
        self_replace::self_replace(staged.path()).map_err(|e| {
            UpdateError::new(
                format!("cannot replace `{}`: {e}; a2c is as it was", exe.display()),
                Some(format!("make `{}` writable, then run the command again", dir.display())),
            )
        })?;
    }
    Ok(Updated::Replaced {
        from: current.to_string(),
        to: wanted.to_string(),
        exe,
        archive,
        key_id,
        dry_run: request.dry_run,
    })
}

/// The key id that signed `sums` (named `shown`): the release key's, or why not.
fn verify(shown: &str, sums: &[u8], signature: &str, key: &str) -> Result<String, UpdateError> {
    use crate::registry::signing::{SignError, public_key_id, verify};
    let release = public_key_id(key).map_err(|_| {
        UpdateError::new(
            format!("the release key `{key}` is no minisign public key"),
            Some("set A2C_RELEASE_KEY to the second line of the release key's .pub file".into()),
        )
    })?;
    let why = match verify(shown, sums, Some(signature), &[key.to_string()]) {
        Ok(id) => return Ok(id),
        Err(SignError::UntrustedKey { key_id, .. }) => {
            format!("it is signed by key {key_id}, not by the release key {release}")
        }
        Err(SignError::BadSignature { .. }) => {
            format!("its signature by the release key {release} does not verify: the file or its signature was altered")
        }
        Err(SignError::BadSignatureFile { reason, .. }) => format!("its .minisig is no minisign signature ({reason})"),
        Err(e) => e.to_string(),
    };
    Err(UpdateError::new(
        format!("`{shown}` is refused: {why}; nothing was replaced"),
        Some("make sure the release base holds a2c's own releases (a mirror copies each SHA256SUMS and its .minisig unchanged)".into()),
    ))
}

/// The sha256 `sums` (a SHA256SUMS text) gives `name`.
fn listed(sums: &str, name: &str) -> Option<String> {
    sums.lines().find_map(|line| {
        let (digest, file) = line.split_once(char::is_whitespace)?;
        let file = file.trim_start().trim_start_matches('*');
        (file == name && digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| digest.to_ascii_lowercase())
    })
}

/// The bytes of `TOP/a2c` (`a2c.exe` in a zip) in the archive `bytes`.
fn binary_of(bytes: &[u8], archive: &str, top: &str) -> Result<Vec<u8>, String> {
    let limit = MAX_RELEASE_FILE;
    let mut out = Vec::new();
    if archive.ends_with(".zip") {
        let want = format!("{top}/a2c.exe");
        let mut zip =
            zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| format!("is no zip archive ({e})"))?;
        let mut entry = zip.by_name(&want).map_err(|_| format!("holds no `{want}`"))?;
        if !entry.is_file() {
            return Err(format!("holds `{want}`, but not as a file"));
        }
        (&mut entry)
            .take(limit + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("cannot be read ({e})"))?;
    } else {
        let want = format!("{top}/a2c");
        let gz = flate2::read::GzDecoder::new(bytes);
        let mut tar = tar::Archive::new(gz);
        let entries = tar.entries().map_err(|e| format!("is no tar.gz archive ({e})"))?;
        let mut found = false;
        for entry in entries {
            let mut entry = entry.map_err(|e| format!("cannot be read ({e})"))?;
            let path = entry.path().map_err(|e| format!("cannot be read ({e})"))?;
            if path.to_str() != Some(want.as_str()) {
                continue;
            }
            if !entry.header().entry_type().is_file() {
                return Err(format!("holds `{want}`, but not as a file"));
            }
            (&mut entry)
                .take(limit + 1)
                .read_to_end(&mut out)
                .map_err(|e| format!("cannot be read ({e})"))?;
            found = true;
            break;
        }
        if !found {
            return Err(format!("holds no `{want}`"));
        }
    }
    if out.len() as u64 > limit {
        return Err(format!("holds an a2c larger than {limit} bytes"));
    }
    Ok(out)
}

/// `binary` written to a new file in `dir`, executable (removed when dropped).
fn stage(dir: &Path, binary: &[u8]) -> std::io::Result<tempfile::NamedTempFile> {
    use std::io::Write;
    let mut file = tempfile::Builder::new()
        .prefix(".a2c-update.")
        .suffix(std::env::consts::EXE_SUFFIX)
        .tempfile_in(dir)?;
    file.write_all(binary)?;
    file.as_file().sync_all()?;
    crate::util::platform::set_file_mode(file.as_file(), 0o755)?;
    // Closed for writing, kept on disk: a file still open for writing cannot be run (ETXTBSY).
    let (file, path) = file.into_parts();
    drop(file);
    Ok(tempfile::NamedTempFile::from_parts(std::fs::File::open(&path)?, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_is_found_by_its_exact_name_only() {
        let d = "ab".repeat(32);
        let sums =
            format!("{d}  a2c-1.0.0-x86_64-unknown-linux-musl.tar.gz\n{d} *a2c-1.0.0-x.zip\nzz  a2c-1.0.0-y.tar.gz\n");
        assert_eq!(
            listed(&sums, "a2c-1.0.0-x86_64-unknown-linux-musl.tar.gz"),
            Some(d.clone())
        );
        assert_eq!(listed(&sums, "a2c-1.0.0-x.zip"), Some(d));
        assert_eq!(listed(&sums, "a2c-1.0.0-y.tar.gz"), None, "no digest");
        assert_eq!(listed(&sums, "a2c-1.0.0-x86_64-unknown-linux-musl.tar"), None);
    }
}
