//! A streaming tar reader written for hostile input: 512-byte headers (v7, ustar, GNU, pax),
//! checked one by one, yielding only what a2c may extract — regular files and directories —
//! and refusing everything else by name. It reads what GNU tar, bsdtar and Python read:
//! a leading `./`, the archive's own `.` entry, v7 directories (a regular entry whose name ends
//! in `/`), pax records whose values hold any bytes (the length field says where each ends),
//! GNU long names, base-256 numbers. Where those readers disagree (a directory header that
//! declares data, a pax global `path`), it refuses rather than pick one reading.
//!
//! Why not the `tar` crate's reader (a2c uses the crate only to write, in `pack`): at 0.4.46 it
//! splits pax records at every newline, so a value holding one is misread, and its entry type
//! calls a v7 directory a regular file — only its `unpack`, which a2c never calls on untrusted
//! input, knows better.

use std::io::Read;

use super::{ArchiveError, Format};

/// The most a pax extended header or a GNU long name may hold: far above any real one.
const MAX_EXTENSION: u64 = 1 << 20;

const BLOCK: usize = 512;

fn corrupt(reason: impl Into<String>) -> ArchiveError {
    ArchiveError::Corrupt {
        format: Format::TarGz,
        reason: reason.into(),
    }
}

/// One entry a2c may extract.
pub enum Item {
    /// A regular file: its raw name, mode and size. Its content follows: read it with
    /// [`TarReader::content`].
    File { name: Vec<u8>, mode: u32, size: u64 },
    /// A directory (its raw name).
    Dir { name: Vec<u8> },
}

/// What the pax records of an extended header say that a2c honours.
#[derive(Default)]
struct Pax {
    path: Option<Vec<u8>>,
    size: Option<u64>,
}

/// Reads `inner` entry by entry.
pub struct TarReader<R> {
    inner: R,
    /// Bytes read so far (for messages: where a damaged header is).
    offset: u64,
    /// Content of the current file not yet read, and its padding.
    pending: u64,
    padding: u64,
    /// PAX global records a2c ignores.
    global_ignored: &'static [&'static str],
}

