//! Stating, opening and creating relative to an open directory on Windows: each component
//! opened relative to its parent's handle, no reparse point followed on the way (see
//! [`super`]).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, OwnedHandle};
use std::path::{Component, Path};

use windows_sys::Wdk::Storage::FileSystem::{
    FILE_CREATE, FILE_DIRECTORY_FILE, FILE_DIRECTORY_INFORMATION, FILE_NON_DIRECTORY_FILE, FILE_OPEN,
    FileDirectoryInformation, NtQueryDirectoryFile,
};
use windows_sys::Win32::Foundation::{
    ERROR_ALREADY_EXISTS, ERROR_DIRECTORY, ERROR_FILE_EXISTS, ERROR_FILE_NOT_FOUND, ERROR_INVALID_NAME,
    ERROR_PATH_NOT_FOUND, ERROR_STOPPED_ON_SYMLINK, RtlNtStatusToDosError, STATUS_NO_MORE_FILES,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_NORMAL, FILE_ATTRIBUTE_READONLY, FILE_ATTRIBUTE_REPARSE_POINT,
    FILE_BASIC_INFO, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_GENERIC_READ, FILE_GENERIC_WRITE,
    FILE_READ_ATTRIBUTES, FileBasicInfo, GetFileInformationByHandleEx, SYNCHRONIZE,
};
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;

use super::nt::{self, DIR_ACCESS, Want, os};
use crate::util::platform::{Failure, FileKind, Stat, plain_name};

/// An open directory that names are resolved below.
pub type DirFd = OwnedHandle;

/// A borrowed [`DirFd`] (or an open `File` that is a directory).
pub type DirRef<'a> = BorrowedHandle<'a>;

/// The handle of an open directory (`File` or [`DirFd`]) to resolve names below.
pub fn dir_of(dir: &impl AsHandle) -> DirRef<'_> {
    dir.as_handle()
}

/// What the error of a call below a directory met.
pub fn failure(e: &io::Error) -> Failure {
    match e.raw_os_error().map(|c| c as u32) {
        Some(ERROR_FILE_NOT_FOUND | ERROR_PATH_NOT_FOUND) => Failure::Missing,
        Some(ERROR_STOPPED_ON_SYMLINK) => Failure::Link,
        Some(ERROR_DIRECTORY) => Failure::NotDir,
        Some(ERROR_FILE_EXISTS | ERROR_ALREADY_EXISTS) => Failure::Exists,
        Some(ERROR_INVALID_NAME) => Failure::Escape,
        _ => Failure::Other,
    }
}

/// The plain names of `rel`, `.` dropped; anything else (`..`, a root, a drive or device
/// prefix, a name with `\` or `:`) fails closed.
fn segments(rel: &Path) -> io::Result<Vec<&str>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(seg) => out.push(plain_name(seg).ok_or_else(|| os(ERROR_INVALID_NAME))?),
            Component::CurDir => {}
            _ => return Err(os(ERROR_INVALID_NAME)),
        }
    }
    Ok(out)
}

/// The directories of `segs` walked from `dir`, each opened relative to the last and refused
/// if a reparse point or no directory; `None` when `segs` is empty (`dir` itself).
fn walk(dir: DirRef<'_>, segs: &[&str]) -> io::Result<Option<OwnedHandle>> {
    let mut at: Option<OwnedHandle> = None;
    for seg in segs {
        let parent = at.as_ref().map_or(dir, |h| h.as_handle());
        let next = nt::open_in(parent, seg, open(DIR_ACCESS, 0), false)?;
        nt::refuse_reparse(next.as_handle(), true)?;
        at = Some(next);
    }
    Ok(at)
}

fn open(access: u32, options: u32) -> Want {
    Want {
        access,
        attributes: 0,
        disposition: FILE_OPEN,
        options,
    }
}

/// Opens the last component of `rel` below `dir` (the ones before it walked as [`walk`]
/// does), following it only when `follow`.
fn open_last(dir: DirRef<'_>, rel: &Path, want: Want, follow: bool) -> io::Result<OwnedHandle> {
    let segs = segments(rel)?;
    let (last, before) = segs.split_last().ok_or_else(|| os(ERROR_INVALID_NAME))?;
    let parent = walk(dir, before)?;
    nt::open_in(parent.as_ref().map_or(dir, |h| h.as_handle()), last, want, follow)
}

