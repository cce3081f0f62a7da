//! A file registry: a directory on this machine holding `index/esys/a2c.json` and its bundles
//! (read with `--registry PATH`, written by `a2c pack`, `yank` and `sign`).

use std::path::PathBuf;
use std::sync::Arc;

use crate::registry::handle::{Landed, PublishRequest, Published, Registry, Signed, Yanked};
pub mod publish;

use super::handle::PublishError;
use super::kind::{Kind, Location};
use super::{Index, RegistryError, Wanted, location, signing};
use crate::net::LazyClient;
use crate::util::version::MethodVersion;

/// The file registry kind, as `registry::KINDS` registers it: a path, or a `file://` URL.
pub const KIND: Kind = Kind {
    schemes: &["file"],
    syntax: "a path, a file:// URL",
    parse: |url| {
        let dir = url.to_file_path().map_err(|_| "not a valid file:// URL".to_string())?;
        // Its bytes decode to a path a2c can show and write back (a lock, a message) as it is.
        if dir.to_str().is_none() {
            return Err("its path is not UTF-8 once decoded (a `%` escape of a byte that is no character)".into());
        }
        // As a path is taken: `file:v//srv/r` is the directory `/v/srv/r`, shown so.
        Ok(Arc::new(DirLocation(crate::util::paths::absolute(&dir))))
    },
    pack_format: None,
    path: Some(|dir| Arc::new(DirLocation(dir.to_path_buf()))),
    exchange: None,
    environment: &[],
};

/// A file registry's directory (absolute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirLocation(PathBuf);

impl Location for DirLocation {
    fn shown(&self) -> String {
        self.0.display().to_string()
    }

    fn index_url(&self) -> url::Url {
        url::Url::from_file_path(self.0.join(location::INDEX_PATH)).expect("an absolute path")
    }

    fn http_base(&self) -> Option<url::Url> {
        None
    }

    fn local_dir(&self) -> Option<&std::path::Path> {
        Some(&self.0)
    }

    fn open(&self, _: &crate::net::Network) -> Box<dyn Registry> {
        Box::new(DirRegistry::new(self.0.clone()))
    }
}

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

    /// The index is read as an HTTP registry's is, at most `A2C_MAX_DOCUMENT_BYTES`, and only
    /// from a regular file that is no link (a committed index linked to `/dev/zero` or to a
    /// file elsewhere is refused before it is read); the registry's directory itself is the
    /// path the user or the marker names.
    fn read_index(&self, client: &LazyClient, trusted: &[String], _: Wanted<'_>) -> Result<Index, RegistryError> {
        let path = self.dir.join(location::INDEX_PATH);
        let cap = client.network().settings()?.max_document;
        let what = format!("an index may have (`{}`)", crate::env::A2C_MAX_DOCUMENT_BYTES);
        let bytes = match crate::util::contain::read_capped(&path, cap, &what)? {
            Some(b) => b,
            None => return Err(RegistryError::NoIndex { path }),
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
                publish::sign_index(&self.dir, key, super::handle::Expiry::Keep)?;
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

    fn sign(&self, key: &signing::SecretKey, expiry: super::handle::Expiry) -> Result<Signed, PublishError> {
        let (path, expired) = publish::sign_index(&self.dir, key, expiry)?;
        Ok(Signed {
            signature: path.display().to_string(),
            rebuilt: None,
            warnings: expired
                .map(|at| {
                    format!(
                        "the index expired at {at} and keeps that expiry: installs that pin its key refuse it; `a2c sign --registry {} --key KEYFILE --expires-in DAYS` sets a new one, `--no-expiry` drops it",
                        crate::util::text::shell_quoted(&self.dir)
                    )
                })
                .into_iter()
                .collect(),
        })
    }
}
