//! The shared tree cache: `<cache>/trees/<bundle sha256>/`, one extracted and verified method
//! tree per bundle, shared by every store of the machine. A store version is placed from it
//! by reflink, hardlink or copy ([`LinkMode`]) instead of being extracted again.
//!
//! An entry is filled in two steps, so that a machine with one checkout pays nothing for it:
//!
//! 1. the first extraction of a bundle (verified: digests, manifest, tree) writes the entry's
//!    `record` — the bundle sha256, the tree digest, the version, the time it was sealed, and
//!    for every file its size and mode (no file is touched: the extraction knows them) — and
//!    `origin`, the store version holding those files;
//! 2. the first install of that bundle into **another** store builds the entry's `tree/` from
//!    the origin (clone, else hardlink, else copy), checking every file against the record
//!    (size, mode, and a modification time no later than the seal: any write since changes
//!    it), records each file's exact modification and change times, publishes it with one
//!    rename, and places from it. Every later install places from `tree/` directly, checking
//!    size, mode and both times; a file whose change time moved (an edit, or a link made or
//!    removed elsewhere) is re-hashed against the tree's `.a2c-tree` list.
//!
//! Placement checks every file it places against the record — a file changed since (written
//! after a `chmod`, truncated, replaced) marks the entry as tampered: it is evicted, never
//! used again, and the version is installed from its bundle. Plain `doctor` makes the same
//! check; `doctor --deep` re-hashes cached trees. Only the files listed in the record are placed: anything added is ignored.

use crate::util::platform::MetaExt;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::lock::LockEntry;
use crate::util::digest::{Sha256, TreeFile};

mod place;
mod record;

pub use place::LinkMode;
use place::*;
use record::*;

/// An entry's record, beside its `tree/`.
pub const META_FILE: &str = "record";
/// An entry's tree.
pub const TREE_DIR: &str = "tree";
/// The store version an entry's record describes, until its `tree/` exists.
const ORIGIN_FILE: &str = "origin";
/// Version 3 records each file's link count, and as `sealed` the change time (ctime) of a mark
/// written when the last placement finished: a content edit through a hard link moves a file's
/// change time past the mark, and no user can set it back; a link made or removed elsewhere
/// moves it too, but also the link count. Older records are not trusted (the entry is rebuilt).
pub(crate) const META_HEADER: &str = "a2c-tree-cache 3";

/// One file of a cached tree as recorded when it was cached.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Recorded {
    path: String,
    size: u64,
    /// The exact modification time (ns); `-1` in a record of an origin, whose files must only
    /// be no newer than the record's seal.
    mtime_ns: i128,
    /// The link count the last placement left (`0` when not known: a record of an origin).
    nlink: u64,
    mode: u32,
}

/// A parsed record.
#[derive(Debug)]
struct Meta {
    sha: String,
    tree: String,
    version: String,
    /// When an origin's record was written (ns): its files were all written before. For a
    /// tree: the change time of the mark the last placement wrote once it was done.
    sealed: i128,
    files: Vec<Recorded>,
}

/// A cache entry found for a lock entry: its tree, or only its record and origin.
#[derive(Debug)]
pub struct CachedTree {
    /// `<entry>/tree`; may not exist yet (see [`TreeCache::promote`]).
    pub root: PathBuf,
    /// The store version the record describes, when `tree/` does not exist yet.
    pub origin: Option<PathBuf>,
    pub tree: String,
    sealed: i128,
    files: Vec<Recorded>,
}

impl CachedTree {
    pub fn files(&self) -> usize {
        self.files
            .iter()
            .filter(|f| f.path != crate::archive::TREE_FILE)
            .count()
    }
}

/// Why a placement failed.
#[derive(Debug)]
pub enum PlaceError {
    /// A cached file differs from its record: the tree must be evicted.
    Tampered(String),
    /// The cached tree went away meanwhile (pruned by another process).
    Gone,
    Io(io::Error),
}

