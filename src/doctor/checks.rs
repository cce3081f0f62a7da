//! The checks. Without `--deep` they read only small files (records, manifests, receipts, the
//! lock): no bundle is opened and nothing is hashed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Code, DoctorOptions, Finding, finding};
use crate::lock::Lockfile;
use crate::method::MethodManifest;
use crate::store::Receipt;
use crate::store::flock::StoreLock;
use crate::util::version::MethodVersion;
use crate::workspace::marker::{LocalPointer, POINTER_PATH};
use crate::workspace::resolve::{LEGACY_AI_RULES, Note, Rule, StoreMemo, resolve_with};
use crate::workspace::state_root::{CANONICAL_ROOT, LEGACY_ROOT, LOCAL_DIR};
use crate::workspace::{Context, Delivery, Layout, Member, WorkspaceError};

/// What one doctor run learns once and every member shares: each store version's check, and
/// the newest a2c each resolved root's manifest asks for.
#[derive(Default)]
struct Memo(
    StoreMemo,
    std::sync::Mutex<std::collections::HashMap<PathBuf, Option<MethodVersion>>>,
);

pub fn run(
    ctx: &Context,
    options: DoctorOptions,
    settings: &crate::store::Settings,
) -> Result<Vec<Finding>, WorkspaceError> {
    let mut out = Vec::new();
    let members = ctx.members()?;
    let ws_root = ctx.workspace.as_ref().map(|w| w.root.clone());
    // What the store must keep (every record) and what the lock must hold (the versions an
    // install serves: outside a superbuild, only a `package` delivery's).
    let mut pinned: BTreeMap<MethodVersion, Vec<PathBuf>> = BTreeMap::new();
    let mut locked: BTreeMap<MethodVersion, Vec<PathBuf>> = BTreeMap::new();
    // Each member's checks read only that member: they run in parallel, and their findings
    // are kept in member order.
    let owner = ctx.store_owner()?;
    let memo = Memo::default();
    let jobs = crate::util::parallel::metadata_jobs();
    // Members a workspace snapshot vouches for have one canonical root, a valid record, no
    // interrupted migration and the pointer install wrote: nothing of theirs to say there.
    let vouched = matches!(ctx.snapshot(), Some(Ok(_)));
    let per_member = crate::util::parallel::run_parallel(members, jobs, |m| {
        let mut out = Vec::new();
        if !vouched {
            tool_state(m, &mut out);
        }
        if let Ok(record) = &m.record {
            resolution(m, &record.tool_version, ws_root.as_deref(), &memo, &mut out);
        }
        if let Some(ws) = ws_root.as_ref().filter(|_| !vouched) {
            pointer(m, ws, &mut out);
        }
        if m.path != owner {
            match crate::util::git::tracking(&m.path, LOCAL_DIR, vouched) {
                crate::util::git::Tracking::No => {}
                crate::util::git::Tracking::Yes => out.push(finding(
                    Code::LocalTracked,
                    Some(m.path.clone()),
                    None,
                    format!(
                        "git tracks `{}` or files under it: that directory is machine-local",
                        m.path.join(LOCAL_DIR).display()
                    ),
                    format!(
                        "run `git rm -r --cached {LOCAL_DIR}` in `{}` and commit (a2c writes `{LOCAL_DIR}/.gitignore` so this does not recur)",
                        m.path.display()
                    ),
                )),
                crate::util::git::Tracking::Unknown(reason) => out.push(tracking_unknown(&m.path, &reason)),
            }
        }
        out
    });
    for (m, findings) in members.iter().zip(per_member) {
        out.extend(findings);
        for v in m.pinned_versions() {
            pinned.entry(v.clone()).or_default().push(m.path.clone());
        }
        if let Ok(record) = &m.record
            && (ws_root.is_some() || m.delivery() == Some(Delivery::Package))
        {
            locked
                .entry(record.tool_version.clone())
                .or_default()
                .push(m.path.clone());
        }
    }
    if let Some(ws) = &ws_root {
        workspace_ai_rules(ws, &mut out);
    }
    // A nested superbuild whose marker cannot be read: every command inside it fails closed,
    // so the outer doctor says so (the walk does not enter it).
    for nested in &ctx.nested() {
        if let Err(e) = crate::workspace::WorkspaceMarker::read(nested) {
            out.push(finding(
                Code::NestedMarkerInvalid,
                Some(nested.clone()),
                None,
                format!("the nested superbuild `{}` has a marker a2c cannot read: {e}", nested.display()),
                format!(
                    "fix its marker (`a2c doctor` in `{}` names the line), or remove it if that directory is no superbuild; until then every a2c command inside it fails",
                    nested.display()
                ),
            ));
        }
    }
    let lock = lock_findings(ctx, &locked, &mut out);
    match crate::store::guard(ctx.store_owner()?) {
        Ok(store) => {
            // The bundle cache the store installs from (unreadable: its checks are skipped).
            let cache = crate::store::Cache::for_store(&store, settings).ok();
            too_old_for_unresolved(cache.as_ref(), lock.as_ref(), &mut out);
            store_findings(&store, cache.as_ref(), &pinned, lock.as_ref(), options, &mut out)
        }
        Err(crate::store::StoreError::Tracked { path }) => out.push(finding(
            Code::StoreTracked,
            None,
            None,
            format!(
                "`{}` is tracked by git: a2c's store is machine-local, and a committed one could pass off any files as installed versions; a2c refuses to use it",
                path.display()
            ),
            "run `git rm -r --cached .tools_local` in that repository, commit, then `a2c install`",
        )),
        Err(crate::store::StoreError::TrackingUnknown { path, reason }) => {
            out.push(tracking_unknown(path.parent().unwrap_or(&path), &reason))
        }
        Err(crate::store::StoreError::Io(e)) if crate::util::contain::refusal(&e).is_some() => out.push(finding(
            Code::UnsafeLink,
            None,
            None,
            e.to_string(),
            "replace the link with a real directory (or delete it), then run `a2c install`",
        )),
        Err(crate::store::StoreError::Io(e)) => return Err(e.into()),
        Err(e) => return Err(std::io::Error::other(e.to_string()).into()),
    }
    Ok(out)
}

