//! A Conan 2 remote as a registry: each version of the method a recipe version on the remote
//! (`conan_server`, Artifactory), read through the v2 REST API the `conan` client uses, without
//! calling the client.
//!
//! The location is `conan+https://HOST/PATH#NAME[@USER/CHANNEL]` (the URL `conan remote add`
//! takes; the recipe defaults to `esys-a2c`). The remote must say it keeps revisions
//! (`X-Conan-Server-Capabilities: revisions` on `v1/ping`). The recipe's versions come from
//! `v2/conans/search`; for each version a lock needs: its latest recipe revision, the one
//! package of that revision (a method package has no settings or options: one package id, or
//! the error names them), its latest package revision, and its files. The lock pins
//! `conan_package.tgz` of exactly that package revision by URL (the revisions are in it), with
//! its sha256, size and tree digest, which a2c computes by downloading it; before it is pinned, every file in
//! it is checked against the package's `conanmanifest.txt` (MD5s), and nothing the manifest
//! lists may be missing. A newer revision on the remote changes nothing until `lock --update V`.
//! `conaninfo.txt` and the manifest are never installed: the package's tgz holds the tree.
//!
//! Credentials bound to the remote's host (`A2C_REGISTRY_AUTH`, netrc, `a2c login` with a
//! user and password) are exchanged for a token at `v2/users/authenticate`, as Conan does.
//! Publishing is `conan create` + `conan upload` (docs/registries.md has the recipe `a2c pack
//! --format conan` writes); yanking is removing the version on the remote.

use std::collections::BTreeMap;

use url::Url;

use super::handle::{Action, Registry};
use super::index::IndexEntry;
mod location;

use super::handle::PublishError;
use super::{Index, RegistryError, Wanted, signing};
use crate::archive::Format;
use crate::net::LazyClient;
use crate::util::version::MethodVersion;
pub use location::{CONAN_DEFAULT_NAME, ConanLocation, KIND};

/// Without wanted versions, how many versions are resolved (newest first) at most: each costs
/// a download of its package.
const MAX_RESOLVED: usize = 20;

/// Conan's API takes no Basic credentials but a token its `users/authenticate` endpoint gives
/// for them (as `conan remote login` does): the user's bound credentials go there, on the
/// API's own origin, and the token comes back as the body.
pub struct ConanTokenExchange;

impl crate::net::TokenExchange for ConanTokenExchange {
    /// `…/v2/conans/…` → `…/v2/users/authenticate`, on the same origin; `None` for any other URL.
    fn endpoint(&self, url: &Url) -> Option<Url> {
        let path = url.path();
        let at = path.find("/v2/conans/")?;
        let mut endpoint = url.clone();
        endpoint.set_path(&format!("{}/v2/users/authenticate", &path[..at]));
        endpoint.set_query(None);
        endpoint.set_fragment(None);
        Some(endpoint)
    }

    /// The whole answer, trimmed: one word.
    fn token(&self, body: &[u8]) -> Option<String> {
        let token = std::str::from_utf8(body).ok()?.trim();
        (!token.is_empty() && !token.contains(char::is_whitespace)).then(|| token.to_string())
    }
}

pub struct ConanRegistry {
    remote: ConanLocation,
}

impl ConanRegistry {
    pub fn new(remote: ConanLocation) -> Self {
        Self { remote }
    }

    fn invalid(&self, reason: String) -> RegistryError {
        RegistryError::InvalidIndex {
            location: self.remote.to_string(),
            reason,
        }
    }

    /// The JSON document at `url`.
    fn json(&self, client: &LazyClient, url: &Url) -> Result<serde_json::Value, RegistryError> {
        let body = client.fetch(url)?.body;
        serde_json::from_slice(&body).map_err(|e| self.invalid(format!("`{url}` is not JSON: {e}")))
    }

    /// `revision` of a `…/latest` answer.
    fn latest(&self, client: &LazyClient, url: &Url) -> Result<String, RegistryError> {
        let doc = self.json(client, url)?;
        revision_of(&doc).ok_or_else(|| self.invalid(format!("`{url}` names no revision")))
    }

