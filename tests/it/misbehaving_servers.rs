//! Bounded memory and time against any server, URLs after redirects, honest
//! messages for short bundles and refusals — real servers on 127.0.0.1 started by the tests.

use std::time::{Duration, Instant};

use crate::support::assert_contains;
use crate::support::http_server::{Fault, Server};
use crate::support::{TestContext, layout};

const INDEX: &str = "/index/esys/a2c.json";
const B1: &str = "/bundles/a2c-1.0.0.tar.gz";

/// A single repository `r` pinning 1.0.0, and the registry `reg` served over HTTP.
fn single(t: &TestContext) -> Server {
    t.canonical_repo("r", "1.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    Server::start(t.path("reg"))
}

#[test]
fn an_endless_index_is_cut_at_the_document_cap() {
    let t = TestContext::new();
    let server = single(&t);
    // 2 GiB on offer; a2c stops at the cap it was given.
    server.fault(INDEX, &[Fault::Endless(2 << 30)]);
    let started = Instant::now();
    let run = t.run_env(
        "r",
        &["lock", "--registry", &server.url()],
        &[("A2C_MAX_DOCUMENT_BYTES", "1048576")],
    );
    insta::assert_snapshot!(run.error_transcript());
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(server.count_of(INDEX), 1, "a too-big document is not retried");
}

/// With the default cap, the peak memory of `a2c lock` against 1 GiB of index stays bounded
/// (measured with /usr/bin/time; the default cap is 64 MiB).
#[test]
fn the_default_document_cap_bounds_peak_memory() {
    let t = TestContext::new();
    let server = single(&t);
    server.fault(INDEX, &[Fault::Endless(1 << 30)]);
    let Some((out, kib)) = t.run_measured("r", &["lock", "--registry", &server.url()]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("sent more than 67108864 bytes"), "{stderr}");
    assert!(kib < 200 * 1024, "peak RSS {kib} KiB");
}

#[test]
fn a_trickling_server_is_cut_by_the_low_speed_check_and_a_stalled_one_by_the_timeout() {
    let t = TestContext::new();
    let server = single(&t);
    server.fault(
        INDEX,
        &[Fault::Trickle {
            interval: Duration::from_millis(200),
            n: 1000,
        }],
    );
    let started = Instant::now();
    let run = t.run_env(
        "r",
        &["lock", "--registry", &server.url()],
        &[("A2C_HTTP_LOW_SPEED", "100"), ("A2C_HTTP_LOW_SPEED_TIME", "2")],
    );
    run.failure();
    run.says("trickled:").says("below the minimum of 100 bytes/s");
    run.says("A2C_HTTP_LOW_SPEED_TIME");
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    // A bundle trickles the same way.
    t.run("r", &["lock", "--registry", &server.url()]).success();
    server.fault(
        B1,
        &[Fault::Trickle {
            interval: Duration::from_millis(200),
            n: 100_000,
        }],
    );
    let run = t.run_env(
        "r",
        &["install"],
        &[("A2C_HTTP_LOW_SPEED", "100"), ("A2C_HTTP_LOW_SPEED_TIME", "2")],
    );
    run.failure();
    run.says("trickled:");
    // Stalled: the headers and 10 bytes, then nothing.
    server.fault(B1, &[Fault::Stall(10)]);
    let run = t.run_env(
        "r",
        &["install"],
        &[("A2C_HTTP_TIMEOUT", "1"), ("A2C_HTTP_RETRIES", "0")],
    );
    insta::assert_snapshot!(run.error_transcript());
    assert!(
        !t.listing("cache/bundles")
            .iter()
            .any(|f| f.ends_with(".partial")
                && fs_err::metadata(t.path(&format!("cache/bundles/{f}"))).unwrap().len() == 0),
        "no empty .partial is left: {:?}",
        t.listing("cache/bundles")
    );
    // A hung server (it stalls every time): tried twice, not six times, and the hint says the
    // server does not answer before it says to raise the timeout.
    let since = server.count_of(B1);
    server.fault(B1, &[Fault::Stall(10), Fault::Stall(10), Fault::Stall(10)]);
    let run = t.run_env(
        "r",
        &["install"],
        &[("A2C_HTTP_TIMEOUT", "1"), ("A2C_HTTP_RETRIES", "5")],
    );
    run.fails_with(&["stalled", "check that it is up and answering"]);
    assert_eq!(server.count_of(B1) - since, 2, "{}", run.stderr);
    // The retry told is the one made: the last, if it stalls again.
    let told: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("warning: retry")).collect();
    assert_eq!(told.len(), 1, "{}", run.stderr);
    assert!(
        told[0].starts_with("warning: retry 1 of 5 in ") && told[0].contains(" s (the last if it stalls again): "),
        "{}",
        told[0]
    );
}

