//! Every file format a2c reads or writes, with the key that holds its version and the newest
//! version this a2c knows: one list, and one place that words "found vN, this a2c supports up
//! to vM". A format a person or a registry writes is refused when newer (the file is left as
//! it is); one a2c keeps for itself (a receipt, a snapshot, a tree-cache record) is rebuilt.

/// What a2c does with a file of a newer version than it knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnNewer {
    /// Refused with [`FileFormat::too_new`]: upgrade a2c.
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

impl FileFormat {
    /// The words of a version this a2c does not read: "found vN, this a2c supports up to vM".
    pub fn too_new(&self, found: u64) -> String {
        format!("found v{found}, this a2c supports up to v{}", self.newest)
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
    newest: 2,
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
        assert_eq!(LOCK.too_new(4), "found v4, this a2c supports up to v3");
        let mut names: Vec<&str> = ALL.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }

    /// The formats whose version is a first line name it as listed.
    #[test]
    fn first_lines_are_the_listed_ones() {
        let line = |f: FileFormat| format!("{} {}", f.key, f.newest);
        assert_eq!(crate::store::trees::META_HEADER, line(TREE_RECORD));
        assert!(TREE_RECORD.file.ends_with(crate::store::trees::META_FILE));
    }
}
