//! What a2c reads and sets of a file on Windows: a mode made from the type and the read-only
//! attribute, the owner as this process (Windows guards a profile's directories by ACLs, not
//! by an owner a2c checks), positioned writes, a no-follow `touch`, and the errors that mean
//! "not across volumes" or "cannot clone".

use std::fs::{File, Metadata};
use std::io;
use std::os::windows::fs::{MetadataExt as _, OpenOptionsExt};
use std::os::windows::io::AsHandle;
use std::path::Path;

use windows_sys::Win32::Foundation::ERROR_NOT_SAME_DEVICE;
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_READONLY, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_WRITE_ATTRIBUTES,
};

use super::nt;
use crate::util::platform::{Failure, MetaExt, Opened};

impl MetaExt for Metadata {
    fn mode(&self) -> u32 {
        let kind = if self.file_type().is_symlink() {
            0o120_000
        } else if self.is_dir() {
            0o040_000
        } else {
            0o100_000
        };
        // A read-only file reads as an installed tree's files are recorded (0444); a writable
        // one as the owner's alone (0600): who else may read is the ACL's to say, and a
        // made-up "writable, readable by others" would refuse every secret key as exposed.
        let perm = match (self.is_dir(), self.file_attributes() & FILE_ATTRIBUTE_READONLY != 0) {
            (true, _) => 0o755,
            (false, true) => 0o444,
            (false, false) => 0o600,
        };
        kind | perm
    }
    fn nlink(&self) -> u64 {
        1
    }
    fn dev(&self) -> u64 {
        0
    }
    fn ino(&self) -> u64 {
        0
    }
    fn uid(&self) -> u32 {
        euid()
    }
    fn modified_ns(&self) -> i128 {
        (i128::from(self.last_write_time()) - 116_444_736_000_000_000) * 100
    }
    fn changed_ns(&self) -> i128 {
        self.modified_ns()
    }
}

/// The owner a2c's own files must have: one and the same on Windows (see the module doc).
pub fn euid() -> u32 {
    0
}

fn permissions_of(mut perms: std::fs::Permissions, mode: u32) -> std::fs::Permissions {
    perms.set_readonly(mode & 0o222 == 0);
    perms
}

/// Sets the open `file` read-only when `mode` has no write bit, writable otherwise.
pub fn set_file_mode(file: &File, mode: u32) -> io::Result<()> {
    let perms = file.metadata()?.permissions();
    file.set_permissions(permissions_of(perms, mode))
}

/// Sets `path` read-only when `mode` has no write bit, writable otherwise.
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    let perms = fs_err::metadata(path)?.permissions();
    fs_err::set_permissions(path, permissions_of(perms, mode))
}

/// A `DirBuilder` for a directory of this user's own (a profile's ACLs keep it private).
pub fn private_dir_builder() -> std::fs::DirBuilder {
    std::fs::DirBuilder::new()
}

/// A `DirBuilder` (Windows has no mode to give a directory).
pub fn dir_builder(mode: u32) -> std::fs::DirBuilder {
    let _ = mode;
    std::fs::DirBuilder::new()
}

/// Opens `path` with `options` without following a reparse point as its last component (one
/// there fails as [`Failure::Link`]); a created file is read-only when `mode` has no write bit.
/// (`nonblock` is for Unix FIFOs, which Windows has not.)
pub fn open_no_follow(options: &mut std::fs::OpenOptions, path: &Path, mode: u32, nonblock: bool) -> io::Result<File> {
    let _ = nonblock;
    options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    if mode & 0o222 == 0 {
        options.attributes(FILE_ATTRIBUTE_READONLY);
    }
    let file = options.open(path)?;
    nt::refuse_reparse(file.as_handle(), false)?;
    Ok(file)
}

