//! Registry indexes: never panics; whatever parses writes back to an equal index.
#![no_main]

use a2c::registry::Index;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(index) = Index::parse(text, "index.json") {
        let again = Index::parse(&index.to_json(), "index.json").unwrap();
        assert_eq!(again.versions.len(), index.versions.len());
    }
});