fn tool_state(m: &Member, out: &mut Vec<Finding>) {
    let repo = Some(m.path.clone());
    // An interrupted migration explains a missing or doubled record: say that, and only that.
    if let Some(j) = &m.pending {
        out.push(finding(
            Code::MigrationPending,
            repo,
            Some(j.to.clone()),
            format!(
                "a migration {} -> {} of `{}` was interrupted {} (its journal is in .git/)",
                j.from,
                j.to,
                m.path.display(),
                match &j.step {
                    Some(step) => format!("while {step}"),
                    None => "before its first step".into(),
                }
            ),
            format!(
                "rerun `a2c migrate version --to {}` in that repository to resume it; do not delete the journal",
                j.to
            ),
        ));
        return;
    }
    if let Some(why) = &m.refused {
        out.push(finding(
            Code::UnsafeLink,
            repo,
            None,
            why.clone(),
            "replace the link with a real directory (or delete it); a2c never follows links in a repository",
        ));
        return;
    }
    let Some(state) = &m.state else {
        out.push(finding(
            Code::AdoptionMissing,
            repo,
            None,
            format!("`{}` has no tool state root", m.path.display()),
            "run `a2c adopt --version X.Y.Z`",
        ));
        return;
    };
    if state.both_present {
        let contract = m.version().cloned();
        let differing = crate::migrate::differing_files(&m.path).unwrap_or_default();
        let command = match (&contract, differing.is_empty()) {
            (Some(v), true) => format!("a2c migrate version --to {v}"),
            (Some(v), false) => format!(
                "a2c migrate version --to {v} --keep canonical` (or `--keep legacy`; files that differ: {}",
                differing.join(", ")
            ),
            (None, _) => "a2c migrate version --to X.Y.Z".into(),
        };
        let hint = format!(
            "finish it with `{command}`; it moves what is left of `{LEGACY_ROOT}/` into `{CANONICAL_ROOT}/` in one commit"
        );
        match (m.version(), &m.other_version) {
            (Some(c), Some(l)) if c != l => out.push(finding(
                Code::ToolStateRootsDisagree,
                repo.clone(),
                Some(c.clone()),
                format!(
                    "`{CANONICAL_ROOT}/` pins {c} but `{LEGACY_ROOT}/` pins {l}: a migration stopped half-way (the canonical record is the write contract)",
                ),
                hint,
            )),
            _ => out.push(finding(
                Code::ToolStateBothRoots,
                repo.clone(),
                None,
                format!("both `{CANONICAL_ROOT}/` and `{LEGACY_ROOT}/` hold tool state: a migration is unfinished"),
                hint,
            )),
        }
    } else if state.layout == Layout::Legacy {
        out.push(finding(
            Code::ToolStateLegacy,
            repo.clone(),
            m.version().cloned(),
            format!("the legacy tool state root `{LEGACY_ROOT}/` is in use"),
            "move to the canonical layout with `a2c migrate version --to X.Y.Z` (a version whose manifest requires it)",
        ));
    }
    if let Err(reason) = &m.record {
        let (code, hint) = if state.has_adoption() {
            (
                Code::AdoptionInvalid,
                "fix the adoption record; the reason names the line",
            )
        } else {
            (
                Code::AdoptionMissing,
                "run `a2c adopt --version X.Y.Z`, or restore the file from git",
            )
        };
        out.push(finding(code, repo, None, reason.to_string(), hint));
    }
}

