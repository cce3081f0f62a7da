//! The method's skills, rules and prompts, projected where each agent runtime looks for them,
//! per member and per version: a member R whose write contract is V gets V's `skills/<name>/`
//! as `a2c-<name>/` in each selected runtime's skills folder, and V's `rules/<name>.md` and
//! `prompts/<name>.md` as `a2c-<name>…` files in the runtime's own folders and front matter —
//! never W's or another member's.
//!
//! The repository's intent is the set of runtimes its superbuild's marker names (`agents:`, a
//! sorted set of [`RUNTIMES`] ids: duplicates and unknown ids fail, empty means none); the
//! projection is machine-local: its files are listed with their sha256 in a receipt under R's
//! `.tools_local/esys/a2c/` and kept out of git by R's own `.git/info/exclude`, never by a
//! committed file. A path a2c would write that is not in its receipt (the team's own skill, a
//! committed file) is refused, named; every write goes through the containment rule (no link
//! on the way, nothing outside R).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::util::digest::Sha256;

mod documents;
mod local;
pub mod mcp_config;
mod runtimes;
mod skills;

pub use documents::{Document, Form, Kind, Layout, documents};
pub use local::{LOCAL, Local, repo_intent};
pub use runtimes::{RUNTIMES, Runtime, folders, parse_ids};
use runtimes::{document_path, selected};
use skills::renamed;
pub use skills::{Skill, check_skill_md, front_matter, is_skill_name, skills};

/// The prefix of every projected skill's name: a2c's entries never collide with the team's.
pub const PREFIX: &str = "a2c-";

/// The receipt of a member's projection, relative to R.
pub const RECEIPT: &str = ".tools_local/esys/a2c/agents.json";

/// The lines a2c owns in a repository's `.git/info/exclude`, between these two.
const EXCLUDE_BEGIN: &str = "# a2c agents: begin (machine-local projection; `a2c agents clean` removes it)";
const EXCLUDE_END: &str = "# a2c agents: end";

/// Why a projection was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentsError {
    #[error("`{}` exists and a2c did not write it: it never overwrites what the team owns", path.display())]
    Clobber { path: PathBuf },
    #[error("the skill `{}`: {reason}", path.display())]
    BadSkill { path: PathBuf, reason: String },
    #[error("the method document `{}`: {reason}", path.display())]
    BadDocument { path: PathBuf, reason: String },
    #[error("`{}`: {reason}", path.display())]
    UserFile {
        runtime: String,
        path: PathBuf,
        reason: String,
    },
    #[error("the runtimes `{}` names: {reason}", path.display())]
    BadIntent { path: PathBuf, reason: String },
    #[error("this machine's runtimes `{}`: {reason}", path.display())]
    BadLocal { path: PathBuf, reason: String },
    #[error("the projection receipt `{}` cannot be read: {reason}", path.display())]
    BadReceipt { path: PathBuf, reason: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl crate::util::hint::Hint for AgentsError {
    fn hint(&self) -> Option<String> {
        Some(match self {
            Self::Clobber { .. } => "move or rename it (a2c's entries are named `a2c-<name>`), or drop that runtime from the marker's `agents:`; then run `a2c agents sync`".into(),
            Self::BadDocument { .. } => "a projected rule (`rules/NAME.md`) or prompt (`prompts/NAME.md`) is UTF-8 markdown with an optional front matter of `description` (one line) and, for a rule, `applies_to` (globs relative to the repository); `a2c pack` refuses another, and an install projects none of that tree (registry-spec, \"Rules and prompts\")".into(),
            Self::BadSkill { .. } => "a skill is a folder `skills/NAME/` (NAME: lowercase letters, digits and single hyphens) whose SKILL.md front matter gives `name: NAME`, a `description`, and no key but the Agent Skills specification's six; `a2c pack` refuses another, and an install projects none".into(),
            Self::UserFile { runtime, .. } => format!(
                "fix that file, or edit or remove its `a2c` entry; then run `a2c agents mcp-config {runtime} --write` again (or `a2c agents mcp-config {runtime}` prints the entry to paste)"
            ),
            Self::BadIntent { .. } => format!(
                "`agents:` is a list of runtime ids, each once ({}); an empty list projects none",
                RUNTIMES.iter().map(|r| r.id).collect::<Vec<_>>().join(", ")
            ),
            Self::BadLocal { path, .. } => format!(
                "it holds `add:` and `drop:`, each a list of runtime ids ({}); fix it, or remove it (`rm {}`) to project the marker's `agents:` alone",
                RUNTIMES.iter().map(|r| r.id).collect::<Vec<_>>().join(", "),
                crate::util::text::shell_quoted(path)
            ),
            Self::BadReceipt { path, .. } => {
                let repo = path.ancestors().nth(4).unwrap_or(Path::new("."));
                let quote = |p: &Path| crate::util::text::shell_quoted(p);
                let mut paths = vec![quote(path)];
                paths.extend(leftovers(repo).iter().map(|p| quote(p)));
                format!(
                    "it is a2c's own, never committed: remove it and what a2c projected beside it (`rm -rf {}`), then run `a2c agents sync`",
                    paths.join(" ")
                )
            }
            Self::Io(e) => return crate::util::contain::refusal(e).map(|r| r.hint()),
        })
    }
}

/// One path a projection owns, relative to R.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    pub path: String,
    /// `file` (written: its `sha256`) or `link` (to `target`, a file of the installed tree).
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// A member's projection: what it was made from and every path it owns.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Receipt {
    pub schema: u32,
    /// The version whose tree was projected.
    pub version: String,
    pub runtimes: Vec<String>,
    /// The folders a2c made (`a2c-<name>/` and below), deepest last.
    pub dirs: Vec<String>,
    /// The runtimes' folders (`.agents`, `.agents/skills`, …) a2c made because they were
    /// missing: removed with the projection when nothing else is in them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub made: Vec<String>,
    pub entries: Vec<Entry>,
}

