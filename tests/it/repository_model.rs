//! The repository model exactly as docs/concepts.md says it, on real git repositories.

use crate::support::assert_contains;
use crate::support::{TestContext, finding, git, items, layout};
use std::os::unix::fs::symlink;

/// The `version` of every entry of the JSON list `key`.
fn versions(doc: &serde_json::Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .unwrap_or_else(|| panic!("no list `{key}` in {doc}"))
        .iter()
        .map(|i| i["version"].as_str().unwrap().to_string())
        .collect()
}

fn store_dir(ws: &str, v: &str) -> String {
    layout::installed(ws, v)
}

// ---- 1. A superbuild root whose adoption record is legacy ----------------------------------

#[test]
fn a_superbuild_root_with_a_legacy_record_is_a_member() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.write("w/.a2c/adoption.yaml", "tool_version: v1.0.0\n");
    t.write("w/.a2c/config.yaml", "agents: [claude]\n");
    t.canonical_repo("w/p/app", "2.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    t.publish("reg", "2.0.0", "zip");
    // install serves W's version too.
    let run = t.ok("w", &["install", "--json"]);
    assert_eq!(versions(&run.json(), "installed"), ["1.0.0", "2.0.0"]);
    // The lock stays beside the marker, and W is not an unfinished migration.
    assert!(t.path(&layout::lock("w")).is_file());
    assert!(!run.stderr.contains("unfinished"), "{}", run.stderr);
    // members lists `.`, in the legacy layout.
    let doc = t.run("w", &["workspace", "members", "--json"]).json();
    let root = &doc["members"][0];
    assert_eq!(root["relative"], ".");
    assert_eq!(root["layout"], "legacy");
    assert_eq!(root["version"], "1.0.0");
    assert_eq!(root["tool_state_root"], t.shown("w/.a2c"));
    // resolve in W finds W's version in W's store.
    let run = t.ok("w", &["resolve", "--json"]);
    assert_eq!(run.json()["root"], t.shown(&store_dir("w", "1.0.0")));
    // adopt agrees that W has adopted, and points to migrate.
    let run = t.run("w", &["adopt", "--version", "3.0.0"]);
    insta::assert_snapshot!(run.error_transcript());
    // gc keeps it: this was the data loss.
    let run = t.ok("w", &["gc", "--json"]);
    assert_eq!(run.json()["removed"], serde_json::json!([]));
    assert!(t.path(&store_dir("w", "1.0.0")).is_dir());
    // doctor is healthy (the legacy layout is information).
    let run = t.ok("w", &["doctor", "--json"]);
    assert_eq!(run.json()["summary"]["fail"], 0, "{}", run.stdout);
}