fn resolution(m: &Member, version: &MethodVersion, ws: Option<&Path>, memo: &Memo, out: &mut Vec<Finding>) {
    let repo = Some(m.path.clone());
    let delivery = m.delivery().unwrap_or(Delivery::Package);
    let delivered = match delivery {
        Delivery::Copy | Delivery::Submodule | Delivery::Clone => git_delivery(m, version, delivery, ws, out),
        Delivery::None | Delivery::Package => false,
    };
    let resolved = match resolve_with(&m.path, ws, version, Some(&memo.0)) {
        Ok(r) => r,
        Err(WorkspaceError::NotResolved { .. }) if delivery == Delivery::None => {
            out.push(finding(
                Code::DeliveryNone,
                repo,
                Some(version.clone()),
                format!("delivery `none`: no method assets are delivered for {version}, so none resolve"),
                "nothing to do; choose another delivery with `a2c migrate version --delivery D` if agents need the rules",
            ));
            return;
        }
        // The delivery findings already say what is wrong.
        Err(WorkspaceError::NotResolved { .. }) if delivered => return,
        Err(WorkspaceError::NotResolved { notes, looked, .. }) => {
            let mut specific = false;
            for note in &notes {
                match note {
                    Note::Drift { path, found, wanted } => {
                        specific = true;
                        out.push(finding(
                            Code::ManifestVersionMismatch,
                            repo.clone(),
                            Some(version.clone()),
                            format!(
                                "`{}` is meant to hold {wanted} but its manifest declares {found}: drift, so it is not used",
                                path.display()
                            ),
                            drift_hint(&m.path, path),
                        ));
                    }
                    Note::Link(why) => {
                        specific = true;
                        out.push(finding(
                            Code::UnsafeLink,
                            repo.clone(),
                            Some(version.clone()),
                            why.clone(),
                            "replace the link with a real directory (or delete it); a2c never follows links in a repository",
                        ));
                    }
                    Note::Other(_) => {}
                }
            }
            if !specific {
                let mut message = format!(
                    "no method asset root for {version} (looked in {})",
                    looked
                        .iter()
                        .map(|p| format!("`{}`", p.display()))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                for note in &notes {
                    message.push_str("; ");
                    message.push_str(&note.to_string());
                }
                out.push(finding(
                    Code::Unresolved,
                    repo,
                    Some(version.clone()),
                    message,
                    "run `a2c install`",
                ));
            }
            return;
        }
        Err(e) => {
            out.push(finding(
                Code::Unresolved,
                repo,
                Some(version.clone()),
                e.to_string(),
                "run `a2c install`",
            ));
            return;
        }
    };
    if resolved.rule == Rule::LegacyAiRules && delivery == Delivery::Package {
        out.push(finding(
            Code::ResolvedLegacyAiRules,
            repo.clone(),
            Some(version.clone()),
            format!("method assets come from the legacy mount `{}`", resolved.root.display()),
            "install them with `a2c install` (delivery: package) to stop depending on the mount",
        ));
    }
    // A store version's manifest is read once per run, whatever the members pinning it.
    let needs_newer = {
        let known = memo
            .1
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&resolved.root)
            .cloned();
        known.unwrap_or_else(|| {
            let min = MethodManifest::read_tree(&resolved.root)
                .ok()
                .and_then(|m| m.needs_newer_a2c().cloned());
            memo.1
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(resolved.root.clone(), min.clone());
            min
        })
    };
    if let Some(min) = needs_newer {
        out.push(finding(
            Code::A2cTooOld,
            repo,
            Some(version.clone()),
            format!(
                "method {version} needs a2c {min} or newer; this is a2c {}",
                crate::A2C_VERSION
            ),
            "upgrade a2c (./install.sh from a newer checkout)",
        ));
    }
}

