//! Real bundles for the tests: valid ones through `a2c pack`, hostile ones written entry by
//! entry with the tar and zip crates (raw names and types the packer would never produce).

#![allow(dead_code)]

use std::io::Write;

use crate::support::{Run, TestContext};

/// One entry of a hand-made archive.
#[derive(Clone)]
pub enum Kind {
    File(Vec<u8>),
    Exec(Vec<u8>),
    Dir,
    Symlink(String),
    Hardlink(String),
    CharDevice,
    Fifo,
    Socket,
}

#[derive(Clone)]
pub struct Item {
    pub name: Vec<u8>,
    pub kind: Kind,
}

pub fn file(name: &str, content: &str) -> Item {
    Item {
        name: name.as_bytes().to_vec(),
        kind: Kind::File(content.as_bytes().to_vec()),
    }
}

pub fn item(name: &[u8], kind: Kind) -> Item {
    Item {
        name: name.to_vec(),
        kind,
    }
}

/// A valid manifest entry under the top directory.
pub fn manifest(version: &str) -> Item {
    file(
        &format!("a2c-{version}/a2c-method.toml"),
        &format!("name = \"esys/a2c\"\nversion = \"{version}\"\ntool_state_root = \".tools/esys/a2c\"\n"),
    )
}

/// A tar.gz with exactly these entries, names written raw into the headers.
pub fn tar_gz(items: &[Item]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    for it in items {
        let mut h = tar::Header::new_gnu();
        let (kind, data, link): (tar::EntryType, &[u8], Option<&str>) = match &it.kind {
            Kind::File(d) | Kind::Exec(d) => (tar::EntryType::Regular, d, None),
            Kind::Dir => (tar::EntryType::Directory, &[], None),
            Kind::Symlink(t) => (tar::EntryType::Symlink, &[], Some(t)),
            Kind::Hardlink(t) => (tar::EntryType::Link, &[], Some(t)),
            Kind::CharDevice | Kind::Socket => (tar::EntryType::Char, &[], None),
            Kind::Fifo => (tar::EntryType::Fifo, &[], None),
        };
        h.set_entry_type(kind);
        h.set_size(data.len() as u64);
        h.set_mode(if matches!(it.kind, Kind::Exec(_)) { 0o755 } else { 0o644 });
        h.set_mtime(0);
        assert!(it.name.len() < 100, "test names fit the header");
        let gnu = h.as_gnu_mut().unwrap();
        gnu.name = [0; 100];
        gnu.name[..it.name.len()].copy_from_slice(&it.name);
        if let Some(link) = link {
            gnu.linkname = [0; 100];
            gnu.linkname[..link.len()].copy_from_slice(link.as_bytes());
        }
        h.set_cksum();
        builder.append(&h, data).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

const S_IFLNK: u32 = 0o120000;
const S_IFIFO: u32 = 0o010000;
const S_IFCHR: u32 = 0o020000;

/// A zip with exactly these entries.
pub fn zip(items: &[Item]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    // The writer refuses duplicate names: a duplicate is written under a placeholder of the same
    // length, and its bytes are patched afterwards.
    let mut used = std::collections::HashSet::new();
    let mut patches = Vec::new();
    for it in items {
        let mut name = String::from_utf8(it.name.clone()).expect("zip test names are UTF-8");
        if !used.insert(name.clone()) {
            let placeholder = format!("{}~", &name[..name.len() - 1]);
            patches.push((placeholder.clone(), name.clone()));
            name = placeholder;
        }
        match &it.kind {
            Kind::File(d) => {
                w.start_file(name, opts).unwrap();
                w.write_all(d).unwrap();
            }
            Kind::Exec(d) => {
                w.start_file(name, opts.unix_permissions(0o755)).unwrap();
                w.write_all(d).unwrap();
            }
            Kind::Dir => w.add_directory(name, opts).unwrap(),
            Kind::Symlink(t) | Kind::Hardlink(t) => w.add_symlink(name, t, opts).unwrap(),
            Kind::Fifo => {
                w.start_file(name, opts.external_attributes((S_IFIFO | 0o644) << 16))
                    .unwrap();
            }
            Kind::CharDevice => {
                w.start_file(name, opts.external_attributes((S_IFCHR | 0o644) << 16))
                    .unwrap();
            }
            Kind::Socket => {
                w.start_file(name, opts.external_attributes((0o140000 | 0o644) << 16))
                    .unwrap();
            }
        }
    }
    let _ = S_IFLNK;
    let mut bytes = w.finish().unwrap().into_inner();
    for (from, to) in patches {
        let (from, to) = (from.as_bytes(), to.as_bytes());
        let mut i = 0;
        while i + from.len() <= bytes.len() {
            if &bytes[i..i + from.len()] == from {
                bytes[i..i + from.len()].copy_from_slice(to);
            }
            i += 1;
        }
    }
    bytes
}

/// Sets the "encrypted" flag of every entry, in local and central headers alike.
pub fn mark_encrypted(mut bytes: Vec<u8>) -> Vec<u8> {
    let mut i = 0;
    while i + 10 < bytes.len() {
        match &bytes[i..i + 4] {
            b"PK\x03\x04" => bytes[i + 6] |= 1,
            b"PK\x01\x02" => bytes[i + 8] |= 1,
            _ => {}
        }
        i += 1;
    }
    bytes
}

fn each_header(bytes: &mut [u8], mut f: impl FnMut(&mut [u8], usize, bool)) {
    let mut i = 0;
    while i + 46 <= bytes.len() {
        match &bytes[i..i + 4] {
            b"PK\x03\x04" => f(bytes, i, true),
            b"PK\x01\x02" => f(bytes, i, false),
            _ => {}
        }
        i += 1;
    }
}

/// Sets the compression method of every entry (local and central headers).
pub fn set_zip_method(mut bytes: Vec<u8>, method: u16) -> Vec<u8> {
    each_header(&mut bytes, |b, i, local| {
        let at = if local { i + 8 } else { i + 10 };
        if u16::from_le_bytes([b[at], b[at + 1]]) == 8 {
            b[at..at + 2].copy_from_slice(&method.to_le_bytes());
        }
    });
    bytes
}

/// Sets the declared uncompressed size of every file entry (local and central headers).
pub fn set_zip_size(mut bytes: Vec<u8>, size: u32) -> Vec<u8> {
    each_header(&mut bytes, |b, i, local| {
        let at = if local { i + 22 } else { i + 24 };
        if u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) > 0 {
            b[at..at + 4].copy_from_slice(&size.to_le_bytes());
        }
    });
    bytes
}

/// Replaces `from` by `to` (same length) in the local file headers only.
pub fn rename_local_header(mut bytes: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    each_header(&mut bytes, |b, i, local| {
        if local {
            let n = usize::from(u16::from_le_bytes([b[i + 26], b[i + 27]]));
            let name = &mut b[i + 30..i + 30 + n];
            if name.ends_with(from) {
                let start = n - from.len();
                name[start..].copy_from_slice(to);
            }
        }
    });
    bytes
}

/// The sha256 of `bytes`, in hex, computed by the `sha256sum` the machine has (independent of
/// the code under test).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use std::process::{Command, Stdio};
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

impl TestContext {
    /// Packs the method tree `tree` as `version` into the registry `registry` with the real binary.
    pub fn pack(&self, tree: &str, version: &str, registry: &str, format: &str) {
        self.pack_run(tree, version, registry, &["--format", format]).success();
    }

    /// Runs `a2c pack TREE --version VERSION --registry REGISTRY MORE…` in the root.
    pub fn pack_run(&self, tree: &str, version: &str, registry: &str, more: &[&str]) -> Run {
        let mut args = vec!["pack", tree, "--version", version, "--registry", registry];
        args.extend_from_slice(more);
        self.run(".", &args)
    }

    /// A method tree of `version` packed into `registry`.
    pub fn publish(&self, registry: &str, version: &str, format: &str) {
        let tree = format!("trees/{version}");
        self.method_tree(&tree, version);
        self.pack(&tree, version, registry, format);
    }

    /// Packs into `registry` a method tree of `version` whose tool state root is the legacy
    /// `.a2c` (`trees/VERSION`).
    pub fn publish_legacy(&self, registry: &str, version: &str, format: &str) {
        let tree = format!("trees/{version}");
        self.method_tree_with_root(&tree, version, ".a2c");
        self.pack(&tree, version, registry, format);
    }

    /// Packs into `registry` a tree of `version` whose manifest asks for a2c `min_a2c` or newer
    /// (`trees/VERSION`, one rule).
    pub fn publish_needing(&self, registry: &str, version: &str, min_a2c: &str) {
        let tree = format!("trees/{version}");
        self.write(
            &format!("{tree}/a2c-method.toml"),
            &format!("name = \"esys/a2c\"\nversion = \"{version}\"\nmin_a2c = \"{min_a2c}\"\n"),
        );
        self.write(&format!("{tree}/rules/x.md"), "x\n");
        self.pack(&tree, version, registry, "tar.gz");
    }

    /// The registry `reg` a migration goes through: 1.0.0 and 1.1.0 in the legacy layout
    /// (tar.gz), 2.0.0 requiring `.tools/esys/a2c` (zip); its path, as `A2C_REGISTRY` takes it.
    pub fn legacy_registry(&self) -> String {
        self.publish_legacy("reg", "1.0.0", "tar.gz");
        self.publish_legacy("reg", "1.1.0", "tar.gz");
        self.publish("reg", "2.0.0", "zip");
        self.path("reg").display().to_string()
    }

    /// Adds `bytes` as the bundle of `version` to the index of `registry` (no tree digest).
    pub fn publish_raw(&self, registry: &str, version: &str, bytes: &[u8], format: &str) {
        let name = format!("a2c-{version}.{format}");
        fs_err::create_dir_all(self.path(&format!("{registry}/bundles"))).unwrap();
        fs_err::write(self.path(&format!("{registry}/bundles/{name}")), bytes).unwrap();
        let index_path = self.path(&format!("{registry}/index/esys/a2c.json"));
        let mut index: serde_json::Value = match fs_err::read_to_string(&index_path) {
            Ok(t) => serde_json::from_str(&t).unwrap(),
            Err(_) => serde_json::json!({"schema": 1, "name": "esys/a2c", "versions": []}),
        };
        let versions = index["versions"].as_array_mut().unwrap();
        versions.retain(|v| v["version"] != version);
        versions.push(serde_json::json!({
            "version": version, "url": format!("../../bundles/{name}"), "sha256": sha256_hex(bytes),
            "size": bytes.len(), "format": format,
        }));
        fs_err::create_dir_all(index_path.parent().unwrap()).unwrap();
        fs_err::write(index_path, serde_json::to_string_pretty(&index).unwrap()).unwrap();
    }

    /// Edits the index entry of `version` in `registry`.
    pub fn edit_index(&self, registry: &str, version: &str, edit: impl FnOnce(&mut serde_json::Value)) {
        let index_path = self.path(&format!("{registry}/index/esys/a2c.json"));
        let mut index: serde_json::Value = serde_json::from_str(&fs_err::read_to_string(&index_path).unwrap()).unwrap();
        let entry = index["versions"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|v| v["version"] == version)
            .unwrap();
        edit(entry);
        fs_err::write(index_path, serde_json::to_string_pretty(&index).unwrap()).unwrap();
    }

    /// A superbuild `w` whose members pin 1.0.0 (two members), 1.1.0 (legacy layout) and
    /// 2.0.0, with a registry `reg` holding those versions (1.1.0 as zip).
    pub fn standard_superbuild(&self) {
        self.superbuild("w", "members: [\"p/*\", \"l/*\"]\nregistry: ../reg\n");
        self.canonical_repo("w/p/app", "1.0.0");
        self.canonical_repo("w/p/web", "2.0.0");
        self.legacy_repo("w/l/core", "1.1.0");
        self.canonical_repo("w/l/util", "1.0.0");
        self.publish("reg", "1.0.0", "tar.gz");
        self.publish("reg", "1.1.0", "zip");
        self.publish("reg", "2.0.0", "tar.gz");
    }

    /// A new context with [`Self::standard_superbuild`], locked.
    pub fn locked_superbuild() -> Self {
        let t = Self::new();
        t.standard_superbuild();
        t.run("w", &["lock"]).success();
        t
    }

    /// A new context with [`Self::standard_superbuild`], installed.
    pub fn installed_superbuild() -> Self {
        let t = Self::new();
        t.standard_superbuild();
        t.run("w", &["install"]).success();
        t
    }

    /// A new context with [`Self::standard_superbuild`], `more` versions published to `reg`
    /// too (tar.gz), the members committed, installed.
    pub fn committed_superbuild(more: &[&str]) -> Self {
        let t = Self::new();
        t.standard_superbuild();
        for version in more {
            t.publish("reg", version, "tar.gz");
        }
        t.commit_members();
        t.run("w", &["install"]).success();
        t
    }

    /// Every path below `rel` (relative, sorted), for before/after comparisons.
    pub fn listing(&self, rel: &str) -> Vec<String> {
        let root = self.path(rel);
        if !root.exists() {
            return Vec::new();
        }
        // Entries may vanish mid-walk while a child process works in the tree: skip them.
        let mut out: Vec<String> = walkdir::WalkDir::new(&root)
            .min_depth(1)
            .into_iter()
            .filter_map(Result::ok)
            .map(|e| e.path().strip_prefix(&root).unwrap().display().to_string())
            .collect();
        out.sort();
        out
    }
}
