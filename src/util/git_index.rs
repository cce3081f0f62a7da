//! Reading a git index file (formats 2, 3 and 4) just far enough to tell that no tracked path
//! starts with a given prefix, without starting git. `doctor` asks this of every member (is
//! its machine-local `.tools_local/` tracked?); a member's index is often hundreds of KiB, and
//! reading each whole cost a doctor over 5,000 such members more than a second.
//!
//! git keeps the entries sorted by path bytes, so the answer is known at the first entry that
//! sorts after the prefix: only the first block of the file is read, as a rule. Whatever is not
//! certain answers `None` (ask git): a `.git` that is a file, an index split in two (its entries
//! then live partly in a `sharedindex.*` file), a sparse directory entry or a replaced entry
//! with no name, any structure that does not parse exactly, an I/O error.
//!
//! Not a crate: `gix-index` (gitoxide) decodes a whole index and its extensions, which is what
//! cost the time here; this reads a few entries of one.
//!
//! The index does not say how long its object names are (SHA-1's 20 bytes or SHA-256's 32): the
//! entries are read both ways, and the answer stands only when exactly one way parses, or both
//! agree. The right one parses any index git writes today, so the wrong one can only make git
//! be asked. SHA-1 is presumed; when only the SHA-256 reading parses the first block, the whole
//! file is read and must parse down to its checksum, so that an entry of a later git this
//! reader does not know cannot let a misreading answer.

use std::io::Read;
use std::path::Path;

/// The first read of an index: enough for the entries that sort before `.tools_local/` in
/// almost any repository.
const FIRST_BLOCK: usize = 16 * 1024;
/// The most of an index ever read (a prefix that sorts late, a SHA-256 index checked to its
/// end): past it git is asked. A sparse 1 GiB file is never read whole.
const MAX_READ: u64 = 8 * 1024 * 1024;

/// What the index says of a path, as far as it can be read without git.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// No entry is the path or lies under it.
    Lacks,
    /// Not certain: ask git.
    AskGit,
    /// `.git/index` is not a regular file (a FIFO, a device, a directory, a link): git would
    /// block on it or follow it, so neither reads it; the reason.
    NotAFile(String),
}

/// The object name lengths an index may hold (SHA-1, SHA-256).
const HASH_LENGTHS: [usize; 2] = [20, 32];

/// What one reading of the entries concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// No entry starts with the prefix, and every entry and extension parsed to the end.
    Lacks,
    /// No entry starts with the prefix up to one that sorts after it; the rest was not read.
    LacksSoFar,
    /// An entry starts with the prefix.
    Found,
    /// The bytes end inside an entry: read more.
    More,
    /// Not an index this reader understands exactly (or not read with the right name length).
    Unsure,
}

/// Whether the index of the repository whose work tree is `dir` (`dir/.git` a directory, no
/// link: checked unless `git_dir_checked`) holds the path `rel` or any path under it — a file,
/// a link or a submodule (a gitlink entry named `rel` itself). [`Answer::AskGit`] whenever
/// that is not certain.
pub fn lacks_path(dir: &Path, rel: &str, git_dir_checked: bool) -> Answer {
    let git_dir = dir.join(".git");
    if !git_dir_checked && !std::fs::symlink_metadata(&git_dir).is_ok_and(|m| m.is_dir()) {
        return Answer::AskGit;
    }
    let index = git_dir.join("index");
    // Never through a link, and never blocking on a FIFO: what is there must be a regular file.
    use crate::util::platform::{Opened, open_read_nofollow};
    let mut file = match open_read_nofollow(&index) {
        Opened::File(file) => file,
        Opened::Missing => return Answer::Lacks,
        Opened::Link => return not_a_file(&index, "a symbolic link"),
        Opened::Failed(_) => return Answer::AskGit,
    };
    let prefix = format!("{}/", rel.trim_end_matches('/'));
    let prefix = prefix.as_bytes();
    let mut first = [0u8; FIRST_BLOCK];
    // What is there is looked at only when the first read looks wrong (no `fstat` per member
    // on doctor's path): an index git wrote is never empty, and a FIFO opened non-blocking
    // reads nothing at once (no writer) or fails (EAGAIN), as a directory does (EISDIR).
    let n = match read_up_to(&mut file, &mut first) {
        Ok(n) if n > 0 => n,
        _ => {
            return match file.metadata() {
                Ok(m) if m.is_dir() => not_a_file(&index, "a directory"),
                Ok(m) if !m.is_file() => not_a_file(&index, "a FIFO, socket or device"),
                _ => Answer::AskGit,
            };
        }
    };
    let complete = n < FIRST_BLOCK;
    let verdict = match judge(&first[..n], complete, prefix) {
        Scan::More => {
            // A prefix that sorts late, or very long paths: read on, once, up to the bound.
            let mut whole = first[..n].to_vec();
            if (&mut file)
                .take(MAX_READ - n as u64 + 1)
                .read_to_end(&mut whole)
                .is_err()
                || whole.len() as u64 > MAX_READ
            {
                return Answer::AskGit;
            }
            judge(&whole, true, prefix)
        }
        v => v,
    };
    match verdict {
        Scan::Lacks => Answer::Lacks,
        // The part not read may hold a split index's link to its other half.
        Scan::LacksSoFar if has_shared_index(&git_dir) == Some(false) => Answer::Lacks,
        _ => Answer::AskGit,
    }
}

