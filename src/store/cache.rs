//! The content-addressed bundle cache: `<cache>/bundles/<sha256>`, written through a
//! `.partial` file and a rename, shared by every workspace of the machine.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::util::digest::Sha256;

/// A bundle cache directory. The cache may be shared by every workspace of the machine, but
/// never with another user: it must be this user's, and writable by nobody else unless sticky
/// (see [`Cache::open`]); a2c creates it and its subdirectories with mode 0700.
#[derive(Debug, Clone)]
pub struct Cache {
    pub dir: PathBuf,
    /// The variable that chose `dir` (`A2C_CACHE_DIR`), for messages.
    variable: Option<&'static str>,
}

impl Cache {
    /// A cache at `dir`, unchecked (tests and tools that only compute paths).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, variable: None }
    }

    /// Opens the cache at `dir`, refusing an existing one that another user owns or can write
    /// (a pre-made link or file there could redirect what a2c writes). Creates nothing.
    pub fn open(dir: PathBuf, variable: Option<&'static str>) -> std::io::Result<Self> {
        let cache = Self { dir, variable };
        crate::util::contain::check_private_dir(&cache.dir, variable)?;
        for sub in [BUNDLES, LOCKS, super::trees::TREES] {
            cache.check_sub(sub)?;
        }
        Ok(cache)
    }

    /// The cache `store` installs from: the settings' (`A2C_CACHE_DIR` or the platform's cache
    /// directory), else `.cache` inside the store itself — never through a link there.
    /// Opened, checked.
    pub fn for_store(store: &super::Store, settings: &super::Settings) -> std::io::Result<Self> {
        let variable = settings.cache_variable;
        let dir = match settings.cache_dir.clone() {
            Some(dir) => dir,
            None => {
                crate::util::contain::check(store.root(), ".cache")?;
                store.root().join(".cache")
            }
        };
        Self::open(dir, variable)
    }

    fn check_sub(&self, sub: &str) -> std::io::Result<()> {
        if crate::util::contain::check(&self.dir, sub)? {
            crate::util::contain::check_private_dir(&self.dir.join(sub), self.variable)?;
        }
        Ok(())
    }

    /// Creates the cache (0700) and its subdirectory `sub` (0700), checked.
    fn ensure(&self, sub: &str) -> std::io::Result<PathBuf> {
        if let Some(parent) = self.dir.parent() {
            fs_err::create_dir_all(parent)?;
        }
        match crate::util::platform::private_dir_builder().create(&self.dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("failed to create the cache `{}`: {e}", self.dir.display()),
                ));
            }
        }
        crate::util::contain::check_private_dir(&self.dir, self.variable)?;
        self.tag()?;
        let path = crate::util::contain::create_dirs(&self.dir, sub, 0o700)?;
        self.check_sub(sub)?;
        Ok(path)
    }

    /// Writes `CACHEDIR.TAG` (bford.info/cachedir), so that backup tools skip the cache.
    fn tag(&self) -> std::io::Result<()> {
        let path = self.dir.join(CACHEDIR_TAG);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Ok(());
        }
        match crate::util::contain::write_new(&path, CACHEDIR_TAG_TEXT.as_bytes(), 0o644) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    }

    /// Remembers `store` (a store root) among the stores that install from this cache, so that
    /// `a2c cache prune` and `gc --cache` keep what any of them still needs. One line appended
    /// (`O_APPEND`: concurrent appends of a line do not interleave), once per store.
    pub fn register_store(&self, store: &Path) -> std::io::Result<()> {
        let line = store.to_string_lossy().replace('\n', "");
        if self.stores()?.iter().any(|s| s.as_os_str() == line.as_str()) {
            return Ok(());
        }
        self.ensure(BUNDLES)?;
        let mut f = crate::util::contain::open_write(
            &self.dir.join(STORES),
            crate::util::contain::Open::Append,
            crate::util::fs::default_mode(),
        )?;
        f.write_all(format!("{line}\n").as_bytes())
    }

    /// The stores that installed from this cache (see [`Cache::register_store`]), each once.
    /// The file must be this user's: in a shared (sticky) cache another user could have made
    /// it, and `cache prune` would follow their list.
    pub fn stores(&self) -> std::io::Result<Vec<PathBuf>> {
        let text = crate::util::contain::read_own_config(&self.dir.join(STORES), self.variable)?.unwrap_or_default();
        let mut out: Vec<PathBuf> = Vec::new();
        for line in text.lines().filter(|l| !l.is_empty()) {
            if !out.iter().any(|p| p.as_os_str() == line) {
                out.push(PathBuf::from(line));
            }
        }
        Ok(out)
    }

    /// The cache-wide lock, shared: held by every install and vendor run for as long as it
    /// uses the cache, so that `cache clean` and `cache prune` (which take it exclusively) never
    /// remove what a running install is writing or about to read.
    pub fn lock_shared(&self, waiting: &dyn Fn(&Path)) -> std::io::Result<CacheLock> {
        self.lock(false, waiting)
    }

    /// The cache-wide lock, exclusive: `cache clean`, `cache prune` and `gc --cache` wait for
    /// running installs to finish, and installs wait for them.
    pub fn lock_exclusive(&self, waiting: &dyn Fn(&Path)) -> std::io::Result<CacheLock> {
        self.lock(true, waiting)
    }

    fn lock(&self, exclusive: bool, waiting: &dyn Fn(&Path)) -> std::io::Result<CacheLock> {
        let path = self.ensure(LOCKS)?.join(CACHE_LOCK);
        let file = crate::util::contain::open_write(&path, crate::util::contain::Open::Existing, 0o600)?;
        let tried = match exclusive {
            true => file.try_lock(),
            false => file.try_lock_shared(),
        };
        let fail =
            |e: std::io::Error| std::io::Error::new(e.kind(), format!("failed to lock `{}`: {e}", path.display()));
        match tried {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                waiting(&path);
                match exclusive {
                    true => file.lock(),
                    false => file.lock_shared(),
                }
                .map_err(fail)?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(fail(e)),
        }
        Ok(CacheLock { _file: file })
    }

    /// Marks the cached bundle `sha256` as used now (its modification time: `a2c cache prune
    /// --unused-for DAYS` reads it).
    pub fn touch(&self, sha256: &Sha256) {
        touch(&self.path(sha256));
    }

    /// The bundles directory (may not exist).
    pub fn bundles(&self) -> PathBuf {
        self.dir.join(BUNDLES)
    }

    /// The path of the bundle `sha256`, whether or not it is cached.
    pub fn path(&self, sha256: &Sha256) -> PathBuf {
        self.bundles().join(sha256.to_hex())
    }

    /// The cached bundle, if present as a regular file (never a link).
    pub fn get(&self, sha256: &Sha256) -> Option<PathBuf> {
        let path = self.path(sha256);
        std::fs::symlink_metadata(&path)
            .is_ok_and(|m| m.is_file())
            .then_some(path)
    }

    /// A new `.partial` file for `sha256` (`O_EXCL`, 0644 less the umask), to be committed with
    /// [`Partial::commit`].
    pub fn partial(&self, sha256: &Sha256) -> std::io::Result<Partial> {
        let dir = self.ensure(BUNDLES)?;
        let file = tempfile::Builder::new()
            .prefix(&format!("{}.", sha256.to_hex()))
            .suffix(PARTIAL_SUFFIX)
            .tempfile_in(&dir)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{e} in `{}`", dir.display())))?;
        // Cache files are 0644 (less the umask) whatever their source.
        crate::util::platform::set_file_mode(file.as_file(), crate::util::fs::default_mode())?;
        Ok(Partial {
            file,
            target: self.path(sha256),
        })
    }

    /// The resumable download file of `sha256` (its directory is created). The download opens
    /// it without following a link, and resumes only a regular file this user owns.
    pub fn partial_path(&self, sha256: &Sha256) -> std::io::Result<PathBuf> {
        Ok(self
            .ensure(BUNDLES)?
            .join(format!("{}{PARTIAL_SUFFIX}", sha256.to_hex())))
    }

    /// The lock file serializing downloads of `sha256` across processes (its directory is
    /// created). Lock files are never deleted: unlinking a lock another process waits on would
    /// let two processes hold it.
    pub fn lock_path(&self, sha256: &Sha256) -> std::io::Result<PathBuf> {
        Ok(self.ensure(LOCKS)?.join(format!("{}.lock", sha256.to_hex())))
    }

    /// Renames a verified download into place.
    pub fn commit_partial(&self, sha256: &Sha256) -> std::io::Result<PathBuf> {
        let target = self.path(sha256);
        fs_err::rename(self.partial_path(sha256)?, &target)?;
        Ok(target)
    }

    /// Removes a cached bundle found to be corrupt.
    pub fn evict(&self, sha256: &Sha256) {
        let _ = fs_err::remove_file(self.path(sha256));
    }

    /// `.partial` files that no running a2c is writing: a download's whose bundle lock is free,
    /// and a copy's (`<sha256>.<random>.partial`) untouched for an hour.
    pub fn stale_partials(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let Ok(entries) = fs_err::read_dir(self.bundles()) else {
            return out;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(PARTIAL_SUFFIX) else {
                continue;
            };
            let Ok(meta) = entry.metadata() else { continue };
            let stale = match Sha256::parse(stem) {
                Ok(sha) => self.lock_is_free(&sha),
                Err(_) => meta
                    .modified()
                    .ok()
                    .and_then(|m| m.elapsed().ok())
                    .is_some_and(|age| age.as_secs() > 3600),
            };
            if stale {
                out.push(entry.path());
            }
        }
        out.sort();
        out
    }

    fn lock_is_free(&self, sha256: &Sha256) -> bool {
        let path = self.dir.join(LOCKS).join(format!("{}.lock", sha256.to_hex()));
        match crate::util::contain::read_config(&path) {
            Ok(None) => true,
            Ok(Some(_)) => std::fs::File::open(&path).is_ok_and(|f| f.try_lock().is_ok()),
            Err(_) => false,
        }
    }
}