impl From<io::Error> for PlaceError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// The tree cache of a bundle cache directory.
#[derive(Debug, Clone)]
pub struct TreeCache {
    pub dir: PathBuf,
}

/// `e` with what failed and where (the kind is kept; errno checks happen before this).
fn at(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("failed to {what} `{}`: {e}", path.display()))
}

fn mtime_ns(m: &std::fs::Metadata) -> i128 {
    m.modified_ns()
}

fn ctime_ns(m: &std::fs::Metadata) -> i128 {
    m.changed_ns()
}

impl TreeCache {
    pub fn new(cache_dir: &Path) -> Self {
        Self {
            dir: cache_dir.join(TREES),
        }
    }

    /// Where the tree of `sha256` is (whether or not it is cached).
    /// The method version of the bundle `sha256`, when its entry here names the store version
    /// it came from (its `origin`): for listings, which otherwise show bare digests.
    pub fn version_of(&self, sha256: &Sha256) -> Option<crate::util::version::MethodVersion> {
        let origin = crate::util::contain::read_config(&self.path(sha256).join(ORIGIN_FILE)).ok()??;
        Path::new(origin.trim()).file_name()?.to_str()?.parse().ok()
    }

    pub fn path(&self, sha256: &Sha256) -> PathBuf {
        self.dir.join(sha256.to_hex())
    }

    /// The cached tree of `entry`, when its record names the same bundle, version and (when
    /// the lock pins one) tree digest. Nothing is checked file by file yet: [`Self::place`]
    /// does that as it goes.
    pub fn lookup(&self, entry: &LockEntry) -> Option<CachedTree> {
        let dir = self.path(&entry.sha256);
        if !std::fs::symlink_metadata(&dir).ok()?.is_dir() {
            return None;
        }
        let text = crate::util::contain::read_config(&dir.join(META_FILE)).ok()??;
        let Meta {
            sha,
            tree,
            version,
            sealed,
            files,
        } = parse_meta(&text)?;
        if sha != entry.sha256.to_hex() || version != entry.version.to_string() {
            return None;
        }
        if entry.tree.as_ref().is_some_and(|t| *t != tree) {
            return None;
        }
        let root = dir.join(TREE_DIR);
        let origin = match std::fs::symlink_metadata(&root) {
            Ok(m) if m.is_dir() => None,
            Ok(_) => return None,
            Err(_) => Some(PathBuf::from(
                crate::util::contain::read_config(&dir.join(ORIGIN_FILE))
                    .ok()??
                    .trim_end(),
            )),
        };
        Some(CachedTree {
            root,
            origin,
            tree,
            sealed,
            files,
        })
    }

