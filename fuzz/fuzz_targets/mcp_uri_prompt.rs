//! a2c mcp resource URIs and prompt front matter. The body and its properties: src/fuzzing/ (or the hook it names).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| a2c::mcp::fuzz_uri_and_prompt(data));
