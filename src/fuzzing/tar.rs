//! Tar streams for the tar reader (`archive::tar_read`): raw bytes, and streams built from typed
//! headers, so that mutations reach the reader's decisions (types, pax records, GNU long
//! names, base-256 sizes, prefixes, `..`) instead of failing a checksum or a gzip trailer.
//! Both go through the program's own entry point, `archive::extract` of a `.tar.gz`: the tar
//! is wrapped in a gzip stream of stored blocks (no compression to get wrong).

use std::collections::BTreeMap;
use std::io::Write;

use arbitrary::{Arbitrary, Unstructured};

use crate::archive::Format;

/// Gzip of `tar` in stored blocks.
fn gzip(tar: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    gz.write_all(tar).expect("writing to memory");
    gz.finish().expect("writing to memory")
}

/// Raw bytes as a tar stream: the archive properties of [`super::archive`].
pub fn raw(data: &[u8]) {
    super::archive(&gzip(data), Format::TarGz);
}

/// The words names are made of: no two equal under case folding or normalization, so that a
/// well-formed archive of them is one a2c must accept.
const WORDS: [&str; 6] = ["a", "b", "src", "rules", "x.md", "prompt.txt"];

#[derive(Arbitrary, Debug)]
enum Segment {
    Word(u8),
    Dot,
    DotDot,
    Empty,
    Raw(String),
}

#[derive(Arbitrary, Debug)]
enum Name {
    Path(Vec<Segment>),
    Absolute(Vec<Segment>),
    Raw(Vec<u8>),
}

impl Name {
    fn bytes(&self) -> Vec<u8> {
        let join = |s: &[Segment]| {
            s.iter()
                .map(|s| match s {
                    Segment::Word(i) => WORDS[*i as usize % WORDS.len()].to_string(),
                    Segment::Dot => ".".into(),
                    Segment::DotDot => "..".into(),
                    Segment::Empty => String::new(),
                    Segment::Raw(r) => r.clone(),
                })
                .collect::<Vec<_>>()
                .join("/")
        };
        match self {
            Name::Path(s) => join(s).into_bytes(),
            Name::Absolute(s) => format!("/{}", join(s)).into_bytes(),
            Name::Raw(r) => r.clone(),
        }
    }

