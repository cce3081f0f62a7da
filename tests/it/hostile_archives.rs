//! The hostile-archive corpus, generated here, for tar.gz and zip alike. For every
//! case: the exact refusal, nothing written anywhere (the whole test tree is compared before
//! and after), the store and the cache unchanged.

use crate::support::bundles::{self, Item, Kind, file, item, manifest};
use crate::support::{TestContext, layout};

fn setup(t: &TestContext) {
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.canonical_repo("w/p/a", "1.0.0");
    t.canonical_repo("w/p/b", "2.0.0");
    t.publish("reg", "2.0.0", "tar.gz");
    t.adopt("w/p/a", "2.0.0");
    t.run("w", &["install"]).success();
    t.adopt("w/p/a", "1.0.0");
}

fn everything(t: &TestContext) -> Vec<String> {
    t.listing(".").into_iter().filter(|p| !p.starts_with("reg")).collect()
}

fn refused(t: &TestContext, format: &str, label: &str, bytes: &[u8], why: &str, env: &[(&str, &str)]) {
    t.publish_raw("reg", "1.0.0", bytes, format);
    let _ = fs_err::remove_file(t.path(&layout::lock("w")));
    t.run("w", &["lock"]).success();
    let before = everything(t);
    let store = t.listing("w/.tools_local");
    let run = t.run_env("w", &["install"], env);
    assert_eq!(run.code, 1, "{format} {label}: not refused\n{}", run.stderr);
    assert!(
        run.stderr.contains(why),
        "{format} {label}: want {why:?}\n{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint:"),
        "{format} {label}: no hint\n{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("version 1.0.0"),
        "{format} {label}: the error names the version\n{}",
        run.stderr
    );
    assert_eq!(everything(t), before, "{format} {label}: something was written");
    for escape in ["/tmp/a2c-escape", "/etc/a2c-escape"] {
        assert!(
            !std::path::Path::new(escape).exists(),
            "{format} {label}: wrote {escape}"
        );
    }
    assert_eq!(t.listing("w/.tools_local"), store, "{format} {label}: store changed");
}

/// Cases both formats share: a row each (the entries after the manifest, and what the refusal
/// says), the manifest put first.
#[rustfmt::skip]
fn common_cases() -> Vec<(&'static str, Vec<Item>, &'static str)> {
    let f = |name: &str| file(name, "x");
    let cases = vec![
        ("absolute path", vec![f("/etc/a2c-escape")], "absolute path"),
        ("dot-dot at start", vec![f("../escape.md")], "`..` segment"),
        ("dot-dot in the middle", vec![f("a2c-1.0.0/rules/../../escape.md")], "`..` segment"),
        ("dot-dot at the end", vec![f("a2c-1.0.0/rules/..")], "`..` segment"),
        ("drive letter", vec![f("C:/escape.md")], "drive-letter path"),
        ("drive-relative", vec![f("c:escape.md")], "drive-letter path"),
        ("UNC", vec![f("\\\\server\\share\\escape.md")], "backslash"),
        ("backslash", vec![f("a2c-1.0.0\\rules\\x.md")], "backslash"),
        ("control character", vec![f("a2c-1.0.0/a\u{1b}[31m.md")], "control character"),
        ("device CON", vec![f("a2c-1.0.0/CON")], "Windows device name"),
        ("device nul.txt", vec![f("a2c-1.0.0/nul.txt")], "Windows device name"),
        ("device COM1", vec![f("a2c-1.0.0/rules/COM1")], "Windows device name"),
        ("device LPT9", vec![f("a2c-1.0.0/LPT9.md")], "Windows device name"),
        ("trailing dot", vec![f("a2c-1.0.0/rules./x.md")], "ends with a dot or space"),
        ("trailing space", vec![f("a2c-1.0.0/x.md ")], "ends with a dot or space"),
        ("symlink relative", vec![item(b"a2c-1.0.0/l", Kind::Symlink("rules/x.md".into()))], "symbolic link"),
        ("symlink absolute", vec![item(b"a2c-1.0.0/l", Kind::Symlink("/etc/passwd".into()))], "symbolic link"),
        ("symlink to a parent", vec![item(b"a2c-1.0.0/l", Kind::Symlink("../..".into()))], "symbolic link"),
        ("symlink chain", vec![item(b"a2c-1.0.0/l1", Kind::Symlink("l2".into())), item(b"a2c-1.0.0/l2", Kind::Symlink("/".into()))], "symbolic link"),
        ("symlink then a file through it", vec![item(b"a2c-1.0.0/out", Kind::Symlink("/tmp".into())), f("a2c-1.0.0/out/a2c-escape")], "symbolic link"),
        ("fifo", vec![item(b"a2c-1.0.0/fifo", Kind::Fifo)], ""),
        ("character device", vec![item(b"a2c-1.0.0/dev", Kind::CharDevice)], ""),
        ("duplicate entry", vec![f("a2c-1.0.0/a.md"), f("a2c-1.0.0/a.md")], "duplicate entry"),
        ("names equal up to case", vec![f("a2c-1.0.0/Rules.md"), f("a2c-1.0.0/rules.md")], "differ only in case"),
        ("a name Windows refuses (`?`)", vec![f("a2c-1.0.0/what?.md")], "Windows allows in no file name"),
        ("a name Windows refuses (`|`, `<`, `>`, `*`, `\"`)", vec![f("a2c-1.0.0/a|b<c>d*e\".md")], "Windows allows in no file name"),
        ("names equal up to Unicode normalization", vec![f("a2c-1.0.0/caf\u{e9}.md"), f("a2c-1.0.0/cafe\u{301}.md")], "Unicode normalization"),
        ("a file and a directory with one name", vec![f("a2c-1.0.0/x"), f("a2c-1.0.0/x/y.md")], "share this name"),
        ("a directory and a file with one name", vec![f("a2c-1.0.0/x/y.md"), f("a2c-1.0.0/x")], "share this name"),
        ("the receipt's name", vec![f("a2c-1.0.0/.a2c-receipt.json")], "reserved"),
        ("the tree list's name", vec![f("a2c-1.0.0/.a2c-tree")], "reserved"),
        ("inside .git", vec![f("a2c-1.0.0/.git/hooks/post-checkout")], "`.git`"),
    ];
    let with_manifest = |items: Vec<Item>| std::iter::once(manifest("1.0.0")).chain(items).collect();
    cases.into_iter().map(|(label, items, why)| (label, with_manifest(items), why)).collect()
}

