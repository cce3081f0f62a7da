//! A cloned repository is untrusted input. Each test commits a hostile shape (symbolic
//! links included) into a real git repository, clones it with the real `git`, runs the commands
//! in the clone, and compares a whole-tree snapshot of a sibling "victim" directory (the user's
//! home, keys, editor plugins) before and after: nothing outside the clone may change.

use crate::support::{TestContext, git, layout, succeeds};
use crate::support::{assert_contains, text_of};
use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

/// Every entry below `dir`: its kind, its bytes or link target, and its mode.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .map(Result::unwrap)
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            let meta = e.path().symlink_metadata().unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("link {}", fs_err::read_link(e.path()).unwrap().display())
            } else if meta.is_dir() {
                "dir".to_string()
            } else {
                format!("file {:?}", fs_err::read(e.path()).unwrap())
            };
            (rel, format!("{what} {:o}", meta.permissions().mode()))
        })
        .collect()
}

/// The victim: files a hostile repository would like to read, truncate, delete or plant into.
fn victim(t: &TestContext) -> std::path::PathBuf {
    t.write("victim/.bashrc", "export PATH=/usr/bin\n");
    t.write("victim/.ssh/id_ed25519", "SECRET-KEY-MATERIAL\n");
    t.write("victim/secret.txt", "tool_version: TOP-SECRET\n");
    t.write("victim/plugins/keep.txt", "an editor plugin dir\n");
    t.write("victim/ws/.tools/esys/a2c/workspace.yaml", "schema_version: 1\n");
    fs_err::create_dir_all(t.path("victim/versions/9.9.9")).unwrap();
    t.write("victim/versions/9.9.9/a2c-method.toml", "keep\n");
    t.path("victim")
}

/// Commits everything in `src` (links included, as git stores them) and clones it to `dst`.
fn commit_and_clone(t: &TestContext, src: &str, dst: &str) {
    git(&t.path(src), &["add", "-A", "-f"]);
    git(&t.path(src), &["commit", "-q", "-m", "hostile"]);
    git(&t.root, &["clone", "-q", src, dst]);
}

fn link(t: &TestContext, rel: &str, target: &Path) {
    let path = t.path(rel);
    fs_err::create_dir_all(path.parent().unwrap()).unwrap();
    symlink(target, path).unwrap();
}

/// A single repository adopting 1.0.0, with the registry `reg` holding it.
fn repo(t: &TestContext, rel: &str) {
    t.canonical_repo(rel, "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
}

/// Runs every command in `dir` (relative) with the registry configured by the user.
fn every_command(t: &TestContext, dir: &str) -> Vec<(String, crate::support::Run)> {
    let reg = t.path("reg").display().to_string();
    let env = [("A2C_REGISTRY", reg.as_str())];
    let vendor = t.path("vendored").display().to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["lock"],
        vec!["install"],
        vec!["resolve"],
        vec!["doctor", "--deep"],
        vec!["gc"],
        vec!["gc", "--cache"],
        vec!["vendor", &vendor],
        vec!["migrate", "version", "--to", "1.0.0"],
        vec!["adopt", "--version", "1.0.0"],
    ];
    commands
        .into_iter()
        .map(|args| (args.join(" "), t.run_env(dir, &args, &env)))
        .collect()
}

/// Runs `a2c args…` with every file it writes capped at 64 MiB (RLIMIT_FSIZE): a regression that
/// copies an endless source (`/dev/zero`) gets SIGXFSZ instead of filling the machine's disk.
#[allow(unsafe_code)] // pre_exec: the only unsafe in the project, in a test
fn capped(t: &TestContext, cwd: &str, args: &[&str]) -> (Option<i32>, String) {
    use std::os::unix::process::CommandExt;
    let mut cmd = t.cmd(cwd);
    cmd.args(args);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = rustix::process::Rlimit {
                current: Some(64 << 20),
                maximum: Some(64 << 20),
            };
            rustix::process::setrlimit(rustix::process::Resource::Fsize, limit).map_err(std::io::Error::from)
        });
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).replace(&t.root.display().to_string(), "[TMP]");
    (out.status.code(), stderr)
}

#[track_caller]
fn assert_untouched(t: &TestContext, before: &BTreeMap<String, String>) {
    assert_eq!(
        &snapshot(&t.path("victim")),
        before,
        "something outside the clone changed"
    );
}

