//! Reading below a directory through one no-follow handle on it (`DirHandle`, `At`): a
//! directory swapped for a link after it was opened redirects none of the reads.

use super::*;

/// A handle on a directory, opened without following a link (`O_PATH` on Linux), and the path
/// it was opened at (for messages): what lies below it is reached relative to it (`fstatat`,
/// `openat`), one short path walk each instead of the whole path from `/` every time.
#[derive(Debug)]
pub struct DirHandle {
    fd: DirFd,
    path: PathBuf,
}

impl DirHandle {
    /// Opens the directory `path` itself without following a link.
    pub fn open(path: &Path) -> io::Result<Self> {
        let fd = platform::open_dir(path, true).map_err(|e| with_path(e, "open the directory", path))?;
        Ok(Self {
            fd,
            path: path.to_path_buf(),
        })
    }

    fn dir(&self) -> platform::DirRef<'_> {
        platform::dir_of(&self.fd)
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
    pub fn kind(self, rel: impl AsRef<Path>) -> io::Result<Option<FileKind>> {
        let rel = rel.as_ref();
        match self {
            At::Path(base) => Ok(lstat(&base.join(rel))?.map(|m| FileKind::of(m.file_type()))),
            At::Handle(h) => match platform::kind_at(h.dir(), rel, false) {
                Ok(kind) => Ok(Some(kind)),
                Err(e) if platform::failure(&e) == Failure::Missing => Ok(None),
                Err(e) => Err(with_path(e, "inspect", &h.path.join(rel))),
            },
        }
    }

    /// What `rel` is, a link followed (`stat`); `None` when it does not exist or cannot be
    /// inspected.
    pub fn kind_followed(self, rel: impl AsRef<Path>) -> Option<FileKind> {
        let rel = rel.as_ref();
        match self {
            At::Path(base) => std::fs::metadata(base.join(rel))
                .ok()
                .map(|m| FileKind::of(m.file_type())),
            At::Handle(h) => platform::kind_at(h.dir(), rel, true).ok(),
        }
    }

    /// [`check_dir`] below this directory: one `lstat` per component of `rel`.
    pub fn check_dir(self, rel: impl AsRef<Path>) -> io::Result<bool> {
        let mut sub = PathBuf::new();
        for seg in normal_components(rel.as_ref()) {
            sub.push(seg);
            match self.kind(&sub)? {
                None => return Ok(false),
                Some(FileKind::Link) => return Err(link_error(&self.join(&sub))),
                Some(FileKind::Dir) => {}
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
        match platform::read_below(h.dir(), rel, false) {
            Ok(file) => read_opened_config(file, &path).map(Some),
            Err(e) => match platform::failure(&e) {
                Failure::Missing => Ok(None),
                Failure::Link => Err(link_error(&path)),
                _ => Err(with_path(e, "read", &path)),
            },
        }
    }

    /// The names in the directory `rel` below this one, opened without following a link.
    pub fn names(self, rel: impl AsRef<Path>) -> io::Result<Vec<std::ffi::OsString>> {
        let rel = rel.as_ref();
        match self {
            At::Path(base) => platform::names(&base.join(rel)),
            At::Handle(h) => platform::names_below(h.dir(), rel),
        }
        .map_err(|e| with_path(e, "list", &self.join(rel)))
    }

    /// The text of `rel` below this directory, a link followed.
    pub fn read_to_string(self, rel: impl AsRef<Path>) -> io::Result<String> {
        let rel = rel.as_ref();
        match self {
            At::Path(base) => Ok(fs_err::read_to_string(base.join(rel))?),
            At::Handle(h) => {
                let read = || -> io::Result<String> {
                    let mut text = String::new();
                    platform::read_below(h.dir(), rel, true)?.read_to_string(&mut text)?;
                    Ok(text)
                };
                read().map_err(|e| with_path(e, "read", &h.path.join(rel)))
            }
        }
    }
}
