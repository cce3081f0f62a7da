//! `a2c lock`, `a2c install`, `a2c pack` — verified side-by-side installs.

use crate::support::{Run, TestContext, items, layout};
use std::os::unix::fs::PermissionsExt;

use crate::support::assert_contains;
use crate::support::bundles::{self, Kind, file, item, manifest};

fn versions_in(doc: &serde_json::Value, key: &str) -> Vec<String> {
    items(&doc[key])
        .iter()
        .map(|v| v["version"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn superbuild_lock_then_install_side_by_side() {
    let t = TestContext::new();
    t.standard_superbuild();
    let run = t.ok("w/p/app", &["lock", "--json"]);
    let doc = run.json();
    assert_eq!(doc["added"], serde_json::json!(["1.0.0", "1.1.0", "2.0.0"]));
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(
        lock.contains("version = 3\n") && lock.contains("format = \"zip\""),
        "{lock}"
    );
    assert!(
        lock.find("\"1.0.0\"").unwrap() < lock.find("\"2.0.0\"").unwrap(),
        "sorted"
    );

    let run = t.ok("w", &["install", "--json"]);
    let doc = run.json();
    assert_eq!(doc["workspace"], t.shown("w"));
    assert_eq!(doc["store"], t.shown(&layout::store("w")));
    assert_eq!(versions_in(&doc, "installed"), ["1.0.0", "1.1.0", "2.0.0"]);
    let first = &doc["installed"][0];
    for key in ["version", "path", "sha256", "tree"] {
        assert!(first.get(key).is_some(), "installed entries carry {key}: {first}");
    }
    assert!(first["tree"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(doc["members"].as_array().unwrap().len(), 4);
    assert_eq!(
        doc["members"][0],
        serde_json::json!({"path": t.shown("w/l/core"), "version": "1.1.0"})
    );

    // Side by side, each with its manifest, read-only files and a receipt.
    for v in ["1.0.0", "1.1.0", "2.0.0"] {
        let dir = t.path(&layout::installed("w", v));
        let manifest = fs_err::read_to_string(dir.join("a2c-method.toml")).unwrap();
        assert!(manifest.contains(&format!("version = \"{v}\"")));
        let mode = fs_err::metadata(dir.join("rules/core.md"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o222, 0, "files are read-only");
        let receipt: serde_json::Value =
            serde_json::from_str(&fs_err::read_to_string(dir.join(".a2c-receipt.json")).unwrap()).unwrap();
        for key in ["version", "sha256", "tree", "source", "a2c_version", "installed_at"] {
            assert!(receipt.get(key).is_some(), "receipt has {key}");
        }
        assert_eq!(receipt["version"], v);
    }
    // Every member resolves through the shared store, and has its local pointer.
    let run = t.run("w/l/core", &["resolve", "--json"]);
    assert_eq!(run.json()["rule"], "workspace-store");
    let pointer = fs_err::read_to_string(t.path(&layout::pointer("w/p/app"))).unwrap();
    assert_contains(&pointer, &format!("workspace_root: {}", t.path("w").display()));
    assert!(t.listing(&layout::staging("w")).is_empty());
}

#[test]
fn reinstall_is_a_no_op_that_reads_no_bundle() {
    let t = TestContext::installed_superbuild();
    // Remove every bundle: a no-op install must not need one.
    fs_err::remove_dir_all(t.path("reg")).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    let run = t.ok("w", &["install", "--json"]);
    let doc = run.json();
    assert!(doc["installed"].as_array().unwrap().is_empty());
    assert_eq!(versions_in(&doc, "reused"), ["1.0.0", "1.1.0", "2.0.0"]);
    let run = t.ok("w", &["install"]);
    run.says("up to date: 3 versions already installed for 4 members");
    assert!(!t.cache_dir().exists(), "nothing was fetched");
}

#[test]
fn install_locks_missing_versions_and_lock_check_detects_drift() {
    let t = TestContext::new();
    t.standard_superbuild();
    // install without a lock resolves and writes it.
    let run = t.ok("w", &["install", "--json"]);
    assert_eq!(run.json()["locked"], serde_json::json!(["1.0.0", "1.1.0", "2.0.0"]));
    t.run("w", &["lock", "--check"]).success();
    // A member moves to a version the lock lacks; another version is no longer used.
    t.publish("reg", "3.0.0", "tar.gz");
    t.adopt("w/p/web", "3.0.0");
    let before = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    let run = t.run("w", &["lock", "--check"]);
    insta::assert_snapshot!(run.error_transcript());
    // --locked refuses, naming the version, and changes nothing.
    let run = t.run("w", &["install", "--locked"]);
    insta::assert_snapshot!(run.error_transcript());
    run.says("hint: run `a2c lock`");
    let run = t.run("w", &["install", "--offline"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap(), before);
    assert!(!t.path(&layout::installed("w", "3.0.0")).exists());
    // a2c lock adds 3.0.0 and drops 2.0.0.
    let doc = t.run("w", &["lock", "--json"]).json();
    assert_eq!(doc["added"], serde_json::json!(["3.0.0"]));
    assert_eq!(doc["removed"], serde_json::json!(["2.0.0"]));
    t.run("w", &["lock", "--check"]).success();
    t.run("w", &["install", "--locked"]).success();
}

#[test]
fn lock_keeps_entries_and_refuses_a_changed_bundle_and_yanks() {
    let t = TestContext::locked_superbuild();
    let before = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    // The registry republishes 2.0.0 with other content.
    t.write("trees/2.0.0/rules/core.md", "changed\n");
    fs_err::remove_dir_all(t.path("reg/bundles")).unwrap();
    t.edit_index("reg", "2.0.0", |e| e["sha256"] = serde_json::json!("0".repeat(64)));
    let run = t.run("w", &["lock"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(
        fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap(),
        before,
        "never a silent update"
    );
    // --update accepts it deliberately.
    let doc = t.run("w", &["lock", "--update", "--json"]).json();
    assert_eq!(doc["updated"], serde_json::json!(["2.0.0"]));
    // A yanked version is refused unless already locked.
    t.publish("reg", "4.0.0", "tar.gz");
    t.edit_index("reg", "4.0.0", |e| e["yanked"] = serde_json::json!(true));
    t.canonical_repo("w/p/new", "4.0.0");
    let run = t.run("w", &["lock"]);
    insta::assert_snapshot!(run.error_transcript());
    t.edit_index("reg", "1.0.0", |e| e["yanked"] = serde_json::json!(true));
    t.adopt("w/p/new", "1.0.0");
    t.run("w", &["lock"]).success();
}

#[test]
fn registry_comes_from_flag_then_env_then_marker() {
    let t = TestContext::new();
    t.canonical_repo("r", "1.0.0");
    t.publish("reg-a", "1.0.0", "tar.gz");
    t.publish("reg-b", "1.0.0", "zip");
    let run = t.run("r", &["lock"]);
    insta::assert_snapshot!(run.error_transcript());
    let reg_b = format!("file://{}", t.path("reg-b").display());
    t.run_env("r", &["lock"], &[("A2C_REGISTRY", &reg_b)]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("r"))).unwrap();
    assert!(lock.contains("reg-b/bundles/a2c-1.0.0.zip"), "{lock}");
    t.ok_env(
        "r",
        &["lock", "--update", "--registry", "../reg-a"],
        &[("A2C_REGISTRY", &reg_b)],
    );
    let lock = fs_err::read_to_string(t.path(&layout::lock("r"))).unwrap();
    assert!(lock.contains("reg-a/bundles/a2c-1.0.0.tar.gz"), "{lock}");
}

#[test]
fn single_repo_installs_into_its_own_store_and_legacy_lock_stays_in_legacy_root() {
    let t = TestContext::new();
    t.canonical_repo("r", "1.0.0");
    t.git_repo("old");
    t.write("old/.a2c/adoption.yaml", "tool_version: v1.1.0\n");
    t.publish("reg", "1.0.0", "tar.gz");
    t.publish("reg", "1.1.0", "zip");
    let reg = t.path("reg").display().to_string();
    let run = t.ok_env("r", &["install", "--json"], &[("A2C_REGISTRY", &reg)]);
    let doc = run.json();
    assert_eq!(doc["workspace"], serde_json::Value::Null);
    assert_eq!(doc["store"], t.shown(&layout::store("r")));
    assert!(t.path(&layout::lock("r")).is_file());
    assert!(
        !t.path(&layout::pointer("r")).exists(),
        "no pointer outside a superbuild"
    );
    assert_eq!(t.run("r", &["resolve", "--json"]).json()["rule"], "repo-store");
    t.run_env("old", &["install"], &[("A2C_REGISTRY", &reg)]).success();
    assert!(
        t.path("old/.a2c/a2c.lock").is_file(),
        "a legacy repo keeps its lock in .a2c/"
    );
    assert!(
        !t.path("old/.tools").exists(),
        "nothing is written under .tools/ of a legacy repo"
    );
}

#[test]
fn offline_from_cache_in_a_second_workspace() {
    let t = TestContext::installed_superbuild();
    let cached = t.listing("cache/bundles");
    assert_eq!(cached.len(), 3, "{cached:?}");
    // A second superbuild with the same pins, and its own copy of the lock; no registry at all.
    t.superbuild("w2", "members: [\"m/*\"]\n");
    t.canonical_repo("w2/m/a", "1.0.0");
    t.legacy_repo("w2/m/b", "1.1.0");
    t.canonical_repo("w2/m/c", "2.0.0");
    fs_err::copy(t.path(&layout::lock("w")), t.path(&layout::lock("w2"))).unwrap();
    fs_err::remove_dir_all(t.path("reg")).unwrap();
    let run = t.ok("w2", &["install", "--offline", "--json"]);
    let doc = run.json();
    assert_eq!(versions_in(&doc, "installed"), ["1.0.0", "1.1.0", "2.0.0"]);
    // Placed from the shared tree cache: no bundle is even read.
    assert!(
        items(&doc["installed"]).iter().all(|i| i["source"] == "tree-cache"),
        "{doc}"
    );
    // Without the tree cache, the bundle cache serves them.
    fs_err::remove_dir_all(t.path("cache/trees")).unwrap();
    fs_err::remove_dir_all(t.path("w2/.tools_local")).unwrap();
    let doc = t.run("w2", &["install", "--offline", "--json"]).json();
    assert!(items(&doc["installed"]).iter().all(|i| i["source"] == "cache"), "{doc}");
}

#[test]
fn offline_from_a_directory_matches_bundles_by_content() {
    let t = TestContext::locked_superbuild();
    // Vendor the bundles under meaningless names, then lose the registry.
    fs_err::create_dir_all(t.path("vendor")).unwrap();
    for (i, name) in ["a2c-1.0.0.tar.gz", "a2c-1.1.0.zip", "a2c-2.0.0.tar.gz"]
        .iter()
        .enumerate()
    {
        fs_err::copy(
            t.path(&format!("reg/bundles/{name}")),
            t.path(&format!("vendor/blob-{i}")),
        )
        .unwrap();
    }
    t.write("vendor/noise.bin", "not a bundle");
    fs_err::remove_dir_all(t.path("reg")).unwrap();
    let vendor = t.path("vendor").display().to_string();
    let run = t.ok("w", &["install", "--offline", "--from", &vendor, "--json"]);
    let doc = run.json();
    assert_eq!(versions_in(&doc, "installed"), ["1.0.0", "1.1.0", "2.0.0"]);
    assert!(items(&doc["installed"]).iter().all(|i| i["source"] == "from"));
    assert_eq!(
        t.listing("cache/bundles").len(),
        3,
        "--from bundles are cached for next time"
    );
}

#[test]
fn offline_missing_bundle_names_version_sha_and_places() {
    let t = TestContext::locked_superbuild();
    fs_err::create_dir_all(t.path("empty")).unwrap();
    let run = t.run("w", &["install", "--offline", "--from", "../empty"]);
    run.failure();
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    let sha = lock.split("sha256 = \"").nth(1).unwrap().split('"').next().unwrap();
    insta::assert_snapshot!(run.transcript());
    assert!(run.stderr.contains(sha), "names the expected sha256: {}", run.stderr);
}

/// Asserts that a failed install added nothing to the store and nothing to the cache.
fn assert_nothing_installed(t: &TestContext, version: &str) {
    assert!(
        !t.path(&layout::installed("w", version)).exists(),
        "no {version} in the store"
    );
    assert!(t.listing(&layout::staging("w")).is_empty(), "staging is clean");
    let cached = t.listing("cache/bundles");
    assert!(
        cached.iter().all(|c| !c.ends_with(".partial")),
        "no partial left in the cache: {cached:?}"
    );
}

#[test]
fn tampered_bundle_and_wrong_size_are_refused() {
    let t = TestContext::locked_superbuild();
    // Same size, other bytes.
    let path = t.path("reg/bundles/a2c-2.0.0.tar.gz");
    let mut bytes = fs_err::read(&path).unwrap();
    let good = bytes.clone();
    let n = bytes.len();
    bytes[n / 2] ^= 0xff;
    fs_err::write(&path, &bytes).unwrap();
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    assert!(
        run.stderr.contains(&bundles::sha256_hex(&good)) && run.stderr.contains(&bundles::sha256_hex(&bytes)),
        "expected and actual: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("reg/bundles/a2c-2.0.0.tar.gz"),
        "names the source: {}",
        run.stderr
    );
    assert_nothing_installed(&t, "2.0.0");
    assert_eq!(t.listing("cache/bundles").len(), 2, "only the good bundles are cached");
    // Other size.
    bytes.push(0);
    fs_err::write(&path, &bytes).unwrap();
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_nothing_installed(&t, "2.0.0");
    // Restored, it installs.
    fs_err::write(&path, &good).unwrap();
    t.run("w", &["install"]).success();
}

#[test]
fn wrong_manifest_version_and_wrong_tree_are_refused() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w/p/a", "1.0.0");
    // The bundle published as 1.0.0 declares 0.9.0.
    let bytes = bundles::tar_gz(&[manifest("0.9.0"), file("a2c-0.9.0/rules/x.md", "x")]);
    t.publish_raw("reg", "1.0.0", &bytes, "tar.gz");
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_nothing_installed(&t, "1.0.0");
    // The failed install left no lock behind.
    assert!(!t.path(&layout::lock("w")).exists());
    // No manifest at all.
    let bytes = bundles::tar_gz(&[file("a2c-1.0.0/rules/x.md", "x"), file("a2c-1.0.0/README.md", "r")]);
    t.publish_raw("reg", "1.0.0", &bytes, "tar.gz");
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path(&layout::lock("w")).exists());
    // A correct bundle whose lock pins another tree digest.
    t.publish("reg2", "1.0.0", "zip");
    t.edit_index("reg2", "1.0.0", |e| {
        e["tree"] = serde_json::json!(format!("sha256:{}", "a".repeat(64)))
    });
    t.ok("w", &["lock", "--registry", "../reg2"]);
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    // Its own hint: a publishing error, not tampering.
    assert!(
        run.stderr.contains("a publishing error, not tampering") && !run.stderr.contains("tampered with"),
        "{}",
        run.stderr
    );
    assert_nothing_installed(&t, "1.0.0");
}

#[test]
fn pack_is_deterministic_and_refuses_changed_content() {
    let t = TestContext::new();
    t.method_tree("tree", "1.0.0");
    t.write("tree/scripts/run.sh", "#!/bin/sh\n");
    fs_err::set_permissions(t.path("tree/scripts/run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    for format in ["tar.gz", "zip"] {
        let a = t.pack_run(
            "tree",
            "1.0.0",
            &format!("ra-{format}"),
            &["--format", format, "--json"],
        );
        // Touch every file: times and modes other than the executable bit must not matter.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let content = fs_err::read(t.path("tree/rules/core.md")).unwrap();
        fs_err::write(t.path("tree/rules/core.md"), content).unwrap();
        fs_err::set_permissions(t.path("tree/prompts/review.md"), std::fs::Permissions::from_mode(0o600)).unwrap();
        let b = t.pack_run(
            "tree",
            "1.0.0",
            &format!("rb-{format}"),
            &["--format", format, "--json"],
        );
        let (a, b) = (a.json(), b.json());
        assert_eq!(a["sha256"], b["sha256"], "{format}: same tree, same bundle");
        assert_eq!(a["size"], b["size"]);
        assert_eq!(a["files"], 4);
        fs_err::set_permissions(t.path("tree/prompts/review.md"), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    // The same tree as tar.gz and zip has one tree digest.
    let tar: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(t.path("ra-tar.gz/index/esys/a2c.json")).unwrap()).unwrap();
    let zip: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(t.path("ra-zip/index/esys/a2c.json")).unwrap()).unwrap();
    assert_eq!(tar["versions"][0]["tree"], zip["versions"][0]["tree"]);
    assert_ne!(tar["versions"][0]["sha256"], zip["versions"][0]["sha256"]);
    // Republishing the same content is a no-op; other content under the same version is refused.
    let run = t.ok(".", &["pack", "tree", "--version", "1.0.0", "--registry", "ra-tar.gz"]);
    run.says("already published with the same content");
    t.write("tree/rules/core.md", "changed\n");
    let run = t.run(".", &["pack", "tree", "--version", "1.0.0", "--registry", "ra-tar.gz"]);
    insta::assert_snapshot!(run.error_transcript());
    // A manifest of another version is refused.
    let run = t.run(".", &["pack", "tree", "--version", "1.0.1", "--registry", "ra-tar.gz"]);
    insta::assert_snapshot!(run.error_transcript());
    // A symlink in the tree is refused: a2c would refuse to extract it.
    std::os::unix::fs::symlink("core.md", t.path("tree/rules/link.md")).unwrap();
    let run = t.run(".", &["pack", "tree", "--version", "1.0.0", "--registry", "rc"]);
    insta::assert_snapshot!(run.error_transcript());
}

#[test]
fn committed_demo_registry_is_what_pack_produces() {
    // The demo's bundles are the deterministic output of `a2c pack` on fixtures/demo/methods.
    let t = TestContext::new();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo");
    for (v, format) in [("1.2.0", "zip"), ("1.4.0", "tar.gz"), ("2.0.0", "tar.gz")] {
        t.pack_run(&format!("{fixtures}/methods/{v}"), v, "reg", &["--format", format])
            .success();
        let name = format!("a2c-{v}.{format}");
        let fresh = fs_err::read(t.path(&format!("reg/bundles/{name}"))).unwrap();
        let committed = fs_err::read(format!("{fixtures}/registry/bundles/{name}")).unwrap();
        assert!(
            fresh == committed,
            "{name} differs from a fresh pack: rerun `a2c pack` on fixtures/demo/methods/{v}"
        );
    }
    let fresh = fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap();
    let committed = fs_err::read_to_string(format!("{fixtures}/registry/index/esys/a2c.json")).unwrap();
    assert_eq!(fresh, committed);
}

#[test]
fn demo_installs_offline_as_the_readme_says() {
    let t = TestContext::demo();
    let run = t.ok(
        "demo/superbuild",
        &["install", "--offline", "--from", "../registry/bundles", "--json"],
    );
    assert_eq!(versions_in(&run.json(), "installed"), ["1.2.0", "1.4.0", "2.0.0"]);
    t.run("demo/superbuild", &["lock", "--check"]).success();
    let doc = t.run("demo/superbuild/libs/core", &["resolve", "--json"]).json();
    assert_eq!(doc["rule"], "workspace-store");
    assert_eq!(doc["version"], "1.2.0");
}

/// Two installs of one superbuild at once: both succeed, each version is extracted once.
#[test]
fn concurrent_installs_extract_each_version_once() {
    let t = TestContext::locked_superbuild();
    let spawn = || t.spawn("w", &["install", "--json"]);
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(
        a.status.success() && b.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&a.stdout).unwrap(),
        serde_json::from_slice(&b.stdout).unwrap(),
    );
    let mut installed = versions_in(&a, "installed");
    installed.extend(versions_in(&b, "installed"));
    installed.sort();
    assert_eq!(
        installed,
        ["1.0.0", "1.1.0", "2.0.0"],
        "each version extracted exactly once"
    );
    assert_eq!(versions_in(&a, "installed").len() + versions_in(&a, "reused").len(), 3);
    assert_eq!(versions_in(&b, "installed").len() + versions_in(&b, "reused").len(), 3);
}

#[test]
fn a_waiting_install_says_so() {
    let t = TestContext::locked_superbuild();
    let mut first = t
        .cmd("w")
        .args(["install"])
        .env("A2C_TEST_HOOK", "pause:mid-extraction")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(|| t.listing(&layout::staging("w")).iter().any(|p| p.ends_with(".md")));
    let run = t.run_env("w", &["install", "-j", "1"], &[("A2C_LOCK_TIMEOUT", "1")]);
    first.kill().unwrap();
    first.wait().unwrap();
    insta::assert_snapshot!(run.error_transcript());
    run.says("timed out waiting for the store lock")
        .says("A2C_LOCK_TIMEOUT");
}

pub fn wait_for(cond: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !cond() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// SIGKILL in the middle of an extraction, then a rerun: the store ends valid.
#[test]
fn install_killed_mid_extraction_then_rerun_ends_valid() {
    let t = TestContext::locked_superbuild();
    for point in ["mid-extraction", "after-receipt", "before-rename"] {
        let mut child = t
            .cmd("w")
            .args(["install", "-j", "1"])
            .env("A2C_TEST_HOOK", format!("pause:{point}"))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        wait_for(|| t.listing(&layout::staging("w")).iter().any(|p| p.ends_with(".md")));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert!(
            !t.listing(&layout::staging("w")).is_empty(),
            "{point}: the kill left work behind"
        );
        let run = t.ok("w", &["install", "--json"]);
        let doc = run.json();
        assert!(
            !doc["cleaned"].as_array().unwrap().is_empty(),
            "{point}: the rerun reports what it cleaned"
        );
        assert!(t.listing(&layout::staging("w")).is_empty());
        for v in ["1.0.0", "1.1.0", "2.0.0"] {
            assert!(t.has_installed("w", v, ".a2c-receipt.json"), "{point}: {v}");
        }
        t.forget_installed("w");
    }
}

fn hostile_superbuild(t: &TestContext) {
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w/p/a", "1.0.0");
    t.canonical_repo("w/p/b", "2.0.0");
    t.publish("reg", "2.0.0", "tar.gz");
    t.publish_raw("reg", "1.0.0", &bundles::tar_gz(&[manifest("1.0.0")]), "tar.gz");
    // A first install of 2.0.0 only: the store holds something that must stay unchanged.
    t.adopt("w/p/a", "2.0.0");
    t.run("w", &["install"]).success();
    t.adopt("w/p/a", "1.0.0");
}

#[test]
fn decompression_bombs_and_entry_floods_are_refused() {
    let t = TestContext::new();
    hostile_superbuild(&t);
    let zeros = String::from_utf8(vec![b'0'; 4 << 20]).unwrap();
    let bomb = vec![manifest("1.0.0"), file("a2c-1.0.0/bomb.md", &zeros)];
    let flood: Vec<_> = std::iter::once(manifest("1.0.0"))
        .chain((0..50).map(|i| file(&format!("a2c-1.0.0/f{i}.md"), "x")))
        .collect();
    for format in ["tar.gz", "zip"] {
        let pack = |items: &[bundles::Item]| {
            if format == "zip" {
                bundles::zip(items)
            } else {
                bundles::tar_gz(items)
            }
        };
        t.publish_raw("reg", "1.0.0", &pack(&bomb), format);
        let _ = fs_err::remove_file(t.path(&layout::lock("w")));
        let run = t.run_env("w", &["install"], &[("A2C_MAX_UNPACKED_BYTES", "1048576")]);
        insta::assert_snapshot!(run.error_transcript());
        assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
        t.publish_raw("reg", "1.0.0", &pack(&flood), format);
        let _ = fs_err::remove_file(t.path(&layout::lock("w")));
        let run = t.run_env("w", &["install"], &[("A2C_MAX_ENTRIES", "20")]);
        insta::assert_snapshot!(run.error_transcript());
        // Within the default limits both install.
        t.ok("w", &["install"]);
        fs_err::remove_dir_all(t.path(&layout::installed("w", "1.0.0"))).unwrap();
    }
    let run = t.run_env("w", &["install"], &[("A2C_MAX_ENTRIES", "lots")]);
    insta::assert_snapshot!(run.error_transcript());
}

#[test]
fn single_top_level_directory_is_stripped_only_when_shared() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w/p/a", "1.0.0");
    // No top-level directory at all: the manifest sits at the root of the archive.
    let flat = [
        file("a2c-method.toml", "name = \"esys/a2c\"\nversion = \"1.0.0\"\n"),
        item(b"rules/", Kind::Dir),
        file("rules/x.md", "x"),
        item(b"bin/run", Kind::Exec(b"#!/bin/sh\n".to_vec())),
    ];
    t.publish_raw("reg", "1.0.0", &bundles::tar_gz(&flat), "tar.gz");
    t.run("w", &["install"]).success();
    let root = t.path(&layout::installed("w", "1.0.0"));
    assert!(root.join("a2c-method.toml").is_file() && root.join("rules/x.md").is_file());
    let mode = fs_err::metadata(root.join("bin/run")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o555, "the executable bit is kept, nothing else");
    assert_eq!(
        fs_err::metadata(root.join("rules/x.md")).unwrap().permissions().mode() & 0o777,
        0o444
    );
}

/// `install --version V` installs one published version no member pins (from
/// the registry, the lock untouched), says that `gc` would remove it, and `resolve --version V`
/// then finds it — its hint before named exactly that command.
#[test]
fn install_version_adds_one_version_no_member_pins() {
    let t = TestContext::new();
    t.standard_superbuild();
    t.publish("reg", "3.0.0", "tar.gz");
    t.run("w", &["install"]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    let unresolved = t.run("w/p/app", &["resolve", "--version", "3.0.0"]);
    insta::assert_snapshot!(unresolved.transcript());
    let run = t.run("w/p/app", &["install", "--version", "3.0.0", "--json"]);
    let doc = run.json();
    crate::cli_surface::validate("install", &doc);
    assert_eq!(versions_in(&doc, "installed"), ["3.0.0"]);
    assert_eq!(doc["unpinned"], serde_json::json!(["3.0.0"]));
    assert_eq!(doc["members"], serde_json::json!([]));
    assert!(t.has_installed("w", "3.0.0", "a2c-method.toml"));
    assert_eq!(
        fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap(),
        lock,
        "lock untouched"
    );
    t.run("w/p/app", &["resolve", "--version", "3.0.0"]).success();
    let again = t.run("w", &["install", "--version", "3.0.0"]);
    again.success();
    insta::assert_snapshot!(again.transcript());
    // A pinned, locked version comes from the lock, offline too.
    let run = t.ok("w", &["--offline", "install", "--version", "1.0.0"]);
    insta::assert_snapshot!(run.transcript());
    // Offline, a version the lock lacks needs the registry: said, nothing installed.
    t.publish("reg", "3.1.0", "tar.gz");
    let run = t.run("w", &["--offline", "install", "--version", "3.1.0"]);
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path(&layout::installed("w", "3.1.0")).exists());
}

/// An install that reads the registry (a member added a version) warns of the
/// locked versions yanked since; they still install.
#[test]
fn install_warns_of_locked_versions_yanked_since_when_it_reads_the_registry() {
    let t = TestContext::installed_superbuild();
    t.run(".", &["yank", "1.1.0", "--registry", "reg"]).success();
    t.publish("reg", "3.0.0", "tar.gz");
    t.write(
        "w/p/web/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: 3.0.0\ndelivery: package\n",
    );
    let run = t.run("w", &["install", "--json"]);
    let doc = run.json();
    crate::cli_surface::validate("install", &doc);
    assert_eq!(doc["locked"], serde_json::json!(["3.0.0"]));
    assert_eq!(doc["yanked"], serde_json::json!(["1.1.0"]));
    insta::assert_snapshot!(run.transcript());
    // A no-op reads no registry, and says nothing of it.
    let quiet = t.run("w", &["install", "--json"]);
    assert!(quiet.json().get("yanked").is_none());
}

/// A file registry the marker names by a relative path is locked by paths
/// relative to the lock — no machine's absolute path in a committed lock — and those sources
/// install from a copy of the superbuild and registry moved elsewhere, the marker's registry
/// line gone and the cache empty (the lock's own source is then the only place).
#[test]
fn a_relative_registry_is_locked_by_relative_paths_that_travel() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w/p/app", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    t.run("w", &["lock"]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert_contains(&lock, "source = \"../../../../reg/bundles/a2c-1.0.0.tar.gz\"");
    assert!(
        !lock.contains(&t.root.display().to_string()),
        "no absolute path: {lock}"
    );
    // lock again (and --update): the relative source is the same bundle, nothing changes.
    let again = t.run("w", &["lock", "--update", "--json"]).json();
    assert_eq!(again["updated"], serde_json::json!([]), "{again}");
    // A vendor manifest keeps the entry exactly as locked (`lock --from` gives it back).
    t.run("w", &["vendor", "../vend"]).success();
    let manifest = fs_err::read_to_string(t.path("vend/a2c-vendor.json")).unwrap();
    assert_contains(&manifest, "\"../../../../reg/bundles/a2c-1.0.0.tar.gz\"");
    // The superbuild and its registry moved together, the marker without a registry, no cache.
    fs_err::create_dir_all(t.path("moved")).unwrap();
    fs_err::rename(t.path("w"), t.path("moved/w")).unwrap();
    fs_err::rename(t.path("reg"), t.path("moved/reg")).unwrap();
    t.write(
        "moved/w/.tools/esys/a2c/workspace.yaml",
        "schema_version: 1\nmembers: [\"p/*\"]\n",
    );
    let _ = fs_err::remove_dir_all(t.cache_dir());
    let run = t.run("moved/w", &["install", "--json"]);
    let doc = run.json();
    assert_eq!(versions_in(&doc, "installed"), ["1.0.0"]);
    assert!(t.has_installed("moved/w", "1.0.0", "a2c-method.toml"));
}

/// `install --json` lists its members in path order, component by component: `p/a/c` before
/// `p/a-b`, though `-` sorts before `/` byte by byte (the order install tries first).
#[test]
fn members_are_listed_in_path_order_not_byte_order() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\", \"p/a/*\"]\n");
    t.canonical_repo("w/p/a-b", "1.0.0");
    t.canonical_repo("w/p/a/c", "1.0.0");
    t.canonical_repo("w/p/0", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    let reg = t.path("reg").display().to_string();
    let run = t.ok_env("w", &["install", "--json"], &[("A2C_REGISTRY", &reg)]);
    let listed = crate::support::strings_of(&run.json(), "members", "path");
    assert_eq!(listed, [t.shown("w/p/0"), t.shown("w/p/a/c"), t.shown("w/p/a-b")]);
}

/// Two locked bundles whose sources end in one file name are never vendored over
/// each other: `vendor` refuses, naming both versions and the file, and writes nothing.
#[test]
fn vendor_refuses_two_bundles_under_one_file_name() {
    let t = TestContext::locked_superbuild();
    let lock_path = t.path(&layout::lock("w"));
    let lock = fs_err::read_to_string(&lock_path).unwrap();
    // Both sources end in a name that names both versions (a registry's odd naming).
    let odd = lock
        .replace("a2c-1.0.0.tar.gz", "a2c-1.0.0-2.0.0.tar.gz")
        .replace("a2c-2.0.0.tar.gz", "a2c-1.0.0-2.0.0.tar.gz");
    assert_ne!(odd, lock);
    fs_err::write(&lock_path, odd).unwrap();
    let run = t.run("w", &["vendor", "../vend"]);
    insta::assert_snapshot!(run.error_transcript());
    let written: Vec<_> = fs_err::read_dir(t.path("vend"))
        .map(|d| d.count())
        .into_iter()
        .collect();
    assert!(written.is_empty() || written == [0], "{written:?}");
}

/// `install --frozen` that lacks a bundle names the flag the user gave (it said
/// "run without `--offline`"), and the hint, followed, installs.
#[test]
fn a_frozen_install_names_frozen_in_its_hint() {
    let t = TestContext::locked_superbuild();
    let run = t.run("w", &["install", "--frozen"]);
    insta::assert_snapshot!(run.error_transcript());
    t.run("w", &["install"]).success();
}

/// A workspace below a symbolic link the user did not make for a2c — macOS's `/tmp` →
/// `/private/tmp`, `/var` → `/private/var` — works as anywhere else: links are refused only in
/// a2c's own paths (below W, the store, the cache). What a2c records and its `--json`
/// documents name the resolved path, as git and cargo do (one spelling for every path it
/// compares and writes into a member's pointer); its messages name the path the user typed
/// (`-C`, or the shell's `PWD`).
#[test]
fn a_workspace_below_a_symlinked_ancestor_works() {
    let t = TestContext::new();
    t.standard_superbuild();
    // `alias` plays `/tmp`: every path the user types goes through it.
    std::os::unix::fs::symlink(t.path(""), t.path("alias")).unwrap();
    let resolved = |rel: &str| t.shown(rel);
    let typed = |rel: &str| t.shown(&format!("alias/{rel}"));
    let cache = t.path("alias/cache");
    let run_at = |dir: &str, args: &[&str]| {
        let mut cmd = t.cmd(".");
        cmd.arg("-C")
            .arg(t.path(&format!("alias/{dir}")))
            .args(args)
            .env("A2C_CACHE_DIR", &cache);
        Run::from_output(cmd.output().unwrap(), &t.root)
    };
    let run_in = |args: &[&str]| run_at("w", args);
    let run = run_in(&["install", "--json"]);
    run.success();
    let doc = run.json();
    assert_eq!(doc["workspace"], resolved("w"), "{doc}");
    assert_eq!(doc["store"], resolved(&layout::store("w")), "{doc}");
    assert_eq!(versions_in(&doc, "installed"), ["1.0.0", "1.1.0", "2.0.0"]);
    assert!(t.has_installed("w", "2.0.0", "a2c-method.toml"));
    // A second install is a no-op; doctor finds nothing wrong; a member resolves.
    let run = run_in(&["install", "--locked", "--json"]);
    run.success();
    assert!(run.json()["installed"].as_array().unwrap().is_empty(), "{}", run.stdout);
    run_in(&["doctor"]).success();
    let run = run_at("w/p/app", &["resolve", "--json"]);
    run.success();
    assert_eq!(
        run.json()["root"],
        resolved(&layout::installed("w", "1.0.0")),
        "{}",
        run.stdout
    );
    // Said to a person, the path is the one typed: by `-C`, or by `cd` (the shell's `PWD`).
    let run = run_at("w/p/app", &["resolve"]);
    assert_eq!(run.stdout, format!("{}\n", typed(&layout::installed("w", "1.0.0"))));
    let resolve_with_pwd = |pwd: &str| {
        let mut cmd = t.cmd("w/p/app");
        cmd.arg("resolve").env("PWD", t.path(pwd)).env("A2C_CACHE_DIR", &cache);
        Run::from_output(cmd.output().unwrap(), &t.root).stdout
    };
    let root = layout::installed("w", "1.0.0");
    assert_eq!(resolve_with_pwd("alias/w/p/app"), format!("{}\n", typed(&root)));
    // A `PWD` that is not the working directory (a stale one) is not believed.
    assert_eq!(resolve_with_pwd("alias/w"), format!("{}\n", resolved(&root)));
    // A link in a2c's own path is still refused, and named as typed.
    fs_err::rename(t.path("w/.tools_local"), t.path("elsewhere")).unwrap();
    std::os::unix::fs::symlink(t.path("elsewhere"), t.path("w/.tools_local")).unwrap();
    let run = run_in(&["install"]);
    run.failure();
    run.says(&typed("w/.tools_local"));
    assert!(!run.stderr.contains(&resolved("w/")), "{}", run.stderr);
}
