//! The fuzz targets' bodies (feature `fuzzing`): each feeds bytes to the entry point the
//! program uses and asserts what must hold, not only "no panic". `fuzz/` calls them under
//! libFuzzer; `tests/it/fuzz_corpus.rs` replays every saved input through them on the stable
//! toolchain, so a target that stops compiling or a regression on a saved input fails
//! `cargo test`. Private parsers are reached through a `fuzz_*` function beside them, compiled
//! only with this feature (`util::git_index::fuzz_judge`, `archive::wheel::fuzz_read_record`,
//! `workspace::snapshot::Snapshot::fuzz_round_trip`); the network layer's bodies are in
//! `net::fuzz`, a registry kind's in its own folder (`registry::pypi::fuzz_page`,
//! `registry::conan::fuzz_remote`), MCP's in `mcp::fuzz_uri_and_prompt`. Structured targets
//! build their input from typed values (`arbitrary`): tar headers, git index entries, RECORD
//! rows.

pub mod git_index;
pub mod record;
pub mod tar;

use std::collections::BTreeMap;
use std::path::Path;

use crate::archive::{Format, Limits, extract};

/// Extracting arbitrary bytes as `format` never panics, never writes beside the staging
/// directory, and whatever it accepts is regular files below the root: returned, by path
/// relative to the root, with their contents.
pub fn archive(data: &[u8], format: Format) -> Option<BTreeMap<String, Vec<u8>>> {
    let root = tempfile::tempdir().expect("a temporary directory");
    let staging = root.path().join("staging");
    std::fs::create_dir(&staging).expect("the staging directory");
    let limits = Limits {
        max_unpacked_bytes: 1 << 20,
        max_entries: 1000,
    };
    let extracted = extract(data, format, &staging, &limits).ok().map(|x| {
        assert!(x.root.starts_with(&staging));
        let mut files = BTreeMap::new();
        for f in &x.files {
            let p = x.root.join(&f.path);
            let meta = std::fs::symlink_metadata(&p).expect("an extracted file exists");
            assert!(meta.is_file(), "{} is not a regular file", p.display());
            assert!(
                crate::util::paths::normalize(&p).starts_with(&x.root),
                "{}",
                p.display()
            );
            let content = std::fs::read(&p).expect("an extracted file reads");
            files.insert(f.path.clone(), content);
        }
        files
    });
    let beside = std::fs::read_dir(root.path()).expect("the root").count();
    assert_eq!(beside, 1, "something was written beside the staging directory");
    extracted
}

/// Adoption records: what parses writes back to an equal record.
pub fn adoption_yaml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("adoption.yaml");
    if let Ok(record) = crate::workspace::AdoptionRecord::parse(text, path) {
        let again = crate::workspace::AdoptionRecord::parse(&record.to_yaml(), path).expect("a written record reads");
        assert_eq!(again.tool_version, record.tool_version);
        assert_eq!(again.method_ref, record.method_ref);
        assert_eq!(again.delivery, record.delivery);
        assert_eq!(again.to_yaml(), record.to_yaml(), "written twice, two texts");
    }
}

/// Workspace markers: accepted member globs only select portable paths; a registry entry's own
/// mirrors belong to a listed registry.
pub fn workspace_marker(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(marker) = crate::workspace::WorkspaceMarker::parse(text, Path::new("workspace.yaml")) {
        for g in marker.members.iter().flatten().chain(&marker.exclude) {
            assert!(crate::util::paths::check_portable_relative(g).is_ok(), "{g}");
        }
        for r in marker.registry_mirrors.keys() {
            assert!(marker.registries.contains(r), "{r}");
        }
        let _ = marker.selects("products/app");
    }
}

/// Registry indexes: what parses writes back to an index of the same versions.
pub fn index_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(index) = crate::registry::Index::parse(text, "index.json") {
        let again = crate::registry::Index::parse(&index.to_json(), "index.json").expect("a written index reads");
        assert_eq!(again.versions.len(), index.versions.len());
        assert_eq!((again.serial, &again.expires), (index.serial, &index.expires));
        assert_eq!(again.to_json(), index.to_json(), "written twice, two texts");
    }
}

/// Lockfiles: whatever parses writes back to an equal lock.
pub fn lock_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("a2c.lock");
    if let Ok(lock) = crate::lock::Lockfile::parse(text, path) {
        let again = crate::lock::Lockfile::parse(&lock.to_toml(), path).expect("a written lock reads");
        let mut methods = lock.methods.clone();
        methods.sort_by(|x, y| x.version.cmp(&y.version));
        assert_eq!(again.methods, methods);
        assert_eq!(
            (again.index_serial, &again.index_serials),
            (lock.index_serial, &lock.index_serials)
        );
        assert_eq!(again.to_toml(), lock.to_toml(), "written twice, two texts");
    }
}

/// The strict YAML reader: never panics; an accepted document's keys are unique.
pub fn yaml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(entries) = crate::util::yaml::parse_flat_mapping(text) {
        let mut keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "duplicate keys were accepted");
    }
}

/// minisign public keys and signatures (a registry's `index.json.minisig`, a marker's trusted
/// keys): the bytes before the first NUL are a public key, up to the second a signature, the
/// rest the signed data. A key read has a 16-hex-digit id; a signature that verifies was made
/// by that key, over exactly that data: one byte more and it fails.
pub fn minisign(data: &[u8]) {
    use crate::registry::signing::{public_key_id, verify};
    let mut parts = data.splitn(3, |b| *b == 0);
    let key = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let signature = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let message = parts.next().unwrap_or_default();
    let id = public_key_id(&key).ok();
    if let Some(id) = &id {
        assert!(id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    }
    let trusted = [key];
    if let Ok(signer) = verify("fuzz", message, Some(&signature), &trusted) {
        assert_eq!(Some(&signer), id.as_ref());
        let longer = [message, b"x"].concat();
        assert!(
            verify("fuzz", &longer, Some(&signature), &trusted).is_err(),
            "a signature verifies other data"
        );
    }
}

/// Registry locations (`--registry`, a marker's `registry`, a lock's `source`): one accepted
/// is shown without credentials, and what is shown reads back as the same location.
pub fn registry_location(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let base = Path::new("/superbuild/products/app");
    let Ok(location) = crate::registry::RegistryLocation::parse(text, base) else {
        return;
    };
    let index = location.index_url();
    assert!(index.username().is_empty() && index.password().is_none(), "{index}");
    let shown = location.to_string();
    let again = crate::registry::RegistryLocation::parse(&shown, base)
        .unwrap_or_else(|e| panic!("`{shown}` (shown for `{text}`) does not read back: {e}"));
    assert_eq!(again.to_string(), shown);
    assert_eq!(again.index_url(), index);
}

/// Vendor manifests (`a2c-vendor.json`): what reads writes back to an equal manifest.
pub fn vendor_manifest(data: &[u8]) {
    use crate::lock::vendored::{VENDOR_MANIFEST, VendorManifest};
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join(VENDOR_MANIFEST), data).expect("the manifest");
    if let Ok(Some(manifest)) = VendorManifest::read(dir.path()) {
        let out = tempfile::tempdir().expect("a temporary directory");
        manifest.write(out.path()).expect("the manifest writes");
        let again = VendorManifest::read(out.path()).expect("a written manifest reads");
        assert_eq!(again.as_ref(), Some(&manifest));
    }
}
