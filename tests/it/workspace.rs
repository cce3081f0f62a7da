//! Discovery, members, tool state roots, adoption records, resolution, adopt.

use crate::support::{TestContext, git, layout, strings_of};

/// A superbuild with members in canonical, legacy and both-roots layouts.
fn mixed_superbuild(t: &TestContext) {
    t.superbuild("w", "members: [\"products/*\", \"libs/*\"]\nexclude: [products/old]\n");
    t.canonical_repo("w/products/app", "1.4.0");
    t.legacy_repo("w/libs/core", "1.2.0");
    // Both roots: a migration that stopped half-way; the canonical record is read.
    t.canonical_repo("w/libs/both", "2.0.0");
    t.write("w/libs/both/.a2c/adoption.yaml", "tool_version: v1.0.0\n");
    t.canonical_repo("w/products/old", "0.9.0");
    // Not selected by the globs, and a plain directory that is no repository.
    t.canonical_repo("w/other/x", "3.0.0");
    t.write("w/products/notes/README.md", "not a repo\n");
}

#[test]
fn members_lists_every_layout_with_exact_keys() {
    let t = TestContext::new();
    mixed_superbuild(&t);
    let run = t.ok("w/products/app", &["workspace", "members", "--json"]);
    let doc = run.json();
    assert_eq!(doc["workspace"], t.shown("w"));
    let members = doc["members"].as_array().unwrap();
    let rel = crate::support::strings_of(&doc, "members", "relative");
    assert_eq!(rel, ["libs/both", "libs/core", "products/app"]);
    assert_eq!(members[1]["layout"], "legacy");
    assert_eq!(members[1]["version"], "1.2.0", "the legacy v-prefix is normalized");
    assert_eq!(members[1]["delivery"], "submodule");
    assert_eq!(members[1]["tool_state_root"], t.shown("w/libs/core/.a2c"));
    assert_eq!(members[1]["path"], t.shown("w/libs/core"));
    assert_eq!(members[0]["layout"], "canonical");
    assert_eq!(
        members[0]["version"], "2.0.0",
        "with both roots the canonical one is read"
    );
    let keys: Vec<&String> = members[2].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["delivery", "layout", "path", "relative", "tool_state_root", "version"]
    );
    assert_eq!(doc["versions"], serde_json::json!(["1.2.0", "1.4.0", "2.0.0"]));
    insta::assert_snapshot!(run.transcript());
}

#[test]
fn members_human_output() {
    let t = TestContext::new();
    mixed_superbuild(&t);
    let run = t.ok("w", &["workspace", "members"]);
    insta::assert_snapshot!(run.transcript());
}

#[test]
fn default_members_are_every_repo_with_a_tool_state_root() {
    let t = TestContext::new();
    t.superbuild("w", "");
    t.adopt("w", "1.0.0");
    t.canonical_repo("w/a", "1.1.0");
    t.legacy_repo("w/deep/down/b", "1.2.0");
    t.git_repo("w/no-a2c");
    t.canonical_repo("w/node_modules/pkg", "9.0.0");
    t.canonical_repo("w/target/x", "9.0.0");
    t.canonical_repo("w/.tools_local/y", "9.0.0");
    let doc = t.run("w", &["workspace", "members", "--json"]).json();
    let rel = crate::support::strings_of(&doc, "members", "relative");
    assert_eq!(rel, [".", "a", "deep/down/b"]);
}

#[test]
fn invalid_member_is_listed_with_error_and_exit_1() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"r/*\"]\n");
    t.canonical_repo("w/r/good", "1.0.0");
    t.git_repo("w/r/bad");
    t.write(
        "w/r/bad/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: ^1.2\n",
    );
    t.git_repo("w/r/empty");
    fs_err::create_dir_all(t.path("w/r/empty/.a2c")).unwrap();
    let run = t.run("w", &["workspace", "members", "--json"]);
    let doc = run.json_failure();
    let m = doc["members"].as_array().unwrap();
    assert_eq!(m.len(), 3);
    assert!(
        m[0]["error"]
            .as_str()
            .unwrap()
            .contains("adoption.yaml` line 2: `tool_version`"),
        "{}",
        m[0]
    );
    assert!(m[0].get("version").is_none());
    assert!(m[1]["error"].as_str().unwrap().contains("missing"), "{}", m[1]);
    assert_eq!(m[2]["version"], "1.0.0");
    assert_eq!(doc["versions"], serde_json::json!(["1.0.0"]));
    insta::assert_snapshot!(run.transcript());
}

