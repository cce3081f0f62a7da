//! The workspace snapshot: what a superbuild's members were, and the identity of every file and
//! directory that decided it, kept in the store (`<store>/.workspace-snapshot`) by the install
//! that last did the full walk. A later run re-checks those identities — one `fstatat` each,
//! relative to a handle on W, never following a link — and, when every one still matches, takes
//! its members from the snapshot instead of walking W and reading every record again: a no-op
//! install and `doctor` then cost one `stat` per recorded path.
//!
//! What a snapshot records, relative to W:
//! - every directory the member walk listed (an entry added, removed or renamed moves its
//!   modification time), and every directory the walk considered a candidate;
//! - per member: its directory (its `.git`, `.tools`, `.tools_local` and `.a2c` entries), its
//!   tool state root `.tools/esys/a2c` (a marker or record added, removed or renamed there; a
//!   link swapped in for it, since it is taken no-follow), the adoption record, the local
//!   pointer, and the migration journal's path (absent);
//! - per git repository that is no member: its `.tools/esys/a2c` (absent);
//! - W's marker and lock, each nested superbuild's marker, and per installed version its store
//!   directory and receipt.
//!
//! What it does not see: a link swapped in for `.tools/esys` or `.tools_local/esys` (one level
//! above what it records) that leads to the very same directory. Nothing is read or written
//! through it on the snapshot's path — the record's text is the snapshot's, the pointer is not
//! rewritten — and every command that writes there checks each component as it always did.
//!
//! The file is text, one line per thing: a header (format, a2c's version, W); per member a
//! `member` line (what its record said) followed by an `ids` line holding the identities of its
//! paths in a fixed order (`MEMBER_PATHS`) — so that a snapshot cannot vouch for a member
//! without recording each of them, and each member is checked relative to its parent
//! directory's handle, five `fstatat` of short paths; then the other paths, one per line.
//!
//! Identity is the object's kind, device, inode, size, and modification and change times to
//! the nanosecond. The change time cannot be set back by anyone but the kernel, so an edit that
//! keeps the size and resets the modification time (`touch -d`) still moves it.
//!
//! It is trusted only when it can be: it is written only for a superbuild whose every member
//! has one canonical tool state root, a valid record, no interrupted migration and a real `.git`
//! directory; and, as git's racy-index rule, never over a path changed less than
//! [`RACY_MARGIN`] before the run that would write it began (a file changed again within the
//! file system's timestamp granularity after it was recorded would keep its times). Any
//! mismatch, any path that cannot be checked, another a2c, another format, another W: the full
//! walk runs, and writes a new snapshot when it may.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::adoption::{AdoptionRecord, Delivery};
use super::member::Member;
use super::state_root::{CANONICAL_ROOT, ToolStateRoot};
use crate::util::version::MethodVersion;

/// The file's first line: the format and its version.
const FORMAT: &str = "a2c-workspace-snapshot 2";

/// How long before a run began a path must have last changed for the snapshot that run writes
/// to record it (well above any Linux file system's timestamp granularity, and a FAT's 2 s
/// modification time is not relied on: the change time is compared too).
pub const RACY_MARGIN: Duration = Duration::from_secs(1);

/// The paths below a member that a snapshot records (with the member's directory and the
/// migration journal's path).
const RECORD: &str = ".tools/esys/a2c/adoption.yaml";
const MARKER: &str = ".tools/esys/a2c/workspace.yaml";
const POINTER: &str = ".tools_local/esys/a2c/workspace.yaml";
const JOURNAL: &str = ".git/a2c-migrate.json";

/// What a snapshot records of each member, in this order, relative to the member's directory
/// (`""`: the directory itself): its directory, its tool state root, its adoption record, its
/// local pointer, and the path of an interrupted migration's journal (absent).
const MEMBER_PATHS: [&str; 5] = ["", CANONICAL_ROOT, RECORD, POINTER, JOURNAL];
/// What it records of W as a member: W itself and W's pointer are not its (W's directory is a
/// walked one, recorded as such; its store is where a snapshot lives).
const ROOT_MEMBER_PATHS: [&str; 3] = [CANONICAL_ROOT, RECORD, JOURNAL];

/// The paths recorded of the member `relative`, in the order of its identities.
fn member_paths(relative: &str) -> &'static [&'static str] {
    match relative {
        "." => &ROOT_MEMBER_PATHS,
        _ => &MEMBER_PATHS,
    }
}

/// What a path was: absent, or an object of a kind with its identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// `-` absent, `f` file, `d` directory, `l` link, `o` anything else.
    kind: char,
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, u32),
    ctime: (i64, u32),
}

