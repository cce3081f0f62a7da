//! The seam on Unix: the Linux-only primitives a2c uses, each with the portable Unix fallback
//! it takes elsewhere — or on Linux too when the test-only switch `A2C_TEST_PORTABLE` asks,
//! so that the suite runs the fallback path on every Linux CI run. A macOS build compiles the
//! fallbacks only.
//!
//! - Opening beneath a directory: `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, else a walk
//!   of one `O_NOFOLLOW | O_DIRECTORY` handle per component, as strict (a `..` or a root fails
//!   closed there too); `O_PATH` handles, else read-only ones.
//! - `has_name_starting`: `getdents` into a stack buffer, else `readdir` (doctor looks for a
//!   split index's `sharedindex.*` so); `sync_filesystem`: `syncfs`, else `sync`.
//! - `clone_file`: Linux's `FICLONE` into a file created `O_EXCL | O_NOFOLLOW`, macOS's
//!   `fclonefileat` through `reflink-copy`, elsewhere "not supported" (the tree cache copies).
//! - `at.rs`: open, stat, list and create relative to a directory handle (containment's
//!   primitives, and the snapshot's `stat_at`/`open_dir_at`); `files.rs`: modes, opens that never
//!   follow (`open_read_nofollow` for git's index: never a link, never blocking on a FIFO),
//!   `write_all_at`, `touch`; `terminal.rs`: a secret read with echo off (termios).

mod at;
mod files;
mod terminal;

pub use at::*;
pub use files::*;
pub use terminal::read_secret_line;

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use super::forced_portable;

/// A mode as `rustix` takes it: `mode_t`, which is `u32` on Linux and `u16` on macOS (the bits a
/// mode has fit either).
#[cfg(target_os = "linux")]
fn raw_mode(mode: u32) -> rustix::fs::RawMode {
    mode
}

#[cfg(not(target_os = "linux"))]
fn raw_mode(mode: u32) -> rustix::fs::RawMode {
    (mode & 0o177_777) as rustix::fs::RawMode
}

/// Makes `to` (which must not exist) a clone of the open file `from`, sharing its blocks
/// without copying them: `FICLONE` on Linux (Btrfs, XFS, …) into a file created exclusively
/// without following a link, `fclonefileat` on macOS (APFS; it creates `to` itself and fails on
/// anything there, a link included). `to` is then open (to set its time and mode).
/// "Not supported" — another filesystem, another Unix, or forced — is an error for which
/// [`cannot_clone`] is true, and nothing is left at `to`: the caller copies, exactly as on a
/// Linux filesystem without `FICLONE`.
pub fn clone_file(from: &std::fs::File, to: &Path) -> std::io::Result<std::fs::File> {
    if forced_portable() {
        return Err(rustix::io::Errno::OPNOTSUPP.into());
    }
    #[cfg(target_os = "linux")]
    {
        use crate::util::contain::{Open, open_write};
        let file = open_write(to, Open::New, 0o600)?;
        if let Err(e) = rustix::fs::ioctl_ficlone(&file, from) {
            drop(file);
            let _ = std::fs::remove_file(to);
            return Err(e.into());
        }
        Ok(file)
    }
    #[cfg(target_os = "macos")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        crate::util::contain::refuse_link(to.parent().unwrap_or(Path::new(".")))?;
        reflink_copy::reflink_file_to_path(from, to)?;
        // The clone has `from`'s mode (perhaps read-only): opened for reading, which is
        // enough to set its time and mode; removed if even that fails.
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(OFlags::NOFOLLOW.bits() as i32 | OFlags::CLOEXEC.bits() as i32)
            .open(to)
            .inspect_err(|_| {
                let _ = std::fs::remove_file(to);
            })
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = (from, to);
        Err(rustix::io::Errno::OPNOTSUPP.into())
    }
}

/// Opens `rel` below the directory `dir` following no link and never leaving it, in one call
/// (`openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, Linux ≥ 5.6); `None` where that is not
/// available (another Unix, an old kernel, a sandbox that forbids it, or forced): the caller
/// walks component by component with `O_NOFOLLOW` instead, which is as strict.
fn open_beneath(dir: impl AsFd, rel: &Path, flags: OFlags, mode: Mode) -> Option<Result<OwnedFd, rustix::io::Errno>> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::ResolveFlags;
        if openat2_works() {
            let resolve = ResolveFlags::BENEATH.union(ResolveFlags::NO_SYMLINKS);
            return Some(rustix::fs::openat2(dir, rel, flags, mode, resolve));
        }
    }
    let _ = (dir, rel, flags, mode);
    None
}

/// The flags of a handle kept only to resolve names below a directory: `O_PATH` on Linux
/// (nothing can be read through it, and the directory needs no read permission), a read-only
/// open elsewhere, or forced.
fn dir_handle_flags() -> OFlags {
    #[cfg(target_os = "linux")]
    if !forced_portable() {
        return OFlags::PATH;
    }
    OFlags::RDONLY
}

/// Whether the directory `dir` (not followed if a link) holds an entry whose name starts with
/// `prefix`; `None` when it cannot be listed. On Linux through `getdents` into a buffer on the
/// stack (`read_dir` also asks for the directory's `stat`: a call more for each of the
/// thousands of members `doctor` asks this of).
pub fn has_name_starting(dir: &Path, prefix: &[u8]) -> Option<bool> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(dir, flags, Mode::empty()).ok()?;
    #[cfg(target_os = "linux")]
    if !forced_portable() {
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 8192];
        let mut entries = rustix::fs::RawDir::new(&fd, &mut buf);
        while let Some(entry) = entries.next() {
            if entry.ok()?.file_name().to_bytes().starts_with(prefix) {
                return Some(true);
            }
        }
        return Some(false);
    }
    for entry in rustix::fs::Dir::read_from(&fd).ok()? {
        if entry.ok()?.file_name().to_bytes().starts_with(prefix) {
            return Some(true);
        }
    }
    Some(false)
}

/// Which mechanism `open_beneath` gives here: `"openat2"` or `"component walk"`.
pub fn beneath_mechanism() -> &'static str {
    #[cfg(target_os = "linux")]
    if openat2_works() {
        return "openat2";
    }
    "component walk"
}

#[cfg(target_os = "linux")]
fn openat2_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    !forced_portable()
        && *WORKS.get_or_init(|| {
            !matches!(
                rustix::fs::openat2(
                    rustix::fs::CWD,
                    ".",
                    OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                    rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_SYMLINKS,
                ),
                Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM)
            )
        })
}

/// Makes what was written to the filesystem holding the directory `dir` durable before a
/// rename publishes it: `syncfs` on Linux (one call for the whole filesystem); elsewhere, or
/// forced, `sync` (every filesystem: slower, as strong).
pub fn sync_filesystem(dir: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if !forced_portable() {
        let fd = rustix::fs::open(dir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        return Ok(rustix::fs::syncfs(fd)?);
    }
    let _ = dir;
    rustix::fs::sync();
    Ok(())
}

/// Makes `to` (which must not exist) a copy-on-write clone of `from` by path, when the
/// filesystem offers one (vendoring a cached bundle).
pub fn reflink(from: &Path, to: &Path) -> std::io::Result<()> {
    reflink_copy::reflink(from, to)
}

/// A `core.hooksPath` for git that runs no hook: `/dev/null`, a device, which no one can make a
/// directory of hooks.
pub fn no_hooks_dir() -> std::ffi::OsString {
    "/dev/null".into()
}
