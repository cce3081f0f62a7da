//! The `a2c.lock` model: read any known version, write the latest, sorted, atomically.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::archive::Format;
use crate::method::METHOD_NAME;
use crate::util::digest::{Sha256, check_tree_digest};
use crate::util::version::MethodVersion;

pub mod vendored;

/// The lockfile's name inside a tool state root.
pub const LOCK_FILE: &str = "a2c.lock";

/// One locked method version: the exact bundle identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockEntry {
    pub name: String,
    pub version: MethodVersion,
    /// Where the bundle was resolved from: a URL (`https://`, `http://`, `file://`, `oci://`),
    /// or a path relative to the lock file's directory (a file registry the marker names by a
    /// relative path: a committed lock carries no machine's absolute paths).
    pub source: String,
    pub sha256: Sha256,
    pub size: u64,
    pub format: Format,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// The registry the version was taken from, as the workspace marker names it, when the
    /// marker lists several (lockfile version 3): later runs hold the entry to that registry
    /// alone ("not in this registry", never "removed" for another's version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
}

/// Where a locked bundle is fetched from: the lock's `source`, parsed in this one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleLocation {
    /// A `file://` URL: a file registry on this machine or a share.
    File(PathBuf),
    /// An `http://` or `https://` URL.
    Http(url::Url),
    /// An `https://` (or loopback) URL and the bearer token a registry kind obtained for its
    /// origin (a `gs://` object, with credentials that cannot sign a URL): the download sends
    /// it only while its hops stay on that origin.
    Bearer { url: url::Url, token: crate::net::Bearer },
    /// Anything else: a2c cannot fetch it (the text, redacted, for messages).
    Unsupported(String),
    /// A registry kind's own address whose kind could not give a URL now (an `s3://` object
    /// without usable credentials): the source (redacted), why, and what to do.
    Unavailable {
        source: String,
        reason: String,
        hint: Option<String>,
    },
}

impl BundleLocation {
    /// The URL to download and the token its origin takes, when this place is a download
    /// (`Http`, `Bearer`); `None` for any other.
    pub fn into_download(self) -> Option<(url::Url, Option<crate::net::Bearer>)> {
        match self {
            Self::Http(url) => Some((url, None)),
            Self::Bearer { url, token } => Some((url, Some(token))),
            _ => None,
        }
    }
}

impl LockEntry {
    /// Whether the file at `path` is this entry's bundle: its size, then its sha256 (read at
    /// most the locked size plus one byte). What is read before this says yes is never
    /// extracted.
    pub fn is_bundle_at(&self, path: &Path) -> bool {
        use std::io::Read;
        let Ok(file) = fs_err::File::open(path) else {
            return false;
        };
        if file.metadata().map(|m| m.len()).ok() != Some(self.size) {
            return false;
        }
        crate::util::digest::sha256_reader(file.take(self.size + 1))
            .is_ok_and(|(sha, size)| sha == self.sha256 && size == self.size)
    }

    /// The entry's `source`, parsed (a relative path against `lock_dir`, the lock file's
    /// directory). A URL of another scheme is unsupported here: it may be a registry kind's own
    /// address ([`Self::kind_address`]), which `registry::bundle_location` asks the kind about.
    pub fn location(&self, lock_dir: Option<&Path>) -> BundleLocation {
        if is_relative_source(&self.source) {
            return match lock_dir {
                Some(dir) => BundleLocation::File(crate::util::paths::normalize(&dir.join(&self.source))),
                None => BundleLocation::Unsupported(crate::util::redact::redact(&self.source)),
            };
        }
        match url::Url::parse(&self.source) {
            Ok(u) if u.scheme() == "file" => match u.to_file_path() {
                Ok(path) => BundleLocation::File(path),
                Err(()) => BundleLocation::Unsupported(crate::util::redact::redact(&self.source)),
            },
            Ok(u) if matches!(u.scheme(), "http" | "https") => BundleLocation::Http(u),
            _ => BundleLocation::Unsupported(crate::util::redact::redact(&self.source)),
        }
    }

    /// The entry's `source` when it is a URL of no scheme `location` reads (`oci://HOST/REPO`):
    /// a registry kind's own address.
    pub fn kind_address(&self) -> Option<url::Url> {
        let url = url::Url::parse(&self.source).ok()?;
        (!matches!(url.scheme(), "file" | "http" | "https") && !is_relative_source(&self.source)).then_some(url)
    }

