//! The registry index `index/esys/a2c.json` (schema 2: schema 1 with `serial` and `expires`).

use serde::{Deserialize, Serialize};

use super::RegistryError;
use crate::archive::Format;
use crate::method::METHOD_NAME;
use crate::util::digest::{Sha256, check_tree_digest};
use crate::util::version::MethodVersion;

/// `true` for `YYYY-MM-DDTHH:MM:SSZ`, the one timestamp shape a2c writes and reads: fixed width
/// and UTC, so two of them compare as strings.
pub fn is_utc_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// One published version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexEntry {
    pub version: MethodVersion,
    /// Absolute, or relative to the index file.
    pub url: String,
    pub sha256: Sha256,
    pub size: u64,
    pub format: Format,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    #[serde(default)]
    pub yanked: bool,
}

/// The index of one method.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Index {
    pub schema: u64,
    pub name: String,
    /// Grows by one with every publish, yank or signing: a signed index whose serial is lower
    /// than the one a lock recorded is a rollback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<u64>,
    /// When a signed index stops being trusted (`YYYY-MM-DDTHH:MM:SSZ`, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    pub versions: Vec<IndexEntry>,
    /// The URL the index was finally read from, after redirects (HTTP only): entry URLs
    /// resolve against it. Not part of the file.
    #[serde(skip)]
    pub fetched_from: Option<url::Url>,
    /// Versions a registry listed whose entries were not read (an OCI registry's tags past what
    /// the caller needed, or past the listing cap): named in messages, never resolved.
    #[serde(skip)]
    pub listed: Vec<crate::util::version::MethodVersion>,
    /// What a capped listing left out, said to the user. Not part of the file.
    #[serde(skip)]
    pub truncated: Option<String>,
    /// Version-like names that hold something else than an a2c bundle (an OCI tag another
    /// client pushed), with what they hold. Not part of the file.
    #[serde(skip)]
    pub foreign: Vec<Foreign>,
}

/// Something else than an a2c bundle under a version-like name (an OCI tag another client
/// pushed): what it is, and how to publish the version there instead (the kind's words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreign {
    pub version: crate::util::version::MethodVersion,
    pub what: String,
    pub hint: String,
}

impl Index {
    /// What else than a bundle it holds under `version`, if anything.
    pub fn foreign_at(&self, version: &crate::util::version::MethodVersion) -> Option<Box<Foreign>> {
        self.foreign
            .iter()
            .find(|f| &f.version == version)
            .cloned()
            .map(Box::new)
    }

    pub fn new() -> Self {
        Self {
            schema: u64::from(crate::util::formats::INDEX.newest),
            name: METHOD_NAME.into(),
            serial: None,
            expires: None,
            versions: Vec::new(),
            fetched_from: None,
            listed: Vec::new(),
            truncated: None,
            foreign: Vec::new(),
        }
    }

    /// Parses index JSON read from `location` (used in messages).
    pub fn parse(text: &str, location: &str) -> Result<Self, RegistryError> {
        let invalid = |reason: String| RegistryError::InvalidIndex {
            location: location.to_string(),
            reason,
        };
        // The schema first (so that a newer index fails on its version, not on a field), then
        // the whole document straight from the text: going through `serde_json::Value` would
        // keep the last of duplicate keys silently.
        #[derive(Deserialize)]
        struct Probe {
            schema: Option<serde_json::Value>,
        }
        let probe: Probe = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        // Schema 1 with `serial`/`expires` is read too: a2c wrote them so before schema 2.
        let found = probe.schema.as_ref().map(serde_json::Value::to_string);
        match crate::util::formats::INDEX.check(found.as_deref()) {
            Ok(_) => {}
            Err(why @ crate::util::formats::FormatError::TooNew { .. }) => {
                return Err(RegistryError::IndexTooNew {
                    location: location.to_string(),
                    why,
                });
            }
            Err(why) => return Err(invalid(why.to_string())),
        }
        let index: Index = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if index.name != METHOD_NAME {
            return Err(invalid(format!("`name` is `{}`, expected `{METHOD_NAME}`", index.name)));
        }
        if let Some(exp) = &index.expires
            && !is_utc_timestamp(exp)
        {
            return Err(invalid(format!(
                "`expires` is `{exp}`, expected a UTC time such as 2027-01-31T00:00:00Z"
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for e in &index.versions {
            if !seen.insert(&e.version) {
                return Err(invalid(format!("version {} is listed twice", e.version)));
            }
            if let Some(tree) = &e.tree {
                check_tree_digest(tree).map_err(|r| invalid(format!("version {}: `tree`: {r}", e.version)))?;
            }
        }
        Ok(index)
    }

    pub fn get(&self, version: &MethodVersion) -> Option<&IndexEntry> {
        self.versions.iter().find(|e| &e.version == version)
    }

    /// Pretty JSON, versions sorted, at the oldest schema that holds it: 2 with a `serial` or
    /// `expires` (which schema 1 lacks: a schema-1 reader refuses unknown fields), else 1.
    pub fn to_json(&self) -> String {
        let mut sorted = self.clone();
        sorted.schema = match self.serial.is_some() || self.expires.is_some() {
            true => 2,
            false => 1,
        };
        sorted.versions.sort_by(|a, b| a.version.cmp(&b.version));
        let mut text = serde_json::to_string_pretty(&sorted).expect("the index serializes");
        text.push('\n');
        text
    }
}

impl Default for Index {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        let sha = Sha256::of(b"x");
        let good = format!(
            r#"{{"schema": 1, "name": "esys/a2c", "versions": [{{"version": "1.0.0", "url": "../../bundles/a.tar.gz", "sha256": "{sha}", "size": 3, "format": "tar.gz"}}]}}"#
        );
        let index = Index::parse(&good, "idx").unwrap();
        assert!(!index.versions[0].yanked);
        assert_eq!(Index::parse(&index.to_json(), "idx").unwrap(), index);
        for (text, why) in [
            (good.replace("\"schema\": 1", "\"schema\": 3"), "found v3"),
            (
                good.replace("\"schema\": 1,", ""),
                "missing `schema` (this a2c reads 1 to 2)",
            ),
            (
                good.replace("\"schema\": 1", "\"schema\": 4294967297"),
                "found v4294967297",
            ),
            (
                good.replace("\"schema\": 1", "\"schema\": 1.0"),
                "`schema` must be 1 to 2, found `1.0`",
            ),
            (good.replace("esys/a2c", "other"), "expected `esys/a2c`"),
            (
                good.replace("\"size\"", "\"yank\": true, \"size\""),
                "unknown field `yank`",
            ),
            (good.replace("tar.gz\"}", "7z\"}"), "unknown variant"),
            (good.replace("1.0.0", "1.0"), "not an exact version"),
            ("{".to_string(), "EOF"),
        ] {
            let e = Index::parse(&text, "idx").unwrap_err().to_string();
            assert!(e.contains(why), "{why}: {e}");
        }
    }
}