#[test]
fn workspace_path_inside_and_outside() {
    let t = TestContext::new();
    mixed_superbuild(&t);
    let run = t.ok("w/libs/core", &["workspace", "path"]);
    assert_eq!(run.stdout, format!("{}\n", t.shown("w")));
    t.canonical_repo("alone", "1.0.0");
    let run = t.run("alone", &["workspace", "path"]);
    run.failure();
    assert_eq!(run.stdout, "");
    insta::assert_snapshot!(run.transcript());
    // A repository the globs do not select is not in the workspace either.
    let run = t.run("w/other/x", &["workspace", "path"]);
    run.failure();
}

#[test]
fn dash_c_and_workspace_flags() {
    let t = TestContext::new();
    mixed_superbuild(&t);
    t.write("elsewhere/.keep", "");
    let run = t.ok(
        "elsewhere",
        &["-C", &t.path("w/libs/core").display().to_string(), "workspace", "path"],
    );
    assert!(run.stdout.ends_with("/w\n"), "{}", run.stdout);
    let run = t.ok(
        "elsewhere",
        &[
            "--workspace",
            &t.path("w").display().to_string(),
            "workspace",
            "members",
            "--json",
        ],
    );
    assert_eq!(run.json()["members"].as_array().unwrap().len(), 3);
    let run = t.run(
        "elsewhere",
        &[
            "--workspace",
            &t.path("elsewhere").display().to_string(),
            "workspace",
            "path",
        ],
    );
    insta::assert_snapshot!(run.error_transcript());
    let run = t.run("elsewhere", &["-C", "does-not-exist", "workspace", "path"]);
    insta::assert_snapshot!(run.error_transcript());
}

#[test]
fn nested_superbuilds_the_nearest_that_lists_r_wins() {
    let t = TestContext::new();
    t.superbuild("outer", "");
    t.canonical_repo("outer/a", "1.0.0");
    t.superbuild("outer/inner", "members: [\"m/*\"]\n");
    t.canonical_repo("outer/inner/m/x", "2.0.0");
    // Not selected by inner's globs: inner does not list it, so discovery goes on to outer,
    // but outer does not own repositories inside a nested workspace either.
    t.canonical_repo("outer/inner/n/y", "3.0.0");
    let inner = t.run("outer/inner/m/x", &["workspace", "path"]);
    inner.success();
    assert!(inner.stdout.ends_with("/outer/inner\n"), "{}", inner.stdout);
    let outer = t.run("outer/a", &["workspace", "path"]);
    assert!(outer.stdout.ends_with("/outer\n"), "{}", outer.stdout);
    let doc = t.run("outer", &["workspace", "members", "--json"]).json();
    let rel = crate::support::strings_of(&doc, "members", "relative");
    assert_eq!(rel, ["a"], "inner's members belong to inner");
    t.run("outer/inner/n/y", &["workspace", "path"]).failure();
}

#[test]
fn stale_local_pointer_is_ignored_with_a_warning() {
    let t = TestContext::new();
    mixed_superbuild(&t);
    t.superbuild("w2", "members: [\"only/*\"]\n");
    for (target, why) in [
        (t.path("nowhere").display().to_string(), "holds no"),
        (t.path("w2").display().to_string(), "does not list this repository"),
    ] {
        t.write(
            &layout::pointer("w/products/app"),
            &format!("workspace_root: \"{target}\"\n"),
        );
        let run = t.ok("w/products/app", &["workspace", "path"]);
        assert!(
            run.stdout.ends_with("/w\n"),
            "parent walk still finds W: {}",
            run.stdout
        );
        assert!(
            run.stderr.contains("ignoring stale local pointer") && run.stderr.contains(why),
            "{}",
            run.stderr
        );
    }
    // A valid pointer, relative to R, is used without warning.
    t.write(&layout::pointer("w/products/app"), "workspace_root: ../..\n");
    let run = t.ok("w/products/app", &["workspace", "path"]);
    assert_eq!(run.stderr, "");
    // A malformed pointer is ignored with a warning naming the file and line.
    t.write(
        &layout::pointer("w/products/app"),
        "workspace_root: a\nworkspace_root: b\n",
    );
    let run = t.ok("w/products/app", &["workspace", "path"]);
    run.says("workspace.yaml` line 2: duplicate key");
}