impl Identity {
    const ABSENT: Self = Self {
        kind: '-',
        dev: 0,
        ino: 0,
        size: 0,
        mtime: (0, 0),
        ctime: (0, 0),
    };

    /// The identity of `rel` under the directory handle `dir`, its last component not followed.
    fn at(dir: impl std::os::fd::AsFd, rel: &str) -> io::Result<Self> {
        use rustix::fs::{AtFlags, statat};
        match statat(dir, rel, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Self::of(&st)),
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => Ok(Self::ABSENT),
            Err(e) => Err(e.into()),
        }
    }

    /// The directory `rel` under `dir`, opened without following a link, and its identity;
    /// `None` when it is no directory (or a link) now.
    fn open_dir(dir: impl std::os::fd::AsFd, rel: &str) -> io::Result<Option<(std::os::fd::OwnedFd, Self)>> {
        use rustix::fs::{Mode, OFlags, fstat, openat};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match openat(dir, rel, flags, Mode::empty()) {
            Ok(fd) => {
                let id = Self::of(&fstat(&fd)?);
                Ok(Some((fd, id)))
            }
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    #[allow(
        clippy::unnecessary_cast,
        reason = "the field types of `stat` differ between Unix platforms"
    )]
    fn of(st: &rustix::fs::Stat) -> Self {
        use rustix::fs::FileType;
        let kind = match FileType::from_raw_mode(st.st_mode as _) {
            FileType::RegularFile => 'f',
            FileType::Directory => 'd',
            FileType::Symlink => 'l',
            _ => 'o',
        };
        Self {
            kind,
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: st.st_size as u64,
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as u32),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as u32),
        }
    }

    /// Changed at or after `since` (seconds, nanoseconds since the epoch)?
    fn changed_since(&self, since: (i64, u32)) -> bool {
        self.kind != '-' && (self.mtime >= since || self.ctime >= since)
    }

    /// Appends its text to `out` (written straight into the snapshot: thousands per run).
    fn write_to(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(
            out,
            "{} {} {} {} {}.{:09} {}.{:09}",
            self.kind, self.dev, self.ino, self.size, self.mtime.0, self.mtime.1, self.ctime.0, self.ctime.1
        );
    }

    #[cfg(test)]
    fn text(&self) -> String {
        let mut out = String::new();
        self.write_to(&mut out);
        out
    }

    #[cfg(test)]
    fn line(&self, rel: &str) -> String {
        format!("{}\t{rel}", self.text())
    }

    /// What [`Identity::text`] wrote, and nothing else (`None`: the snapshot is not used). A
    /// member's five are parsed for each of thousands of members on every no-op run: the
    /// bytes are read in one pass, each number as its digits go by (splitting the fields
    /// first, then parsing each, took most of a worker's parsing).
    fn parse(text: &[u8]) -> Option<Self> {
        let kind = match text {
            [k @ (b'-' | b'f' | b'd' | b'l' | b'o'), b' ', ..] => char::from(*k),
            _ => return None,
        };
        let mut at = Digits { text, at: 2 };
        let dev = at.number(Some(b' '))?;
        let ino = at.number(Some(b' '))?;
        let size = at.number(Some(b' '))?;
        let mtime = at.time(Some(b' '))?;
        let ctime = at.time(None)?;
        Some(Self {
            kind,
            dev,
            ino,
            size,
            mtime,
            ctime,
        })
    }
}

/// Reads the numbers of an identity's text in one pass.
struct Digits<'a> {
    text: &'a [u8],
    at: usize,
}

impl Digits<'_> {
    /// One to twenty ASCII digits forming a `u64`, then `stop` (passed over), or the text's
    /// end when `stop` is `None`; nothing else.
    fn number(&mut self, stop: Option<u8>) -> Option<u64> {
        let rest = &self.text[self.at..];
        let mut n: u64 = 0;
        let mut len = 0;
        for &b in rest {
            if Some(b) == stop {
                break;
            }
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            len += 1;
            // Nineteen digits never overflow a u64; a twentieth may.
            n = match len {
                ..=19 => n * 10 + u64::from(d),
                20 => n.checked_mul(10)?.checked_add(u64::from(d))?,
                _ => return None,
            };
        }
        match (len, rest.get(len)) {
            (0, _) => None,
            (_, Some(_)) => {
                self.at += len + 1;
                Some(n)
            }
            (_, None) if stop.is_none() => {
                self.at += len;
                Some(n)
            }
            (_, None) => None,
        }
    }

    /// A time as a snapshot writes it: seconds (a `-` before them when before 1970), a dot,
    /// and the nanoseconds; then `stop` as [`Digits::number`] reads it.
    fn time(&mut self, stop: Option<u8>) -> Option<(i64, u32)> {
        let negative = self.text.get(self.at) == Some(&b'-');
        self.at += usize::from(negative);
        let seconds = i64::try_from(self.number(Some(b'.'))?).ok()?;
        let seconds = if negative { seconds.checked_neg()? } else { seconds };
        Some((seconds, u32::try_from(self.number(stop)?).ok()?))
    }
}