/// Every layout a record can be found in, for W itself and for members: gc keeps every version
/// any adoption record pins, and removes only what none does.
#[test]
fn gc_never_removes_a_version_any_record_pins_in_any_layout() {
    // (W root variant, the versions its records pin)
    let roots: [(&str, &[&str]); 4] = [
        ("none", &[]),
        ("canonical", &["2.0.0"]),
        ("legacy", &["2.1.0"]),
        ("both-differ", &["2.2.0", "2.3.0"]),
    ];
    for (root_variant, root_versions) in roots {
        let t = TestContext::new();
        t.superbuild("w", "");
        let rec = |rel: &str, root: &str, v: &str| {
            t.write(&format!("{rel}/{root}/adoption.yaml"), &format!("tool_version: {v}\n"));
        };
        match root_variant {
            "canonical" => rec("w", ".tools/esys/a2c", "2.0.0"),
            "legacy" => rec("w", ".a2c", "2.1.0"),
            "both-differ" => {
                rec("w", ".tools/esys/a2c", "2.2.0");
                rec("w", ".a2c", "2.3.0");
            }
            _ => {}
        }
        // canonical only; legacy only; canonical holding only config.yaml + legacy record;
        // canonical holding only a lock + legacy record; both records agreeing; both differing.
        t.git_repo("w/p/canon");
        rec("w/p/canon", ".tools/esys/a2c", "1.0.0");
        t.git_repo("w/p/legacy");
        rec("w/p/legacy", ".a2c", "1.1.0");
        t.git_repo("w/p/cfg");
        t.write("w/p/cfg/.tools/esys/a2c/config.yaml", "agents: []\n");
        rec("w/p/cfg", ".a2c", "1.2.0");
        t.git_repo("w/p/lockonly");
        t.write(&layout::lock("w/p/lockonly"), "version = 1\n");
        rec("w/p/lockonly", ".a2c", "1.3.0");
        t.git_repo("w/p/same");
        rec("w/p/same", ".tools/esys/a2c", "1.4.0");
        rec("w/p/same", ".a2c", "1.4.0");
        t.git_repo("w/p/differ");
        rec("w/p/differ", ".tools/esys/a2c", "1.5.0");
        rec("w/p/differ", ".a2c", "1.6.0");
        let mut pinned = vec!["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0", "1.6.0"];
        pinned.extend_from_slice(root_versions);
        for v in pinned.iter().chain(&["9.9.9"]) {
            fs_err::create_dir_all(t.path(&store_dir("w", v))).unwrap();
        }
        for cwd in ["w", "w/p/legacy"] {
            let run = t.ok(cwd, &["gc", "--dry-run", "--json"]);
            assert_eq!(versions(&run.json(), "removed"), ["9.9.9"], "{root_variant} from {cwd}");
        }
        let run = t.ok("w", &["gc"]);
        for v in &pinned {
            assert!(t.path(&store_dir("w", v)).is_dir(), "{root_variant}: {v} kept");
        }
        assert!(!t.path(&store_dir("w", "9.9.9")).exists());
        // The unfinished migrations warn once each on stderr; the lock-only one does not.
        for repo in ["p/cfg", "p/same", "p/differ"] {
            assert_eq!(
                run.stderr.matches(&format!("w/{repo}` has tool state in both")).count(),
                1,
                "{root_variant}: {}",
                run.stderr
            );
        }
        assert!(!run.stderr.contains("p/lockonly` has"), "{}", run.stderr);
        assert_eq!(
            run.stderr.contains("[TMP]/w` has tool state in both"),
            root_variant == "both-differ"
        );
        // The members read the right record.
        let doc = t.run("w", &["workspace", "members", "--json"]).json();
        let layout = |rel: &str| {
            let m = items(&doc["members"]).iter().find(|m| m["relative"] == rel).unwrap();
            (
                m["layout"].as_str().unwrap().to_string(),
                m["version"].as_str().unwrap().to_string(),
            )
        };
        assert_eq!(layout("p/cfg"), ("legacy".into(), "1.2.0".into()));
        assert_eq!(layout("p/lockonly"), ("legacy".into(), "1.3.0".into()));
        assert_eq!(layout("p/differ"), ("canonical".into(), "1.5.0".into()));
    }
}

// ---- 2. No back door to W/tools/ai-rules --------------------------------------------------

#[test]
fn a_linked_tools_ai_rules_is_never_a_method_asset_root() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\n");
    t.method_tree("w/tools/ai-rules", "1.4.0");
    t.canonical_repo("w/p/app", "1.4.0");
    // The mount itself a link to W's superbuild-workflow tree.
    fs_err::create_dir_all(t.path("w/p/app/tools")).unwrap();
    symlink("../../../tools/ai-rules", t.path("w/p/app/tools/ai-rules")).unwrap();
    let run = t.run("w/p/app", &["resolve"]);
    insta::assert_snapshot!(run.error_transcript());
    let run = t.run("w", &["doctor", "--json"]);
    let f = finding(&run.json_failure(), "unsafe-link");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("w/p/app/tools/ai-rules") && msg.contains("[TMP]/w/tools/ai-rules"),
        "{msg}"
    );
    // A linked ancestor inside R: `tools` itself leads to W's tools/.
    fs_err::remove_dir_all(t.path("w/p/app/tools")).unwrap();
    symlink("../../tools", t.path("w/p/app/tools")).unwrap();
    let run = t.run("w/p/app", &["resolve"]);
    insta::assert_snapshot!(run.error_transcript());
    // A link out of R, to a tree of exactly the right version.
    fs_err::remove_file(t.path("w/p/app/tools")).unwrap();
    t.method_tree("elsewhere/ai-rules", "1.4.0");
    fs_err::create_dir_all(t.path("w/p/app/tools")).unwrap();
    symlink(t.path("elsewhere/ai-rules"), t.path("w/p/app/tools/ai-rules")).unwrap();
    let run = t.run("w/p/app", &["resolve"]);
    insta::assert_snapshot!(run.error_transcript());
    // The same tree, really inside R: used.
    fs_err::remove_file(t.path("w/p/app/tools/ai-rules")).unwrap();
    t.method_tree("w/p/app/tools/ai-rules", "1.4.0");
    let run = t.ok("w/p/app", &["resolve", "--json"]);
    assert_eq!(run.json()["rule"], "legacy-ai-rules");
}

