//! tar.gz extraction: a streaming loop that accepts only regular files and directories.
//! `tar::Archive::unpack` is never used (it creates links).

use std::io::Read;

use super::policy::{Sink, entry_segments, is_executable, is_root_entry};
use super::tar_read::{Item, TarReader};
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

/// Extracts a tar.gz stream: this thread inflates (and, beneath, hashes the bundle), parses
/// the tar stream, checks every entry and hashes the files, while a second one makes the
/// directories and writes the files (`policy::Writer`) — the system calls, which for many small
/// files are most of the work, overlap with everything else. Operations go through a bounded
/// channel in batches (at most 8 in flight, each of at most 32 operations or 512 KiB of
/// content: about 4 MiB in all). The gzip stream is read to its end so
/// that its trailer is checked. A gzip file may be several members in a row (RFC 1952 §2.2:
/// `bgzip`, `pigz --independent`, concatenated `gzip` output): all are read, as `gzip -d`,
/// GNU tar, bsdtar and Python read them.
pub fn extract(source: &mut dyn Read, sink: &mut Sink<'_>) -> Result<(), ArchiveError> {
    let (writer, link) = super::policy::Writer::new(sink.dest(), 8)?;
    let mut gz = flate2::read::MultiGzDecoder::new(source);
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
    let mut tar = TarReader::new(inflated, PAX_GLOBAL_IGNORED);
    while let Some(item) = tar.next()? {
        match item {
            // The archive's own top (`tar -C tree .` writes `./`): every extractor skips it.
            Item::Dir { name } if is_root_entry(&name) => {}
            Item::Dir { name } => {
                sink.count_entry()?;
                sink.directory(&entry_segments(&name)?)?;
            }
            Item::File { name, mode, size } => {
                sink.count_entry()?;
                let segments = entry_segments(&name)?;
                sink.file(&segments, is_executable(mode), size, &mut tar.content())?;
            }
        }
    }
    Ok(())
}
