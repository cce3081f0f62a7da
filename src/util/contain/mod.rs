//! Containment: a cloned repository is untrusted input, symbolic links committed to it
//! included. Every path a2c touches below W or R (store, staging, store lock, tool state roots,
//! local pointer) is reached without following a link: each component is checked with `lstat`,
//! files a2c writes are opened with `O_NOFOLLOW`, and extraction works relative to a directory
//! handle with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` (or, on kernels without
//! `openat2`, a component-by-component walk with `O_NOFOLLOW`, which is just as strict).
//!
//! A refusal is an [`std::io::Error`] carrying a [`Refused`], so that it travels through every
//! module's `Io` variant and still yields its hint ([`refusal`]).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use crate::util::platform::{self, DirFd, Failure, MetaExt};

mod at;
mod beneath;

pub use crate::util::platform::FileKind;
pub use at::{At, DirHandle};
pub use beneath::{Beneath, beneath_mechanism};

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// A symbolic link, and where it points.
    Link(PathBuf),
    NotDir,
    NotFile,
    /// Owned by another user (their uid).
    NotOwned(u32),
    /// Writable by group or others without the sticky bit (the mode).
    Permissive(u32),
}

/// A path a2c refuses to use, and why. Nothing was read, written or removed through it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Refused {
    pub path: PathBuf,
    pub why: Why,
    /// The variable that chose this path, when one did (`A2C_CACHE_DIR`).
    pub variable: Option<&'static str>,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.path.display();
        match &self.why {
            Why::Link(target) => write!(
                f,
                "refusing `{p}`: it is a symbolic link (to `{}`), and a2c never follows links inside a repository, its store or its cache",
                target.display()
            ),
            Why::NotDir => write!(f, "refusing `{p}`: it is not a directory"),
            Why::NotFile => write!(f, "refusing `{p}`: it is not a regular file"),
            Why::NotOwned(uid) => write!(f, "refusing `{p}`: it is owned by another user (uid {uid})"),
            Why::Permissive(mode) => write!(
                f,
                "refusing `{p}`: other users can write to it (mode {:o}) and it is not sticky",
                mode & 0o7777
            ),
        }?;
        if let Some(var) = self.variable {
            write!(f, " (chosen by {var})")?;
        }
        Ok(())
    }
}

impl Refused {
    pub fn hint(&self) -> String {
        match (&self.why, self.variable) {
            (Why::NotOwned(_) | Why::Permissive(_), Some(var)) => format!(
                "point {var} at a directory of your own that only you can write (a2c creates it with mode 0700)"
            ),
            (Why::NotOwned(_) | Why::Permissive(_), None) => {
                "a2c writes only files and directories that you own and only you can write; remove this one".into()
            }
            (Why::Link(_), _) => {
                "a repository must not commit links in a2c's paths: replace the link with a real directory or file (or delete it), then run the command again"
                    .into()
            }
            _ => "move it out of the way, then run the command again".into(),
        }
    }

    fn io(self) -> io::Error {
        io::Error::other(self)
    }
}

/// The refusal inside an I/O error, if it is one.
pub fn refusal(e: &io::Error) -> Option<&Refused> {
    e.get_ref().and_then(|inner| inner.downcast_ref::<Refused>())
}

/// The refusal of `path` for `why`, as an I/O error.
pub fn refused(path: &Path, why: Why) -> io::Error {
    Refused {
        path: path.to_path_buf(),
        why,
        variable: None,
    }
    .io()
}

fn link_error(path: &Path) -> io::Error {
    let target = std::fs::read_link(path).unwrap_or_else(|_| PathBuf::from("?"));
    refused(path, Why::Link(target))
}

fn with_path(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("failed to {what} `{}`: {e}", path.display()))
}

/// `lstat`, `None` when the path does not exist.
fn lstat(path: &Path) -> io::Result<Option<std::fs::Metadata>> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(with_path(e, "inspect", path)),
    }
}

fn normal_components(rel: &Path) -> impl Iterator<Item = &std::ffi::OsStr> {
    rel.components().filter_map(|c| match c {
        Component::Normal(s) => Some(s),
        _ => None,
    })
}