    /// The bundle's file name: the source's last segment when it is one plain, portable file
    /// name (never `..`, `.`, a control character or the vendor manifest's name) that names
    /// the version — so that the bundles of two versions never share one name (a Conan
    /// remote serves every version as `conan_package.tgz`) — else `a2c-<V>.<format>`.
    /// `--from DIR` looks for it first; `a2c vendor` writes it (and refuses two entries that
    /// would still share one).
    pub fn file_name(&self) -> String {
        let version = self.version.to_string();
        self.source
            .rsplit('/')
            .next()
            .filter(|n| *n != vendored::VENDOR_MANIFEST)
            .filter(|n| n.contains(&version))
            .filter(|n| crate::archive::entry_segments(n.as_bytes()).is_ok_and(|s| s.len() == 1))
            .map(str::to_string)
            .unwrap_or_else(|| bundle_name(&self.version, self.format))
    }
}

/// The whole lockfile.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lockfile {
    pub methods: Vec<LockEntry>,
    /// The highest `serial` of a signed index this lock was resolved against: an index with a
    /// lower serial is a rollback.
    pub index_serial: Option<u64>,
    /// The same, for each registry of a marker that lists several (each keeps its own
    /// serial), by the registry as the marker names it.
    pub index_serials: std::collections::BTreeMap<String, u64>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LockDoc {
    version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    index_serial: Option<u64>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    index_serials: std::collections::BTreeMap<String, u64>,
    #[serde(default, rename = "method")]
    methods: Vec<LockEntry>,
}

/// The bundle file name of a version (what `a2c pack` writes, and what a lock entry is saved
/// as when its source names no file).
pub fn bundle_name(version: &MethodVersion, format: crate::archive::Format) -> String {
    match format {
        // A wheel is named as pip expects it, whatever registry it sits in.
        crate::archive::Format::Wheel => {
            crate::archive::wheel::file_name(crate::archive::wheel::DEFAULT_PROJECT, &version.to_string())
        }
        _ => format!("a2c-{version}.{}", format.extension()),
    }
}

/// Why a lockfile could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("invalid lockfile `{}`: {reason}", path.display())]
    Invalid { path: PathBuf, reason: String },
    #[error("unsupported lockfile `{}`: {why}", path.display())]
    TooNew {
        path: PathBuf,
        why: crate::util::formats::FormatError,
    },
}

impl LockError {
    pub fn hint(&self) -> Option<String> {
        match self {
            LockError::Invalid { .. } => Some("fix the entry by hand, or delete the file and run `a2c lock`".into()),
            LockError::TooNew { .. } => Some("upgrade a2c to read this lockfile".into()),
            LockError::Io(e) => crate::util::contain::refusal(e).map(|r| r.hint()),
        }
    }
}

/// A `source` that is a path relative to the lock's directory (no scheme, not absolute).
pub fn is_relative_source(source: &str) -> bool {
    !source.contains("://") && !source.starts_with('/') && !source.is_empty()
}

impl Lockfile {
    /// The serial recorded for a registry: `name` as a marker listing several names it, or
    /// `None` for the one registry of a run.
    pub fn serial_of(&self, name: Option<&str>) -> Option<u64> {
        match name {
            Some(name) => self.index_serials.get(name).copied(),
            None => self.index_serial,
        }
    }

    /// Writes the `file://` sources of `versions` as paths relative to `lock_dir` (the lock
    /// file's directory): for a file registry named by a relative path, so that the lock is the
    /// same on every machine that checks the superbuild out.
    pub fn relativize_sources(&mut self, versions: &[MethodVersion], lock_dir: &Path) {
        for m in self.methods.iter_mut().filter(|m| versions.contains(&m.version)) {
            let Ok(url) = url::Url::parse(&m.source) else { continue };
            let Ok(file) = url.to_file_path() else { continue };
            if url.scheme() != "file" {
                continue;
            }
            if let Some(rel) = crate::util::paths::relative_path(lock_dir, &file)
                && let Some(text) = rel.to_str()
                && !text.contains('\\')
            {
                m.source = text.to_string();
            }
        }
    }

