//! Every agent finds its repository's method where it already looks: a superbuild whose marker
//! names runtimes (`agents:`) gets, in each member, the skills of that member's write-contract
//! version in each runtime's folder — local, owned (a receipt), kept out of git, switched by
//! migrate, never over what the team owns. Judged by the Agent Skills reference validator.

use std::path::Path;

use crate::support::{TestContext, at_pinned_version, git, program, require_program};
use crate::support::{assert_contains, text_of};

/// The five runtimes, written out of order (the marker's set is read sorted).
const ALL: &str = "agents: [cursor, claude, agent-skills, codex, copilot]\n";

/// A method tree of `version` offering the skill `review` (its SKILL.md naming the version, a
/// script beside it), the rules `core` (for `src/**` and `docs/*.md`) and `style` (for every
/// path), the prompt `review`, and a `rules/README.md` that is not projected.
fn tree_with_skill(t: &TestContext, version: &str) {
    let rel = format!("trees/{version}");
    t.method_tree(&rel, version);
    t.write(
        &format!("{rel}/rules/core.md"),
        &format!(
            "---\ndescription: Core rules of method {version}\napplies_to:\n  - \"src/**\"\n  - docs/*.md\n---\n# Core rules of {version}\n"
        ),
    );
    t.write(&format!("{rel}/rules/style.md"), &format!("# Style of {version}\n"));
    t.write(&format!("{rel}/rules/README.md"), "What the rules are for.\n");
    t.write(
        &format!("{rel}/prompts/review.md"),
        &format!("---\ndescription: Review a change under {version}\n---\nReview under method {version}.\n"),
    );
    t.write(
        &format!("{rel}/skills/review/SKILL.md"),
        &format!(
            "---\nname: review\ndescription: Review a change as method {version} says\n---\n# Review ({version})\n"
        ),
    );
    t.write(
        &format!("{rel}/skills/review/scripts/check.sh"),
        &format!("echo {version}\n"),
    );
    t.pack(&rel, version, "reg", "tar.gz");
}

/// A superbuild `w` with `marker` (beside `members` and the registry) whose members `p/a`,
/// `p/b`, `p/c` pin 1.0.0, 1.1.0 and 2.0.0, committed, locked.
fn superbuild(t: &TestContext, marker: &str) {
    for v in ["1.0.0", "1.1.0", "2.0.0"] {
        tree_with_skill(t, v);
    }
    t.superbuild("w", &format!("members: [\"p/*\"]\nregistry: ../reg\n{marker}"));
    for (m, v) in [("a", "1.0.0"), ("b", "1.1.0"), ("c", "2.0.0")] {
        t.canonical_repo(&format!("w/p/{m}"), v);
        t.write(&format!("w/p/{m}/.gitignore"), ".tools_local/\n");
        t.commit_all(&format!("w/p/{m}"));
    }
    t.ok("w", &["lock"]);
}

/// Every path below `dir` (links not followed): a file with its first line, a link with where
/// it points, relative to `root` (the whole-tree golden view of a member's projection).
fn golden(dir: &Path, root: &Path) -> String {
    let mut lines = Vec::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(false).sort_by_file_name() {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(dir).unwrap().display().to_string();
        if rel.is_empty() {
            continue;
        }
        let ft = entry.file_type();
        if ft.is_symlink() {
            let target = std::fs::read_link(entry.path()).unwrap();
            let shown = target.strip_prefix(root).unwrap_or(&target).display().to_string();
            lines.push(format!("{rel} -> {shown}"));
        } else if ft.is_file() {
            let text = fs_err::read_to_string(entry.path()).unwrap();
            lines.push(format!("{rel}: {}", text.lines().collect::<Vec<_>>().join(" | ")));
        } else {
            lines.push(format!("{rel}/"));
        }
    }
    lines.join("\n")
}

