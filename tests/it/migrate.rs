//! `a2c migrate version`, with real git.

use crate::support::{TestContext, git, items, layout, strings_of};
use crate::support::{assert_contains, text_of};

/// A single legacy repository `r` at 1.0.0 with committed tool state, and a registry holding
/// 1.0.0 and 1.1.0 (legacy layout) and 2.0.0 (requires `.tools/esys/a2c`).
fn legacy_repo(t: &TestContext) -> String {
    let reg = t.legacy_registry();
    t.git_repo("r");
    t.write(
        "r/.a2c/adoption.yaml",
        "tool_version: v1.0.0\nmethod_ref: v1.0.0\ndelivery: submodule\n",
    );
    t.write("r/.a2c/config.yaml", "agents: [claude]\n");
    t.write("r/.a2c/cli-journal.yaml", "entries: []\n");
    t.write("r/.gitignore", ".tools_local/\n");
    t.write("r/README.md", "# r\n");
    git(&t.path("r"), &["add", "-A"]);
    git(&t.path("r"), &["commit", "-q", "-m", "initial"]);
    reg
}

fn commits(t: &TestContext, repo: &str) -> usize {
    git(&t.path(repo), &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap()
}

/// Every file of the repository except `.git/`, with contents, and the index bytes.
/// A repository's files (with contents) and its index bytes.
type RepoState = (Vec<(String, Vec<u8>)>, Vec<u8>);

fn state(t: &TestContext, repo: &str) -> RepoState {
    (t.files(repo), fs_err::read(t.path(repo).join(".git/index")).unwrap())
}

#[test]
fn legacy_to_canonical_in_one_commit() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    t.write("r/.a2c/local-notes.txt", "untracked, moved too\n");
    let before = commits(&t, "r");
    let run = t.run_env(
        "r",
        &["migrate", "version", "--to", "2.0.0", "--json"],
        &[("A2C_REGISTRY", &reg)],
    );
    // Untracked files in the tool state make it dirty: commit them first, as a user would.
    insta::assert_snapshot!(run.error_transcript());
    fs_err::remove_file(t.path("r/.a2c/local-notes.txt")).unwrap();
    let run = t.ok_env(
        "r",
        &["migrate", "version", "--to", "2.0.0", "--json"],
        &[("A2C_REGISTRY", &reg)],
    );
    let doc = run.json();
    crate::cli_surface::validate("migrate", &doc);
    assert_eq!(
        (doc["from"].as_str(), doc["to"].as_str()),
        (Some("1.0.0"), Some("2.0.0"))
    );
    assert_eq!(doc["adoption"]["before"], "1.0.0");
    assert_eq!(doc["adoption"]["after"], "2.0.0");
    assert_eq!(doc["installed"], t.shown(&layout::installed("r", "2.0.0")));
    let moves: Vec<String> = items(&doc["moves"])
        .iter()
        .map(|m| format!("{} -> {}", m["from"].as_str().unwrap(), m["to"].as_str().unwrap()))
        .collect();
    assert!(
        moves.contains(&".a2c/config.yaml -> .tools/esys/a2c/config.yaml".to_string()),
        "{moves:?}"
    );
    let sha = doc["commit"].as_str().unwrap();
    assert_eq!(commits(&t, "r"), before + 1, "one commit");
    assert_eq!(git(&t.path("r"), &["rev-parse", "HEAD"]).trim(), sha);
    let show = git(&t.path("r"), &["show", "--name-status", "--format=%s", "HEAD"]);
    assert!(show.starts_with("a2c: migrate write contract 1.0.0 -> 2.0.0"), "{show}");
    for f in ["config.yaml", "cli-journal.yaml"] {
        assert!(show.contains(&format!("R100\t.a2c/{f}\t.tools/esys/a2c/{f}")), "{show}");
    }
    assert!(
        show.contains(".tools/esys/a2c/adoption.yaml") && show.contains(".tools/esys/a2c/a2c.lock"),
        "{show}"
    );
    assert!(!t.path("r/.a2c").exists(), ".a2c/ is gone");
    assert_eq!(
        fs_err::read_to_string(t.path("r/.tools/esys/a2c/adoption.yaml")).unwrap(),
        "schema_version: 2\ntool_version: 2.0.0\nmethod_ref: v2.0.0\ndelivery: submodule\n"
    );
    assert_eq!(
        git(&t.path("r"), &["status", "--porcelain"]),
        "",
        "nothing left uncommitted"
    );
    assert_eq!(t.run("r", &["resolve", "--json"]).json()["rule"], "repo-store");
    // Again: a no-op that says so.
    let run = t.ok_env("r", &["migrate", "version", "--to", "2.0.0"], &[("A2C_REGISTRY", &reg)]);
    run.says("already at 2.0.0");
    assert_eq!(commits(&t, "r"), before + 1);
}

#[test]
fn same_layout_upgrade_in_a_superbuild_edits_only_the_adoption_record() {
    let t = TestContext::committed_superbuild(&[]);
    let run = t.ok("w/p/app", &["migrate", "version", "--to", "2.0.0", "--json"]);
    assert!(run.json()["moves"].as_array().unwrap().is_empty());
    let show = git(&t.path("w/p/app"), &["show", "--name-status", "--format=", "HEAD"]);
    assert_eq!(show.trim(), "M\t.tools/esys/a2c/adoption.yaml", "adoption edit only");
    // Other members keep their contracts; W's lock and store serve the new one; doctor is clean.
    let members = t.run("w", &["workspace", "members", "--json"]).json();
    let versions = crate::support::strings_of(&members, "members", "version");
    assert_eq!(versions, ["1.1.0", "1.0.0", "2.0.0", "2.0.0"]);
    let doctor = t.run("w", &["doctor", "--json"]);
    doctor.success();
    assert_eq!(doctor.json()["summary"]["fail"], 0);
    assert_eq!(doctor.json()["summary"]["warn"], 0);
}

