//! Adoption records: `{tool state root}/adoption.yaml`, whose `tool_version` is the write contract.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::util::version::MethodVersion;
use crate::util::yaml::{self, Value};

/// The file name of an adoption record inside a tool state root.
pub const ADOPTION_FILE: &str = "adoption.yaml";

/// How a repository receives its method assets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    None,
    Copy,
    Submodule,
    Clone,
    Package,
}

impl Delivery {
    const ALL: [(&'static str, Delivery); 5] = [
        ("none", Delivery::None),
        ("copy", Delivery::Copy),
        ("submodule", Delivery::Submodule),
        ("clone", Delivery::Clone),
        ("package", Delivery::Package),
    ];

    /// The delivery named `s`, if any.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, d)| *d)
    }

    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, d)| *d == self)
            .map(|(n, _)| *n)
            .unwrap_or("none")
    }
}

impl std::str::FromStr for Delivery {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::parse(s)
            .ok_or_else(|| format!("unknown delivery `{s}` (expected none, copy, submodule, clone or package)"))
    }
}

impl fmt::Display for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed adoption record, legacy or current shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdoptionRecord {
    /// The shape it was read in: 1 for the legacy shape (absent or `1`), 2 for the current one.
    pub schema_version: u32,
    /// The write contract.
    pub tool_version: MethodVersion,
    pub method_ref: Option<String>,
    pub delivery: Option<Delivery>,
}

/// Why an adoption record was refused: the file, the line and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid adoption record `{}` line {line}: {reason}", path.display())]
pub struct AdoptionError {
    pub path: PathBuf,
    pub line: usize,
    pub reason: String,
}

const KEYS: [&str; 4] = ["schema_version", "tool_version", "method_ref", "delivery"];

impl AdoptionRecord {
    /// A record in the current shape.
    pub fn new(tool_version: MethodVersion, method_ref: Option<String>, delivery: Option<Delivery>) -> Self {
        Self {
            schema_version: crate::util::formats::ADOPTION.newest,
            tool_version,
            method_ref,
            delivery,
        }
    }

    /// Parses the text of `path` (used in messages only).
    pub fn parse(text: &str, path: &Path) -> Result<Self, AdoptionError> {
        let fail = |line: usize, reason: String| AdoptionError {
            path: path.to_path_buf(),
            line,
            reason,
        };
        let entries = yaml::parse_flat_mapping(text).map_err(|e| fail(e.line, e.reason))?;
        let mut schema_version = 1;
        let mut tool_version = None;
        let mut method_ref = None;
        let mut delivery = None;
        // schema_version first, so that the other keys are judged by the right shape.
        for entry in &entries {
            let Value::Scalar(value) = &entry.value else {
                return Err(fail(
                    entry.line,
                    format!("`{}` must be a single value, not a list", entry.key),
                ));
            };
            if !KEYS.contains(&entry.key.as_str()) {
                return Err(fail(
                    entry.line,
                    format!("unknown key `{}` (known keys: {})", entry.key, KEYS.join(", ")),
                ));
            }
            if entry.key == "schema_version" && !value.is_null() {
                schema_version = match crate::util::formats::ADOPTION.check(Some(&value.text)) {
                    Ok(v) => v,
                    Err(why @ crate::util::formats::FormatError::TooNew { .. }) => {
                        return Err(fail(
                            value.line,
                            format!("unsupported schema_version: {why}; upgrade a2c"),
                        ));
                    }
                    Err(why) => return Err(fail(value.line, why.to_string())),
                };
            }
        }
        for entry in &entries {
            let Value::Scalar(value) = &entry.value else {
                unreachable!("checked above")
            };
            match entry.key.as_str() {
                "tool_version" => {
                    if value.is_null() {
                        return Err(fail(
                            value.line,
                            "`tool_version` is empty; write one exact version such as 1.4.0".into(),
                        ));
                    }
                    let v = MethodVersion::parse(&value.text)
                        .map_err(|e| fail(value.line, format!("`tool_version`: {e}")))?;
                    tool_version = Some(v);
                }
                "method_ref" if !value.is_null() => method_ref = Some(value.text.clone()),
                "delivery" if !value.is_null() => {
                    let d = Delivery::parse(&value.text).ok_or_else(|| {
                        fail(
                            value.line,
                            format!(
                                "unknown delivery `{}` (expected none, copy, submodule, clone or package)",
                                value.text
                            ),
                        )
                    })?;
                    if d == Delivery::Package && schema_version < 2 {
                        return Err(fail(value.line, "delivery `package` needs `schema_version: 2`".into()));
                    }
                    delivery = Some(d);
                }
                _ => {}
            }
        }
        let last_line = text.lines().count().max(1);
        let tool_version = tool_version.ok_or_else(|| {
            fail(
                last_line,
                "missing `tool_version` (the write contract, such as 1.4.0)".into(),
            )
        })?;
        Ok(Self {
            schema_version,
            tool_version,
            method_ref,
            delivery,
        })
    }