    /// Parses lockfile text; `path` is used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, LockError> {
        let invalid = |reason: String| LockError::Invalid {
            path: path.to_path_buf(),
            reason,
        };
        // Read the version first, so that a newer file fails with the version, not a field.
        let probe: toml::Table = toml::from_str(text).map_err(|e| invalid(one_line(&e)))?;
        let found = probe.get("version").map(toml::Value::to_string);
        match crate::util::formats::LOCK.check(found.as_deref()) {
            Ok(_) => {}
            Err(why @ crate::util::formats::FormatError::TooNew { .. }) => {
                return Err(LockError::TooNew {
                    path: path.to_path_buf(),
                    why,
                });
            }
            Err(why) => return Err(invalid(why.to_string())),
        }
        let doc: LockDoc = toml::from_str(text).map_err(|e| invalid(one_line(&e)))?;
        let mut seen = std::collections::BTreeSet::new();
        for (i, m) in doc.methods.iter().enumerate() {
            let at = format!("[[method]] #{} (version {})", i + 1, m.version);
            if m.name != METHOD_NAME {
                return Err(invalid(format!(
                    "{at}: `name` is `{}`, expected `{METHOD_NAME}`",
                    m.name
                )));
            }
            if !seen.insert(m.version.clone()) {
                return Err(invalid(format!("{at}: version {} is locked twice", m.version)));
            }
            if let Some(tree) = &m.tree {
                check_tree_digest(tree).map_err(|e| invalid(format!("{at}: `tree`: {e}")))?;
            }
            if has_userinfo(&m.source) {
                return Err(invalid(format!(
                    "{at}: `source` contains credentials; a lockfile must never hold them"
                )));
            }
        }
        Ok(Self {
            methods: doc.methods,
            index_serial: doc.index_serial,
            index_serials: doc.index_serials,
        })
    }

    /// Reads `path`; `None` when it does not exist.
    pub fn read(path: &Path) -> Result<Option<Self>, LockError> {
        match crate::util::contain::read_config(path)? {
            Some(text) => Self::parse(&text, path).map(Some),
            None => Ok(None),
        }
    }

    /// The TOML text, entries sorted by version.
    pub fn to_toml(&self) -> String {
        let mut methods = self.methods.clone();
        methods.sort_by(|a, b| a.version.cmp(&b.version));
        let doc = LockDoc {
            version: crate::util::formats::LOCK.newest,
            index_serial: self.index_serial,
            index_serials: self.index_serials.clone(),
            methods,
        };
        let body = toml::to_string(&doc).expect("the lockfile serializes");
        format!("# This file is written by `a2c lock` and `a2c install`. Commit it; do not edit it by hand.\n{body}")
    }

    /// Writes the lockfile atomically.
    pub fn write(&self, path: &Path) -> Result<(), LockError> {
        crate::util::fs::write_atomic(path, self.to_toml().as_bytes())?;
        Ok(())
    }

    pub fn get(&self, version: &MethodVersion) -> Option<&LockEntry> {
        self.methods.iter().find(|m| &m.version == version)
    }

    /// Inserts or replaces the entry of its version.
    pub fn upsert(&mut self, entry: LockEntry) {
        self.methods.retain(|m| m.version != entry.version);
        self.methods.push(entry);
        self.methods.sort_by(|a, b| a.version.cmp(&b.version));
    }
}

fn one_line(e: &toml::de::Error) -> String {
    e.to_string()
        .trim()
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `true` when a URL carries `user:password@` or `token@`.
pub fn has_userinfo(url: &str) -> bool {
    // Checked on the text as well, so that a URL the parser rejects (an empty host, say) cannot
    // smuggle credentials through.
    let authority = url
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or(""));
    authority.is_some_and(|a| a.contains('@'))
        || url::Url::parse(url).is_ok_and(|u| !u.username().is_empty() || u.password().is_some())
}