/// A decimal number as a snapshot writes it: one to twenty ASCII digits, nothing else.
fn decimal(digits: &[u8]) -> Option<u64> {
    Digits { text: digits, at: 0 }.number(None)
}

/// How many entries below a directory make opening it worth it.
const OPEN_BELOW: usize = 5;

/// The first of `entries` (sorted by path) whose identity no longer holds. A directory with
/// entries below it is opened (no-follow) and they are checked relative to it: each path walk
/// starts at the nearest checked directory, not at W.
fn first_changed(w: &std::fs::File, entries: &[(String, Identity)]) -> Option<String> {
    use std::os::fd::AsFd;
    // Open directories: the prefix (with its `/`) and the handle; W at the bottom.
    let mut open: Vec<(String, std::os::fd::OwnedFd)> = Vec::new();
    for (i, (path, id)) in entries.iter().enumerate() {
        while open
            .last()
            .is_some_and(|(prefix, _)| !path.starts_with(prefix.as_str()))
        {
            open.pop();
        }
        let (base, rest) = match open.last() {
            Some((prefix, fd)) => (fd.as_fd(), &path[prefix.len()..]),
            None => (w.as_fd(), path.as_str()),
        };
        let below = format!("{path}/");
        // Opening costs two calls (and a close): worth it for a directory with several below.
        let worth = id.kind == 'd'
            && entries[i + 1..]
                .iter()
                .take(OPEN_BELOW)
                .filter(|(next, _)| next.starts_with(&below))
                .count()
                == OPEN_BELOW;
        if worth {
            match Identity::open_dir(base, rest) {
                Ok(Some((fd, now))) if now == *id => {
                    open.push((below, fd));
                    continue;
                }
                _ => return Some(path.clone()),
            }
        }
        if Identity::at(base, rest).map_or(true, |now| now != *id) {
            return Some(path.clone());
        }
    }
    None
}

/// `body` cut into about `n` pieces, each but the first starting at a `member ` line (a
/// member's block is never split from its identities).
fn body_chunks(body: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    let step = body.len().div_ceil(n.max(1)).max(1);
    while start < body.len() {
        let mut target = (start + step).min(body.len());
        while !body.is_char_boundary(target) {
            target += 1;
        }
        let cut = match body[target..].find("\nmember ") {
            Some(i) if target < body.len() => target + i + 1,
            _ => body.len(),
        };
        out.push(&body[start..cut]);
        start = cut;
    }
    out
}

/// Checks members' recorded paths one member after another, each relative to its parent
/// directory (opened once for the members it holds, its last component not followed: it is
/// itself a recorded path), not from W.
struct MemberCheck<'w, 'a> {
    w: &'w std::fs::File,
    parent: Option<(&'a str, std::os::fd::OwnedFd)>,
    path: String,
}

impl<'w, 'a> MemberCheck<'w, 'a> {
    fn new(w: &'w std::fs::File) -> Self {
        Self {
            w,
            parent: None,
            path: String::new(),
        }
    }

    /// The first path recorded of the member `relative` (`ids`: those of [`member_paths`])
    /// whose identity no longer holds.
    fn first_changed(&mut self, relative: &'a str, ids: &[Identity]) -> Option<String> {
        use std::os::fd::AsFd;
        let (up, name) = match relative.rsplit_once('/') {
            Some((up, name)) => (Some(up), name),
            None if relative == "." => (None, ""),
            None => (None, relative),
        };
        if let Some(up) = up
            && self.parent.as_ref().is_none_or(|(open, _)| *open != up)
        {
            match Identity::open_dir(self.w, up) {
                Ok(Some((fd, _))) => self.parent = Some((up, fd)),
                _ => return Some(up.to_string()),
            }
        }
        let base = match (up, &self.parent) {
            (Some(_), Some((_, fd))) => fd.as_fd(),
            _ => self.w.as_fd(),
        };
        for (p, id) in member_paths(relative).iter().zip(ids) {
            let path = &mut self.path;
            path.clear();
            path.push_str(name);
            if !p.is_empty() {
                if !name.is_empty() {
                    path.push('/');
                }
                path.push_str(p);
            }
            if Identity::at(base, path).map_or(true, |now| now != *id) {
                return Some(match *p {
                    "" => relative.to_string(),
                    p => under(relative, p),
                });
            }
        }
        None
    }
}

/// A plain relative path below W: no root, no `..`, no `.` before or between its names.
fn plain(p: &str) -> bool {
    !p.is_empty()
        && Path::new(p)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// One member's block as a snapshot's text holds it.
struct Block<'a> {
    relative: &'a str,
    schema_version: u32,
    version: MethodVersion,
    method_ref: Option<&'a str>,
    delivery: Option<Delivery>,
    /// The identities of [`member_paths`], in that order (`n` of them).
    ids: [Identity; MEMBER_PATHS.len()],
    n: usize,
}

impl Block<'_> {
    fn ids(&self) -> &[Identity] {
        &self.ids[..self.n]
    }

