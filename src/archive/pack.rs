//! Deterministic packing of a method tree: sorted entries, fixed times and owners, modes
//! normalized to 0644/0755, so that packing the same tree twice gives the same bytes.

use std::io::{BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::policy::{RECEIPT_FILE, TREE_FILE, entry_segments};
use super::{ArchiveError, Format};
use crate::util::digest::{HashingReader, Sha256, TreeFile, sha256_reader, tree_digest};

/// One file of a tree to pack.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub relative: String,
    pub path: PathBuf,
    pub executable: bool,
    pub size: u64,
}

/// What packing produced.
#[derive(Debug, Clone)]
pub struct PackedBundle {
    pub sha256: Sha256,
    pub size: u64,
    pub tree: String,
    pub files: usize,
}

/// Lists the regular files and directories of `root`, sorted, skipping `.git` and an install
/// receipt. Symbolic links and names a2c would refuse to extract are errors.
pub fn scan_tree(root: &Path) -> Result<(Vec<String>, Vec<SourceFile>), ArchiveError> {
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    let walk = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1);
    let mut it = walk.into_iter();
    while let Some(entry) = it.next() {
        let entry = entry.map_err(|e| std::io::Error::other(format!("failed to list `{}`: {e}", root.display())))?;
        let relative = crate::util::paths::relative_slash(root, entry.path()).unwrap_or_default();
        if entry.depth() == 1
            && (entry.file_name() == ".git" || entry.file_name() == RECEIPT_FILE || entry.file_name() == TREE_FILE)
        {
            if entry.file_type().is_dir() {
                it.skip_current_dir();
            }
            continue;
        }
        entry_segments(relative.as_bytes()).map_err(|e| match e {
            ArchiveError::Entry { reason, .. } => ArchiveError::Unportable {
                path: entry.path().to_path_buf(),
                reason,
            },
            e => e,
        })?;
        let ft = entry.file_type();
        if ft.is_dir() {
            dirs.push(relative);
        } else if ft.is_file() {
            let meta = fs_err::metadata(entry.path())?;
            let executable = crate::util::platform::is_executable(&meta);
            files.push(SourceFile {
                relative,
                path: entry.path().to_path_buf(),
                executable,
                size: meta.len(),
            });
        } else {
            let kind = match entry.file_type().is_symlink() {
                true => "it is a symbolic link",
                false => "it is neither a regular file nor a directory",
            };
            return Err(ArchiveError::NotPackable {
                path: entry.path().to_path_buf(),
                reason: kind.into(),
            });
        }
    }
    dirs.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    files.sort_by(|a, b| a.relative.as_bytes().cmp(b.relative.as_bytes()));
    refuse_folded_collisions(root, dirs.iter().chain(files.iter().map(|f| &f.relative)))?;
    Ok((dirs, files))
}

/// Refuses two paths of the tree that one case-insensitive or normalizing filesystem (APFS and
/// HFS+ by default, NTFS) would make one — `Rules/a.md` and `rules/a.md`, an NFC and an NFD
/// `café.md`, or `Rules/x.md` beside `rules/y.md` (one directory there): such a bundle would
/// install two trees on two machines from one lock. Install refuses it the same way; every
/// prefix of each path is compared, as stored (the tree digest is defined on names as stored).
fn refuse_folded_collisions<'a>(root: &Path, paths: impl Iterator<Item = &'a String>) -> Result<(), ArchiveError> {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for path in paths {
        let mut end = 0;
        for seg in path.split('/') {
            end += seg.len();
            let prefix = &path[..end];
            match seen.get(&super::policy::fold(prefix)) {
                Some(other) if *other != prefix => {
                    return Err(ArchiveError::Unportable {
                        path: root.join(prefix),
                        reason: format!(
                            "it and `{other}` are one name on a case-insensitive or normalizing filesystem (macOS, Windows)"
                        ),
                    });
                }
                Some(_) => {}
                None => {
                    seen.insert(super::policy::fold(prefix), prefix);
                }
            }
            end += 1;
        }
    }
    Ok(())
}

/// Packs `root` into `out` as `format`, every entry under the top-level directory `top`.
/// Refuses a tree that an install under `limits` would refuse: pack never publishes what a
/// default `a2c install` cannot install.
pub fn check_install_limits(
    root: &Path,
    dirs: &[String],
    files: &[SourceFile],
    limits: &super::Limits,
) -> Result<(), ArchiveError> {
    // The top-level directory, every directory and every file are entries.
    let entries = 1 + dirs.len() as u64 + files.len() as u64;
    let bytes: u64 = files.iter().map(|f| f.size).sum();
    let over = |what: String, limit: u64, variable: &'static str| ArchiveError::ExceedsInstallLimit {
        detail: format!(
            "the tree `{}` {what}: `a2c install` refuses more than {limit} ({variable}), so it is not packed",
            root.display()
        ),
        variable,
    };
    if entries > limits.max_entries {
        return Err(over(
            format!("would make a bundle of {entries} entries"),
            limits.max_entries,
            crate::env::A2C_MAX_ENTRIES,
        ));
    }
    if bytes > limits.max_unpacked_bytes {
        return Err(over(
            format!("holds {bytes} bytes of files"),
            limits.max_unpacked_bytes,
            crate::env::A2C_MAX_UNPACKED_BYTES,
        ));
    }
    Ok(())
}