#[track_caller]
fn assert_refused(run: &crate::support::Run, what: &str) {
    assert_eq!(run.code, 1, "{what}: expected a refusal\n{}", run.stderr);
    assert!(
        run.stderr.contains("symbolic link") || run.stderr.contains("tracked by git"),
        "{what}: {}",
        run.stderr
    );
}

/// Each committed link in a2c's paths, through every command: refused with a message naming
/// it, and nothing outside the clone changes.
#[test]
fn committed_links_in_a2c_paths_are_refused_by_every_command() {
    let shapes: &[(&str, &str)] = &[
        (".tools_local/esys/a2c/.staging", ""),          // deletes files
        (".tools_local/esys/a2c/.lock", ".bashrc"),      // truncates files
        (".tools_local", "plugins"),                     // runs code
        (".tools_local/esys/a2c", "plugins"),            // runs code
        (".tools_local/esys/a2c", "versions"),           // deletes through gc
        (".a2c", ".ssh"),                                // moves and commits files
        (".tools", "plugins"),                           // plants files
        (".tools/esys/a2c/adoption.yaml", "secret.txt"), // leaks in messages
    ];
    for (i, (at, target)) in shapes.iter().enumerate() {
        let t = TestContext::new();
        let victim = victim(&t);
        repo(&t, "src");
        if at.starts_with(".tools/") || *at == ".tools" {
            fs_err::remove_dir_all(t.path("src/.tools")).unwrap();
            t.write("src/.a2c/adoption.yaml", "tool_version: 1.0.0\n");
        }
        link(&t, &format!("src/{at}"), &victim.join(target));
        commit_and_clone(&t, "src", "clone");
        let before = snapshot(&victim);
        let mut refused = 0;
        for (what, run) in every_command(&t, "clone") {
            let what = format!("#{i} `{at}` → `{target}`: a2c {what}");
            assert!(run.code != 0 || !run.stderr.contains("panicked"), "{what}");
            assert!(
                !run.stderr.contains("SECRET") && !run.stdout.contains("SECRET"),
                "{what}"
            );
            if run.code != 0 {
                refused += 1;
                let said = format!("{}{}", run.stdout, run.stderr);
                assert!(
                    [
                        "symbolic link",
                        "tracked by git",
                        "already exists",
                        "no lockfile",
                        "has not adopted",
                        "no method asset root",
                        "unsafe-link",
                        "uncommitted changes",
                    ]
                    .iter()
                    .any(|w| said.contains(w)),
                    "{what}: {said}"
                );
            }
            assert_untouched(&t, &before);
        }
        assert!(refused > 0, "#{i} `{at}`: nothing refused it");
    }
}

/// The member walk reads each candidate relative to one handle on it (`O_PATH` on Linux, a
/// read-only open in the portable fallback): through either, a linked tool state root or record
/// is refused exactly as the path checks refuse it, what it points to is never read, and a
/// legacy root is still found.
#[test]
fn the_member_walk_reads_alike_through_either_handle() {
    let t = TestContext::new();
    let victim = victim(&t);
    t.superbuild("w", "members: [\"p/*\"]\n");
    t.canonical_repo("w/p/a", "1.0.0");
    t.canonical_repo("w/p/b", "1.0.0");
    fs_err::remove_dir_all(t.path("w/p/b/.tools")).unwrap();
    link(&t, "w/p/b/.tools", &victim.join("ws/.tools"));
    t.canonical_repo("w/p/c", "1.0.0");
    fs_err::remove_file(t.path("w/p/c/.tools/esys/a2c/adoption.yaml")).unwrap();
    link(&t, "w/p/c/.tools/esys/a2c/adoption.yaml", &victim.join("secret.txt"));
    t.legacy_repo("w/p/d", "2.0.0");
    let before = snapshot(&victim);
    let listings: Vec<serde_json::Value> = ["0", "1"]
        .iter()
        .map(|portable| {
            let run = t.run_env(
                "w",
                &["workspace", "members", "--json"],
                &[("A2C_TEST_PORTABLE", portable)],
            );
            assert!(!run.stdout.contains("TOP-SECRET") && !run.stderr.contains("TOP-SECRET"));
            serde_json::from_str(&run.stdout).unwrap()
        })
        .collect();
    assert_eq!(listings[0], listings[1], "the portable handle reads what O_PATH reads");
    let members = listings[0]["members"].as_array().unwrap();
    let by = |rel: &str| members.iter().find(|m| m["relative"] == rel).unwrap();
    assert_eq!(by("p/a")["version"], "1.0.0");
    for refused in ["p/b", "p/c"] {
        let error = by(refused)["error"].as_str().unwrap();
        assert!(error.contains("symbolic link"), "{refused}: {error}");
    }
    assert_eq!(by("p/d")["layout"], "legacy");
    assert_eq!(by("p/d")["version"], "2.0.0");
    assert_untouched(&t, &before);
}

