//! The content-addressed bundle cache: `<cache>/bundles/<sha256>`, written through a
//! `.partial` file and a rename, shared by every workspace of the machine.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::util::digest::Sha256;

/// A bundle cache directory.
#[derive(Debug, Clone)]
pub struct Cache {
    pub dir: PathBuf,
}

impl Cache {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    fn bundles(&self) -> PathBuf {
        self.dir.join("bundles")
    }

    /// The path of the bundle `sha256`, whether or not it is cached.
    pub fn path(&self, sha256: &Sha256) -> PathBuf {
        self.bundles().join(sha256.to_hex())
    }

    /// The cached bundle, if present.
    pub fn get(&self, sha256: &Sha256) -> Option<PathBuf> {
        let path = self.path(sha256);
        path.is_file().then_some(path)
    }

    /// A new `.partial` file for `sha256`, to be committed with [`Partial::commit`].
    pub fn partial(&self, sha256: &Sha256) -> std::io::Result<Partial> {
        let dir = self.bundles();
        fs_err::create_dir_all(&dir)?;
        let file = tempfile::Builder::new()
            .prefix(&format!("{}.", sha256.to_hex()))
            .suffix(".partial")
            .tempfile_in(&dir)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{e} in `{}`", dir.display())))?;
        Ok(Partial {
            file,
            target: self.path(sha256),
        })
    }

    /// The resumable download file of `sha256` (its directory is created).
    pub fn partial_path(&self, sha256: &Sha256) -> std::io::Result<PathBuf> {
        fs_err::create_dir_all(self.bundles())?;
        Ok(self.bundles().join(format!("{}.partial", sha256.to_hex())))
    }

    /// The lock file serializing downloads of `sha256` across processes. Lock files are never
    /// deleted: unlinking a lock another process waits on would let two processes hold it.
    pub fn lock_path(&self, sha256: &Sha256) -> PathBuf {
        self.dir.join("locks").join(format!("{}.lock", sha256.to_hex()))
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
}

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