/// What `rel` below `dir` is, its last component followed when `follow`.
pub fn kind_at(dir: DirRef<'_>, rel: &Path, follow: bool) -> io::Result<FileKind> {
    let handle = open_last(dir, rel, open(FILE_READ_ATTRIBUTES, 0), follow)?;
    Ok(kind(nt::info(handle.as_handle())?.dwFileAttributes))
}

fn kind(attributes: u32) -> FileKind {
    if attributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        FileKind::Link
    } else if attributes & FILE_ATTRIBUTE_DIRECTORY != 0 {
        FileKind::Dir
    } else {
        FileKind::File
    }
}

/// Opens the directory `path` itself, refused if it is a reparse point (`handle_only` changes
/// nothing here: the handle may list and traverse).
pub fn open_dir(path: &Path, handle_only: bool) -> io::Result<DirFd> {
    let _ = handle_only;
    let file = std::fs::OpenOptions::new()
        .access_mode(DIR_ACCESS | SYNCHRONIZE)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    nt::refuse_reparse(file.as_handle(), true)?;
    Ok(OwnedHandle::from(file))
}

/// The directory `rel` below `dir` (`dir` itself when empty), every component opened relative
/// to its parent's handle and none a reparse point.
pub fn dir_beneath(dir: DirRef<'_>, rel: &Path) -> io::Result<DirFd> {
    match walk(dir, &segments(rel)?)? {
        Some(handle) => Ok(handle),
        None => dir.try_clone_to_owned(),
    }
}

/// Opens the file `rel` below `dir` for reading; a reparse point as its last component is
/// refused unless `follow`.
pub fn read_below(dir: DirRef<'_>, rel: &Path, follow: bool) -> io::Result<File> {
    let handle = open_last(dir, rel, open(FILE_GENERIC_READ, 0), follow)?;
    if !follow {
        nt::refuse_reparse(handle.as_handle(), false)?;
    }
    Ok(File::from(handle))
}

/// The names in the directory `path` (refused if a reparse point), `.` and `..` left out.
pub fn names(path: &Path) -> io::Result<Vec<OsString>> {
    list(open_dir(path, false)?.as_handle())
}

/// The names in the directory `rel` below `dir`, none of its components a reparse point.
pub fn names_below(dir: DirRef<'_>, rel: &Path) -> io::Result<Vec<OsString>> {
    list(dir_beneath(dir, rel)?.as_handle())
}

fn list(dir: DirRef<'_>) -> io::Result<Vec<OsString>> {
    // 64 KiB, aligned as the records are (8 bytes).
    let mut buf = vec![0u64; 8192];
    let mut names = Vec::new();
    let mut restart = true;
    loop {
        let mut status_block = IO_STATUS_BLOCK::default();
        // SAFETY: `buf` is live and as long as said; the handle is a directory opened with
        // FILE_LIST_DIRECTORY, synchronously.
        let status = unsafe {
            NtQueryDirectoryFile(
                dir.as_raw_handle(),
                std::ptr::null_mut(),
                None,
                std::ptr::null(),
                &mut status_block,
                buf.as_mut_ptr().cast(),
                (buf.len() * 8) as u32,
                FileDirectoryInformation,
                false,
                std::ptr::null(),
                restart,
            )
        };
        restart = false;
        if status == STATUS_NO_MORE_FILES {
            return Ok(names);
        }
        if status < 0 {
            // SAFETY: a pure conversion of a status code.
            return Err(os(unsafe { RtlNtStatusToDosError(status) }));
        }
        let bytes: &[u8] = bytemuck_bytes(&buf);
        let mut offset = 0usize;
        loop {
            let fixed = std::mem::offset_of!(FILE_DIRECTORY_INFORMATION, FileName);
            let record = &bytes[offset..];
            let next = u32::from_le_bytes(record[0..4].try_into().expect("4 bytes")) as usize;
            let name_at = std::mem::offset_of!(FILE_DIRECTORY_INFORMATION, FileNameLength);
            let len = u32::from_le_bytes(record[name_at..name_at + 4].try_into().expect("4 bytes")) as usize;
            let wide: Vec<u16> = record[fixed..fixed + len]
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            let name = OsString::from_wide(&wide);
            if name != "." && name != ".." {
                names.push(name);
            }
            if next == 0 {
                break;
            }
            offset += next;
        }
    }
}

