//! The kernel's floor under a cold install (bench/run.py's P1 suite): the files of installed
//! versions, read into memory first, written again into a fresh directory — one `mkdirat` per
//! directory, and per file one `openat(O_CREAT | O_EXCL | O_NOFOLLOW)` relative to its
//! directory's handle, one `write` and one `close`, each version on one of THREADS threads as
//! a2c installs versions in parallel — and nothing else: no inflating, hashing or checking.
//! Prints the seconds the writing took and the processor seconds it used (user and system, all
//! threads; reading into memory excluded).
//!
//! Usage: `write_floor SRC DEST THREADS`: every directory of SRC is one version.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags, mkdirat, open, openat};

/// A version's tree: its directories (relative, parents first) and files (directory index,
/// name, mode, bytes).
struct Tree {
    name: String,
    dirs: Vec<PathBuf>,
    files: Vec<(usize, String, u32, Vec<u8>)>,
}

fn load(root: &Path, rel: &Path, tree: &mut Tree) {
    let index = tree.dirs.len();
    tree.dirs.push(rel.to_path_buf());
    let mut entries: Vec<_> = std::fs::read_dir(root.join(rel))
        .expect("SRC lists")
        .map(|e| e.expect("entry"))
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let meta = entry.metadata().expect("entry metadata");
        let name = entry.file_name().into_string().expect("UTF-8 names");
        if meta.is_dir() {
            load(root, &rel.join(&name), tree);
        } else if meta.is_file() {
            let bytes = std::fs::read(entry.path()).expect("file reads");
            tree.files.push((index, name, meta.permissions().mode() & 0o777, bytes));
        }
    }
}

fn write(tree: &Tree, dest: &Path) {
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let top = open(dest, dir_flags, Mode::empty()).expect("DEST opens");
    mkdirat(&top, tree.name.as_str(), Mode::from_raw_mode(0o755)).expect("version directory");
    let root = openat(&top, tree.name.as_str(), dir_flags, Mode::empty()).expect("version opens");
    let mut handles: Vec<OwnedFd> = Vec::with_capacity(tree.dirs.len());
    for (i, dir) in tree.dirs.iter().enumerate() {
        if i == 0 {
            handles.push(rustix::io::dup(&root).expect("dup"));
            continue;
        }
        mkdirat(&root, dir, Mode::from_raw_mode(0o755)).expect("directory");
        handles.push(openat(&root, dir, dir_flags, Mode::empty()).expect("directory opens"));
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    for (dir, name, mode, bytes) in &tree.files {
        // `mode_t` is `u32` on Linux, `u16` on macOS: the permission bits fit either.
        let mode = Mode::from_raw_mode((*mode & 0o7777) as _);
        let fd = openat(&handles[*dir], name.as_str(), flags, mode).expect("file");
        std::fs::File::from(fd).write_all(bytes).expect("write");
    }
}

/// The processor time this process has used so far, in seconds (`/proc/self/stat`'s `utime`
/// and `stime`, in the kernel's 100 Hz user clock ticks).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat reads");
    // The fields after the command name (which may hold spaces, inside parentheses).
    let rest = &stat[stat.rfind(')').expect("a command name") + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks = |i: usize| fields[i].parse::<u64>().expect("a tick count");
    // utime and stime are the 14th and 15th fields: 12th and 13th after the name.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, src, dest, threads] = args.as_slice() else {
        eprintln!("usage: write_floor SRC DEST THREADS");
        std::process::exit(2);
    };
    let threads: usize = threads.parse().expect("THREADS is a number");
    let mut versions: Vec<_> = std::fs::read_dir(src)
        .expect("SRC lists")
        .map(|e| e.expect("entry"))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()) && !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.file_name().into_string().expect("UTF-8 names"))
        .collect();
    versions.sort();
    let trees: Vec<Tree> = versions
        .into_iter()
        .map(|name| {
            let mut tree = Tree {
                name: name.clone(),
                dirs: Vec::new(),
                files: Vec::new(),
            };
            load(&Path::new(src).join(&name), Path::new(""), &mut tree);
            tree
        })
        .collect();
    let dest = Path::new(dest);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cpu = cpu_seconds();
    let start = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(tree) = trees.get(i) else { break };
                    write(tree, dest);
                }
            });
        }
    });
    println!("{:.6} {:.2}", start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
}
