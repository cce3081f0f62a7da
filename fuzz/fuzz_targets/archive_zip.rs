//! Extraction of arbitrary bytes as a zip bundle. The body and its properties: src/fuzzing/ (or the hook it names).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| { a2c::fuzzing::archive(data, a2c::archive::Format::Zip); });
