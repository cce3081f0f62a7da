//! Resolution and drift: what each member resolves to, and why a candidate was passed over (docs/doctor.md, "Resolution", "Drift").

use super::*;
use crate::util::paths::JoinRel as _;

pub(super) fn resolution(m: &Member, version: &MethodVersion, ws: Option<&Path>, memo: &Memo, out: &mut Vec<Finding>) {
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
    // The member's projection for the marker's agent runtimes, against its receipt.
    if memo.2 {
        match crate::agents::drift(&m.path, &version.to_string()) {
            Ok(drift) if drift.is_empty() => {}
            Ok(drift) => out.push(finding(
                Code::AgentsDrift,
                repo.clone(),
                Some(version.clone()),
                format!("the agents' projection drifted: {}", drift.join("; ")),
                "run `a2c agents sync`",
            )),
            Err(e) => out.push(finding(
                Code::AgentsDrift,
                repo.clone(),
                Some(version.clone()),
                format!("the agents' projection cannot be checked: {e}"),
                "run `a2c agents sync`",
            )),
        }
    }
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
        let known = crate::util::parallel::locked(&memo.1).get(&resolved.root).cloned();
        known.unwrap_or_else(|| {
            let min = MethodManifest::read_tree(&resolved.root)
                .ok()
                .and_then(|m| m.needs_newer_a2c().cloned());
            crate::util::parallel::locked(&memo.1).insert(resolved.root.clone(), min.clone());
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
            format!(
                "{}, then run `a2c install`",
                crate::util::installed::upgrade_hint(&min.to_string())
            ),
        ));
    }
}

/// An unresolved version `install` cannot install because its bundle needs a newer a2c: the
/// cached bundle's manifest (cached once verified, whatever its `min_a2c`) says so, and the
/// finding becomes `a2c-too-old`, naming both versions, instead of pointing at an install that
/// would refuse.
///
/// Before any install (nothing cached), a bundle the lock names on this machine — a file
/// registry's, a relative source — is read for its manifest once its digest is the locked one:
/// no download, nothing extracted.
pub(super) fn too_old_for_unresolved(
    cache: Option<&crate::store::Cache>,
    lock: Option<&crate::lock::Lockfile>,
    lock_dir: Option<&Path>,
    out: &mut [Finding],
) {
    // Without a lock entry (an install refused such a version before writing the lock): the
    // versions the cache's verified bundles declare, read once, when any is unresolved.
    let mut cached: Option<BTreeMap<MethodVersion, MethodVersion>> = None;
    for f in out.iter_mut().filter(|f| f.code == Code::Unresolved) {
        let Some(version) = f.version.clone() else { continue };
        if lock.and_then(|l| l.get(&version)).is_some() {
            continue;
        }
        if let Some(min) = cached.get_or_insert_with(|| cached_needs(cache)).get(&version).cloned() {
            *f = too_old(f, &version, &min);
        }
    }
    let Some(lock) = lock else {
        return;
    };
    for f in out.iter_mut().filter(|f| f.code == Code::Unresolved) {
        let Some(version) = &f.version else { continue };
        let Some(entry) = lock.get(version) else { continue };
        let local = || match entry.location(lock_dir) {
            crate::lock::BundleLocation::File(path) if entry.is_bundle_at(&path) => Some(path),
            _ => None,
        };
        let Some(bundle) = cache.and_then(|c| c.get(&entry.sha256)).or_else(local) else {
            continue;
        };
        let Some(text) = crate::archive::manifest_text(&bundle, entry.format) else {
            continue;
        };
        let Ok(manifest) = crate::method::MethodManifest::parse(&text, &bundle) else {
            continue;
        };
        if let Some(min) = manifest.needs_newer_a2c() {
            *f = too_old(f, version, min);
        }
    }
}

/// The finding for `version`, which needs a2c `min`: never "run `a2c install`", which refuses it.
fn too_old(f: &Finding, version: &MethodVersion, min: &MethodVersion) -> Finding {
    finding(
        Code::A2cTooOld,
        f.repo.clone(),
        Some(version.clone()),
        format!(
            "method {version} needs a2c {min} or newer; this is a2c {}, so `a2c install` refuses it",
            crate::A2C_VERSION
        ),
        format!(
            "{}, then run `a2c install`",
            crate::util::installed::upgrade_hint(&min.to_string())
        ),
    )
}

/// Each version a cached bundle declares that needs a newer a2c, with the a2c it needs: the
/// cache holds only verified bundles (an install caches one before it reads its manifest).
fn cached_needs(cache: Option<&crate::store::Cache>) -> BTreeMap<MethodVersion, MethodVersion> {
    let mut out = BTreeMap::new();
    let Some(dir) = cache.map(crate::store::Cache::bundles) else {
        return out;
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let hex = name.to_string_lossy();
        if hex.len() != 64
            || !hex.bytes().all(|b| b.is_ascii_hexdigit())
            || !entry.file_type().is_ok_and(|t| t.is_file())
        {
            continue;
        }
        let path = entry.path();
        let text = [crate::archive::Format::TarGz, crate::archive::Format::Zip]
            .into_iter()
            .find_map(|format| crate::archive::manifest_text(&path, format));
        let Some(manifest) = text.and_then(|t| crate::method::MethodManifest::parse(&t, &path).ok()) else {
            continue;
        };
        if let Some(min) = manifest.needs_newer_a2c() {
            out.insert(manifest.version.clone(), min.clone());
        }
    }
    out
}

pub(super) fn drift_hint(repo: &Path, tree: &Path) -> String {
    if tree.starts_with(repo.join_rel(LEGACY_AI_RULES)) {
        "bring `tools/ai-rules` to the adopted version (check out the matching ref), or migrate the write contract to the version it holds".into()
    } else {
        format!("reinstall it: remove `{}` and run `a2c install`", tree.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drift in a member's own `tools/ai-rules` is fixed by checking out the matching ref; drift
    /// in a store version by reinstalling it, the hint naming the tree.
    #[test]
    fn the_drift_hint_fits_where_the_tree_is() {
        let repo = Path::new("/w/p/app");
        assert!(drift_hint(repo, &repo.join_rel(LEGACY_AI_RULES)).contains("check out the matching ref"));
        let store = Path::new("/w/.tools_local/esys/a2c/1.0.0");
        let hint = drift_hint(repo, store);
        assert!(
            hint.contains("remove `/w/.tools_local/esys/a2c/1.0.0`") && hint.contains("a2c install"),
            "{hint}"
        );
    }
}
