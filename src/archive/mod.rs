//! Archives are hostile until proven otherwise (docs/concepts.md, "Archives are hostile"). This module extracts tar.gz and
//! zip bundles into a staging directory — only regular files and directories, under limits,
//! keeping only the executable bit — and packs method trees into deterministic bundles.
//!
//! Everything here is blocking code; callers run it on worker threads.

mod blockgz;
mod pack;
mod policy;
mod tar_gz;
mod tar_read;
pub mod wheel;
mod zip;

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

pub use pack::{DEFAULT_LEVEL, Deflate, PackedBundle, pack_tree, scan_tree};
pub use policy::{Limits, RECEIPT_FILE, TREE_FILE, entry_segments};

use crate::util::digest::{HashingReader, Sha256, TreeFile, tree_digest};

/// A bundle format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Format {
    #[serde(rename = "tar.gz")]
    TarGz,
    #[serde(rename = "zip")]
    Zip,
    /// A Python wheel (PEP 427) whose package directory holds the tree (`archive::wheel`).
    #[serde(rename = "whl")]
    Wheel,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::TarGz => "tar.gz",
            Format::Zip => "zip",
            Format::Wheel => "whl",
        }
    }

    /// The file-name extension, without the dot.
    pub fn extension(self) -> &'static str {
        self.as_str()
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tar.gz" | "tgz" => Ok(Format::TarGz),
            "zip" => Ok(Format::Zip),
            "whl" | "wheel" => Ok(Format::Wheel),
            other => Err(format!(
                "unknown bundle format `{other}` (expected tar.gz, zip or wheel)"
            )),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The top directory of a bundle of `version` (`a2c-VERSION`); for a wheel, its
/// `{dist}-{version}` (the method's default distribution).
pub fn bundle_top(version: &crate::util::version::MethodVersion, format: Format) -> String {
    match format {
        Format::Wheel => format!("{}-{version}", wheel::escaped(wheel::DEFAULT_PROJECT)),
        _ => format!("a2c-{version}"),
    }
}

/// Why an archive was refused or could not be extracted.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("the bundle is not a valid {format} archive: {reason}")]
    Corrupt { format: Format, reason: String },
    #[error("archive entry `{entry}` refused: {reason}")]
    Entry { entry: String, reason: String },
    #[error("`{}` cannot be packed: {reason}", path.display())]
    NotPackable { path: std::path::PathBuf, reason: String },
    /// `a2c pack`: a name some platform's filesystem cannot hold as stored, or would make one
    /// with another name of the tree.
    #[error("`{}` cannot be packed: {reason}", path.display())]
    Unportable { path: std::path::PathBuf, reason: String },
    #[error("the archive has more than {limit} entries")]
    TooManyEntries { limit: u64 },
    #[error("the archive unpacks to more than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("the bundle is {size} bytes; zip bundles are read into memory and may be at most {limit} bytes")]
    ZipTooLarge { size: u64, limit: u64 },
    #[error("the archive is empty")]
    Empty,
    /// `a2c pack`: the tree exceeds a limit `a2c install` enforces (the message says which).
    #[error("{detail}")]
    ExceedsInstallLimit { detail: String, variable: &'static str },
}

impl ArchiveError {
    pub fn hint(&self) -> Option<String> {
        match self {
            ArchiveError::TooManyEntries { .. } => Some(format!(
                "if this bundle is genuine, raise the limit with {}",
                crate::env::A2C_MAX_ENTRIES
            )),
            ArchiveError::TooLarge { .. } => Some(format!(
                "if this bundle is genuine, raise the limit with {}",
                crate::env::A2C_MAX_UNPACKED_BYTES
            )),
            ArchiveError::ZipTooLarge { .. } => Some("publish large bundles as tar.gz".into()),
            ArchiveError::ExceedsInstallLimit { variable, .. } => Some(format!(
                "split or trim the method tree; or, if every consumer raises {variable} too, raise it here for `a2c pack` as well"
            )),
            ArchiveError::Unportable { .. } => Some(
                "a bundle installs the same tree on Linux, macOS and Windows or nowhere: rename the file or directory, then pack again".into(),
            ),
            ArchiveError::NotPackable { .. } => Some(
                "a bundle holds only regular files and directories: replace the link with a copy of what it points to (or remove it), then pack again".into(),
            ),
            ArchiveError::Entry { .. } | ArchiveError::Corrupt { .. } | ArchiveError::Empty => Some(
                "the bundle is malformed or hostile; this version was not installed — report it to the registry's owner".into(),
            ),
            ArchiveError::Io(_) => None,
        }
    }
}

/// What an extraction produced.
#[derive(Debug)]
pub struct Extracted {
    /// The extracted tree: `dest`, or `dest/<top>` when a single top-level directory was stripped.
    pub root: PathBuf,
    /// Every regular file, relative to `root`, with its digest.
    pub files: Vec<TreeFile>,
    /// The tree digest of `files`.
    pub tree: String,
    /// sha256 and size of the whole bundle stream, read to its end.
    pub bundle_sha256: Sha256,
    pub bundle_size: u64,
}

