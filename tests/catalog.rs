//! `scan`, `verify`, `status`, `export` on real trees: every classification, slices that
//! resume, crash safety under kill -9, the busy catalog, and the xattr store (with
//! cshatag's attributes).

use crate::util::{fixity, skip, tempdir, write};
use fixity::catalog::sqlite::Catalog;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, SystemTime};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn cmd_in(dir: &Path, args: &[&str]) -> Output {
    fixity(dir).args(args).output().unwrap()
}

/// Runs with --json and returns (path -> class) of every reported file, the summary, and
/// the exit code.
fn classify(dir: &Path, args: &[&str]) -> (BTreeMap<String, String>, serde_json::Value, i32) {
    let mut full = args.to_vec();
    full.push("--json");
    let out = cmd_in(dir, &full);
    let mut found = BTreeMap::new();
    let mut summary = serde_json::Value::Null;
    for line in text(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        if let Some(s) = v.get("summary") {
            summary = s.clone();
        } else {
            let path = v["path"].as_str().unwrap().to_string();
            let class = v["class"].as_str().unwrap().to_string();
            let key = match v.get("moved_from") {
                Some(from) => format!("{} -> {path}", from.as_str().unwrap()),
                None => path,
            };
            found.insert(key, class);
        }
    }
    (found, summary, out.status.code().unwrap())
}

fn set_mtime(p: &Path, t: SystemTime) {
    std::fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
}

fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn every_class_is_found_on_a_real_tree() {
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "keep", b"unchanged content");
    write(&t, "rot.bin", b"0123456789abcdef");
    write(&t, "edit.txt", b"first version");
    write(&t, "dir/old-name", b"content that moves");
    write(&t, "gone", b"deleted later");
    let (found, summary, code) = classify(d.path(), &["scan", "t"]);
    assert_eq!(code, 0);
    assert_eq!(found.values().filter(|c| *c == "new").count(), 5, "{found:?}");
    assert_eq!(summary["counts"]["new"], 5);

    // Bitrot: one byte flips, size and mtime stay.
    let rot = t.join("rot.bin");
    let before = mtime(&rot);
    std::fs::write(&rot, b"0123456789abcdeF").unwrap();
    set_mtime(&rot, before);
    // An edit: new content and a new mtime.
    std::fs::write(t.join("edit.txt"), b"second version, longer").unwrap();
    set_mtime(&t.join("edit.txt"), before + Duration::from_secs(5));
    std::fs::rename(t.join("dir/old-name"), t.join("new-name")).unwrap();
    std::fs::remove_file(t.join("gone")).unwrap();
    write(&t, "added", b"brand new");

    let (found, summary, code) = classify(d.path(), &["verify", "t"]);
    assert_eq!(
        found,
        map(&[
            ("added", "new"),
            ("dir/old-name -> new-name", "moved"),
            ("edit.txt", "modified"),
            ("gone", "missing"),
            ("rot.bin", "corrupt"),
        ])
    );
    assert_eq!(code, 1, "corruption makes the exit status 1");
    assert_eq!(summary["counts"]["ok"], 1);
    assert_eq!(summary["complete"], true);

    // The human report names the corrupt file loudly and keeps the good digest.
    let out = cmd_in(d.path(), &["verify", "t"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("CORRUPT     rot.bin (recorded "), "{stdout}");
    assert!(stdout.contains("missing     gone\n"), "{stdout}");
    let cat = Catalog::open(&t.join(".fixity/catalog.db"), false, None).unwrap();
    let row = cat.get(b"rot.bin").unwrap().unwrap();
    let algo = cat.algorithm();
    assert_eq!(row.digest, algo.digest(b"0123456789abcdef").as_bytes());
    drop(cat);

    // Restoring the file from a backup (same bytes, same mtime) makes it ok again.
    std::fs::write(&rot, b"0123456789abcdef").unwrap();
    set_mtime(&rot, before);
    let (found, _, code) = classify(d.path(), &["verify", "t"]);
    assert_eq!(code, 0);
    assert_eq!(found, map(&[("gone", "missing")]), "verify keeps reporting a missing file");
    // A scan accepts the loss; afterwards the tree is clean.
    let (found, _, _) = classify(d.path(), &["scan", "t"]);
    assert_eq!(found, map(&[("gone", "missing")]));
    let (found, summary, code) = classify(d.path(), &["verify", "t"]);
    assert_eq!((found.len(), code), (0, 0));
    assert_eq!(summary["counts"]["ok"], 5);
}

