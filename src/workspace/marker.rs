//! The workspace marker `W/.tools/esys/a2c/workspace.yaml` and the local pointer
//! `R/.tools_local/esys/a2c/workspace.yaml`.

use crate::util::paths::JoinRel as _;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::util::paths::check_portable_relative;
use crate::util::yaml::{self, Entry, Item, Scalar, Value};

/// The marker's path relative to W.
pub const MARKER_PATH: &str = ".tools/esys/a2c/workspace.yaml";
/// The local pointer's path relative to R.
pub const POINTER_PATH: &str = ".tools_local/esys/a2c/workspace.yaml";

/// Which of the two files a [`MarkerError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    /// `W/.tools/esys/a2c/workspace.yaml`, committed.
    Marker,
    /// `R/.tools_local/esys/a2c/workspace.yaml`, machine-local.
    Pointer,
}

impl std::fmt::Display for MarkerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MarkerKind::Marker => "workspace marker",
            MarkerKind::Pointer => "local pointer",
        })
    }
}

/// Why a marker or pointer file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} `{}` line {line}: {reason}", path.display())]
pub struct MarkerError {
    pub what: MarkerKind,
    pub path: PathBuf,
    pub line: usize,
    pub reason: String,
}

/// The parsed workspace marker.
#[derive(Debug, Clone)]
pub struct WorkspaceMarker {
    /// Member globs; `None` means every repository below W holding a tool state root.
    pub members: Option<Vec<String>>,
    pub exclude: Vec<String>,
    /// The registries, in the order a version is looked for (`registry: URL`, or a list:
    /// a version is taken from the first that publishes it).
    pub registries: Vec<String>,
    /// Each registry's own mirrors, by the registry as `registry:` names it (an entry written
    /// `- url: R` with `mirrors: [...]`): tried right after R for the bundles locked from R.
    pub registry_mirrors: std::collections::BTreeMap<String, Vec<String>>,
    /// Mirrors of every registry, tried after them for a locked bundle (by digest).
    pub mirrors: Vec<String>,
    /// Public keys (minisign, one line of base64 each) one of which must have signed every
    /// index `lock`, `install` and `migrate` trust. Empty: indexes are trusted unsigned.
    pub trusted_keys: Vec<String>,
    /// The agent runtimes the members' method is projected for (`agents:`, a sorted set of
    /// [`crate::agents::RUNTIMES`] ids; empty: none).
    pub agents: Vec<String>,
    member_set: Option<GlobSet>,
    exclude_set: GlobSet,
}

fn strings(entry: &Entry, fail: &dyn Fn(usize, String) -> MarkerError) -> Result<Vec<Scalar>, MarkerError> {
    match &entry.value {
        Value::List(items) => Ok(items.clone()),
        Value::Items(_) => Err(fail(
            entry.line,
            format!("`{}` must be a list of strings such as [\"products/*\"]", entry.key),
        )),
        Value::Scalar(s) if s.is_null() => Ok(Vec::new()),
        Value::Scalar(s) => Err(fail(
            s.line,
            format!("`{}` must be a list such as [\"products/*\"]", entry.key),
        )),
    }
}

/// Appends one `registry:` entry, refusing an empty or repeated one with its line.
fn push_registry(
    registries: &mut Vec<String>,
    s: &Scalar,
    fail: &dyn Fn(usize, String) -> MarkerError,
) -> Result<(), MarkerError> {
    if s.is_null() || s.text.trim().is_empty() {
        return Err(fail(s.line, "`registry`: an empty entry in the list".into()));
    }
    if registries.contains(&s.text) {
        return Err(fail(s.line, format!("`registry`: `{}` is listed twice", s.text)));
    }
    registries.push(s.text.clone());
    Ok(())
}