    /// The remote keeps revisions, or a2c cannot pin one.
    fn check_revisions(&self, client: &LazyClient) -> Result<(), RegistryError> {
        let url = self.remote.base.join("v1/ping").expect("a relative path joins");
        let reply = client.client()?.call(reqwest::Method::GET, &url, &[], None)?;
        if !(200..300).contains(&reply.status) {
            return Err(reply.error(&url).into());
        }
        let capabilities = reply
            .headers
            .get("X-Conan-Server-Capabilities")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if !capabilities.split(',').any(|c| c.trim() == "revisions") {
            return Err(self.invalid(format!(
                "the remote does not keep revisions (X-Conan-Server-Capabilities: `{capabilities}`): a2c pins a package revision, so it needs them on"
            )));
        }
        Ok(())
    }

    /// The versions of the recipe on the remote.
    fn versions(&self, client: &LazyClient) -> Result<Vec<MethodVersion>, RegistryError> {
        let url = self.remote.search_url();
        Ok(versions_of(&self.json(client, &url)?, &self.remote))
    }

    /// The entry of `version`: its latest recipe revision's one package, that package's latest
    /// revision, its `conan_package.tgz` downloaded, hashed and checked against its manifest;
    /// `Err(Unusable)` when that revision has no package or several (why, for the caller: an
    /// error for a pinned version, a note for another).
    fn entry(&self, client: &LazyClient, version: &MethodVersion) -> Result<Result<IndexEntry, String>, RegistryError> {
        let v = version.to_string();
        let reference = self.remote.reference(&v);
        let rrev = self.latest(client, &self.remote.recipe_url(&v, "latest"))?;
        let packages = self.json(client, &self.remote.recipe_url(&v, &format!("revisions/{rrev}/search")))?;
        let ids: Vec<&String> = packages.as_object().map(|m| m.keys().collect()).unwrap_or_default();
        let id = match ids.as_slice() {
            [one] if one.chars().all(|c| c.is_ascii_alphanumeric()) => one.to_string(),
            [] => {
                return Ok(Err(format!(
                    "{reference}#{rrev} has no package: upload one (`conan upload {reference} -r REMOTE`)"
                )));
            }
            many => {
                let shown: Vec<&str> = many.iter().map(|s| s.as_str()).collect();
                return Ok(Err(format!(
                    "{reference}#{rrev} has {} packages ({}): a method package has no settings or options, so one package id",
                    many.len(),
                    shown.join(", ")
                )));
            }
        };
        let package = format!("revisions/{rrev}/packages/{id}");
        let prev = self.latest(client, &self.remote.recipe_url(&v, &format!("{package}/latest")))?;
        let files_url = self.remote.recipe_url(&v, &format!("{package}/revisions/{prev}/files"));
        let files = self.json(client, &files_url)?;
        let names: Vec<&str> = files["files"]
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        for needed in ["conan_package.tgz", "conanmanifest.txt"] {
            if !names.contains(&needed) {
                return Err(self.invalid(format!("{reference}#{rrev}:{id}#{prev} has no `{needed}`")));
            }
        }
        let file = |name: &str| {
            self.remote
                .recipe_url(&v, &format!("{package}/revisions/{prev}/files/{name}"))
        };
        let manifest = client.fetch(&file("conanmanifest.txt"))?.body;
        let tgz_url = file("conan_package.tgz");
        let tgz = client.fetch(&tgz_url)?.body;
        let tree =
            check_manifest(&reference, &String::from_utf8_lossy(&manifest), &tgz).map_err(|e| self.invalid(e))?;
        let (sha256, size) = crate::util::digest::sha256_reader(&tgz[..]).map_err(|e| self.invalid(e.to_string()))?;
        Ok(Ok(IndexEntry {
            version: version.clone(),
            url: tgz_url.to_string(),
            sha256,
            size,
            format: Format::TarGz,
            tree: Some(tree),
            yanked: false,
        }))
    }
}

/// The `revision` of a `…/latest` answer: letters and digits only, as Conan writes them (it
/// goes into URLs and the lock).
fn revision_of(doc: &serde_json::Value) -> Option<String> {
    let revision = doc["revision"].as_str().unwrap_or_default();
    (!revision.is_empty() && revision.chars().all(|c| c.is_ascii_alphanumeric())).then(|| revision.to_string())
}

