//! One handle per registry location: everything a2c does with a registry — read its index,
//! publish a version, yank one, sign the index — goes through [`Registry`], implemented once per
//! kind (`dir/`, `http/`, `oci/`, `pypi/`, `conan/`), and fails with a [`PublishError`].
//! `RegistryLocation::open` opens a location's handle (docs/architecture.md, "Adding a registry kind").

use std::path::{Path, PathBuf};

use super::{Index, RegistryError, Wanted};
use crate::archive::{Deflate, Format};
use crate::net::LazyClient;
use crate::util::version::MethodVersion;

/// What to publish: a method tree packed as `version`.
#[derive(Debug, Clone, Copy)]
pub struct PublishRequest<'a> {
    pub tree: &'a Path,
    pub version: &'a MethodVersion,
    pub format: Format,
    /// Sign the index afterwards with this secret key.
    pub sign: Option<&'a super::signing::SecretKey>,
    pub deflate: Deflate,
    /// The packing limits (the session's).
    pub limits: &'a crate::archive::Limits,
    /// Publish to an object store that ignores conditional writes (`--allow-unconditional-writes`),
    /// which is refused otherwise: create-only and the index's compare-and-swap then hold nothing.
    pub allow_unconditional: bool,
}

/// Where a published bundle landed (in `pack --json`: `bundle` and `index`, or `registry`).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum Landed {
    /// A file registry: the bundle file and the index that lists it.
    Files { bundle: PathBuf, index: PathBuf },
    /// A registry the bundle was sent to (`oci://…`, `pypi+…`), shown as it is named; what
    /// the kind calls sending it (`pushed`, `uploaded`) and where it landed, for messages.
    Pushed {
        registry: String,
        #[serde(skip)]
        verb: &'static str,
        #[serde(skip)]
        target: String,
    },
}

/// What publishing did; serialized as `pack --json` (docs/json/pack.schema.json).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Published {
    pub version: MethodVersion,
    pub sha256: crate::util::digest::Sha256,
    pub size: u64,
    pub format: Format,
    pub tree: Option<String>,
    pub files: usize,
    /// `false` when the same bundle was already published (nothing changed).
    pub changed: bool,
    #[serde(flatten)]
    pub landed: Landed,
    /// What the publisher should know (a signed index left unsigned or stale): said on
    /// stderr, not in the document.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// What a yank did; serialized as `yank --json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Yanked {
    pub version: MethodVersion,
    /// `true` for a yank, `false` for `--undo`.
    pub yanked: bool,
    /// `false` when the version already was in that state.
    pub changed: bool,
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// What signing wrote: where the signature is, and for an index rebuilt from the registry's
/// contents (OCI) its serial and number of versions; serialized as `sign --json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Signed {
    pub signature: String,
    #[serde(flatten, serialize_with = "rebuilt")]
    pub rebuilt: Option<(u64, usize)>,
    /// What the signer should know (an expiry already past, kept): said on stderr.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// What `a2c sign` does with the index's `expires`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// Leave it as it is (a file registry's; an OCI index artifact is rebuilt without one).
    Keep,
    /// A new one, this many days from now (at least one).
    InDays(u64),
    /// None: the index never expires (`--no-expiry`).
    Never,
}

fn rebuilt<S: serde::Serializer>(r: &Option<(u64, usize)>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(None)?;
    if let Some((serial, versions)) = r {
        map.serialize_entry("serial", serial)?;
        map.serialize_entry("versions", versions)?;
    }
    map.end()
}

/// A recipe written beside a method tree for another tool to publish (a Conan recipe), and the
/// commands that do; serialized as `pack --json` (docs/json/pack-conan.schema.json).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Recipe {
    pub recipe: PathBuf,
    pub reference: String,
    pub create: String,
    pub upload: String,
    /// The tool that publishes it (`Conan`), for messages.
    #[serde(skip)]
    pub tool: &'static str,
    /// What a placeholder in `upload` stands for, for messages.
    #[serde(skip)]
    pub placeholder: String,
}

/// A kind whose registry takes packages another tool builds: writes the recipe for it.
pub trait RecipeWriter: std::fmt::Debug {
    /// Writes the recipe for the method tree `tree` (checked to be one of `version`).
    fn write_recipe(&self, tree: &Path, version: &MethodVersion) -> Result<Recipe, PublishError>;
}

/// A registry location, opened: what a2c can do with it. A kind that takes no write of its
/// own words why in [`Registry::refuse`]; `publish`, `yank` and `sign` refuse by default.
pub trait Registry {
    /// The location as the user named it, for messages.
    fn shown(&self) -> String;

