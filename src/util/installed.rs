//! How the running a2c was installed, and so what updates it: on its own (install-a2c.sh,
//! an archive), into a Python environment (pip, pipx, `uv tool`), by `cargo install`, or built
//! in a checkout. Told from the files beside the binary, nothing else: a Python environment's
//! `pyvenv.cfg`, cargo's `.crates.toml` in its home, a checkout's `Cargo.toml` above `target/`.

use std::path::{Path, PathBuf};

/// How the running a2c was installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// On its own (install-a2c.sh, an archive unpacked by hand): `self update` replaces it.
    Standalone(PathBuf),
    /// Into a Python environment (pip, pipx, `uv tool`): the environment's directory.
    Python { exe: PathBuf, env: PathBuf },
    /// By `cargo install`: cargo's `bin` directory.
    Cargo { exe: PathBuf },
    /// Built in a checkout of a2c (`target/debug` or `target/release` beside its Cargo.toml).
    Checkout { exe: PathBuf, root: PathBuf },
}

impl Installed {
    /// The running binary, as the system names it (links resolved).
    pub fn detect() -> std::io::Result<Self> {
        let exe = std::env::current_exe().and_then(|p| p.canonicalize())?;
        Ok(Self::of(exe))
    }

    pub(crate) fn of(exe: PathBuf) -> Self {
        let bin = exe.parent().unwrap_or(Path::new("/"));
        // A virtual environment's `bin` (Scripts on Windows) sits beside its pyvenv.cfg.
        if let Some(env) = bin.parent().filter(|e| e.join("pyvenv.cfg").is_file()) {
            let env = env.to_path_buf();
            return Self::Python { exe, env };
        }
        let profile = bin.file_name().and_then(|n| n.to_str());
        if let Some(root) = bin
            .parent()
            .filter(|t| t.file_name().is_some_and(|n| n == "target"))
            .and_then(Path::parent)
            && matches!(profile, Some("debug" | "release"))
            && root.join("Cargo.toml").is_file()
        {
            let root = root.to_path_buf();
            return Self::Checkout { exe, root };
        }
        // cargo keeps what it installed in `bin`'s parent (its home): .crates.toml, .crates2.json.
        let home = bin.parent().unwrap_or(bin);
        if bin.file_name().is_some_and(|n| n == "bin")
            && [".crates.toml", ".crates2.json"].iter().any(|f| home.join(f).is_file())
        {
            return Self::Cargo { exe };
        }
        Self::Standalone(exe)
    }

    /// What updates it to `version` (any version when `None`): the command the user runs.
    pub fn update_command(&self, version: Option<&str>) -> String {
        match (self, version) {
            (Self::Standalone(_), Some(v)) => format!("a2c self update --to {v}"),
            (Self::Standalone(_), None) => "a2c self update".into(),
            (Self::Python { env, .. }, v) => {
                let spec = v.map_or("a2c".to_string(), |v| format!("a2c=={v}"));
                match python_installer(env) {
                    Some("pipx") => format!("pipx install --force '{spec}'"),
                    Some("uv") => format!("uv tool install --force '{spec}'"),
                    _ => format!("'{}' -m pip install --upgrade '{spec}'", env_python(env).display()),
                }
            }
            (Self::Cargo { .. }, Some(v)) => format!("cargo install --locked a2c --version {v}"),
            (Self::Cargo { .. }, None) => "cargo install --locked a2c".into(),
            (Self::Checkout { root, .. }, _) => {
                format!("git -C '{}' pull && '{}/install.sh'", root.display(), root.display())
            }
        }
    }
}

/// What to do when a method needs a2c `min` or newer: the command that updates this a2c, as
/// it was installed (a test runs it).
pub fn upgrade_hint(min: &str) -> String {
    match Installed::detect() {
        Ok(Installed::Checkout { .. }) | Err(_) => {
            format!("upgrade a2c to {min} or newer (`./install.sh` from a newer checkout)")
        }
        Ok(installed) => format!("run `{}`", installed.update_command(Some(min))),
    }
}

/// Which tool made the Python environment `env`, as far as its path tells.
fn python_installer(env: &Path) -> Option<&'static str> {
    let text = env.to_string_lossy().replace('\\', "/");
    if text.contains("/pipx/venvs/") {
        Some("pipx")
    } else if text.contains("/uv/tools/") {
        Some("uv")
    } else {
        None
    }
}

fn env_python(env: &Path) -> PathBuf {
    match cfg!(windows) {
        true => env.join("Scripts").join("python.exe"),
        false => env.join("bin").join("python"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_environment_and_cargo_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join("pipx/venvs/a2c");
        std::fs::create_dir_all(env.join("bin")).unwrap();
        std::fs::write(env.join("pyvenv.cfg"), "home = /usr\n").unwrap();
        let installed = Installed::of(env.join("bin/a2c"));
        assert!(matches!(installed, Installed::Python { .. }), "{installed:?}");
        assert_eq!(
            installed.update_command(Some("1.2.0")),
            "pipx install --force 'a2c==1.2.0'"
        );
        let cargo = dir.path().join("cargo");
        std::fs::create_dir_all(cargo.join("bin")).unwrap();
        std::fs::write(cargo.join(".crates.toml"), "[v1]\n").unwrap();
        assert!(matches!(Installed::of(cargo.join("bin/a2c")), Installed::Cargo { .. }));
        let plain = Installed::of(dir.path().join("bin/a2c"));
        assert_eq!(plain.update_command(Some("1.2.0")), "a2c self update --to 1.2.0");
    }
}