    /// Reads and parses `path`.
    /// A link is refused before anything is read (a parse error must never echo a file the
    /// link points to).
    pub fn read(path: &Path) -> Result<Self, ReadError> {
        let (dir, name) = match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => (dir, name),
            _ => (Path::new(""), path.as_os_str()),
        };
        Self::read_at(crate::util::contain::At::Path(dir), name)
    }

    /// [`AdoptionRecord::read`] of `rel` below `at` (a repository's handle, or its path).
    pub fn read_at(at: crate::util::contain::At<'_>, rel: impl AsRef<Path>) -> Result<Self, ReadError> {
        let path = at.join(rel.as_ref());
        let text = at.read_config(rel)?.ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("`{}` does not exist", path.display()),
            )
        })?;
        Ok(Self::parse(&text, &path)?)
    }

    /// The current-shape YAML text of this record.
    pub fn to_yaml(&self) -> String {
        let mut out = format!(
            "schema_version: {}\ntool_version: {}\n",
            crate::util::formats::ADOPTION.newest,
            yaml::quote(&self.tool_version.to_string())
        );
        if let Some(r) = &self.method_ref {
            out.push_str(&format!("method_ref: {}\n", yaml::quote(r)));
        }
        if let Some(d) = self.delivery {
            out.push_str(&format!("delivery: {d}\n"));
        }
        out
    }
}

/// What `a2c adopt` wrote; serialized as its `--json` document (docs/json/adopt.schema.json).
#[derive(Debug, Clone, Serialize)]
pub struct Adopted {
    pub repo: PathBuf,
    /// The adoption record written.
    pub path: PathBuf,
    pub version: MethodVersion,
    pub delivery: Option<Delivery>,
}

/// Writes `record` as `repo`'s first adoption record, under the canonical root, and says what
/// it wrote. Refuses when either root already holds a record (adopt is never the upgrade path),
/// and never creates or writes anything through a link.
pub fn adopt(repo: &Path, record: &AdoptionRecord) -> Result<Adopted, super::WorkspaceError> {
    use crate::method::{CANONICAL_ROOT, LEGACY_ROOT};
    for root in [CANONICAL_ROOT, LEGACY_ROOT] {
        crate::util::contain::check(repo, root)?;
        let existing = repo.join(root).join(ADOPTION_FILE);
        if std::fs::symlink_metadata(&existing).is_ok() {
            return Err(super::WorkspaceError::AlreadyAdopted { path: existing });
        }
    }
    // Any legacy tool state means this repository was adopted before: a second root would
    // split its state. Moving it is `migrate version`'s job.
    let legacy = repo.join(LEGACY_ROOT);
    if crate::util::contain::is_real_dir(&legacy) && fs_err::read_dir(&legacy)?.next().is_some() {
        return Err(super::WorkspaceError::LegacyState { path: legacy });
    }
    let path = crate::util::contain::create_dirs(repo, CANONICAL_ROOT, 0o755)?.join(ADOPTION_FILE);
    crate::util::fs::write_atomic(&path, record.to_yaml().as_bytes())?;
    Ok(Adopted {
        repo: repo.to_path_buf(),
        path,
        version: record.tool_version.clone(),
        delivery: record.delivery,
    })
}