/// A `registry:` entry written as a mapping: `url:` (required) and its own `mirrors:`.
fn registry_with_mirrors(
    line: usize,
    entries: &[Entry],
    fail: &dyn Fn(usize, String) -> MarkerError,
) -> Result<(Scalar, Vec<String>), MarkerError> {
    let (mut url, mut mirrors) = (None, Vec::new());
    for entry in entries {
        match (entry.key.as_str(), &entry.value) {
            ("url", Value::Scalar(s)) => url = Some(s.clone()),
            ("url", _) => return Err(fail(entry.line, "`registry`: `url` must be one location".into())),
            ("mirrors", _) => {
                for m in strings(entry, fail)? {
                    if m.is_null() || m.text.trim().is_empty() {
                        return Err(fail(m.line, "`mirrors`: an empty entry in the list".into()));
                    }
                    mirrors.push(m.text);
                }
            }
            (other, _) => {
                return Err(fail(
                    entry.line,
                    format!("`registry`: unknown key `{other}` in an entry (known keys: url, mirrors)"),
                ));
            }
        }
    }
    let url = url.ok_or_else(|| {
        fail(
            line,
            "`registry`: an entry written as a mapping needs `url:` (and may list its own `mirrors:`)".into(),
        )
    })?;
    Ok((url, mirrors))
}

/// The most globs one `members:` or `exclude:` list may hold, and the longest glob: a
/// superbuild names its members with a few; hundreds of thousands cost gigabytes of automaton.
pub const MAX_GLOBS: usize = 1_000;
pub const MAX_GLOB_BYTES: usize = 1_024;

fn glob_set(globs: &[Scalar], key: &str, fail: &dyn Fn(usize, String) -> MarkerError) -> Result<GlobSet, MarkerError> {
    if let Some(extra) = globs.get(MAX_GLOBS) {
        return Err(fail(
            extra.line,
            format!("`{key}` lists more than {MAX_GLOBS} globs; name the members with fewer (`products/*`)"),
        ));
    }
    let mut set = GlobSetBuilder::new();
    for g in globs {
        if g.text.len() > MAX_GLOB_BYTES {
            return Err(fail(
                g.line,
                format!("{key} glob of {} bytes, more than {MAX_GLOB_BYTES}", g.text.len()),
            ));
        }
        check_portable_relative(&g.text).map_err(|why| fail(g.line, format!("{key} glob `{}`: {why}", g.text)))?;
        let glob = GlobBuilder::new(&g.text)
            .literal_separator(true)
            .backslash_escape(false)
            .build()
            .map_err(|e| fail(g.line, format!("{key} glob `{}`: {}", g.text, e.kind())))?;
        set.add(glob);
    }
    set.build().map_err(|e| fail(1, e.to_string()))
}

impl WorkspaceMarker {
    /// The `members:` entries that name one path (no glob characters): each must be a
    /// repository of the superbuild, so one that is not there is missing.
    pub fn named_members(&self) -> Vec<&str> {
        self.members
            .iter()
            .flatten()
            .map(String::as_str)
            .filter(|m| !m.contains(['*', '?', '[', ']', '{', '}']))
            .collect()
    }

