//! Mirrors and source replacement — a locked bundle is looked for in the cache,
//! `--from`, the registries configured now (`--registry`, `A2C_REGISTRY`, the marker's
//! `registry`, its `mirrors`, `A2C_MIRRORS`), then the lock's `source`; every candidate is
//! verified against the lock.

use crate::support::http_server::Server;
use crate::support::{TestContext, layout};

const B1: &str = "/bundles/a2c-1.0.0.tar.gz";

/// A single repository pinning 1.0.0, locked against a server that then dies; a copy of the
/// registry (`mirror`) that another server can serve.
fn locked_then_primary_dies(t: &TestContext) -> String {
    t.canonical_repo("r", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    let primary = Server::start(t.path("reg"));
    let url = primary.url();
    t.run("r", &["lock", "--registry", &url]).success();
    drop(primary);
    // Copy the registry as a mirror would hold it.
    for f in t.listing("reg") {
        let from = t.path(&format!("reg/{f}"));
        let to = t.path(&format!("mirror/{f}"));
        if from.is_dir() {
            fs_err::create_dir_all(&to).unwrap();
        } else if !f.ends_with(".lock") {
            fs_err::copy(&from, &to).unwrap();
        }
    }
    url
}

#[test]
fn a_dead_primary_with_a_live_mirror_installs_from_the_mirror() {
    let t = TestContext::new();
    let dead = locked_then_primary_dies(&t);
    let mirror = Server::start(t.path("mirror"));
    let env = [
        ("A2C_REGISTRY", dead.as_str()),
        ("A2C_MIRRORS", &mirror.url()),
        ("A2C_HTTP_RETRIES", "0"),
    ];
    let run = t.run_env("r", &["install", "-v", "--json"], &env);
    let doc = run.json();
    assert_eq!(doc["installed"][0]["version"], "1.0.0");
    assert_eq!(mirror.count_of(B1), 1, "the bundle came from the mirror");
    insta::assert_snapshot!(run.transcript());
    // The lock is unchanged: where a bundle comes from never changes what is trusted.
    let lock = fs_err::read_to_string(t.path(&layout::lock("r"))).unwrap();
    assert!(lock.contains(&dead), "{lock}");
}

#[test]
fn a_mirror_serving_other_bytes_is_refused_and_the_next_place_is_tried() {
    let t = TestContext::new();
    t.canonical_repo("r", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    let primary = Server::start(t.path("reg"));
    t.run("r", &["lock", "--registry", &primary.url()]).success();
    let since = primary.count(); // lock's own fetchability check
    // A mirror whose index matches the lock but whose bundle file is other bytes.
    let index = fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap();
    t.write("bad/index/esys/a2c.json", &index);
    let len = fs_err::metadata(t.path("reg/bundles/a2c-1.0.0.tar.gz")).unwrap().len() as usize;
    t.write("bad/bundles/a2c-1.0.0.tar.gz", &"x".repeat(len));
    let bad = Server::start(t.path("bad"));
    let run = t.run_env("r", &["install", "--json"], &[("A2C_MIRRORS", &bad.url())]);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
    assert_eq!(bad.count_of(B1), 1, "the bad mirror was tried first");
    assert_eq!(primary.count_of_since(B1, since), 1, "then the lock's source");
    let cached = fs_err::read(t.path(&layout::installed_file("r", "1.0.0", "a2c-method.toml"))).unwrap();
    assert!(String::from_utf8_lossy(&cached).contains("1.0.0"));
}

#[test]
fn when_every_place_is_dead_one_error_lists_them_all() {
    let t = TestContext::new();
    let dead = locked_then_primary_dies(&t);
    let gone = Server::start(t.path("mirror"));
    let gone_url = gone.url();
    drop(gone);
    let env = [
        ("A2C_REGISTRY", dead.as_str()),
        ("A2C_MIRRORS", &gone_url),
        ("A2C_HTTP_RETRIES", "0"),
    ];
    let run = t.run_env("r", &["install"], &env);
    run.failure();
    assert!(
        run.stderr.contains("failed to download version 1.0.0") || run.stderr.contains("no place served version 1.0.0"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(&dead), "the lock's source is named: {}", run.stderr);
    // With a mirror that is up but lacks the bundle file, both places are listed.
    let empty = Server::start(t.path("empty"));
    t.write(
        "empty/index/esys/a2c.json",
        &fs_err::read_to_string(t.path("mirror/index/esys/a2c.json")).unwrap(),
    );
    let env = [("A2C_MIRRORS", empty.url()), ("A2C_HTTP_RETRIES", "0".to_string())];
    let run = t.run_env("r", &["install"], &env);
    run.failure();
    assert!(
        run.stderr.contains("no place served version 1.0.0")
            && run
                .stderr
                .contains(&format!("{}bundles/a2c-1.0.0.tar.gz` answered HTTP 404", empty.url()))
            && run.stderr.contains(&dead),
        "{}",
        run.stderr
    );
}

#[test]
fn the_demo_installs_online_from_its_own_registry() {
    let t = TestContext::demo();
    // The committed lock names a host that does not resolve; the marker's registry serves.
    let run = t.run_env("demo/superbuild", &["install", "--json"], &[("A2C_HTTP_RETRIES", "0")]);
    let doc = run.json();
    assert_eq!(doc["installed"].as_array().unwrap().len(), 3, "{doc}");
}

/// A mirror that a committed marker names may be a path outside every registry the user
/// configured: when its file is not the bundle, the error never shows that file's digest.
#[test]
fn a_marker_mirror_outside_the_registries_reveals_nothing_about_its_files() {
    let t = TestContext::new();
    t.superbuild(
        "w",
        "members: [\"p/*\"]\nregistry: ../reg\nmirrors: [\"../elsewhere\"]\n",
    );
    t.canonical_repo("w/p/app", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    t.run("w", &["lock"]).success();
    let index = fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap();
    t.write("elsewhere/index/esys/a2c.json", &index);
    let len = fs_err::metadata(t.path("reg/bundles/a2c-1.0.0.tar.gz")).unwrap().len() as usize;
    let other = "y".repeat(len);
    t.write("elsewhere/bundles/a2c-1.0.0.tar.gz", &other);
    let other_sha = crate::support::bundles::sha256_hex(other.as_bytes());
    fs_err::remove_file(t.path("reg/bundles/a2c-1.0.0.tar.gz")).unwrap();
    let run = t.run("w", &["install"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    assert!(
        !run.stderr.contains(&other_sha),
        "the mirror file's digest leaked: {}",
        run.stderr
    );
}

/// Every place fails — a mirror serving other bytes, then the dead lock source: the error lists
/// each place and why, the mirror first.
#[test]
fn when_every_place_fails_each_is_named_with_why() {
    let t = TestContext::new();
    let dead = locked_then_primary_dies(&t);
    // The mirror serves other bytes of the same size under the locked name.
    let bundle = t.path("mirror/bundles/a2c-1.0.0.tar.gz");
    let mut bytes = fs_err::read(&bundle).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    fs_err::write(&bundle, bytes).unwrap();
    let mirror = Server::start(t.path("mirror"));
    let env = [
        ("A2C_REGISTRY", dead.as_str()),
        ("A2C_MIRRORS", &mirror.url()),
        ("A2C_HTTP_RETRIES", "0"),
    ];
    let run = t.run_env("r", &["install"], &env);
    insta::assert_snapshot!(run.error_transcript());
    let lines: Vec<&str> = run.stderr.lines().collect();
    let mirror_line = lines
        .iter()
        .position(|l| l.starts_with("  - sha256 mismatch for") && l.contains(&mirror.url()));
    let dead_line = lines
        .iter()
        .position(|l| l.starts_with("  - cannot connect") && l.contains(&dead));
    assert!(mirror_line.is_some() && dead_line.is_some(), "{}", run.stderr);
    assert!(mirror_line < dead_line, "the mirror first: {}", run.stderr);
}

/// A mirror whose index lists another bundle under the locked version is passed
/// over, and when the lock's own source is dead too, the error names both places and why,
/// not the dead source alone.
#[test]
fn a_mirror_whose_index_disagrees_is_named_when_nothing_serves() {
    let t = TestContext::new();
    let dead = locked_then_primary_dies(&t);
    // Another 1.0.0 (other bytes) in a mirror.
    t.method_tree("other-tree", "1.0.0");
    t.write("other-tree/rules/extra.md", "not the locked bundle\n");
    t.pack("other-tree", "1.0.0", "other", "tar.gz");
    let other = t.path("other").display().to_string();
    let env = [
        ("A2C_REGISTRY", dead.as_str()),
        ("A2C_MIRRORS", other.as_str()),
        ("A2C_HTTP_RETRIES", "0"),
    ];
    let run = t.run_env("r", &["install"], &env);
    run.fails_with(&[
        "no place served version 1.0.0",
        "the registry `[TMP]/other` lists another bundle as 1.0.0 than the lock pins",
        "its index disagrees with the lock",
        &dead,
    ]);
}

/// `install --registry URL` is asked before the marker's registry: the docs put
/// `--registry` first, and `served_from` names it.
#[test]
fn install_registry_flag_is_asked_before_the_marker_registry() {
    let t = TestContext::new();
    t.publish("reg", "1.0.0", "tar.gz");
    let marker = Server::start(t.path("reg"));
    t.app_superbuild(&marker.url());
    t.run("w", &["lock"]).success();
    // `lock` checked that the source answers: count from here.
    let asked = marker.count_of(B1);
    let status = std::process::Command::new("cp")
        .args(["-a", "reg", "flagged"])
        .current_dir(t.path("."))
        .status()
        .unwrap();
    assert!(status.success());
    let flagged = Server::start(t.path("flagged"));
    let doc = t.run("w", &["install", "--registry", &flagged.url(), "--json"]).json();
    assert_eq!(doc["installed"][0]["version"], "1.0.0", "{doc}");
    assert_eq!(flagged.count_of(B1), 1, "the bundle came from --registry");
    assert_eq!(marker.count_of(B1), asked, "the marker's registry was not asked for it");
    let served = doc["installed"][0]["served_from"].as_str().unwrap_or_default();
    assert!(served.starts_with(&flagged.url()), "{doc}");
}

/// The configured registry is asked before the mirrors (docs/registries.md, "Mirrors"): while
/// the primary serves a locked bundle, no mirror is asked for it — a registry over HTTP and a
/// directory registry alike, with the mirror in `A2C_MIRRORS` and in the marker's `mirrors:`.
#[test]
fn a_live_primary_serves_its_bundles_before_any_mirror() {
    for primary_kind in ["http", "directory"] {
        let t = TestContext::new();
        t.publish("reg", "1.0.0", "tar.gz");
        let server = Server::start(t.path("reg"));
        let primary = match primary_kind {
            "http" => server.url(),
            _ => t.path("reg").display().to_string(),
        };
        for f in t.listing("reg") {
            let (from, to) = (t.path(&format!("reg/{f}")), t.path(&format!("mirror/{f}")));
            if from.is_dir() {
                fs_err::create_dir_all(&to).unwrap();
            } else if !f.ends_with(".lock") {
                fs_err::copy(&from, &to).unwrap();
            }
        }
        let mirror = Server::start(t.path("mirror"));
        t.superbuild(
            "w",
            &format!(
                "members: [\"p/*\"]\nregistry: {primary}\nmirrors: [\"{}\"]\n",
                mirror.url()
            ),
        );
        t.canonical_repo("w/p/app", "1.0.0");
        t.ok("w", &["lock"]);
        let run = t.ok_env("w", &["install", "--json"], &[("A2C_MIRRORS", &mirror.url())]);
        let served = run.json()["installed"][0]["served_from"].as_str().unwrap().to_string();
        assert_eq!(
            mirror.count_of(B1),
            0,
            "{primary_kind}: the mirror was asked first ({served})"
        );
        assert!(
            served.contains("/bundles/a2c-1.0.0.tar.gz") && !served.starts_with(&mirror.url()),
            "{primary_kind}: {served}"
        );
        // With the primary gone, the mirror serves it.
        t.forget_installed("w");
        drop(server);
        if primary_kind == "directory" {
            fs_err::rename(t.path("reg"), t.path("reg-gone")).unwrap();
        }
        let env = [("A2C_HTTP_RETRIES", "0")];
        t.ok_env("w", &["install"], &env);
        assert_eq!(mirror.count_of(B1), 1, "{primary_kind}: the mirror did not serve it");
    }
}