// ---- 3. Nested superbuilds -----------------------------------------------------------------

fn nested(t: &TestContext) {
    t.superbuild("w", "registry: ../reg\n");
    t.canonical_repo("w/app", "1.1.0");
    // The inner superbuild root is an adopted repository, so a member of the outer one.
    t.superbuild("w/inner", "members: [\"m/*\"]\nregistry: ../../reg\n");
    t.adopt("w/inner", "1.0.0");
    t.canonical_repo("w/inner/m/a", "2.0.0");
    for v in ["1.0.0", "1.1.0", "2.0.0"] {
        t.publish("reg", v, "tar.gz");
    }
}

#[test]
fn nested_superbuilds_keep_their_own_workspace_and_members() {
    let t = TestContext::new();
    nested(&t);
    let doc = t.run("w", &["workspace", "members", "--json"]).json();
    let rel = crate::support::strings_of(&doc, "members", "relative");
    assert_eq!(
        rel,
        ["app", "inner"],
        "the inner members belong to the inner superbuild"
    );
    t.ok("w", &["install", "--json"]);
    assert!(t.path(&store_dir("w", "1.0.0")).is_dir() && t.path(&store_dir("w", "1.1.0")).is_dir());
    assert!(t.path(&layout::pointer("w/app")).is_file());
    assert!(
        !t.path(&layout::pointer("w/inner")).exists(),
        "no pointer into a repository that holds its own marker"
    );
    // The inner superbuild is still its own.
    let run = t.ok("w/inner", &["workspace", "path"]);
    assert_eq!(run.stdout.trim(), t.shown("w/inner"));
    let run = t.ok("w/inner", &["install", "--json"]);
    let doc = run.json();
    assert_eq!(doc["workspace"], t.shown("w/inner"));
    assert_eq!(doc["members"].as_array().unwrap().len(), 2);
    assert!(t.path(&store_dir("w/inner", "2.0.0")).is_dir());
    let run = t.ok("w/inner/m/a", &["resolve"]);
    assert_eq!(run.stdout.trim(), t.shown(&store_dir("w/inner", "2.0.0")));
    // Pointers an older a2c wrote (the inner root's to W, an inner member's to W) are beaten
    // by the nearer marker.
    let outer = "workspace_root: ../../..\n";
    t.write(&layout::pointer("w/inner"), "workspace_root: ..\n");
    t.write(&layout::pointer("w/inner/m/a"), outer);
    let run = t.ok("w/inner", &["workspace", "path"]);
    assert_eq!(run.stdout.trim(), t.shown("w/inner"), "{}", run.stderr);
    let run = t.ok("w/inner/m/a", &["workspace", "path"]);
    assert_eq!(run.stdout.trim(), t.shown("w/inner"));
    insta::assert_snapshot!(run.transcript());
    let run = t.ok("w/inner", &["install"]);
    insta::assert_snapshot!(run.transcript());
}

// ---- 9. Markers fail closed ---------------------------------------------------------------

