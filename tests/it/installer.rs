//! `install-a2c.sh`, the one-line installer, against releases the tests build with the real
//! tools (tar, sha256sum, `a2c key generate`, `a2c sign --file`) and serve on loopback: it
//! installs only what the release key signed and SHA256SUMS lists, with minisign or with
//! OpenSSL 3, over curl or wget, from a URL, a mirror, a `file://` URL or a directory; every
//! refusal leaves the a2c already installed as it was.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::TestContext;
use crate::support::http_server::{Fault, Server as HttpServer};

/// The target the installer picks on this machine (the tests run on x86_64 Linux).
pub(crate) const TARGET: &str = "x86_64-unknown-linux-musl";
const VERSION: &str = "9.1.0";

/// A release of `VERSION` in `dir` (`latest`, `VERSION/SHA256SUMS`, its signature by the key
/// `keys/NAME`, and the archive holding `binary` as `a2c`): the release key's public line.
fn release(t: &TestContext, dir: &str, key: &str, binary: &[u8]) -> String {
    release_of(t, dir, key, VERSION, binary)
}

/// A release of `version` in `dir`, as [`release`] makes one; `latest` names it.
pub(crate) fn release_of(t: &TestContext, dir: &str, key: &str, version: &str, binary: &[u8]) -> String {
    let staging = format!("staging/a2c-{version}-{TARGET}");
    t.write(&format!("{staging}/a2c"), "");
    fs_err::write(t.path(&format!("{staging}/a2c")), binary).unwrap();
    mode_755(&t.path(&format!("{staging}/a2c")));
    t.write(&format!("{staging}/LICENSE"), "MIT\n");
    t.write(&format!("{staging}/README.md"), "a2c\n");
    let out = t.path(&format!("{dir}/{version}"));
    fs_err::create_dir_all(&out).unwrap();
    let archive = format!("a2c-{version}-{TARGET}.tar.gz");
    let ok = Command::new("tar")
        .args(["-czf"])
        .arg(out.join(&archive))
        .arg("-C")
        .arg(t.path("staging"))
        .arg(format!("a2c-{version}-{TARGET}"))
        .status()
        .unwrap()
        .success();
    assert!(ok, "tar");
    let sums = Command::new("sha256sum")
        .arg(&archive)
        .current_dir(&out)
        .output()
        .unwrap();
    fs_err::write(out.join("SHA256SUMS"), &sums.stdout).unwrap();
    sign_of(t, dir, key, version);
    t.write(&format!("{dir}/latest"), &format!("{version}\n"));
    public_key(t, key)
}

fn mode_755(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `keys/NAME`, made once (no password), and its public line.
pub(crate) fn public_key(t: &TestContext, name: &str) -> String {
    let secret = format!("keys/{name}");
    if !t.path(&secret).exists() {
        fs_err::create_dir_all(t.path("keys")).unwrap();
        t.ok(".", &["key", "generate", "--no-password", "--out", &secret]);
    }
    let public = fs_err::read_to_string(t.path(&format!("{secret}.pub"))).unwrap();
    public.lines().nth(1).unwrap().to_string()
}

/// Signs `dir`'s SHA256SUMS with `keys/NAME` (`a2c sign --file`).
fn sign(t: &TestContext, dir: &str, name: &str) {
    sign_of(t, dir, name, VERSION)
}

/// Signs the SHA256SUMS of `version` in `dir` with `keys/NAME`.
pub(crate) fn sign_of(t: &TestContext, dir: &str, name: &str, version: &str) {
    public_key(t, name);
    let sums = format!("{dir}/{version}/SHA256SUMS");
    t.ok(".", &["sign", "--file", &sums, "--key", &format!("keys/{name}")]);
}

/// The installer as a release build writes it: the release key put in.
fn installer(t: &TestContext, key: &str) -> PathBuf {
    let text = include_str!("../../install-a2c.sh").replace("@A2C_RELEASE_KEY@", key);
    t.write("install-a2c.sh", &text)
}

/// A PATH of links to the programs the installer may use, less `without`: a machine that
/// lacks minisign, curl or both.
fn path_without(t: &TestContext, without: &[&str]) -> String {
    let dir = t.path(&format!("path-without-{}", without.join("-")));
    fs_err::create_dir_all(&dir).unwrap();
    for tool in [
        "sh",
        "sed",
        "tr",
        "head",
        "wc",
        "dd",
        "od",
        "openssl",
        "awk",
        "cp",
        "mkdir",
        "chmod",
        "mv",
        "rm",
        "tar",
        "gzip",
        "sha256sum",
        "cut",
        "uname",
        "mktemp",
        "cat",
        "grep",
        "curl",
        "wget",
        "minisign",
    ] {
        if without.contains(&tool) {
            continue;
        }
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .unwrap();
        let found = String::from_utf8_lossy(&found.stdout).trim().to_string();
        if !found.is_empty() && !dir.join(tool).exists() {
            std::os::unix::fs::symlink(found, dir.join(tool)).unwrap();
        }
    }
    dir.display().to_string()
}

/// Runs the installer with `base`, `path` and `args`: (exit code, stderr with the test's
/// paths and the server's address masked).
fn install(t: &TestContext, script: &Path, base: &str, path: &str, args: &[&str]) -> (i32, String) {
    let out = Command::new("/bin/sh")
        .arg(script)
        .args(args)
        .env_clear()
        .env("HOME", t.path("home"))
        .env("PATH", path)
        .env("TMPDIR", t.path("tmp"))
        .env("A2C_INSTALL_BASE", base)
        .output()
        .unwrap();
    let masked = String::from_utf8_lossy(&out.stderr)
        .replace(base.trim_end_matches('/'), "[BASE]")
        .replace(&t.root.display().to_string(), "[TMP]");
    // The archive's digest and size follow the build of a2c packed into it.
    let digests = regex::Regex::new(r"\b[0-9a-f]{64}\b").unwrap();
    let sizes = regex::Regex::new(r"with [0-9]+ bytes remaining").unwrap();
    let masked = digests.replace_all(&masked, "[SHA256]");
    let masked = sizes.replace_all(&masked, "with [N] bytes remaining").into_owned();
    (out.status.code().unwrap_or(-1), masked)
}

fn installed(t: &TestContext) -> Option<Vec<u8>> {
    fs_err::read(t.path("home/.local/bin/a2c")).ok()
}

/// Whether minisign, OpenSSL and wget are here (each case runs with one of them), else the
/// SKIPPED line (a failure under CI=true).
fn verifiers_and_downloaders() -> bool {
    for tool in ["minisign", "openssl", "wget"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            crate::support::require_program(&format!("{tool} (apt-get install {tool}; .ci/run does it)"));
            return false;
        }
    }
    true
}

