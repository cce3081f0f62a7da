//! Delivery: a member whose record says `submodule` or `clone` has the tree it pins (docs/doctor.md, "Delivery").

use super::*;
use crate::util::paths::JoinRel as _;

/// Checks of the `copy`, `submodule` and `clone` deliveries (docs/concepts.md, "Delivery modes"): the tree at
/// `R/tools/ai-rules` exists and says it is V; a submodule is registered and checked out, a
/// clone is a git repository; either is at `method_ref` when one is given. Returns `true`
/// when it reported a failure. In a superbuild whose store serves V, a missing tree is only
/// information: the superbuild installs the union.
pub(super) fn git_delivery(
    m: &Member,
    version: &MethodVersion,
    delivery: Delivery,
    ws: Option<&Path>,
    out: &mut Vec<Finding>,
) -> bool {
    let repo = Some(m.path.clone());
    let tree = m.path.join_rel(LEGACY_AI_RULES);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The findings of `git_delivery` for a member at `dir` whose `tools/ai-rules` holds
    /// `tree` (a manifest of that version), pinning `version` with `delivery`.
    fn codes(dir: &Path, tree: Option<&str>, delivery: Delivery, ws: Option<&Path>) -> (Vec<Code>, bool) {
        let _ = std::fs::remove_dir_all(dir.join_rel(LEGACY_AI_RULES));
        if let Some(v) = tree {
            let t = dir.join_rel(LEGACY_AI_RULES);
            std::fs::create_dir_all(&t).unwrap();
            std::fs::write(
                t.join(crate::method::MANIFEST_FILE),
                format!("name = \"esys/a2c\"\nversion = \"{v}\"\n"),
            )
            .unwrap();
        }
        let m = Member::read(dir.to_path_buf(), ".".into());
        let mut out = Vec::new();
        let failed = git_delivery(&m, &"1.0.0".parse().unwrap(), delivery, ws, &mut out);
        (out.into_iter().map(|f| f.code).collect(), failed)
    }

    /// Each finding of docs/doctor.md's "Delivery" section that needs no git: the tree
    /// missing (or served by the superbuild's store), another version in it, a submodule or a
    /// clone that is not one.
    #[test]
    fn delivery_findings_follow_the_tree_a_member_holds() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        assert_eq!(
            codes(dir, None, Delivery::Copy, None),
            (vec![Code::DeliveryTreeMissing], true)
        );
        assert_eq!(codes(dir, Some("1.0.0"), Delivery::Copy, None), (vec![], false));
        assert_eq!(
            codes(dir, Some("0.9.0"), Delivery::Copy, None),
            (vec![Code::ManifestVersionMismatch], true)
        );
        assert_eq!(
            codes(dir, Some("1.0.0"), Delivery::Submodule, None),
            (vec![Code::DeliveryNotSubmodule], true)
        );
        assert_eq!(
            codes(dir, Some("1.0.0"), Delivery::Clone, None),
            (vec![Code::DeliveryNotCheckedOut], true)
        );
        // In a superbuild whose store serves 1.0.0, a missing tree is information only.
        let ws = tempfile::tempdir().unwrap();
        let served = crate::store::Store::of(ws.path()).version_dir(&"1.0.0".parse().unwrap());
        assert_eq!(
            codes(dir, None, Delivery::Copy, Some(ws.path())),
            (vec![Code::DeliveryTreeMissing], true)
        );
        std::fs::create_dir_all(served).unwrap();
        assert_eq!(
            codes(dir, None, Delivery::Copy, Some(ws.path())),
            (vec![Code::DeliveryServedByWorkspace], false)
        );
    }
}
