//! The pages a newcomer follows run as printed — docs/getting-started.md from
//! nothing to a private registry, and docs/ci.md's CI recipes with their cache keyed on the
//! lock.

use crate::support::{TestContext, items, layout, succeeds};

const GETTING_STARTED: &str = include_str!("../../docs/getting-started.md");
const CI: &str = include_str!("../../docs/ci.md");

/// The fenced blocks of `lang` on `page`, in order, each with whether the line before it says
/// `<!-- not run by the test…`.
fn blocks(page: &str, lang: &str) -> Vec<(String, bool)> {
    let fence = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find(&fence) {
        let before = rest[..at].trim_end().lines().last().unwrap_or_default();
        let skipped = before.trim_start().starts_with("<!-- not run by the test");
        let start = at + fence.len();
        let end = rest[start..].find("```").expect("the block ends") + start;
        out.push((rest[start..end].to_string(), skipped));
        rest = &rest[end + 3..];
    }
    out
}

/// Every `sh` block of docs/getting-started.md, in one shell, in order: the page's own
/// commands take a newcomer from nothing to a superbuild on a registry of their own, with a
/// second version and one repository moved to it.
#[test]
fn getting_started_runs_as_printed() {
    let t = TestContext::new();
    let script: String = blocks(GETTING_STARTED, "sh")
        .into_iter()
        .filter(|(_, skipped)| !skipped)
        .map(|(text, _)| text)
        .collect();
    assert!(
        script.contains("a2c pack") && script.contains("migrate version"),
        "{script}"
    );
    let out = t.bash(".", &script).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "docs/getting-started.md failed:\n{text}");
    let w = "home/a2c-start/superbuild";
    for (v, rule) in [
        ("1.0.0", "Write the test first.\n"),
        ("1.1.0", "Write the test first.\nName the test after the behaviour.\n"),
    ] {
        let installed = t.path(&layout::installed_file(w, v, "rules/testing.md"));
        assert_eq!(fs_err::read_to_string(&installed).unwrap(), rule, "{text}");
    }
    let record =
        |repo: &str| fs_err::read_to_string(t.path(&format!("{w}/{repo}/.tools/esys/a2c/adoption.yaml"))).unwrap();
    assert!(record("app").contains("tool_version: 1.1.0"), "{text}");
    assert!(record("lib").contains("tool_version: 1.0.0"), "{text}");
    // What the page says its commands print.
    assert!(text.contains("1.0.0 → 1.1.0"), "outdated: {text}");
    let log = std::process::Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(t.path(&format!("{w}/app")))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&log.stdout);
    assert!(log.lines().count() == 2 && log.contains("1.0.0 -> 1.1.0"), "{log}");
}

/// A CI recipe's cache settings and a2c steps, as docs/ci.md prints them.
struct Recipe {
    cache_dir: String,
    cache_key_file: String,
    steps: Vec<String>,
}

fn recipes() -> Vec<(&'static str, Recipe)> {
    let yaml = blocks(CI, "yaml");
    assert_eq!(yaml.len(), 2, "docs/ci.md: a GitHub Actions and a GitLab CI file");
    let parse = |text: &str| -> serde_json::Value { serde_saphyr::from_str(text).expect("the recipe is YAML") };
    let github = parse(&yaml[0].0);
    let job = &github["jobs"]["method"];
    let steps: Vec<String> = items(&job["steps"])
        .iter()
        .filter_map(|s| s["run"].as_str().map(str::to_string))
        .collect();
    let cache = items(&job["steps"])
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/cache@")))
        .expect("an actions/cache step");
    let key = cache["with"]["key"].as_str().unwrap();
    let github = Recipe {
        cache_dir: job["env"]["A2C_CACHE_DIR"].as_str().unwrap().to_string(),
        cache_key_file: key
            .split("hashFiles('")
            .nth(1)
            .and_then(|k| k.split('\'').next())
            .expect("the key hashes a file")
            .to_string(),
        steps,
    };
    assert_eq!(
        cache["with"]["path"].as_str(),
        Some(github.cache_dir.as_str()),
        "the cached path is a2c's cache"
    );
    let gitlab = parse(&yaml[1].0);
    let job = &gitlab["a2c"];
    let gitlab = Recipe {
        cache_dir: job["variables"]["A2C_CACHE_DIR"].as_str().unwrap().to_string(),
        cache_key_file: job["cache"]["key"]["files"][0].as_str().unwrap().to_string(),
        steps: items(&job["script"])
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect(),
    };
    let cached = job["cache"]["paths"][0].as_str().unwrap().trim_end_matches('/');
    assert!(gitlab.cache_dir.ends_with(cached), "the cached path is a2c's cache");
    vec![("GitHub Actions", github), ("GitLab CI", gitlab)]
}

