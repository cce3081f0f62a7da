//! Signed indexes — keys, signatures, pinning and fail-closed enforcement, and
//! interoperability with the real `minisign` CLI.

use crate::support::{TestContext, layout, require_program, succeeds};
use std::process::Command;

use crate::support::assert_contains;
use crate::support::http_server::Server;

/// `a2c key generate --out <name>`: the public key line.
fn key(t: &TestContext, name: &str) -> String {
    let run = t.run(".", &["key", "generate", "--out", name, "--no-password", "--json"]);
    run.json()["public_key"].as_str().unwrap().to_string()
}

/// A method tree of `version` packed into `reg`, signed with `keys/a2c.key`.
fn pack_signed(t: &TestContext, version: &str) {
    let tree = format!("trees/{version}");
    t.method_tree(&tree, version);
    let run = t.pack_run(&tree, version, "reg", &["--sign", "keys/a2c.key"]);
    run.success();
    // `pack --sign` says that it signed, and with which key.
    run.says("signed the index with `");
}

/// A superbuild `w` with one member pinning 1.0.0, its marker naming `registry` and trusting
/// `keys`.
fn workspace(t: &TestContext, registry: &str, keys: &[&str]) {
    let list = keys.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ");
    t.superbuild(
        "w",
        &format!("members: [\"p/*\"]\nregistry: {registry}\ntrusted_keys: [{list}]\n"),
    );
    t.canonical_repo("w/p/app", "1.0.0");
}

#[test]
fn a_pinned_key_must_have_signed_the_index_before_anything_in_it_is_trusted() {
    let t = TestContext::new();
    let public = key(&t, "keys/a2c.key");
    pack_signed(&t, "1.0.0");
    assert!(t.path("reg/index/esys/a2c.json.minisig").is_file());
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs_err::metadata(t.path("keys/a2c.key")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the secret key is private");
    }
    workspace(&t, "../reg", &[&public]);
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    // A tampered index: refused before any digest in it is used.
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    let index = fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap();
    t.write("reg/index/esys/a2c.json", &index.replace("\"size\"", " \"size\""));
    let run = t.run("w", &["lock"]);
    insta::assert_snapshot!("tampered", run.error_transcript());
    assert!(!t.path(&layout::lock("w")).exists(), "nothing was locked");
    // Unsigned: refused.
    t.write("reg/index/esys/a2c.json", &index);
    fs_err::remove_file(t.path("reg/index/esys/a2c.json.minisig")).unwrap();
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!("unsigned", run.error_transcript());
    // Signed by a key the workspace does not pin: refused, naming the key id.
    key(&t, "keys/other.key");
    t.run(".", &["sign", "--registry", "reg", "--key", "keys/other.key"])
        .success();
    let run = t.run("w", &["lock"]);
    run.failure();
    run.says("which the workspace does not trust");
    // A yank changes the index: without a key it says the signature is stale; with --sign it
    // re-signs.
    let run = t.ok(".", &["yank", "1.0.0", "--registry", "reg"]);
    run.says("is signed and changed: re-sign it");
    t.run(
        ".",
        &[
            "yank",
            "1.0.0",
            "--registry",
            "reg",
            "--undo",
            "--sign",
            "keys/other.key",
        ],
    )
    .success();
    // Rotation: trusting both keys accepts it.
    let other = fs_err::read_to_string(t.path("keys/other.key.pub")).unwrap();
    let other = other.lines().nth(1).unwrap().to_string();
    workspace(&t, "../reg", &[&public, &other]);
    t.run("w", &["lock"]).success();
    // Nothing pinned: behaviour is unchanged (unsigned indexes are read).
    fs_err::remove_file(t.path("reg/index/esys/a2c.json.minisig")).unwrap();
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    workspace(&t, "../reg", &[]);
    t.run("w", &["lock"]).success();
}

#[test]
fn a_bad_key_in_the_marker_is_refused_with_its_line() {
    let t = TestContext::new();
    t.superbuild("w", "trusted_keys: [\"not-a-key\"]\n");
    let run = t.run("w", &["workspace", "path"]);
    insta::assert_snapshot!(run.error_transcript());
}

