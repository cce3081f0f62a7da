//! A Conan remote's answers: searches, revisions, manifests against packages. The body and its properties: src/fuzzing/ (or the hook it names).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| a2c::registry::conan::fuzz_remote(data));
