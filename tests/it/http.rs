//! Registries over HTTP(S) — a real server on 127.0.0.1 with faults.

use crate::support::assert_contains;
use crate::support::http_server::{Fault, Server};
use crate::support::{Run, TestContext, layout};

fn http_superbuild(t: &TestContext) -> Server {
    t.standard_http_superbuild()
}

fn installed(run: &Run) -> Vec<String> {
    run.json()["installed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap().to_string())
        .collect()
}

const B1: &str = "/bundles/a2c-1.0.0.tar.gz";
const B2: &str = "/bundles/a2c-2.0.0.tar.gz";

#[test]
fn install_over_http_downloads_in_parallel_into_the_cache() {
    let t = TestContext::new();
    let server = http_superbuild(&t);
    let run = t.ok("w", &["install", "--json"]);
    assert_eq!(installed(&run), ["1.0.0", "1.1.0", "2.0.0"]);
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert_contains(&lock, &format!("source = \"{}bundles/a2c-1.0.0.tar.gz\"", server.url()));
    assert_eq!(
        t.listing("cache/bundles").iter().filter(|f| f.len() == 64).count(),
        3,
        "{:?}",
        t.listing("cache/bundles")
    );
    assert_eq!(server.count_of("/index/esys/a2c.json"), 1);
    assert_eq!(server.count_of(B1), 1);
    let ua = &server.requests()[0].headers["user-agent"];
    assert!(ua.starts_with(&format!("a2c/{}", env!("CARGO_PKG_VERSION"))), "{ua}");
    // The receipts name the URL the bundle came from.
    let receipt = fs_err::read_to_string(t.path(&layout::installed_file("w", "1.0.0", ".a2c-receipt.json"))).unwrap();
    assert_contains(&receipt, &format!("{}bundles/a2c-1.0.0.tar.gz", server.url()));
}

#[test]
fn offline_and_no_op_installs_make_zero_requests() {
    let t = TestContext::new();
    let server = http_superbuild(&t);
    t.run("w", &["install"]).success();
    let after_install = server.count();
    // A no-op install: nothing to fetch, nothing to read.
    t.run("w", &["install"]).success();
    t.run("w", &["install", "--locked"]).success();
    assert_eq!(server.count(), after_install, "a no-op install makes no request");
    // Offline from the cache, in a fresh store.
    fs_err::remove_dir_all(t.path("w/.tools_local")).unwrap();
    let run = t.ok("w", &["install", "--offline", "--json"]);
    assert_eq!(installed(&run), ["1.0.0", "1.1.0", "2.0.0"]);
    // Offline with nothing cached: a clear error, still no request.
    t.forget_installed("w");
    let run = t.run("w", &["install", "--offline"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(server.count(), after_install, "offline means offline");
}

#[test]
fn transient_faults_are_retried_and_end_in_a_verified_install() {
    let t = TestContext::new();
    let server = http_superbuild(&t);
    t.run("w", &["lock"]).success();
    let since = server.count(); // lock checks each new source once
    let len = fs_err::metadata(t.path("reg/bundles/a2c-2.0.0.tar.gz")).unwrap().len() as usize;
    server.fault(
        B1,
        &[
            Fault::Status(500),
            Fault::Status(503),
            Fault::Reset,
            Fault::ShortLength(7),
        ],
    );
    server.fault(B2, &[Fault::TooMany(1), Fault::Truncate(len / 3), Fault::Status(502)]);
    server.fault("/bundles/a2c-1.1.0.zip", &[Fault::Stall(10)]);
    let run = t.ok_env(
        "w",
        &["install", "--json"],
        &[("A2C_HTTP_TIMEOUT", "1"), ("A2C_HTTP_RETRIES", "5")],
    );
    assert_eq!(installed(&run), ["1.0.0", "1.1.0", "2.0.0"]);
    assert_eq!(server.count_of_since(B1, since), 5, "four faults, then success");
    // Every retry is told by default: what failed, which try comes next of how
    // many, after how long.
    let retries: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: retry "))
        .collect();
    assert!(retries.len() >= 7, "{}", run.stderr);
    assert!(
        retries
            .iter()
            .any(|l| l.starts_with("warning: retry 1 of 5 in ") && l.contains("HTTP 500")),
        "{}",
        run.stderr
    );
    assert_eq!(server.count_of_since(B2, since), 4);
    assert_eq!(
        server.count_of_since("/bundles/a2c-1.1.0.zip", since),
        2,
        "a stalled body times out and is retried"
    );
    // The requests after the truncated body resumed where it broke off.
    let ranges: Vec<Option<String>> = server
        .requests()
        .iter()
        .skip(since)
        .filter(|r| r.path == B2)
        .map(|r| r.headers.get("range").cloned())
        .collect();
    let resume = Some(format!("bytes={}-", len / 3));
    assert_eq!(
        ranges,
        [None, None, resume.clone(), resume],
        "429, truncated, then two resumed requests"
    );
    assert!(t.listing("cache/bundles").iter().all(|f| !f.ends_with(".partial")));
}

/// Retries are told by default and silenced by `-q` (the install succeeds either way).
/// A keep-alive connection the server closes just as a2c reuses it loses the request sent on
/// it (tinyproxy does this to every connection: it drops the origin's `Connection: close`, then
/// closes). Every GET is sent again on a new connection — the lock's check that each new bundle
/// can be fetched as well as the downloads.
#[test]
fn a_request_lost_on_a_reused_connection_is_sent_again() {
    let t = TestContext::new();
    let server = http_superbuild(&t);
    server.fault("/index/esys/a2c.json", &[Fault::KeepAlive]);
    let run = t.ok("w", &["lock"]);
    assert!(!run.stderr.contains("cannot be fetched"), "{}", run.stderr);
    let dropped = server.dropped();
    assert_eq!(
        dropped.len(),
        1,
        "the request after the index went on its connection: {dropped:?}"
    );
    assert!(
        dropped[0].starts_with("/bundles/"),
        "the lock's check of a bundle: {dropped:?}"
    );
    assert_eq!(server.count_of(&dropped[0]), 2, "sent again: {:?}", server.requests());
    server.fault(B1, &[Fault::KeepAlive]);
    // One download at a time: the next one reuses B1's connection (with several, each may have
    // a connection of its own by then, and nothing is dropped).
    t.ok("w", &["install", "--jobs", "1"]);
    assert_eq!(server.dropped().len(), 2, "{:?}", server.requests());
    // A package index: the HEAD that asks a wheel's size is the request after its page.
    crate::pypi::hosted_page(&t, "site", "1.0.0");
    let index = Server::start(t.path("site"));
    index.fault("/simple/esys-a2c/", &[Fault::KeepAlive]);
    t.canonical_repo("r", "1.0.0");
    let registry = format!("pypi+{}simple/", index.url());
    t.ok("r", &["lock", "--registry", &registry]);
    let wheel = "/files/esys_a2c-1.0.0-py3-none-any.whl";
    assert_eq!(index.dropped(), [wheel], "{:?}", index.requests());
}

#[test]
fn retries_are_quiet_only_under_q() {
    for (quiet, told) in [(false, true), (true, false)] {
        let t = TestContext::new();
        let server = http_superbuild(&t);
        t.run("w", &["lock"]).success();
        server.fault(B1, &[Fault::Status(503), Fault::Status(500)]);
        let args: &[&str] = if quiet { &["-q", "install"] } else { &["install"] };
        let run = t.ok("w", args);
        let lines: Vec<&str> = run.stderr.lines().filter(|l| l.contains("retry ")).collect();
        assert_eq!(!lines.is_empty(), told, "{}", run.stderr);
        if told {
            assert!(lines[0].starts_with("warning: retry 1 of 4 in "), "{}", run.stderr);
            assert!(lines[0].contains("HTTP 503"), "{}", run.stderr);
        }
    }
}

#[test]
fn a_partial_download_is_resumed_with_range_or_restarted_without() {
    for range in [true, false] {
        let t = TestContext::new();
        let server = http_superbuild(&t);
        server.set_range_support(range);
        t.run("w", &["lock"]).success();
        let since = server.count(); // lock's fetchability checks
        // An interrupted earlier run left the first half of the bundle.
        let bytes = fs_err::read(t.path("reg/bundles/a2c-2.0.0.tar.gz")).unwrap();
        let sha = crate::support::bundles::sha256_hex(&bytes);
        t.write(&format!("cache/bundles/{sha}.partial"), "");
        fs_err::write(
            t.path(&format!("cache/bundles/{sha}.partial")),
            &bytes[..bytes.len() / 2],
        )
        .unwrap();
        t.ok("w", &["install", "--json"]);
        let req = server
            .requests()
            .into_iter()
            .skip(since)
            .find(|r| r.path == B2)
            .unwrap();
        assert_eq!(
            req.headers.get("range"),
            Some(&format!("bytes={}-", bytes.len() / 2)),
            "range={range}"
        );
        assert_eq!(
            fs_err::read(t.path(&format!("cache/bundles/{sha}"))).unwrap(),
            bytes,
            "range={range}: the cached bundle is whole"
        );
    }
}

#[test]
fn persistent_failures_end_in_clear_errors_and_leave_nothing() {
    let t = TestContext::new();
    let server = http_superbuild(&t);
    t.run("w", &["lock"]).success();
    server.fault(B1, &[Fault::Status(500), Fault::Status(500), Fault::Status(500)]);
    let run = t.run_env("w", &["install"], &[("A2C_HTTP_RETRIES", "2")]);
    insta::assert_snapshot!(run.error_transcript());
    // Both retries were told (the snapshot leaves them out: their number is timing elsewhere).
    run.says("warning: retry 2 of 2 in ");
    run.says(&format!("`{}bundles/a2c-1.0.0.tar.gz` answered HTTP 500", server.url()));
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
    // 404 for a locked bundle.
    fs_err::rename(t.path("reg/bundles/a2c-1.0.0.tar.gz"), t.path("reg/moved.tar.gz")).unwrap();
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    fs_err::rename(t.path("reg/moved.tar.gz"), t.path("reg/bundles/a2c-1.0.0.tar.gz")).unwrap();
    // The registry serves other bytes of the same size: checksum mismatch, nothing cached.
    let good = fs_err::read(t.path("reg/bundles/a2c-1.0.0.tar.gz")).unwrap();
    let mut bad = good.clone();
    bad[10] ^= 0xff;
    fs_err::write(t.path("reg/bundles/a2c-1.0.0.tar.gz"), &bad).unwrap();
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    run.says("tampered with");
    assert!(
        t.listing("cache/bundles")
            .iter()
            .all(|f| !f.starts_with(&crate::support::bundles::sha256_hex(&good))),
        "{:?}",
        t.listing("cache/bundles")
    );
    // A longer file than the lock pins is cut off, not stored.
    let mut long = good.clone();
    long.extend_from_slice(&[0; 100]);
    fs_err::write(t.path("reg/bundles/a2c-1.0.0.tar.gz"), &long).unwrap();
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
}

#[test]
fn unreachable_hosts_and_proxies_are_named() {
    let t = TestContext::new();
    t.standard_superbuild();
    // A closed port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let run = t.run_env(
        "w",
        &["lock", "--registry", &format!("http://127.0.0.1:{closed}/")],
        &[("A2C_HTTP_RETRIES", "0")],
    );
    insta::assert_snapshot!(run.error_transcript());
    run.says("hint:");
    // A name that does not resolve.
    let run = t.run_env(
        "w",
        &["lock", "--registry", "http://a2c-registry.invalid/"],
        &[("A2C_HTTP_RETRIES", "0")],
    );
    insta::assert_snapshot!(run.error_transcript());
    // A proxy that is down.
    let server = Server::start(t.path("reg"));
    let run = t.run_env(
        "w",
        &["lock", "--registry", &server.url()],
        &[
            ("HTTP_PROXY", format!("http://127.0.0.1:{closed}").as_str()),
            ("A2C_HTTP_RETRIES", "0"),
        ],
    );
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(server.count(), 0);
    // NO_PROXY lets it through.
    t.ok_env(
        "w",
        &["lock", "--registry", &server.url()],
        &[
            ("HTTP_PROXY", format!("http://127.0.0.1:{closed}").as_str()),
            ("NO_PROXY", "127.0.0.1"),
        ],
    );
}

#[test]
fn tokens_and_netrc_credentials_are_sent_but_never_shown() {
    let t = TestContext::new();
    let server = http_superbuild(&t);
    let auth = |r: &crate::support::http_server::Request| r.headers.get("authorization").cloned();
    // The marker (committed by the repository) names the registry: the token is not sent.
    t.ok_env("w", &["install", "-v"], &[("A2C_REGISTRY_TOKEN", "s3cr3t-token")]);
    assert!(server.count() > 0);
    assert!(
        server.requests().iter().all(|r| auth(r).is_none()),
        "a repository chose the host"
    );
    // The user binds the host: now it is.
    t.forget_installed("w");
    let before = server.count();
    let run = t.ok_env(
        "w",
        &["install", "-v", "--json"],
        &[("A2C_REGISTRY_TOKEN", "s3cr3t-token"), ("A2C_TOKEN_HOSTS", "127.0.0.1")],
    );
    run.shows_no_credential(&["s3cr3t-token"]);
    let requests = server.requests();
    assert!(requests.len() > before);
    assert!(
        requests[before..]
            .iter()
            .all(|r| auth(r).as_deref() == Some("Bearer s3cr3t-token"))
    );
    // `--registry` binds its host too.
    let before = server.count();
    t.run_env(
        "w",
        &["lock", "--registry", &server.url(), "--update"],
        &[("A2C_REGISTRY_TOKEN", "s3cr3t-token")],
    )
    .success();
    assert!(
        server.requests()[before..]
            .iter()
            .all(|r| auth(r).as_deref() == Some("Bearer s3cr3t-token"))
    );
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    let receipt = fs_err::read_to_string(t.path(&layout::installed_file("w", "1.0.0", ".a2c-receipt.json"))).unwrap();
    for text in [&run.stdout, &run.stderr, &lock, &receipt] {
        assert!(!text.contains("s3cr3t"), "a credential leaked: {text}");
    }
    // The netrc `default` login never goes to a registry only the repository named.
    t.write("home/.netrc", "default login dave password d3fault\n");
    t.forget_installed("w");
    let before = server.count();
    t.run("w", &["install"]).success();
    assert!(server.requests()[before..].iter().all(|r| auth(r).is_none()));
    // netrc by host, for a second workspace.
    t.write("home/.netrc", "machine 127.0.0.1 login alice password pa55word\n");
    t.forget_installed("w");
    let before = server.count();
    let run = t.ok("w", &["install"]);
    let basic = server.requests()[before]
        .headers
        .get("authorization")
        .cloned()
        .unwrap_or_default();
    assert_eq!(basic, "Basic YWxpY2U6cGE1NXdvcmQ=", "alice:pa55word");
    assert!(!run.stderr.contains("pa55word"));
    // A registry URL carrying credentials is refused outright.
    let run = t.run("w", &["lock", "--registry", "http://alice:pa55word@127.0.0.1:1/"]);
    insta::assert_snapshot!(run.error_transcript());
}

#[test]
fn unauthorized_registry_says_how_to_authenticate() {
    let t = TestContext::new();
    let server = http_superbuild(&t);
    server.fault("/index/esys/a2c.json", &[Fault::Status(401)]);
    let run = t.run("w", &["lock"]);
    insta::assert_snapshot!(run.error_transcript());
}

#[test]
fn https_with_a_private_ca() {
    let t = TestContext::new();
    t.standard_superbuild();
    let server = Server::start_tls(t.path("reg"));
    t.write(
        "w/.tools/esys/a2c/workspace.yaml",
        &format!(
            "schema_version: 1\nmembers: [\"p/*\", \"l/*\"]\nregistry: {}\n",
            server.url()
        ),
    );
    // Without the CA: a TLS failure with the hint.
    let run = t.run_env("w", &["install"], &[("A2C_HTTP_RETRIES", "0")]);
    insta::assert_snapshot!(run.error_transcript());
    run.says("A2C_CA_BUNDLE");
    // With the CA through A2C_CA_BUNDLE, and through SSL_CERT_FILE.
    let ca = t.write("ca.pem", server.ca_pem.as_deref().unwrap());
    let run = t.ok_env("w", &["install", "--json"], &[("A2C_CA_BUNDLE", ca.to_str().unwrap())]);
    assert_eq!(installed(&run), ["1.0.0", "1.1.0", "2.0.0"]);
    t.forget_installed("w");
    t.run_env("w", &["install"], &[("SSL_CERT_FILE", ca.to_str().unwrap())])
        .success();
    // A bad bundle file is a clear configuration error.
    t.write("bad.pem", "not a certificate\n");
    let run = t.run_env(
        "w",
        &["lock", "--update"],
        &[("A2C_CA_BUNDLE", t.path("bad.pem").to_str().unwrap())],
    );
    insta::assert_snapshot!(run.error_transcript());
}

#[test]
fn vendor_then_air_gapped_install() {
    let t = TestContext::new();
    let server = http_superbuild(&t);
    t.run("w", &["lock"]).success();
    let run = t.ok("w", &["vendor", "../vendor", "--json"]);
    let doc = run.json();
    assert_eq!(doc["bundles"].as_array().unwrap().len(), 3);
    let manifest: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(t.path("vendor/a2c-vendor.json")).unwrap()).unwrap();
    assert_eq!(manifest["schema"], 2);
    for b in manifest["bundles"].as_array().unwrap() {
        assert!(
            b["tree"].as_str().unwrap().starts_with("sha256:"),
            "the locked tree digest: {b}"
        );
        let bytes = fs_err::read(t.path(&format!("vendor/{}", b["file"].as_str().unwrap()))).unwrap();
        assert_eq!(
            crate::support::bundles::sha256_hex(&bytes),
            b["sha256"].as_str().unwrap()
        );
    }
    // Vendoring again into the same directory (each bundle already there, a hard link of the
    // cached one) leaves the directory as it was: no `.a2c-vendor-*.tmp` behind.
    let before = crate::support::tree_files(&t.path("vendor"));
    t.ok("w", &["vendor", "../vendor"]);
    t.ok("w", &["vendor", "../vendor"]);
    let names = |files: &[(String, Vec<u8>)]| files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&crate::support::tree_files(&t.path("vendor"))), names(&before));
    // Another machine: no server, no cache, no store.
    drop(server);
    t.forget_installed("w");
    let run = t.ok("w", &["install", "--offline", "--from", "../vendor", "--json"]);
    assert_eq!(installed(&run), ["1.0.0", "1.1.0", "2.0.0"]);
}

