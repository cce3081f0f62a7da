//! Safe publishing into a file registry — concurrent packs, immutability, yanks.

use crate::support::TestContext;

#[test]
fn eight_parallel_packs_all_land_in_the_index() {
    let t = TestContext::new();
    let versions: Vec<String> = (0..8).map(|i| format!("1.{i}.0")).collect();
    for v in &versions {
        t.method_tree(&format!("trees/{v}"), v);
    }
    let children: Vec<_> = versions
        .iter()
        .map(|v| {
            t.spawn(
                ".",
                &["pack", &format!("trees/{v}"), "--version", v, "--registry", "reg"],
            )
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let index: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap()).unwrap();
    let mut listed = crate::support::strings_of(&index, "versions", "version");
    listed.sort();
    assert_eq!(listed, versions, "every parallel publish is in the index");
    // Each bundle is there, and no temporary file is left behind.
    let bundles = t.listing("reg/bundles");
    assert_eq!(bundles.len(), 8, "{bundles:?}");
    assert!(bundles.iter().all(|b| b.starts_with("a2c-1.")), "{bundles:?}");
}

#[test]
fn published_versions_are_immutable_and_yanks_are_reversible() {
    let t = TestContext::new();
    t.method_tree("trees/1.0.0", "1.0.0");
    t.pack("trees/1.0.0", "1.0.0", "reg", "tar.gz");
    let index_before = fs_err::read(t.path("reg/index/esys/a2c.json")).unwrap();
    // The same bytes again: a no-op.
    let run = t.ok(".", &["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", "reg"]);
    run.says("already published with the same content");
    // Other bytes under the same version: refused, nothing changes.
    t.write("trees/1.0.0/rules/extra.md", "changed\n");
    let run = t.run(".", &["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", "reg"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(fs_err::read(t.path("reg/index/esys/a2c.json")).unwrap(), index_before);
    // Yank, yank again (a no-op), undo.
    let yanked = |t: &TestContext| -> bool {
        let index: serde_json::Value =
            serde_json::from_str(&fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap()).unwrap();
        index["versions"][0]["yanked"].as_bool().unwrap_or(false)
    };
    let run = t.run(".", &["yank", "1.0.0", "--registry", "reg", "--json"]);
    assert_eq!(run.json()["changed"], true);
    assert!(yanked(&t));
    // A new lock refuses a yanked version.
    t.canonical_repo("r", "1.0.0");
    let run = t.run("r", &["lock", "--registry", "../reg"]);
    run.failure();
    run.says("version 1.0.0 is yanked");
    let run = t.run(".", &["yank", "1.0.0", "--registry", "reg", "--json"]);
    assert_eq!(run.json()["changed"], false);
    t.ok(".", &["yank", "1.0.0", "--registry", "reg", "--undo"]);
    assert!(!yanked(&t));
    t.run("r", &["lock", "--registry", "../reg"]).success();
    // An unknown version is named.
    let run = t.run(".", &["yank", "9.9.9", "--registry", "reg"]);
    insta::assert_snapshot!(run.error_transcript());
}

/// `a2c pack` refuses a tree that would install two ways: two paths one case-insensitive or
/// normalizing filesystem makes one (macOS, Windows) — naming both — and a name Windows allows
/// nowhere (a device name, `:`, `*?"<>|`); nothing is published, and the hint says what the
/// publisher does about it. Install refuses the same bundles (tests/it/hostile_archives.rs).
#[test]
fn pack_refuses_names_that_install_differently_elsewhere() {
    let t = TestContext::new();
    for (i, (files, words)) in [
        (&["rules/Case.md", "rules/case.md"][..], "`rules/Case.md` are one name"),
        (
            &["rules/caf\u{e9}.md", "rules/cafe\u{301}.md"],
            "are one name on a case-insensitive or normalizing filesystem",
        ),
        (&["Rules/x.md", "rules/y.md"], "`Rules` are one name"),
        (&["rules/what?.md"], "Windows allows in no file name"),
        (&["rules/CON.md"], "`CON.md` is a Windows device name"),
        (&["rules/notes:stream.md"], "contains `:`"),
    ]
    .into_iter()
    .enumerate()
    {
        let tree = format!("trees/{i}");
        t.method_tree(&tree, "1.0.0");
        for f in files {
            t.write(&format!("{tree}/{f}"), "x\n");
        }
        let run = t.run(".", &["pack", &tree, "--version", "1.0.0", "--registry", "reg"]);
        // The hint is the publisher's: rename, then pack again (not an installer's "hostile").
        run.fails_with(&[words, "rename the file or directory, then pack again"]);
        assert!(!run.stderr.contains("registry's owner"), "{}", run.stderr);
        assert!(!t.path("reg/index/esys/a2c.json").exists(), "{i}: nothing published");
    }
}

/// A kind that takes no write of a2c's refuses it in its own words, before any request (the
/// port is closed: a request would fail otherwise), and says what to do instead: every
/// refusal of the `Registry` trait's defaults and of each kind's own wording.
#[test]
fn each_kind_refuses_the_writes_it_does_not_take_in_its_own_words() {
    let t = TestContext::new();
    t.run(".", &["key", "generate", "--out", "keys/k", "--no-password"])
        .success();
    let closed = format!("127.0.0.1:{}", crate::support::free_port());
    t.method_tree("tree", "1.0.0");
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "http",
            &["pack", "tree", "--version", "1.0.0"],
            "`a2c pack` publishes into a file registry, not",
        ),
        ("http", &["yank", "1.0.0"], "`a2c yank` edits a file registry, not"),
        (
            "http",
            &["sign", "--key", "keys/k"],
            "`a2c sign` signs a file registry, not",
        ),
        (
            "pypi+http",
            &["yank", "1.0.0"],
            "`a2c yank` does not edit the package index",
        ),
        ("pypi+http", &["sign", "--key", "keys/k"], "a package index ("),
        (
            "conan+http",
            &["yank", "1.0.0"],
            "`a2c yank` does not edit the Conan remote",
        ),
        ("conan+http", &["sign", "--key", "keys/k"], "a Conan remote ("),
    ];
    for (scheme, args, words) in cases {
        let registry = format!("{scheme}://{closed}/r/");
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--registry", &registry]);
        let run = t.run(".", &all);
        run.failure();
        assert!(run.stderr.contains(words), "{scheme} {args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("hint:") || *scheme == "http",
            "{scheme} {args:?}: {}",
            run.stderr
        );
        assert!(
            !run.stderr.contains("connect"),
            "refused before any request: {}",
            run.stderr
        );
    }
}
