//! registry-spec/: the JSON Schemas hold for what a2c really writes, and the worked example's
//! tree digest is what an independent coreutils computation gives.

use crate::support::{TestContext, items, layout};
use std::os::unix::fs::PermissionsExt;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const INDEX_ID: &str = "https://a2c.example.invalid/registry-spec/index.schema.json";

fn json(path: &str) -> serde_json::Value {
    serde_json::from_str(&fs_err::read_to_string(format!("{ROOT}/{path}")).unwrap()).unwrap()
}

pub fn validators() -> (jsonschema::Validator, jsonschema::Validator) {
    let index_schema = json("registry-spec/index.schema.json");
    let lock_schema = json("registry-spec/lock.schema.json");
    let registry = jsonschema::Registry::new()
        .add(INDEX_ID, index_schema.clone())
        .unwrap()
        .prepare()
        .unwrap();
    let index = jsonschema::options().build(&index_schema).unwrap();
    let lock = jsonschema::options()
        .with_registry(&registry)
        .build(&lock_schema)
        .unwrap();
    (index, lock)
}

pub fn lock_as_json(text: &str) -> serde_json::Value {
    let value: toml::Value = toml::from_str(text).unwrap();
    serde_json::to_value(value).unwrap()
}

/// Asserts that the lock file's text `lock` is valid against registry-spec/lock.schema.json.
#[track_caller]
pub fn assert_lock_valid(lock: &str) {
    let (_, schema) = validators();
    let errors: Vec<String> = schema.iter_errors(&lock_as_json(lock)).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "registry-spec/lock.schema.json: {errors:?}\n{lock}");
}

#[test]
fn schemas_accept_what_a2c_writes_and_refuse_what_it_refuses() {
    let (index, lock) = validators();
    let demo_index = json("fixtures/demo/registry/index/esys/a2c.json");
    let errors: Vec<String> = index.iter_errors(&demo_index).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let demo_lock = lock_as_json(
        &fs_err::read_to_string(format!("{ROOT}/fixtures/demo/superbuild/.tools/esys/a2c/a2c.lock")).unwrap(),
    );
    let errors: Vec<String> = lock.iter_errors(&demo_lock).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");

    // A freshly written lock with file:// sources validates too.
    let t = TestContext::locked_superbuild();
    let fresh = lock_as_json(&fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap());
    assert!(lock.is_valid(&fresh));

    // A signed index with serial and expires, and a version-2 lock recording its serial.
    t.run(".", &["key", "generate", "--out", "k.key", "--no-password"])
        .success();
    let public = fs_err::read_to_string(t.path("k.key.pub")).unwrap();
    let public = public.lines().nth(1).unwrap().to_string();
    t.run(
        ".",
        &["sign", "--registry", "reg", "--key", "k.key", "--expires-in", "30"],
    )
    .success();
    let signed: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap()).unwrap();
    assert!(signed["serial"].is_u64() && signed["expires"].is_string(), "{signed}");
    // Carrying serial and expires, it says schema 2 (a schema-1 reader refuses unknown fields).
    assert_eq!(signed["schema"], 2, "{signed}");
    assert!(index.is_valid(&signed), "{signed}");
    let mut claims_one = signed.clone();
    claims_one["schema"] = serde_json::json!(1);
    assert!(
        index.is_valid(&claims_one),
        "a2c before schema 2 wrote this: still valid"
    );
    claims_one["schema"] = serde_json::json!(3);
    assert!(!index.is_valid(&claims_one));
    t.superbuild(
        "w",
        &format!("members: [\"p/*\", \"l/*\"]\nregistry: ../reg\ntrusted_keys: [\"{public}\"]\n"),
    );
    t.run("w", &["lock", "--update"]).success();
    let v2 = lock_as_json(&fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap());
    assert_eq!(v2["version"], 3);
    assert!(v2["index_serial"].is_u64(), "{v2}");
    assert!(lock.is_valid(&v2), "{v2}");
    let mut bad = signed.clone();
    bad["expires"] = serde_json::json!("tomorrow");
    assert!(!index.is_valid(&bad));

    // What a2c refuses, the schemas refuse.
    let mut bad = demo_index.clone();
    bad["versions"][0]["version"] = serde_json::json!("^1.2");
    assert!(!index.is_valid(&bad));
    let mut bad = demo_index.clone();
    bad["versions"][0]["yank"] = serde_json::json!(true);
    assert!(!index.is_valid(&bad));
    let mut bad = demo_index.clone();
    bad["schema"] = serde_json::json!(3);
    assert!(!index.is_valid(&bad));
    let mut bad = demo_lock.clone();
    bad["method"][0]["sha256"] = serde_json::json!("ABC");
    assert!(!lock.is_valid(&bad));
    let mut bad = demo_lock.clone();
    bad["method"][0]["source"] = serde_json::json!("https://user:secret@example.org/a.tar.gz");
    assert!(!lock.is_valid(&bad));
}

