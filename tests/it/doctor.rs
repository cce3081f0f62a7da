//! `a2c doctor` (one fixture per finding code) and `a2c gc`.

use crate::support::{TestContext, finding, items, layout, strings_of, succeeds};
use crate::support::{assert_contains, text_of};
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;

/// The standard superbuild, locked and installed. Its findings are `tool-state-legacy` (l/core
/// is in the legacy layout) and `delivery-served-by-workspace` (l/core's record says
/// `submodule`, but it has no `tools/ai-rules`: W's store serves it).
fn installed(t: &TestContext) {
    t.standard_superbuild();
    t.run("w", &["install"]).success();
}

fn codes(t: &TestContext, args: &[&str]) -> (i32, BTreeSet<String>, serde_json::Value) {
    let mut full = vec!["doctor", "--json"];
    full.extend_from_slice(args);
    let run = t.run("w", &full);
    let doc = run.verdict_json();
    let codes = items(&doc["findings"])
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect();
    (run.code, codes, doc)
}

/// The findings beyond the baseline's.
fn new_codes(t: &TestContext, args: &[&str]) -> (i32, Vec<String>) {
    let (code, all, _) = codes(t, args);
    (
        code,
        all.into_iter()
            .filter(|c| c != "tool-state-legacy" && c != "delivery-served-by-workspace")
            .collect(),
    )
}

fn writable(t: &TestContext, rel: &str) {
    fs_err::set_permissions(t.path(rel), std::fs::Permissions::from_mode(0o644)).unwrap();
}

fn store(v: &str) -> String {
    layout::installed("w", v)
}