    /// The name, when it is plain words a2c must accept as they are, within the 100 bytes of a
    /// header's name field (a longer one is cut there).
    fn plain(&self) -> Option<String> {
        match self {
            Name::Path(s) if !s.is_empty() && s.iter().all(|s| matches!(s, Segment::Word(_))) => {
                String::from_utf8(self.bytes()).ok().filter(|n| n.len() <= 100)
            }
            _ => None,
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
enum TarType {
    File,
    Contiguous,
    Dir,
    Symlink,
    Hardlink,
    Fifo,
    Device,
    Pax,
    PaxGlobal,
    LongName,
    LongLink,
    Sparse,
    Other(u8),
}

impl TarType {
    fn flag(self) -> u8 {
        match self {
            TarType::File => b'0',
            TarType::Contiguous => b'7',
            TarType::Dir => b'5',
            TarType::Symlink => b'2',
            TarType::Hardlink => b'1',
            TarType::Fifo => b'6',
            TarType::Device => b'3',
            TarType::Pax => b'x',
            TarType::PaxGlobal => b'g',
            TarType::LongName => b'L',
            TarType::LongLink => b'K',
            TarType::Sparse => b'S',
            TarType::Other(b) => b,
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Size {
    /// The length of the data written.
    Exact,
    Octal(u64),
    Base256(u64),
    Raw([u8; 12]),
}

#[derive(Arbitrary, Debug)]
enum Magic {
    Ustar,
    Gnu,
    V7,
    Raw([u8; 8]),
}

#[derive(Arbitrary, Debug)]
enum PaxKey {
    Path,
    Size,
    Linkpath,
    Mtime,
    SparseSize,
    Raw(String),
}

#[derive(Arbitrary, Debug)]
enum Data {
    Bytes(Vec<u8>),
    /// pax records, each with its length written right unless `wrong_length`.
    Records(Vec<(PaxKey, Vec<u8>, bool)>),
    /// A name for a GNU long-name header.
    Name(Name),
}

impl Data {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Data::Bytes(b) => b.clone(),
            Data::Name(n) => [n.bytes(), vec![0]].concat(),
            Data::Records(records) => {
                let mut out = Vec::new();
                for (key, value, wrong_length) in records {
                    let key = match key {
                        PaxKey::Path => "path",
                        PaxKey::Size => "size",
                        PaxKey::Linkpath => "linkpath",
                        PaxKey::Mtime => "mtime",
                        PaxKey::SparseSize => "GNU.sparse.size",
                        PaxKey::Raw(k) => k.as_str(),
                    };
                    // "LEN KEY=VALUE\n", LEN counting itself.
                    let body = key.len() + value.len() + 3;
                    let mut len = body + 1;
                    while len != body + len.to_string().len() {
                        len = body + len.to_string().len();
                    }
                    let len = if *wrong_length { len + 1 } else { len };
                    out.extend_from_slice(format!("{len} {key}=").as_bytes());
                    out.extend_from_slice(value);
                    out.push(b'\n');
                }
                out
            }
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Header {
    kind: TarType,
    name: Name,
    prefix: Option<Name>,
    link: Option<Name>,
    executable: bool,
    size: Size,
    magic: Magic,
    bad_checksum: bool,
    data: Data,
}

#[derive(Arbitrary, Debug)]
enum Trailer {
    Two,
    One,
    None,
    Garbage(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Archive {
    headers: Vec<Header>,
    trailer: Trailer,
}

/// A field written as NUL-padded bytes (cut to fit).
fn put(block: &mut [u8; 512], at: usize, len: usize, bytes: &[u8]) {
    let n = bytes.len().min(len);
    block[at..at + n].copy_from_slice(&bytes[..n]);
}

fn octal(block: &mut [u8; 512], at: usize, len: usize, value: u64) {
    put(
        block,
        at,
        len,
        format!("{value:0width$o}\0", width = len - 1).as_bytes(),
    );
}

impl Header {
    fn write(&self, out: &mut Vec<u8>) {
        let data = self.data.bytes();
        let mut block = [0u8; 512];
        put(&mut block, 0, 100, &self.name.bytes());
        octal(&mut block, 100, 8, if self.executable { 0o755 } else { 0o644 });
        octal(&mut block, 108, 8, 0);
        octal(&mut block, 116, 8, 0);
        match &self.size {
            Size::Exact => octal(&mut block, 124, 12, data.len() as u64),
            Size::Octal(n) => octal(&mut block, 124, 12, *n & 0o77_777_777_777),
            Size::Base256(n) => {
                block[124] = 0x80;
                block[128..136].copy_from_slice(&n.to_be_bytes());
            }
            Size::Raw(raw) => block[124..136].copy_from_slice(raw),
        }
        octal(&mut block, 136, 12, 0);
        block[156] = self.kind.flag();
        if let Some(link) = &self.link {
            put(&mut block, 157, 100, &link.bytes());
        }
        match &self.magic {
            Magic::Ustar => put(&mut block, 257, 8, b"ustar\x0000"),
            Magic::Gnu => put(&mut block, 257, 8, b"ustar  \0"),
            Magic::V7 => {}
            Magic::Raw(raw) => block[257..265].copy_from_slice(raw),
        }
        if let Some(prefix) = &self.prefix {
            put(&mut block, 345, 155, &prefix.bytes());
        }
        block[148..156].fill(b' ');
        let sum: u64 = block.iter().map(|b| u64::from(*b)).sum::<u64>() + u64::from(self.bad_checksum);
        put(&mut block, 148, 8, format!("{sum:06o}\0 ").as_bytes());
        out.extend_from_slice(&block);
        out.extend_from_slice(&data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }

    /// What a2c must extract of this header, when it is a plain file or directory.
    fn plain(&self) -> Option<(String, Option<Vec<u8>>)> {
        let sane = self.prefix.is_none()
            && self.link.is_none()
            && matches!(self.size, Size::Exact)
            && matches!(self.magic, Magic::Ustar | Magic::Gnu)
            && !self.bad_checksum
            && matches!(self.data, Data::Bytes(_));
        let name = self.name.plain().filter(|_| sane)?;
        match self.kind {
            TarType::File => Some((name, Some(self.data.bytes()))),
            TarType::Dir if self.data.bytes().is_empty() => Some((name, None)),
            _ => None,
        }
    }
}

/// A tar stream built from typed headers. Besides the archive properties of
/// [`super::archive`]: an archive of plain files and directories, with distinct names of
/// plain words, extracts, and gives back exactly its files' contents.
pub fn typed(data: &[u8]) {
    let Ok(archive) = Archive::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut tar = Vec::new();
    for h in &archive.headers {
        h.write(&mut tar);
    }
    match &archive.trailer {
        Trailer::Two => tar.extend_from_slice(&[0; 1024]),
        Trailer::One => tar.extend_from_slice(&[0; 512]),
        Trailer::None => {}
        Trailer::Garbage(g) => tar.extend_from_slice(g),
    }
    let expected = expected(&archive);
    let Some(extracted) = super::archive(&gzip(&tar), Format::TarGz) else {
        assert!(expected.is_none(), "a plain archive was refused: {archive:?}");
        return;
    };
    if let Some(files) = expected {
        let mut want: Vec<&Vec<u8>> = files.values().collect();
        let mut got: Vec<&Vec<u8>> = extracted.values().collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "the files extracted differ from the archive's");
        for path in extracted.keys() {
            assert!(
                files.keys().any(|p| p == path || p.ends_with(&format!("/{path}"))),
                "{path} is no file of the archive"
            );
        }
    }
}

/// The files a2c must extract from `archive`, when it is only plain files and directories of
/// distinct names, no file a directory of another, at least one file, and a clean end.
fn expected(archive: &Archive) -> Option<BTreeMap<String, Vec<u8>>> {
    // Within the limits of [`super::archive`].
    if !matches!(archive.trailer, Trailer::Two | Trailer::None) || archive.headers.len() > 1000 {
        return None;
    }
    let (mut files, mut dirs) = (BTreeMap::new(), std::collections::BTreeSet::new());
    for h in &archive.headers {
        match h.plain()? {
            (name, Some(data)) => {
                if files.insert(name, data).is_some() {
                    return None;
                }
            }
            (name, None) => {
                dirs.insert(name);
            }
        }
    }
    let clash = files.keys().any(|f| {
        dirs.contains(f)
            || files
                .keys()
                .chain(&dirs)
                .any(|o| o.len() > f.len() && o.starts_with(f.as_str()) && o.as_bytes()[f.len()] == b'/')
    });
    (!files.is_empty() && !clash).then_some(files)
}
