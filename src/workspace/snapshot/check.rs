//! Checking a snapshot against W: its text cut into pieces checked in parallel, each member's
//! recorded paths re-stated relative to its parent directory's handle, and the members that
//! still hold built as they are read.

use super::*;

/// How many entries below a directory make opening it worth it.
pub(super) const OPEN_BELOW: usize = 5;

/// The first of `entries` (sorted by path) whose identity no longer holds. A directory with
/// entries below it is opened (no-follow) and they are checked relative to it: each path walk
/// starts at the nearest checked directory, not at W.
pub(super) fn first_changed(w: &std::fs::File, entries: &[(String, Identity)]) -> Option<String> {
    use crate::util::platform::dir_of;
    // Open directories: the prefix (with its `/`) and the handle; W at the bottom.
    let mut open: Vec<(String, crate::util::platform::DirFd)> = Vec::new();
    for (i, (path, id)) in entries.iter().enumerate() {
        while open
            .last()
            .is_some_and(|(prefix, _)| !path.starts_with(prefix.as_str()))
        {
            open.pop();
        }
        let (base, rest) = match open.last() {
            Some((prefix, fd)) => (dir_of(fd), &path[prefix.len()..]),
            None => (dir_of(w), path.as_str()),
        };
        let below = format!("{path}/");
        // Opening costs two calls (and a close): worth it for a directory with several below.
        let worth = id.0.kind == 'd'
            && entries[i + 1..]
                .iter()
                .take(OPEN_BELOW)
                .filter(|(next, _)| next.starts_with(&below))
                .count()
                == OPEN_BELOW;
        if worth {
            match Identity::open_dir(base, rest) {
                Ok(Some((fd, now))) if now == *id => {
                    open.push((below, fd));
                    continue;
                }
                _ => return Some(path.clone()),
            }
        }
        if Identity::at(base, rest).map_or(true, |now| now != *id) {
            return Some(path.clone());
        }
    }
    None
}

/// `body` cut into about `n` pieces, each but the first starting at a `member ` line (a
/// member's block is never split from its identities).
pub(super) fn body_chunks(body: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    let step = body.len().div_ceil(n.max(1)).max(1);
    while start < body.len() {
        let mut target = (start + step).min(body.len());
        while !body.is_char_boundary(target) {
            target += 1;
        }
        let cut = match body[target..].find("\nmember ") {
            Some(i) if target < body.len() => target + i + 1,
            _ => body.len(),
        };
        out.push(&body[start..cut]);
        start = cut;
    }
    out
}

/// Checks members' recorded paths one member after another, each relative to its parent
/// directory (opened once for the members it holds, its last component not followed: it is
/// itself a recorded path), not from W.
pub(super) struct MemberCheck<'w, 'a> {
    pub(super) w: &'w std::fs::File,
    pub(super) parent: Option<(&'a str, crate::util::platform::DirFd)>,
    pub(super) path: String,
}

impl<'w, 'a> MemberCheck<'w, 'a> {
    pub(super) fn new(w: &'w std::fs::File) -> Self {
        Self {
            w,
            parent: None,
            path: String::new(),
        }
    }