#[test]
fn bundle_urls_resolve_against_the_index_url_after_a_redirect() {
    let t = TestContext::new();
    t.canonical_repo("r", "1.0.0");
    // The registry really lives under /mirror/; the old index URL redirects there.
    t.publish("reg/mirror", "1.0.0", "tar.gz");
    let server = Server::start(t.path("reg"));
    server.fault(INDEX, &[Fault::Redirect("/mirror/index/esys/a2c.json".into())]);
    t.run("r", &["lock", "--registry", &server.url()]).success();
    let lock = fs_err::read_to_string(t.path(&layout::lock("r"))).unwrap();
    assert_contains(
        &lock,
        &format!("source = \"{}mirror/bundles/a2c-1.0.0.tar.gz\"", server.url()),
    );
    let run = t.ok("r", &["install", "--json"]);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
}

#[test]
fn a_bundle_shorter_than_the_lock_says_is_reported_as_short_and_not_retried() {
    let t = TestContext::new();
    let server = single(&t);
    t.run("r", &["lock", "--registry", &server.url()]).success();
    let path = t.path("reg/bundles/a2c-1.0.0.tar.gz");
    let full = fs_err::read(&path).unwrap();
    let half = full.len() / 2;
    fs_err::write(&path, &full[..half]).unwrap();
    for range in [true, false] {
        server.set_range_support(range);
        let before = server.count_of(B1);
        let run = t.run("r", &["install"]);
        insta::assert_snapshot!(run.error_transcript());
        assert!(
            // (HTTP's 416 as a status: the server's port may hold those digits)
            !run.stderr.contains("HTTP 416") && !run.stderr.contains("failed repeatedly"),
            "{}",
            run.stderr
        );
        // One request, and one to confirm it: not the retries of a server fault.
        assert_eq!(server.count_of(B1) - before, 2, "range {range}: not retried");
        assert!(!t.path(&layout::installed("r", "1.0.0")).exists());
    }
}

#[test]
fn refusals_say_whether_credentials_were_sent() {
    let t = TestContext::new();
    let server = single(&t);
    let url = server.url();
    server.fault(INDEX, &[Fault::Status(403)]);
    let run = t.run("r", &["lock", "--registry", &url]);
    insta::assert_snapshot!(run.error_transcript());
    server.fault(INDEX, &[Fault::Status(403)]);
    let run = t.run_env("r", &["lock", "--registry", &url], &[("A2C_REGISTRY_TOKEN", "tok")]);
    insta::assert_snapshot!(run.error_transcript());
    server.fault(INDEX, &[Fault::Status(401)]);
    let run = t.run_env("r", &["lock", "--registry", &url], &[("A2C_REGISTRY_TOKEN", "tok")]);
    insta::assert_snapshot!(run.error_transcript());
}

#[test]
fn a_gzip_encoded_index_is_decoded() {
    let t = TestContext::new();
    let server = single(&t);
    server.fault(INDEX, &[Fault::Gzip]);
    t.run("r", &["lock", "--registry", &server.url()]).success();
    let accept = server.requests()[0]
        .headers
        .get("accept-encoding")
        .cloned()
        .unwrap_or_default();
    assert!(accept.contains("gzip"), "{accept}");
}

/// Runs `a2c args…` in `cwd` under `umask`, with `stdin` on standard input.
fn run_umask(t: &TestContext, cwd: &str, umask: &str, args: &[&str], stdin: &str) -> crate::support::Run {
    use std::io::Write;
    let a2c = t.cmd(cwd);
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(a2c.get_program())
        .args(args)
        .current_dir(t.path(cwd))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in a2c.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    crate::support::Run::from_output(child.wait_with_output().unwrap(), &t.root)
}