/// The default deflate level of `a2c pack` (zlib's default). The level is part of what makes
/// a bundle's bytes: re-packing a published version at another level gives other bytes.
pub const DEFAULT_LEVEL: u32 = 6;

/// How `pack` deflates: the level, and the threads (1: one deflate stream, the default; 2 or
/// more: independent blocks, see `blockgz` — other bytes than one stream's, the same
/// for any count of threads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deflate {
    pub level: u32,
    pub threads: usize,
}

impl Default for Deflate {
    fn default() -> Self {
        Self {
            level: DEFAULT_LEVEL,
            threads: 1,
        }
    }
}

pub fn pack_tree(
    root: &Path,
    top: &str,
    format: Format,
    out: &Path,
    limits: &super::Limits,
    deflate: Deflate,
) -> Result<PackedBundle, ArchiveError> {
    let (dirs, files) = scan_tree(root)?;
    check_install_limits(root, &dirs, &files, limits)?;
    let file = fs_err::File::create(out)?;
    let level = deflate.level;
    let digests = match format {
        Format::TarGz if deflate.threads > 1 => {
            let gz = super::blockgz::BlockGzWriter::new(BufWriter::new(file), level, deflate.threads)?;
            let (gz, digests) = write_tar(gz, top, &dirs, &files)?;
            gz.finish()?;
            digests
        }
        Format::TarGz => {
            let gz = flate2::GzBuilder::new()
                .mtime(0)
                .write(BufWriter::new(file), flate2::Compression::new(level));
            let (gz, digests) = write_tar(gz, top, &dirs, &files)?;
            gz.finish()?.flush()?;
            digests
        }
        Format::Zip => write_zip(file, top, &dirs, &files, level)?,
        // A wheel's `top` is `{dist}-{version}` (the distribution escaped: no `-` in it).
        Format::Wheel => {
            let (dist, version) = top
                .split_once('-')
                .ok_or_else(|| std::io::Error::other(format!("`{top}` names no wheel: expected DIST-VERSION")))?;
            write_wheel(file, dist, version, &files, level)?
        }
    };
    let (sha256, size) = sha256_reader(fs_err::File::open(out)?)?;
    if matches!(format, Format::Zip | Format::Wheel) && size > super::zip::MAX_ZIP_BYTES {
        // An install reads a zip bundle into memory, up to this size.
        return Err(ArchiveError::ZipTooLarge {
            size,
            limit: super::zip::MAX_ZIP_BYTES,
        });
    }
    Ok(PackedBundle {
        sha256,
        size,
        tree: tree_digest(&digests),
        files: files.len(),
    })
}

pub(super) fn hashed(file: &SourceFile) -> Result<HashingReader<fs_err::File>, ArchiveError> {
    Ok(HashingReader::new(fs_err::File::open(&file.path)?))
}

pub(super) fn tree_file(file: &SourceFile, reader: HashingReader<fs_err::File>) -> Result<TreeFile, ArchiveError> {
    let (sha256, size) = reader.finish()?;
    if size != file.size {
        return Err(std::io::Error::other(format!("`{}` changed while it was packed", file.path.display())).into());
    }
    Ok(TreeFile {
        path: file.relative.clone(),
        executable: file.executable,
        sha256,
        size,
    })
}

/// Writes the deterministic tar stream of the tree into `out`; returns `out` and the files'
/// digests.
fn write_tar<W: Write>(
    out: W,
    top: &str,
    dirs: &[String],
    files: &[SourceFile],
) -> Result<(W, Vec<TreeFile>), ArchiveError> {
    let mut builder = tar::Builder::new(out);
    builder.mode(tar::HeaderMode::Deterministic);
    let header = |kind: tar::EntryType, mode: u32, size: u64| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_size(size);
        h.set_mtime(0);
        h.set_uid(0);
        h.set_gid(0);
        h
    };
    let mut all_dirs = vec![String::new()];
    all_dirs.extend(dirs.iter().cloned());
    for d in &all_dirs {
        let mut h = header(tar::EntryType::Directory, 0o755, 0);
        let name = if d.is_empty() {
            format!("{top}/")
        } else {
            format!("{top}/{d}/")
        };
        builder.append_data(&mut h, name, std::io::empty())?;
    }
    let mut digests = Vec::with_capacity(files.len());
    for f in files {
        let mut h = header(
            tar::EntryType::Regular,
            if f.executable { 0o755 } else { 0o644 },
            f.size,
        );
        let mut reader = hashed(f)?;
        builder.append_data(&mut h, format!("{top}/{}", f.relative), (&mut reader).take(f.size))?;
        digests.push(tree_file(f, reader)?);
    }
    Ok((builder.into_inner()?, digests))
}

