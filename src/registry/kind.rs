//! What a registry kind is to the rest of the program: its address, parsed ([`Location`]), and how
//! it is registered ([`Kind`]: the schemes it takes, how it parses them, its answer to
//! a challenge). `registry::KINDS` lists the registrations, one line per kind
//! (docs/architecture.md, "Adding a registry kind").

use std::path::Path;
use std::sync::Arc;

use url::Url;

use super::handle::{PublishError, PublishRequest, Published, Registry, Signed, Yanked};
use super::signing::SecretKey;
use super::{Index, PackPlan, RegistryError, Wanted};
use crate::archive::Format;
use crate::lock::BundleLocation;
use crate::net::{HttpError, LazyClient};
use crate::util::version::MethodVersion;

/// A registry location of one kind, parsed: what a2c asks of an address before opening it.
pub trait Location: Send + Sync + std::fmt::Debug {
    /// The location as the user names it (`oci://HOST/REPO`, a path, …), for messages; two
    /// locations are the same when they show the same.
    fn shown(&self) -> String;

    /// Where its index is read (or what stands for one: a project page, a tag list, a search).
    fn index_url(&self) -> Url;

    /// The base URL of an HTTP registry (whose host gets the token); `None` on this machine.
    fn http_base(&self) -> Option<Url>;

    /// The directory of a file registry (read and written with no network).
    fn local_dir(&self) -> Option<&Path> {
        None
    }

    /// Whether its index gives each bundle's sha256 and size without downloading the bundle, so
    /// that it may serve a locked bundle as an alternative to the lock's source.
    fn indexes_digests(&self) -> bool {
        true
    }

    /// Where a bundle is fetched whose lock entry names this location itself as its `source`
    /// (an `oci://` address: the layer's blob, by the locked digest), as a
    /// [`BundleLocation::Http`] URL, or a [`BundleLocation::Bearer`] URL and the token its
    /// origin takes; `None`: a kind whose entries' sources are plain URLs; an error: one that
    /// cannot give it now, and why (an `s3://` object without usable credentials).
    fn bundle_at(
        &self,
        sha256: &crate::util::digest::Sha256,
        network: &crate::net::Network,
    ) -> Result<Option<BundleLocation>, RegistryError> {
        let _ = (sha256, network);
        Ok(None)
    }

    /// Its handle: everything a2c does with the registry.
    fn open(&self, network: &crate::net::Network) -> Box<dyn Registry>;

    /// What `a2c pack` makes for it with `--format` as given (`None`: the kind's default).
    fn pack_plan(&self, format: Option<&str>) -> Result<PackPlan, String> {
        bundle_plan(format, Format::TarGz)
    }

    /// Whether a version may gain new revisions (a Conan recipe or package revision): another
    /// bundle under a locked version is then a newer revision, the locked one still served at
    /// its own URL — kept locked and noted until `a2c lock --update V` — not a changed bundle.
    fn revises_versions(&self) -> bool {
        false
    }

    /// Whether `a2c pack` checks that it honours conditional writes before publishing (an
    /// object store), so that `--allow-unconditional-writes` means something for it.
    fn probes_conditional_writes(&self) -> bool {
        false
    }

    /// Its own words for an HTTP error it met (`net` names no kind: a `401` is "run `docker
    /// login`" to an OCI registry, "bind the user `conan remote login` takes" to a Conan
    /// remote); `None`: the network's words.
    fn hint(&self, _: &HttpError) -> Option<String> {
        None
    }

    /// Its words for a `401` or `403` on a bundle it located (`bundle_at`), when the request's
    /// credentials came from the environment `network` holds (an object store's signed URL):
    /// where they came from, which the plain words cannot say.
    fn refused_hint(&self, _: &crate::net::Network) -> Option<String> {
        None
    }
}

/// A kind's handle whose HTTP errors carry the kind's words ([`Location::hint`]):
/// `RegistryLocation::open` gives every handle so.
pub(super) struct KindHandle {
    pub(super) location: Arc<dyn Location>,
    pub(super) handle: Box<dyn Registry>,
}

impl KindHandle {
    fn word(&self, e: RegistryError) -> RegistryError {
        match e {
            RegistryError::Http(error) => match self.location.hint(&error) {
                Some(hint) => RegistryError::Refused { error, hint },
                None => RegistryError::Http(error),
            },
            other => other,
        }
    }

