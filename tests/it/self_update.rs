//! `a2c self update`, against releases the tests build with the real tools (tar, sha256sum,
//! `a2c key generate`, `a2c sign --file`, as installer.rs does) and serve on loopback: a2c
//! replaces itself only with what the release key signed, SHA256SUMS lists and answers
//! `--version` with the version asked for; every refusal leaves the running a2c as it was.
//!
//! The a2c updated is a copy of the test build in a `bin` directory of its own (as
//! install-a2c.sh puts one). The release's a2c is a two-line stand-in for another build: it
//! answers `--version` with the release's version and runs the test build otherwise (a real
//! second build of another version would cost minutes).

use std::path::PathBuf;
use std::process::Command;

use crate::installer::{TARGET, release_of, sign_of};
use crate::support::TestContext;
use crate::support::http_server::{Fault, Server as HttpServer};

const NEWER: &str = "9.1.0";
const OLDER: &str = "0.0.9";

/// The release's a2c of `version`: its `--version`, else the test build.
fn release_binary(version: &str) -> Vec<u8> {
    format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'a2c {version} (release)'; exit 0; fi\nexec '{}' \"$@\"\n",
        env!("CARGO_BIN_EXE_a2c")
    )
    .into_bytes()
}

/// The a2c being updated: a copy of the test build in `home/bin`.
fn installed_a2c(t: &TestContext) -> PathBuf {
    let bin = t.path("home/bin/a2c");
    fs_err::create_dir_all(bin.parent().unwrap()).unwrap();
    fs_err::copy(env!("CARGO_BIN_EXE_a2c"), &bin).unwrap();
    bin
}

/// Runs the a2c at `bin` with the test's environment and `env`.
fn run_at<V: AsRef<str>>(t: &TestContext, bin: &PathBuf, args: &[&str], env: &[(&str, V)]) -> crate::support::Run {
    let mut cmd = Command::new(bin);
    t.environment(&mut cmd);
    cmd.current_dir(t.path(".")).args(args).env("A2C_HTTP_RETRIES", "1");
    for (k, v) in env {
        cmd.env(k, v.as_ref());
    }
    crate::support::Run::from_output(cmd.output().unwrap(), &t.root)
}

/// What a run printed, with the server's address and the archive's digests masked.
fn masked(run: &crate::support::Run, base: &str) -> String {
    let text = run.transcript().replace(base.trim_end_matches('/'), "[BASE]");
    let digests = regex::Regex::new(r"\b[0-9a-f]{64}\b").unwrap();
    let keys = regex::Regex::new(r"\b[0-9A-F]{16}\b").unwrap();
    let builds = regex::Regex::new(r"a2c ([0-9]+\.[0-9]+\.[0-9]+) \([^)]*\)").unwrap();
    let text = digests.replace_all(&text, "[SHA256]");
    let text = builds.replace_all(&text, "a2c $1 ([BUILD])");
    keys.replace_all(&text, "[KEY ID]").into_owned()
}

