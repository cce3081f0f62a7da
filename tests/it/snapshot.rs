//! The workspace snapshot: a no-op `install` and `doctor` take the members from the
//! snapshot the last install kept, and only while every path it records is unchanged. Each test
//! changes the real file system, then checks that the snapshot is not trusted and that what the
//! run reports is what a full walk reads.

use crate::support::{TestContext, items, layout};
use std::time::Duration;

/// How long to wait for the paths a run just wrote to leave the racy margin (1 s).
pub const SETTLE: Duration = Duration::from_millis(1100);

const SNAPSHOT: &str = "w/.tools_local/esys/a2c/.workspace-snapshot";

/// A superbuild of three plain members (one canonical root each), locked and installed, and a
/// snapshot written and trusted.
fn plain_superbuild(t: &TestContext) {
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w/p/a", "1.0.0");
    t.canonical_repo("w/p/b", "1.0.0");
    t.canonical_repo("w/p/c", "2.0.0");
    t.publish("reg", "1.0.0", "tar.gz");
    t.publish("reg", "2.0.0", "zip");
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    // The pointers were just written: inside the racy margin, nothing is recorded.
    let racy = t.run("w", &["-v", "install"]);
    racy.success();
    assert!(
        racy.transcript().contains("changed too recently to be trusted (racy)"),
        "{}",
        racy.transcript()
    );
    assert!(!t.path(SNAPSHOT).exists());
    std::thread::sleep(SETTLE);
    let written = t.run("w", &["-v", "install"]);
    written.success();
    assert!(
        written.transcript().contains("workspace snapshot written"),
        "{}",
        written.transcript()
    );
    assert_trusted(t);
}

fn assert_trusted(t: &TestContext) {
    let run = t.ok("w", &["-v", "install"]);
    assert!(
        run.transcript()
            .contains("paths unchanged; the members were not walked"),
        "{}",
        run.transcript()
    );
}

/// The next install does not trust the snapshot, naming `changed` (a path relative to W).
fn assert_not_trusted(t: &TestContext, changed: &str) -> crate::support::Run {
    let run = t.run("w", &["-v", "install", "--json"]);
    let text = run.transcript();
    assert!(!text.contains("the members were not walked"), "{text}");
    assert!(text.contains(&format!("`{changed}` changed")), "{text}");
    run
}

fn members(doc: &serde_json::Value) -> Vec<(String, String)> {
    crate::support::pairs_of(doc, "members", "path", "version")
}

#[test]
fn a_trusted_snapshot_reports_what_the_walk_reads() {
    let t = TestContext::new();
    plain_superbuild(&t);
    const COMMANDS: [&[&str]; 3] = [
        &["install", "--json"],
        &["workspace", "members", "--json"],
        &["doctor", "--json"],
    ];
    // Each command once with the snapshot, once after removing it (an install rewrites it: it
    // is removed again before every walked run, so that each of those really walks).
    let outputs = |walk: bool| -> Vec<String> {
        COMMANDS
            .iter()
            .map(|args| {
                if walk {
                    let _ = fs_err::remove_file(t.path(SNAPSHOT));
                }
                let run = t.run("w", &[&["-v"][..], args].concat());
                let used = run.stderr.contains("the members were not walked");
                assert_eq!(used, !walk, "{args:?}: {}", run.stderr);
                run.stdout
            })
            .collect()
    };
    let from_snapshot = outputs(false);
    let walked = outputs(true);
    assert_eq!(from_snapshot, walked);
    assert_eq!(
        members(&serde_json::from_str(&walked[0]).unwrap()),
        [
            (t.shown("w/p/a"), "1.0.0".to_string()),
            (t.shown("w/p/b"), "1.0.0".to_string()),
            (t.shown("w/p/c"), "2.0.0".to_string()),
        ]
    );
}

