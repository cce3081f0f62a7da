//! The hostile-input policy: which entry names and kinds are accepted, the limits, and the sink
//! that writes accepted entries inside the staging directory and nowhere else.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::ArchiveError;
use crate::util::digest::{Hasher, TreeFile};

/// The install receipt's file name inside an installed tree. No archive may name it.
pub const RECEIPT_FILE: &str = ".a2c-receipt.json";
/// The installed tree's file list (the tree digest's input lines), beside the receipt. No
/// archive may name it either.
pub const TREE_FILE: &str = ".a2c-tree";

/// Limits against decompression bombs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_unpacked_bytes: u64,
    pub max_entries: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_unpacked_bytes: 1 << 30,
            max_entries: 100_000,
        }
    }
}

impl Limits {
    /// The defaults, overridden by `A2C_MAX_UNPACKED_BYTES` and `A2C_MAX_ENTRIES` (the
    /// session's one reading).
    pub fn from_env() -> Result<Self, String> {
        let mut limits = Self::default();
        let bad = |(name, value): (&str, String)| format!("{name}=`{value}` is not a whole number of bytes/entries");
        if let Some(v) = crate::env::number(crate::env::A2C_MAX_UNPACKED_BYTES).map_err(bad)? {
            limits.max_unpacked_bytes = v;
        }
        if let Some(v) = crate::env::number(crate::env::A2C_MAX_ENTRIES).map_err(bad)? {
            limits.max_entries = v;
        }
        Ok(limits)
    }
}

const DEVICE_NAMES: &[&str] = &[
    "con", "prn", "aux", "nul", "conin$", "conout$", "com0", "com1", "com2", "com3", "com4", "com5", "com6", "com7",
    "com8", "com9", "lpt0", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

fn refuse<T>(entry: &str, reason: impl Into<String>) -> Result<T, ArchiveError> {
    Err(ArchiveError::Entry {
        entry: crate::util::text::quoted_short(entry),
        reason: reason.into(),
    })
}

/// `true` for the name of an archive's own top directory (`.`, `./`, `././`), which every
/// extractor skips.
pub fn is_root_entry(raw: &[u8]) -> bool {
    !raw.is_empty() && raw.split(|b| *b == b'/').all(|s| s.is_empty() || s == b".") && raw.contains(&b'.')
}

/// Checks an entry name and returns its normalized segments (`./` prefixes and a trailing `/`
/// dropped). Refuses absolute paths, `..`, drive letters, UNC prefixes, backslashes, NUL and
/// control characters, Windows device names, the characters Windows allows in no name
/// (`*?"<>|`, and `:`), trailing dots or spaces, segments longer than 255 UTF-16 units (NTFS's
/// and APFS's limit), empty segments, `.git`, and the receipt's name: a bundle installs the
/// same tree on every platform, or nowhere.
pub fn entry_segments(raw: &[u8]) -> Result<Vec<String>, ArchiveError> {
    let Ok(name) = std::str::from_utf8(raw) else {
        return refuse(&String::from_utf8_lossy(raw), "the name is not valid UTF-8");
    };
    if name.chars().any(|c| c == '\0' || c.is_control()) {
        return refuse(name, "the name contains a NUL or control character");
    }
    if name.contains('\\') {
        return refuse(name, "the name contains a backslash");
    }
    if name.starts_with('/') {
        return refuse(name, "absolute path");
    }
    let b = name.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return refuse(name, "drive-letter path");
    }
    let trimmed = name.strip_suffix('/').unwrap_or(name);
    let mut segments = Vec::new();
    for seg in trimmed.split('/') {
        match seg {
            "." if segments.is_empty() => continue,
            "" => return refuse(name, "empty path segment"),
            "." => return refuse(name, "`.` segment"),
            ".." => return refuse(name, "`..` segment (path traversal)"),
            _ => {}
        }
        if seg.contains(':') {
            return refuse(name, format!("segment `{seg}` contains `:`"));
        }
        if let Some(c) = seg.chars().find(|c| WINDOWS_FORBIDDEN.contains(*c)) {
            return refuse(
                name,
                format!("segment `{seg}` contains `{c}`, which Windows allows in no file name"),
            );
        }
        if seg.encode_utf16().count() > 255 {
            return refuse(
                name,
                format!(
                    "a segment of {} UTF-16 units, more than the 255 a name may have on Windows and macOS",
                    seg.encode_utf16().count()
                ),
            );
        }
        if seg.ends_with('.') || seg.ends_with(' ') {
            return refuse(name, format!("segment `{seg}` ends with a dot or space"));
        }
        let stem = seg.split('.').next().unwrap_or(seg).trim_end();
        if DEVICE_NAMES.iter().any(|d| stem.eq_ignore_ascii_case(d)) {
            return refuse(name, format!("segment `{seg}` is a Windows device name"));
        }
        if seg.eq_ignore_ascii_case(".git") {
            return refuse(name, "entries inside `.git` are not allowed");
        }
        if seg == super::RECEIPT_FILE || seg == TREE_FILE {
            return refuse(name, "the name is reserved for a2c's install receipt");
        }
        segments.push(seg.to_string());
    }
    if segments.is_empty() {
        return refuse(name, "empty name");
    }
    Ok(segments)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    File,
    Dir,
}