/// The versions of `remote`'s recipe among a `v2/conans/search` answer's references (another
/// name, user or channel is not this recipe), sorted, each once.
fn versions_of(doc: &serde_json::Value, remote: &ConanLocation) -> Vec<MethodVersion> {
    let mut versions: Vec<MethodVersion> = doc["results"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r.as_str()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|reference| {
            let (nv, uc) = reference.split_once('@').unwrap_or((reference, "_/_"));
            let (name, version) = nv.split_once('/')?;
            (name == remote.name && uc == format!("{}/{}", remote.user, remote.channel))
                .then(|| version.parse().ok())
                .flatten()
        })
        .collect();
    versions.sort();
    versions.dedup();
    versions
}

/// The files `conanmanifest.txt` lists, with their MD5s: after its first line (a timestamp),
/// one `path: md5` a line.
fn manifest_listing(manifest: &str) -> BTreeMap<&str, &str> {
    manifest
        .lines()
        .skip(1)
        .filter_map(|l| l.rsplit_once(": "))
        .map(|(path, md5)| (path.trim(), md5.trim()))
        .collect()
}

/// Every file of the package is in its `conanmanifest.txt` with its MD5, and every file the
/// manifest lists (but `conaninfo.txt` and the manifest, uploaded beside the tgz) is in the
/// package. Returns the package's tree digest; else why not, for `reference`.
fn check_manifest(reference: &str, manifest: &str, tgz: &[u8]) -> Result<String, String> {
    let listed = manifest_listing(manifest);
    let (present, tree) = crate::archive::tar_gz_inventory(tgz, &crate::archive::Limits::default())
        .map_err(|e| format!("{reference}: its conan_package.tgz: {e}"))?;
    for (path, md5) in &present {
        match listed.get(path.as_str()) {
            Some(want) if want.eq_ignore_ascii_case(md5) => {}
            Some(_) => {
                return Err(format!(
                    "{reference}: `{path}` in conan_package.tgz does not match its MD5 in conanmanifest.txt: the package was altered"
                ));
            }
            None => {
                return Err(format!(
                    "{reference}: `{path}` in conan_package.tgz is not in conanmanifest.txt"
                ));
            }
        }
    }
    if let Some(missing) = listed
        .keys()
        .find(|p| !matches!(**p, "conaninfo.txt" | "conanmanifest.txt") && !present.contains_key(**p))
    {
        return Err(format!(
            "{reference}: conanmanifest.txt lists `{missing}`, which conan_package.tgz lacks"
        ));
    }
    Ok(tree)
}

/// What a2c reads from a Conan remote, on arbitrary bytes (feature `fuzzing`): a search answer
/// gives sorted, distinct versions of this recipe only; a revision is letters and digits; and
/// a package (the bytes after the first NUL, a `conan_package.tgz`) is accepted against a
/// manifest (the bytes before) only when it lists every file with its MD5 — a manifest
/// written from the package is accepted, one with a file's MD5 changed is refused.
#[cfg(feature = "fuzzing")]
pub fn fuzz_remote(data: &[u8]) {
    if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) {
        let remote =
            ConanLocation::parse(&Url::parse("conan+https://conan.example/").expect("a URL")).expect("a remote");
        let versions = versions_of(&doc, &remote);
        assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
        if let Some(r) = revision_of(&doc) {
            assert!(!r.is_empty() && r.bytes().all(|b| b.is_ascii_alphanumeric()), "{r}");
        }
    }
    let (manifest, tgz) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let manifest = String::from_utf8_lossy(manifest);
    let checked = check_manifest("r/1.0", &manifest, tgz);
    let Ok((present, tree)) = crate::archive::tar_gz_inventory(tgz, &crate::archive::Limits::default()) else {
        assert!(checked.is_err(), "an unreadable package was accepted");
        return;
    };
    if let Ok(t) = &checked {
        assert_eq!(t, &tree);
        let listed = manifest_listing(&manifest);
        assert!(
            present
                .iter()
                .all(|(p, m)| listed.get(p.as_str()).is_some_and(|l| l.eq_ignore_ascii_case(m)))
        );
    }
    let written: String = std::iter::once("1700000000".to_string())
        .chain(present.iter().map(|(p, m)| format!("{p}: {m}")))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        check_manifest("r/1.0", &written, tgz).as_ref(),
        Ok(&tree),
        "{written:?}"
    );
    if let Some((first, _)) = present.iter().next() {
        let altered = written.replacen(&format!("{first}: "), &format!("{first}: 0"), 1);
        assert!(
            check_manifest("r/1.0", &altered, tgz).is_err(),
            "an altered MD5 was accepted"
        );
    }
}

