//! The platform seam: everything a2c does that differs between operating systems, under one set
//! of names. `unix/` serves Linux and macOS through rustix: `openat2` on Linux, and the walk of
//! one no-follow handle per component that macOS takes — forced on Linux too by the test-only
//! switch `A2C_TEST_PORTABLE`, so that the suite runs it on every CI run. `windows/` keeps the
//! same rules on handles: each component opened relative to its parent's handle
//! (`NtCreateFile`), a reparse point (symlink, junction, mount point) refused as a link is.
//! Callers name what is here, never `std::os::*`, `rustix` or `windows-sys` (the architecture
//! test checks it).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

use std::fs::{File, Metadata};
use std::io;

/// The facts a2c reads of a file's metadata, under one name on every platform. On Unix each is
/// the `stat` field of that name; `changed_ns` and `modified_ns` are the change and
/// modification times in nanoseconds since the epoch. Windows has no mode, owner or change
/// time in a `Metadata`: the mode is made from the type and the read-only attribute (0444
/// read-only, 0600 writable: ACLs, not modes, say who else may read; no execute bit), the
/// owner is this process's (Windows guards a profile's directories by their ACLs), the change
/// time is the modification time, and identity and link count are unknown (0, 1): where a
/// link count matters, [`link_count`] reads it from the file.
pub trait MetaExt {
    /// `st_mode`: the file type and permission bits.
    fn mode(&self) -> u32;
    fn nlink(&self) -> u64;
    fn dev(&self) -> u64;
    fn ino(&self) -> u64;
    fn uid(&self) -> u32;
    fn modified_ns(&self) -> i128;
    fn changed_ns(&self) -> i128;
}

/// Whether the file `meta` describes is executable by anyone (`x` in a tree record).
pub fn is_executable(meta: &Metadata) -> bool {
    meta.mode() & 0o111 != 0
}

/// Whether a file holding secrets is readable by others: owned by another user, or with any
/// group or other permission bit (credentials, secret keys).
pub fn exposed_to_others(meta: &Metadata) -> bool {
    meta.uid() != euid() || meta.mode() & 0o077 != 0
}

/// What [`open_read_nofollow`] found.
#[derive(Debug)]
pub enum Opened {
    File(File),
    Missing,
    Link,
    Failed(io::Error),
}

/// What [`stat_at`] reads: the kind (`f` file, `d` directory, `l` link, `o` anything else),
/// device, inode, size, and the modification and change times (seconds, nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub kind: char,
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
}

/// What a path is, its last component followed or not ([`kind_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Dir,
    File,
    Link,
    Other,
}

impl FileKind {
    /// The kind `std` reports (a Windows junction or mount point is a link here, as in `std`).
    pub fn of(t: std::fs::FileType) -> Self {
        if t.is_symlink() {
            FileKind::Link
        } else if t.is_dir() {
            FileKind::Dir
        } else if t.is_file() {
            FileKind::File
        } else {
            FileKind::Other
        }
    }
}

/// What a failed open, stat or create below a directory met, as containment tells its cases
/// apart ([`failure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Nothing is there.
    Missing,
    /// A link (or reparse point) where none may be followed.
    Link,
    /// A path that would leave the directory it is resolved below.
    Escape,
    /// Something other than a directory where one must be.
    NotDir,
    /// Something is there already (an exclusive create).
    Exists,
    Other,
}

/// `true` when the portable fallbacks are forced (test builds only). Only Linux has anything to
/// force: elsewhere the fallbacks are the only path.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn forced_portable() -> bool {
    cfg!(feature = "test-hooks") && crate::env::test_portable()
}

/// `name` as one plain name to resolve relative to a directory's handle: never empty, `.` or
/// `..`, and holding no separator (`/`, or `\` and `:` on Windows), so that it cannot leave the
/// handle it is resolved from.
pub fn plain_name(name: &std::ffi::OsStr) -> Option<&str> {
    let s = name.to_str()?;
    let bad = |c: char| c == '/' || c == '\0' || (cfg!(windows) && (c == '\\' || c == ':'));
    (!s.is_empty() && s != "." && s != ".." && !s.contains(bad)).then_some(s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_name_is_found_by_its_start_and_a_link_is_not_listed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(super::has_name_starting(d, b"sharedindex."), Some(false), "empty");
        // More entries than one `getdents` buffer holds, the one looked for among the last.
        for i in 0..400 {
            std::fs::write(d.join(format!("an_entry_with_a_long_name_{i:04}")), "").unwrap();
        }
        assert_eq!(super::has_name_starting(d, b"sharedindex."), Some(false));
        std::fs::write(d.join("sharedindex.0123"), "").unwrap();
        assert_eq!(super::has_name_starting(d, b"sharedindex."), Some(true));
        assert_eq!(super::has_name_starting(d, b"sharedindex.0124"), Some(false));
        let link = d.join("link");
        super::symlink(d, &link).unwrap();
        assert_eq!(super::has_name_starting(&link, b"sharedindex."), None);
        assert_eq!(super::has_name_starting(&d.join("missing"), b"x"), None);
    }

    /// git's hooks are off in every call a2c makes: the directory it names can never hold one,
    /// not even made by someone else first (`/dev/null` on Windows would be `C:\dev\null`).
    #[test]
    fn the_no_hooks_directory_can_never_be_made() {
        let dir = std::path::PathBuf::from(super::no_hooks_dir());
        assert!(dir.is_absolute(), "{dir:?}");
        assert!(!dir.is_dir(), "{dir:?}");
        assert!(
            std::fs::create_dir_all(dir.join("pre-commit")).is_err(),
            "{dir:?} could be made"
        );
        assert!(!dir.join("pre-commit").exists());
    }

    /// The tree cache tells a linked placement by its files' link counts: a hard link counts on
    /// every platform (on Windows read from the file, not the metadata).
    #[test]
    fn a_hard_link_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "x").unwrap();
        let count = |p: &std::path::Path| super::link_count(&std::fs::symlink_metadata(p).unwrap(), p);
        assert_eq!(count(&a), 1);
        std::fs::hard_link(&a, &b).unwrap();
        assert_eq!((count(&a), count(&b)), (2, 2));
    }

    /// One file is told by its identity on every platform (Windows' metadata has no device or
    /// inode number: every pair of files read as one there), so the tree cache never takes a
    /// copied tree for one that shares the store's files.
    #[test]
    fn one_file_is_told_from_another() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
        std::fs::write(&a, "x").unwrap();
        std::fs::write(&b, "x").unwrap();
        assert!(super::same_file(&a, &a));
        assert!(!super::same_file(&a, &b), "two files with the same bytes are two files");
        assert!(!super::same_file(&a, &dir.path().join("missing")));
        std::fs::hard_link(&a, &c).unwrap();
        assert!(super::same_file(&a, &c), "a hard link is the same file");
    }

    #[test]
    fn only_a_plain_name_resolves_below_a_handle() {
        for ok in ["a", "a.md", ".tools", "é"] {
            assert_eq!(super::plain_name(ok.as_ref()), Some(ok));
        }
        for bad in ["", ".", "..", "a/b", "/a", "a\0"] {
            assert_eq!(super::plain_name(bad.as_ref()), None, "{bad:?}");
        }
    }
}