/// What a corpus refuses beyond [`common_cases`]: a label, the archive's bytes, what the
/// refusal says, and the limits set for it.
type Row = (
    &'static str,
    Vec<u8>,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// The caps the bombs and the flood are run under.
const SMALL_CAP: &[(&str, &str)] = &[("A2C_MAX_UNPACKED_BYTES", "1048576")];
const FEW_ENTRIES: &[(&str, &str)] = &[("A2C_MAX_ENTRIES", "25")];

/// Thirty empty files after the manifest: over [`FEW_ENTRIES`].
fn flood() -> Vec<Item> {
    std::iter::once(manifest("1.0.0"))
        .chain((0..30).map(|i| file(&format!("a2c-1.0.0/f{i}.md"), "")))
        .collect()
}

/// The manifest and one 2 MiB file of zeros: over [`SMALL_CAP`], in a few KiB.
fn bomb() -> Vec<Item> {
    vec![manifest("1.0.0"), file("a2c-1.0.0/bomb.md", &"0".repeat(2 << 20))]
}

/// The manifest and a 20 KB rule: an archive to break.
fn good() -> Vec<Item> {
    vec![manifest("1.0.0"), file("a2c-1.0.0/rules/x.md", &"rule ".repeat(4000))]
}

/// [`common_cases`] packed by `pack`, with `special`'s words for a fifo's or a device's refusal.
fn common_rows(pack: fn(&[Item]) -> Vec<u8>, special: fn(&str) -> Option<&'static str>) -> Vec<Row> {
    let row = |(label, items, why): (&'static str, Vec<Item>, &'static str)| -> Row {
        (label, pack(&items), special(label).unwrap_or(why), &[])
    };
    common_cases().into_iter().map(row).collect()
}

#[test]
fn tar_gz_corpus() {
    let t = TestContext::new();
    setup(&t);
    let m = || manifest("1.0.0");
    let mut rows = common_rows(bundles::tar_gz, |label| match label {
        "fifo" => Some("fifo entries are not allowed"),
        "character device" => Some("device entries are not allowed"),
        _ => None,
    });
    // A socket or any other type a tar can carry.
    let other = retype_last_tar_entry(&[m(), file("a2c-1.0.0/sock", "")], b'Z').expect("a tar with an entry of type Z");
    // Bombs: one huge entry, and many small ones, both stopped by the absolute cap.
    let one = bundles::tar_gz(&bomb());
    assert!(
        one.len() < 40_000,
        "a real bomb (over 50:1): {} bytes compressed",
        one.len()
    );
    let many: Vec<Item> = std::iter::once(m())
        .chain((0..64).map(|i| file(&format!("a2c-1.0.0/z{i}.md"), &"0".repeat(32 << 10))))
        .collect();
    let good = bundles::tar_gz(&good());
    let hard_link = |to: &str| bundles::tar_gz(&[m(), item(b"a2c-1.0.0/h", Kind::Hardlink(to.into()))]);
    #[rustfmt::skip]
    rows.extend::<Vec<Row>>(vec![
        ("hard link inside", hard_link("a2c-1.0.0/a2c-method.toml"), "hard link", &[]),
        ("hard link outside", hard_link("/etc/passwd"), "hard link", &[]),
        ("unknown entry type", other, "unsupported", &[]),
        // The header claims 10 GiB.
        ("huge declared size", tar_with_declared_size(10 << 30), "unpacks to more than", &[]),
        ("bomb, one entry", one, "unpacks to more than 1048576 bytes", SMALL_CAP),
        ("bomb, many entries", bundles::tar_gz(&many), "unpacks to more than", SMALL_CAP),
        ("too many entries", bundles::tar_gz(&flood()), "more than 25 entries", FEW_ENTRIES),
        // Broken streams.
        ("truncated", good[..good.len() / 2].to_vec(), "not a valid tar.gz", &[]),
        ("garbage", b"\x1f\x8b\x08garbage that is not deflate at all".to_vec(), "not a valid tar.gz", &[]),
        ("empty archive", bundles::tar_gz(&[]), "the archive is empty", &[]),
        ("no manifest", bundles::tar_gz(&[file("a2c-1.0.0/rules/x.md", "x")]), "has no valid manifest", &[]),
    ]);
    for (label, bytes, why, env) in rows {
        refused(&t, "tar.gz", label, &bytes, why, env);
    }
}

#[test]
fn zip_corpus() {
    let t = TestContext::new();
    setup(&t);
    let m = || manifest("1.0.0");
    let mut rows = common_rows(bundles::zip, |label| {
        matches!(label, "fifo" | "character device").then_some("special file entries are not allowed")
    });
    let base = || bundles::zip(&good());
    let truncated = base()[..base().len() - 30].to_vec();
    #[rustfmt::skip]
    rows.extend::<Vec<Row>>(vec![
        ("NUL in a name", bundles::zip(&[m(), item(b"a2c-1.0.0/a\0b.md", Kind::File(b"x".to_vec()))]), "NUL", &[]),
        ("socket", bundles::zip(&[m(), item(b"a2c-1.0.0/sock", Kind::Socket)]), "special file", &[]),
        ("encrypted", bundles::mark_encrypted(base()), "encrypted entries are not allowed", &[]),
        ("unsupported method", bundles::set_zip_method(base(), 12), "unsupported compression method", &[]),
        ("local header disagrees", bundles::rename_local_header(base(), b"rules/x.md", b"rules/y.md"), "the local header names", &[]),
        ("huge declared size", bundles::set_zip_size(base(), u32::MAX - 1), "unpacks to more than", &[]),
        ("bomb", bundles::zip(&bomb()), "unpacks to more than 1048576 bytes", SMALL_CAP),
        ("too many entries", bundles::zip(&flood()), "more than 25 entries", FEW_ENTRIES),
        ("truncated", truncated, "not a valid zip", &[]),
        ("garbage", b"PK\x03\x04 but nothing else that makes a zip".to_vec(), "not a valid zip", &[]),
        ("empty archive", bundles::zip(&[]), "the archive is empty", &[]),
        ("no manifest", bundles::zip(&[file("a2c-1.0.0/rules/x.md", "x")]), "has no valid manifest", &[]),
    ]);
    for (label, bytes, why, env) in rows {
        refused(&t, "zip", label, &bytes, why, env);
    }
}

/// A tar.gz whose last entry has type `kind`.
fn retype_last_tar_entry(items: &[Item], kind: u8) -> Option<Vec<u8>> {
    use std::io::{Read, Write};
    let gz = bundles::tar_gz(items);
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut tar).ok()?;
    // Headers are at 512-byte boundaries; the last entry is the last non-zero header block.
    let mut last = None;
    let mut at = 0;
    while at + 512 <= tar.len() && tar[at..at + 512].iter().any(|b| *b != 0) {
        last = Some(at);
        let size = usize::from_str_radix(
            std::str::from_utf8(&tar[at + 124..at + 135])
                .ok()?
                .trim_matches(char::from(0))
                .trim(),
            8,
        )
        .ok()?;
        at += 512 + size.div_ceil(512) * 512;
    }
    let h = last?;
    tar[h + 156] = kind;
    let sum: u32 = tar[h..h + 512]
        .iter()
        .enumerate()
        .map(|(i, b)| if (148..156).contains(&i) { 32 } else { u32::from(*b) })
        .sum();
    tar[h + 148..h + 156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    let mut out = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    out.write_all(&tar).ok()?;
    out.finish().ok()
}

/// A tar.gz with an entry whose header declares `size` bytes (the data is not there).
fn tar_with_declared_size(size: u64) -> Vec<u8> {
    use std::io::Write;
    let header = |path: &str, size: u64| {
        let mut h = tar::Header::new_gnu();
        h.set_path(path).unwrap();
        h.set_size(size);
        h.set_mode(0o644);
        h.set_cksum();
        h.as_bytes().to_vec()
    };
    let manifest = b"name = \"esys/a2c\"\nversion = \"1.0.0\"\n";
    let mut bytes = header("a2c-1.0.0/a2c-method.toml", manifest.len() as u64);
    bytes.extend_from_slice(manifest);
    bytes.resize(1024, 0);
    bytes.extend_from_slice(&header("a2c-1.0.0/huge.md", size));
    bytes.extend_from_slice(&[b'x'; 4096]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    gz.finish().unwrap()
}

/// A tar.gz: the manifest, then (optionally) a PAX global header with `global` records, then
/// a regular file `name` preceded by a local PAX header with `local` records.
fn tar_with_pax(global: &[(&str, &str)], local: &[(&str, &str)], name: &str) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    let mut append = |kind: tar::EntryType, path: &str, data: &[u8]| {
        let mut h = tar::Header::new_ustar();
        h.set_entry_type(kind);
        h.set_path(path).unwrap();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_cksum();
        b.append(&h, data).unwrap();
    };
    // Each record is "<len> <key>=<value>\n", where <len> counts its own digits too.
    let records = |rs: &[(&str, &str)]| {
        let mut out = Vec::new();
        for (k, v) in rs {
            let body = format!(" {k}={v}\n");
            let mut len = body.len() + 1;
            while len.to_string().len() + body.len() != len {
                len = len.to_string().len() + body.len();
            }
            out.extend_from_slice(format!("{len}{body}").as_bytes());
        }
        out
    };
    let manifest = b"name = \"esys/a2c\"\nversion = \"1.0.0\"\ntool_state_root = \".tools/esys/a2c\"\n";
    append(tar::EntryType::Regular, "a2c-1.0.0/a2c-method.toml", manifest);
    if !global.is_empty() {
        append(tar::EntryType::XGlobalHeader, "pax_global_header", &records(global));
    }
    if !local.is_empty() {
        append(tar::EntryType::XHeader, "a2c-1.0.0/PaxHeader", &records(local));
    }
    append(tar::EntryType::Regular, name, b"# rules\n");
    b.into_inner().unwrap().finish().unwrap()
}

#[test]
fn tar_entry_types_and_pax_records_are_honoured_refused_or_ignored_never_misread() {
    let t = TestContext::new();
    setup(&t);
    let m = || manifest("1.0.0");
    // GNU dumpdir and other types: named, never a Debug dump.
    for (byte, name) in [
        (b'D', "GNU dumpdir"),
        (b'V', "GNU volume label"),
        (b'M', "GNU multi-volume"),
    ] {
        let bytes = retype_last_tar_entry(&[m(), file("a2c-1.0.0/x", "")], byte).unwrap();
        refused(&t, "tar.gz", name, &bytes, name, &[]);
        let run = t.run("w", &["install"]);
        assert!(
            !run.stderr.contains("Nonexhaustive") && !run.stderr.contains("EntryType"),
            "{}",
            run.stderr
        );
    }
    // A PAX global header with a `path` record: refused (GNU tar would rename what follows).
    refused(
        &t,
        "tar.gz",
        "pax global path",
        &tar_with_pax(&[("path", "evil.md")], &[], "a2c-1.0.0/rules/x.md"),
        "a PAX global header with a `path` record",
        &[],
    );
    // PAX 1.0 sparse: `GNU.sparse.*` records and a GNUSparseFile.0/ name.
    refused(
        &t,
        "tar.gz",
        "pax sparse",
        &tar_with_pax(
            &[],
            &[
                ("GNU.sparse.major", "1"),
                ("GNU.sparse.minor", "0"),
                ("GNU.sparse.name", "a2c-1.0.0/rules/x.md"),
                ("GNU.sparse.realsize", "8"),
            ],
            "a2c-1.0.0/GNUSparseFile.0/x.md",
        ),
        "a PAX sparse file",
        &[],
    );
}

/// What `git archive` writes (a global `comment` with the commit id) installs; a local `path`
/// record is honoured (and checked like any name); `mtime`/`uid` are ignored.
#[test]
fn pax_records_a2c_honours_or_ignores_install() {
    let t = TestContext::new();
    setup(&t);
    let bytes = tar_with_pax(
        &[("comment", "5d3c0ffee5d3c0ffee5d3c0ffee5d3c0ffee5d3c")],
        &[
            ("path", "a2c-1.0.0/rules/long-name-from-pax.md"),
            ("mtime", "1"),
            ("uid", "0"),
        ],
        "a2c-1.0.0/rules/short.md",
    );
    t.publish_raw("reg", "1.0.0", &bytes, "tar.gz");
    let _ = fs_err::remove_file(t.path(&layout::lock("w")));
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    assert!(t.has_installed("w", "1.0.0", "rules/long-name-from-pax.md"));
    assert!(!t.path(&layout::installed_file("w", "1.0.0", "rules/short.md")).exists());
    // A local `path` record that escapes is refused like any name.
    let bytes = tar_with_pax(&[], &[("path", "../../escape.md")], "a2c-1.0.0/rules/short.md");
    refused(&t, "tar.gz", "pax path escape", &bytes, "..", &[]);
}

/// A tar.gz: the manifest, then a GNU long name `long` (if any) and a PAX `path` record
/// `pax` (if any) for one regular file whose header names `name`; with `trailing`, a last
/// PAX header with no entry after it, right before the end of the archive.
fn tar_with_names(long: Option<&str>, pax: Option<&str>, name: &str, trailing: bool) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    let mut append = |kind: tar::EntryType, path: &str, data: &[u8]| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_cksum();
        b.append(&h, data).unwrap();
    };
    let record = |k: &str, v: &str| {
        let body = format!(" {k}={v}\n");
        let mut len = body.len() + 1;
        while len.to_string().len() + body.len() != len {
            len = len.to_string().len() + body.len();
        }
        format!("{len}{body}").into_bytes()
    };
    let manifest = b"name = \"esys/a2c\"\nversion = \"1.0.0\"\ntool_state_root = \".tools/esys/a2c\"\n";
    append(tar::EntryType::Regular, "a2c-1.0.0/a2c-method.toml", manifest);
    if let Some(long) = long {
        append(
            tar::EntryType::GNULongName,
            "././@LongLink",
            format!("{long}\0").as_bytes(),
        );
    }
    if let Some(pax) = pax {
        append(tar::EntryType::XHeader, "a2c-1.0.0/PaxHeader", &record("path", pax));
    }
    append(tar::EntryType::Regular, name, b"# rules\n");
    if trailing {
        append(tar::EntryType::XHeader, "a2c-1.0.0/PaxHeader", &record("mtime", "0"));
    }
    b.into_inner().unwrap().finish().unwrap()
}

