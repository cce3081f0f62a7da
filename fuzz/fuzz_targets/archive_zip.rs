//! Extraction of arbitrary bytes as a zip bundle (see common/archive.rs).
#![no_main]

#[path = "common/archive.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::check(data, a2c::archive::Format::Zip));
