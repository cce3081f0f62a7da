//! Trust at the edges: credentials follow the origin the user bound them to, git runs no code a
//! directory names, a member's git directory stays inside W, proxies never carry a loopback
//! credential in clear text, and the tree cache never spreads a tampered tree. Real servers on
//! 127.0.0.1 and 127.0.0.2 (another host as far as origins go), the real git.

use base64::Engine;

use crate::support::http_server::{Fault, Server};
use crate::support::{TestContext, layout};

const INDEX: &str = "/index/esys/a2c.json";

/// A single repository `r` pinning 1.0.0, its registry `reg` served by X on 127.0.0.1, and Y on
/// 127.0.0.2 serving the same registry and a token endpoint (`/token` gives `from-y`), which
/// every request without that token is sent to by a Bearer challenge.
fn x_and_y(t: &TestContext) -> (Server, Server) {
    t.canonical_repo("r", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    t.write("reg/token", r#"{"token":"from-y"}"#);
    let x = Server::start(t.path("reg"));
    let y = Server::start_on(t.path("reg"), "127.0.0.2");
    (x, y)
}

/// Each way a user binds a credential to X's host, as environment variables for the run.
fn credential_sources(t: &TestContext, x: &Server) -> Vec<(&'static str, Vec<(String, String)>)> {
    let docker = t.path("docker");
    let auth = base64::engine::general_purpose::STANDARD.encode("alice:secret");
    fs_err::create_dir_all(&docker).unwrap();
    fs_err::write(
        docker.join("config.json"),
        format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, x.host()),
    )
    .unwrap();
    let identity = t.path("docker-identity");
    fs_err::create_dir_all(&identity).unwrap();
    fs_err::write(
        identity.join("config.json"),
        format!(r#"{{"auths":{{"{}":{{"identitytoken":"refresh-secret"}}}}}}"#, x.host()),
    )
    .unwrap();
    let netrc = t.write("netrc", "machine 127.0.0.1 login alice password secret\n");
    vec![
        (
            "A2C_REGISTRY_AUTH",
            vec![("A2C_REGISTRY_AUTH".into(), "alice:secret".into())],
        ),
        (
            "docker auth",
            vec![("DOCKER_CONFIG".into(), docker.display().to_string())],
        ),
        (
            "docker identitytoken",
            vec![("DOCKER_CONFIG".into(), identity.display().to_string())],
        ),
        ("netrc", vec![("NETRC".into(), netrc.display().to_string())]),
    ]
}

fn run_with(t: &TestContext, args: &[&str], env: &[(String, String)]) -> crate::support::Run {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    t.run_env("r", args, &env)
}

/// Nothing that reached `server` carried a credential or a secret.
#[track_caller]
fn saw_no_credential(server: &Server) {
    for r in server.requests() {
        assert!(
            !r.headers.contains_key("authorization"),
            "{} got a credential: {:?}",
            r.path,
            r.headers
        );
        assert!(!r.path.contains("secret"), "{} carries a secret", r.path);
    }
}

#[test]
fn a_redirect_to_another_host_never_takes_the_bound_credential_to_its_token_endpoint() {
    let t = TestContext::new();
    let (x, y) = x_and_y(&t);
    y.require_token_from("from-y", &format!("{}token", y.url()));
    let to_y = format!("{}index/esys/a2c.json", y.url());
    for (source, env) in credential_sources(&t, &x) {
        x.fault(INDEX, &[Fault::Redirect(to_y.clone())]);
        let run = run_with(&t, &["lock", "--registry", &x.url()], &env);
        run.fails_with(&[
            "redirected to `http://127.0.0.2:",
            "another origin",
            "a2c login 127.0.0.2:",
        ]);
        assert!(!run.stderr.contains("secret"), "{source}: {}", run.stderr);
        saw_no_credential(&y);
        assert_eq!(
            y.requests().iter().filter(|r| r.path.starts_with("/token")).count(),
            0,
            "{source}: Y's token endpoint was asked"
        );
        assert!(!t.path(&layout::lock("r")).exists(), "{source}");
    }
    // The user binds Y too: the request then goes to Y directly, with Y's own credential, and
    // Y's token is used at Y only.
    x.fault(INDEX, &[Fault::Redirect(to_y)]);
    let before = x.count();
    t.ok_env(
        "r",
        &["lock", "--registry", &x.url()],
        &[("A2C_REGISTRY_AUTH", "alice:secret"), ("A2C_TOKEN_HOSTS", &y.host())],
    );
    let token_requests: Vec<_> = y
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/token"))
        .collect();
    assert_eq!(token_requests.len(), 1);
    assert!(token_requests[0].headers["authorization"].starts_with("Basic "));
    for r in x.requests().iter().skip(before) {
        assert_ne!(
            r.headers.get("authorization").map(String::as_str),
            Some("Bearer from-y"),
            "Y's token reached X"
        );
    }
}

#[test]
fn a_token_endpoint_on_another_host_gets_no_credential_unless_the_user_names_it() {
    let t = TestContext::new();
    let (x, y) = x_and_y(&t);
    x.require_token_from("from-y", &format!("{}token", y.url()));
    for (source, env) in credential_sources(&t, &x) {
        // Y's token endpoint refuses an anonymous request (as a real one guarding X would).
        y.fault("/token?service=test", &[Fault::Status(401)]);
        let run = run_with(&t, &["lock", "--registry", &x.url()], &env);
        run.fails_with(&["is on another host", "were not sent there", "A2C_TOKEN_HOSTS"]);
        assert!(!run.stderr.contains("secret"), "{source}: {}", run.stderr);
        saw_no_credential(&y);
    }
    // Named by the user: the realm gets the credential, and the token works at X.
    t.ok_env(
        "r",
        &["lock", "--registry", &x.url()],
        &[("A2C_REGISTRY_AUTH", "alice:secret"), ("A2C_TOKEN_HOSTS", &y.host())],
    );
    let token = y
        .requests()
        .into_iter()
        .rfind(|r| r.path.starts_with("/token"))
        .unwrap();
    assert!(token.headers["authorization"].starts_with("Basic "));
}

/// Makes the repository at `rel` name programs in its own `.git/config` (as a member unpacked
/// from a tarball may): an fsmonitor, a pager, an external diff, a clean filter on every file,
/// and a hooks directory with every hook a2c's git calls could reach. Each program leaves a
/// file named after itself in `pwned/`. The index becomes v4, so that a2c has to ask git.
fn hostile_git_config(t: &TestContext, rel: &str) {
    let repo = t.path(rel);
    let pwned = t.path("pwned");
    fs_err::create_dir_all(&pwned).unwrap();
    let leave = |name: &str| format!("touch {}/{name}-$$", pwned.display());
    let hooks = t.path(&format!("hooks-{}", rel.replace('/', "-")));
    fs_err::create_dir_all(&hooks).unwrap();
    for hook in [
        "pre-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "post-index-change",
        "post-checkout",
        "reference-transaction",
    ] {
        let path = hooks.join(hook);
        fs_err::write(&path, format!("#!/bin/sh\n{}\nexit 0\n", leave(hook))).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    t.write(&format!("{rel}/.gitattributes"), "* filter=evil\n");
    crate::support::git(&repo, &["add", ".gitattributes"]);
    crate::support::git(&repo, &["commit", "-q", "-m", "attributes"]);
    let set = |k: &str, v: &str| {
        crate::support::git(&repo, &["config", k, v]);
    };
    set("core.fsmonitor", &format!("{}; false", leave("fsmonitor")));
    set("core.pager", &format!("{}; cat", leave("pager")));
    set("diff.external", &leave("diff-external"));
    set("filter.evil.clean", &format!("{}; cat", leave("filter-clean")));
    set("filter.evil.smudge", &format!("{}; cat", leave("filter-smudge")));
    set("core.hooksPath", &hooks.display().to_string());
    crate::support::git(&repo, &["update-index", "--index-version", "4"]);
}

/// The programs that ran, by name.
fn pwned(t: &TestContext) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(t.path("pwned"))
        .map(|d| {
            d.flatten()
                .map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .split('-')
                        .take_while(|p| p.parse::<u32>().is_err())
                        .collect::<Vec<_>>()
                        .join("-")
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

#[test]
fn git_runs_no_program_a_members_git_config_names() {
    let t = TestContext::new();
    t.standard_superbuild();
    t.commit_members();
    for m in ["w/p/app", "w/p/web", "w/l/core", "w/l/util"] {
        hostile_git_config(&t, m);
    }
    // A tracked path under `.tools_local/` makes every command ask git about it.
    t.write("w/p/app/.tools_local/notes.txt", "tracked by mistake\n");
    crate::support::git(&t.path("w/p/app"), &["add", "-f", ".tools_local/notes.txt"]);
    crate::support::git(&t.path("w/p/app"), &["commit", "-q", "-m", "notes"]);
    // A tool state file whose time changed: `git status` would run the clean filter on it.
    let record = t.path("w/l/core/.a2c/adoption.yaml");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    fs_err::File::options()
        .write(true)
        .open(&record)
        .unwrap()
        .set_modified(later)
        .unwrap();
    // The test's own git calls above ran them: start counting now.
    fs_err::remove_dir_all(t.path("pwned")).unwrap();
    fs_err::create_dir(t.path("pwned")).unwrap();
    let vendor = t.path("vendored").display().to_string();
    let reads: &[(&str, &[&str])] = &[
        ("w/p/app", &["resolve"]),
        ("w", &["install"]),
        ("w", &["list"]),
        ("w", &["gc", "--dry-run"]),
        ("w", &["vendor", &vendor]),
        ("w", &["doctor"]),
        ("w/p/app", &["doctor"]),
        ("w/l/core", &["migrate", "version", "--to", "2.0.0", "--dry-run"]),
    ];
    for (cwd, args) in reads {
        let run = t.run(cwd, args);
        assert!(run.code == 0 || run.code == 1, "{args:?}: {}", run.stderr);
        assert_eq!(pwned(&t), Vec::<String>::new(), "a2c {args:?} in {cwd} ran them");
    }
    // A migration's commit runs the member's hooks exactly as `git commit` there would, and
    // nothing else: no fsmonitor, pager or external diff.
    t.run("w/l/core", &["migrate", "version", "--to", "2.0.0"]).success();
    let ran = pwned(&t);
    assert!(ran.contains(&"pre-commit".to_string()), "{ran:?}");
    for never in ["fsmonitor", "pager", "diff-external"] {
        assert!(!ran.contains(&never.to_string()), "{never} ran: {ran:?}");
    }
}

/// A registry `reg` with 1.0.0 (legacy layout) and 2.0.0 (canonical), and a legacy repository
/// at `rel` pinning 1.0.0, committed.
fn legacy_member(t: &TestContext, rel: &str) {
    t.publish_legacy("reg", "1.0.0", "tar.gz");
    t.publish("reg", "2.0.0", "tar.gz");
    t.git_repo(rel);
    t.write(
        &format!("{rel}/.a2c/adoption.yaml"),
        "tool_version: v1.0.0\ndelivery: submodule\n",
    );
    t.write(&format!("{rel}/.gitignore"), ".tools_local/\n");
    t.commit_all(rel);
}

#[test]
fn a_members_git_file_never_leads_a_migration_outside_the_superbuild() {
    let t = TestContext::new();
    legacy_member(&t, "victim");
    let victim = t.path("victim");
    let commits = || crate::support::git(&victim, &["rev-list", "--count", "HEAD"]);
    let before = commits();
    t.superbuild("w", "members: [\"m*\"]\nregistry: ../reg\n");
    // m2 looks like the victim's work tree (same files), its `.git` names the victim's.
    t.write("w/m2/.a2c/adoption.yaml", "tool_version: v1.0.0\ndelivery: submodule\n");
    t.write("w/m2/.gitignore", ".tools_local/\n");
    t.write("w/m2/.git", &format!("gitdir: {}/.git\n", victim.display()));
    for args in [
        &["migrate", "version", "--to", "2.0.0", "--dry-run"][..],
        &["migrate", "version", "--to", "2.0.0"],
    ] {
        let run = t.run("w/m2", args);
        run.fails_with(&[
            "the git directory of `[TMP]/w/m2` is `[TMP]/victim/.git`, outside `[TMP]/w`",
            "delete it and clone",
        ]);
    }
    let run = t.run("w", &["migrate", "version", "--to", "2.0.0", "--all"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(commits(), before, "a commit landed in the victim");
    assert!(!victim.join(".git/a2c-plans").exists());
    assert!(!victim.join(".git/a2c-migrate.json").exists());
    assert!(victim.join(".a2c/adoption.yaml").exists());

    // A worktree git registered for a directory in W is the user's own: it migrates.
    crate::support::git(&t.path("w"), &["init", "-q", "."]);
    fs_err::remove_dir_all(t.path("w/m2")).unwrap();
    crate::support::git(
        &victim,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            &t.path("w/m3").display().to_string(),
        ],
    );
    t.ok("w/m3", &["migrate", "version", "--to", "2.0.0", "--dry-run"]);
}

/// The review's case: a file installed by hard link is edited in place, and its size, time and
/// mode are put back. The tree cache shares that inode, so its change time moved: the next
/// install elsewhere does not place it, and plain `doctor` reports it.
#[test]
fn an_installed_file_edited_in_place_never_spreads_through_the_tree_cache() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let t = TestContext::installed_superbuild();
    let twin = |name: &str| {
        t.superbuild(name, "members: [\"m/*\"]\nregistry: ../reg\n");
        t.canonical_repo(&format!("{name}/m/a"), "1.0.0");
        fs_err::copy(t.path(&layout::lock("w")), t.path(&layout::lock(name))).unwrap();
    };
    twin("w2");
    let doc = t
        .run("w2", &["install", "--offline", "--link-mode", "hardlink", "--json"])
        .json();
    assert_eq!(doc["installed"][0]["source"], "tree-cache", "{doc}");
    let file = t.path(&layout::installed_file("w2", "1.0.0", "rules/core.md"));
    let original = fs_err::read(&file).unwrap();
    assert!(fs_err::metadata(&file).unwrap().nlink() > 1, "placed by hard link");
    let reference = t.path("reference");
    assert!(
        std::process::Command::new("cp")
            .arg("-p")
            .arg(&file)
            .arg(&reference)
            .status()
            .unwrap()
            .success()
    );
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    fs_err::write(&file, vec![b'!'; original.len()]).unwrap();
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    assert!(
        std::process::Command::new("touch")
            .arg("-r")
            .arg(&reference)
            .arg(&file)
            .status()
            .unwrap()
            .success()
    );
    let doc = t.run("w2", &["doctor", "--json"]).verdict_json();
    crate::support::finding(&doc, "cache-tree-modified");
    twin("w3");
    let doc = t.run("w3", &["install", "--offline", "--json"]).json();
    assert_eq!(
        doc["installed"][0]["source"], "cache",
        "placed from a tampered tree: {doc}"
    );
    assert_eq!(
        fs_err::read(t.path(&layout::installed_file("w3", "1.0.0", "rules/core.md"))).unwrap(),
        original
    );
    // Untampered trees keep being placed (a placement's own links move no alarm).
    twin("w4");
    let doc = t.run("w4", &["install", "--offline", "--json"]).json();
    assert_eq!(doc["installed"][0]["source"], "tree-cache", "{doc}");
    twin("w5");
    let doc = t.run("w5", &["install", "--offline", "--json"]).json();
    assert_eq!(doc["installed"][0]["source"], "tree-cache", "{doc}");
    t.run("w5", &["doctor"]).success();
}

/// ESC, OSC and BEL from a record, a member's directory name, an index and a lock never reach
/// the terminal raw, and a 600 KB line echoed by a parse error is cut.
#[test]
fn control_characters_are_printed_as_visible_escapes() {
    let t = TestContext::new();
    t.standard_superbuild();
    let evil = "w/p/e\x1b]0;title\x07vil";
    t.git_repo(evil);
    t.write(
        &format!("{evil}/.tools/esys/a2c/adoption.yaml"),
        "schema_version: 2\ntool_version: \"1.0.0\\e]0;pwned\\a\"\ndelivery: package\n",
    );
    let raw = |run: &crate::support::Run, what: &str| {
        for (name, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            assert!(
                !text.contains('\x1b') && !text.contains('\x07'),
                "{what}: a raw control character on {name}:\n{text:?}"
            );
        }
    };
    for (cwd, args) in [
        ("w", &["workspace", "members"][..]),
        ("w", &["lock"]),
        ("w", &["install"]),
        ("w", &["doctor"]),
        (evil, &["resolve"]),
        (evil, &["doctor"]),
    ] {
        let run = t.run(cwd, args);
        raw(&run, &format!("{args:?}"));
    }
    let run = t.run("w", &["workspace", "members"]);
    assert!(
        run.stdout.contains("e\\x1b]0;title\\x07vil") || run.stderr.contains("e\\x1b]0;title\\x07vil"),
        "{run:?}",
        run = run.transcript()
    );
    let run = t.run(evil, &["resolve"]);
    run.says("\\x1b]0;pwned\\x07");

    // An index whose version string carries an escape.
    fs_err::remove_dir_all(t.path(evil)).unwrap();
    t.edit_index("reg", "1.0.0", |e| e["version"] = serde_json::json!("1.0.0\u{1b}[2J"));
    let run = t.run("w", &["lock", "--update"]);
    raw(&run, "lock with an escape in the index");

    // A lock with a 600 KB line: the echoed line is cut.
    t.write(
        &layout::lock("w"),
        &format!("version = 1\n\"{}\x1b[31m\n", "x".repeat(600_000)),
    );
    let run = t.run("w", &["install"]);
    run.failure();
    raw(&run, "install with a huge lock line");
    assert!(run.stderr.len() < 20_000, "{} bytes of stderr", run.stderr.len());
    assert!(
        run.stderr.contains("more characters not shown"),
        "{}",
        &run.stderr[..run.stderr.len().min(3000)]
    );
}

/// `pack`, `yank` and `sign` hold a registry directory to the store's no-follow rules: a link
/// at `bundles`, `index/esys` or the index itself is refused before anything is created.
#[test]
fn registry_writes_follow_no_link() {
    use std::os::unix::fs::symlink;
    let t = TestContext::new();
    t.method_tree("tree", "1.0.0");
    let pack = |reg: &str| t.run(".", &["pack", "tree", "--version", "1.0.0", "--registry", reg]);
    let untouched = |dir: &str| assert_eq!(t.listing(dir), Vec::<String>::new(), "something was created in {dir}");

    fs_err::create_dir_all(t.path("reg1")).unwrap();
    fs_err::create_dir_all(t.path("elsewhere1")).unwrap();
    symlink(t.path("elsewhere1"), t.path("reg1/bundles")).unwrap();
    insta::assert_snapshot!(pack("reg1").error_transcript());
    untouched("elsewhere1");
    assert!(!t.path("reg1/index").exists());

    fs_err::create_dir_all(t.path("reg2/index")).unwrap();
    fs_err::create_dir_all(t.path("elsewhere2")).unwrap();
    symlink(t.path("elsewhere2"), t.path("reg2/index/esys")).unwrap();
    insta::assert_snapshot!(pack("reg2").error_transcript());
    untouched("elsewhere2");
    assert!(!t.path("reg2/bundles").exists());

    // A linked index: never read or written through, by pack, yank or sign.
    t.publish("reg3", "1.0.0", "tar.gz");
    let secret = t.write("secret.json", "{\"not\": \"an index\"}\n");
    fs_err::remove_file(t.path("reg3/index/esys/a2c.json")).unwrap();
    symlink(&secret, t.path("reg3/index/esys/a2c.json")).unwrap();
    for args in [
        &["pack", "tree", "--version", "1.0.0", "--registry", "reg3"][..],
        &["yank", "1.0.0", "--registry", "reg3"],
    ] {
        let run = t.run(".", args);
        run.fails_with(&["[TMP]/reg3/index/esys/a2c.json", "link"]);
        assert!(!run.stderr.contains("not\": \"an index"), "{}", run.stderr);
    }
    assert_eq!(fs_err::read_to_string(&secret).unwrap(), "{\"not\": \"an index\"}\n");

    // A link inside the packed tree: the hint is about packing.
    symlink("core.md", t.path("tree/rules/link.md")).unwrap();
    insta::assert_snapshot!(pack("reg4").error_transcript());
}

/// In a shared (sticky, world-writable) cache, a `stores` file another user made is never
/// read: `cache prune` and `gc --cache` refuse the cache, naming the file.
#[test]
fn a_shared_caches_files_must_be_the_users_own() {
    use std::os::unix::fs::PermissionsExt;
    let t = TestContext::new();
    if rustix::process::geteuid().as_raw() != 0 {
        crate::support::require_program("root (to make a file the user `nobody` owns)");
        return;
    }
    t.standard_superbuild();
    let cache = t.path("shared-cache");
    fs_err::create_dir_all(&cache).unwrap();
    fs_err::set_permissions(&cache, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let env = [("A2C_CACHE_DIR", cache.to_str().unwrap())];
    t.run_env("w", &["install"], &env).success();
    // Another user's list of stores, naming a directory of theirs.
    let stores = cache.join("stores");
    fs_err::remove_file(&stores).unwrap();
    fs_err::write(&stores, format!("{}\n", t.path("theirs").display())).unwrap();
    std::os::unix::fs::chown(&stores, Some(65534), Some(65534)).unwrap();
    let before = t.listing("shared-cache");
    for args in [&["cache", "prune"][..], &["gc", "--cache"]] {
        let run = t.run_env("w", args, &env);
        run.fails_with(&[
            "shared-cache/stores",
            "owned by another user (uid 65534)",
            "A2C_CACHE_DIR",
        ]);
    }
    assert_eq!(t.listing("shared-cache"), before, "nothing was removed");
}

/// `cache clean` beside a running install waits for it, instead of removing the bundle it just
/// downloaded ("failed to move a bundle into the cache … No such file or directory").
#[test]
fn cache_clean_waits_for_a_running_install() {
    let t = TestContext::new();
    let _server = t.standard_http_superbuild();
    let go = t.path("go");
    let install = t
        .cmd("w")
        .args(["install", "-j", "1"])
        .env("A2C_TEST_HOOK", format!("pause-until:after-download:{}", go.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Paused right after its first download landed in the cache.
    let bundles = t.cache_dir().join("bundles");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_dir(&bundles)
        .map(|d| {
            d.flatten()
                .any(|e| !e.file_name().to_string_lossy().ends_with(".partial"))
        })
        .unwrap_or(false)
    {
        assert!(std::time::Instant::now() < deadline, "the install never downloaded");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut clean = t
        .cmd("w")
        .args(["cache", "clean"])
        .env("A2C_PROGRESS", "lines")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(
        clean.try_wait().unwrap().is_none(),
        "cache clean did not wait for the install"
    );
    fs_err::write(&go, "").unwrap();
    let installed = install.wait_with_output().unwrap();
    assert!(
        installed.status.success(),
        "the install failed beside cache clean: {}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let cleaned = clean.wait_with_output().unwrap();
    assert!(cleaned.status.success(), "{}", String::from_utf8_lossy(&cleaned.stderr));
    assert!(
        String::from_utf8_lossy(&cleaned.stderr).contains("waiting for lock"),
        "{}",
        String::from_utf8_lossy(&cleaned.stderr)
    );
    for v in ["1.0.0", "1.1.0", "2.0.0"] {
        assert!(
            t.path(&layout::installed_file("w", v, ".a2c-receipt.json")).exists(),
            "{v}"
        );
    }
}

/// The audit's chains, for every way of binding a credential to X: X → Y → Y (a second hop on
/// the other host) and X → Y → X (back on the bound origin after leaving it). No hop after
/// the chain left X carries a credential; each hop is named under `-v`. A loop and a chain
/// longer than ten hops are refused, naming the URL.
#[test]
fn no_hop_after_the_chain_left_the_bound_origin_carries_a_credential() {
    let t = TestContext::new();
    let (x, y) = x_and_y(&t);
    let mut sources = credential_sources(&t, &x);
    sources.push((
        "A2C_REGISTRY_TOKEN",
        vec![("A2C_REGISTRY_TOKEN".into(), "secret-token".into())],
    ));
    let lock = t.path(&layout::lock("r"));
    for (source, env) in &sources {
        x.fault(INDEX, &[Fault::Redirect(format!("{}index/esys/a2c.json", y.url()))]);
        y.fault(INDEX, &[Fault::Redirect("/index/esys/a2c.json?hop=2".into())]);
        let mut env = env.clone();
        env.push(("A2C_TOKEN_HOSTS".into(), x.host()));
        let run = run_with(&t, &["lock", "-v", "--registry", &x.url()], &env);
        run.success();
        saw_no_credential(&y);
        assert!(
            run.stderr.contains(&format!("{}index/esys/a2c.json?hop=2", y.url())) && run.stderr.contains("HTTP 302"),
            "{source}: the hops are not named under -v: {}",
            run.stderr
        );
        fs_err::remove_file(&lock).unwrap();

        let since = x.count();
        x.fault(INDEX, &[Fault::Redirect(format!("{}bounce", y.url()))]);
        y.fault(
            "/bounce",
            &[Fault::Redirect(format!("{}index/esys/a2c.json?back", x.url()))],
        );
        run_with(&t, &["lock", "--registry", &x.url()], &env).success();
        let back: Vec<_> = x
            .requests()
            .into_iter()
            .skip(since)
            .filter(|r| r.path.ends_with("?back"))
            .collect();
        assert_eq!(back.len(), 1, "{source}");
        assert!(
            !back[0].headers.contains_key("authorization"),
            "{source}: the hop back to X after Y carried {:?}",
            back[0].headers.get("authorization")
        );
        saw_no_credential(&y);
        fs_err::remove_file(&lock).unwrap();
    }
    // A loop, and a chain that never ends, are refused (no retry, nothing written).
    x.fault(
        INDEX,
        &[Fault::Redirect(format!("{}index/esys/a2c.json?loop", y.url()))],
    );
    y.fault(
        "/index/esys/a2c.json?loop",
        &[Fault::Redirect(format!("{}index/esys/a2c.json", x.url()))],
    );
    let run = t.run("r", &["lock", "--registry", &x.url()]);
    insta::assert_snapshot!(run.error_transcript());
    for hop in 0..20 {
        let path = format!("/index/esys/a2c.json?n={hop}");
        x.fault(
            if hop == 0 { INDEX } else { &path },
            &[Fault::Redirect(format!("/index/esys/a2c.json?n={}", hop + 1))],
        );
    }
    let run = t.run("r", &["lock", "--registry", &x.url()]);
    insta::assert_snapshot!(run.error_transcript());
    assert!(!lock.exists());
}

/// A Conan remote whose `users/authenticate` redirects to another host, which redirects to
/// itself: the Basic credentials go to the remote's own origin only, never to either hop.
#[test]
fn a_conan_token_exchange_never_follows_a_redirect_with_the_credentials() {
    let t = TestContext::new();
    t.canonical_repo("r", "1.0.0");
    fs_err::create_dir_all(t.path("reg")).unwrap();
    let x = Server::start(t.path("reg"));
    let y = Server::start_on(t.path("reg"), "127.0.0.2");
    let revisions = "X-Conan-Server-Capabilities: revisions\r\n".to_string();
    x.fault("/v1/ping", &[Fault::Headers(200, revisions)]);
    x.fault("/v2/conans/search?q=esys-a2c%2F*", &vec![Fault::Status(401); 4]);
    x.fault(
        "/v2/users/authenticate",
        &[Fault::Redirect(format!("{}v2/users/authenticate", y.url()))],
    );
    y.fault(
        "/v2/users/authenticate",
        &vec![Fault::Redirect("/v2/users/authenticate?again".into()); 9],
    );
    let location = format!("conan+{}", x.url());
    let env = [("A2C_REGISTRY_AUTH", "alice:secret"), ("A2C_TOKEN_HOSTS", &x.host())];
    let run = t.run_env("r", &["lock", "--registry", &location], &env);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    let asked: Vec<_> = x.requests().into_iter().map(|r| r.path).collect();
    assert!(asked.contains(&"/v2/users/authenticate".to_string()), "{asked:?}");
    assert!(
        x.requests()
            .iter()
            .any(|r| r.path == "/v2/users/authenticate" && r.headers.contains_key("authorization")),
        "the remote itself was asked with the credentials"
    );
    assert!(y.count() > 0, "the redirect was not followed");
    saw_no_credential(&y);
}

/// a2c's secrets never reach the programs it starts: the member's own pre-commit
/// hook that `migrate`'s commit runs, and docker's credential helper.
#[test]
fn hooks_and_helpers_never_see_a2cs_secrets() {
    use std::os::unix::fs::PermissionsExt;
    let t = TestContext::new();
    legacy_member(&t, "m");
    let hooks = t.path("hooks");
    fs_err::create_dir_all(&hooks).unwrap();
    let script = |path: &std::path::Path, dump: &std::path::Path, tail: &str| {
        fs_err::write(path, format!("#!/bin/sh\nenv > {}\n{tail}", dump.display())).unwrap();
        fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    script(&hooks.join("pre-commit"), &t.path("hook-env"), "exit 0\n");
    crate::support::git(
        &t.path("m"),
        &["config", "core.hooksPath", &hooks.display().to_string()],
    );
    let secrets = [
        ("A2C_REGISTRY_TOKEN", "tok-s3cret"),
        ("A2C_REGISTRY_AUTH", "alice:auth-s3cret"),
        ("A2C_KEY_PASSWORD", "key-s3cret"),
    ];
    let reg = t.path("reg").display().to_string();
    let mut env = secrets.to_vec();
    env.push(("A2C_REGISTRY", reg.as_str()));
    t.run_env("m", &["migrate", "version", "--to", "2.0.0"], &env).success();
    let seen = fs_err::read_to_string(t.path("hook-env")).unwrap();
    assert!(seen.contains("HOME="), "the hook ran with an environment: {seen}");
    for (var, value) in secrets {
        assert!(!seen.contains(var) && !seen.contains(value), "the hook saw {var}");
    }

    // docker's credential helper, run when the bound registry asks for credentials.
    t.canonical_repo("r", "1.0.0");
    let x = Server::start(t.path("reg"));
    x.require_token("never");
    let bin = t.path("bin");
    fs_err::create_dir_all(&bin).unwrap();
    script(
        &bin.join("docker-credential-evil"),
        &t.path("helper-env"),
        "echo '{\"Username\":\"u\",\"Secret\":\"p\"}'\n",
    );
    let docker = t.path("docker");
    fs_err::create_dir_all(&docker).unwrap();
    fs_err::write(docker.join("config.json"), r#"{"credsStore":"evil"}"#).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let docker_dir = docker.display().to_string();
    let host = x.host();
    let env = [
        ("PATH", path.as_str()),
        ("DOCKER_CONFIG", docker_dir.as_str()),
        ("A2C_TOKEN_HOSTS", host.as_str()),
        // (A2C_REGISTRY_TOKEN or _AUTH would answer X themselves: the helper would not run.)
        ("A2C_KEY_PASSWORD", "key-s3cret"),
    ];
    t.run_env("r", &["lock", "--registry", &x.url()], &env).failure();
    let seen = fs_err::read_to_string(t.path("helper-env")).unwrap();
    assert!(seen.contains("HOME="), "the helper ran: {seen}");
    for (var, value) in secrets {
        assert!(!seen.contains(var) && !seen.contains(value), "the helper saw {var}");
    }
}

/// The chain of the audit on an OCI registry: X's tag list redirects to Y, and Y to itself.
/// The credential bound to X reaches neither of Y's hops.
#[test]
fn an_oci_redirect_chain_carries_no_credential_past_the_bound_origin() {
    let t = TestContext::new();
    t.canonical_repo("r", "1.0.0");
    fs_err::create_dir_all(t.path("empty")).unwrap();
    let x = Server::start(t.path("empty"));
    let y = Server::start_on(t.path("empty"), "127.0.0.2");
    let tags = "/v2/team/method/tags/list";
    for path in [tags, &format!("{tags}?n=1000")] {
        x.fault(
            path,
            &[Fault::Redirect(format!("{}v2/team/method/tags/list?hop=1", y.url()))],
        );
    }
    y.fault(
        "/v2/team/method/tags/list?hop=1",
        &[Fault::Redirect("/v2/team/method/tags/list?hop=2".into())],
    );
    let location = format!("oci://{}/team/method", x.host());
    let run = t.run_env(
        "r",
        &["lock", "--registry", &location],
        &[("A2C_REGISTRY_AUTH", "alice:secret")],
    );
    run.failure();
    let asked: Vec<String> = x.requests().into_iter().map(|r| r.path).collect();
    assert!(asked.iter().any(|p| p.starts_with(tags)), "{asked:?}");
    assert!(
        x.requests().iter().any(|r| r.headers.contains_key("authorization")),
        "X itself got the credential: {asked:?}"
    );
    let hops: Vec<String> = y.requests().into_iter().map(|r| r.path).collect();
    assert!(
        hops.iter().any(|p| p.ends_with("hop=2")),
        "Y's second hop was followed: {hops:?}"
    );
    saw_no_credential(&y);
}

/// A redirect whose `Location` carries `user:password@` (a server's credential for another
/// host): the next hop is sent without it — no Basic credential reaches that host — and no
/// message, `-v` included, prints the password.
#[test]
fn a_redirect_location_never_carries_its_userinfo_on() {
    let t = TestContext::new();
    let (x, y) = x_and_y(&t);
    let to_y = format!("{}index/esys/a2c.json", y.url()).replacen("http://", "http://mallory:hunter2@", 1);
    x.fault(INDEX, &[Fault::Redirect(to_y)]);
    let run = t.run("r", &["-v", "lock", "--registry", &x.url()]);
    insta::assert_snapshot!(run.transcript());
    saw_no_credential(&y);
}

/// Without git, "nothing is tracked" is never said of a repository whose index a2c cannot read
/// alone: a repository whose `.git` is a file (a submodule's or a worktree's, its index
/// elsewhere) is refused, nothing installed, with the hint to install git — which works: with
/// git on PATH the same command installs.
#[test]
fn without_git_a_repository_a2c_cannot_read_alone_is_not_trusted() {
    let t = TestContext::new();
    t.canonical_repo("r", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    fs_err::rename(t.path("r/.git"), t.path("r.git")).unwrap();
    t.write("r/.git", &format!("gitdir: {}\n", t.path("r.git").display()));
    let no_git = t.path("bin-without-git");
    fs_err::create_dir_all(&no_git).unwrap();
    let install = ["install", "--registry", "../reg"];
    let run = t.run_env("r", &install, &[("PATH", no_git.to_str().unwrap())]);
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path(&layout::installed("r", "1.0.0")).exists());
    t.run("r", &install).success();
    assert!(t.has_installed("r", "1.0.0", "a2c-method.toml"));
}