fn not_a_file(index: &Path, what: &str) -> Answer {
    Answer::NotAFile(format!("`{}` is {what}, not a regular file", index.display()))
}

/// Reads until `buf` is full or the file ends; the number of bytes read.
fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Whether `git_dir` holds the other half of a split index (`None`: it cannot be listed).
fn has_shared_index(git_dir: &Path) -> Option<bool> {
    super::platform::has_name_starting(git_dir, b"sharedindex.")
}

/// The entries read with each object name length; the verdict of the one that parses.
fn judge(bytes: &[u8], complete: bool, prefix: &[u8]) -> Scan {
    let [sha1, sha256] = HASH_LENGTHS.map(|hash| scan(bytes, complete, prefix, hash));
    match (sha1, sha256) {
        (a, b) if a == b => a,
        // SHA-1, git's default, is presumed. SHA-256 names that alone parse the first entries
        // are weak proof (an entry this reader does not know would make the SHA-1 reading
        // fail while a misreading passed): the whole file, down to its checksum, is read.
        (Scan::Unsure, Scan::LacksSoFar) => Scan::More,
        (Scan::Unsure, b) => b,
        (a, Scan::Unsure) => a,
        // One wants more bytes, the other concluded: read more and judge again.
        (Scan::More, _) | (_, Scan::More) => Scan::More,
        _ => Scan::Unsure,
    }
}

/// The verdict of [`judge`] on the bytes of an index (all of it when `complete`), for the
/// fuzz targets (feature `fuzzing`): `Some(true)` an entry is `rel` or lies under it,
/// `Some(false)` none does (as far as `lacks_path` would conclude without git), `None` ask git.
#[cfg(feature = "fuzzing")]
pub fn fuzz_judge(bytes: &[u8], complete: bool, rel: &str) -> Option<bool> {
    let prefix = format!("{}/", rel.trim_end_matches('/'));
    match judge(bytes, complete, prefix.as_bytes()) {
        Scan::Found => Some(true),
        Scan::Lacks | Scan::LacksSoFar => Some(false),
        Scan::More | Scan::Unsure => None,
    }
}

/// A big-endian number of `N` bytes at `at`.
fn be<const N: usize>(bytes: &[u8], at: usize) -> Option<u64> {
    let b: [u8; N] = bytes.get(at..at + N)?.try_into().ok()?;
    Some(b.iter().fold(0, |n, d| n << 8 | u64::from(*d)))
}

/// The entry modes git writes: a file, an executable, a link, a submodule, a sparse directory.
const MODES: [u64; 5] = [0o100644, 0o100755, 0o120000, 0o160000, 0o040000];