impl<R: Read> TarReader<R> {
    pub fn new(inner: R, global_ignored: &'static [&'static str]) -> Self {
        Self {
            inner,
            offset: 0,
            pending: 0,
            padding: 0,
            global_ignored,
        }
    }

    /// The content of the file [`Self::next`] returned last: exactly its size.
    pub fn content(&mut self) -> Content<'_, R> {
        Content { reader: self }
    }

    /// The next entry to extract; `None` at the end of the archive (its zero blocks, or the
    /// end of the stream at a header boundary, as every reader accepts).
    pub fn next(&mut self) -> Result<Option<Item>, ArchiveError> {
        self.skip_rest()?;
        let mut long_name: Option<Vec<u8>> = None;
        let mut pax = Pax::default();
        // An extended header (GNU `L`/`K`, PAX `x`) read, whose entry has not come yet.
        let mut extended = false;
        // A PAX `x` header read for this entry: a second one is read three ways (GNU tar,
        // bsdtar and Python), so it is refused.
        let mut pax_seen = false;
        loop {
            let at = self.offset;
            let mut block = [0u8; BLOCK];
            // The end of the archive right after an extended header: bsdtar calls it damaged,
            // GNU tar and Python end quietly; a2c refuses rather than read it either way.
            let dangling = || corrupt("the archive ends after an extended header, before its entry");
            if !self.read_block(&mut block)? {
                return match extended {
                    false => Ok(None),
                    true => Err(dangling()),
                };
            }
            if block.iter().all(|b| *b == 0) {
                return match extended {
                    false => Ok(None),
                    true => Err(dangling()),
                };
            }
            check_sum(&block, at)?;
            let kind = block[156];
            let header_name = header_name(&block);
            let shown = crate::util::text::quoted_bytes;
            let refuse = |name: &[u8], reason: String| ArchiveError::Entry {
                entry: shown(name),
                reason,
            };
            match kind {
                b'L' | b'K' | b'x' | b'g' => {
                    let size = number(&block[124..136], "size", at)?;
                    if size > MAX_EXTENSION {
                        return Err(refuse(
                            &header_name,
                            format!("an extended header of {size} bytes (at most {MAX_EXTENSION})"),
                        ));
                    }
                    let data = self.read_data(size)?;
                    extended |= kind != b'g';
                    match kind {
                        // A GNU long name for the next entry (up to its first NUL).
                        b'L' => long_name = Some(data.split(|b| *b == 0).next().unwrap_or_default().to_vec()),
                        // A GNU long link name: the next entry is a link, refused there.
                        b'K' => {}
                        b'x' => {
                            if std::mem::replace(&mut pax_seen, true) {
                                return Err(refuse(
                                    &header_name,
                                    "two PAX extended headers in a row for one entry: GNU tar, bsdtar and Python read them three ways, so a2c refuses the archive rather than read it one of them".into(),
                                ));
                            }
                            for (key, value) in records(&data)? {
                                match key {
                                    b"path" => pax.path = Some(value.to_vec()),
                                    b"size" => {
                                        let text = std::str::from_utf8(value).unwrap_or_default();
                                        pax.size = Some(text.parse().map_err(|_| {
                                            corrupt(format!(
                                                "a PAX `size` record `{}` is not a number",
                                                crate::util::text::quoted_short(text)
                                            ))
                                        })?);
                                    }
                                    k if k.starts_with(b"GNU.sparse.") => {
                                        return Err(refuse(
                                            &header_name,
                                            "a PAX sparse file (`GNU.sparse.*` records): its data is a sparse map, not the file, so it is not allowed".into(),
                                        ));
                                    }
                                    // mtime, uid, xattrs, comments …: a2c sets none of them.
                                    _ => {}
                                }
                            }
                        }
                        _ => {
                            for (key, _) in records(&data)? {
                                let key = String::from_utf8_lossy(key);
                                if !self.global_ignored.contains(&key.as_ref()) {
                                    return Err(refuse(
                                        &header_name,
                                        format!(
                                            "a PAX global header with a `{}` record: GNU tar and Python apply it to every later entry, so a2c refuses the archive rather than read it differently",
                                            crate::util::text::quoted_short(&key)
                                        ),
                                    ));
                                }
                            }
                        }
                    }
                    continue;
                }
                _ => {}
            }
            // A GNU long name and a PAX `path` that differ: bsdtar takes one, GNU tar and Python
            // the other, so a2c takes neither.
            if let (Some(path), Some(long)) = (&pax.path, &long_name)
                && path != long
            {
                return Err(refuse(
                    path,
                    format!(
                        "a PAX `path` and a GNU long name (`{}`) that differ: tar readers disagree on which names the entry, so a2c refuses the archive rather than read it differently",
                        shown(long)
                    ),
                ));
            }
            let name = pax.path.take().or(long_name.take()).unwrap_or(header_name);
            return match kind {
                b'0' | 0 | b'7' => {
                    let size = match pax.size {
                        Some(s) => s,
                        None => number(&block[124..136], "size", at)?,
                    };
                    // A v7 directory: a regular entry whose name ends in `/`.
                    if name.ends_with(b"/") && kind != b'7' {
                        return self.directory(name, size);
                    }
                    let mode = number(&block[100..108], "mode", at)? as u32;
                    self.pending = size;
                    self.padding = (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64;
                    Ok(Some(Item::File { name, mode, size }))
                }
                b'5' => {
                    let size = match pax.size {
                        Some(s) => s,
                        None => number(&block[124..136], "size", at)?,
                    };
                    self.directory(name, size)
                }
                other => Err(refuse(&name, refusal(other))),
            };
        }
    }

    /// A directory entry, unless it declares content: tar readers disagree on whether data
    /// follows it (GNU tar skips it, bsdtar and Python do not), so it is refused.
    fn directory(&mut self, name: Vec<u8>, size: u64) -> Result<Option<Item>, ArchiveError> {
        if size != 0 {
            return Err(ArchiveError::Entry {
                entry: crate::util::text::quoted_bytes(&name),
                reason: format!(
                    "a directory entry that declares {size} bytes of content: tar readers disagree on whether they follow, so a2c refuses the archive rather than read it differently"
                ),
            });
        }
        Ok(Some(Item::Dir { name }))
    }

    /// Reads one block; `false` at the end of the stream before it. A partial block is damage.
    fn read_block(&mut self, block: &mut [u8; BLOCK]) -> Result<bool, ArchiveError> {
        let mut filled = 0;
        while filled < BLOCK {
            match self.inner.read(&mut block[filled..]) {
                Ok(0) if filled == 0 => return Ok(false),
                Ok(0) => return Err(corrupt("unexpected end of the archive inside a header")),
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(corrupt(e.to_string())),
            }
        }
        self.offset += BLOCK as u64;
        Ok(true)
    }

    /// The `size` bytes of an extended header, and its padding.
    fn read_data(&mut self, size: u64) -> Result<Vec<u8>, ArchiveError> {
        let mut data = Vec::with_capacity(size as usize);
        let padded = size.div_ceil(BLOCK as u64) * BLOCK as u64;
        let got = (&mut self.inner)
            .take(padded)
            .read_to_end(&mut data)
            .map_err(|e| corrupt(e.to_string()))?;
        if (got as u64) < padded {
            return Err(corrupt("unexpected end of the archive inside an extended header"));
        }
        self.offset += padded;
        data.truncate(size as usize);
        Ok(data)
    }

    /// Skips what is left of the current file's content and its padding.
    fn skip_rest(&mut self) -> Result<(), ArchiveError> {
        let rest = self.pending + self.padding;
        if rest == 0 {
            return Ok(());
        }
        let skipped = std::io::copy(&mut (&mut self.inner).take(rest), &mut std::io::sink())
            .map_err(|e| corrupt(e.to_string()))?;
        if skipped < rest {
            return Err(corrupt("unexpected end of the archive inside a file"));
        }
        self.offset += rest;
        self.pending = 0;
        self.padding = 0;
        Ok(())
    }
}