    /// Step 1: records the verified tree just published at `origin` (a store version) for
    /// `entry` — its `files` and its `.a2c-tree` — unless the entry holds a tree already.
    /// Costs one small file; no file of the tree is touched, nothing is shared yet.
    pub fn record(&self, entry: &LockEntry, origin: &Path, tree: &str, files: &[TreeFile]) -> io::Result<()> {
        let target = self.path(&entry.sha256);
        let readable = || {
            crate::util::contain::read_config(&target.join(META_FILE))
                .ok()
                .flatten()
                .and_then(|t| parse_meta(&t))
                .is_some()
        };
        if std::fs::symlink_metadata(target.join(TREE_DIR)).is_ok() && readable() {
            return Ok(());
        }
        let mut recorded: Vec<Recorded> = files
            .iter()
            .map(|f| Recorded {
                path: f.path.clone(),
                size: f.size,
                mtime_ns: -1,
                nlink: 0,
                mode: if f.executable { 0o555 } else { 0o444 },
            })
            .collect();
        let list = fs_err::symlink_metadata(origin.join(crate::archive::TREE_FILE))?;
        recorded.push(Recorded {
            path: crate::archive::TREE_FILE.into(),
            size: list.len(),
            mtime_ns: -1,
            nlink: 0,
            mode: list.mode() & 0o7777,
        });
        let trees = self.ensure()?;
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".fill-{}-", entry.sha256.to_hex()))
            .tempdir_in(&trees)
            .map_err(|e| at(e, "create a directory in", &trees))?;
        let sealed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        let meta = format_meta(
            &entry.sha256.to_hex(),
            tree,
            &entry.version.to_string(),
            sealed,
            &recorded,
        );
        crate::util::contain::write_new(&tmp.path().join(META_FILE), meta.as_bytes(), 0o444)?;
        let origin_text = format!("{}\n", origin.display());
        crate::util::contain::write_new(&tmp.path().join(ORIGIN_FILE), origin_text.as_bytes(), 0o444)?;
        // An entry without a tree names an older origin (gone, or another store), or one with a
        // record this a2c does not trust: this one replaces it.
        if std::fs::symlink_metadata(&target).is_ok() {
            let doomed = trees.join(format!(".gc-{}-{}", entry.sha256.to_hex(), std::process::id()));
            if std::fs::rename(&target, &doomed).is_ok() {
                let _ = crate::util::fs::remove_tree(&doomed);
            }
        }
        let staged = tmp.keep();
        if std::fs::rename(&staged, &target).is_err() {
            let _ = crate::util::fs::remove_tree(&staged); // another process recorded it first
        }
        Ok(())
    }

    /// Step 2: builds the entry's `tree/` from its origin by `mode` (automatic: clone, else
    /// hardlink, else copy), checking every file against the record, and publishes it with
    /// one rename. The origin must still be the store version it was: a real directory (no
    /// link anywhere on its path) whose receipt names the same bundle.
    pub fn promote(
        &self,
        cached: &CachedTree,
        entry: &LockEntry,
        mode: Option<LinkMode>,
    ) -> Result<CachedTree, PlaceError> {
        let Some(origin) = &cached.origin else {
            return Err(PlaceError::Gone);
        };
        let real = dunce::canonicalize(origin).map_err(|_| PlaceError::Gone)?;
        let receipt = super::Receipt::read(origin);
        if real != *origin || receipt.is_none_or(|r| r.sha256 != entry.sha256 || r.tree != cached.tree) {
            return Err(PlaceError::Gone);
        }
        let dir = self.path(&entry.sha256);
        let tmp = tempfile::Builder::new()
            .prefix(".tree-")
            .tempdir_in(&dir)
            .map_err(|e| at(e, "create a directory in", &dir))?;
        let (_, times) = copy_checked(origin, cached, tmp.path(), mode, true)?;
        // From now on every file is held to its exact modification time (links and copies keep
        // it) and the link count it has now, and no change after the mark.
        let sealed = mark(&dir)?;
        let files: Vec<Recorded> = cached
            .files
            .iter()
            .zip(times)
            .map(|(f, (m, n))| Recorded {
                mtime_ns: m,
                nlink: n,
                ..f.clone()
            })
            .collect();
        let meta = format_meta(
            &entry.sha256.to_hex(),
            &cached.tree,
            &entry.version.to_string(),
            sealed,
            &files,
        );
        let staged = tmp.keep();
        let new_record = dir.join(format!(".record-{}", std::process::id()));
        // The exact record first (no tree is there yet to be read against it), then the tree:
        // one rename each.
        let promoted = crate::util::contain::write_new(&new_record, meta.as_bytes(), 0o444)
            .and_then(|()| fs_err::rename(&new_record, dir.join(META_FILE)))
            .and_then(|()| fs_err::rename(&staged, &cached.root));
        if let Err(e) = promoted {
            let _ = std::fs::remove_file(&new_record);
            let _ = crate::util::fs::remove_tree(&staged);
            return Err(match cached.root.is_dir() {
                true => PlaceError::Gone, // another process promoted it first
                false => e.into(),
            });
        }
        let _ = std::fs::remove_file(dir.join(ORIGIN_FILE));
        Ok(CachedTree {
            root: cached.root.clone(),
            origin: None,
            tree: cached.tree.clone(),
            sealed,
            files,
        })
    }

    /// Places `cached` into `dest` (an empty directory) by `mode` (`None`: clone, else
    /// hardlink, else copy — the fastest that works here; see `share`), checking every file
    /// against its record. Returns the mode used.
    /// A hard link moves the change time of the cached file it links (and its link count), so
    /// the record is rewritten with the link counts left and a new mark. The caller holds the
    /// bundle's cache lock (`CacheDir::lock_path`), so no other placement runs between the
    /// check and the rewrite.
    pub fn place(&self, cached: &CachedTree, dest: &Path, mode: Option<LinkMode>) -> Result<LinkMode, PlaceError> {
        let (used, times) = copy_checked(&cached.root, cached, dest, mode, false)?;
        // Copies and clones leave the cached files as they were: the record stays true.
        if used == LinkMode::Hardlink || cached.files.iter().zip(&times).any(|(f, (_, n))| f.nlink != *n) {
            let dir = cached.root.parent().expect("a cached tree has an entry directory");
            let sealed = mark(dir)?;
            let files: Vec<Recorded> = cached
                .files
                .iter()
                .zip(times)
                .map(|(f, (_, n))| Recorded { nlink: n, ..f.clone() })
                .collect();
            let (sha, version) = self.identity(dir).ok_or(PlaceError::Gone)?;
            let meta = format_meta(&sha, &cached.tree, &version, sealed, &files);
            let new_record = dir.join(format!(".record-{}", std::process::id()));
            let _ = std::fs::remove_file(&new_record);
            crate::util::contain::write_new(&new_record, meta.as_bytes(), 0o444)
                .and_then(|()| fs_err::rename(&new_record, dir.join(META_FILE)))
                .inspect_err(|_| {
                    let _ = std::fs::remove_file(&new_record);
                })?;
        }
        Ok(used)
    }

    /// The bundle sha256 and version of the entry at `dir`, from its record.
    fn identity(&self, dir: &Path) -> Option<(String, String)> {
        let text = crate::util::contain::read_config(&dir.join(META_FILE)).ok()??;
        let meta = parse_meta(&text)?;
        Some((meta.sha, meta.version))
    }

    /// Checks every file of the cached tree at `dir` against its record (type, size, mode,
    /// modification and change time; a file whose change time moved is re-hashed): `Err(why)`
    /// when one was changed since it was cached (plain `doctor`). An entry without a tree yet,
    /// or with a record this a2c does not read, has nothing to check.
    pub fn check_times(dir: &Path) -> Result<(), String> {
        let Some(Meta {
            files, tree, sealed, ..
        }) = crate::util::contain::read_config(&dir.join(META_FILE))
            .ok()
            .flatten()
            .and_then(|t| parse_meta(&t))
        else {
            return Ok(());
        };
        let root = dir.join(TREE_DIR);
        let exact: Vec<&Recorded> = files.iter().filter(|f| f.mtime_ns != -1).collect();
        // One `lstat` per file, on every core; a suspect is re-hashed.
        let jobs = crate::util::parallel::metadata_jobs();
        let found = crate::util::parallel::run_parallel(&exact, jobs, |f| {
            let m = match std::fs::symlink_metadata(root.join(&f.path)) {
                Ok(m) => m,
                Err(e) => return Some(format!("`{}`: {e}", f.path)),
            };
            changed_since_cached(f, &m, sealed, &mut Suspects::new(&root, &tree))
        });
        match found.into_iter().flatten().next() {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    /// Removes the cached tree of `sha256` (tampered, or pruned).
    pub fn evict(&self, sha256: &Sha256) {
        let _ = crate::util::fs::remove_tree(&self.path(sha256));
    }

    /// Every entry: (bundle sha256, its directory).
    pub fn list(&self) -> Vec<(Sha256, PathBuf)> {
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return out;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Ok(sha) = Sha256::parse(&name) {
                out.push((sha, e.path()));
            }
        }
        out.sort();
        out
    }

    /// `true` when a store still holds the entry at `dir`: its tree's `.a2c-tree`, which every
    /// hardlinked placement links, has more than one link; or, for an entry without a tree
    /// yet, its origin is still an installed version.
    pub fn is_linked(dir: &Path) -> bool {
        let root = dir.join(TREE_DIR);
        if std::fs::symlink_metadata(&root).is_ok() {
            let file = root.join(crate::archive::TREE_FILE);
            return std::fs::symlink_metadata(&file).is_ok_and(|m| crate::util::platform::link_count(&m, &file) > 1);
        }
        crate::util::contain::read_config(&dir.join(ORIGIN_FILE))
            .ok()
            .flatten()
            .is_some_and(|o| super::Receipt::read(Path::new(o.trim_end())).is_some())
    }

    /// `true` when the tree of the entry at `dir` shares its files with the store version
    /// `version_dir` (placed from it by hard link, or promoted from it): an edit through one
    /// is an edit of the other. Judged by the `.a2c-tree` list, which every placement links.
    pub fn shares_files_with(dir: &Path, version_dir: &Path) -> bool {
        let list = |d: &Path| d.join(crate::archive::TREE_FILE);
        crate::util::platform::same_file(&list(&dir.join(TREE_DIR)), &list(version_dir))
    }

    /// `true` when the entry at `dir` holds a tree (not only a record and an origin).
    pub fn has_tree(dir: &Path) -> bool {
        std::fs::symlink_metadata(dir.join(TREE_DIR)).is_ok_and(|m| m.is_dir())
    }

    /// Fills left by killed runs (`.fill-*`) older than an hour.
    pub fn stale_fills(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".fill-"))
            .filter(|e| {
                e.metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age.as_secs() > 3600)
            })
            .map(|e| e.path())
            .collect()
    }

    /// Re-hashes the tree of the entry at `dir` against its `.a2c-tree` list and its record's
    /// tree digest: `Err(why)` when anything differs (`doctor --deep`).
    pub fn verify(dir: &Path) -> Result<String, String> {
        let root = dir.join(TREE_DIR);
        let text = crate::util::contain::read_config(&dir.join(META_FILE))
            .ok()
            .flatten()
            .ok_or("no readable record")?;
        let Meta { tree, files, .. } = parse_meta(&text).ok_or("an unreadable record")?;
        let list = std::fs::read(root.join(crate::archive::TREE_FILE)).map_err(|e| format!("`.a2c-tree`: {e}"))?;
        if format!("sha256:{}", Sha256::of(&list)) != tree {
            return Err("its `.a2c-tree` list does not match its tree digest".into());
        }
        for line in String::from_utf8_lossy(&list).lines() {
            let mut parts = line.split('\0');
            let (Some(path), Some(x), Some(hex)) = (parts.next(), parts.next(), parts.next()) else {
                return Err("a malformed `.a2c-tree` line".into());
            };
            let file = root.join(path);
            let m = std::fs::symlink_metadata(&file).map_err(|e| format!("`{path}`: {e}"))?;
            if !m.file_type().is_file() {
                return Err(format!("`{path}` is not a regular file"));
            }
            if (m.mode() & 0o111 != 0) != (x == "x") {
                return Err(format!("`{path}` has another executable bit"));
            }
            let (actual, _) =
                crate::util::digest::sha256_reader(std::fs::File::open(&file).map_err(|e| format!("`{path}`: {e}"))?)
                    .map_err(|e| format!("`{path}`: {e}"))?;
            if actual.to_hex() != hex {
                return Err(format!("`{path}` has other content"));
            }
        }
        if files.len() != list.iter().filter(|b| **b == b'\n').count() + 1 {
            return Err("its record and its `.a2c-tree` list disagree".into());
        }
        Ok(tree)
    }

    fn ensure(&self) -> io::Result<PathBuf> {
        let parent = self.dir.parent().expect("the trees directory has a parent");
        crate::util::contain::create_dirs(parent, TREES, 0o700)
    }
}