#[test]
fn refusals_change_nothing() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    // Dirty tool state, named.
    t.write("r/.a2c/config.yaml", "agents: [claude, codex]\n");
    let run = t.run_env("r", &["migrate", "version", "--to", "2.0.0"], &[("A2C_REGISTRY", &reg)]);
    insta::assert_snapshot!(run.error_transcript());
    git(&t.path("r"), &["checkout", "--", ".a2c/config.yaml"]);
    let before = state(&t, "r");
    // Not exact semver: a usage error.
    let run = t.run_env("r", &["migrate", "version", "--to", "2.0"], &[("A2C_REGISTRY", &reg)]);
    assert_eq!(run.code, 2);
    // A downgrade needs the flag.
    let run = t.run_env("r", &["migrate", "version", "--to", "0.9.0"], &[("A2C_REGISTRY", &reg)]);
    insta::assert_snapshot!(run.error_transcript());
    // A version the registry does not have: nothing in r changes.
    let run = t.run_env("r", &["migrate", "version", "--to", "3.0.0"], &[("A2C_REGISTRY", &reg)]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(state(&t, "r"), before);
    // Not a git repository.
    t.write("plain/.a2c/adoption.yaml", "tool_version: v1.0.0\n");
    let run = t.run_env(
        "plain",
        &["migrate", "version", "--to", "2.0.0"],
        &[("A2C_REGISTRY", &reg)],
    );
    insta::assert_snapshot!(run.error_transcript());
    assert!(t.path("plain/.a2c/adoption.yaml").is_file() && !t.path("plain/.tools").exists());
}

#[test]
fn a_failure_before_the_commit_restores_everything() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    let before = state(&t, "r");
    let head = git(&t.path("r"), &["rev-parse", "HEAD"]);
    for point in ["migrate-after-install", "migrate-mid-moves", "migrate-before-commit"] {
        let run = t.run_env(
            "r",
            &["migrate", "version", "--to", "2.0.0"],
            &[
                ("A2C_REGISTRY", reg.as_str()),
                ("A2C_TEST_HOOK", &format!("fail:{point}")),
            ],
        );
        insta::assert_snapshot!(run.error_transcript());
        assert_eq!(
            state(&t, "r"),
            before,
            "{point}: every file and the index restored byte for byte"
        );
        assert_eq!(git(&t.path("r"), &["rev-parse", "HEAD"]), head);
        assert!(!t.path("r/.git/a2c-migrate.json").exists());
    }
}

/// The legacy repository `r` (see [`legacy_repo`]) migrated to 2.0.0 by a run killed in the
/// middle of its moves, which left its journal: the registry.
fn killed_mid_moves(t: &TestContext) -> String {
    let reg = legacy_repo(t);
    let run = t.run_env(
        "r",
        &["migrate", "version", "--to", "2.0.0"],
        &[
            ("A2C_REGISTRY", reg.as_str()),
            ("A2C_TEST_HOOK", "abort:migrate-mid-moves"),
        ],
    );
    assert_ne!(run.code, 0, "killed mid-way");
    assert!(t.path("r/.git/a2c-migrate.json").is_file(), "the journal stays");
    reg
}

#[test]
fn an_interrupted_migration_is_resumed_not_dual_written() {
    let t = TestContext::new();
    let reg = killed_mid_moves(&t);
    // Both roots exist.
    assert!(
        t.path("r/.a2c").is_dir() && t.path("r/.tools/esys/a2c").is_dir(),
        "half moved"
    );
    // Another target is refused while it is unfinished.
    let run = t.run_env("r", &["migrate", "version", "--to", "1.1.0"], &[("A2C_REGISTRY", &reg)]);
    insta::assert_snapshot!(run.error_transcript());
    // The same target resumes and completes it in one commit.
    let run = t.ok_env("r", &["migrate", "version", "--to", "2.0.0"], &[("A2C_REGISTRY", &reg)]);
    run.says("resuming");
    assert!(!t.path("r/.a2c").exists());
    assert_eq!(git(&t.path("r"), &["status", "--porcelain"]), "");
    assert_eq!(commits(&t, "r"), 2);
}

#[test]
fn both_roots_complete_the_move_and_differing_files_stop_it() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    // A half-done migration that was committed: config.yaml exists in both roots.
    t.write("r/.tools/esys/a2c/config.yaml", "agents: [claude]\n");
    git(&t.path("r"), &["add", "-A"]);
    git(&t.path("r"), &["commit", "-q", "-m", "half"]);
    t.write("r/.tools/esys/a2c/cli-journal.yaml", "entries: [different]\n");
    git(&t.path("r"), &["add", "-A"]);
    git(&t.path("r"), &["commit", "-q", "-m", "conflict"]);
    let before = state(&t, "r");
    let run = t.run_env("r", &["migrate", "version", "--to", "2.0.0"], &[("A2C_REGISTRY", &reg)]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(state(&t, "r"), before);
    // Made identical, the canonical copy wins and the move completes.
    t.write("r/.tools/esys/a2c/cli-journal.yaml", "entries: []\n");
    git(&t.path("r"), &["commit", "-q", "-am", "same"]);
    t.ok_env(
        "r",
        &["migrate", "version", "--to", "2.0.0", "--json"],
        &[("A2C_REGISTRY", &reg)],
    );
    assert!(!t.path("r/.a2c").exists());
    let show = git(&t.path("r"), &["show", "--name-status", "--format=", "HEAD"]);
    assert!(show.contains("D\t.a2c/config.yaml"), "{show}");
}

#[test]
fn dry_run_prints_the_plan_and_changes_nothing() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    let before = state(&t, "r");
    let run = t.ok_env(
        "r",
        &["migrate", "version", "--to", "2.0.0", "--dry-run"],
        &[("A2C_REGISTRY", &reg)],
    );
    for line in [
        "would lock and install 2.0.0",
        "would git mv .a2c/config.yaml -> .tools/esys/a2c/config.yaml",
        "would remove the empty `.a2c/`",
        "tool_version 2.0.0 (was 1.0.0)",
        "would commit: a2c: migrate write contract 1.0.0 -> 2.0.0",
    ] {
        assert!(run.stderr.contains(line), "missing {line:?}:\n{}", run.stderr);
    }
    let run = t.ok_env(
        "r",
        &["migrate", "version", "--to", "2.0.0", "--dry-run", "--json"],
        &[("A2C_REGISTRY", &reg)],
    );
    assert_eq!(run.json()["commit"], serde_json::Value::Null);
    assert_eq!(state(&t, "r"), before);
    assert!(!t.path("r/.tools_local").exists(), "no store");
    assert!(!t.path("r/.git/a2c-migrate.json").exists());
}

