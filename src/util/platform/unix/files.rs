//! What a2c reads and sets of a file that differs between operating systems: its mode (the
//! permission bits), identity, link count, owner and change time; a directory private to its
//! owner; a positioned write; a no-follow `touch`; symbolic links; and the errors that mean
//! "not across filesystems" or "this filesystem cannot clone". Callers name these, never
//! `std::os::unix` or `rustix` (the architecture test checks it).

use std::fs::{File, Metadata};

use crate::util::platform::{MetaExt, Opened};
use std::io;
use std::path::Path;

impl MetaExt for Metadata {
    fn mode(&self) -> u32 {
        std::os::unix::fs::MetadataExt::mode(self)
    }
    fn nlink(&self) -> u64 {
        std::os::unix::fs::MetadataExt::nlink(self)
    }
    fn dev(&self) -> u64 {
        std::os::unix::fs::MetadataExt::dev(self)
    }
    fn ino(&self) -> u64 {
        std::os::unix::fs::MetadataExt::ino(self)
    }
    fn uid(&self) -> u32 {
        std::os::unix::fs::MetadataExt::uid(self)
    }
    fn modified_ns(&self) -> i128 {
        use std::os::unix::fs::MetadataExt;
        i128::from(self.mtime()) * 1_000_000_000 + i128::from(self.mtime_nsec())
    }
    fn changed_ns(&self) -> i128 {
        use std::os::unix::fs::MetadataExt;
        i128::from(self.ctime()) * 1_000_000_000 + i128::from(self.ctime_nsec())
    }
}

/// The effective user id of this process (the owner a2c's own files must have).
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Sets the permission bits of the open `file` to `mode`.
pub fn set_file_mode(file: &File, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

/// Sets the permission bits of `path` (followed if a link: callers name their own files).
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// A `DirBuilder` whose directories are private to their owner (0700).
pub fn private_dir_builder() -> std::fs::DirBuilder {
    dir_builder(0o700)
}

/// A `DirBuilder` whose directories get `mode` (before the umask).
pub fn dir_builder(mode: u32) -> std::fs::DirBuilder {
    use std::os::unix::fs::DirBuilderExt;
    let mut builder = std::fs::DirBuilder::new();
    builder.mode(mode);
    builder
}

/// Opens `path` with `options` without following a link as its last component (a link there
/// fails as [`Failure::Link`](crate::util::platform::Failure)), the file getting `mode` if created, and
/// without blocking on a FIFO when `nonblock` (what is there must then be checked).
pub fn open_no_follow(options: &mut std::fs::OpenOptions, path: &Path, mode: u32, nonblock: bool) -> io::Result<File> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if nonblock {
        flags |= OFlags::NONBLOCK;
    }
    options.mode(mode).custom_flags(flags.bits() as i32).open(path)
}

/// Writes all of `bytes` at `offset` of `file` without moving its position.
pub fn write_all_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

/// Sets `path`'s modification time to now, without following a link (best effort: a missing
/// file or another owner's is left as it is).
pub fn touch(path: &Path) {
    use rustix::fs::{AtFlags, CWD, Timestamps, UTIME_NOW};
    let now = rustix::fs::Timespec {
        tv_sec: 0,
        tv_nsec: UTIME_NOW,
    };
    let _ = rustix::fs::utimensat(
        CWD,
        path,
        &Timestamps {
            last_access: now,
            last_modification: now,
        },
        AtFlags::SYMLINK_NOFOLLOW,
    );
}

/// Makes `link` a symbolic link to the file `target`: an agent runtime's folder pointing into
/// the installed tree (`agents`), so that a version switch re-points it. A2c makes no other.
pub fn file_link(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Makes `link` a symbolic link to `target`: tests plant links (a2c itself never makes one).
#[cfg(test)]
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Opens `path` for reading without following a link in its last component and without
/// blocking on a FIFO (what is there must then be checked to be a regular file). A link there
/// is [`Opened::Link`], nothing there [`Opened::Missing`].
pub fn open_read_nofollow(path: &Path) -> Opened {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => Opened::File(File::from(fd)),
        Err(rustix::io::Errno::NOENT) => Opened::Missing,
        Err(rustix::io::Errno::LOOP) => Opened::Link,
        Err(e) => Opened::Failed(e.into()),
    }
}

/// Makes `path` and what is below it removable: nothing to do on Unix (removal asks the
/// directory's permission, not the file's).
pub fn make_removable(path: &Path) {
    let _ = path;
}

/// Whether `e` says a hard link or a rename cannot cross filesystems.
pub fn is_cross_device(e: &io::Error) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error())
}

/// Whether `e`, from a clone, means "this filesystem (or these two files) cannot clone": the
/// caller then links or copies.
pub fn cannot_clone(e: &io::Error) -> bool {
    use rustix::io::Errno;
    [
        Errno::OPNOTSUPP,
        Errno::NOTSUP,
        Errno::XDEV,
        Errno::INVAL,
        Errno::NOTTY,
        Errno::PERM,
    ]
    .iter()
    .any(|n| e.raw_os_error() == Some(n.raw_os_error()))
}

/// The number of hard links to the file `meta` describes (found at `path`): the metadata's own
/// on Unix, no further call.
/// Whether `a` and `b` are one file (hard links of each other, or the same path): the same
/// device and inode, neither followed if a link. `false` when either cannot be read.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::symlink_metadata(a), std::fs::symlink_metadata(b)) {
        (Ok(x), Ok(y)) => MetaExt::dev(&x) == MetaExt::dev(&y) && MetaExt::ino(&x) == MetaExt::ino(&y),
        _ => false,
    }
}

pub fn link_count(meta: &Metadata, path: &Path) -> u64 {
    let _ = path;
    meta.nlink()
}
