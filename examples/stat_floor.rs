//! The kernel's floor under a no-op install (bench/run.py --suite members): exactly the
//! `fstatat` calls a workspace snapshot makes to vouch for its members — five per member (its
//! directory, tool state root, adoption record, local pointer and the migration journal's
//! path), no link followed, relative to a handle on the member's parent directory, on as many
//! threads as a2c uses — and nothing else: no parsing, no comparing, no install.
//!
//! With `doctor`, the floor under `a2c doctor`: one `fstatat` for each path doctor must look
//! at in a member — the snapshot's five, and the three its per-member checks add: the local
//! state directory `.tools_local` (is it tracked?), the git index that answers that, and the
//! git directory (a split index keeps its other half there).
//!
//! doctor also looks at every file of each cached tree the store's versions share files with
//! (its times against the cache's record): with `doctor FILES`, one `lstat` of each path FILES
//! lists, on the same threads.
//!
//! Usage: `stat_floor W LIST THREADS [doctor [FILES]]`, LIST holding one member path relative to
//! W per line, FILES one absolute path per line.

use std::collections::HashMap;
use std::os::fd::OwnedFd;

use rustix::fs::{AtFlags, Mode, OFlags, open, statat};

const SNAPSHOT: &[&str] = &[
    "",
    "/.tools/esys/a2c",
    "/.tools/esys/a2c/adoption.yaml",
    "/.tools_local/esys/a2c/workspace.yaml",
    "/.git/a2c-migrate.json",
];

const DOCTOR: &[&str] = &[
    "",
    "/.tools/esys/a2c",
    "/.tools/esys/a2c/adoption.yaml",
    "/.tools_local/esys/a2c/workspace.yaml",
    "/.git/a2c-migrate.json",
    "/.tools_local",
    "/.git/index",
    "/.git",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (w, list, threads, paths, files) = match args.as_slice() {
        [_, w, list, threads] => (w, list, threads, SNAPSHOT, None),
        [_, w, list, threads, which] if which == "doctor" => (w, list, threads, DOCTOR, None),
        [_, w, list, threads, which, files] if which == "doctor" => (w, list, threads, DOCTOR, Some(files)),
        _ => {
            eprintln!("usage: stat_floor W LIST THREADS [doctor [FILES]]");
            std::process::exit(2);
        }
    };
    let files = files.map(|f| std::fs::read_to_string(f).expect("FILES is readable"));
    let files: Vec<&str> = files.iter().flat_map(|f| f.lines()).filter(|l| !l.is_empty()).collect();
    let threads: usize = threads.parse().expect("THREADS is a number");
    let list = std::fs::read_to_string(list).expect("LIST is readable");
    let members: Vec<(&str, &str)> = list
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.rsplit_once('/').unwrap_or(("", l)))
        .collect();
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut parents: HashMap<&str, OwnedFd> = HashMap::new();
    for (parent, _) in &members {
        if !parents.contains_key(parent) {
            let dir = std::path::Path::new(w).join(parent);
            parents.insert(
                parent,
                open(&dir, flags, Mode::empty()).expect("a member's parent opens"),
            );
        }
    }
    let chunk = members.len().div_ceil(threads.max(1)).max(1);
    let found: usize = std::thread::scope(|s| {
        let workers: Vec<_> = members
            .chunks(chunk)
            .map(|part| {
                let parents = &parents;
                s.spawn(move || {
                    let mut path = String::new();
                    let mut found = 0;
                    for (parent, name) in part {
                        for suffix in paths {
                            path.clear();
                            path.push_str(name);
                            path.push_str(suffix);
                            found +=
                                usize::from(statat(&parents[parent], path.as_str(), AtFlags::SYMLINK_NOFOLLOW).is_ok());
                        }
                    }
                    found
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("no worker panics")).sum()
    });
    let per = files.len().div_ceil(threads.max(1)).max(1);
    let found_files: usize = std::thread::scope(|s| {
        let workers: Vec<_> = files
            .chunks(per)
            .map(|part| s.spawn(move || part.iter().filter(|f| std::fs::symlink_metadata(f).is_ok()).count()))
            .collect();
        workers.into_iter().map(|w| w.join().expect("no worker panics")).sum()
    });
    println!("{}", found + found_files);
}