fn mode(t: &TestContext, rel: &str) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs_err::metadata(t.path(rel)).unwrap().permissions().mode() & 0o777
}

#[test]
fn what_a2c_writes_follows_the_umask_so_web_servers_can_read_it() {
    let t = TestContext::new();
    t.method_tree("trees/1.0.0", "1.0.0");
    run_umask(
        &t,
        ".",
        "022",
        &["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", "reg"],
        "",
    )
    .success();
    assert_eq!(mode(&t, "reg/index/esys/a2c.json"), 0o644);
    assert_eq!(mode(&t, "reg/bundles/a2c-1.0.0.tar.gz"), 0o644);
    t.superbuild("w", "members: [\"p/*\"]\n");
    t.canonical_repo("w/p/app", "1.0.0");
    // Over HTTP, into the cache, the lock and a pointer; then vendored.
    let server = Server::start(t.path("reg"));
    run_umask(&t, "w", "022", &["lock", "--registry", &server.url()], "").success();
    run_umask(&t, "w", "022", &["install"], "").success();
    assert_eq!(mode(&t, &layout::lock("w")), 0o644);
    assert_eq!(mode(&t, &layout::pointer("w/p/app")), 0o644);
    let cached: Vec<String> = t
        .listing("cache/bundles")
        .into_iter()
        .filter(|f| f.len() == 64)
        .collect();
    assert_eq!(cached.len(), 1);
    assert_eq!(mode(&t, &format!("cache/bundles/{}", cached[0])), 0o644);
    run_umask(&t, "w", "022", &["vendor", "../vendored"], "").success();
    assert_eq!(mode(&t, "vendored/a2c-vendor.json"), 0o644);
    // A private umask is respected too; and a cache bundle from a file registry is 0644.
    fs_err::remove_dir_all(t.path("cache")).unwrap();
    fs_err::remove_dir_all(t.path(&layout::installed("w", "1.0.0"))).unwrap();
    t.write(
        "w/.tools/esys/a2c/workspace.yaml",
        "schema_version: 1\nmembers: [\"p/*\"]\nregistry: ../reg\n",
    );
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    run_umask(&t, "w", "077", &["lock"], "").success();
    assert_eq!(mode(&t, &layout::lock("w")), 0o600);
    run_umask(&t, "w", "022", &["install"], "").success();
    let cached: Vec<String> = t
        .listing("cache/bundles")
        .into_iter()
        .filter(|f| f.len() == 64)
        .collect();
    assert_eq!(mode(&t, &format!("cache/bundles/{}", cached[0])), 0o644);
}