fn setup() -> (TestContext, String) {
    let t = TestContext::new();
    fs_err::create_dir_all(t.path("tmp")).unwrap();
    let binary = fs_err::read(env!("CARGO_BIN_EXE_a2c")).unwrap();
    let key = release(&t, "rel", "release", &binary);
    (t, key)
}

/// The happy path, with each verifier and each downloader: the signed archive's binary is
/// installed and runs; the installer says what it checked and how to put it on PATH.
#[test]
fn the_installer_installs_what_the_release_key_signed() {
    let (t, key) = setup();
    let server = HttpServer::start(t.path("rel"));
    let script = installer(&t, &key);
    let mut transcripts = Vec::new();
    if !verifiers_and_downloaders() {
        return;
    }
    for (label, without) in [
        ("minisign, curl", vec![]),
        ("OpenSSL, curl", vec!["minisign"]),
        ("OpenSSL, wget", vec!["minisign", "curl"]),
    ] {
        let _ = fs_err::remove_file(t.path("home/.local/bin/a2c"));
        let (code, said) = install(&t, &script, &server.url(), &path_without(&t, &without), &[]);
        transcripts.push(format!("## {label}: exit {code}\n{said}"));
        let binary = t.path("home/.local/bin/a2c");
        let version = Command::new(&binary).arg("--version").output().unwrap();
        assert!(version.status.success(), "{label}: {said}");
        assert_eq!(installed(&t).unwrap(), fs_err::read(env!("CARGO_BIN_EXE_a2c")).unwrap());
    }
    insta::assert_snapshot!(transcripts.join("\n"));
}

/// A mirror, a `file://` URL and a plain directory serve the same signed release.
#[test]
fn the_installer_takes_a_mirror_a_file_url_and_a_directory() {
    let (t, key) = setup();
    let script = installer(&t, &key);
    let mirror = HttpServer::start(t.path("rel"));
    let path = path_without(&t, &[]);
    for base in [
        mirror.url(),
        format!("file://{}", t.path("rel").display()),
        t.path("rel").display().to_string(),
    ] {
        let _ = fs_err::remove_file(t.path("home/.local/bin/a2c"));
        let (code, said) = install(
            &t,
            &script,
            &base,
            &path,
            &[
                "--version",
                VERSION,
                "--prefix",
                &t.path("home/.local").display().to_string(),
            ],
        );
        assert_eq!(code, 0, "{base}: {said}");
        assert!(installed(&t).is_some(), "{base}");
    }
}

/// What a refusal test does to the release before the installer runs.
type Spoil<'a> = Box<dyn Fn(&TestContext) + 'a>;