/// Writes all of `bytes` at `offset` of `file` (Windows moves the file's position too).
pub fn write_all_at(file: &File, mut bytes: &[u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !bytes.is_empty() {
        match file.seek_write(bytes, offset)? {
            0 => return Err(io::ErrorKind::WriteZero.into()),
            n => {
                bytes = &bytes[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// Sets `path`'s modification time to now, without following a reparse point (best effort).
pub fn touch(path: &Path) {
    let opened = std::fs::OpenOptions::new()
        .access_mode(FILE_WRITE_ATTRIBUTES)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
        .open(path);
    if let Ok(file) = opened {
        let _ = file.set_modified(std::time::SystemTime::now());
    }
}

/// No link on Windows (making one needs a privilege most users lack): the caller copies.
pub fn file_link(target: &Path, link: &Path) -> io::Result<()> {
    let _ = (target, link);
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "links are not made on Windows: copied",
    ))
}

/// Makes `link` a symbolic link to `target`: tests plant links (a2c itself never makes one).
#[cfg(test)]
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (target, link) = (target.as_ref(), link.as_ref());
    let resolved = link.parent().map_or(target.to_path_buf(), |p| p.join(target));
    if resolved.is_dir() {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    }
}

/// Opens `path` for reading without following a reparse point in its last component. One
/// there is [`Opened::Link`], nothing there [`Opened::Missing`].
pub fn open_read_nofollow(path: &Path) -> Opened {
    match open_no_follow(std::fs::OpenOptions::new().read(true), path, 0o644, true) {
        Ok(file) => Opened::File(file),
        Err(e) => match super::failure(&e) {
            Failure::Missing => Opened::Missing,
            Failure::Link => Opened::Link,
            _ => Opened::Failed(e),
        },
    }
}

/// Makes `path` and every file below it removable, links not followed: Windows removes no file
/// with the read-only attribute (an installed tree's files have it), so it is cleared (best
/// effort: what cannot be changed fails the removal that follows, naming it).
pub fn make_removable(path: &Path) {
    for entry in walkdir::WalkDir::new(path).follow_links(false).into_iter().flatten() {
        if entry.file_type().is_file()
            && let Ok(meta) = entry.metadata()
            && meta.permissions().readonly()
        {
            let _ = std::fs::set_permissions(entry.path(), permissions_of(meta.permissions(), 0o600));
        }
    }
}

/// Whether `e` says a hard link or a rename cannot cross volumes.
pub fn is_cross_device(e: &io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_NOT_SAME_DEVICE as i32)
}

/// Whether `e`, from a clone, means "cannot clone here": always, as Windows offers none.
pub fn cannot_clone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
}

/// Whether `a` and `b` are one file (hard links of each other, or the same path), by the volume
/// and file index their handles report (opened without following a reparse point): Windows'
/// metadata carries no device or inode number in stable std. `false` when either cannot be opened.
pub fn same_file(a: &Path, b: &Path) -> bool {
    let identity = |path: &Path| {
        std::fs::OpenOptions::new()
            .access_mode(windows_sys::Win32::Storage::FileSystem::FILE_READ_ATTRIBUTES)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
            .open(path)
            .and_then(|file| nt::info(file.as_handle()))
            .map(|info| (info.dwVolumeSerialNumber, info.nFileIndexHigh, info.nFileIndexLow))
    };
    matches!((identity(a), identity(b)), (Ok(x), Ok(y)) if x == y)
}

/// The number of hard links to the file at `path` (`meta`, its metadata, has none on Windows:
/// std's is unstable), read from a handle opened without following a reparse point; 1 when it
/// cannot be opened.
pub fn link_count(meta: &Metadata, path: &Path) -> u64 {
    let _ = meta;
    std::fs::OpenOptions::new()
        .access_mode(windows_sys::Win32::Storage::FileSystem::FILE_READ_ATTRIBUTES)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
        .and_then(|file| nt::info(file.as_handle()))
        .map_or(1, |info| u64::from(info.nNumberOfLinks))
}
