//! `fixity import`: each source on state its own tool wrote where the tool runs here
//! (setfattr, chkbit, bitrot, sha256sum), else on fixtures built from the format's
//! description (tests/fixtures/import/README.md); then scan (reads only what has no
//! digest), verify (clears the mark, or finds a flipped byte), the refusals, and
//! `--store xattr --xattr-names`.

use crate::util::{fixity, have, missing, pg, tempdir, write};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/import");

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run(dir: &Path, args: &[&str]) -> Output {
    fixity(dir).args(args).output().expect("run fixity")
}

/// JSON lines of a run: the entries listed (path -> class) and the summary.
fn json_run(dir: &Path, args: &[&str]) -> (BTreeMap<String, String>, serde_json::Value, i32) {
    let out = run(dir, args);
    let mut listed = BTreeMap::new();
    let mut summary = serde_json::Value::Null;
    for line in text(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| {
            panic!("{line}: {e}; stderr {}", text(&out.stderr));
        });
        if v.get("summary").is_some() {
            summary = v;
        } else {
            let path =
                v["path"].as_str().map(String::from).unwrap_or_else(|| {
                    // A name that is not UTF-8 comes as bytes.
                    text(&v["path_bytes"].as_array().map_or(Vec::new(), |b| {
                        b.iter().map(|x| x.as_u64().unwrap() as u8).collect()
                    }))
                });
            // The first class counts: a refused file is listed again as without a digest.
            listed.entry(path).or_insert_with(|| v["class"].as_str().unwrap().to_string());
        }
    }
    (listed, summary, out.status.code().unwrap_or(-1))
}

