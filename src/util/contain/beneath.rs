//! Creating directories and files beneath one directory handle (`Beneath`): `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it, else a walk of no-follow
//! handles (on Windows, of handles opened relative to their parent's), so that no component
//! swapped for a link mid-extraction redirects a write.

use super::*;

/// A directory handle under which files are created without ever leaving it or following a
/// link: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, else a walk with `O_NOFOLLOW`.
///
/// Each directory below is opened that way once and its handle kept (the few most recent): a
/// file or directory is then created relative to its parent's handle, by one component with
/// `O_NOFOLLOW | O_EXCL`, so that the path is resolved once per directory, not once per file.
pub struct Beneath {
    fd: DirFd,
    path: PathBuf,
    /// Handles on directories below, most recently used last.
    dirs: std::cell::RefCell<Vec<(PathBuf, DirFd)>>,
}

/// How many directory handles a [`Beneath`] keeps (archives list a directory's files together:
/// a few suffice, and the process's file limit is never approached).
pub(super) const DIR_HANDLES: usize = 16;

/// Which mechanism [`Beneath`] uses on this machine: `"openat2"`, `"component walk"` or, on
/// Windows, `"handle walk"`.
pub fn beneath_mechanism() -> &'static str {
    platform::beneath_mechanism()
}

impl Beneath {
    /// Opens the directory `path` itself without following a link.
    pub fn open(path: &Path) -> io::Result<Self> {
        let fd = platform::open_dir(path, false).map_err(|e| match platform::failure(&e) {
            Failure::Link | Failure::NotDir if lstat_is_link(path) => link_error(path),
            _ => with_path(e, "open the directory", path),
        })?;
        Ok(Self {
            fd,
            path: path.to_path_buf(),
            dirs: std::cell::RefCell::new(Vec::new()),
        })
    }

    /// Runs `f` on the handle of the directory `rel` below (this one when empty), opened once
    /// without leaving this directory or following a link, and kept.
    fn with_dir<R>(&self, rel: &Path, f: impl FnOnce(platform::DirRef<'_>) -> io::Result<R>) -> io::Result<R> {
        if rel.as_os_str().is_empty() {
            return f(platform::dir_of(&self.fd));
        }
        let mut dirs = self.dirs.borrow_mut();
        match dirs.iter().rposition(|(p, _)| p.as_os_str() == rel.as_os_str()) {
            Some(i) if i + 1 == dirs.len() => {}
            Some(i) => {
                let entry = dirs.remove(i);
                dirs.push(entry);
            }
            None => {
                let fd = platform::dir_beneath(platform::dir_of(&self.fd), rel)?;
                if dirs.len() == DIR_HANDLES {
                    dirs.remove(0);
                }
                dirs.push((rel.to_path_buf(), fd));
            }
        }
        f(platform::dir_of(&dirs.last().expect("just pushed").1))
    }

    fn fail(&self, e: io::Error, what: &str, rel: &Path) -> io::Error {
        match platform::failure(&e) {
            // A link on the way (RESOLVE_NO_SYMLINKS / O_NOFOLLOW) or an escape (RESOLVE_BENEATH):
            // name the component that is the link, and where it points.
            Failure::Link | Failure::Escape => self.link_on_the_way(rel),
            _ => with_path(e, what, &self.path.join(rel)),
        }
    }

    /// The refusal of the link met on the way to `rel`, naming it and where it points.
    fn link_on_the_way(&self, rel: &Path) -> io::Error {
        match check(&self.path, rel) {
            Err(refusal) => refusal,
            Ok(_) => refused(&self.path.join(rel), Why::Link(PathBuf::from("?"))),
        }
    }

    /// Creates the directory `rel` (its parent must exist); an existing directory is fine.
    pub fn create_dir(&self, rel: &Path) -> io::Result<()> {
        let (parent, name) = split(rel).ok_or_else(|| refused(&self.path.join(rel), Why::NotDir))?;
        let made = self
            .with_dir(parent, |dir| match platform::mkdir_in(dir, name, 0o755) {
                Ok(()) => Ok(None),
                Err(e) if platform::failure(&e) == Failure::Exists => {
                    platform::kind_at(dir, Path::new(name), false).map(Some)
                }
                Err(e) => Err(e),
            })
            .map_err(|e| self.fail(e, "create the directory", rel))?;
        match made {
            None | Some(FileKind::Dir) => Ok(()),
            Some(FileKind::Link) => Err(self.link_on_the_way(rel)),
            Some(_) => Err(refused(&self.path.join(rel), Why::NotDir)),
        }
    }

    /// Reads the regular file `rel` below this directory whole, at most `cap` bytes (see
    /// [`read_capped`]): opened relative to its directory's handle, reached without leaving this
    /// directory or following a link, so a component swapped for a link after a check
    /// redirects nothing. `Ok(None)` when it does not exist.
    pub fn read_capped(&self, rel: &Path, cap: u64, what: &str) -> io::Result<Option<Vec<u8>>> {
        let (parent, name) = split(rel).ok_or_else(|| refused(&self.path.join(rel), Why::NotFile))?;
        match self.with_dir(parent, |dir| platform::read_below(dir, Path::new(name), false)) {
            Ok(file) => read_opened(file, &self.path.join(rel), cap, what).map(Some),
            Err(e) if platform::failure(&e) == Failure::Missing => Ok(None),
            Err(e) => Err(self.fail(e, "read", rel)),
        }
    }

    /// Creates the new file `rel` (`O_EXCL`: nothing is followed or replaced) with `mode`,
    /// relative to its directory's kept handle.
    pub fn create_file(&self, rel: &Path, mode: u32) -> io::Result<File> {
        let (parent, name) = split(rel).ok_or_else(|| refused(&self.path.join(rel), Why::NotFile))?;
        self.with_dir(parent, |dir| platform::create_in(dir, name, mode))
            .map_err(|e| self.fail(e, "create", rel))
    }
}

/// `rel`'s parent and its last component, which must be one plain name (never empty, `.` or
/// `..`): it is resolved relative to the parent's handle, where only a plain name stays beneath.
pub(super) fn split(rel: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    let s = rel.to_str()?;
    let (parent, name) = s
        .rfind(|c| c == '/' || (cfg!(windows) && c == '\\'))
        .map_or(("", s), |i| (&s[..i], &s[i + 1..]));
    let name = platform::plain_name(name.as_ref())?;
    Some((Path::new(parent), std::ffi::OsStr::new(name)))
}