/// An unresolved version `install` cannot install because its bundle needs a newer a2c: the
/// cached bundle's manifest (cached once verified, whatever its `min_a2c`) says so, and the
/// finding becomes `a2c-too-old`, naming both versions, instead of pointing at an install that
/// would refuse.
fn too_old_for_unresolved(
    cache: Option<&crate::store::Cache>,
    lock: Option<&crate::lock::Lockfile>,
    out: &mut [Finding],
) {
    let (Some(lock), Some(cache)) = (lock, cache) else {
        return;
    };
    for f in out.iter_mut().filter(|f| f.code == Code::Unresolved) {
        let Some(version) = &f.version else { continue };
        let Some(entry) = lock.get(version) else { continue };
        let Some(bundle) = cache.get(&entry.sha256) else {
            continue;
        };
        let Some(text) = crate::archive::manifest_text(&bundle, entry.format) else {
            continue;
        };
        let Ok(manifest) = crate::method::MethodManifest::parse(&text, &bundle) else {
            continue;
        };
        if let Some(min) = manifest.needs_newer_a2c() {
            *f = finding(
                Code::A2cTooOld,
                f.repo.clone(),
                Some(version.clone()),
                format!(
                    "method {version} needs a2c {min} or newer; this is a2c {}, so `a2c install` refuses it",
                    crate::A2C_VERSION
                ),
                format!("upgrade a2c to {min} or newer (./install.sh from a newer checkout), then run `a2c install`"),
            );
        }
    }
}

fn drift_hint(repo: &Path, tree: &Path) -> String {
    if tree.starts_with(repo.join(LEGACY_AI_RULES)) {
        "bring `tools/ai-rules` to the adopted version (check out the matching ref), or migrate the write contract to the version it holds".into()
    } else {
        format!("reinstall it: remove `{}` and run `a2c install`", tree.display())
    }
}