#[test]
fn worked_example_tree_digest_matches_coreutils() {
    let t = TestContext::new();
    t.write(
        "tree/a2c-method.toml",
        "name = \"esys/a2c\"\nversion = \"1.4.0\"\ntool_state_root = \".tools/esys/a2c\"\n",
    );
    t.write("tree/rules/core.md", "# Rules\n");
    t.write("tree/bin/hello", "#!/bin/sh\necho hi\n");
    fs_err::set_permissions(t.path("tree/bin/hello"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = r#"cd tree && for f in a2c-method.toml bin/hello rules/core.md; do x=-; [ -x "$f" ] && x=x; printf '%s\0%s\0%s\n' "$f" "$x" "$(sha256sum "$f" | cut -c1-64)"; done | sha256sum | cut -c1-64"#;
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(&t.root)
        .output()
        .unwrap();
    let expected = format!("sha256:{}", String::from_utf8(out.stdout).unwrap().trim());
    let spec = fs_err::read_to_string(format!("{ROOT}/registry-spec/README.md")).unwrap();
    assert!(spec.contains(&expected), "the spec quotes {expected}");
    for format in ["tar.gz", "zip"] {
        let doc = t
            .run(
                ".",
                &[
                    "pack",
                    "tree",
                    "--version",
                    "1.4.0",
                    "--registry",
                    &format!("reg-{format}"),
                    "--format",
                    format,
                    "--json",
                ],
            )
            .json();
        assert_eq!(doc["tree"], expected, "{format}");
    }
}

/// Docs/formats.md lists exactly the formats of `util::formats::ALL`, each with its
/// file, version key, newest version and what a newer one meets.
#[test]
fn the_formats_page_is_the_typed_list() {
    let page = fs_err::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/formats.md")).unwrap();
    let rows: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| format") && !l.starts_with("|---"))
        .collect();
    assert_eq!(rows.len(), a2c::util::formats::ALL.len(), "{rows:#?}");
    for f in a2c::util::formats::ALL {
        let newer = match f.on_newer {
            a2c::util::formats::OnNewer::Refused => "refused",
            a2c::util::formats::OnNewer::Rebuilt => "rebuilt",
        };
        let row = format!("| {} | `{}` | `{}` | {} | {newer} |", f.name, f.file, f.key, f.newest);
        assert!(rows.contains(&row.as_str()), "docs/formats.md lacks {row}");
    }
}

/// The user's pages hold no dangling reference — the design documents the project
/// does not contain (`DESIGN.md`, the ADR by number) and tracker numbers ("issue 38") mean
/// nothing to a reader. performance-history.md, the measurement record, keeps its issue
/// numbers.
#[test]
fn the_docs_name_nothing_a_reader_cannot_open() {
    let mut pages = vec![format!("{ROOT}/README.md")];
    for dir in ["docs", "registry-spec"] {
        for entry in fs_err::read_dir(format!("{ROOT}/{dir}")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") && !path.ends_with("performance-history.md") {
                pages.push(path.display().to_string());
            }
        }
    }
    let mut found = Vec::new();
    for page in &pages {
        let text = fs_err::read_to_string(page).unwrap();
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_ascii_lowercase();
            let issue_number = lower
                .match_indices("issue ")
                .any(|(i, _)| lower[i + 6..].starts_with(|c: char| c.is_ascii_digit()));
            if line.contains("DESIGN.md") || line.contains("ADR-0024") || issue_number {
                found.push(format!("{page}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "references a reader cannot open:\n{}",
        found.join("\n")
    );
}

/// The source's comments send a reader only to documents the repository holds: no design
/// document it lacks (`DESIGN.md`, the ADR by number), no tracker number ("issue 38": a test
/// or a module says what it is about), and every `docs/….md` or `registry-spec/….md` it names
/// exists.
#[test]
fn the_source_names_no_document_a_reader_cannot_open() {
    let mut found = Vec::new();
    for dir in ["src", "tests"] {
        for entry in walkdir::WalkDir::new(format!("{ROOT}/{dir}")) {
            let entry = entry.unwrap();
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("spec.rs") {
                continue;
            }
            let text = fs_err::read_to_string(path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let at = || format!("{}:{}: {}", path.display(), n + 1, line.trim());
                let lower = line.to_ascii_lowercase();
                let issue_number = line.trim_start().starts_with("//")
                    && lower
                        .match_indices("issue ")
                        .any(|(i, _)| lower[i + 6..].starts_with(|c: char| c.is_ascii_digit()));
                if line.contains("DESIGN.md") || line.contains("ADR-0") || issue_number {
                    found.push(at());
                }
                for prefix in ["docs/", "registry-spec/"] {
                    for (i, _) in line.match_indices(prefix) {
                        let named: String = line[i..]
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || "/._-".contains(*c))
                            .collect();
                        let named = named.trim_end_matches('.');
                        let starts_a_path = i == 0 || !line.as_bytes()[i - 1].is_ascii_alphanumeric();
                        if starts_a_path && named.ends_with(".md") && !std::path::Path::new(ROOT).join(named).is_file()
                        {
                            found.push(at());
                        }
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "references a reader cannot open:\n{}",
        found.join("\n")
    );
}

/// §2 and §4: a file registry named by a relative path (`--registry reg`) gives a `source`
/// relative to the lock's directory; an absolute one a `file://` URL.
#[test]
fn a_relative_registry_gives_a_relative_source_and_an_absolute_one_a_file_url() {
    let t = TestContext::new();
    t.publish("reg", "1.4.0", "tar.gz");
    t.canonical_repo("r", "1.4.0");
    let source = |t: &TestContext| {
        let lock = fs_err::read_to_string(t.path(&layout::lock("r"))).unwrap();
        let line = lock.lines().find(|l| l.starts_with("source = ")).unwrap().to_string();
        line.trim_start_matches("source = ").trim_matches('"').to_string()
    };
    t.run("r", &["lock", "--registry", "../reg"]).success();
    assert_eq!(source(&t), "../../../../reg/bundles/a2c-1.4.0.tar.gz");
    fs_err::remove_file(t.path(&layout::lock("r"))).unwrap();
    let absolute = t.path("reg").display().to_string();
    t.run("r", &["lock", "--registry", &absolute]).success();
    assert_eq!(source(&t), format!("file://{absolute}/bundles/a2c-1.4.0.tar.gz"));
    t.run("r", &["install"]).success();
}

/// The hosted-runner workflows a fork on a public forge would run (not run here): a macOS and
/// a Windows runner, each running the README's test command.
#[test]
fn the_hosted_runner_workflows_run_the_readme_test_command() {
    for (text, runner) in [
        (include_str!("../../.github/workflows/macos.yml"), "macos-14"),
        (include_str!("../../.github/workflows/windows.yml"), "windows-2022"),
    ] {
        let doc: serde_json::Value = serde_saphyr::from_str(text).expect("the workflow is YAML");
        let job = &doc["jobs"]["test"];
        assert_eq!(job["runs-on"], runner);
        let runs: Vec<&str> = items(&job["steps"]).iter().filter_map(|s| s["run"].as_str()).collect();
        assert!(runs.contains(&"cargo test --locked"), "{runner}: {runs:?}");
        assert!(
            text.contains("Not run here"),
            "{runner}: the file says it is not run here"
        );
    }
}

/// The release workflow (not run here): every target the installer knows is built — the Linux
/// and Windows-gnu ones by release/build.sh, the two Apple targets and Windows-MSVC on hosted
/// runners, each after the README's test command — and one signed SHA256SUMS covers them.
#[test]
fn the_release_workflow_builds_every_target() {
    let text = include_str!("../../.github/workflows/release.yml");
    let doc: serde_json::Value = serde_saphyr::from_str(text).expect("the workflow is YAML");
    assert!(text.contains("Not run here"), "the file says it is not run here");
    let runs = |job: &str| -> Vec<String> {
        items(&doc["jobs"][job]["steps"])
            .iter()
            .filter_map(|s| s["run"].as_str().map(str::to_string))
            .collect()
    };
    for job in ["linux-and-windows-gnu", "hosted"] {
        assert!(runs(job).iter().any(|r| r == "cargo test --locked"), "{job}");
    }
    assert!(
        runs("linux-and-windows-gnu")
            .iter()
            .any(|r| r.starts_with("release/build.sh "))
    );
    let hosted: Vec<&str> = items(&doc["jobs"]["hosted"]["strategy"]["matrix"]["include"])
        .iter()
        .map(|m| m["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        hosted,
        ["aarch64-apple-darwin", "x86_64-apple-darwin", "x86_64-pc-windows-msvc"]
    );
    // Every target the installer maps a machine to is built somewhere.
    let installer = include_str!("../../install-a2c.sh");
    let built = include_str!("../../release/build.sh");
    for target in [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(installer.contains(target), "{target}");
        assert!(built.contains(target) || hosted.contains(&target), "{target} is built");
    }
    assert!(
        runs("publish")
            .iter()
            .any(|r| r.contains("sign --file") && r.contains("SHA256SUMS"))
    );
    // Wheels: release/build.sh builds the static Linux ones (with .ci/run's pinned maturin), each
    // hosted runner its own with the same maturin, and the signed SHA256SUMS lists them all.
    let maturin = include_str!("../../.ci/requirements.txt")
        .lines()
        .find(|l| l.starts_with("maturin=="))
        .expect("maturin is pinned");
    assert!(built.contains("maturin build"), "release/build.sh builds the wheels");
    assert!(
        runs("linux-and-windows-gnu").iter().any(|r| r.contains(maturin)),
        "the Linux job installs {maturin}"
    );
    assert!(
        runs("hosted")
            .iter()
            .any(|r| r.contains(&format!("{maturin} build")) && r.contains("--out out/wheels")),
        "each hosted runner builds its wheel with {maturin}"
    );
    assert!(
        runs("publish")
            .iter()
            .any(|r| r.contains("wheels/a2c-*.whl") && r.contains("> SHA256SUMS"))
    );
    // The Linux job builds with the compiler .ci/run proves the archives with, in a container
    // whose git must be told to trust the checkout (release/build.sh reads the commit's time).
    assert_eq!(doc["jobs"]["linux-and-windows-gnu"]["container"], "debian:12");
    assert!(
        runs("linux-and-windows-gnu")
            .iter()
            .any(|r| r.contains("safe.directory \"$GITHUB_WORKSPACE\""))
    );
    assert!(
        runs("linux-and-windows-gnu")
            .iter()
            .any(|r| r.contains("rustc-web") && r.contains("rust-web-src"))
    );
}