fn projection(t: &TestContext, member: &str) -> String {
    let repo = t.path(member);
    [".agents", ".claude", ".cursor", ".github"]
        .iter()
        .filter(|f| repo.join(f).exists())
        .map(|f| format!("{f}:\n{}", golden(&repo.join(f), &t.root)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The whole flow: `install` projects each member's own version for the five runtimes (two
/// folders: the shared Agent Skills layout and Claude Code's), each projected skill passes the
/// reference validator, git sees nothing new, `agents list` says all is in step, a migration
/// switches the member's projection, drift is seen and repaired, and `clean` removes exactly
/// what the receipts list.
#[test]
fn each_member_gets_its_own_versions_skills_where_its_runtimes_look() {
    let t = TestContext::new();
    superbuild(&t, ALL);
    let run = t.ok("w", &["install", "--json"]);
    let doc = run.json();
    crate::cli_surface::validate("install", &doc);
    assert_eq!(
        doc["agents"]["runtimes"],
        serde_json::json!(["agent-skills", "claude", "codex", "copilot", "cursor"])
    );
    let golden_trees: Vec<String> = ["w/p/a", "w/p/b", "w/p/c"]
        .iter()
        .map(|m| format!("## {m}\n{}", projection(&t, m)))
        .collect();
    insta::assert_snapshot!(golden_trees.join("\n"));

    // The reference validator takes every projected skill.
    // What it refuses is its release's rule: the pinned one judges (another is skipped).
    let validator = program("agentskills");
    let present = std::process::Command::new(&validator).arg("--help").output().is_ok();
    if present && at_pinned_version("skills-ref") {
        for m in ["a", "b", "c"] {
            for folder in [".agents/skills", ".claude/skills"] {
                let dir = t.path(&format!("w/p/{m}/{folder}/a2c-review"));
                let out = std::process::Command::new(&validator)
                    .arg("validate")
                    .arg(&dir)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "agentskills validate {}: {}{}",
                    dir.display(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    } else if !present {
        require_program("agentskills (pip install -r .ci/requirements.txt: skills-ref; .ci/run does it)");
    }

    // The `skills` CLI (vercel-labs/skills), run offline in each member, lists the projected
    // skill as a project skill where the Agent Skills layout puts it.
    let lister = program("skills");
    let present = std::process::Command::new(&lister).arg("--version").output().is_ok();
    if present && at_pinned_version("skills") {
        for m in ["a", "b", "c"] {
            let repo = t.path(&format!("w/p/{m}"));
            let out = std::process::Command::new(&lister)
                .args(["list", "--json"])
                .current_dir(&repo)
                .env("HOME", t.path("home"))
                .env("DISABLE_TELEMETRY", "1")
                .env("DO_NOT_TRACK", "1")
                .env("NO_COLOR", "1")
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let seen: Vec<String> = listed
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    let path = std::path::PathBuf::from(s["path"].as_str().unwrap());
                    let rel = path.strip_prefix(&repo).unwrap_or(&path).display().to_string();
                    format!("{} {rel} {}", s["name"].as_str().unwrap(), s["scope"].as_str().unwrap())
                })
                .collect();
            assert_eq!(seen, ["a2c-review .agents/skills/a2c-review project"], "p/{m}");
        }
    } else if !present {
        require_program("skills (npm ci in .ci/node; .ci/run does it)");
    }

    // Machine-local: the member's own git ignores it (its .git/info/exclude), nothing committed.
    for m in ["a", "b", "c"] {
        let status = git(
            &t.path(&format!("w/p/{m}")),
            &["status", "--porcelain", "--untracked-files=all"],
        );
        assert_eq!(status, "", "p/{m}");
    }
    let listed = t.ok("w", &["agents", "list"]);
    insta::assert_snapshot!(listed.transcript());

    // A migration switches the member's projection in the same run.
    let migrated = t.ok("w/p/a", &["migrate", "version", "--to", "2.0.0"]);
    let skill = fs_err::read_to_string(t.path("w/p/a/.claude/skills/a2c-review/SKILL.md")).unwrap();
    assert!(skill.contains("as method 2.0.0 says"), "{skill}\n{}", migrated.stderr);
    let script = std::fs::read_link(t.path("w/p/a/.agents/skills/a2c-review/scripts/check.sh")).unwrap();
    assert!(script.to_string_lossy().contains("/2.0.0/"), "{script:?}");
    for rule in [
        ".github/instructions/a2c-core.instructions.md",
        ".cursor/rules/a2c-core.mdc",
        ".claude/rules/a2c-core.md",
    ] {
        let text = fs_err::read_to_string(t.path(&format!("w/p/a/{rule}"))).unwrap();
        assert!(text.contains("# Core rules of 2.0.0"), "{rule}: {text}");
    }

    // Drift: an edited projection is seen (exit 1), and `sync` repairs it.
    t.write("w/p/b/.agents/skills/a2c-review/SKILL.md", "edited by hand\n");
    let drift = t.run("w", &["agents", "list"]);
    assert_eq!(drift.code, 1, "{}", drift.stderr);
    drift.says("run `a2c agents sync` to repair");
    assert!(
        drift
            .stdout
            .contains("drift: `.agents/skills/a2c-review/SKILL.md` was changed or removed"),
        "{}",
        drift.stdout
    );
    // doctor sees it too, with its code, in text and in --json.
    let doc = t.run("w", &["doctor", "--json"]).verdict_json();
    let f = crate::support::finding(&doc, "agents-drift");
    assert_eq!(f["severity"], "warn", "{f}");
    assert_contains(text_of(&f, "message"), "a2c-review/SKILL.md` was changed or removed");
    assert_eq!(f["hint"], "run `a2c agents sync`", "{f}");
    t.ok("w", &["agents", "sync"]);
    t.ok("w", &["agents", "list"]);
    let doc = t.run("w", &["doctor", "--json"]).verdict_json();
    assert!(!doc.to_string().contains("agents-drift"), "{doc}");

    // `clean` removes exactly what the receipts list, and the folders a2c made.
    t.ok("w", &["agents", "clean"]);
    for m in ["a", "b", "c"] {
        let repo = t.path(&format!("w/p/{m}"));
        for folder in [".agents", ".claude", ".cursor", ".github"] {
            assert!(!repo.join(folder).exists(), "p/{m}/{folder}");
        }
        assert!(!repo.join(".tools_local/esys/a2c/agents.json").exists(), "p/{m}");
    }
}

/// What the team owns is never touched: a skill of theirs beside a2c's stays, a path a2c would
/// write that it did not write is refused (named, with the way out) before anything of that
/// member is written, and a runtime folder that is a link is refused with nothing written
/// through it.
#[test]
fn nothing_the_team_owns_is_touched() {
    let t = TestContext::new();
    superbuild(&t, "agents: [claude]\n");
    // The team's own skill, in the folder a2c projects into: kept.
    t.write(
        "w/p/a/.claude/skills/ours/SKILL.md",
        "---\nname: ours\ndescription: the team's\n---\n",
    );
    // A file at the very path a2c would write in p/b: refused, named.
    t.write("w/p/b/.claude/skills/a2c-review/SKILL.md", "the team's, by chance\n");
    let run = t.run("w", &["install"]);
    insta::assert_snapshot!(run.error_transcript());
    assert_eq!(
        fs_err::read_to_string(t.path("w/p/b/.claude/skills/a2c-review/SKILL.md")).unwrap(),
        "the team's, by chance\n"
    );
    assert!(!t.path("w/p/b/.tools_local/esys/a2c/agents.json").exists());
    assert!(t.path("w/p/a/.claude/skills/ours/SKILL.md").exists());
    fs_err::remove_dir_all(t.path("w/p/b/.claude")).unwrap();
    // A runtime folder that is a link out of the member: refused, nothing written there.
    fs_err::create_dir_all(t.path("outside")).unwrap();
    std::os::unix::fs::symlink(t.path("outside"), t.path("w/p/c/.claude")).unwrap();
    let run = t.run("w", &["agents", "sync"]);
    run.failure();
    run.says("symbolic link");
    assert_eq!(crate::support::tree_files(&t.path("outside")), Vec::new());
}

/// A receipt decides what a2c overwrites and removes, so one a clone brings (committed, or
/// edited) may list only what a2c projects: one claiming the team's skill, or a path out of the
/// member through an `a2c-` folder, is refused, named, with nothing removed.
#[test]
fn a_planted_receipt_removes_nothing() {
    let t = TestContext::new();
    superbuild(&t, "agents: [claude]\n");
    t.ok("w", &["install"]);
    t.write("w/p/a/.claude/skills/ours/SKILL.md", "the team's\n");
    t.write("w/victim", "kept\n");
    let mut transcripts = Vec::new();
    for path in [
        ".claude/skills/ours/SKILL.md",
        ".claude/skills/a2c-x/../../../../victim",
    ] {
        let receipt = serde_json::json!({
            "schema": 1, "version": "1.0.0", "runtimes": ["claude"], "dirs": [],
            "entries": [{"path": path, "kind": "file", "sha256": "0".repeat(64)}],
        });
        t.write("w/p/a/.tools_local/esys/a2c/agents.json", &receipt.to_string());
        for args in [&["agents", "clean"][..], &["agents", "sync"]] {
            let run = t.run("w", args);
            transcripts.push(run.error_transcript());
        }
    }
    insta::assert_snapshot!(transcripts.join("\n"));
    assert_eq!(
        fs_err::read_to_string(t.path("w/p/a/.claude/skills/ours/SKILL.md")).unwrap(),
        "the team's\n"
    );
    assert_eq!(fs_err::read_to_string(t.path("w/victim")).unwrap(), "kept\n");
    // The hint, followed as printed: the receipt and a2c's entries removed, a sync projects
    // again.
    let last = transcripts.last().unwrap();
    let hint = last.lines().find(|l| l.starts_with("hint:")).unwrap();
    let command = hint
        .split("(`")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("no command in {hint}"));
    let command = command.replace("[TMP]", &t.root.display().to_string());
    let removed = std::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(t.path("w"))
        .status()
        .unwrap();
    assert!(removed.success(), "{command}");
    let run = t.ok("w", &["agents", "sync"]);
    assert!(
        t.path("w/p/a/.claude/skills/a2c-review/SKILL.md").exists(),
        "{}",
        run.stderr
    );
    assert_eq!(
        fs_err::read_to_string(t.path("w/p/a/.claude/skills/ours/SKILL.md")).unwrap(),
        "the team's\n"
    );
}

/// A version whose tree offers no skill, rule or prompt leaves the member as it was: no
/// runtime folder is made for nothing, and git sees nothing new.
#[test]
fn a_method_offering_nothing_makes_no_folder() {
    let t = TestContext::new();
    t.method_tree("trees/1.0.0", "1.0.0");
    fs_err::remove_dir_all(t.path("trees/1.0.0/rules")).unwrap();
    fs_err::remove_dir_all(t.path("trees/1.0.0/prompts")).unwrap();
    t.pack("trees/1.0.0", "1.0.0", "reg", "tar.gz");
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\nagents: [claude, codex]\n");
    t.canonical_repo("w/p/a", "1.0.0");
    t.write("w/p/a/.gitignore", ".tools_local/\n");
    t.commit_all("w/p/a");
    t.ok("w", &["lock"]);
    t.ok("w", &["install"]);
    assert!(!t.path("w/p/a/.claude").exists());
    assert!(!t.path("w/p/a/.agents").exists());
    assert_eq!(git(&t.path("w/p/a"), &["status", "--porcelain"]).trim(), "");
}

/// A hostile `agents:` value is refused with its line, and a method tree whose skill is
/// malformed (a name that is no skill name, a SKILL.md whose name is not its folder's) is
/// refused by `pack`, naming it, with nothing published.
#[test]
fn a_hostile_runtime_or_skill_is_refused() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nagents: [claude, ../../etc]\n");
    let run = t.run("w", &["agents", "list"]);
    insta::assert_snapshot!(run.error_transcript());
    let run = t.run("w", &["install"]);
    run.failure();
    run.says("`agents`: `../../etc` is not a runtime a2c projects for");

    t.method_tree("bad/1.0.0", "1.0.0");
    t.write(
        "bad/1.0.0/skills/Bad_Name/SKILL.md",
        "---\nname: Bad_Name\ndescription: d\n---\n",
    );
    let run = t.pack_run("bad/1.0.0", "1.0.0", "reg", &[]);
    let mut transcripts = vec![run.error_transcript()];
    fs_err::remove_dir_all(t.path("bad/1.0.0/skills/Bad_Name")).unwrap();
    t.write(
        "bad/1.0.0/skills/review/SKILL.md",
        "---\nname: other\ndescription: d\n---\n",
    );
    let run = t.pack_run("bad/1.0.0", "1.0.0", "reg", &[]);
    transcripts.push(run.error_transcript());
    // A rule whose globs leave the repository, and a prompt whose description is empty.
    fs_err::remove_dir_all(t.path("bad/1.0.0/skills")).unwrap();
    t.write("bad/1.0.0/rules/escape.md", "---\napplies_to: [\"../../**\"]\n---\nx\n");
    let run = t.pack_run("bad/1.0.0", "1.0.0", "reg", &[]);
    transcripts.push(run.error_transcript());
    fs_err::remove_file(t.path("bad/1.0.0/rules/escape.md")).unwrap();
    t.write(
        "bad/1.0.0/prompts/go.md",
        "---\nmodel: gpt-5\ndescription: \"\"\n---\nGo.\n",
    );
    let run = t.pack_run("bad/1.0.0", "1.0.0", "reg", &[]);
    transcripts.push(run.error_transcript());
    insta::assert_snapshot!(transcripts.join("\n"));
    assert!(!t.path("reg/index").exists(), "nothing is published");
    // A file whose name is no projectable name is packed, and said not to be projected.
    fs_err::remove_file(t.path("bad/1.0.0/prompts/go.md")).unwrap();
    t.write("bad/1.0.0/rules/README.md", "What the rules are for.\n");
    let run = t.pack_run("bad/1.0.0", "1.0.0", "reg", &[]);
    insta::assert_snapshot!(run.transcript());
}

/// `a2c agents mcp-config RUNTIME` prints the entry docs/agents.md gives for that runtime (the
/// command and the page say the same), and refuses a layout that is no MCP client.
#[test]
fn mcp_config_prints_what_the_docs_give_each_runtime() {
    let t = TestContext::new();
    let docs = include_str!("../../docs/agents.md");
    for runtime in ["claude", "codex", "copilot", "cursor"] {
        let run = t.ok(".", &["agents", "mcp-config", runtime]);
        let entry = run.stdout.trim_end();
        assert!(docs.contains(entry), "docs/agents.md lacks {runtime}'s entry:\n{entry}");
        assert!(run.stderr.contains("reads it from"), "{}", run.stderr);
    }
    let run = t.run(".", &["agents", "mcp-config", "agent-skills"]);
    insta::assert_snapshot!(run.error_transcript());
}

/// A user changes the set for their own machine in the root's local state
/// (`.tools_local/esys/a2c/agents.yaml`): projected here, the tracked marker untouched, `agents
/// list` showing both; a broken file is refused, named, and its hint (remove it) is followed.
#[test]
fn this_machine_adds_and_drops_runtimes_without_changing_the_tracked_set() {
    let t = TestContext::new();
    superbuild(&t, "agents: [claude]\n");
    let marker = fs_err::read_to_string(t.path("w/.tools/esys/a2c/workspace.yaml")).unwrap();
    t.write("w/.tools_local/esys/a2c/agents.yaml", "add: [cursor]\ndrop: [claude]\n");
    t.ok("w", &["install"]);
    let repo = t.path("w/p/a");
    assert!(repo.join(".cursor/rules/a2c-core.mdc").is_file());
    assert!(repo.join(".agents/skills/a2c-review/SKILL.md").is_file());
    assert!(!repo.join(".claude").exists());
    assert_eq!(
        fs_err::read_to_string(t.path("w/.tools/esys/a2c/workspace.yaml")).unwrap(),
        marker
    );
    let listed = t.ok("w", &["agents", "list"]);
    let doc = t.ok("w", &["agents", "list", "--json"]).json();
    assert_eq!(doc["tracked"], serde_json::json!(["claude"]));
    assert_eq!(doc["local"], serde_json::json!({"add": ["cursor"], "drop": ["claude"]}));
    let mut transcripts = vec![listed.transcript()];
    t.write("w/.tools_local/esys/a2c/agents.yaml", "add: [cursor]\ndrop: [cursor]\n");
    let run = t.run("w", &["install"]);
    transcripts.push(run.error_transcript());
    insta::assert_snapshot!(transcripts.join("\n"));
    assert!(repo.join(".cursor/rules/a2c-core.mdc").is_file(), "nothing changed");
    // The hint, followed: without the file, the marker's set alone.
    fs_err::remove_file(t.path("w/.tools_local/esys/a2c/agents.yaml")).unwrap();
    t.ok("w", &["install"]);
    assert!(repo.join(".claude/rules/a2c-core.md").is_file());
    assert!(!repo.join(".cursor").exists());
}

/// Outside a superbuild the repository names its runtimes in its own tool-state config
/// (`.tools/esys/a2c/config.yaml`, `agents:`): `install` projects its write contract's method
/// there, kept out of git; a hostile value is refused naming the file and line.
#[test]
fn a_single_repository_names_its_runtimes_in_its_config() {
    let t = TestContext::new();
    tree_with_skill(&t, "1.1.0");
    t.canonical_repo("r", "1.1.0");
    t.write("r/.gitignore", ".tools_local/\n");
    t.write("r/.tools/esys/a2c/config.yaml", "registry: ../reg\nagents: [copilot]\n");
    t.commit_all("r");
    t.ok("r", &["install"]);
    let listed = t.ok("r", &["agents", "list"]);
    let mut transcripts = vec![listed.transcript(), projection(&t, "r")];
    // The lock is committed as always; nothing projected goes with it.
    t.commit_all("r");
    let tracked = git(&t.path("r"), &["ls-files"]);
    assert!(
        !tracked.contains(".github") && !tracked.contains(".agents"),
        "{tracked}"
    );
    t.write(
        "r/.tools/esys/a2c/config.yaml",
        "registry: ../reg\nagents: [copilot, ../../x]\n",
    );
    let run = t.run("r", &["agents", "sync"]);
    transcripts.push(run.error_transcript());
    insta::assert_snapshot!(transcripts.join("\n"));
    assert!(
        t.path("r/.github/instructions/a2c-core.instructions.md").is_file(),
        "nothing removed"
    );
}

/// `mcp-config RUNTIME --write` adds a2c's server to the runtime's user-level file (made when
/// missing), keeping everything else in it byte for byte, once; a different `a2c` entry there
/// is refused with the file unchanged. The printed way to it is run as printed.
#[test]
fn mcp_config_writes_the_user_level_file_and_keeps_the_rest() {
    let t = TestContext::new();
    let xdg = t.path("xdg").display().to_string();
    let env = [("XDG_CONFIG_HOME", xdg.as_str())];
    let theirs = "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  },\n  \"theme\": \"dark\"\n}\n";
    t.write("home/.cursor/mcp.json", theirs);
    t.write("home/.codex/config.toml", "model = \"o3\"\n");
    let mut transcripts = Vec::new();
    // The plain command names the way to the user-level file: run as printed.
    let shown = t.run_env(".", &["agents", "mcp-config", "cursor"], &env);
    transcripts.push(shown.transcript());
    let line = shown.stderr_line("--write").to_string();
    let command: Vec<&str> = line.split('`').nth(1).unwrap().split(' ').skip(1).collect();
    transcripts.push(t.run_env(".", &command, &env).transcript());
    for runtime in ["claude", "codex", "copilot", "cursor"] {
        transcripts.push(
            t.run_env(".", &["agents", "mcp-config", runtime, "--write"], &env)
                .transcript(),
        );
    }
    let files = [
        "home/.claude.json",
        "home/.codex/config.toml",
        "xdg/Code/User/mcp.json",
        "home/.cursor/mcp.json",
    ];
    for file in files {
        transcripts.push(format!("## {file}\n{}", fs_err::read_to_string(t.path(file)).unwrap()));
    }
    // What was there is kept, and the entry is what the runtime reads.
    let cursor: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(t.path("home/.cursor/mcp.json")).unwrap()).unwrap();
    assert_eq!(cursor["mcpServers"]["other"], serde_json::json!({"command": "x"}));
    assert_eq!(cursor["theme"], "dark");
    // Someone else's `a2c` server: refused, the file as it was.
    let other = "{\"mcpServers\": {\"a2c\": {\"command\": \"/opt/old/a2c\"}}}\n";
    t.write("home/.claude.json", other);
    let run = t.run_env(".", &["agents", "mcp-config", "claude", "--write"], &env);
    transcripts.push(run.error_transcript());
    assert_eq!(fs_err::read_to_string(t.path("home/.claude.json")).unwrap(), other);
    insta::assert_snapshot!(transcripts.join("\n"));
    // The hint, followed: the old entry removed, its command run as printed.
    t.write("home/.claude.json", "{\"mcpServers\": {}}\n");
    let hint = run.stderr.lines().find(|l| l.starts_with("hint:")).unwrap();
    let command = hint.split('`').find(|c| c.starts_with("a2c agents")).unwrap();
    let command: Vec<&str> = command.split(' ').skip(1).collect();
    t.run_env(".", &command, &env).success();
    let claude: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(t.path("home/.claude.json")).unwrap()).unwrap();
    assert_eq!(claude["mcpServers"]["a2c"]["command"], "a2c");
}

