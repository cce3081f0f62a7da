//! Questions to the real `git` that every module may ask (read-only, no optional locks).

use std::path::Path;
use std::process::{Command, Stdio};

/// `true` when git tracks any file under `rel` in the work tree at `dir` (or in the repository
/// that contains `dir`). Outside a git repository, or without git, nothing is tracked.
pub fn tracks_anything_under(dir: &Path, rel: &str) -> bool {
    Command::new("git")
        .current_dir(dir)
        .args(["--no-optional-locks", "ls-files", "-z", "--cached", "--", rel])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|out| out.status.success() && !out.stdout.is_empty())
}