#[test]
fn symlinks_never_lead_out_of_the_workspace() {
    let t = TestContext::new();
    t.superbuild("w", "");
    t.canonical_repo("w/inside", "1.0.0");
    t.canonical_repo("outside/repo", "6.6.6");
    std::os::unix::fs::symlink(t.path("outside"), t.path("w/link")).unwrap();
    std::os::unix::fs::symlink(t.path("w/inside"), t.path("w/alias")).unwrap();
    let doc = t.run("w", &["workspace", "members", "--json"]).json();
    let rel = crate::support::strings_of(&doc, "members", "relative");
    assert_eq!(rel, ["inside"]);
    assert_eq!(doc["versions"], serde_json::json!(["1.0.0"]));
    // Entering through the symlink resolves to the real path, which is outside W.
    t.run("w/link/repo", &["workspace", "path"]).failure();
}

#[test]
fn invalid_marker_is_refused_with_file_line_and_reason() {
    let t = TestContext::new();
    t.superbuild("w", "members:\n  - ok/*\n  - ../escape\n");
    t.canonical_repo("w/ok/a", "1.0.0");
    let run = t.run("w", &["workspace", "members"]);
    insta::assert_snapshot!(run.error_transcript());
    run.says("hint:");
}

/// Every rejection reason of an adoption record, through the real binary.
#[test]
fn every_adoption_rejection_names_file_line_and_reason() {
    let t = TestContext::new();
    t.git_repo("r");
    let cases = [
        ("tool_version: 1.4.0\n  - x\n", 1, "`1.4.0 - x` is not an exact version"),
        ("- 1.4.0\n", 1, "must be a mapping"),
        ("tool_version:\n  major: 1\n", 2, "nested mappings"),
        (
            "schema_version: 2\ntool_version: 1.4.0\ntool_version: 1.5.0\n",
            3,
            "duplicate key `tool_version`",
        ),
        ("base: &b 1.4.0\ntool_version: *b\n", 1, "anchors"),
        ("tool_version: *b\n", 1, ""),
        ("tool_version: !!str 1.4.0\n", 1, "tags"),
        ("schema_version: 2\ndelivery: package\n", 2, "missing `tool_version`"),
        ("tool_version: ^1.2\n", 1, "not an exact version"),
        ("tool_version: 1.2\n", 1, "not an exact version"),
        ("tool_version: latest\n", 1, "not an exact version"),
        ("tool_version: \"*\"\n", 1, "not an exact version"),
        ("tool_version: \">=1\"\n", 1, "not an exact version"),
        (
            "schema_version: 2\ntool_version: 1.4.0\ndelivery: pip\n",
            3,
            "unknown delivery `pip`",
        ),
        (
            "schema_version: 2\ntool_version: 1.4.0\nowner: me\n",
            3,
            "unknown key `owner`",
        ),
        (
            "schema_version: 3\ntool_version: 1.4.0\n",
            1,
            "found v3, this a2c supports up to v2",
        ),
    ];
    for (text, line, why) in cases {
        t.write("r/.tools/esys/a2c/adoption.yaml", text);
        let run = t.run("r", &["resolve"]);
        run.failure();
        let expect = format!("invalid adoption record `[TMP]/r/.tools/esys/a2c/adoption.yaml` line {line}: ");
        assert!(run.stderr.contains(&expect), "{text:?}\n{}", run.stderr);
        assert!(run.stderr.contains(why), "{text:?}: want {why:?}\n{}", run.stderr);
        run.says("hint:");
    }
}

#[test]
fn legacy_records_are_read_and_normalized() {
    let t = TestContext::new();
    t.git_repo("r");
    t.write(
        "r/.a2c/adoption.yaml",
        "schema_version: 1\ntool_version: v1.3.0\nmethod_ref: v1.3.0\ndelivery: clone\n",
    );
    t.method_tree(&layout::installed("r", "1.3.0"), "1.3.0");
    let run = t.ok("r", &["resolve", "--json"]);
    assert_eq!(run.json()["version"], "1.3.0");
}