    /// The [`Member`] the walk would read of it, in W (`root`).
    fn member(&self, root: &Path) -> Member {
        let path = match self.relative {
            "." => root.to_path_buf(),
            r => crate::util::paths::join_exact(root, r),
        };
        Member {
            state: Some(ToolStateRoot::canonical_with_record(&path)),
            refused: None,
            record: Ok(AdoptionRecord {
                schema_version: self.schema_version,
                tool_version: self.version.clone(),
                method_ref: self.method_ref.map(str::to_string),
                delivery: self.delivery,
            }),
            other_version: None,
            pending: None,
            relative: self.relative.to_string(),
            path,
        }
    }
}

/// What a snapshot's body records: member blocks, handed to `member` as they are read, nested
/// superbuilds and other paths. Malformed text is refused.
fn parse_body<'a>(
    body: &'a str,
    nested: &mut Vec<String>,
    entries: &mut Vec<(String, Identity)>,
    mut member: impl FnMut(Block<'a>) -> Result<(), Why>,
) -> Result<(), Why> {
    let malformed = || Why::from("written by another a2c or malformed");
    // The few versions a superbuild pins, each parsed once (a bound keeps a snapshot pinning
    // thousands from costing a scan each).
    let mut versions: Vec<(&str, MethodVersion)> = Vec::new();
    let mut lines = body.lines();
    while let Some(line) = lines.next() {
        let (head, path) = line.split_once('\t').ok_or_else(malformed)?;
        if let Some(rest) = head.strip_prefix("member ") {
            // A ref may hold spaces: it is the rest of the line before the tab.
            let mut it = rest.splitn(4, ' ');
            let mut field = || it.next().ok_or_else(malformed);
            let schema_version =
                u32::try_from(decimal(field()?.as_bytes()).ok_or_else(malformed)?).map_err(|_| malformed())?;
            let text = field()?;
            let version = match versions.iter().find(|(t, _)| *t == text) {
                Some((_, v)) => v.clone(),
                None => {
                    let v: MethodVersion = text.parse().map_err(|_| malformed())?;
                    if versions.len() < 16 {
                        versions.push((text, v.clone()));
                    }
                    v
                }
            };
            let delivery = match field()? {
                "-" => None,
                d => Some(d.parse().map_err(|_| malformed())?),
            };
            let method_ref = match field()? {
                "-" => None,
                r => Some(r.strip_prefix('=').ok_or_else(malformed)?),
            };
            // Its identities, on the next line: exactly one per path recorded of it.
            let ids_line = lines
                .next()
                .and_then(|l| l.strip_prefix("ids "))
                .ok_or_else(malformed)?;
            let mut block = Block {
                relative: path,
                schema_version,
                version,
                method_ref,
                delivery,
                ids: [Identity::ABSENT; MEMBER_PATHS.len()],
                n: 0,
            };
            for id in ids_line.as_bytes().split(|b| *b == b',') {
                let slot = block.ids.get_mut(block.n).ok_or_else(malformed)?;
                *slot = Identity::parse(id).ok_or_else(malformed)?;
                block.n += 1;
            }
            if block.n != member_paths(path).len() {
                return Err(malformed());
            }
            member(block)?;
        } else if head == "nested" {
            nested.push(path.to_string());
        } else {
            entries.push((
                path.to_string(),
                Identity::parse(head.as_bytes()).ok_or_else(malformed)?,
            ));
        }
    }
    Ok(())
}

/// What one worker found of its piece of a snapshot.
#[derive(Default)]
struct Piece {
    members: Vec<Member>,
    nested: Vec<String>,
    entries: Vec<(String, Identity)>,
    paths: usize,
    changed: Option<String>,
}

