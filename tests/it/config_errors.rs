//! Malformed configuration files, case by case — each error names the file, the line
//! or the field, the reason, and what to do.

use crate::support::{TestContext, layout};

/// Runs a case that must fail, checks the phrases that matter (`wants`, read as the case's
/// documentation) and returns the exit code and stderr for the test's snapshot.
fn check(t: &TestContext, cwd: &str, args: &[&str], wants: &[&str]) -> String {
    let run = t.run(cwd, args);
    assert_eq!(run.code, 1, "{args:?}: expected a failure\n{}", run.stderr);
    for w in wants {
        assert!(run.stderr.contains(w), "{args:?}: want {w:?}\n{}", run.stderr);
    }
    assert!(run.stderr.contains("hint:"), "{args:?}: no hint\n{}", run.stderr);
    format!("$ a2c {}\n{}\n", args.join(" "), run.error_transcript())
}

#[test]
fn malformed_index_files() {
    let t = TestContext::new();
    let mut snap = String::new();
    t.canonical_repo("r", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    let index = "reg/index/esys/a2c.json";
    let good = fs_err::read_to_string(t.path(index)).unwrap();
    let file = "[TMP]/reg/index/esys/a2c.json";
    #[rustfmt::skip]
    let cases: Vec<(String, Vec<&str>)> = vec![
        ("{\n  \"schema\": 1,\n  \"name\": \n".into(),                       vec![file, "line 4"]),
        (good.replace("\"schema\": 2", "\"schema\": 9"),                      vec![file, "found v9, this a2c supports up to v2", "upgrade a2c"]),
        (good.replace("\"yanked\"", "\"yank\""),                              vec![file, "unknown field `yank`"]),
        (good.replace("\"size\"", "\"sha256\": \"x\", \"size\""),             vec![file, "duplicate field `sha256`"]),
        (good.replace("\"format\": \"tar.gz\"", "\"format\": \"rar\""),       vec![file, "unknown variant `rar`"]),
        (good.replace("\"version\": \"1.0.0\"", "\"version\": \"1.0\""),      vec![file, "not an exact version"]),
        (good.replace("esys/a2c", "other/tool"),                              vec![file, "`name` is `other/tool`"]),
    ];
    for (text, wants) in cases {
        t.write(index, &text);
        snap += &check(&t, "r", &["lock", "--registry", "../reg"], &wants);
    }
    fs_err::remove_file(t.path(index)).unwrap();
    snap += &check(
        &t,
        "r",
        &["lock", "--registry", "../reg"],
        &[
            "no registry index at `[TMP]/reg/index/esys/a2c.json`",
            "index/esys/a2c.json",
        ],
    );
    insta::assert_snapshot!(snap);
}

#[test]
fn malformed_lockfiles() {
    let t = TestContext::new();
    let mut snap = String::new();
    t.canonical_repo("r", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    t.run_env("r", &["lock"], &[("A2C_REGISTRY", t.path("reg").to_str().unwrap())])
        .success();
    let lock = &layout::lock("r");
    let good = fs_err::read_to_string(t.path(lock)).unwrap();
    let file = "invalid lockfile `[TMP]/r/.tools/esys/a2c/a2c.lock`";
    let twice = format!("{good}\n[[method]]{}", good.split("[[method]]").nth(1).unwrap());
    let too_new = [
        "unsupported lockfile",
        "found v4, this a2c supports up to v3",
        "upgrade a2c",
    ];
    // Above 32 bits: read as written, never cut (4294967299 as a u32 is 3).
    let far_too_new = [
        "unsupported lockfile",
        "found v4294967299, this a2c supports up to v3",
        "upgrade a2c",
    ];
    #[rustfmt::skip]
    let cases: Vec<(String, Vec<&str>)> = vec![
        ("version = 1\n[[method]\n".into(),                                vec![file, "line 2"]),
        (good.replace("version = 3\n", "version = 4\n"),                   too_new.to_vec()),
        (good.replace("version = 3\n", "version = 4294967299\n"),          far_too_new.to_vec()),
        (good.replace("version = 3\n", "version = \"3\"\n"),               vec![file, "`version` must be 1 to 3, found `\"3\"`"]),
        (good.replace("version = 3\n", ""),                                vec![file, "missing `version` (this a2c reads 1 to 3)"]),
        (good.replace("size = ", "bytes = 1\nsize = "),                    vec![file, "unknown field `bytes`"]),
        (good.replace("sha256 = \"", "sha256 = \"zz"),                     vec![file, "not a sha256"]),
        (good.replace("tree = \"sha256:", "tree = \"md5:"),                vec![file, "`tree`"]),
        (good.replace("file://", "https://u:secret@"),                     vec![file, "credentials"]),
        (twice,                                                            vec![file, "locked twice"]),
    ];
    for (text, wants) in cases {
        t.write(lock, &text);
        snap += &check(&t, "r", &["install", "--locked"], &wants);
        let run = t.run("r", &["install", "--locked"]);
        assert!(!run.stderr.contains("secret"), "a credential leaked: {}", run.stderr);
    }
    insta::assert_snapshot!(snap);
}

#[test]
fn malformed_workspace_markers() {
    let t = TestContext::new();
    let mut snap = String::new();
    t.superbuild("w", "");
    t.canonical_repo("w/p/a", "1.0.0");
    let marker = "w/.tools/esys/a2c/workspace.yaml";
    let file = "invalid workspace marker `[TMP]/w/.tools/esys/a2c/workspace.yaml`";
    #[rustfmt::skip]
    let cases: [(&str, &[&str]); 9] = [
        ("schema_version: 1\nmembers: [p/*\n",                  &["line"]),
        ("schema_version: 1\nmembers: p/*\n",                   &["line 2", "must be a list"]),
        ("schema_version: 1\nmember: [p/*]\n",                  &["line 2", "unknown key `member`"]),
        ("schema_version: 5\n",                                 &["line 1", "found v5, this a2c supports up to v2"]),
        ("schema_version: 1\nmembers: [\"C:/x\"]\n",            &["line 2", "drive letter"]),
        ("schema_version: 1\nexclude: [\"a\\\\b\"]\n",          &["line 2", "backslash"]),
        ("schema_version: 2\nregistry: [a, a]\n",               &["line 2", "`registry`: `a` is listed twice"]),
        ("schema_version: 1\nregistry: [a, b]\n",               &["line 2", "needs `schema_version: 2`"]),
        ("schema_version: 1\nmembers: &m [p/*]\nexclude: *m\n", &["line 2", "anchors"]),
    ];
    for (text, wants) in cases {
        t.write(marker, text);
        // Every error names the file.
        snap += &check(&t, "w", &["workspace", "members"], &[&[file], wants].concat());
    }
    t.write(marker, "schema_version: 1\nregistry: \"ftp://example.org/\"\n");
    snap += &check(
        &t,
        "w",
        &["lock"],
        &[
            "invalid registry location `ftp://example.org/`",
            "unsupported scheme `ftp`",
        ],
    );
    insta::assert_snapshot!(snap);
}

#[test]
fn malformed_local_pointers_are_ignored_with_a_warning_naming_the_line() {
    let t = TestContext::new();
    t.superbuild("w", "");
    t.canonical_repo("w/p/a", "1.0.0");
    let pointer = &layout::pointer("w/p/a");
    for (text, want) in [
        ("workspace_root: [a]\n", "line 1: `workspace_root` must be a path"),
        ("root: ../..\n", "line 1: unknown key `root`"),
        ("# nothing\n", "missing `workspace_root`"),
        ("workspace_root: a\nworkspace_root: b\n", "line 2: duplicate key"),
    ] {
        t.write(pointer, text);
        let run = t.ok("w/p/a", &["workspace", "path"]);
        run.says("warning: ignoring local pointer")
            .says("[TMP]/w/p/a/.tools_local/esys/a2c/workspace.yaml");
        assert!(run.stderr.contains(want), "want {want:?}: {}", run.stderr);
        assert!(run.stdout.ends_with("/w\n"));
    }
}

#[test]
fn bad_environment_values_name_the_variable() {
    let t = TestContext::locked_superbuild();
    for (var, value) in [
        ("A2C_MAX_ENTRIES", "many"),
        ("A2C_MAX_UNPACKED_BYTES", "1GB"),
        ("A2C_LOCK_TIMEOUT", "soon"),
    ] {
        let run = t.run_env("w", &["install"], &[(var, value)]);
        run.failure();
        assert!(
            run.stderr.contains(&format!("{var}=`{value}`")),
            "{var}: {}",
            run.stderr
        );
    }
}

#[test]
fn a_missing_from_directory_is_named() {
    let t = TestContext::new();
    let mut snap = String::new();
    t.standard_superbuild();
    t.run("w", &["lock"]).success();
    snap += &check(
        &t,
        "w",
        &["install", "--offline", "--from", "../no-such-dir"],
        &["--from: `[TMP]/w/../no-such-dir` is not a directory", "a2c vendor"],
    );
    assert!(!t.path("w/.tools_local").exists(), "nothing installed");
    insta::assert_snapshot!(snap);
}

/// A variable a2c does not read whose value is not UTF-8 (a locale's leftover, a binary blob),
/// and one of a cloud family's: neither stops a command — the environment is read with the
/// names and values as bytes, and a cloud variable that is no text is no variable.
#[test]
#[cfg(unix)]
fn variables_that_are_not_text_stop_no_command() {
    use std::os::unix::ffi::OsStrExt as _;
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\n");
    t.canonical_repo("w/p/app", "1.0.0");
    let junk = std::ffi::OsStr::from_bytes(b"\xff\xfe");
    let out = t
        .cmd("w")
        .args(["list"])
        .env("A2C_TEST_NOT_TEXT", junk)
        .env("AWS_NOT_TEXT", junk)
        .output()
        .unwrap();
    let run = crate::support::Run::from_output(out, &t.root);
    insta::assert_snapshot!(run.transcript());
}