/// docs/ci.md: each recipe's a2c steps run in a superbuild with a committed lock and the
/// recipe's cache directory — first with an empty cache, then (the store gone, as on a fresh
/// runner) with the cache the first run left and the registry gone: nothing to download. The
/// key hashes the lock the superbuild commits.
#[test]
fn ci_recipes_install_from_a_cache_keyed_on_the_lock() {
    for (name, recipe) in recipes() {
        let t = TestContext::new();
        t.standard_superbuild();
        t.run("w", &["lock"]).success();
        t.commit_members();
        assert!(
            t.path("w").join(&recipe.cache_key_file).is_file(),
            "{name}: the key's file"
        );
        let cache = t.path("runner-cache");
        let a2c: Vec<&String> = recipe.steps.iter().filter(|s| s.starts_with("a2c ")).collect();
        assert!(a2c.iter().any(|s| s.contains("install --locked")), "{name}: {a2c:?}");
        assert!(
            recipe.steps.iter().any(|s| s.contains("a2c==")),
            "{name}: a2c is pinned"
        );
        let run = |label: &str| {
            for step in &a2c {
                succeeds(
                    t.bash("w", step).env("A2C_CACHE_DIR", &cache),
                    &format!("{name} ({label}): `{step}`"),
                );
            }
        };
        run("cold");
        fs_err::remove_dir_all(t.path(&layout::store("w"))).unwrap();
        fs_err::rename(t.path("reg"), t.path("reg-gone")).unwrap();
        run("cache restored, no registry");
        assert!(t.has_installed("w", "1.0.0", "a2c-method.toml"), "{name}");
        assert!(recipe.cache_dir.contains("a2c-cache"), "{name}: {}", recipe.cache_dir);
    }
}

