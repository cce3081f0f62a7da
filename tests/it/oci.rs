//! Issue 15 (first slice): OCI distribution registries as a transport, against the real CNCF
//! distribution registry (Debian's `docker-registry`) started on loopback by each test.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TestContext, require_program};

struct Registry {
    child: Child,
    port: u16,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Registry {
    fn url(&self, repo: &str) -> String {
        format!("oci://127.0.0.1:{}/{repo}", self.port)
    }
}

/// Starts `docker-registry serve` on a free loopback port with its own storage, or `None`
/// (after the SKIPPED line) when it is not installed.
fn registry(t: &TestContext) -> Option<Registry> {
    registry_with(t, "")
}

/// [`registry`] with extra top-level configuration (such as an `auth:` section).
fn registry_with(t: &TestContext, extra: &str) -> Option<Registry> {
    if Command::new("docker-registry").arg("--version").output().is_err() {
        require_program("docker-registry (apt-get install docker-registry)");
        return None;
    }
    for attempt in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = t.path(&format!("oci-{attempt}"));
        fs_err::create_dir_all(dir.join("storage")).unwrap();
        let config = dir.join("config.yml");
        fs_err::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n{extra}",
                dir.join("storage").display()
            ),
        )
        .unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut reg = Registry { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(reg);
            }
            if let Ok(Some(_)) = reg.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = reg.child.kill();
    }
    panic!("docker-registry did not start");
}

mod raw_http {
    /// One HTTP/1.1 request over a raw socket (the tests need no client crate); the status.
    pub fn request(method: &str, url: &url::Url, content_type: &str, body: &[u8]) -> u16 {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect((url.host_str().unwrap(), url.port().unwrap())).unwrap();
        write!(
            s,
            "{method} {} HTTP/1.1\r\nHost: {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            url.path(),
            url.host_str().unwrap(),
            body.len()
        )
        .unwrap();
        s.write_all(body).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

#[test]
fn push_lock_and_install_through_a_real_oci_registry() {
    let t = TestContext::new();
    let Some(reg) = registry(&t) else { return };
    let oci = reg.url("esys/a2c");
    t.method_tree("trees/1.0.0", "1.0.0");
    let push = [
        "pack",
        "trees/1.0.0",
        "--version",
        "1.0.0",
        "--registry",
        &oci,
        "--json",
    ];
    // Push, and the same bytes again (a no-op); the same tree into a file registry for the digest.
    let run = t.run(".", &push);
    let pushed = run.json();
    assert_eq!(pushed["changed"], true);
    let run = t.run(".", &push);
    assert_eq!(run.json()["changed"], false);
    t.pack("trees/1.0.0", "1.0.0", "reg", "tar.gz");
    let index: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(t.path("reg/index/esys/a2c.json")).unwrap()).unwrap();
    assert_eq!(
        pushed["sha256"], index["versions"][0]["sha256"],
        "the layer is the same bundle"
    );
    // Other bytes under the same version: refused.
    t.write("trees/1.0.0/rules/extra.md", "changed\n");
    let run = t.run(".", &["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &oci]);
    run.failure();
    assert!(run.stderr.contains("already published"), "{}", run.stderr);
    // Lock: the layer's digest and size, the manifest digest as the source reference.
    t.canonical_repo("r", "1.0.0");
    t.run("r", &["lock", "--registry", &oci]).success();
    let lock = fs_err::read_to_string(t.path("r/.tools/esys/a2c/a2c.lock")).unwrap();
    assert!(lock.contains(&format!("source = \"{oci}@sha256:")), "{lock}");
    assert!(lock.contains(&format!("sha256 = {}", pushed["sha256"])), "{lock}");
    assert!(
        lock.contains("tree = \"sha256:"),
        "the tree digest travels as an annotation: {lock}"
    );
    t.run("r", &["lock", "--check"]).success();
    // Install: the blob is pulled by digest into the cache and verified.
    let run = t.run("r", &["install", "--locked", "--json"]);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
    assert_eq!(t.run("r", &["resolve", "--json"]).json()["rule"], "repo-store");
    // The blob deleted on the server: a clean error, nothing installed (fresh cache and store).
    let digest = format!("sha256:{}", pushed["sha256"].as_str().unwrap());
    let url = url::Url::parse(&format!("http://127.0.0.1:{}/v2/esys/a2c/blobs/{digest}", reg.port)).unwrap();
    let status = raw_http::request("DELETE", &url, "application/octet-stream", b"");
    assert_eq!(status, 202, "the registry deletes the blob");
    fs_err::remove_dir_all(t.path("r/.tools_local")).unwrap();
    let cache2 = t.path("cache2").display().to_string();
    let run = t.run_env(
        "r",
        &["install", "--locked"],
        &[("A2C_CACHE_DIR", cache2.as_str()), ("A2C_HTTP_RETRIES", "0")],
    );
    run.failure();
    assert!(run.stderr.contains("HTTP 404"), "{}", run.stderr);
    assert!(!t.path("r/.tools_local/esys/a2c/1.0.0").exists(), "nothing installed");
}

/// A tag moved on the server to a manifest whose layer differs from the lock: `lock` refuses
/// it ("the registry changed a locked bundle"), and install still pulls only the locked digest.
#[test]
fn a_manifest_whose_layer_differs_from_the_lock_is_refused() {
    let t = TestContext::new();
    let Some(reg) = registry(&t) else { return };
    let oci = reg.url("esys/a2c");
    for v in ["1.0.0", "1.0.1"] {
        t.method_tree(&format!("trees/{v}"), v);
        t.run(
            ".",
            &["pack", &format!("trees/{v}"), "--version", v, "--registry", &oci],
        )
        .success();
    }
    t.canonical_repo("r", "1.0.0");
    t.run("r", &["lock", "--registry", &oci]).success();
    // Re-point tag 1.0.0 at 1.0.1's layer, as a compromised registry could.
    let other = t.run(
        ".",
        &[
            "pack",
            "trees/1.0.1",
            "--version",
            "1.0.1",
            "--registry",
            &oci,
            "--json",
        ],
    );
    let other = other.json();
    let layer = format!("sha256:{}", other["sha256"].as_str().unwrap());
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": "application/vnd.esys.a2c.bundle.v1",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", "size": 2},
        "layers": [{"mediaType": "application/vnd.esys.a2c.bundle.v1.tar+gzip", "digest": layer, "size": other["size"]}],
    });
    let url = url::Url::parse(&format!("http://127.0.0.1:{}/v2/esys/a2c/manifests/1.0.0", reg.port)).unwrap();
    let status = raw_http::request(
        "PUT",
        &url,
        "application/vnd.oci.image.manifest.v1+json",
        &serde_json::to_vec(&manifest).unwrap(),
    );
    assert_eq!(status, 201);
    let run = t.run("r", &["lock", "--registry", &oci]);
    run.failure();
    assert!(
        run.stderr.contains("the registry changed a locked bundle"),
        "{}",
        run.stderr
    );
    // Install follows the lock's digest, never the moved tag.
    let run = t.run("r", &["install", "--locked", "--json"]);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
    let manifest_file = fs_err::read_to_string(t.path("r/.tools_local/esys/a2c/1.0.0/a2c-method.toml")).unwrap();
    assert!(manifest_file.contains("version = \"1.0.0\""), "{manifest_file}");
}

