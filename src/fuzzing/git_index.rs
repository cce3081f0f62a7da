//! The git index reader (`util::git_index`), which tells doctor whether a member tracks its
//! `.tools_local/` without starting git: raw bytes, and indexes built from typed entries
//! (formats 2, 3 and 4, SHA-1 or SHA-256 object names, extensions), whose truth is known.

use arbitrary::{Arbitrary, Unstructured};

use crate::util::git_index::fuzz_judge;

/// The path doctor asks about.
const REL: &str = ".tools_local";

/// The first read of an index (`git_index::FIRST_BLOCK`).
const FIRST_BLOCK: usize = 16 * 1024;

/// Raw bytes: the reading of the first block never contradicts the reading of the whole file,
/// and neither panics.
pub fn raw(data: &[u8]) {
    let whole = fuzz_judge(data, true, REL);
    let first = fuzz_judge(&data[..data.len().min(FIRST_BLOCK)], data.len() < FIRST_BLOCK, REL);
    if let (Some(a), Some(b)) = (first, whole) {
        assert_eq!(a, b, "the first block and the whole index disagree");
    }
}

/// Names that sort around the prefix: before it, equal, inside, just after, far after.
const WORDS: [&str; 8] = [
    ".git",
    ".tools_local",
    ".tools_local-x",
    ".tools_localz",
    "a",
    "b",
    "tools",
    "z",
];

#[derive(Arbitrary, Debug)]
struct Entry {
    path: Vec<u8>,
    mode: u8,
    extended: Option<u16>,
}

#[derive(Arbitrary, Debug)]
struct Index {
    version: u8,
    sha256: bool,
    entries: Vec<Entry>,
    extensions: Vec<([u8; 4], Vec<u8>)>,
    cut: u16,
}

const MODES: [u32; 5] = [0o100644, 0o100755, 0o120000, 0o160000, 0o040000];

/// An index built from typed entries, sorted and distinct as git writes them. Its reading
/// never contradicts the truth (whether an entry is `.tools_local` or under it), cut anywhere
/// or whole; and a plain index (format 2, SHA-1, regular files, no extension) is read exactly.
pub fn typed(data: &[u8]) {
    let Ok(index) = Index::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let version = u32::from(index.version % 3) + 2;
    let hash = if index.sha256 { 32 } else { 20 };
    // Each path: one to three words.
    let mut entries: Vec<(String, &Entry)> = index
        .entries
        .iter()
        .filter(|e| !e.path.is_empty())
        .map(|e| {
            let words: Vec<&str> = e
                .path
                .iter()
                .take(3)
                .map(|w| WORDS[*w as usize % WORDS.len()])
                .collect();
            (words.join("/"), e)
        })
        .collect();
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    entries.dedup_by(|a, b| a.0 == b.0);
    let truth = entries
        .iter()
        .any(|(p, _)| p == REL || p.starts_with(&format!("{REL}/")));

    let mut out = Vec::new();
    out.extend_from_slice(b"DIRC");
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(&(entries.len() as u32).to_be_bytes());
    let mut previous = String::new();
    for (path, e) in &entries {
        let start = out.len();
        let mode = MODES[e.mode as usize % MODES.len()];
        for field in [0, 0, 0, 0, 0, 0, mode, 0, 0, 0] {
            out.extend_from_slice(&u32::to_be_bytes(field));
        }
        out.extend(std::iter::repeat_n(0xab, hash));
        let extended = e.extended.filter(|_| version >= 3);
        let flags = u16::from(extended.is_some()) << 14 | path.len().min(0xfff) as u16;
        out.extend_from_slice(&flags.to_be_bytes());
        if let Some(x) = extended {
            out.extend_from_slice(&(x & 0x6000).to_be_bytes());
        }
        if version == 4 {
            let common = previous.bytes().zip(path.bytes()).take_while(|(a, b)| a == b).count();
            varint(&mut out, (previous.len() - common) as u64);
            out.extend_from_slice(&path.as_bytes()[common..]);
            out.push(0);
        } else {
            out.extend_from_slice(path.as_bytes());
            let end = out.len();
            out.resize(start + (end - start + 8) / 8 * 8, 0);
        }
        previous = path.clone();
    }
    for (signature, body) in &index.extensions {
        // A split index's `link` makes the reader ask git; any other signature is skipped.
        out.extend_from_slice(signature);
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(body);
    }
    out.extend(std::iter::repeat_n(0xcd, hash));

    let whole = fuzz_judge(&out, true, REL);
    assert_ne!(whole, Some(!truth), "the whole index was misread ({truth}): {index:?}");
    let cut = usize::from(index.cut).min(out.len());
    let part = fuzz_judge(&out[..cut], false, REL);
    assert_ne!(
        part,
        Some(!truth),
        "its first {cut} bytes were misread ({truth}): {index:?}"
    );
    let plain = version == 2
        && hash == 20
        && index.extensions.is_empty()
        && entries
            .iter()
            .all(|(_, e)| MODES[e.mode as usize % MODES.len()] == 0o100644);
    if plain {
        assert_eq!(whole, Some(truth), "a plain index was not read: {index:?}");
    }
}

/// git's offset varint, as `git_index::varint` reads it.
fn varint(out: &mut Vec<u8>, mut value: u64) {
    let mut bytes = vec![(value & 0x7f) as u8];
    while value >= 0x80 {
        value = (value >> 7) - 1;
        bytes.push(0x80 | (value & 0x7f) as u8);
    }
    bytes.reverse();
    out.extend_from_slice(&bytes);
}
