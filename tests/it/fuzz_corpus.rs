//! Issue 43, item 3: every fuzz target's saved corpus (fuzz/corpus/TARGET) replayed through the
//! target's body on the stable toolchain, with its properties — so a target whose body stops
//! compiling, or a regression on an input a fuzzer once found, fails `cargo test`.

use std::path::Path;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus");

/// A target's body: the bytes of one input.
type Body = fn(&[u8]);

/// Each target of fuzz/Cargo.toml and the body it runs.
const TARGETS: &[(&str, Body)] = &[
    ("archive_tar_gz", |d| {
        a2c::fuzzing::archive(d, a2c::archive::Format::TarGz)
    }),
    ("archive_zip", |d| a2c::fuzzing::archive(d, a2c::archive::Format::Zip)),
    ("adoption_yaml", a2c::fuzzing::adoption_yaml),
    ("workspace_marker", a2c::fuzzing::workspace_marker),
    ("index_json", a2c::fuzzing::index_json),
    ("lock_toml", a2c::fuzzing::lock_toml),
    ("yaml_flat", a2c::fuzzing::yaml),
    ("pypi_page", a2c::registry::pypi::fuzz_page),
    ("mcp_uri_prompt", a2c::mcp::fuzz_uri_and_prompt),
];

#[test]
fn every_fuzz_target_replays_its_corpus() {
    let manifest = fs_err::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/Cargo.toml")).unwrap();
    let declared: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .map(|n| n.trim_end_matches('"'))
        .filter(|n| *n != "a2c-fuzz")
        .collect();
    let replayed: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        declared, replayed,
        "fuzz/Cargo.toml and this list name the same targets"
    );
    for (name, body) in TARGETS {
        let dir = Path::new(CORPUS).join(name);
        let mut inputs: Vec<_> = fs_err::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "{name} has no corpus");
        for input in inputs {
            let data = fs_err::read(&input).unwrap();
            let outcome = std::panic::catch_unwind(|| body(&data));
            assert!(outcome.is_ok(), "{name}: {} breaks a property", input.display());
        }
    }
}