#[test]
fn a_fresh_install_is_healthy_and_the_json_has_the_contract_shape() {
    let t = TestContext::new();
    installed(&t);
    let (code, all, doc) = codes(&t, &["--deep"]);
    assert_eq!(code, 0);
    assert_eq!(
        all,
        BTreeSet::from([
            "delivery-served-by-workspace".to_string(),
            "tool-state-legacy".to_string()
        ])
    );
    assert_eq!(doc["workspace"], t.shown("w"));
    assert_eq!(doc["summary"], serde_json::json!({"fail": 0, "warn": 0, "info": 2}));
    let f = finding(&doc, "tool-state-legacy");
    let keys: Vec<&String> = f.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["code", "hint", "message", "repo", "severity", "version"]);
    assert_eq!(f["severity"], "info");
    assert_eq!(f["repo"], t.shown("w/l/core"));
    assert_eq!(f["version"], "1.1.0");
    // Human output: one line per finding, its hint, and a verdict.
    let run = t.ok("w", &["doctor"]);
    assert!(
        run.stdout.contains("info tool-state-legacy [l/core 1.1.0]")
            && run.stdout.ends_with("healthy: 0 fail, 0 warn, 2 info\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn doctor_without_deep_reads_no_bundle() {
    let t = TestContext::new();
    installed(&t);
    fs_err::remove_dir_all(t.path("reg")).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    let (code, codes) = new_codes(&t, &[]);
    assert_eq!((code, codes), (0, vec![]));
}

#[test]
fn tool_state_findings() {
    let t = TestContext::new();
    installed(&t);
    // Both roots, same contract: warn.
    t.write("w/p/app/.a2c/adoption.yaml", "tool_version: v1.0.0\n");
    assert_eq!(new_codes(&t, &[]), (0, vec!["tool-state-both-roots".to_string()]));
    // Both roots, different contracts: fail.
    t.write("w/p/app/.a2c/adoption.yaml", "tool_version: v0.9.0\n");
    assert_eq!(new_codes(&t, &[]), (1, vec!["tool-state-roots-disagree".to_string()]));
    fs_err::remove_dir_all(t.path("w/p/app/.a2c")).unwrap();
    // The legacy layout is reported for l/core, as info.
    let (_, _, doc) = codes(&t, &[]);
    let legacy = finding(&doc, "tool-state-legacy");
    assert_eq!(
        (legacy["severity"].as_str(), legacy["repo"].as_str()),
        (Some("info"), Some(t.shown("w/l/core").as_str()))
    );
    // A tool state root without a record: fail.
    t.git_repo("w/p/empty");
    fs_err::create_dir_all(t.path("w/p/empty/.tools/esys/a2c")).unwrap();
    assert_eq!(new_codes(&t, &[]), (1, vec!["adoption-missing".to_string()]));
    fs_err::remove_dir_all(t.path("w/p/empty")).unwrap();
    // An invalid record: fail, with the parser's file:line reason.
    t.write(
        "w/p/app/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: ^1.0\n",
    );
    let (code, all, doc) = codes(&t, &[]);
    assert_eq!(code, 1);
    assert!(all.contains("adoption-invalid"), "{all:?}");
    let f = finding(&doc, "adoption-invalid");
    assert!(f["message"].as_str().unwrap().contains("adoption.yaml` line 2"), "{f}");
}

#[test]
fn resolution_findings() {
    let t = TestContext::new();
    installed(&t);
    // A contract that is locked but not installed.
    t.publish("reg", "3.0.0", "tar.gz");
    t.canonical_repo("w/p/new", "3.0.0");
    t.run("w", &["lock"]).success();
    assert_eq!(new_codes(&t, &[]), (1, vec!["unresolved".to_string()]));
    t.run("w", &["install"]).success();
    assert_eq!(new_codes(&t, &[]), (0, vec![]));
    // A resolved tree whose manifest is of another version.
    writable(&t, &format!("{}/a2c-method.toml", store("2.0.0")));
    t.write(
        &format!("{}/a2c-method.toml", store("2.0.0")),
        "name = \"esys/a2c\"\nversion = \"2.0.1\"\n",
    );
    assert_eq!(new_codes(&t, &[]), (1, vec!["manifest-version-mismatch".to_string()]));
}

#[test]
fn legacy_ai_rules_and_workspace_ai_rules() {
    let t = TestContext::new();
    installed(&t);
    // W/tools/ai-rules holding a method tree: warn (never used).
    t.method_tree("w/tools/ai-rules", "2.0.0");
    assert_eq!(
        new_codes(&t, &[]),
        (0, vec!["workspace-ai-rules-method-tree".to_string()])
    );
    fs_err::remove_dir_all(t.path("w/tools")).unwrap();
    // A member resolved through its legacy mount: info.
    t.publish("reg", "5.0.0", "tar.gz");
    t.canonical_repo("w/p/mounted", "5.0.0");
    t.method_tree("w/p/mounted/tools/ai-rules", "5.0.0");
    t.run("w", &["lock"]).success();
    assert_eq!(new_codes(&t, &[]), (0, vec!["resolved-legacy-ai-rules".to_string()]));
}

#[test]
fn a_method_needing_a_newer_a2c() {
    let t = TestContext::new();
    installed(&t);
    t.publish_needing("reg", "6.0.0", "99.0.0");
    t.canonical_repo("w/p/future", "6.0.0");
    // Locked (`lock` reads no manifest); install refuses it before publishing anything
    // (docs/concepts.md, "Resolution", drift: the running CLI), and leaves the lock as it was.
    t.run("w", &["lock"]).success();
    // Before any install (nothing cached), doctor reads the manifest from the locked file
    // registry's bundle: the hint names the a2c needed, never an install that refuses.
    let (_, before, doc) = codes(&t, &[]);
    assert!(!before.contains("unresolved"), "{before:?}");
    let f = finding(&doc, "a2c-too-old");
    assert_contains(text_of(&f, "hint"), "upgrade a2c to 99.0.0 or newer");
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path(&store("6.0.0")).exists(), "nothing published");
    assert!(t.path(&store("2.0.0")).is_dir(), "the others stay installed");
    // doctor names min_a2c and the running version, not an install that would refuse.
    let (_, codes_now, doc) = codes(&t, &[]);
    assert!(!codes_now.contains("unresolved"), "{codes_now:?}");
    let f = finding(&doc, "a2c-too-old");
    assert_eq!(f["version"], "6.0.0");
    assert_contains(text_of(&f, "message"), "needs a2c 99.0.0 or newer; this is a2c ");
    assert!(!f["hint"].as_str().unwrap().starts_with("run `a2c install`"), "{f}");
    // Migrating to it is refused before anything is written.
    crate::support::git(&t.path("w/p/app"), &["add", "-A"]);
    crate::support::git(&t.path("w/p/app"), &["commit", "-q", "-m", "initial"]);
    let lock_before = fs_err::read(t.path(&layout::lock("w"))).unwrap();
    let head = crate::support::git(&t.path("w/p/app"), &["rev-parse", "HEAD"]);
    let run = t.run("w/p/app", &["migrate", "version", "--to", "6.0.0"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(crate::support::git(&t.path("w/p/app"), &["rev-parse", "HEAD"]), head);
    assert_eq!(crate::support::git(&t.path("w/p/app"), &["status", "--porcelain"]), "");
    assert_eq!(fs_err::read(t.path(&layout::lock("w"))).unwrap(), lock_before);
    // Resolve warns when the tree it hands out needs a newer a2c; doctor fails it.
    fs_err::create_dir_all(t.path("w/p/future/tools")).unwrap();
    fs_err::rename(t.path("trees/6.0.0"), t.path("w/p/future/tools/ai-rules")).unwrap();
    let run = t.ok("w/p/future", &["resolve"]);
    run.says("method 6.0.0 needs a2c >= 99.0.0");
    let (code, codes, doc) = codes(&t, &[]);
    assert_eq!(code, 1);
    assert!(codes.contains("a2c-too-old"), "{codes:?}");
    let f = finding(&doc, "a2c-too-old");
    assert_contains(text_of(&f, "message"), "needs a2c 99.0.0 or newer");
}

#[test]
fn lock_findings() {
    let t = TestContext::new();
    installed(&t);
    let lock_path = t.path(&layout::lock("w"));
    let lock = fs_err::read_to_string(&lock_path).unwrap();
    // A pinned version missing from the lock.
    let without_2 = {
        let parts: Vec<&str> = lock.split("\n[[method]]").collect();
        let kept: Vec<&str> = parts
            .iter()
            .copied()
            .filter(|p| !p.contains("version = \"2.0.0\""))
            .collect();
        kept.join("\n[[method]]")
    };
    fs_err::write(&lock_path, &without_2).unwrap();
    assert_eq!(new_codes(&t, &[]), (1, vec!["lock-missing-version".to_string()]));
    // An entry nobody pins (and its store version gone).
    fs_err::write(&lock_path, &lock).unwrap();
    t.adopt("w/p/web", "1.0.0");
    fs_err::remove_dir_all(t.path(&store("2.0.0"))).unwrap();
    assert_eq!(new_codes(&t, &[]), (0, vec!["lock-unused-entry".to_string()]));
    // An unreadable lock.
    fs_err::write(&lock_path, "version = 7\n").unwrap();
    let (code, codes) = new_codes(&t, &[]);
    assert_eq!((code, codes), (1, vec!["lock-invalid".to_string()]));
}

#[test]
fn store_findings() {
    let t = TestContext::new();
    installed(&t);
    // A version no member pins, once the lock no longer has it either.
    t.adopt("w/p/web", "1.0.0");
    t.run("w", &["lock"]).success();
    assert_eq!(new_codes(&t, &[]), (0, vec!["store-orphan-version".to_string()]));
    t.run("w", &["gc"]).success();
    assert_eq!(new_codes(&t, &[]), (0, vec![]));
    // A receipt whose bundle is not the locked one.
    let lock_path = t.path(&layout::lock("w"));
    let lock = fs_err::read_to_string(&lock_path).unwrap();
    let sha = lock
        .split("sha256 = \"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    fs_err::write(&lock_path, lock.replacen(&sha, &"0".repeat(64), 1)).unwrap();
    assert_eq!(new_codes(&t, &[]), (1, vec!["store-receipt-lock-mismatch".to_string()]));
    fs_err::write(&lock_path, &lock).unwrap();
    // A missing receipt.
    fs_err::remove_file(t.path(&format!("{}/.a2c-receipt.json", store("1.1.0")))).unwrap();
    assert_eq!(new_codes(&t, &[]), (0, vec!["store-receipt-missing".to_string()]));
}

#[test]
fn deep_rehashes_and_names_modified_missing_and_extra_files() {
    let t = TestContext::new();
    installed(&t);
    let v = store("1.0.0");
    writable(&t, &format!("{v}/rules/core.md"));
    t.write(&format!("{v}/rules/core.md"), "tampered\n");
    fs_err::remove_file(t.path(&format!("{v}/prompts/review.md"))).unwrap();
    t.write(&format!("{v}/rules/new.md"), "extra\n");
    assert_eq!(new_codes(&t, &[]), (0, vec![]), "without --deep nothing is hashed");
    let (code, all, doc) = codes(&t, &["--deep"]);
    assert_eq!(code, 1);
    assert!(all.contains("store-tree-modified"));
    let f = finding(&doc, "store-tree-modified");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("modified: rules/core.md")
            && msg.contains("missing: prompts/review.md")
            && msg.contains("extra: rules/new.md"),
        "{msg}"
    );
    assert_eq!(f["version"], "1.0.0");
    // A changed executable bit counts too.
    let t2 = TestContext::new();
    installed(&t2);
    fs_err::set_permissions(
        t2.path(&format!("{}/rules/core.md", store("2.0.0"))),
        std::fs::Permissions::from_mode(0o555),
    )
    .unwrap();
    let (_, all) = new_codes(&t2, &["--deep"]);
    assert_eq!(all, ["store-tree-modified"]);
}

#[test]
fn leftovers_stale_locks_and_stale_pointers() {
    let t = TestContext::new();
    installed(&t);
    fs_err::create_dir_all(t.path("w/.tools_local/esys/a2c/.staging/1.0.0-abc/tree")).unwrap();
    assert_eq!(new_codes(&t, &[]), (0, vec!["store-staging-leftover".to_string()]));
    t.run("w", &["install"]).success();
    // A lock file naming a process that no longer exists.
    t.write(&layout::store_lock("w"), "4194303\n");
    assert_eq!(new_codes(&t, &[]), (0, vec!["store-stale-lock".to_string()]));
    t.write(&layout::store_lock("w"), "");
    // A member whose local pointer names another directory.
    t.superbuild("other", "");
    t.write(
        &layout::pointer("w/p/app"),
        &format!("workspace_root: {}\n", t.path("other").display()),
    );
    assert_eq!(new_codes(&t, &[]), (0, vec!["pointer-stale".to_string()]));
    // `install` rewrites a pointer that differs (it skips only one already right).
    t.run("w", &["install"]).success();
    assert_eq!(new_codes(&t, &[]), (0, Vec::<String>::new()));
    // A pointer naming W another way (relative) is resolved, not taken as stale.
    t.write(&layout::pointer("w/p/app"), "workspace_root: ../..\n");
    assert_eq!(new_codes(&t, &[]), (0, Vec::<String>::new()));
}

#[test]
fn every_code_is_documented() {
    let doc = fs_err::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/doctor.md")).unwrap();
    for code in a2c::doctor::Code::ALL {
        let sev = code.severity().as_str();
        assert!(
            doc.contains(&format!("### `{code}` ({sev})")),
            "docs/doctor.md lacks `{code}` ({sev})"
        );
        assert_eq!(code.anchor(), format!("docs/doctor.md#{code}-{sev}"));
    }
}

#[test]
fn the_installed_demo_is_healthy() {
    let t = TestContext::demo();
    t.run(
        "demo/superbuild",
        &["install", "--offline", "--from", "../registry/bundles"],
    )
    .success();
    let run = t.ok("demo/superbuild", &["doctor", "--deep", "--json"]);
    let summary = &run.json()["summary"];
    assert_eq!(
        (summary["fail"].as_u64(), summary["warn"].as_u64()),
        (Some(0), Some(0)),
        "{}",
        run.stdout
    );
}

#[test]
fn gc_keeps_every_pinned_version_and_dry_run_changes_nothing() {
    let t = TestContext::new();
    installed(&t);
    // 1.1.0 is pinned only by the legacy member l/core; 2.0.0 becomes unpinned.
    t.adopt("w/p/web", "1.0.0");
    let before = t.listing("w");
    let lock_before = fs_err::read_to_string(t.path(&layout::store_lock("w"))).unwrap();
    let run = t.ok("w", &["gc", "--dry-run"]);
    insta::assert_snapshot!(run.transcript());
    assert_eq!(t.listing("w"), before, "--dry-run changes nothing");
    assert_eq!(
        fs_err::read_to_string(t.path(&layout::store_lock("w"))).unwrap(),
        lock_before
    );
    let run = t.ok("w", &["gc", "--json"]);
    let doc = run.json();
    assert_eq!(
        doc["removed"],
        serde_json::json!([{"version": "2.0.0", "path": t.shown(&layout::installed("w", "2.0.0"))}])
    );
    let kept = strings_of(&doc, "kept", "version");
    assert_eq!(kept, ["1.0.0", "1.1.0"]);
    assert!(!t.path(&store("2.0.0")).exists() && t.path(&store("1.1.0")).exists());
    // Run from a member, gc still considers the whole workspace.
    let run = t.ok("w/p/app", &["gc", "--json"]);
    assert!(run.json()["removed"].as_array().unwrap().is_empty());
    // An unreadable member stops gc rather than guess what it pins.
    t.write("w/l/core/.a2c/adoption.yaml", "tool_version: [broken\n");
    let run = t.run("w", &["gc"]);
    run.failure();
    assert!(t.path(&store("1.1.0")).exists());
}

#[test]
fn gc_cache_prunes_only_unreferenced_bundles() {
    let t = TestContext::new();
    installed(&t);
    assert_eq!(t.listing("cache/bundles").len(), 3);
    t.adopt("w/p/web", "1.0.0");
    t.run("w", &["lock"]).success();
    let run = t.run("w", &["gc", "--cache", "--dry-run", "--json"]);
    assert_eq!(run.json()["cache_removed"].as_array().unwrap().len(), 1);
    assert_eq!(t.listing("cache/bundles").len(), 3);
    t.run("w", &["gc", "--cache"]).success();
    assert_eq!(t.listing("cache/bundles").len(), 2);
    // Without --cache the cache is never touched.
    t.adopt("w/p/app", "1.1.0");
    t.adopt("w/l/util", "1.1.0");
    t.adopt("w/p/web", "1.1.0");
    t.run("w", &["lock"]).success();
    t.run("w", &["gc"]).success();
    assert_eq!(t.listing("cache/bundles").len(), 2);
}

/// Follows the hint of the finding `code`: runs the `a2c …` command it names (where the finding
/// is: its member, else W), and checks the finding is gone afterwards.
fn follow_hint(t: &TestContext, code: &str, doctor_args: &[&str]) {
    let (_, _, doc) = codes(t, doctor_args);
    let f = finding(&doc, code);
    let hint = f["hint"].as_str().unwrap();
    let start = hint
        .find("`a2c ")
        .unwrap_or_else(|| panic!("{code}: the hint names no a2c command: {hint}"))
        + 1;
    let command = &hint[start..start + hint[start..].find('`').unwrap()];
    let args = shlex::split(command).unwrap();
    let in_superbuild = hint[start..].starts_with("a2c install` in the superbuild");
    let cwd = f["repo"]
        .as_str()
        .filter(|_| !in_superbuild)
        .and_then(|r| r.strip_prefix("[TMP]/"))
        .map(str::to_string)
        .unwrap_or_else(|| "w".into());
    t.ok(&cwd, &args[1..].iter().map(String::as_str).collect::<Vec<_>>());
    let (_, after, _) = codes(t, doctor_args);
    assert!(!after.contains(code), "`{command}` in {cwd} left `{code}`: {after:?}");
}

/// Every hint that names a command is true: running it makes its finding go away.
#[test]
fn each_hint_names_a_command_that_clears_its_finding() {
    let t = TestContext::new();
    installed(&t);
    // A leftover staging directory, a dead holder's pid in the store lock, a stale pointer.
    fs_err::create_dir_all(t.path("w/.tools_local/esys/a2c/.staging/1.0.0-abc/tree")).unwrap();
    follow_hint(&t, "store-staging-leftover", &[]);
    t.write(&layout::store_lock("w"), "4194303\n");
    follow_hint(&t, "store-stale-lock", &[]);
    t.superbuild("other", "");
    t.write(
        &layout::pointer("w/p/app"),
        &format!("workspace_root: {}\n", t.path("other").display()),
    );
    follow_hint(&t, "pointer-stale", &[]);
    // A member moves from 1.1.0 to 2.0.0 by hand: the lock keeps 1.1.0, the store holds it.
    t.write(
        "w/l/core/.a2c/adoption.yaml",
        "tool_version: v2.0.0\ndelivery: submodule\n",
    );
    follow_hint(&t, "lock-unused-entry", &[]);
    follow_hint(&t, "store-orphan-version", &[]);
    // And back: the lock lacks 1.1.0, and nothing serves it.
    t.write(
        "w/l/core/.a2c/adoption.yaml",
        "tool_version: v1.1.0\ndelivery: submodule\n",
    );
    follow_hint(&t, "lock-missing-version", &[]);
    // Its delivery tree is absent and W's store no longer holds it: an install in W serves it.
    follow_hint(&t, "delivery-tree-missing", &[]);
    // An installed file changed: --deep finds it, and the named reinstall restores it.
    let file = t.path(&format!("{}/rules/core.md", store("1.0.0")));
    writable(&t, &format!("{}/rules/core.md", store("1.0.0")));
    fs_err::write(&file, "changed\n").unwrap();
    follow_hint(&t, "store-tree-modified", &["--deep"]);
    // A version without its receipt; one whose receipt names another bundle.
    fs_err::remove_file(t.path(&format!("{}/.a2c-receipt.json", store("2.0.0")))).unwrap();
    follow_hint(&t, "store-receipt-missing", &[]);
    let receipt = t.path(&format!("{}/.a2c-receipt.json", store("2.0.0")));
    let text = fs_err::read_to_string(&receipt).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let sha = doc["sha256"].as_str().unwrap();
    writable(&t, &format!("{}/.a2c-receipt.json", store("2.0.0")));
    fs_err::write(&receipt, text.replace(sha, &"0".repeat(64))).unwrap();
    follow_hint(&t, "store-receipt-lock-mismatch", &[]);
    // A migration killed mid-way: its hint resumes it.
    t.commit_members();
    let killed = t
        .cmd("w/p/app")
        .args(["migrate", "version", "--to", "2.0.0"])
        .env("A2C_TEST_HOOK", "abort:migrate-before-commit")
        .output()
        .unwrap();
    assert!(!killed.status.success());
    follow_hint(&t, "migration-pending", &[]);
}

/// A nested superbuild whose marker cannot be read fails every command inside it, and the
/// outer doctor says so.
#[test]
fn the_outer_doctor_reports_a_nested_marker_it_cannot_read() {
    let t = TestContext::new();
    installed(&t);
    t.superbuild("w/p/nested", "members: [\"*\"]\nmembers: [\"x/*\"]\n");
    let (code, found, doc) = codes(&t, &[]);
    assert_eq!(code, 1);
    assert!(found.contains("nested-marker-invalid"), "{found:?}");
    let f = finding(&doc, "nested-marker-invalid");
    assert!(f["message"].as_str().unwrap().contains("[TMP]/w/p/nested"), "{f}");
    t.run("w/p/nested", &["doctor"]).failure();
    t.superbuild("w/p/nested", "members: [\"*\"]\n");
    let (_, found, _) = codes(&t, &[]);
    assert!(!found.contains("nested-marker-invalid"), "{found:?}");
}

/// Doctor asks the configured registry (online) and warns of every member
/// pinning a version it has yanked; --offline does not ask.
#[test]
fn doctor_warns_of_pinned_versions_the_registry_has_yanked() {
    let t = TestContext::installed_superbuild();
    t.run(".", &["yank", "2.0.0", "--registry", "reg"]).success();
    let run = t.run("w", &["doctor", "--json"]);
    let doc = run.verdict_json();
    crate::cli_surface::validate("doctor", &doc);
    let f = finding(&doc, "version-yanked");
    assert_eq!(f["severity"], "warn");
    assert_eq!(f["repo"], t.shown("w/p/web"));
    assert_eq!(f["version"], "2.0.0");
    // Nothing newer is published: the hint never suggests going back to 1.1.0.
    assert_contains(text_of(&f, "hint"), "no version newer than 2.0.0");
    t.publish("reg", "3.0.0", "tar.gz");
    let doc = t.run("w", &["doctor", "--json"]).verdict_json();
    let f = finding(&doc, "version-yanked");
    let hint = f["hint"].as_str().unwrap();
    assert!(hint.contains("migrate version --to 3.0.0"), "{f}");
    // The hint works from W, where doctor ran (it named no member before).
    t.commit_members();
    let command = hint.split('`').nth(1).unwrap();
    t.run_printed("w", command).success();
    let record = fs_err::read_to_string(t.path("w/p/web/.tools/esys/a2c/adoption.yaml")).unwrap();
    assert!(record.contains("tool_version: 3.0.0"), "{record}");
    let offline = t.run("w", &["--offline", "doctor", "--json"]).verdict_json();
    assert!(
        !items(&offline["findings"])
            .iter()
            .any(|f| f["code"] == "version-yanked"),
        "{offline}"
    );
}

/// A directory created in an installed version (empty, so outside the tree digest)
/// is found by `doctor --deep`, and the reinstall its hint names clears it.
#[test]
fn deep_finds_a_directory_the_tree_digest_does_not_cover() {
    let t = TestContext::new();
    installed(&t);
    let dir = t.path(&store("1.0.0"));
    fs_err::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    fs_err::create_dir_all(dir.join("planted/deeper")).unwrap();
    let (_, codes, doc) = codes(&t, &["--deep"]);
    assert!(codes.contains("store-tree-modified"), "{codes:?}");
    let found = finding(&doc, "store-tree-modified");
    let message = found["message"].as_str().unwrap();
    assert!(message.contains("extra: planted/, planted/deeper/"), "{message}");
    follow_hint(&t, "store-tree-modified", &["--deep"]);
    assert!(!dir.join("planted").exists());
}

/// A clone of a superbuild made without its submodules has no members: doctor fails with
/// `member-missing` for each (never "healthy"), `install --locked` says members may be missing
/// before it says to re-lock, and the hint, run as printed, brings them; a member the marker
/// names by its path that is not there is missing too.
#[test]
fn a_clone_without_its_members_is_not_healthy() {
    let t = TestContext::new();
    t.superbuild("origin", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.publish("reg", "1.0.0", "tar.gz");
    for m in ["app", "lib"] {
        t.canonical_repo(&format!("origin/p/{m}"), "1.0.0");
        t.commit_all(&format!("origin/p/{m}"));
        let url = t.path(&format!("origin/p/{m}")).display().to_string();
        crate::support::git(&t.path("origin"), &["submodule", "add", "-q", &url, &format!("p/{m}")]);
    }
    t.run("origin", &["lock"]).success();
    t.commit_all("origin");
    // Local paths as submodule URLs need this (a team's remotes do not).
    let allow = [
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "protocol.file.allow"),
        ("GIT_CONFIG_VALUE_0", "always"),
    ];
    let origin = t.path("origin").display().to_string();
    let clone = std::process::Command::new("git")
        .args(["clone", "-q", &origin])
        .arg(t.path("w"))
        .status()
        .unwrap();
    assert!(clone.success());
    let (code, found, doc) = codes(&t, &[]);
    assert_eq!(code, 1, "{doc}");
    assert!(found.contains("member-missing"), "{found:?}");
    let missing: Vec<_> = items(&doc["findings"])
        .iter()
        .filter(|f| f["code"] == "member-missing")
        .collect();
    assert_eq!(missing.len(), 2, "{doc}");
    let run = t.run("w", &["install", "--locked"]);
    insta::assert_snapshot!(run.error_transcript());
    let hint = missing[0]["hint"].as_str().unwrap();
    let command = hint
        .strip_prefix("run `")
        .and_then(|h| h.split('`').next())
        .unwrap_or_else(|| panic!("{hint}"))
        .replace("[TMP]", &t.root.display().to_string());
    let mut bash = t.bash("w", &command);
    succeeds(bash.envs(allow), &command);
    t.run("w", &["install", "--locked"]).success();
    let (code, found, doc) = codes(&t, &[]);
    assert!(!found.contains("member-missing"), "{doc}");
    assert_eq!(code, 0, "{doc}");
    // A member named by its path in the marker, absent.
    t.write(
        "w/.tools/esys/a2c/workspace.yaml",
        "schema_version: 1\nmembers: [p/app, p/lib, p/gone]\nregistry: ../reg\n",
    );
    let (_, found, doc) = codes(&t, &[]);
    assert!(found.contains("member-missing"), "{found:?}");
    assert!(doc.to_string().contains("names the member `p/gone`"), "{doc}");
}

/// A single repository pinning a version that needs a newer a2c, before any lock (the install
/// refused it and wrote none): doctor reads the verified bundle the install cached and names
/// the a2c needed — never `run a2c install`, which fails again.
#[test]
fn a_single_repository_whose_version_needs_a_newer_a2c_has_no_install_hint() {
    let t = TestContext::new();
    t.publish_needing("reg", "6.0.0", "99.0.0");
    t.canonical_repo("r", "6.0.0");
    t.write("r/.tools/esys/a2c/config.yaml", "registry: ../reg\n");
    let run = t.run("r", &["install"]);
    run.failure();
    run.says("needs a2c >= 99.0.0");
    assert!(!t.path("r/.tools/esys/a2c/a2c.lock").exists(), "no lock was written");
    let doc = t.run("r", &["doctor", "--json"]).verdict_json();
    let f = finding(&doc, "a2c-too-old");
    assert_eq!(f["version"], "6.0.0", "{doc}");
    assert!(
        f["hint"]
            .as_str()
            .unwrap()
            .starts_with("upgrade a2c to 99.0.0 or newer"),
        "{f}"
    );
    assert!(!doc.to_string().contains("\"unresolved\""), "{doc}");
}
