//! Reading below a directory through one no-follow handle on it (`DirHandle`, `At`): a
//! directory swapped for a link after it was opened redirects none of the reads.

use super::*;

/// A handle on a directory, opened without following a link (`O_PATH` on Linux), and the path
/// it was opened at (for messages): what lies below it is reached relative to it (`fstatat`,
/// `openat`), one short path walk each instead of the whole path from `/` every time.
#[derive(Debug)]
pub struct DirHandle {
    fd: OwnedFd,
    path: PathBuf,
}

impl DirHandle {
    /// Opens the directory `path` itself without following a link.
    pub fn open(path: &Path) -> io::Result<Self> {
        let flags = crate::util::platform::dir_handle_flags() | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, Mode::empty())
            .map_err(|e| with_path(e.into(), "open the directory", path))?;
        Ok(Self {
            fd,
            path: path.to_path_buf(),
        })
    }
}

/// What [`At::kind`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
    Link,
    Other,
}

impl Kind {
    fn of_mode(mode: u32) -> Self {
        match rustix::fs::FileType::from_raw_mode(crate::util::platform::raw_mode(mode)) {
            rustix::fs::FileType::Directory => Kind::Dir,
            rustix::fs::FileType::RegularFile => Kind::File,
            rustix::fs::FileType::Symlink => Kind::Link,
            _ => Kind::Other,
        }
    }
}

/// Where relative paths are resolved: below a directory named by its path, or below a
/// [`DirHandle`] on it (the same answers, and the same messages, naming the full path).
#[derive(Debug, Clone, Copy)]
pub enum At<'a> {
    Path(&'a Path),
    Handle(&'a DirHandle),
}

impl<'a> At<'a> {
    /// The directory's path.
    pub fn path(self) -> &'a Path {
        match self {
            At::Path(p) => p,
            At::Handle(h) => &h.path,
        }
    }

    /// The full path of `rel` below it.
    pub fn join(self, rel: impl AsRef<Path>) -> PathBuf {
        self.path().join(rel)
    }

    /// What `rel` is, its last component not followed (`lstat`); `None` when it does not exist.
    pub fn kind(self, rel: impl AsRef<Path>) -> io::Result<Option<Kind>> {
        let rel = rel.as_ref();
        match self {
            At::Path(base) => Ok(lstat(&base.join(rel))?.map(|m| Kind::of_mode(m.mode()))),
            At::Handle(h) => match rustix::fs::statat(&h.fd, rel, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => Ok(Some(Kind::of_mode(crate::util::platform::stat_mode(&st)))),
                Err(rustix::io::Errno::NOENT) => Ok(None),
                Err(e) => Err(with_path(e.into(), "inspect", &h.path.join(rel))),
            },
        }
    }

    /// What `rel` is, a link followed (`stat`); `None` when it does not exist or cannot be
    /// inspected.
    pub fn kind_followed(self, rel: impl AsRef<Path>) -> Option<Kind> {
        let rel = rel.as_ref();
        match self {
            At::Path(base) => std::fs::metadata(base.join(rel)).ok().map(|m| Kind::of_mode(m.mode())),
            At::Handle(h) => rustix::fs::statat(&h.fd, rel, rustix::fs::AtFlags::empty())
                .ok()
                .map(|st| Kind::of_mode(crate::util::platform::stat_mode(&st))),
        }
    }

    /// [`check_dir`] below this directory: one `lstat` per component of `rel`.
    pub fn check_dir(self, rel: impl AsRef<Path>) -> io::Result<bool> {
        let mut sub = PathBuf::new();
        for seg in normal_components(rel.as_ref()) {
            sub.push(seg);
            match self.kind(&sub)? {
                None => return Ok(false),
                Some(Kind::Link) => return Err(link_error(&self.join(&sub))),
                Some(Kind::Dir) => {}
                Some(_) => return Err(refused(&self.join(&sub), Why::NotDir)),
            }
        }
        Ok(true)
    }

    /// [`read_config`] of `rel` below this directory.
    pub fn read_config(self, rel: impl AsRef<Path>) -> io::Result<Option<String>> {
        let rel = rel.as_ref();
        let h = match self {
            At::Path(base) => return read_config(&base.join(rel)),
            At::Handle(h) => h,
        };
        let path = h.path.join(rel);
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        match rustix::fs::openat(&h.fd, rel, flags, Mode::empty()) {
            Ok(fd) => read_opened_config(File::from(fd), &path).map(Some),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(rustix::io::Errno::LOOP) => Err(link_error(&path)),
            Err(e) => Err(with_path(e.into(), "read", &path)),
        }
    }

    /// The names in the directory `rel` below this one, opened without following a link.
    pub fn names(self, rel: impl AsRef<Path>) -> io::Result<Vec<std::ffi::OsString>> {
        let rel = rel.as_ref();
        let list = || -> io::Result<Vec<std::ffi::OsString>> {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = match self {
                At::Path(base) => rustix::fs::open(base.join(rel), flags, Mode::empty())?,
                At::Handle(h) => rustix::fs::openat(&h.fd, rel, flags, Mode::empty())?,
            };
            let mut names = Vec::new();
            for entry in rustix::fs::Dir::read_from(&fd)? {
                let name = entry?.file_name().to_bytes().to_vec();
                if name != b"." && name != b".." {
                    names.push(std::os::unix::ffi::OsStringExt::from_vec(name));
                }
            }
            Ok(names)
        };
        list().map_err(|e| with_path(e, "list", &self.join(rel)))
    }

    /// The text of `rel` below this directory, a link followed.
    pub fn read_to_string(self, rel: impl AsRef<Path>) -> io::Result<String> {
        let rel = rel.as_ref();
        match self {
            At::Path(base) => Ok(fs_err::read_to_string(base.join(rel))?),
            At::Handle(h) => {
                let read = || -> io::Result<String> {
                    let fd = rustix::fs::openat(&h.fd, rel, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
                    let mut text = String::new();
                    File::from(fd).read_to_string(&mut text)?;
                    Ok(text)
                };
                read().map_err(|e| with_path(e, "read", &h.path.join(rel)))
            }
        }
    }
}