/// Extracts `source` (a bundle of `format`) into `dest`, an existing empty directory, writing
/// only beneath it through a directory handle that follows no link (`util::contain::Beneath`),
/// so that even a directory swapped for a link mid-extraction cannot redirect a write. The
/// bundle is read once: it is hashed while it is inflated. The caller compares the bundle
/// digest and removes `dest` when it does not match.
pub fn extract(source: impl Read, format: Format, dest: &Path, limits: &Limits) -> Result<Extracted, ArchiveError> {
    let mut hashing = HashingReader::new(source);
    let mut sink = policy::Sink::new(dest, limits, format)?;
    match format {
        Format::TarGz => tar_gz::extract(&mut hashing, &mut sink)?,
        Format::Zip => zip::extract(&mut hashing, &mut sink)?,
        Format::Wheel => wheel::extract(&mut hashing, &mut sink)?,
    }
    let (bundle_sha256, bundle_size) = hashing.finish()?;
    let (root, files) = sink.finish()?;
    let tree = tree_digest(&files);
    Ok(Extracted {
        root,
        files,
        tree,
        bundle_sha256,
        bundle_size,
    })
}

/// The text of the method manifest (`a2c-method.toml`) at the root of the bundle at `path`
/// (or under its single top-level directory), read without extracting anything; `None` when
/// the bundle cannot be read or holds none. For `doctor`, which only reads.
pub fn manifest_text(path: &Path, format: Format) -> Option<String> {
    const MANIFEST: &str = "a2c-method.toml";
    const MAX: u64 = 1 << 20;
    let at_root = |name: &[u8]| {
        let name = std::str::from_utf8(name).ok()?;
        let name = name.trim_start_matches("./");
        let parts: Vec<&str> = name.split('/').collect();
        Some(match parts.as_slice() {
            [m] | [_, m] => *m == MANIFEST,
            _ => false,
        })
    };
    let file = std::fs::File::open(path).ok()?;
    match format {
        Format::TarGz => {
            let gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file));
            let mut tar = tar_read::TarReader::new(gz, tar_gz::PAX_GLOBAL_IGNORED);
            while let Ok(Some(item)) = tar.next() {
                if let tar_read::Item::File { name, size, .. } = item
                    && at_root(&name) == Some(true)
                    && size <= MAX
                {
                    let mut text = String::new();
                    tar.content().read_to_string(&mut text).ok()?;
                    return Some(text);
                }
            }
            None
        }
        Format::Zip | Format::Wheel => {
            let mut archive = ::zip::ZipArchive::new(std::io::BufReader::new(file)).ok()?;
            let index = (0..archive.len()).find(|i| {
                archive
                    .by_index_raw(*i)
                    .is_ok_and(|f| at_root(f.name_raw()) == Some(true) && f.size() <= MAX)
            })?;
            let mut text = String::new();
            archive.by_index(index).ok()?.read_to_string(&mut text).ok()?;
            Some(text)
        }
    }
}

/// What a tar.gz holds, read without writing anything: the MD5 (lower-case hex) of every
/// regular file by its name (a leading `./` dropped) — what a Conan package's
/// `conanmanifest.txt` is checked against — and the tree digest a2c computes when it extracts
/// it (a single top-level directory stripped, as extraction does). Only the names the archive
/// policy allows are accepted (`entry_segments`), within `limits`.
pub fn tar_gz_inventory(
    source: impl Read,
    limits: &Limits,
) -> Result<(std::collections::BTreeMap<String, String>, String), ArchiveError> {
    use md5::Digest;
    let gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(source));
    let mut tar = tar_read::TarReader::new(gz, tar_gz::PAX_GLOBAL_IGNORED);
    let mut md5s = std::collections::BTreeMap::new();
    let mut files = Vec::new();
    let mut dirs = std::collections::BTreeSet::new();
    let mut total = 0u64;
    while let Some(item) = tar.next()? {
        if (md5s.len() + dirs.len()) as u64 >= limits.max_entries {
            return Err(ArchiveError::TooManyEntries {
                limit: limits.max_entries,
            });
        }
        let (name, mode) = match item {
            tar_read::Item::File { name, mode, .. } => (name, mode),
            // The archive's own top (`tar -C tree .` writes `./`), as extraction skips it.
            tar_read::Item::Dir { name } if policy::is_root_entry(&name) => continue,
            tar_read::Item::Dir { name } => {
                let segments = entry_segments(&name)?;
                if !segments.is_empty() {
                    dirs.insert(segments.join("/"));
                }
                continue;
            }
        };
        let path = entry_segments(&name)?.join("/");
        let mut md5 = md5::Md5::new();
        let mut sha = HashingReader::new(tar.content());
        let mut buf = [0u8; 64 * 1024];
        loop {
            let n = sha.read(&mut buf)?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if total > limits.max_unpacked_bytes {
                return Err(ArchiveError::TooLarge {
                    limit: limits.max_unpacked_bytes,
                });
            }
            md5.update(&buf[..n]);
        }
        let (sha256, size) = sha.finish()?;
        md5s.insert(path.clone(), crate::util::digest::hex(&md5.finalize()));
        files.push(TreeFile {
            path,
            executable: policy::is_executable(mode),
            sha256,
            size,
        });
    }
    // As extraction does: one top-level entry that is a directory is the tree's root.
    let tops: std::collections::BTreeSet<&str> = files
        .iter()
        .map(|f| f.path.split('/').next().unwrap_or_default())
        .chain(dirs.iter().map(|d| d.split('/').next().unwrap_or_default()))
        .collect();
    if let [top] = tops.into_iter().collect::<Vec<_>>().as_slice()
        && files.iter().all(|f| f.path.contains('/'))
    {
        let prefix = format!("{top}/");
        for f in &mut files {
            f.path = f.path.strip_prefix(&prefix).unwrap_or(&f.path).to_string();
        }
    }
    Ok((md5s, tree_digest(&files)))
}

impl crate::util::hint::Hint for ArchiveError {
    fn hint(&self) -> Option<String> {
        ArchiveError::hint(self)
    }
}