#[test]
fn markers_fail_closed() {
    let t = TestContext::new();
    // An outer superbuild that must never be picked in place of a broken inner one.
    t.superbuild("w", "");
    t.superbuild("w/inner", "");
    t.canonical_repo("w/inner/m", "1.0.0");
    let marker = "w/inner/.tools/esys/a2c/workspace.yaml";
    for (what, setup) in [
        (
            "empty",
            Box::new(|| {
                t.write(marker, "");
            }) as Box<dyn Fn()>,
        ),
        (
            "comments only",
            Box::new(|| {
                t.write(marker, "# nothing here\n");
            }),
        ),
        (
            "a directory",
            Box::new(|| {
                fs_err::create_dir_all(t.path(marker)).unwrap();
            }),
        ),
        (
            "a link out of W",
            Box::new(|| {
                t.write("elsewhere/workspace.yaml", "schema_version: 1\n");
                symlink(t.path("elsewhere/workspace.yaml"), t.path(marker)).unwrap();
            }),
        ),
    ] {
        let p = t.path(marker);
        if p.is_dir() && !p.is_symlink() {
            fs_err::remove_dir(&p).unwrap();
        } else if p.symlink_metadata().is_ok() {
            fs_err::remove_file(&p).unwrap();
        }
        setup();
        for cwd in ["w/inner/m", "w/inner"] {
            for args in [&["workspace", "path"][..], &["install"][..], &["doctor"][..]] {
                let run = t.run(cwd, args);
                let name = format!("marker {what} from {cwd} {}", args.join(" ")).replace([' ', '/'], "-");
                insta::assert_snapshot!(name, run.error_transcript());
                assert!(!run.stdout.contains("[TMP]/w\n"), "never the outer W: {}", run.stdout);
            }
        }
    }
}

// ---- 4. migrate ------------------------------------------------------------------------------

/// A committed repository `rel` whose record (in `root`) pins `version`.
fn adopted(t: &TestContext, rel: &str, root: &str, record: &str) {
    t.git_repo(rel);
    t.write(&format!("{rel}/{root}/adoption.yaml"), record);
    t.write(&format!("{rel}/{root}/config.yaml"), "agents: [claude]\n");
    t.write(&format!("{rel}/.gitignore"), ".tools_local/\n");
    t.commit_all(rel);
}

