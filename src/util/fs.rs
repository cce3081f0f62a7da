//! File-system helpers that keep the path in every error.

use std::io::Write;
use std::path::Path;

/// The process's umask, read without changing it (`/proc/self/status`), else the usual 022.
pub fn umask() -> u32 {
    static UMASK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *UMASK.get_or_init(|| {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
            })
            .unwrap_or(0o022)
    })
}

/// The mode of a new regular file as every other tool of the user would create it: 0666 less
/// the umask (0644 under the usual 022).
pub fn default_mode() -> u32 {
    0o666 & !umask()
}

/// Writes `contents` to `path` atomically: a temporary file in the same directory, flushed and
/// synced, then renamed over the target. Readers see the old file or the new one, never half.
/// The file gets the user's default mode (0666 less the umask), as a web server serving a
/// published registry or a colleague reading a lock expects.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    write_atomic_mode(path, contents, default_mode())
}

/// [`write_atomic`] with an explicit mode, set before any byte is written (0600 for secrets).
pub fn write_atomic_mode(path: &Path, contents: &[u8], mode: u32) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Callers check the components below W or R; the directory itself is re-checked here.
    crate::util::contain::refuse_link(dir)?;
    fs_err::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".a2c-write-")
        .tempfile_in(dir)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{e} in `{}`", dir.display())))?;
    crate::util::platform::set_file_mode(tmp.as_file(), mode)?;
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .map_err(|e| std::io::Error::new(e.error.kind(), format!("{} writing `{}`", e.error, path.display())))?;
    Ok(())
}

/// Removes a file or a directory tree (read-only files included: on Windows their attribute
/// is cleared first, as Windows removes no read-only file).
pub fn remove_tree(path: &Path) -> std::io::Result<()> {
    crate::util::platform::make_removable(path);
    match fs_err::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs_err::remove_dir_all(path),
        Ok(_) => fs_err::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// The next step after a permission error (the error itself names the path): the store or
/// the cache is not writable by this user.
pub fn permission_hint(e: &std::io::Error) -> Option<String> {
    (e.kind() == std::io::ErrorKind::PermissionDenied).then(|| {
        format!(
            "a2c cannot write there as this user: fix the directory's owner or permissions (`ls -ld` it), or, for the cache, point {} at a directory you own",
            crate::env::A2C_CACHE_DIR
        )
    })
}

#[cfg(test)]
mod permission_tests {
    #[test]
    fn a_permission_error_leads_somewhere() {
        let e = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "failed to create the cache `/x`");
        let hint = super::permission_hint(&e).unwrap();
        assert!(hint.contains("A2C_CACHE_DIR") && hint.contains("ls -ld"), "{hint}");
        assert!(super::permission_hint(&std::io::Error::other("x")).is_none());
    }
}
