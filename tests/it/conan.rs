//! A Conan 2 remote as a registry, against a real `conan_server` and the real `conan`
//! client: packages created and uploaded by the client from the recipe `a2c pack` writes, locked
//! by recipe and package revision, installed by a2c without calling the client.

use crate::support::servers;
use crate::support::{items, layout, strings_of, succeeds};
use std::path::PathBuf;
use std::process::Command;

use crate::support::{
    Spawned, TestContext, installed_tree as installed, require_program, superbuild_pinning as superbuild,
    tree_files as files,
};

fn programs() -> bool {
    for program in ["conan", "conan_server"] {
        let there = match program {
            "conan" => Command::new(program)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success()),
            _ => Command::new(program).arg("--help").output().is_ok(),
        };
        if !there {
            require_program(&format!(
                "{program} (pip install -r .ci/requirements.txt; .ci/run does it)"
            ));
            return false;
        }
    }
    true
}

/// A `conan_server` on a free loopback port with its own home, users `alice` (who may write)
/// and `bob`; reads open to all, or to `alice` alone. Stopped when dropped.
struct ConanServer {
    _process: Spawned,
    port: u16,
    home: PathBuf,
}

impl ConanServer {
    fn start(t: &TestContext, open_reads: bool) -> Self {
        Self::start_in(t, "conan-server", open_reads)
    }