#[test]
fn an_edit_that_keeps_the_size_and_the_modification_time_is_seen() {
    let t = TestContext::new();
    plain_superbuild(&t);
    let record = t.path("w/p/b/.tools/esys/a2c/adoption.yaml");
    let before = fs_err::metadata(&record).unwrap();
    let text = fs_err::read_to_string(&record).unwrap().replace("1.0.0", "2.0.0");
    fs_err::write(&record, &text).unwrap();
    // The same size, and the modification time put back: only the change time moved.
    let file = fs_err::OpenOptions::new().write(true).open(&record).unwrap();
    file.file().set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = fs_err::metadata(&record).unwrap();
    assert_eq!(
        (after.len(), after.modified().unwrap()),
        (before.len(), before.modified().unwrap())
    );
    let run = assert_not_trusted(&t, "p/b/.tools/esys/a2c/adoption.yaml");
    run.success();
    assert!(members(&run.json()).contains(&(t.shown("w/p/b"), "2.0.0".to_string())));
}

#[test]
fn a_member_added_or_removed_is_seen() {
    let t = TestContext::new();
    plain_superbuild(&t);
    t.canonical_repo("w/p/d", "2.0.0");
    let run = assert_not_trusted(&t, "p");
    run.success();
    assert_eq!(members(&run.json()).len(), 4);

    std::thread::sleep(SETTLE);
    t.run("w", &["install"]).success(); // writes the snapshot of four members
    assert_trusted(&t);
    fs_err::remove_dir_all(t.path("w/p/a")).unwrap();
    let run = assert_not_trusted(&t, "p");
    run.success();
    assert_eq!(members(&run.json()).len(), 3);
}

#[test]
fn a_git_init_in_a_listed_directory_is_seen() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w/p/a", "1.0.0");
    // A directory the globs select that is no repository yet, holding an adoption record.
    t.write(
        "w/p/later/.tools/esys/a2c/adoption.yaml",
        "schema_version: 2\ntool_version: 1.0.0\ndelivery: package\n",
    );
    t.publish("reg", "1.0.0", "tar.gz");
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    std::thread::sleep(SETTLE);
    t.run("w", &["install"]).success();
    assert_trusted(&t);
    t.git_repo("w/p/later");
    let run = assert_not_trusted(&t, "p/later");
    run.success();
    assert_eq!(members(&run.json()).len(), 2);
}

#[test]
fn a_directory_swapped_for_a_link_is_seen() {
    let t = TestContext::new();
    plain_superbuild(&t);
    // A member's tool state root moved aside and linked back: the very same record file is
    // reached through a link now.
    let root = t.path("w/p/b/.tools/esys/a2c");
    fs_err::rename(&root, t.path("w/p/b/.tools/esys/moved")).unwrap();
    std::os::unix::fs::symlink("moved", &root).unwrap();
    let run = assert_not_trusted(&t, "p/b/.tools/esys/a2c");
    // The full walk refuses the link, as it always did.
    assert!(run.transcript().contains("link"), "{}", run.transcript());

    // A whole member moved out of W and linked back: the walk never follows it.
    fs_err::remove_file(&root).unwrap();
    fs_err::rename(t.path("w/p/b/.tools/esys/moved"), &root).unwrap();
    std::thread::sleep(SETTLE);
    t.run("w", &["install"]).success();
    assert_trusted(&t);
    fs_err::rename(t.path("w/p/a"), t.path("elsewhere")).unwrap();
    std::os::unix::fs::symlink(t.path("elsewhere"), t.path("w/p/a")).unwrap();
    let run = assert_not_trusted(&t, "p");
    run.success();
    assert!(!members(&run.json()).iter().any(|(p, _)| p.ends_with("/p/a")));
}

#[test]
fn a_pointer_rewritten_with_the_same_text_is_seen() {
    let t = TestContext::new();
    plain_superbuild(&t);
    let pointer = t.path(&layout::pointer("w/p/c"));
    let text = fs_err::read_to_string(&pointer).unwrap();
    fs_err::remove_file(&pointer).unwrap();
    fs_err::write(&pointer, &text).unwrap();
    assert_not_trusted(&t, &layout::pointer("p/c")).success();
}