fn status_json(dir: &Path, tree: &str) -> serde_json::Value {
    let out = run(dir, &["status", "--json", tree]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn set_mtime(p: &Path, t: SystemTime) {
    std::fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
}

fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

/// The fixtures' mtime, 1700000000.123456789 s.
fn fixture_time() -> SystemTime {
    UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789)
}

/// Overwrites the first byte of `p`, keeping its size and mtime: bitrot.
fn flip(p: &Path) {
    let before = mtime(p);
    let mut data = std::fs::read(p).unwrap();
    data[0] ^= 1;
    std::fs::write(p, data).unwrap();
    set_mtime(p, before);
}

/// Whether the file system under `dir` takes user xattrs.
fn xattrs_work(dir: &Path) -> bool {
    let p = dir.join(".probe");
    std::fs::write(&p, b"").unwrap();
    let ok = xattr::set(&p, "user.test", b"1").is_ok();
    std::fs::remove_file(&p).unwrap();
    if !ok {
        missing("user xattrs", "the test directory's file system does not take them");
    }
    ok
}

/// `text` with every `from` replaced by `to`.
fn replace(text: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

fn os(b: &[u8]) -> &OsStr {
    OsStr::from_bytes(b)
}

#[test]
fn xattr_checksum_scripts_import_then_scan_reads_only_the_rest_and_verify_finds_a_flip() {
    let d = tempdir();
    if !xattrs_work(d.path()) {
        return;
    }
    if !have("setfattr") {
        return missing("setfattr", "the Debian package attr is not installed");
    }
    let t = d.path().join("t");
    let names: [&[u8]; 5] = [b"a", b"sub/b", b"nl\nname", b"bad\xffname", b"empty"];
    for (i, n) in names.iter().enumerate() {
        let content = if *n == b"empty" { Vec::new() } else { format!("file {i}").into_bytes() };
        let p = write(&t, os(n), &content);
        // What the cron scripts do: md5sum, then setfattr -n user.checksum.md5 -v HEX.
        let hex = fixity::algo::lookup("md5").unwrap().digest(&content).to_hex();
        let ok = Command::new("setfattr")
            .args(["-n", "user.checksum.md5", "-v", &hex])
            .arg(&p)
            .status()
            .unwrap();
        assert!(ok.success());
    }
    write(&t, "unscripted", b"no attribute");
    let (listed, s, code) = json_run(d.path(), &["import", "--from", "xattr", "-v", "--json", "t"]);
    assert_eq!(code, 0, "{listed:?} {s}");
    assert_eq!(s["summary"]["imported"], 5);
    assert_eq!(s["summary"]["uncovered"], 1);
    assert_eq!(s["algorithm"], "md5");
    assert_eq!(listed["unscripted"], "no-digest");
    assert_eq!(listed["nl\nname"], "imported");
    assert_eq!(listed["bad\u{fffd}name"], "imported");
    assert_eq!(status_json(d.path(), "t")["imported_unverified"], 5);

    // A scan hashes only the file without a digest: the point of importing.
    let out = run(d.path(), &["scan", "--json", "t"]);
    let last: serde_json::Value =
        serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["summary"]["files_read"], 1, "{}", text(&out.stdout));
    assert_eq!(last["summary"]["counts"]["ok"], 5);
    assert_eq!(last["summary"]["counts"]["new"], 1);
    assert_eq!(status_json(d.path(), "t")["imported_unverified"], 5, "a scan verifies nothing");

    // A byte flipped under an imported digest (size and mtime kept) is a finding.
    flip(&t.join("a"));
    let out = run(d.path(), &["verify", "t"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let report = text(&out.stdout);
    assert!(report.contains("CORRUPT     a (recorded "), "{report}");
    assert!(report.contains("imported and never verified by fixity"), "{report}");
    assert_eq!(status_json(d.path(), "t")["imported_unverified"], 1, "only the rotten one");
    // Restored: verified, the last mark goes.
    flip(&t.join("a"));
    let out = run(d.path(), &["verify", "-q", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(status_json(d.path(), "t")["imported_unverified"], 0);
}

#[test]
fn cshatag_attributes_import_and_an_edited_file_is_refused() {
    let d = tempdir();
    if !xattrs_work(d.path()) {
        return;
    }
    // cshatag's layout: user.shatag.sha256 (hex) and user.shatag.ts (%010d.%09d).
    let t = d.path().join("t");
    let sha256 = fixity::algo::lookup("sha256").unwrap();
    for (name, content) in [("kept", &b"kept"[..]), ("edited", b"edited")] {
        let p = write(&t, name, content);
        set_mtime(&p, fixture_time());
        xattr::set(&p, "user.shatag.sha256", sha256.digest(content).to_hex().as_bytes()).unwrap();
        xattr::set(&p, "user.shatag.ts", b"1700000000.123456789").unwrap();
    }
    set_mtime(&t.join("edited"), fixture_time() + Duration::from_secs(60));
    let args = ["import", "--from", "xattr", "--xattr-names", "shatag", "--json", "t"];
    let (listed, s, code) = json_run(d.path(), &args);
    assert_eq!(code, 1);
    assert_eq!(listed, BTreeMap::from([("edited".to_string(), "changed".to_string())]));
    assert_eq!(s["summary"]["imported"], 1);
    assert_eq!(s["algorithm"], "sha256");
    let out = run(d.path(), &["verify", "-q", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // cshatag holds SHA-256 only.
    let out =
        run(d.path(), &["import", "--from", "xattr", "--xattr-names", "shatag", "-a", "md5", "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("SHA-256"), "{}", text(&out.stderr));
}

#[test]
fn windows_streams_a_samba_server_or_ntfs_3g_shows_import_and_an_edited_file_is_refused() {
    let d = tempdir();
    if !xattrs_work(d.path()) {
        return;
    }
    // What a Windows client's RapidCRC-Unicode and TeraCopy leave on a Samba share
    // (vfs_streams_xattr: user.DosStream.NAME:$DATA, a NUL after the bytes), and what
    // ntfs-3g shows of an NTFS volume's streams (user.NAME).
    let t = d.path().join("t");
    let (md5, crc32) =
        (fixity::algo::lookup("md5").unwrap(), fixity::algo::lookup("crc32").unwrap());
    let samba = |p: &Path, stream: &str, value: &[u8]| {
        let mut v = value.to_vec();
        v.push(0);
        xattr::set(p, format!("user.DosStream.{stream}:$DATA"), &v).unwrap();
    };
    // TeraCopy's layout (MD5Stream's): the digest and the write time, 100 ns.
    let teracopy = |content: &[u8]| {
        format!(
            "MD5={}\r\nFileWriteTimeUtc=2023-11-14T22:13:20.1234567Z\r\n",
            md5.digest(content).to_hex().to_uppercase()
        )
    };
    for name in ["tera", "edited"] {
        let p = write(&t, name, name.as_bytes());
        samba(&p, "MD5", teracopy(name.as_bytes()).as_bytes());
        set_mtime(&p, fixture_time());
    }
    set_mtime(&t.join("edited"), fixture_time() + Duration::from_secs(60));
    // RapidCRC-Unicode's: the hex digest alone, a stream per algorithm.
    let p = write(&t, "rapid", b"rapid");
    samba(&p, "CRC32", crc32.digest(b"rapid").to_hex().to_uppercase().as_bytes());
    samba(&p, "MD5", md5.digest(b"rapid").to_hex().to_uppercase().as_bytes());
    let p = write(&t, "sub/ntfs-3g", b"ntfs-3g");
    xattr::set(&p, "user.MD5", md5.digest(b"ntfs-3g").to_hex().as_bytes()).unwrap();
    let p = write(&t, "blake2sp", b"blake2sp");
    samba(&p, "BLAKE2SP", &[b'a'; 64]);
    let p = write(&t, "damaged", b"damaged");
    samba(&p, "SHA1", b"not hex");
    let p = write(&t, "downloaded", b"downloaded");
    samba(&p, "Zone.Identifier", b"[ZoneTransfer]\r\nZoneId=3\r\n");

    let (listed, s, code) =
        json_run(d.path(), &["import", "--from", "streams", "-v", "--json", "t"]);
    assert_eq!(code, 1, "{listed:?} {s}");
    assert_eq!(s["algorithm"], "md5", "the algorithm most streams hold");
    assert_eq!(s["summary"]["imported"], 3, "{listed:?}");
    for (path, class) in [
        ("tera", "imported"),
        ("rapid", "imported"),
        ("sub/ntfs-3g", "imported"),
        ("edited", "changed"),
        ("blake2sp", "algorithm"),
        ("damaged", "malformed"),
        ("downloaded", "no-digest"),
    ] {
        assert_eq!(listed.get(path).map(String::as_str), Some(class), "{path}: {listed:?}");
    }
    let out = run(d.path(), &["import", "--from", "streams", "t"]);
    let said = text(&out.stdout);
    assert!(said.contains("damaged") && said.contains(":SHA1"), "{said}");
    assert!(said.contains("BLAKE2SP"), "{said}");

    // The imported digests hold: a verify reads every file and finds them as recorded.
    let out = run(d.path(), &["verify", "-q", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(status_json(d.path(), "t")["imported_unverified"], 0);

    // Only one algorithm's streams, and one no program keeps in a stream.
    let e = tempdir();
    let t2 = e.path().join("t");
    let p = write(&t2, "rapid", b"rapid");
    xattr::set(&p, "user.CRC32", crc32.digest(b"rapid").to_hex().as_bytes()).unwrap();
    xattr::set(&p, "user.MD5", md5.digest(b"rapid").to_hex().as_bytes()).unwrap();
    let (listed, s, code) =
        json_run(e.path(), &["import", "--from", "streams", "-a", "crc32", "-v", "--json", "t"]);
    assert_eq!((code, &s["algorithm"]), (0, &serde_json::json!("crc32")), "{listed:?}");
    assert_eq!(listed["rapid"], "imported");
    let out = run(e.path(), &["import", "--from", "streams", "-a", "xxh3", "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no program keeps xxh3 digests in a stream"));
}

/// `chkbit -u DIR` from the PyPI package, if it runs here.
fn chkbit(dir: &Path, algo: &str) -> bool {
    if !have("chkbit") {
        missing("chkbit", "the PyPI package chkbit is not installed");
        return false;
    }
    let out = Command::new("chkbit").args(["-u", "--algo", algo]).arg(dir).output().unwrap();
    assert!(out.status.success(), "chkbit: {}", text(&out.stderr));
    true
}

#[test]
fn chkbit_indexes_written_by_chkbit_import_with_odd_names() {
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "a", b"alpha");
    write(&t, "sub/b", b"bravo");
    write(&t, os(b"nl\nname"), b"x");
    write(&t, os(b"bad\xffname"), b"y");
    write(&t, "empty", b"");
    write(&t, "gone", b"g");
    write(&t, "grown", b"small");
    if !chkbit(&t, "md5") {
        return;
    }
    std::fs::remove_file(t.join("gone")).unwrap();
    std::fs::write(t.join("grown"), b"larger now").unwrap();
    let (listed, s, code) = json_run(d.path(), &["import", "--json", "-v", "t"]);
    assert_eq!(code, 1, "{listed:?}");
    assert_eq!(listed["gone"], "missing");
    assert_eq!(listed["grown"], "changed", "chkbit-py records no size: the mtime tells");
    for n in ["a", "sub/b", "nl\nname", "bad\u{fffd}name", "empty"] {
        assert_eq!(listed[n], "imported", "{n}");
    }
    assert_eq!(listed[".chkbit"], "no-digest");
    assert_eq!(s["summary"]["source"], "chkbit");
    assert_eq!(s["algorithm"], "md5");
    let out = run(d.path(), &["verify", "-q", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(status_json(d.path(), "t")["imported_unverified"], 0);
    // A second import finds every file already recorded.
    let (_, s, code) = json_run(d.path(), &["import", "--json", "t"]);
    assert_eq!((code, &s["summary"]["known"]), (1, &serde_json::json!(5)), "{s}");
}

#[test]
fn chkbit_atom_index_sizes_and_a_damaged_index_from_fixtures() {
    let d = tempdir();
    let t = d.path().join("t");
    for (name, content) in [("a", &b"alpha"[..]), ("sub/b", b"bravo"), ("sub/c", b"charlie")] {
        let p = write(&t, name, content);
        set_mtime(&p, fixture_time());
    }
    std::fs::copy(Path::new(FIXTURES).join("chkbit-atom.chkbit-db"), t.join(".chkbit-db")).unwrap();
    let (listed, s, code) = json_run(d.path(), &["import", "--from", "chkbit", "--json", "t"]);
    assert_eq!(code, 1);
    assert_eq!(listed, BTreeMap::from([("sub/c".to_string(), "size".to_string())]));
    assert_eq!(
        (&s["summary"]["imported"], &s["algorithm"]),
        (&serde_json::json!(2), &serde_json::json!("blake3"))
    );
    // A split-mode index whose idx_hash does not match: nothing of it is trusted.
    let d2 = tempdir();
    let u = d2.path().join("u");
    set_mtime(&write(&u, "d", b"delta"), fixture_time());
    std::fs::copy(Path::new(FIXTURES).join("chkbit-damaged.chkbit"), u.join(".chkbit")).unwrap();
    let out = run(d2.path(), &["import", "--from", "chkbit", "u"]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(report.contains("malformed   d (the index's idx_hash does not match"), "{report}");
}

#[test]
fn bitrot_database_written_by_bitrot_imports() {
    if !have("bitrot") {
        return missing("bitrot", "the PyPI package bitrot is not installed");
    }
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "a", b"alpha");
    write(&t, "sub/b", b"bravo");
    write(&t, os(b"nl\nname"), b"x");
    write(&t, "caf\u{e9}", b"NFC on disk, NFKD in bitrot's database");
    let out = Command::new("bitrot").current_dir(&t).output().unwrap();
    assert!(out.status.success(), "bitrot: {}", text(&out.stderr));
    flip(&t.join("sub/b"));
    // A database that no longer matches bitrot's own seal is not trusted.
    let seal = t.join(".bitrot.sha512");
    let sealed = std::fs::read(&seal).expect("bitrot writes .bitrot.sha512");
    std::fs::write(&seal, "0".repeat(128)).unwrap();
    let out = run(d.path(), &["import", "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("does not match its SHA-512"), "{}", text(&out.stderr));
    std::fs::write(&seal, sealed).unwrap();
    let (listed, s, code) = json_run(d.path(), &["import", "--json", "-v", "t"]);
    assert_eq!(code, 0, "{listed:?}");
    assert_eq!(s["summary"]["imported"], 4);
    assert_eq!(listed["caf\u{e9}"], "imported");
    assert_eq!(listed[".bitrot.db"], "no-digest");
    assert_eq!(s["algorithm"], "sha1");
    let (found, _, code) = json_run(d.path(), &["verify", "--json", "t"]);
    assert_eq!(code, 1);
    assert_eq!(found["sub/b"], "corrupt", "{found:?}");
}

#[test]
fn scorch_database_fixture_refuses_what_does_not_fit_and_passes_over_other_trees() {
    let d = tempdir();
    let t = d.path().join("t");
    let files: [(&[u8], &[u8]); 6] = [
        (b"a", b"alpha"),
        (b"nl\nname", b"x"),
        (b"caf\xe9", b"echo"),
        (b"h", b"hotel"),
        (b"big", b"bravo"),
        (b"s", b"sierra"),
    ];
    for (name, content) in files {
        set_mtime(&write(&t, os(name), content), fixture_time());
    }
    let root = std::fs::canonicalize(&t).unwrap();
    let csv = std::fs::read(Path::new(FIXTURES).join("scorch.csv")).unwrap();
    let db_text = replace(&csv, b"@ROOT@", root.as_os_str().as_bytes());
    let db = d.path().join("scorch.db");
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&db_text).unwrap();
    std::fs::write(&db, gz.finish().unwrap()).unwrap();
    let args =
        ["import", "--from", "scorch", "--source", "scorch.db", "-a", "md5", "--json", "-v", "t"];
    let (listed, s, code) = json_run(d.path(), &args);
    assert_eq!(code, 1, "{listed:?}");
    assert_eq!(listed["big"], "size");
    assert_eq!(listed["s"], "algorithm");
    assert_eq!(listed["gone"], "missing");
    assert!(listed.iter().any(|(p, c)| p.ends_with("/../escape") && c == "escapes"), "{listed:?}");
    assert_eq!(listed["/elsewhere/tree/f"], "elsewhere");
    for n in ["a", "nl\nname", "caf\u{fffd}", "h"] {
        assert_eq!(listed[n], "imported", "{n}");
    }
    assert_eq!(s["summary"]["elsewhere"], 1);
    let out = run(d.path(), &["verify", "-q", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn manifests_import_and_escaping_or_missing_lines_are_refused() {
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "a", b"alpha");
    write(&t, "sub/b", b"bravo");
    write(&t, os(b"nl\nname"), b"x");
    write(d.path(), "outside", b"o");
    // sha256sum writes the newline name escaped (`\` first, `\n` in the name).
    let out = Command::new("sha256sum")
        .current_dir(&t)
        .args([OsStr::new("a"), OsStr::new("sub/b"), os(b"nl\nname"), OsStr::new("../outside")])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut manifest = out.stdout;
    manifest.extend_from_slice(format!("{}  gone\n", "0".repeat(64)).as_bytes());
    // A symbolic link that leads out of the tree: the path is plain, the file is not in it.
    write(d.path(), "elsewhere/x", b"x");
    std::os::unix::fs::symlink(d.path().join("elsewhere"), t.join("link")).unwrap();
    let x = fixity::algo::lookup("sha256").unwrap().digest(b"x").to_hex();
    manifest.extend_from_slice(format!("{x}  link/x\n").as_bytes());
    manifest.extend_from_slice(b"not a checksum line\n");
    std::fs::write(d.path().join("t.sha256"), manifest).unwrap();
    let args = ["import", "--from", "manifest", "--source", "t.sha256", "--json", "t"];
    let (listed, s, code) = json_run(d.path(), &args);
    assert_eq!(code, 1);
    assert_eq!(listed["../outside"], "escapes");
    assert_eq!(listed["gone"], "missing");
    assert_eq!(listed["link/x"], "escapes");
    assert_eq!(listed.values().filter(|c| *c == "malformed").count(), 1, "{listed:?}");
    assert_eq!(s["summary"]["imported"], 3);
    assert_eq!(s["algorithm"], "sha256");
    let out = run(d.path(), &["verify", "-q", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(status_json(d.path(), "t")["imported_unverified"], 0);
}

#[test]
fn an_algorithm_the_catalog_does_not_hold_is_refused_before_anything_is_imported() {
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "a", b"alpha");
    let out = run(d.path(), &["scan", "-q", "t"]);
    assert!(out.status.success());
    let md5 = fixity::algo::lookup("md5").unwrap().digest(b"alpha").to_hex();
    std::fs::write(d.path().join("m.md5"), format!("{md5}  a\n")).unwrap();
    let out = run(d.path(), &["import", "--from", "manifest", "--source", "m.md5", "t"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("holds blake3 digests") && err.contains("md5"), "{err}");
    assert!(err.contains("--catalog NEW.db"), "{err}");
    // Into a catalog of its own it goes.
    let args = ["import", "--from", "manifest", "--source", "m.md5", "--catalog", "md5.db", "t"];
    let out = run(d.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(d.path(), &["verify", "-q", "--catalog", "md5.db", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // -a that is not the catalog's is refused too.
    let out =
        run(d.path(), &["import", "--from", "manifest", "--source", "m.md5", "-a", "md5", "t"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn xattr_names_checksum_keeps_user_checksum_up_to_date() {
    let d = tempdir();
    if !xattrs_work(d.path()) {
        return;
    }
    let t = d.path().join("t");
    let f = write(&t, "f", b"first");
    let scan = ["scan", "-q", "--store", "xattr", "--xattr-names", "checksum", "-a", "sha256", "t"];
    assert!(run(d.path(), &scan).status.success());
    let sha256 = fixity::algo::lookup("sha256").unwrap();
    let got = xattr::get(&f, "user.checksum.sha256").unwrap().unwrap();
    assert_eq!(got, sha256.digest(b"first").to_hex().into_bytes());
    // What a script reads, through getfattr.
    if have("getfattr") {
        let out = Command::new("getfattr")
            .args(["--only-values", "-n", "user.checksum.sha256"])
            .arg(&f)
            .output()
            .unwrap();
        assert_eq!(out.stdout, sha256.digest(b"first").to_hex().into_bytes());
    }
    // An edit, re-scanned: the attribute follows.
    std::fs::write(&f, b"second version").unwrap();
    set_mtime(&f, mtime(&f) + Duration::from_secs(5));
    assert!(run(d.path(), &scan).status.success());
    let got = xattr::get(&f, "user.checksum.sha256").unwrap().unwrap();
    assert_eq!(got, sha256.digest(b"second version").to_hex().into_bytes());
    // md5 for scripts that read user.checksum.md5; an earlier record of another
    // algorithm gets the attribute on its next verification.
    let g = write(&t, "g", b"gamma");
    let md5 = ["scan", "-q", "--store", "xattr", "--xattr-names", "checksum", "-a", "md5", "t"];
    assert!(run(d.path(), &md5).status.success());
    let got = xattr::get(&g, "user.checksum.md5").unwrap().unwrap();
    assert_eq!(got, fixity::algo::lookup("md5").unwrap().digest(b"gamma").to_hex().into_bytes());
    // A file recorded without the option gets the attribute when a verify finds it as
    // recorded.
    let h = write(&t, "h", b"hotel");
    assert!(run(d.path(), &["scan", "-q", "--store", "xattr", "-a", "md5", "t"]).status.success());
    assert!(xattr::get(&h, "user.checksum.md5").unwrap().is_none());
    let verify = ["verify", "-q", "--store", "xattr", "--xattr-names", "checksum", "t"];
    assert!(run(d.path(), &verify).status.success());
    let got = xattr::get(&h, "user.checksum.md5").unwrap().unwrap();
    assert_eq!(got, fixity::algo::lookup("md5").unwrap().digest(b"hotel").to_hex().into_bytes());
    // Without --store xattr the option is refused.
    let out = run(d.path(), &["scan", "--xattr-names", "checksum", "t"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn import_into_postgresql_then_verify_clears_the_mark() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "a", b"alpha");
    write(&t, os(b"nl\nname"), b"x");
    let out = Command::new("sha256sum")
        .current_dir(&t)
        .args([OsStr::new("a"), os(b"nl\nname")])
        .output()
        .unwrap();
    std::fs::write(d.path().join("m.sha256"), out.stdout).unwrap();
    let host =
        |args: &[&str]| fixity(d.path()).env("FIXITY_HOST", "h1").args(args).output().unwrap();
    let args = ["import", "--from", "manifest", "--source", "m.sha256", "--catalog", &db.url, "t"];
    let out = host(&args);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    let status = |_: ()| -> serde_json::Value {
        let out = host(&["status", "--json", "--catalog", &db.url, "t"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(status(())["imported_unverified"], 2);
    assert_eq!(status(())["algorithm"], "sha256");
    // The fleet view counts them per tree.
    let out = host(&["status", "--json", "--catalog", &db.url]);
    let fleet: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(fleet["hosts"][0]["trees"][0]["imported_unverified"], 2, "{fleet}");
    let out = host(&["status", "--catalog", &db.url]);
    assert!(text(&out.stdout).contains("imported and not yet verified 2"), "{}", text(&out.stdout));
    flip(&t.join("a"));
    let out = host(&["verify", "--catalog", &db.url, "t"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("CORRUPT     a"));
    assert_eq!(status(())["imported_unverified"], 1);
    // A database of schema 2 (before imports) is migrated by the next run that writes.
    let mut c = db.client();
    c.batch_execute(
        "ALTER TABLE fixity.files DROP COLUMN imported, DROP COLUMN ctime_ns, DROP COLUMN mode,
             DROP COLUMN uid, DROP COLUMN gid;
         DROP TABLE fixity.digests, fixity.remote_checks, fixity.proofs;
         CREATE INDEX files_by_verified ON fixity.files (tree, last_verified, path);
         ALTER TABLE fixity.trees DROP COLUMN pass_after;
         DROP INDEX fixity.files_by_listed; ALTER TABLE fixity.files DROP COLUMN listed_at;
         CREATE INDEX files_by_checked ON fixity.files (tree, last_checked);
         UPDATE fixity.meta SET value = '2' WHERE key = 'schema_version'",
    )
    .unwrap();
    let mut version = || -> String {
        let q = "SELECT value FROM fixity.meta WHERE key = 'schema_version'";
        c.query_one(q, &[]).unwrap().get(0)
    };
    // Read as it is by status and export (which change nothing).
    assert_eq!(status(())["imported_unverified"], 0);
    let out = host(&["export", "--catalog", &db.url, "t", "--format", "sha256sum"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(version(), "2");
    let out = host(&["status", "--json", "--catalog", &db.url]);
    let fleet: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(fleet["hosts"][0]["trees"][0]["imported_unverified"], 0, "{fleet}");
    let out = host(&["scan", "-q", "--catalog", &db.url, "t"]);
    assert_eq!(out.status.code(), Some(1), "the corrupt file stands; {}", text(&out.stderr));
    assert_eq!(version(), "9");
    assert_eq!(status(())["imported_unverified"], 0, "the column came back empty");
}

#[test]
fn a_source_that_cannot_be_read_is_exit_2_and_makes_no_catalog() {
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "a", b"alpha");
    for args in [
        &["import", "t"][..],
        &["import", "--from", "bitrot", "t"],
        &["import", "--from", "scorch", "t"],
        &["import", "--from", "scorch", "--source", "nothing.db", "t"],
        &["import", "--from", "manifest", "--source", "nothing.sha256", "t"],
    ] {
        let out = run(d.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stdout));
        assert!(!text(&out.stderr).is_empty(), "{args:?} says why");
        assert!(!t.join(".fixity").exists(), "{args:?} made a catalog");
    }
}