/// Writes accepted entries under `dest` and tracks names, limits and digests.
pub struct Sink<'a> {
    dest: &'a Path,
    /// `dest` as a handle: every directory and file is created beneath it, following no link.
    beneath: crate::util::contain::Beneath,
    limits: &'a Limits,
    format: super::Format,
    entries: u64,
    bytes: u64,
    /// Case-folded path → (exact path, kind), for duplicates and case clashes.
    seen: HashMap<String, (String, EntryKind)>,
    /// Directories named by an entry of their own (others are implied by their files).
    explicit_dirs: HashSet<String>,
    /// Directories already created under `dest` (relative), so that each costs one `mkdir`.
    created: HashSet<String>,
    /// Exact paths claimed as directories (each with its ancestors checked).
    claimed_dirs: HashSet<String>,
    files: Vec<TreeFile>,
    /// One copy buffer for every file (zeroing a fresh one per file costs more than the copy).
    buf: Vec<u8>,
    /// When set, directories and file contents go to a writer thread (see [`Writer`]); the
    /// checks, limits and hashes stay here.
    writer: Option<WriterLink>,
}

/// What the checking side says to the writer thread, in order.
pub enum Op {
    Dir(String),
    /// A whole file in one chunk (most files of a method tree).
    Whole {
        path: String,
        mode: u32,
        data: Vec<u8>,
    },
    /// A larger file's first chunk; `Data` chunks and `End` follow.
    File {
        path: String,
        mode: u32,
        first: Vec<u8>,
    },
    Data(Vec<u8>),
    End,
}

/// How many operations, and how many bytes of content, the checking side gathers before it
/// hands them to the writer thread as one batch: one wake-up of the writer per batch instead of
/// one per file (a method tree's files are small, and a hand-off costs about what writing one
/// costs).
const BATCH_OPS: usize = 32;
const BATCH_BYTES: usize = 512 * 1024;

/// The checking side's end of a writer thread: the operations it gathers and sends in batches,
/// and the chunk buffers the writer gives back for reuse.
pub struct WriterLink {
    ops: std::sync::mpsc::SyncSender<Vec<Op>>,
    spare: std::sync::mpsc::Receiver<Vec<u8>>,
    /// Operations not sent yet, and the bytes of content they carry.
    batch: std::cell::RefCell<(Vec<Op>, usize)>,
}

impl WriterLink {
    /// Queues `op`, sending the batch once it is full.
    fn send(&self, op: Op) -> Result<(), ArchiveError> {
        let full = {
            let mut batch = self.batch.borrow_mut();
            batch.1 += match &op {
                Op::Whole { data, .. } => data.len(),
                Op::File { first, .. } => first.len(),
                Op::Data(chunk) => chunk.len(),
                Op::Dir(_) | Op::End => 0,
            };
            batch.0.push(op);
            batch.0.len() >= BATCH_OPS || batch.1 >= BATCH_BYTES
        };
        if full { self.flush() } else { Ok(()) }
    }

