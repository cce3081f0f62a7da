//! The command line's surface: completions and man pages, `--version`, `a2c cache`, the JSON
//! contract, progress in a real terminal and messages that lead somewhere.

use crate::support::assert_contains;
use crate::support::{TestContext, items, layout, succeeds};

#[test]
fn completions_and_man_pages_come_from_the_command_line_itself() {
    let t = TestContext::new();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef a2c"),
        ("fish", "complete -c a2c"),
    ] {
        let run = t.ok(".", &["completions", shell]);
        assert!(
            run.stdout.contains(marker),
            "{shell}: {}",
            &run.stdout[..200.min(run.stdout.len())]
        );
        for sub in ["install", "lock", "doctor", "cache"] {
            assert!(run.stdout.contains(sub), "{shell} completes `{sub}`");
        }
    }
    // The bash script is valid bash.
    let script = t.run(".", &["completions", "bash"]).stdout;
    t.write("a2c.bash", &script);
    let checked = std::process::Command::new("bash")
        .arg("-n")
        .arg(t.path("a2c.bash"))
        .status()
        .unwrap();
    assert!(checked.success());
    let run = t.ok(".", &["man"]);
    assert!(
        run.stdout.starts_with(".ie") || run.stdout.contains(".TH a2c"),
        "{}",
        &run.stdout[..200]
    );
    assert!(run.stdout.contains("install"));
    let run = t.run(".", &["man", "--out", "man1", "--json"]);
    let pages = run.json()["pages"].as_array().unwrap().len();
    assert!(pages > 10, "{pages}");
    let install = fs_err::read_to_string(t.path("man1/a2c-install.1")).unwrap();
    assert!(
        install.contains("\\-\\-link\\-mode") || install.contains("link-mode"),
        "{install}"
    );
    let bad = t.run(".", &["completions", "tcsh"]);
    assert_eq!(bad.code, 2, "a usage error");
}

