//! Stating and opening relative to an open directory, never following the last component: the
//! snapshot re-checks thousands of recorded paths this way, each from its nearest checked
//! directory rather than from W.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// An open directory that names are resolved below.
pub type DirFd = OwnedFd;

/// A borrowed [`DirFd`] (or an open `File` that is a directory).
pub type DirRef<'a> = BorrowedFd<'a>;

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

/// `rel` below `dir`, its last component not followed; `None` when nothing is there (or a
/// component on the way is no directory).
pub fn stat_at(dir: DirRef<'_>, rel: &str) -> io::Result<Option<Stat>> {
    use rustix::fs::{AtFlags, statat};
    match statat(dir, rel, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(of(&st))),
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The directory `rel` below `dir`, opened without following a link, and what it is; `None`
/// when it is no directory (or a link) now.
pub fn open_dir_at(dir: DirRef<'_>, rel: &str) -> io::Result<Option<(DirFd, Stat)>> {
    use rustix::fs::{Mode, OFlags, fstat, openat};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match openat(dir, rel, flags, Mode::empty()) {
        Ok(fd) => {
            let st = of(&fstat(&fd)?);
            Ok(Some((fd, st)))
        }
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The handle of an open directory (`File` or [`DirFd`]) to resolve names below.
pub fn dir_of(dir: &impl AsFd) -> DirRef<'_> {
    dir.as_fd()
}

#[allow(
    clippy::unnecessary_cast,
    reason = "the field types of `stat` differ between Unix platforms"
)]
fn of(st: &rustix::fs::Stat) -> Stat {
    use rustix::fs::FileType;
    let kind = match FileType::from_raw_mode(st.st_mode as _) {
        FileType::RegularFile => 'f',
        FileType::Directory => 'd',
        FileType::Symlink => 'l',
        _ => 'o',
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