/// Checks of the `copy`, `submodule` and `clone` deliveries (ADR-0024 §4): the tree at
/// `R/tools/ai-rules` exists and says it is V; a submodule is registered and checked out, a
/// clone is a git repository; either is at `method_ref` when one is given. Returns `true`
/// when it reported a failure. In a superbuild whose store serves V, a missing tree is only
/// information: the superbuild installs the union.
fn git_delivery(
    m: &Member,
    version: &MethodVersion,
    delivery: Delivery,
    ws: Option<&Path>,
    out: &mut Vec<Finding>,
) -> bool {
    let repo = Some(m.path.clone());
    let tree = m.path.join(LEGACY_AI_RULES);
    let v = Some(version.clone());
    let fail = |out: &mut Vec<Finding>, code: Code, message: String, hint: String| {
        out.push(finding(code, repo.clone(), v.clone(), message, hint));
        true
    };
    if let Err(e) = crate::util::contain::check(&m.path, LEGACY_AI_RULES) {
        return fail(
            out,
            Code::UnsafeLink,
            e.to_string(),
            "replace the link with a real directory (or delete it); a2c never follows links in a repository".into(),
        );
    }
    let record_ref = m.record.as_ref().ok().and_then(|r| r.method_ref.clone());
    if std::fs::symlink_metadata(&tree).is_err() {
        let served =
            ws.is_some_and(|w| crate::util::contain::is_real_dir(&crate::store::Store::of(w).version_dir(version)));
        if served {
            out.push(finding(
                Code::DeliveryServedByWorkspace,
                repo,
                v,
                format!(
                    "delivery `{delivery}` but `{}` is absent: the superbuild's store serves {version}",
                    tree.display()
                ),
                "nothing to do in this superbuild; outside it the repository needs its `tools/ai-rules`",
            ));
            return false;
        }
        let how = match delivery {
            Delivery::Submodule => "run `git submodule update --init tools/ai-rules`",
            Delivery::Clone => "clone the method repository into `tools/ai-rules`",
            _ => "restore `tools/ai-rules` from git",
        };
        // In a superbuild, W's store can serve the version: an install there is the shortest fix.
        let hint = match ws {
            Some(w) => format!(
                "run `a2c install` in the superbuild (`{}`): its store then serves {version}; or {how}",
                w.display()
            ),
            None => format!(
                "{how}; or move to packaged assets with `a2c migrate version --to {version} --delivery package`"
            ),
        };
        return fail(
            out,
            Code::DeliveryTreeMissing,
            format!("delivery `{delivery}` but `{}` does not exist", tree.display()),
            hint,
        );
    }
    let mut failed = false;
    match MethodManifest::read_tree(&tree) {
        Ok(manifest) if manifest.version != *version => {
            failed |= fail(
                out,
                Code::ManifestVersionMismatch,
                format!(
                    "`{}` holds method version {} but the write contract is {version}: drift",
                    tree.display(),
                    manifest.version
                ),
                drift_hint(&m.path, &tree),
            );
        }
        Ok(_) => {}
        Err(e) => {
            failed |= fail(
                out,
                Code::DeliveryTreeMissing,
                format!(
                    "delivery `{delivery}` but `{}` is not a method tree: {e}",
                    tree.display()
                ),
                "restore the method tree at `tools/ai-rules`".into(),
            );
        }
    }
    match delivery {
        Delivery::Submodule if !crate::util::git::is_submodule(&m.path, LEGACY_AI_RULES) => {
            failed |= fail(
                out,
                Code::DeliveryNotSubmodule,
                format!(
                    "delivery `submodule` but `{}` is not a registered submodule (no gitlink in the index, or no entry in `.gitmodules`)",
                    tree.display()
                ),
                "add it with `git submodule add URL tools/ai-rules`, or record the real delivery with `a2c migrate version --delivery copy`".into(),
            );
        }
        Delivery::Submodule | Delivery::Clone if !crate::util::git::is_own_work_tree(&tree) => {
            let what = if delivery == Delivery::Submodule {
                "checked out"
            } else {
                "a git repository"
            };
            failed |= fail(
                out,
                Code::DeliveryNotCheckedOut,
                format!("delivery `{delivery}` but `{}` is not {what}", tree.display()),
                match delivery {
                    Delivery::Submodule => "run `git submodule update --init tools/ai-rules`".into(),
                    _ => "clone the method repository into `tools/ai-rules`".into(),
                },
            );
        }
        Delivery::Submodule | Delivery::Clone => {
            if let Some(r) = &record_ref {
                let head = crate::util::git::commit_of(&tree, "HEAD");
                match crate::util::git::commit_of(&tree, r) {
                    None => {
                        failed |= fail(
                            out,
                            Code::DeliveryRefMismatch,
                            format!("`method_ref: {r}` names no commit in `{}`", tree.display()),
                            "fetch it (`git -C tools/ai-rules fetch`), or correct `method_ref` in the adoption record"
                                .to_string(),
                        );
                    }
                    Some(want) if Some(&want) != head.as_ref() => {
                        failed |= fail(
                            out,
                            Code::DeliveryRefMismatch,
                            format!(
                                "`{}` is at {} but `method_ref: {r}` is {}",
                                tree.display(),
                                head.as_deref().map_or("no commit", |h| &h[..h.len().min(12)]),
                                &want[..want.len().min(12)]
                            ),
                            format!("check it out: `git -C tools/ai-rules checkout {r}`"),
                        );
                    }
                    Some(_) => {}
                }
            }
        }
        _ => {}
    }
    failed
}

fn pointer(m: &Member, ws: &Path, out: &mut Vec<Finding>) {
    if m.path == ws {
        return;
    }
    let stale = match LocalPointer::read(&m.path) {
        Ok(None) => return,
        // W is canonical; a pointer naming it exactly (as `install` writes it) needs no
        // resolving of its own.
        Ok(Some(p)) if p.workspace_root == ws => None,
        Ok(Some(p)) => {
            let target = crate::util::paths::absolute(&p.workspace_root);
            (target != ws).then(|| {
                format!(
                    "it points at `{}`, not at this workspace `{}`",
                    target.display(),
                    ws.display()
                )
            })
        }
        Err(e) => Some(e.to_string()),
    };
    if let Some(why) = stale {
        out.push(finding(
            Code::PointerStale,
            Some(m.path.clone()),
            None,
            format!(
                "the local pointer `{}` is stale: {why}",
                m.path.join(POINTER_PATH).display()
            ),
            "run `a2c install` in the workspace to rewrite it (or delete the file)",
        ));
    }
}

