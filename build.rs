//! Build script: `a2c --version` names the commit and its date when built from a git checkout
//! (`0.1.0 (3f2a1c9 2026-11-29)`), and only the version otherwise (a crate tarball). The commit
//! date, not the build date, keeps builds of one commit identical.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let version = env!("CARGO_PKG_VERSION");
    let long = match (
        git(&["rev-parse", "--short=9", "HEAD"]),
        git(&["log", "-1", "--format=%cs", "HEAD"]),
    ) {
        (Some(commit), Some(date)) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
            format!("{version} ({commit}{} {date})", if dirty { "-modified" } else { "" })
        }
        _ => version.to_string(),
    };
    println!("cargo:rustc-env=A2C_LONG_VERSION={long}");
    // The target it is built for: `a2c self update` takes that target's release archive.
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=A2C_BUILD_TARGET={target}");
    // Rebuild when HEAD moves (a commit, a checkout); the index for the dirty mark.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        for f in ["HEAD", "index"] {
            println!("cargo:rerun-if-changed={dir}/{f}");
        }
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{head_ref}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
