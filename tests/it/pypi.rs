//! A Python package index as a registry — wheels as bundles, the simple API read as
//! pip reads it, against a real `pypiserver` (with and without authentication), real `twine
//! upload`, real `pip install` and a wheel a real `python -m build` (hatchling) made.

use crate::support::servers;
use crate::support::{layout, succeeds};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::bundles::sha256_hex;
use crate::support::http_server::Server;
use crate::support::{
    Spawned, TestContext, installed_tree as installed, require_program, superbuild_pinning as superbuild,
    tree_files as files,
};

fn found(program: &str) -> bool {
    // `htpasswd` and `devpi-init` have no `--version`: being there is enough.
    match program {
        "htpasswd" | "devpi-init" => Command::new(program).arg("--help").output().is_ok(),
        _ => Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
    }
}

/// The Python programs these tests drive, or `false` after the SKIPPED line.
pub(crate) fn programs(names: &[&str]) -> bool {
    for name in names {
        if !found(name) {
            require_program(&format!(
                "{name} (pip install -r .ci/requirements.txt; .ci/run does it)"
            ));
            return false;
        }
    }
    true
}

/// A `pypi-server` on a free loopback port serving `dir`, stopped when dropped.
pub(crate) struct PypiServer {
    _process: Spawned,
    port: u16,
}

impl PypiServer {
    /// Started with uploads open to all (`-a . -P .`), or, with `users` (an htpasswd file),
    /// every action (upload, download, list) authenticated.
    pub(crate) fn start(t: &TestContext, users: Option<&Path>) -> Self {
        let dir = t.path("pypi-packages");
        fs_err::create_dir_all(&dir).unwrap();
        let started = servers::start_listening(t, "pypi-server", 1, |ports| {
            let mut cmd = Command::new(crate::support::program("pypi-server"));
            cmd.args(["run", "-i", "127.0.0.1", "-p", &ports[0].to_string()]);
            match users {
                Some(file) => cmd.args(["-a", "update,download,list", "-P"]).arg(file),
                None => cmd.args(["-a", ".", "-P", "."]),
            };
            cmd.arg(&dir);
            cmd
        });
        Self {
            port: started.ports[0],
            _process: started.child,
        }
    }

    fn simple(&self) -> String {
        format!("http://127.0.0.1:{}/simple/", self.port)
    }

    pub(crate) fn location(&self) -> String {
        format!("pypi+{}", self.simple())
    }

    /// `twine upload` of `wheel` (as `user`, password `password`).
    fn upload(&self, wheel: &Path, user: &str, password: &str) {
        twine_upload(&format!("http://127.0.0.1:{}/", self.port), wheel, user, password);
    }
}

/// `twine upload` of `wheel` to the index at `url`, as `user` with `password`.
fn twine_upload(url: &str, wheel: &Path, user: &str, password: &str) {
    succeeds(
        Command::new(crate::support::program("twine"))
            .args(["upload", "--non-interactive", "--disable-progress-bar"])
            .args(["--repository-url", url, "-u", user, "-p", password])
            .arg(wheel),
        "twine upload",
    );
}

/// `a2c pack --format wheel` of a method tree of `version` into the file registry `wheels`:
/// the wheel's path.
fn wheel(t: &TestContext, version: &str) -> PathBuf {
    let tree = format!("trees/{version}");
    t.method_tree(&tree, version);
    t.write(&format!("{tree}/rules/r.md"), &format!("rule of {version}\n"));
    t.pack_run(&tree, version, "wheels", &["--format", "wheel"]).success();
    t.path(&format!("wheels/bundles/esys_a2c-{version}-py3-none-any.whl"))
}

/// The wheel `a2c pack` makes of a method tree of `version`, copied to `{site}/files/` for a
/// hand-written project page to name: its sha256.
pub fn hosted(t: &TestContext, site: &str, version: &str) -> String {
    let built = wheel(t, version);
    let name = built.file_name().unwrap().to_string_lossy().into_owned();
    fs_err::create_dir_all(t.path(&format!("{site}/files"))).unwrap();
    fs_err::copy(&built, t.path(&format!("{site}/files/{name}"))).unwrap();
    sha256_hex(&fs_err::read(&built).unwrap())
}

/// A hand-written project page at `{site}/simple/esys-a2c/` naming the wheel of `version` by
/// its digest and no size (so a lock asks the size with a `HEAD`).
pub fn hosted_page(t: &TestContext, site: &str, version: &str) {
    let sha = hosted(t, site, version);
    t.write(
        &format!("{site}/simple/esys-a2c/index.html"),
        &format!(
            "<a href=\"/files/esys_a2c-{version}-py3-none-any.whl#sha256={sha}\">esys_a2c-{version}-py3-none-any.whl</a>\n"
        ),
    );
}

/// `server` was asked for something, and never with an `Authorization` header.
fn asked_without_credentials(server: &Server, what: &str) {
    let requests = server.requests();
    assert!(!requests.is_empty(), "{what}: nothing was asked of it");
    assert!(
        requests.iter().all(|r| !r.headers.contains_key("authorization")),
        "{what}: {:?}",
        requests.iter().map(|r| &r.headers).collect::<Vec<_>>()
    );
}