    /// Sends what is queued.
    fn flush(&self) -> Result<(), ArchiveError> {
        let ops = std::mem::replace(&mut *self.batch.borrow_mut(), (Vec::with_capacity(BATCH_OPS), 0)).0;
        if ops.is_empty() {
            return Ok(());
        }
        self.ops.send(ops).map_err(|_| writer_gone())
    }
}

/// The writing side: executes [`Op`]s beneath `dest` through its own directory handle, which
/// follows no link, exactly as the [`Sink`] would have. Stops at the first error (the checking
/// side then sees its channel closed, and the caller takes this error).
pub struct Writer {
    dest: PathBuf,
    beneath: crate::util::contain::Beneath,
    ops: std::sync::mpsc::Receiver<Vec<Op>>,
    spare: std::sync::mpsc::Sender<Vec<u8>>,
}

impl Writer {
    /// A writer for `dest` and the link the [`Sink`] uses to feed it (at most `depth` batches
    /// in flight, each of at most [`BATCH_OPS`] operations).
    pub fn new(dest: &Path, depth: usize) -> Result<(Writer, WriterLink), ArchiveError> {
        let (ops_tx, ops_rx) = std::sync::mpsc::sync_channel(depth);
        let (spare_tx, spare_rx) = std::sync::mpsc::channel();
        Ok((
            Writer {
                dest: dest.to_path_buf(),
                beneath: crate::util::contain::Beneath::open(dest)?,
                ops: ops_rx,
                spare: spare_tx,
            },
            WriterLink {
                ops: ops_tx,
                spare: spare_rx,
                batch: std::cell::RefCell::new((Vec::with_capacity(BATCH_OPS), 0)),
            },
        ))
    }

    /// Runs until the checking side is done (or this fails).
    pub fn run(self) -> Result<(), ArchiveError> {
        let mut current: Option<fs_err::File> = None;
        for op in self.ops.iter().flatten() {
            match op {
                Op::Dir(rel) => self.beneath.create_dir(Path::new(&rel))?,
                Op::Whole { path, mode, data } => {
                    let file = self.beneath.create_file(Path::new(&path), mode)?;
                    fs_err::File::from_parts(file, self.dest.join(&path)).write_all(&data)?;
                    let _ = self.spare.send(data);
                }
                Op::File { path, mode, first } => {
                    let file = self.beneath.create_file(Path::new(&path), mode)?;
                    let mut file = fs_err::File::from_parts(file, self.dest.join(&path));
                    file.write_all(&first)?;
                    let _ = self.spare.send(first);
                    current = Some(file);
                }
                Op::Data(chunk) => {
                    if let Some(f) = current.as_mut() {
                        f.write_all(&chunk)?;
                    }
                    let _ = self.spare.send(chunk);
                }
                Op::End => current = None,
            }
        }
        Ok(())
    }
}

/// The checking side found the writer gone: it failed, and its own error is the one to report.
fn writer_gone() -> ArchiveError {
    ArchiveError::Io(std::io::Error::other("the writing thread stopped"))
}

impl<'a> Sink<'a> {
    pub fn new(dest: &'a Path, limits: &'a Limits, format: super::Format) -> Result<Self, ArchiveError> {
        Ok(Self {
            dest,
            beneath: crate::util::contain::Beneath::open(dest)?,
            limits,
            format,
            entries: 0,
            bytes: 0,
            seen: HashMap::new(),
            explicit_dirs: HashSet::new(),
            created: HashSet::new(),
            claimed_dirs: HashSet::new(),
            files: Vec::new(),
            buf: vec![0; 64 * 1024],
            writer: None,
        })
    }

    /// The directory entries are extracted into.
    pub fn dest(&self) -> &Path {
        self.dest
    }

    /// Sends directories and file contents to a writer thread from now on.
    pub fn set_writer(&mut self, link: WriterLink) {
        self.writer = Some(link);
    }