/// The options of every entry a2c writes in a zip or a wheel: deflated at `level`, time zero
/// (deterministic bytes), `mode`.
fn zip_options(level: u32, mode: u32) -> ::zip::write::SimpleFileOptions {
    ::zip::write::SimpleFileOptions::default()
        .compression_method(::zip::CompressionMethod::Deflated)
        .compression_level(Some(i64::from(level)))
        .last_modified_time(::zip::DateTime::default())
        .unix_permissions(mode)
}

fn write_zip(
    out: impl Write + Seek,
    top: &str,
    dirs: &[String],
    files: &[SourceFile],
    level: u32,
) -> Result<Vec<TreeFile>, ArchiveError> {
    let zip_err = |e: ::zip::result::ZipError| std::io::Error::other(format!("failed to write zip: {e}"));
    let mut zip = ::zip::ZipWriter::new(out);
    let options = |mode: u32| zip_options(level, mode);
    zip.add_directory(format!("{top}/"), options(0o755)).map_err(zip_err)?;
    for d in dirs {
        zip.add_directory(format!("{top}/{d}/"), options(0o755))
            .map_err(zip_err)?;
    }
    let mut digests = Vec::with_capacity(files.len());
    for f in files {
        zip.start_file(
            format!("{top}/{}", f.relative),
            options(if f.executable { 0o755 } else { 0o644 }),
        )
        .map_err(zip_err)?;
        let mut reader = hashed(f)?;
        std::io::copy(&mut reader, &mut zip)?;
        digests.push(tree_file(f, reader)?);
    }
    zip.finish().map_err(zip_err)?.flush()?;
    Ok(digests)
}

/// Writes a method wheel of the tree (`dirs`, `files`) of `dist` at `version`: the tree under
/// the package directory, then `WHEEL`, `METADATA` and `RECORD`. Deterministic: entries in
/// order, times zero.
fn write_wheel(
    out: impl Write + Seek,
    dist: &str,
    version: &str,
    files: &[SourceFile],
    level: u32,
) -> Result<Vec<TreeFile>, ArchiveError> {
    use super::wheel;
    use base64::Engine;
    let zip_err = |e: ::zip::result::ZipError| std::io::Error::other(format!("failed to write the wheel: {e}"));
    let mut zip = ::zip::ZipWriter::new(out);
    let options = |mode: u32| zip_options(level, mode);
    let package = wheel::escaped(dist);
    let dist_info = format!("{package}-{version}.dist-info");
    let mut record = String::new();
    let mut digests = Vec::with_capacity(files.len());
    let mut line = |name: &str, sha256: &Sha256, size: u64| {
        record.push_str(&format!(
            "{},sha256={},{size}\n",
            wheel::csv_field(name),
            wheel::B64.encode(sha256.0)
        ));
    };
    for f in files {
        let name = format!("{package}/{}", f.relative);
        zip.start_file(name.as_str(), options(if f.executable { 0o755 } else { 0o644 }))
            .map_err(zip_err)?;
        let mut reader = hashed(f)?;
        std::io::copy(&mut reader, &mut zip)?;
        let digest = tree_file(f, reader)?;
        line(&name, &digest.sha256, digest.size);
        digests.push(digest);
    }
    let metadata = format!(
        "Metadata-Version: 2.1\nName: {}\nVersion: {version}\nSummary: a2c method assets {version} (the tree is the `{package}` package's data)\n",
        wheel::normalize(dist)
    );
    let wheel = format!(
        "Wheel-Version: 1.0\nGenerator: a2c {}\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        crate::A2C_VERSION
    );
    for (name, text) in [("METADATA", metadata), ("WHEEL", wheel)] {
        let name = format!("{dist_info}/{name}");
        zip.start_file(name.as_str(), options(0o644)).map_err(zip_err)?;
        zip.write_all(text.as_bytes())?;
        let (sha256, size) = crate::util::digest::sha256_reader(text.as_bytes())?;
        line(&name, &sha256, size);
    }
    let record_name = format!("{dist_info}/RECORD");
    record.push_str(&format!("{record_name},,\n"));
    zip.start_file(record_name.as_str(), options(0o644)).map_err(zip_err)?;
    zip.write_all(record.as_bytes())?;
    zip.finish().map_err(zip_err)?.flush()?;
    Ok(digests)
}