    /// A server whose home is `dir` (below the test's root): a replica when `dir/data` holds a
    /// copy of another server's storage.
    fn start_in(t: &TestContext, dir: &str, open_reads: bool) -> Self {
        let home = t.path(dir);
        fs_err::create_dir_all(&home).unwrap();
        let readers = if open_reads { "*" } else { "alice" };
        let started = servers::start_listening(t, dir, 1, |ports| {
            fs_err::write(
                home.join("server.conf"),
                format!(
                    "[server]\njwt_secret: a2c-test-jwt-secret\njwt_expire_minutes: 120\nssl_enabled: False\nport: {}\npublic_port:\nhost_name: 127.0.0.1\nauthorize_timeout: 1800\ndisk_storage_path: ./data\ndisk_authorize_timeout: 1800\nupdown_secret: a2c-test-updown-secret\n\n[write_permissions]\n*/*@*/*: alice\n\n[read_permissions]\n*/*@*/*: {readers}\n\n[users]\nalice: s3cret\nbob: b0b\n",
                    ports[0]
                ),
            )
            .unwrap();
            let mut conan = Command::new(crate::support::program("conan_server"));
            conan.env("CONAN_SERVER_HOME", &home);
            conan
        });
        Self {
            port: started.ports[0],
            _process: started.child,
            home,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn location(&self) -> String {
        format!("conan+{}", self.url())
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// The real `conan` client with a home of its own, the server as remote `local`, logged in as
/// alice.
fn conan(t: &TestContext, args: &[&str]) -> String {
    let out = succeeds(
        Command::new(crate::support::program("conan"))
            .args(args)
            .env("CONAN_HOME", t.path("conan-home"))
            .current_dir(t.path(".")),
        &format!("conan {args:?}"),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn client(t: &TestContext, server: &ConanServer) {
    conan(t, &["profile", "detect"]);
    conan(t, &["remote", "add", "local", &server.url()]);
    conan(t, &["remote", "login", "local", "alice", "-p", "s3cret"]);
}

/// A test's context with a `conan_server` (reads open, or alice's alone) and the client set
/// up for it; `None` (after the SKIPPED line) without the Conan programs.
fn started(open_reads: bool) -> Option<(TestContext, ConanServer)> {
    if !programs() {
        return None;
    }
    let t = TestContext::new();
    let server = ConanServer::start(&t, open_reads);
    client(&t, &server);
    Some((t, server))
}

/// A method tree of `version` whose rule says `rule`, its recipe written by `a2c pack`, created
/// and uploaded by the Conan client: a new recipe revision whenever `rule` changes.
fn publish(t: &TestContext, server: &ConanServer, version: &str, rule: &str) -> PathBuf {
    let project = format!("projects/{version}-{}", rule.len());
    let _ = fs_err::remove_dir_all(t.path(&project));
    t.method_tree(&format!("{project}/method"), version);
    t.write(&format!("{project}/method/rules/r.md"), rule);
    let tree = format!("{project}/method");
    let location = server.location();
    let doc = t
        .run(
            ".",
            &["pack", &tree, "--version", version, "--registry", &location, "--json"],
        )
        .json();
    crate::cli_surface::validate("pack-conan", &doc);
    assert_eq!(doc["reference"], format!("esys-a2c/{version}"));
    conan(t, &["create", &project, "--version", version]);
    conan(t, &["upload", &format!("esys-a2c/{version}"), "-r", "local", "-c"]);
    t.path(&format!("{project}/method"))
}

#[test]
fn conan_packages_lock_by_revision_and_install_as_conan_deploys_them() {
    let Some((t, server)) = started(true) else { return };
    publish(&t, &server, "1.0.0", "first revision\n");
    let v110 = publish(&t, &server, "1.1.0", "one-one\n");
    // A second recipe revision of 1.0.0: the newest is the one a lock takes.
    let second = publish(&t, &server, "1.0.0", "second revision, longer\n");
    superbuild(&t, &server.location(), &["1.0.0", "1.1.0"]);
    t.run("w", &["lock"]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(lock.contains("/v2/conans/esys-a2c/1.0.0/_/_/revisions/"), "{lock}");
    assert!(lock.contains("/files/conan_package.tgz\""), "{lock}");
    assert!(
        lock.contains("tree = \"sha256:"),
        "the lock pins the tree digest too:\n{lock}"
    );
    t.run("w", &["install"]).success();
    assert_eq!(installed(&t, "1.0.0"), files(&second));
    assert_eq!(installed(&t, "1.1.0"), files(&v110));
    // What `conan install --deployer=direct_deploy` deploys for the same reference is the same
    // tree (the Conan client adds its conaninfo.txt and conanmanifest.txt).
    conan(
        &t,
        &[
            "install",
            "--requires=esys-a2c/1.0.0",
            "-r",
            "local",
            "--deployer=direct_deploy",
            "--deployer-folder",
            "deployed",
        ],
    );
    let deployed: Vec<(String, Vec<u8>)> = files(&t.path("deployed/direct_deploy/esys-a2c"))
        .into_iter()
        .filter(|(p, _)| p != "conaninfo.txt" && p != "conanmanifest.txt")
        .collect();
    assert_eq!(installed(&t, "1.0.0"), deployed);
    // A newer revision on the remote changes nothing until `lock --update 1.0.0`.
    let third = publish(&t, &server, "1.0.0", "third revision, longer still\n");
    fs_err::remove_dir_all(t.path(&layout::installed("w", "1.0.0"))).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    t.run("w", &["install"]).success();
    assert_eq!(installed(&t, "1.0.0"), files(&second));
    assert_eq!(fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap(), lock);
    // `lock` keeps the locked revision, with a note (never an error), and so does an install
    // that locks another version (each refused "the registry changed a locked
    // bundle" before).
    let run = t.ok("w", &["lock"]);
    insta::assert_snapshot!(run.transcript());
    assert_eq!(fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap(), lock);
    assert_eq!(t.run("w", &["lock", "--json"]).json()["revised"][0], "1.0.0");
    let v120 = publish(&t, &server, "1.2.0", "one-two\n");
    t.canonical_repo("w/p/m2", "1.2.0");
    let run = t.ok("w", &["install"]);
    insta::assert_snapshot!(run.transcript());
    assert_eq!(installed(&t, "1.0.0"), files(&second));
    assert_eq!(installed(&t, "1.2.0"), files(&v120));
    fs_err::remove_dir_all(t.path("w/p/m2")).unwrap();
    t.run("w", &["lock"]).success();
    // `lock --update 1.0.0` takes the newest.
    t.run("w", &["lock", "--update", "1.0.0"]).success();
    t.run("w", &["install"]).success();
    assert_eq!(installed(&t, "1.0.0"), files(&third));
    // Offline, from the cache (filled by one more online install), and vendored.
    fs_err::remove_dir_all(t.path(&layout::installed("w", "1.1.0"))).unwrap();
    t.run("w", &["install"]).success();
    drop(server);
    fs_err::remove_dir_all(t.path(&layout::store("w"))).unwrap();
    t.run("w", &["install", "--offline"]).success();
    assert_eq!(installed(&t, "1.0.0"), files(&third));
    assert_eq!(installed(&t, "1.1.0"), files(&v110));
    let doc = t.run("w", &["vendor", "../vend", "--offline", "--json"]).json();
    let vendored = strings_of(&doc, "bundles", "file");
    // Every version was vendored as `conan_package.tgz`, the last overwriting the
    // rest; now each is a file of its own, and the directory installs offline with nothing
    // cached.
    assert_eq!(vendored, ["a2c-1.0.0.tar.gz", "a2c-1.1.0.tar.gz"], "{doc}");
    fs_err::remove_dir_all(t.path(&layout::store("w"))).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    t.run("w", &["install", "--offline", "--from", "../vend"]).success();
    assert_eq!(installed(&t, "1.0.0"), files(&third));
    assert_eq!(installed(&t, "1.1.0"), files(&v110));
}

/// A version removed from the remote (`conan remove`) is reported as gone by `lock` and
/// `outdated`; it stays locked and installs from the cache.
#[test]
fn a_version_removed_from_the_remote_is_reported() {
    let Some((t, server)) = started(true) else { return };
    publish(&t, &server, "1.0.0", "one\n");
    publish(&t, &server, "1.1.0", "one-one\n");
    superbuild(&t, &server.location(), &["1.0.0", "1.1.0"]);
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    conan(&t, &["remove", "esys-a2c/1.0.0", "-r", "local", "-c"]);
    let run = t.ok("w", &["lock"]);
    run.says("1.0.0 is locked but the registry no longer lists it (removed)");
    let run = t.ok("w", &["outdated"]);
    assert!(
        run.stdout
            .contains("1.0.0 is no longer in the registry (removed) → move to 1.1.0"),
        "{}",
        run.transcript()
    );
    insta::assert_snapshot!(run.transcript());
    let doc = t.run("w", &["outdated", "--json"]).json();
    assert_eq!(doc["gone"][0]["version"], "1.0.0", "{doc}");
    // Still locked, it reinstalls from the cache.
    fs_err::remove_dir_all(t.path(&layout::installed("w", "1.0.0"))).unwrap();
    t.run("w", &["install"]).success();
    // With only an older version left, nothing proposes a move that `migrate --all`
    // would then skip as a downgrade.
    publish(&t, &server, "0.9.0", "nine\n");
    conan(&t, &["remove", "esys-a2c/1.1.0", "-r", "local", "-c"]);
    let run = t.ok("w", &["outdated"]);
    assert!(
        run.stdout.contains(
            "1.1.0 is no longer in the registry (removed) → no newer version is published (moving to 0.9.0 would be a downgrade"
        ) && !run.stdout.contains("move to 0.9.0")
            && run.stderr.contains("no member can move forward")
            && !run.stderr.contains("--all"),
        "{}",
        run.transcript()
    );
}

#[test]
fn reads_behind_a_login_and_a_tampered_package_is_refused() {
    let Some((t, server)) = started(false) else { return };
    let tree = publish(&t, &server, "1.0.0", "a rule\n");
    superbuild(&t, &server.location(), &["1.0.0"]);
    // Anonymous: refused, with what to do (`a2c login HOST --username NAME`, run below).
    let host = server.host();
    let run = t.run("w", &["lock"]);
    run.failure();
    assert!(
        run.stderr.contains("answered HTTP 401")
            && run.stderr.contains(&format!("`a2c login {host} --username NAME`"))
            && run.stderr.contains("A2C_REGISTRY_AUTH"),
        "{}",
        run.stderr
    );
    // Credentials from a committed marker's host alone are held back; bound, they are
    // exchanged for a token, as Conan does.
    let auth = ("A2C_REGISTRY_AUTH", "alice:s3cret");
    t.run_env("w", &["lock"], &[auth]).failure();
    let bound = [auth, ("A2C_TOKEN_HOSTS", host.as_str())];
    t.run_env("w", &["lock"], &bound).success();
    // As CI keeps it (`--json`, `-v`): neither the password nor the token it was exchanged for.
    let run = t.run_env("w", &["install", "--json", "-v"], &bound);
    run.success();
    assert!(
        !run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"),
        "{}",
        run.stderr
    );
    assert_eq!(installed(&t, "1.0.0"), files(&tree));
    // `a2c login HOST --username alice`: the same exchange, nothing in the environment.
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    crate::pypi::login(&t, &host, "alice", "s3cret");
    t.run("w", &["lock"]).success();
    // The package file is altered on the server: an install from an empty cache refuses it
    // (the lock pins its sha256), and a fresh lock refuses it (its files no longer match the
    // package's conanmanifest.txt).
    let stored: Vec<PathBuf> = walkdir::WalkDir::new(server.home.join("data"))
        .into_iter()
        .map(|e| e.unwrap().path().to_path_buf())
        .filter(|p| p.file_name().is_some_and(|n| n == "conan_package.tgz"))
        .collect();
    assert_eq!(stored.len(), 1, "{stored:?}");
    let other = t.path("other");
    t.method_tree("other/t", "1.0.0");
    t.write("other/t/rules/r.md", "not the rule that was uploaded\n");
    let out = Command::new("tar")
        .arg("-czf")
        .arg(&stored[0])
        .arg("-C")
        .arg(other.join("t"))
        .arg(".")
        .output()
        .unwrap();
    assert!(out.status.success());
    fs_err::remove_dir_all(t.path(&layout::installed("w", "1.0.0"))).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    let run = t.run_env("w", &["install"], &bound);
    run.failure();
    // Not a snapshot: the altered package's size varies with gzip's header.
    run.says("the lock");
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    let run = t.run_env("w", &["lock"], &bound);
    run.failure();
    insta::assert_snapshot!(run.transcript());
}

/// One superbuild over three registries — a Conan remote, a Python package index
/// (the real pypi-server) and a2c's own registry — listed in its marker in that order. It locks
/// once (each version from the first registry that has it, recorded in the lock), installs,
/// vendors, installs the vendored copy offline and migrates exactly as with one registry;
/// every later `lock` speaks of each entry's own registry (no version of another registry is
/// "removed"), and a new Conan revision changes nothing until `lock --update`.
#[test]
fn one_superbuild_locks_once_over_a_conan_remote_a_package_index_and_an_a2c_registry() {
    let Some((t, server)) = started(true) else { return };
    if !crate::pypi::programs(&["pypi-server"]) {
        return;
    }
    let index = crate::pypi::PypiServer::start(&t, None);
    let conan_tree = publish(&t, &server, "1.0.0", "from conan\n");
    // The index has 1.0.0 too (another bundle): the Conan remote, listed first, serves it.
    for v in ["1.0.0", "1.1.0"] {
        t.method_tree(&format!("trees/{v}"), v);
        t.write(&format!("trees/{v}/rules/r.md"), &format!("{v} from the index\n"));
        let tree = format!("trees/{v}");
        t.run(".", &["pack", &tree, "--version", v, "--registry", &index.location()])
            .success();
    }
    for v in ["2.0.0", "3.0.0"] {
        t.publish("reg", v, "tar.gz");
    }
    let registries = [server.location(), index.location(), "../reg".to_string()];
    t.superbuild(
        "w",
        &format!(
            "schema_version: 2\nmembers: [\"p/*\"]\nregistry: [{}]\n",
            registries
                .iter()
                .map(|r| format!("\"{r}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    for (m, v) in [("m0", "1.0.0"), ("m1", "1.1.0"), ("m2", "2.0.0")] {
        t.canonical_repo(&format!("w/p/{m}"), v);
        t.write(&format!("w/p/{m}/.gitignore"), ".tools_local/\n");
        t.commit_all(&format!("w/p/{m}"));
    }
    // Locked once, each entry naming its registry.
    let doc = t.run("w", &["lock", "--json"]).json();
    assert_eq!(doc["added"], serde_json::json!(["1.0.0", "1.1.0", "2.0.0"]), "{doc}");
    let lock_path = t.path(&layout::lock("w"));
    let lock = fs_err::read_to_string(&lock_path).unwrap();
    let entry = |v: &str| {
        let at = lock.find(&format!("version = \"{v}\"")).unwrap();
        lock[at..].split("[[method]]").next().unwrap().to_string()
    };
    assert!(
        entry("1.0.0").contains(&format!("registry = \"{}\"", registries[0])),
        "{lock}"
    );
    assert!(entry("1.0.0").contains("/v2/conans/esys-a2c/1.0.0/"), "{lock}");
    assert!(
        entry("1.1.0").contains(&format!("registry = \"{}\"", registries[1])),
        "{lock}"
    );
    assert!(entry("1.1.0").contains("tree = \"sha256:"), "{lock}");
    assert!(entry("2.0.0").contains("registry = \"../reg\""), "{lock}");
    assert!(
        entry("2.0.0").contains("source = \"../../../../reg/bundles/a2c-2.0.0.tar.gz\""),
        "{lock}"
    );
    // A later lock: up to date, and nothing "removed" (each is in its own registry only).
    let run = t.ok("w", &["lock"]);
    insta::assert_snapshot!(run.transcript());
    assert_eq!(fs_err::read_to_string(&lock_path).unwrap(), lock);
    t.run("w", &["install"]).success();
    assert_eq!(installed(&t, "1.0.0"), files(&conan_tree));
    assert_eq!(installed(&t, "1.1.0"), files(&t.path("trees/1.1.0")));
    assert!(t.has_installed("w", "2.0.0", "a2c-method.toml"));
    // list and outdated read every registry.
    let doc = t.run("w", &["list", "--json"]).json();
    crate::cli_surface::validate("list", &doc);
    let states: Vec<(String, String)> = items(&doc["versions"])
        .iter()
        .map(|r| {
            (
                r["version"].as_str().unwrap().into(),
                r["registry"].as_str().unwrap_or("?").into(),
            )
        })
        .collect();
    let published = |v: &str| (v.to_string(), "published".to_string());
    assert_eq!(
        states,
        [
            published("1.0.0"),
            published("1.1.0"),
            published("2.0.0"),
            published("3.0.0")
        ]
    );
    let run = t.ok("w", &["outdated"]);
    insta::assert_snapshot!(run.transcript());
    // A new Conan revision of 1.0.0 changes nothing until `lock --update 1.0.0`.
    publish(&t, &server, "1.0.0", "from conan, revised\n");
    let run = t.ok("w", &["lock"]);
    insta::assert_snapshot!(run.transcript());
    assert_eq!(fs_err::read_to_string(&lock_path).unwrap(), lock);
    // Vendored, and installed from the vendored copy offline with nothing cached.
    let doc = t.run("w", &["vendor", "../vend", "--json"]).json();
    assert_eq!(doc["bundles"].as_array().unwrap().len(), 3, "{doc}");
    fs_err::remove_dir_all(t.path(&layout::store("w"))).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    t.run("w", &["install", "--offline", "--from", "../vend"]).success();
    assert_eq!(installed(&t, "1.0.0"), files(&conan_tree));
    assert_eq!(installed(&t, "1.1.0"), files(&t.path("trees/1.1.0")));
    // Migrated as with one registry: every member to 3.0.0, from a2c's registry.
    t.run("w", &["migrate", "version", "--to", "3.0.0", "--all"]).success();
    for m in ["m0", "m1", "m2"] {
        let record = fs_err::read_to_string(t.path(&format!("w/p/{m}/.tools/esys/a2c/adoption.yaml"))).unwrap();
        assert!(record.contains("tool_version: 3.0.0"), "{m}: {record}");
    }
    let lock = fs_err::read_to_string(&lock_path).unwrap();
    assert!(entry_of(&lock, "3.0.0").contains("registry = \"../reg\""), "{lock}");
    let run = t.run("w", &["outdated"]);
    insta::assert_snapshot!(run.transcript());
}

/// A registry's own mirrors (`- url: R` with `mirrors:` in the marker): with the Conan remote
/// stopped, its replica serves the locked package at the same path; with a2c's registry's
/// bundles gone, its copy serves them; and a registry's mirror is never asked for another
/// registry's bundle.
#[test]
fn each_registry_is_served_by_its_own_mirrors_when_it_is_down() {
    let Some((t, server)) = started(true) else { return };
    let conan_tree = publish(&t, &server, "1.0.0", "from conan\n");
    // The replica: a second conan_server over a copy of the first one's storage.
    let copy = |from: &str, to: &str| {
        let status = Command::new("cp")
            .args(["-a", from, to])
            .current_dir(t.path("."))
            .status();
        assert!(status.unwrap().success(), "cp -a {from} {to}");
    };
    fs_err::create_dir_all(t.path("conan-replica")).unwrap();
    copy("conan-server/data", "conan-replica/data");
    let replica = ConanServer::start_in(&t, "conan-replica", true);
    t.publish("reg", "2.0.0", "tar.gz");
    copy("reg", "reg-copy");
    let marker = format!(
        "schema_version: 2\nmembers: [\"p/*\"]\nregistry:\n  - url: \"{}\"\n    mirrors: [\"{}\"]\n  - url: ../reg\n    mirrors: [../reg-copy]\n",
        server.location(),
        replica.location()
    );
    t.superbuild("w", &marker);
    for (m, v) in [("m0", "1.0.0"), ("m2", "2.0.0")] {
        t.canonical_repo(&format!("w/p/{m}"), v);
        t.write(&format!("w/p/{m}/.gitignore"), ".tools_local/\n");
        t.commit_all(&format!("w/p/{m}"));
    }
    t.run("w", &["lock"]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(entry_of(&lock, "1.0.0").contains(&server.url()), "{lock}");
    // The remote down, a2c's registry's bundle gone: each served by its own mirror.
    drop(server);
    fs_err::remove_file(t.path("reg/bundles/a2c-2.0.0.tar.gz")).unwrap();
    let doc = t.run("w", &["install", "--json"]).json();
    crate::cli_surface::validate("install", &doc);
    let served = |v: &str| {
        let row = items(&doc["installed"]).iter().find(|r| r["version"] == v);
        row.and_then(|r| r["served_from"].as_str()).unwrap_or("?").to_string()
    };
    assert!(served("1.0.0").starts_with(&replica.url()), "{doc}");
    assert!(served("2.0.0").contains("reg-copy"), "{doc}");
    assert_eq!(installed(&t, "1.0.0"), files(&conan_tree));
    // Neither mirror serving 1.0.0: the error names the remote and its replica, never the
    // other registry's mirror.
    drop(replica);
    fs_err::remove_dir_all(t.path(&layout::store("w"))).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    let run = t.run("w", &["install"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    let tried = run
        .stderr
        .split("no place served version 1.0.0")
        .nth(1)
        .unwrap_or_default();
    let tried = tried.split("no place served version").next().unwrap_or_default();
    assert!(!tried.contains("reg-copy"), "{}", run.stderr);
}

/// The `[[method]]` table of `version` in a lock's text.
fn entry_of(lock: &str, version: &str) -> String {
    let at = lock.find(&format!("version = \"{version}\"")).unwrap();
    lock[at..].split("[[method]]").next().unwrap().to_string()
}

/// `migrate version --all` moves a superbuild's members to a version on the Conan remote, as
/// with a2c's own registry: locked, installed, records rewritten.
#[test]
fn members_migrate_to_a_version_on_the_remote() {
    let Some((t, server)) = started(true) else { return };
    publish(&t, &server, "1.0.0", "one\n");
    let next = publish(&t, &server, "1.1.0", "one-one\n");
    superbuild(&t, &server.location(), &["1.0.0", "1.0.0"]);
    for m in ["w/p/m0", "w/p/m1"] {
        t.write(&format!("{m}/.gitignore"), ".tools_local/\n");
        t.commit_all(m);
    }
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    t.run("w", &["migrate", "version", "--to", "1.1.0", "--all"]).success();
    for m in ["m0", "m1"] {
        let record = fs_err::read_to_string(t.path(&format!("w/p/{m}/.tools/esys/a2c/adoption.yaml"))).unwrap();
        assert!(record.contains("tool_version: 1.1.0"), "{m}: {record}");
    }
    assert_eq!(installed(&t, "1.1.0"), files(&next));
    let run = t.run("w", &["outdated"]);
    insta::assert_snapshot!(run.transcript());
}

/// A version another team uploaded with two package ids (a recipe with settings) on
/// a shared remote: passed over with why when unpinned — `outdated`, `list`, `lock` and
/// `install` work for everyone else — and an error, naming the ids, only for a member that
/// pins it.
#[test]
fn an_unpinned_version_with_two_package_ids_is_passed_over_with_a_note() {
    let Some((t, server)) = started(true) else { return };
    publish(&t, &server, "1.0.0", "one\n");
    t.write(
        "odd/conanfile.py",
        "from conan import ConanFile\n\nclass Odd(ConanFile):\n    name = \"esys-a2c\"\n    settings = \"os\"\n",
    );
    for os in ["Linux", "Windows"] {
        conan(&t, &["create", "odd", "--version", "2.0.0", "-s", &format!("os={os}")]);
    }
    conan(&t, &["upload", "esys-a2c/2.0.0", "-r", "local", "-c"]);
    superbuild(&t, &server.location(), &["1.0.0"]);
    let run = t.ok("w", &["outdated"]);
    insta::assert_snapshot!(run.transcript());
    let doc = t.run("w", &["list", "--json"]).json();
    crate::cli_surface::validate("list", &doc);
    let row = |v: &str| items(&doc["versions"]).iter().find(|r| r["version"] == v).cloned();
    assert_eq!(row("2.0.0").unwrap()["registry"], "unusable", "{doc}");
    assert_eq!(row("1.0.0").unwrap()["registry"], "published", "{doc}");
    let human = t.run("w", &["list"]);
    insta::assert_snapshot!(human.transcript());
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    // Pinned, it is an error that names the package ids.
    t.canonical_repo("w/p/m1", "2.0.0");
    let run = t.run("w", &["lock"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
}
