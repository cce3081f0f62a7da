//! Extraction of arbitrary bytes as a tar.gz bundle (see common/archive.rs).
#![no_main]

#[path = "common/archive.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::check(data, a2c::archive::Format::TarGz));
