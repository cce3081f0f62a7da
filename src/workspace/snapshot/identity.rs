//! A path's identity as the snapshot records it (kind, device, inode, size, modification and
//! change times to the nanosecond), taken relative to an open directory, and read back from
//! the snapshot's text strictly.

use super::*;
use crate::util::platform::{DirFd, DirRef, Stat};

/// What a path was: absent (kind `-`), or what `stat` read of it without following a link
/// (kind `f` file, `d` directory, `l` link, `o` anything else).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity(pub(super) Stat);

impl Identity {
    pub(super) const ABSENT: Self = Self(Stat {
        kind: '-',
        dev: 0,
        ino: 0,
        size: 0,
        mtime: (0, 0),
        ctime: (0, 0),
    });

    /// The identity of `rel` under the directory handle `dir`, its last component not followed.
    pub(super) fn at(dir: DirRef<'_>, rel: &str) -> io::Result<Self> {
        Ok(crate::util::platform::stat_at(dir, rel)?.map_or(Self::ABSENT, Self))
    }

    /// The directory `rel` under `dir`, opened without following a link, and its identity;
    /// `None` when it is no directory (or a link) now.
    pub(super) fn open_dir(dir: DirRef<'_>, rel: &str) -> io::Result<Option<(DirFd, Self)>> {
        Ok(crate::util::platform::open_dir_at(dir, rel)?.map(|(fd, st)| (fd, Self(st))))
    }

    /// Changed at or after `since` (seconds, nanoseconds since the epoch)?
    pub(super) fn changed_since(&self, since: (i64, u32)) -> bool {
        self.0.kind != '-' && (self.0.mtime >= since || self.0.ctime >= since)
    }

    /// Appends its text to `out` (written straight into the snapshot: thousands per run).
    pub(super) fn write_to(&self, out: &mut String) {
        use std::fmt::Write;
        let Self(st) = self;
        let _ = write!(
            out,
            "{} {} {} {} {}.{:09} {}.{:09}",
            st.kind, st.dev, st.ino, st.size, st.mtime.0, st.mtime.1, st.ctime.0, st.ctime.1
        );
    }

    #[cfg(test)]
    pub(super) fn text(&self) -> String {
        let mut out = String::new();
        self.write_to(&mut out);
        out
    }

    #[cfg(test)]
    pub(super) fn line(&self, rel: &str) -> String {
        format!("{}\t{rel}", self.text())
    }

    /// What [`Identity::text`] wrote, and nothing else (`None`: the snapshot is not used). A
    /// member's five are parsed for each of thousands of members on every no-op run: the
    /// bytes are read in one pass, each number as its digits go by (splitting the fields
    /// first, then parsing each, took most of a worker's parsing).
    pub(super) fn parse(text: &[u8]) -> Option<Self> {
        let kind = match text {
            [k @ (b'-' | b'f' | b'd' | b'l' | b'o'), b' ', ..] => char::from(*k),
            _ => return None,
        };
        let mut at = Digits { text, at: 2 };
        let dev = at.number(Some(b' '))?;
        let ino = at.number(Some(b' '))?;
        let size = at.number(Some(b' '))?;
        let mtime = at.time(Some(b' '))?;
        let ctime = at.time(None)?;
        Some(Self(Stat {
            kind,
            dev,
            ino,
            size,
            mtime,
            ctime,
        }))
    }
}

/// Reads the numbers of an identity's text in one pass.
pub(super) struct Digits<'a> {
    pub(super) text: &'a [u8],
    pub(super) at: usize,
}

impl Digits<'_> {
    /// One to twenty ASCII digits forming a `u64`, then `stop` (passed over), or the text's
    /// end when `stop` is `None`; nothing else.
    pub(super) fn number(&mut self, stop: Option<u8>) -> Option<u64> {
        let rest = &self.text[self.at..];
        let mut n: u64 = 0;
        let mut len = 0;
        for &b in rest {
            if Some(b) == stop {
                break;
            }
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            len += 1;
            // Nineteen digits never overflow a u64; a twentieth may.
            n = match len {
                ..=19 => n * 10 + u64::from(d),
                20 => n.checked_mul(10)?.checked_add(u64::from(d))?,
                _ => return None,
            };
        }
        match (len, rest.get(len)) {
            (0, _) => None,
            // As written: no leading zero (so that one text means one number).
            (2.., _) if rest[0] == b'0' => None,
            (_, Some(_)) => {
                self.at += len + 1;
                Some(n)
            }
            (_, None) if stop.is_none() => {
                self.at += len;
                Some(n)
            }
            (_, None) => None,
        }
    }

    /// A time as a snapshot writes it: seconds (a `-` before them when before 1970), a dot,
    /// and the nanoseconds; then `stop` as [`Digits::number`] reads it.
    pub(super) fn time(&mut self, stop: Option<u8>) -> Option<(i64, u32)> {
        let negative = self.text.get(self.at) == Some(&b'-');
        self.at += usize::from(negative);
        let seconds = i64::try_from(self.number(Some(b'.'))?).ok()?;
        let seconds = match negative {
            true if seconds == 0 => return None, // `-0` is never written
            true => seconds.checked_neg()?,
            false => seconds,
        };
        // Nine digits of nanoseconds, as `{:09}` writes them.
        let at = self.at;
        let digits = self.text[at..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits != 9 {
            return None;
        }
        self.at += 9;
        let nanos = self.text[at..at + 9]
            .iter()
            .fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
        match (stop, self.text.get(self.at)) {
            (None, None) => {}
            (Some(s), Some(b)) if *b == s => self.at += 1,
            _ => return None,
        }
        Some((seconds, nanos))
    }
}

/// A decimal number as a snapshot writes it: one to twenty ASCII digits, nothing else.
pub(super) fn decimal(digits: &[u8]) -> Option<u64> {
    Digits { text: digits, at: 0 }.number(None)
}
