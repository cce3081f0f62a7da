//! The codemap's layers, checked on the source: every `crate::…` reference between top-level
//! modules must point down the layer order below. None runs up; one that must, for a while,
//! goes into `KNOWN_UP` with what would remove it — a list that may only shrink.

use std::collections::BTreeSet;

/// Top to bottom (docs/architecture.md): a module may use the ones after it.
const LAYERS: &[&str] = &[
    "cli",
    "mcp",
    "ops",
    "doctor",
    "relocate",
    "workspace",
    "agents",
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

/// Arrows that still run up, each with what would remove it.
const KNOWN_UP: &[(&str, &str)] = &[];

/// Every `crate::MODULE` a top-level module's non-test code names.
fn arrows() -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    // Unit tests may use anything: `sources` gives the non-test code.
    for (rel, code, _) in sources() {
        let from = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        if !LAYERS.contains(&from.as_str()) {
            continue;
        }
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

/// The codemap states the layers this file enforces, in the same order.
#[test]
fn the_codemap_states_these_layers() {
    let doc = include_str!("../../docs/architecture.md");
    let stated: String = doc
        .split("layers ")
        .nth(1)
        .unwrap()
        .split(";")
        .next()
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let expected = LAYERS.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(" → ");
    assert_eq!(stated, expected, "docs/architecture.md's layer list");
}

/// Inside a top-level module, the files (`mod.rs` aside, which declares and re-exports them)
/// use each other without a cycle: `store/install` ↔ `source`, `adoption` ↔ `state_root` and
/// the registry handle ↔ its transports once were.
#[test]
fn no_cycle_between_the_files_of_a_module() {
    use std::collections::{BTreeMap, BTreeSet};
    let src = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let mut cycles = Vec::new();
    for top in LAYERS {
        let dir = src.join(top);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".rs").filter(|s| *s != "mod") {
                let text = fs_err::read_to_string(e.path()).unwrap();
                files.insert(
                    stem.to_string(),
                    text.split("#[cfg(test)]\nmod ").next().unwrap().to_string(),
                );
            } else if e.path().is_dir() {
                files.insert(name, String::new()); // a subdirectory module: not scanned here
            }
        }
        let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (from, text) in &files {
            for prefix in ["super::".to_string(), format!("crate::{top}::")] {
                for (i, _) in text.match_indices(&prefix) {
                    let to: String = text[i + prefix.len()..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if let Some((name, _)) = files.get_key_value(&to)
                        && name != from
                    {
                        edges.entry(from.as_str()).or_default().insert(name.as_str());
                    }
                }
            }
        }
        // Depth-first search for a back edge.
        fn visit<'a>(
            n: &'a str,
            edges: &BTreeMap<&'a str, BTreeSet<&'a str>>,
            stack: &mut Vec<&'a str>,
            done: &mut BTreeSet<&'a str>,
            out: &mut Vec<String>,
        ) {
            if done.contains(n) {
                return;
            }
            if let Some(i) = stack.iter().position(|s| *s == n) {
                out.push(format!("{} -> {n}", stack[i..].join(" -> ")));
                return;
            }
            stack.push(n);
            for m in edges.get(n).into_iter().flatten() {
                visit(m, edges, stack, done, out);
            }
            stack.pop();
            done.insert(n);
        }
        let mut done = BTreeSet::new();
        let mut found = Vec::new();
        for n in files.keys() {
            visit(n, &edges, &mut Vec::new(), &mut done, &mut found);
        }
        cycles.extend(found.into_iter().map(|c| format!("{top}: {c}")));
    }
    assert!(cycles.is_empty(), "cycles between the files of a module: {cycles:?}");
}

/// The files that may read the environment (call a function of `env.rs`): the session's
/// constructors, which `ops::Session::from_env` calls once per run; the CLI, for its own
/// presentation (colour, progress) and argument parsing; the test-only switches.
const READS_ENVIRONMENT: &[&str] = &[
    "ops/session.rs",
    "net/settings.rs",
    "net/proxy.rs",
    "store/options.rs",
    "archive/policy.rs",
    "cli/",
    "testhook.rs",
    "util/platform/",
];