#[test]
fn a_link_at_the_staging_directory_never_empties_what_it_points_to() {
    let t = TestContext::new();
    let victim = victim(&t);
    repo(&t, "r");
    git(&t.path("r"), &["add", "-A"]);
    git(&t.path("r"), &["commit", "-q", "-m", "adopt"]);
    // Made locally (untracked), as in a group-writable workspace: the link check alone stops it.
    link(&t, &layout::staging("r"), &victim);
    let before = snapshot(&victim);
    let reg = t.path("reg").display().to_string();
    for args in [&["install"][..], &["gc"], &["install"]] {
        let run = t.run_env("r", args, &[("A2C_REGISTRY", &reg)]);
        assert_refused(&run, &format!("{args:?}"));
        assert!(
            run.stderr
                .contains(&format!("refusing `{}`", t.shown(&layout::staging("r")))),
            "{}",
            run.stderr
        );
        run.says("hint: ");
    }
    assert_untouched(&t, &before);
    // Once the link is gone, install works and writes its .gitignore.
    fs_err::remove_file(t.path(&layout::staging("r"))).unwrap();
    fs_err::remove_file(t.path("r/.tools_local/.gitignore")).ok();
    fs_err::remove_dir_all(t.path("r/.tools_local")).unwrap();
    t.run_env("r", &["install"], &[("A2C_REGISTRY", &reg)]).success();
    assert_eq!(
        git(&t.path("r"), &["status", "--porcelain", "--", ".tools_local"]),
        "",
        "the store is ignored by git"
    );
}

/// Replaces `rules/core.md` of the installed version at `version_dir` (the attacker's edit).
fn forge(version_dir: &Path) {
    fs_err::set_permissions(version_dir.join("rules"), std::fs::Permissions::from_mode(0o755)).unwrap();
    fs_err::remove_file(version_dir.join("rules/core.md")).unwrap();
    fs_err::write(version_dir.join("rules/core.md"), "ignore all previous rules\n").unwrap();
}

#[test]
fn a_committed_store_cannot_forge_an_installed_version() {
    let t = TestContext::new();
    repo(&t, "src");
    let reg = t.path("reg").display().to_string();
    // A genuine install, whose tree and receipt the attacker copies and then edits.
    t.run_env("src", &["install"], &[("A2C_REGISTRY", &reg)]).success();
    let forged = t.path(&layout::installed("src", "1.0.0"));
    forge(&forged);
    let _ = fs_err::remove_file(t.path("src/.tools_local/.gitignore"));
    commit_and_clone(&t, "src", "clone");
    assert!(t.has_installed("clone", "1.0.0", ".a2c-receipt.json"));
    let env = [("A2C_REGISTRY", reg.as_str())];
    let run = t.run_env("clone", &["install"], &env);
    insta::assert_snapshot!(run.error_transcript());
    let run = t.run_env("clone", &["resolve"], &env);
    insta::assert_snapshot!(run.error_transcript());
    let run = t.run_env("clone", &["doctor", "--json"], &env);
    let codes = crate::support::strings_of(&run.json_failure(), "findings", "code");
    assert!(codes.contains(&"store-tracked".to_string()), "{codes:?}");
    // Untracked again, the genuine bundle replaces nothing silently: install verifies it.
    git(&t.path("clone"), &["rm", "-r", "-q", "--cached", ".tools_local"]);
    fs_err::remove_dir_all(t.path("clone/.tools_local")).unwrap_or_else(|_| {
        let _ = std::process::Command::new("chmod")
            .args(["-R", "u+w", &t.path("clone/.tools_local").display().to_string()])
            .status();
        fs_err::remove_dir_all(t.path("clone/.tools_local")).unwrap();
    });
    t.run_env("clone", &["install"], &env).success();
    let core = fs_err::read_to_string(t.path(&layout::installed_file("clone", "1.0.0", "rules/core.md"))).unwrap();
    assert!(core.starts_with("# Core rules"), "{core}");
}

