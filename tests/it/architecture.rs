//! The codemap's layers, checked on the source: every `crate::…` reference between top-level
//! modules must point down the layer order below. None runs up; one that must, for a while,
//! goes into `KNOWN_UP` with what would remove it — a list that may only shrink.

use std::collections::BTreeSet;

/// Top to bottom (docs/architecture.md): a module may use the ones after it.
const LAYERS: &[&str] = &[
    "cli",
    "ops",
    "doctor",
    "migrate",
    "workspace",
    "store",
    "registry",
    "lock",
    "net",
    "archive",
    "method",
    "util",
    "testhook",
    "env",
];

/// Arrows that still run up (issue 26, item 5), each with what would remove it.
const KNOWN_UP: &[(&str, &str)] = &[];

/// Every `crate::MODULE` a top-level module's non-test code names.
fn arrows() -> BTreeSet<(String, String)> {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut out = BTreeSet::new();
    for entry in walkdir::WalkDir::new(src) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = entry.path().strip_prefix(src).unwrap().to_string_lossy().into_owned();
        let from = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        if !LAYERS.contains(&from.as_str()) {
            continue;
        }
        let text = fs_err::read_to_string(entry.path()).unwrap();
        // Unit tests may use anything.
        let code = text.split("#[cfg(test)]\nmod ").next().unwrap();
        for (i, _) in code.match_indices("crate::") {
            let to: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if to != from && LAYERS.contains(&to.as_str()) {
                out.insert((from.clone(), to));
            }
        }
    }
    out
}

#[test]
fn dependencies_point_down_the_layers() {
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m).unwrap();
    let up: BTreeSet<(String, String)> = arrows().into_iter().filter(|(a, b)| rank(a) > rank(b)).collect();
    let known: BTreeSet<(String, String)> = KNOWN_UP.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    let new: Vec<_> = up.difference(&known).collect();
    assert!(
        new.is_empty(),
        "arrows running up the layers (docs/architecture.md): {new:?}"
    );
    let gone: Vec<_> = known.difference(&up).collect();
    assert!(gone.is_empty(), "no longer running up: remove from KNOWN_UP: {gone:?}");
}
