//! Proxies — every NO_PROXY form against a real forward proxy (tinyproxy) on
//! loopback, and a proxy that wants credentials. A request that went through the proxy carries
//! its `Via` header when it reaches the test's registry server.

use std::path::PathBuf;
use std::process::Command;

use crate::support::http_server::Server;
use crate::support::servers;
use crate::support::{Spawned, TestContext, require_program};

struct Tinyproxy {
    _child: Spawned,
    port: u16,
    log: PathBuf,
}

/// Starts tinyproxy on a free loopback port, or `None` (after the SKIPPED line) without it.
fn tinyproxy(t: &TestContext, extra: &str) -> Option<Tinyproxy> {
    if Command::new("tinyproxy").arg("-v").output().is_err() {
        require_program("tinyproxy (apt-get install tinyproxy)");
        return None;
    }
    let dir = t.path("tinyproxy");
    fs_err::create_dir_all(&dir).unwrap();
    // Its own log (the `LogFile` its configuration names), one a port.
    let log = |ports: &[u16]| dir.join(format!("{}.log", ports[0]));
    let command = |ports: &[u16]| {
        let (port, conf) = (ports[0], dir.join(format!("{}.conf", ports[0])));
        fs_err::write(
            &conf,
            format!(
                "Port {port}\nListen 127.0.0.1\nTimeout 30\nLogFile \"{}\"\nLogLevel Info\nMaxClients 20\nAllow 127.0.0.1\nPidFile \"{}\"\n{extra}",
                log(ports).display(),
                dir.join(format!("{port}.pid")).display()
            ),
        )
        .unwrap();
        let mut serve = Command::new("tinyproxy");
        serve.args(["-d", "-c"]).arg(&conf);
        serve
    };
    // Its log says it bound the port: a connection alone could reach another test's server
    // that took the same free port first.
    let started = servers::start(t, "tinyproxy", 1, command, |child, ports| {
        child.ready_within(10, || {
            let bound = std::fs::read_to_string(log(ports)).is_ok_and(|l| l.contains("Accepting connections"));
            bound && std::net::TcpStream::connect(("127.0.0.1", ports[0])).is_ok()
        })
    });
    Some(Tinyproxy {
        log: log(&started.ports),
        _child: started.child,
        port: started.ports[0],
    })
}

/// Locks `r` against `registry` with `env`; `true` when the index request went through the proxy.
fn via_proxy(t: &TestContext, server: &Server, registry: &str, env: &[(&str, &str)]) -> bool {
    let before = server.count();
    let run = t.ok_env("r", &["lock", "--registry", registry, "--update"], env);
    let requests = server.requests();
    let index = requests[before..]
        .iter()
        .find(|r| r.path == "/index/esys/a2c.json")
        .unwrap_or_else(|| panic!("no index request: {}", run.stderr));
    index.headers.get("via").is_some_and(|v| v.contains("tinyproxy"))
}

