//! The fuzz targets' bodies (feature `fuzzing`): each feeds bytes to the entry point the
//! program uses and asserts what must hold, not only "no panic". `fuzz/` calls them under
//! libFuzzer; `tests/it/fuzz_corpus.rs` replays every saved input through them on the stable
//! toolchain, so a target that stops compiling or a regression on a saved input fails
//! `cargo test`. Kind-internal parsers have their hook in their own folder
//! (`registry::pypi::fuzz_page`), MCP's in `mcp::fuzz_uri_and_prompt`.

use std::path::Path;

use crate::archive::{Format, Limits, extract};

/// Extracting arbitrary bytes as `format` never panics, never writes beside the staging
/// directory, and whatever it accepts is regular files below the root.
pub fn archive(data: &[u8], format: Format) {
    let root = tempfile::tempdir().expect("a temporary directory");
    let staging = root.path().join("staging");
    std::fs::create_dir(&staging).expect("the staging directory");
    let limits = Limits {
        max_unpacked_bytes: 1 << 20,
        max_entries: 1000,
    };
    if let Ok(x) = extract(data, format, &staging, &limits) {
        assert!(x.root.starts_with(&staging));
        for f in &x.files {
            let p = x.root.join(&f.path);
            let meta = std::fs::symlink_metadata(&p).expect("an extracted file exists");
            assert!(meta.is_file(), "{} is not a regular file", p.display());
            assert!(
                crate::util::paths::normalize(&p).starts_with(&x.root),
                "{}",
                p.display()
            );
        }
    }
    let beside = std::fs::read_dir(root.path()).expect("the root").count();
    assert_eq!(beside, 1, "something was written beside the staging directory");
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
