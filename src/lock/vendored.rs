//! The vendor manifest `a2c-vendor.json` that `a2c vendor DIR` writes beside the bundles: the
//! writer and its typed reader, side by side.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::LockEntry;
use crate::archive::Format;
use crate::method::METHOD_NAME;
use crate::util::digest::Sha256;
use crate::util::version::MethodVersion;

/// The manifest written beside the bundles.
pub const VENDOR_MANIFEST: &str = "a2c-vendor.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VendoredBundle {
    pub version: MethodVersion,
    pub file: String,
    pub sha256: Sha256,
    pub size: u64,
    pub format: Format,
    pub source: String,
    /// The locked tree digest (`sha256:<hex>`), when the lock had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VendorManifest {
    pub schema: u32,
    pub bundles: Vec<VendoredBundle>,
}

impl VendorManifest {
    pub fn new(bundles: Vec<VendoredBundle>) -> Self {
        Self {
            schema: crate::util::formats::VENDOR.newest,
            bundles,
        }
    }

    /// Writes `dir/a2c-vendor.json` atomically.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).expect("the manifest serializes");
        text.push('\n');
        crate::util::fs::write_atomic(&dir.join(VENDOR_MANIFEST), text.as_bytes())
    }

    /// Reads `dir/a2c-vendor.json`: `Ok(None)` when absent; a manifest of a newer schema, or
    /// one that does not parse, is an error naming the file.
    pub fn read(dir: &Path) -> std::io::Result<Option<Self>> {
        let path = dir.join(VENDOR_MANIFEST);
        let Some(text) = crate::util::contain::read_config(&path)? else {
            return Ok(None);
        };
        let invalid = |why: String| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("invalid vendor manifest `{}`: {why}", path.display()),
            )
        };
        #[derive(Deserialize)]
        struct Probe {
            schema: Option<serde_json::Value>,
        }
        let probe: Probe = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        let found = probe.schema.as_ref().map(serde_json::Value::to_string);
        match crate::util::formats::VENDOR.check(found.as_deref()) {
            Ok(_) => {}
            Err(why @ crate::util::formats::FormatError::TooNew { .. }) => {
                return Err(invalid(format!("{why}; upgrade a2c")));
            }
            Err(why) => return Err(invalid(why.to_string())),
        }
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| invalid(e.to_string()))
    }

    /// The lock entry of `version`, if the manifest lists it.
    pub fn entry(&self, version: &MethodVersion) -> Option<LockEntry> {
        let b = self.bundles.iter().find(|b| b.version == *version)?;
        Some(LockEntry {
            name: METHOD_NAME.into(),
            version: b.version.clone(),
            source: b.source.clone(),
            sha256: b.sha256,
            size: b.size,
            format: b.format,
            tree: b.tree.clone(),
            // The manifest does not say which registry (a later lock finds it again).
            registry: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schema 1 manifest (no `tree`) is still read; its entries have no tree digest.
    #[test]
    fn schema_1_is_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let sha = Sha256::of(b"x").to_hex();
        fs_err::write(
            dir.path().join(VENDOR_MANIFEST),
            format!(
                r#"{{"schema": 1, "bundles": [{{"version": "1.0.0", "file": "a.tar.gz", "sha256": "{sha}", "size": 1, "format": "tar.gz", "source": "https://r.example/a.tar.gz"}}]}}"#
            ),
        )
        .unwrap();
        let m = VendorManifest::read(dir.path()).unwrap().unwrap();
        let e = m.entry(&"1.0.0".parse().unwrap()).unwrap();
        assert_eq!((e.size, e.tree), (1, None));
        fs_err::write(dir.path().join(VENDOR_MANIFEST), r#"{"schema": 3, "bundles": []}"#).unwrap();
        let err = VendorManifest::read(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("found v3, this a2c supports up to v2; upgrade a2c"),
            "{err}"
        );
    }
}