/// The README's shell completions and man pages block, as printed, in a fresh home with a2c
/// where `./install.sh` puts it (`~/.cargo/bin`, on PATH): every directory it writes into
/// exists afterwards, each file is what the binary generates, and `man` finds the page (man
/// looks beside each PATH directory: `~/.local/share/man` is found only with `~/.local/bin` on
/// PATH).
#[test]
fn readme_completions_and_man_pages_install_as_printed() {
    let readme = include_str!("../../README.md");
    let at = readme
        .find("Shell completions and man pages come from the binary itself:")
        .expect("the README's completions paragraph");
    let (script, _) = blocks(&readme[at..], "sh").into_iter().next().expect("its sh block");
    let t = TestContext::new();
    let bin = t.path("home/.cargo/bin");
    fs_err::create_dir_all(&bin).unwrap();
    fs_err::copy(env!("CARGO_BIN_EXE_a2c"), bin.join("a2c")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    succeeds(t.bash(".", &script).env("PATH", &path), &script);
    let bash = fs_err::read_to_string(t.path("home/.local/share/bash-completion/completions/a2c")).unwrap();
    assert!(bash.contains("_a2c()") || bash.contains("complete"), "{bash}");
    let zsh = fs_err::read_to_string(t.path("home/.zfunc/_a2c")).unwrap();
    assert!(zsh.starts_with("#compdef a2c"), "{zsh}");
    assert!(t.path("home/.cargo/share/man/man1/a2c.1").is_file());
    if !std::path::Path::new("/usr/bin/man").exists() {
        return crate::support::require_program("man (man-db)");
    }
    let found = std::process::Command::new("man")
        .args(["-w", "a2c"])
        .env("PATH", &path)
        .env("HOME", t.path("home"))
        .env_remove("MANPATH")
        .output()
        .unwrap();
    let found = String::from_utf8_lossy(&found.stdout);
    assert!(
        found.trim().ends_with("home/.cargo/bin/../share/man/man1/a2c.1")
            || found.contains(".cargo/share/man/man1/a2c.1"),
        "man -w a2c: {found}"
    );
}

/// Every `A2C_…` variable the README, docs/ and registry-spec/ name is one a2c reads (listed in
/// `env::VARIABLES`, the test builds' switches among them) or one the installer script reads
/// (`install-a2c.sh`, which runs before any a2c does) or the release build (`release/build.sh`)
/// reads: a page that tells CI to set a variable
/// nothing reads sends the user wrong without a word.
#[test]
fn every_variable_the_docs_name_is_one_a2c_reads() {
    // The installer's and the release build's own (`${A2C_…}` in each script).
    let scripts = [
        include_str!("../../install-a2c.sh"),
        include_str!("../../release/build.sh"),
    ];
    let by_installer: Vec<&str> = scripts
        .iter()
        .flat_map(|script| {
            script.match_indices("${A2C_").map(|(at, _)| {
                let name = &script[at + 2..];
                &name[..name
                    .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap_or(name.len())]
            })
        })
        .collect();
    assert!(by_installer.contains(&"A2C_INSTALL_BASE"), "{by_installer:?}");
    let read: Vec<&str> = a2c::env::VARIABLES
        .iter()
        .flat_map(|v| v.name.split(", "))
        .chain(by_installer)
        .collect();
    let mut pages = vec![std::path::PathBuf::from("README.md")];
    for dir in ["docs", "registry-spec"] {
        for entry in walkdir::WalkDir::new(dir) {
            let entry = entry.unwrap();
            if entry.path().extension().is_some_and(|e| e == "md") {
                pages.push(entry.into_path());
            }
        }
    }
    let mut wrong = Vec::new();
    for page in &pages {
        let text = fs_err::read_to_string(page).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("A2C_") {
            let name: String = rest[at..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if !read.contains(&name.as_str()) {
                wrong.push(format!("{}: {name}", page.display()));
            }
            rest = &rest[at + name.len()..];
        }
    }
    assert!(pages.len() > 10, "{pages:?}");
    assert!(wrong.is_empty(), "named by the docs, read by no a2c: {wrong:?}");
}

/// docs/offline.md's blocks, as printed, in a superbuild: offline from the cache; then vendor;
/// then, with the registry, the cache and the store gone (the air-gapped machine), the install
/// from the vendored directory.
#[test]
fn offline_page_runs_as_printed() {
    let page = include_str!("../../docs/offline.md");
    let sh = blocks(page, "sh");
    assert_eq!(sh.len(), 3, "docs/offline.md: from the cache, vendor, install from DIR");
    let t = TestContext::locked_superbuild();
    t.run("w", &["install"]).success();
    let step = |text: &str| {
        succeeds(&mut t.bash("w", text), &format!("docs/offline.md `{text}`"));
    };
    step(&sh[0].0);
    step(&sh[1].0);
    for gone in ["reg", "w/.tools_local"] {
        fs_err::remove_dir_all(t.path(gone)).unwrap();
    }
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    step(&sh[2].0);
    for v in ["1.0.0", "1.1.0", "2.0.0"] {
        assert!(t.has_installed("w", v, "a2c-method.toml"), "{v}");
    }
}

/// Every `sh` block of docs/registries.md runs here unless it names your own hosts (each such
/// block says so, and docs/hosting.md's recipes run those flows on loopback): the signing
/// block, as printed — a key, a signed publish, a re-sign — and the key it prints is one a
/// workspace can pin.
#[test]
fn registries_page_local_blocks_run_as_printed() {
    let page = include_str!("../../docs/registries.md");
    let local: Vec<String> = blocks(page, "sh")
        .into_iter()
        .filter(|(_, skipped)| !skipped)
        .map(|(text, _)| text)
        .collect();
    assert_eq!(local.len(), 1, "{local:?}");
    let t = TestContext::new();
    t.method_tree("home/work/method-1.4.0", "1.4.0");
    let out = t
        .bash("home/work", &local[0])
        .env("A2C_KEY_PASSWORD", "the test's password")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let key = stdout.lines().next().unwrap_or_default().trim().to_string();
    assert!(t.path("home/work/registry/index/esys/a2c.json.minisig").is_file());
    t.superbuild(
        "w",
        &format!("members: [\"p/*\"]\nregistry: ../home/work/registry\ntrusted_keys: [\"{key}\"]\n"),
    );
    t.canonical_repo("w/p/app", "1.4.0");
    t.run("w", &["lock"]).success();
}
