//! The method manifest `a2c-method.toml` at the root of every method tree and bundle.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::util::version::MethodVersion;

/// The canonical tool state root, relative to a repository (what a manifest's
/// `tool_state_root` names when it asks for the canonical layout).
pub const CANONICAL_ROOT: &str = ".tools/esys/a2c";
/// The legacy tool state root, read only when the canonical one is absent.
pub const LEGACY_ROOT: &str = ".a2c";

/// The file name of the manifest.
pub const MANIFEST_FILE: &str = "a2c-method.toml";
/// The method name this tool installs.
pub const METHOD_NAME: &str = "esys/a2c";

/// The version of the running a2c.
pub fn running_a2c() -> Option<MethodVersion> {
    crate::A2C_VERSION.parse().ok()
}

/// What a method tree says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodManifest {
    pub name: String,
    pub version: MethodVersion,
    /// `.tools/esys/a2c` for versions of the new layout, `.a2c` for older ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_state_root: Option<String>,
    /// The oldest `a2c` that may work with this method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_a2c: Option<MethodVersion>,
}

/// Why a manifest could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("no method manifest `{}`", path.display())]
    Missing { path: PathBuf },
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("invalid method manifest `{}`: {reason}", path.display())]
    Invalid { path: PathBuf, reason: String },
}

impl MethodManifest {
    /// Parses manifest text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ManifestError> {
        let manifest: MethodManifest = toml::from_str(text).map_err(|e| ManifestError::Invalid {
            path: path.to_path_buf(),
            reason: crate::util::text::cut_lines(e.to_string().trim()).replace('\n', " "),
        })?;
        if manifest.name != METHOD_NAME {
            return Err(ManifestError::Invalid {
                path: path.to_path_buf(),
                reason: format!(
                    "`name` is `{}`, expected `{METHOD_NAME}`",
                    crate::util::text::quoted_short(&manifest.name)
                ),
            });
        }
        if let Some(root) = &manifest.tool_state_root
            && root != CANONICAL_ROOT
            && root != ".a2c"
        {
            return Err(ManifestError::Invalid {
                path: path.to_path_buf(),
                reason: format!(
                    "`tool_state_root` is `{}`, expected `.tools/esys/a2c` or `.a2c`",
                    crate::util::text::quoted_short(root)
                ),
            });
        }
        Ok(manifest)
    }

    /// Reads `<tree>/a2c-method.toml`.
    pub fn read_tree(tree: &Path) -> Result<Self, ManifestError> {
        let path = tree.join(MANIFEST_FILE);
        if !path.is_file() {
            return Err(ManifestError::Missing { path });
        }
        let text = fs_err::read_to_string(&path)?;
        Self::parse(&text, &path)
    }

    /// The `min_a2c` this running a2c does not meet, if any (docs/concepts.md, "Resolution", drift: the running
    /// CLI against the method version).
    pub fn needs_newer_a2c(&self) -> Option<&MethodVersion> {
        let running = running_a2c()?;
        self.min_a2c.as_ref().filter(|min| running < **min)
    }

    /// `true` when this version requires the canonical `.tools/esys/a2c` tool state root.
    pub fn requires_canonical_root(&self) -> bool {
        self.tool_state_root.as_deref() == Some(CANONICAL_ROOT)
    }
}

impl crate::util::hint::Hint for ManifestError {
    fn hint(&self) -> Option<String> {
        Some(format!(
            "a method tree holds `{}` at its root, declaring `name`, `version` and `tool_state_root`",
            MANIFEST_FILE
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_validates() {
        let p = Path::new("a2c-method.toml");
        let m = MethodManifest::parse(
            "name = \"esys/a2c\"\nversion = \"1.4.0\"\ntool_state_root = \".tools/esys/a2c\"\n",
            p,
        )
        .unwrap();
        assert!(m.requires_canonical_root());
        assert!(MethodManifest::parse("name = \"other\"\nversion = \"1.4.0\"\n", p).is_err());
        assert!(MethodManifest::parse("name = \"esys/a2c\"\nversion = \"^1.4\"\n", p).is_err());
        assert!(
            MethodManifest::parse("name = \"esys/a2c\"\nversion = \"1.4.0\"\ntool_state_root = \"x\"\n", p).is_err()
        );
    }
}