    /// Parses the marker text of `path` (used in messages only).
    pub fn parse(text: &str, path: &Path) -> Result<Self, MarkerError> {
        let fail = |line: usize, reason: String| MarkerError {
            what: MarkerKind::Marker,
            path: path.to_path_buf(),
            line,
            reason,
        };
        let entries = yaml::parse_flat_mapping(text).map_err(|e| fail(e.line, e.reason))?;
        let mut agents: Vec<String> = Vec::new();
        let (mut members, mut exclude, mut registries) = (None, Vec::new(), Vec::new());
        let mut mirrors = Vec::new();
        let mut registry_mirrors = std::collections::BTreeMap::new();
        let mut trusted_keys = Vec::new();
        let mut schema_seen = false;
        let mut schema = 1;
        // The line of a `registry:` list (several registries, or one with its own mirrors):
        // schema 2 only.
        let mut registry_list = None;
        for entry in &entries {
            match entry.key.as_str() {
                "schema_version" => {
                    schema_seen = true;
                    let Value::Scalar(s) = &entry.value else {
                        return Err(fail(entry.line, "`schema_version` must be a number".into()));
                    };
                    schema = match crate::util::formats::MARKER.check(Some(&s.text)) {
                        Ok(v) => v,
                        Err(why @ crate::util::formats::FormatError::TooNew { .. }) => {
                            return Err(fail(s.line, format!("unsupported schema_version: {why}; upgrade a2c")));
                        }
                        Err(why) => return Err(fail(s.line, why.to_string())),
                    };
                }
                "members" => members = Some(strings(entry, &fail)?),
                "mirrors" => mirrors = strings(entry, &fail)?.into_iter().map(|s| s.text).collect(),
                "trusted_keys" => {
                    for key in strings(entry, &fail)? {
                        crate::registry::signing::public_key_id(&key.text)
                            .map_err(|e| fail(key.line, format!("`trusted_keys`: {e}")))?;
                        trusted_keys.push(key.text);
                    }
                }
                "exclude" => exclude = strings(entry, &fail)?,
                "agents" => {
                    let items: Vec<String> = strings(entry, &fail)?.into_iter().map(|s| s.text).collect();
                    agents =
                        crate::agents::parse_ids(&items).map_err(|why| fail(entry.line, format!("`agents`: {why}")))?;
                }
                "registry" => match &entry.value {
                    Value::Scalar(s) if s.is_null() => {}
                    Value::Scalar(s) => registries = vec![s.text.clone()],
                    Value::List(list) => {
                        registry_list = Some(entry.line);
                        for s in list {
                            push_registry(&mut registries, s, &fail)?;
                        }
                    }
                    Value::Items(items) => {
                        registry_list = Some(entry.line);
                        for item in items {
                            match item {
                                Item::Scalar(s) => push_registry(&mut registries, s, &fail)?,
                                Item::Mapping { line, entries } => {
                                    let (url, own) = registry_with_mirrors(*line, entries, &fail)?;
                                    push_registry(&mut registries, &url, &fail)?;
                                    registry_mirrors.insert(url.text, own);
                                }
                            }
                        }
                    }
                },
                other => {
                    return Err(fail(
                        entry.line,
                        format!(
                            "unknown key `{other}` (known keys: schema_version, members, exclude, registry, mirrors, trusted_keys, agents)"
                        ),
                    ));
                }
            }
        }
        if entries.is_empty() {
            return Err(fail(
                1,
                "the marker is empty; a superbuild marker must say at least `schema_version: 1`".into(),
            ));
        }
        if !schema_seen {
            return Err(fail(1, "missing `schema_version: 1`".into()));
        }
        if let Some(line) = registry_list
            && schema < 2
        {
            return Err(fail(
                line,
                "`registry` as a list (several registries, or one with its own `mirrors`) needs `schema_version: 2` (an a2c that reads only version 1 knows one registry): write `schema_version: 2`".into(),
            ));
        }
        let member_set = members.as_ref().map(|m| glob_set(m, "members", &fail)).transpose()?;
        let exclude_set = glob_set(&exclude, "exclude", &fail)?;
        let texts = |v: Vec<Scalar>| v.into_iter().map(|s| s.text).collect::<Vec<_>>();
        Ok(Self {
            members: members.map(texts),
            exclude: texts(exclude),
            registries,
            registry_mirrors,
            mirrors,
            trusted_keys,
            agents,
            member_set,
            exclude_set,
        })
    }

    /// Reads `W/.tools/esys/a2c/workspace.yaml`.
    pub fn read(workspace: &Path) -> Result<Self, super::WorkspaceError> {
        let path = workspace.join_rel(MARKER_PATH);
        crate::util::contain::check(workspace, MARKER_PATH)?;
        let text = crate::util::contain::read_config(&path)?.ok_or_else(|| super::WorkspaceError::NoMarker {
            path: workspace.to_path_buf(),
        })?;
        Ok(Self::parse(&text, &path)?)
    }

