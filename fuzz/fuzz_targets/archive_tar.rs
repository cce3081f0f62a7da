//! Arbitrary bytes as the tar stream inside a tar.gz bundle (stored gzip blocks). The body and its properties: src/fuzzing/ (or the hook it names).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| a2c::fuzzing::tar::raw(data));
