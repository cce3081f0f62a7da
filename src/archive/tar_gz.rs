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

/// PAX global header records a2c ignores: metadata it never applies to anything it extracts
/// (`git archive` writes a `comment` with the commit id). Any other global record — `path`
/// above all, which GNU tar and Python apply to every later entry — is refused.
pub const PAX_GLOBAL_IGNORED: &[&str] = &["comment", "mtime", "atime", "ctime", "uid", "gid", "uname", "gname"];

/// The name of a tar entry type a2c does not extract, for messages (never a Debug dump).
fn type_name(byte: u8) -> String {
    let known = match byte {
        b'D' => "GNU dumpdir",
        b'M' => "GNU multi-volume continuation",
        b'V' => "GNU volume label",
        b'N' => "GNU old long name",
        b'A' => "Solaris ACL",
        b'E' => "Solaris extended attribute",
        b'I' => "inode metadata",
        b'X' => "Solaris extended header",
        _ => "",
    };
    let shown = if byte.is_ascii_graphic() {
        format!("`{}`", byte as char)
    } else {
        format!("{byte:#04x}")
    };
    match known {
        "" => format!("unsupported (entry type {shown})"),
        k => format!("{k} (entry type {shown})"),
    }
}

/// Extracts a tar.gz stream: this thread inflates (and, beneath, hashes the bundle), parses
/// the tar stream, checks every entry and hashes the files, while a second one makes the
/// directories and writes the files (`policy::Writer`) — the system calls, which for many small
/// files are most of the work, overlap with everything else. Operations go through a bounded
/// channel (at most 64 in flight: 4 MiB of content). The gzip stream is read to its end so
/// that its trailer is checked.
pub fn extract(source: &mut dyn Read, sink: &mut Sink<'_>) -> Result<(), ArchiveError> {
    let (writer, link) = super::policy::Writer::new(sink.dest(), 64)?;
    let mut gz = flate2::read::GzDecoder::new(source);
    let parsed = std::thread::scope(|scope| {
        let written = scope.spawn(move || writer.run());
        let parsed = {
            // Closed on every way out, a panic included: the writer then ends, and the scope
            // can join it instead of waiting forever.
            let feeding = Feeding(sink);
            feeding.0.set_writer(link);
            parse(&mut gz, feeding.0)
        };
        let written = written.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        // The writer's own error explains why the parser found it gone.
        written.and(parsed)
    });
    parsed?;
    std::io::copy(&mut gz, &mut std::io::sink()).map_err(corrupt)?;
    Ok(())
}

/// A sink feeding a writer thread; dropping it closes the writer's channel.
struct Feeding<'s, 'd>(&'s mut Sink<'d>);

impl Drop for Feeding<'_, '_> {
    fn drop(&mut self) {
        self.0.close_writer();
    }
}

fn parse(inflated: impl Read, sink: &mut Sink<'_>) -> Result<(), ArchiveError> {
    let mut archive = tar::Archive::new(inflated);
    let entries = archive.entries().map_err(corrupt)?;
    for entry in entries {
        let mut entry = entry.map_err(corrupt)?;
        let kind = entry.header().entry_type();
        let raw = entry.path_bytes().into_owned();
        // The name as messages show it, made only for a message.
        let entry_name = || String::from_utf8_lossy(&raw).escape_debug().to_string();
        let refuse_why = |reason: String| ArchiveError::Entry {
            entry: entry_name(),
            reason,
        };
        if matches!(kind, EntryType::XGlobalHeader) {
            // Records meant for every later entry: honoured by no rule of a2c's, so refused
            // unless they are metadata a2c ignores anyway.
            if let Some(records) = entry.pax_extensions().map_err(corrupt)? {
                for record in records {
                    let record = record.map_err(corrupt)?;
                    let key = String::from_utf8_lossy(record.key_bytes()).into_owned();
                    if !PAX_GLOBAL_IGNORED.contains(&key.as_str()) {
                        return Err(refuse_why(format!(
                            "a PAX global header with a `{}` record: GNU tar and Python apply it to every later entry, so a2c refuses the archive rather than read it differently",
                            key.escape_debug()
                        )));
                    }
                }
            }
            continue;
        }
        if let Some(records) = entry.pax_extensions().map_err(corrupt)? {
            for record in records {
                let record = record.map_err(corrupt)?;
                if record.key_bytes().starts_with(b"GNU.sparse.") {
                    return Err(refuse_why(
                        "a PAX sparse file (`GNU.sparse.*` records): its data is a sparse map, not the file, so it is not allowed".into(),
                    ));
                }
            }
        }
        sink.count_entry()?;
        let refuse = |what: &str| ArchiveError::Entry {
            entry: entry_name(),
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
            _ => {
                return Err(refuse_why(format!(
                    "{} entries are not allowed (a2c extracts only regular files and directories)",
                    type_name(kind.as_byte())
                )));
            }
        }
    }
    Ok(())
}