    /// The first path recorded of the member `relative` (`ids`: those of [`member_paths`])
    /// whose identity no longer holds.
    pub(super) fn first_changed(&mut self, relative: &'a str, ids: &[Identity]) -> Option<String> {
        use crate::util::platform::dir_of;
        let (up, name) = match relative.rsplit_once('/') {
            Some((up, name)) => (Some(up), name),
            None if relative == "." => (None, ""),
            None => (None, relative),
        };
        if let Some(up) = up
            && self.parent.as_ref().is_none_or(|(open, _)| *open != up)
        {
            match Identity::open_dir(dir_of(self.w), up) {
                Ok(Some((fd, _))) => self.parent = Some((up, fd)),
                _ => return Some(up.to_string()),
            }
        }
        let base = match (up, &self.parent) {
            (Some(_), Some((_, fd))) => dir_of(fd),
            _ => dir_of(self.w),
        };
        for (p, id) in member_paths(relative).iter().zip(ids) {
            let path = &mut self.path;
            path.clear();
            path.push_str(name);
            if !p.is_empty() {
                if !name.is_empty() {
                    path.push('/');
                }
                path.push_str(p);
            }
            if Identity::at(base, path).map_or(true, |now| now != *id) {
                return Some(match *p {
                    "" => relative.to_string(),
                    p => under(relative, p),
                });
            }
        }
        None
    }
}

/// A plain relative path below W: no root, no `..`, no `.` before or between its names.
pub(super) fn plain(p: &str) -> bool {
    !p.is_empty()
        && Path::new(p)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// One member's block as a snapshot's text holds it.
pub(super) struct Block<'a> {
    pub(super) relative: &'a str,
    pub(super) schema_version: u32,
    pub(super) version: MethodVersion,
    pub(super) method_ref: Option<&'a str>,
    pub(super) delivery: Option<Delivery>,
    /// The identities of [`member_paths`], in that order (`n` of them).
    pub(super) ids: [Identity; MEMBER_PATHS.len()],
    pub(super) n: usize,
    /// Its git index's identity, when that index held no path under `.tools_local`.
    pub(super) index: Option<Identity>,
}

impl Block<'_> {
    pub(super) fn ids(&self) -> &[Identity] {
        &self.ids[..self.n]
    }

    /// The [`Member`] the walk would read of it, in W (`root`).
    pub(super) fn member(&self, root: &Path) -> Member {
        let path = match self.relative {
            "." => root.to_path_buf(),
            r => crate::util::paths::join_exact(root, r),
        };
        Member {
            state: Some(ToolStateRoot::canonical_with_record(&path)),
            refused: None,
            record: Ok(AdoptionRecord {
                schema_version: self.schema_version,
                tool_version: self.version.clone(),
                method_ref: self.method_ref.map(str::to_string),
                delivery: self.delivery,
            }),
            other_version: None,
            pending: None,
            relative: self.relative.to_string(),
            path,
        }
    }
}

/// What a snapshot's body records: member blocks, handed to `member` as they are read, nested
/// superbuilds and other paths. Malformed text is refused.
pub(super) fn parse_body<'a>(
    body: &'a str,
    nested: &mut Vec<String>,
    entries: &mut Vec<(String, Identity)>,
    mut member: impl FnMut(Block<'a>) -> Result<(), String>,
) -> Result<(), String> {
    let malformed = || String::from("written by another a2c or malformed");
    // Every line a2c writes ends in a newline: a last line without one was cut short (a path
    // cut short may name another member).
    // Nor a carriage return: a2c writes none (`str::lines` would take one before a newline
    // for part of the line break).
    if !body.is_empty() && !body.ends_with('\n') || body.contains('\r') {
        return Err(malformed());
    }
    // The few versions a superbuild pins, each parsed once (a bound keeps a snapshot pinning
    // thousands from costing a scan each).
    let mut versions: Vec<(&str, MethodVersion)> = Vec::new();
    let mut lines = body.split_terminator('\n').peekable();
    // Members, then nested repositories, then entries, as `Snapshot::render` writes them: one
    // text for one snapshot (checked within each piece a worker parses).
    let mut stage = 0;
    let mut at_stage = |s: u8| match s >= stage {
        true => {
            stage = s;
            Ok(())
        }
        false => Err(malformed()),
    };
    while let Some(line) = lines.next() {
        let (head, path) = line.split_once('\t').ok_or_else(malformed)?;
        if let Some(rest) = head.strip_prefix("member ") {
            at_stage(0)?;
            // A ref may hold spaces: it is the rest of the line before the tab.
            let mut it = rest.splitn(4, ' ');
            let mut field = || it.next().ok_or_else(malformed);
            let schema_version =
                u32::try_from(decimal(field()?.as_bytes()).ok_or_else(malformed)?).map_err(|_| malformed())?;
            let text = field()?;
            let version = match versions.iter().find(|(t, _)| *t == text) {
                Some((_, v)) => v.clone(),
                None => {
                    let v: MethodVersion = text.parse().map_err(|_| malformed())?;
                    // Exactly as written (the version parser forgives surrounding spaces).
                    if v.to_string() != text {
                        return Err(malformed());
                    }
                    if versions.len() < 16 {
                        versions.push((text, v.clone()));
                    }
                    v
                }
            };
            let delivery = match field()? {
                "-" => None,
                d => Some(d.parse().map_err(|_| malformed())?),
            };
            let method_ref = match field()? {
                "-" => None,
                r => Some(r.strip_prefix('=').ok_or_else(malformed)?),
            };
            // Its identities, on the next line: exactly one per path recorded of it.
            let ids_line = lines
                .next()
                .and_then(|l| l.strip_prefix("ids "))
                .ok_or_else(malformed)?;
            let mut block = Block {
                relative: path,
                schema_version,
                version,
                method_ref,
                delivery,
                ids: [Identity::ABSENT; MEMBER_PATHS.len()],
                n: 0,
                index: None,
            };
            for id in ids_line.as_bytes().split(|b| *b == b',') {
                let slot = block.ids.get_mut(block.n).ok_or_else(malformed)?;
                *slot = Identity::parse(id).ok_or_else(malformed)?;
                block.n += 1;
            }
            if block.n != member_paths(path).len() {
                return Err(malformed());
            }
            // Then, for a member other than W, its index's identity if one was recorded.
            if let Some(index) = lines.next_if(|l| l.starts_with("index ")) {
                if path == "." {
                    return Err(malformed());
                }
                block.index = Some(Identity::parse(&index.as_bytes()["index ".len()..]).ok_or_else(malformed)?);
            }
            member(block)?;
        } else if head == "nested" {
            at_stage(1)?;
            nested.push(path.to_string());
        } else {
            at_stage(2)?;
            entries.push((
                path.to_string(),
                Identity::parse(head.as_bytes()).ok_or_else(malformed)?,
            ));
        }
    }
    Ok(())
}