impl Receipt {
    pub fn read(repo: &Path) -> Result<Option<Self>, AgentsError> {
        let path = repo.join(RECEIPT);
        let Some(text) = crate::util::contain::read_config(&path)? else {
            return Ok(None);
        };
        let receipt: Self = serde_json::from_str(&text).map_err(|e| AgentsError::BadReceipt {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        // A receipt decides what a2c overwrites and removes: it may list only what a2c makes
        // (a committed or edited one could otherwise claim the team's files, or paths outside R).
        let owned = receipt.entries.iter().map(|e| &e.path).chain(&receipt.dirs);
        let bad = owned
            .filter(|p| !owns(p))
            .chain(receipt.made.iter().filter(|p| !is_runtime_folder(p)))
            .next();
        if let Some(bad) = bad {
            return Err(AgentsError::BadReceipt {
                path,
                reason: format!(
                    "it lists `{}`, which is no path a2c projects (an `{PREFIX}…` entry in a runtime's folder)",
                    crate::util::text::visible(bad)
                ),
            });
        }
        Ok(Some(receipt))
    }
}

/// The `a2c-…` entries in `repo`'s runtime folders (none through a link): what a projection
/// may have left there, for the way out of an unreadable receipt.
fn leftovers(repo: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<&str> = RUNTIMES.iter().flat_map(Runtime::folders).collect();
    folders.sort();
    folders.dedup();
    let mut out = Vec::new();
    for folder in folders {
        if !crate::util::contain::check_dir(repo, folder).unwrap_or(false) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(repo.join(folder)) else {
            continue;
        };
        let mut names: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
            .map(|e| e.path())
            .collect();
        names.sort();
        out.extend(names);
    }
    out
}

/// Whether `rel` is a path a projection owns: a plain relative path below a runtime's skills
/// folder, in a folder named `a2c-…`, or a file `a2c-…` of its layout directly in a runtime's
/// rules or prompts folder.
fn owns(rel: &str) -> bool {
    let below = |folder: &str| rel.strip_prefix(folder).and_then(|rest| rest.strip_prefix('/'));
    let named = |rest: &str| rest.starts_with(PREFIX) && rest.len() > PREFIX.len();
    crate::util::paths::check_portable_relative(rel).is_ok()
        && RUNTIMES.iter().any(|r| {
            below(r.skills).is_some_and(named)
                || [&r.rules, &r.prompts]
                    .into_iter()
                    .flatten()
                    .any(|l| below(l.folder).is_some_and(|f| named(f) && !f.contains('/') && f.ends_with(l.suffix)))
        })
}

/// Whether `rel` is a runtime's folder or one of its parents (`.agents`, `.agents/skills`,
/// `.github/instructions`, …).
fn is_runtime_folder(rel: &str) -> bool {
    RUNTIMES
        .iter()
        .flat_map(Runtime::folders)
        .any(|f| f == rel || f.strip_prefix(rel).is_some_and(|rest| rest.starts_with('/')))
}

/// A projection planned: its receipt, and the text of each file it writes (by path). The same
/// for every member on one version: planned once per version and shared.
pub type Planned = (Receipt, BTreeMap<String, String>);

/// What a projection of `version`'s tree at `tree` for `ids` owns, and the text of each file
/// it writes (by path).
pub fn plan(tree: &Path, version: &str, ids: &[String]) -> Result<Planned, AgentsError> {
    let skills = skills(tree)?;
    let (documents, _) = documents(tree)?;
    let mut dirs = Vec::new();
    let mut entries = Vec::new();
    let mut texts = BTreeMap::new();
    let mut file = |path: String, text: String, entries: &mut Vec<Entry>| {
        entries.push(Entry {
            path: path.clone(),
            kind: "file".into(),
            sha256: Some(Sha256::of(text.as_bytes()).to_hex()),
            target: None,
        });
        texts.insert(path, text);
    };
    for folder in folders(ids) {
        for skill in &skills {
            let name = format!("{PREFIX}{}", skill.name);
            let base = format!("{folder}/{name}");
            dirs.push(base.clone());
            file(format!("{base}/SKILL.md"), renamed(&skill.text, &name), &mut entries);
            for rel in &skill.files {
                let mut parent = Path::new(rel).parent();
                let mut nested = Vec::new();
                while let Some(p) = parent.filter(|p| !p.as_os_str().is_empty()) {
                    nested.push(format!("{base}/{}", p.to_string_lossy().replace('\\', "/")));
                    parent = p.parent();
                }
                for d in nested.into_iter().rev() {
                    if !dirs.contains(&d) {
                        dirs.push(d);
                    }
                }
                let target = tree.join("skills").join(&skill.name).join(rel);
                entries.push(Entry {
                    path: format!("{base}/{rel}"),
                    kind: "link".into(),
                    sha256: None,
                    target: Some(target.to_string_lossy().into_owned()),
                });
            }
        }
    }
    // Rules and prompts: a file each in every selected runtime's folder for their kind (two
    // runtimes reading one folder with one layout get it once).
    for doc in &documents {
        for runtime in selected(ids) {
            let Some(layout) = runtime.layout(doc.kind) else {
                continue;
            };
            let path = document_path(layout, &doc.name);
            if !entries.iter().any(|e: &Entry| e.path == path) {
                file(path, documents::render(doc, layout.form), &mut entries);
            }
        }
    }
    let receipt = Receipt {
        schema: 1,
        version: version.to_string(),
        runtimes: ids.to_vec(),
        dirs,
        made: Vec::new(),
        entries,
    };
    Ok((receipt, texts))
}

/// What a sync did in one member.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Synced {
    pub written: usize,
    pub removed: usize,
    pub unchanged: usize,
}

/// Projects `tree` (version `version`) into `repo` for `ids`, replacing the projection its
/// receipt lists: every path the new one needs that exists and is not in that receipt is
/// refused before anything is written; what the old one owned and the new one does not is
/// removed; the receipt is written last.
pub fn sync(repo: &Path, planned: &Planned) -> Result<Synced, AgentsError> {
    let old = Receipt::read(repo)?;
    let (mut new, texts) = (planned.0.clone(), &planned.1);
    let ids = &new.runtimes.clone();
    let owned = |path: &str| {
        old.as_ref()
            .is_some_and(|r| r.entries.iter().any(|e| e.path == path) || r.dirs.iter().any(|d| d == path))
    };
    // Refused before any write: a path the team owns, or a link on the way (containment).
    for path in new.dirs.iter().chain(new.entries.iter().map(|e| &e.path)) {
        // No link on the way (a projected link itself is a2c's own, when its receipt says so).
        let parent = Path::new(path).parent().unwrap_or(Path::new(""));
        let exists = crate::util::contain::check(repo, parent)? && std::fs::symlink_metadata(repo.join(path)).is_ok();
        if exists && !owned(path) {
            return Err(AgentsError::Clobber { path: repo.join(path) });
        }
    }
    let mut done = Synced::default();
    if let Some(old) = &old {
        for entry in old
            .entries
            .iter()
            .filter(|e| !new.entries.iter().any(|n| n.path == e.path))
        {
            remove_owned(repo, &entry.path)?;
            done.removed += 1;
        }
        for dir in old.dirs.iter().rev().filter(|d| !new.dirs.contains(d)) {
            let _ = std::fs::remove_dir(repo.join(dir));
        }
    }
    // The runtimes' own folders: the ones a2c makes now (or made before) are its to remove.
    let mut made: Vec<String> = old.as_ref().map(|r| r.made.clone()).unwrap_or_default();
    // Only the folders something is projected into are made (a tree that offers no skill gets
    // no skills folder).
    let mut needed: Vec<&str> = selected(ids)
        .flat_map(Runtime::folders)
        .filter(|f| new.entries.iter().any(|e| e.path.starts_with(&format!("{f}/"))))
        .collect();
    needed.sort();
    needed.dedup();
    // Folders a2c made that nothing is projected into any more (a runtime dropped, a version
    // offering less): removed when empty, deepest first — the team's files in one keep it.
    made.sort();
    made.reverse();
    made.retain(|dir| {
        let in_use = needed
            .iter()
            .any(|f| *f == dir || f.strip_prefix(dir.as_str()).is_some_and(|rest| rest.starts_with('/')));
        in_use
            || !(crate::util::contain::check_dir(repo, dir).unwrap_or(false)
                && std::fs::remove_dir(repo.join(dir)).is_ok())
    });
    for folder in needed {
        let mut at = String::new();
        for part in folder.split('/') {
            at = if at.is_empty() {
                part.to_string()
            } else {
                format!("{at}/{part}")
            };
            if !crate::util::contain::check(repo, &at)? {
                made.push(at.clone());
            }
            crate::util::contain::create_dirs(repo, &at, 0o755)?;
        }
    }
    made.sort();
    made.dedup();
    new.made = made;
    for dir in &new.dirs {
        crate::util::contain::create_dirs(repo, dir, 0o755)?;
    }
    for entry in &new.entries {
        if old.as_ref().is_some_and(|r| r.entries.contains(entry)) && matches_disk(repo, entry) {
            done.unchanged += 1;
            continue;
        }
        remove_owned(repo, &entry.path)?;
        let path = repo.join(&entry.path);
        match entry.kind.as_str() {
            "link" => {
                let target = PathBuf::from(entry.target.as_deref().unwrap_or_default());
                if crate::util::platform::file_link(&target, &path).is_err() {
                    // Where links cannot be made (Windows without the privilege): a copy.
                    crate::util::contain::write_new(&path, &fs_err::read(&target)?, 0o644)?;
                }
            }
            _ => {
                let text = texts.get(&entry.path).map_or("", String::as_str);
                crate::util::contain::write_new(&path, text.as_bytes(), 0o644)?;
            }
        }
        done.written += 1;
    }
    // A receipt that says what the one on disk says is not written again (a no-op install
    // writes nothing).
    if old.as_ref() != Some(&new) {
        let receipt = repo.join(RECEIPT);
        if let Some(parent) = Path::new(RECEIPT).parent() {
            crate::util::contain::create_dirs(repo, parent, 0o755)?;
        }
        let text = serde_json::to_string_pretty(&new).expect("a receipt serializes");
        crate::util::fs::write_atomic(&receipt, format!("{text}\n").as_bytes())?;
    }
    exclude(repo, &new)?;
    Ok(done)
}

/// Removes a path a receipt lists (a file or a link: never a directory, never through a link
/// on the way). A missing one is fine.
fn remove_owned(repo: &Path, rel: &str) -> Result<(), AgentsError> {
    let parent = Path::new(rel).parent().unwrap_or(Path::new(""));
    if !crate::util::contain::check_dir(repo, parent)? {
        return Ok(());
    }
    match std::fs::remove_file(repo.join(rel)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(fs_err_io(e, &repo.join(rel))),
    }
}

fn fs_err_io(e: std::io::Error, path: &Path) -> AgentsError {
    AgentsError::Io(std::io::Error::new(
        e.kind(),
        format!("cannot remove `{}`: {e}", path.display()),
    ))
}

/// Whether `entry` is on disk as the receipt says: a link to its target, a file of its sha256.
fn matches_disk(repo: &Path, entry: &Entry) -> bool {
    let path = repo.join(&entry.path);
    match entry.kind.as_str() {
        "link" => match std::fs::read_link(&path) {
            Ok(target) => Some(target.to_string_lossy().as_ref()) == entry.target.as_deref(),
            // A copy (where no link could be made): the target's bytes.
            Err(_) => {
                let target = entry.target.as_deref().map(PathBuf::from);
                match (fs_err::read(&path), target.map(fs_err::read)) {
                    (Ok(a), Some(Ok(b))) => a == b,
                    _ => false,
                }
            }
        },
        _ => {
            std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
                && fs_err::read(&path).is_ok_and(|b| Some(Sha256::of(&b).to_hex()) == entry.sha256)
        }
    }
}

/// What of a member's projection has drifted from its receipt: each path edited, removed or
/// re-pointed, and whether it is of another version than `version`.
pub fn drift(repo: &Path, version: &str) -> Result<Vec<String>, AgentsError> {
    let Some(receipt) = Receipt::read(repo)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    if receipt.version != version {
        out.push(format!(
            "the projection is of {}, the write contract is {version}",
            receipt.version
        ));
    }
    for entry in &receipt.entries {
        if !matches_disk(repo, entry) {
            out.push(format!("`{}` was changed or removed", entry.path));
        }
    }
    Ok(out)
}

/// Removes everything a member's receipt lists (and the receipt, and a2c's exclude lines):
/// the member as it was before any projection. The paths removed, in order.
pub fn clean(repo: &Path) -> Result<Vec<String>, AgentsError> {
    let Some(receipt) = Receipt::read(repo)? else {
        return Ok(Vec::new());
    };
    let mut removed = Vec::new();
    for entry in &receipt.entries {
        remove_owned(repo, &entry.path)?;
        removed.push(entry.path.clone());
    }
    for dir in receipt.dirs.iter().rev() {
        if std::fs::remove_dir(repo.join(dir)).is_ok() {
            removed.push(dir.clone());
        }
    }
    // The runtimes' folders a2c made, deepest first, when nothing else is in them.
    for dir in receipt.made.iter().rev() {
        if crate::util::contain::check_dir(repo, dir).unwrap_or(false) && std::fs::remove_dir(repo.join(dir)).is_ok() {
            removed.push(dir.clone());
        }
    }
    let _ = std::fs::remove_file(repo.join(RECEIPT));
    exclude(
        repo,
        &Receipt {
            dirs: Vec::new(),
            made: Vec::new(),
            entries: Vec::new(),
            ..receipt
        },
    )?;
    Ok(removed)
}

/// Keeps the projection out of git: a2c's block in the repository's own `.git/info/exclude`
/// (machine-local; never a committed `.gitignore`) lists each projected skill folder.
fn exclude(repo: &Path, receipt: &Receipt) -> Result<(), AgentsError> {
    let Some(path) = crate::util::git::info_exclude(repo) else {
        return Ok(());
    };
    // The file git itself reads R's excludes from (a worktree's is its main repository's).
    let text = match crate::util::contain::read_config(&path) {
        Ok(t) => t.unwrap_or_default(),
        Err(e) => return Err(e.into()),
    };
    let mut kept: Vec<&str> = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        match line {
            EXCLUDE_BEGIN => inside = true,
            EXCLUDE_END => inside = false,
            _ if !inside => kept.push(line),
            _ => {}
        }
    }
    // Each skill's folder, and each rule or prompt file (those lie directly in their folder).
    let skill_folder = |d: &&String| {
        RUNTIMES.iter().any(|r| {
            d.strip_prefix(r.skills)
                .is_some_and(|rest| rest.matches('/').count() == 1)
        })
    };
    let in_skill = |p: &str| receipt.dirs.iter().any(|d| p.starts_with(&format!("{d}/")));
    let roots: Vec<String> = receipt
        .dirs
        .iter()
        .filter(skill_folder)
        .map(|d| format!("/{d}/"))
        .chain(
            receipt
                .entries
                .iter()
                .filter(|e| !in_skill(&e.path))
                .map(|e| format!("/{}", e.path)),
        )
        .collect();
    let mut out = kept.join("\n");
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !roots.is_empty() {
        out.push_str(EXCLUDE_BEGIN);
        out.push('\n');
        for r in &roots {
            out.push_str(r);
            out.push('\n');
        }
        out.push_str(EXCLUDE_END);
        out.push('\n');
    }
    if out != text {
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent)?;
        }
        crate::util::fs::write_atomic(&path, out.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_is_a_set_of_known_runtimes() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(parse_ids(&s(&["cursor", "claude"])).unwrap(), s(&["claude", "cursor"]));
        assert_eq!(parse_ids(&[]).unwrap(), Vec::<String>::new());
        assert!(parse_ids(&s(&["claude", "claude"])).unwrap_err().contains("twice"));
        assert!(parse_ids(&s(&["auto"])).unwrap_err().contains("not a runtime"));
        assert!(
            parse_ids(&s(&["../../etc"]))
                .unwrap_err()
                .contains("known: agent-skills")
        );
        assert_eq!(
            folders(&s(&["codex", "cursor", "claude"])),
            [".agents/skills", ".claude/skills"]
        );
    }
}
