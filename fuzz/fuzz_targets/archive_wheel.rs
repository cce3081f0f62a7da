//! Extraction of arbitrary bytes as a wheel (zip, RECORD, package directory). The body and its properties: src/fuzzing/ (or the hook it names).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| { a2c::fuzzing::archive(data, a2c::archive::Format::Wheel); });