#[test]
fn signatures_are_fetched_over_http_too() {
    let t = TestContext::new();
    let public = key(&t, "keys/a2c.key");
    pack_signed(&t, "1.0.0");
    let server = Server::start(t.path("reg"));
    workspace(&t, &server.url(), &[&public]);
    t.run("w", &["install"]).success();
    assert_eq!(server.count_of("/index/esys/a2c.json.minisig"), 1);
    // The signature altered on the server.
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    let sig = fs_err::read_to_string(t.path("reg/index/esys/a2c.json.minisig")).unwrap();
    let mut lines: Vec<String> = sig.lines().map(str::to_string).collect();
    lines[2] = "trusted comment: forged".into();
    t.write("reg/index/esys/a2c.json.minisig", &(lines.join("\n") + "\n"));
    let run = t.run("w", &["lock"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
}

#[test]
fn keys_and_signatures_interoperate_with_the_minisign_cli() {
    if Command::new("minisign").arg("-v").output().is_err() {
        require_program("minisign (apt-get install minisign)");
        return;
    }
    let t = TestContext::new();
    // a2c signs; `minisign -V` verifies with a2c's public key.
    let public = key(&t, "keys/a2c.key");
    pack_signed(&t, "1.0.0");
    succeeds(
        Command::new("minisign")
            .args(["-V", "-m"])
            .arg(t.path("reg/index/esys/a2c.json"))
            .args(["-P", &public]),
        "minisign -V",
    );
    // `minisign -G` makes a key, `minisign -S` signs; a2c verifies with its public key.
    succeeds(
        Command::new("minisign")
            .args(["-G", "-W", "-p"])
            .arg(t.path("keys/mk.pub"))
            .arg("-s")
            .arg(t.path("keys/mk.key")),
        "minisign -G",
    );
    succeeds(
        Command::new("minisign")
            .args(["-S", "-s"])
            .arg(t.path("keys/mk.key"))
            .arg("-m")
            .arg(t.path("reg/index/esys/a2c.json")),
        "minisign -S",
    );
    let minisign_key = fs_err::read_to_string(t.path("keys/mk.pub")).unwrap();
    let minisign_key = minisign_key.lines().nth(1).unwrap().to_string();
    workspace(&t, "../reg", &[&minisign_key]);
    t.run("w", &["lock"]).success();
    // And the a2c key no longer matches the signature: refused.
    workspace(&t, "../reg", &[&public]);
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    let run = t.run("w", &["lock"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
}

/// A secret key is encrypted with a password by default, in minisign's own format
/// and with its own scrypt limits: without its password (no terminal, no `A2C_KEY_PASSWORD`)
/// or with a wrong one nothing is published or signed; the `minisign` CLI signs with a key a2c
/// made, and a2c with an encrypted key `minisign -G` made.
#[test]
fn an_encrypted_key_signs_only_with_its_password_and_is_minisigns() {
    let t = TestContext::new();
    // No terminal and no password: refused, nothing written.
    let run = t.run(".", &["key", "generate", "--out", "keys/enc.key"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    assert!(!t.path("keys/enc.key").exists() && !t.path("keys/enc.key.pub").exists());
    let pw = [("A2C_KEY_PASSWORD", "correct horse")];
    let public = t
        .run_env(".", &["key", "generate", "--out", "keys/enc.key", "--json"], &pw)
        .json()["public_key"]
        .as_str()
        .unwrap()
        .to_string();
    let secret = fs_err::read_to_string(t.path("keys/enc.key")).unwrap();
    assert!(
        secret.starts_with("untrusted comment: minisign encrypted secret key"),
        "{secret}"
    );
    assert!(!secret.contains("correct horse"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs_err::metadata(t.path("keys/enc.key")).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Without the password, then with a wrong one: refused before anything is published.
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = crate::support::pack_1_0_0("reg", &["--sign", "keys/enc.key"]);
    let run = t.run(".", &pack);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    let run = t.run_env(".", &pack, &[("A2C_KEY_PASSWORD", "wrong")]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    assert!(!t.path("reg/index/esys/a2c.json").exists(), "nothing was published");
    // With it: published and signed; a workspace trusting the key locks.
    let run = t.ok_env(".", &pack, &pw);
    insta::assert_snapshot!(run.transcript());
    workspace(&t, "../reg", &[&public]);
    t.run("w", &["lock"]).success();
    if Command::new("minisign").arg("-v").output().is_err() {
        require_program("minisign (apt-get install minisign)");
        return;
    }
    // The minisign CLI unlocks a2c's key with the same password and signs; minisign verifies.
    let minisign = |args: &[&str], stdin: &str| {
        use std::io::Write;
        let mut child = Command::new("minisign")
            .args(args)
            .current_dir(t.path("."))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "minisign {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    minisign(
        &["-S", "-s", "keys/enc.key", "-m", "trees/1.0.0/a2c-method.toml"],
        "correct horse\n",
    );
    minisign(
        &["-V", "-p", "keys/enc.key.pub", "-m", "trees/1.0.0/a2c-method.toml"],
        "",
    );
    // minisign -G makes an encrypted key; a2c signs the index with it, and a workspace that
    // trusts its public key locks.
    minisign(
        &["-G", "-p", "keys/mk.pub", "-s", "keys/mk.key"],
        "battery staple\nbattery staple\n",
    );
    let run = t.run_env(
        ".",
        &["sign", "--registry", "reg", "--key", "keys/mk.key"],
        &[("A2C_KEY_PASSWORD", "nope")],
    );
    run.failure();
    insta::assert_snapshot!(run.transcript());
    t.run_env(
        ".",
        &["sign", "--registry", "reg", "--key", "keys/mk.key"],
        &[("A2C_KEY_PASSWORD", "battery staple")],
    )
    .success();
    let minisign_key = fs_err::read_to_string(t.path("keys/mk.pub")).unwrap();
    workspace(&t, "../reg", &[minisign_key.lines().nth(1).unwrap()]);
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    t.run("w", &["lock"]).success();
}

/// Freshness: every publish raises the index's `serial`; a lock records the serial of the
/// signed index it used, and an older (replayed) signed index is refused as a rollback; an
/// index past its `expires` is refused unless `--allow-expired`.
#[test]
fn rollbacks_and_expired_indexes_are_refused() {
    let t = TestContext::new();
    let public = key(&t, "keys/a2c.key");
    t.method_tree("trees/1.0.0", "1.0.0");
    let sign = ["--sign", "keys/a2c.key"];
    let mut args = vec!["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", "reg"];
    args.extend(sign);
    t.run(".", &args).success();
    workspace(&t, "../reg", &[&public]);
    t.run("w", &["lock"]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(lock.contains("version = 3\nindex_serial = 1\n"), "{lock}");
    // Keep the serial-1 index and signature, as a hostile mirror would.
    let old_index = fs_err::read(t.path("reg/index/esys/a2c.json")).unwrap();
    let old_sig = fs_err::read(t.path("reg/index/esys/a2c.json.minisig")).unwrap();
    // Publish 2.0.0 (serial 2), pin it, lock again: the lock records 2.
    t.method_tree("trees/2.0.0", "2.0.0");
    let mut args = vec!["pack", "trees/2.0.0", "--version", "2.0.0", "--registry", "reg"];
    args.extend(sign);
    t.run(".", &args).success();
    t.canonical_repo("w/p/new", "2.0.0");
    t.run("w", &["lock"]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(lock.contains("index_serial = 2"), "{lock}");
    let newest = fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap();
    // Replay the old, correctly signed index: a rollback.
    fs_err::write(t.path("reg/index/esys/a2c.json"), &old_index).unwrap();
    fs_err::write(t.path("reg/index/esys/a2c.json.minisig"), &old_sig).unwrap();
    let run = t.run("w", &["lock", "--update"]);
    insta::assert_snapshot!("rollback", run.error_transcript());
    // An expired index: refused, unless --allow-expired.
    let expired = newest.replacen(
        "\"serial\": 2,",
        "\"serial\": 9,\n  \"expires\": \"2020-01-01T00:00:00Z\",",
        1,
    );
    assert_ne!(expired, newest);
    t.write("reg/index/esys/a2c.json", &expired);
    // Signing keeps the past expiry, and says so with what to run.
    let run = t.ok(".", &["sign", "--registry", "reg", "--key", "keys/a2c.key"]);
    run.says("the index expired at 2020-01-01T00:00:00Z and keeps that expiry")
        .says("`--no-expiry` drops it");
    // Its command, run with a key file and a number of days, renews the expiry.
    let command = run
        .stderr
        .split("; `")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .unwrap();
    let command = command.replace("KEYFILE", "keys/a2c.key").replace("DAYS", "30");
    t.run_printed(".", &command).success();
    assert!(
        fs_err::read_to_string(t.path("reg/index/esys/a2c.json"))
            .unwrap()
            .contains("\"expires\": \"20")
    );
    // Expired again for what follows.
    let renewed = fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap();
    let at = renewed.find("\"expires\": \"").unwrap() + "\"expires\": \"".len();
    let expired = format!("{}2020-01-01T00:00:00Z{}", &renewed[..at], &renewed[at + 20..]);
    t.write("reg/index/esys/a2c.json", &expired);
    t.run(".", &["sign", "--registry", "reg", "--key", "keys/a2c.key"])
        .success();
    let run = t.run("w", &["lock", "--update"]);
    insta::assert_snapshot!("expired", run.error_transcript());
    t.ok("w", &["lock", "--update", "--allow-expired"]);
    // `a2c sign --expires-in DAYS` sets a future expiry (and a new serial).
    t.run(
        ".",
        &[
            "sign",
            "--registry",
            "reg",
            "--key",
            "keys/a2c.key",
            "--expires-in",
            "30",
        ],
    )
    .success();
    let index = fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap();
    assert!(
        index.contains("\"serial\": 11") && index.contains("\"expires\": \"20"),
        "{index}"
    );
    t.run("w", &["lock", "--update"]).success();
    // Zero days is refused; `--no-expiry` drops the expiry.
    let sign = ["sign", "--registry", "reg", "--key", "keys/a2c.key"];
    let run = t.run(".", &[&sign[..], &["--expires-in", "0"]].concat());
    assert_eq!(run.code, 2, "{}", run.stderr);
    t.ok(".", &[&sign[..], &["--no-expiry"]].concat());
    let index = fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap();
    assert!(!index.contains("expires"), "{index}");
    t.run("w", &["lock", "--update"]).success();
}

/// Outside a superbuild, a repository pins keys in its `config.yaml` (the method's file: only
/// the top-level `trusted_keys:` entry is read).
#[test]
fn a_single_repository_pins_keys_in_its_config() {
    let t = TestContext::new();
    let public = key(&t, "keys/a2c.key");
    pack_signed(&t, "1.0.0");
    t.canonical_repo("r", "1.0.0");
    t.write(
        "r/.tools/esys/a2c/config.yaml",
        &format!("agents: [claude]\ntrusted_keys:\n  - \"{public}\"\nreview:\n  depth: 2\n"),
    );
    t.run("r", &["lock", "--registry", "../reg"]).success();
    fs_err::remove_file(t.path("reg/index/esys/a2c.json.minisig")).unwrap();
    fs_err::remove_file(t.path(&layout::lock("r"))).unwrap();
    let run = t.run("r", &["install", "--registry", "../reg"]);
    run.failure();
    run.says("is not signed, but the workspace pins trusted keys");
}

/// Several signed registries in one superbuild each keep their own serial: a lock
/// resolved against a registry at serial 3 does not call another one's serial 1 a rollback,
/// and a replayed index of either is still refused.
#[test]
fn several_signed_registries_each_keep_their_serial() {
    let t = TestContext::new();
    let public = key(&t, "keys/a2c.key");
    let publish = |registry: &str, version: &str| {
        let tree = format!("trees/{version}");
        t.method_tree(&tree, version);
        let args = [
            "pack",
            &tree,
            "--version",
            version,
            "--registry",
            registry,
            "--sign",
            "keys/a2c.key",
        ];
        t.run(".", &args).success();
    };
    publish("reg-a", "1.0.0");
    publish("reg-b", "2.0.0");
    let old_index = fs_err::read(t.path("reg-b/index/esys/a2c.json")).unwrap();
    let old_sig = fs_err::read(t.path("reg-b/index/esys/a2c.json.minisig")).unwrap();
    publish("reg-b", "2.1.0");
    publish("reg-b", "2.2.0");
    t.superbuild(
        "w",
        &format!(
            "schema_version: 2\nmembers: [\"p/*\"]\nregistry: [../reg-a, ../reg-b]\ntrusted_keys: [\"{public}\"]\n"
        ),
    );
    t.canonical_repo("w/p/app", "1.0.0");
    t.canonical_repo("w/p/new", "2.2.0");
    t.run("w", &["lock"]).success();
    let lock_path = t.path(&layout::lock("w"));
    let lock = fs_err::read_to_string(&lock_path).unwrap();
    assert_contains(&lock, "[index_serials]\n\"../reg-a\" = 1\n\"../reg-b\" = 3\n");
    crate::spec::assert_lock_valid(&lock);
    // Locked again: reg-a's serial 1 is its own, no rollback.
    t.ok("w", &["lock", "--update"]);
    t.run("w", &["install"]).success();
    // Replaying reg-b's first index (serial 1) is still a rollback, named.
    fs_err::write(t.path("reg-b/index/esys/a2c.json"), &old_index).unwrap();
    fs_err::write(t.path("reg-b/index/esys/a2c.json.minisig"), &old_sig).unwrap();
    let run = t.run("w", &["lock", "--update"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    assert_eq!(fs_err::read_to_string(&lock_path).unwrap(), lock);
}

/// Pinned keys sign registry indexes, never a vendor manifest: `lock --offline --from DIR`
/// taking entries from one while keys are pinned says so.
#[test]
fn a_lock_taken_from_a_vendor_manifest_says_the_keys_do_not_cover_it() {
    let t = TestContext::new();
    let public = key(&t, "keys/a2c.key");
    pack_signed(&t, "1.0.0");
    workspace(&t, "../reg", &[&public]);
    t.run("w", &["lock"]).success();
    t.run("w", &["vendor", "../vend"]).success();
    let run = t.run("w", &["lock"]);
    insta::assert_snapshot!(run.transcript());
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    let run = t.ok("w", &["lock", "--offline", "--from", "../vend"]);
    insta::assert_snapshot!(run.transcript());
}