/// What one worker found of its piece of a snapshot.
#[derive(Default)]
pub(super) struct Piece {
    pub(super) members: Vec<Member>,
    /// Each member's recorded index identity, in the order of `members`.
    pub(super) indexes: Vec<Option<Identity>>,
    pub(super) nested: Vec<String>,
    pub(super) entries: Vec<(String, Identity)>,
    pub(super) paths: usize,
    pub(super) changed: Option<String>,
}

impl Piece {
    /// Parses `text` (a piece of a snapshot's body) and checks every identity it records, each
    /// path checked to be a plain one below W before it is looked at; builds the members of
    /// W (`root`, open as `w`) while they hold.
    pub(super) fn check(w: &std::fs::File, root: &Path, text: &str) -> Result<Self, String> {
        let mut piece = Self::default();
        // Sized once: growing a list of thousands of members copies it into fresh pages.
        let blocks = text.matches("\nmember ").count() + usize::from(text.starts_with("member "));
        let (mut members, mut changed, mut paths) = (Vec::with_capacity(blocks), None, 0);
        let mut indexes = Vec::with_capacity(blocks);
        let mut check = MemberCheck::new(w);
        parse_body(text, &mut piece.nested, &mut piece.entries, |block| {
            if block.relative != "." && !plain(block.relative) {
                return Err(format!(
                    "it names the member `{}`, no plain path below W",
                    block.relative
                ));
            }
            paths += block.n;
            if changed.is_none() {
                changed = check.first_changed(block.relative, block.ids());
            }
            // Nothing is built past a change: the snapshot is not used.
            if changed.is_none() {
                members.push(block.member(root));
                indexes.push(block.index);
            }
            Ok(())
        })?;
        if let Some((bad, _)) = piece.entries.iter().find(|(p, _)| p != "." && !plain(p)) {
            return Err(format!("it names `{bad}`, no plain path below W"));
        }
        if let Some(n) = piece.nested.iter().find(|n| !plain(n)) {
            return Err(format!("it names the nested superbuild `{n}`, no plain path below W"));
        }
        piece.changed = changed.or_else(|| first_changed(w, &piece.entries));
        piece.paths = paths + piece.entries.len();
        piece.members = members;
        piece.indexes = indexes;
        Ok(piece)
    }
}