/// What `tool -tzf` lists of `bytes` (`None` when it fails).
fn tar_listing(t: &TestContext, tool: &str, bytes: &[u8]) -> Option<String> {
    let file = t.path("listed.tar.gz");
    fs_err::write(&file, bytes).unwrap();
    let out = std::process::Command::new(tool)
        .arg("-tzf")
        .arg(&file)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Where GNU tar and bsdtar read one archive two ways, a2c reads it neither way: a
/// GNU long name beside a PAX `path` that differs, and a PAX header that ends the archive
/// with no entry after it. The same names given both ways agree, and install.
#[test]
fn tar_archives_that_readers_disagree_on_are_refused() {
    for tool in ["tar", "bsdtar"] {
        if std::process::Command::new(tool).arg("--version").output().is_err() {
            crate::support::require_program(tool);
            return;
        }
    }
    let t = TestContext::new();
    setup(&t);
    let both = tar_with_names(
        Some("a2c-1.0.0/rules/from-gnu.md"),
        Some("a2c-1.0.0/rules/from-pax.md"),
        "a2c-1.0.0/rules/header.md",
        false,
    );
    // The real readers disagree (that is why a2c refuses).
    let (gnu, bsd) = (tar_listing(&t, "tar", &both), tar_listing(&t, "bsdtar", &both));
    assert_ne!(
        gnu, bsd,
        "GNU tar and bsdtar agree on {gnu:?}: the test no longer shows a disagreement"
    );
    refused(
        &t,
        "tar.gz",
        "gnu long name and pax path",
        &both,
        "a PAX `path` and a GNU long name (`a2c-1.0.0/rules/from-gnu.md`) that differ",
        &[],
    );
    let trailing = tar_with_names(None, None, "a2c-1.0.0/rules/x.md", true);
    assert!(
        tar_listing(&t, "bsdtar", &trailing).is_none(),
        "bsdtar reads a trailing PAX header"
    );
    refused(
        &t,
        "tar.gz",
        "trailing pax header",
        &trailing,
        "the archive ends after an extended header, before its entry",
        &[],
    );
    // The same name given both ways is no disagreement.
    let agreeing = tar_with_names(
        Some("a2c-1.0.0/rules/same.md"),
        Some("a2c-1.0.0/rules/same.md"),
        "a2c-1.0.0/rules/header.md",
        false,
    );
    t.publish_raw("reg", "1.0.0", &agreeing, "tar.gz");
    let _ = fs_err::remove_file(t.path(&layout::lock("w")));
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
}

/// The tree digest covers the files, and so every directory holding one: a bundle
/// that adds directories with no file in them (empty, or holding only empty ones) installs
/// under its pinned digest without them, in tar.gz and zip alike, and `a2c pack`'s bundle of a
/// tree with an empty directory installs the same way.
#[test]
fn a_directory_outside_the_tree_digest_is_never_installed() {
    let t = TestContext::new();
    setup(&t);
    let items = |extra: &[&str]| {
        let mut v = vec![
            manifest("1.0.0"),
            item(b"a2c-1.0.0/rules/", Kind::Dir),
            file("a2c-1.0.0/rules/x.md", "x"),
        ];
        v.extend(extra.iter().map(|d| item(d.as_bytes(), Kind::Dir)));
        v
    };
    let store = t.path(&layout::installed("w", "1.0.0"));
    for (format, bytes) in [
        ("tar.gz", bundles::tar_gz(&items(&["a2c-1.0.0/hidden/"]))),
        ("zip", bundles::zip(&items(&["a2c-1.0.0/hidden/"]))),
        ("tar.gz", bundles::tar_gz(&items(&["a2c-1.0.0/a/", "a2c-1.0.0/a/b/"]))),
    ] {
        t.publish_raw("reg", "1.0.0", &bytes, format);
        let _ = fs_err::remove_file(t.path(&layout::lock("w")));
        if store.exists() {
            std::process::Command::new("chmod")
                .args(["-R", "u+w", &store.display().to_string()])
                .status()
                .unwrap();
            fs_err::remove_dir_all(&store).unwrap();
        }
        fs_err::remove_dir_all(t.cache_dir()).ok();
        t.run("w", &["lock"]).success();
        t.run("w", &["install"]).success();
        let mut dirs: Vec<String> = walkdir::WalkDir::new(&store)
            .min_depth(1)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_dir())
            .map(|e| e.path().strip_prefix(&store).unwrap().display().to_string())
            .collect();
        dirs.sort();
        assert_eq!(dirs, ["rules"], "{format}");
        t.run("w", &["doctor", "--deep"]).success();
    }
    // `a2c pack` of a tree with an empty directory: installed without it.
    for format in ["tar.gz", "zip"] {
        let tree = format!("tree-{}", format.replace('.', "-"));
        t.method_tree(&tree, "3.0.0");
        fs_err::create_dir_all(t.path(&format!("{tree}/empty/inner"))).unwrap();
        t.pack(&tree, "3.0.0", &format!("reg-{format}"), format);
        fs_err::remove_dir_all(t.path(&layout::installed("w", "3.0.0"))).ok();
        t.ok(
            "w",
            &[
                "install",
                "--registry",
                &format!("../reg-{format}"),
                "--version",
                "3.0.0",
            ],
        );
        assert!(
            !t.path(&layout::installed_file("w", "3.0.0", "empty")).exists(),
            "{format}"
        );
    }
}