/// Reading a record fails on I/O or on content.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Invalid(#[from] AdoptionError),
}

impl crate::util::hint::Hint for AdoptionError {
    fn hint(&self) -> Option<String> {
        Some("fix the adoption record by hand; `a2c adopt` refuses to overwrite an existing record".into())
    }
}

impl crate::util::hint::Hint for ReadError {
    fn hint(&self) -> Option<String> {
        Some("fix the adoption record by hand, or restore it from git".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AdoptionRecord, AdoptionError> {
        AdoptionRecord::parse(text, Path::new("adoption.yaml"))
    }

    #[test]
    fn reads_current_and_legacy_shapes() {
        let r = parse("schema_version: 2\ntool_version: 1.4.0\nmethod_ref: v1.4.0\ndelivery: package\n").unwrap();
        assert_eq!(r.tool_version.to_string(), "1.4.0");
        assert_eq!(r.delivery, Some(Delivery::Package));
        let legacy = parse("tool_version: v1.2.0\nmethod_ref: v1.2.0\ndelivery: submodule\n").unwrap();
        assert_eq!(legacy.schema_version, 1);
        assert_eq!(legacy.tool_version.to_string(), "1.2.0");
        let v1 = parse("schema_version: 1\ntool_version: '1.3.0'\n").unwrap();
        assert_eq!(v1.delivery, None);
    }

    #[test]
    fn writes_what_it_reads() {
        let r = AdoptionRecord::new(
            "2.0.0-rc.1".parse().unwrap(),
            Some("v2.0.0-rc.1".into()),
            Some(Delivery::Package),
        );
        assert_eq!(parse(&r.to_yaml()).unwrap(), r);
    }

    #[test]
    fn every_rejection_names_line_and_reason() {
        let cases = [
            ("tool_version: 1.4.0\ntool_version: 1.5.0\n", 2, "duplicate key"),
            ("tool_version: &v 1.4.0\n", 1, "anchors"),
            ("a: &v 1\ntool_version: *v\n", 1, "anchors"),
            ("tool_version: !!str 1.4.0\n", 1, "tags"),
            ("tool_version:\n  major: 1\n", 2, "nested mappings"),
            ("- 1.4.0\n", 1, "mapping"),
            ("schema_version: 2\ndelivery: package\n", 2, "missing `tool_version`"),
            ("tool_version: ^1.2\n", 1, "ranges"),
            ("tool_version: 1.2\n", 1, "MAJOR.MINOR.PATCH"),
            ("tool_version: latest\n", 1, "ranges"),
            ("tool_version: '*'\n", 1, "ranges"),
            ("tool_version: '>=1'\n", 1, "ranges"),
            ("tool_version: 1.4.0\ndelivery: pip\n", 2, "unknown delivery `pip`"),
            ("tool_version: 1.4.0\nmode: x\n", 2, "unknown key `mode`"),
            (
                "schema_version: 3\ntool_version: 1.4.0\n",
                1,
                "found v3, this a2c supports up to v2",
            ),
            (
                "schema_version: two\ntool_version: 1.4.0\n",
                1,
                "`schema_version` must be 1 to 2, found `two`",
            ),
            (
                "schema_version: 4294967298\ntool_version: 1.4.0\n",
                1,
                "found v4294967298, this a2c supports up to v2",
            ),
            (
                "tool_version: 1.4.0\ndelivery: package\n",
                2,
                "needs `schema_version: 2`",
            ),
            ("tool_version: [1.4.0]\n", 1, "not a list"),
            ("tool_version:\n", 1, "empty"),
        ];
        for (text, line, why) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.reason.contains(why), "{text:?}: {e}");
            assert!(e.to_string().contains("adoption.yaml"), "{e}");
        }
    }
}
