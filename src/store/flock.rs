//! The store's cross-process lock, acquired politely: try, say that we wait, then poll with a
//! timeout whose error names the variable that raises it.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::StoreError;

/// The width the holder's pid is padded to (any pid fits).
const PID_WIDTH: usize = 10;

fn write_holder(file: &File, text: &str) {
    let _ = crate::util::platform::write_all_at(file, format!("{text}\n").as_bytes(), 0);
}

/// The lock files this process holds now (a handle on each), so that an exit that skips the
/// destructors — Ctrl-C's — still leaves no pid behind (a fact of the process, like its
/// umask: the locks it holds).
static HELD: std::sync::Mutex<Vec<(PathBuf, File)>> = std::sync::Mutex::new(Vec::new());

/// Clears the holder's pid from every lock this process holds, for an exit that runs no
/// destructor (`cli`'s Ctrl-C handler): a clean interrupt is then no "died while holding".
pub fn release_for_exit() {
    for (_, file) in crate::util::parallel::locked(&HELD).iter() {
        write_holder(file, &" ".repeat(PID_WIDTH));
    }
}

/// An exclusive lock on a store, released on drop.
#[derive(Debug)]
pub struct StoreLock {
    _file: File,
    pub path: PathBuf,
}

impl StoreLock {
    /// Acquires the lock file `path`, calling `waiting` once if another process holds it, and
    /// giving up after the settings' timeout. Its directory must exist (created, checked, by
    /// the caller). The file is opened without following a link, must be a regular file of
    /// this user, and is never truncated.
    pub fn acquire(path: &Path, settings: &super::Settings, waiting: &dyn Fn(&Path)) -> Result<Self, StoreError> {
        // Validate the timeout now, not only when there is contention.
        let timeout = settings.lock_timeout()?;
        let file = crate::util::contain::open_write(path, crate::util::contain::Open::Existing, 0o644)?;
        match file.try_lock() {
            Ok(()) => return Ok(Self::locked(file, path)),
            Err(TryLockError::WouldBlock) => waiting(path),
            Err(TryLockError::Error(e)) => {
                return Err(std::io::Error::new(e.kind(), format!("failed to lock `{}`: {e}", path.display())).into());
            }
        }
        let deadline = Instant::now() + Duration::from_secs(timeout);
        loop {
            std::thread::sleep(Duration::from_millis(50));
            match file.try_lock() {
                Ok(()) => return Ok(Self::locked(file, path)),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {}
                Err(TryLockError::WouldBlock) => {
                    return Err(StoreError::LockTimeout {
                        path: path.to_path_buf(),
                        seconds: timeout,
                    });
                }
                Err(TryLockError::Error(e)) => {
                    return Err(
                        std::io::Error::new(e.kind(), format!("failed to lock `{}`: {e}", path.display())).into(),
                    );
                }
            }
        }
    }

    /// The lock file `path` if nobody holds it now (`None` when another process does): for
    /// work worth doing only when it costs no wait.
    pub fn try_acquire(path: &Path) -> Result<Option<Self>, StoreError> {
        let file = crate::util::contain::open_write(path, crate::util::contain::Open::Existing, 0o644)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self::locked(file, path))),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => {
                Err(std::io::Error::new(e.kind(), format!("failed to lock `{}`: {e}", path.display())).into())
            }
        }
    }

    /// The pid recorded in a lock file that nobody holds: its holder died while holding it.
    /// `None` when the lock is free and clean, held right now, or unreadable.
    pub fn stale_holder(path: &Path) -> Option<u32> {
        let text = crate::util::contain::read_config(path).ok()??;
        let pid = text.trim().parse::<u32>().ok()?;
        let file = File::open(path).ok()?;
        match file.try_lock_shared() {
            Ok(()) => Some(pid),
            Err(_) => None, // held: an install is running
        }
    }

    fn locked(file: File, path: &Path) -> Self {
        // Record the holder, for doctor and for humans; the lock itself is the flock. The pid
        // is written padded over the start of the file: a lock file is never truncated.
        write_holder(&file, &format!("{:<PID_WIDTH$}", std::process::id()));
        if let Ok(handle) = file.try_clone() {
            crate::util::parallel::locked(&HELD).push((path.to_path_buf(), handle));
        }
        Self {
            _file: file,
            path: path.to_path_buf(),
        }
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        // A clean release leaves no pid: a pid in an unheld lock means its holder died.
        write_holder(&self._file, &" ".repeat(PID_WIDTH));
        let mut held = crate::util::parallel::locked(&HELD);
        if let Some(i) = held.iter().position(|(p, _)| *p == self.path) {
            held.remove(i);
        }
    }
}