/// What a snapshot that still holds gives besides its members: the nested superbuilds and
/// how many paths vouched.
#[derive(Debug)]
pub struct HeldSnapshot {
    pub(super) root: PathBuf,
    pub(super) nested: Vec<String>,
    pub(super) paths: usize,
    /// Per member it gave, in that order: the identity its git index had when the snapshot
    /// was taken, if that index held no path under `.tools_local`.
    pub(super) indexes: Vec<Option<Identity>>,
    /// W, as opened to check it (`None` only while it is being built).
    pub(super) w: Option<std::fs::File>,
}

impl HeldSnapshot {
    /// The nested superbuilds the walk found below W, absolute.
    pub fn nested(&self) -> Vec<PathBuf> {
        self.nested.iter().map(|n| self.root.join(n)).collect()
    }

    /// Whether git still tracks nothing under `.tools_local` in `member`, the `i`th of the
    /// members the snapshot gave, as far as it can tell without reading the index: `true` when
    /// the member's `.git/index` is the very file (same identity, not followed) whose entries
    /// held no such path when the snapshot was taken; `false` when it cannot say (read the
    /// index then).
    pub fn local_untracked(&self, i: usize, member: &Member) -> bool {
        let (Some(Some(recorded)), Some(w)) = (self.indexes.get(i), &self.w) else {
            return false;
        };
        let path = under(&member.relative, INDEX);
        Identity::at(crate::util::platform::dir_of(w), &path).is_ok_and(|now| now == *recorded)
    }

    /// How many members' indexes it records.
    pub fn indexes(&self) -> usize {
        self.indexes.iter().flatten().count()
    }

    /// How many paths it checked.
    pub fn len(&self) -> usize {
        self.paths
    }

    pub fn is_empty(&self) -> bool {
        self.paths == 0
    }
}

/// A member as a snapshot keeps it: enough to give back the [`Member`] the walk would read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Recorded {
    pub(super) relative: String,
    pub(super) schema_version: u32,
    pub(super) version: MethodVersion,
    pub(super) method_ref: Option<String>,
    pub(super) delivery: Option<Delivery>,
    /// The identities of [`member_paths`], in that order.
    pub(super) ids: Vec<Identity>,
    /// Its git index's identity, when that index held no path under `.tools_local`.
    pub(super) index: Option<Identity>,
}

impl Recorded {
    #[cfg(any(test, feature = "fuzzing"))]
    pub(super) fn of(block: &Block<'_>) -> Self {
        Self {
            relative: block.relative.to_string(),
            schema_version: block.schema_version,
            version: block.version.clone(),
            method_ref: block.method_ref.map(str::to_string),
            delivery: block.delivery,
            ids: block.ids().to_vec(),
            index: block.index,
        }
    }
}

/// The identity of `rel` under W (`dir`) to record, unless it changed at or after `since`.
pub(super) fn recorded_identity(dir: &std::fs::File, rel: &str, since: (i64, u32)) -> Result<Identity, String> {
    let id = Identity::at(crate::util::platform::dir_of(dir), rel).map_err(|e| format!("cannot check `{rel}`: {e}"))?;
    if id.changed_since(since) {
        return Err(format!("`{rel}` changed too recently to be trusted (racy)"));
    }
    Ok(id)
}

/// The identity of the git index of the member `rel` (at `path`) of W (`dir`) when that index
/// holds no path under `.tools_local` — read between two identical `fstatat`s, and not changed
/// at or after `since` — else `None` (nothing recorded: doctor reads the index itself).
pub(super) fn index_without_local(dir: &std::fs::File, rel: &str, path: &Path, since: (i64, u32)) -> Option<Identity> {
    let index = under(rel, INDEX);
    let at = || Identity::at(crate::util::platform::dir_of(dir), &index).ok();
    let before = at().filter(|id| matches!(id.0.kind, 'f' | '-') && !id.changed_since(since))?;
    let lacks = crate::util::git_index::lacks_path(path, super::super::state_root::LOCAL_DIR, true);
    (lacks == crate::util::git_index::Answer::Lacks && at()? == before).then_some(before)
}