/// The files in `home/bin`: the a2c alone, no staged copy left behind.
fn bin_dir(t: &TestContext) -> Vec<String> {
    let mut names: Vec<String> = fs_err::read_dir(t.path("home/bin"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn setup() -> (TestContext, String, PathBuf) {
    let t = TestContext::new();
    let key = release_of(&t, "rel", "release", NEWER, &release_binary(NEWER));
    let bin = installed_a2c(&t);
    (t, key, bin)
}

/// The newest release, from a loopback server: a dry run verifies and replaces nothing; the
/// update verifies and swaps the binary in; asked again, there is nothing to do.
#[test]
fn self_update_installs_what_the_release_key_signed() {
    let (t, key, bin) = setup();
    let server = HttpServer::start(t.path("rel"));
    let env = [("A2C_INSTALL_BASE", server.url()), ("A2C_RELEASE_KEY", key)];
    let before = fs_err::read(&bin).unwrap();
    let mut transcripts = Vec::new();
    let dry = run_at(&t, &bin, &["self", "update", "--dry-run"], &env);
    transcripts.push(format!("## --dry-run\n{}", masked(&dry, &server.url())));
    assert_eq!(fs_err::read(&bin).unwrap(), before, "a dry run replaced a2c");
    let run = run_at(&t, &bin, &["self", "update"], &env);
    transcripts.push(format!("## update\n{}", masked(&run, &server.url())));
    run.success();
    assert_eq!(fs_err::read(&bin).unwrap(), release_binary(NEWER));
    assert_eq!(bin_dir(&t), ["a2c"]);
    let version = Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        format!("a2c {NEWER} (release)\n")
    );
    // The stand-in runs the test build for anything else, which is 0.1.0 and sees 9.1.0 as
    // newer: the version check is the stand-in's `--version`, done above.
    insta::assert_snapshot!(transcripts.join("\n"));
}

/// What a refusal test does to the release (or the server) before a2c updates itself.
type Spoil<'a> = Box<dyn Fn(&TestContext) + 'a>;

/// A tampered archive, a tampered SHA256SUMS, a signature by another key, a truncated download
/// and an archive whose a2c is not the version it is named for are each refused, with the
/// running a2c byte for byte as it was and nothing left beside it.
#[test]
fn self_update_refuses_what_the_release_key_did_not_sign() {
    let (t, key, bin) = setup();
    let server = HttpServer::start(t.path("rel"));
    let env = [("A2C_INSTALL_BASE", server.url()), ("A2C_RELEASE_KEY", key)];
    let archive = format!("{NEWER}/a2c-{NEWER}-{TARGET}.tar.gz");
    let pristine: Vec<(String, Vec<u8>)> = [
        archive.clone(),
        format!("{NEWER}/SHA256SUMS"),
        format!("{NEWER}/SHA256SUMS.minisig"),
    ]
    .into_iter()
    .map(|f| {
        let bytes = fs_err::read(t.path(&format!("rel/{f}"))).unwrap();
        (f, bytes)
    })
    .collect();
    let before = fs_err::read(&bin).unwrap();
    let cases: Vec<(&str, Spoil<'_>)> = vec![
        (
            // A well-formed archive of an a2c that answers the right version, but not the one
            // SHA256SUMS lists: only the digest tells.
            "a tampered archive",
            Box::new(|t: &TestContext| {
                let sums = t.path(&format!("rel/{NEWER}/SHA256SUMS"));
                let signature = t.path(&format!("rel/{NEWER}/SHA256SUMS.minisig"));
                let (kept, kept_signature) = (fs_err::read(&sums).unwrap(), fs_err::read(&signature).unwrap());
                let mut altered = release_binary(NEWER);
                altered.extend_from_slice(b"# altered\n");
                release_of(t, "rel", "release", NEWER, &altered);
                fs_err::write(&sums, kept).unwrap();
                fs_err::write(&signature, kept_signature).unwrap();
            }),
        ),
        (
            "a tampered SHA256SUMS",
            Box::new(|t: &TestContext| {
                let path = t.path(&format!("rel/{NEWER}/SHA256SUMS"));
                let text = fs_err::read_to_string(&path).unwrap();
                fs_err::write(&path, format!("{}{}", "0".repeat(64), &text[64..])).unwrap();
            }),
        ),
        (
            "a signature by another key",
            Box::new(|t: &TestContext| sign_of(t, "rel", "other", NEWER)),
        ),
        (
            "an a2c that is not the version named",
            Box::new(|t: &TestContext| {
                release_of(t, "rel", "release", NEWER, &release_binary("9.0.0"));
            }),
        ),
        // Last: the faults a retry does not consume stay with the server.
        (
            "a truncated download",
            Box::new(|_: &TestContext| server.fault(&format!("/{archive}"), &[const { Fault::Truncate(100) }; 4])),
        ),
    ];
    let mut transcripts = Vec::new();
    for (label, spoil) in &cases {
        for (f, bytes) in &pristine {
            fs_err::write(t.path(&format!("rel/{f}")), bytes).unwrap();
        }
        spoil(&t);
        let asked = server.count();
        let run = run_at(&t, &bin, &["self", "update"], &env);
        assert_eq!(run.code, 1, "{label}: {}", run.transcript());
        if *label == "a truncated download" {
            // Asked once and retried once (A2C_HTTP_RETRIES=1), as every request a2c makes.
            assert_eq!(server.count_of_since(&format!("/{archive}"), asked), 2, "{label}");
        }
        assert_eq!(fs_err::read(&bin).unwrap(), before, "{label}: a2c was changed");
        assert_eq!(bin_dir(&t), ["a2c"], "{label}");
        transcripts.push(format!("## {label}\n{}", masked(&run, &server.url())));
    }
    insta::assert_snapshot!(transcripts.join("\n"));
}

/// An older version is refused unless asked for; the printed hint, run as printed, installs
/// it. A directory serves offline; a URL offline is refused. A release key is required.
#[test]
fn self_update_downgrades_only_when_asked_and_works_offline_from_a_directory() {
    let t = TestContext::new();
    let key = release_of(&t, "rel", "release", OLDER, &release_binary(OLDER));
    let bin = installed_a2c(&t);
    let base = t.path("rel").display().to_string();
    let mut transcripts = Vec::new();
    let no_key = run_at::<&str>(&t, &bin, &["self", "update", "--from", &base], &[]);
    transcripts.push(format!("## no release key\n{}", masked(&no_key, &base)));
    let env = [("A2C_RELEASE_KEY", key.as_str())];
    let refused = run_at(&t, &bin, &["--offline", "self", "update", "--from", &base], &env);
    transcripts.push(format!("## older\n{}", masked(&refused, &base)));
    assert_eq!(refused.code, 1);
    let hint = refused
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("hint: run `"))
        .unwrap();
    let hint = hint.strip_suffix('`').unwrap();
    let mut args: Vec<&str> = hint.split(' ').skip(1).collect();
    args.splice(0..0, ["--offline"]);
    args.extend(["--from", &base]);
    let ran = run_at(&t, &bin, &args, &env);
    transcripts.push(format!(
        "## the hint, as printed (offline, from a directory)\n{}",
        masked(&ran, &base)
    ));
    ran.success();
    assert_eq!(fs_err::read(&bin).unwrap(), release_binary(OLDER));
    // The stand-in runs the test build for anything but `--version`: a fresh copy again.
    let bin = installed_a2c(&t);
    let server = HttpServer::start(t.path("rel"));
    let offline = run_at(
        &t,
        &bin,
        &["--offline", "self", "update", "--from", &server.url()],
        &env,
    );
    transcripts.push(format!("## a URL offline\n{}", masked(&offline, &server.url())));
    assert_eq!(offline.code, 1);
    insta::assert_snapshot!(transcripts.join("\n"));
}

/// An a2c in a Python environment (pip, pipx, uv: its `pyvenv.cfg`) or cargo's `bin` (cargo's
/// `.crates.toml` in its home) is left to that tool: the refusal names the command that
/// updates it, and the file is untouched.
#[test]
fn self_update_leaves_an_a2c_another_tool_installed_to_that_tool() {
    let (t, key, _) = setup();
    let mut transcripts = Vec::new();
    for (label, dir, marker) in [
        ("pipx", "home/.local/pipx/venvs/a2c", Some("pyvenv.cfg")),
        ("cargo", "home/.cargo", Some(".crates.toml")),
    ] {
        let bin = t.path(&format!("{dir}/bin/a2c"));
        fs_err::create_dir_all(bin.parent().unwrap()).unwrap();
        fs_err::copy(env!("CARGO_BIN_EXE_a2c"), &bin).unwrap();
        if let Some(m) = marker {
            t.write(&format!("{dir}/{m}"), "# what the tool that installed it keeps\n");
        }
        let before = fs_err::read(&bin).unwrap();
        let base = t.path("rel").display().to_string();
        let env = [("A2C_RELEASE_KEY", key.as_str())];
        let run = run_at(&t, &bin, &["self", "update", "--from", &base], &env);
        assert_eq!(run.code, 1, "{label}");
        assert_eq!(fs_err::read(&bin).unwrap(), before, "{label}");
        let version = run_at(&t, &bin, &["self", "version"], &env);
        transcripts.push(format!(
            "## {label}\n{}\n{}",
            masked(&run, &base),
            masked(&version, &base)
        ));
    }
    insta::assert_snapshot!(transcripts.join("\n"));
}

/// A pinned method that needs a newer a2c: install and doctor say the command that updates
/// this a2c (installed on its own: `a2c self update --to X.Y.Z`), and that command, run as
/// printed, installs the release it names.
#[test]
fn a_method_needing_a_newer_a2c_hints_self_update_and_the_hint_works() {
    let (t, key, bin) = setup();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.publish_needing("reg", "6.0.0", NEWER);
    t.canonical_repo("w/p/future", "6.0.0");
    run_at::<&str>(&t, &bin, &["-C", "w", "lock"], &[]).success();
    let install = run_at::<&str>(&t, &bin, &["-C", "w", "install"], &[]);
    assert_eq!(install.code, 1, "{}", install.transcript());
    let doctor = run_at::<&str>(&t, &bin, &["-C", "w", "doctor", "--json"], &[]);
    let doc = doctor.json_failure();
    let hint = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "a2c-too-old")
        .map(|f| f["hint"].as_str().unwrap().to_string())
        .unwrap();
    assert_eq!(
        hint,
        format!("run `a2c self update --to {NEWER}`, then run `a2c install`")
    );
    let server = HttpServer::start(t.path("rel"));
    let printed = install
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("hint: run `"))
        .unwrap();
    let command = printed.split('`').next().unwrap();
    let args: Vec<&str> = command.split(' ').skip(1).collect();
    let env = [("A2C_INSTALL_BASE", server.url()), ("A2C_RELEASE_KEY", key)];
    let ran = run_at(&t, &bin, &args, &env);
    ran.success();
    assert_eq!(fs_err::read(&bin).unwrap(), release_binary(NEWER));
    insta::assert_snapshot!(format!(
        "## install\n{}\n## the hint, as printed\n{}",
        masked(&install, &server.url()),
        masked(&ran, &server.url())
    ));
}
