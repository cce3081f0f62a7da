//! Creating directories and files beneath one directory handle (`Beneath`): `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it, else a walk of no-follow
//! handles, so that no component swapped for a link mid-extraction redirects a write.

use super::*;

/// A directory handle under which files are created without ever leaving it or following a
/// link: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, else a walk with `O_NOFOLLOW`.
///
/// Each directory below is opened that way once and its handle kept (the few most recent): a
/// file or directory is then created relative to its parent's handle, by one component with
/// `O_NOFOLLOW | O_EXCL`, so that the path is resolved once per directory, not once per file.
pub struct Beneath {
    fd: OwnedFd,
    path: PathBuf,
    /// Handles on directories below, most recently used last.
    dirs: std::cell::RefCell<Vec<(PathBuf, OwnedFd)>>,
}

/// How many directory handles a [`Beneath`] keeps (archives list a directory's files together:
/// a few suffice, and the process's file limit is never approached).
pub(super) const DIR_HANDLES: usize = 16;

/// Which mechanism [`Beneath`] uses on this machine: `"openat2"` or `"component walk"`.
pub fn beneath_mechanism() -> &'static str {
    crate::util::platform::beneath_mechanism()
}

impl Beneath {
    /// Opens the directory `path` itself without following a link.
    pub fn open(path: &Path) -> io::Result<Self> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR if lstat_is_link(path) => link_error(path),
            e => with_path(e.into(), "open the directory", path),
        })?;
        Ok(Self {
            fd,
            path: path.to_path_buf(),
            dirs: std::cell::RefCell::new(Vec::new()),
        })
    }

    /// Runs `f` on the handle of the directory `rel` below (this one when empty), opened once
    /// without leaving this directory or following a link, and kept.
    fn with_dir<R>(
        &self,
        rel: &Path,
        f: impl FnOnce(std::os::fd::BorrowedFd<'_>) -> Result<R, rustix::io::Errno>,
    ) -> Result<R, rustix::io::Errno> {
        if rel.as_os_str().is_empty() {
            return f(self.fd.as_fd());
        }
        use std::os::unix::ffi::OsStrExt;
        let mut dirs = self.dirs.borrow_mut();
        let key = rel.as_os_str().as_bytes();
        match dirs.iter().rposition(|(p, _)| p.as_os_str().as_bytes() == key) {
            Some(i) if i + 1 == dirs.len() => {}
            Some(i) => {
                let entry = dirs.remove(i);
                dirs.push(entry);
            }
            None => {
                let fd = self.dir(rel)?;
                if dirs.len() == DIR_HANDLES {
                    dirs.remove(0);
                }
                dirs.push((rel.to_path_buf(), fd));
            }
        }
        f(dirs.last().expect("just pushed").1.as_fd())
    }

    fn fail(&self, e: rustix::io::Errno, what: &str, rel: &Path) -> io::Error {
        let full = self.path.join(rel);
        match e {
            // A link on the way (RESOLVE_NO_SYMLINKS / O_NOFOLLOW) or an escape (RESOLVE_BENEATH):
            // name the component that is the link, and where it points.
            rustix::io::Errno::LOOP | rustix::io::Errno::XDEV => match check(&self.path, rel) {
                Err(refusal) => refusal,
                Ok(_) => refused(&full, Why::Link(PathBuf::from("?"))),
            },
            e => with_path(e.into(), what, &full),
        }
    }

    /// A handle on the directory `rel` below this one.
    fn dir(&self, rel: &Path) -> Result<OwnedFd, rustix::io::Errno> {
        if rel.as_os_str().is_empty() {
            return rustix::io::dup(&self.fd);
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if let Some(opened) = crate::util::platform::open_beneath(&self.fd, rel, flags, Mode::empty()) {
            return opened;
        }
        let mut fd = rustix::io::dup(&self.fd)?;
        // Plain names only, as `openat2` allows them beneath: a `..` (or a root) fails closed
        // instead of being dropped, which would open another directory than the one named.
        let mut segments = Vec::new();
        for c in rel.components() {
            match c {
                std::path::Component::Normal(seg) => segments.push(seg),
                std::path::Component::CurDir => {}
                _ => return Err(rustix::io::Errno::INVAL),
            }
        }
        for seg in segments {
            fd = match rustix::fs::openat(&fd, seg, flags | OFlags::NOFOLLOW, Mode::empty()) {
                Ok(next) => next,
                // `O_NOFOLLOW | O_DIRECTORY` on a link answers ENOTDIR on some systems: a link
                // it is, and refused as one (as `openat2` reports it).
                Err(rustix::io::Errno::NOTDIR)
                    if rustix::fs::statat(&fd, seg, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
                        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
                    }) =>
                {
                    return Err(rustix::io::Errno::LOOP);
                }
                Err(e) => return Err(e),
            };
        }
        Ok(fd)
    }

    /// Creates the directory `rel` (its parent must exist); an existing directory is fine.
    pub fn create_dir(&self, rel: &Path) -> io::Result<()> {
        let (parent, name) = split(rel).ok_or_else(|| refused(&self.path.join(rel), Why::NotDir))?;
        let made = self
            .with_dir(parent, |dir| {
                match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o755)) {
                    Ok(()) => Ok(None),
                    Err(rustix::io::Errno::EXIST) => {
                        rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).map(Some)
                    }
                    Err(e) => Err(e),
                }
            })
            .map_err(|e| self.fail(e, "create the directory", rel))?;
        match made {
            None => Ok(()),
            Some(st) => match rustix::fs::FileType::from_raw_mode(st.st_mode) {
                rustix::fs::FileType::Directory => Ok(()),
                rustix::fs::FileType::Symlink => Err(self.fail(rustix::io::Errno::LOOP, "create", rel)),
                _ => Err(refused(&self.path.join(rel), Why::NotDir)),
            },
        }
    }

    /// Reads the regular file `rel` below this directory whole, at most `cap` bytes (see
    /// [`read_capped`]): opened relative to its directory's handle, reached without leaving this
    /// directory or following a link, so a component swapped for a link after a check
    /// redirects nothing. `Ok(None)` when it does not exist.
    pub fn read_capped(&self, rel: &Path, cap: u64, what: &str) -> io::Result<Option<Vec<u8>>> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let (parent, name) = split(rel).ok_or_else(|| refused(&self.path.join(rel), Why::NotFile))?;
        match self.with_dir(parent, |dir| rustix::fs::openat(dir, name, flags, Mode::empty())) {
            Ok(fd) => read_opened(File::from(fd), &self.path.join(rel), cap, what).map(Some),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(self.fail(e, "read", rel)),
        }
    }

    /// Creates the new file `rel` (`O_EXCL`: nothing is followed or replaced) with `mode`,
    /// relative to its directory's kept handle.
    pub fn create_file(&self, rel: &Path, mode: u32) -> io::Result<File> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mode = Mode::from_raw_mode(crate::util::platform::raw_mode(mode));
        let (parent, name) = split(rel).ok_or_else(|| refused(&self.path.join(rel), Why::NotFile))?;
        self.with_dir(parent, |dir| rustix::fs::openat(dir, name, flags, mode))
            .map(File::from)
            .map_err(|e| self.fail(e, "create", rel))
    }
}

/// `rel`'s parent and its last component, which must be one plain name (never empty, `.` or
/// `..`): it is resolved relative to the parent's handle, where only a plain name stays beneath.
pub(super) fn split(rel: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = rel.as_os_str().as_bytes();
    let (parent, name) = match bytes.iter().rposition(|b| *b == b'/') {
        Some(i) => (&bytes[..i], &bytes[i + 1..]),
        None => (&[][..], bytes),
    };
    if name.is_empty() || name == b"." || name == b".." {
        return None;
    }
    Some((
        Path::new(std::ffi::OsStr::from_bytes(parent)),
        std::ffi::OsStr::from_bytes(name),
    ))
}
