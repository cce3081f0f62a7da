//! A file registry: a directory on this machine holding `index/esys/a2c.json` and its bundles
//! (read with `--registry PATH`, written by `a2c pack`, `yank` and `sign`).

use std::path::PathBuf;

use crate::registry::handle::{Landed, PublishRequest, Published, Registry, Signed, Yanked};
pub mod publish;

use super::handle::PublishError;
use super::{Index, RegistryError, Wanted, location, signing};
use crate::net::LazyClient;
use crate::util::version::MethodVersion;

pub struct DirRegistry {
    dir: PathBuf,
}

impl DirRegistry {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The warning for a signed index that a change without a key left stale.
    fn stale_signature(&self) -> String {
        format!(
            "the index of `{}` is signed and changed: re-sign it (`a2c sign --registry DIR --key KEYFILE`), or installs that pin its key refuse it",
            self.dir.display()
        )
    }
}

impl Registry for DirRegistry {
    fn shown(&self) -> String {
        self.dir.display().to_string()
    }

    fn read_index(&self, _: &LazyClient, trusted: &[String], _: Wanted<'_>) -> Result<Index, RegistryError> {
        let path = self.dir.join(location::INDEX_PATH);
        let bytes = match fs_err::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(RegistryError::NoIndex { path }),
            Err(e) => return Err(e.into()),
        };
        let signature = || {
            let path = self
                .dir
                .join(format!("{}{}", location::INDEX_PATH, signing::SIGNATURE_SUFFIX));
            Ok(crate::util::contain::read_config(&path)?)
        };
        super::trusted_index(
            &self.shown(),
            &path.display().to_string(),
            bytes,
            signature,
            trusted,
            None,
        )
    }

    fn publish(&self, r: &PublishRequest<'_>) -> Result<Published, PublishError> {
        let done = publish::publish(r.tree, r.version, (r.format, r.deflate, r.limits), &self.dir, r.sign)?;
        let mut warnings = Vec::new();
        if r.sign.is_none() && done.changed && publish::is_signed(&self.dir) {
            warnings.push(self.stale_signature());
        }
        let e = done.entry;
        Ok(Published {
            version: e.version,
            sha256: e.sha256,
            size: e.size,
            format: e.format,
            tree: e.tree,
            files: done.files,
            changed: done.changed,
            landed: Landed::Files {
                bundle: done.bundle_path,
                index: done.index_path,
            },
            warnings,
        })
    }

    fn yank(
        &self,
        version: &MethodVersion,
        undo: bool,
        sign: Option<&signing::SecretKey>,
    ) -> Result<Yanked, PublishError> {
        let changed = publish::yank(&self.dir, version, undo)?;
        let mut warnings = Vec::new();
        match sign {
            Some(key) if changed => {
                publish::sign_index(&self.dir, key, None)?;
            }
            None if changed && publish::is_signed(&self.dir) => warnings.push(self.stale_signature()),
            _ => {}
        }
        Ok(Yanked {
            version: version.clone(),
            yanked: !undo,
            changed,
            warnings,
        })
    }

    fn sign(&self, key: &signing::SecretKey, expires_in_days: Option<u64>) -> Result<Signed, PublishError> {
        let path = publish::sign_index(&self.dir, key, expires_in_days)?;
        Ok(Signed {
            signature: path.display().to_string(),
            rebuilt: None,
        })
    }
}