/// The tree cache's directory under the cache.
pub const TREES: &str = "trees";

/// The content behind a moved change time. A change time moves on an in-place edit, but also
/// when another link to the same file comes or goes (a store placed by hard link, or removed)
/// — which also changes the link count. A file whose change time moved with the same link
/// count is re-hashed against the tree's own `.a2c-tree` list (itself checked against the tree
/// digest), and only other content is tampering.
struct Suspects<'a> {
    root: &'a Path,
    tree: &'a str,
    listed: Option<Option<HashMap<String, String>>>,
}

impl<'a> Suspects<'a> {
    fn new(root: &'a Path, tree: &'a str) -> Self {
        Self {
            root,
            tree,
            listed: None,
        }
    }

    /// `true` when the file `rel` below the root holds what the tree's list says.
    fn same_content(&mut self, rel: &str) -> bool {
        let (root, tree) = (self.root, self.tree);
        let listed = self.listed.get_or_insert_with(|| {
            let list = std::fs::read(root.join(crate::archive::TREE_FILE)).ok()?;
            if format!("sha256:{}", Sha256::of(&list)) != tree {
                return None;
            }
            let lines = crate::util::digest::parse_tree_lines(&list)?;
            Some(lines.into_iter().map(|(p, _, hex)| (p, hex)).collect())
        });
        let Some(listed) = listed else { return false };
        if rel == crate::archive::TREE_FILE {
            return true; // the list itself matched the tree digest
        }
        let Some(expected) = listed.get(rel) else { return false };
        std::fs::File::open(root.join(rel))
            .ok()
            .and_then(|f| crate::util::digest::sha256_reader(f).ok())
            .is_some_and(|(actual, _)| actual.to_hex() == *expected)
    }
}

