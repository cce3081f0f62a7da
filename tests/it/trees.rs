//! The shared tree cache — placement by clone, hardlink or copy, receipts that say
//! which, tamper detection and eviction, pruning that spares linked trees, and the fallback
//! to copy across filesystems.

use crate::support::{TestContext, items, layout, require_program};
use crate::support::{assert_contains, text_of};
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::PermissionsExt;

const STORE: &str = ".tools_local/esys/a2c";

/// A second superbuild `name` with the standard pins and a copy of `w`'s lock.
fn twin(t: &TestContext, name: &str) {
    t.superbuild(name, "members: [\"m/*\"]\nregistry: ../reg\n");
    t.canonical_repo(&format!("{name}/m/a"), "1.0.0");
    t.legacy_repo(&format!("{name}/m/b"), "1.1.0");
    t.canonical_repo(&format!("{name}/m/c"), "2.0.0");
    fs_err::copy(t.path(&layout::lock("w")), t.path(&layout::lock(name))).unwrap();
}

/// (version, source, link_mode) of each installed version of an `install --json` run.
fn placed(doc: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = items(&doc["installed"])
        .iter()
        .map(|i| {
            (
                i["version"].as_str().unwrap().to_string(),
                i["source"].as_str().unwrap().to_string(),
                i["link_mode"].as_str().unwrap_or("none").to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

fn receipt(t: &TestContext, ws: &str, version: &str) -> serde_json::Value {
    serde_json::from_str(&fs_err::read_to_string(t.path(&format!("{ws}/{STORE}/{version}/.a2c-receipt.json"))).unwrap())
        .unwrap()
}

/// The tree cache entry of `version` (by its receipt's bundle digest in `w`).
fn entry(t: &TestContext, version: &str) -> std::path::PathBuf {
    let r = receipt(t, "w", version);
    t.cache_dir().join("trees").join(r["sha256"].as_str().unwrap())
}

/// The cached tree of `version`.
fn cached(t: &TestContext, version: &str) -> std::path::PathBuf {
    entry(t, version).join("tree")
}

#[test]
fn a_second_superbuild_is_placed_from_the_tree_cache_by_hardlink_or_copy() {
    let t = TestContext::new();
    t.standard_superbuild();
    let doc = t.run("w", &["install", "--json"]).json();
    assert!(
        placed(&doc).iter().all(|(_, s, m)| s == "registry" && m == "none"),
        "{doc}"
    );
    assert!(receipt(&t, "w", "1.0.0").get("link_mode").is_none());
    // One checkout pays nothing: the entry is a record of where the verified tree lives.
    let tree = cached(&t, "1.0.0");
    assert!(entry(&t, "1.0.0").join("record").is_file() && entry(&t, "1.0.0").join("origin").is_file());
    assert!(!tree.exists());
    // The second superbuild: no bundle read; the tree is shared into the cache from the
    // first store, then placed from there: all three are one file.
    twin(&t, "w2");
    fs_err::remove_dir_all(t.path("reg")).unwrap();
    let doc = t.run("w2", &["install", "--offline", "--json"]).json();
    assert_eq!(
        placed(&doc),
        [
            ("1.0.0".into(), "tree-cache".into(), "hardlink".into()),
            ("1.1.0".into(), "tree-cache".into(), "hardlink".into()),
            ("2.0.0".into(), "tree-cache".into(), "hardlink".into()),
        ]
    );
    assert!(tree.join(".a2c-tree").is_file() && !entry(&t, "1.0.0").join("origin").exists());
    let ino = |p: std::path::PathBuf| fs_err::metadata(p).unwrap().ino();
    assert_eq!(
        ino(t.path(&format!("w2/{STORE}/1.0.0/rules/core.md"))),
        ino(tree.join("rules/core.md"))
    );
    assert_eq!(
        ino(t.path(&format!("w/{STORE}/1.0.0/rules/core.md"))),
        ino(tree.join("rules/core.md"))
    );
    assert!(
        !t.path(&format!("w2/{STORE}/1.0.0/record")).exists(),
        "the record is never placed"
    );
    let mode = fs_err::metadata(t.path(&format!("w2/{STORE}/1.0.0/rules/core.md")))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o222, 0, "placed files are read-only");
    assert_eq!(receipt(&t, "w2", "2.0.0")["link_mode"], "hardlink");
    t.run("w2", &["doctor", "--deep"]).success();
    // --link-mode copy (and A2C_LINK_MODE): independent files.
    twin(&t, "w3");
    let doc = t
        .run("w3", &["install", "--offline", "--json", "--link-mode", "copy"])
        .json();
    assert!(
        placed(&doc).iter().all(|(_, s, m)| s == "tree-cache" && m == "copy"),
        "{doc}"
    );
    assert_ne!(
        ino(t.path(&format!("w3/{STORE}/1.0.0/rules/core.md"))),
        ino(tree.join("rules/core.md"))
    );
    twin(&t, "w4");
    let doc = t
        .run_env("w4", &["install", "--offline", "--json"], &[("A2C_LINK_MODE", "copy")])
        .json();
    assert!(placed(&doc).iter().all(|(_, _, m)| m == "copy"), "{doc}");
    // clone is copy-on-write where the filesystem can, else a copy: never a shared inode.
    twin(&t, "w5");
    let doc = t
        .run("w5", &["install", "--offline", "--json", "--link-mode", "clone"])
        .json();
    assert!(
        placed(&doc).iter().all(|(_, _, m)| m == "clone" || m == "copy"),
        "{doc}"
    );
    assert_eq!(
        t.run("w5", &["install", "--link-mode", "symlink"]).code,
        2,
        "a usage error"
    );
    // Through clap's `env`: a usage error too, naming the variable.
    let run = t.run_env("w5", &["install"], &[("A2C_LINK_MODE", "symlink")]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    run.says("A2C_LINK_MODE=`symlink` is not a link mode: use clone, hardlink, copy");
}

#[test]
fn a_tampered_cached_tree_is_evicted_and_rebuilt_and_deep_doctor_finds_a_subtle_one() {
    let t = TestContext::installed_superbuild();
    // Shared into the cache by copy: the cache's files are its own.
    twin(&t, "w2");
    t.run("w2", &["install", "--offline", "--link-mode", "copy"]).success();
    let tree = cached(&t, "1.0.0");
    let file = tree.join("rules/core.md");
    let original = fs_err::read_to_string(&file).unwrap();
    // Written after a chmod: size, time and mode differ from the record.
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    fs_err::write(&file, "tampered\n").unwrap();
    twin(&t, "w3");
    let doc = t.run("w3", &["install", "--offline", "--json"]).json();
    let sources = placed(&doc);
    assert_eq!(sources[0].0, "1.0.0");
    assert_eq!(sources[0].1, "cache", "evicted, installed from its bundle: {doc}");
    assert_eq!(sources[1].1, "tree-cache");
    assert_eq!(
        fs_err::read_to_string(t.path(&format!("w3/{STORE}/1.0.0/rules/core.md"))).unwrap(),
        original
    );
    // Rebuilt: the next checkout shares the fresh tree from w3's store.
    twin(&t, "w4");
    let doc = t.run("w4", &["install", "--offline", "--json"]).json();
    assert!(placed(&doc).iter().all(|(_, s, _)| s == "tree-cache"), "{doc}");
    assert_eq!(fs_err::read_to_string(tree.join("rules/core.md")).unwrap(), original);
    t.run("w4", &["doctor", "--deep"]).success();
    // Same size, time and mode restored: the change time gives it away to plain `doctor`
    // (no content read), `doctor --deep` names the content, and placement evicts it.
    let file = cached(&t, "2.0.0").join("rules/core.md");
    let reference = t.path("reference");
    std::process::Command::new("cp")
        .arg("-p")
        .arg(&file)
        .arg(&reference)
        .status()
        .unwrap();
    let len = fs_err::metadata(&file).unwrap().len() as usize;
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    fs_err::write(&file, "x".repeat(len)).unwrap();
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let touched = std::process::Command::new("touch")
        .arg("-r")
        .arg(&reference)
        .arg(&file)
        .status()
        .unwrap();
    assert!(touched.success());
    let doc = t.run("w4", &["doctor", "--json"]).verdict_json();
    let finding = crate::support::finding(&doc, "cache-tree-modified");
    assert_contains(
        text_of(&finding, "message"),
        "`rules/core.md` was changed in place since it was cached",
    );
    let doc = t.run("w4", &["doctor", "--deep", "--json"]).verdict_json();
    let finding = crate::support::finding(&doc, "cache-tree-modified");
    assert_contains(text_of(&finding, "message"), "`rules/core.md` has other content");
    twin(&t, "w5");
    let doc = t.run("w5", &["install", "--offline", "--json"]).json();
    let two = placed(&doc).into_iter().find(|(v, _, _)| v == "2.0.0").unwrap();
    assert_eq!(two.1, "cache", "evicted, installed from its bundle: {doc}");
    assert_ne!(
        fs_err::read(t.path(&format!("w5/{STORE}/2.0.0/rules/core.md"))).unwrap(),
        "x".repeat(len).into_bytes()
    );
}

#[test]
fn gc_prunes_cached_trees_no_lock_references_and_no_store_holds() {
    let t = TestContext::installed_superbuild();
    let entries = ["1.0.0", "1.1.0", "2.0.0"].map(|v| entry(&t, v));
    // A superbuild pinning only 1.0.0: its tree is shared into the cache.
    t.superbuild("w2", "members: [\"m/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w2/m/a", "1.0.0");
    t.run("w2", &["install"]).success();
    assert!(entries[0].join("tree").is_dir() && !entries[1].join("tree").exists());
    // w's store still holds every version: nothing is pruned, though w2's lock has only 1.0.0.
    let doc = t.run("w2", &["gc", "--cache", "--json"]).json();
    assert_eq!(doc["cache_trees_removed"], serde_json::json!([]), "{doc}");
    assert!(entries.iter().all(|p| p.is_dir()));
    // w's store gone: the entries of 1.1.0 and 2.0.0 are unreferenced and held by no store.
    fs_err::remove_dir_all(t.path("w/.tools_local")).unwrap();
    let doc = t.run("w2", &["gc", "--cache", "--dry-run", "--json"]).json();
    assert_eq!(doc["cache_trees_removed"].as_array().unwrap().len(), 2, "{doc}");
    assert!(entries.iter().all(|p| p.is_dir()), "a dry run changes nothing");
    t.run("w2", &["gc", "--cache"]).success();
    assert!(
        entries[0].join("tree").is_dir(),
        "referenced by w2's lock and linked by its store"
    );
    assert!(!entries[1].exists() && !entries[2].exists());
    // w installs again: 1.0.0 from the tree cache, the others from the registry.
    let doc = t.run("w", &["install", "--json"]).json();
    assert!(
        placed(&doc).contains(&("1.0.0".into(), "tree-cache".into(), "hardlink".into())),
        "{doc}"
    );
    assert!(entries.iter().all(|p| p.is_dir()));
    // A tree no store links and no lock references goes too.
    // Both checkouts gone (stores and locks).
    fs_err::remove_dir_all(t.path("w")).unwrap();
    fs_err::remove_dir_all(t.path("w2")).unwrap();
    t.superbuild("w3", "members: [\"m/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w3/m/c", "2.0.0");
    t.run("w3", &["install"]).success();
    t.run("w3", &["gc", "--cache"]).success();
    assert!(
        !entries[0].exists(),
        "1.0.0's tree: no store links it, no lock here references it"
    );
}

/// The cache on another filesystem than the stores (a tmpfs): sharing the first store's tree
/// into it, and placing from it, fall back to copies.
#[test]
fn across_filesystems_the_tree_cache_falls_back_to_copies() {
    let t = TestContext::new();
    let shm = std::path::Path::new("/dev/shm");
    let other = shm.is_dir()
        && fs_err::metadata(shm).unwrap().dev() != fs_err::metadata(&t.root).unwrap().dev()
        && tempfile::tempdir_in(shm).is_ok();
    if !other {
        require_program("a second filesystem at /dev/shm (a tmpfs)");
        return;
    }
    let cache = tempfile::Builder::new().prefix("a2c-trees-").tempdir_in(shm).unwrap();
    let cache_dir = cache.path().join("cache");
    let env = [("A2C_CACHE_DIR", cache_dir.to_str().unwrap())];
    t.standard_superbuild();
    t.run_env("w", &["install"], &env).success();
    twin(&t, "w2");
    let doc = t.run_env("w2", &["install", "--offline", "--json"], &env).json();
    assert!(
        placed(&doc).iter().all(|(_, s, m)| s == "tree-cache" && m == "copy"),
        "hardlinks cannot cross filesystems: {doc}"
    );
    t.run_env("w2", &["doctor", "--deep"], &env).success();
}

/// A file of the first store changed after it was recorded (even keeping its size and mode):
/// the second checkout does not share it into the cache, and installs from the bundle.
#[test]
fn an_origin_changed_since_its_record_is_not_shared() {
    let t = TestContext::installed_superbuild();
    let file = t.path(&format!("w/{STORE}/2.0.0/rules/core.md"));
    let len = fs_err::metadata(&file).unwrap().len() as usize;
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    fs_err::write(&file, "y".repeat(len)).unwrap();
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    twin(&t, "w2");
    let doc = t.run("w2", &["install", "--offline", "--json"]).json();
    let sources = placed(&doc);
    assert_eq!(sources[2], ("2.0.0".into(), "cache".into(), "none".into()), "{doc}");
    assert_eq!(sources[0].1, "tree-cache");
    assert!(!cached(&t, "2.0.0").exists() || entry(&t, "2.0.0").join("origin").exists());
    t.run("w2", &["doctor", "--deep"]).success();
}