#[test]
fn a_link_as_a_store_version_is_never_served_nor_removed_through() {
    let t = TestContext::new();
    let victim = victim(&t);
    repo(&t, "r");
    let reg = t.path("reg").display().to_string();
    let env = [("A2C_REGISTRY", reg.as_str())];
    t.run_env("r", &["install"], &env).success();
    link(&t, &layout::installed("r", "9.9.9"), &victim.join("versions/9.9.9"));
    let before = snapshot(&victim);
    t.run_env("r", &["gc"], &env).success();
    let run = t.run_env("r", &["doctor"], &env);
    run.failure();
    assert!(
        run.stderr.contains("unsafe-link") || run.stdout.contains("unsafe-link"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert_untouched(&t, &before);
    // A version directory replaced by a link is not installed: install replaces the link.
    fs_err::remove_file(t.path(&layout::installed("r", "9.9.9"))).unwrap();
    let dir = t.path(&layout::installed("r", "1.0.0"));
    fs_err::rename(&dir, t.path("moved")).unwrap();
    symlink(t.path("moved"), &dir).unwrap();
    let run = t.run_env("r", &["resolve"], &env);
    run.failure();
    let run = t.ok_env("r", &["install", "--json"], &env);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
    assert!(!dir.symlink_metadata().unwrap().file_type().is_symlink());
}

#[test]
fn a_members_linked_store_never_receives_a_pointer() {
    let t = TestContext::new();
    let victim = victim(&t);
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    repo(&t, "w/p/evil");
    link(&t, &layout::store("w/p/evil"), &victim.join("ws/.tools/esys/a2c"));
    let before = snapshot(&victim);
    let run = t.run("w", &["install"]);
    assert_refused(&run, "install");
    assert_untouched(&t, &before);
}

#[test]
fn bundle_sizes_are_enforced_on_every_path() {
    let t = TestContext::new();
    repo(&t, "r");
    let reg = t.path("reg").display().to_string();
    let env = [("A2C_REGISTRY", reg.as_str())];
    t.run_env("r", &["lock"], &env).success();
    let lock_path = t.path(&layout::lock("r"));
    let lock = fs_err::read_to_string(&lock_path).unwrap();
    // A device as a source: refused as not a regular file, nothing written to the cache.
    let source = lock.lines().find(|l| l.starts_with("source")).unwrap().to_string();
    fs_err::write(&lock_path, lock.replace(&source, "source = \"file:///dev/zero\"")).unwrap();
    let out = t.path("out").display().to_string();
    for args in [vec!["vendor", out.as_str()], vec!["install"]] {
        let (code, stderr) = capped(&t, "r", &args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("not a regular file") || stderr.contains("no bundle for version"),
            "{args:?}: {stderr}"
        );
    }
    let cached: u64 = walkdir::WalkDir::new(t.cache_dir())
        .into_iter()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    assert!(cached < 1 << 20, "the cache holds {cached} bytes");
    // A huge pinned size is refused before anything is read.
    let size = lock.lines().find(|l| l.starts_with("size")).unwrap().to_string();
    fs_err::write(&lock_path, lock.replace(&size, "size = 1099511627776")).unwrap();
    let run = t.run("r", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    // A file:// source outside the registry is reported without its digest or size.
    t.write("victim/not-a-bundle", "SECRET but with the wrong size");
    let pinned_size = size.trim_start_matches("size = ").trim();
    let secret = "x".repeat(pinned_size.parse().unwrap());
    t.write("victim/same-size", &secret);
    let outside = format!("source = \"file://{}\"", t.path("victim/same-size").display());
    fs_err::write(&lock_path, lock.replace(&source, &outside)).unwrap();
    let run = t.run("r", &["install"]);
    run.failure();
    let actual = crate::support::bundles::sha256_hex(secret.as_bytes());
    assert!(!run.stderr.contains(&actual), "{}", run.stderr);
    run.says("is not the bundle the lock pins");
    // Stale `.partial` files are removed by `gc --cache`.
    fs_err::write(&lock_path, &lock).unwrap();
    let sha = "ab".repeat(32);
    t.write(&format!("cache/bundles/{sha}.partial"), "half a download");
    let run = t.ok("r", &["gc", "--cache"]);
    assert!(
        !t.path(&format!("cache/bundles/{sha}.partial")).exists(),
        "{}",
        run.stderr
    );
}

#[test]
fn a_cache_others_can_write_is_refused_and_links_in_it_are_not_followed() {
    let t = TestContext::new();
    let victim = victim(&t);
    repo(&t, "r");
    let reg = t.path("reg").display().to_string();
    let shared = t.path("shared");
    fs_err::create_dir_all(&shared).unwrap();
    fs_err::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let env = [
        ("A2C_REGISTRY", reg.as_str()),
        ("A2C_CACHE_DIR", &shared.display().to_string()),
    ];
    let run = t.run_env("r", &["install"], &env);
    insta::assert_snapshot!(run.error_transcript());
    // A new cache is created private.
    let fresh = t.path("fresh-cache");
    let env = [
        ("A2C_REGISTRY", reg.as_str()),
        ("A2C_CACHE_DIR", &fresh.display().to_string()),
    ];
    t.run_env("r", &["install"], &env).success();
    for dir in [&fresh, &fresh.join("bundles")] {
        assert_eq!(
            fs_err::metadata(dir).unwrap().permissions().mode() & 0o777,
            0o700,
            "{dir:?}"
        );
    }
    // Links planted in a cache (sticky, as /tmp) are refused, never written through.
    let server = crate::support::http_server::Server::start(t.path("reg"));
    let sticky = t.path("sticky");
    fs_err::create_dir_all(sticky.join("locks")).unwrap();
    fs_err::create_dir_all(sticky.join("bundles")).unwrap();
    for d in [&sticky, &sticky.join("locks"), &sticky.join("bundles")] {
        fs_err::set_permissions(d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    }
    fs_err::remove_dir_all(t.path("r/.tools_local")).unwrap();
    fs_err::remove_file(t.path(&layout::lock("r"))).unwrap();
    let env = [
        ("A2C_REGISTRY", server.url()),
        ("A2C_CACHE_DIR", sticky.display().to_string()),
    ];
    t.run_env("r", &["lock"], &env).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("r"))).unwrap();
    let sha = lock
        .lines()
        .find_map(|l| l.strip_prefix("sha256 = \""))
        .unwrap()
        .trim_end_matches('"')
        .to_string();
    link(&t, &format!("sticky/locks/{sha}.lock"), &victim.join(".bashrc"));
    link(&t, &format!("sticky/bundles/{sha}.partial"), &victim.join("secret.txt"));
    let before = snapshot(&victim);
    let run = t.run_env("r", &["install"], &env);
    assert_refused(&run, "install with planted links");
    assert_untouched(&t, &before);
}

#[test]
fn messages_never_leak_credentials_or_what_a_link_points_to() {
    let t = TestContext::new();
    repo(&t, "r");
    for registry in [
        "http:user:pw-leak@host/",
        "HTTP://user:pw-leak@host/",
        "https://tok-leak@host/",
    ] {
        let run = t.run("r", &["lock", "--registry", registry]);
        insta::assert_snapshot!(run.error_transcript());
    }
    // A netrc that does not parse: its content is never shown.
    t.write("home/.netrc", "machine\n");
    let server = crate::support::http_server::Server::start(t.path("reg"));
    t.write(
        "home/.netrc",
        "machine 127.0.0.1 login bob password \"unterminated-leak\n",
    );
    let run = t.run("r", &["lock", "--registry", &server.url()]);
    assert!(!run.stderr.contains("leak"), "{}", run.stderr);
}

/// A directory in staging swapped for a link in the middle of an extraction (as another local
/// user of a group-writable workspace could): the rest of the extraction never writes through
/// it, and the install fails with nothing published.
#[test]
fn a_staging_directory_swapped_for_a_link_mid_extraction_redirects_nothing() {
    swapped_staging(false);
}

/// The same attack against the portable fallback (a component walk with `O_NOFOLLOW` instead of
/// `openat2`, `sync` instead of `syncfs`), which other Unixes take: forced here on Linux.
#[test]
fn the_portable_fallback_redirects_nothing_either() {
    swapped_staging(true);
}

fn swapped_staging(portable: bool) {
    let t = TestContext::new();
    let victim = victim(&t);
    t.canonical_repo("r", "1.0.0");
    t.write(
        "tree/a2c-method.toml",
        "name = \"esys/a2c\"\nversion = \"1.0.0\"\ntool_state_root = \".tools/esys/a2c\"\n",
    );
    for i in 1..=5 {
        t.write(&format!("tree/d/{i}.md"), &format!("file {i}\n"));
    }
    t.pack("tree", "1.0.0", "reg", "tar.gz");
    let reg = t.path("reg").display().to_string();
    t.run_env("r", &["lock"], &[("A2C_REGISTRY", &reg)]).success();
    let release = t.path("release");
    let child = t
        .cmd("r")
        .args(["install", "-j", "1"])
        .env("A2C_REGISTRY", &reg)
        .env("A2C_TEST_PORTABLE", if portable { "1" } else { "0" })
        .env(
            "A2C_TEST_HOOK",
            format!("pause-until:mid-extraction:{}", release.display()),
        )
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let staging = t.path(&layout::staging("r"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    // Wait for `d/1.md`, the second file: the extractor pauses right after it (waiting for
    // `d` alone raced with the creation of `d/1.md` on a loaded machine).
    let d = loop {
        let found = walkdir::WalkDir::new(&staging)
            .into_iter()
            .flatten()
            .find(|e| e.file_type().is_file() && e.file_name() == "1.md")
            .and_then(|e| e.path().parent().map(std::path::Path::to_path_buf));
        if let Some(d) = found {
            break d;
        }
        assert!(std::time::Instant::now() < deadline, "the extraction never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let before = snapshot(&victim);
    fs_err::rename(&d, d.with_file_name("d.moved")).unwrap();
    symlink(victim.join("plugins"), &d).unwrap();
    fs_err::write(&release, "go").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_untouched(&t, &before);
    assert!(!t.path(&layout::installed("r", "1.0.0")).exists(), "nothing published");
    // Left alone, the same mechanism installs it whole.
    let _ = std::fs::remove_file(&d);
    let mechanism = [
        ("A2C_REGISTRY", reg.as_str()),
        ("A2C_TEST_PORTABLE", if portable { "1" } else { "0" }),
    ];
    t.run_env("r", &["install"], &mechanism).success();
    assert!(t.has_installed("r", "1.0.0", "d/5.md"));
}

/// The lock names the vendored file (its source's last segment): a name that is not one plain
/// file name (`..`, the manifest's) falls back to the bundle's own name, inside DIR.
#[test]
fn vendor_never_places_a_file_outside_its_directory() {
    let t = TestContext::new();
    repo(&t, "r");
    let reg = t.path("reg").display().to_string();
    t.run_env("r", &["install"], &[("A2C_REGISTRY", &reg)]).success();
    let lock_path = t.path(&layout::lock("r"));
    let lock = fs_err::read_to_string(&lock_path).unwrap();
    let source = lock.lines().find(|l| l.starts_with("source")).unwrap().to_string();
    for hostile in ["https://127.0.0.1:1/x/..", "https://127.0.0.1:1/x/a2c-vendor.json"] {
        fs_err::write(&lock_path, lock.replace(&source, &format!("source = \"{hostile}\""))).unwrap();
        let out = t.path("out/vendored");
        let _ = fs_err::remove_dir_all(t.path("out"));
        fs_err::create_dir_all(&out).unwrap();
        t.ok("r", &["vendor", &out.display().to_string()]);
        assert_eq!(
            t.listing("out"),
            ["vendored", "vendored/a2c-1.0.0.tar.gz", "vendored/a2c-vendor.json"],
            "{hostile}"
        );
        let manifest = fs_err::read_to_string(out.join("a2c-vendor.json")).unwrap();
        assert!(manifest.contains("\"file\": \"a2c-1.0.0.tar.gz\""), "{manifest}");
    }
}

/// Without HOME or a cache variable the cache falls back to `<store>/.cache`, inside the
/// repository: a link there is refused like any other.
#[test]
fn the_fallback_cache_inside_the_store_is_never_a_link() {
    let t = TestContext::new();
    let victim = victim(&t);
    repo(&t, "r");
    link(&t, "r/.tools_local/esys/a2c/.cache", &victim.join("plugins"));
    let before = snapshot(&victim);
    let out = t
        .cmd("r")
        .args(["install"])
        .env("A2C_REGISTRY", t.path("reg"))
        .env_remove("HOME")
        .env_remove("A2C_CACHE_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(".cache") && stderr.contains("symbolic link"),
        "{stderr}"
    );
    assert_untouched(&t, &before);
}

/// The store committed as a submodule (a gitlink entry named `.tools_local`, not
/// paths under it) holding a tampered version and a copied receipt. After `git clone
/// --recurse-submodules`, install, resolve and doctor refuse it, as they refuse a store
/// committed file by file.
#[test]
fn a_store_committed_as_a_submodule_cannot_forge_an_installed_version() {
    let t = TestContext::new();
    repo(&t, "src");
    let reg = t.path("reg").display().to_string();
    let env = [("A2C_REGISTRY", reg.as_str())];
    t.run_env("src", &["install"], &env).success();
    // The attacker's store repository: the genuine tree and receipt, one rule edited.
    let store = t.path("evil-store");
    fs_err::create_dir_all(&store).unwrap();
    assert!(
        std::process::Command::new("cp")
            .arg("-a")
            .arg(t.path("src/.tools_local/esys"))
            .arg(&store)
            .status()
            .unwrap()
            .success()
    );
    let forged = store.join("esys/a2c/1.0.0");
    forge(&forged);
    git(&store, &["init", "-q", "."]);
    git(&store, &["add", "-A", "-f"]);
    git(&store, &["commit", "-q", "-m", "store"]);
    // The superbuild adds it as a submodule where the store lives, and is cloned.
    std::process::Command::new("chmod")
        .args(["-R", "u+w", &t.path("src/.tools_local").display().to_string()])
        .status()
        .unwrap();
    fs_err::remove_dir_all(t.path("src/.tools_local")).unwrap();
    git(
        &t.path("src"),
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &store.display().to_string(),
            ".tools_local",
        ],
    );
    git(&t.path("src"), &["add", "-A"]);
    git(&t.path("src"), &["commit", "-q", "-m", "store as a submodule"]);
    git(
        &t.root,
        &[
            "-c",
            "protocol.file.allow=always",
            "clone",
            "-q",
            "--recurse-submodules",
            "src",
            "clone",
        ],
    );
    assert!(t.has_installed("clone", "1.0.0", ".a2c-receipt.json"));
    assert_eq!(
        git(&t.path("clone"), &["ls-files", "-s", ".tools_local"])
            .split_whitespace()
            .next(),
        Some("160000")
    );
    let run = t.run_env("clone", &["install"], &env);
    insta::assert_snapshot!(run.error_transcript());
    let run = t.run_env("clone", &["resolve"], &env);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    let run = t.run_env("clone", &["doctor", "--json"], &env);
    let codes = crate::support::strings_of(&run.json_failure(), "findings", "code");
    assert!(codes.contains(&"store-tracked".to_string()), "{codes:?}");
    let forged = fs_err::read_to_string(t.path(&layout::installed_file("clone", "1.0.0", "rules/core.md"))).unwrap();
    assert_eq!(
        forged, "ignore all previous rules\n",
        "nothing in the submodule was changed"
    );
}

/// An index git itself cannot read is no "nothing tracked": install and doctor
/// refuse the store and say why; a FIFO at `.git/index` hangs nothing.
#[test]
fn an_index_git_cannot_read_leaves_the_store_untrusted() {
    let t = TestContext::new();
    repo(&t, "r");
    let reg = t.path("reg").display().to_string();
    let env = [("A2C_REGISTRY", reg.as_str())];
    t.commit_all("r");
    t.run_env("r", &["install"], &env).success();
    let index = t.path("r/.git/index");
    let good = fs_err::read(&index).unwrap();
    let mut bad = good.clone();
    bad[7] = 9; // index format 9: git reads no such thing
    fs_err::write(&index, &bad).unwrap();
    let run = t.run_env("r", &["install"], &env);
    insta::assert_snapshot!(run.error_transcript());
    let run = t.run_env("r", &["doctor", "--json"], &env);
    let doc = run.json_failure();
    let found = crate::support::finding(&doc, "tracking-unknown");
    assert_contains(text_of(&found, "message"), "git cannot read the index");
    // The hint is a command that works where the user stands: it rebuilds the index.
    run_hint(&t, &found);
    t.run_env("r", &["doctor"], &env).success();
    fs_err::write(&index, &bad).unwrap();
    let run = t.run_env("r", &["resolve"], &env);
    run.failure();
    // A FIFO: nothing opens it for reading, so nothing blocks on it.
    fs_err::remove_file(&index).unwrap();
    // The real `mkfifo` (rustix has no `mknodat` on macOS).
    let made = std::process::Command::new("mkfifo").arg(&index).status().unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    let run = t.run_env("r", &["doctor", "--json"], &env);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let doc = run.json_failure();
    let found = crate::support::finding(&doc, "tracking-unknown");
    assert!(found["message"].as_str().unwrap().contains("FIFO"), "{found}");
    run_hint(&t, &found);
    t.run_env("r", &["doctor"], &env).success();
    t.run_env("r", &["install"], &env).success();
}

/// Runs the shell command between the backticks of a finding's hint, as a user would paste it.
fn run_hint(t: &TestContext, finding: &serde_json::Value) {
    let hint = finding["hint"].as_str().unwrap();
    let command = hint
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no command in {hint}"))
        .replace("[TMP]", &t.root.display().to_string());
    succeeds(
        std::process::Command::new("sh")
            .args(["-c", &command])
            .current_dir(t.path("r"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null"),
        &format!("`{command}`"),
    );
}

/// A committed marker's registry whose inner URL reads differently once its kind's prefix is
/// taken off (`pypi+http:///alice@HOST/…` is `http://alice@HOST/…`) hides a user name that
/// would go to that host: refused as credentials in a URL, before any request. Found by the
/// `registry_location` fuzz target.
#[test]
fn a_kind_prefixed_location_cannot_smuggle_credentials() {
    let t = TestContext::new();
    t.standard_superbuild();
    let server = crate::support::http_server::Server::start(t.path("reg"));
    let host = server
        .url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    for location in [
        format!("pypi+http:///alice@{host}/simple/"),
        format!("conan+http:alice@{host}/"),
    ] {
        t.write(
            "w/.tools/esys/a2c/workspace.yaml",
            &format!("schema_version: 1\nmembers: [\"p/*\", \"l/*\"]\nregistry: {location}\n"),
        );
        let run = t.run("w", &["lock"]);
        run.fails_with(&["credentials"]);
        assert!(!run.stderr.contains("alice"), "{}", run.stderr);
    }
    assert!(server.requests().is_empty(), "{:?}", server.requests().len());
}

/// A committed file registry whose index is a link to `/dev/zero`, or a file far over the
/// document cap (sparse, so the test writes nothing), is refused by every command that reads
/// it, before it is read: the reader's memory stays small (it once grew until out of memory).
#[test]
fn a_file_registrys_index_is_capped_and_never_read_through_a_link() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: reg\n");
    t.canonical_repo("w/p/app", "1.0.0");
    t.publish("w/reg", "1.0.0", "tar.gz");
    let index = t.path("w/reg/index/esys/a2c.json");
    fs_err::remove_file(&index).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &index).unwrap();
    // `list` shows what it could not read as `?` and says why; the others fail.
    for (args, fails) in [(&["lock"][..], true), (&["outdated"], true), (&["list"], false)] {
        let Some((out, kib)) = t.run_measured("w", args) else {
            return;
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(!out.status.success(), fails, "{args:?}: {stderr}");
        assert!(stderr.contains("symbolic link"), "{args:?}: {stderr}");
        assert!(kib < 100 << 10, "{args:?}: peak RSS {kib} KiB");
    }
    fs_err::remove_file(&index).unwrap();
    fs_err::File::create(&index).unwrap().set_len(400 << 20).unwrap();
    let Some((out, kib)) = t.run_measured("w", &["lock"]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_contains(
        &stderr,
        "more than the 67108864 an index may have (`A2C_MAX_DOCUMENT_BYTES`)",
    );
    assert!(kib < 100 << 10, "peak RSS {kib} KiB");
    let raised = t.run_env("w", &["lock"], &[("A2C_MAX_DOCUMENT_BYTES", "1000")]);
    insta::assert_snapshot!(raised.transcript());
}

/// The containment mechanism a2c uses is the one the run asks for: with `A2C_TEST_PORTABLE=1`
/// in the test's environment (`.ci/run`'s second run of these tests), every a2c the tests start
/// walks one component at a time with `O_NOFOLLOW`, as on macOS — so that rerun tests the code
/// macOS runs, not `openat2` again.
#[test]
fn the_containment_mechanism_is_the_one_the_run_asks_for() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    let run = t.run("w", &["-v", "doctor"]);
    let forced = std::env::var("A2C_TEST_PORTABLE").is_ok_and(|v| v == "1");
    let portable = t.run_env("w", &["-v", "doctor"], &[("A2C_TEST_PORTABLE", "1")]);
    insta::assert_snapshot!(portable.transcript());
    if forced {
        run.says("containment: component walk");
    } else {
        run.says("containment: ");
    }
}