/// The disk holding the cache fills up during a download (a real 256 KiB
/// tmpfs, mounted in a private mount namespace): the partial download is removed, the error says
/// the disk is full and its hint names `a2c cache prune`, in text and in the JSON error.
#[test]
fn a_full_disk_during_a_download_leaves_no_partial_and_says_what_to_do() {
    let probe = std::process::Command::new("unshare").args(["-rm", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        crate::support::require_program("unshare -rm (util-linux, with user namespaces)");
        return;
    }
    let t = TestContext::new();
    let _server = http_superbuild(&t);
    // A version whose bundle (1 MiB of incompressible bytes) cannot fit the cache's disk.
    t.method_tree("trees/5.0.0", "5.0.0");
    let mut noise = vec![0u8; 1 << 20];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for b in noise.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    t.write("trees/5.0.0/assets/.keep", "");
    fs_err::write(t.path("trees/5.0.0/assets/noise.bin"), &noise).unwrap();
    t.run(".", &["pack", "trees/5.0.0", "--version", "5.0.0", "--registry", "reg"])
        .success();
    t.write(
        "w/p/app/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: 5.0.0\ndelivery: package\n",
    );
    t.run("w", &["lock"]).success();
    let small = t.path("small-cache");
    fs_err::create_dir_all(&small).unwrap();
    let a2c = t.cmd("w");
    let mut cmd = std::process::Command::new("unshare");
    cmd.current_dir(t.path("w"));
    for (k, v) in a2c.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.env("A2C_CACHE_DIR", &small).args([
        "-rm",
        "sh",
        "-c",
        r#"mount -t tmpfs -o size=256k,mode=0700 tmpfs "$A2C_CACHE_DIR" || exit 99
"$0" --json install --jobs 1 > out.json 2> err.txt; echo $? > code.txt
ls -A "$A2C_CACHE_DIR/bundles" > left.txt 2>&1
df -k "$A2C_CACHE_DIR" | tail -1 > df.txt"#,
    ]);
    let status = cmd.arg(a2c.get_program()).status().unwrap();
    assert!(status.success(), "the namespace ran");
    let read = |f: &str| fs_err::read_to_string(t.path(&format!("w/{f}"))).unwrap();
    assert_eq!(read("code.txt").trim(), "1", "{}", read("err.txt"));
    let err = read("err.txt");
    assert!(err.contains("is full") && err.contains("a2c cache prune"), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&read("out.json")).unwrap();
    // The other versions were installed: the error is "partly", its cause the full disk.
    let text = doc["error"].to_string();
    assert!(
        text.contains("is full") && text.contains("partial download was removed"),
        "{doc}"
    );
    assert!(
        doc["error"]["hint"]
            .as_str()
            .is_some_and(|h| h.contains("a2c cache prune")),
        "{doc}"
    );
    assert!(
        !read("left.txt").contains(".partial"),
        "no partial download left: {}",
        read("left.txt")
    );
}
