//! zip extraction. A zip is read through its central directory, which needs random access:
//! the bundle is read once into memory (hashed on the way), then parsed from there.

use std::io::{Cursor, Read};

use ::zip::CompressionMethod;

use super::policy::{Sink, entry_segments, is_executable};
use super::{ArchiveError, Format};

/// The largest zip bundle read into memory.
pub const MAX_ZIP_BYTES: u64 = 512 << 20;

const S_IFMT: u32 = 0o170000;
const S_IFREG: u32 = 0o100000;
const S_IFDIR: u32 = 0o040000;
const S_IFLNK: u32 = 0o120000;

fn corrupt(e: impl std::fmt::Display) -> ArchiveError {
    ArchiveError::Corrupt {
        format: Format::Zip,
        reason: e.to_string(),
    }
}

pub fn extract(source: &mut dyn Read, sink: &mut Sink<'_>) -> Result<(), ArchiveError> {
    let bytes = read_capped(source)?;
    let mut archive = open(&bytes)?;
    for i in 0..archive.len() {
        sink.count_entry()?;
        let info = entry(&bytes, &mut archive, i)?;
        if info.is_dir {
            sink.directory(&info.segments)?;
            continue;
        }
        let mut file = archive.by_index(i).map_err(corrupt)?;
        sink.file(&info.segments, info.executable, info.declared, &mut file)?;
    }
    Ok(())
}

