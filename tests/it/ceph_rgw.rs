//! Ceph's S3 gateway (RGW, Debian's `radosgw` 16) as an `s3://` registry: a one-monitor,
//! one-OSD (memstore) cluster started on loopback by each test, its gateway checking every
//! SigV4 signature. RGW 16 compares `If-Match` with the bare ETag (it refuses every quoted
//! one, though it answers ETags quoted): the index's compare-and-swap still holds there.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::servers::curl_status;
use crate::support::{Spawned, TestContext, free_port, layout, require_program};

const KEY_ID: &str = "AKIDA2CRGW";
const SECRET: &str = "rgw-s3cret-for-a2c";
const BUCKET: &str = "team-methods";

/// The cluster's daemons (dropped gateway first, the monitor last) and the gateway's port.
struct Rgw {
    _daemons: Vec<Spawned>,
    port: u16,
}

impl Rgw {
    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn env(&self, secret: &str) -> Vec<(&'static str, String)> {
        crate::object_stores::aws_env(self.endpoint(), KEY_ID, secret)
    }

    /// A request signed (SigV4) by curl with the test identity: the HTTP status it got.
    fn signed(&self, method: &str, path: &str, extra: &[&str]) -> String {
        let user = format!("{KEY_ID}:{SECRET}");
        let mut args = vec!["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", &user];
        // RGW refuses a signature over a body curl did not hash.
        args.extend(["-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-X", method]);
        args.extend(extra);
        let url = format!("{}{path}", self.endpoint());
        args.push(&url);
        curl_status(&args)
    }
}

/// The programs a cluster takes, all from Debian's radosgw, ceph-mon and ceph-osd.
const PROGRAMS: [&str; 6] = ["ceph-mon", "ceph-osd", "radosgw", "monmaptool", "radosgw-admin", "ceph"];