#[test]
fn a_host_the_user_logged_into_gets_its_token_for_lock_sources_too() {
    let t = TestContext::new();
    let server = single(&t);
    server.require_token("s3cret");
    let url = server.url();
    // README's flow without a binding: refused, and told how.
    let run = t.run("r", &["lock", "--registry", &url]);
    insta::assert_snapshot!(run.error_transcript());
    // `a2c login` binds the token to this host (read from stdin, stored 0600, never shown).
    let run = run_umask(&t, "r", "022", &["login", &url], "s3cret\n");
    run.success();
    assert!(!run.stderr.contains("s3cret"), "{}", run.stderr);
    let creds = "home/.config/a2c/credentials.toml";
    assert_eq!(mode(&t, creds), 0o600);
    // lock with --registry, then a plain install: the lock's source host is bound.
    t.run("r", &["lock", "--registry", &url]).success();
    let run = t.ok("r", &["install", "--json"]);
    assert_eq!(run.json()["installed"][0]["version"], "1.0.0");
    assert!(
        server
            .requests()
            .iter()
            .filter(|r| r.path == B1)
            .all(|r| r.headers.get("authorization").map(String::as_str) == Some("Bearer s3cret"))
    );
    // Never to another host: a second registry (another port) gets no credential.
    let other = Server::start(t.path("reg"));
    t.run("r", &["lock", "--registry", &other.url(), "--update"]).success();
    assert!(
        other
            .requests()
            .iter()
            .all(|r| !r.headers.contains_key("authorization"))
    );
    // A credentials file others can read is refused, naming it.
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(t.path(creds), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let run = t.run("r", &["lock", "--registry", &url, "--update"]);
    insta::assert_snapshot!(run.error_transcript());
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(t.path(creds), std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    t.ok("r", &["logout", &url]);
    let run = t.run("r", &["lock", "--registry", &url, "--update"]);
    insta::assert_snapshot!(run.error_transcript());
}

/// `pack` never publishes what `install` under the same limits would refuse.
#[test]
fn pack_refuses_a_tree_install_would_refuse() {
    let t = TestContext::new();
    t.method_tree("many", "1.0.0");
    for i in 0..30 {
        t.write(&format!("many/rules/r{i}.md"), "x\n");
    }
    let run = t.run_env(
        ".",
        &["pack", "many", "--version", "1.0.0", "--registry", "reg"],
        &[("A2C_MAX_ENTRIES", "25")],
    );
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path("reg/index/esys/a2c.json").exists(), "nothing published");
    t.method_tree("big", "1.0.0");
    t.write("big/rules/huge.md", &"0".repeat(2 << 20));
    let run = t.run_env(
        ".",
        &["pack", "big", "--version", "1.0.0", "--registry", "reg"],
        &[("A2C_MAX_UNPACKED_BYTES", "1048576")],
    );
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path("reg/bundles").exists() || t.listing("reg/bundles").is_empty());
    // Within the limits it packs, and installs.
    t.run(".", &["pack", "many", "--version", "1.0.0", "--registry", "reg"])
        .success();
}

/// `lock` checks, with one request per new entry, that what it wrote can be fetched.
#[test]
fn lock_says_when_a_source_it_wrote_cannot_be_fetched() {
    let t = TestContext::new();
    let server = single(&t);
    t.edit_index("reg", "1.0.0", |e| {
        e["url"] = serde_json::json!("../../moved/a2c-1.0.0.tar.gz")
    });
    let run = t.ok("r", &["lock", "--registry", &server.url(), "--json"]);
    run.says("the lock records a source for 1.0.0 that cannot be fetched now")
        .says("HTTP 404");
    assert_eq!(run.json()["unfetchable"][0]["version"], "1.0.0");
    assert_eq!(server.count_of("/moved/a2c-1.0.0.tar.gz"), 1, "one request, no retries");
}

/// A download that fails before its first byte leaves no `.partial` behind.
#[test]
fn a_failed_download_leaves_no_empty_partial() {
    let t = TestContext::new();
    let server = single(&t);
    t.run("r", &["lock", "--registry", &server.url()]).success();
    for status in [404, 403, 500] {
        server.fault(B1, &[Fault::Status(status)]);
        let run = t.run_env("r", &["install"], &[("A2C_HTTP_RETRIES", "0")]);
        insta::assert_snapshot!(run.error_transcript());
        let partials: Vec<String> = t
            .listing("cache")
            .into_iter()
            .filter(|f| f.ends_with(".partial"))
            .collect();
        assert!(partials.is_empty(), "HTTP {status}: {partials:?}");
    }
}

