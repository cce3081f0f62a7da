//! Tool state: the roots a repository keeps, the local pointer, `tools/ai-rules` at W (docs/doctor.md, "Tool state").

use super::*;
use crate::util::paths::JoinRel as _;

pub(super) fn tool_state(m: &Member, out: &mut Vec<Finding>) {
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
        let differing = crate::relocate::differing_files(&m.path).unwrap_or_default();
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

pub(super) fn pointer(m: &Member, ws: &Path, out: &mut Vec<Finding>) {
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
                m.path.join_rel(POINTER_PATH).display()
            ),
            "run `a2c install` in the workspace to rewrite it (or delete the file)",
        ));
    }
}

pub(super) fn workspace_ai_rules(ws: &Path, out: &mut Vec<Finding>) {
    let dir = ws.join_rel(LEGACY_AI_RULES);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A method tree at W's `tools/ai-rules` is reported, with the version it holds; anything
    /// else there (superbuild-workflow) is not.
    #[test]
    fn a_method_tree_at_ws_ai_rules_is_reported() {
        let ws = tempfile::tempdir().unwrap();
        let mut out = Vec::new();
        workspace_ai_rules(ws.path(), &mut out);
        assert!(out.is_empty());
        let dir = ws.path().join_rel(LEGACY_AI_RULES);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("README.md"), "superbuild-workflow\n").unwrap();
        workspace_ai_rules(ws.path(), &mut out);
        assert!(out.is_empty());
        std::fs::write(
            dir.join("a2c-method.toml"),
            "name = \"esys/a2c\"\nversion = \"1.2.0\"\n",
        )
        .unwrap();
        workspace_ai_rules(ws.path(), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].code, Code::WorkspaceAiRulesMethodTree);
        assert_eq!(
            out[0].version.as_ref().map(ToString::to_string).as_deref(),
            Some("1.2.0")
        );
    }

    /// A member read from `dir` after `files` (path, text) were written below it.
    fn member(dir: &Path, files: &[(&str, &str)]) -> Member {
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Member::read(dir.to_path_buf(), ".".into())
    }

    fn codes(m: &Member) -> Vec<Code> {
        let mut out = Vec::new();
        tool_state(m, &mut out);
        out.into_iter().map(|f| f.code).collect()
    }

    const CANONICAL: &str = ".tools/esys/a2c/adoption.yaml";
    const LEGACY: &str = ".a2c/adoption.yaml";

    /// Each finding of docs/doctor.md's "Tool state" section, from the files a member holds.
    #[test]
    fn tool_state_findings_follow_the_files_a_member_holds() {
        type Files<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(Files<'_>, &[Code])] = &[
            (&[], &[Code::AdoptionMissing]),
            (
                &[(CANONICAL, "schema_version: 2\ntool_version: 1.0.0\ndelivery: package\n")],
                &[],
            ),
            (
                &[(LEGACY, "tool_version: v1.0.0\ndelivery: submodule\n")],
                &[Code::ToolStateLegacy],
            ),
            (
                &[
                    (CANONICAL, "schema_version: 2\ntool_version: 1.1.0\ndelivery: package\n"),
                    (LEGACY, "tool_version: v1.0.0\ndelivery: submodule\n"),
                ],
                &[Code::ToolStateRootsDisagree],
            ),
            (
                &[
                    (CANONICAL, "schema_version: 2\ntool_version: 1.0.0\ndelivery: package\n"),
                    (LEGACY, "tool_version: v1.0.0\ndelivery: package\n"),
                ],
                &[Code::ToolStateBothRoots],
            ),
            (
                &[(CANONICAL, "schema_version: 2\ntool_version: not-a-version\n")],
                &[Code::AdoptionInvalid],
            ),
        ];
        for (files, want) in cases {
            let dir = tempfile::tempdir().unwrap();
            let m = member(dir.path(), files);
            assert_eq!(codes(&m), *want, "{files:?}");
        }
    }

    /// The local pointer: none, or one naming this workspace, is fine; one naming another
    /// workspace, or one that cannot be read, is stale.
    #[test]
    fn a_pointer_to_another_workspace_is_stale() {
        let ws = tempfile::tempdir().unwrap();
        let ws = ws.path().canonicalize().unwrap();
        let repo = ws.join("r");
        let pointer_codes = |text: Option<&str>| {
            if let Some(text) = text {
                let path = repo.join_rel(POINTER_PATH);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            let mut out = Vec::new();
            pointer(&Member::read(repo.clone(), "r".into()), &ws, &mut out);
            out.into_iter().map(|f| f.code).collect::<Vec<_>>()
        };
        std::fs::create_dir_all(&repo).unwrap();
        assert_eq!(pointer_codes(None), []);
        assert_eq!(pointer_codes(Some(&format!("workspace_root: {}\n", ws.display()))), []);
        assert_eq!(pointer_codes(Some("workspace_root: ..\n")), []);
        assert_eq!(
            pointer_codes(Some("workspace_root: /elsewhere\n")),
            [Code::PointerStale]
        );
        assert_eq!(pointer_codes(Some("color: blue\n")), [Code::PointerStale]);
        // W itself has no pointer to check.
        let mut out = Vec::new();
        pointer(&Member::read(ws.clone(), ".".into()), &ws, &mut out);
        assert!(out.is_empty());
    }
}