/// Basic auth (htpasswd) with credentials from docker's `config.json`: refused without them,
/// told apart with wrong ones, and never shown.
#[test]
fn basic_auth_with_docker_config_credentials() {
    let t = TestContext::new();
    let Ok(out) = Command::new("htpasswd").args(["-Bbn", "alice", "s3cret-pw"]).output() else {
        require_program("htpasswd (apt-get install apache2-utils)");
        return;
    };
    t.write("htpasswd", &String::from_utf8_lossy(&out.stdout));
    let auth = format!(
        "auth:\n  htpasswd:\n    realm: a2c-test\n    path: {}\n",
        t.path("htpasswd").display()
    );
    let Some(reg) = registry_with(&t, &auth) else { return };
    let oci = reg.url("esys/a2c");
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = ["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &oci];
    let run = t.run(".", &pack);
    run.failure();
    assert!(run.stderr.contains("HTTP 401"), "{}", run.stderr);
    let docker = |password: &str| {
        use base64::Engine;
        let token = base64::engine::general_purpose::STANDARD.encode(format!("alice:{password}"));
        t.write(
            "home/.docker/config.json",
            &format!(
                "{{\"auths\": {{\"127.0.0.1:{}\": {{\"auth\": \"{token}\"}}}}}}",
                reg.port
            ),
        );
    };
    docker("wrong-pw");
    let run = t.run(".", &pack);
    run.failure();
    assert!(run.stderr.contains("refused the credentials"), "{}", run.stderr);
    assert!(!run.stderr.contains("wrong-pw"), "{}", run.stderr);
    docker("s3cret-pw");
    t.run(".", &pack).success();
    t.canonical_repo("r", "1.0.0");
    t.run("r", &["lock", "--registry", &oci]).success();
    let run = t.run("r", &["install", "--json"]);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
    assert!(!run.stderr.contains("s3cret-pw"));
    let lock = fs_err::read_to_string(t.path("r/.tools/esys/a2c/a2c.lock")).unwrap();
    assert!(!lock.contains("alice") && !lock.contains("s3cret"), "{lock}");
}
