//! Wheels (PEP 427) as bundles: a Python package index's unit of distribution.
//!
//! A method wheel holds its tree under one package directory — the directory that holds
//! `a2c-method.toml`, exactly one in the wheel — and its `{dist}-{version}.dist-info/` beside
//! it (`WHEEL`, `METADATA`, `RECORD`). a2c installs that directory's contents as the tree: the
//! `.dist-info` is read and checked — every file of the wheel must be in `RECORD` with its
//! sha256 (urlsafe base64, no padding) and size, and nothing `RECORD` names may be missing —
//! but not installed, and nothing outside the method's directory is installed. `pip install`
//! puts the same directory into site-packages, where Python tools find it with
//! `importlib.resources.files("<package>")`.
//!
//! `a2c pack --format wheel` writes such a wheel, `{dist}-{version}-py3-none-any.whl`, with
//! the package directory named after the distribution (`esys-a2c` → `esys_a2c/`). A wheel a
//! standard backend (hatchling, setuptools) built from a `pyproject.toml` that ships the tree
//! as package data installs the same way.

use std::collections::BTreeMap;
use std::io::Read;

use base64::Engine;
pub(super) use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;

use super::policy::Sink;
use super::{ArchiveError, Format};
use crate::util::digest::{HashingReader, Sha256};

/// The distribution a2c's method is published as on a package index, unless a registry names
/// another (PEP 503 normalized).
pub const DEFAULT_PROJECT: &str = "esys-a2c";

const MANIFEST: &str = "a2c-method.toml";

/// PEP 503's normalized name: lower case, each run of `-`, `_` and `.` one `-`.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut run = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !run {
                out.push('-');
            }
            run = true;
        } else {
            out.extend(c.to_lowercase());
            run = false;
        }
    }
    out
}

/// A name as a wheel's file name and its package directory spell it (PEP 427: `_` for the
/// separators).
pub fn escaped(name: &str) -> String {
    normalize(name).replace('-', "_")
}

/// The file name of the wheel of `project` at `version`.
pub fn file_name(project: &str, version: &str) -> String {
    format!("{}-{version}-py3-none-any.whl", escaped(project))
}

/// The distribution and version a wheel's file name states (PEP 427:
/// `{dist}-{version}(-{build})?-{python}-{abi}-{platform}.whl`), the distribution normalized.
pub fn parse_file_name(name: &str) -> Option<(String, String)> {
    let stem = name.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if !(5..=6).contains(&parts.len()) || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    Some((normalize(parts[0]), parts[1].to_string()))
}

fn corrupt(reason: impl std::fmt::Display) -> ArchiveError {
    ArchiveError::Corrupt {
        format: Format::Wheel,
        reason: reason.to_string(),
    }
}

fn refuse(entry: &str, reason: impl Into<String>) -> ArchiveError {
    ArchiveError::Entry {
        entry: crate::util::text::quoted_short(entry),
        reason: reason.into(),
    }
}

/// One `RECORD` line: its sha256 and size (both absent for `RECORD` itself).
type Record = BTreeMap<String, Option<(Sha256, u64)>>;

/// The longest `RECORD` line a2c reads (a path, a hash, a size): a longer one is refused.
const MAX_RECORD_LINE: usize = 16 * 1024;

/// Reads a `RECORD` (CSV: path, `sha256=<urlsafe base64>`, size; a field with a comma or a
/// quote is quoted) as it inflates, one line at a time: every line must name a file of the
/// wheel (`held`), once, so the map never grows past the wheel's own entries, however long the
/// `RECORD` (a 0.5 MB wheel whose `RECORD` inflated to 500 MiB took 535 MB before). Its bytes
/// are counted against the unpacked limit by the caller's `reader`.
fn read_record(
    reader: &mut dyn std::io::BufRead,
    held: &std::collections::BTreeSet<&str>,
) -> Result<Record, ArchiveError> {
    use std::io::BufRead;
    let mut record = Record::new();
    let mut line = Vec::new();
    for n in 1.. {
        line.clear();
        let read = (&mut *reader)
            .take(MAX_RECORD_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| corrupt(format!("RECORD: {e}")))?;
        if read == 0 {
            break;
        }
        let bad = |why: &str| corrupt(format!("RECORD line {n}: {why}"));
        if line.len() > MAX_RECORD_LINE {
            return Err(bad(&format!("longer than {MAX_RECORD_LINE} bytes")));
        }
        let text = std::str::from_utf8(&line).map_err(|_| bad("not UTF-8"))?;
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let fields = csv_fields(text).ok_or_else(|| bad("unbalanced quotes"))?;
        let [path, hash, size] = fields.as_slice() else {
            return Err(bad("expected three fields: path, hash, size"));
        };
        if !held.contains(path.as_str()) {
            return Err(refuse(
                path,
                "the wheel's RECORD lists it, but the wheel does not hold it",
            ));
        }
        let entry = match (hash.as_str(), size.as_str()) {
            ("", "") => None,
            (hash, size) => {
                let digest = hash
                    .strip_prefix("sha256=")
                    .ok_or_else(|| bad("the hash is not `sha256=…`"))?;
                let bytes = B64
                    .decode(digest.trim_end_matches('='))
                    .map_err(|_| bad("the hash is not urlsafe base64"))?;
                let bytes: [u8; 32] = bytes.try_into().map_err(|_| bad("the hash is not 32 bytes"))?;
                let size: u64 = size.parse().map_err(|_| bad("the size is not a number"))?;
                Some((Sha256(bytes), size))
            }
        };
        if record.insert(path.clone(), entry).is_some() {
            return Err(bad(&format!(
                "`{}` is listed twice",
                crate::util::text::quoted_short(path)
            )));
        }
    }
    Ok(record)
}