#[test]
fn every_no_proxy_form_against_a_real_proxy() {
    let t = TestContext::new();
    let Some(proxy) = tinyproxy(&t, "") else { return };
    t.canonical_repo("r", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    let server = Server::start(t.path("reg"));
    let p = format!("http://127.0.0.1:{}", proxy.port);
    let ip = server.url();
    let name = format!("http://localhost:{}/", server.port);
    let port = server.port.to_string();
    let other = (server.port + 1).to_string();
    // No NO_PROXY: through the proxy (and the proxy's log saw it).
    assert!(via_proxy(&t, &server, &ip, &[("HTTP_PROXY", &p)]));
    assert!(via_proxy(&t, &server, &name, &[("http_proxy", &p)]));
    let log = fs_err::read_to_string(&proxy.log).unwrap_or_default();
    assert!(log.contains("index/esys/a2c.json"), "{log}");
    for (no_proxy, registry, direct) in [
        ("*".to_string(), &ip, true),
        ("*".to_string(), &name, true),
        ("127.0.0.1".to_string(), &ip, true),
        (format!("127.0.0.1:{port}"), &ip, true),
        (format!("127.0.0.1:{other}"), &ip, false),
        ("127.0.0.0/8".to_string(), &ip, true),
        ("10.0.0.0/8".to_string(), &ip, false),
        ("localhost".to_string(), &name, true),
        (".localhost".to_string(), &name, true),
        (format!("localhost:{port}"), &name, true),
        (format!("localhost:{other}"), &name, false),
        ("calhost".to_string(), &name, false),
        ("example.org, 127.0.0.1".to_string(), &ip, true),
        ("example.org".to_string(), &ip, false),
    ] {
        for var in ["NO_PROXY", "no_proxy"] {
            let went = via_proxy(&t, &server, registry, &[("HTTP_PROXY", &p), (var, &no_proxy)]);
            assert_eq!(went, !direct, "{var}={no_proxy} for {registry}");
        }
    }
}

#[test]
fn a_proxy_that_wants_other_credentials_is_named_with_its_407() {
    let t = TestContext::new();
    let Some(proxy) = tinyproxy(&t, "BasicAuth reader s3cret\n") else {
        return;
    };
    t.canonical_repo("r", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    let server = Server::start(t.path("reg"));
    // Without credentials tinyproxy answers 407 (with wrong ones, tinyproxy 1.11 answers 401
    // with WWW-Authenticate, which cannot be told apart from the registry's own 401).
    let none = format!("http://127.0.0.1:{}", proxy.port);
    let run = t.run_env("r", &["lock", "--registry", &server.url()], &[("HTTP_PROXY", &none)]);
    insta::assert_snapshot!(run.error_transcript());
    run.says("http://user:password@host:port");
    let wrong = format!("http://reader:wrong-pw@127.0.0.1:{}", proxy.port);
    let run = t.run_env("r", &["lock", "--registry", &server.url()], &[("HTTP_PROXY", &wrong)]);
    insta::assert_snapshot!(run.error_transcript());
    let right = format!("http://reader:s3cret@127.0.0.1:{}", proxy.port);
    t.ok_env("r", &["lock", "--registry", &server.url()], &[("HTTP_PROXY", &right)]);
}

/// A loopback registry's token never travels in clear text through a proxy (which may be on
/// another machine): it is held back, the error says why, and NO_PROXY makes it go directly.
#[test]
fn a_loopback_credential_never_rides_a_plain_http_proxy() {
    let t = TestContext::new();
    let Some(proxy) = tinyproxy(&t, "") else { return };
    t.canonical_repo("r", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    let server = Server::start(t.path("reg"));
    server.require_token("s3cret");
    let p = format!("http://127.0.0.1:{}", proxy.port);
    for (var, value) in [("A2C_REGISTRY_TOKEN", "s3cret"), ("A2C_REGISTRY_AUTH", "alice:s3cret")] {
        let run = t.run_env(
            "r",
            &["lock", "--registry", &server.url()],
            &[("HTTP_PROXY", p.as_str()), (var, value)],
        );
        run.fails_with(&["was held back", "through the proxy `127.0.0.1:", "NO_PROXY"]);
        let proxied: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.headers.contains_key("via"))
            .collect();
        assert!(!proxied.is_empty(), "{var}: the request did not go through the proxy");
        assert!(
            proxied.iter().all(|r| !r.headers.contains_key("authorization")),
            "{var}: a credential went through the proxy"
        );
    }
    // docker's `credsStore` names a helper for every host, not a credential for this one:
    // without a credential, the 401 is the registry's, not a credential held back.
    t.write("home/.docker/config.json", "{\"credsStore\": \"a2cnone\"}");
    let run = t.run_env("r", &["lock", "--registry", &server.url()], &[("HTTP_PROXY", &p)]);
    insta::assert_snapshot!(run.error_transcript());
    assert!(!run.stderr.contains("held back"), "{}", run.stderr);
    // Reached directly, the token goes.
    t.ok_env(
        "r",
        &["lock", "--registry", &server.url()],
        &[
            ("HTTP_PROXY", p.as_str()),
            ("NO_PROXY", "127.0.0.1"),
            ("A2C_REGISTRY_TOKEN", "s3cret"),
        ],
    );
}

/// A Python package index is reached through the proxy like any registry — its
/// project page, the `HEAD` and the download of each wheel.
#[test]
fn a_package_index_is_read_through_the_proxy() {
    let t = TestContext::new();
    let Some(proxy) = tinyproxy(&t, "") else { return };
    crate::pypi::hosted_page(&t, "site", "1.0.0");
    let server = Server::start(t.path("site"));
    t.canonical_repo("r", "1.0.0");
    let registry = format!("pypi+{}/simple/", server.url().trim_end_matches('/'));
    let p = format!("http://127.0.0.1:{}", proxy.port);
    let env = [("HTTP_PROXY", p.as_str())];
    t.run_env("r", &["lock", "--registry", &registry], &env).success();
    t.run_env("r", &["install"], &env).success();
    let requests = server.requests();
    assert!(requests.iter().any(|r| r.path == "/simple/esys-a2c/"));
    assert!(requests.iter().any(|r| r.path.starts_with("/files/")));
    assert!(
        requests
            .iter()
            .all(|r| r.headers.get("via").is_some_and(|v| v.contains("tinyproxy"))),
        "every request went through the proxy: {:?}",
        requests
            .iter()
            .map(|r| (&r.path, r.headers.get("via")))
            .collect::<Vec<_>>()
    );
}
