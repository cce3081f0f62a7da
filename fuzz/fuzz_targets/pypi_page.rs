//! PEP 503 HTML and PEP 691 JSON project pages. The body and its properties: src/fuzzing/ (or the hook it names).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| a2c::registry::pypi::fuzz_page(data));
