//! Portable relative paths: the rules member globs and archive entry names share.

use std::path::{Component, Path, PathBuf};

/// Windows device names, refused as any path segment (with or without an extension).
const DEVICE_NAMES: &[&str] = &[
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8", "com9", "lpt1", "lpt2",
    "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Checks that `s` is a portable POSIX relative path (globs allowed in segments): no absolute
/// path, drive letter, UNC prefix, backslash, NUL or control character, `..`, `.` or empty
/// segment, and no `.git` segment. Returns the reason when it is not.
pub fn check_portable_relative(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("it is empty".into());
    }
    if s.starts_with('/') {
        return Err("it is absolute; write it relative to the workspace root".into());
    }
    if s.contains('\\') {
        return Err("it contains a backslash; use `/` as the separator".into());
    }
    if s.chars().any(|c| c == '\0' || c.is_control()) {
        return Err("it contains a NUL or control character".into());
    }
    let bytes = s.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err("it starts with a drive letter".into());
    }
    for seg in s.split('/') {
        match seg {
            "" => return Err("it has an empty segment (`//` or a trailing `/`)".into()),
            "." => return Err("it has a `.` segment".into()),
            ".." => return Err("it has a `..` segment; paths may not leave the workspace".into()),
            _ if seg.eq_ignore_ascii_case(".git") => return Err("it reaches into `.git`".into()),
            _ => {}
        }
        if seg.contains(':') {
            return Err(format!("segment `{seg}` contains `:`"));
        }
        let stem = seg.split('.').next().unwrap_or(seg).to_ascii_lowercase();
        if DEVICE_NAMES.contains(&stem.as_str()) {
            return Err(format!("segment `{seg}` is a Windows device name"));
        }
    }
    Ok(())
}

/// `path` relative to `base` with `/` separators, `.` when equal; `None` when outside.
pub fn relative_slash(base: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    Some(if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    })
}

/// Canonicalizes `path` when it exists (on Windows without the `\\?\` prefix where the plain
/// form names the same file), else returns it made absolute against the current dir.
pub fn absolute(path: &Path) -> PathBuf {
    match dunce::canonicalize(path) {
        Ok(p) => p,
        Err(_) => std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
    }
}

/// `path` with `.` and `..` components resolved lexically (no file system access; a `..` at
/// the root stays at the root).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The relative path from the directory `from` to `to`, both absolute (compared after
/// [`normalize`]): `../../reg/bundles/x.tar.gz`. `None` when either is relative.
pub fn relative_path(from: &Path, to: &Path) -> Option<PathBuf> {
    if !from.is_absolute() || !to.is_absolute() {
        return None;
    }
    let (from, to) = (normalize(from), normalize(to));
    let a: Vec<_> = from.components().collect();
    let b: Vec<_> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    Some(out)
}

/// `base.join(rel)` in one allocation of the exact size (`Path::join` copies `base`, then grows
/// to append: two, where thousands of members are built per run).
pub fn join_exact(base: &Path, rel: &str) -> PathBuf {
    let mut out = PathBuf::with_capacity(base.as_os_str().len() + 1 + rel.len());
    out.push(base);
    out.push(rel);
    out
}

/// Joining one of a2c's own `/`-separated relative paths (`.tools_local/esys/a2c`,
/// `index/esys/a2c.json`) segment by segment, so that the result is spelled with the platform's
/// separator throughout (on Windows `…\.tools_local\esys\a2c`, never `…\.tools_local/esys/a2c`).
pub trait JoinRel {
    fn join_rel(&self, rel: &str) -> PathBuf;
}

impl JoinRel for Path {
    fn join_rel(&self, rel: &str) -> PathBuf {
        let mut out = self.to_path_buf();
        out.extend(rel.split('/').filter(|s| !s.is_empty()));
        out
    }
}

/// The relative display of `path` under `base`, or the path itself.
pub fn display_under(base: &Path, path: &Path) -> String {
    crate::util::paths::relative_slash(base, path).unwrap_or_else(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_relative_path_of_a2c_is_joined_with_the_platform_separator() {
        use super::JoinRel;
        let base = std::path::Path::new("base");
        let joined = base.join_rel(".tools_local/esys/a2c");
        assert_eq!(joined, base.join(".tools_local").join("esys").join("a2c"));
        let s = std::path::MAIN_SEPARATOR;
        assert_eq!(joined.to_str().unwrap(), format!("base{s}.tools_local{s}esys{s}a2c"));
        assert_eq!(joined.components().count(), 4);
    }

    use super::*;

    #[test]
    fn join_exact_is_join_in_one_allocation() {
        for (base, rel) in [("/w", "products/p1"), ("/w/", "p"), ("/", "a/b"), ("/w", "")] {
            let joined = join_exact(Path::new(base), rel);
            assert_eq!(joined, Path::new(base).join(rel), "{base} {rel}");
            assert!(joined.capacity() <= base.len() + 1 + rel.len(), "{base} {rel}");
        }
    }

    #[test]
    fn relative_paths_between_absolute_ones() {
        let rel = |a: &str, b: &str| relative_path(Path::new(a), Path::new(b)).map(|p| p.display().to_string());
        assert_eq!(
            rel("/w/.tools/esys/a2c", "/reg/bundles/x.tar.gz").as_deref(),
            Some("../../../../reg/bundles/x.tar.gz")
        );
        assert_eq!(rel("/w", "/w/reg/x").as_deref(), Some("reg/x"));
        assert_eq!(rel("/w/a/../b", "/w/c").as_deref(), Some("../c"));
        assert_eq!(rel("w", "/x"), None);
        assert_eq!(normalize(Path::new("/a/b/../../../c")), PathBuf::from("/c"));
    }

    #[test]
    fn portable_paths_pass() {
        for ok in ["products/*", "libs/core", "a/**/b", "x.y", "con-tool"] {
            assert_eq!(check_portable_relative(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn non_portable_paths_fail_with_reason() {
        let cases = [
            ("/abs", "absolute"),
            ("C:/x", "drive"),
            ("c:x", "drive"),
            ("//server/share", "absolute"),
            ("a\\b", "backslash"),
            ("a/../b", ".."),
            ("..", ".."),
            ("a//b", "empty"),
            ("a/", "empty"),
            ("./a", "`.`"),
            ("a/.git/b", ".git"),
            (".GIT", ".git"),
            ("a/CON", "device"),
            ("nul.txt", "device"),
            ("a\u{0}b", "NUL"),
            ("", "empty"),
        ];
        for (bad, why) in cases {
            let reason = check_portable_relative(bad).unwrap_err();
            assert!(reason.contains(why), "{bad:?}: {reason}");
        }
    }

    #[test]
    fn relative_slash_works() {
        assert_eq!(relative_slash(Path::new("/w"), Path::new("/w")).as_deref(), Some("."));
        assert_eq!(
            relative_slash(Path::new("/w"), Path::new("/w/a/b")).as_deref(),
            Some("a/b")
        );
        assert_eq!(relative_slash(Path::new("/w"), Path::new("/x")), None);
    }
}