fn workspace_ai_rules(ws: &Path, out: &mut Vec<Finding>) {
    let dir = ws.join(LEGACY_AI_RULES);
    if let Ok(m) = MethodManifest::read_tree(&dir) {
        out.push(finding(
            Code::WorkspaceAiRulesMethodTree,
            Some(ws.to_path_buf()),
            Some(m.version),
            format!(
                "`{}` holds an A2C method tree; it is never used as a method asset root (it is superbuild-workflow)",
                dir.display()
            ),
            "install method versions with `a2c install`; keep superbuild-workflow only in that directory",
        ));
    }
}

fn lock_findings(
    ctx: &Context,
    pinned: &BTreeMap<MethodVersion, Vec<PathBuf>>,
    out: &mut Vec<Finding>,
) -> Option<Lockfile> {
    let path = ctx.lock_path().ok()?;
    let lock = match Lockfile::read(&path) {
        Ok(lock) => lock.unwrap_or_default(),
        Err(e) => {
            out.push(finding(
                Code::LockInvalid,
                None,
                None,
                e.to_string(),
                "fix it, or delete it and run `a2c lock`",
            ));
            return None;
        }
    };
    for (version, repos) in pinned {
        if lock.get(version).is_none() {
            let names: Vec<String> = repos.iter().map(|r| r.display().to_string()).collect();
            out.push(finding(
                Code::LockMissingVersion,
                repos.first().cloned(),
                Some(version.clone()),
                format!(
                    "{version} is pinned by {} but not in `{}`",
                    names.join(", "),
                    path.display()
                ),
                "run `a2c lock` and commit the lock (`a2c install --locked` fails until then)",
            ));
        }
    }
    for entry in &lock.methods {
        if !pinned.contains_key(&entry.version) {
            out.push(finding(
                Code::LockUnusedEntry,
                None,
                Some(entry.version.clone()),
                format!("`{}` locks {} but no member pins it", path.display(), entry.version),
                "run `a2c lock` to drop it",
            ));
        }
    }
    Some(lock)
}

fn store_findings(
    store: &crate::store::Store,
    cache: Option<&crate::store::Cache>,
    pinned: &BTreeMap<MethodVersion, Vec<PathBuf>>,
    lock: Option<&Lockfile>,
    options: DoctorOptions,
    out: &mut Vec<Finding>,
) {
    let installed = store.installed_versions();
    for link in store.linked_versions() {
        out.push(finding(
            Code::UnsafeLink,
            None,
            None,
            format!(
                "`{}` is a symbolic link, not an installed version: a2c never serves or removes anything through it",
                link.display()
            ),
            format!("delete the link `{}` and run `a2c install`", link.display()),
        ));
    }
    let mut deep_targets = Vec::new();
    let mut placed = Vec::new();
    for (version, dir) in &installed {
        let receipt = Receipt::read(dir);
        match (&receipt, lock.and_then(|l| l.get(version))) {
            (None, _) => out.push(finding(
                Code::StoreReceiptMissing,
                None,
                Some(version.clone()),
                format!(
                    "`{}` has no install receipt: a2c did not install it, or it was altered",
                    dir.display()
                ),
                format!(
                    "run `a2c install --reinstall {version}` (it replaces `{}`)",
                    dir.display()
                ),
            )),
            (Some(r), Some(entry)) if r.sha256 != entry.sha256 => out.push(finding(
                Code::StoreReceiptLockMismatch,
                None,
                Some(version.clone()),
                format!(
                    "`{}` was installed from bundle {} but the lock pins {}",
                    dir.display(),
                    r.sha256,
                    entry.sha256
                ),
                format!(
                    "run `a2c install`: it replaces `{}` with the locked bundle",
                    dir.display()
                ),
            )),
            _ => {}
        }
        if !pinned.contains_key(version) {
            out.push(finding(
                Code::StoreOrphanVersion,
                None,
                Some(version.clone()),
                format!("`{}` is installed but no member pins {version}", dir.display()),
                "run `a2c gc` to remove it",
            ));
        }
        if let Some(r) = &receipt {
            placed.push((r.sha256, dir.clone()));
        }
        if options.deep
            && let Some(r) = receipt
        {
            deep_targets.push((
                version.clone(),
                dir.clone(),
                r,
                lock.and_then(|l| l.get(version)).and_then(|e| e.tree.clone()),
            ));
        }
    }
    out.extend(super::deep::check(&deep_targets, options.jobs));
    match options.deep {
        true => tree_cache(cache, out),
        false => tree_cache_times(cache, &placed, out),
    }
    let staging = store.staging();
    if let Ok(entries) = fs_err::read_dir(&staging) {
        let leftovers: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !leftovers.is_empty() {
            out.push(finding(
                Code::StoreStagingLeftover,
                None,
                None,
                format!(
                    "`{}` holds leftovers of an interrupted install: {}",
                    staging.display(),
                    leftovers.join(", ")
                ),
                "the next `a2c install` removes them; when no a2c is running you may also delete them",
            ));
        }
    }
    let lock_file = store.lock_file();
    if let Some(pid) = StoreLock::stale_holder(&lock_file)
        && !Path::new(&format!("/proc/{pid}")).exists()
    {
        out.push(finding(
            Code::StoreStaleLock,
            None,
            None,
            format!(
                "`{}` names process {pid}, which died while holding the store",
                lock_file.display()
            ),
            "nothing to undo: installs are atomic; the next `a2c install` cleans up (you may delete the file)",
        ));
    }
}

