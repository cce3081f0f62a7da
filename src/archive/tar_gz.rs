//! tar.gz extraction: a streaming loop that accepts only regular files and directories.
//! `tar::Archive::unpack` is never used (it creates links).

use std::io::Read;

use tar::EntryType;

use super::policy::{Sink, entry_segments, is_executable};
use super::{ArchiveError, Format};

fn corrupt(e: impl std::fmt::Display) -> ArchiveError {
    ArchiveError::Corrupt {
        format: Format::TarGz,
        reason: e.to_string(),
    }
}

pub fn extract(source: &mut dyn Read, sink: &mut Sink<'_>) -> Result<(), ArchiveError> {
    let gz = flate2::read::GzDecoder::new(source);
    let mut archive = tar::Archive::new(gz);
    let entries = archive.entries().map_err(corrupt)?;
    for entry in entries {
        let mut entry = entry.map_err(corrupt)?;
        let kind = entry.header().entry_type();
        if matches!(kind, EntryType::XGlobalHeader) {
            continue; // pax global metadata, not a path
        }
        sink.count_entry()?;
        let raw = entry.path_bytes().into_owned();
        let name = String::from_utf8_lossy(&raw).into_owned();
        let refuse = |what: &str| ArchiveError::Entry {
            entry: name.escape_debug().to_string(),
            reason: format!("{what} entries are not allowed"),
        };
        match kind {
            EntryType::Regular | EntryType::Continuous => {
                let segments = entry_segments(&raw)?;
                let mode = entry.header().mode().map_err(corrupt)?;
                let declared = entry.header().size().map_err(corrupt)?;
                sink.file(&segments, is_executable(mode), declared, &mut entry)?;
            }
            EntryType::Directory => {
                let segments = entry_segments(&raw)?;
                sink.directory(&segments)?;
            }
            EntryType::Symlink => return Err(refuse("symbolic link")),
            EntryType::Link => return Err(refuse("hard link")),
            EntryType::Char | EntryType::Block => return Err(refuse("device")),
            EntryType::Fifo => return Err(refuse("fifo")),
            EntryType::GNUSparse => return Err(refuse("sparse file")),
            _ => return Err(refuse(&format!("unsupported ({:?})", kind))),
        }
    }
    // Read the gzip stream to its end so that its trailer (CRC, size) is checked.
    let mut gz = archive.into_inner();
    std::io::copy(&mut gz, &mut std::io::sink()).map_err(corrupt)?;
    Ok(())
}