const BUNDLES: &str = "bundles";
/// The cache-wide lock, in the private `locks/` directory.
const CACHE_LOCK: &str = "cache.lock";

/// A hold on the cache-wide lock ([`Cache::lock_shared`], [`Cache::lock_exclusive`]), released
/// on drop.
#[derive(Debug)]
pub struct CacheLock {
    _file: std::fs::File,
}
const CACHEDIR_TAG: &str = "CACHEDIR.TAG";
const STORES: &str = "stores";

pub use crate::util::platform::touch;
const CACHEDIR_TAG_TEXT: &str = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by a2c.\n# For information about cache directory tags see https://bford.info/cachedir/\n";
const LOCKS: &str = "locks";
/// The suffix of a bundle being written into the cache.
pub const PARTIAL_SUFFIX: &str = ".partial";

/// A bundle being written into the cache. Dropped without commit, it is deleted.
pub struct Partial {
    file: tempfile::NamedTempFile,
    target: PathBuf,
}

impl Partial {
    pub fn writer(&mut self) -> &mut std::fs::File {
        self.file.as_file_mut()
    }

    /// Renames the verified bundle into place.
    pub fn commit(self) -> std::io::Result<PathBuf> {
        let target = self.target.clone();
        self.file.persist(&target).map_err(|e| {
            std::io::Error::new(
                e.error.kind(),
                format!(
                    "failed to move a bundle into the cache at `{}`: {}",
                    target.display(),
                    e.error
                ),
            )
        })?;
        Ok(target)
    }
}

/// A reader that copies everything it reads into a writer (the cache's `.partial` file).
pub struct TeeReader<'a, R> {
    inner: R,
    copy: Option<&'a mut dyn Write>,
}

impl<'a, R: Read> TeeReader<'a, R> {
    pub fn new(inner: R, copy: Option<&'a mut dyn Write>) -> Self {
        Self { inner, copy }
    }
}

impl<R: Read> Read for TeeReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(copy) = self.copy.as_mut() {
            copy.write_all(&buf[..n])?;
        }
        Ok(n)
    }
}

/// Lists files in `dir` (and one level of subdirectories) whose size is `size`.
pub fn files_of_size(dir: &Path, size: u64) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .max_depth(2)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_file() && entry.metadata().is_ok_and(|m| m.len() == size) {
            out.push(entry.into_path());
        }
    }
    out
}
