//! A cached tree's record (`record`): its first line `a2c-tree-cache N`, the bundle's sha256,
//! the tree digest, the version, when it was sealed, and per file its identity when cached.

use super::*;

/// The file system's "now": the change time of a mark written (and removed) in `dir`, on the
/// same file system and clock as the cached files. Every change made before it has a change
/// time no later than it.
pub(super) fn mark(dir: &Path) -> Result<i128, PlaceError> {
    let path = dir.join(format!(".mark-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    // Writable: Windows cannot remove a read-only file (its attribute), and the mark is removed.
    crate::util::contain::write_new(&path, b"", 0o600)?;
    let m = std::fs::symlink_metadata(&path).map_err(|e| at(e, "read the metadata of", &path));
    let _ = std::fs::remove_file(&path);
    Ok(ctime_ns(&m?))
}

pub(super) fn format_meta(sha: &str, tree: &str, version: &str, sealed: i128, files: &[Recorded]) -> String {
    let mut out = format!("{META_HEADER}\nsha256 {sha}\ntree {tree}\nversion {version}\nsealed {sealed}\n");
    for f in files {
        out.push_str(&format!(
            "{} {} {} {:o} {}\n",
            f.size, f.mtime_ns, f.nlink, f.mode, f.path
        ));
    }
    out
}

pub(super) fn parse_meta(text: &str) -> Option<Meta> {
    let mut lines = text.lines();
    if lines.next()? != META_HEADER {
        return None;
    }
    let sha = lines.next()?.strip_prefix("sha256 ")?.to_string();
    let tree = lines.next()?.strip_prefix("tree ")?.to_string();
    let version = lines.next()?.strip_prefix("version ")?.to_string();
    let sealed = lines.next()?.strip_prefix("sealed ")?.parse().ok()?;
    let mut files = Vec::new();
    for line in lines {
        let mut parts = line.splitn(5, ' ');
        let size = parts.next()?.parse().ok()?;
        let mtime_ns = parts.next()?.parse().ok()?;
        let nlink = parts.next()?.parse().ok()?;
        let mode = u32::from_str_radix(parts.next()?, 8).ok()?;
        let path = parts.next()?.to_string();
        // A record that names a path outside its tree is not ours.
        if path.is_empty() || path.starts_with('/') || path.split('/').any(|s| s.is_empty() || s == "." || s == "..") {
            return None;
        }
        files.push(Recorded {
            path,
            size,
            mtime_ns,
            nlink,
            mode,
        });
    }
    Some(Meta {
        sha,
        tree,
        version,
        sealed,
        files,
    })
}