/// `a2c login HOST --username USER` with `password` on standard input.
pub fn login(t: &TestContext, host: &str, user: &str, password: &str) {
    let mut child = t
        .cmd(".")
        .args(["login", host, "--username", user])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{password}\n").as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `pip install --no-deps --target DIR REQ --index-url INDEX` (a real pip): DIR.
fn pip_install(t: &TestContext, requirement: &str, index: &str) -> PathBuf {
    let target = t.path("pip-target");
    succeeds(
        Command::new(crate::support::program("pip"))
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-cache-dir",
                "--target",
            ])
            .arg(&target)
            .args([requirement, "--index-url", index]),
        "pip install",
    );
    target
}

#[test]
fn wheels_on_a_package_index_lock_install_and_match_what_pip_installs() {
    if !programs(&["pypi-server", "twine", "pip"]) {
        return;
    }
    let t = TestContext::new();
    let server = PypiServer::start(&t, None);
    // 1.0.0 uploaded by twine, 1.1.0 by a2c itself (the same upload API).
    server.upload(&wheel(&t, "1.0.0"), "anyone", "anything");
    t.method_tree("trees/1.1.0", "1.1.0");
    t.write("trees/1.1.0/rules/r.md", "rule of 1.1.0\n");
    let location = server.location();
    let pack = ["pack", "trees/1.1.0", "--version", "1.1.0", "--registry", &location];
    let doc = t.run(".", &[&pack[..], &["--json"]].concat()).json();
    assert_eq!(doc["changed"], true, "{doc}");
    assert_eq!(doc["format"], "whl", "{doc}");
    crate::cli_surface::validate("pack-oci", &doc);
    // Again, the same bytes: nothing changes. Other bytes under 1.1.0: refused, by a2c.
    assert_eq!(t.run(".", &[&pack[..], &["--json"]].concat()).json()["changed"], false);
    t.write("trees/1.1.0/rules/r.md", "another rule\n");
    let run = t.run(".", &pack);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    t.write("trees/1.1.0/rules/r.md", "rule of 1.1.0\n");
    superbuild(&t, &server.location(), &["1.0.0", "1.1.0"]);
    t.run("w", &["lock"]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(
        lock.contains(&format!(
            "source = \"http://127.0.0.1:{}/packages/esys_a2c-1.0.0-py3-none-any.whl\"",
            server.port
        )),
        "{lock}"
    );
    assert!(lock.contains("format = \"whl\""), "{lock}");
    assert!(
        lock.contains("tree = \"sha256:"),
        "the lock pins each wheel's tree:\n{lock}"
    );
    let wheel_sha = sha256_hex(&fs_err::read(t.path("wheels/bundles/esys_a2c-1.0.0-py3-none-any.whl")).unwrap());
    assert!(lock.contains(&wheel_sha), "the lock pins the wheel's sha256:\n{lock}");
    t.run("w", &["install"]).success();
    // a2c's tree is the method tree, nothing of the .dist-info.
    let tree = installed(&t, "1.0.0");
    assert_eq!(tree, files(&t.path("trees/1.0.0")));
    assert_eq!(installed(&t, "1.1.0"), files(&t.path("trees/1.1.0")));
    // pip installs the same wheel from the same index: its package directory holds the same files.
    let target = pip_install(&t, "esys-a2c==1.0.0", &server.simple());
    // Python code finds the tree as package data.
    let out = Command::new("python3")
        .args([
            "-c",
            "import importlib.resources as r; print(r.files('esys_a2c').joinpath('a2c-method.toml').read_text())",
        ])
        .env("PYTHONPATH", &target)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("version = \"1.0.0\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(files(&target.join("esys_a2c")), tree);
    // Offline, from the cache, after the store is gone.
    fs_err::remove_dir_all(t.path(&layout::installed("w", "1.0.0"))).unwrap();
    fs_err::remove_dir_all(t.path(&layout::installed("w", "1.1.0"))).unwrap();
    drop(server);
    t.run("w", &["install", "--offline"]).success();
    assert_eq!(installed(&t, "1.0.0"), tree);
    // Vendored for an air-gapped copy, from the cache too.
    let doc = t.run("w", &["vendor", "../vend", "--offline", "--json"]).json();
    assert_eq!(doc["bundles"].as_array().unwrap().len(), 2);
}

#[test]
fn a_wheel_hatchling_built_installs_its_package_directory() {
    if !programs(&["pypi-server", "twine", "python3"]) {
        return;
    }
    let probe = Command::new("python3")
        .args(["-c", "import build, hatchling"])
        .output()
        .unwrap();
    if !probe.status.success() {
        require_program("build and hatchling (pip install -r .ci/requirements.txt; .ci/run does it)");
        return;
    }
    let t = TestContext::new();
    t.write(
        "proj/pyproject.toml",
        "[build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n\n[project]\nname = \"esys-a2c\"\nversion = \"2.0.0\"\n\n[tool.hatch.build.targets.wheel]\npackages = [\"src/esys_a2c\"]\n",
    );
    t.method_tree("proj/src/esys_a2c", "2.0.0");
    t.write("proj/src/esys_a2c/prompts/p.md", "a prompt\n");
    succeeds(
        Command::new("python3")
            .args(["-m", "build", "--wheel", "--no-isolation", "--outdir"])
            .arg(t.path("dist"))
            .arg(t.path("proj")),
        "python -m build",
    );
    let server = PypiServer::start(&t, None);
    let built: Vec<PathBuf> = fs_err::read_dir(t.path("dist"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(built.len(), 1, "{built:?}");
    server.upload(&built[0], "anyone", "anything");
    superbuild(&t, &server.location(), &["2.0.0"]);
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    assert_eq!(installed(&t, "2.0.0"), files(&t.path("proj/src/esys_a2c")));
}

#[test]
fn an_index_behind_a_login_needs_bound_credentials() {
    if !programs(&["pypi-server", "twine", "htpasswd"]) {
        return;
    }
    let t = TestContext::new();
    succeeds(
        Command::new("htpasswd")
            .args(["-mbc"])
            .arg(t.path("users"))
            .args(["alice", "s3cret"]),
        "htpasswd",
    );
    let server = PypiServer::start(&t, Some(&t.path("users")));
    // a2c uploads with the credentials bound to the index's host, and only with them.
    t.method_tree("trees/1.0.0", "1.0.0");
    t.write("trees/1.0.0/rules/r.md", "rule of 1.0.0\n");
    let location = server.location();
    let pack = ["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &location];
    let run = t.run(".", &pack);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    t.run_env(".", &pack, &[("A2C_REGISTRY_AUTH", "alice:s3cret")])
        .success();
    superbuild(&t, &server.location(), &["1.0.0"]);
    let run = t.run("w", &["lock"]);
    run.failure();
    // The index's own words — a login with a user name, not a bearer token.
    let host = format!("127.0.0.1:{}", server.port);
    assert!(
        run.stderr.contains("answered HTTP 401") && run.stderr.contains(&format!("`a2c login {host} --username NAME`")),
        "{}",
        run.stderr
    );
    // The marker names the index: a committed file chooses no host for the credentials.
    let auth = ("A2C_REGISTRY_AUTH", "alice:s3cret");
    let run = t.run_env("w", &["lock"], &[auth]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    // Bound by `--registry`, they go to the index's host: its page, and the wheel the lock
    // fetches to pin its tree.
    let run = t.run_env("w", &["lock", "--registry", &location, "--json", "-v"], &[auth]);
    run.success();
    run.shows_no_credential(&["alice:s3cret"]);
    assert!(!run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"));
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    // Bound with A2C_TOKEN_HOSTS, likewise.
    let bound = [auth, ("A2C_TOKEN_HOSTS", host.as_str())];
    t.run_env("w", &["lock"], &bound).success();
    t.run_env("w", &["install"], &bound).success();
    assert_eq!(installed(&t, "1.0.0"), files(&t.path("trees/1.0.0")));
    // `a2c login HOST --username alice` binds the host for good: the password goes as basic
    // credentials, with nothing in the environment.
    fs_err::remove_dir_all(t.path(&layout::installed("w", "1.0.0"))).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    login(&t, &host, "alice", "s3cret");
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    assert_eq!(installed(&t, "1.0.0"), files(&t.path("trees/1.0.0")));
}

/// A project page written by hand, served by the test's own server: the hash on the page is
/// what the bytes must match; a version with two wheels is named; a yanked version is a yank.
#[test]
fn what_a_project_page_says_is_held_to_it() {
    let t = TestContext::new();
    let good = wheel(&t, "1.0.0");
    let other = wheel(&t, "1.1.0");
    let bytes = fs_err::read(&good).unwrap();
    let sha = sha256_hex(&bytes);
    let other_sha = sha256_hex(&fs_err::read(&other).unwrap());
    fs_err::create_dir_all(t.path("site/files")).unwrap();
    fs_err::copy(&good, t.path("site/files/esys_a2c-1.0.0-py3-none-any.whl")).unwrap();
    // 1.1.0's file holds other bytes than its hash says (1.0.0's).
    fs_err::copy(&good, t.path("site/files/esys_a2c-1.1.0-py3-none-any.whl")).unwrap();
    let page = |extra: &str| {
        format!(
            "<!DOCTYPE html><html><body>\n<a href=\"../../files/esys_a2c-1.0.0-py3-none-any.whl#sha256={sha}\">esys_a2c-1.0.0-py3-none-any.whl</a>\n<a href=\"../../files/esys_a2c-1.1.0-py3-none-any.whl#sha256={other_sha}\">esys_a2c-1.1.0-py3-none-any.whl</a>\n{extra}</body></html>\n"
        )
    };
    t.write("site/simple/esys-a2c/index.html", &page(""));
    let server = Server::start(t.path("site"));
    let location = format!("pypi+{}/simple/", server.url().trim_end_matches('/'));
    superbuild(&t, &location, &["1.0.0", "1.1.0"]);
    // The lock fetches each new wheel once (to pin its tree): other bytes than the page's
    // hash are refused there, and nothing is locked.
    let run = t.run("w", &["lock"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    assert!(!t.path(&layout::lock("w")).exists());
    // Two wheels of one version: refused, both named (by their URLs, as pip names files: the
    // anchor's text is not read).
    t.write(
        "site/simple/esys-a2c/index.html",
        &page(&format!(
            "<a href=\"../../files/esys_a2c-1.0.0-1-py3-none-any.whl#sha256={sha}\">esys_a2c-9.9.9-py3-none-any.whl</a>\n"
        )),
    );
    let run = t.run("w", &["lock"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    // A yanked version (`data-yanked`) is a2c's yank: lock says so.
    t.write(
        "site/simple/esys-a2c/index.html",
        &page("").replace(
            "<a href=\"../../files/esys_a2c-1.1.0",
            "<a data-yanked=\"broken\" href=\"../../files/esys_a2c-1.1.0",
        ),
    );
    let run = t.run("w", &["lock"]);
    assert!(run.transcript().contains("yanked"), "{}", run.transcript());
    // A link to a path on this machine: refused, never read.
    t.write(
        "site/simple/esys-a2c/index.html",
        &format!(
            "<a href=\"file://{}#sha256={sha}\">esys_a2c-1.0.0-py3-none-any.whl</a>\n",
            good.display()
        ),
    );
    let run = t.run("w", &["lock"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    // A wheel whose file differs from its own RECORD (its hash on the page is right):
    // refused at extraction, nothing installed.
    let tampered = t.path("site/files/esys_a2c-1.2.0-py3-none-any.whl");
    {
        use std::io::{Read, Write};
        let source = wheel(&t, "1.2.0");
        let mut input = zip::ZipArchive::new(fs_err::File::open(&source).unwrap()).unwrap();
        let mut out = zip::ZipWriter::new(fs_err::File::create(&tampered).unwrap());
        for i in 0..input.len() {
            let mut entry = input.by_index(i).unwrap();
            let name = entry.name().unwrap().into_owned();
            let mut body = Vec::new();
            entry.read_to_end(&mut body).unwrap();
            if name == "esys_a2c/rules/r.md" {
                body = b"rule changed after RECORD\n".to_vec();
            }
            out.start_file(name.as_str(), zip::write::SimpleFileOptions::default())
                .unwrap();
            out.write_all(&body).unwrap();
        }
        out.finish().unwrap();
    }
    let tampered_sha = sha256_hex(&fs_err::read(&tampered).unwrap());
    t.write(
        "site/simple/esys-a2c/index.html",
        &format!(
            "<a href=\"../../files/esys_a2c-1.2.0-py3-none-any.whl#sha256={tampered_sha}\">esys_a2c-1.2.0-py3-none-any.whl</a>\n"
        ),
    );
    superbuild(&t, &location, &["1.2.0"]);
    fs_err::remove_dir_all(t.path("w/p")).unwrap();
    t.canonical_repo("w/p/m0", "1.2.0");
    let _ = fs_err::remove_file(t.path(&layout::lock("w")));
    // Refused by the lock, which extracts each new wheel once to pin its tree.
    let run = t.run("w", &["lock"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    assert!(!t.path(&layout::lock("w")).exists());
    assert!(!t.path(&layout::installed("w", "1.2.0")).exists());
}

/// The project page's files on another origin (a CDN): the token bound to the index goes to
/// the index only, never to the host that serves the files.
#[test]
fn files_on_another_host_get_no_credentials() {
    let t = TestContext::new();
    let sha = hosted(&t, "cdn", "1.0.0");
    let cdn = Server::start(t.path("cdn"));
    t.write(
        "index/simple/esys-a2c/index.html",
        &format!(
            "<a href=\"{}/files/esys_a2c-1.0.0-py3-none-any.whl#sha256={sha}\">esys_a2c-1.0.0-py3-none-any.whl</a>\n",
            cdn.url().trim_end_matches('/')
        ),
    );
    let index = Server::start(t.path("index"));
    index.require_token("idx-t0ken");
    let location = format!("pypi+{}/simple/", index.url().trim_end_matches('/'));
    superbuild(&t, &location, &["1.0.0"]);
    let host = index.host();
    let token = [("A2C_REGISTRY_TOKEN", "idx-t0ken"), ("A2C_TOKEN_HOSTS", host.as_str())];
    t.run_env("w", &["lock"], &token).success();
    t.run_env("w", &["install"], &token).success();
    assert_eq!(installed(&t, "1.0.0"), files(&t.path("trees/1.0.0")));
    assert!(index.requests().iter().all(|r| r.headers.contains_key("authorization")));
    asked_without_credentials(&cdn, "a credential reached the CDN");
}

/// The page names the file on the index's own host, which redirects to a CDN (as PyPI's
/// `files.pythonhosted.org`, or Artifactory's signed storage URLs): the token follows the
/// redirect to no other origin.
#[test]
fn a_redirect_to_a_cdn_carries_no_credentials() {
    let t = TestContext::new();
    let sha = hosted(&t, "cdn", "1.0.0");
    let cdn = Server::start(t.path("cdn"));
    let file = "/packages/esys_a2c-1.0.0-py3-none-any.whl";
    t.write(
        "index/simple/esys-a2c/index.html",
        &format!("<a href=\"{file}#sha256={sha}\">esys_a2c-1.0.0-py3-none-any.whl</a>\n"),
    );
    let index = Server::start(t.path("index"));
    index.require_token("idx-t0ken");
    let to = format!(
        "{}/files/esys_a2c-1.0.0-py3-none-any.whl",
        cdn.url().trim_end_matches('/')
    );
    index.fault(file, &vec![crate::support::http_server::Fault::Redirect(to); 12]);
    // The CDN redirects once more, to itself (a signed URL): the second hop is on another
    // origin than the index too, and carries nothing either.
    cdn.fault(
        "/files/esys_a2c-1.0.0-py3-none-any.whl",
        &vec![
            crate::support::http_server::Fault::Redirect("/files/esys_a2c-1.0.0-py3-none-any.whl?signed=1".into());
            12
        ],
    );
    let location = format!("pypi+{}/simple/", index.url().trim_end_matches('/'));
    superbuild(&t, &location, &["1.0.0"]);
    let host = index.host();
    let token = [("A2C_REGISTRY_TOKEN", "idx-t0ken"), ("A2C_TOKEN_HOSTS", host.as_str())];
    t.run_env("w", &["lock"], &token).success();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    t.run_env("w", &["install"], &token).success();
    assert_eq!(installed(&t, "1.0.0"), files(&t.path("trees/1.0.0")));
    assert!(
        index.count_of(file) >= 2,
        "the file was asked of the index, which redirected"
    );
    asked_without_credentials(&cdn, "a credential followed the redirect");
    assert!(
        cdn.requests().iter().any(|r| r.path.ends_with("?signed=1")),
        "the CDN's second hop was followed"
    );
}

/// A `devpi-server` (its JSON pages, its `/USER/INDEX/+simple/` layout): a2c uploads to a
/// user's index with the user's password, reads it anonymously, and pip agrees.
#[test]
fn a_devpi_index_takes_a2c_uploads_and_serves_installs() {
    if !programs(&["devpi-server", "devpi-init", "devpi", "twine", "pip"]) {
        return;
    }
    let t = TestContext::new();
    let dir = t.path("devpi");
    let run = |program: &str, args: &[&str]| {
        succeeds(Command::new(program).args(args), &format!("{program} {args:?}"));
    };
    let serverdir = dir.join("server").display().to_string();
    run("devpi-init", &["--serverdir", &serverdir, "--root-passwd", "r00t"]);
    let server = servers::start_listening(&t, "devpi-server", 1, |ports| {
        let mut devpi = Command::new(crate::support::program("devpi-server"));
        devpi.args([
            "--serverdir",
            &serverdir,
            "--host",
            "127.0.0.1",
            "--port",
            &ports[0].to_string(),
        ]);
        devpi
    });
    let port = server.ports[0];
    let url = format!("http://127.0.0.1:{port}");
    let clientdir = dir.join("client").display().to_string();
    let devpi = |args: &[&str]| run("devpi", &[&["--clientdir", &clientdir][..], args].concat());
    devpi(&["use", &url]);
    devpi(&["user", "-c", "alice", "password=alic3"]);
    devpi(&["login", "alice", "--password", "alic3"]);
    devpi(&["index", "-c", "alice/dev", "bases="]);
    // a2c uploads 1.1.0 with alice's password; twine uploads 1.0.0.
    let location = format!("pypi+{url}/alice/dev/+simple/");
    t.method_tree("trees/1.1.0", "1.1.0");
    let pack = ["pack", "trees/1.1.0", "--version", "1.1.0", "--registry", &location];
    t.run_env(".", &pack, &[("A2C_REGISTRY_AUTH", "alice:alic3")]).success();
    twine_upload(&format!("{url}/alice/dev/"), &wheel(&t, "1.0.0"), "alice", "alic3");
    // Read anonymously, as devpi serves its indexes.
    superbuild(&t, &location, &["1.0.0", "1.1.0"]);
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    for v in ["1.0.0", "1.1.0"] {
        assert_eq!(installed(&t, v), files(&t.path(&format!("trees/{v}"))), "{v}");
    }
    let target = pip_install(&t, "esys-a2c==1.1.0", &format!("{url}/alice/dev/+simple/"));
    assert_eq!(files(&target.join("esys_a2c")), installed(&t, "1.1.0"));
}

/// A project page listing 3,000 versions, each its own file: a lock asks only for the file it
/// pins, `list` asks for the newest 50 sizes at most.
#[test]
fn a_page_with_thousands_of_versions_costs_what_is_needed() {
    let t = TestContext::new();
    let good = wheel(&t, "1.0.0");
    let sha = sha256_hex(&fs_err::read(&good).unwrap());
    fs_err::create_dir_all(t.path("site/files")).unwrap();
    let mut page = String::from("<!DOCTYPE html><html><body>\n");
    for n in 0..3000 {
        let v = if n == 0 {
            "1.0.0".to_string()
        } else {
            format!("2.{}.{}", n / 100, n % 100)
        };
        let name = format!("esys_a2c-{v}-py3-none-any.whl");
        fs_err::hard_link(&good, t.path(&format!("site/files/{name}"))).unwrap();
        page.push_str(&format!("<a href=\"../../files/{name}#sha256={sha}\">{name}</a>\n"));
    }
    t.write("site/simple/esys-a2c/index.html", &page);
    let server = Server::start(t.path("site"));
    let location = format!("pypi+{}/simple/", server.url().trim_end_matches('/'));
    superbuild(&t, &location, &["1.0.0"]);
    let files_asked = || {
        server
            .requests()
            .iter()
            .filter(|r| r.path.starts_with("/files/"))
            .map(|r| r.path.clone())
            .collect::<Vec<_>>()
    };
    t.run("w", &["lock"]).success();
    // A HEAD for its size, the download that pins its tree, the check that its source
    // answers: nothing of the other 2,999.
    let asked = files_asked();
    assert!(
        asked.len() <= 3 && asked.iter().all(|p| p.ends_with("esys_a2c-1.0.0-py3-none-any.whl")),
        "{asked:?}"
    );
    t.run("w", &["list"]).success();
    let listed = files_asked().len() - asked.len();
    assert!(listed <= 50, "{listed} sizes asked for");
}

/// A package index as one of a superbuild's mirrors, and a file registry as the other's: the
/// wheels a2c packs are the same bytes wherever they are published, so a locked wheel comes
/// from whichever answers.
#[test]
fn a_package_index_and_a_file_registry_mirror_each_other() {
    if !programs(&["pypi-server", "twine"]) {
        return;
    }
    let t = TestContext::new();
    let server = PypiServer::start(&t, None);
    let built = wheel(&t, "1.0.0");
    server.upload(&built, "anyone", "anything");
    // Locked against the index, with the file registry `wheels` as its mirror.
    t.superbuild(
        "w",
        &format!(
            "members: [\"p/*\"]\nregistry: {}\nmirrors: [\"../wheels\"]\n",
            server.location()
        ),
    );
    t.canonical_repo("w/p/m0", "1.0.0");
    t.run("w", &["lock"]).success();
    drop(server);
    // The index is gone and the cache emptied (the lock left the wheel there): the mirror
    // serves the locked wheel.
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    t.ok("w", &["install"]);
    assert_eq!(installed(&t, "1.0.0"), files(&t.path("trees/1.0.0")));
    // And the other way round: a file registry first, the index as its mirror.
    // (Its package directory still holds the wheel.)
    let server = PypiServer::start(&t, None);
    fs_err::remove_dir_all(t.path(&layout::installed("w", "1.0.0"))).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    t.superbuild(
        "w",
        &format!(
            "members: [\"p/*\"]\nregistry: ../wheels\nmirrors: [\"{}\"]\n",
            server.location()
        ),
    );
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    t.run("w", &["lock"]).success();
    fs_err::rename(t.path("wheels"), t.path("wheels-gone")).unwrap();
    let _ = fs_err::remove_dir_all(t.cache_dir());
    t.run("w", &["install"]).success();
    assert_eq!(installed(&t, "1.0.0"), files(&t.path("trees/1.0.0")));
}

/// An index over HTTPS with a private CA: refused with the hint until the CA is given, then
/// read, locked and installed like any HTTPS registry.
#[test]
fn an_index_over_https_with_a_private_ca() {
    let t = TestContext::new();
    let sha = hosted(&t, "site", "1.0.0");
    t.write(
        "site/simple/esys-a2c/index.html",
        &format!(
            "<a href=\"/files/esys_a2c-1.0.0-py3-none-any.whl#sha256={sha}\">esys_a2c-1.0.0-py3-none-any.whl</a>\n"
        ),
    );
    let server = Server::start_tls(t.path("site"));
    let location = format!("pypi+{}/simple/", server.url().trim_end_matches('/'));
    assert!(location.starts_with("pypi+https://"), "{location}");
    superbuild(&t, &location, &["1.0.0"]);
    let run = t.run_env("w", &["lock"], &[("A2C_HTTP_RETRIES", "0")]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    let ca = t.write("ca.pem", server.ca_pem.as_deref().unwrap());
    let with_ca = [("A2C_CA_BUNDLE", ca.to_str().unwrap())];
    t.run_env("w", &["lock"], &with_ca).success();
    t.run_env("w", &["install"], &with_ca).success();
    assert_eq!(installed(&t, "1.0.0"), files(&t.path("trees/1.0.0")));
}

/// `wheel`, rewritten by Python's `zipfile`: `extra` entries added (name, bytes, listed in
/// RECORD with their real hash), then `ghosts` more RECORD lines naming files the wheel does
/// not hold. Returns the new wheel's sha256.
fn rewritten_wheel(t: &TestContext, wheel: &Path, out: &Path, extra: &[(&str, usize)], ghosts: usize) -> String {
    let script = r#"
import base64, hashlib, sys, zipfile
src, dst, ghosts = sys.argv[1], sys.argv[2], int(sys.argv[3])
extra = [(sys.argv[i], int(sys.argv[i + 1])) for i in range(4, len(sys.argv), 2)]
zin = zipfile.ZipFile(src)
record_name = next(n for n in zin.namelist() if n.endswith('.dist-info/RECORD'))
zout = zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED)
lines = []
for info in zin.infolist():
    if info.filename == record_name:
        lines.extend(l for l in zin.read(info).decode().splitlines() if l)
        continue
    zout.writestr(info, zin.read(info))
for name, size in extra:
    data = b'\0' * size
    zout.writestr(name, data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    lines.append(f'{name},sha256={digest},{size}')
ghost = 'esys_a2c/ghost-%09d.md,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0'
record = '\n'.join(lines + [ghost % i for i in range(ghosts)]) + '\n'
zout.writestr(record_name, record)
zout.close()
"#;
    let mut cmd = Command::new("python3");
    cmd.args(["-c", script]).arg(wheel).arg(out).arg(ghosts.to_string());
    for (name, size) in extra {
        cmd.arg(name).arg(size.to_string());
    }
    let status = cmd.status().unwrap();
    assert!(status.success());
    let _ = t;
    sha256_hex(&fs_err::read(out).unwrap())
}

/// What a wheel holds outside its package directory is inflated within
/// `A2C_MAX_UNPACKED_BYTES` too (3 MiB of zeros beside the tree, listed in RECORD with their
/// real hash, installed before under a 1 MiB limit), and a RECORD of a million lines naming
/// files the wheel does not hold is refused at its first such line, in bounded memory
/// (measured with /usr/bin/time).
#[test]
fn a_wheel_is_bounded_outside_its_package_and_in_its_record() {
    let t = TestContext::new();
    let built = wheel(&t, "1.0.0");
    let name = "esys_a2c-1.0.0-py3-none-any.whl";
    fs_err::create_dir_all(t.path("site/files")).unwrap();
    let page = |sha: &str| format!("<a href=\"../../files/{name}#sha256={sha}\">{name}</a>\n");
    let sha = rewritten_wheel(
        &t,
        &built,
        &t.path(&format!("site/files/{name}")),
        &[("data/zeros.bin", 3 << 20)],
        0,
    );
    t.write("site/simple/esys-a2c/index.html", &page(&sha));
    let server = Server::start(t.path("site"));
    let location = format!("pypi+{}/simple/", server.url().trim_end_matches('/'));
    superbuild(&t, &location, &["1.0.0"]);
    let limit = [("A2C_MAX_UNPACKED_BYTES", "1048576")];
    let run = t.run_env("w", &["lock"], &limit);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    assert!(!t.path(&layout::lock("w")).exists());
    // Within the default limit the same wheel installs: only its package directory.
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    assert_eq!(installed(&t, "1.0.0"), files(&t.path("trees/1.0.0")));

    // A RECORD of a million lines (about 90 MB inflated, a few hundred KB in the wheel).
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    let sha = rewritten_wheel(&t, &built, &t.path(&format!("site/files/{name}")), &[], 1_000_000);
    t.write("site/simple/esys-a2c/index.html", &page(&sha));
    let Some((out, kib)) = t.run_measured("w", &["lock"]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("esys_a2c/ghost-000000000.md") && stderr.contains("does not hold it"),
        "{stderr}"
    );
    assert!(kib < 60 * 1024, "peak RSS {kib} KiB");
}

/// An upload streams the wheel from its file — never the whole wheel in memory, nor
/// a copy per attempt (an OCI push already did). A method tree holding 40 MiB of random bytes
/// is packed and uploaded to a real `pypi-server` under /usr/bin/time; the server keeps the
/// same bytes the lock then pins.
#[test]
fn an_upload_streams_the_wheel_in_bounded_memory() {
    if !programs(&["pypi-server"]) {
        return;
    }
    let t = TestContext::new();
    let server = PypiServer::start(&t, None);
    t.method_tree("trees/2.0.0", "2.0.0");
    t.write_noise("trees/2.0.0/rules/noise.bin", 40 << 20, 0x2545_f491_4f6c_dd1du64);
    let location = server.location();
    // The server (Python) takes its time to store 40 MiB before it answers, more than the
    // suite's 5 s stall limit on a loaded machine: this test measures memory, not that.
    let Some((out, kib)) = t.run_measured_env(
        ".",
        &[
            "pack",
            "trees/2.0.0",
            "--version",
            "2.0.0",
            "--registry",
            &location,
            "--json",
        ],
        &[("A2C_HTTP_TIMEOUT", "60")],
    ) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(doc["size"].as_u64().unwrap() > 40 << 20, "{doc}");
    // Streamed: ~27 MiB here; read whole and copied into the body, it was ~148 MiB.
    assert!(kib < 40 * 1024, "peak RSS {kib} KiB for a {} byte wheel", doc["size"]);
    let stored = t.path("pypi-packages/esys_a2c-2.0.0-py3-none-any.whl");
    assert_eq!(
        sha256_hex(&fs_err::read(&stored).unwrap()),
        doc["sha256"].as_str().unwrap()
    );
}

/// One lock entry whichever command writes it. `install` that locks a wheel itself
/// pins its tree as `lock` does (the same file either way); an install that fails (the page's
/// `#sha256` wrong) leaves the lock as it was; `lock` completes an entry an older a2c wrote
/// without its tree.
#[test]
fn the_lock_entry_is_the_same_whichever_command_writes_it() {
    let t = TestContext::new();
    let sha = hosted(&t, "site", "1.0.0");
    let other_sha = hosted(&t, "site", "1.1.0");
    let page = |second: &str| {
        format!(
            "<a href=\"../../files/esys_a2c-1.0.0-py3-none-any.whl#sha256={sha}\">a</a>\n<a href=\"../../files/esys_a2c-1.1.0-py3-none-any.whl#sha256={second}\">b</a>\n"
        )
    };
    t.write("site/simple/esys-a2c/index.html", &page(&other_sha));
    let server = Server::start(t.path("site"));
    let location = format!("pypi+{}/simple/", server.url().trim_end_matches('/'));
    superbuild(&t, &location, &["1.0.0"]);
    let lock_path = t.path(&layout::lock("w"));
    t.run("w", &["install"]).success();
    let by_install = fs_err::read_to_string(&lock_path).unwrap();
    assert!(by_install.contains("tree = \"sha256:"), "{by_install}");
    fs_err::remove_file(&lock_path).unwrap();
    t.run("w", &["lock"]).success();
    assert_eq!(fs_err::read_to_string(&lock_path).unwrap(), by_install);
    let run = t.run("w", &["lock"]);
    insta::assert_snapshot!(run.transcript());
    // A member on 1.1.0, whose page hash is wrong: the install fails, the lock is unchanged.
    t.write("site/simple/esys-a2c/index.html", &page(&sha));
    t.canonical_repo("w/p/m1", "1.1.0");
    let run = t.run("w", &["install"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    assert_eq!(fs_err::read_to_string(&lock_path).unwrap(), by_install);
    fs_err::remove_dir_all(t.path("w/p/m1")).unwrap();
    // An entry locked without its tree (an older a2c's install): `lock` completes it.
    let legacy: String = by_install
        .lines()
        .filter(|l| !l.starts_with("tree = "))
        .map(|l| format!("{l}\n"))
        .collect();
    fs_err::write(&lock_path, &legacy).unwrap();
    let run = t.ok("w", &["lock"]);
    insta::assert_snapshot!(run.transcript());
    assert_eq!(fs_err::read_to_string(&lock_path).unwrap(), by_install);
}

/// A static registry whose index gives a wrong sha256: the install that locks the
/// version fails and the lock stays as it was (it used to keep the unverified entry).
#[test]
fn a_failed_install_leaves_the_lock_as_it_was() {
    let t = TestContext::locked_superbuild();
    let lock_path = t.path(&layout::lock("w"));
    let before = fs_err::read_to_string(&lock_path).unwrap();
    t.method_tree("trees/3.0.0", "3.0.0");
    t.run(".", &["pack", "trees/3.0.0", "--version", "3.0.0", "--registry", "reg"])
        .success();
    t.edit_index("reg", "3.0.0", |e| e["sha256"] = serde_json::json!("0".repeat(64)));
    t.canonical_repo("w/p/new", "3.0.0");
    let run = t.run("w", &["install"]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    assert_eq!(fs_err::read_to_string(&lock_path).unwrap(), before);
}

/// A package index's own words. A project the index lacks is said to be missing
/// there (not "a registry serves `index/esys/a2c.json`"); a PEP 700 size that is wrong is
/// the index's, never "the bytes the lock pins" (nothing is locked yet).
#[test]
fn a_package_index_errors_speak_of_the_index() {
    let t = TestContext::new();
    let sha = hosted(&t, "site", "1.0.0");
    let size = fs_err::metadata(t.path("site/files/esys_a2c-1.0.0-py3-none-any.whl"))
        .unwrap()
        .len();
    let server = Server::start(t.path("site"));
    let location = format!("pypi+{}/simple/", server.url().trim_end_matches('/'));
    superbuild(&t, &location, &["1.0.0"]);
    let run = t.run("w", &["lock"]);
    run.failure();
    assert!(
        run.stderr.contains("the index has no project `esys-a2c`")
            && run.stderr.contains(&format!("--registry {location}#esys-a2c"))
            && !run.stderr.contains("index/esys/a2c.json"),
        "{}",
        run.stderr
    );
    // A PEP 691 page whose PEP 700 size is short by one byte.
    let page = serde_json::json!({
        "meta": {"api-version": "1.1"},
        "name": "esys-a2c",
        "files": [{
            "filename": "esys_a2c-1.0.0-py3-none-any.whl",
            "url": "../../files/esys_a2c-1.0.0-py3-none-any.whl",
            "hashes": {"sha256": sha},
            "size": size - 1,
        }],
    });
    t.write("site/simple/esys-a2c/index.json", &page.to_string());
    let run = t.run_env("w", &["lock"], &[("A2C_HTTP_RETRIES", "0")]);
    run.failure();
    assert!(
        run.stderr
            .contains(&format!("{} bytes recorded for it (by the registry's index", size - 1))
            && !run.stderr.contains("the lock pins"),
        "{}",
        run.stderr
    );
    assert!(!t.path(&layout::lock("w")).exists());
}