impl crate::util::hint::Hint for LockError {
    fn hint(&self) -> Option<String> {
        LockError::hint(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bundle's vendored name names its version: a source's last segment that does not
    /// (a Conan remote's `conan_package.tgz` for every version) gives way to `a2c-V.FORMAT`.
    #[test]
    fn a_bundles_file_name_names_its_version() {
        let entry = |version: &str, source: &str| LockEntry {
            name: crate::method::METHOD_NAME.into(),
            version: version.parse().unwrap(),
            source: source.into(),
            sha256: crate::util::digest::Sha256::of(b"x"),
            size: 1,
            format: crate::archive::Format::TarGz,
            tree: None,
            registry: None,
        };
        let conan = "https://c.example/v2/conans/esys-a2c/1.0.0/_/_/revisions/ab/packages/cd/revisions/ef/files/conan_package.tgz";
        assert_eq!(entry("1.0.0", conan).file_name(), "a2c-1.0.0.tar.gz");
        let plain = "https://r.example/bundles/a2c-1.0.0.tar.gz";
        assert_eq!(entry("1.0.0", plain).file_name(), "a2c-1.0.0.tar.gz");
        let wheel = "https://p.example/files/esys_a2c-1.2.0-py3-none-any.whl";
        assert_eq!(entry("1.2.0", wheel).file_name(), "esys_a2c-1.2.0-py3-none-any.whl");
        assert_eq!(entry("2.0.0", plain).file_name(), "a2c-2.0.0.tar.gz");
        assert_eq!(
            entry("1.0.0", "oci://h/esys/a2c@sha256:00").file_name(),
            "a2c-1.0.0.tar.gz"
        );
    }

    fn entry(v: &str) -> LockEntry {
        LockEntry {
            name: METHOD_NAME.into(),
            version: v.parse().unwrap(),
            source: format!("https://example.org/a2c/bundles/a2c-{v}.tar.gz"),
            sha256: Sha256::of(v.as_bytes()),
            size: 10,
            format: Format::TarGz,
            tree: Some(format!("sha256:{}", Sha256::of(b"t"))),
            registry: None,
        }
    }

    #[test]
    fn credentials_are_found_even_in_urls_the_parser_rejects() {
        assert!(has_userinfo("https://u:secret@example.org/a"));
        assert!(has_userinfo("https://token@example.org/a"));
        assert!(
            has_userinfo("https://u:secret@/tmp/a"),
            "no host: the parser fails, the text check does not"
        );
        assert!(!has_userinfo("https://example.org/a@b"));
        assert!(!has_userinfo("file:///tmp/a@b"));
    }

    #[test]
    fn round_trips_sorted() {
        let mut lock = Lockfile::default();
        lock.upsert(entry("2.0.0"));
        lock.upsert(entry("1.10.0"));
        lock.upsert(entry("1.2.0"));
        let text = lock.to_toml();
        assert!(text.find("1.2.0").unwrap() < text.find("1.10.0").unwrap());
        assert_eq!(Lockfile::parse(&text, Path::new("a2c.lock")).unwrap(), lock);
    }

    #[test]
    fn refuses_bad_files_with_reason() {
        let p = Path::new("a2c.lock");
        let good = Lockfile {
            methods: vec![entry("1.0.0")],
            ..Lockfile::default()
        }
        .to_toml();
        for (text, why) in [
            ("version = 4\n".to_string(), "found v4, this a2c supports up to v3"),
            ("[[method]]\n".to_string(), "missing `version` (this a2c reads 1 to 3)"),
            (
                "version = 4294967299\n".to_string(),
                "found v4294967299, this a2c supports up to v3",
            ),
            ("version = 0\n".to_string(), "`version` must be 1 to 3, found `0`"),
            (good.replace("sha256 = \"", "sha256 = \"x"), "not a sha256"),
            (good.replace("tar.gz\"\n", "rar\"\n"), "unknown variant"),
            (
                good.replace("name = \"esys/a2c\"", "name = \"x\""),
                "expected `esys/a2c`",
            ),
            (
                good.replace("version = \"1.0.0\"", "version = \"^1.0\""),
                "not an exact version",
            ),
            (format!("{good}extra = 1\n"), "unknown field"),
            (good.replace("https://", "https://u:p@"), "credentials"),
            (
                format!(
                    "{good}\n{}",
                    good.split("\n[[method]]")
                        .nth(1)
                        .map(|m| format!("[[method]]{m}"))
                        .unwrap()
                ),
                "locked twice",
            ),
        ] {
            let e = Lockfile::parse(&text, p).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("a2c.lock"), "{why}: {e}\n{text}");
        }
    }
}
