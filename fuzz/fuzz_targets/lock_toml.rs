//! Lockfiles: never panics; whatever parses writes back to an equal lock.
#![no_main]

use a2c::lock::Lockfile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(lock) = Lockfile::parse(text, std::path::Path::new("a2c.lock")) {
        let again = Lockfile::parse(&lock.to_toml(), std::path::Path::new("a2c.lock")).unwrap();
        let mut a = lock.methods.clone();
        a.sort_by(|x, y| x.version.cmp(&y.version));
        assert_eq!(again.methods, a);
    }
});