#[test]
fn a_removed_version_or_an_interrupted_migration_is_seen() {
    let t = TestContext::new();
    plain_superbuild(&t);
    fs_err::remove_dir_all(t.path(&layout::installed("w", "2.0.0"))).unwrap();
    let run = assert_not_trusted(&t, ".tools_local/esys/a2c/2.0.0");
    run.success();
    assert!(t.has_installed("w", "2.0.0", "a2c-method.toml"));

    std::thread::sleep(SETTLE);
    t.run("w", &["install"]).success();
    assert_trusted(&t);
    t.write(
        "w/p/a/.git/a2c-migrate.json",
        r#"{"from":"1.0.0","to":"2.0.0","step":null}"#,
    );
    let run = t.run("w", &["-v", "doctor", "--json"]);
    assert!(run.transcript().contains("interrupted"), "{}", run.transcript());
    let run = assert_not_trusted(&t, "p/a/.git/a2c-migrate.json");
    assert!(run.transcript().contains("interrupted"), "{}", run.transcript());
}

#[test]
fn a_forged_snapshot_vouches_for_nothing() {
    let t = TestContext::new();
    plain_superbuild(&t);
    let real = fs_err::read_to_string(t.path(SNAPSHOT)).unwrap();
    let header: String = real.lines().take(3).map(|l| format!("{l}\n")).collect();
    // Members outside W, and not one identity to check: refused before anything is believed.
    assert!(real.contains("\tp\n"));
    let ids = real.lines().find(|l| l.starts_with("ids ")).unwrap();
    for forged in [
        format!("{header}member 2 9.9.9 package -\t../../outside\n{ids}\n"),
        format!("{header}member 2 9.9.9 package -\tp/ghost\n"),
        real.replace("\tp\n", "\t../p\n"),
        real.replacen(&format!("{ids}\n"), "", 1),
        // Cut short: its last line without the newline a2c always writes.
        real.trim_end_matches('\n').to_string(),
    ] {
        fs_err::write(t.path(SNAPSHOT), &forged).unwrap();
        let run = t.ok("w", &["-v", "workspace", "members", "--json"]);
        assert!(
            run.transcript().contains("workspace snapshot not used"),
            "{}",
            run.transcript()
        );
        let listed = crate::support::strings_of(&run.json(), "members", "relative");
        assert_eq!(listed, ["p/a", "p/b", "p/c"]);
    }
    // Through a link, not even read.
    fs_err::remove_file(t.path(SNAPSHOT)).unwrap();
    let store = t.path(&layout::store("w"));
    fs_err::rename(&store, t.path("w/.tools_local/esys/real")).unwrap();
    std::os::unix::fs::symlink("real", &store).unwrap();
    let run = t.run("w", &["-v", "workspace", "members"]);
    assert!(
        run.transcript().contains("workspace snapshot not used: refused"),
        "{}",
        run.transcript()
    );
}

/// A member whose directory name is not UTF-8 cannot be recorded exactly: no snapshot is
/// written (the walk keeps serving it), rather than one that would check another name.
#[test]
fn a_name_that_is_not_utf8_is_never_recorded() {
    use std::os::unix::ffi::OsStrExt;
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w/p/a", "1.0.0");
    let odd = t.path("w/p").join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    fs_err::create_dir_all(odd.join(".tools/esys/a2c")).unwrap();
    crate::support::git(&odd, &["init", "-q", "."]);
    fs_err::write(
        odd.join(".tools/esys/a2c/adoption.yaml"),
        "schema_version: 2\ntool_version: 1.0.0\ndelivery: package\n",
    )
    .unwrap();
    t.publish("reg", "1.0.0", "tar.gz");
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    std::thread::sleep(SETTLE);
    let run = t.ok("w", &["-v", "install"]);
    assert!(run.transcript().contains("cannot be recorded"), "{}", run.transcript());
    assert!(!t.path(SNAPSHOT).exists());
}

