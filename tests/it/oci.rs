//! OCI distribution registries as a transport, against the real CNCF
//! distribution registry (Debian's `docker-registry`) started on loopback by each test.

use std::process::Command;

use crate::support::servers;
use crate::support::{Spawned, TestContext, layout, require_program};

struct Registry {
    _child: Spawned,
    port: u16,
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
    registry_at(t, std::net::Ipv4Addr::LOCALHOST.into(), "", extra)
}

/// [`registry`] listening on `ip`, with extra `http:` settings (such as `tls:`) and extra
/// top-level configuration.
fn registry_at(t: &TestContext, ip: std::net::IpAddr, http_extra: &str, extra: &str) -> Option<Registry> {
    registry_logged(t, ip, http_extra, extra, "error")
}

/// [`registry_at`] with its log at `level` written to the test's `oci.log` (at `info`, one line per
/// request: what a test counts requests with).
fn registry_logged(
    t: &TestContext,
    ip: std::net::IpAddr,
    http_extra: &str,
    extra: &str,
    level: &str,
) -> Option<Registry> {
    if Command::new("docker-registry").arg("--version").output().is_err() {
        require_program("docker-registry (apt-get install docker-registry)");
        return None;
    }
    let dir = t.path("oci");
    fs_err::create_dir_all(dir.join("storage")).unwrap();
    let addr = |ports: &[u16]| std::net::SocketAddr::new(ip, ports[0]);
    let command = |ports: &[u16]| {
        let config = dir.join("config.yml");
        fs_err::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: {level}\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {}\n{http_extra}{extra}",
                dir.join("storage").display(),
                addr(ports)
            ),
        )
        .unwrap();
        let mut serve = Command::new("docker-registry");
        serve.arg("serve").arg(&config);
        serve
    };
    let started = servers::start(t, "oci", 1, command, |child, ports| {
        child.ready_within(10, || std::net::TcpStream::connect(addr(ports)).is_ok())
    });
    Some(Registry {
        _child: started.child,
        port: started.ports[0],
    })
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

    /// A GET with an `Accept` header: the status and the body (the registry answers with a
    /// Content-Length and closes, as asked).
    pub fn get(url: &url::Url, accept: &str) -> (u16, Vec<u8>) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect((url.host_str().unwrap(), url.port().unwrap())).unwrap();
        write!(
            s,
            "GET {} HTTP/1.1\r\nHost: {}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n",
            url.path(),
            url.host_str().unwrap(),
        )
        .unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&out[..split]).into_owned();
        let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        (status, out[split + 4..].to_vec())
    }
}