    fn word_publish(&self, e: PublishError) -> PublishError {
        match e {
            PublishError::Registry(e) => PublishError::Registry(self.word(e)),
            other => other,
        }
    }
}

impl Registry for KindHandle {
    fn shown(&self) -> String {
        self.handle.shown()
    }

    fn read_index(&self, client: &LazyClient, trusted: &[String], wanted: Wanted<'_>) -> Result<Index, RegistryError> {
        self.handle
            .read_index(client, trusted, wanted)
            .map_err(|e| self.word(e))
    }

    fn publish(&self, request: &PublishRequest<'_>) -> Result<Published, PublishError> {
        self.handle.publish(request).map_err(|e| self.word_publish(e))
    }

    fn yank(&self, version: &MethodVersion, undo: bool, sign: Option<&SecretKey>) -> Result<Yanked, PublishError> {
        self.handle.yank(version, undo, sign).map_err(|e| self.word_publish(e))
    }

    fn sign(&self, key: &SecretKey, expiry: super::handle::Expiry) -> Result<Signed, PublishError> {
        self.handle.sign(key, expiry).map_err(|e| self.word_publish(e))
    }
}

/// A pack plan for a kind that takes bundles: the format asked for, else `default`; a format
/// only another kind takes (`conan`) names that kind's location.
pub fn bundle_plan(format: Option<&str>, default: Format) -> Result<PackPlan, String> {
    let Some(f) = format else {
        return Ok(PackPlan::Bundle(default));
    };
    f.parse()
        .map(PackPlan::Bundle)
        .map_err(|unknown| match super::KINDS.iter().find(|k| k.pack_format == Some(f)) {
            Some(k) => format!(
                "--format {f} is for a {} registry: pass --registry {}",
                k.syntax, k.syntax
            ),
            None => unknown,
        })
}

/// Every `--format` value `a2c pack` takes: the bundle formats, then each kind's own.
pub fn pack_formats() -> Vec<&'static str> {
    let bundles = [Format::TarGz.as_str(), Format::Zip.as_str(), "wheel"];
    bundles
        .into_iter()
        .chain(super::KINDS.iter().filter_map(|k| k.pack_format))
        .collect()
}

/// A location of a kind, parsed from a URL with one of its schemes; `Err(why)`.
pub type ParseUrl = fn(&Url) -> Result<Arc<dyn Location>, String>;

/// A location of the kind that takes paths, from an absolute path.
pub type FromPath = fn(&Path) -> Arc<dyn Location>;

/// A registry kind, as `registry::KINDS` lists it.
#[derive(Clone, Copy)]
pub struct Kind {
    /// The URL schemes it takes (`oci`, `pypi+https`, …).
    pub schemes: &'static [&'static str],
    /// Its syntax, for the hint of a location no kind takes (`oci://HOST/REPO`).
    pub syntax: &'static str,
    /// Parses a location written with one of its schemes; `Err(why)`.
    pub parse: ParseUrl,
    /// The `--format` value of `a2c pack` only this kind takes (`conan`: a recipe).
    pub pack_format: Option<&'static str>,
    /// The kind of a location that is no URL but a path (absolute), if this is it.
    pub path: Option<FromPath>,
    /// Its answer to a `401` the standard challenges do not answer, when its API has one.
    pub exchange: Option<fn() -> Arc<dyn crate::net::TokenExchange>>,
    /// The environment variables it reads besides a2c's (its cloud's credentials, region and
    /// endpoint): names, or prefixes ending in `_` (`AWS_`). The session reads them once, into
    /// `net::Settings::cloud`.
    pub environment: &'static [&'static str],
}

impl Kind {
    /// A kind taking `schemes`, written as `syntax`, parsed by `parse`, with no `--format`, path
    /// or token exchange of its own (the others' fields follow `..Kind::new(…)`).
    pub const fn new(schemes: &'static [&'static str], syntax: &'static str, parse: ParseUrl) -> Self {
        Self {
            schemes,
            syntax,
            parse,
            pack_format: None,
            path: None,
            exchange: None,
            environment: &[],
        }
    }
}
