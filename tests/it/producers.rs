//! Archives real tools write: each is made here by the real program (GNU tar in every format,
//! bsdtar, bgzip, concatenated gzip, Info-ZIP zip, Python's tarfile), published with a
//! hand-written index entry, installed, and its installed tree compared with what `a2c pack`
//! makes of the same files. What stays refused is refused by name.

use crate::support::{TestContext, items, layout, require_program, succeeds};
use std::process::Command;

/// `true` when `program` runs; otherwise the SKIPPED line (a failure under CI=true).
fn have(program: &str, package: &str) -> bool {
    let ok = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success() || !o.stdout.is_empty() || !o.stderr.is_empty());
    if !ok {
        require_program(&format!("{program} (apt-get install {package})"));
    }
    ok
}

fn sh(dir: &std::path::Path, script: &str) {
    succeeds(
        Command::new("sh").arg("-c").arg(script).current_dir(dir),
        &format!("`{script}` failed"),
    );
}

/// A method tree of `version` at `trees/<version>` with an executable, a nested directory and
/// an empty one; and the tree digest `a2c pack` gives it (packed into the registry `ref`).
fn tree(t: &TestContext, version: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let rel = format!("trees/{version}");
    t.method_tree(&rel, version);
    let tool = t.write(&format!("{rel}/bin/tool"), "#!/bin/sh\necho tool\n");
    fs_err::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    t.write(&format!("{rel}/prompts/deep/nested/p.md"), "nested\n");
    fs_err::create_dir_all(t.path(&format!("{rel}/empty"))).unwrap();
    t.pack(&rel, version, "ref", "tar.gz");
    let index: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(t.path("ref/index/esys/a2c.json")).unwrap()).unwrap();
    items(&index["versions"])
        .iter()
        .find(|v| v["version"] == version)
        .unwrap()["tree"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Publishes `bytes` as `version` with a hand-written index entry, installs it into a fresh
/// repository, and returns the run and the installed tree digest (when it installed).
fn install(t: &TestContext, version: &str, bytes: &[u8], format: &str) -> (crate::support::Run, Option<String>) {
    t.publish_raw("reg", version, bytes, format);
    let repo = format!("r-{version}");
    t.canonical_repo(&repo, version);
    let run = t.run(&repo, &["install", "--registry", "../reg"]);
    let receipt = t.path(&layout::installed_file(&repo, version, ".a2c-receipt.json"));
    let tree = fs_err::read_to_string(receipt).ok().map(|r| {
        serde_json::from_str::<serde_json::Value>(&r).unwrap()["tree"]
            .as_str()
            .unwrap()
            .to_string()
    });
    (run, tree)
}

/// Makes the archive with `script` (run in the tree, writing `$OUT`), installs it and checks
/// its tree equals `a2c pack`'s, and that the empty directory is not installed (it holds no
/// file, so the tree digest does not cover it).
fn same_tree_as_pack(t: &TestContext, version: &str, format: &str, script: &str) {
    let expected = tree(t, version);
    let out = t.path(&format!("archives/{version}.{format}"));
    fs_err::create_dir_all(out.parent().unwrap()).unwrap();
    sh(
        &t.path(&format!("trees/{version}")),
        &script.replace("$OUT", &out.display().to_string()),
    );
    let (run, tree) = install(t, version, &fs_err::read(&out).unwrap(), format);
    run.success();
    assert_eq!(tree.as_deref(), Some(expected.as_str()), "{script}");
    let store = t.path(&format!("r-{version}/.tools_local/esys/a2c/{version}"));
    assert!(!store.join("empty").exists(), "{script}: `empty` was installed");
    let tool = fs_err::metadata(store.join("bin/tool")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert!(tool.permissions().mode() & 0o111 != 0, "{script}: the executable bit");
}

#[test]
fn gnu_tar_in_every_format_and_the_common_hand_made_forms() {
    if !have("tar", "tar") {
        return;
    }
    let t = TestContext::new();
    let cases = [
        ("1.0.0", "tar --format=gnu -czf $OUT ."),
        ("1.1.0", "tar --format=ustar -czf $OUT ."),
        ("1.2.0", "tar --format=pax -czf $OUT ."),
        ("1.3.0", "tar --format=v7 -czf $OUT ."),
        ("1.4.0", "tar --format=oldgnu -czf $OUT ."),
        // The most common hand-made tarball: `./` first, every name behind `./`.
        ("1.5.0", "tar -czf $OUT -C . ."),
        ("1.6.0", "tar -czf $OUT *"),
        // Concatenated gzip members (RFC 1952 §2.2): what `cat a.gz b.gz` makes.
        (
            "1.7.0",
            "tar -cf ../whole.tar . && head -c 2048 ../whole.tar | gzip > $OUT && tail -c +2049 ../whole.tar | gzip >> $OUT",
        ),
    ];
    for (version, script) in cases {
        same_tree_as_pack(&t, version, "tar.gz", script);
    }
}

#[test]
fn bsdtar_and_bgzip() {
    let t = TestContext::new();
    if have("bsdtar", "libarchive-tools") {
        same_tree_as_pack(&t, "2.0.0", "tar.gz", "bsdtar -czf $OUT .");
        same_tree_as_pack(&t, "2.1.0", "tar.gz", "bsdtar --format=ustar -czf $OUT .");
        same_tree_as_pack(&t, "2.2.0", "tar.gz", "bsdtar --format=pax -czf $OUT .");
    }
    if have("bgzip", "tabix") {
        // bgzip writes independent 64 KiB members: a multi-member gzip file.
        same_tree_as_pack(&t, "2.3.0", "tar.gz", "tar -cf - . | bgzip -c > $OUT");
        let bytes = fs_err::read(t.path("archives/2.3.0.tar.gz")).unwrap();
        let members = bytes.windows(4).filter(|w| w == &[0x1f, 0x8b, 8, 4]).count();
        assert!(members >= 2, "bgzip wrote {members} member(s)");
    }
}

#[test]
fn python_tarfile_with_binary_pax_values() {
    let t = TestContext::new();
    // A pax value holding a newline (a binary xattr, as bsdtar archives `com.apple.provenance`),
    // shaped like a record so that a line-splitting reader would see a `path`.
    let script = r#"python3 - "$OUT" <<'EOF'
import os, sys, tarfile
out = sys.argv[1]
with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as t:
    for root, dirs, files in os.walk("."):
        dirs.sort()
        for name in sorted(dirs) + sorted(files):
            path = os.path.join(root, name)
            info = t.gettarinfo(path, arcname=path[2:])
            info.pax_headers = {"SCHILY.xattr.user.sig": "\x01\n30 path=evil.txt\n\x02"}
            if info.isfile():
                with open(path, "rb") as f:
                    t.addfile(info, f)
            else:
                t.addfile(info)
EOF"#;
    same_tree_as_pack(&t, "3.0.0", "tar.gz", script);
    assert!(!t.path("r-3.0.0/.tools_local/esys/a2c/3.0.0/evil.txt").exists());
}

#[test]
fn info_zip_and_a_winzip_unicode_path() {
    let t = TestContext::new();
    if have("zip", "zip") {
        same_tree_as_pack(&t, "4.0.0", "zip", "zip -q -r $OUT .");
        same_tree_as_pack(&t, "4.1.0", "zip", "zip -q -r -D $OUT .");
    }
    // WinZip: a legacy (CP437) name in both headers, the UTF-8 name in an Info-ZIP Unicode Path
    // extra field (0x7075) in both, as APPNOTE 4.6.9 documents. Written byte by byte.
    let version = "4.2.0";
    let manifest = format!("name = \"esys/a2c\"\nversion = \"{version}\"\ntool_state_root = \".tools/esys/a2c\"\n");
    let files: [(&[u8], &str, &[u8]); 2] = [
        (b"a2c-method.toml", "a2c-method.toml", manifest.as_bytes()),
        (b"rules/r\x82gles.md", "rules/règles.md", b"# r\xc3\xa8gles\n"),
    ];
    let bytes = winzip(&files, Local::Same);
    let (run, _) = install(&t, version, &bytes, "zip");
    run.success();
    let installed = t.path(&format!("r-{version}/.tools_local/esys/a2c/{version}/rules/règles.md"));
    assert_eq!(fs_err::read(installed).unwrap(), b"# r\xc3\xa8gles\n");
    // The two shapes real archivers write that were refused. Local and central
    // legacy names that differ, each header with its own 0x7075 (WinZip); and the field in
    // the central directory only.
    // WinZip's NTFS times field (0x000a) before the Unicode Path field, in both
    // headers.
    for (version, local) in [
        ("4.3.0", Local::OtherLegacy),
        ("4.4.0", Local::Bare),
        ("4.5.0", Local::SameAfterNtfs),
    ] {
        let manifest = format!("name = \"esys/a2c\"\nversion = \"{version}\"\ntool_state_root = \".tools/esys/a2c\"\n");
        let files: [(&[u8], &str, &[u8]); 2] = [
            (b"a2c-method.toml", "a2c-method.toml", manifest.as_bytes()),
            (b"rules/r\x82gles.md", "rules/règles.md", b"# r\xc3\xa8gles\n"),
        ];
        let (run, _) = install(&t, version, &winzip(&files, local), "zip");
        run.success();
        let installed = t.path(&format!("r-{version}/.tools_local/esys/a2c/{version}/rules/règles.md"));
        assert_eq!(fs_err::read(installed).unwrap(), b"# r\xc3\xa8gles\n", "{version}");
    }
}

/// What a [`winzip`] local header holds beside the central directory's legacy name and
/// Unicode Path field.
#[derive(Clone, Copy)]
enum Local {
    /// The same legacy name and field.
    Same,
    /// Another legacy name (its last byte changed), with a field of its own for the same UTF-8
    /// name.
    OtherLegacy,
    /// The same legacy name, and no field.
    Bare,
    /// The same legacy name and field, each header's field after an NTFS extra field (0x000a),
    /// as WinZip writes them.
    SameAfterNtfs,
}

/// A stored (uncompressed) zip whose entries carry a legacy name and a 0x7075 Unicode Path
/// field in the central directory, and in the local header as `local` says.
fn winzip(files: &[(&[u8], &str, &[u8])], local: Local) -> Vec<u8> {
    let crc = |b: &[u8]| {
        let mut c = flate2::Crc::new();
        c.update(b);
        c.sum()
    };
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (legacy, utf8, content) in files {
        let field = |name: &[u8]| {
            let mut extra = vec![0x75, 0x70];
            extra.extend(((5 + utf8.len()) as u16).to_le_bytes());
            extra.push(1);
            extra.extend(crc(name).to_le_bytes());
            extra.extend(utf8.as_bytes());
            extra
        };
        // NTFS: reserved, tag 1 of 24 bytes, three file times.
        let ntfs: Vec<u8> = match local {
            Local::SameAfterNtfs => [&[0x0a, 0x00, 32, 0][..], &[0; 4], &[1, 0, 24, 0], &[0x11; 24]].concat(),
            _ => Vec::new(),
        };
        let extra = [ntfs.clone(), field(legacy)].concat();
        let mut local_legacy = legacy.to_vec();
        if matches!(local, Local::OtherLegacy) && !legacy.is_ascii() {
            *local_legacy.last_mut().unwrap() ^= 0x20;
        }
        let local_extra = match local {
            Local::Bare => Vec::new(),
            _ => [ntfs, field(&local_legacy)].concat(),
        };
        let offset = out.len() as u32;
        let common = |v: &mut Vec<u8>, extra_len: usize| {
            v.extend(20u16.to_le_bytes()); // version needed
            v.extend(0u16.to_le_bytes()); // flags: no UTF-8 bit (legacy names)
            v.extend(0u16.to_le_bytes()); // stored
            v.extend(0u32.to_le_bytes()); // time, date
            v.extend(crc(content).to_le_bytes());
            v.extend((content.len() as u32).to_le_bytes());
            v.extend((content.len() as u32).to_le_bytes());
            v.extend((legacy.len() as u16).to_le_bytes());
            v.extend((extra_len as u16).to_le_bytes());
        };
        out.extend(b"PK\x03\x04");
        common(&mut out, local_extra.len());
        out.extend(&local_legacy);
        out.extend(&local_extra);
        out.extend(*content);
        central.extend(b"PK\x01\x02");
        central.extend(20u16.to_le_bytes()); // made by: MS-DOS
        common(&mut central, extra.len());
        central.extend(0u16.to_le_bytes()); // comment
        central.extend(0u16.to_le_bytes()); // disk
        central.extend(0u16.to_le_bytes()); // internal attributes
        central.extend(0u32.to_le_bytes()); // external attributes
        central.extend(offset.to_le_bytes());
        central.extend(*legacy);
        central.extend(&extra);
    }
    let start = out.len() as u32;
    out.extend(&central);
    out.extend(b"PK\x05\x06");
    out.extend([0u8; 4]);
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(start.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

/// A v7 directory (a regular entry whose name ends in `/`) is a directory; one that declares
/// content is refused (GNU tar skips that content, bsdtar and Python do not); a GNU volume
/// label is refused by name.
#[test]
fn v7_directories_and_volume_labels() {
    let t = TestContext::new();
    let version = "5.0.0";
    let manifest = format!("name = \"esys/a2c\"\nversion = \"{version}\"\ntool_state_root = \".tools/esys/a2c\"\n");
    let header = |name: &str, kind: u8, size: usize, mode: u32| {
        let mut b = [0u8; 512];
        b[..name.len()].copy_from_slice(name.as_bytes());
        b[100..108].copy_from_slice(format!("{mode:07o}\0").as_bytes());
        b[108..124].copy_from_slice(b"0000000\x000000000\0");
        b[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
        b[136..148].copy_from_slice(b"00000000000\0");
        b[156] = kind;
        b[148..156].copy_from_slice(b"        ");
        let sum: u32 = b.iter().map(|x| *x as u32).sum();
        b[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        b.to_vec()
    };
    let data = |content: &[u8]| {
        let mut v = content.to_vec();
        v.resize(content.len().div_ceil(512) * 512, 0);
        v
    };
    let gz = |blocks: Vec<Vec<u8>>| {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&blocks.concat()).unwrap();
        e.write_all(&[0u8; 1024]).unwrap();
        e.finish().unwrap()
    };
    let tar = gz(vec![
        header("a2c-method.toml", b'0', manifest.len(), 0o644),
        data(manifest.as_bytes()),
        header("emptydir/", b'0', 0, 0o755),
        header("bin/", 0, 0, 0o755),
        header("bin/tool", b'0', 5, 0o755),
        data(b"tool\n"),
    ]);
    let (run, _) = install(&t, version, &tar, "tar.gz");
    run.success();
    let store = t.path(&format!("r-{version}/.tools_local/esys/a2c/{version}"));
    // A v7 directory is read as a directory (not a file): with no file in it, it is outside
    // the tree digest, so it is not installed.
    assert!(!store.join("emptydir").exists());
    assert_eq!(fs_err::read(store.join("bin/tool")).unwrap(), b"tool\n");

    let version = "5.1.0";
    let manifest = manifest.replace("5.0.0", version);
    let tar = gz(vec![
        header("a2c-method.toml", b'0', manifest.len(), 0o644),
        data(manifest.as_bytes()),
        header("bin/", 0, 512, 0o755),
        header("bin/tool", b'0', 5, 0o755),
        data(b"tool\n"),
    ]);
    let (run, _) = install(&t, version, &tar, "tar.gz");
    insta::assert_snapshot!(run.error_transcript());

    if have("tar", "tar") {
        let version = "5.2.0";
        tree(&t, version);
        sh(
            &t.path(&format!("trees/{version}")),
            "tar -V 'My Label' -czf ../labelled.tgz .",
        );
        let (run, _) = install(
            &t,
            version,
            &fs_err::read(t.path("trees/labelled.tgz")).unwrap(),
            "tar.gz",
        );
        run.fails_with(&["`My Label`", "a GNU volume label (entry type `V`)", "without `--label`"]);
        assert!(!run.stderr.contains("numeric field"), "{}", run.stderr);
    }
}
