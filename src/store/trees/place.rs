//! Placing a cached tree's files into a store: how (`LinkMode`: reflink clone, hard link, or
//! copy), each file checked against its record as it is placed.

use super::*;

/// How a version is placed from the tree cache into a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkMode {
    /// Copy-on-write clone (reflink: btrfs, XFS, bcachefs); falls back as below when refused.
    Clone,
    /// Hard links: the store's files are the cache's (read-only) files.
    Hardlink,
    /// Independent copies.
    Copy,
}

impl LinkMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Clone => "clone",
            Self::Hardlink => "hardlink",
            Self::Copy => "copy",
        }
    }

    /// Every mode, by name.
    pub const NAMES: [&'static str; 3] = ["clone", "hardlink", "copy"];

    /// The value of `A2C_LINK_MODE`, if set, parsed.
    pub fn parse_setting(value: Option<String>) -> Result<Option<Self>, String> {
        match value {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                format!(
                    "{}=`{v}` is not a link mode (clone, hardlink or copy)",
                    crate::env::A2C_LINK_MODE
                )
            }),
        }
    }
}

impl std::str::FromStr for LinkMode {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        match s.to_ascii_lowercase().as_str() {
            "clone" => Ok(Self::Clone),
            "hardlink" => Ok(Self::Hardlink),
            "copy" => Ok(Self::Copy),
            _ => Err(()),
        }
    }
}

/// Shares every recorded file of `from` into `dest` by `mode` (see [`share`]), checking each
/// against its record first ([`changed_since_cached`]). The mode used, and each file's
/// modification time and the change time of the cache's file after sharing (a hard link moves
/// it): the file in `dest` when `into_cache` (a promotion), else the one in `from`.
pub(super) fn copy_checked(
    from: &Path,
    cached: &CachedTree,
    dest: &Path,
    mode: Option<LinkMode>,
    into_cache: bool,
) -> Result<(LinkMode, Vec<(i128, u64)>), PlaceError> {
    let mut used = mode;
    let mut dirs = std::collections::HashSet::new();
    let mut times = Vec::with_capacity(cached.files.len());
    let mut suspects = Suspects::new(from, &cached.tree);
    for f in &cached.files {
        let src = from.join(&f.path);
        let m = match std::fs::symlink_metadata(&src) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(match from.is_dir() {
                    true => PlaceError::Tampered(format!("`{}` is missing", f.path)),
                    false => PlaceError::Gone,
                });
            }
            Err(e) => return Err(e.into()),
        };
        if let Some(why) = changed_since_cached(f, &m, cached.sealed, &mut suspects) {
            return Err(PlaceError::Tampered(why));
        }
        make_parents(dest, &f.path, &mut dirs)?;
        let to = dest.join(&f.path);
        used = share(&src, &to, used, true)?;
        // The cache file's link count now: one more for a hard link (the same inode on both
        // sides); a copy or clone leaves the source alone and makes a new file of one link.
        let nlink = match (used, into_cache) {
            (Some(LinkMode::Hardlink), _) => crate::util::platform::link_count(&m, &src) + 1,
            (_, true) => 1,
            (_, false) => crate::util::platform::link_count(&m, &src),
        };
        times.push((mtime_ns(&m), nlink));
    }
    Ok((used.unwrap_or(LinkMode::Copy), times))
}

/// Creates the missing parent directories of `rel` under `base` (0755 less the umask).
pub(super) fn make_parents(base: &Path, rel: &str, made: &mut std::collections::HashSet<String>) -> io::Result<()> {
    let Some((parent, _)) = rel.rsplit_once('/') else {
        return Ok(());
    };
    if made.contains(parent) {
        return Ok(());
    }
    fs_err::create_dir_all(base.join(parent))?;
    let mut p = parent;
    loop {
        made.insert(p.to_string());
        match p.rsplit_once('/') {
            Some((up, _)) => p = up,
            None => break,
        }
    }
    Ok(())
}

/// Shares `src` as `dst` by `mode`: `None` (automatic) tries a clone, then a hard link, then
/// a copy when `allow_copy`; `Clone` falls back to a copy (never to a shared inode); `Hardlink`
/// falls back to a copy across filesystems. The mode used, or `None` when only a copy would do
/// and `allow_copy` is false.
pub(super) fn share(src: &Path, dst: &Path, mode: Option<LinkMode>, allow_copy: bool) -> io::Result<Option<LinkMode>> {
    if matches!(mode, None | Some(LinkMode::Clone)) {
        match clone_file(src, dst) {
            Ok(()) => return Ok(Some(LinkMode::Clone)),
            Err(e) if unsupported(&e) => {}
            Err(e) => return Err(at(e, "clone", src)),
        }
    }
    if matches!(mode, None | Some(LinkMode::Hardlink)) {
        match std::fs::hard_link(src, dst) {
            Ok(()) => return Ok(Some(LinkMode::Hardlink)),
            Err(e) if crate::util::platform::is_cross_device(&e) => {}
            Err(e) => return Err(at(e, &format!("link `{}` to", dst.display()), src)),
        }
    }
    if mode.is_none() && !allow_copy {
        return Ok(None);
    }
    let m = fs_err::symlink_metadata(src)?;
    copy_file(src, dst, m.mode() & 0o7777)?;
    Ok(Some(LinkMode::Copy))
}

/// Errors that mean "this filesystem cannot clone".
pub(super) fn unsupported(e: &io::Error) -> bool {
    crate::util::platform::cannot_clone(e)
}

/// Clones and copies keep the source's modification time (as `cp -p` does), so that a copy
/// still matches the record it was checked against.
pub(super) fn clone_file(src: &Path, dst: &Path) -> io::Result<()> {
    let from = fs_err::File::open(src)?;
    let meta = from.metadata()?;
    let mode = meta.mode() & 0o7777;
    // Left as the raw errno: `unsupported` tells "cannot clone here" from it.
    let to = crate::util::platform::clone_file(from.file(), dst)?;
    to.set_modified(meta.modified()?)
        .map_err(|e| at(e, "set the time of", dst))?;
    crate::util::platform::set_file_mode(&to, mode).map_err(|e| at(e, "set the mode of", dst))?;
    Ok(())
}

pub(super) fn copy_file(src: &Path, dst: &Path, mode: u32) -> io::Result<()> {
    let mut from = fs_err::File::open(src)?;
    let mut to = crate::util::contain::open_write(dst, crate::util::contain::Open::New, 0o600)?;
    io::copy(&mut from, &mut to).map_err(|e| at(e, &format!("copy `{}` to", src.display()), dst))?;
    let modified = from.metadata()?.modified()?;
    to.set_modified(modified).map_err(|e| at(e, "set the time of", dst))?;
    crate::util::platform::set_file_mode(&to, mode).map_err(|e| at(e, "set the mode of", dst))?;
    Ok(())
}