impl Piece {
    /// Parses `text` (a piece of a snapshot's body) and checks every identity it records, each
    /// path checked to be a plain one below W before it is looked at; builds the members of
    /// W (`root`, open as `w`) while they hold.
    fn check(w: &std::fs::File, root: &Path, text: &str) -> Result<Self, Why> {
        let mut piece = Self::default();
        // Sized once: growing a list of thousands of members copies it into fresh pages.
        let blocks = text.matches("\nmember ").count() + usize::from(text.starts_with("member "));
        let (mut members, mut changed, mut paths) = (Vec::with_capacity(blocks), None, 0);
        let mut check = MemberCheck::new(w);
        parse_body(text, &mut piece.nested, &mut piece.entries, |block| {
            if block.relative != "." && !plain(block.relative) {
                return Err(format!(
                    "it names the member `{}`, no plain path below W",
                    block.relative
                ));
            }
            paths += block.n;
            if changed.is_none() {
                changed = check.first_changed(block.relative, block.ids());
            }
            // Nothing is built past a change: the snapshot is not used.
            if changed.is_none() {
                members.push(block.member(root));
            }
            Ok(())
        })?;
        if let Some((bad, _)) = piece.entries.iter().find(|(p, _)| p != "." && !plain(p)) {
            return Err(format!("it names `{bad}`, no plain path below W"));
        }
        if let Some(n) = piece.nested.iter().find(|n| !plain(n)) {
            return Err(format!("it names the nested superbuild `{n}`, no plain path below W"));
        }
        piece.changed = changed.or_else(|| first_changed(w, &piece.entries));
        piece.paths = paths + piece.entries.len();
        piece.members = members;
        Ok(piece)
    }
}

/// What a snapshot that still holds gives besides its members: the nested superbuilds and
/// how many paths vouched.
#[derive(Debug)]
pub struct Vouched {
    root: PathBuf,
    nested: Vec<String>,
    paths: usize,
}

impl Vouched {
    /// The nested superbuilds the walk found below W, absolute.
    pub fn nested(&self) -> Vec<PathBuf> {
        self.nested.iter().map(|n| self.root.join(n)).collect()
    }

    /// How many paths it checked.
    pub fn len(&self) -> usize {
        self.paths
    }

    pub fn is_empty(&self) -> bool {
        self.paths == 0
    }
}

/// A member as a snapshot keeps it: enough to give back the [`Member`] the walk would read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Recorded {
    relative: String,
    schema_version: u32,
    version: MethodVersion,
    method_ref: Option<String>,
    delivery: Option<Delivery>,
    /// The identities of [`member_paths`], in that order.
    ids: Vec<Identity>,
}

impl Recorded {
    #[cfg(test)]
    fn of(block: &Block<'_>) -> Self {
        Self {
            relative: block.relative.to_string(),
            schema_version: block.schema_version,
            version: block.version.clone(),
            method_ref: block.method_ref.map(str::to_string),
            delivery: block.delivery,
            ids: block.ids().to_vec(),
        }
    }
}

/// The identity of `rel` under W (`dir`) to record, unless it changed at or after `since`.
fn recorded_identity(dir: &std::fs::File, rel: &str, since: (i64, u32)) -> Result<Identity, Why> {
    let id = Identity::at(dir, rel).map_err(|e| format!("cannot check `{rel}`: {e}"))?;
    if id.changed_since(since) {
        return Err(format!("`{rel}` changed too recently to be trusted (racy)"));
    }
    Ok(id)
}

/// A snapshot: the members it vouches for, and the identities that vouch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    root: PathBuf,
    members: Vec<Recorded>,
    nested: Vec<String>,
    entries: Vec<(String, Identity)>,
}

/// Why a snapshot was not used or not written (for `-v`).
pub type Why = String;

fn relative(root: &Path, path: &Path) -> Option<String> {
    // Exactly the name on disk: a name that is not UTF-8 would be recorded as another one
    // (and then checked as absent, forever), so it is never recorded at all.
    path.strip_prefix(root).ok()?.to_str()?;
    let rel = crate::util::paths::relative_slash(root, path)?;
    // One line per entry, a tab before the path: a name holding either is never recorded.
    (!rel.contains(['\n', '\t', '\r'])).then_some(rel)
}

fn under(member: &str, rel: &str) -> String {
    match member {
        "." => rel.to_string(),
        m => format!("{m}/{rel}"),
    }
}

impl Snapshot {
    /// The path of the snapshot of the store rooted at `store_root`.
    pub fn path(store_root: &Path) -> PathBuf {
        store_root.join(crate::store::layout::SNAPSHOT_FILE)
    }