impl Registry for ConanRegistry {
    fn shown(&self) -> String {
        self.remote.to_string()
    }

    fn read_index(&self, client: &LazyClient, trusted: &[String], wanted: Wanted<'_>) -> Result<Index, RegistryError> {
        // A Conan remote carries no a2c signature: pinned keys cannot be honoured.
        signing::unsigned_unless_unpinned(&self.shown(), trusted)?;
        self.check_revisions(client)?;
        let versions = self.versions(client)?;
        let mut index = Index::new();
        index.fetched_from = Some(self.remote.search_url());
        let mut resolved = 0;
        for version in versions.into_iter().rev() {
            let needed = match wanted {
                Some(w) => w.contains(&version),
                None => resolved < MAX_RESOLVED,
            };
            if !needed {
                index.listed.push(version);
                continue;
            }
            resolved += 1;
            match self.entry(client, &version)? {
                Ok(entry) => index.versions.push(entry),
                // A version a lock pins (or asks for) must be usable; another one is passed
                // over with why, so that one odd upload on a shared remote fails nobody else.
                Err(why) if wanted.is_some_and(|w| w.contains(&version)) => return Err(self.invalid(why)),
                Err(why) => index.foreign.push(super::index::Foreign {
                    hint: format!(
                        "a Conan method package has one package id: remove the others (`conan remove {}:PACKAGE_ID -r REMOTE`), or pin another version",
                        self.remote.reference(&version.to_string())
                    ),
                    what: why,
                    version,
                }),
            }
        }
        index.versions.reverse();
        if wanted.is_none() && !index.listed.is_empty() {
            index.truncated = Some(format!(
                "`{}` has {} older versions that were not resolved (the newest {MAX_RESOLVED} were)",
                self.shown(),
                index.listed.len()
            ));
        }
        Ok(index)
    }

    fn refuse(&self, action: Action) -> PublishError {
        self.not_here(action)
    }
}

impl ConanRegistry {
    /// What Conan's own client does (`conan upload`, `conan remove`), in a Conan remote's words.
    fn not_here(&self, action: Action) -> PublishError {
        let location = self.shown();
        let (message, hint) = match action {
            Action::Pack => (
                format!("`a2c pack` does not upload to the Conan remote `{location}`"),
                "write the recipe with `a2c pack DIR --version V --format conan --registry OUT`, then `conan create OUT --version V` and `conan upload esys-a2c/V -r REMOTE`",
            ),
            Action::Yank => (
                format!("`a2c yank` does not edit the Conan remote `{location}`"),
                "remove the version on the remote (`conan remove esys-a2c/V -r REMOTE`): a2c reports a locked version the remote no longer has",
            ),
            Action::Sign => (
                format!("a Conan remote (`{location}`) carries no a2c signature"),
                "a lock pins each package revision by its sha256; signed indexes are a2c's own registries",
            ),
        };
        PublishError::Refused {
            message,
            hint: Some(hint.into()),
        }
    }
}

/// The recipe `a2c pack --registry conan+…` writes beside a method tree `tree`
/// (`PARENT/conanfile.py`, exporting `TREE/*`): `conan create PARENT --version V` packages the
/// tree as it is — no settings or options, one package id, the package folder the tree.
pub fn recipe(tree_name: &str, remote: &ConanLocation) -> String {
    let class: String = remote
        .name
        .split(['-', '_', '.', '+'])
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    format!(
        r#"# Written by `a2c pack` for {reference}: the package folder is the method tree `{tree_name}/`.
# Create and upload with the Conan client:
#   conan create . --version V{user_channel}
#   conan upload {name}/V{at} -r REMOTE
import os

from conan import ConanFile
from conan.tools.files import copy


class {class}Method(ConanFile):
    name = "{name}"
    description = "A2C method assets (installed by a2c from this remote)"
    package_type = "unknown"
    exports_sources = "{tree_name}/*"
    no_copy_source = True

    def package(self):
        copy(self, "*", os.path.join(self.source_folder, "{tree_name}"), self.package_folder)

    def package_id(self):
        # Files only: one package whatever the settings.
        self.info.clear()
"#,
        reference = remote.reference("V"),
        name = remote.name,
        user_channel = match (remote.user.as_str(), remote.channel.as_str()) {
            ("_", "_") => String::new(),
            (u, c) => format!(" --user {u} --channel {c}"),
        },
        at = match (remote.user.as_str(), remote.channel.as_str()) {
            ("_", "_") => String::new(),
            (u, c) => format!("@{u}/{c}"),
        },
    )
}

