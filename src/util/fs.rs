//! File-system helpers that keep the path in every error.

use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` atomically: a temporary file in the same directory, flushed and
/// synced, then renamed over the target. Readers see the old file or the new one, never half.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
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
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .map_err(|e| std::io::Error::new(e.error.kind(), format!("{} writing `{}`", e.error, path.display())))?;
    Ok(())
}
