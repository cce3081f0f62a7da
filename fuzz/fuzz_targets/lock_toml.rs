//! Lockfiles: parse, write, read again. The body and its properties: src/fuzzing.rs (or the hook it names).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| a2c::fuzzing::lock_toml(data));