fn run(dir: &Path, program: &str, args: &[&str]) -> String {
    let attempt = || {
        Command::new(program)
            .current_dir(dir)
            .args(["-c", "ceph.conf"])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"))
    };
    let mut out = attempt();
    // Ceph 16's clients may send a command before they know the cluster's fsid, which the
    // monitor refuses (EPERM, "wrong fsid"): the same command, a moment later, goes through.
    for _ in 0..5 {
        if out.status.success() || program != "ceph" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
        out = attempt();
    }
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn daemon(dir: &Path, program: &str, args: &[&str]) -> Spawned {
    Spawned(
        Command::new(program)
            .current_dir(dir)
            .args(["-f", "-c", "ceph.conf"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program}: {e}")),
    )
}

/// Starts a cluster with one S3 user (`KEY_ID`/`SECRET`) and the bucket `BUCKET`, or `None`
/// (after the SKIPPED line) when Ceph is not installed.
fn rgw(t: &TestContext) -> Option<Rgw> {
    if PROGRAMS
        .iter()
        .any(|p| Command::new(p).arg("--version").output().is_err())
    {
        require_program("radosgw, ceph-mon and ceph-osd (apt-get install radosgw ceph-mon ceph-osd; .ci/run does it)");
        return None;
    }
    // A daemon whose port another process took meanwhile (free_port's race) stops: the
    // cluster is made again, on other ports.
    for attempt in 0..3 {
        if let Some(server) = start(&t.path(&format!("ceph-{attempt}"))) {
            return Some(server);
        }
    }
    panic!("the Ceph cluster did not start in 3 attempts (see ceph-*/log in the test's directory)");
}

/// [`rgw`] in `dir`; `None` when the monitor or the gateway could not listen on its port.
fn start(dir: &Path) -> Option<Rgw> {
    let dir = dir.to_path_buf();
    for sub in ["mon", "osd", "run", "log"] {
        fs_err::create_dir_all(dir.join(sub)).unwrap();
    }
    let (mon, port) = (free_port(), free_port());
    // Each cluster its own ids: a daemon that reaches another test's cluster is refused there.
    let uuid = || {
        fs_err::read_to_string("/proc/sys/kernel/random/uuid")
            .unwrap()
            .trim()
            .to_string()
    };
    let fsid = &uuid();
    fs_err::write(dir.join("ceph.conf"), config(&dir, fsid, mon, port)).unwrap();
    run(
        &dir,
        "monmaptool",
        &[
            "--create",
            "--addv",
            "a",
            &format!("[v1:127.0.0.1:{mon}]"),
            "--fsid",
            fsid,
            "monmap",
        ],
    );
    run(&dir, "ceph-mon", &["--mkfs", "-i", "a", "--monmap", "monmap"]);
    let mut monitor = daemon(&dir, "ceph-mon", &["-i", "a"]);
    if !monitor.listening(mon, 30) {
        return None;
    }
    let mut daemons = vec![monitor];
    let osd_uuid = &uuid();
    run(&dir, "ceph", &["--connect-timeout", "30", "osd", "create", osd_uuid]);
    run(&dir, "ceph-osd", &["-i", "0", "--mkfs", "--osd-uuid", osd_uuid]);
    // Placed in the CRUSH map here, not by the OSD as it starts: Ceph 16's OSD may send that
    // command before it knows the cluster's fsid, and then stops.
    run(
        &dir,
        "ceph",
        &[
            "--connect-timeout",
            "30",
            "osd",
            "crush",
            "add",
            "osd.0",
            "1",
            "root=default",
        ],
    );
    daemons.push(daemon(&dir, "ceph-osd", &["-i", "0"]));
    let mut gateway = daemon(&dir, "radosgw", &["-n", "client.rgw"]);
    if !gateway.listening(port, 120) && matches!(gateway.0.try_wait(), Ok(Some(_))) {
        return None;
    }
    if !gateway.listening(port, 1) {
        let status = Command::new("ceph")
            .current_dir(&dir)
            .args(["-c", "ceph.conf", "--connect-timeout", "10", "-s"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        panic!(
            "radosgw did not listen: {}\nthe cluster: {status:?}\nthe OSD's {}",
            log_tail(&dir.join("log/client.rgw.log")),
            log_tail(&dir.join("log/osd.0.log"))
        );
    }
    daemons.push(gateway);
    daemons.reverse();
    run(
        &dir,
        "radosgw-admin",
        &[
            "user",
            "create",
            "--uid",
            "a2c",
            "--display-name",
            "a2c tests",
            "--access-key",
            KEY_ID,
            "--secret",
            SECRET,
        ],
    );
    let server = Rgw {
        _daemons: daemons,
        port,
    };
    // The bucket, made by its owner: the gateway takes it once the cluster's pools are active.
    for attempt in 0.. {
        let status = server.signed("PUT", &format!("/{BUCKET}"), &[]);
        if status == "200" {
            break;
        }
        assert!(
            attempt < 120,
            "cannot create the bucket: HTTP {status}; {}",
            log_tail(&dir.join("log/client.rgw.log"))
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    Some(server)
}

/// One monitor and one OSD keeping objects in memory, without cephx (RGW still checks every S3
/// signature), every path in `dir`.
fn config(dir: &Path, fsid: &str, mon: u16, port: u16) -> String {
    let d = dir.display();
    format!(
        "[global]
fsid = {fsid}
mon host = v1:127.0.0.1:{mon}
public addr = 127.0.0.1
ms bind msgr2 = false
auth cluster required = none
auth service required = none
auth client required = none
osd objectstore = memstore
memstore device bytes = 536870912
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd pool default pg autoscale mode = off
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
osd crush chooseleaf type = 0
osd crush update on start = false
osd class update on start = false
run dir = {d}/run
admin socket = {d}/run/$name.asok
log file = {d}/log/$name.log
pid file = {d}/run/$name.pid
keyring = {d}/keyring
mon cluster log to file = false
[mon.a]
mon data = {d}/mon
[osd.0]
osd data = {d}/osd
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:{port}
rgw data = {d}/rgw
"
    )
}

fn log_tail(path: &PathBuf) -> String {
    let log = fs_err::read_to_string(path).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(30).collect();
    format!(
        "its log ends:\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    )
}

/// The flows of a registry through RGW: pack (create-only), lock, install, outdated, a yank,
/// a foreign object under a version's name refused, a wrong secret named, a bundle changed
/// behind the lock refused.
#[test]
fn a_ceph_rgw_bucket_is_a_registry() {
    let t = TestContext::new();
    let Some(store) = rgw(&t) else { return };
    let registry = format!("s3://{BUCKET}/methods/a2c");
    let env = store.env(SECRET);
    let pack = |v: &str| {
        t.method_tree(&format!("trees/{v}"), v);
        let tree = format!("trees/{v}");
        t.run_env(".", &["pack", &tree, "--version", v, "--registry", &registry], &env)
    };
    let run = pack("1.0.0");
    run.success();
    insta::assert_snapshot!(run.transcript());
    // The second publish replaces the index on its ETag: RGW 16 takes only the bare one.
    pack("1.1.0").success();
    t.app_superbuild(&registry);
    t.ok_env("w", &["lock"], &env);
    t.ok_env("w", &["install"], &env);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    let doc = t.ok_env("w", &["outdated", "--json"], &env).json();
    assert_eq!(doc["newest"], "1.1.0", "{doc}");
    t.ok_env(".", &["yank", "1.1.0", "--registry", &registry], &env);
    let doc = t.ok_env("w", &["outdated", "--json"], &env).json();
    assert_eq!(doc["newest"], "1.0.0", "a yanked version is not offered: {doc}");

    // Another tool wrote under the name 1.2.0's bundle takes: the create-only write is refused.
    let foreign = t.write("foreign.tar.gz", "not a bundle");
    let status = store.signed(
        "PUT",
        &format!("/{BUCKET}/methods/a2c/bundles/a2c-1.2.0.tar.gz"),
        &["-T", &foreign.display().to_string()],
    );
    assert_eq!(status, "200");
    let run = pack("1.2.0");
    run.failure();
    insta::assert_snapshot!(run.error_transcript());

    // A wrong secret: the gateway refuses it, said with where the credentials came from.
    t.forget_installed("w");
    let wrong = store.env("not-the-secret");
    let run = t.run_env("w", &["outdated"], &wrong);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());

    // The locked bundle replaced behind the lock: refused, nothing installed.
    let status = store.signed(
        "PUT",
        &format!("/{BUCKET}/methods/a2c/bundles/a2c-1.0.0.tar.gz"),
        &["-T", &foreign.display().to_string()],
    );
    assert_eq!(status, "200");
    let run = t.run_env("w", &["install"], &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
}

/// Publishers racing on RGW all land in the index, the compare-and-swap done with the bare
/// ETag: the gateway refuses a stale bare one and a quoted current one alike (412), which is
/// why a2c retries a refused quoted ETag bare once the index is seen unchanged. Then the same
/// bundles under a second prefix mirror the first, and vendor copies them out.
#[test]
fn racing_publishers_mirrors_and_vendor_on_ceph_rgw() {
    let t = TestContext::new();
    let Some(store) = rgw(&t) else { return };
    let env = store.env(SECRET);
    let (primary, mirror) = (format!("s3://{BUCKET}/primary"), format!("s3://{BUCKET}/mirror"));
    let versions = crate::object_stores::packs_at_once(&t, &primary, &env);
    let index_path = format!("/{BUCKET}/primary/index/esys/a2c.json");
    let read = t.path("index.json").display().to_string();
    assert_eq!(store.signed("GET", &index_path, &["-o", &read]), "200");
    let index: serde_json::Value = serde_json::from_str(&fs_err::read_to_string(&read).unwrap()).unwrap();
    let mut listed = crate::support::strings_of(&index, "versions", "version");
    listed.sort();
    assert_eq!(listed, versions, "every racing publish is in the index");
    let stale = t.write("stale.json", "{}");
    let stale = stale.display().to_string();
    assert_eq!(
        store.signed("PUT", &index_path, &["-H", "If-Match: 0123", "-T", &stale]),
        "412"
    );

    // The mirror: the same bundle under another prefix serves the lock when the primary lost it.
    t.app_locked(&primary, &[&mirror], &env);
    let lost = format!("/{BUCKET}/primary/bundles/a2c-1.0.0.tar.gz");
    assert_eq!(store.signed("DELETE", &lost, &[]), "204");
    let mut mirrored = env.clone();
    mirrored.push(("A2C_MIRRORS", mirror.clone()));
    t.ok_env("w", &["install"], &mirrored);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    crate::object_stores::vendored_then_offline(&t, &mirrored, store);
}