/// The bytes of a `u64` buffer (read by offset above, so no record is cast in place).
fn bytemuck_bytes(buf: &[u64]) -> &[u8] {
    // SAFETY: any `u64`'s bytes are valid `u8`s; the length is the buffer's in bytes.
    unsafe { std::slice::from_raw_parts(buf.as_ptr().cast(), buf.len() * 8) }
}

/// Creates the directory `name` (one plain name) in `dir` (Windows has no mode to give it).
pub fn mkdir_in(dir: DirRef<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    let _ = mode;
    let name = plain_name(name).ok_or_else(|| os(ERROR_INVALID_NAME))?;
    let want = Want {
        access: DIR_ACCESS,
        attributes: FILE_ATTRIBUTE_NORMAL,
        disposition: FILE_CREATE,
        options: FILE_DIRECTORY_FILE,
    };
    nt::open_in(dir, name, want, false).map(drop)
}

/// Creates the new file `name` (one plain name) in `dir` for writing, exclusively
/// (`FILE_CREATE`: nothing there is followed or replaced); a `mode` without a write bit makes it
/// read-only (the attribute), the handle still writable.
pub fn create_in(dir: DirRef<'_>, name: &OsStr, mode: u32) -> io::Result<File> {
    let name = plain_name(name).ok_or_else(|| os(ERROR_INVALID_NAME))?;
    let want = Want {
        access: FILE_GENERIC_WRITE | FILE_READ_ATTRIBUTES,
        attributes: if mode & 0o222 == 0 {
            FILE_ATTRIBUTE_READONLY
        } else {
            FILE_ATTRIBUTE_NORMAL
        },
        disposition: FILE_CREATE,
        options: FILE_NON_DIRECTORY_FILE,
    };
    Ok(File::from(nt::open_in(dir, name, want, false)?))
}

/// `rel` below `dir`, its last component not followed; `None` when nothing is there (or a
/// component on the way is no directory).
pub fn stat_at(dir: DirRef<'_>, rel: &str) -> io::Result<Option<Stat>> {
    match open_last(dir, Path::new(rel), open(FILE_READ_ATTRIBUTES, 0), false) {
        Ok(handle) => stat(handle.as_handle()).map(Some),
        Err(e) if matches!(failure(&e), Failure::Missing | Failure::NotDir) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The directory `rel` below `dir`, opened without following a reparse point, and what it
/// is; `None` when it is no directory (or a reparse point) now.
pub fn open_dir_at(dir: DirRef<'_>, rel: &str) -> io::Result<Option<(DirFd, Stat)>> {
    match open_last(dir, Path::new(rel), open(DIR_ACCESS, 0), false) {
        Ok(handle) => {
            let st = stat(handle.as_handle())?;
            Ok((st.kind == 'd').then_some((handle, st)))
        }
        Err(e) if matches!(failure(&e), Failure::Missing | Failure::NotDir | Failure::Link) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Seconds and nanoseconds since the Unix epoch of a Windows file time (100 ns since 1601).
fn since_epoch(filetime: i64) -> (i64, u32) {
    let since = filetime - 116_444_736_000_000_000;
    (
        since.div_euclid(10_000_000),
        (since.rem_euclid(10_000_000) * 100) as u32,
    )
}

fn stat(handle: BorrowedHandle<'_>) -> io::Result<Stat> {
    let info = nt::info(handle)?;
    let mut basic = FILE_BASIC_INFO::default();
    // SAFETY: `basic` is a live local of the type the class fills, of the size given.
    let ok = unsafe {
        GetFileInformationByHandleEx(
            handle.as_raw_handle(),
            FileBasicInfo,
            (&mut basic as *mut FILE_BASIC_INFO).cast(),
            std::mem::size_of::<FILE_BASIC_INFO>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let kind = match kind(info.dwFileAttributes) {
        FileKind::File => 'f',
        FileKind::Dir => 'd',
        FileKind::Link => 'l',
        FileKind::Other => 'o',
    };
    Ok(Stat {
        kind,
        dev: u64::from(info.dwVolumeSerialNumber),
        ino: u64::from(info.nFileIndexHigh) << 32 | u64::from(info.nFileIndexLow),
        size: u64::from(info.nFileSizeHigh) << 32 | u64::from(info.nFileSizeLow),
        mtime: since_epoch(basic.LastWriteTime),
        ctime: since_epoch(basic.ChangeTime),
    })
}
