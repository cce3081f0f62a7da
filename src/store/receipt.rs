//! Install receipts: `<store>/<V>/.a2c-receipt.json`, written last, before the rename that
//! publishes the version. Never part of the tree digest; no archive may name it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::archive::{Format, RECEIPT_FILE};
use crate::util::digest::Sha256;
use crate::util::version::MethodVersion;

/// What was installed, from where, by whom, when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    pub schema: u32,
    pub name: String,
    pub version: MethodVersion,
    pub sha256: Sha256,
    pub size: u64,
    pub format: Format,
    pub tree: String,
    pub files: usize,
    /// Where the bundle was read from: a URL, a `--from` file, or the cache.
    pub source: String,
    pub a2c_version: String,
    /// RFC 3339, UTC.
    pub installed_at: String,
    /// How the version shares its files with the shared tree cache (`clone`, `hardlink`,
    /// `copy`); absent when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_mode: Option<super::trees::LinkMode>,
}

impl Receipt {
    /// The receipt of `entry` installed now, by this a2c.
    pub fn new(
        entry: &crate::lock::LockEntry,
        tree: String,
        files: usize,
        source: String,
        link_mode: Option<super::trees::LinkMode>,
    ) -> Self {
        Self {
            schema: crate::util::formats::RECEIPT.newest,
            name: crate::method::METHOD_NAME.into(),
            version: entry.version.clone(),
            sha256: entry.sha256,
            size: entry.size,
            format: entry.format,
            tree,
            files,
            source,
            a2c_version: crate::A2C_VERSION.into(),
            installed_at: now_rfc3339(),
            link_mode,
        }
    }

    pub fn path(tree: &Path) -> PathBuf {
        tree.join(RECEIPT_FILE)
    }

    /// Reads the receipt of an installed tree; `None` when missing, unreadable or a link.
    pub fn read(tree: &Path) -> Option<Self> {
        let text = crate::util::contain::read_config(&Self::path(tree)).ok()??;
        serde_json::from_str::<Receipt>(&text)
            .ok()
            .filter(|r| crate::util::formats::RECEIPT.check(Some(&r.schema.to_string())).is_ok())
    }

    /// Writes the receipt read-only into `tree`.
    pub fn write(&self, tree: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).expect("a receipt serializes");
        text.push('\n');
        crate::util::contain::write_new(&Self::path(tree), text.as_bytes(), 0o444)
    }
}

pub use crate::util::time::now_rfc3339;

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_shape() {
        let now = super::now_rfc3339();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.starts_with("20") && now.ends_with('Z'));
    }
}