    /// Sends what is still queued and stops sending to the writer thread (it ends once it has
    /// written everything sent). A writer already gone has its own error, which the caller
    /// takes.
    pub fn close_writer(&mut self) {
        if let Some(w) = self.writer.take() {
            let _ = w.flush();
        }
    }

    fn send(&self, op: Op) -> Result<(), ArchiveError> {
        match &self.writer {
            Some(w) => w.send(op),
            None => Ok(()),
        }
    }

    /// Counts one entry of any kind against the entry limit.
    pub fn count_entry(&mut self) -> Result<(), ArchiveError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(ArchiveError::TooManyEntries {
                limit: self.limits.max_entries,
            });
        }
        Ok(())
    }

    /// Reads `content` through without writing it (a wheel's `.dist-info`, or anything outside
    /// its package directory), counting every byte against the unpacked limit all the same: a
    /// file that is not installed is no way around `A2C_MAX_UNPACKED_BYTES`.
    pub fn pass_over(&mut self, content: &mut dyn Read) -> Result<(), ArchiveError> {
        let read = std::io::copy(&mut content.take(self.remaining() + 1), &mut std::io::sink())?;
        self.count_bytes(read)
    }

    /// Counts `n` bytes read but not written against the unpacked limit.
    pub fn count_bytes(&mut self, n: u64) -> Result<(), ArchiveError> {
        self.bytes += n;
        if self.bytes > self.limits.max_unpacked_bytes {
            return Err(ArchiveError::TooLarge {
                limit: self.limits.max_unpacked_bytes,
            });
        }
        Ok(())
    }

    /// Bytes still allowed.
    pub fn remaining(&self) -> u64 {
        self.limits.max_unpacked_bytes.saturating_sub(self.bytes)
    }

    fn claim(&mut self, segments: &[String], kind: EntryKind) -> Result<String, ArchiveError> {
        let path = segments.join("/");
        // The end of each prefix (`a`, `a/b`, … `a/b/c`) in `path`.
        let mut ends = Vec::with_capacity(segments.len());
        let mut end = 0;
        for (i, seg) in segments.iter().enumerate() {
            end += seg.len() + usize::from(i > 0);
            ends.push(end);
        }
        // A parent claimed as a directory already had every ancestor checked: only the last
        // segment is new (the common case: a file beside others).
        let first = match ends.len() {
            n if n > 1 && self.claimed_dirs.contains(&path[..ends[n - 2]]) => n,
            _ => 1,
        };
        for depth in first..=segments.len() {
            let prefix = &path[..ends[depth - 1]];
            let key = fold(prefix);
            let this_kind = if depth == segments.len() { kind } else { EntryKind::Dir };
            let is_last = depth == segments.len();
            match self.seen.get(&key) {
                Some((exact, _)) if exact != prefix => {
                    return refuse(
                        &path,
                        format!("`{prefix}` and `{exact}` differ only in case or Unicode normalization"),
                    );
                }
                Some((_, existing)) if is_last || *existing == EntryKind::File => {
                    let why = if is_last && *existing == kind {
                        "duplicate entry"
                    } else {
                        "a file and a directory share this name"
                    };
                    return refuse(&path, format!("{why}: `{prefix}`"));
                }
                Some(_) => {
                    self.claimed_dirs.insert(prefix.to_string());
                }
                None => {
                    if this_kind == EntryKind::Dir {
                        self.claimed_dirs.insert(prefix.to_string());
                    }
                    self.seen.insert(key, (prefix.to_string(), this_kind));
                }
            }
        }
        Ok(path)
    }

    /// Records a directory entry (its name checked like any other). It is not created here:
    /// the files below it create it. The tree digest covers files, and so every directory that
    /// holds one; a directory with no file below it would be outside the pinned digest, so it
    /// is never installed (refusing it would refuse what GNU tar, bsdtar and Info-ZIP make of
    /// a tree with an empty directory). A directory already implied by earlier files is not a
    /// duplicate; a second entry for the same directory is.
    pub fn directory(&mut self, segments: &[String]) -> Result<(), ArchiveError> {
        let path = segments.join("/");
        if !self.explicit_dirs.insert(path.clone()) {
            return refuse(&path, format!("duplicate entry: `{path}`"));
        }
        match self.seen.get(&fold(&path)) {
            Some((exact, EntryKind::Dir)) if *exact == path => {}
            _ => {
                self.claim(segments, EntryKind::Dir)?;
            }
        }
        Ok(())
    }

    /// Creates the directory `segments` and its missing ancestors beneath `dest`.
    fn create_dirs(&mut self, segments: &[String]) -> Result<(), ArchiveError> {
        if segments.is_empty() || self.created.contains(&segments.join("/")) {
            return Ok(());
        }
        for depth in 1..=segments.len() {
            let rel = segments[..depth].join("/");
            if !self.created.contains(&rel) {
                match self.writer {
                    Some(_) => self.send(Op::Dir(rel.clone()))?,
                    None => self.beneath.create_dir(Path::new(&rel))?,
                }
                self.created.insert(rel);
            }
        }
        Ok(())
    }

    /// Writes a regular file from `content`, hashing it; refuses it past the byte limit.
    pub fn file(
        &mut self,
        segments: &[String],
        executable: bool,
        declared: u64,
        content: &mut dyn Read,
    ) -> Result<(), ArchiveError> {
        if declared > self.remaining() {
            return Err(ArchiveError::TooLarge {
                limit: self.limits.max_unpacked_bytes,
            });
        }
        let path = self.claim(segments, EntryKind::File)?;
        self.create_dirs(&segments[..segments.len() - 1])?;
        let mode = if executable { 0o555 } else { 0o444 };
        let mut file = match self.writer {
            Some(_) => None,
            None => {
                let target = self.dest.join(&path);
                let file = self.beneath.create_file(Path::new(&path), mode)?;
                Some(fs_err::File::from_parts(file, target))
            }
        };
        let mut hasher = Hasher::default();
        let mut buf = std::mem::take(&mut self.buf);
        let result = self.copy_into(&path, mode, file.as_mut(), &mut hasher, &mut buf, content);
        self.buf = buf;
        result?;
        let size = hasher.bytes;
        self.bytes += size;
        self.files.push(TreeFile {
            path,
            executable,
            sha256: hasher.finish(),
            size,
        });
        if self.files.len() == 2 {
            // Mid-extraction means files on disk: what is queued for the writer goes first.
            if let Some(w) = &self.writer {
                w.flush()?;
            }
            crate::testhook::point(crate::testhook::MID_EXTRACTION);
        }
        Ok(())
    }

    /// Copies `content` into `file`, or, with a writer thread, into chunks sent to it: a file
    /// that fits in one chunk as one operation.
    fn copy_into(
        &self,
        path: &str,
        mode: u32,
        mut file: Option<&mut fs_err::File>,
        hasher: &mut Hasher,
        buf: &mut [u8],
        content: &mut dyn Read,
    ) -> Result<(), ArchiveError> {
        let mut limited = content.take(self.remaining() + 1);
        // With a writer: the first chunk is held until it is known whether more follow.
        let mut held: Option<Vec<u8>> = None;
        let mut opened = false;
        loop {
            let n = limited.read(buf).map_err(|e| ArchiveError::Corrupt {
                format: self.format,
                reason: format!("entry `{}` cannot be read: {e}", path.escape_debug()),
            })?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            if self.bytes + hasher.bytes > self.limits.max_unpacked_bytes {
                return Err(ArchiveError::TooLarge {
                    limit: self.limits.max_unpacked_bytes,
                });
            }
            match (&mut file, &self.writer) {
                (Some(f), _) => f.write_all(&buf[..n])?,
                (None, Some(w)) => {
                    // A chunk the writer gave back, refilled (copied, never zeroed).
                    let mut chunk = w.spare.try_recv().unwrap_or_default();
                    chunk.clear();
                    chunk.extend_from_slice(&buf[..n]);
                    match (opened, held.take()) {
                        (false, None) => held = Some(chunk),
                        (false, Some(first)) => {
                            self.send(Op::File {
                                path: path.to_string(),
                                mode,
                                first,
                            })?;
                            self.send(Op::Data(chunk))?;
                            opened = true;
                        }
                        (true, _) => self.send(Op::Data(chunk))?,
                    }
                }
                (None, None) => unreachable!("a file goes to the writer or to a handle"),
            }
        }
        match (self.writer.is_some() && file.is_none(), opened) {
            (true, false) => self.send(Op::Whole {
                path: path.to_string(),
                mode,
                data: held.unwrap_or_default(),
            }),
            (true, true) => self.send(Op::End),
            (false, _) => Ok(()),
        }
    }

    /// The extracted root (stripping a single top-level directory shared by every entry) and
    /// the files relative to it.
    pub fn finish(self) -> Result<(PathBuf, Vec<TreeFile>), ArchiveError> {
        let tops: Vec<&(String, EntryKind)> = self.seen.values().filter(|(p, _)| !p.contains('/')).collect();
        if tops.is_empty() {
            return Err(ArchiveError::Empty);
        }
        let mut files = self.files;
        if let [(top, EntryKind::Dir)] = tops.as_slice() {
            let prefix = format!("{top}/");
            for f in &mut files {
                f.path = f.path.strip_prefix(&prefix).unwrap_or(&f.path).to_string();
            }
            return Ok((self.dest.join(top), files));
        }
        Ok((self.dest.to_path_buf(), files))
    }
}