/// Writes [`recipe`] beside `tree` (checked to be a method tree of `version`): its path. An
/// existing `conanfile.py` there with other content is never overwritten.
fn write_recipe_file(
    tree: &std::path::Path,
    version: &MethodVersion,
    remote: &ConanLocation,
) -> Result<std::path::PathBuf, PublishError> {
    super::handle::tree_of_version(tree, version)?;
    let name = tree
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .ok_or_else(|| {
            std::io::Error::other(format!(
                "`{}`: a Conan recipe exports the tree by its directory name, which must be plain (letters, digits, `-_.`)",
                tree.display()
            ))
        })?;
    let parent = tree
        .parent()
        .ok_or_else(|| std::io::Error::other(format!("`{}` has no parent directory", tree.display())))?;
    let path = parent.join("conanfile.py");
    let text = recipe(name, remote);
    match crate::util::contain::read_config(&path)? {
        Some(existing) if existing == text => {}
        Some(_) => {
            return Err(std::io::Error::other(format!(
                "`{}` exists with other content: a2c never overwrites a recipe; move it away or edit it by hand",
                path.display()
            ))
            .into());
        }
        None => crate::util::contain::write_new(&path, text.as_bytes(), crate::util::fs::default_mode())?,
    }
    Ok(path)
}

impl super::handle::RecipeWriter for ConanLocation {
    /// The Conan recipe beside `tree`, and the `conan create` and `conan upload` that publish it.
    fn write_recipe(
        &self,
        tree: &std::path::Path,
        version: &MethodVersion,
    ) -> Result<super::handle::Recipe, PublishError> {
        let recipe = write_recipe_file(tree, version, self)?;
        let (user_channel, reference) = match (self.user.as_str(), self.channel.as_str()) {
            ("_", "_") => (String::new(), format!("{}/{version}", self.name)),
            (u, c) => (
                format!(" --user {u} --channel {c}"),
                format!("{}/{version}@{u}/{c}", self.name),
            ),
        };
        let folder = recipe.parent().unwrap_or(tree);
        Ok(super::handle::Recipe {
            create: format!("conan create {} --version {version}{user_channel}", folder.display()),
            upload: format!("conan upload {reference} -r REMOTE"),
            recipe,
            reference,
            tool: "Conan",
            placeholder: format!("REMOTE: the name `conan remote add` gave {}", self.base),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_name_the_remote_and_the_recipe() {
        let r =
            ConanLocation::parse(&Url::parse("conan+https://conan.example.org/artifactory/api/conan/team").unwrap())
                .unwrap();
        assert_eq!(r.base.as_str(), "https://conan.example.org/artifactory/api/conan/team/");
        assert_eq!(
            (r.name.as_str(), r.user.as_str(), r.channel.as_str()),
            ("esys-a2c", "_", "_")
        );
        assert_eq!(
            r.recipe_url("1.4.0", "latest").as_str(),
            "https://conan.example.org/artifactory/api/conan/team/v2/conans/esys-a2c/1.4.0/_/_/latest"
        );
        assert_eq!(
            r.search_url().as_str(),
            "https://conan.example.org/artifactory/api/conan/team/v2/conans/search?q=esys-a2c%2F*"
        );
        let r =
            ConanLocation::parse(&Url::parse("conan+http://127.0.0.1:9300#acme-rules@acme/stable").unwrap()).unwrap();
        assert_eq!(r.reference("2.0.0"), "acme-rules/2.0.0@acme/stable");
        assert_eq!(r.to_string(), "conan+http://127.0.0.1:9300/#acme-rules@acme/stable");
        assert!(ConanLocation::parse(&Url::parse("conan+http://h#Bad Name").unwrap()).is_err());
        assert!(ConanLocation::parse(&Url::parse("conan+http://h#n@useronly").unwrap()).is_err());
        assert!(ConanLocation::parse(&Url::parse("conan+ftp://h").unwrap()).is_err());
    }
}