/// The content of the current file, as a reader that ends at its size; a stream that ends
/// sooner is an error.
pub struct Content<'a, R> {
    reader: &'a mut TarReader<R>,
}

impl<R: Read> Read for Content<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = (buf.len() as u64).min(self.reader.pending) as usize;
        if want == 0 {
            return Ok(0);
        }
        let n = self.reader.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "unexpected end of the archive inside a file",
            ));
        }
        self.reader.pending -= n as u64;
        self.reader.offset += n as u64;
        Ok(n)
    }
}

/// The header's own name: ustar's `prefix/name`, else the name field (GNU headers use the
/// prefix area for other fields).
fn header_name(block: &[u8; BLOCK]) -> Vec<u8> {
    let field = |range: std::ops::Range<usize>| {
        let f = &block[range];
        f[..f.iter().position(|b| *b == 0).unwrap_or(f.len())].to_vec()
    };
    let name = field(0..100);
    let posix = &block[257..263] == b"ustar\0";
    let prefix = if posix { field(345..500) } else { Vec::new() };
    match prefix.is_empty() {
        true => name,
        false => [prefix, b"/".to_vec(), name].concat(),
    }
}

/// A numeric header field: octal (spaces or NULs around it), or base-256 (high bit set).
fn number(field: &[u8], what: &str, at: u64) -> Result<u64, ArchiveError> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        if field[0] == 0xff {
            return Err(corrupt(format!("a negative {what} in the header at byte {at}")));
        }
        let mut v: u64 = (field[0] & 0x7f) as u64;
        for b in &field[1..] {
            v = v
                .checked_mul(256)
                .and_then(|v| v.checked_add(*b as u64))
                .ok_or_else(|| corrupt(format!("an oversized {what} in the header at byte {at}")))?;
        }
        return Ok(v);
    }
    let text: Vec<u8> = field
        .iter()
        .copied()
        .skip_while(|b| *b == b' ' || *b == 0)
        .take_while(|b| *b != b' ' && *b != 0)
        .collect();
    if text.is_empty() {
        return Ok(0);
    }
    let s = std::str::from_utf8(&text).unwrap_or("?");
    u64::from_str_radix(s, 8).map_err(|_| {
        corrupt(format!(
            "the {what} field `{}` of the header at byte {at} is not an octal number",
            s.escape_debug()
        ))
    })
}

/// Checks the header checksum (the unsigned sum, or the signed one old tars wrote).
fn check_sum(block: &[u8; BLOCK], at: u64) -> Result<(), ArchiveError> {
    let stored = number(&block[148..156], "checksum", at)?;
    let mut unsigned: u64 = 0;
    let mut signed: i64 = 0;
    for (i, b) in block.iter().enumerate() {
        let b = if (148..156).contains(&i) { b' ' } else { *b };
        unsigned += b as u64;
        signed += b as i8 as i64;
    }
    if stored == unsigned || stored as i64 == signed {
        return Ok(());
    }
    Err(corrupt(format!(
        "the header at byte {at} has a wrong checksum (not a tar archive, or a damaged one)"
    )))
}

/// One pax record: its key and its value.
type Record<'a> = (&'a [u8], &'a [u8]);

/// The records of a pax extended header: `LEN key=value\n`, where LEN counts the whole record,
/// so a value may hold any byte (a newline, in a binary extended attribute).
fn records(data: &[u8]) -> Result<Vec<Record<'_>>, ArchiveError> {
    let bad = |why: &str| corrupt(format!("malformed PAX extended header: {why}"));
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        // GNU tar pads with NULs after the last record.
        if rest.iter().all(|b| *b == 0) {
            break;
        }
        let space = rest
            .iter()
            .position(|b| *b == b' ')
            .ok_or_else(|| bad("a record without a length"))?;
        let len: usize = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("a record length that is not a number"))?;
        if len <= space + 1 || len > rest.len() || rest[len - 1] != b'\n' {
            return Err(bad("a record whose length does not end at a newline"));
        }
        let record = &rest[space + 1..len - 1];
        let eq = record
            .iter()
            .position(|b| *b == b'=')
            .ok_or_else(|| bad("a record without `=`"))?;
        out.push((&record[..eq], &record[eq + 1..]));
        rest = &rest[len..];
    }
    Ok(out)
}

