//! a2c installed without Rust: maturin builds a wheel of the a2c binary
//! (`bindings = "bin"`, pyproject.toml), pip installs it into a fresh venv, and the installed
//! entry point runs `--version` and the demo; `uv tool install` and `pipx install` install the
//! same wheel (pinned in .ci/requirements.txt), and each a2c leaves its updates to that tool.

use crate::support::{TestContext, succeeds};
use std::path::Path;
use std::process::Command;

fn found(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a2c_installs_from_a_wheel_and_runs_the_demo() {
    if !found("maturin") {
        crate::support::require_program("maturin (pip install -r .ci/requirements.txt; .ci/run does it)");
        return;
    }
    let t = TestContext::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dist = t.path("dist");
    // A target directory of its own: the one this suite runs from is held by its cargo.
    succeeds(
        Command::new(crate::support::program("maturin"))
            .args([
                "build",
                "--profile",
                "dev",
                "--compatibility",
                "linux",
                "--quiet",
                "--out",
            ])
            .arg(&dist)
            .arg("--manifest-path")
            .arg(root.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", root.join("target/wheel")),
        "maturin",
    );
    let wheels: Vec<_> = fs_err::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:?}");
    let name = wheels[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("a2c-{}-", env!("CARGO_PKG_VERSION"))),
        "{name}"
    );

    let venv = t.path("venv");
    succeeds(Command::new("python3").args(["-m", "venv"]).arg(&venv), "python3");
    succeeds(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--no-index", "--no-deps"])
            .arg(&wheels[0]),
        "command",
    );
    let a2c = venv.join("bin/a2c");
    let version = Command::new(&a2c).arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&version.stdout);
    assert!(
        text.starts_with(&format!("a2c {}", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );

    // pip installed it: `self update` leaves it to pip, names pip's command and changes nothing.
    let before = fs_err::read(&a2c).unwrap();
    let update = Command::new(&a2c)
        .args(["self", "update", "--from"])
        .arg(&dist)
        .env("HOME", t.path("home"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&update.stderr);
    assert_eq!(update.status.code(), Some(1), "{said}");
    let env = fs_err::canonicalize(&venv).unwrap();
    assert!(said.contains("was installed into the Python environment"), "{said}");
    let pip = format!(
        "hint: run `'{}' -m pip install --upgrade 'a2c'`",
        env.join("bin/python").display()
    );
    assert!(said.contains(&pip), "{said}");
    assert_eq!(fs_err::read(&a2c).unwrap(), before);

    // The same wheel installed as its users install tools — `uv tool install` and `pipx install`,
    // offline, into the test's home — runs, and leaves its updates to that tool.
    let home = t.path("home");
    let uv_bin = home.join(".local/bin-uv");
    let mut uv = Command::new(crate::support::program("uv"));
    uv.args([
        "tool",
        "install",
        "--offline",
        "--no-python-downloads",
        "--python",
        "python3",
    ])
    .arg(&wheels[0])
    .env("HOME", &home)
    .env("UV_TOOL_DIR", home.join(".local/share/uv/tools"))
    .env("UV_TOOL_BIN_DIR", &uv_bin)
    .env("UV_CACHE_DIR", t.path("uv-cache"));
    let pipx_bin = home.join(".local/bin-pipx");
    let mut pipx = Command::new(crate::support::program("pipx"));
    pipx.args(["install", "--pip-args=--no-index"])
        .arg(&wheels[0])
        .env("HOME", &home)
        .env("PIPX_HOME", home.join(".local/pipx"))
        .env("PIPX_BIN_DIR", &pipx_bin);
    for (tool, mut install, bin) in [("uv", uv, uv_bin), ("pipx", pipx, pipx_bin)] {
        if !crate::support::program(tool).is_file() && !found(tool) {
            crate::support::require_program(&format!(
                "{tool} (pip install -r .ci/requirements.txt; .ci/run does it)"
            ));
            continue;
        }
        succeeds(&mut install, tool);
        let installed = bin.join("a2c");
        let version = Command::new(&installed).arg("--version").output().unwrap();
        assert!(
            String::from_utf8_lossy(&version.stdout).starts_with(&format!("a2c {}", env!("CARGO_PKG_VERSION"))),
            "{tool}"
        );
        let before = fs_err::read(&installed).unwrap();
        let update = Command::new(&installed)
            .args(["self", "update", "--from"])
            .arg(&dist)
            .env("HOME", &home)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&update.stderr);
        assert_eq!(update.status.code(), Some(1), "{tool}: {said}");
        let hint = format!(
            "hint: run `{tool} {} --force 'a2c'`",
            if tool == "uv" { "tool install" } else { "install" }
        );
        assert!(said.contains(&hint), "{tool}: {said}");
        assert_eq!(fs_err::read(&installed).unwrap(), before, "{tool}");
    }

    let demo = Command::new("bash")
        .arg(root.join("fixtures/demo.sh"))
        .arg("--bin")
        .arg(&a2c)
        .env("TMPDIR", t.path("."))
        .env("HOME", t.path("home"))
        .env("A2C_CACHE_DIR", t.cache_dir())
        .env_remove("A2C_PROGRESS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&demo.stderr);
    assert!(demo.status.success(), "{stderr}");
    assert!(stderr.contains("installed 3, reused 0"), "{stderr}");
}