    /// `true` when a repository at `relative` (slash-separated, relative to W) is selected by
    /// the member globs and not excluded. With no `members`, every relative path is selected.
    pub fn selects(&self, relative: &str) -> bool {
        let included = self.member_set.as_ref().is_none_or(|set| set.is_match(relative));
        included && !self.exclude_set.is_match(relative)
    }

    /// The deepest directory level a member can be at, when the globs bound it (no `**`).
    pub fn max_depth(&self) -> Option<usize> {
        let members = self.members.as_ref()?;
        members
            .iter()
            .map(|g| (!g.contains("**")).then(|| g.split('/').count()))
            .collect::<Option<Vec<_>>>()
            .map(|d| d.into_iter().max().unwrap_or(0))
    }
}

/// The local pointer from a member R to its workspace W.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalPointer {
    pub workspace_root: PathBuf,
}

impl LocalPointer {
    /// Reads `R/.tools_local/esys/a2c/workspace.yaml`; `None` when absent. A relative
    /// `workspace_root` is relative to R.
    pub fn read(repo: &Path) -> Result<Option<Self>, super::WorkspaceError> {
        let path = repo.join_rel(POINTER_PATH);
        if !crate::util::contain::check(repo, POINTER_PATH)? {
            return Ok(None);
        }
        let Some(text) = crate::util::contain::read_config(&path)? else {
            return Ok(None);
        };
        let fail = |line: usize, reason: String| MarkerError {
            what: MarkerKind::Pointer,
            path: path.clone(),
            line,
            reason,
        };
        let entries = yaml::parse_flat_mapping(&text).map_err(|e| fail(e.line, e.reason))?;
        let mut root = None;
        for entry in &entries {
            match (entry.key.as_str(), &entry.value) {
                ("workspace_root", Value::Scalar(s)) if !s.is_null() => root = Some(repo.join(&s.text)),
                ("workspace_root", _) => return Err(fail(entry.line, "`workspace_root` must be a path".into()).into()),
                (other, _) => {
                    return Err(fail(
                        entry.line,
                        format!("unknown key `{other}` (known keys: workspace_root)"),
                    )
                    .into());
                }
            }
        }
        let workspace_root = root.ok_or_else(|| fail(1, "missing `workspace_root`".into()))?;
        Ok(Some(Self { workspace_root }))
    }

    /// Writes the pointer for `repo` atomically.
    pub fn write(repo: &Path, workspace: &Path) -> std::io::Result<()> {
        let text = format!(
            "# written by a2c install: the superbuild workspace this repository belongs to (machine-local)\nworkspace_root: {}\n",
            yaml::quote(&workspace.to_string_lossy())
        );
        let path = repo.join_rel(POINTER_PATH);
        // Never through a link: a member's `.tools_local/esys/a2c` must be a real directory.
        // The common case, a pointer already right, reads it without creating anything.
        let dir = Path::new(POINTER_PATH).parent().expect("a file in a directory");
        if crate::util::contain::check_dir(repo, dir)?
            && crate::util::contain::read_config(&path)?.is_some_and(|old| old == text)
        {
            return Ok(());
        }
        super::state_root::create_local(repo)?;
        crate::util::fs::write_atomic(&path, text.as_bytes())
    }
}

/// What `a2c init` wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Created {
    pub workspace: PathBuf,
    pub marker: PathBuf,
    pub registry: Option<String>,
    pub members: Option<Vec<String>>,
}