/// A 400 is the server's refusal, not a failure to retry: it is not retried and never called
/// "failed repeatedly".
#[test]
fn a_bad_request_is_a_refusal_not_a_failure_to_retry() {
    let t = TestContext::new();
    let server = single(&t);
    server.fault(INDEX, &[Fault::Status(400), Fault::Status(400)]);
    let run = t.run("r", &["lock", "--registry", &server.url()]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(server.count_of(INDEX), 1, "a 400 is not retried");
}

/// A JSON 400 is the server's own answer (an API error), even when its message mentions
/// HTTPS: it is not taken for a TLS port's reply to plain HTTP, and nothing is retried in TLS.
#[test]
fn a_json_bad_request_is_the_servers_answer_not_a_tls_port() {
    let t = TestContext::new();
    let server = single(&t);
    let body = r#"{"errors":[{"code":"DENIED","message":"only over HTTPS"}]}"#.to_string();
    server.fault(INDEX, &[Fault::Json(400, body)]);
    let run = t.run("r", &["lock", "--registry", &server.url()]);
    run.fails_with(&["answered HTTP 400", &server.url()]);
    insta::assert_snapshot!(run.transcript());
    assert_eq!(server.count_of(INDEX), 1, "asked once, in plain HTTP");
}

/// A token endpoint (named by a registry's challenge, reachable with no credential)
/// and a Conan `users/authenticate` that stream without end are cut, the first at the
/// document cap and the second at the longest token a2c would send; peak memory stays far
/// under 256 MiB (measured with /usr/bin/time).
#[test]
fn endless_token_answers_are_cut_and_memory_stays_bounded() {
    let t = TestContext::new();
    let server = single(&t);
    let tokens = Server::start_on(t.path("reg"), "127.0.0.2");
    server.require_token_from("t", &format!("{}token", tokens.url()));
    tokens.fault("/token?service=test", &[Fault::Endless(600 << 20)]);
    let Some((out, kib)) = t.run_measured("r", &["lock", "--registry", &server.url()]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("`{}token`", tokens.url())) && stderr.contains("sent more than 67108864 bytes"),
        "{stderr}"
    );
    assert!(kib < 160 * 1024, "peak RSS {kib} KiB");

    // Conan: the credentials are exchanged for a token whose answer never ends.
    let conan = Server::start(t.path("reg"));
    let revisions = "X-Conan-Server-Capabilities: revisions\r\n".to_string();
    conan.fault("/v1/ping", &[Fault::Headers(200, revisions)]);
    conan.fault("/v2/conans/search?q=esys-a2c%2F*", &[Fault::Status(401)]);
    conan.fault("/v2/users/authenticate", &[Fault::Endless(600 << 20)]);
    let location = format!("conan+{}", conan.url());
    let host = conan.host();
    let env = [
        ("A2C_REGISTRY_AUTH", "alice:secret"),
        ("A2C_TOKEN_HOSTS", host.as_str()),
    ];
    let mut cmd = t.cmd("r");
    cmd.args(["lock", "--registry", &location]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("v2/users/authenticate`") && stderr.contains("sent more than 65536 bytes"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// A static registry answering `WWW-Authenticate: Bearer realm="a2c"` (RFC 6750: a
/// realm that names no token service) with the token held back from the host a committed
/// marker names: the 401 says so and how to bind the host (it said the token service
/// misbehaves); following the hint locks.
#[test]
fn a_bearer_realm_that_is_no_url_gets_the_held_back_hint() {
    let t = TestContext::new();
    let server = single(&t);
    server.require_token_from("s3cret", "a2c");
    t.superbuild("w", &format!("members: [\"p/*\"]\nregistry: {}\n", server.url()));
    t.canonical_repo("w/p/a", "1.0.0");
    let token = ("A2C_REGISTRY_TOKEN", "s3cret");
    let run = t.run_env("w", &["lock"], &[token]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    let host = url::Url::parse(&server.url()).unwrap();
    let bound = format!("{}:{}", host.host_str().unwrap(), host.port().unwrap());
    run.says(&format!("A2C_TOKEN_HOSTS={bound}"));
    t.run_env("w", &["lock"], &[token, ("A2C_TOKEN_HOSTS", bound.as_str())])
        .success();
}

/// `a2c login HOST` without a port binds the default port only, and says so with
/// the form for another; that form, run with the registry's port, lets the lock through.
#[test]
fn login_without_a_port_says_which_port_it_binds() {
    let t = TestContext::new();
    let server = single(&t);
    server.require_token("s3cret");
    let run = run_umask(&t, "r", "022", &["login", "127.0.0.1"], "s3cret\n");
    run.success();
    insta::assert_snapshot!(run.transcript());
    let url = server.url();
    t.run("r", &["lock", "--registry", &url]).failure();
    let port = url::Url::parse(&url).unwrap().port().unwrap();
    run_umask(&t, "r", "022", &["login", &format!("127.0.0.1:{port}")], "s3cret\n").success();
    t.run("r", &["lock", "--registry", &url]).success();
}