    /// Its index; with `trusted` keys, only after its signature verified with one of them.
    /// With `wanted`, a registry that reads entries one by one (OCI) reads only those.
    fn read_index(&self, client: &LazyClient, trusted: &[String], wanted: Wanted<'_>) -> Result<Index, RegistryError>;

    /// The refusal of a write this kind does not take, in its words (default: a registry that
    /// is only read, [`read_only`]).
    fn refuse(&self, action: Action) -> PublishError {
        read_only(action, &self.shown())
    }

    /// Packs and publishes a version (refusing other bytes under a published version).
    fn publish(&self, request: &PublishRequest<'_>) -> Result<Published, PublishError> {
        let _ = request;
        Err(self.refuse(Action::Pack))
    }

    /// Marks `version` yanked (or, with `undo`, available again); re-signs with `sign`.
    fn yank(
        &self,
        version: &MethodVersion,
        undo: bool,
        sign: Option<&super::signing::SecretKey>,
    ) -> Result<Yanked, PublishError> {
        let _ = (version, undo, sign);
        Err(self.refuse(Action::Yank))
    }

    /// Signs the index with the secret key `key`, its expiry as `expiry` says.
    fn sign(&self, key: &super::signing::SecretKey, expiry: Expiry) -> Result<Signed, PublishError> {
        let _ = (key, expiry);
        Err(self.refuse(Action::Sign))
    }
}

/// What a publishing command asks of a registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Pack,
    Yank,
    Sign,
}

/// The refusal of a write to a registry that is only read (a static HTTP registry).
pub fn read_only(action: Action, location: &str) -> PublishError {
    let message = match action {
        Action::Pack => format!(
            "`a2c pack` publishes into a file registry, not `{location}`; pack locally, then upload the registry directory"
        ),
        Action::Yank => format!(
            "`a2c yank` edits a file registry, not `{location}`; yank in the registry directory, then upload it"
        ),
        Action::Sign => {
            format!("`a2c sign` signs a file registry, not `{location}`; sign the registry directory, then upload it")
        }
    };
    PublishError::Refused { message, hint: None }
}

/// Why publishing failed.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Manifest(#[from] crate::method::ManifestError),
    #[error("the method tree `{}` declares version {found} in its manifest, not {expected}", tree.display())]
    VersionMismatch {
        tree: PathBuf,
        found: MethodVersion,
        expected: MethodVersion,
    },
    #[error(transparent)]
    Archive(#[from] crate::archive::ArchiveError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A registry kind that does not take this write, in its own words (what to do instead in
    /// `hint`): a static HTTP registry, a package index, a Conan remote.
    #[error("{message}")]
    Refused { message: String, hint: Option<String> },
}

impl PublishError {
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Manifest(_) => Some(format!(
                "a method tree holds `{}` at its root",
                crate::method::MANIFEST_FILE
            )),
            Self::VersionMismatch { found, .. } => Some(format!("pass `--version {found}`, or fix the manifest")),
            Self::Archive(e) => e.hint(),
            Self::Registry(e) => e.hint(),
            Self::Refused { hint, .. } => hint.clone(),
            Self::Io(_) => None,
        }
    }
}

impl crate::util::hint::Hint for PublishError {
    fn hint(&self) -> Option<String> {
        PublishError::hint(self)
    }
}

/// The manifest of the method tree `tree`, which must declare `version` (every way of
/// publishing checks it first).
pub fn tree_of_version(tree: &Path, version: &MethodVersion) -> Result<crate::method::MethodManifest, PublishError> {
    let manifest = crate::method::MethodManifest::read_tree(tree)?;
    if &manifest.version != version {
        return Err(PublishError::VersionMismatch {
            tree: tree.to_path_buf(),
            found: manifest.version,
            expected: version.clone(),
        });
    }
    Ok(manifest)
}

/// A publish request's tree, checked to be of its version and packed as a bundle into a
/// temporary file (removed when dropped): what a kind that uploads a bundle sends.
pub fn pack_to_temp(
    r: &PublishRequest<'_>,
) -> Result<
    (
        crate::method::MethodManifest,
        tempfile::NamedTempFile,
        crate::archive::PackedBundle,
    ),
    PublishError,
> {
    let manifest = tree_of_version(r.tree, r.version)?;
    let tmp = tempfile::NamedTempFile::new()?;
    let packed = crate::archive::pack_tree(
        r.tree,
        &crate::archive::bundle_top(r.version, r.format),
        r.format,
        tmp.path(),
        r.limits,
        r.deflate,
    )?;
    Ok((manifest, tmp, packed))
}