/// The whole zip, read into memory (hashed on the way by the caller), up to [`MAX_ZIP_BYTES`].
pub(super) fn read_capped(source: &mut dyn Read) -> Result<Vec<u8>, ArchiveError> {
    let mut bytes = Vec::new();
    source.take(MAX_ZIP_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_ZIP_BYTES {
        return Err(ArchiveError::ZipTooLarge {
            size: bytes.len() as u64,
            limit: MAX_ZIP_BYTES,
        });
    }
    Ok(bytes)
}

/// The archive in `bytes`, its central directory checked for duplicate names.
pub(super) fn open(bytes: &[u8]) -> Result<::zip::ZipArchive<Cursor<&[u8]>>, ArchiveError> {
    let declared = declared_entries(bytes);
    let archive = ::zip::ZipArchive::new(Cursor::new(bytes)).map_err(corrupt)?;
    // The zip crate keys entries by name: duplicates in the central directory collapse into one
    // silently. The end-of-central-directory record still counts them all.
    if let Some(declared) = declared
        && declared != archive.len() as u64
    {
        return Err(ArchiveError::Entry {
            entry: "(central directory)".into(),
            reason: format!(
                "duplicate entry: the central directory lists {declared} entries but only {} distinct names",
                archive.len()
            ),
        });
    }
    Ok(archive)
}

/// An entry of a zip, as the archive policy allows it.
pub(super) struct EntryInfo {
    /// The name as the central directory gives it.
    pub name: String,
    pub segments: Vec<String>,
    pub is_dir: bool,
    pub executable: bool,
    /// The uncompressed size it declares.
    pub declared: u64,
}

/// Entry `i`, checked: its local header names it as the central directory does; no encryption,
/// links or special files; a file is stored or deflated; its name is a plain relative path.
pub(super) fn entry(
    bytes: &[u8],
    archive: &mut ::zip::ZipArchive<Cursor<&[u8]>>,
    i: usize,
) -> Result<EntryInfo, ArchiveError> {
    let (raw, is_dir, mode, encrypted, method, declared, header, central) = {
        let f = archive.by_index_raw(i).map_err(corrupt)?;
        (
            f.name_raw().to_vec(),
            f.is_dir(),
            f.unix_mode(),
            f.encrypted(),
            f.compression(),
            f.size(),
            f.header_start(),
            f.central_header_start(),
        )
    };
    check_local_header(bytes, header, central, &raw)?;
    let name = String::from_utf8_lossy(&raw).into_owned();
    let refuse = |reason: String| ArchiveError::Entry {
        entry: crate::util::text::quoted_short(&name),
        reason,
    };
    if encrypted {
        return Err(refuse("encrypted entries are not allowed".into()));
    }
    let kind = mode.map(|m| m & S_IFMT).unwrap_or(0);
    match kind {
        0 | S_IFREG | S_IFDIR => {}
        S_IFLNK => return Err(refuse("symbolic link entries are not allowed".into())),
        other => return Err(refuse(format!("special file entries are not allowed (mode {other:o})"))),
    }
    let segments = entry_segments(&raw)?;
    let is_dir = is_dir || kind == S_IFDIR;
    if !is_dir && !matches!(method, CompressionMethod::Stored | CompressionMethod::Deflated) {
        return Err(refuse(format!("unsupported compression method {method}")));
    }
    Ok(EntryInfo {
        name,
        segments,
        is_dir,
        executable: mode.is_some_and(is_executable),
        declared,
    })
}

/// The local header of an entry must name the same file as the central directory: a reader
/// that trusts one and an extractor that trusts the other must never disagree on a path. Each
/// header's name is read with its own Unicode Path field (0x7075) applied; a local header
/// without one names the file as the central directory does when their legacy names are the
/// same bytes (the field only in the central directory, as some archivers write it).
fn check_local_header(bytes: &[u8], offset: u64, central: u64, central_name: &[u8]) -> Result<(), ArchiveError> {
    let shown = crate::util::text::quoted_bytes(central_name);
    let refuse = |reason: String| ArchiveError::Entry {
        entry: shown.clone(),
        reason,
    };
    let at = usize::try_from(offset).map_err(|_| refuse("its local header is out of range".into()))?;
    let header = bytes
        .get(at..at + 30)
        .ok_or_else(|| refuse("its local header is out of range".into()))?;
    if &header[..4] != b"PK\x03\x04" {
        return Err(refuse("its local header is missing".into()));
    }
    let name_len = usize::from(u16::from_le_bytes([header[26], header[27]]));
    let extra_len = usize::from(u16::from_le_bytes([header[28], header[29]]));
    let raw_name = bytes
        .get(at + 30..at + 30 + name_len)
        .ok_or_else(|| refuse("its local header is truncated".into()))?;
    let extra = bytes
        .get(at + 30 + name_len..at + 30 + name_len + extra_len)
        .ok_or_else(|| refuse("its local header is truncated".into()))?;
    // The central name comes with its Info-ZIP Unicode Path field (0x7075) applied, as WinZip
    // and 7-Zip write it beside a legacy (CP437) name: the local one is read the same way.
    let local_field = unicode_path(extra, raw_name);
    let local_name = local_field.unwrap_or(raw_name);
    let central_legacy = usize::try_from(central)
        .ok()
        .and_then(|at| {
            let header = bytes.get(at..at + 46).filter(|h| &h[..4] == b"PK\x01\x02")?;
            let len = usize::from(u16::from_le_bytes([header[28], header[29]]));
            bytes.get(at + 46..at + 46 + len)
        })
        .ok_or_else(|| refuse("its central directory header is out of range".into()))?;
    let same_legacy = local_field.is_none() && raw_name == central_legacy;
    if local_name != central_name && !same_legacy {
        return Err(refuse(format!(
            "the local header names `{}` but the central directory names it differently",
            crate::util::text::quoted_bytes(local_name)
        )));
    }
    Ok(())
}

/// The UTF-8 name of an Info-ZIP Unicode Path extra field (0x7075: version 1, the CRC-32 of
/// the header's own name, then the name) among `extra`, when its CRC matches `raw_name` (a
/// stale field, whose name was changed by a tool that kept the field, is ignored, as `unzip`
/// ignores it).
fn unicode_path<'a>(mut extra: &'a [u8], raw_name: &[u8]) -> Option<&'a [u8]> {
    while extra.len() >= 4 {
        let id = u16::from_le_bytes([extra[0], extra[1]]);
        let size = usize::from(u16::from_le_bytes([extra[2], extra[3]]));
        let data = extra.get(4..4 + size)?;
        if id == 0x7075 && data.len() >= 5 && data[0] == 1 {
            let crc = u32::from_le_bytes([data[1], data[2], data[3], data[4]]);
            let mut actual = flate2::Crc::new();
            actual.update(raw_name);
            return (actual.sum() == crc).then_some(&data[5..]);
        }
        extra = &extra[4 + size..];
    }
    None
}

/// The number of entries the end-of-central-directory record declares (zip64 aware).
fn declared_entries(bytes: &[u8]) -> Option<u64> {
    let le16 = |b: &[u8]| u64::from(u16::from_le_bytes([b[0], b[1]]));
    let le64 = |b: &[u8]| u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    let start = bytes.len().saturating_sub(22 + 65_535);
    let eocd = (start..=bytes.len().checked_sub(22)?)
        .rev()
        .find(|&i| &bytes[i..i + 4] == b"PK\x05\x06")?;
    let total = le16(&bytes[eocd + 10..]);
    if total != 0xFFFF {
        return Some(total);
    }
    // zip64: the locator sits right before the EOCD and points at the zip64 record.
    let locator = eocd.checked_sub(20)?;
    if &bytes[locator..locator + 4] != b"PK\x06\x07" {
        return Some(total);
    }
    let record = usize::try_from(le64(&bytes[locator + 8..])).ok()?;
    if bytes.get(record..record + 4)? != b"PK\x06\x06" {
        return None;
    }
    Some(le64(bytes.get(record + 32..record + 40)?))
}