/// The characters besides `:`, `\\` and `/` that Windows allows in no file name.
const WINDOWS_FORBIDDEN: &str = "*?\"<>|";

/// The key under which two names collide on a case-insensitive or normalizing filesystem
/// (macOS, Windows): lower case, Unicode NFC.
pub(super) fn fold(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    // ASCII is its own NFC form, and its lower case is ASCII's.
    if name.is_ascii() {
        return name.to_ascii_lowercase();
    }
    name.nfc().collect::<String>().to_lowercase()
}

/// Only the executable bit of a mode is kept.
pub fn is_executable(mode: u32) -> bool {
    mode & 0o111 != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_names() {
        assert_eq!(
            entry_segments(b"a2c-1.0.0/rules/x.md").unwrap(),
            ["a2c-1.0.0", "rules", "x.md"]
        );
        assert_eq!(entry_segments(b"./rules/").unwrap(), ["rules"]);
    }

    #[test]
    fn refuses_hostile_names() {
        for (raw, why) in [
            (&b"/etc/passwd"[..], "absolute"),
            (b"../x", "traversal"),
            (b"a/../../x", "traversal"),
            (b"a/..", "traversal"),
            (b"C:/x", "drive"),
            (b"c:x", "drive"),
            (b"\\\\server\\share", "backslash"),
            (b"a\\b", "backslash"),
            (b"a\0b", "NUL"),
            (b"a\x07b", "control"),
            (b"a*b.md", "Windows allows in no file name"),
            (b"dir/what?.md", "Windows allows in no file name"),
            (b"\"quoted\".md", "Windows allows in no file name"),
            (b"a<b>.md", "Windows allows in no file name"),
            (b"pipe|d.md", "Windows allows in no file name"),
            (b"CON", "device"),
            (b"dir/nul.txt", "device"),
            (b"COM1", "device"),
            (b"LPT9.md", "device"),
            (b"a./b", "dot or space"),
            (b"a /b", "dot or space"),
            (b"a//b", "empty"),
            (b"a/./b", "`.`"),
            (b".git/config", ".git"),
            (b"top/.a2c-receipt.json", "receipt"),
            (b"\xff\xfe", "UTF-8"),
            (b"", "empty"),
            (b"./", "empty"),
        ] {
            let e = entry_segments(raw).unwrap_err().to_string();
            assert!(e.contains(why), "{raw:?}: {e}");
        }
        // 255 UTF-16 units is the most a name holds (`é` is one unit, two UTF-8 bytes).
        assert!(entry_segments("é".repeat(255).as_bytes()).is_ok());
        let e = entry_segments("é".repeat(256).as_bytes()).unwrap_err().to_string();
        assert!(e.contains("256 UTF-16 units"), "{e}");
    }
}
