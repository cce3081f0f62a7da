//! The property both archive targets check: extracting arbitrary bytes never panics, never
//! writes beside the staging directory, and whatever it accepts is regular files only.

use a2c::archive::{Format, Limits, extract};

pub fn check(data: &[u8], format: Format) {
    let root = tempfile::tempdir().unwrap();
    let staging = root.path().join("staging");
    std::fs::create_dir(&staging).unwrap();
    let limits = Limits { max_unpacked_bytes: 1 << 20, max_entries: 1000 };
    if let Ok(x) = extract(data, format, &staging, &limits) {
        assert!(x.root.starts_with(&staging));
        for f in &x.files {
            let p = x.root.join(&f.path);
            let meta = std::fs::symlink_metadata(&p).unwrap();
            assert!(meta.is_file(), "{} is not a regular file", p.display());
        }
    }
    let beside: Vec<_> = std::fs::read_dir(root.path()).unwrap().collect();
    assert_eq!(beside.len(), 1, "something was written beside the staging directory");
}