#[test]
fn resolution_order_and_the_never_workspace_ai_rules_rule() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\n");
    t.canonical_repo("w/p/app", "1.4.0");
    // W/tools/ai-rules holds a method tree of exactly 1.4.0: it must never be used.
    t.method_tree("w/tools/ai-rules", "1.4.0");
    let resolve = |t: &TestContext| t.run("w/p/app", &["resolve", "--json"]);

    let run = resolve(&t);
    let doc = run.json_failure();
    assert_eq!(doc["root"], serde_json::Value::Null);
    assert_eq!(doc["rule"], serde_json::Value::Null);
    run.says("hint: run `a2c install`");
    run.says("w/tools/ai-rules` is superbuild-workflow, never a method asset root");

    // 3. R/tools/ai-rules of another version is reported by name, not used.
    t.method_tree("w/p/app/tools/ai-rules", "1.3.0");
    let run = resolve(&t);
    insta::assert_snapshot!(run.error_transcript());
    // ... and of version V is used.
    t.method_tree("w/p/app/tools/ai-rules", "1.4.0");
    let doc = resolve(&t).json();
    assert_eq!(doc["rule"], "legacy-ai-rules");
    assert_eq!(doc["root"], t.shown("w/p/app/tools/ai-rules"));

    // 2. R's own store wins over the legacy mount.
    t.method_tree(&layout::installed("w/p/app", "1.4.0"), "1.4.0");
    let doc = resolve(&t).json();
    assert_eq!(doc["rule"], "repo-store");

    // 1. W's shared store wins over everything.
    t.method_tree(&layout::installed("w", "1.4.0"), "1.4.0");
    let run = resolve(&t);
    let doc = run.json();
    assert_eq!(doc["rule"], "workspace-store");
    assert_eq!(doc["root"], t.shown(&layout::installed("w", "1.4.0")));
    assert_eq!(doc["workspace"], t.shown("w"));
    assert_eq!(doc["repo"], t.shown("w/p/app"));
    assert_eq!(doc["version"], "1.4.0");

    // Plain output: the root alone.
    let run = t.ok("w/p/app", &["resolve"]);
    assert_eq!(run.stdout, "[TMP]/w/.tools_local/esys/a2c/1.4.0\n");

    // --version overrides the write contract.
    let run = t.run("w/p/app", &["resolve", "--version", "1.3.0", "--json"]);
    assert_eq!(run.json_failure()["version"], "1.3.0");
    let run = t.run("w/p/app", &["resolve", "--version", "^1.3"]);
    assert_eq!(run.code, 2, "a range is a usage error: {}", run.stderr);
}

#[test]
fn resolve_in_the_workspace_root_never_uses_its_ai_rules() {
    let t = TestContext::new();
    t.superbuild("w", "");
    t.adopt("w", "1.0.0");
    t.method_tree("w/tools/ai-rules", "1.0.0");
    let run = t.run("w", &["resolve", "--json"]);
    assert_eq!(run.json_failure()["workspace"], t.shown("w"));
    insta::assert_snapshot!(run.transcript());
}

#[test]
fn single_repo_resolution() {
    let t = TestContext::new();
    t.canonical_repo("r", "1.0.0");
    t.method_tree(&layout::installed("r", "1.0.0"), "1.0.0");
    let run = t.ok("r", &["resolve", "--json"]);
    let doc = run.json();
    assert_eq!(doc["workspace"], serde_json::Value::Null);
    assert_eq!(doc["rule"], "repo-store");
    let run = t.run("r", &["resolve", "-C", "/"]);
    insta::assert_snapshot!(run.error_transcript());
}

