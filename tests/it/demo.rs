//! The bundled demo superbuild the README's quick start runs on.

use crate::support::TestContext;

#[test]
fn demo_superbuild_lists_its_members() {
    let t = TestContext::demo();
    let run = t.ok("demo/superbuild/products/app", &["workspace", "members", "--json"]);
    let doc = run.json();
    assert_eq!(doc["workspace"], t.shown("demo/superbuild"));
    let rel = crate::support::strings_of(&doc, "members", "relative");
    assert_eq!(rel, [".", "libs/core", "libs/util", "products/app", "products/web"]);
    assert_eq!(doc["members"][1]["layout"], "legacy");
    assert!(doc["versions"].as_array().unwrap().len() >= 3);
}

/// The README's `--all` section, run on the demo: its dry-run transcript is what a2c prints
/// (up to the digest, which covers each member's HEAD), and confirming it migrates every member.
#[test]
fn demo_superbuild_migrates_with_all_as_the_readme_shows() {
    let t = TestContext::demo();
    let offline = ["--offline", "--from", "../registry/bundles"];
    let args = |extra: &[&str]| -> Vec<String> {
        ["migrate", "version", "--to", "2.0.0", "--all"]
            .iter()
            .chain(extra)
            .chain(&offline)
            .map(|s| s.to_string())
            .collect()
    };
    let run = t.ok(
        "demo/superbuild",
        &args(&["--dry-run"]).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let readme = fs_err::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = &readme[readme.find("### Migrating the whole demo superbuild").unwrap()..];
    let shown: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.contains("--all --dry-run"))
        .skip(1)
        .take_while(|l| !l.starts_with("plan sha256:"))
        .collect();
    assert!(shown.len() >= 8, "{shown:?}");
    let printed: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(&printed[..shown.len()], &shown[..], "the README shows what a2c prints");
    let plan = run.stderr_after("plan ").to_string();
    // The command the dry run prints applies it, with the flags that shaped it, as the README
    // shows it (but for the digest's tail).
    let apply = run.stderr_after("apply exactly this plan with: ").to_string();
    let readme_apply = section
        .lines()
        .find_map(|l| l.strip_prefix("apply exactly this plan with: "))
        .unwrap();
    let cut = readme_apply.find("sha256:").unwrap() + "sha256:".len();
    assert_eq!(
        &apply[..cut],
        &readme_apply[..cut],
        "the README shows the command a2c prints"
    );
    assert!(section.contains(&format!("$ {}", &readme_apply)), "the README runs it");
    let run = t.run_printed("demo/superbuild", &apply);
    run.success();
    run.says(&format!("applied plan {plan}"));
    run.says("dropped versions 1.2.0, 1.4.0 from the superbuild's lock: no member pins them any more");
    insta::assert_snapshot!(run.transcript());
    let doc = t.run("demo/superbuild", &["workspace", "members", "--json"]).json();
    assert_eq!(doc["versions"], serde_json::json!(["2.0.0"]), "{doc}");
    // The lock holds what the members pin: `--locked` and `lock --check` pass right away.
    t.run("demo/superbuild", &["lock", "--check"]).success();
    let mut locked = vec!["install", "--locked"];
    locked.extend(offline);
    t.run("demo/superbuild", &locked).success();
    t.run("demo/superbuild", &["doctor"]).success();
}

/// The README's quick-start transcript is what `fixtures/demo.sh` prints (its progress lines,
/// which a terminal shows as bars and clears, and the time aside).
#[test]
fn the_readme_shows_what_the_demo_prints() {
    let readme = fs_err::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let at = readme.find("## Quick start").unwrap();
    let block = &readme[at..];
    let start = block.find("```text\n").unwrap() + "```text\n".len();
    let shown: Vec<&str> = block[start..start + block[start..].find("```").unwrap()]
        .lines()
        .collect();
    let t = TestContext::new();
    let mut demo = std::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.sh"));
    // A fresh home and cache, as on a new machine.
    t.environment(&mut demo);
    let out = demo
        .args(["--bin", env!("CARGO_BIN_EXE_a2c")])
        .env("TMPDIR", t.path("."))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let untimed = |l: &str| l.split(" (0.").next().unwrap_or(l).to_string();
    let printed: Vec<String> = stderr
        .lines()
        .filter(|l| !l.starts_with("installing ") && !l.starts_with("done "))
        .take(shown.len())
        .map(untimed)
        .collect();
    let shown: Vec<String> = shown.into_iter().map(untimed).collect();
    assert_eq!(printed, shown, "the README shows what the demo prints:\n{stderr}");
}