#[test]
fn push_lock_and_install_through_a_real_oci_registry() {
    let t = TestContext::new();
    let Some(reg) = registry(&t) else { return };
    let oci = reg.url("esys/a2c");
    t.method_tree("trees/1.0.0", "1.0.0");
    let push = crate::support::pack_1_0_0(&oci, &["--json"]);
    // Push, and the same bytes again (a no-op); the same tree into a file registry for the digest.
    let run = t.run(".", &push);
    let pushed = run.json();
    assert_eq!(pushed["changed"], true);
    crate::cli_surface::validate("pack-oci", &pushed);
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
    insta::assert_snapshot!(run.transcript());
    // Lock: the layer's digest and size, the manifest digest as the source reference.
    t.canonical_repo("r", "1.0.0");
    t.run("r", &["lock", "--registry", &oci]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("r"))).unwrap();
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
    insta::assert_snapshot!(run.transcript());
    assert!(!t.path(&layout::installed("r", "1.0.0")).exists(), "nothing installed");
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
    let other = t.pack_run("trees/1.0.1", "1.0.1", &oci, &["--json"]);
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
    insta::assert_snapshot!(run.error_transcript());
    // Install follows the lock's digest, never the moved tag.
    let run = t.run("r", &["install", "--locked", "--json"]);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
    let manifest_file =
        fs_err::read_to_string(t.path(&layout::installed_file("r", "1.0.0", "a2c-method.toml"))).unwrap();
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
    insta::assert_snapshot!(run.transcript());
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
    insta::assert_snapshot!(run.transcript());
    docker("s3cret-pw");
    t.run(".", &pack).success();
    t.canonical_repo("r", "1.0.0");
    t.run("r", &["lock", "--registry", &oci]).success();
    // Installing the locked `oci://` source without them: the OCI kind's words (docker login),
    // though the download is a plain blob URL to the network.
    fs_err::remove_file(t.path("home/.docker/config.json")).unwrap();
    let run = t.run_env("r", &["install"], &[("A2C_HTTP_RETRIES", "0")]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    docker("s3cret-pw");
    let run = t.run("r", &["install", "--json"]);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
    insta::assert_snapshot!(run.transcript());
    let lock = fs_err::read_to_string(t.path(&layout::lock("r"))).unwrap();
    assert!(!lock.contains("alice") && !lock.contains("s3cret"), "{lock}");
    // docker's credential helper (`credsStore`): asked for the host only when the registry
    // answers 401, its answer never shown.
    t.write(
        "bin/docker-credential-a2ctest",
        &format!(
            "#!/bin/sh\nread host\necho \"$1 $host\" >> {}\necho '{{\"ServerURL\":\"'$host'\",\"Username\":\"alice\",\"Secret\":\"s3cret-pw\"}}'\n",
            t.path("helper.log").display()
        ),
    );
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(
            t.path("bin/docker-credential-a2ctest"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    t.write("home/.docker/config.json", "{\"credsStore\": \"a2ctest\"}");
    let path = format!("{}:{}", t.path("bin").display(), std::env::var("PATH").unwrap());
    t.method_tree("trees/1.0.1", "1.0.1");
    let run = t.ok_env(
        ".",
        &["pack", "trees/1.0.1", "--version", "1.0.1", "--registry", &oci],
        &[("PATH", &path)],
    );
    insta::assert_snapshot!(run.transcript());
    let log = fs_err::read_to_string(t.path("helper.log")).unwrap();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        [format!("get 127.0.0.1:{}", reg.port)],
        "asked once, for the host"
    );
}

/// A minimal token endpoint for the registry's `auth: token:` mode: it signs JWTs (ES256, the
/// certificate in `x5c`) with a key whose self-signed certificate the registry trusts. Anyone
/// gets `pull`; `push` needs `alice:s3cret-pw` (basic) or the refresh token `refresh-4242`.
struct TokenServer {
    port: u16,
    /// Each request: the method, whether it carried credentials that checked out, the scope.
    seen: crate::support::Recorded<(String, bool, String)>,
}

impl TokenServer {
    /// Starts the endpoint and writes the registry's `auth:` section's certificate to `cert`.
    fn start(cert: &std::path::Path) -> Self {
        use base64::Engine;
        use std::io::{BufRead, BufReader, Read, Write};
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["a2c-token".to_string()]).unwrap();
        params.distinguished_name.push(rcgen::DnType::CommonName, "a2c-token");
        let certificate = params.self_signed(&key).unwrap();
        fs_err::write(cert, certificate.pem()).unwrap();
        let x5c = base64::engine::general_purpose::STANDARD.encode(certificate.der());
        let rng = ring::rand::SystemRandom::new();
        let signer = ring::signature::EcdsaKeyPair::from_pkcs8(
            &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &key.serialize_der(),
            &rng,
        )
        .unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = crate::support::Recorded::default();
        let log = seen.clone();
        std::thread::spawn(move || {
            let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let mut parts = line.split_whitespace();
                let method = parts.next().unwrap_or_default().to_string();
                let target = parts.next().unwrap_or_default().to_string();
                let (mut length, mut authorization) = (0usize, None);
                loop {
                    let mut h = String::new();
                    reader.read_line(&mut h).unwrap();
                    if h.trim().is_empty() {
                        break;
                    }
                    let (k, v) = h.split_once(':').unwrap();
                    match k.to_ascii_lowercase().as_str() {
                        "content-length" => length = v.trim().parse().unwrap(),
                        "authorization" => authorization = Some(v.trim().to_string()),
                        _ => {}
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let query = url::Url::parse(&format!("http://x{target}")).unwrap();
                let form = String::from_utf8_lossy(&body).into_owned();
                let pairs: Vec<(String, String)> = match method.as_str() {
                    "POST" => url::form_urlencoded::parse(form.as_bytes()).into_owned().collect(),
                    _ => query.query_pairs().into_owned().collect(),
                };
                let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
                let basic = format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode("alice:s3cret-pw")
                );
                let good = authorization.as_deref() == Some(basic.as_str())
                    || get("refresh_token").as_deref() == Some("refresh-4242");
                let presented = authorization.is_some() || get("refresh_token").is_some();
                let scope = get("scope").unwrap_or_default();
                log.push((method.clone(), good, scope.clone()));
                let reply = if presented && !good {
                    "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
                } else {
                    let access: Vec<serde_json::Value> = scope
                        .split(' ')
                        .filter_map(|s| {
                            let mut p = s.splitn(3, ':');
                            let (kind, name, actions) = (p.next()?, p.next()?, p.next()?);
                            let actions: Vec<&str> = actions.split(',').filter(|a| *a == "pull" || good).collect();
                            Some(serde_json::json!({"type": kind, "name": name, "actions": actions}))
                        })
                        .collect();
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_secs();
                    let header = serde_json::json!({"typ": "JWT", "alg": "ES256", "x5c": [x5c]});
                    let claims = serde_json::json!({
                        "iss": "a2c-test-issuer", "sub": "alice", "aud": "a2c-test",
                        "exp": now + 300, "nbf": now - 10, "iat": now - 10, "jti": format!("{now}"),
                        "access": access,
                    });
                    let input = format!("{}.{}", b64.encode(header.to_string()), b64.encode(claims.to_string()));
                    let signature = signer.sign(&rng, input.as_bytes()).unwrap();
                    let jwt = format!("{input}.{}", b64.encode(signature.as_ref()));
                    let field = if method == "POST" { "access_token" } else { "token" };
                    let doc = serde_json::json!({ field: jwt }).to_string();
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{doc}",
                        doc.len()
                    )
                };
                let _ = stream.write_all(reply.as_bytes());
            }
        });
        Self { port, seen }
    }
}

