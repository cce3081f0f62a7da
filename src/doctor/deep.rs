//! `--deep`: re-hash every installed tree, in parallel, streaming, and compare it with the
//! file list written at install time, the receipt and the lock.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Code, Finding, finding};
use crate::archive::{RECEIPT_FILE, TREE_FILE};
use crate::store::Receipt;
use crate::util::digest::{Sha256, TreeFile, parse_tree_lines, sha256_reader, tree_digest};
use crate::util::version::MethodVersion;

pub type Target = (MethodVersion, PathBuf, Receipt, Option<String>);

pub fn check(targets: &[Target], jobs: usize) -> Vec<Finding> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, targets.len().max(1)) {
            s.spawn(|| {
                while let Some(t) = targets.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    if let Some(f) = check_one(t) {
                        crate::util::parallel::locked(&out).push(f);
                    }
                }
            });
        }
    });
    out.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// The files below `dir` (each with its digest) and the directories that hold no file.
fn scan(dir: &Path) -> (BTreeMap<String, TreeFile>, Vec<String>) {
    let mut files = BTreeMap::new();
    let mut dirs = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .min_depth(1)
        .follow_links(false)
        .into_iter()
        .flatten()
    {
        let rel = crate::util::paths::relative_slash(dir, entry.path()).unwrap_or_default();
        if entry.file_type().is_dir() {
            dirs.push(rel);
            continue;
        }
        if rel == RECEIPT_FILE || rel == TREE_FILE {
            continue;
        }
        // Anything that is not a regular file is an "extra" with an impossible digest.
        let (sha256, size, executable) = match (entry.file_type().is_file(), fs_err::File::open(entry.path())) {
            (true, Ok(f)) => {
                let x = entry.metadata().is_ok_and(|m| crate::util::platform::is_executable(&m));
                sha256_reader(f)
                    .map(|(s, n)| (s, n, x))
                    .unwrap_or((Sha256([0; 32]), 0, false))
            }
            _ => (Sha256([0; 32]), 0, false),
        };
        files.insert(
            rel.clone(),
            TreeFile {
                path: rel,
                executable,
                sha256,
                size,
            },
        );
    }
    // A directory no file lies below is outside the tree digest: an extra of its own.
    let empty = dirs
        .into_iter()
        .filter(|d| {
            let prefix = format!("{d}/");
            files
                .range(prefix.clone()..)
                .next()
                .is_none_or(|(p, _)| !p.starts_with(&prefix))
        })
        .map(|d| format!("{d}/"))
        .collect();
    (files, empty)
}

fn check_one((version, dir, receipt, locked_tree): &Target) -> Option<Finding> {
    let (actual, empty_dirs) = scan(dir);
    let actual_list: Vec<TreeFile> = actual.values().cloned().collect();
    let digest = tree_digest(&actual_list);
    let expected_tree = locked_tree.clone().unwrap_or_else(|| receipt.tree.clone());
    if digest == receipt.tree && digest == expected_tree && empty_dirs.is_empty() {
        return None;
    }
    let expected = fs_err::read(dir.join(TREE_FILE))
        .ok()
        .and_then(|b| parse_tree_lines(&b))
        .unwrap_or_default();
    let (mut modified, mut missing, mut extra) = (Vec::new(), Vec::new(), Vec::new());
    let mut seen = std::collections::BTreeSet::new();
    for (path, x, sha) in &expected {
        seen.insert(path.clone());
        match actual.get(path) {
            None => missing.push(path.clone()),
            Some(f) if f.sha256.to_hex() != *sha || f.executable != *x => modified.push(path.clone()),
            Some(_) => {}
        }
    }
    extra.extend(actual.keys().filter(|p| !seen.contains(*p)).cloned());
    extra.extend(empty_dirs);
    let mut parts = Vec::new();
    for (what, list) in [("modified", &modified), ("missing", &missing), ("extra", &extra)] {
        if !list.is_empty() {
            parts.push(format!("{what}: {}", list.join(", ")));
        }
    }
    if parts.is_empty() {
        parts.push(format!(
            "tree digest {digest}, receipt {}, lock {expected_tree}",
            receipt.tree
        ));
    }
    Some(finding(
        Code::StoreTreeModified,
        None,
        Some(version.clone()),
        format!(
            "`{}` no longer matches what was installed ({})",
            dir.display(),
            parts.join("; ")
        ),
        format!("run `a2c install --reinstall {version}` to restore it from its verified bundle"),
    ))
}
