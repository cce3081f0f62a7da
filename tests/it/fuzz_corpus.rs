//! Every fuzz target's saved corpus (fuzz/corpus/TARGET) replayed through the
//! target's body on the stable toolchain, with its properties — so a target whose body stops
//! compiling, or a regression on an input a fuzzer once found, fails `cargo test`.

use crate::support::succeeds;
use std::path::Path;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus");

/// A target's body: the bytes of one input.
type Body = fn(&[u8]);

/// Each target of fuzz/Cargo.toml and the body it runs.
const TARGETS: &[(&str, Body)] = &[
    ("archive_tar_gz", |d| {
        a2c::fuzzing::archive(d, a2c::archive::Format::TarGz);
    }),
    ("archive_tar", |d| a2c::fuzzing::tar::raw(d)),
    ("archive_tar_typed", |d| a2c::fuzzing::tar::typed(d)),
    ("archive_zip", |d| {
        a2c::fuzzing::archive(d, a2c::archive::Format::Zip);
    }),
    ("archive_wheel", |d| {
        a2c::fuzzing::archive(d, a2c::archive::Format::Wheel);
    }),
    ("wheel_record", |d| a2c::fuzzing::record::raw(d)),
    ("wheel_record_typed", |d| a2c::fuzzing::record::typed(d)),
    ("git_index", |d| a2c::fuzzing::git_index::raw(d)),
    ("git_index_typed", |d| a2c::fuzzing::git_index::typed(d)),
    ("workspace_snapshot", |d| {
        a2c::workspace::snapshot::Snapshot::fuzz_round_trip(d)
    }),
    ("adoption_yaml", |d| a2c::fuzzing::adoption_yaml(d)),
    ("workspace_marker", |d| a2c::fuzzing::workspace_marker(d)),
    ("index_json", |d| a2c::fuzzing::index_json(d)),
    ("lock_toml", |d| a2c::fuzzing::lock_toml(d)),
    ("vendor_manifest", |d| a2c::fuzzing::vendor_manifest(d)),
    ("yaml_flat", |d| a2c::fuzzing::yaml(d)),
    ("registry_location", |d| a2c::fuzzing::registry_location(d)),
    ("minisign", |d| a2c::fuzzing::minisign(d)),
    ("pypi_page", |d| a2c::registry::pypi::fuzz_page(d)),
    ("conan_remote", |d| a2c::registry::conan::fuzz_remote(d)),
    ("www_authenticate", |d| a2c::net::fuzz::challenge(d)),
    ("no_proxy", |d| a2c::net::fuzz::no_proxy(d)),
    ("netrc", |d| a2c::net::fuzz::netrc(d)),
    ("mcp_uri_prompt", |d| a2c::mcp::fuzz_uri_and_prompt(d)),
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

/// The reference reading of a PEP 503 page: Python's `html.parser`, as pip's link collector
/// uses it (the first `<base href>`, each `<a>`'s first `href`, joined with `urljoin`, the file
/// name the unquoted last path segment, the digest from `#sha256=`). One JSON list per file.
const PEP503_REFERENCE: &str = r#"
import json, sys
from html.parser import HTMLParser
from urllib.parse import urljoin, urldefrag, urlsplit, unquote

class Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.base, self.hrefs = None, []
    def handle_starttag(self, tag, attrs):
        href = next((v for k, v in attrs if k == "href"), None)
        if tag == "base" and self.base is None and not self.hrefs and href is not None:
            self.base = href
        elif tag == "a" and href:
            self.hrefs.append(href)

out = []
for path in sys.argv[2:]:
    parser = Links()
    parser.feed(open(path, "rb").read().decode("utf-8", "replace"))
    parser.close()
    base = urljoin(sys.argv[1], parser.base) if parser.base else sys.argv[1]
    files = []
    for href in parser.hrefs:
        url, fragment = urldefrag(urljoin(base, href))
        name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
        digest = fragment[len("sha256="):] if fragment.startswith("sha256=") else None
        files.append([name, url, digest])
    out.append(files)
print(json.dumps(out))
"#;

/// The PEP 503 reader agrees with the reference reading on every page of the corpus made by a
/// real index (pypiserver, devpi) or written by hand for the cases pip's reader decides
/// (`seed-*`): comments, quotes holding `>`, entities, `<base>`, upper-case tags.
#[test]
fn the_pep_503_reader_agrees_with_pythons_html_parser() {
    if std::process::Command::new("python3").arg("--version").output().is_err() {
        crate::support::require_program("python3");
        return;
    }
    let dir = Path::new(CORPUS).join("pypi_page");
    let mut pages: Vec<_> = fs_err::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("seed-") && !name.contains("json")
        })
        .collect();
    pages.sort();
    assert!(pages.len() >= 4, "{pages:?}");
    let page = "https://pkgs.example.org/simple/esys-a2c/";
    let out = succeeds(
        std::process::Command::new("python3")
            .args(["-c", PEP503_REFERENCE, page])
            .args(&pages),
        "python3",
    );
    let reference: Vec<Vec<(String, String, Option<String>)>> = serde_json::from_slice(&out.stdout).unwrap();
    for (path, expected) in pages.iter().zip(reference) {
        let read = a2c::registry::pypi::fuzz_html_files(&fs_err::read(path).unwrap());
        assert!(!read.is_empty(), "{} lists no file", path.display());
        assert_eq!(read, expected, "{}: a2c's reading, then Python's", path.display());
    }
}