/// doctor asks every member the snapshot vouches for whether git tracks its `.tools_local/`
/// (only `.git` is not looked at again). The snapshot records a member's index only when that
/// index tracked nothing there (here two of three: not `a`, which tracked a file there when it
/// was taken), and doctor takes that answer only while the index is the very file recorded:
/// `a`, and `b` once it tracks a file there too (which changes no path the snapshot vouches
/// with), are reported, through `O_PATH` and the portable listing alike. The members' indexes
/// are larger than the first block read, so an index read again is answered by stopping early
/// and listing `.git` for a split index's other half.
#[test]
fn doctor_reads_the_index_of_a_member_the_snapshot_vouches_for() {
    let t = TestContext::new();
    plain_superbuild(&t);
    for m in ["w/p/a", "w/p/b"] {
        for i in 0..300 {
            t.write(&format!("{m}/src/module_with_a_longer_name_{i:03}.rs"), "x\n");
        }
        crate::support::git(&t.path(m), &["add", "src"]);
        let index = fs_err::metadata(t.path(&format!("{m}/.git/index"))).unwrap().len();
        assert!(index > 16 * 1024, "{m}: a {index}-byte index");
    }
    t.write("w/p/a/.tools_local/notes.txt", "tracked by mistake\n");
    crate::support::git(&t.path("w/p/a"), &["add", "-f", ".tools_local/notes.txt"]);
    // `src/` is new in each member's directory: the next install walks and records it again.
    std::thread::sleep(SETTLE);
    t.run("w", &["install"]).success();
    assert_trusted(&t);
    let tracked = |portable: &str, recorded: usize| {
        let run = t.run_env("w", &["-v", "doctor", "--json"], &[("A2C_TEST_PORTABLE", portable)]);
        let said = format!(
            "the members were not walked ({recorded} members' git indexes recorded as tracking nothing under `.tools_local`)"
        );
        assert!(run.transcript().contains(&said), "{}", run.transcript());
        let doc = run.json();
        items(&doc["findings"])
            .iter()
            .filter(|f| f["code"] == "local-tracked")
            .map(|f| f["repo"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    for portable in ["0", "1"] {
        assert_eq!(tracked(portable, 2), [t.shown("w/p/a")], "portable={portable}");
    }
    t.write("w/p/b/.tools_local/notes.txt", "tracked by mistake\n");
    crate::support::git(&t.path("w/p/b"), &["add", "-f", ".tools_local/notes.txt"]);
    for portable in ["0", "1"] {
        let both = tracked(portable, 2);
        assert_eq!(both, [t.shown("w/p/a"), t.shown("w/p/b")], "portable={portable}");
    }
}

/// A line of the snapshot is one line: a member whose adoption record gives a `method_ref`
/// holding a line break or a tab (a committed record may say anything) is not recorded at all
/// — written as is, it would add lines that vouch for members and paths no walk read — and
/// the reader takes no carriage return a2c never writes.
#[test]
fn a_ref_that_would_break_a_line_is_never_recorded() {
    let t = TestContext::new();
    plain_superbuild(&t);
    let real = fs_err::read_to_string(t.path(SNAPSHOT)).unwrap();
    // A line ended by CR LF: not a text a2c writes (read as a line break, the path before it
    // would be checked and the text trusted).
    let crlf = format!("{}\r\n", real.strip_suffix('\n').unwrap());
    fs_err::write(t.path(SNAPSHOT), crlf).unwrap();
    let run = t.ok("w", &["-v", "workspace", "members"]);
    assert!(
        run.transcript().contains("workspace snapshot not used"),
        "{}",
        run.transcript()
    );
    fs_err::write(t.path(SNAPSHOT), &real).unwrap();
    assert_trusted(&t);
    let record = "w/p/b/.tools/esys/a2c/adoption.yaml";
    let text = fs_err::read_to_string(t.path(record)).unwrap();
    for r in ["v1\\nnested\\tp/a", "v1\\tp/z", "v1\\r"] {
        t.write(record, &format!("{text}method_ref: \"{r}\"\n"));
        std::thread::sleep(SETTLE);
        let run = t.ok("w", &["-v", "install"]);
        assert!(
            run.transcript().contains("cannot be recorded"),
            "{r}: {}",
            run.transcript()
        );
        assert!(!t.path(SNAPSHOT).exists(), "{r}");
    }
}
