//! The store's cross-process lock, acquired politely: try, say that we wait, then poll with a
//! timeout whose error names the variable that raises it.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::StoreError;

/// Default seconds to wait for the store lock.
pub const DEFAULT_LOCK_TIMEOUT: u64 = 300;

/// An exclusive lock on a store, released on drop.
#[derive(Debug)]
pub struct StoreLock {
    _file: File,
    pub path: PathBuf,
}

impl StoreLock {
    /// Acquires the lock file `path`, calling `waiting` once if another process holds it.
    pub fn acquire(path: &Path, waiting: &dyn Fn(&Path)) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent() {
            fs_err::create_dir_all(dir)?;
        }
        // Validate the timeout now, not only when there is contention.
        let timeout = crate::env::number(crate::env::A2C_LOCK_TIMEOUT)
            .map_err(|(name, value)| StoreError::Config(format!("{name}=`{value}` is not a whole number of seconds")))?
            .unwrap_or(DEFAULT_LOCK_TIMEOUT);
        let file = fs_err::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?
            .into_parts()
            .0;
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

    /// The pid recorded in a lock file that nobody holds: its holder died while holding it.
    /// `None` when the lock is free and clean, held right now, or unreadable.
    pub fn stale_holder(path: &Path) -> Option<u32> {
        let file = File::open(path).ok()?;
        let pid = std::fs::read_to_string(path).ok()?.trim().parse::<u32>().ok()?;
        match file.try_lock_shared() {
            Ok(()) => Some(pid),
            Err(_) => None, // held: an install is running
        }
    }

    fn locked(mut file: File, path: &Path) -> Self {
        use std::io::{Seek, Write};
        // Record the holder, for doctor and for humans; the lock itself is the flock.
        let _ = file.set_len(0);
        let _ = file.seek(std::io::SeekFrom::Start(0));
        let _ = writeln!(file, "{}", std::process::id());
        Self {
            _file: file,
            path: path.to_path_buf(),
        }
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        // A clean release leaves no pid: a pid in an unheld lock means its holder died.
        let _ = self._file.set_len(0);
    }
}
