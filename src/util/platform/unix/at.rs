//! Stating, opening and creating relative to an open directory, never following what must not
//! be followed: the snapshot re-checks thousands of recorded paths this way, each from its
//! nearest checked directory rather than from W, and containment creates every directory and
//! file of an extraction relative to its parent's handle.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::util::platform::{Failure, FileKind, Stat};

/// An open directory that names are resolved below.
pub type DirFd = OwnedFd;

/// A borrowed [`DirFd`] (or an open `File` that is a directory).
pub type DirRef<'a> = BorrowedFd<'a>;

/// `rel` below `dir`, its last component not followed; `None` when nothing is there (or a
/// component on the way is no directory).
pub fn stat_at(dir: DirRef<'_>, rel: &str) -> io::Result<Option<Stat>> {
    match rustix::fs::statat(dir, rel, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(of(&st))),
        Err(Errno::NOENT | Errno::NOTDIR) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The directory `rel` below `dir`, opened without following a link, and what it is; `None`
/// when it is no directory (or a link) now.
pub fn open_dir_at(dir: DirRef<'_>, rel: &str) -> io::Result<Option<(DirFd, Stat)>> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(dir, rel, flags, Mode::empty()) {
        Ok(fd) => {
            let st = of(&rustix::fs::fstat(&fd)?);
            Ok(Some((fd, st)))
        }
        Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The handle of an open directory (`File` or [`DirFd`]) to resolve names below.
pub fn dir_of(dir: &impl AsFd) -> DirRef<'_> {
    dir.as_fd()
}

/// What the error of a call below a directory met.
pub fn failure(e: &io::Error) -> Failure {
    match e.raw_os_error().map(Errno::from_raw_os_error) {
        Some(Errno::NOENT) => Failure::Missing,
        Some(Errno::LOOP) => Failure::Link,
        // `openat2`'s RESOLVE_BENEATH: the path would leave the directory.
        Some(Errno::XDEV) => Failure::Escape,
        Some(Errno::NOTDIR) => Failure::NotDir,
        Some(Errno::EXIST) => Failure::Exists,
        _ => Failure::Other,
    }
}

/// What `rel` below `dir` is, its last component followed when `follow` (`fstatat`).
pub fn kind_at(dir: DirRef<'_>, rel: &Path, follow: bool) -> io::Result<FileKind> {
    let flags = if follow {
        AtFlags::empty()
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    Ok(kind(&rustix::fs::statat(dir, rel, flags)?))
}

/// Opens the directory `path` itself without following a link; when `handle_only`, as a
/// handle to resolve names below and nothing more (`O_PATH` on Linux: the directory needs no
/// read permission).
pub fn open_dir(path: &Path, handle_only: bool) -> io::Result<DirFd> {
    let base = if handle_only {
        super::dir_handle_flags()
    } else {
        OFlags::RDONLY
    };
    let flags = base | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

/// The directory `rel` below `dir` (`dir` itself when empty), reached without leaving it or
/// following a link: `openat2` where the kernel has it, else one `O_NOFOLLOW` component at a
/// time. A `..` (or a root) fails closed instead of being dropped.
pub fn dir_beneath(dir: DirRef<'_>, rel: &Path) -> io::Result<DirFd> {
    if rel.as_os_str().is_empty() {
        return Ok(rustix::io::dup(dir)?);
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    if let Some(opened) = super::open_beneath(dir, rel, flags, Mode::empty()) {
        return Ok(opened?);
    }
    let mut segments = Vec::new();
    for c in rel.components() {
        match c {
            std::path::Component::Normal(seg) => segments.push(seg),
            std::path::Component::CurDir => {}
            _ => return Err(Errno::INVAL.into()),
        }
    }
    let mut fd = rustix::io::dup(dir)?;
    for seg in segments {
        fd = match rustix::fs::openat(&fd, seg, flags | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(next) => next,
            // `O_NOFOLLOW | O_DIRECTORY` on a link answers ENOTDIR on some systems: a link it
            // is, and refused as one (as `openat2` reports it).
            Err(Errno::NOTDIR)
                if rustix::fs::statat(&fd, seg, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink) =>
            {
                return Err(Errno::LOOP.into());
            }
            Err(e) => return Err(e.into()),
        };
    }
    Ok(fd)
}

/// Opens the file `rel` below `dir` for reading; its last component is not followed (and a
/// FIFO does not block the open) unless `follow`.
pub fn read_below(dir: DirRef<'_>, rel: &Path, follow: bool) -> io::Result<File> {
    let mut flags = OFlags::RDONLY | OFlags::CLOEXEC;
    if !follow {
        flags |= OFlags::NOFOLLOW | OFlags::NONBLOCK;
    }
    Ok(File::from(rustix::fs::openat(dir, rel, flags, Mode::empty())?))
}

/// The names in the directory `path` (not followed if a link), `.` and `..` left out.
pub fn names(path: &Path) -> io::Result<Vec<OsString>> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    list(rustix::fs::open(path, flags, Mode::empty())?)
}

/// The names in the directory `rel` below `dir`, its last component not followed.
pub fn names_below(dir: DirRef<'_>, rel: &Path) -> io::Result<Vec<OsString>> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    list(rustix::fs::openat(dir, rel, flags, Mode::empty())?)
}

fn list(fd: OwnedFd) -> io::Result<Vec<OsString>> {
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(&fd)? {
        let name = entry?.file_name().to_bytes().to_vec();
        if name != b"." && name != b".." {
            names.push(std::os::unix::ffi::OsStringExt::from_vec(name));
        }
    }
    Ok(names)
}

/// Creates the directory `name` (one plain name) in `dir` with `mode`.
pub fn mkdir_in(dir: DirRef<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    Ok(rustix::fs::mkdirat(
        dir,
        name,
        Mode::from_raw_mode(super::raw_mode(mode)),
    )?)
}

/// Creates the new file `name` (one plain name) in `dir` with `mode` for writing: exclusive,
/// so nothing there is followed or replaced.
pub fn create_in(dir: DirRef<'_>, name: &OsStr, mode: u32) -> io::Result<File> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mode = Mode::from_raw_mode(super::raw_mode(mode));
    Ok(File::from(rustix::fs::openat(dir, name, flags, mode)?))
}

fn kind(st: &rustix::fs::Stat) -> FileKind {
    match FileType::from_raw_mode(st.st_mode as _) {
        FileType::Directory => FileKind::Dir,
        FileType::RegularFile => FileKind::File,
        FileType::Symlink => FileKind::Link,
        _ => FileKind::Other,
    }
}

#[allow(
    clippy::unnecessary_cast,
    reason = "the field types of `stat` differ between Unix platforms"
)]
fn of(st: &rustix::fs::Stat) -> Stat {
    let kind = match kind(st) {
        FileKind::File => 'f',
        FileKind::Dir => 'd',
        FileKind::Link => 'l',
        FileKind::Other => 'o',
    };
    Stat {
        kind,
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
        size: st.st_size as u64,
        mtime: (st.st_mtime as i64, st.st_mtime_nsec as u32),
        ctime: (st.st_ctime as i64, st.st_ctime_nsec as u32),
    }
}