/// Checks every existing component of `base/rel` below `base` with `lstat`: a symbolic link is
/// refused, and so is a non-directory where a directory must be. Returns whether the whole path
/// exists. `base` itself (W or R, chosen by the user) is not checked.
pub fn check(base: &Path, rel: impl AsRef<Path>) -> io::Result<bool> {
    let rel = rel.as_ref();
    let count = normal_components(rel).count();
    let mut path = base.to_path_buf();
    for (i, seg) in normal_components(rel).enumerate() {
        path.push(seg);
        match lstat(&path)? {
            None => return Ok(false),
            Some(m) if m.file_type().is_symlink() => return Err(link_error(&path)),
            Some(m) if i + 1 < count && !m.is_dir() => return Err(refused(&path, Why::NotDir)),
            Some(_) => {}
        }
    }
    Ok(true)
}

/// `true` when every component of `base/rel` exists and is a real directory (a link on the
/// way, or a component that is not a directory, is refused; a missing one gives `false`): one
/// `lstat` per component.
pub fn check_dir(base: &Path, rel: impl AsRef<Path>) -> io::Result<bool> {
    At::Path(base).check_dir(rel)
}

/// Refuses `path` when it is itself a symbolic link (a missing path is fine).
pub fn refuse_link(path: &Path) -> io::Result<()> {
    match lstat(path)? {
        Some(m) if m.file_type().is_symlink() => Err(link_error(path)),
        _ => Ok(()),
    }
}

/// `true` when `path` is a real directory (not a link to one).
pub fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Creates every missing component of `base/rel` (mode `mode`, before the umask), refusing
/// links and non-directories on the way; `base` must exist. Returns the full path.
pub fn create_dirs(base: &Path, rel: impl AsRef<Path>, mode: u32) -> io::Result<PathBuf> {
    let mut path = base.to_path_buf();
    for seg in normal_components(rel.as_ref()) {
        path.push(seg);
        match platform::dir_builder(mode).create(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(with_path(e, "create the directory", &path)),
        }
        // mkdir never follows a final link: whatever is there now is checked.
        match lstat(&path)? {
            Some(m) if m.file_type().is_symlink() => return Err(link_error(&path)),
            Some(m) if m.is_dir() => {}
            _ => return Err(refused(&path, Why::NotDir)),
        }
    }
    Ok(path)
}

pub use crate::util::platform::euid;

/// How [`open_write`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// Create it; fail if anything is there (`O_EXCL`).
    New,
    /// Open it if it is there (never truncating it), else create it.
    Existing,
    /// As `Existing`, every write going to its end (`O_APPEND`).
    Append,
}

/// Opens `path` for writing without following a link (`O_NOFOLLOW`): it must be a regular file
/// owned by this user. Never truncates.
pub fn open_write(path: &Path, how: Open, mode: u32) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).read(true);
    match how {
        Open::New => options.create_new(true),
        Open::Existing => options.create(true).truncate(false),
        Open::Append => options.create(true).append(true),
    };
    let file = match platform::open_no_follow(&mut options, path, mode, false) {
        Ok(f) => f,
        Err(e) if platform::failure(&e) == Failure::Link => return Err(link_error(path)),
        Err(e) => return Err(with_path(e, "open", path)),
    };
    owned_regular(&file, path)?;
    Ok(file)
}

fn owned_regular(file: &File, path: &Path) -> io::Result<()> {
    let meta = file.metadata().map_err(|e| with_path(e, "inspect", path))?;
    if !meta.is_file() {
        return Err(refused(path, Why::NotFile));
    }
    if meta.uid() != euid() {
        return Err(refused(path, Why::NotOwned(meta.uid())));
    }
    Ok(())
}

/// Creates the new file `path` (`O_EXCL | O_NOFOLLOW`) with `mode` and writes `bytes` into it.
pub fn write_new(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    use std::io::Write;
    open_write(path, Open::New, mode)?
        .write_all(bytes)
        .map_err(|e| with_path(e, "write", path))
}

/// The most a2c reads of a configuration file (adoption record, marker, pointer, lock).
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Reads a configuration file without following a link; `Ok(None)` when it does not exist.
/// A link is refused before anything is read, so no message can echo what it points to.
pub fn read_config(path: &Path) -> io::Result<Option<String>> {
    let Some(bytes) = read_capped(path, MAX_CONFIG_BYTES, CONFIG)? else {
        return Ok(None);
    };
    config_text(bytes, path).map(Some)
}

/// How a configuration file over [`MAX_CONFIG_BYTES`] is refused.
const CONFIG: &str = "a configuration file may have";

fn config_text(bytes: Vec<u8>, path: &Path) -> io::Result<String> {
    String::from_utf8(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "failed to read `{}`: stream did not contain valid UTF-8",
                path.display()
            ),
        )
    })
}

