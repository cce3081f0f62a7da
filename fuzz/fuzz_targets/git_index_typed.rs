//! A git index built from typed entries (formats 2-4, SHA-1 and SHA-256). The body and its properties: src/fuzzing/ (or the hook it names).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| a2c::fuzzing::git_index::typed(data));
