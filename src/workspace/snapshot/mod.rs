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
//! directory's handle, five `fstatat` of short paths — and, when the member's git index held
//! no path under `.tools_local` as it was taken, an `index` line with that index's identity;
//! then the other paths, one per line.
//!
//! The `index` line is not one of the paths that vouch for the members (a no-op install never
//! looks at it): `doctor`, which asks each member whether git tracks its machine-local
//! directory, takes the answer from it while the index file is the very one recorded (one
//! `fstatat` instead of reading the index and listing `.git` for a split index's other half),
//! and reads the index again when it is not.
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

mod check;
mod identity;

pub use check::HeldSnapshot;
use check::*;
pub use identity::Identity;
use identity::*;

/// The file's first line: the format and its version.
const FORMAT: &str = "a2c-workspace-snapshot 3";

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
/// A member's git index (its `index` line: see the module's doc).
const INDEX: &str = ".git/index";

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

/// A snapshot: the members it vouches for, and the identities that vouch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    root: PathBuf,
    members: Vec<Recorded>,
    nested: Vec<String>,
    entries: Vec<(String, Identity)>,
}

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
    ) -> Result<Self, String> {
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
            // The ref is written on the member's line: one holding a line break or a tab would
            // add lines (members, paths) that no walk read.
            if let Some(r) = record.method_ref.as_deref().filter(|r| r.contains(['\n', '\t', '\r'])) {
                return Err(format!("the `method_ref` {r:?} of `{}` cannot be recorded", m.relative));
            }
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
                index: (r != ".")
                    .then(|| index_without_local(&dir, r, &m.path, since))
                    .flatten(),
            })
        });
        let recorded = recorded.into_iter().collect::<Result<Vec<_>, String>>()?;
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
            if let Some(index) = &m.index {
                out.push_str("index ");
                index.write_to(&mut out);
                out.push('\n');
            }
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
    #[cfg(any(test, feature = "fuzzing"))]
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

    /// A snapshot's text, parsed and rendered again, gives the same bytes (feature `fuzzing`):
    /// what a2c reads is exactly what it writes, so no two texts vouch for the same thing.
    #[cfg(feature = "fuzzing")]
    pub fn fuzz_round_trip(data: &[u8]) {
        let Ok(text) = std::str::from_utf8(data) else { return };
        if let Some(snapshot) = Self::parse(text) {
            assert_eq!(snapshot.render(), text, "a snapshot read back differently");
        }
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
    pub fn load_valid(root: &Path, store_root: &Path) -> Result<(HeldSnapshot, Vec<Member>), String> {
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
        let mut vouched = HeldSnapshot {
            root: recorded_root,
            nested: Vec::new(),
            paths: 0,
            indexes: Vec::new(),
            w: None,
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
        vouched.indexes.reserve_exact(total);
        for part in parts {
            changed = changed.or(part.changed);
            members.extend(part.members);
            vouched.indexes.extend(part.indexes);
            vouched.nested.extend(part.nested);
            entries.extend(part.entries);
            vouched.paths += part.paths;
        }
        complete(&entries, &vouched.nested)?;
        if let Some(p) = changed {
            return Err(format!("`{p}` changed"));
        }
        vouched.w = Some(dir);
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
fn complete(entries: &[(String, Identity)], nested: &[String]) -> Result<(), String> {
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
        let before_1970 = Identity(crate::util::platform::Stat {
            kind: 'l',
            dev: u64::MAX,
            ino: 0,
            size: 1,
            mtime: (-86_400, 0),
            ctime: (0, 999_999_999),
        });
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
        // A real file's identity, as a run reads it.
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("adoption.yaml"), "schema_version: 2\n").unwrap();
        let handle = crate::util::platform::open_dir(dir.path(), false).unwrap();
        let id = Identity::at(crate::util::platform::dir_of(&handle), "adoption.yaml").unwrap();
        assert_eq!((id.0.kind, id.0.size), ('f', 18));
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
                index: Some(id),
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
        // W itself is never asked about its index: a line for it is not a2c's.
        let mut root = s.clone();
        root.members[0].relative = ".".into();
        root.members[0].ids.truncate(ROOT_MEMBER_PATHS.len());
        assert_eq!(Snapshot::parse(&root.render()), None);
        root.members[0].index = None;
        assert_eq!(Snapshot::parse(&root.render()), Some(root));
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