/// Reads the entries in `bytes` (the whole file when `complete`, else its beginning) as an
/// index whose object names are `hash` bytes long.
fn scan(bytes: &[u8], complete: bool, prefix: &[u8], hash: usize) -> Scan {
    let short = if complete { Scan::Unsure } else { Scan::More };
    if bytes.len() < 12 {
        return short;
    }
    let version = be::<4>(bytes, 4).unwrap_or(0);
    if &bytes[..4] != b"DIRC" || !(2..=4).contains(&version) {
        return Scan::Unsure;
    }
    let count = be::<4>(bytes, 8).unwrap_or(0);
    let mut at = 12;
    let (mut name, mut previous) = (Vec::new(), Vec::new());
    let mut past = false;
    // The path itself (a submodule's gitlink entry is named so, without the slash).
    let itself = prefix.strip_suffix(b"/").unwrap_or(prefix);
    for _ in 0..count {
        // Past the prefix, every entry read is still checked to ascend (an entry out of order
        // could hide the prefix from this reading, not from git's): the rest of the bytes at
        // hand, then the extensions.
        std::mem::swap(&mut name, &mut previous);
        match entry(bytes, at, version, hash, &previous, &mut name) {
            Entry::Next(next) => at = next,
            Entry::Short if past => return Scan::LacksSoFar,
            Entry::Short => return short,
            Entry::Bad => return Scan::Unsure,
        }
        if past {
            continue;
        }
        if name.starts_with(prefix) || name.as_slice() == itself {
            return Scan::Found;
        }
        if name.as_slice() > prefix {
            past = true;
        }
    }
    if past && !complete {
        return Scan::LacksSoFar;
    }
    // The extensions, then the checksum: exactly to the end, with no link to a shared index.
    let Some(end) = bytes.len().checked_sub(hash) else {
        return short;
    };
    while at < end {
        let (Some(size), Some(signature)) = (be::<4>(bytes, at + 4), bytes.get(at..at + 4)) else {
            return short;
        };
        if signature == b"link" {
            return Scan::Unsure;
        }
        at = match usize::try_from(size).ok().and_then(|s| (at + 8).checked_add(s)) {
            Some(next) => next,
            None => return Scan::Unsure,
        };
    }
    match (at == end, complete) {
        (true, true) => Scan::Lacks,
        (_, false) => Scan::More,
        (false, true) => Scan::Unsure,
    }
}

enum Entry {
    /// Parsed: the offset of the next entry (its path now in `name`).
    Next(usize),
    /// The bytes end inside it.
    Short,
    /// Not an entry.
    Bad,
}

/// The entry at `at`, its path written into `name`; `previous` is the path before it (format 4
/// stores each path as a change to it, and paths ascend).
fn entry(bytes: &[u8], at: usize, version: u64, hash: usize, previous: &[u8], name: &mut Vec<u8>) -> Entry {
    // ctime, mtime, dev, ino, mode, uid, gid, size; the object name; the flags.
    let fixed = 40 + hash + 2;
    let (Some(mode), Some(flags)) = (be::<4>(bytes, at + 24), be::<2>(bytes, at + fixed - 2)) else {
        return Entry::Short;
    };
    if !MODES.contains(&mode) {
        return Entry::Bad;
    }
    let mut path_at = at + fixed;
    if flags & 0x4000 != 0 {
        // Extended flags (format 3 and later): only skip-worktree and intent-to-add exist.
        let Some(extended) = be::<2>(bytes, path_at) else {
            return Entry::Short;
        };
        if version < 3 || extended & !0x6000 != 0 {
            return Entry::Bad;
        }
        path_at += 2;
    }
    name.clear();
    let next = if version == 4 {
        // How many bytes of the previous path to drop, then the rest, ending in a NUL.
        let Some((strip, after)) = varint(bytes, path_at) else {
            return Entry::Short;
        };
        let Some(nul) = bytes.get(after..).and_then(|b| b.iter().position(|c| *c == 0)) else {
            return Entry::Short;
        };
        let Some(keep) = usize::try_from(strip).ok().and_then(|s| previous.len().checked_sub(s)) else {
            return Entry::Bad;
        };
        name.extend_from_slice(&previous[..keep]);
        name.extend_from_slice(&bytes[after..after + nul]);
        after + nul + 1
    } else {
        let length = (flags & 0x0fff) as usize;
        let end = match length {
            0x0fff => match bytes.get(path_at..).and_then(|b| b.iter().position(|c| *c == 0)) {
                Some(nul) => path_at + nul,
                None => return Entry::Short,
            },
            n => path_at + n,
        };
        let Some(path) = bytes.get(path_at..end) else {
            return Entry::Short;
        };
        if path.contains(&0) {
            return Entry::Bad;
        }
        name.extend_from_slice(path);
        // One to eight NULs pad the entry to a multiple of eight bytes.
        let padded = at + (end - at + 8) / 8 * 8;
        match bytes.get(end..padded) {
            Some(pad) if pad.iter().all(|c| *c == 0) => padded,
            Some(_) => return Entry::Bad,
            None => return Entry::Short,
        }
    };
    // A replaced entry of a split index has no name; paths ascend.
    if name.is_empty() || name.as_slice() < previous {
        return Entry::Bad;
    }
    Entry::Next(next)
}

