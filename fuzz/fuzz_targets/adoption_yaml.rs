//! Adoption records: never panics; whatever parses writes back to the same record.
#![no_main]

use a2c::workspace::AdoptionRecord;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(record) = AdoptionRecord::parse(text, std::path::Path::new("adoption.yaml")) {
        let again = AdoptionRecord::parse(&record.to_yaml(), std::path::Path::new("adoption.yaml")).unwrap();
        assert_eq!(again.tool_version, record.tool_version);
        assert_eq!(again.method_ref, record.method_ref);
        assert_eq!(again.delivery, record.delivery);
    }
});