/// Without `--deep`: the cached trees this store's versions came from, each file's type, size,
/// mode and times against the record (no content read): an in-place edit through a hard link
/// moves the change time, which nothing puts back.
fn tree_cache_times(
    cache: Option<&crate::store::Cache>,
    placed: &[(crate::util::digest::Sha256, PathBuf)],
    out: &mut Vec<Finding>,
) {
    let Some(cache) = cache else {
        return;
    };
    let trees = crate::store::trees::TreeCache::new(&cache.dir);
    let mut seen = std::collections::BTreeSet::new();
    for (sha, version_dir) in placed.iter().filter(|(s, _)| seen.insert(*s)) {
        let root = trees.path(sha);
        // Only a tree that shares its files with this store can be edited through it (copies
        // and clones cannot); `doctor --deep` re-hashes every cached tree.
        if !crate::store::trees::TreeCache::has_tree(&root)
            || !crate::store::trees::TreeCache::shares_files_with(&root, version_dir)
        {
            continue;
        }
        if let Err(why) = crate::store::trees::TreeCache::check_times(&root) {
            out.push(tampered_tree(&root, &why));
        }
    }
}

fn tampered_tree(root: &Path, why: &str) -> Finding {
    finding(
        Code::CacheTreeModified,
        None,
        None,
        format!(
            "the cached tree `{}` no longer matches what was cached: {why}",
            root.display()
        ),
        format!(
            "remove `{}` (the next install that needs it extracts its bundle again); versions placed from it by hardlink share its files: check them with `a2c doctor --deep` in each superbuild",
            root.display()
        ),
    )
}

/// `--deep`: every tree of the shared tree cache re-hashed against its file list and record
/// (a file changed there would be placed into every store that links it).
fn tree_cache(cache: Option<&crate::store::Cache>, out: &mut Vec<Finding>) {
    let Some(cache) = cache else {
        return;
    };
    let trees = crate::store::trees::TreeCache::new(&cache.dir);
    for (_, root) in trees.list() {
        if !crate::store::trees::TreeCache::has_tree(&root) {
            continue; // a record only: its files are a store's, which --deep checks there
        }
        if let Err(why) = crate::store::trees::TreeCache::verify(&root) {
            out.push(tampered_tree(&root, &why));
        }
    }
}

/// git cannot say whether `.tools_local/` in `repo` is tracked: nothing there is trusted.
fn tracking_unknown(repo: &std::path::Path, reason: &str) -> super::Finding {
    finding(
        Code::TrackingUnknown,
        Some(repo.to_path_buf()),
        None,
        format!(
            "cannot tell whether git tracks `{}`: {reason}; a2c trusts no store or pointer there",
            repo.join(LOCAL_DIR).display()
        ),
        format!(
            "run `git status` in `{}` to see what is wrong with its index; `git read-tree HEAD` there rebuilds a damaged one",
            repo.display()
        ),
    )
}