/// A tampered archive, a tampered SHA256SUMS, a signature by another key and a truncated
/// download are each refused, by minisign and by OpenSSL alike, with nothing installed and the
/// a2c already there untouched.
#[test]
fn the_installer_refuses_what_the_release_key_did_not_sign() {
    if !verifiers_and_downloaders() {
        return;
    }
    let (t, key) = setup();
    let server = HttpServer::start(t.path("rel"));
    let script = installer(&t, &key);
    let archive = format!("{VERSION}/a2c-{VERSION}-{TARGET}.tar.gz");
    let sums = t.path(&format!("rel/{VERSION}/SHA256SUMS"));
    let pristine_archive = fs_err::read(t.path(&format!("rel/{archive}"))).unwrap();
    let pristine_sums = fs_err::read(&sums).unwrap();
    let pristine_sig = fs_err::read(t.path(&format!("rel/{VERSION}/SHA256SUMS.minisig"))).unwrap();
    let restore = |t: &TestContext| {
        fs_err::write(t.path(&format!("rel/{archive}")), &pristine_archive).unwrap();
        fs_err::write(&sums, &pristine_sums).unwrap();
        fs_err::write(t.path(&format!("rel/{VERSION}/SHA256SUMS.minisig")), &pristine_sig).unwrap();
    };
    let mut transcripts = Vec::new();
    let cases: Vec<(&str, Spoil<'_>)> = vec![
        (
            "a tampered archive",
            Box::new(|t: &TestContext| {
                let path = t.path(&format!("rel/{archive}"));
                let mut bytes = fs_err::read(&path).unwrap();
                let at = bytes.len() / 2;
                bytes[at] ^= 0xff;
                fs_err::write(&path, bytes).unwrap();
            }),
        ),
        (
            "a tampered SHA256SUMS",
            Box::new(|t: &TestContext| {
                let text = fs_err::read_to_string(t.path(&format!("rel/{VERSION}/SHA256SUMS"))).unwrap();
                let forged = format!("{}{}", "0".repeat(64), &text[64..]);
                fs_err::write(t.path(&format!("rel/{VERSION}/SHA256SUMS")), forged).unwrap();
            }),
        ),
        (
            "a signature by another key",
            Box::new(|t: &TestContext| sign(t, "rel", "other")),
        ),
        (
            "a truncated download",
            Box::new(|_: &TestContext| server.fault(&format!("/{archive}"), &[Fault::Truncate(1000)])),
        ),
    ];
    for (label, spoil) in &cases {
        for (verifier, without) in [("minisign", vec![]), ("OpenSSL", vec!["minisign"])] {
            restore(&t);
            t.write("home/.local/bin/a2c", "the a2c installed before\n");
            spoil(&t);
            let (code, said) = install(&t, &script, &server.url(), &path_without(&t, &without), &[]);
            assert_eq!(
                fs_err::read_to_string(t.path("home/.local/bin/a2c")).unwrap(),
                "the a2c installed before\n",
                "{label} ({verifier})"
            );
            let strays: Vec<_> = fs_err::read_dir(t.path("home/.local/bin"))
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            assert_eq!(strays.len(), 1, "{label} ({verifier}): {strays:?}");
            transcripts.push(format!("## {label}, {verifier}: exit {code}\n{said}"));
        }
    }
    insta::assert_snapshot!(transcripts.join("\n"));
}

/// With neither minisign nor OpenSSL the installer refuses unless told not to check the
/// signature, and then still checks the sha256.
#[test]
fn without_a_verifier_the_signature_is_skipped_only_when_asked() {
    let (t, key) = setup();
    let script = installer(&t, &key);
    let base = t.path("rel").display().to_string();
    let path = path_without(&t, &["minisign", "openssl"]);
    let mut transcripts = Vec::new();
    let (code, said) = install(&t, &script, &base, &path, &[]);
    transcripts.push(format!("## no verifier: exit {code}\n{said}"));
    assert!(installed(&t).is_none());
    let (code, said) = install(&t, &script, &base, &path, &["--no-verify-signature"]);
    transcripts.push(format!("## --no-verify-signature: exit {code}\n{said}"));
    assert!(installed(&t).is_some());
    // A tampered archive is still refused on its sha256.
    fs_err::remove_file(t.path("home/.local/bin/a2c")).unwrap();
    let archive = t.path(&format!("rel/{VERSION}/a2c-{VERSION}-{TARGET}.tar.gz"));
    let mut bytes = fs_err::read(&archive).unwrap();
    bytes[100] ^= 0xff;
    fs_err::write(&archive, bytes).unwrap();
    let (code, said) = install(&t, &script, &base, &path, &["--no-verify-signature"]);
    transcripts.push(format!("## --no-verify-signature, tampered: exit {code}\n{said}"));
    assert!(installed(&t).is_none());
    insta::assert_snapshot!(transcripts.join("\n"));
}
