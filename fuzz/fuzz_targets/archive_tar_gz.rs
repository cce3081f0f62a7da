//! Extraction of arbitrary bytes as a tar.gz bundle: never panics, never writes outside the
//! staging directory, and whatever it accepts is a tree of regular files and directories.
#![no_main]

use a2c::archive::{Format, Limits, extract};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let root = tempfile::tempdir().unwrap();
    let staging = root.path().join("staging");
    std::fs::create_dir(&staging).unwrap();
    let limits = Limits { max_unpacked_bytes: 1 << 20, max_entries: 1000 };
    if let Ok(x) = extract(data, Format::TarGz, &staging, &limits) {
        assert!(x.root.starts_with(&staging));
        for f in &x.files {
            let p = x.root.join(&f.path);
            let meta = std::fs::symlink_metadata(&p).unwrap();
            assert!(meta.is_file(), "{} is not a regular file", p.display());
        }
    }
    // Nothing beside the staging directory.
    let beside: Vec<_> = std::fs::read_dir(root.path()).unwrap().collect();
    assert_eq!(beside.len(), 1);
});