/// A `RECORD` as [`fuzz_read_record`] gives it: each path, its sha256 and size.
#[cfg(feature = "fuzzing")]
pub type FuzzRecord = BTreeMap<String, Option<([u8; 32], u64)>>;

/// [`read_record`] of `text`, a wheel holding the files `held` (feature `fuzzing`): each
/// listed path with its digest and size, or the error's message.
#[cfg(feature = "fuzzing")]
pub fn fuzz_read_record(text: &[u8], held: &[&str]) -> Result<FuzzRecord, String> {
    let held = held.iter().copied().collect();
    read_record(&mut &text[..], &held)
        .map(|r| r.into_iter().map(|(p, e)| (p, e.map(|(d, s)| (d.0, s)))).collect())
        .map_err(|e| e.to_string())
}

fn csv_fields(line: &str) -> Option<Vec<String>> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut()?.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => fields.last_mut()?.push(c),
        }
    }
    (!quoted).then_some(fields)
}

pub(super) fn csv_field(s: &str) -> String {
    match s.contains([',', '"', '\n', '\r']) {
        true => format!("\"{}\"", s.replace('"', "\"\"")),
        false => s.to_string(),
    }
}

/// Extracts the method tree of a wheel into `sink`: the entries below the directory that holds
/// `a2c-method.toml`, once every file of the wheel was checked against its `RECORD`.
pub fn extract(source: &mut dyn Read, sink: &mut Sink<'_>) -> Result<(), ArchiveError> {
    let bytes = super::zip::read_capped(source)?;
    let mut archive = super::zip::open(&bytes)?;
    let names: Vec<String> = archive
        .file_names()
        .map(|n| n.map(|n| n.into_owned()))
        .collect::<Result<_, _>>()
        .map_err(corrupt)?;
    let dist_infos: std::collections::BTreeSet<&str> = names
        .iter()
        .filter_map(|n| n.split_once('/').map(|(top, _)| top))
        .filter(|top| top.ends_with(".dist-info"))
        .collect();
    let dist_info = match dist_infos.into_iter().collect::<Vec<_>>().as_slice() {
        [one] => one.to_string(),
        [] => return Err(corrupt("no `.dist-info` directory: not a wheel")),
        many => {
            return Err(corrupt(format!(
                "{} `.dist-info` directories: {}",
                many.len(),
                many.join(", ")
            )));
        }
    };
    let record_name = format!("{dist_info}/RECORD");
    let manifests: Vec<&String> = names
        .iter()
        .filter(|n| n.rsplit('/').next() == Some(MANIFEST) && !n.starts_with(&format!("{dist_info}/")))
        .collect();
    let prefix = match manifests.as_slice() {
        [one] => one[..one.len() - MANIFEST.len()].to_string(),
        [] => return Err(corrupt(format!("no `{MANIFEST}` in the wheel: it holds no a2c method"))),
        many => {
            let shown: Vec<&str> = many.iter().map(|s| s.as_str()).collect();
            return Err(corrupt(format!(
                "{} `{MANIFEST}` files ({}): a method wheel holds exactly one",
                many.len(),
                shown.join(", ")
            )));
        }
    };
    if prefix.is_empty() {
        return Err(corrupt(format!(
            "`{MANIFEST}` sits at the wheel's root: a method wheel keeps its tree in one package directory"
        )));
    }
    // The package directory as the archive policy names it, and the tree below it: the sink
    // is given its own name as the tree's single top directory, which it strips.
    let package = super::policy::entry_segments(prefix.trim_end_matches('/').as_bytes())?;
    let below = |segments: &[String]| -> Option<Vec<String>> {
        let rest = segments.strip_prefix(package.as_slice())?;
        let top = package.last()?.clone();
        Some(std::iter::once(top).chain(rest.iter().cloned()).collect())
    };
    let mut seen: BTreeMap<String, (Sha256, u64)> = BTreeMap::new();
    let held: std::collections::BTreeSet<&str> = names.iter().map(String::as_str).collect();
    let mut record = None;
    for i in 0..archive.len() {
        let info = super::zip::entry(&bytes, &mut archive, i)?;
        sink.count_entry()?;
        if info.is_dir {
            if let Some(segments) = below(&info.segments).filter(|s| s.len() > 1) {
                sink.directory(&segments)?;
            }
            continue;
        }
        let mut file = archive.by_index(i).map_err(corrupt)?;
        if info.name == record_name {
            // Inflated within what the unpacked limit still allows, and counted against it.
            let allowed = sink.remaining() + 1;
            let mut limited = std::io::BufReader::new((&mut file).take(allowed));
            let read = read_record(&mut limited, &held);
            std::io::copy(&mut limited, &mut std::io::sink())?;
            sink.count_bytes(allowed - limited.into_inner().limit())?;
            record = Some(read?);
            continue;
        }
        let mut hashing = HashingReader::new(&mut file);
        match below(&info.segments) {
            Some(segments) => sink.file(&segments, info.executable, info.declared, &mut hashing)?,
            None => sink.pass_over(&mut hashing)?,
        }
        seen.insert(info.name.clone(), hashing.finish()?);
    }
    let record = record.ok_or_else(|| corrupt(format!("no `{record_name}`")))?;
    for (name, (sha256, size)) in &seen {
        // Signatures of the RECORD are not in it (PEP 376/427).
        if name == &format!("{dist_info}/RECORD.jws") || name == &format!("{dist_info}/RECORD.p7s") {
            continue;
        }
        match record.get(name) {
            Some(Some((want, want_size))) if want == sha256 && want_size == size => {}
            Some(Some(_)) => return Err(refuse(name, "its sha256 or size differs from the wheel's RECORD")),
            Some(None) | None => return Err(refuse(name, "the wheel's RECORD does not list it with a hash")),
        }
    }
    if let Some(missing) = record.keys().find(|n| **n != record_name && !seen.contains_key(*n)) {
        return Err(refuse(
            missing,
            "the wheel's RECORD lists it, but the wheel does not hold it",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_pep_503_and_427() {
        assert_eq!(normalize("Esys_A2C..rules"), "esys-a2c-rules");
        assert_eq!(escaped("esys-a2c"), "esys_a2c");
        assert_eq!(file_name("esys-a2c", "1.2.0"), "esys_a2c-1.2.0-py3-none-any.whl");
        assert_eq!(
            parse_file_name("Esys_A2C-1.2.0-py2.py3-none-any.whl"),
            Some(("esys-a2c".into(), "1.2.0".into()))
        );
        assert_eq!(
            parse_file_name("esys_a2c-1.2.0-1-py3-none-any.whl"),
            Some(("esys-a2c".into(), "1.2.0".into()))
        );
        assert_eq!(parse_file_name("esys_a2c-1.2.0.tar.gz"), None);
        assert_eq!(parse_file_name("esys_a2c-1.2.0-py3.whl"), None);
    }

    #[test]
    fn a_record_reads_back_with_quotes_and_refuses_bad_lines() {
        let digest = B64.encode([7u8; 32]);
        let held: std::collections::BTreeSet<&str> = ["a,b/c", "x.dist-info/RECORD", "a"].into();
        let read = |text: &str| read_record(&mut text.as_bytes(), &held);
        let text = format!("\"a,b/c\",sha256={digest},12\nx.dist-info/RECORD,,\n");
        let r = read(&text).unwrap();
        assert_eq!(r["a,b/c"], Some((Sha256([7u8; 32]), 12)));
        assert_eq!(r["x.dist-info/RECORD"], None);
        assert!(read("a,md5=xyz,1\n").is_err());
        assert!(read("a,b\n").is_err());
        assert!(read(&format!("a,sha256={digest},1\na,sha256={digest},1\n")).is_err());
        // A line naming no file of the wheel ends the read there; so does a line
        // longer than any RECORD line.
        let flood = format!(
            "a,sha256={digest},1\n{}",
            format!("ghost,sha256={digest},1\n").repeat(100_000)
        );
        match read(&flood) {
            Err(ArchiveError::Entry { entry, reason }) => {
                assert_eq!(entry, "ghost");
                assert!(reason.contains("does not hold it"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        assert!(read(&format!("\"{}\",,\n", "x".repeat(MAX_RECORD_LINE))).is_err());
    }
}