#[test]
fn no_commit_leaves_the_change_staged() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    // Unrelated staged work must not end up in a migration commit either way.
    t.write("r/README.md", "# r, edited\n");
    git(&t.path("r"), &["add", "README.md"]);
    t.ok_env(
        "r",
        &["migrate", "version", "--to", "2.0.0", "--no-commit"],
        &[("A2C_REGISTRY", &reg)],
    );
    assert_eq!(commits(&t, "r"), 1);
    let staged = git(&t.path("r"), &["diff", "--cached", "--name-status", "-M"]);
    assert_contains(&staged, "R100\t.a2c/config.yaml\t.tools/esys/a2c/config.yaml");
    let t2 = TestContext::new();
    let reg2 = legacy_repo(&t2);
    t2.write("r/README.md", "# r, edited\n");
    git(&t2.path("r"), &["add", "README.md"]);
    t2.run_env(
        "r",
        &["migrate", "version", "--to", "2.0.0"],
        &[("A2C_REGISTRY", &reg2)],
    )
    .success();
    let show = git(&t2.path("r"), &["show", "--name-status", "--format=", "HEAD"]);
    assert!(!show.contains("README.md"), "{show}");
    assert!(
        git(&t2.path("r"), &["diff", "--cached", "--name-only"]).contains("README.md"),
        "still staged"
    );
}

/// 2.0.0 vendored into `vendor` elsewhere (a repository `src` with network locks it), then,
/// here, no registry and no cache.
fn vendored_elsewhere(t: &TestContext) {
    t.git_repo("src");
    t.adopt("src", "2.0.0");
    let reg = t.path("reg").display().to_string();
    t.run_env("src", &["lock"], &[("A2C_REGISTRY", &reg)]).success();
    t.run("src", &["vendor", "../vendor"]).success();
    fs_err::remove_dir_all(t.path("reg")).unwrap();
    fs_err::remove_dir_all(t.cache_dir()).unwrap();
}

#[test]
fn offline_migration_from_a_vendored_directory() {
    let t = TestContext::new();
    legacy_repo(&t);
    vendored_elsewhere(&t);
    let run = t.ok(
        "r",
        &[
            "migrate",
            "version",
            "--to",
            "2.0.0",
            "--offline",
            "--from",
            "../vendor",
            "--json",
        ],
    );
    assert!(run.json()["commit"].is_string());
    assert!(t.has_installed("r", "2.0.0", "a2c-method.toml"));
    // Without the bundles, offline fails and r is unchanged.
    offline_dry_run_hint_applies_the_plan_as_printed();
    let t2 = TestContext::new();
    legacy_repo(&t2);
    let before = state(&t2, "r");
    let run = t2.run("r", &["migrate", "version", "--to", "2.0.0", "--offline"]);
    run.failure();
    assert_eq!(state(&t2, "r"), before);
}

/// A dry run with `--offline --from DIR` prints the command that applies its plan with the
/// same flags (it once left them out, and the printed command then failed): run as printed, it
/// applies the plan.
fn offline_dry_run_hint_applies_the_plan_as_printed() {
    let t = TestContext::new();
    legacy_repo(&t);
    vendored_elsewhere(&t);
    let dry = t.run(
        "r",
        &[
            "--offline",
            "migrate",
            "version",
            "--to",
            "2.0.0",
            "--from",
            "../vendor",
            "--dry-run",
        ],
    );
    dry.success();
    let printed = dry.stderr_after("apply exactly this plan with: ");
    assert!(
        printed.contains("--offline") && printed.contains("--from ../vendor"),
        "{printed}"
    );
    let applied = t.run_printed("r", printed);
    applied.success();
    applied.says("applied plan sha256:");
    assert!(t.has_installed("r", "2.0.0", "a2c-method.toml"));
    // docs/migration.md's review: each move shows as R100 in `git show --name-status`.
    let shown = git(&t.path("r"), &["show", "--name-status", "--format=", "HEAD"]);
    assert_contains(&shown, "R100\t.a2c/config.yaml\t.tools/esys/a2c/config.yaml");
}

/// `--approve` records the user's approval for an agent, so it runs only at a terminal: from a
/// pipe it is refused with the hint, and nothing is recorded.
#[test]
fn approving_a_plan_needs_a_terminal() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    let env = [("A2C_REGISTRY", reg.as_str())];
    let dry = t.run_env(
        "r",
        &["migrate", "version", "--to", "2.0.0", "--dry-run", "--json"],
        &env,
    );
    let plan = dry.json()["plan"].as_str().unwrap().to_string();
    let run = t.run_env("r", &["migrate", "version", "--to", "2.0.0", "--approve", &plan], &env);
    insta::assert_snapshot!(run.error_transcript());
    let approvals = walkdir::WalkDir::new(t.path("r/.git"))
        .into_iter()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".approved"))
        .count();
    assert_eq!(approvals, 0);
}

/// Inside a git hook or some IDE terminals, GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE point at
/// another repository: a2c's git calls must still act on R, and only on R.
#[test]
fn git_runs_on_the_repository_a2c_means_and_a_detached_head_is_named() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    let other = t.git_repo("other");
    t.write("other/file.txt", "other\n");
    git(&other, &["add", "-A"]);
    git(&other, &["commit", "-q", "-m", "other"]);
    let other_head = git(&other, &["rev-parse", "HEAD"]);
    let other_index = fs_err::read(other.join(".git/index")).unwrap();
    let before = commits(&t, "r");
    let dir = other.join(".git").display().to_string();
    let tree = other.display().to_string();
    let index = other.join(".git/index").display().to_string();
    let env = [
        ("A2C_REGISTRY", reg.as_str()),
        ("GIT_DIR", dir.as_str()),
        ("GIT_WORK_TREE", tree.as_str()),
        ("GIT_INDEX_FILE", index.as_str()),
    ];
    t.ok_env("r", &["migrate", "version", "--to", "2.0.0"], &env);
    assert_eq!(commits(&t, "r"), before + 1, "the commit is in r");
    assert_eq!(
        git(&other, &["rev-parse", "HEAD"]),
        other_head,
        "the other repository is untouched"
    );
    assert_eq!(fs_err::read(other.join(".git/index")).unwrap(), other_index);
    assert_eq!(git(&t.path("r"), &["status", "--porcelain"]), "");
    // A detached HEAD is named in the plan.
    git(&t.path("r"), &["checkout", "-q", "--detach"]);
    let run = t.ok_env(
        "r",
        &["migrate", "version", "--to", "2.0.0", "--allow-downgrade", "--dry-run"],
        &env,
    );
    insta::assert_snapshot!(run.transcript());
    fs_err::remove_dir_all(t.path("r/.tools_local")).unwrap();
    t.method_tree("trees/2.1.0", "2.1.0");
    t.pack("trees/2.1.0", "2.1.0", "reg", "tar.gz");
    let run = t.ok_env("r", &["migrate", "version", "--to", "2.1.0", "--dry-run"], &env);
    insta::assert_snapshot!(run.transcript());
}