#[test]
fn adopt_writes_canonical_record_and_refuses_existing() {
    let t = TestContext::new();
    t.git_repo("r");
    let run = t.ok("r", &["adopt", "--version", "v1.4.0", "--json"]);
    assert_eq!(run.json()["version"], "1.4.0");
    let text = fs_err::read_to_string(t.path("r/.tools/esys/a2c/adoption.yaml")).unwrap();
    assert_eq!(text, "schema_version: 2\ntool_version: 1.4.0\ndelivery: package\n");
    assert!(!t.path("r/.a2c").exists());
    let run = t.run("r", &["adopt", "--version", "2.0.0"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(
        fs_err::read_to_string(t.path("r/.tools/esys/a2c/adoption.yaml")).unwrap(),
        text,
        "nothing changed"
    );

    t.legacy_repo("legacy", "1.0.0");
    let run = t.run("legacy", &["adopt", "--version", "2.0.0"]);
    run.failure();
    assert!(!t.path("legacy/.tools").exists(), "nothing written");

    t.git_repo("s");
    let run = t.run("s", &["adopt", "--version", "1.2"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    run.says("MAJOR.MINOR.PATCH");
    t.run(
        "s",
        &[
            "adopt",
            "--version",
            "1.2.0",
            "--delivery",
            "clone",
            "--method-ref",
            "v1.2.0",
        ],
    )
    .success();
    assert_eq!(
        fs_err::read_to_string(t.path("s/.tools/esys/a2c/adoption.yaml")).unwrap(),
        "schema_version: 2\ntool_version: 1.2.0\nmethod_ref: v1.2.0\ndelivery: clone\n"
    );
    let out = git(&t.path("s"), &["status", "--porcelain"]);
    assert!(out.contains(".tools/"), "{out}");
}

#[test]
fn version_help_and_usage_errors() {
    let t = TestContext::new();
    t.write("x/.keep", "");
    let run = t.ok("x", &["--version"]);
    assert!(
        run.stdout.starts_with(&format!("a2c {}", env!("CARGO_PKG_VERSION"))),
        "{}",
        run.stdout
    );
    let run = t.ok("x", &["help"]);
    for cmd in ["workspace", "resolve", "adopt"] {
        assert!(run.stdout.contains(cmd), "{}", run.stdout);
    }
    assert_eq!(t.run("x", &["no-such-command"]).code, 2);
    assert_eq!(t.run("x", &["workspace"]).code, 2);
}

#[test]
fn color_follows_flag_and_no_color() {
    let t = TestContext::new();
    t.write("x/.keep", "");
    let run = t.run("x", &["--color", "always", "workspace", "path"]);
    insta::assert_snapshot!(run.transcript());
    let run = t.run_env("x", &["workspace", "path"], &[("NO_COLOR", "1")]);
    assert!(run.stderr.starts_with("error: "), "{:?}", run.stderr);
    let run = t.run("x", &["--color", "never", "workspace", "path"]);
    assert!(!run.stderr.contains('\x1b'));
}

#[test]
fn quiet_hides_warnings_and_json_is_one_document() {
    let t = TestContext::new();
    mixed_superbuild(&t);
    let run = t.ok("w", &["-q", "workspace", "members"]);
    assert_eq!(run.stderr, "");
    let run = t.run("w", &["workspace", "path", "--json"]);
    assert_eq!(run.json()["workspace"], t.shown("w"));
}

/// The method's own checkout at `W/tools/ai-rules` (and a member's `R/tools/ai-rules`) carries
/// an adoption record of its own, but is never a member and never written into, even when a
/// member glob selects it (ADR §6).
#[test]
fn method_checkouts_are_never_members_nor_written_into() {
    let t = TestContext::new();
    t.superbuild(
        "w",
        "members: [\"p/*\", \"tools/*\", \"p/*/tools/*\"]\nregistry: ../reg\n",
    );
    t.canonical_repo("w/p/app", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    t.publish("reg", "2.0.0", "tar.gz");
    for checkout in ["w/tools/ai-rules", "w/p/app/tools/ai-rules"] {
        t.canonical_repo(checkout, "2.0.0");
        t.write(&format!("{checkout}/rules/core.md"), "the method's own files\n");
    }
    let before: Vec<Vec<String>> = ["w/tools/ai-rules", "w/p/app/tools/ai-rules"]
        .iter()
        .map(|c| t.listing(c))
        .collect();
    let doc = t.run("w", &["workspace", "members", "--json"]).json();
    let members = crate::support::strings_of(&doc, "members", "path");
    assert!(members.iter().all(|m| !m.contains("tools/ai-rules")), "{members:?}");
    let doc = t.run("w", &["install", "--json"]).json();
    let installed = strings_of(&doc, "installed", "version");
    assert_eq!(installed, ["1.0.0"], "the checkouts' 2.0.0 is nobody's pin: {doc}");
    for (i, checkout) in ["w/tools/ai-rules", "w/p/app/tools/ai-rules"].iter().enumerate() {
        assert_eq!(t.listing(checkout), before[i], "{checkout} was written into");
    }
    t.run("w", &["doctor"]).success();
}

/// `a2c init` makes a directory a superbuild (its marker, with the registry
/// and member globs given), refuses to write over one, and refuses a registry it cannot use
/// before writing anything; a single repository keeps its registry in its tool state
/// `config.yaml`, and "no registry" names the file this context would keep it in.
#[test]
fn init_makes_a_superbuild_and_a_single_repository_keeps_its_registry() {
    let t = TestContext::new();
    t.git_repo("w");
    t.canonical_repo("w/p/app", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    let bad = t.run("w", &["init", "--registry", "ftp://example.org/a2c"]);
    insta::assert_snapshot!(bad.error_transcript());
    assert!(!t.path("w/.tools/esys/a2c/workspace.yaml").exists(), "nothing written");
    let run = t.run("w", &["init", "--registry", "../reg", "--members", "p/*", "--json"]);
    let doc = run.json();
    crate::cli_surface::validate("init", &doc);
    assert_eq!(doc["registry"], "../reg");
    assert_eq!(doc["members"], serde_json::json!(["p/*"]));
    assert_eq!(doc["marker"], t.shown("w/.tools/esys/a2c/workspace.yaml"));
    let path = t.run("w/p/app", &["workspace", "path"]);
    assert_eq!(path.stdout.trim(), t.shown("w"));
    let lock = t.run("w", &["lock", "--json"]).json();
    assert_eq!(lock["added"], serde_json::json!(["1.0.0"]));
    let again = t.run("w", &["init"]);
    insta::assert_snapshot!(again.error_transcript());

    // A single repository: no marker, its registry in `.tools/esys/a2c/config.yaml`.
    t.canonical_repo("solo", "1.0.0");
    let none = t.run("solo", &["lock"]);
    insta::assert_snapshot!(none.error_transcript());
    t.write(
        "solo/.tools/esys/a2c/config.yaml",
        "agents: [claude]\nregistry: ../reg\n",
    );
    let lock = t.run("solo", &["lock", "--json"]).json();
    assert_eq!(lock["added"], serde_json::json!(["1.0.0"]));
    let list = t.run("solo", &["list", "--json"]).json();
    assert!(list["registry"].as_str().unwrap_or_default().ends_with("reg"), "{list}");
}

/// `init --registry DIR` with a directory that is not there yet says so, with the
/// `pack` that creates it (run here, then `lock` works); `init` in a repository that adopted
/// already does not tell it to adopt.
#[test]
fn init_says_what_its_registry_and_its_repository_still_need() {
    let t = TestContext::new();
    t.git_repo("w");
    let run = t.ok("w", &["init", "--registry", "../reg"]);
    insta::assert_snapshot!(run.transcript());
    let command = run
        .stderr
        .split("(`")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .unwrap()
        .to_string();
    assert_eq!(command, "a2c pack TREE --version V --registry [TMP]/reg");
    t.method_tree("trees/1.0.0", "1.0.0");
    let tree = t.path("trees/1.0.0").display().to_string();
    t.run_printed(".", &command.replace("TREE", &tree).replace(" V ", " 1.0.0 "))
        .success();
    t.canonical_repo("w/p/a", "1.0.0");
    t.run("w", &["lock"]).success();
    // A repository that adopted already, made a superbuild.
    t.canonical_repo("solo", "1.0.0");
    let run = t.ok("solo", &["init"]);
    insta::assert_snapshot!(run.transcript());
}

/// `init` in a member of a superbuild refuses to nest a second superbuild in it
/// (it did so silently, and the member's `resolve` then failed); what it says to run works.
#[test]
fn init_in_a_member_refuses_to_nest_a_superbuild() {
    let t = TestContext::new();
    t.standard_superbuild();
    let run = t.run("w/p/app", &["init"]);
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path("w/p/app/.tools/esys/a2c/workspace.yaml").exists());
    let command = run.stderr.split("(`").nth(1).and_then(|r| r.split('`').next()).unwrap();
    t.run_printed("w/p/app", command).success();
    t.run("w/p/app", &["resolve"]).success();
}
