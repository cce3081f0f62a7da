//! The seam on Windows: the same containment rules as on Unix, kept on handles. Every name
//! below a directory a2c resolves is opened relative to its parent's handle (`NtCreateFile`
//! with `RootDirectory`, as `std`'s own `remove_dir_all` opens them) with
//! `FILE_OPEN_REPARSE_POINT`, so no symlink, junction or mount point on the way is followed: one
//! met is refused as a link is on Unix (`ERROR_STOPPED_ON_SYMLINK`, [`Failure::Link`]). Names
//! are plain (`..`, `\`, `:` and drive or device prefixes never reach the filesystem). What has
//! no Windows counterpart — modes, owners, clones, a filesystem sync — is said where it is.
//!
//! - `nt.rs`: the one `NtCreateFile` call every open below a directory goes through; what it
//!   opened is read with `GetFileInformationByHandle`.
//! - `at.rs`: the walk of plain names on those handles, listing (`NtQueryDirectoryFile`),
//!   creating with `FILE_CREATE` (never replacing), identity (volume serial, file index) and
//!   times for the snapshot.
//! - `files.rs`: a mode is the read-only attribute (a mode without a write bit; read back from
//!   the type and that attribute); the owner is this process (a profile's ACLs keep its
//!   directories private); no clone (hard links, else copies; `link_count` reads the links
//!   from the handle, for the tree cache); `write_all_at` through `seek_write`;
//!   `sync_filesystem` flushes each writable file below the staging directory (no
//!   unprivileged call flushes a volume); `no_hooks_dir` is a path below `a2c.exe` itself (git's
//!   `core.hooksPath`: `/dev/null` there is `C:\dev\null`, a directory any user may create).
//! - `terminal.rs`: the console's echo turned off for a secret.

#![allow(unsafe_code, reason = "the Windows calls of the platform seam (windows-sys)")]

mod at;
mod files;
mod nt;
mod terminal;

pub use at::*;
pub use files::*;
pub use terminal::read_secret_line;

use std::io;
use std::path::Path;

/// Clones are not offered on Windows (ReFS block cloning needs a volume a2c cannot assume): an
/// error for which [`cannot_clone`] is true, nothing left at `to`; the caller links or copies.
pub fn clone_file(from: &std::fs::File, to: &Path) -> io::Result<std::fs::File> {
    let _ = (from, to);
    Err(io::ErrorKind::Unsupported.into())
}

/// No copy-on-write clone by path on Windows (see [`clone_file`]).
pub fn reflink(from: &Path, to: &Path) -> io::Result<()> {
    let _ = (from, to);
    Err(io::ErrorKind::Unsupported.into())
}

/// Whether the directory `dir` (not followed if a reparse point) holds an entry whose name
/// starts with `prefix`; `None` when it cannot be listed.
pub fn has_name_starting(dir: &Path, prefix: &[u8]) -> Option<bool> {
    let names = names(dir).ok()?;
    Some(
        names
            .iter()
            .any(|n| n.to_str().is_some_and(|n| n.as_bytes().starts_with(prefix))),
    )
}

/// Which mechanism containment uses here.
pub fn beneath_mechanism() -> &'static str {
    "handle walk"
}

/// Makes what was written below `dir` durable before a rename publishes it, as far as Windows
/// lets an unprivileged process: there is no per-filesystem sync (`FlushFileBuffers` on a
/// volume needs an administrator), so each regular file below is flushed on its own handle
/// where it can be opened for writing (a read-only one is skipped: NTFS journals its
/// metadata, not its content).
pub fn sync_filesystem(dir: &Path) -> io::Result<()> {
    for entry in walkdir::WalkDir::new(dir).follow_links(false) {
        let entry = entry.map_err(io::Error::other)?;
        if entry.file_type().is_file()
            && let Ok(file) = std::fs::OpenOptions::new().write(true).open(entry.path())
        {
            file.sync_all()?;
        }
    }
    Ok(())
}

/// A `core.hooksPath` for git that runs no hook. Not `/dev/null`: on Windows that is
/// `C:\dev\null`, a directory any user may create. A path below this program's own file
/// (`…\a2c.exe\no-hooks`) can never be a directory; failing the program's path, a random name
/// in this user's temporary directory that nothing creates.
pub fn no_hooks_dir() -> std::ffi::OsString {
    match std::env::current_exe() {
        Ok(exe) => exe.join("no-hooks").into(),
        Err(_) => std::env::temp_dir()
            .join(format!("a2c-no-hooks-{:016x}", fastrand::u64(..)))
            .into(),
    }
}