    /// Takes the snapshot of `members` of W (`root`) as the walk just read them (`seen`: what it
    /// listed), with the files of W and of the store that decided an install: `lock`, and per
    /// installed version its directory and receipt. `began`: when the run began (paths changed
    /// since, less [`RACY_MARGIN`], are not recorded: no snapshot then). `Err(why)` when the
    /// workspace is not one a snapshot may describe.
    pub fn take(
        root: &Path,
        members: &[Member],
        seen: &super::member::Seen,
        lock: &Path,
        store: &crate::store::Store,
        versions: &[MethodVersion],
        began: SystemTime,
    ) -> Result<Self, Why> {
        let dir = std::fs::File::open(root).map_err(|e| format!("cannot open `{}`: {e}", root.display()))?;
        let mut paths: Vec<String> = Vec::new();
        let rel = |p: &Path| relative(root, p).ok_or_else(|| format!("`{}` cannot be recorded", p.display()));
        for d in &seen.walked {
            paths.push(rel(d)?);
        }
        let since = began
            .checked_sub(RACY_MARGIN)
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| (d.as_secs() as i64, d.subsec_nanos()))
            .unwrap_or((i64::MAX, 0));
        // The members' own paths, as the walk built them: compared as bytes, not by component.
        let member_dirs: std::collections::HashSet<&std::ffi::OsStr> =
            members.iter().map(|m| m.path.as_os_str()).collect();
        // Each member's identities are its own: taken in parallel, kept in member order (the
        // first member that cannot be recorded is the one named).
        let jobs = crate::util::parallel::metadata_jobs();
        let recorded = crate::util::parallel::run_parallel(members, jobs, |m| {
            let relative = match m.path == root {
                true => ".".to_string(),
                false => rel(&m.path)?,
            };
            let r = relative.as_str();
            let record = match (&m.state, &m.record, &m.pending, &m.refused, &m.other_version) {
                (Some(s), Ok(record), None, None, None)
                    if s.layout == super::Layout::Canonical && !s.both_present && s.other_record.is_none() =>
                {
                    record
                }
                _ => {
                    return Err(format!(
                        "the member `{r}` is not plain (one canonical root, a valid record)"
                    ));
                }
            };
            if !std::fs::symlink_metadata(m.path.join(".git")).is_ok_and(|md| md.is_dir()) {
                return Err(format!("the member `{r}` has no `.git` directory"));
            }
            let mut ids = Vec::with_capacity(MEMBER_PATHS.len());
            for p in member_paths(r) {
                let path = match *p {
                    "" => r.to_string(),
                    p => under(r, p),
                };
                ids.push(recorded_identity(&dir, &path, since)?);
            }
            Ok(Recorded {
                relative: r.to_string(),
                schema_version: record.schema_version,
                version: record.tool_version.clone(),
                method_ref: record.method_ref.clone(),
                delivery: record.delivery,
                ids,
            })
        });
        let recorded = recorded.into_iter().collect::<Result<Vec<_>, Why>>()?;
        for (candidate, git) in &seen.candidates {
            if member_dirs.contains(candidate.as_os_str()) {
                continue;
            }
            let r = rel(candidate)?;
            if *git {
                paths.push(under(&r, CANONICAL_ROOT));
            }
            paths.push(r);
        }
        paths.push(rel(&root.join(super::marker::MARKER_PATH))?);
        paths.push(rel(lock)?);
        for v in versions {
            let vdir = store.version_dir(v);
            paths.push(rel(&vdir)?);
            paths.push(rel(&vdir.join(crate::archive::RECEIPT_FILE))?);
        }
        paths.sort();
        paths.dedup();
        let mut entries = Vec::with_capacity(paths.len());
        for p in paths {
            let id = recorded_identity(&dir, &p, since)?;
            entries.push((p, id));
        }
        let nested = seen.nested.iter().map(|n| rel(n)).collect::<Result<Vec<_>, _>>()?;
        // A nested superbuild is not walked: its marker going away would make it walkable.
        for n in &nested {
            let marker = under(n, MARKER);
            let id = recorded_identity(&dir, &marker, since)?;
            entries.push((marker, id));
        }
        Ok(Self {
            root: root.to_path_buf(),
            members: recorded,
            nested,
            entries,
        })
    }

    /// The file's text.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        // About 310 bytes a member: written in place, not a string per field.
        let mut out = String::with_capacity(256 + 320 * self.members.len() + 80 * self.entries.len());
        let _ = write!(
            out,
            "{FORMAT}\na2c {}\nroot {}\n",
            crate::A2C_VERSION,
            self.root.display()
        );
        for m in &self.members {
            let _ = write!(
                out,
                "member {} {} {} ",
                m.schema_version,
                m.version,
                m.delivery.map_or("-", |d| d.as_str())
            );
            match &m.method_ref {
                Some(r) => {
                    out.push('=');
                    out.push_str(r);
                }
                None => out.push('-'),
            }
            out.push('\t');
            out.push_str(&m.relative);
            out.push_str("\nids ");
            for (i, id) in m.ids.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                id.write_to(&mut out);
            }
            out.push('\n');
        }
        for n in &self.nested {
            out.push_str("nested\t");
            out.push_str(n);
            out.push('\n');
        }
        for (p, id) in &self.entries {
            id.write_to(&mut out);
            out.push('\t');
            out.push_str(p);
            out.push('\n');
        }
        out
    }

    /// Parses a snapshot's text; `None` for another format, another a2c, anything malformed.
    #[cfg(test)]
    fn parse(text: &str) -> Option<Self> {
        let (root, body) = Self::parse_header(text)?;
        let (mut members, mut nested, mut entries) = (Vec::new(), Vec::new(), Vec::new());
        parse_body(body, &mut nested, &mut entries, |block| {
            members.push(Recorded::of(&block));
            Ok(())
        })
        .ok()?;
        Some(Self {
            root,
            members,
            nested,
            entries,
        })
    }

    /// The header's W and the rest of the text; `None` for another format or another a2c.
    fn parse_header(text: &str) -> Option<(PathBuf, &str)> {
        let mut rest = text;
        let mut line = || {
            let (l, r) = rest.split_once('\n')?;
            rest = r;
            Some(l)
        };
        if line()? != FORMAT || line()? != format!("a2c {}", crate::A2C_VERSION) {
            return None;
        }
        let root = PathBuf::from(line()?.strip_prefix("root ")?);
        Some((root, rest))
    }

    /// The members of W (`root`) that the snapshot kept in the store at `store_root` vouches
    /// for, when every identity it records still holds (and what else it gives); else why not.
    pub fn load_valid(root: &Path, store_root: &Path) -> Result<(Vouched, Vec<Member>), Why> {
        // Never through a link: the store's components are checked below W first.
        let path = Self::path(store_root);
        match path
            .strip_prefix(root)
            .map(|rel| crate::util::contain::check(root, rel))
        {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => return Err("no snapshot yet".into()),
            Ok(Err(e)) => return Err(format!("refused: {e}")),
            Err(_) => return Err("the store is not below W".into()),
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err("no snapshot yet".into()),
            Err(e) => return Err(format!("unreadable: {e}")),
        };
        let (recorded_root, body) = Self::parse_header(&text).ok_or("written by another a2c or malformed")?;
        if recorded_root != root {
            return Err(format!("taken for another W (`{}`)", recorded_root.display()));
        }
        let dir = std::fs::File::open(root).map_err(|e| format!("cannot open `{}`: {e}", root.display()))?;
        // The body in pieces, each starting at a member's line: every worker parses its own,
        // checks what it parsed as it goes and builds the members it holds, in parallel.
        let jobs = crate::util::parallel::metadata_jobs().max(1);
        let chunks = body_chunks(body, jobs * 2);
        let parts = crate::util::parallel::run_parallel(&chunks, jobs, |chunk| Piece::check(&dir, root, chunk));
        let mut vouched = Vouched {
            root: recorded_root,
            nested: Vec::new(),
            paths: 0,
        };
        let mut parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
        // The first piece's list grows in place to hold them all; the others are moved in.
        let total: usize = parts.iter().map(|p| p.members.len()).sum();
        let mut members = parts
            .first_mut()
            .map(|p| std::mem::take(&mut p.members))
            .unwrap_or_default();
        members.reserve_exact(total - members.len());
        let (mut entries, mut changed) = (Vec::new(), None);
        for part in parts {
            changed = changed.or(part.changed);
            members.extend(part.members);
            vouched.nested.extend(part.nested);
            entries.extend(part.entries);
            vouched.paths += part.paths;
        }
        complete(&entries, &vouched.nested)?;
        if let Some(p) = changed {
            return Err(format!("`{p}` changed"));
        }
        Ok((vouched, members))
    }

    /// How many paths it records.
    pub fn len(&self) -> usize {
        self.entries.len() + self.members.iter().map(|m| m.ids.len()).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whether a snapshot records every path it must for what it vouches for: per member, each
/// path [`Snapshot::take`] records (each member's block holds them: the parser sees to it);
/// W's marker and lock; each nested superbuild's marker. A snapshot that vouches for more than
/// it records (a forged one, with no entries to check) is refused.
fn complete(entries: &[(String, Identity)], nested: &[String]) -> Result<(), Why> {
    let recorded: std::collections::HashSet<&str> = entries.iter().map(|(p, _)| p.as_str()).collect();
    let mut required: Vec<String> = vec![
        super::marker::MARKER_PATH.to_string(),
        format!("{CANONICAL_ROOT}/{}", crate::lock::LOCK_FILE),
    ];
    required.extend(nested.iter().map(|n| under(n, MARKER)));
    match required.iter().find(|p| !recorded.contains(p.as_str())) {
        Some(missing) => Err(format!("it does not record `{missing}`")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_line_is_the_listed_one() {
        let f = crate::util::formats::SNAPSHOT;
        assert_eq!(FORMAT, format!("{} {}", f.key, f.newest));
    }

    #[test]
    fn an_identity_reads_back_exactly_what_was_written_and_nothing_else() {
        let before_1970 = Identity {
            kind: 'l',
            dev: u64::MAX,
            ino: 0,
            size: 1,
            mtime: (-86_400, 0),
            ctime: (0, 999_999_999),
        };
        for id in [before_1970, Identity::ABSENT] {
            assert_eq!(Identity::parse(id.text().as_bytes()), Some(id), "{}", id.text());
        }
        for bad in [
            "",
            "f",
            "x 1 2 3 4.5 6.7",                    // no such kind
            "ff 1 2 3 4.5 6.7",                   // one letter
            "f +1 2 3 4.5 6.7",                   // FromStr takes a `+`; the writer never writes one
            "f 1 2 3 4.5 6.7 8",                  // one field too many
            "f 1 2 3 4.5 6",                      // no nanoseconds
            "f 1 2 3 4.5 6.",                     // empty nanoseconds
            "f 1  3 4.5 6.7",                     // an empty field
            "f 1 2 3 4.5 6.4294967296",           // nanoseconds past u32
            "f 18446744073709551616 2 3 4.5 6.7", // past u64
            "f 1 2 3 --4.5 6.7",
            "f 1 2 3 9223372036854775808.0 6.7", // past i64
            "f 1 2 3 4.5 6.7\t",
            "f 1 2 3 4.5 ６.7", // not ASCII digits
        ] {
            assert_eq!(Identity::parse(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn an_identity_line_reads_back_and_a_foreign_file_is_refused() {
        let id = Identity {
            kind: 'f',
            dev: 2049,
            ino: 77,
            size: 128,
            mtime: (1_764_000_000, 5),
            ctime: (1_764_000_001, 999_999_999),
        };
        let line = id.line("products/p 1/.tools/esys/a2c/adoption.yaml");
        let (head, path) = line.split_once('\t').unwrap();
        assert_eq!(Identity::parse(head.as_bytes()), Some(id));
        assert_eq!(path, "products/p 1/.tools/esys/a2c/adoption.yaml");
        let s = Snapshot {
            root: "/w".into(),
            members: vec![Recorded {
                relative: "p/a b".into(),
                schema_version: 2,
                version: "1.2.3".parse().unwrap(),
                method_ref: Some("v1.2.3 extra".into()),
                delivery: Some(Delivery::Clone),
                ids: vec![id, Identity::ABSENT, id, id, Identity::ABSENT],
            }],
            nested: vec!["n".into()],
            entries: vec![("p".into(), id), ("q".into(), Identity::ABSENT)],
        };
        assert_eq!(Snapshot::parse(&s.render()), Some(s.clone()));
        let other = s.render().replacen(crate::A2C_VERSION, "0.0.0-other", 1);
        assert_eq!(Snapshot::parse(&other), None);
        // A member's block holds one identity per path recorded of it, no fewer.
        let short = s.render().replacen(",- 0 0 0 0.000000000 0.000000000\n", "\n", 1);
        assert_ne!(short, s.render());
        assert_eq!(Snapshot::parse(&short), None);
    }

    #[test]
    fn the_body_is_cut_only_before_a_members_line() {
        let body: String = (0..40)
            .map(|i| format!("member 2 1.0.0 package -\tp/café-{i}\nids f 1 2 3 4.5 6.7\n"))
            .chain(["d 1 2 3 4.5 6.7\tp\n".to_string()])
            .collect();
        for n in [1, 2, 3, 7, 100] {
            let chunks = body_chunks(&body, n);
            assert_eq!(chunks.concat(), body, "{n}");
            assert!(chunks.iter().all(|c| c.starts_with("member ")), "{n}: {chunks:?}");
            assert!(chunks.len() <= n.max(1) + 1, "{n}: {}", chunks.len());
        }
    }

    #[test]
    fn the_journal_recorded_is_the_one_migrate_writes() {
        assert_eq!(JOURNAL, format!(".git/{}", super::super::journal::JOURNAL_FILE));
    }
}
