//! Digests: the `Sha256` newtype (64 lowercase hex), a reader that hashes what passes through
//! it, and the tree digest of registry-spec/README.md §3.1.

use std::fmt;
use std::io::{self, Read};

use sha2::Digest as _;

/// A sha256 digest, shown as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sha256(pub [u8; 32]);

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

impl Sha256 {
    /// Parses exactly 64 lowercase hex digits.
    pub fn parse(s: &str) -> Result<Self, String> {
        if s.len() != 64 || !s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(format!("`{s}` is not a sha256: expected 64 lowercase hex digits"));
        }
        let mut out = [0u8; 32];
        for (i, chunk) in s.as_bytes().chunks(2).enumerate() {
            let nib = |c: u8| if c.is_ascii_digit() { c - b'0' } else { c - b'a' + 10 };
            out[i] = nib(chunk[0]) << 4 | nib(chunk[1]);
        }
        Ok(Self(out))
    }

    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(sha2::Sha256::digest(bytes).into())
    }

    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256({self})")
    }
}

impl serde::Serialize for Sha256 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Sha256 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Sha256::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// A running sha256 with a byte count.
#[derive(Clone, Default)]
pub struct Hasher {
    inner: sha2::Sha256,
    pub bytes: u64,
}

impl Hasher {
    pub fn update(&mut self, data: &[u8]) {
        self.inner.update(data);
        self.bytes += data.len() as u64;
    }

    pub fn finish(self) -> Sha256 {
        Sha256(self.inner.finalize().into())
    }
}

/// A reader that hashes and counts every byte read through it.
pub struct HashingReader<R> {
    inner: R,
    hasher: Hasher,
}

impl<R: Read> HashingReader<R> {
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            hasher: Hasher::default(),
        }
    }

    /// Reads the rest of the input (so that the digest covers the whole stream), then returns
    /// the digest and the byte count.
    pub fn finish(mut self) -> io::Result<(Sha256, u64)> {
        let mut buf = vec![0u8; 64 * 1024];
        while self.read(&mut buf)? != 0 {}
        let bytes = self.hasher.bytes;
        Ok((self.hasher.finish(), bytes))
    }

    pub fn bytes_read(&self) -> u64 {
        self.hasher.bytes
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// Hashes a whole reader.
pub fn sha256_reader(reader: impl Read) -> io::Result<(Sha256, u64)> {
    HashingReader::new(reader).finish()
}

/// One regular file of a tree, as the tree digest sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    /// Relative to the tree root, `/`-separated.
    pub path: String,
    pub executable: bool,
    pub sha256: Sha256,
    pub size: u64,
}

/// The tree digest's input: the lines `<path>\0<x|->\0<hex sha256>\n`, one per regular file,
/// sorted by path bytes.
pub fn tree_lines(files: &[TreeFile]) -> Vec<u8> {
    let mut sorted: Vec<&TreeFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    let mut out = Vec::with_capacity(files.len() * 100);
    for f in sorted {
        out.extend_from_slice(f.path.as_bytes());
        out.extend_from_slice(if f.executable { b"\0x\0" } else { b"\0-\0" });
        out.extend_from_slice(f.sha256.to_hex().as_bytes());
        out.push(b'\n');
    }
    out
}

/// Parses tree lines back into (path, executable, hex sha256).
pub fn parse_tree_lines(bytes: &[u8]) -> Option<Vec<(String, bool, String)>> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|line| {
            let mut parts = line.split(|b| *b == 0);
            let path = String::from_utf8(parts.next()?.to_vec()).ok()?;
            let x = parts.next()? == b"x";
            let sha = String::from_utf8(parts.next()?.to_vec()).ok()?;
            Some((path, x, sha))
        })
        .collect()
}

/// The tree digest: `sha256:` + hex sha256 of [`tree_lines`].
pub fn tree_digest(files: &[TreeFile]) -> String {
    format!("sha256:{}", Sha256::of(&tree_lines(files)))
}

/// Checks the `sha256:<64 hex>` form of a tree digest.
pub fn check_tree_digest(s: &str) -> Result<(), String> {
    match s.strip_prefix("sha256:") {
        Some(hex) if Sha256::parse(hex).is_ok() => Ok(()),
        _ => Err(format!(
            "`{s}` is not a tree digest: expected `sha256:` and 64 lowercase hex digits"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_known_value_and_round_trip() {
        let d = Sha256::of(b"abc");
        assert_eq!(
            d.to_hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Sha256::parse(&d.to_hex()).unwrap(), d);
        assert!(Sha256::parse(&d.to_hex().to_uppercase()).is_err());
        assert!(Sha256::parse("abc").is_err());
        let (r, n) = sha256_reader(&b"abc"[..]).unwrap();
        assert_eq!((r, n), (d, 3));
    }

    #[test]
    fn tree_digest_is_order_independent_and_sensitive() {
        let f = |p: &str, x: bool, c: &[u8]| TreeFile {
            path: p.into(),
            executable: x,
            sha256: Sha256::of(c),
            size: c.len() as u64,
        };
        let a = vec![f("b.md", false, b"b"), f("a/x.md", false, b"x")];
        let b = vec![f("a/x.md", false, b"x"), f("b.md", false, b"b")];
        assert_eq!(tree_digest(&a), tree_digest(&b));
        let exec = vec![f("a/x.md", true, b"x"), f("b.md", false, b"b")];
        assert_ne!(tree_digest(&a), tree_digest(&exec));
        let changed = vec![f("a/x.md", false, b"y"), f("b.md", false, b"b")];
        assert_ne!(tree_digest(&a), tree_digest(&changed));
        let removed = vec![f("b.md", false, b"b")];
        assert_ne!(tree_digest(&a), tree_digest(&removed));
        // The line format, spelled out.
        let one = vec![f("a", false, b"")];
        let line = format!("a\0-\0{}\n", Sha256::of(b"").to_hex());
        assert_eq!(tree_digest(&one), format!("sha256:{}", Sha256::of(line.as_bytes())));
        assert!(check_tree_digest(&tree_digest(&one)).is_ok());
        assert!(check_tree_digest("md5:00").is_err());
    }
}