/// MCP's skills extension (SEP-2640), through the official Rust SDK's client: a server started
/// in member `p/b` (bound to 1.1.0) lists 1.1.0's skill alone, each file with a digest the SDK
/// verifies against the bytes `resources/read` gives; `skills/get` answers for another served
/// repository's version and refuses one no repository is bound to (-32602); a client that did
/// not declare the extension is answered -32601 and keeps the resources.
#[test]
fn mcp_serves_the_skills_of_the_repositorys_own_version() {
    use rmcp::ServiceExt;
    use rmcp::model::{
        ClientCapabilities, ExtensionCapabilities, GetSkillRequestParams, Implementation, InitializeRequestParams,
        ReadResourceRequestParams, ResourceContents, SKILLS_EXTENSION_ID, SkillResources,
    };
    let t = TestContext::new();
    superbuild(&t, "");
    t.ok("w", &["install"]);
    let child = || t.mcp_transport("w/p/b");
    let report = crate::support::block_on(async {
        let mut extensions = ExtensionCapabilities::new();
        extensions.insert(SKILLS_EXTENSION_ID.to_string(), Default::default());
        let capabilities = ClientCapabilities::builder().enable_extensions_with(extensions).build();
        let info = InitializeRequestParams::new(capabilities, Implementation::new("a2c-test", "1"));
        let client = info.serve(child()).await.expect("initialize");
        let listed = client.list_skills(None).await.unwrap();
        let mut lines = Vec::new();
        for skill in &listed.skills {
            lines.push(format!(
                "{} name={} description={}",
                skill.uri, skill.frontmatter.name, skill.frontmatter.description
            ));
            let SkillResources::Files(files) = &skill.resources else {
                panic!("a listed skill has its files: {skill:?}")
            };
            for file in files {
                let read = client
                    .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
                    .await
                    .unwrap();
                let bytes = match &read.contents[0] {
                    ResourceContents::TextResourceContents { text, .. } => text.clone().into_bytes(),
                    other => panic!("text: {other:?}"),
                };
                file.verify(&bytes).expect("the digest the SDK checks");
                lines.push(format!("  {} {}", file.uri, file.digest));
            }
        }
        let other = client
            .get_skill(GetSkillRequestParams::new("skill://a2c/2.0.0/review/SKILL.md"))
            .await
            .unwrap();
        lines.push(format!("get 2.0.0: {}", other.skill.frontmatter.description));
        for uri in [
            "skill://a2c/9.9.9/review/SKILL.md",
            "skill://a2c/1.1.0/review/../../x/SKILL.md",
        ] {
            let refused = client.get_skill(GetSkillRequestParams::new(uri)).await.unwrap_err();
            lines.push(format!("get {uri}: {refused}"));
        }
        // A file outside the skill's own: not served through its URI.
        let outside = client
            .read_resource(ReadResourceRequestParams::new(
                "skill://a2c/1.1.0/review/../../rules/core.md",
            ))
            .await;
        lines.push(format!("read outside: {}", outside.is_err()));
        client.cancel().await.unwrap();
        // A client that declared nothing: -32601 for the skills methods, the resources stay.
        let plain = ().serve(child()).await.expect("initialize");
        let refused = plain.list_skills(None).await.unwrap_err();
        lines.push(format!("undeclared: {refused}"));
        assert!(!plain.list_all_resources().await.unwrap().is_empty());
        plain.cancel().await.unwrap();
        lines.join("\n")
    });
    insta::assert_snapshot!(report);
}

