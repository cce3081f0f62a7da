//! The checks. Without `--deep` they read only small files (records, manifests, receipts, the
//! lock): no bundle is opened and nothing is hashed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{DoctorOptions, Finding, finding};
use crate::lock::Lockfile;
use crate::method::{MANIFEST_FILE, MethodManifest};
use crate::store::Receipt;
use crate::store::flock::StoreLock;
use crate::util::version::MethodVersion;
use crate::workspace::marker::{LocalPointer, POINTER_PATH};
use crate::workspace::resolve::{LEGACY_AI_RULES, Rule, resolve};
use crate::workspace::state_root::{CANONICAL_ROOT, LEGACY_ROOT};
use crate::workspace::{AdoptionRecord, Context, Layout, Member, WorkspaceError};

pub fn run(ctx: &Context, options: DoctorOptions) -> Result<Vec<Finding>, WorkspaceError> {
    let mut out = Vec::new();
    let members = ctx.members()?;
    let ws_root = ctx.workspace.as_ref().map(|w| w.root.clone());
    let mut pinned: BTreeMap<MethodVersion, Vec<PathBuf>> = BTreeMap::new();
    for m in &members {
        tool_state(m, &mut out);
        if let Ok(record) = &m.record {
            pinned
                .entry(record.tool_version.clone())
                .or_default()
                .push(m.path.clone());
            resolution(m, &record.tool_version, ws_root.as_deref(), &mut out);
        }
        if let Some(ws) = &ws_root {
            pointer(m, ws, &mut out);
        }
    }
    if let Some(ws) = &ws_root {
        workspace_ai_rules(ws, &mut out);
    }
    let store = ctx.store_dir()?;
    let lock = lock_findings(ctx, &pinned, &mut out);
    match crate::store::guard(ctx.store_owner()?) {
        Ok(_) => store_findings(&store, &pinned, lock.as_ref(), options, &mut out),
        Err(crate::store::StoreError::Tracked { path }) => out.push(finding(
            "store-tracked",
            None,
            None,
            format!(
                "`{}` is tracked by git: a2c's store is machine-local, and a committed one could pass off any files as installed versions; a2c refuses to use it",
                path.display()
            ),
            "run `git rm -r --cached .tools_local` in that repository, commit, then `a2c install`",
        )),
        Err(crate::store::StoreError::Io(e)) if crate::util::contain::refusal(&e).is_some() => out.push(finding(
            "unsafe-link",
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
    if let Some(why) = &m.refused {
        out.push(finding(
            "unsafe-link",
            repo,
            None,
            why.clone(),
            "replace the link with a real directory (or delete it); a2c never follows links in a repository",
        ));
        return;
    }
    let Some(state) = &m.state else {
        out.push(finding(
            "adoption-missing",
            repo,
            None,
            format!("`{}` has no tool state root", m.path.display()),
            "run `a2c adopt --version X.Y.Z`",
        ));
        return;
    };
    if state.both_present {
        let legacy = AdoptionRecord::read(&m.path.join(LEGACY_ROOT).join("adoption.yaml")).ok();
        let canonical = m.record.as_ref().ok();
        match (canonical, legacy) {
            (Some(c), Some(l)) if c.tool_version != l.tool_version => out.push(finding(
                "tool-state-roots-disagree",
                repo.clone(),
                Some(c.tool_version.clone()),
                format!(
                    "`{CANONICAL_ROOT}/` pins {} but `{LEGACY_ROOT}/` pins {}: a migration stopped half-way",
                    c.tool_version, l.tool_version
                ),
                "finish it with `a2c migrate version --to X.Y.Z`; until then the canonical root is the write contract",
            )),
            _ => out.push(finding(
                "tool-state-both-roots",
                repo.clone(),
                None,
                format!("both `{CANONICAL_ROOT}/` and `{LEGACY_ROOT}/` exist: a migration is unfinished"),
                "finish it with `a2c migrate version --to X.Y.Z`",
            )),
        }
    } else if state.layout == Layout::Legacy {
        out.push(finding(
            "tool-state-legacy",
            repo.clone(),
            m.version().cloned(),
            format!("the legacy tool state root `{LEGACY_ROOT}/` is in use"),
            "move to the canonical layout with `a2c migrate version --to X.Y.Z` (a version whose manifest requires it)",
        ));
    }
    if let Err(reason) = &m.record {
        let (code, hint) = if state.has_adoption() {
            ("adoption-invalid", "fix the adoption record; the reason names the line")
        } else {
            (
                "adoption-missing",
                "run `a2c adopt --version X.Y.Z`, or restore the file from git",
            )
        };
        out.push(finding(code, repo, None, reason.clone(), hint));
    }
}

fn resolution(m: &Member, version: &MethodVersion, ws: Option<&Path>, out: &mut Vec<Finding>) {
    let repo = Some(m.path.clone());
    let resolved = match resolve(&m.path, ws, version) {
        Ok(r) => r,
        Err(e) => {
            out.push(finding(
                "unresolved",
                repo,
                Some(version.clone()),
                e.to_string(),
                "run `a2c install`",
            ));
            return;
        }
    };
    if resolved.rule == Rule::LegacyAiRules {
        out.push(finding(
            "resolved-legacy-ai-rules",
            repo.clone(),
            Some(version.clone()),
            format!("method assets come from the legacy mount `{}`", resolved.root.display()),
            "install them with `a2c install` (delivery: package) to stop depending on the mount",
        ));
    }
    match MethodManifest::read_tree(&resolved.root) {
        Ok(manifest) if manifest.version != *version => out.push(finding(
            "manifest-version-mismatch",
            repo,
            Some(version.clone()),
            format!(
                "`{}` resolves for {version} but its manifest declares {}",
                resolved.root.display(),
                manifest.version
            ),
            "reinstall it: remove the directory and run `a2c install`",
        )),
        Ok(manifest) => {
            let running = crate::A2C_VERSION.parse::<MethodVersion>().ok();
            if let (Some(min), Some(running)) = (&manifest.min_a2c, running)
                && running < *min
            {
                out.push(finding(
                    "a2c-too-old",
                    repo,
                    Some(version.clone()),
                    format!("method {version} needs a2c {min} or newer; this is a2c {running}"),
                    "upgrade a2c (./install.sh from a newer checkout)",
                ));
            }
        }
        Err(e) => out.push(finding(
            "manifest-version-mismatch",
            repo,
            Some(version.clone()),
            format!(
                "`{}` resolves for {version} but has no valid `{MANIFEST_FILE}`: {e}",
                resolved.root.display()
            ),
            "reinstall it: remove the directory and run `a2c install`",
        )),
    }
}

fn pointer(m: &Member, ws: &Path, out: &mut Vec<Finding>) {
    if m.path == ws {
        return;
    }
    let stale = match LocalPointer::read(&m.path) {
        Ok(None) => return,
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
            "pointer-stale",
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
            "workspace-ai-rules-method-tree",
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
    let path = crate::lock::lock_path(ctx).ok()?;
    let lock = match Lockfile::read(&path) {
        Ok(lock) => lock.unwrap_or_default(),
        Err(e) => {
            out.push(finding(
                "lock-invalid",
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
                "lock-missing-version",
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
                "lock-unused-entry",
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
    store: &Path,
    pinned: &BTreeMap<MethodVersion, Vec<PathBuf>>,
    lock: Option<&Lockfile>,
    options: DoctorOptions,
    out: &mut Vec<Finding>,
) {
    let installed = crate::store::gc::installed_versions(store);
    for link in crate::store::gc::linked_versions(store) {
        out.push(finding(
            "unsafe-link",
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
    for (version, dir) in &installed {
        let receipt = Receipt::read(dir);
        match (&receipt, lock.and_then(|l| l.get(version))) {
            (None, _) => out.push(finding(
                "store-receipt-missing",
                None,
                Some(version.clone()),
                format!(
                    "`{}` has no install receipt: a2c did not install it, or it was altered",
                    dir.display()
                ),
                format!("remove `{}` and run `a2c install`", dir.display()),
            )),
            (Some(r), Some(entry)) if r.sha256 != entry.sha256 => out.push(finding(
                "store-receipt-lock-mismatch",
                None,
                Some(version.clone()),
                format!(
                    "`{}` was installed from bundle {} but the lock pins {}",
                    dir.display(),
                    r.sha256,
                    entry.sha256
                ),
                format!(
                    "remove `{}` and run `a2c install` to install the locked bundle",
                    dir.display()
                ),
            )),
            _ => {}
        }
        if !pinned.contains_key(version) {
            out.push(finding(
                "store-orphan-version",
                None,
                Some(version.clone()),
                format!("`{}` is installed but no member pins {version}", dir.display()),
                "run `a2c gc` to remove it",
            ));
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
    let staging = store.join(crate::store::STAGING_DIR);
    if let Ok(entries) = fs_err::read_dir(&staging) {
        let leftovers: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !leftovers.is_empty() {
            out.push(finding(
                "store-staging-leftover",
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
    let lock_file = store.join(crate::store::LOCK_FILE);
    if let Some(pid) = StoreLock::stale_holder(&lock_file)
        && !Path::new(&format!("/proc/{pid}")).exists()
    {
        out.push(finding(
            "store-stale-lock",
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
