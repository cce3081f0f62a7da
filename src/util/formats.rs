//! Every file format a2c reads or writes, with the key that holds its version and the newest
//! version this a2c knows: one list, and one place that words "found vN, this a2c supports up
//! to vM". A format a person or a registry writes is refused when newer (the file is left as
//! it is); one a2c keeps for itself (a receipt, a snapshot, a tree-cache record) is rebuilt.

/// What a2c does with a file of a newer version than it knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnNewer {
    /// Refused with [`FormatError::TooNew`]: upgrade a2c.
    Refused,
    /// Not trusted, written anew (a2c's own bookkeeping).
    Rebuilt,
}

/// One file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileFormat {
    /// What it is, as messages and docs name it.
    pub name: &'static str,
    /// Where it lives.
    pub file: &'static str,
    /// The key (or first line) that holds its version.
    pub key: &'static str,
    /// The newest version this a2c reads (and the one it writes).
    pub newest: u32,
    pub on_newer: OnNewer,
}

/// Why a file's version is not one this a2c reads; its `Display` is the reason a reader puts in
/// its own error (which names the file and the line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// The key is not there.
    Missing { key: &'static str, newest: u32 },
    /// The key holds something else than a whole number from 1 (as written).
    NotANumber {
        key: &'static str,
        newest: u32,
        found: String,
    },
    /// A whole number above the newest, as written (never truncated: `4294967299` is not 3).
    TooNew { found: String, newest: u32 },
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing { key, newest } => write!(f, "missing `{key}` (this a2c reads {})", range(*newest)),
            Self::NotANumber { key, newest, found } => {
                write!(f, "`{key}` must be {}, found `{found}`", range(*newest))
            }
            Self::TooNew { found, newest } => write!(f, "found v{found}, this a2c supports up to v{newest}"),
        }
    }
}

/// "1" or "1 to N".
fn range(newest: u32) -> String {
    match newest {
        1 => "1".into(),
        n => format!("1 to {n}"),
    }
}

impl FileFormat {
    /// The one version check every reader makes: `found` is what the version key holds, as its
    /// text (a TOML or JSON value as written, a YAML scalar), `None` when the key is missing.
    /// The version, from 1 to [`FileFormat::newest`], or why not.
    pub fn check(&self, found: Option<&str>) -> Result<u32, FormatError> {
        let Some(text) = found else {
            return Err(FormatError::Missing {
                key: self.key,
                newest: self.newest,
            });
        };
        // A whole number as any a2c writes one: digits, no sign, no leading zero (so `0` is no
        // version either). A longer run of digits is a number too, compared as written, never
        // cut to 32 bits.
        let number = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && !text.starts_with('0');
        match text.parse::<u32>() {
            Ok(v) if number && v <= self.newest => Ok(v),
            _ if number => Err(FormatError::TooNew {
                found: text.to_string(),
                newest: self.newest,
            }),
            _ => Err(FormatError::NotANumber {
                key: self.key,
                newest: self.newest,
                found: text.to_string(),
            }),
        }
    }
}

/// The lockfile (`version`). a2c reads every version up to the newest and writes the newest
/// only: whichever command writes a lock, and whatever it records, it is the same format.
pub const LOCK: FileFormat = FileFormat {
    name: "lockfile",
    file: ".tools/esys/a2c/a2c.lock",
    key: "version",
    newest: 3,
    on_newer: OnNewer::Refused,
};

/// A registry's index (`schema`).
pub const INDEX: FileFormat = FileFormat {
    name: "registry index",
    file: "index/esys/a2c.json",
    key: "schema",
    newest: 2,
    on_newer: OnNewer::Refused,
};

/// The workspace marker (`schema_version`).
pub const MARKER: FileFormat = FileFormat {
    name: "workspace marker",
    file: ".tools/esys/a2c/workspace.yaml",
    key: "schema_version",
    newest: 2,
    on_newer: OnNewer::Refused,
};

/// An adoption record (`schema_version`).
pub const ADOPTION: FileFormat = FileFormat {
    name: "adoption record",
    file: ".tools/esys/a2c/adoption.yaml",
    key: "schema_version",
    newest: 2,
    on_newer: OnNewer::Refused,
};

/// The manifest `a2c vendor` writes beside the bundles (`schema`).
pub const VENDOR: FileFormat = FileFormat {
    name: "vendor manifest",
    file: "a2c-vendor.json",
    key: "schema",
    newest: 2,
    on_newer: OnNewer::Refused,
};

/// An install receipt (`schema`): a newer one is not trusted, the version installed again.
pub const RECEIPT: FileFormat = FileFormat {
    name: "install receipt",
    file: "<store>/<V>/.a2c-receipt.json",
    key: "schema",
    newest: 1,
    on_newer: OnNewer::Rebuilt,
};

/// The workspace snapshot (its first line, `a2c-workspace-snapshot N`).
pub const SNAPSHOT: FileFormat = FileFormat {
    name: "workspace snapshot",
    file: "<store>/.workspace-snapshot",
    key: "a2c-workspace-snapshot",
    newest: 3,
    on_newer: OnNewer::Rebuilt,
};

/// A tree-cache record (its first line, `a2c-tree-cache N`).
pub const TREE_RECORD: FileFormat = FileFormat {
    name: "tree-cache record",
    file: "<cache>/trees/<sha256>/record",
    key: "a2c-tree-cache",
    newest: 3,
    on_newer: OnNewer::Rebuilt,
};

/// Every format, as docs/formats.md lists them.
pub const ALL: &[FileFormat] = &[LOCK, INDEX, MARKER, ADOPTION, VENDOR, RECEIPT, SNAPSHOT, TREE_RECORD];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_wording_and_distinct_names() {
        assert_eq!(
            LOCK.check(Some("4")).unwrap_err().to_string(),
            "found v4, this a2c supports up to v3"
        );
        let mut names: Vec<&str> = ALL.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }

    /// Every answer of the one check: a version in range, and each refusal worded once.
    #[test]
    fn the_check_reads_the_version_as_written() {
        assert_eq!(LOCK.check(Some("1")), Ok(1));
        assert_eq!(LOCK.check(Some("3")), Ok(3));
        let no = |text: Option<&str>| LOCK.check(text).unwrap_err().to_string();
        // Above u32: never cut to 32 bits (4294967299 as u32 is 3).
        assert_eq!(no(Some("4294967299")), "found v4294967299, this a2c supports up to v3");
        assert_eq!(
            no(Some("99999999999999999999999")),
            "found v99999999999999999999999, this a2c supports up to v3"
        );
        assert_eq!(no(None), "missing `version` (this a2c reads 1 to 3)");
        for bad in ["0", "-1", "03", "3.0", "\"3\"", "", "three", "+3"] {
            assert_eq!(
                no(Some(bad)),
                format!("`version` must be 1 to 3, found `{bad}`"),
                "{bad}"
            );
        }
        assert_eq!(
            RECEIPT.check(Some("2")).unwrap_err().to_string(),
            "found v2, this a2c supports up to v1"
        );
    }

    /// The formats whose version is a first line name it as listed.
    #[test]
    fn first_lines_are_the_listed_ones() {
        let line = |f: FileFormat| format!("{} {}", f.key, f.newest);
        assert_eq!(crate::store::trees::META_HEADER, line(TREE_RECORD));
        assert!(TREE_RECORD.file.ends_with(crate::store::trees::META_FILE));
    }
}