fn head(t: &TestContext, repo: &str) -> String {
    git(&t.path(repo), &["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn migrating_to_the_adopted_version_is_a_no_op_unless_the_layout_must_move() {
    let t = TestContext::new();
    let reg = t.legacy_registry();
    let env = [("A2C_REGISTRY", reg.as_str())];
    for (rel, root, record) in [
        (
            "canon",
            ".tools/esys/a2c",
            "schema_version: 2\ntool_version: 1.0.0\ndelivery: package\n",
        ),
        ("legacy", ".a2c", "tool_version: v1.0.0\ndelivery: submodule\n"),
    ] {
        adopted(&t, rel, root, record);
        let (before, commit) = (t.files(rel), head(&t, rel));
        let run = t.ok_env(rel, &["migrate", "version", "--to", "1.0.0"], &env);
        assert!(run.stderr.contains("already at 1.0.0"), "{rel}: {}", run.stderr);
        assert_eq!(t.files(rel), before, "{rel}: no write (not even the lock)");
        assert_eq!(head(&t, rel), commit, "{rel}: no commit");
        assert_eq!(git(&t.path(rel), &["status", "--porcelain"]), "");
    }
    // 2.0.0 requires `.tools/esys/a2c`: a legacy repository already at 2.0.0 gets only the move.
    adopted(&t, "moving", ".a2c", "tool_version: v2.0.0\nmethod_ref: v2.0.0\n");
    let record = fs_err::read(t.path("moving/.a2c/adoption.yaml")).unwrap();
    let run = t.ok_env("moving", &["migrate", "version", "--to", "2.0.0"], &env);
    run.says("the write contract stays 2.0.0");
    assert_eq!(
        fs_err::read(t.path("moving/.tools/esys/a2c/adoption.yaml")).unwrap(),
        record,
        "moved byte for byte, not rewritten"
    );
    let show = git(&t.path("moving"), &["show", "--name-status", "--format=%s", "HEAD"]);
    assert!(
        show.starts_with("a2c: move the tool state root .a2c/ -> .tools/esys/a2c/ (write contract 2.0.0 unchanged)"),
        "{show}"
    );
    assert_contains(&show, "R100\t.a2c/adoption.yaml\t.tools/esys/a2c/adoption.yaml");
}

#[test]
fn migrate_never_writes_into_the_legacy_root() {
    let t = TestContext::new();
    let reg = t.legacy_registry();
    let env = [("A2C_REGISTRY", reg.as_str())];
    adopted(
        &t,
        "r",
        ".a2c",
        "tool_version: v1.0.0\nmethod_ref: v1.0.0\ndelivery: submodule\n",
    );
    // 1.1.0 keeps `.a2c`, but the record changes: it is written under `.tools/esys/a2c/` and
    // the rest of the root moves with it, in one commit.
    let run = t.ok_env(
        "r",
        &[
            "migrate",
            "version",
            "--to",
            "1.1.0",
            "--delivery",
            "package",
            "--dry-run",
        ],
        &env,
    );
    insta::assert_snapshot!(run.transcript());
    run.says("would git mv .a2c/config.yaml -> .tools/esys/a2c/config.yaml");
    let run = t.ok_env(
        "r",
        &["migrate", "version", "--to", "1.1.0", "--delivery", "package", "--json"],
        &env,
    );
    assert_eq!(run.json()["move_reason"], "record-write");
    assert!(!t.path("r/.a2c").exists());
    assert_eq!(
        fs_err::read_to_string(t.path("r/.tools/esys/a2c/adoption.yaml")).unwrap(),
        "schema_version: 2\ntool_version: 1.1.0\nmethod_ref: v1.1.0\ndelivery: package\n"
    );
    // No version of `.a2c/adoption.yaml` in history ever held the current shape.
    let log = git(&t.path("r"), &["log", "-p", "--format=", "--", ".a2c/adoption.yaml"]);
    assert!(
        !log.contains("+delivery: package") && !log.contains("+schema_version: 2"),
        "{log}"
    );
    assert_eq!(git(&t.path("r"), &["status", "--porcelain"]), "");
}

#[test]
fn dry_run_resolves_the_target_as_the_real_run_does_and_from_is_checked_first() {
    let t = TestContext::new();
    let reg = t.legacy_registry();
    let env = [("A2C_REGISTRY", reg.as_str())];
    adopted(&t, "r", ".a2c", "tool_version: v1.0.0\n");
    let (before, commit) = (t.files("r"), head(&t, "r"));
    for extra in [&[][..], &["--dry-run"][..]] {
        // A version that exists nowhere.
        let mut args = vec!["migrate", "version", "--to", "7.7.7"];
        args.extend_from_slice(extra);
        let run = t.run_env("r", &args, &env);
        insta::assert_snapshot!(run.error_transcript());
        // Offline without a lock entry or a vendor directory naming it.
        let mut args = vec!["migrate", "version", "--to", "2.0.0", "--offline"];
        args.extend_from_slice(extra);
        let run = t.run_env("r", &args, &env);
        insta::assert_snapshot!(run.error_transcript());
        // `--from` that is not a directory: refused before anything else.
        let mut args = vec!["migrate", "version", "--to", "2.0.0", "--from", "nowhere"];
        args.extend_from_slice(extra);
        let run = t.run_env("r", &args, &env);
        insta::assert_snapshot!(run.error_transcript());
        assert_eq!(t.files("r"), before, "{extra:?}");
        assert_eq!(head(&t, "r"), commit);
        assert!(!t.path("r/.git/a2c-migrate.json").exists());
    }
    // A real target: the dry run names it and changes nothing.
    let run = t.ok_env("r", &["migrate", "version", "--to", "2.0.0", "--dry-run"], &env);
    run.says("would commit: a2c: migrate write contract 1.0.0 -> 2.0.0");
    assert_eq!(t.files("r"), before);
}

#[test]
fn both_roots_that_differ_are_finished_by_the_command_doctor_names() {
    for keep in ["canonical", "legacy"] {
        let t = TestContext::new();
        let reg = t.legacy_registry();
        let env = [("A2C_REGISTRY", reg.as_str())];
        adopted(&t, "r", ".a2c", "tool_version: v1.0.0\n");
        t.adopt("r", "1.1.0");
        t.write("r/.tools/esys/a2c/config.yaml", "agents: [codex]\n");
        t.commit_all("r");
        t.run_env("r", &["install"], &env).success();
        t.commit_all("r"); // the lock install wrote
        let run = t.run_env("r", &["doctor", "--json"], &env);
        let doc = run.json_failure();
        let f = finding(&doc, "tool-state-roots-disagree");
        let hint = f["hint"].as_str().unwrap();
        assert!(
            hint.contains("`a2c migrate version --to 1.1.0 --keep canonical`")
                && hint.contains("adoption.yaml, config.yaml"),
            "{hint}"
        );
        // Without a side it stops, naming the way out.
        let run = t.run_env("r", &["migrate", "version", "--to", "1.1.0"], &env);
        insta::assert_snapshot!(run.error_transcript());
        let run = t.ok_env(
            "r",
            &["migrate", "version", "--to", "1.1.0", "--keep", keep, "--dry-run"],
            &env,
        );
        let shown = match keep {
            "canonical" => "would remove .a2c/config.yaml (differs from .tools/esys/a2c/config.yaml; --keep canonical)",
            _ => {
                "would git mv .a2c/config.yaml -> .tools/esys/a2c/config.yaml (replacing the differing canonical copy: --keep legacy)"
            }
        };
        run.says(shown);
        t.ok_env("r", &["migrate", "version", "--to", "1.1.0", "--keep", keep], &env);
        assert!(!t.path("r/.a2c").exists());
        let config = fs_err::read_to_string(t.path("r/.tools/esys/a2c/config.yaml")).unwrap();
        assert_eq!(
            config,
            if keep == "canonical" {
                "agents: [codex]\n"
            } else {
                "agents: [claude]\n"
            }
        );
        let record = fs_err::read_to_string(t.path("r/.tools/esys/a2c/adoption.yaml")).unwrap();
        assert!(record.contains("tool_version: 1.1.0"), "{keep}: {record}");
        assert_eq!(git(&t.path("r"), &["status", "--porcelain"]), "");
        t.ok_env("r", &["doctor", "--json"], &env);
    }
}

#[test]
fn migrating_a_superbuild_member_says_it_changes_the_lock_and_restores_it_on_failure() {
    let t = TestContext::committed_superbuild(&["3.0.0"]);
    let lock = t.path(&layout::lock("w"));
    let before = fs_err::read(&lock).unwrap();
    let run = t.ok("w/p/app", &["migrate", "version", "--to", "3.0.0", "--dry-run"]);
    run.says("would add 3.0.0 to the superbuild's lock `[TMP]/w/.tools/esys/a2c/a2c.lock`");
    assert_eq!(fs_err::read(&lock).unwrap(), before);
    // A failure after the lock gained 3.0.0 puts the superbuild's lock back byte for byte.
    let run = t.run_env(
        "w/p/app",
        &["migrate", "version", "--to", "3.0.0"],
        &[("A2C_TEST_HOOK", "fail:migrate-after-install")],
    );
    run.failure();
    assert_eq!(fs_err::read(&lock).unwrap(), before, "W's lock restored");
    assert_eq!(git(&t.path("w/p/app"), &["status", "--porcelain"]), "");
    let run = t.ok("w/p/app", &["migrate", "version", "--to", "3.0.0"]);
    insta::assert_snapshot!(run.transcript());
    assert!(fs_err::read_to_string(&lock).unwrap().contains("\"3.0.0\""));
}

// ---- 5. Drift ----------------------------------------------------------------------------------

#[test]
fn a_mount_of_another_version_is_drift_and_other_versions_are_read_only() {
    let t = TestContext::new();
    t.git_repo("r");
    t.write("r/.a2c/adoption.yaml", "tool_version: v1.1.0\ndelivery: copy\n");
    t.method_tree("r/tools/ai-rules", "1.0.0");
    let run = t.run("r", &["resolve"]);
    insta::assert_snapshot!(run.error_transcript());
    let run = t.run("r", &["doctor", "--json"]);
    let doc = run.json_failure();
    let f = finding(&doc, "manifest-version-mismatch");
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains("1.0.0") && msg.contains("1.1.0"), "{msg}");
    // Another version than the write contract: handed out, as a read-only mount.
    let run = t.ok("r", &["resolve", "--version", "1.0.0", "--json"]);
    assert_eq!(run.json()["read_only"], true);
    run.says("1.0.0 is a read-only mount, not the write contract of `[TMP]/r` (1.1.0)");
    t.method_tree("r/tools/ai-rules", "1.1.0");
    let run = t.ok("r", &["resolve"]);
    assert!(!run.stderr.contains("read-only"), "{}", run.stderr);
}

// ---- 6. Delivery modes ---------------------------------------------------------------------

/// A method repository at `rel` with commits tagged v1.0.0 and v1.1.0 (HEAD).
fn method_repo(t: &TestContext, rel: &str) -> std::path::PathBuf {
    let path = t.git_repo(rel);
    t.method_tree(rel, "1.0.0");
    t.commit_all(rel);
    git(&path, &["tag", "v1.0.0"]);
    t.method_tree(rel, "1.1.0");
    t.commit_all(rel);
    git(&path, &["tag", "v1.1.0"]);
    path
}

fn doctor_codes(t: &TestContext, repo: &str) -> (i32, Vec<String>) {
    let run = t.run(repo, &["doctor", "--json"]);
    let mut codes: Vec<String> = run.verdict_json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect();
    codes.sort();
    (run.code, codes)
}

#[test]
fn git_deliveries_install_nothing_alone_and_doctor_checks_the_tree() {
    let t = TestContext::new();
    let src = method_repo(&t, "method");
    // copy: a committed tree.
    t.git_repo("copy");
    t.write(
        "copy/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: 1.1.0\ndelivery: copy\n",
    );
    t.method_tree("copy/tools/ai-rules", "1.1.0");
    t.commit_all("copy");
    let run = t.ok("copy", &["install"]);
    insta::assert_snapshot!(run.transcript());
    assert!(!t.path("copy/.tools_local").exists(), "no store for a git delivery");
    assert_eq!(doctor_codes(&t, "copy"), (0, vec![]));
    assert_eq!(t.run("copy", &["resolve", "--json"]).json()["rule"], "legacy-ai-rules");
    fs_err::remove_dir_all(t.path("copy/tools")).unwrap();
    assert_eq!(doctor_codes(&t, "copy"), (1, vec!["delivery-tree-missing".into()]));

    // submodule: registered, checked out, at method_ref.
    t.git_repo("sub");
    t.write(
        "sub/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: 1.1.0\nmethod_ref: v1.1.0\ndelivery: submodule\n",
    );
    let url = src.display().to_string();
    git(
        &t.path("sub"),
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &url,
            "tools/ai-rules",
        ],
    );
    t.commit_all("sub");
    assert_eq!(doctor_codes(&t, "sub"), (0, vec![]));
    git(&t.path("sub/tools/ai-rules"), &["checkout", "-q", "v1.0.0"]);
    assert_eq!(
        doctor_codes(&t, "sub"),
        (
            1,
            vec!["delivery-ref-mismatch".into(), "manifest-version-mismatch".into()]
        )
    );
    git(&t.path("sub/tools/ai-rules"), &["checkout", "-q", "v1.1.0"]);
    // Not registered: a plain copy where the submodule should be.
    git(&t.path("sub"), &["rm", "-q", "--cached", "tools/ai-rules"]);
    git(&t.path("sub"), &["rm", "-q", ".gitmodules"]);
    fs_err::remove_file(t.path("sub/tools/ai-rules/.git")).unwrap();
    assert_eq!(doctor_codes(&t, "sub"), (1, vec!["delivery-not-submodule".into()]));

    // clone: a git repository of its own, at method_ref.
    t.git_repo("cl");
    t.write(
        "cl/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: 1.0.0\nmethod_ref: v1.0.0\ndelivery: clone\n",
    );
    git(
        &t.path("cl"),
        &["clone", "-q", "--branch", "v1.0.0", &url, "tools/ai-rules"],
    );
    assert_eq!(doctor_codes(&t, "cl"), (0, vec![]));
    let run = t.ok("cl", &["install"]);
    insta::assert_snapshot!(run.transcript());
    fs_err::remove_dir_all(t.path("cl/tools/ai-rules/.git")).unwrap();
    assert_eq!(doctor_codes(&t, "cl"), (1, vec!["delivery-not-checked-out".into()]));
}