/// The bearer-token flow against the registry's token auth: anonymous pulls, pushes with
/// `A2C_REGISTRY_AUTH` (basic at the token endpoint) or docker's `identitytoken` (an OAuth2
/// refresh token), and no credential in any output, lock or installed file.
#[test]
fn token_auth_anonymous_pull_and_credentialed_push() {
    let t = TestContext::new();
    if Command::new("docker-registry").arg("--version").output().is_err() {
        require_program("docker-registry (apt-get install docker-registry)");
        return;
    }
    let tokens = TokenServer::start(&t.path("token.pem"));
    let auth = format!(
        "auth:\n  token:\n    realm: http://127.0.0.1:{}/token\n    service: a2c-test\n    issuer: a2c-test-issuer\n    rootcertbundle: {}\n",
        tokens.port,
        t.path("token.pem").display()
    );
    let Some(reg) = registry_with(&t, &auth) else { return };
    let oci = reg.url("esys/a2c");
    t.method_tree("trees/1.0.0", "1.0.0");
    t.method_tree("trees/1.0.1", "1.0.1");
    let run_pack = |v: &str, env: &[(&str, &str)]| {
        let tree = format!("trees/{v}");
        t.run_env(".", &["pack", &tree, "--version", v, "--registry", &oci], env)
    };
    // Anonymous: the endpoint grants pull only, so the push is refused, with a hint that
    // names docker login and the CI variable.
    let run = run_pack("1.0.0", &[]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    // Wrong credentials are told apart.
    let run = run_pack("1.0.0", &[("A2C_REGISTRY_AUTH", "alice:wrong-pw")]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    // The CI variable: basic credentials at the token endpoint, bound by --registry.
    let run = t.run_env(
        ".",
        &crate::support::pack_1_0_0(&oci, &["--json", "-v"]),
        &[("A2C_REGISTRY_AUTH", "alice:s3cret-pw")],
    );
    run.success();
    // As CI keeps it (`--json`, `-v`): neither the password nor the token it got is shown.
    run.shows_no_credential(&["alice:s3cret-pw", "s3cret-pw"]);
    // How many token requests were as `what` says.
    let asked = |what: fn(&(String, bool, String)) -> bool| tokens.seen.all().iter().filter(|s| what(s)).count();
    let pushes = asked(|(m, good, scope)| m == "GET" && *good && scope.contains("push"));
    assert!(pushes > 0, "{:?}", tokens.seen.all());
    // docker's identitytoken: an OAuth2 refresh-token grant (POST).
    t.write(
        "home/.docker/config.json",
        &format!(
            "{{\"auths\": {{\"127.0.0.1:{}\": {{\"auth\": \"\", \"identitytoken\": \"refresh-4242\"}}}}}}",
            reg.port
        ),
    );
    let run = run_pack("1.0.1", &[]);
    run.success();
    let good_posts = || asked(|(m, good, _)| m == "POST" && *good);
    assert!(good_posts() > 0, "{:?}", tokens.seen.all());
    // A credential helper by host (`credHelpers`) that holds an identity token (`<token>`).
    t.write(
        "bin/docker-credential-a2ctok",
        "#!/bin/sh\nread host\necho '{\"ServerURL\":\"'$host'\",\"Username\":\"<token>\",\"Secret\":\"refresh-4242\"}'\n",
    );
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(
            t.path("bin/docker-credential-a2ctok"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    t.write(
        "home/.docker/config.json",
        &format!("{{\"credHelpers\": {{\"127.0.0.1:{}\": \"a2ctok\"}}}}", reg.port),
    );
    let posts = good_posts();
    let path = format!("{}:{}", t.path("bin").display(), std::env::var("PATH").unwrap());
    t.method_tree("trees/1.0.2", "1.0.2");
    t.ok_env(
        ".",
        &["pack", "trees/1.0.2", "--version", "1.0.2", "--registry", &oci],
        &[("PATH", &path)],
    );
    assert!(good_posts() > posts);
    fs_err::remove_file(t.path("home/.docker/config.json")).unwrap();
    // Anonymous lock and install: pull tokens, blobs by digest.
    t.canonical_repo("r", "1.0.1");
    let lock = t.run("r", &["lock", "--registry", &oci]);
    lock.success();
    let run = t.run("r", &["install", "--locked", "--json"]);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.1");
    // No credential anywhere: outputs, the lock, the installed tree and its receipt.
    let lock = fs_err::read_to_string(t.path(&layout::lock("r"))).unwrap();
    for secret in ["s3cret-pw", "refresh-4242", "eyJ"] {
        assert!(!lock.contains(secret), "{lock}");
        assert!(!run.stdout.contains(secret) && !run.stderr.contains(secret));
        let out = Command::new("grep")
            .args(["-rl", secret])
            .arg(t.path("r"))
            .output()
            .unwrap();
        assert!(
            out.stdout.is_empty(),
            "{secret} in {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// The machine's host name and an IPv4 address it resolves to: a name that is not a loopback
/// name, so that `oci://` speaks HTTPS to it although it is this machine.
fn host_name() -> Option<(String, std::net::IpAddr)> {
    let host = fs_err::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_ascii_lowercase();
    let ip = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), 0))
        .ok()
        .and_then(|mut a| a.find(|a| a.is_ipv4()))
        .map(|a| a.ip());
    match ip.filter(|_| host != "localhost") {
        Some(ip) => Some((host, ip)),
        None => {
            require_program(&format!(
                "a resolvable host name (`{host}` does not resolve: add it to /etc/hosts)"
            ));
            None
        }
    }
}

/// A registry that is not loopback by name speaks HTTPS unless the user opts in to plain
/// HTTP: `--plain-http` for the run, or `A2C_OCI_PLAIN_HTTP` for named hosts.
#[test]
fn plain_http_to_a_non_loopback_name_needs_an_opt_in() {
    let t = TestContext::new();
    let Some((host, ip)) = host_name() else { return };
    let Some(reg) = registry_at(&t, ip, "", "") else { return };
    let oci = format!("oci://{host}:{}/esys/a2c", reg.port);
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = ["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &oci];
    let run = t.run_env(".", &pack, &[("A2C_HTTP_RETRIES", "0")]);
    run.failure();
    run.says(&format!("https://{host}:"));
    insta::assert_snapshot!(run.transcript());
    let mut with_flag = pack.to_vec();
    with_flag.push("--plain-http");
    t.run(".", &with_flag).success();
    t.canonical_repo("r", "1.0.0");
    let named = format!("{host}:{}", reg.port);
    t.ok_env("r", &["lock", "--registry", &oci], &[("A2C_OCI_PLAIN_HTTP", &named)]);
    let run = t.run_env("r", &["install", "--json"], &[("A2C_OCI_PLAIN_HTTP", &named)]);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
}

/// TLS with a private CA: the registry serves HTTPS under the machine's host name (not a
/// loopback name, so `oci://` speaks HTTPS to it); a2c trusts it only through `A2C_CA_BUNDLE`.
#[test]
fn tls_registry_with_a_test_ca() {
    let t = TestContext::new();
    let Some((host, ip)) = host_name() else { return };
    let tls = crate::support::http_server::TestCa::new(&[host.as_str()], &[]).write(&t.path("tls"));
    let Some(reg) = registry_at(&t, ip, &tls, "") else {
        return;
    };
    let oci = format!("oci://{host}:{}/esys/a2c", reg.port);
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = ["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &oci];
    // Without the CA: a TLS error that says how to trust a private CA.
    let run = t.run_env(".", &pack, &[("A2C_HTTP_RETRIES", "0")]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    let ca = t.path("tls/ca.pem").display().to_string();
    let with_ca = [("A2C_CA_BUNDLE", ca.as_str())];
    t.run_env(".", &pack, &with_ca).success();
    t.canonical_repo("r", "1.0.0");
    t.run_env("r", &["lock", "--registry", &oci], &with_ca).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("r"))).unwrap();
    assert!(lock.contains(&format!("source = \"{oci}@sha256:")), "{lock}");
    let run = t.run_env("r", &["install", "--locked", "--json"], &with_ca);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
}

/// Signed indexes over OCI: the index travels as the `a2c-index` artifact (index layer plus
/// minisign signature layer); with keys pinned only its versions count, and a yank, a new
/// version or another signer is caught as for file registries.
#[test]
fn signed_index_artifact_over_oci() {
    let t = TestContext::new();
    let Some(reg) = registry(&t) else { return };
    let oci = reg.url("esys/a2c");
    let keygen = |name: &str| {
        let run = t.run(".", &["key", "generate", "--out", name, "--no-password", "--json"]);
        run.json()["public_key"].as_str().unwrap().to_string()
    };
    let public = keygen("keys/a2c.key");
    let push = |v: &str, sign: Option<&str>| {
        let tree = format!("trees/{v}");
        t.method_tree(&tree, v);
        let mut args = vec!["pack", &tree, "--version", v, "--registry", &oci];
        if let Some(key) = sign {
            args.extend(["--sign", key]);
        }
        t.run(".", &args)
    };
    push("1.0.0", Some("keys/a2c.key")).success();
    t.superbuild(
        "w",
        &format!("members: [\"p/*\"]\nregistry: {oci}\ntrusted_keys: [\"{public}\"]\n"),
    );
    t.canonical_repo("w/p/app", "1.0.0");
    t.run("w", &["lock"]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(lock.contains(&format!("source = \"{oci}@sha256:")), "{lock}");
    assert!(lock.contains("index_serial = 1"), "{lock}");
    t.run("w", &["install"]).success();
    // A version pushed without --sign: pack warns, and the signed index does not list it.
    let run = push("1.0.1", None);
    run.success();
    run.says("is signed and does not list 1.0.1");
    t.canonical_repo("w/p/lib", "1.0.1");
    let run = t.run("w", &["lock"]);
    insta::assert_snapshot!(run.error_transcript());
    let run = t.run(".", &["sign", "--registry", &oci, "--key", "keys/a2c.key", "--json"]);
    assert_eq!(run.json()["versions"], 2);
    // The artifact as the spec says (registry-spec §6.1): its index layer validates against
    // the index schema, entries `@sha256:<manifest digest>`.
    let api = |tail: &str| url::Url::parse(&format!("http://127.0.0.1:{}/v2/esys/a2c/{tail}", reg.port)).unwrap();
    let (status, body) = raw_http::get(
        &api("manifests/a2c-index"),
        "application/vnd.oci.image.manifest.v1+json",
    );
    assert_eq!(status, 200);
    let manifest: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(manifest["artifactType"], "application/vnd.esys.a2c.index.v1");
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers[0]["mediaType"], "application/vnd.esys.a2c.index.v1+json");
    assert_eq!(layers[1]["mediaType"], "application/vnd.esys.a2c.index.v1.minisig");
    let (_, index) = raw_http::get(&api(&format!("blobs/{}", layers[0]["digest"].as_str().unwrap())), "*/*");
    let index: serde_json::Value = serde_json::from_slice(&index).unwrap();
    let (validator, _) = crate::spec::validators();
    assert!(validator.is_valid(&index), "{index}");
    assert_eq!(index["serial"], 2);
    assert!(
        index["versions"][0]["url"].as_str().unwrap().starts_with("@sha256:"),
        "{index}"
    );
    t.run("w", &["lock"]).success();
    // A yank without the key leaves the index unsigned: refused while keys are pinned.
    let run = t.ok(".", &["yank", "1.0.0", "--registry", &oci]);
    run.says("it is now unsigned");
    let run = t.run("w", &["lock", "--update"]);
    run.failure();
    run.says("not signed");
    // Signed by another key: refused, naming it.
    keygen("keys/other.key");
    t.run(
        ".",
        &[
            "yank",
            "1.0.0",
            "--registry",
            &oci,
            "--undo",
            "--sign",
            "keys/other.key",
        ],
    )
    .success();
    let run = t.run("w", &["lock", "--update"]);
    insta::assert_snapshot!(run.error_transcript());
    // Re-signed with the pinned key, the yank is seen: a new lock refuses 1.0.0.
    t.run(".", &["yank", "1.0.0", "--registry", &oci, "--sign", "keys/a2c.key"])
        .success();
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    let run = t.run("w", &["lock"]);
    run.failure();
    run.says("is yanked");
}

/// A push streams the bundle from the packed file: pushing a 32 MiB (incompressible) bundle
/// peaks at less than half the bundle's size above a push of a tiny one, measured in the
/// same test with /usr/bin/time (a fixed cap broke as the binary grew: 27.5-29 MiB at 28).
#[test]
fn a_push_streams_the_bundle_in_bounded_memory() {
    let t = TestContext::new();
    let Some(reg) = registry(&t) else { return };
    let oci = reg.url("esys/a2c");
    t.method_tree("trees/0.9.0", "0.9.0");
    let push = |version: &str| {
        let tree = format!("trees/{version}");
        t.run_measured(
            ".",
            &["pack", &tree, "--version", version, "--registry", &oci, "--json"],
        )
    };
    let Some((small, base)) = push("0.9.0") else { return };
    assert_eq!(
        small.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&small.stderr)
    );
    t.method_tree("trees/1.0.0", "1.0.0");
    t.write_noise("trees/1.0.0/rules/noise.bin", 32 << 20, 0x9e3779b97f4a7c15u64);
    let Some((out, kib)) = push("1.0.0") else { return };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let pushed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(pushed["size"].as_u64().unwrap() > 32 << 20, "{pushed}");
    assert!(
        kib < base + 16 * 1024,
        "peak RSS {kib} KiB for a 32 MiB bundle, {base} KiB for a tiny one"
    );
}

/// Three members pinning three versions: one install pulls the three blobs (in parallel, the
/// same download path as HTTP) from the registry the marker names, each verified.
#[test]
fn one_install_pulls_every_pinned_version_from_the_marker_registry() {
    let t = TestContext::new();
    let Some(reg) = registry(&t) else { return };
    let oci = reg.url("esys/a2c");
    let versions = ["1.0.0", "1.1.0", "2.0.0"];
    for v in versions {
        let tree = format!("trees/{v}");
        t.method_tree(&tree, v);
        t.run(".", &["pack", &tree, "--version", v, "--registry", &oci])
            .success();
    }
    t.superbuild("w", &format!("members: [\"p/*\"]\nregistry: {oci}\n"));
    for (i, v) in versions.iter().enumerate() {
        t.canonical_repo(&format!("w/p/m{i}"), v);
    }
    t.run("w", &["lock"]).success();
    let run = t.run("w", &["install", "--locked", "--json"]);
    let doc = run.json();
    let mut installed = crate::support::strings_of(&doc, "installed", "version");
    installed.sort();
    assert_eq!(installed, versions);
    for v in versions {
        assert!(
            fs_err::read_to_string(t.path(&layout::installed_file("w", v, "a2c-method.toml")))
                .unwrap()
                .contains(&format!("version = \"{v}\""))
        );
    }
}

/// A registry that lists 1,200 version tags: `lock` reads only the manifests of the versions
/// the members pin, and a full listing (`outdated`) reads at most the newest 1,000 and says so.
#[test]
fn a_long_tag_list_is_read_only_as_far_as_needed_and_capped() {
    let t = TestContext::new();
    let Some(reg) = registry_logged(&t, std::net::Ipv4Addr::LOCALHOST.into(), "", "", "info") else {
        return;
    };
    let oci = reg.url("esys/a2c");
    t.method_tree("trees/1.0.0", "1.0.0");
    t.run(".", &["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &oci])
        .success();
    // 1,200 more version tags on the same manifest, as another client could push them.
    let base = format!("http://127.0.0.1:{}/v2/esys/a2c/manifests/", reg.port);
    let media = "application/vnd.oci.image.manifest.v1+json";
    let (status, manifest) = raw_http::get(&url::Url::parse(&format!("{base}1.0.0")).unwrap(), media);
    assert_eq!(status, 200);
    for i in 0..1200 {
        let url = url::Url::parse(&format!("{base}9.{}.{}", i / 100, i % 100)).unwrap();
        assert_eq!(raw_http::request("PUT", &url, media, &manifest), 201);
    }
    let log = t.path("oci.log");
    let manifest_gets = || {
        fs_err::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|l| l.contains("GET /v2/esys/a2c/manifests/") && l.contains("response completed"))
            .count()
    };
    t.canonical_repo("r", "1.0.0");
    let before = manifest_gets();
    t.run("r", &["lock", "--registry", &oci]).success();
    let read = manifest_gets() - before;
    assert!(read <= 3, "lock read {read} manifests for one pinned version");
    // A full listing stops at the cap and says so.
    let before = manifest_gets();
    let run = t.run_env("r", &["outdated"], &[("A2C_REGISTRY", oci.as_str())]);
    let read = manifest_gets() - before;
    assert!(read <= 1003, "outdated read {read} manifests");
    assert!(
        run.stderr
            .contains("lists 1201 version tags; only the newest 1000 were read")
            || run
                .stdout
                .contains("lists 1201 version tags; only the newest 1000 were read"),
        "{}",
        run.transcript()
    );
}

/// A registry that speaks TLS on 127.0.0.1 (an `ssh -L` or `kubectl port-forward` tunnel to a
/// private-CA registry): a2c starts in plain HTTP as for any loopback registry, recognises the
/// registry's "HTTPS server" 400, and speaks HTTPS to it from then on, checking its certificate.
#[test]
fn a_tls_registry_on_loopback_is_spoken_to_in_https() {
    let t = TestContext::new();
    let tls = crate::support::http_server::TestCa::new(&["localhost"], &["127.0.0.1"]).write(&t.path("tls"));
    let Some(reg) = registry_at(&t, std::net::Ipv4Addr::LOCALHOST.into(), &tls, "") else {
        return;
    };
    let oci = reg.url("esys/a2c");
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = ["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &oci];
    // Without the CA: HTTPS is spoken, and the certificate is refused, saying how to trust it.
    let run = t.run_env(".", &pack, &[("A2C_HTTP_RETRIES", "0")]);
    insta::assert_snapshot!(run.error_transcript());
    let ca = t.path("tls/ca.pem").display().to_string();
    let with_ca = [("A2C_CA_BUNDLE", ca.as_str())];
    t.run_env(".", &pack, &with_ca).success();
    t.canonical_repo("r", "1.0.0");
    t.run_env("r", &["lock", "--registry", &oci], &with_ca).success();
    let run = t.run_env("r", &["install", "--locked", "--json"], &with_ca);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
}

/// A version tag another client pushed (an `oras push` without `--artifact-type`) is not taken
/// for a bundle, and is named with what it carries: in the error when a member pins it, and
/// under `-v`. What a2c pushes carries the layer's file name for other clients.
#[test]
fn tags_other_clients_pushed_are_named_and_a2c_layers_have_titles() {
    let t = TestContext::new();
    let Some(reg) = registry(&t) else { return };
    let oci = reg.url("esys/a2c");
    t.method_tree("trees/2.0.0", "2.0.0");
    t.run(".", &["pack", "trees/2.0.0", "--version", "2.0.0", "--registry", &oci])
        .success();
    let base = format!("http://127.0.0.1:{}/v2/esys/a2c/manifests/", reg.port);
    let media = "application/vnd.oci.image.manifest.v1+json";
    let (status, ours) = raw_http::get(&url::Url::parse(&format!("{base}2.0.0")).unwrap(), media);
    assert_eq!(status, 200);
    let ours: serde_json::Value = serde_json::from_slice(&ours).unwrap();
    assert_eq!(
        ours["layers"][0]["annotations"]["org.opencontainers.image.title"],
        "a2c-2.0.0.tar.gz"
    );
    // The same blob under the tag 1.0.0, as oras pushes a file without --artifact-type.
    let foreign = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": media,
        "config": ours["config"],
        "layers": [{
            "mediaType": "application/vnd.oci.image.layer.v1.tar",
            "digest": ours["layers"][0]["digest"],
            "size": ours["layers"][0]["size"],
            "annotations": {"org.opencontainers.image.title": "method-1.0.0.tgz"},
        }],
    });
    let url = url::Url::parse(&format!("{base}1.0.0")).unwrap();
    assert_eq!(
        raw_http::request("PUT", &url, media, foreign.to_string().as_bytes()),
        201
    );
    t.canonical_repo("r", "1.0.0");
    let run = t.run("r", &["lock", "--registry", &oci]);
    insta::assert_snapshot!(run.error_transcript());
    // Pinned elsewhere, the tag is not even read: only the pinned versions' manifests are.
    t.canonical_repo("r2", "2.0.0");
    let run = t.ok("r2", &["-v", "lock", "--registry", &oci]);
    insta::assert_snapshot!(run.transcript());
}