/// Why an entry of type `byte` is refused.
fn refusal(byte: u8) -> String {
    let known = match byte {
        b'1' => "hard link",
        b'2' => "symbolic link",
        b'3' | b'4' => "device",
        b'6' => "fifo",
        b'S' => "sparse file",
        b'D' => "GNU dumpdir",
        b'M' => "GNU multi-volume continuation",
        b'V' => {
            return "a GNU volume label (entry type `V`): it names a tape, not a file; a2c extracts only regular files and directories, so make the archive without `--label`".into();
        }
        b'N' => "GNU old long name",
        b'A' => "Solaris ACL",
        b'E' => "Solaris extended attribute",
        b'I' => "inode metadata",
        b'X' => "Solaris extended header",
        _ => "",
    };
    let shown = match byte.is_ascii_graphic() {
        true => format!("`{}`", byte as char),
        false => format!("{byte:#04x}"),
    };
    match (known, byte) {
        ("", _) => format!(
            "unsupported (entry type {shown}) entries are not allowed (a2c extracts only regular files and directories)"
        ),
        (k, b'1' | b'2' | b'3' | b'4' | b'6' | b'S') => format!("{k} entries are not allowed"),
        (k, _) => format!(
            "{k} (entry type {shown}) entries are not allowed (a2c extracts only regular files and directories)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pax_records_are_delimited_by_their_length() {
        let value = b"a\n30 path=evil.txt\nb";
        let record = |k: &str, v: &[u8]| {
            let body = [k.as_bytes(), b"=", v, b"\n"].concat();
            let mut len = body.len() + 2;
            while format!("{len} ").len() + body.len() != len {
                len += 1;
            }
            [format!("{len} ").into_bytes(), body].concat()
        };
        let data = [record("SCHILY.xattr.user.x", value), record("path", b"real.txt")].concat();
        let parsed = records(&data).unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].1, value);
        assert_eq!(parsed[1], (&b"path"[..], &b"real.txt"[..]));
        assert!(records(b"99 path=x\n").is_err());
        assert!(records(b"5 a=b").is_err());
    }

    /// Two PAX `x` headers before one entry are refused, naming them; one is read.
    #[test]
    fn two_pax_headers_in_a_row_are_refused() {
        let block = |kind: tar::EntryType, name: &str, data: &[u8]| {
            let mut h = tar::Header::new_ustar();
            h.set_path(name).unwrap();
            h.set_size(data.len() as u64);
            h.set_entry_type(kind);
            h.set_mode(0o644);
            h.set_cksum();
            let mut out = h.as_bytes().to_vec();
            out.extend_from_slice(data);
            out.resize(out.len().div_ceil(512) * 512, 0);
            out
        };
        // `13 path=a.md\n`: the length counts the whole record.
        let pax = |path: &str| {
            let body = format!(" path={path}\n");
            let len = body.len() + 2;
            block(
                tar::EntryType::XHeader,
                "PaxHeaders/x",
                format!("{len}{body}").as_bytes(),
            )
        };
        let file = block(tar::EntryType::Regular, "x.md", b"hello");
        let end = vec![0u8; 1024];
        let read = |bytes: Vec<u8>| -> Result<Vec<Vec<u8>>, ArchiveError> {
            let mut r = TarReader::new(std::io::Cursor::new(bytes), &[]);
            let mut names = Vec::new();
            while let Some(item) = r.next()? {
                if let Item::File { name, .. } = item {
                    names.push(name);
                }
            }
            Ok(names)
        };
        let one = read([pax("a.md"), file.clone(), end.clone()].concat()).unwrap();
        assert_eq!(one, [b"a.md".to_vec()]);
        let e = read([pax("a.md"), pax("b.md"), file, end].concat()).unwrap_err();
        assert!(e.to_string().contains("two PAX extended headers in a row"), "{e}");
    }

    #[test]
    fn numbers_in_octal_and_base_256() {
        assert_eq!(number(b"0000644 \0", "mode", 0).unwrap(), 0o644);
        assert_eq!(number(b"  12\0", "size", 0).unwrap(), 0o12);
        assert_eq!(
            number(&[0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0], "size", 0).unwrap(),
            1 << 32
        );
        assert!(number(b"My Label", "size", 0).is_err());
        assert!(number(&[0xff; 12], "size", 0).is_err());
    }
}