/// microsoft/apm as a differential oracle: the same method tree made into a local APM package
/// and installed offline by `apm install --target claude,copilot,cursor` lands each skill,
/// rule and prompt at the paths a2c projects it to (a2c's with their `a2c-` prefix), and the
/// rules carry the same globs (Claude Code's `paths`, Copilot's `applyTo`).
#[test]
fn apm_puts_the_same_method_where_a2c_does() {
    let apm = program("apm");
    if std::process::Command::new(&apm).arg("--version").output().is_err() {
        return require_program("apm (pip install -r .ci/requirements.txt: apm-cli; .ci/run does it)");
    }
    if !at_pinned_version("apm-cli") {
        return;
    }
    let t = TestContext::new();
    superbuild(&t, "agents: [claude, copilot, cursor]\n");
    t.ok("w", &["install"]);
    // The APM package: 1.0.0's tree in APM's own layout.
    let tree = t.path("trees/1.0.0");
    for (rule, apply) in [("core", "src/**,docs/*.md"), ("style", "**")] {
        let body = fs_err::read_to_string(tree.join(format!("rules/{rule}.md"))).unwrap();
        let body = body.rsplit("---\n").next().unwrap();
        t.write(
            &format!("pkg/.apm/instructions/{rule}.instructions.md"),
            &format!("---\napplyTo: \"{apply}\"\n---\n{body}"),
        );
    }
    t.write(
        "pkg/.apm/prompts/review.prompt.md",
        "---\ndescription: \"Review a change under 1.0.0\"\n---\nReview under method 1.0.0.\n",
    );
    for file in ["SKILL.md", "scripts/check.sh"] {
        let text = fs_err::read_to_string(tree.join("skills/review").join(file)).unwrap();
        t.write(&format!("pkg/.apm/skills/review/{file}"), &text);
    }
    t.write(
        "pkg/apm.yml",
        "name: a2c-oracle\nversion: 1.0.0\ndescription: the oracle\n",
    );
    t.git_repo("proj");
    let out = std::process::Command::new(&apm)
        .args(["install", "../pkg", "--target", "claude,copilot,cursor"])
        .current_dir(t.path("proj"))
        .env("HOME", t.path("home"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let files = |root: &Path, strip: &str| -> Vec<String> {
        // Files and links (a2c links a skill's other files into the installed tree).
        let mut found: Vec<String> = walkdir::WalkDir::new(root)
            .into_iter()
            .flatten()
            .filter(|e| !e.file_type().is_dir())
            .map(|e| e.path().strip_prefix(root).unwrap().display().to_string())
            .filter(|p| {
                [".agents/", ".claude/", ".cursor/", ".github/"]
                    .iter()
                    .any(|f| p.starts_with(f))
            })
            .map(|p| p.replace(strip, ""))
            .collect();
        found.sort();
        found
    };
    let ours = files(&t.path("w/p/a"), "a2c-");
    let apms = files(&t.path("proj"), "\u{0}");
    assert_eq!(ours, apms, "a2c's paths (prefix dropped) against apm's");
    // The globs each runtime reads, as apm writes them.
    for (a2c, apm) in [
        (".claude/rules/a2c-core.md", ".claude/rules/core.md"),
        (
            ".github/instructions/a2c-core.instructions.md",
            ".github/instructions/core.instructions.md",
        ),
    ] {
        let globs = |path: &Path| -> Vec<String> {
            let text = fs_err::read_to_string(path).unwrap();
            text.lines()
                .filter(|l| l.starts_with("  - ") || l.starts_with("applyTo:"))
                .map(|l| l.trim().to_string())
                .collect()
        };
        assert_eq!(
            globs(&t.path("w/p/a").join(a2c)),
            globs(&t.path("proj").join(apm)),
            "{a2c}"
        );
    }
}

/// Once no runtime is named any more (`agents:` emptied), `gc` removes the projections members
/// still hold — exactly what each receipt lists — before they point into versions it removes;
/// `--dry-run` says so and removes nothing.
#[test]
fn gc_removes_the_projections_no_runtime_wants_any_more() {
    let t = TestContext::new();
    superbuild(&t, "agents: [cursor]\n");
    t.ok("w", &["install"]);
    t.write("w/p/a/.cursor/rules/ours.mdc", "the team's\n");
    t.write(
        "w/.tools/esys/a2c/workspace.yaml",
        "schema_version: 1\nmembers: [\"p/*\"]\nregistry: ../reg\n",
    );
    let dry = t.ok("w", &["gc", "--dry-run"]);
    assert!(t.path("w/p/a/.cursor/rules/a2c-core.mdc").exists());
    let doc = t.ok("w", &["gc", "--dry-run", "--json"]).json();
    crate::cli_surface::validate("gc", &doc);
    let run = t.ok("w", &["gc"]);
    insta::assert_snapshot!(format!("{}\n{}", dry.transcript(), run.transcript()));
    for m in ["a", "b", "c"] {
        let repo = t.path(&format!("w/p/{m}"));
        assert!(!repo.join(".agents").exists(), "p/{m}");
        assert!(!repo.join(".tools_local/esys/a2c/agents.json").exists(), "p/{m}");
    }
    assert_eq!(
        fs_err::read_to_string(t.path("w/p/a/.cursor/rules/ours.mdc")).unwrap(),
        "the team's\n"
    );
    assert!(!t.path("w/p/b/.cursor").exists());
}

/// A superbuild root that adopted A2C is a member: it gets its own contract's projection; one
/// that did not gets none.
#[test]
fn the_root_gets_its_own_contracts_projection_only_when_it_adopted() {
    let t = TestContext::new();
    superbuild(&t, "agents: [claude]\n");
    t.ok("w", &["install"]);
    assert!(!t.path("w/.claude").exists(), "W adopted nothing: no projection");
    t.write(
        "w/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: 2.0.0\ndelivery: package\n",
    );
    t.ok("w", &["lock"]);
    t.ok("w", &["install"]);
    let rule = fs_err::read_to_string(t.path("w/.claude/rules/a2c-core.md")).unwrap();
    assert!(rule.contains("# Core rules of 2.0.0"), "{rule}");
    let member = fs_err::read_to_string(t.path("w/p/a/.claude/rules/a2c-core.md")).unwrap();
    assert!(member.contains("# Core rules of 1.0.0"), "{member}");
}