#[test]
fn delivery_none_installs_nothing_and_is_never_unresolved_and_a_superbuild_serves_every_mode() {
    let t = TestContext::new();
    t.git_repo("r");
    t.write(
        "r/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: 1.0.0\ndelivery: none\n",
    );
    let run = t.ok("r", &["install"]);
    insta::assert_snapshot!(run.transcript());
    assert_eq!(doctor_codes(&t, "r"), (0, vec!["delivery-none".into()]));
    // In a superbuild the union covers every delivery mode.
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    for (rel, v, d) in [
        ("w/p/n", "1.0.0", "none"),
        ("w/p/c", "1.1.0", "copy"),
        ("w/p/k", "2.0.0", "package"),
    ] {
        t.git_repo(rel);
        t.write(
            &format!("{rel}/.tools/esys/a2c/adoption.yaml"),
            &format!("schema_version: 2\ntool_version: {v}\ndelivery: {d}\n"),
        );
        t.publish("reg", v, "tar.gz");
    }
    let run = t.ok("w", &["install", "--json"]);
    assert_eq!(versions(&run.json(), "installed"), ["1.0.0", "1.1.0", "2.0.0"]);
    let (code, codes) = doctor_codes(&t, "w");
    assert_eq!(code, 0, "{codes:?}");
    assert_eq!(codes, ["delivery-served-by-workspace"]);
}