impl WorkspaceMarker {
    /// Makes `dir` a superbuild: writes its marker (`schema_version`, the member globs when
    /// given — else every repository below that adopted A2C is a member — and the registry
    /// when given), never over an existing marker and never through a link. The text written
    /// is read back with [`WorkspaceMarker::read`], so that what `init` writes is what every
    /// command will read.
    pub fn create(dir: &Path, registry: Option<&str>, members: &[String]) -> Result<Created, super::WorkspaceError> {
        let path = dir.join_rel(MARKER_PATH);
        if crate::util::contain::check(dir, MARKER_PATH)? {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!(
                    "`{}` already exists: this directory is a superbuild already",
                    path.display()
                ),
            )
            .into());
        }
        let mut text = String::from(
            "# The superbuild workspace marker (a2c init): commit it. docs/concepts.md has every key.\nschema_version: 1\n",
        );
        match members {
            [] => text.push_str(
                "# members: [\"products/*\", \"libs/*\"]   # default: every repository below that adopted A2C\n",
            ),
            globs => text.push_str(&format!(
                "members: [{}]\n",
                globs.iter().map(|g| yaml::quote(g)).collect::<Vec<_>>().join(", ")
            )),
        }
        match registry {
            Some(r) => text.push_str(&format!("registry: {}\n", yaml::quote(r))),
            None => text
                .push_str("# registry: https://registry.example.org/a2c/   # or a path relative to this directory\n"),
        }
        let parent = Path::new(MARKER_PATH).parent().expect("a file in a directory");
        crate::util::contain::create_dirs(dir, parent, 0o755)?;
        crate::util::contain::write_new(&path, text.as_bytes(), crate::util::fs::default_mode())?;
        let marker = Self::read(dir)?;
        Ok(Created {
            workspace: dir.to_path_buf(),
            marker: path,
            registry: marker.registries.into_iter().next(),
            members: marker.members,
        })
    }
}

