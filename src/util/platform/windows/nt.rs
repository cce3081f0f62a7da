//! The one call every handle-relative open goes through (`NtCreateFile`), and what an opened
//! handle is (`GetFileInformationByHandle`).

use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};

use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
use windows_sys::Wdk::Storage::FileSystem::{FILE_OPEN_REPARSE_POINT, FILE_SYNCHRONOUS_IO_NONALERT, NtCreateFile};
use windows_sys::Win32::Foundation::{
    ERROR_DIRECTORY, ERROR_FILENAME_EXCED_RANGE, ERROR_INVALID_NAME, ERROR_STOPPED_ON_SYMLINK, OBJ_CASE_INSENSITIVE,
    RtlNtStatusToDosError, UNICODE_STRING,
};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT, FILE_LIST_DIRECTORY,
    FILE_READ_ATTRIBUTES, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, FILE_TRAVERSE,
    GetFileInformationByHandle, SYNCHRONIZE,
};
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;

/// What to open: the access wanted, the attributes of a created file, the disposition
/// (`FILE_OPEN`, `FILE_CREATE`) and the create options (`FILE_DIRECTORY_FILE`, …).
#[derive(Debug, Clone, Copy)]
pub struct Want {
    pub access: u32,
    pub attributes: u32,
    pub disposition: u32,
    pub options: u32,
}

/// What a directory on the way is opened with: enough to resolve names below it and list it.
pub const DIR_ACCESS: u32 = FILE_LIST_DIRECTORY | FILE_TRAVERSE | FILE_READ_ATTRIBUTES;

/// Opens `name` — one plain name, checked by the caller — relative to the directory `dir`,
/// synchronously (as `std` expects of a handle), sharing read, write and delete as `std` does,
/// never following a reparse point unless `follow`.
pub fn open_in(dir: BorrowedHandle<'_>, name: &str, want: Want, follow: bool) -> io::Result<OwnedHandle> {
    let wide: Vec<u16> = name.encode_utf16().collect();
    let bytes = u16::try_from(wide.len() * 2).map_err(|_| os(ERROR_FILENAME_EXCED_RANGE))?;
    if wide.is_empty() {
        return Err(os(ERROR_INVALID_NAME));
    }
    let object_name = UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: wide.as_ptr().cast_mut(),
    };
    let attributes = OBJECT_ATTRIBUTES {
        Length: std::mem::size_of::<OBJECT_ATTRIBUTES>() as u32,
        RootDirectory: dir.as_raw_handle(),
        ObjectName: &object_name,
        Attributes: OBJ_CASE_INSENSITIVE,
        SecurityDescriptor: std::ptr::null(),
        SecurityQualityOfService: std::ptr::null(),
    };
    let mut options = want.options | FILE_SYNCHRONOUS_IO_NONALERT;
    if !follow {
        options |= FILE_OPEN_REPARSE_POINT;
    }
    let mut handle = std::ptr::null_mut();
    let mut status_block = IO_STATUS_BLOCK::default();
    // SAFETY: every pointer is to a live local (`wide` outlives the call); the handle written
    // is owned by nobody else.
    let status = unsafe {
        NtCreateFile(
            &mut handle,
            want.access | SYNCHRONIZE,
            &attributes,
            &mut status_block,
            std::ptr::null(),
            want.attributes,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            want.disposition,
            options,
            std::ptr::null(),
            0,
        )
    };
    if status < 0 {
        // SAFETY: a pure conversion of a status code.
        return Err(os(unsafe { RtlNtStatusToDosError(status) }));
    }
    // SAFETY: NtCreateFile succeeded: `handle` is a new handle nothing else owns.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
}

/// What an open handle is: its attributes, volume, index, size, links and write time.
pub fn info(handle: BorrowedHandle<'_>) -> io::Result<BY_HANDLE_FILE_INFORMATION> {
    let mut info = BY_HANDLE_FILE_INFORMATION::default();
    // SAFETY: `info` is a live local of the type the call fills.
    if unsafe { GetFileInformationByHandle(handle.as_raw_handle(), &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info)
}

/// Refuses what `handle` opened when it is a reparse point (as `O_NOFOLLOW` refuses a link), or
/// not a directory where `dir` asks for one.
pub fn refuse_reparse(handle: BorrowedHandle<'_>, dir: bool) -> io::Result<()> {
    let attributes = info(handle)?.dwFileAttributes;
    if attributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(os(ERROR_STOPPED_ON_SYMLINK));
    }
    if dir && attributes & FILE_ATTRIBUTE_DIRECTORY == 0 {
        return Err(os(ERROR_DIRECTORY));
    }
    Ok(())
}

pub fn os(code: u32) -> io::Error {
    io::Error::from_raw_os_error(code as i32)
}