/// A page for every command and subcommand, however deep; NAME and SYNOPSIS
/// say `a2c …`; every `a2c-…(1)` a page refers to exists; the environment is described in full;
/// and `man -l` renders each page without a warning.
#[test]
fn man_pages_cover_every_subcommand_and_render_cleanly() {
    let t = TestContext::new();
    let run = t.run(".", &["man", "--out", "man1", "--json"]);
    let pages: Vec<String> = run.json()["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().rsplit('/').next().unwrap().to_string())
        .collect();
    for page in [
        "a2c.1",
        "a2c-install.1",
        "a2c-migrate.1",
        "a2c-migrate-version.1",
        "a2c-cache-prune.1",
        "a2c-cache-clean.1",
        "a2c-cache-dir.1",
        "a2c-key-generate.1",
        "a2c-workspace-path.1",
        "a2c-workspace-members.1",
    ] {
        assert!(pages.iter().any(|p| p == page), "{page} missing: {pages:?}");
    }
    let top = fs_err::read_to_string(t.path("man1/a2c.1")).unwrap();
    assert!(!top.contains('…'), "environment descriptions are whole");
    assert!(top.contains("A2C_HTTP_LOW_SPEED_TIME"), "every variable");
    let man = std::process::Command::new("man").arg("--version").output();
    for page in &pages {
        // roff writes a hyphen as `\-`: read the names as a reader sees them.
        let roff = fs_err::read_to_string(t.path(&format!("man1/{page}")))
            .unwrap()
            .replace("\\-", "-");
        // Every reference resolves to a page that was written (`a2c-help(1)` was not).
        for (i, _) in roff.match_indices("a2c-") {
            let name: String = roff[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if roff[i + name.len()..].starts_with("(1)") {
                assert!(
                    pages.contains(&format!("{name}.1")),
                    "{page} refers to {name}(1), which is not written"
                );
            }
        }
        if man.is_err() {
            crate::support::require_program("man (apt-get install man-db)");
            continue;
        }
        let out = std::process::Command::new("man")
            .args(["--warnings", "-l"])
            .arg(t.path(&format!("man1/{page}")))
            .env("MANWIDTH", "100")
            .env("LC_ALL", "C.UTF-8")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.trim().is_empty(), "{page}: {stderr}");
        let command = page.trim_end_matches(".1").replace('-', " ");
        // Justified text: words may be two spaces apart.
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let synopsis = words(text.split("SYNOPSIS").nth(1).unwrap_or_default());
        // A page's name joins the words with `-`, as a subcommand's own name may (`mcp-config`).
        assert!(synopsis.replace('-', " ").starts_with(&command), "{page}: {synopsis}");
        let name = text.split("NAME").nth(1).unwrap_or_default();
        assert!(
            name.trim_start().starts_with(&page.trim_end_matches(".1").to_string()),
            "{page}: {name}"
        );
    }
}

/// A reader that closes the pipe early (`a2c man | head`) ends the output
/// quietly — exit 0, nothing on stderr, never a panic (101) or "error: Broken pipe".
#[test]
fn a_closed_stdout_ends_the_output_quietly() {
    let t = TestContext::new();
    for args in [
        &["completions", "bash"][..],
        &["man"],
        &["--help"],
        &["completions", "zsh"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader); // closed before a2c writes its first byte
        let out = t.cmd(".").args(args).stdout(writer).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

#[test]
fn version_names_the_commit_when_built_from_git() {
    let t = TestContext::new();
    let run = t.ok(".", &["--version"]);
    let line = run.stdout.trim();
    assert!(
        line.starts_with(&format!("a2c {}", env!("CARGO_PKG_VERSION"))),
        "{line}"
    );
    let built_from_git = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.git")).exists();
    if built_from_git {
        // `a2c 0.1.0 (3f2a1c9ab 2026-11-29)`, `-modified` after the hash for a dirty tree.
        let inner = line
            .split_once('(')
            .and_then(|(_, r)| r.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{line}"));
        let (commit, date) = inner.split_once(' ').unwrap();
        assert!(
            commit
                .trim_end_matches("-modified")
                .bytes()
                .all(|b| b.is_ascii_hexdigit()),
            "{line}"
        );
        assert_eq!(date.len(), 10, "{line}");
    }
}

#[test]
fn cache_dir_clean_and_prune_keep_what_any_store_needs() {
    let t = TestContext::installed_superbuild();
    let run = t.run("w", &["cache", "dir"]);
    assert_eq!(
        run.stdout.trim(),
        t.cache_dir()
            .display()
            .to_string()
            .replace(&t.root.display().to_string(), "[TMP]")
    );
    let tag = fs_err::read_to_string(t.cache_dir().join("CACHEDIR.TAG")).unwrap();
    assert!(tag.starts_with("Signature: 8a477f597d28d172789f06886806bc55"), "{tag}");
    // A second superbuild pins only 1.0.0 (and installs it from the tree cache).
    t.superbuild("w2", "members: [\"m/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w2/m/a", "1.0.0");
    t.run("w2", &["install"]).success();
    // `gc --cache` in w2 used to drop w's bundles: w's store is known, so they stay.
    let doc = t.run("w2", &["gc", "--cache", "--json"]).json();
    assert_eq!(doc["cache_removed"], serde_json::json!([]), "{doc}");
    let bundles = || fs_err::read_dir(t.cache_dir().join("bundles")).unwrap().count();
    assert_eq!(bundles(), 3);
    // Nothing to prune while both stores stand.
    let doc = t.run(".", &["cache", "prune", "--json"]).json();
    assert_eq!(doc["removed"], serde_json::json!([]), "{doc}");
    // w gone: 1.1.0 and 2.0.0 are needed by no store; 1.0.0 stays (w2 has it).
    fs_err::remove_dir_all(t.path("w")).unwrap();
    let doc = t.run(".", &["cache", "prune", "--dry-run", "--json"]).json();
    let removed = doc["removed"].as_array().unwrap();
    assert_eq!(removed.len(), 4, "two bundles, two tree records: {doc}");
    assert!(
        removed.iter().all(|r| r["reason"]
            .as_str()
            .unwrap()
            .starts_with("no store on this machine needs it (version ")),
        "{doc}"
    );
    assert_eq!(bundles(), 3, "a dry run changes nothing");
    let run = t.ok(".", &["cache", "prune"]);
    insta::assert_snapshot!(run.transcript());
    assert_eq!(bundles(), 1);
    // --unused-for: what w2 needs and used just now stays ...
    let doc = t.run(".", &["cache", "prune", "--unused-for", "1", "--json"]).json();
    assert_eq!(doc["removed"], serde_json::json!([]), "{doc}");
    // ... until no install has used it for longer; a tree w2's store links stays anyway.
    let bundle = fs_err::read_dir(t.cache_dir().join("bundles"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let backdated = std::process::Command::new("touch")
        .args(["-d", "3 days ago"])
        .arg(&bundle)
        .status()
        .unwrap();
    assert!(backdated.success());
    let doc = t.run(".", &["cache", "prune", "--unused-for", "2", "--json"]).json();
    let removed = doc["removed"].as_array().unwrap();
    assert_eq!(removed.len(), 1, "{doc}");
    assert_eq!(removed[0]["reason"], "unused for more than 2 days", "{doc}");
    assert_eq!(bundles(), 0);
    let entries = fs_err::read_dir(t.cache_dir().join("trees")).unwrap().count();
    assert_eq!(entries, 1, "the tree w2 links stays");
    // clean: everything; w2's installed files stay.
    let doc = t.run(".", &["cache", "clean", "--json"]).json();
    assert!(!doc["removed"].as_array().unwrap().is_empty());
    assert_eq!(bundles(), 0);
    assert!(t.has_installed("w2", "1.0.0", "rules/core.md"));
    t.run("w2", &["doctor", "--deep"]).success();
}

/// `--locked` means the lock exactly as it is: a lock entry no member needs fails it (as
/// `lock --check` does), and a missing lock file is named as such.
#[test]
fn locked_fails_on_removals_and_on_a_missing_lock_file() {
    let t = TestContext::new();
    t.standard_superbuild();
    let run = t.run("w", &["install", "--locked"]);
    insta::assert_snapshot!(run.error_transcript());
    t.run("w", &["lock"]).success();
    t.adopt("w/p/web", "1.0.0");
    let check = t.run("w", &["lock", "--check"]);
    check.failure();
    let run = t.run("w", &["install", "--locked"]);
    insta::assert_snapshot!(run.error_transcript());
    t.run("w", &["install"]).success();
}

/// Validates `doc` against `docs/json/<name>.schema.json` (and the `schema` key every
/// document carries).
#[track_caller]
pub fn validate(name: &str, doc: &serde_json::Value) {
    let path = format!("{}/docs/json/{name}.schema.json", env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value = serde_json::from_str(&fs_err::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::options().build(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{doc:#}");
    assert_eq!(doc["schema"], 1, "{name}");
}

/// Every `--json` document validates against its schema in docs/json/, errors included.
#[test]
fn every_json_document_matches_its_schema() {
    let t = TestContext::new();
    t.standard_superbuild();
    validate("lock", &t.run("w", &["lock", "--json"]).json());
    validate("lock", &t.run("w", &["lock", "--check", "--json"]).json());
    validate("install", &t.run("w", &["install", "--json"]).json());
    validate("resolve", &t.run("w/p/app", &["resolve", "--json"]).json());
    validate("doctor", &t.run("w", &["doctor", "--json"]).verdict_json());
    validate("gc", &t.run("w", &["gc", "--cache", "--dry-run", "--json"]).json());
    validate("workspace-root", &t.run("w", &["workspace", "path", "--json"]).json());
    validate(
        "workspace-members",
        &t.run("w", &["workspace", "members", "--json"]).json(),
    );
    validate("vendor", &t.run("w", &["vendor", "../vend", "--json"]).json());
    validate(
        "key-generate",
        &t.run(".", &["key", "generate", "--out", "keys/k", "--no-password", "--json"])
            .json(),
    );
    t.method_tree("trees/9.0.0", "9.0.0");
    validate("pack", &t.pack_run("trees/9.0.0", "9.0.0", "reg", &["--json"]).json());
    validate(
        "sign",
        &t.run(".", &["sign", "--registry", "reg", "--key", "keys/k", "--json"])
            .json(),
    );
    validate(
        "yank",
        &t.run(".", &["yank", "9.0.0", "--registry", "reg", "--json"]).json(),
    );
    validate("cache-dir", &t.run("w", &["cache", "dir", "--json"]).json());
    validate(
        "cache-prune",
        &t.run("w", &["cache", "prune", "--dry-run", "--json"]).json(),
    );
    validate(
        "cache-prune",
        &t.run("w", &["cache", "clean", "--dry-run", "--json"]).json(),
    );
    validate("man", &t.run(".", &["man", "--out", "man1", "--json"]).json());
    t.git_repo("fresh");
    validate(
        "adopt",
        &t.run("fresh", &["adopt", "--version", "1.0.0", "--json"]).json(),
    );
    // login reads the token on standard input.
    let mut child = t
        .cmd(".")
        .args(["login", "reg.example.org", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"t0ken\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    validate("login", &serde_json::from_slice(&out.stdout).unwrap());
    validate("logout", &t.run(".", &["logout", "reg.example.org", "--json"]).json());
    // An error is a document too, with a stable code, and the same exit status.
    t.superbuild("nolock", "members: [\"m/*\"]\n");
    t.canonical_repo("nolock/m/a", "1.0.0");
    let run = t.run("nolock", &["install", "--locked", "--json"]);
    let doc = run.json_failure();
    validate("error", &doc);
    assert_eq!(doc["error"]["code"], "no-lock-file", "{doc}");
    assert_eq!(doc["exit"], 1);
    assert!(doc["error"]["hint"].as_str().unwrap().contains("a2c lock"), "{doc}");
    insta::assert_snapshot!(run.transcript());
    // A command that prints its own failure document prints only that one.
    let run = t.run("nolock/m/a", &["resolve", "--json"]);
    run.failure();
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("exactly one document");
    validate("resolve", &doc);
}

/// `--color` governs clap's own help and usage output too.
#[test]
fn color_flag_governs_help_and_usage() {
    let t = TestContext::new();
    let help = t.run(".", &["--color", "always", "install", "--help"]);
    help.success();
    insta::assert_snapshot!(help.transcript());
    for args in [
        &["--color", "never", "install", "--help"][..],
        &["--color=never", "lock", "--help"][..],
    ] {
        let run = t.ok(".", args);
        assert!(!run.stdout.contains('\u{1b}'), "{args:?}: {}", run.stdout);
    }
    let usage = t.run(".", &["--color", "always", "install", "--no-such-flag"]);
    assert_eq!(usage.code, 2);
    insta::assert_snapshot!(usage.transcript());
    let usage = t.run(".", &["--color", "never", "install", "--no-such-flag"]);
    assert!(!usage.stderr.contains('\u{1b}'), "{}", usage.stderr);
}

/// Every command's `--help` ends with examples.
#[test]
fn every_command_help_has_examples() {
    let t = TestContext::new();
    let leaves = [
        "workspace path",
        "workspace members",
        "resolve",
        "lock",
        "install",
        "pack",
        "yank",
        "key generate",
        "sign",
        "vendor",
        "doctor",
        "gc",
        "migrate version",
        "adopt",
        "login",
        "logout",
        "cache dir",
        "cache clean",
        "cache prune",
        "completions",
        "man",
    ];
    for leaf in leaves {
        let mut args: Vec<&str> = leaf.split(' ').collect();
        args.push("--help");
        let run = t.ok(".", &args);
        assert!(
            run.stdout.contains("Example"),
            "`a2c {leaf} --help` has no example:\n{}",
            run.stdout
        );
    }
    let lock = t.run(".", &["lock", "--help"]).stdout;
    assert!(lock.contains("http(s)://") && lock.contains("oci://"), "{lock}");
}

/// `install --reinstall V` repairs a tampered version from its verified bundle, without `rm`.
#[test]
fn reinstall_repairs_a_tampered_version() {
    use std::os::unix::fs::PermissionsExt;
    let t = TestContext::installed_superbuild();
    let file = t.path(&layout::installed_file("w", "1.0.0", "rules/core.md"));
    let original = fs_err::read_to_string(&file).unwrap();
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    fs_err::write(&file, "tampered\n").unwrap();
    t.run("w", &["doctor", "--deep"]).failure();
    // A plain install sees a valid receipt and does nothing.
    let doc = t.run("w", &["install", "--json"]).json();
    assert_eq!(doc["installed"], serde_json::json!([]));
    let doc = t.run("w", &["install", "--reinstall", "1.0.0", "--json"]).json();
    assert_eq!(doc["installed"][0]["version"], "1.0.0");
    assert_eq!(
        doc["installed"][0]["source"], "cache",
        "from the verified bundle: {doc}"
    );
    assert_eq!(fs_err::read_to_string(&file).unwrap(), original);
    t.run("w", &["doctor", "--deep"]).success();
    // Without a version: everything the members need.
    let doc = t.run("w", &["install", "--reinstall", "--json"]).json();
    assert_eq!(doc["installed"].as_array().unwrap().len(), 3);
    let run = t.run("w", &["install", "--reinstall", "9.9.9"]);
    insta::assert_snapshot!(run.error_transcript());
}

/// The command `vendor` prints can be pasted into a shell as is: a path with spaces is quoted.
#[test]
fn vendor_prints_a_shell_quoted_command() {
    let t = TestContext::locked_superbuild();
    let run = t.ok("w", &["vendor", "../my vendor"]);
    let line = run.stderr.lines().last().unwrap().to_string();
    insta::assert_snapshot!(line, @"3 bundles in `[TMP]/w/../my vendor`; install them anywhere with `a2c install --offline --from '../my vendor'`");
    let parsed = shlex::split(line.split("with `").nth(1).unwrap().trim_end_matches('`')).unwrap();
    assert_eq!(parsed.last().unwrap(), "../my vendor");
}

/// One bundle is "1 bundle", and "it".
#[test]
fn vendor_counts_one_bundle_in_the_singular() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w/p/app", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    t.run("w", &["lock"]).success();
    let run = t.run("w", &["vendor", "../v"]);
    let line = run.stderr.lines().last().unwrap().to_string();
    insta::assert_snapshot!(line, @"1 bundle in `[TMP]/w/../v`; install it anywhere with `a2c install --offline --from ../v`");
}

/// `--offline vendor` with nothing cached: the hint never names an option `vendor` lacks, and
/// each way it gives works as printed — without `--offline`, and by filling the cache with
/// `install --offline --from DIR` from bundles vendored elsewhere.
#[test]
fn an_offline_vendor_with_nothing_cached_hints_what_works() {
    let t = TestContext::locked_superbuild();
    t.run("w", &["vendor", "../elsewhere"]).success();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    let run = t.run("w", &["--offline", "vendor", "../v"]);
    let error = run.error_transcript();
    assert!(!error.contains("pass `--from DIR`"), "{error}");
    assert_contains(
        &error,
        "hint: run it without `--offline` to download them, or fill the cache first with `a2c install --offline --from DIR`",
    );
    t.run("w", &["install", "--offline", "--from", "../elsewhere"])
        .success();
    t.run("w", &["--offline", "vendor", "../v"]).success();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    t.run("w", &["vendor", "../v2"]).success();
}

/// A version the registry lacks is named with the member that pins it, and the hint lists the
/// versions the registry has.
#[test]
fn an_unknown_version_names_its_member_and_the_registry_versions() {
    let t = TestContext::new();
    t.standard_superbuild();
    t.canonical_repo("w/p/new", "9.9.9");
    let run = t.run("w", &["lock"]);
    insta::assert_snapshot!(run.error_transcript(), @r"
    exit: 1
    error: version 9.9.9 is not in the registry `[TMP]/reg`, pinned by `[TMP]/w/p/new`
    hint: the registry has 1.0.0, 1.1.0, 2.0.0: pin one of those (`a2c migrate version --to V` in the member), or publish 9.9.9 with `a2c pack`
    ");
}

/// `adopt` checks that the version exists (the lock or the registry has it), and warns —
/// adopting still works offline.
#[test]
fn adopt_warns_about_a_version_the_registry_lacks() {
    let t = TestContext::new();
    t.standard_superbuild();
    t.git_repo("w/p/new");
    let run = t.ok("w/p/new", &["adopt", "--version", "9.9.9"]);
    insta::assert_snapshot!(run.transcript());
    t.git_repo("w/p/other");
    let run = t.ok("w/p/other", &["adopt", "--version", "2.0.0"]);
    insta::assert_snapshot!(run.transcript());
}

/// `a2c list` shows every version in the four places; `a2c outdated` the members behind the
/// newest published version.
#[test]
fn list_and_outdated() {
    let t = TestContext::installed_superbuild();
    t.method_tree("trees/3.0.0", "3.0.0");
    t.run(".", &["pack", "trees/3.0.0", "--version", "3.0.0", "--registry", "reg"])
        .success();
    t.run(".", &["yank", "1.1.0", "--registry", "reg"]).success();
    let doc = t.run("w", &["list", "--json"]).json();
    validate("list", &doc);
    let rows: Vec<(String, bool, bool, String)> = items(&doc["versions"])
        .iter()
        .map(|r| {
            (
                r["version"].as_str().unwrap().to_string(),
                r["locked"].as_bool().unwrap(),
                r["installed"].as_bool().unwrap(),
                r["registry"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("1.0.0".into(), true, true, "published".into()),
            ("1.1.0".into(), true, true, "yanked".into()),
            ("2.0.0".into(), true, true, "published".into()),
            ("3.0.0".into(), false, false, "published".into()),
        ]
    );
    assert_eq!(
        doc["versions"][0]["members"].as_array().unwrap().len(),
        2,
        "app and util pin 1.0.0"
    );
    let offline = t.run("w", &["list", "--offline", "--json"]).json();
    assert!(offline["versions"][0]["registry"].is_null());
    assert_eq!(offline["registry_note"], "offline");
    let human = t.run("w", &["list"]);
    human.success();
    insta::assert_snapshot!(human.transcript());
    let doc = t.run("w", &["outdated", "--json"]).json();
    validate("outdated", &doc);
    assert_eq!(doc["newest"], "3.0.0");
    assert_eq!(doc["members"].as_array().unwrap().len(), 3, "{doc}");
    // A yanked contract is told as such, never counted as current.
    assert_eq!(
        doc["yanked"],
        serde_json::json!([{"path": t.shown("w/l/core"), "version": "1.1.0"}])
    );
    let human = t.run("w", &["outdated"]);
    insta::assert_snapshot!(human.transcript());
    // Its hint, followed where the user stands: the review, which prints the `--confirm` step.
    let hint = human.stderr.split('`').nth(1).unwrap().to_string();
    t.commit_members(); // a migration starts from committed records
    let review = t.run_printed("w", &hint);
    review.success();
    review.says("--confirm sha256:");
    // The newest version yanked too: nobody is "on the newest" for being on a yanked one.
    t.run(".", &["yank", "3.0.0", "--registry", "reg"]).success();
    t.run(".", &["yank", "2.0.0", "--registry", "reg"]).success();
    let human = t.run("w", &["outdated"]);
    assert!(
        human
            .stdout
            .contains("p/web: 2.0.0 is yanked → no newer version is published"),
        "{}",
        human.stdout
    );
    insta::assert_snapshot!(human.transcript());
    // 1.0.0 is the newest left: moving there is a downgrade, never proposed as a move.
    // lock, reading the registry, warns of every locked version yanked since.
    let run = t.run("w", &["lock", "--registry", "../reg", "--json"]);
    let doc = run.json();
    validate("lock", &doc);
    assert_eq!(doc["yanked"], serde_json::json!(["1.1.0", "2.0.0"]));
    insta::assert_snapshot!(run.transcript());
}

/// `lock --update V` re-resolves only V (like `cargo update -p`): another changed entry is
/// still refused, and the lock is untouched until every change is accepted.
#[test]
fn lock_update_of_one_version_moves_only_it() {
    let t = TestContext::locked_superbuild();
    let before = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    t.edit_index("reg", "2.0.0", |e| e["sha256"] = serde_json::json!("0".repeat(64)));
    t.edit_index("reg", "1.0.0", |e| e["sha256"] = serde_json::json!("1".repeat(64)));
    let run = t.run("w", &["lock", "--update", "2.0.0"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap(), before);
    let doc = t.run("w", &["lock", "--update", "2.0.0", "1.0.0", "--json"]).json();
    assert_eq!(doc["updated"], serde_json::json!(["1.0.0", "2.0.0"]));
    let run = t.run("w", &["lock", "--update", "9.9.9"]);
    insta::assert_snapshot!(run.error_transcript());
}

/// A terminal for a test: `a2c ARGS` (with the test's environment, `CI` unset, and `exports`)
/// runs in a detached tmux session 60 columns wide; `capture` reads the screen.
struct Terminal {
    socket: String,
}

impl Terminal {
    fn start(t: &TestContext, cwd: &str, exports: &[(&str, String)], args: &str) -> Option<Self> {
        Self::start_sized(t, cwd, exports, args, 60)
    }

    /// [`Terminal::start`] in a terminal `columns` wide.
    fn start_sized(t: &TestContext, cwd: &str, exports: &[(&str, String)], args: &str, columns: u16) -> Option<Self> {
        if std::process::Command::new("tmux").arg("-V").output().is_err() {
            crate::support::require_program("tmux (apt-get install tmux)");
            return None;
        }
        let a2c = t.cmd(cwd);
        let mut script = String::from("unset CI A2C_PROGRESS\n");
        let quote = |v: &str| shlex::try_quote(v).unwrap().into_owned();
        for (k, v) in a2c.get_envs() {
            if k == "A2C_PROGRESS" {
                continue; // the default: bars in a terminal
            }
            if let Some(v) = v {
                script.push_str(&format!(
                    "export {}={}\n",
                    k.to_string_lossy(),
                    quote(&v.to_string_lossy())
                ));
            }
        }
        for (k, v) in exports {
            script.push_str(&format!("export {k}={}\n", quote(v)));
        }
        script.push_str(&format!(
            "cd {}\n{} {args}; echo EXIT=$?; sleep 30\n",
            quote(&t.path(cwd).to_string_lossy()),
            quote(&a2c.get_program().to_string_lossy())
        ));
        let name = format!("run-{}.sh", next_id());
        t.write(&name, &script);
        let term = Self {
            socket: format!("a2c-test-{}-{}", std::process::id(), next_id()),
        };
        let started = term.tmux(&[
            "new-session",
            "-d",
            "-x",
            &columns.to_string(),
            "-y",
            "30",
            "-s",
            "a2c",
            "bash",
            t.path(&name).to_str().unwrap(),
        ]);
        assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
        Some(term)
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap()
    }

    fn capture(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "a2c"]).stdout).into_owned()
    }

    /// The screen with wrapped rows joined back into the lines that were written (`-J`): a
    /// line wider than the terminal shows up as one long line.
    fn capture_joined(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-J", "-t", "a2c"]).stdout).into_owned()
    }

    /// The screen once it shows `what` (or after 20 s).
    fn wait_for(&self, what: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let screen = self.capture();
            if screen.contains(what) || std::time::Instant::now() > deadline {
                return screen;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

fn next_id() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

/// Progress as a person sees it: the install runs in a real terminal (tmux, 60 columns),
/// paused in the middle of its first extraction by the test hook; the overall bar knows its
/// total, names the version in progress and fits the width; once done, the bars are gone.
#[test]
fn progress_bars_in_a_real_terminal() {
    let t = TestContext::locked_superbuild();
    let release = t.path("release");
    let hook = format!("pause-until:mid-extraction:{}", release.display());
    let Some(term) = Terminal::start(&t, "w", &[("A2C_TEST_HOOK", hook)], "install --jobs 1") else {
        return;
    };
    let paused = term.wait_for("extracting");
    let bar = paused
        .lines()
        .find(|l| l.contains("versions"))
        .unwrap_or_default()
        .to_string();
    assert!(bar.contains("0/3 versions"), "the total is known up front:\n{paused}");
    assert!(bar.contains("extracting 1.0.0"), "{paused}");
    assert!(bar.trim_end().chars().count() <= 60, "fits 60 columns: {bar:?}");
    fs_err::write(&release, "").unwrap();
    let done = term.wait_for("EXIT=");
    assert!(done.contains("EXIT=0"), "{done}");
    assert!(!done.contains("versions"), "the bars are cleared:\n{done}");
    assert!(done.contains("installed 3, reused 0"), "{done}");
}

/// A slow download's bars in real terminals 60, 100 and 140 columns wide:
/// each bar on its own row, none wider than the terminal (no row wraps into the next), the
/// overall bar and the download bar both drawn, and nothing left behind at the end.
#[test]
fn progress_bars_fit_every_width_during_a_slow_download() {
    // 40 columns too, where the version was cut (`downloading 1.0.`).
    for columns in [40u16, 60, 100, 140] {
        let t = TestContext::new();
        let server = t.standard_http_superbuild();
        t.run("w", &["lock"]).success();
        // The first request for 1.0.0 trickles 80 bytes, 100 ms apart, then breaks off: a
        // download bar in progress for about eight seconds (room for a loaded CI machine), then
        // a retry that completes.
        server.fault(
            "/bundles/a2c-1.0.0.tar.gz",
            &[crate::support::http_server::Fault::Trickle {
                interval: std::time::Duration::from_millis(100),
                n: 80,
            }],
        );
        let Some(term) = Terminal::start_sized(&t, "w", &[], "install --jobs 1", columns) else {
            return;
        };
        let during = term.wait_for("downloading 1.0.0");
        // And the overall bar (a loaded machine drew the download's first, once).
        term.wait_for("/3");
        std::thread::sleep(std::time::Duration::from_millis(600)); // a few redraws
        let screen = term.capture_joined();
        let rows: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
        for row in &rows {
            assert!(
                row.chars().count() <= usize::from(columns),
                "{columns} columns: a row wider than the terminal wraps:\n{screen}"
            );
        }
        let download = rows.iter().filter(|r| r.contains("downloading 1.0.0 ")).count();
        let overall = rows.iter().filter(|r| r.contains("/3")).count();
        assert_eq!(
            (download, overall),
            (1, 1),
            "{columns} columns, one row each:\n{screen}\n{during}"
        );
        assert!(
            !rows.iter().any(|r| r.contains("downloading") && r.contains("/3")),
            "{columns} columns: two bars on one row:\n{screen}"
        );
        let done = term.wait_for("EXIT=");
        assert!(done.contains("EXIT=0"), "{done}");
        assert!(
            !done.contains("downloading") && !done.contains("/3"),
            "{columns}: bars left:\n{done}"
        );
    }
}

/// The standard superbuild on HTTP, locked; then 1.0.0's bundle answers `statuses`, in turn,
/// before it is served.
fn locked_with_a_failing_bundle(t: &TestContext, statuses: &[u16]) -> crate::support::http_server::Server {
    let server = t.standard_http_superbuild();
    t.run("w", &["lock"]).success();
    let faults: Vec<_> = statuses
        .iter()
        .map(|s| crate::support::http_server::Fault::Status(*s))
        .collect();
    server.fault("/bundles/a2c-1.0.0.tar.gz", &faults);
    server
}

/// Lines printed while the bars are drawn (retries under `-v`) go above them: no stale frame
/// is left on the screen.
#[test]
fn lines_printed_during_progress_leave_no_stale_bars() {
    let t = TestContext::new();
    let _server = locked_with_a_failing_bundle(&t, &[500, 503]);
    let exports = [("A2C_HTTP_RETRIES", "3".to_string())];
    let Some(term) = Terminal::start(&t, "w", &exports, "-v install --jobs 1") else {
        return;
    };
    let done = term.wait_for("EXIT=");
    assert!(done.contains("EXIT=0"), "{done}");
    assert!(done.contains("retry 1 of 3"), "{done}");
    assert!(!done.contains("versions"), "no stale frame:\n{done}");
}

/// `a2c login` on a terminal reads the token with echo off — typed into a real terminal (tmux),
/// it never appears on the screen — and stores it; the terminal echoes again after. Echo is off
/// before the prompt shows: the token is typed while a2c holds at the prompt (the test hook),
/// as a paste the instant the prompt appears would be.
#[test]
fn login_never_echoes_the_token_on_a_terminal() {
    let t = TestContext::new();
    let release = t.path("release");
    let hook = format!("pause-until:secret-prompted:{}", release.display());
    let Some(term) = Terminal::start(
        &t,
        ".",
        &[("A2C_TEST_HOOK", hook)],
        "login reg.example.org; stty -a | tr ' ' '\\n' | grep -x echo",
    ) else {
        return;
    };
    term.wait_for("paste the token");
    term.tmux(&["send-keys", "-t", "a2c", "s3cr3t-t0ken-typed", "Enter"]);
    // The keys reach the terminal, which echoes them or not, before a2c reads on.
    std::thread::sleep(std::time::Duration::from_millis(300));
    fs_err::write(&release, "").unwrap();
    let done = term.wait_for("EXIT=");
    assert!(done.contains("token stored for reg.example.org"), "{done}");
    assert!(!done.contains("s3cr3t-t0ken-typed"), "the token was echoed:\n{done}");
    assert!(
        done.lines().any(|l| l.trim() == "echo"),
        "echo is back on afterwards:\n{done}"
    );
    let stored = fs_err::read_to_string(t.path("home/.config/a2c/credentials.toml")).unwrap();
    assert!(stored.contains("s3cr3t-t0ken-typed"), "{stored}");
}

/// `a2c key generate` on a terminal asks the new key's password twice with echo off,
/// as `minisign -G` does; the file is encrypted with it.
#[test]
fn key_generate_asks_the_password_twice_without_echo() {
    let t = TestContext::new();
    let Some(term) = Terminal::start(&t, ".", &[], "key generate --out k.key") else {
        return;
    };
    term.wait_for("password for the new key");
    term.tmux(&["send-keys", "-t", "a2c", "hunter2-typed", "Enter"]);
    term.wait_for("the same password again");
    term.tmux(&["send-keys", "-t", "a2c", "hunter2-typed", "Enter"]);
    let done = term.wait_for("EXIT=");
    assert!(done.contains("EXIT=0"), "{done}");
    assert!(!done.contains("hunter2"), "the password was echoed:\n{done}");
    let secret = fs_err::read_to_string(t.path("k.key")).unwrap();
    assert!(
        secret.starts_with("untrusted comment: minisign encrypted secret key"),
        "{secret}"
    );
    // The password typed is the one that unlocks it.
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = crate::support::pack_1_0_0("reg", &["--sign", "k.key"]);
    t.run_env(".", &pack, &[("A2C_KEY_PASSWORD", "hunter2-typed")])
        .success();
}

/// `--offline` and `-j` are global: every command honours them.
#[test]
fn offline_and_jobs_are_global() {
    let t = TestContext::new();
    t.standard_superbuild();
    // lock --offline with a registry that needs the network: nothing locked yet, so it says
    // exactly what it lacks and where it looked.
    let remote = [("A2C_REGISTRY", "https://reg.example.invalid/a2c/")];
    insta::assert_snapshot!(t.run_env("w", &["--offline", "lock"], &remote).error_transcript());
    // A registry that is a directory on this machine needs no network: offline, it resolves.
    t.run("w", &["--offline", "lock"]).success();
    let locked = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    t.run("w", &["install", "-j", "1"]).success();
    // Offline, with the lock and the cache: lock --offline keeps and checks; vendor copies
    // from the cache; doctor --deep takes -j; list shows no registry column.
    t.run("w", &["lock", "--offline"]).success();
    let doc = t
        .run("w", &["vendor", "../vend", "--offline", "-j", "2", "--json"])
        .json();
    assert_eq!(doc["bundles"].as_array().unwrap().len(), 3);
    t.run("w", &["doctor", "--deep", "-j", "1"]).success();
    let doc = t.run("w", &["list", "--offline", "--json"]).json();
    assert_eq!(doc["registry_note"], "offline");
    insta::assert_snapshot!(
        t.run_env("w", &["lock", "--offline", "--update"], &remote)
            .error_transcript()
    );
    // lock --offline --from DIR: the vendor manifest gives back the entries as they were locked.
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    t.ok_env("w", &["lock", "--offline", "--from", "../vend"], &remote);
    assert_eq!(
        fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap(),
        locked,
        "the same lock, from the vendor manifest"
    );
    t.canonical_repo("w/p/late", "3.0.0");
    insta::assert_snapshot!(
        t.run_env("w", &["lock", "--offline", "--from", "../vend"], &remote)
            .error_transcript()
    );
    fs_err::remove_dir_all(t.path("w/p/late")).unwrap();
    // A command that needs the network refuses under --offline, naming why.
    t.method_tree("trees/5.0.0", "5.0.0");
    let run = t.pack_run("trees/5.0.0", "5.0.0", "oci://127.0.0.1:9/esys/a2c", &["--offline"]);
    insta::assert_snapshot!(run.error_transcript());
}

/// `--frozen`: the lock exactly as it is, and no network (cargo's meaning).
#[test]
fn frozen_is_locked_and_offline() {
    let t = TestContext::locked_superbuild();
    t.run("w", &["install"]).success();
    fs_err::remove_dir_all(t.path("w/.tools_local")).unwrap();
    // The bundles are cached: a frozen install works with the registry gone.
    fs_err::rename(t.path("reg"), t.path("reg-away")).unwrap();
    t.run("w", &["install", "--frozen"]).success();
    t.run("w", &["lock", "--frozen"]).success();
    // A member pinning a version the lock lacks: both refuse, changing nothing.
    t.adopt("w/p/web", "3.0.0");
    let before = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    let run = t.run("w", &["install", "--frozen"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    t.run("w", &["lock", "--frozen"]).failure();
    assert_eq!(fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap(), before);
}

/// `a2c --help` lists every environment variable src/env.rs declares as listed, and none it
/// does not (the platform's directories, the clouds' own, the test builds' switches); the man
/// page and docs/concepts.md's table name each listed one too.
#[test]
fn help_lists_every_environment_variable() {
    let t = TestContext::new();
    let help = t.run(".", &["--help"]).stdout;
    let listed: Vec<&str> = a2c::env::listed().map(|v| v.name).collect();
    assert!(listed.len() > 20, "{listed:?}");
    let concepts = fs_err::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/concepts.md")).unwrap();
    let table = &concepts[concepts.find("## Environment variables").unwrap()..];
    // The names `--help` lists: each entry's first line, indented by two.
    let section = &help[help.find("Environment").unwrap()..];
    let shown: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .map(|l| l.trim_start().split("  ").next().unwrap())
        .collect();
    assert_eq!(shown, listed, "`a2c --help` lists the listed variables, in order");
    for name in listed.iter().flat_map(|n| n.split(", ")) {
        assert!(
            table.contains(&format!("`{name}`")),
            "docs/concepts.md's table lacks {name}"
        );
    }
    // Each description whole (never cut at "…"), within 80 columns.
    let section = &help[help.find("Environment").unwrap()..];
    for line in section.lines() {
        assert!(!line.ends_with('…') && line.chars().count() <= 80, "{line:?}");
    }
    let joined = section.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_contains(
        &joined,
        "(default: $XDG_CACHE_HOME/a2c, else ~/.cache/a2c; on Windows %LOCALAPPDATA%\\a2c\\cache)",
    );
}

/// `pack --level N`: the level is part of the bytes — deterministic per level — and any
/// level installs.
#[test]
fn pack_level_is_deterministic_per_level() {
    let t = TestContext::new();
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = |reg: &str, level: &str| {
        t.pack_run("trees/1.0.0", "1.0.0", reg, &["--level", level, "--json"])
            .json()["sha256"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let fast = pack("reg1", "1");
    assert_eq!(pack("reg1b", "1"), fast, "same tree, same level, same bytes");
    let default = t.run(".", &crate::support::pack_1_0_0("reg6", &["--json"])).json();
    assert_eq!(
        pack("reg6b", "6"),
        default["sha256"].as_str().unwrap(),
        "6 is the default"
    );
    assert_eq!(t.run(".", &crate::support::pack_1_0_0("r", &["--level", "0"])).code, 2);
    t.superbuild("w", "members: [\"m/*\"]\nregistry: ../reg1\n");
    t.canonical_repo("w/m/a", "1.0.0");
    t.run("w", &["install"]).success();
    t.run("w", &["doctor", "--deep"]).success();
}

/// `pack --threads N` deflates independent blocks on N threads: the same
/// bytes for any N >= 2 (over several blocks), other bytes than the default's, the same tree
/// digest, and it installs and verifies like any bundle.
#[test]
fn pack_threads_are_deterministic_for_any_count() {
    let t = TestContext::new();
    t.method_tree("trees/1.0.0", "1.0.0");
    // A few MiB of poorly compressible content, so that the bundle spans several blocks.
    let mut x: u64 = 7;
    let noise: Vec<u8> = (0..5 << 20)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect();
    fs_err::write(t.path("trees/1.0.0/data.bin"), noise).unwrap();
    let pack = |reg: &str, threads: &str| {
        let doc = t
            .run(".", &crate::support::pack_1_0_0(reg, &["--threads", threads, "--json"]))
            .json();
        (
            doc["sha256"].as_str().unwrap().to_string(),
            doc["tree"].as_str().unwrap().to_string(),
        )
    };
    let two = pack("reg2", "2");
    assert_eq!(pack("reg4", "4"), two, "the same bytes for any count of threads");
    let one = pack("reg1", "1");
    assert_ne!(one.0, two.0, "blocks are other bytes than one stream");
    assert_eq!(one.1, two.1, "the same tree");
    t.superbuild("w", "members: [\"m/*\"]\nregistry: ../reg2\n");
    t.canonical_repo("w/m/a", "1.0.0");
    t.run("w", &["install"]).success();
    t.run("w", &["doctor", "--deep"]).success();
    // Re-packing a published version with the other setting is refused, as any changed bundle,
    // and the hint says that only the packing differs.
    let run = t.run(
        ".",
        &["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", "reg2"],
    );
    insta::assert_snapshot!(run.error_transcript());
    insta::assert_snapshot!(
        t.pack_run("trees/1.0.0", "1.0.0", "regz", &["--format", "zip", "--threads", "2"])
            .error_transcript()
    );
}

/// When stderr is not a terminal (a pipe, a log, CI), long work prints a
/// plain line per version started and finished, with its size and time, instead of silence
/// until the end; `A2C_PROGRESS=none`, `-q` and `--json` keep it quiet.
#[test]
fn progress_lines_when_stderr_is_not_a_terminal() {
    let t = TestContext::locked_superbuild();
    let install = |extra: &[&str], env: &[(&str, &str)]| {
        t.forget_installed("w");
        let mut cmd = t.cmd("w");
        cmd.env_remove("A2C_PROGRESS").arg("install").args(extra);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = succeeds(&mut cmd, "a2c install");
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    for env in [&[][..], &[("CI", "true")][..]] {
        let (_, stderr) = install(&[], env);
        for v in ["1.0.0", "1.1.0", "2.0.0"] {
            let lines: Vec<&str> = stderr.lines().collect();
            let started = lines.iter().position(|l| l.starts_with(&format!("installing {v} (")));
            let finished = lines
                .iter()
                .position(|l| l.starts_with(&format!("done {v} (")) && l.contains(" B, ") && l.ends_with(" s)"));
            assert!(
                matches!((started, finished), (Some(s), Some(f)) if s < f),
                "{v}: a line when it starts and one when it is done, with size and time:\n{stderr}"
            );
        }
        assert!(stderr.contains("installed 3, reused 0"), "{stderr}");
    }
    let (_, stderr) = install(&[], &[("A2C_PROGRESS", "bogus")]);
    assert!(
        stderr.contains("ignoring A2C_PROGRESS=bogus: it takes auto, lines or none") && stderr.contains("done 1.0.0 ("),
        "an unknown value is named, and the default applies:\n{stderr}"
    );
    let (_, stderr) = install(&[], &[("A2C_PROGRESS", "none")]);
    assert!(!stderr.contains("installing 1.0.0"), "{stderr}");
    let (_, stderr) = install(&["-q"], &[]);
    assert_eq!(stderr, "", "-q: nothing");
    let (stdout, stderr) = install(&["--json"], &[]);
    assert!(!stderr.contains("installing 1.0.0"), "{stderr}");
    validate("install", &serde_json::from_str(&stdout).unwrap());
}

/// Ctrl-C while the bars are drawn clears them and exits 130 (a shell's "interrupted"); the
/// store stays valid and the next install completes.
#[test]
fn ctrl_c_clears_the_bars() {
    let t = TestContext::locked_superbuild();
    let hook = format!("pause-until:mid-extraction:{}", t.path("never").display());
    let Some(term) = Terminal::start(&t, "w", &[("A2C_TEST_HOOK", hook)], "install --jobs 1") else {
        return;
    };
    let paused = term.wait_for("extracting");
    assert!(paused.contains("0/3 versions"), "{paused}");
    term.tmux(&["send-keys", "-t", "a2c", "C-c"]);
    let done = term.wait_for("EXIT=");
    assert!(done.contains("EXIT=130"), "{done}");
    assert!(done.contains("interrupted"), "{done}");
    assert!(done.contains("interrupted: run the command again to finish"), "{done}");
    assert!(!done.contains("versions"), "the bars are cleared:\n{done}");
    // A clean interrupt leaves no pid in the store's lock: doctor sees no holder that died.
    let doctor = t.run("w", &["doctor", "--json"]).verdict_json();
    assert!(!doctor.to_string().contains("store-stale-lock"), "{doctor}");
    let run = t.ok("w", &["install", "--json"]);
    assert_eq!(run.json()["installed"].as_array().unwrap().len(), 3);
}

/// Each of these messages was wrong or weak; each now names what failed and
/// what to do. (The unknown version, the vendor command, the proxy and the retries have their
/// own tests; permission denied is unit-tested, because CI runs as root.)
/// Each hint fits the command that failed, and the command it names works.
#[test]
fn hints_fit_the_command_that_failed() {
    let t = TestContext::new();
    let server = t.standard_http_superbuild();
    let host = format!("127.0.0.1:{}", server.port);
    // A CI job's token, with the registry named only by the committed marker: held back, and
    // the hint says how to bind the host — which then works.
    server.require_token("ci-t0ken");
    let env = [("A2C_REGISTRY_TOKEN", "ci-t0ken")];
    let run = t.run_env("w", &["lock"], &env);
    insta::assert_snapshot!(run.error_transcript());
    run.says(&format!("A2C_TOKEN_HOSTS={host}"));
    t.run_env("w", &["lock"], &[env[0], ("A2C_TOKEN_HOSTS", &host)])
        .success();
    // lock against a registry that is down: no `a2c install` advice.
    let down = t.run("w", &["lock", "--update", "--registry", "http://127.0.0.1:1/a2c/"]);
    down.failure();
    insta::assert_snapshot!(down.transcript());
    // login with credentials in the URL: about the host, not about CA bundles.
    let run = t.run(".", &["login", "https://u:p@reg.example.org/"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    // yank of a version the registry never had: no migration advice.
    let run = t.run(".", &["yank", "9.9.9", "--registry", "reg"]);
    insta::assert_snapshot!(run.error_transcript());
    // --frozen is named as --frozen.
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    let run = t.run("w", &["--frozen", "install"]);
    insta::assert_snapshot!(run.error_transcript());
    // lock --check without a lock file: no file, not a file that lacks versions.
    let run = t.run("w", &["lock", "--check"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
}

/// `-q` silences the listings of `gc` and `cache clean|prune` as it does their
/// summaries.
#[test]
fn quiet_silences_listings() {
    let t = TestContext::installed_superbuild();
    t.write(
        "w/p/web/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: 1.0.0\ndelivery: package\n",
    );
    for args in [&["gc", "--dry-run"][..], &["cache", "clean", "--dry-run"]] {
        let loud = t.run("w", args);
        loud.success();
        assert!(
            !loud.stdout.trim().is_empty(),
            "{args:?} lists something: {}",
            loud.stderr
        );
        if args[0] == "cache" {
            // A cache listing names the version of each bundle it knows.
            assert!(loud.stdout.contains("(version 1.0.0)"), "{}", loud.stdout);
        }
        let quiet = t.run("w", &[&["-q"][..], args].concat());
        quiet.success();
        assert_eq!((quiet.stdout.as_str(), quiet.stderr.as_str()), ("", ""), "{args:?}");
    }
}

#[test]
fn messages_that_lead_somewhere() {
    let t = TestContext::new();
    t.publish("reg", "1.0.0", "tar.gz");
    t.publish("reg", "2.0.0", "tar.gz");
    // No registry configured anywhere: the hint names the ways to give one that exist.
    t.superbuild("nr", "members: [\"m\"]\n");
    t.canonical_repo("nr/m", "1.0.0");
    insta::assert_snapshot!("no-registry", t.run("nr", &["install"]).error_transcript());
    // `lock` in a repository that has not adopted: the hint is `a2c adopt --version X`.
    t.git_repo("plain");
    insta::assert_snapshot!("lock-not-adopted", t.run("plain", &["lock"]).error_transcript());
    // `--locked` with no lock file says that the file does not exist.
    t.superbuild("w", "members: [\"a\", \"b\"]\nregistry: ../reg\n");
    t.canonical_repo("w/a", "1.0.0");
    t.canonical_repo("w/b", "2.0.0");
    insta::assert_snapshot!(
        "locked-no-lock-file",
        t.run("w", &["install", "--locked"]).error_transcript()
    );
    // A sha256 mismatch of one version says exactly what was installed and what was not.
    t.run("w", &["lock"]).success();
    let bundle = t.path("reg/bundles/a2c-2.0.0.tar.gz");
    let mut bytes = fs_err::read(&bundle).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs_err::write(&bundle, bytes).unwrap();
    insta::assert_snapshot!(
        "partial-install",
        t.run("w", &["install", "-j", "1"]).error_transcript()
    );
    // A stale local pointer: the warning says how to fix it.
    t.write(&layout::pointer("w/a"), "workspace_root: ../../gone\n");
    let run = t.run("w/a", &["resolve"]);
    let warning = run.stderr_line("stale local pointer");
    insta::assert_snapshot!("stale-pointer", warning);
    // `adopt --version` of a version neither the registry nor the cache has: a warning.
    t.git_repo("new");
    let run = t.run_env("new", &["adopt", "--version", "9.9.9"], &[("A2C_REGISTRY", "../reg")]);
    insta::assert_snapshot!("adopt-unpublished", run.error_transcript());
}

/// The `--help` of every command that takes a registry names every kind a registry
/// may be (it said "file registry" and listed no `pypi+`/`conan+` form).
#[test]
fn help_names_every_registry_kind() {
    let t = TestContext::new();
    for command in ["pack", "yank", "sign", "lock"] {
        let run = t.ok(".", &[command, "--help"]);
        for kind in ["oci://", "pypi+https://", "conan+https://"] {
            assert!(
                run.stdout.contains(kind),
                "`a2c {command} --help` lacks {kind}:\n{}",
                run.stdout
            );
        }
        assert!(!run.stdout.contains("DIR|oci"), "{}", run.stdout);
    }
}

/// `--json` always prints a JSON document: `completions` and `man` without `--out`
/// (a script, a page) refuse it with what to run instead, and that command works.
#[test]
fn json_is_a_document_or_an_error_document() {
    let t = TestContext::new();
    for args in [&["completions", "bash", "--json"][..], &["man", "--json"][..]] {
        let run = t.run(".", args);
        run.failure();
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("a JSON error document");
        validate("error", &doc);
    }
    let run = t.run(".", &["completions", "bash", "--json"]);
    assert!(run.stdout.contains("a2c completions bash > FILE"), "{}", run.stdout);
    t.run(".", &["completions", "bash"]).success();
    let doc = t.run(".", &["man", "--out", "man1", "--json"]).json();
    assert!(doc["pages"].as_array().is_some_and(|p| !p.is_empty()), "{doc}");
}

/// A version installed that no member pins (`install --version V`) is listed as
/// installed, online and with `--offline` (it was shown as not installed, and offline left
/// out).
#[test]
fn list_shows_installed_versions_no_member_pins() {
    let t = TestContext::installed_superbuild();
    t.method_tree("trees/3.0.0", "3.0.0");
    t.run(".", &["pack", "trees/3.0.0", "--version", "3.0.0", "--registry", "reg"])
        .success();
    t.run("w", &["install", "--version", "3.0.0"]).success();
    for offline in [false, true] {
        let mut args = vec!["list", "--json"];
        if offline {
            args.push("--offline");
        }
        let doc = t.run("w", &args).json();
        let row = items(&doc["versions"])
            .iter()
            .find(|r| r["version"] == "3.0.0")
            .cloned()
            .unwrap_or_else(|| panic!("offline {offline}: 3.0.0 not listed: {doc}"));
        assert_eq!(row["installed"], true, "offline {offline}: {doc}");
        assert_eq!(row["locked"], false, "{doc}");
    }
}

/// At 40 columns, retry warnings printed while the bars are drawn keep every line
/// whole — each warning its own logical line with its cause, the error after them on its own
/// (they were cut to the width, run into each other and into the error).
#[test]
fn retry_warnings_keep_every_line_at_forty_columns() {
    let t = TestContext::new();
    let _server = locked_with_a_failing_bundle(&t, &[500, 500, 500]);
    let exports = [("A2C_HTTP_RETRIES", "2".to_string())];
    let Some(term) = Terminal::start_sized(&t, "w", &exports, "install --jobs 1", 40) else {
        return;
    };
    let done = term.wait_for("EXIT=");
    let screen = term.capture_joined();
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    for n in 1..=2 {
        let warning = lines
            .iter()
            .find(|l| l.contains(&format!("warning: retry {n} of 2")))
            .unwrap_or_else(|| panic!("retry {n} not on a line of its own:\n{screen}\n{done}"));
        assert!(
            warning.contains("a2c-1.0.0.tar.gz") && warning.trim_end().ends_with("answered HTTP 500"),
            "warning {n} cut or run on:\n{screen}"
        );
    }
    assert!(
        lines.iter().any(|l| l.starts_with("error: ")),
        "the error starts a line of its own:\n{screen}"
    );
}

/// What `a2c pack` makes is the kind's to say — `--format conan` with another kind
/// names the Conan location to pass, a bundle format with a Conan remote is refused — and
/// `--format` lists every kind's own value.
#[test]
fn pack_formats_are_each_kinds_own() {
    let t = TestContext::new();
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = |format: &str, registry: &str| {
        t.run(
            ".",
            &[
                "pack",
                "trees/1.0.0",
                "--version",
                "1.0.0",
                "--format",
                format,
                "--registry",
                registry,
            ],
        )
    };
    insta::assert_snapshot!(pack("conan", "reg").error_transcript());
    assert!(!t.path("reg").exists(), "nothing written");
    insta::assert_snapshot!(pack("zip", "conan+http://127.0.0.1:9/").error_transcript());
    let help = t.run(".", &["pack", "--help"]);
    insta::assert_snapshot!(help.transcript());
    // Followed: the Conan location writes the recipe.
    pack("conan", "conan+http://127.0.0.1:9/").success();
    assert!(t.path("trees/conanfile.py").is_file());
}

/// A lock made against another registry than the one configured now is said so — not "the
/// registry changed a locked bundle" — and its hint, run as printed, takes the new registry's
/// bundles.
#[test]
fn a_lock_from_another_registry_is_named_as_such() {
    let t = TestContext::new();
    t.canonical_repo("r", "1.0.0");
    t.publish("reg-a", "1.0.0", "tar.gz");
    t.method_tree("trees-b/1.0.0", "1.0.0");
    t.write("trees-b/1.0.0/rules/other.md", "another bundle\n");
    t.pack("trees-b/1.0.0", "1.0.0", "reg-b", "tar.gz");
    let (a, b) = (
        t.path("reg-a").display().to_string(),
        t.path("reg-b").display().to_string(),
    );
    t.run_env("r", &["lock"], &[("A2C_REGISTRY", &a)]).success();
    let run = t.run_env("r", &["lock"], &[("A2C_REGISTRY", &b)]);
    insta::assert_snapshot!(run.error_transcript());
    t.run_env("r", &["lock", "--update"], &[("A2C_REGISTRY", &b)]).success();
    t.run_env("r", &["install"], &[("A2C_REGISTRY", &b)]).success();
    assert!(t.has_installed("r", "1.0.0", "rules/other.md"));
}

/// Every command that takes `--registry` names, in its `--help`, each registered kind's scheme:
/// the list is held to `registry::KINDS`, so a new kind cannot go unlisted (`lock --help` named
/// no object store, `yank` and `sign` S3 only).
#[test]
fn every_registry_help_names_every_registered_kind() {
    let t = TestContext::new();
    let mut missing = Vec::new();
    for command in ["lock", "install", "init", "pack", "yank", "sign"] {
        let help = t.ok(".", &[command, "--help"]).stdout;
        let start = help
            .find("--registry <")
            .unwrap_or_else(|| panic!("{command}: no --registry"));
        let rest = &help[start..];
        let end = rest[1..].find("\n  -").map_or(rest.len(), |i| i + 1);
        let said = &rest[..end];
        for kind in a2c::registry::KINDS {
            let named = kind.schemes.iter().any(|scheme| {
                let plain = scheme.trim_end_matches('s');
                said.contains(&format!("{scheme}://"))
                    || said.contains(&format!("{plain}(s)://"))
                    || (*scheme == "file" && said.contains("path"))
            });
            if !named {
                missing.push(format!("{command}: {:?}", kind.schemes));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "kinds a --registry help does not name:\n{}",
        missing.join("\n")
    );
}