#[test]
fn a_rescan_of_an_unchanged_tree_reads_nothing() {
    let d = tempdir();
    for i in 0..50 {
        write(d.path(), format!("t/d{}/f{i}", i % 5), format!("file {i}").as_bytes());
    }
    let (_, s, _) = classify(d.path(), &["scan", "t"]);
    assert_eq!(s["files_read"], 50);
    let (found, s, code) = classify(d.path(), &["scan", "t"]);
    assert_eq!((found.len(), code), (0, 0));
    assert_eq!(s["files_read"], 0, "unchanged files are only statted");
    assert_eq!(s["counts"]["ok"], 50);
}

/// Which files a run looked at: rows whose last-checked time moved.
fn checked_times(catalog: &Path) -> BTreeMap<Vec<u8>, i64> {
    let cat = Catalog::open(catalog, false, None).unwrap();
    let r = cat.reader().unwrap();
    r.by_path(None, 100_000).unwrap().into_iter().map(|row| (row.path, row.last_checked)).collect()
}

#[test]
fn slices_resume_and_cover_every_file_once() {
    let d = tempdir();
    for i in 0..23 {
        write(d.path(), format!("t/f{i:02}"), &[i as u8; 1000]);
    }
    assert!(cmd_in(d.path(), &["scan", "-q", "t"]).status.success());
    let catalog = d.path().join("t/.fixity/catalog.db");
    let mut seen: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
    let mut before = checked_times(&catalog);
    let mut slices = 0;
    loop {
        slices += 1;
        assert!(slices < 20, "slices never finished");
        let (_, s, code) = classify(d.path(), &["verify", "--max-bytes", "4K", "t"]);
        assert_eq!(code, 0);
        let after = checked_times(&catalog);
        let touched: Vec<_> = after
            .iter()
            .filter(|(p, t)| before.get(*p) != Some(t))
            .map(|(p, _)| p.clone())
            .collect();
        assert!(!touched.is_empty(), "a slice makes progress");
        assert!(touched.len() <= 5, "a 4 KiB slice of 1000-byte files stops after at most 5");
        for p in touched {
            *seen.entry(p).or_default() += 1;
        }
        before = after;
        if s["complete"] == true {
            assert_eq!(s["remaining_files"], 0);
            break;
        }
        assert_eq!(s["stopped_by"], "max-bytes");
    }
    assert_eq!(seen.len(), 23, "every file verified");
    assert!(seen.values().all(|&n| n == 1), "no file verified twice in one pass: {seen:?}");
    // The next slice starts a new pass.
    let (_, s, _) = classify(d.path(), &["verify", "--max-bytes", "4K", "t"]);
    assert_eq!(s["counts"]["ok"], 5);
    let status = text(&cmd_in(d.path(), &["status", "t"]).stdout);
    assert!(status.contains("pass:      in progress since"), "{status}");
    assert!(status.contains("18 files"), "{status}");
}