impl crate::util::hint::Hint for MarkerError {
    fn hint(&self) -> Option<String> {
        Some(
            "fix the workspace marker at the line named (`.tools/esys/a2c/workspace.yaml`, see docs/concepts.md)"
                .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<WorkspaceMarker, MarkerError> {
        WorkspaceMarker::parse(text, Path::new("workspace.yaml"))
    }

    #[test]
    fn globs_select_members() {
        let m = parse("schema_version: 1\nmembers: [\"products/*\", libs/core]\nexclude: [products/old]\n").unwrap();
        assert!(m.selects("products/app"));
        assert!(!m.selects("products/app/sub"));
        assert!(!m.selects("products/old"));
        assert!(m.selects("libs/core"));
        assert!(!m.selects("libs/other"));
        assert_eq!(m.max_depth(), Some(2));
        let all = parse("schema_version: 1\n").unwrap();
        assert!(all.selects("deep/down/repo"));
        assert_eq!(all.max_depth(), None);
    }

    /// A marker of more globs than a superbuild needs, or of one huge glob, is refused before
    /// any automaton is built (874k globs took 2.36 GB before "error building NFA").
    #[test]
    fn globs_are_bounded_in_count_and_length() {
        let list = |n: usize| (0..n).map(|i| format!("  - p{i}/*\n")).collect::<String>();
        assert!(parse(&format!("schema_version: 1\nmembers:\n{}", list(MAX_GLOBS))).is_ok());
        let e = parse(&format!("schema_version: 1\nmembers:\n{}", list(MAX_GLOBS + 1))).unwrap_err();
        assert!(e.reason.contains("more than 1000 globs"), "{e}");
        assert_eq!(e.line, MAX_GLOBS + 3);
        let long = "a*".repeat(MAX_GLOB_BYTES);
        let e = parse(&format!("schema_version: 1\nexclude: [\"{long}\"]\n")).unwrap_err();
        assert!(e.reason.contains("more than 1024"), "{e}");
    }

    #[test]
    fn bad_globs_are_refused_with_line() {
        for (text, why) in [
            ("schema_version: 1\nmembers: [/abs]\n", "absolute"),
            ("schema_version: 1\nmembers: [\"C:/x\"]\n", "drive"),
            ("schema_version: 1\nmembers: [\"a\\\\b\"]\n", "backslash"),
            ("schema_version: 1\nmembers: [../x]\n", ".."),
            ("schema_version: 1\nmembers: [a//b]\n", "empty"),
            ("schema_version: 1\nmembers: [./a]\n", "`.`"),
            ("schema_version: 1\nmembers: [a/.git]\n", ".git"),
            ("schema_version: 1\nexclude: [\"//srv/share\"]\n", "absolute"),
            ("schema_version: 1\nmembers: [\"a[\"]\n", "glob"),
            ("schema_version: 3\n", "found v3, this a2c supports up to v2"),
            // Above 32 bits: read as written, not "must be 1 or 2".
            (
                "schema_version: 4294967298\n",
                "found v4294967298, this a2c supports up to v2",
            ),
            ("schema_version: 02\n", "`schema_version` must be 1 to 2, found `02`"),
            ("schema_version: 1\nmember: [a]\n", "unknown key `member`"),
            ("schema_version: 1\nmembers: a\n", "must be a list"),
            ("members: [a]\n", "missing `schema_version"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.reason.contains(why), "{text:?}: {e}");
        }
        assert_eq!(
            parse("schema_version: 1\nmembers:\n  - ok\n  - ../x\n")
                .unwrap_err()
                .line,
            4
        );
    }

    /// `registry:` is one location or a list of them, in order; an empty or
    /// repeated entry is refused with its line.
    #[test]
    fn registry_is_one_location_or_a_list_in_order() {
        assert_eq!(
            parse("schema_version: 1\nregistry: ../reg\n").unwrap().registries,
            ["../reg"]
        );
        assert!(parse("schema_version: 1\nregistry:\n").unwrap().registries.is_empty());
        let block = "schema_version: 1\nregistry:\n  - conan+https://c.example/r\n  - pypi+https://p.example/simple/\n  - ../reg\n";
        assert_eq!(
            parse(&block.replace("schema_version: 1", "schema_version: 2"))
                .unwrap()
                .registries,
            ["conan+https://c.example/r", "pypi+https://p.example/simple/", "../reg"]
        );
        let flow = parse("schema_version: 2\nregistry: [\"https://a.example/\", ../reg]\n").unwrap();
        let old = parse("schema_version: 1\nregistry: [\"https://a.example/\", ../reg]\n").unwrap_err();
        assert!(
            old.reason.contains("needs `schema_version: 2`") && old.line == 2,
            "{old}"
        );
        assert_eq!(flow.registries, ["https://a.example/", "../reg"]);
        let twice = parse("schema_version: 2\nregistry:\n  - ../reg\n  - ../reg\n").unwrap_err();
        assert!(twice.reason.contains("listed twice") && twice.line == 4, "{twice}");
        let empty = parse("schema_version: 2\nregistry: [../reg, \"\"]\n").unwrap_err();
        assert!(empty.reason.contains("empty entry"), "{empty}");
    }

    /// A `registry:` entry may carry its own mirrors (`- url: R` with `mirrors: [...]`).
    #[test]
    fn a_registry_entry_may_list_its_own_mirrors() {
        let m = parse(
            "schema_version: 2\nregistry:\n  - url: conan+https://c.example/r\n    mirrors: [\"conan+https://m.example/r\"]\n  - ../reg\nmirrors: [../all]\n",
        )
        .unwrap();
        assert_eq!(m.registries, ["conan+https://c.example/r", "../reg"]);
        assert_eq!(
            m.registry_mirrors["conan+https://c.example/r"],
            ["conan+https://m.example/r"]
        );
        assert!(!m.registry_mirrors.contains_key("../reg"));
        assert_eq!(m.mirrors, ["../all"]);
        for (text, why, line) in [
            ("schema_version: 2\nregistry:\n  - mirrors: [x]\n", "needs `url:`", 3),
            (
                "schema_version: 2\nregistry:\n  - url: a\n    mirror: [x]\n",
                "unknown key `mirror`",
                4,
            ),
            ("schema_version: 2\nregistry:\n  - url: [a]\n", "one location", 3),
            ("schema_version: 2\nregistry:\n  - a\n  - url: a\n", "listed twice", 4),
            ("schema_version: 1\nmembers:\n  - {a: 1}\n", "list of strings", 2),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.reason.contains(why) && e.line == line, "{text:?}: {e}");
        }
    }
}