// ---- 7. Both roots present -----------------------------------------------------------------

#[test]
fn both_roots_warn_once_on_every_command_and_adopt_refuses_legacy_state() {
    let t = TestContext::new();
    t.publish("reg", "1.0.0", "tar.gz");
    let reg = t.path("reg").display().to_string();
    t.git_repo("r");
    t.adopt("r", "1.0.0");
    t.write("r/.a2c/config.yaml", "agents: []\n");
    for args in [
        &["install"][..],
        &["lock", "--check"][..],
        &["gc", "--dry-run"][..],
        &["resolve"][..],
        &["doctor"][..],
    ] {
        let run = t.run_env("r", args, &[("A2C_REGISTRY", &reg)]);
        assert_eq!(
            run.stderr.matches("has tool state in both").count(),
            1,
            "{args:?}: {}",
            run.stderr
        );
    }
    // adopt never creates a second root next to legacy state.
    t.git_repo("old");
    t.write("old/.a2c/config.yaml", "agents: []\n");
    let run = t.run("old", &["adopt", "--version", "1.0.0"]);
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path("old/.tools").exists());
}

// ---- 8. .tools_local/ is machine-local ----------------------------------------------------

#[test]
fn tools_local_is_ignored_by_git_and_doctor_warns_when_it_is_tracked() {
    let t = TestContext::installed_superbuild();
    for repo in ["w", "w/p/app", "w/l/core"] {
        assert_eq!(
            fs_err::read_to_string(t.path(&format!("{repo}/.tools_local/.gitignore"))).unwrap(),
            "# written by a2c: this directory is machine-local\n*\n"
        );
        let status = git(&t.path(repo), &["status", "--porcelain", "--untracked-files=all"]);
        assert!(!status.contains(".tools_local"), "{repo}: {status}");
    }
    // A member that commits its pointer anyway (git add -f): doctor warns.
    git(
        &t.path("w/p/app"),
        &["add", "-f", ".tools_local/esys/a2c/workspace.yaml"],
    );
    git(&t.path("w/p/app"), &["commit", "-q", "-m", "oops"]);
    let run = t.ok("w", &["doctor", "--json"]);
    let doc = run.json();
    let f = finding(&doc, "local-tracked");
    assert_eq!(f["severity"], "warn");
    assert_eq!(f["repo"], t.shown("w/p/app"));
}