/// No process global, and the environment read in one place — every
/// `crate::env::f(…)` call sits in a file of [`READS_ENVIRONMENT`], and every `from_env()`
/// constructor is called by the session (or by the network's, for its proxies) and nowhere
/// else, so that the operations below take what they are given.
#[test]
fn the_environment_is_read_by_the_session_alone() {
    let mut strays = Vec::new();
    for (rel, code, _) in sources() {
        if rel == "env.rs" {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            let reads = line.match_indices("crate::env::").any(|(i, _)| {
                let rest = &line[i + 12..];
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) && rest[name.len()..].starts_with('(')
            });
            if reads && !READS_ENVIRONMENT.iter().any(|allowed| rel.starts_with(allowed)) {
                strays.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
            // Read only through env.rs, which declares each variable (std's own reads, too).
            if (line.contains("std::env::var(") || line.contains("std::env::var_os("))
                && !line.trim_start().starts_with("//")
            {
                strays.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
            let constructs = line.contains("from_env()") && !line.contains("fn from_env");
            if constructs && rel != "ops/session.rs" && !(rel == "net/settings.rs" && line.contains("ProxyEnv::")) {
                strays.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
            for global in ["static ", "OnceLock<", "thread_local!"] {
                if line.contains(global)
                    && !line.trim_start().starts_with("//")
                    && !line.contains("'static")
                    && !GLOBALS_ALLOWED
                        .iter()
                        .any(|(file, why)| rel == *file && !why.is_empty())
                {
                    strays.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        strays.is_empty(),
        "read the environment in the session (ops/session.rs), not here:\n{}",
        strays.join("\n")
    );
}

/// The process-wide values that remain, each with why it is not part of a session: facts of the
/// process or the machine, not settings of a run.
const GLOBALS_ALLOWED: &[(&str, &str)] = &[
    (
        "util/fs.rs",
        "the process umask, read once (reading it means setting it)",
    ),
    (
        "util/platform/unix/mod.rs",
        "whether the kernel has openat2, probed once",
    ),
    (
        "store/flock.rs",
        "the lock files this process holds, which Ctrl-C's exit (no destructors) must clear",
    ),
    (
        "cli/progress.rs",
        "the one terminal's bars, which the panic hook and eprint_line reach",
    ),
    (
        "workspace/discovery.rs",
        "per-value OnceLock fields (lazily computed members), not globals",
    ),
];

/// Every `.rs` file under `src/`, with its path relative to `src/` and its whole text, sorted.
fn source_texts() -> Vec<(String, String)> {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(src) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = entry.path().strip_prefix(src).unwrap().to_string_lossy().into_owned();
        out.push((rel, fs_err::read_to_string(entry.path()).unwrap()));
    }
    out.sort();
    out
}

/// Every `.rs` file under `src/`, with its path relative to `src/`, its non-test code and its
/// length in lines.
fn sources() -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    for (rel, text) in source_texts() {
        let lines = text.lines().count();
        let code = text.split("#[cfg(test)]\nmod ").next().unwrap().to_string();
        out.push((rel, code, lines));
    }
    out
}

/// The registry kinds: the folders under `src/registry/` that register one (`pub const KIND:
/// Kind`), with the names of the types they declare.
fn registry_kinds(all: &[(String, String, usize)]) -> Vec<(String, Vec<String>)> {
    let mut kinds: Vec<(String, Vec<String>)> = Vec::new();
    for (rel, code, _) in all {
        let Some(kind) = rel
            .strip_prefix("registry/")
            .and_then(|r| r.split_once('/'))
            .map(|(k, _)| k)
        else {
            continue;
        };
        if code.contains("pub const KIND: Kind") && !kinds.iter().any(|(k, _)| k == kind) {
            kinds.push((kind.to_string(), Vec::new()));
        }
    }
    for (kind, types) in &mut kinds {
        for (rel, code, _) in all {
            if rel.starts_with(&format!("registry/{kind}/")) {
                for line in code.lines() {
                    let declared = line
                        .trim_start()
                        .strip_prefix("pub struct ")
                        .or_else(|| line.trim_start().strip_prefix("pub enum "));
                    if let Some(name) = declared.map(|d| {
                        d.split(|c: char| !c.is_alphanumeric() && c != '_')
                            .next()
                            .unwrap_or_default()
                    }) {
                        types.push(name.to_string());
                    }
                }
            }
        }
    }
    kinds
}

/// Whether `line` names the module `kind` as a path (`kind::`, `super::kind::`, `registry::kind`),
/// not as the tail of another path (`reqwest::http::`) or of an identifier (`temp_dir::`).
fn names_module(line: &str, kind: &str) -> bool {
    line.match_indices(kind).any(|(i, _)| {
        let before = &line[..i];
        let after = &line[i + kind.len()..];
        let starts = before.is_empty()
            || before.ends_with("super::")
            || before.ends_with("registry::")
            || (!before
                .ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':' || c == '.' || c == '"' || c == '/'));
        starts && (after.starts_with("::") || after.starts_with(';') && before.trim_end().ends_with("mod"))
    })
}

/// A registry kind is its folder and one registration line. Outside its folder, only
/// `registry/mod.rs` names it — `pub mod KIND;` and its entry in `KINDS` — and no file names a
/// type it declares outside `registry/` (within it, a kind reaches another only by its module
/// path, which the first rule sees): the rest of the program asks the location or its handle (`local_dir`,
/// `indexes_digests`, `pack_plan`, `Landed::Pushed`'s words). So adding a kind touches its
/// folder and that line (docs/architecture.md, "Adding a registry kind").
#[test]
fn a_registry_kind_is_its_folder_and_one_registration_line() {
    let all = sources();
    let kinds = registry_kinds(&all);
    let names: Vec<&str> = kinds.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        ["az", "conan", "dir", "gs", "http", "oci", "pypi", "s3"],
        "the kinds found"
    );
    let mut strays = Vec::new();
    for (rel, code, _) in &all {
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (kind, types) in &kinds {
                if rel.starts_with(&format!("registry/{kind}/")) {
                    continue;
                }
                let registers = rel == "registry/mod.rs"
                    && (line.trim() == format!("pub mod {kind};") || line.starts_with("pub const KINDS:"));
                let named_type = types.iter().filter(|_| !rel.starts_with("registry/")).find(|t| {
                    line.match_indices(t.as_str()).any(|(i, _)| {
                        !line[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                            && !line[i + t.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                    })
                });
                if (names_module(line, kind) && !registers) || named_type.is_some() {
                    strays.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    let kinds_line = all
        .iter()
        .find(|(rel, _, _)| rel == "registry/mod.rs")
        .and_then(|(_, code, _)| {
            code.lines()
                .find(|l| l.starts_with("pub const KINDS:"))
                .map(str::to_string)
        })
        .expect("registry/mod.rs lists KINDS on one line");
    for kind in &names {
        if !kinds_line.contains(&format!("&{kind}::KIND")) {
            strays.push(format!("src/registry/mod.rs: KINDS does not list {kind}::KIND"));
        }
    }
    assert!(
        strays.is_empty(),
        "a registry kind named outside its folder and its registration line:\n{}",
        strays.join("\n")
    );
}

/// `net/` names no registry kind: a kind answers a challenge through the
/// `TokenExchange` hook and words the HTTP errors it knows itself (`Location::hint`); the `oci://`
/// address is `registry::oci::OciLocation`. `net` answers the standard challenges only — Basic with the
/// credentials the user bound, a `WWW-Authenticate: Bearer` token service, docker's
/// credential store and helpers — whatever the kind behind the URL. And neither `net/` nor `util/`
/// names a cloud: an object store's variables, endpoints, metadata services and signed URLs'
/// parameters are its kind's (`Kind::environment`, `objstore::Bucket`).
#[test]
fn net_names_no_registry_kind() {
    let mut strays = Vec::new();
    // The whole text, tests too: a grep of net/ and util/ finds no cloud.
    for (rel, text) in source_texts() {
        let net = rel.starts_with("net/");
        if !net && !rel.starts_with("util/") {
            continue;
        }
        let code_lines = text.split("#[cfg(test)]\nmod ").next().unwrap().lines().count();
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_ascii_lowercase();
            let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).collect();
            let kind = ["conan", "pypi", "/simple/", "wheel", "ociref", "oci_ref", "/v2/"]
                .iter()
                .any(|w| lower.contains(w))
                || words.contains(&"oci");
            // A cloud, by name, scheme or the metadata service its credentials come from (a
            // file's metadata is no cloud's): each is its registry kind's, in its folder.
            let cloud = [
                "amazon",
                "azure",
                "google",
                "imds",
                "169.254.",
                "metadata service",
                "metadata server",
            ]
            .iter()
            .any(|w| lower.contains(w))
                || ["aws", "s3", "gs", "az", "gcp", "gce"]
                    .iter()
                    .any(|w| words.contains(w));
            if (net && kind && n < code_lines) || cloud {
                strays.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        strays.is_empty(),
        "a registry kind or a cloud named in net/ or util/ (each is its kind's, in src/registry/KIND/):\n{}",
        strays.join("\n")
    );
}

/// No source file over 700 lines. The files still over it are listed with their
/// size when the rule came in: a list that may only shrink (a listed file may not grow, and
/// one that fits comes off the list).
const OVER_700: &[(&str, usize)] = &[];

#[test]
fn no_source_file_is_over_700_lines() {
    let mut problems = Vec::new();
    let all = sources();
    for (listed, _) in OVER_700 {
        if !all.iter().any(|(rel, _, _)| rel == listed) {
            problems.push(format!("src/{listed} is listed in OVER_700 but is gone: take it off"));
        }
    }
    for (rel, _, lines) in all {
        match OVER_700.iter().find(|(f, _)| *f == rel) {
            None if lines > 700 => problems.push(format!("src/{rel} has {lines} lines (at most 700)")),
            Some((_, was)) if lines > *was => problems.push(format!(
                "src/{rel} grew to {lines} lines (listed at {was}: it may only shrink)"
            )),
            Some(_) if lines <= 700 => problems.push(format!("src/{rel} fits in 700 lines now: take it off OVER_700")),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The files that may name an operating system's own interfaces: the platform seam and the
/// containment built on it.
/// The seam, and `env.rs`: where a user's home, cache and configuration are is the
/// environment's own convention on each system, and env is the bottom layer (below util).
const PLATFORM_SEAM: &[&str] = &["util/platform/", "util/contain/", "env.rs"];

/// One platform seam: everything that differs between operating systems (opening beneath a
/// directory, file identity, modes, links, clones, special files, the terminal) is behind
/// `util::platform` (and `util::contain`, which is built on it): no other file of `src/`,
/// tests included, imports `std::os::*`, `rustix`, `windows-sys` or `libc`, or asks which
/// operating system it is built for.
#[test]
fn operating_system_interfaces_are_named_behind_the_platform_seam_alone() {
    let mut strays = Vec::new();
    for (rel, text) in source_texts() {
        if PLATFORM_SEAM.iter().any(|seam| rel.starts_with(seam)) {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            let names = [
                "std::os::",
                "rustix::",
                "windows_sys::",
                "libc::",
                "target_os",
                "cfg(unix",
                "cfg(windows",
                "cfg(not(unix",
            ]
            .iter()
            .any(|word| line.contains(word));
            if names && !line.trim_start().starts_with("//") {
                strays.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        strays.is_empty(),
        "name the platform seam (util::platform) instead of the operating system here:\n{}",
        strays.join("\n")
    );
}