/// Why the file `f` (found as `m` below `suspects`' root) may not be used, if it may not: its
/// type, size or mode differ, its modification time is not the recorded one (for `-1`, one no
/// later than `sealed`), or it changed after the mark `sealed` without a link made or removed
/// (its link count is the one recorded) and its content is not the listed one.
fn changed_since_cached(f: &Recorded, m: &std::fs::Metadata, sealed: i128, suspects: &mut Suspects) -> Option<String> {
    let time = mtime_ns(m);
    let time_ok = match f.mtime_ns {
        -1 => time <= sealed,
        exact => time == exact,
    };
    if !m.file_type().is_file() || m.len() != f.size || !time_ok || m.mode() & 0o7777 != f.mode {
        return Some(format!("`{}` changed since it was cached", f.path));
    }
    let change = ctime_ns(m);
    let change_ok = match f.mtime_ns {
        // An origin's file, written before the record was sealed.
        -1 => change <= sealed,
        // Nothing since the last placement's mark (a change in the mark's own clock tick is
        // taken as the placement's own: that window lies inside the placement, under the
        // bundle's lock); or a link made or removed elsewhere moved it (the link count says so).
        _ => change <= sealed || crate::util::platform::link_count(m, &suspects.root.join(&f.path)) != f.nlink,
    };
    (!change_ok && !suspects.same_content(&f.path))
        .then(|| format!("`{}` was changed in place since it was cached", f.path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_refuse_escaping_paths() {
        let files = vec![Recorded {
            path: "rules/a b.md".into(),
            size: 3,
            mtime_ns: 1_700_000_000_123_456_789,
            nlink: 2,
            mode: 0o444,
        }];
        let text = format_meta("ab", "sha256:cd", "1.0.0", 7, &files);
        let m = parse_meta(&text).unwrap();
        assert_eq!(
            (m.sha.as_str(), m.tree.as_str(), m.version.as_str(), m.sealed),
            ("ab", "sha256:cd", "1.0.0", 7)
        );
        assert_eq!(m.files, files);
        for bad in ["../x", "/etc/passwd", "a//b", "a/./b"] {
            let text = format!("{META_HEADER}\nsha256 a\ntree t\nversion 1\nsealed 0\n1 1 1 444 {bad}\n");
            assert!(parse_meta(&text).is_none(), "{bad}");
        }
    }
}