/// git's offset varint (as in pack files): the value and the offset after it.
fn varint(bytes: &[u8], mut at: usize) -> Option<(u64, usize)> {
    let mut c = *bytes.get(at)?;
    at += 1;
    let mut value = u64::from(c & 0x7f);
    while c & 0x80 != 0 {
        c = *bytes.get(at)?;
        at += 1;
        value = value.checked_add(1)?.checked_mul(128)? | u64::from(c & 0x7f);
    }
    Some((value, at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::git::tests::git;

    fn ls_files(dir: &Path, path: &str) -> bool {
        let out = std::process::Command::new("git")
            .current_dir(dir)
            .args(["ls-files", "--cached", "--", path])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    }

    /// A repository holding `files` files beside `.gitignore` and `.github/ci.yml` (which sort
    /// before `.tools_local/`) and `src/…` (after it).
    fn repo(dir: &Path, files: usize, init: &[&str]) {
        git(dir, &[&["init", "-q"], init, &["."]].concat());
        std::fs::create_dir_all(dir.join(".github")).unwrap();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join(".gitignore"), "x\n").unwrap();
        std::fs::write(dir.join(".github/ci.yml"), "x\n").unwrap();
        for i in 0..files {
            std::fs::write(dir.join(format!("src/a_file_with_a_rather_long_name_{i}.rs")), "x").unwrap();
        }
        git(dir, &["add", "-A"]);
    }

    /// Every answer agrees with `git ls-files`: `Some(true)` only when git lists nothing.
    fn agrees(dir: &Path, expect: Answer) {
        let answer = lacks_path(dir, ".tools_local", false);
        assert_eq!(answer, expect, "{}", dir.display());
        if answer == Answer::Lacks {
            assert!(!ls_files(dir, ".tools_local"));
        }
    }

    fn track_local(dir: &Path) {
        std::fs::create_dir_all(dir.join(".tools_local")).unwrap();
        std::fs::write(dir.join(".tools_local/x"), "x").unwrap();
        git(dir, &["add", "-f", ".tools_local/x"]);
        assert!(ls_files(dir, ".tools_local"));
    }

    #[test]
    fn each_format_and_size_answers_as_git_does() {
        // Small (read whole) and large (read up to `src/`), in formats 2, 3 and 4.
        for (files, version) in [(3, "2"), (3, "3"), (3, "4"), (1500, "2"), (1500, "3"), (1500, "4")] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            repo(d, files, &[]);
            git(d, &["update-index", "--index-version", version]);
            if version == "3" {
                // Extended flags: an intent-to-add entry.
                std::fs::write(d.join("src/intent.rs"), "x").unwrap();
                git(d, &["add", "-N", "src/intent.rs"]);
            }
            let size = std::fs::metadata(d.join(".git/index")).unwrap().len();
            assert_eq!(size as usize > FIRST_BLOCK, files > 3, "{files} files: {size} bytes");
            agrees(d, Answer::Lacks);
            // Under another directory it is not `.tools_local/` of this work tree.
            std::fs::create_dir_all(d.join("sub/.tools_local")).unwrap();
            std::fs::write(d.join("sub/.tools_local/y"), "y").unwrap();
            git(d, &["add", "-f", "sub/.tools_local/y"]);
            agrees(d, Answer::Lacks);
            track_local(d);
            agrees(d, Answer::AskGit);
        }
    }

    #[test]
    fn a_prefix_that_sorts_past_the_first_block_is_read_to() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "."]);
        // Entries that sort before `.tools_local/`, more than the first block holds.
        std::fs::create_dir_all(d.join(".github/workflows")).unwrap();
        for i in 0..400 {
            std::fs::write(d.join(format!(".github/workflows/job_number_{i:04}.yml")), "x").unwrap();
        }
        git(d, &["add", "-A"]);
        assert!(std::fs::metadata(d.join(".git/index")).unwrap().len() as usize > FIRST_BLOCK);
        agrees(d, Answer::Lacks);
        track_local(d);
        agrees(d, Answer::AskGit);
    }

    #[test]
    fn sha256_object_names_are_read_too() {
        for files in [3, 1500] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            repo(d, files, &["--object-format=sha256"]);
            agrees(d, Answer::Lacks);
            track_local(d);
            agrees(d, Answer::AskGit);
        }
    }

    #[test]
    fn a_split_index_makes_git_be_asked() {
        for files in [3, 1500] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            repo(d, files, &[]);
            track_local(d);
            git(d, &["update-index", "--split-index"]);
            // The tracked path now lives in the shared half; the main one may not name it.
            std::fs::write(d.join("src/late.rs"), "x").unwrap();
            git(d, &["add", "src/late.rs"]);
            agrees(d, Answer::AskGit);
        }
    }

    #[test]
    fn no_index_a_git_file_or_a_damaged_index() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "."]);
        agrees(d, Answer::Lacks);
        repo(d, 1500, &[]);
        let large = std::fs::read(d.join(".git/index")).unwrap();
        let small_dir = tempfile::tempdir().unwrap();
        repo(small_dir.path(), 3, &[]);
        let small = std::fs::read(small_dir.path().join(".git/index")).unwrap();
        let bad_mode = |index: &[u8]| -> Vec<u8> {
            let mut v = index.to_vec();
            v[12 + 26] = 0o17;
            v
        };
        // A large index's tail is past where the answer is known; anything else damaged is
        // refused.
        for (damaged, expect) in [
            (large[..100].to_vec(), Answer::AskGit),
            (bad_mode(&large), Answer::AskGit),
            (large[..large.len() - 1].to_vec(), Answer::Lacks),
            (small[..small.len() - 1].to_vec(), Answer::AskGit),
            ([&small[..], b"more"].concat(), Answer::AskGit),
            (bad_mode(&small), Answer::AskGit),
        ] {
            std::fs::write(d.join(".git/index"), &damaged).unwrap();
            assert_eq!(lacks_path(d, ".tools_local", false), expect, "{} bytes", damaged.len());
        }
        // An index that is a link is not followed.
        std::fs::write(d.join("elsewhere"), &small).unwrap();
        std::fs::remove_file(d.join(".git/index")).unwrap();
        crate::util::platform::symlink(d.join("elsewhere"), d.join(".git/index")).unwrap();
        assert!(matches!(lacks_path(d, ".tools_local", false), Answer::NotAFile(w) if w.contains("symbolic link")));
        let work = tempfile::tempdir().unwrap();
        std::fs::write(
            work.path().join(".git"),
            format!("gitdir: {}\n", d.join(".git").display()),
        )
        .unwrap();
        assert_eq!(lacks_path(work.path(), ".tools_local", false), Answer::AskGit);
    }

    /// A store committed as a submodule is a gitlink entry named `.tools_local`
    /// itself, which sorts before every `.tools_local/…` path.
    #[test]
    fn a_gitlink_named_as_the_path_is_found() {
        for files in [3, 1500] {
            let sub = tempfile::tempdir().unwrap();
            git(sub.path(), &["init", "-q", "."]);
            std::fs::write(sub.path().join("f"), "x").unwrap();
            git(sub.path(), &["add", "f"]);
            git(
                sub.path(),
                &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "s"],
            );
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            repo(d, files, &[]);
            agrees(d, Answer::Lacks);
            let out = std::process::Command::new("git")
                .current_dir(sub.path())
                .args(["rev-parse", "HEAD"])
                .output()
                .unwrap();
            let head = String::from_utf8(out.stdout).unwrap();
            let info = format!("160000,{},.tools_local", head.trim());
            git(d, &["update-index", "--add", "--cacheinfo", &info]);
            assert!(ls_files(d, ".tools_local"));
            agrees(d, Answer::AskGit);
            // A neighbour that only shares the name's start is no gitlink of it.
            git(d, &["rm", "-q", "--cached", ".tools_local"]);
            let info = format!("160000,{},.tools_local-old", head.trim());
            git(d, &["update-index", "--add", "--cacheinfo", &info]);
            agrees(d, Answer::Lacks);
        }
    }

    /// A FIFO, a directory or a socket at `.git/index` is never opened for reading (git would
    /// block on a FIFO forever): the answer says what is there.
    #[test]
    fn an_index_that_is_no_regular_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        repo(d, 3, &[]);
        std::fs::remove_file(d.join(".git/index")).unwrap();
        // The real `mkfifo` (rustix has no `mknodat` on macOS).
        let made = std::process::Command::new("mkfifo")
            .arg(d.join(".git/index"))
            .status()
            .unwrap();
        assert!(made.success());
        assert!(matches!(lacks_path(d, ".tools_local", false), Answer::NotAFile(w) if w.contains("FIFO")));
        std::fs::remove_file(d.join(".git/index")).unwrap();
        std::fs::create_dir(d.join(".git/index")).unwrap();
        assert!(matches!(lacks_path(d, ".tools_local", false), Answer::NotAFile(w) if w.contains("directory")));
    }

    /// Entries out of order (git still reads such an index) make git be asked, and an index
    /// read on past the first block stops at the bound: a sparse 1 GiB file is not read whole.
    #[test]
    fn entries_out_of_order_and_a_huge_index_make_git_be_asked() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        repo(d, 3, &[]);
        track_local(d);
        let index = std::fs::read(d.join(".git/index")).unwrap();
        // `.gitignore` renamed in place to a name that sorts after `.tools_local/`: the
        // tracked `.tools_local/x` now comes after an entry past the prefix.
        let swapped = replace_all(&index, &[(b".gitignore", b"zgitignore")]);
        std::fs::write(d.join(".git/index"), &swapped).unwrap();
        assert_eq!(lacks_path(d, ".tools_local", false), Answer::AskGit);
        // A file whose first block is a valid start and whose rest is a hole of 1 GiB.
        let big = tempfile::tempdir().unwrap();
        let b = big.path();
        git(b, &["init", "-q", "."]);
        std::fs::create_dir_all(b.join(".github/workflows")).unwrap();
        for i in 0..400 {
            std::fs::write(b.join(format!(".github/workflows/job_number_{i:04}.yml")), "x").unwrap();
        }
        git(b, &["add", "-A"]);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(b.join(".git/index"))
            .unwrap();
        file.set_len(1 << 30).unwrap();
        assert_eq!(lacks_path(b, ".tools_local", false), Answer::AskGit);
    }

    fn replace_all(bytes: &[u8], pairs: &[(&[u8], &[u8])]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for (from, to) in pairs {
            let at = out.windows(from.len()).position(|w| w == *from).unwrap();
            out[at..at + to.len()].copy_from_slice(to);
        }
        out
    }

    #[test]
    fn varints_read_as_git_writes_them() {
        for (bytes, value) in [
            (&[0x00][..], 0),
            (&[0x7f], 127),
            (&[0x80, 0x00], 128),
            (&[0x81, 0x7f], 383),
        ] {
            assert_eq!(varint(bytes, 0), Some((value, bytes.len())), "{bytes:?}");
        }
        assert_eq!(varint(&[0x80], 0), None);
    }
}