/// The rest of [`read_config`] once `file` (at `path`) is open.
fn read_opened_config(file: File, path: &Path) -> io::Result<String> {
    config_text(read_opened(file, path, MAX_CONFIG_BYTES, CONFIG)?, path)
}

/// Reads the regular file `path` whole, without following a link as its last component and
/// never more than `cap` bytes (a device such as `/dev/zero`, a FIFO or a file over the cap is
/// refused before its content is read; `what` ends the message: "more than the CAP WHAT");
/// `Ok(None)` when it does not exist.
pub fn read_capped(path: &Path, cap: u64, what: &str) -> io::Result<Option<Vec<u8>>> {
    let file = platform::open_no_follow(std::fs::OpenOptions::new().read(true), path, 0o666, true);
    let file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if platform::failure(&e) == Failure::Link => return Err(link_error(path)),
        Err(e) => return Err(with_path(e, "read", path)),
    };
    read_opened(file, path, cap, what).map(Some)
}

/// The rest of [`read_capped`] once `file` (at `path`) is open.
fn read_opened(file: File, path: &Path, cap: u64, what: &str) -> io::Result<Vec<u8>> {
    let meta = file.metadata().map_err(|e| with_path(e, "inspect", path))?;
    if !meta.is_file() {
        return Err(refused(path, Why::NotFile));
    }
    let too_big = |len: u64| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("`{}` is {len} bytes, more than the {cap} {what}", path.display()),
        )
    };
    if meta.len() > cap {
        return Err(too_big(meta.len()));
    }
    // Sized from the `fstat` above; a file that grows while read stops one byte past the cap.
    let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| with_path(e, "read", path))?;
    if bytes.len() as u64 > cap {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read_config`] of a file that must be this user's (in a cache other users may write to, a
/// file someone else made there is never trusted): one owned by another user is refused,
/// checked on the open file, naming `variable` when it chose the directory.
pub fn read_own_config(path: &Path, variable: Option<&'static str>) -> io::Result<Option<String>> {
    let Some(text) = read_config(path)? else {
        return Ok(None);
    };
    // `read_config` refused links and non-files; the owner is checked on the path it opened,
    // which in a sticky directory nobody else can replace once it is ours.
    let meta = std::fs::symlink_metadata(path).map_err(|e| with_path(e, "inspect", path))?;
    if meta.uid() != euid() {
        return Err(Refused {
            path: path.to_path_buf(),
            why: Why::NotOwned(meta.uid()),
            variable,
        }
        .io());
    }
    Ok(Some(text))
}

/// Refuses any symbolic link anywhere below `dir` (an `lstat` walk), and any entry that is
/// neither a regular file nor a directory.
pub fn refuse_links_below(dir: &Path) -> io::Result<()> {
    for entry in walkdir::WalkDir::new(dir).follow_links(false).min_depth(1) {
        let entry = entry.map_err(|e| io::Error::other(format!("failed to list `{}`: {e}", dir.display())))?;
        let t = entry.file_type();
        if t.is_symlink() {
            return Err(link_error(entry.path()));
        }
        if !t.is_dir() && !t.is_file() {
            return Err(refused(entry.path(), Why::NotFile));
        }
    }
    Ok(())
}

/// Checks that `dir` is a directory this user owns and that nobody else can write to, unless
/// it is sticky (as `/tmp` is: others cannot remove or replace what this user puts there).
pub fn check_private_dir(dir: &Path, variable: Option<&'static str>) -> io::Result<()> {
    let with_var = |why| {
        Refused {
            path: dir.to_path_buf(),
            why,
            variable,
        }
        .io()
    };
    let Some(meta) = lstat(dir)? else {
        return Ok(());
    };
    if meta.file_type().is_symlink() {
        // A user may point their cache at a link of their own; follow it for the owner check.
        let target = std::fs::metadata(dir).map_err(|e| with_path(e, "inspect", dir))?;
        return check_meta(&target, with_var);
    }
    check_meta(&meta, with_var)
}

fn check_meta(meta: &std::fs::Metadata, fail: impl Fn(Why) -> io::Error) -> io::Result<()> {
    if !meta.is_dir() {
        return Err(fail(Why::NotDir));
    }
    if meta.uid() != euid() {
        return Err(fail(Why::NotOwned(meta.uid())));
    }
    let mode = meta.mode();
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return Err(fail(Why::Permissive(mode)));
    }
    Ok(())
}

fn lstat_is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

impl crate::util::hint::Hint for Refused {
    fn hint(&self) -> Option<String> {
        Some(Refused::hint(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::platform::symlink;

    #[test]
    fn a_handle_answers_as_the_path_does() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("repo");
        let outside = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(repo.join(".tools/esys/a2c")).unwrap();
        fs_err::create_dir_all(outside.path().join("esys")).unwrap();
        fs_err::write(repo.join(".tools/esys/a2c/adoption.yaml"), "tool_version: 1.0.0\n").unwrap();
        fs_err::write(
            repo.join(".tools/esys/a2c/big"),
            vec![b'x'; MAX_CONFIG_BYTES as usize + 1],
        )
        .unwrap();
        fs_err::write(repo.join("file"), "").unwrap();
        symlink(outside.path(), repo.join(".tools_local")).unwrap();
        symlink("adoption.yaml", repo.join(".tools/esys/a2c/link.yaml")).unwrap();
        let handle = DirHandle::open(&repo).unwrap();
        let (by_path, by_handle) = (At::Path(&repo), At::Handle(&handle));
        assert_eq!(by_handle.path(), repo.as_path());
        let show = |r: io::Result<bool>| r.map_err(|e| e.to_string());
        for rel in [
            ".tools/esys/a2c",
            ".tools_local/esys",
            "file/x",
            "file",
            "missing/a",
            "",
        ] {
            assert_eq!(
                show(by_path.check_dir(rel)),
                show(by_handle.check_dir(rel)),
                "check_dir {rel}"
            );
        }
        assert_eq!(show(by_handle.check_dir(".tools/esys/a2c")), Ok(true));
        assert!(
            show(by_handle.check_dir(".tools_local/esys"))
                .unwrap_err()
                .contains("symbolic link")
        );
        for rel in [".tools", ".tools_local", "file", "missing", ".tools/esys/a2c/link.yaml"] {
            assert_eq!(by_path.kind(rel).unwrap(), by_handle.kind(rel).unwrap(), "kind {rel}");
            assert_eq!(
                by_path.kind_followed(rel),
                by_handle.kind_followed(rel),
                "kind_followed {rel}"
            );
        }
        assert_eq!(by_handle.kind(".tools_local").unwrap(), Some(FileKind::Link));
        assert_eq!(by_handle.kind_followed(".tools_local"), Some(FileKind::Dir));
        let read = |at: At<'_>, rel: &str| at.read_config(rel).map_err(|e| e.to_string());
        for rel in [
            ".tools/esys/a2c/adoption.yaml",
            ".tools/esys/a2c/link.yaml",
            ".tools/esys/a2c/big",
            ".tools/esys/a2c/missing.yaml",
            ".tools/esys/a2c",
        ] {
            assert_eq!(read(by_path, rel), read(by_handle, rel), "read_config {rel}");
        }
        assert_eq!(
            read(by_handle, ".tools/esys/a2c/adoption.yaml").unwrap().unwrap(),
            "tool_version: 1.0.0\n"
        );
        for at in [by_path, by_handle] {
            let e = at.read_to_string("missing.json").unwrap_err().to_string();
            assert!(e.contains(&repo.join("missing.json").display().to_string()), "{e}");
        }
        assert!(
            read(by_handle, ".tools/esys/a2c/link.yaml")
                .unwrap_err()
                .contains("symbolic link")
        );
        let names = |at: At<'_>, rel: &str| {
            at.names(rel).map(|mut n| {
                n.sort();
                n
            })
        };
        let listed = names(by_handle, ".tools/esys/a2c").unwrap();
        assert_eq!(listed, ["adoption.yaml", "big", "link.yaml"]);
        assert_eq!(names(by_path, ".tools/esys/a2c").unwrap(), listed);
        for at in [by_path, by_handle] {
            assert!(names(at, ".tools_local").is_err(), "a linked directory is not listed");
        }
        let e = names(by_handle, "missing").unwrap_err().to_string();
        assert!(e.contains(&repo.join("missing").display().to_string()), "{e}");
        // The handle stays on the directory it opened: a link swapped in for it later leads
        // the path elsewhere, never the handle.
        let moved = t.path().join("moved");
        fs_err::rename(&repo, &moved).unwrap();
        symlink(outside.path(), &repo).unwrap();
        assert!(by_handle.check_dir(".tools/esys/a2c").unwrap());
        assert_eq!(names(by_handle, ".tools/esys/a2c").unwrap(), listed);
        assert!(names(by_path, ".tools/esys/a2c").is_err());
        assert!(!by_path.check_dir(".tools/esys/a2c").unwrap());
        assert!(
            DirHandle::open(&repo).is_err(),
            "a link is never opened as the directory"
        );
    }

    #[test]
    fn links_are_refused_on_every_component() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path();
        let outside = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(base.join("a")).unwrap();
        symlink(outside.path(), base.join("a/b")).unwrap();
        let e = check(base, "a/b/c").unwrap_err();
        let r = refusal(&e).expect("a refusal");
        assert_eq!(r.path, base.join("a/b"));
        assert_eq!(r.why, Why::Link(outside.path().to_path_buf()));
        assert!(!check(base, "a/x/y").unwrap());
        assert!(create_dirs(base, "a/b/c", 0o755).is_err());
        assert!(
            fs_err::read_dir(outside.path()).unwrap().next().is_none(),
            "nothing created outside"
        );
        assert_eq!(create_dirs(base, "a/x/y", 0o700).unwrap(), base.join("a/x/y"));
    }

    #[test]
    fn beneath_never_leaves_its_directory() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let b = Beneath::open(t.path()).unwrap();
        b.create_dir(Path::new("d")).unwrap();
        b.create_dir(Path::new("d")).unwrap();
        b.create_file(Path::new("d/f"), 0o444).unwrap();
        assert!(b.create_file(Path::new("d/f"), 0o444).is_err(), "O_EXCL");
        symlink(outside.path(), t.path().join("link")).unwrap();
        for rel in ["link/f", "link/sub"] {
            let e = b.create_file(Path::new(rel), 0o444).unwrap_err();
            let r = refusal(&e).unwrap_or_else(|| panic!("{rel}: {e}"));
            assert_eq!(r.path, t.path().join("link"), "the link itself is named");
            assert_eq!(r.why, Why::Link(outside.path().to_path_buf()));
        }
        assert!(b.create_dir(Path::new("link/sub")).is_err());
        assert!(b.create_dir(Path::new("link")).is_err());
        assert!(fs_err::read_dir(outside.path()).unwrap().next().is_none());
        assert!(Beneath::open(&t.path().join("link")).is_err());
        // The last component is one plain name, never a way out of its directory's handle.
        for rel in ["d/..", "d/.", "..", "d/../../x"] {
            assert!(b.create_file(Path::new(rel), 0o444).is_err(), "{rel}");
            assert!(b.create_dir(Path::new(rel)).is_err() || rel == "d/.", "{rel}");
        }
        // A kept directory handle swapped for a link after it was opened: what is created next
        // lands in the directory it opened (still beneath), never through the link.
        b.create_file(Path::new("d/g"), 0o444).unwrap();
        fs_err::rename(t.path().join("d"), t.path().join("d.moved")).unwrap();
        symlink(outside.path(), t.path().join("d")).unwrap();
        b.create_file(Path::new("d/h"), 0o444).unwrap();
        assert!(t.path().join("d.moved/h").is_file());
        assert!(fs_err::read_dir(outside.path()).unwrap().next().is_none());
    }

    #[test]
    fn writes_never_follow_or_truncate() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        fs_err::write(&victim, "keep").unwrap();
        symlink(&victim, t.path().join("lock")).unwrap();
        let e = open_write(&t.path().join("lock"), Open::Existing, 0o600).unwrap_err();
        assert!(matches!(refusal(&e).unwrap().why, Why::Link(_)), "{e}");
        assert_eq!(fs_err::read_to_string(&victim).unwrap(), "keep");
        open_write(&victim, Open::Existing, 0o600).unwrap();
        assert_eq!(fs_err::read_to_string(&victim).unwrap(), "keep", "never truncated");
        assert!(open_write(&victim, Open::New, 0o600).is_err());
        let e = read_config(&t.path().join("lock")).unwrap_err();
        assert!(!e.to_string().contains("keep"));
        assert_eq!(read_config(&t.path().join("none")).unwrap(), None);
    }

    #[test]
    #[cfg(unix)]
    fn private_dirs() {
        let t = tempfile::tempdir().unwrap();
        check_private_dir(t.path(), None).unwrap();
        platform::set_mode(t.path(), 0o777).unwrap();
        let e = check_private_dir(t.path(), Some("A2C_CACHE_DIR")).unwrap_err();
        assert!(e.to_string().contains("A2C_CACHE_DIR"), "{e}");
        platform::set_mode(t.path(), 0o1777).unwrap();
        check_private_dir(t.path(), None).unwrap();
    }
}
