//! A wheel's `RECORD` (`archive::wheel`), the CSV that lists each file of a wheel with its
//! digest and size: raw bytes, and files written from typed rows.

use arbitrary::{Arbitrary, Unstructured};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::archive::wheel::fuzz_read_record;

/// The files of the wheel the raw target reads against.
const HELD: [&str; 4] = [
    "pkg/a2c-method.toml",
    "pkg/rules/a.md",
    "pkg-1.0.dist-info/RECORD",
    "a,\"b\".md",
];

/// Raw bytes: never a panic, and whatever is accepted lists only files the wheel holds.
pub fn raw(data: &[u8]) {
    if let Ok(record) = fuzz_read_record(data, &HELD) {
        assert!(record.keys().all(|p| HELD.contains(&p.as_str())), "{record:?}");
    }
}

#[derive(Arbitrary, Debug)]
struct Row {
    path: String,
    /// Not a file of the wheel.
    stranger: bool,
    digest: Option<[u8; 32]>,
    size: u64,
    crlf: bool,
    /// A line of spaces before it.
    blank_before: bool,
}

/// A field as the csv module writes it: quoted when it holds a comma or a quote.
fn field(s: &str) -> String {
    match s.contains([',', '"']) {
        true => format!("\"{}\"", s.replace('"', "\"\"")),
        false => s.to_string(),
    }
}

/// A `RECORD` written from typed rows (as pip and hatchling write one): read back, it gives
/// each row's path, digest and size; it is refused when it lists a file the wheel lacks, or
/// one file twice.
pub fn typed(data: &[u8]) {
    let Ok(rows) = Vec::<Row>::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    // A path is one line, not blank, not too long for a line.
    let rows: Vec<Row> = rows
        .into_iter()
        .filter(|r| !r.path.contains(['\n', '\r']) && !r.path.trim().is_empty() && r.path.len() < 8000)
        .collect();
    let mut text = String::new();
    let mut held = Vec::new();
    for r in &rows {
        if r.blank_before {
            text.push_str("  \n");
        }
        text.push_str(&field(&r.path));
        match r.digest {
            Some(d) => text.push_str(&format!(",sha256={},{}", URL_SAFE_NO_PAD.encode(d), r.size)),
            None => text.push_str(",,"),
        }
        text.push_str(if r.crlf { "\r\n" } else { "\n" });
        if !r.stranger {
            held.push(r.path.as_str());
        }
    }
    let read = fuzz_read_record(text.as_bytes(), &held);
    let mut paths: Vec<&str> = rows.iter().map(|r| r.path.as_str()).collect();
    paths.sort_unstable();
    let twice = paths.windows(2).any(|w| w[0] == w[1]);
    let stranger = rows.iter().any(|r| r.stranger && !held.contains(&r.path.as_str()));
    match read {
        Ok(record) => {
            assert!(!twice && !stranger, "accepted: {text:?}");
            assert_eq!(record.len(), rows.len());
            for r in &rows {
                assert_eq!(record[&r.path], r.digest.map(|d| (d, r.size)), "{:?}", r.path);
            }
        }
        Err(e) => assert!(twice || stranger, "refused ({e}): {text:?}"),
    }
}