/// The migration's transaction is a guard: a panic after V was locked and installed still puts
/// back R's tool state, the index and W's lock (the journal goes too).
#[test]
fn a_panic_mid_migration_rolls_back_like_an_error() {
    let t = TestContext::committed_superbuild(&["3.0.0"]);
    let lock = t.path(&layout::lock("w"));
    let lock_before = fs_err::read(&lock).unwrap();
    let before = state(&t, "w/p/app");
    for hook in ["panic:migrate-before-commit", "fail:migrate-before-commit"] {
        let run = t.run_env(
            "w/p/app",
            &["migrate", "version", "--to", "3.0.0"],
            &[("A2C_TEST_HOOK", hook)],
        );
        assert_ne!(run.code, 0, "{hook}");
        assert_eq!(
            state(&t, "w/p/app"),
            before,
            "{hook}: R's tool state and index are back"
        );
        assert_eq!(fs_err::read(&lock).unwrap(), lock_before, "{hook}: W's lock is back");
        assert!(!t.path("w/p/app/.git/a2c-migrate.json").exists(), "{hook}: no journal");
    }
}

/// A reviewed plan (its digest from a dry run) is applied only if nothing it
/// depends on changed; each stale case is refused, names what changed, and writes nothing.
#[test]
fn a_reviewed_plan_is_applied_only_if_nothing_changed() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    let env = [("A2C_REGISTRY", reg.as_str())];
    let review = |t: &TestContext| -> String {
        let doc = t
            .run_env(
                "r",
                &["migrate", "version", "--to", "2.0.0", "--dry-run", "--json"],
                &env,
            )
            .json();
        crate::cli_surface::validate("migrate", &doc);
        let plan = doc["plan"].as_str().unwrap().to_string();
        assert!(plan.starts_with("sha256:") && plan.len() == 71, "{plan}");
        plan
    };
    let refused = |t: &TestContext, plan: &str, why: &str| {
        let before = state(t, "r");
        let run = t.run_env("r", &["migrate", "version", "--to", "2.0.0", "--confirm", plan], &env);
        run.fails_with(&["the plan changed since it was reviewed"]);
        assert!(run.stderr.contains(why), "expected `{why}`:\n{}", run.stderr);
        // The new digest is never offered; only a new review gives it.
        let now = review(t);
        assert!(
            !run.stderr.contains(&now) && !run.stdout.contains(&now),
            "{}",
            run.stderr
        );
        assert_eq!(state(t, "r"), before, "nothing written");
    };
    let commit = |t: &TestContext, msg: &str| {
        git(&t.path("r"), &["add", "-A"]);
        git(&t.path("r"), &["commit", "-q", "-m", msg]);
    };
    // The same inputs give the same digest.
    let plan = review(&t);
    assert_eq!(review(&t), plan);
    // Only a whole digest is a confirmation; a prefix, a truncated copy or another
    // shape is a usage error (exit 2), never "the plan changed".
    for bad in [
        "abc",
        &plan[..20],
        &plan[7..],
        &plan.to_uppercase().replace("SHA256", "sha256"),
        &format!("{plan}0"),
    ] {
        let before = state(&t, "r");
        let run = t.run_env("r", &["migrate", "version", "--to", "2.0.0", "--confirm", bad], &env);
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        run.says("is not a plan digest");
        assert!(!run.stderr.contains("changed"), "{}", run.stderr);
        assert_eq!(state(&t, "r"), before, "nothing written");
    }
    // A file edited (and committed) since the review.
    t.write("r/.a2c/config.yaml", "agents: [claude, codex]\n");
    commit(&t, "edit");
    refused(&t, &plan, "file .a2c/config.yaml changed");
    // A mode-only change.
    let plan = review(&t);
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(t.path("r/.a2c/config.yaml"), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    commit(&t, "mode");
    refused(&t, &plan, "file .a2c/config.yaml: its mode changed (644 -> 755)");
    // A line-ending-only change.
    let plan = review(&t);
    t.write("r/.a2c/config.yaml", "agents: [claude, codex]\r\n");
    commit(&t, "crlf");
    refused(&t, &plan, "file .a2c/config.yaml changed");
    // HEAD moved (a commit elsewhere in the repository).
    let plan = review(&t);
    t.write("r/README.md", "# r, again\n");
    commit(&t, "readme");
    refused(&t, &plan, "HEAD moved from");
    // The target's lock entry changed: the registry now serves other bytes for 2.0.0.
    let plan = review(&t);
    t.write("trees/2.0.0/rules/extra.md", "more\n");
    t.pack("trees/2.0.0", "2.0.0", "reg2", "zip");
    let reg2 = t.path("reg2").display().to_string();
    let before = state(&t, "r");
    let run = t.run_env(
        "r",
        &["migrate", "version", "--to", "2.0.0", "--confirm", &plan],
        &[("A2C_REGISTRY", reg2.as_str())],
    );
    run.failure();
    run.says("lock entry 2.0.0 changed");
    assert_eq!(state(&t, "r"), before, "nothing written");
    // Something that is not a digest never names a file to read: a usage error, before any.
    let run = t.run_env(
        "r",
        &[
            "migrate",
            "version",
            "--to",
            "2.0.0",
            "--confirm",
            "sha256:../../../../etc/passwd",
        ],
        &env,
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(!run.stderr.contains("root:"), "{}", run.stderr);
    // Unchanged: applied, and the output names the digest it applied.
    let plan = review(&t);
    let run = t.ok_env("r", &["migrate", "version", "--to", "2.0.0", "--confirm", &plan], &env);
    run.says(&format!("applied plan {plan}"));
    assert!(t.path("r/.tools/esys/a2c/adoption.yaml").is_file());
}

/// An interrupted migration is visible — doctor warns with the resume command (and
/// says nothing of a missing record), resolve says a migration is pending — and a rerun
/// resumes it.
#[test]
fn an_interrupted_migration_is_reported_as_pending_and_resumed() {
    let t = TestContext::new();
    let reg = killed_mid_moves(&t);
    let doc = t.run("r", &["doctor", "--json"]).verdict_json();
    let codes = strings_of(&doc, "findings", "code");
    assert!(codes.iter().any(|c| c == "migration-pending"), "{codes:?}");
    assert!(!codes.iter().any(|c| c == "adoption-missing"), "{codes:?}");
    let f = crate::support::finding(&doc, "migration-pending");
    assert_eq!(f["severity"], "warn");
    assert!(
        f["message"].as_str().unwrap().contains("1.0.0 -> 2.0.0")
            && f["message"]
                .as_str()
                .unwrap()
                .contains("interrupted while moving the tool state files"),
        "which repository, which step: {f}"
    );
    assert_contains(text_of(&f, "hint"), "a2c migrate version --to 2.0.0");
    let run = t.run("r", &["resolve"]);
    insta::assert_snapshot!(run.transcript());
    let run = t.run("r", &["install"]);
    insta::assert_snapshot!(run.transcript());
    t.run_env(
        "r",
        &["migrate", "version", "--to", "2.0.0"],
        &[("A2C_REGISTRY", reg.as_str())],
    )
    .success();
    assert!(!t.path("r/.git/a2c-migrate.json").exists());
    let doc = t.run("r", &["doctor", "--json"]).verdict_json();
    assert!(!doc.to_string().contains("migration-pending"), "{doc}");
}

/// `a2c migrate version --to 2.1.0 --all EXTRA…` in the superbuild `w` (the standard one with
/// 2.1.0 published, `TestContext::committed_superbuild(&["2.1.0"])`: it plans all four members).
fn to_2_1_0_all(t: &TestContext, extra: &[&str]) -> crate::support::Run {
    let mut args = vec!["migrate", "version", "--to", "2.1.0", "--all"];
    args.extend_from_slice(extra);
    t.run("w", &args)
}

const MEMBERS: [&str; 4] = ["l/core", "l/util", "p/app", "p/web"];

fn member_states(t: &TestContext) -> Vec<RepoState> {
    MEMBERS.iter().map(|m| state(t, &format!("w/{m}"))).collect()
}

fn member_commits(t: &TestContext) -> Vec<usize> {
    MEMBERS.iter().map(|m| commits(t, &format!("w/{m}"))).collect()
}

/// `migrate version --to 2.1.0 --all` again, which succeeds, leaving each member committed once
/// since `counts`: its transcript.
#[track_caller]
fn rerun_all(t: &TestContext, counts: &[usize]) -> String {
    let run = to_2_1_0_all(t, &[]);
    run.success();
    each_member_committed_once(t, counts);
    run.transcript()
}

/// Every member has exactly one commit more than `counts` (the migration's own).
#[track_caller]
fn each_member_committed_once(t: &TestContext, counts: &[usize]) {
    assert_eq!(member_commits(t), counts.iter().map(|c| c + 1).collect::<Vec<_>>());
}

/// Nothing was written: the members' files and commits are `states` and `counts`, W's lock is
/// `lock` (`why`, when not).
#[track_caller]
fn nothing_written(t: &TestContext, states: &[RepoState], counts: &[usize], lock: &str, why: &str) {
    assert_eq!(member_states(t), states, "{why}");
    assert_eq!(member_commits(t), counts, "{why}");
    assert_eq!(
        fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap(),
        lock,
        "{why}"
    );
}

/// Each member's status, in order: `MEMBER STATUS, …`.
fn statuses(doc: &serde_json::Value) -> String {
    let pairs = crate::support::pairs_of(doc, "members", "member", "status");
    pairs
        .iter()
        .map(|(member, status)| format!("{member} {status}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One combined plan with one digest, reviewed then confirmed; one commit per
/// member; W's lock gains V once; a stale review is refused with zero writes; a rerun is a no-op.
#[test]
fn a_whole_superbuild_is_migrated_in_one_reviewed_run() {
    let t = TestContext::committed_superbuild(&["2.1.0"]);
    let lock_before = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    let (states, counts) = (member_states(&t), member_commits(&t));
    let review = |t: &TestContext| {
        let doc = to_2_1_0_all(t, &["--dry-run", "--json"]).json();
        crate::cli_surface::validate("migrate-all", &doc);
        doc
    };
    let doc = review(&t);
    assert_eq!(
        statuses(&doc),
        "l/core planned, l/util planned, p/app planned, p/web planned"
    );
    assert_eq!(doc["members"][0]["from"], "1.1.0");
    assert_eq!(doc["members"][3]["from"], "2.0.0");
    let plan = doc["plan"].as_str().unwrap().to_string();
    assert!(plan.starts_with("sha256:") && plan.len() == 71, "{plan}");
    // The human dry run shows the same plan, per member, and the command to confirm it.
    let run = to_2_1_0_all(&t, &["--dry-run"]);
    run.success();
    insta::assert_snapshot!(run.transcript());
    run.says("  would git mv .a2c/adoption.yaml -> .tools/esys/a2c/adoption.yaml");
    run.says(&format!("plan {plan}"));
    run.says(&format!("a2c migrate version --to 2.1.0 --all --confirm {plan}"));
    nothing_written(&t, &states, &counts, &lock_before, "a dry run writes nothing");
    // HEAD of one member moved since the review: refused, naming it, with zero writes anywhere.
    t.write("w/p/app/README.md", "# app, again\n");
    t.commit_all("w/p/app");
    let (states, counts) = (member_states(&t), member_commits(&t));
    let run = to_2_1_0_all(&t, &["--confirm", &plan]);
    run.failure();
    insta::assert_snapshot!(run.transcript());
    nothing_written(&t, &states, &counts, &lock_before, "a stale review writes nothing");
    // Reviewed again and confirmed: one commit per member, W's lock gains 2.1.0 and nothing else.
    let plan = review(&t)["plan"].as_str().unwrap().to_string();
    let run = to_2_1_0_all(&t, &["--confirm", &plan, "--json"]);
    run.success();
    let doc = run.json();
    crate::cli_surface::validate("migrate-all", &doc);
    assert_eq!(doc["plan"], plan.as_str());
    assert_eq!(
        statuses(&doc),
        "l/core committed, l/util committed, p/app committed, p/web committed"
    );
    each_member_committed_once(&t, &counts);
    for m in MEMBERS {
        let head = git(&t.path(&format!("w/{m}")), &["log", "-1", "--format=%s"]);
        assert!(
            head.starts_with("a2c: migrate write contract") && head.contains("-> 2.1.0"),
            "{m}: {head}"
        );
        assert_eq!(git(&t.path(&format!("w/{m}")), &["status", "--porcelain"]), "", "{m}");
    }
    let lock_after = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(lock_after.contains("2.1.0") && !lock_before.contains("2.1.0"));
    let members = t.run("w", &["workspace", "members", "--json"]).json();
    assert!(
        items(&members["members"]).iter().all(|m| m["version"] == "2.1.0"),
        "{members}"
    );
    let doctor = t.run("w", &["doctor", "--json"]).verdict_json();
    assert_eq!(doctor["summary"]["fail"], 0, "{doctor}");
    // Again: every member is skipped as already there, nothing is committed.
    insta::assert_snapshot!(rerun_all(&t, &counts));
}

/// A member whose contract is newer than V is skipped with a note, never downgraded without
/// --allow-downgrade; a member already at V is skipped too.
#[test]
fn all_skips_newer_contracts_unless_downgrade_is_allowed() {
    let t = TestContext::committed_superbuild(&["2.1.0"]);
    let doc = t
        .run(
            "w",
            &["migrate", "version", "--to", "1.1.0", "--all", "--dry-run", "--json"],
        )
        .json();
    crate::cli_surface::validate("migrate-all", &doc);
    assert_eq!(
        statuses(&doc),
        "l/core planned, l/util planned, p/app planned, p/web skipped"
    );
    // l/core is at 1.1.0 already, but 1.1.0 requires the canonical root: its root moves.
    assert_eq!(doc["members"][0]["from"], "1.1.0");
    assert_eq!(doc["members"][0]["move_reason"], "required");
    assert!(
        doc["members"][3]["reason"]
            .as_str()
            .unwrap()
            .contains("newer than 1.1.0 (never downgraded without --allow-downgrade)"),
        "{doc}"
    );
    let web = state(&t, "w/p/web");
    t.run("w", &["migrate", "version", "--to", "1.1.0", "--all"]).success();
    assert_eq!(state(&t, "w/p/web"), web, "never downgraded");
    let doc = t
        .run(
            "w",
            &[
                "migrate",
                "version",
                "--to",
                "1.1.0",
                "--all",
                "--allow-downgrade",
                "--dry-run",
                "--json",
            ],
        )
        .json();
    assert_eq!(doc["members"][3]["status"], "planned", "{doc}");
}

/// A member that fails stops the run: the ones before it stay committed, it is restored exactly,
/// the rest are untouched; the exit status and the summary say which is which; a rerun continues.
#[test]
fn all_stops_at_a_failing_member_and_a_rerun_continues() {
    let t = TestContext::committed_superbuild(&["2.1.0"]);
    // A real git failure in l/util: its pre-commit hook refuses.
    t.write(
        "w/l/util/.git/hooks/pre-commit",
        "#!/bin/sh\necho 'hook: no' >&2\nexit 1\n",
    );
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(
            t.path("w/l/util/.git/hooks/pre-commit"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    let (states, counts) = (member_states(&t), member_commits(&t));
    let run = to_2_1_0_all(&t, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    insta::assert_snapshot!(run.transcript());
    let now = member_commits(&t);
    assert_eq!(now, vec![counts[0] + 1, counts[1], counts[2], counts[3]]);
    assert_eq!(
        member_states(&t)[1..],
        states[1..],
        "l/util restored exactly; the rest untouched"
    );
    assert!(!t.path("w/l/util/.git/a2c-migrate.json").exists(), "no journal left");
    // The same under --json: one document that says which is which.
    let run = to_2_1_0_all(&t, &["--json"]);
    assert_eq!(run.code, 1);
    let doc = run.verdict_json();
    crate::cli_surface::validate("migrate-all", &doc);
    assert_eq!(
        statuses(&doc),
        "l/core skipped, l/util failed, p/app untouched, p/web untouched"
    );
    assert_eq!(doc["error"]["code"], "stopped");
    // Fixed, rerun: continues where it stopped.
    fs_err::remove_file(t.path("w/l/util/.git/hooks/pre-commit")).unwrap();
    insta::assert_snapshot!(rerun_all(&t, &counts));
}

/// SIGKILL between two members, then a rerun: the first stays committed, the rerun does the rest.
#[test]
fn all_killed_between_members_then_rerun_completes() {
    let t = TestContext::committed_superbuild(&["2.1.0"]);
    let counts = member_commits(&t);
    let mut child = t
        .cmd("w")
        .args(["migrate", "version", "--to", "2.1.0", "--all"])
        .env("A2C_TEST_HOOK", "pause:migrate-between-members")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    crate::install::wait_for(|| {
        commits(&t, "w/l/core") == counts[0] + 1 && !t.path("w/l/core/.git/a2c-migrate.json").exists()
    });
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(member_commits(&t), vec![counts[0] + 1, counts[1], counts[2], counts[3]]);
    for m in MEMBERS {
        assert!(
            !t.path(&format!("w/{m}/.git/a2c-migrate.json")).exists(),
            "{m}: no journal"
        );
    }
    let run = to_2_1_0_all(&t, &["--json"]);
    run.success();
    assert_eq!(
        statuses(&run.json()),
        "l/core skipped, l/util committed, p/app committed, p/web committed"
    );
    each_member_committed_once(&t, &counts);
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert_eq!(lock.matches("version = \"2.1.0\"").count(), 1, "{lock}");
}

/// A version no member pins after a migration leaves the superbuild's lock, so that
/// `install --locked` passes right after; one still pinned stays.
#[test]
fn a_migration_drops_what_no_member_pins_from_the_superbuild_lock() {
    let t = TestContext::committed_superbuild(&[]);
    // 1.0.0 is still pinned by l/util: it stays.
    let run = t.run("w/p/app", &["migrate", "version", "--to", "2.0.0", "--json"]);
    assert_eq!(run.json()["lock_dropped"], serde_json::json!([]));
    let run = t.ok("w/l/util", &["migrate", "version", "--to", "2.0.0", "--dry-run"]);
    run.says("would drop version 1.0.0 from the superbuild's lock");
    let run = t.ok("w/l/util", &["migrate", "version", "--to", "2.0.0"]);
    insta::assert_snapshot!(run.transcript());
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(!lock.contains("version = \"1.0.0\""), "{lock}");
    t.run("w", &["install", "--locked"]).success();
    t.run("w", &["lock", "--check"]).success();
}

/// In a legacy repository `install` writes `.a2c/a2c.lock`, untracked: a2c's own file never
/// blocks the migration, and moves with it into its commit.
#[test]
fn the_lock_a2c_wrote_moves_with_the_migration() {
    let t = TestContext::new();
    t.publish_legacy("reg", "1.0.0", "tar.gz");
    t.publish("reg", "2.0.0", "tar.gz");
    t.git_repo("r");
    t.write(
        "r/.a2c/adoption.yaml",
        "schema_version: 2\ntool_version: 1.0.0\ndelivery: package\n",
    );
    t.write("r/.gitignore", ".tools_local/\n");
    t.commit_all("r");
    t.run("r", &["install", "--registry", "../reg"]).success();
    assert!(t.path("r/.a2c/a2c.lock").is_file());
    t.ok_env(
        "r",
        &["migrate", "version", "--to", "2.0.0"],
        &[("A2C_REGISTRY", "../reg")],
    );
    assert!(!t.path("r/.a2c").exists());
    let tracked = git(&t.path("r"), &["ls-files", ".tools/esys/a2c"]);
    assert!(tracked.contains(".tools/esys/a2c/a2c.lock"), "{tracked}");
    assert_eq!(git(&t.path("r"), &["status", "--porcelain"]).trim(), "");
    t.run("r", &["install", "--locked"]).success();
}

/// The record moved and rewritten in one commit: `--follow` cannot pair it (documented), so the
/// commit message names the pathspec that shows its whole history — which does.
#[test]
fn the_records_history_is_named_by_the_migration_commit() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    t.run_env("r", &["migrate", "version", "--to", "2.0.0"], &[("A2C_REGISTRY", &reg)])
        .success();
    let message = git(&t.path("r"), &["log", "-1", "--format=%B"]);
    let pathspec = "git log -- .a2c/adoption.yaml .tools/esys/a2c/adoption.yaml";
    assert!(message.contains(pathspec), "{message}");
    let history = git(
        &t.path("r"),
        &[
            "log",
            "--format=%s",
            "--",
            ".a2c/adoption.yaml",
            ".tools/esys/a2c/adoption.yaml",
        ],
    );
    assert_eq!(
        history.lines().collect::<Vec<_>>(),
        ["a2c: migrate write contract 1.0.0 -> 2.0.0", "initial"]
    );
}

/// A rollback that itself fails keeps the journal (naming what failed), so that every command
/// and `doctor` say a migration is pending and the next run resumes it.
#[test]
fn a_failed_rollback_keeps_the_journal_and_says_so() {
    use std::os::unix::fs::PermissionsExt;
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    let hook = t.write(
        "r/.git/hooks/pre-commit",
        "#!/bin/sh\necho refused by policy >&2\nexit 1\n",
    );
    fs_err::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = t.run_env(
        "r",
        &["migrate", "version", "--to", "2.0.0"],
        &[
            ("A2C_REGISTRY", reg.as_str()),
            ("A2C_TEST_HOOK", "fail:migrate-restore"),
        ],
    );
    insta::assert_snapshot!(run.error_transcript());
    let journal = fs_err::read_to_string(t.path("r/.git/a2c-migrate.json")).unwrap();
    assert!(journal.contains("rolling back, which failed"), "{journal}");
    let doc = t.run("r", &["doctor", "--json"]).verdict_json();
    let f = crate::support::finding(&doc, "migration-pending");
    assert_contains(text_of(&f, "message"), "rolling back, which failed");
    // The policy lifted, the next run resumes and lands the migration.
    fs_err::remove_file(&hook).unwrap();
    t.run_env("r", &["migrate", "version", "--to", "2.0.0"], &[("A2C_REGISTRY", &reg)])
        .success();
    assert!(!t.path("r/.git/a2c-migrate.json").exists());
}

/// A superbuild whose marker names no registry, migrating to a version its lock
/// lacks: the hint names only what `migrate version` takes (it has no `--registry`), and
/// following it works.
#[test]
fn the_no_registry_hint_of_migrate_names_only_what_it_takes() {
    let t = TestContext::committed_superbuild(&["2.1.0"]);
    t.write(
        "w/.tools/esys/a2c/workspace.yaml",
        "schema_version: 1\nmembers: [\"p/*\", \"l/*\"]\n",
    );
    let run = t.run("w/p/app", &["migrate", "version", "--to", "2.1.0"]);
    insta::assert_snapshot!(run.error_transcript());
    // The hint, followed: the variable set, relative to where the user stands.
    let reg = t.path("reg").display().to_string();
    t.run_env(
        "w/p/app",
        &["migrate", "version", "--to", "2.1.0"],
        &[("A2C_REGISTRY", reg.as_str())],
    )
    .success();
}

/// A migration that changes only the delivery says so — in its output and in its
/// commit — instead of "move the tool state root", which did not move.
#[test]
fn a_delivery_only_migration_says_what_it_changed() {
    let t = TestContext::committed_superbuild(&["2.1.0"]);
    let run = t.ok(
        "w/p/app",
        &["migrate", "version", "--to", "1.0.0", "--delivery", "none"],
    );
    insta::assert_snapshot!(run.transcript());
    let message = git(&t.path("w/p/app"), &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("a2c: delivery package -> none (write contract 1.0.0 unchanged)"),
        "{message}"
    );
    assert!(!message.contains("move the tool state root"), "{message}");
    let record = fs_err::read_to_string(t.path("w/p/app/.tools/esys/a2c/adoption.yaml")).unwrap();
    assert!(record.contains("delivery: none"), "{record}");
}

/// A dry run looks at V's manifest in a local bundle only once that bundle's sha256 is the
/// locked one: a file there of other content (a bomb that inflates to 100 MiB) is never
/// extracted. Run with every file it writes capped at 64 MiB (`prlimit --fsize`): an
/// extraction of the bomb is killed by SIGXFSZ (it once wrote 880 MiB into `$TMPDIR`).
#[test]
fn a_dry_run_never_extracts_a_bundle_whose_digest_is_not_the_locked_one() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    let env = [("A2C_REGISTRY", reg.as_str())];
    let bundle = t.path("reg/bundles/a2c-2.0.0.zip");
    let bomb = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n    with z.open('a2c-method.toml', 'w') as f:\n        for _ in range(100):\n            f.write(bytes(1 << 20))\n",
        ])
        .arg(&bundle)
        .status()
        .unwrap();
    assert!(bomb.success());
    assert!(fs_err::metadata(&bundle).unwrap().len() < 1 << 20, "a small bomb");
    let tmp = t.path("tmp");
    fs_err::create_dir_all(&tmp).unwrap();
    let a2c = t.cmd("r");
    let mut cmd = std::process::Command::new("prlimit");
    cmd.args(["--fsize=67108864", "--"])
        .arg(a2c.get_program())
        .args(["migrate", "version", "--to", "2.0.0", "--dry-run"])
        .current_dir(t.path("r"));
    for (k, v) in a2c.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = cmd.envs(env).env("TMPDIR", &tmp).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some(),
        "killed by a signal (the bomb was extracted): {stderr}"
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("is not known until its bundle is fetched"), "{stderr}");
    assert_eq!(fs_err::read_dir(&tmp).unwrap().count(), 0, "nothing left in TMPDIR");
}

/// A target the registry lacks (a typo): the hint offers only versions a migration from the
/// contract may take — never an older one, which would be refused next as a downgrade — and
/// the one it offers works.
#[test]
fn a_typo_in_the_target_hints_only_versions_it_may_take() {
    let t = TestContext::new();
    let reg = legacy_repo(&t);
    let env = [("A2C_REGISTRY", reg.as_str())];
    t.write(
        "r/.a2c/adoption.yaml",
        "tool_version: v1.1.0\nmethod_ref: v1.1.0\ndelivery: submodule\n",
    );
    git(&t.path("r"), &["commit", "-qam", "1.1.0"]);
    let run = t.run_env("r", &["migrate", "version", "--to", "2.1.0", "--dry-run"], &env);
    insta::assert_snapshot!(run.error_transcript());
    let hint = run.stderr_after("hint: ");
    assert!(hint.starts_with("the registry has 2.0.0:"), "{hint}");
    t.run_env("r", &["migrate", "version", "--to", "2.0.0", "--dry-run"], &env)
        .success();
}

/// In a superbuild whose members are submodules (as docs/getting-started.md builds one), the
/// commit line `migrate version --all` prints takes the members' new commits (their gitlinks)
/// beside W's lock: a colleague's `git clone --recurse-submodules` then installs `--locked`, as
/// the CI job of docs/ci.md runs it (with the lock alone committed, the clone's members stay on
/// 1.0.0, which the lock no longer holds).
#[test]
fn the_printed_commit_takes_the_members_gitlinks_so_a_colleagues_clone_installs_locked() {
    let t = TestContext::new();
    t.publish("reg", "1.0.0", "tar.gz");
    t.publish("reg", "1.1.0", "tar.gz");
    let setup = r#"
mkdir w && cd w && git init -q
a2c init --registry ../reg
for repo in app lib; do
  git init -q "$repo"
  a2c -C "$repo" adopt --version 1.0.0
  git -C "$repo" add .tools
  git -C "$repo" commit -q -m "adopt A2C 1.0.0"
  git submodule add -q "$PWD/$repo" "$repo"
done
git commit -q -m "app and lib"
a2c lock && a2c install
git add .tools/esys/a2c && git commit -q -m "a2c: marker and lock"
"#;
    crate::support::succeeds(&mut t.bash(".", setup), "the superbuild of getting-started");
    let run = t.ok("w", &["migrate", "version", "--to", "1.1.0", "--all"]);
    let line = run
        .stderr_after("to commit: ")
        .replace("[TMP]", &t.root.display().to_string());
    insta::assert_snapshot!(crate::support::masked(
        &run.stderr
            .lines()
            .filter(|l| l.starts_with("to commit: "))
            .collect::<Vec<_>>()
            .join("\n")
    ));
    crate::support::succeeds(&mut t.bash(".", &line), "the printed commit line");
    let colleague = r#"
git -c protocol.file.allow=always clone -q --recurse-submodules w colleague
a2c -C colleague install --locked
a2c -C colleague/app resolve
"#;
    let out = crate::support::succeeds(&mut t.bash(".", colleague), "the colleague's clone and locked install");
    let resolved = String::from_utf8_lossy(&out.stdout);
    assert!(resolved.contains("1.1.0"), "{resolved}");
}

/// A dry run (and `--approve`) of a migration to a version the store already holds says where
/// its assets are, not "would lock and install 2.0.0 first", which the run would not do.
#[test]
fn a_dry_run_to_an_installed_version_says_it_is_installed() {
    let t = TestContext::new();
    t.publish("reg", "1.0.0", "tar.gz");
    t.publish("reg", "2.0.0", "tar.gz");
    t.canonical_repo("r", "1.0.0");
    t.write("r/.tools/esys/a2c/config.yaml", "registry: ../reg\n");
    t.commit_all("r");
    t.ok("r", &["lock"]);
    t.ok("r", &["install"]);
    let args = ["migrate", "version", "--to", "2.0.0", "--dry-run"];
    let before = t.ok("r", &args);
    before.says("would lock and install 2.0.0 first");
    t.ok("r", &["install", "--version", "2.0.0"]);
    let run = t.ok("r", &args);
    let said: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("2.0.0") && !l.contains("plan"))
        .collect();
    insta::assert_snapshot!(crate::support::masked(&said.join("\n")));
}