#[test]
fn a_duration_budget_stops_a_slice() {
    let d = tempdir();
    for i in 0..5 {
        write(d.path(), format!("t/f{i}"), b"x");
    }
    cmd_in(d.path(), &["scan", "-q", "t"]);
    let (_, s, _) = classify(d.path(), &["verify", "--max-duration", "0s", "t"]);
    assert_eq!(s["stopped_by"], "max-duration");
    assert_eq!(s["complete"], false);
    assert_eq!(s["remaining_files"], 5);
    let out = cmd_in(d.path(), &["verify", "--max-duration", "soon", "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("bad --max-duration"));
}

#[test]
fn export_writes_a_manifest_that_checks() {
    let d = tempdir();
    write(d.path(), "t/a b", b"one");
    write(d.path(), "t/back\\slash", b"two");
    write(d.path(), "t/sub/c", b"three");
    assert!(cmd_in(d.path(), &["scan", "-q", "-a", "sha256", "t"]).status.success());
    let out = cmd_in(d.path(), &["export", "--format", "sha256sum", "-o", "t.sha256", "t"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let manifest = std::fs::read_to_string(d.path().join("t.sha256")).unwrap();
    assert_eq!(manifest.lines().count(), 3);
    assert!(manifest.starts_with('\\') || manifest.contains("\n\\"), "escaped name: {manifest}");
    let check = fixity(&d.path().join("t")).args(["check", "../t.sha256"]).output().unwrap();
    assert!(check.status.success(), "{}{}", text(&check.stdout), text(&check.stderr));
    let wrong = cmd_in(d.path(), &["export", "--format", "md5sum", "t"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(text(&wrong.stderr).contains("holds sha256 digests"));
    let bsd = text(&cmd_in(d.path(), &["export", "--format", "bsd", "t"]).stdout);
    assert!(bsd.contains("SHA256 (sub/c) = "));
}

#[test]
fn status_summarizes_the_catalog() {
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    write(d.path(), "t/b", b"22");
    let verify = cmd_in(d.path(), &["verify", "t"]);
    assert_eq!(verify.status.code(), Some(2));
    assert!(text(&verify.stderr).contains("run `fixity scan` first"));
    assert!(
        !d.path().join("t/.fixity").exists(),
        "a verify without a catalog leaves the tree alone"
    );
    let none = cmd_in(d.path(), &["status", "t"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none.stderr).contains("run `fixity scan` first"));
    cmd_in(d.path(), &["scan", "-q", "t"]);
    let out = text(&cmd_in(d.path(), &["status", "t"]).stdout);
    assert!(out.contains("files:     2 (3 B), 0 missing"), "{out}");
    assert!(out.contains("(blake3)"), "{out}");
    assert!(out.contains("run:       scan"), "{out}");
    let json: serde_json::Value =
        serde_json::from_slice(&cmd_in(d.path(), &["status", "--json", "t"]).stdout).unwrap();
    assert_eq!(json["files"], 2);
    assert_eq!(json["algorithm"], "blake3");
}

#[test]
fn excluded_and_ignored_paths_are_neither_recorded_nor_missing() {
    let d = tempdir();
    write(d.path(), "t/keep", b"k");
    write(d.path(), "t/cache/x.tmp", b"t");
    write(d.path(), "t/build/out.o", b"o");
    write(d.path(), "t/.fixityignore", b"# generated files\nbuild\n");
    let (found, _, _) = classify(d.path(), &["scan", "--exclude", "*.tmp", "t"]);
    assert_eq!(found, map(&[(".fixityignore", "new"), ("keep", "new")]));
    // Dropping the --exclude later makes the file new; it never shows as missing.
    let (found, _, _) = classify(d.path(), &["scan", "t"]);
    assert_eq!(found, map(&[("cache/x.tmp", "new")]));
    let (found, _, _) = classify(d.path(), &["scan", "--exclude", "cache", "t"]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn modify_window_tolerates_coarse_mtimes() {
    let d = tempdir();
    let f = write(d.path(), "t/f", b"same bytes");
    cmd_in(d.path(), &["scan", "-q", "t"]);
    set_mtime(&f, mtime(&f) + Duration::from_secs(1));
    let (found, _, _) = classify(d.path(), &["verify", "--modify-window", "2", "t"]);
    assert!(found.is_empty(), "within the window: {found:?}");
    let (found, _, _) = classify(d.path(), &["verify", "t"]);
    assert_eq!(found, map(&[("f", "modified")]));
}

#[test]
fn non_utf8_and_newline_names_round_trip_through_the_catalog() {
    use std::os::unix::ffi::OsStrExt;
    let d = tempdir();
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    std::fs::write(t.join(std::ffi::OsStr::from_bytes(b"bad\xffname")), b"a").unwrap();
    std::fs::write(t.join("two\nlines"), b"b").unwrap();
    cmd_in(d.path(), &["scan", "-q", "t"]);
    let out = cmd_in(d.path(), &["verify", "t"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("ok 2"), "{}", text(&out.stdout));
    let cat = Catalog::open(&t.join(".fixity/catalog.db"), false, None).unwrap();
    assert!(cat.get(b"bad\xffname").unwrap().is_some());
    assert!(cat.get(b"two\nlines").unwrap().is_some());
}

#[test]
fn a_busy_catalog_is_reported_not_corrupted() {
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    cmd_in(d.path(), &["scan", "-q", "t"]);
    let lock =
        fixity::catalog::RunLock::acquire(&d.path().join("t/.fixity/catalog.db.lock"), false)
            .unwrap()
            .unwrap();
    let out = cmd_in(d.path(), &["verify", "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is busy"), "{}", text(&out.stderr));
    // With --wait the second run queues and finishes once the first lets go.
    let mut waiting = fixity(d.path()).args(["verify", "--wait", "t"]).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(waiting.try_wait().unwrap().is_none(), "still waiting for the lock");
    drop(lock);
    assert!(waiting.wait().unwrap().success());
}

#[test]
fn unreadable_files_and_directories_are_reported_not_missing() {
    let d = tempdir();
    write(d.path(), "t/ok", b"fine");
    let secret = write(d.path(), "t/secret", b"hidden");
    write(d.path(), "t/locked/inner", b"inside");
    let Some(mut first) = crate::util::unprivileged(d.path()) else {
        skip("unreadable files", "running as root and cannot switch to nobody here");
        return;
    };
    assert!(first.args(["scan", "-q", "t"]).status().unwrap().success());
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(d.path().join("t/locked"), std::fs::Permissions::from_mode(0o000))
        .unwrap();
    let out = crate::util::unprivileged(d.path()).unwrap().args(["verify", "t"]).output().unwrap();
    std::fs::set_permissions(d.path().join("t/locked"), std::fs::Permissions::from_mode(0o755))
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("unreadable  locked: Permission denied"), "{stdout}");
    assert!(stdout.contains("unreadable  locked/inner: directory unreadable"), "{stdout}");
    assert!(stdout.contains("unreadable  secret: Permission denied"), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("missing")), "{stdout}");
}

/// Makes a tree big enough that a scan takes a while.
fn many_files(root: &Path, n: usize) {
    for i in 0..n {
        let data: Vec<u8> = (0..4096u32).map(|j| (j as usize * 31 + i * 7) as u8).collect();
        write(root, format!("d{:02}/f{i:05}", i % 40), &data);
    }
}

fn rows(catalog: &Path) -> Vec<(Vec<u8>, u64, i128, Vec<u8>)> {
    let cat = Catalog::open(catalog, false, None).unwrap();
    assert_eq!(cat.integrity_check().unwrap(), "ok");
    let r = cat.reader().unwrap();
    r.by_path(None, 1_000_000)
        .unwrap()
        .into_iter()
        .filter(|row| row.missing_since.is_none())
        .map(|row| (row.path, row.stamp.size, row.stamp.mtime_ns, row.digest))
        .collect()
}

#[test]
fn kill_9_at_any_moment_leaves_a_catalog_that_converges() {
    let d = tempdir();
    let t = d.path().join("t");
    many_files(&t, 3000);
    // The reference: one uninterrupted scan into a catalog outside the tree.
    let reference = d.path().join("reference.db");
    let out = cmd_in(d.path(), &["scan", "-q", "-a", "sha256", "--catalog", "reference.db", "t"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let want = rows(&reference);
    assert_eq!(want.len(), 3000);

    let catalog = d.path().join("killed.db");
    let mut interrupted = 0;
    for delay_ms in [5u64, 20, 60, 150, 400] {
        let mut child = fixity(d.path())
            .args(["scan", "-q", "-a", "sha256", "--catalog", "killed.db", "-j", "1", "t"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL
        let status = child.wait().unwrap();
        if status.code().is_none() {
            interrupted += 1;
        }
        // Opens (or was never completed: killed inside the creating transaction), passes
        // integrity_check, holds only complete rows.
        match Catalog::open(&catalog, false, None) {
            Err(fixity::catalog::sqlite::CatalogError::NotFound(_)) => continue,
            Err(e) => panic!("catalog does not open after kill -9: {e}"),
            Ok(cat) => assert_eq!(cat.integrity_check().unwrap(), "ok"),
        }
        {
            let partial = rows(&catalog);
            assert!(partial.iter().all(|r| want.contains(r)), "only finished rows");
        }
    }
    // Also kill a verify in the middle.
    let mut child = fixity(d.path())
        .args(["verify", "-q", "--catalog", "killed.db", "-j", "1", "t"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let _ = child.kill();
    child.wait().unwrap();
    assert!(interrupted >= 1, "at least one run was killed mid-way");
    let out = cmd_in(d.path(), &["scan", "-q", "-a", "sha256", "--catalog", "killed.db", "t"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = rows(&catalog);
    assert_eq!(got.len(), want.len());
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        let (g, w) = (&got[i], &want[i]);
        panic!(
            "rerun differs at {}: size {} vs {}, mtime {} vs {}, digest equal {}",
            text(&g.0),
            g.1,
            w.1,
            g.2,
            w.2,
            g.3 == w.3
        );
    }
    let out = cmd_in(d.path(), &["verify", "-q", "--catalog", "killed.db", "t"]);
    assert!(out.status.success(), "{}", text(&out.stdout));
}

/// Whether the file system under `dir` takes user xattrs.
fn xattrs_work(dir: &Path) -> bool {
    let p = dir.join(".probe");
    std::fs::write(&p, b"").unwrap();
    let ok = xattr::set(&p, "user.test", b"1").is_ok();
    std::fs::remove_file(&p).unwrap();
    ok
}

#[test]
fn xattr_store_round_trips_and_reads_cshatag_attributes() {
    let d = tempdir();
    if !xattrs_work(d.path()) {
        skip("xattr store", "the test directory's file system has no user xattrs");
        return;
    }
    let t = d.path().join("t");
    let a = write(&t, "a", b"alpha");
    let b = write(&t, "b", b"bravo");
    let (found, _, code) = classify(d.path(), &["scan", "--store", "xattr", "t"]);
    assert_eq!((found, code), (map(&[("a", "new"), ("b", "new")]), 0));
    assert!(!t.join(".fixity").exists(), "no catalog with the xattr store");
    let blake3 = fixity::algo::lookup("blake3").unwrap();
    let stored = xattr::get(&a, "user.fixity.blake3").unwrap().unwrap();
    assert_eq!(stored, blake3.digest(b"alpha").to_hex().into_bytes());
    let ts = text(&xattr::get(&a, "user.fixity.ts").unwrap().unwrap());
    assert_eq!(ts.len(), 20, "cshatag's %010d.%09d layout: {ts}");

    // Bitrot under xattrs.
    let before = mtime(&b);
    std::fs::write(&b, b"brav0").unwrap();
    set_mtime(&b, before);
    let (found, _, code) = classify(d.path(), &["verify", "--store", "xattr", "t"]);
    assert_eq!((found, code), (map(&[("b", "corrupt")]), 1));

    // A file cshatag tagged: its sha256 and timestamp are used without a re-hash
    // decision of our own; fixity adds its own record beside them.
    let c = write(&t, "c", b"charlie");
    let sha256 = fixity::algo::lookup("sha256").unwrap();
    let md = std::fs::metadata(&c).unwrap();
    use std::os::unix::fs::MetadataExt;
    let shatag_ts = format!("{:010}.{:09}", md.mtime(), md.mtime_nsec());
    xattr::set(&c, "user.shatag.sha256", sha256.digest(b"charlie").to_hex().as_bytes()).unwrap();
    xattr::set(&c, "user.shatag.ts", shatag_ts.as_bytes()).unwrap();
    std::fs::write(&b, b"bravo").unwrap();
    set_mtime(&b, before);
    let (found, s, code) = classify(d.path(), &["verify", "--store", "xattr", "t"]);
    assert_eq!((found.len(), code), (0, 0), "{found:?}");
    assert_eq!(s["counts"]["ok"], 3);
    assert!(xattr::get(&c, "user.fixity.sha256").unwrap().is_some());
    // cshatag-tagged content that rotted is corrupt too.
    let (d2, t2) = (tempdir(), "u");
    let e = write(d2.path(), format!("{t2}/e"), b"echo");
    let md = std::fs::metadata(&e).unwrap();
    let ts = format!("{:010}.{:09}", md.mtime(), md.mtime_nsec());
    xattr::set(&e, "user.shatag.sha256", sha256.digest(b"ECHO").to_hex().as_bytes()).unwrap();
    xattr::set(&e, "user.shatag.ts", ts.as_bytes()).unwrap();
    let (found, _, code) = classify(d2.path(), &["verify", "--store", "xattr", t2]);
    assert_eq!((found, code), (map(&[("e", "corrupt")]), 1));
}

#[test]
fn xattr_slices_resume_from_a_cursor() {
    let d = tempdir();
    if !xattrs_work(d.path()) {
        skip("xattr slices", "the test directory's file system has no user xattrs");
        return;
    }
    for i in 0..7 {
        write(d.path(), format!("t/f{i}"), &[b'x'; 1000]);
    }
    cmd_in(d.path(), &["scan", "-q", "--store", "xattr", "t"]);
    let mut total = 0;
    for round in 0..5 {
        let (_, s, _) =
            classify(d.path(), &["verify", "--store", "xattr", "--max-bytes", "2500", "t"]);
        total += s["counts"]["ok"].as_u64().unwrap();
        if s["complete"] == true {
            assert_eq!(total, 7, "round {round}");
            return;
        }
    }
    panic!("slices never completed");
}

#[test]
fn xattr_store_on_a_file_system_without_xattrs_names_it() {
    // /proc takes no user xattrs; a directory in it shows the message.
    let out = cmd_in(Path::new("/"), &["scan", "--store", "xattr", "/proc/self/fdinfo"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("does not support user extended attributes"), "{err}");
    assert!(err.contains("proc"), "names the file system: {err}");
}

#[test]
fn a_scan_of_an_emptied_tree_keeps_the_records() {
    // An unmounted file system shows an empty mount point: a scan must not forget all.
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    write(d.path(), "t/sub/b", b"2");
    let catalog = d.path().join("c.db");
    assert!(cmd_in(d.path(), &["scan", "-q", "--catalog", "c.db", "t"]).status.success());
    std::fs::remove_file(d.path().join("t/a")).unwrap();
    std::fs::remove_dir_all(d.path().join("t/sub")).unwrap();
    let out = cmd_in(d.path(), &["scan", "--catalog", "c.db", "t"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("every recorded file is missing"), "{}", text(&out.stderr));
    let cat = Catalog::open(&catalog, false, None).unwrap();
    assert_eq!(cat.missing().unwrap().len(), 2, "still on record");
    drop(cat);
    // Once one file is back, the scan forgets the rest as usual.
    write(d.path(), "t/a", b"1");
    let out = cmd_in(d.path(), &["scan", "--catalog", "c.db", "t"]);
    assert!(out.status.success());
    let cat = Catalog::open(&catalog, false, None).unwrap();
    assert!(cat.missing().unwrap().is_empty());
}
