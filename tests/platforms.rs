//! What must hold on every system fixity builds for (Linux, Windows, macOS): names in
//! manifests and catalogs with `/` and in UTF-8, a manifest written on one system checked
//! on another byte for byte, paths past Windows' 260 characters, rot and edits told apart,
//! a file another program holds exclusively. The test binary of its own, so the Windows
//! build runs it under Wine in CI (`.ci/windows-tests`) while the Unix-only suite
//! (tests/integration.rs) does not build there. See docs/platforms.md.

use fixity::algo;
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn fixity(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fixity"));
    cmd.current_dir(dir).env("LC_ALL", "C.UTF-8").stdin(Stdio::null());
    cmd
}

fn run<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(dir: &Path, args: I) -> Output {
    fixity(dir).args(args).output().expect("run fixity")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn sha256(data: &[u8]) -> String {
    algo::lookup("sha256").unwrap().digest(data).to_hex()
}

fn write(root: &Path, rel: &str, data: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, data).unwrap();
}

/// Whether this Windows process runs under Wine (whose alternate data streams and
/// sharing rules are not Windows'): Wine shows the Unix root as drive Z:.
#[cfg(windows)]
fn under_wine() -> bool {
    Path::new("Z:/proc/self").exists()
}

/// A tree with nested directories and names in several scripts (NFC, as typed).
fn tree(root: &Path) -> Vec<(&'static str, &'static [u8])> {
    let files: Vec<(&str, &[u8])> = vec![
        ("photos/a.txt", b"hello\n"),
        ("photos/sub/b.txt", b"world\n"),
        ("photos/\u{e9}t\u{e9}.txt", b"summer\n"),
        ("photos/\u{65e5}\u{672c}/\u{5199}\u{771f}.jpg", b"\xff\xd8\xff"),
        ("photos/empty", b""),
    ];
    for (rel, data) in &files {
        write(root, rel, data);
    }
    files
}

/// The manifest `sha256sum` writes on Linux for [`tree`]'s files, in walk order.
fn linux_manifest(files: &[(&str, &[u8])]) -> String {
    let mut lines: Vec<(&str, String)> =
        files.iter().map(|(rel, data)| (*rel, format!("{}  {rel}\n", sha256(data)))).collect();
    lines.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    lines.into_iter().map(|(_, l)| l).collect()
}

#[test]
fn a_manifest_names_files_with_slashes_and_in_utf8_as_on_linux() {
    let d = tempfile::tempdir().unwrap();
    let files = tree(d.path());
    let out = run(d.path(), ["hash", "-a", "sha256", "-r", "photos", "-o", "photos.sha256"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(d.path().join("photos.sha256")).unwrap();
    assert_eq!(written, linux_manifest(&files));
}

#[test]
fn a_manifest_written_on_linux_checks_here_and_finds_a_changed_file() {
    let d = tempfile::tempdir().unwrap();
    let files = tree(d.path());
    std::fs::write(d.path().join("linux.sha256"), linux_manifest(&files)).unwrap();
    let out = run(d.path(), ["check", "linux.sha256"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    for (rel, _) in &files {
        assert!(said.contains(&format!("{rel}: OK\n")), "{rel} in {said}");
    }
    write(d.path(), "photos/sub/b.txt", b"World\n");
    let out = run(d.path(), ["check", "linux.sha256"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("photos/sub/b.txt: FAILED\n"), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("WARNING: 1 computed checksum did NOT match"));
}

#[test]
fn a_manifest_from_a_mac_names_files_in_nfd_and_they_are_found() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "caf\u{e9}/cr\u{e8}me.txt", b"brulee\n");
    // As a Mac wrote it: both names decomposed (e + U+0301, e + U+0300).
    let mac = format!("{}  cafe\u{301}/cre\u{300}me.txt\n", sha256(b"brulee\n"));
    std::fs::write(d.path().join("mac.sha256"), mac).unwrap();
    let out = run(d.path(), ["check", "mac.sha256"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "cafe\u{301}/cre\u{300}me.txt: OK\n");
}

#[test]
fn paths_past_260_characters_are_hashed_scanned_and_verified() {
    let d = tempfile::tempdir().unwrap();
    let deep: String =
        (0..12).map(|i| format!("directory-number-{i:02}-of-a-deep-tree/")).collect();
    let rel = format!("long/{deep}file-at-the-bottom.txt");
    assert!(d.path().join(&rel).as_os_str().len() > 300);
    write(d.path(), &rel, b"deep\n");
    let out = run(d.path(), ["hash", "-a", "sha256", "-r", "long"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{}  {rel}\n", sha256(b"deep\n")));
    let out = run(d.path(), ["scan", "long"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(d.path(), ["verify", "long"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("ok 1,"), "{}", text(&out.stdout));
}

/// Writes `data` over `rel` and puts its modification time back: rot as size and mtime
/// see it (ctimes are not trusted here: `FIXITY_CTIME=ignore`, and Windows has none).
fn rot(root: &Path, rel: &str, data: &[u8]) {
    let p = root.join(rel);
    let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
    std::fs::write(&p, data).unwrap();
    std::fs::File::options().write(true).open(&p).unwrap().set_modified(mtime).unwrap();
}

#[test]
fn verify_tells_rot_from_an_edit_with_names_as_recorded() {
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    let scan = run(d.path(), ["scan", "photos"]);
    assert!(scan.status.success(), "{}", text(&scan.stderr));
    rot(d.path(), "photos/\u{e9}t\u{e9}.txt", b"SUMMER\n");
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(d.path(), "photos/sub/b.txt", b"an edit\n");
    let out = fixity(d.path()).args(["verify", "photos"]).env("FIXITY_CTIME", "ignore").output();
    let out = out.unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("CORRUPT     \u{e9}t\u{e9}.txt"), "{said}");
    assert!(said.contains("modified    sub/b.txt"), "{said}");
    assert!(said.contains("CORRUPT 1,"), "{said}");
}

/// A file another program opened without sharing it: unreadable (in use), kept on
/// record, read again next run; never CORRUPT.
#[cfg(windows)]
#[test]
fn a_file_another_program_holds_is_unreadable_kept_and_read_again() {
    use std::os::windows::fs::OpenOptionsExt;
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    assert!(run(d.path(), ["scan", "photos"]).status.success());
    let held = std::fs::OpenOptions::new()
        .read(true)
        .share_mode(0)
        .open(d.path().join("photos/a.txt"))
        .unwrap();
    let out = run(d.path(), ["verify", "photos"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let said = text(&out.stdout);
    assert!(said.contains("unreadable  a.txt"), "{said}");
    assert!(said.contains("in use"), "{said}");
    assert!(!said.contains("CORRUPT     a.txt"), "{said}");
    drop(held);
    let out = run(d.path(), ["verify", "photos"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// Paths typed the Windows way: `\` between names, wildcards fixity expands.
#[cfg(windows)]
#[test]
fn backslashes_and_wildcards_typed_on_windows() {
    let d = tempfile::tempdir().unwrap();
    let files = tree(d.path());
    let out = run(d.path(), ["hash", "-a", "sha256", "-r", r"photos\sub"]);
    assert_eq!(text(&out.stdout), format!("{}  photos/sub/b.txt\n", sha256(b"world\n")));
    let out = run(d.path(), ["hash", "-a", "sha256", r"photos\*.TXT"]);
    let want: String = files
        .iter()
        .filter(|(rel, _)| rel.matches('/').count() == 1 && rel.ends_with(".txt"))
        .map(|(rel, data)| format!("{}  {rel}\n", sha256(data)))
        .collect();
    assert_eq!(text(&out.stdout), want);
    std::fs::write(d.path().join("photos.sha256"), linux_manifest(&files)).unwrap();
    let out = run(d.path(), ["check", "*.sha256"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// The xattr store keeps its records in alternate data streams on Windows; a file
/// system that does not keep them (Wine's, FAT) is refused with the reason.
#[cfg(windows)]
#[test]
fn the_attribute_store_keeps_streams_or_says_why_not() {
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    // `ads` is the Windows name of the same store.
    let out = run(d.path(), ["scan", "--store", "ads", "photos"]);
    if under_wine() {
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains("does not keep alternate data streams"));
        return;
    }
    assert!(out.status.success(), "{}", text(&out.stderr));
    rot(d.path(), "photos/a.txt", b"HELLO\n");
    let out = run(d.path(), ["verify", "--store", "xattr", "photos"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("CORRUPT     a.txt"), "{}", text(&out.stdout));
}

/// A tree on a share, named by its UNC path (`\\server\share\...`, as a NAS is mapped):
/// hashed with the names as typed (`//server/share/...` in the manifest), the manifest
/// checked, the tree scanned and verified with its catalog on the share, a rot found.
/// `FIXITY_TEST_UNC` names a writable share directory: `.ci/windows-tests` points
/// `\\fixity-ci\share` at a directory through the Wine prefix's `dosdevices/unc`; on a
/// real Windows any share will do. Without it the test says so (and fails in CI).
#[cfg(windows)]
#[test]
fn a_tree_on_a_share_named_by_its_unc_path() {
    let Some(share) = std::env::var_os("FIXITY_TEST_UNC") else {
        let why = "FIXITY_TEST_UNC names no share (\\\\server\\share) to test on";
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("skipped: {why}");
        return;
    };
    let share = share.to_str().expect("FIXITY_TEST_UNC is text").trim_end_matches('\\').to_string();
    assert!(share.starts_with(r"\\"), "FIXITY_TEST_UNC={share} is not a UNC path");
    let top = format!(r"{share}\fixity-test-{}", std::process::id());
    let root = format!(r"{top}\photos");
    let files =
        [("a.txt", &b"hello\n"[..]), ("sub/b.txt", b"world\n"), ("\u{e9}t\u{e9}.txt", b"summer\n")];
    for (rel, data) in files {
        write(Path::new(&root), rel, data);
    }
    let local = tempfile::tempdir().unwrap();
    let shown = root.replace('\\', "/");

    let out = run(local.path(), ["hash", "-a", "sha256", "-r", &root]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut want: Vec<String> =
        files.iter().map(|(rel, data)| format!("{}  {shown}/{rel}\n", sha256(data))).collect();
    want.sort_by(|a, b| a.as_bytes()[66..].cmp(&b.as_bytes()[66..]));
    assert_eq!(text(&out.stdout), want.concat(), "names as typed, with /");
    std::fs::write(local.path().join("share.sha256"), &out.stdout).unwrap();
    let out = run(local.path(), ["check", "share.sha256"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));

    let out = run(local.path(), ["scan", &root]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(Path::new(&format!(r"{root}\.fixity\catalog.db")).is_file(), "catalog on the share");
    rot(Path::new(&root), "a.txt", b"HELLO\n");
    let out = fixity(local.path()).args(["verify", &root]).env("FIXITY_CTIME", "ignore").output();
    let out = out.unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("CORRUPT     a.txt"), "{}", text(&out.stdout));
    std::fs::remove_dir_all(&top).unwrap();
}

/// The rest of the command line works here as on Linux: recovery data made and a rotted
/// file rebuilt from it byte for byte (`protect`, `repair`), a bag made and validated,
/// the report page written, the algorithms benchmarked.
#[test]
fn recovery_bags_reports_and_benchmarks_work_here() {
    let d = tempfile::tempdir().unwrap();
    let files = tree(d.path());
    let ok = |out: Output| {
        assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
        out
    };
    ok(run(d.path(), ["scan", "-q", "photos"]));
    ok(run(d.path(), ["protect", "-q", "photos"]));
    rot(d.path(), "photos/sub/b.txt", b"WORLD\n");
    // (By size and mtime: `rot` moves the ctime on Unix, which would make it CHANGED.)
    let by_mtime =
        |args: &[&str]| fixity(d.path()).args(args).env("FIXITY_CTIME", "ignore").output().unwrap();
    let out = by_mtime(&["verify", "photos"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("CORRUPT     sub/b.txt"), "{}", text(&out.stdout));
    let out = ok(by_mtime(&["repair", "photos"]));
    assert!(
        text(&out.stdout).contains("1 repaired (1 from recovery data"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(std::fs::read(d.path().join("photos/sub/b.txt")).unwrap(), b"world\n");
    ok(by_mtime(&["verify", "photos"]));

    ok(run(d.path(), ["report", "--html", "report.html", "photos"]));
    let page = std::fs::read_to_string(d.path().join("report.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("photos"), "{}", &page[..200]);

    let bag = d.path().join("bag");
    for (rel, data) in &files {
        write(&bag, rel, data);
    }
    ok(run(d.path(), ["bag", "create", "bag"]));
    ok(run(d.path(), ["bag", "check", "bag"]));
    std::fs::write(bag.join("data/photos/a.txt"), b"changed\n").unwrap();
    let out = run(d.path(), ["bag", "check", "bag"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));

    let out = ok(run(
        d.path(),
        ["bench", "algorithms", "-a", "blake3,crc32c", "--sizes", "64Ki", "--runs", "1"],
    ));
    assert!(text(&out.stdout).contains("blake3"), "{}", text(&out.stdout));
}

/// A PostgreSQL catalog holds a tree of this system's as it holds a Linux one: scanned,
/// a rot found by a verify, the state listed by `status`. `FIXITY_TEST_PG` names a
/// database (`.ci/windows-tests` starts a throwaway server for the Windows build under
/// Wine); without it the test says so (and fails in CI).
#[test]
fn a_postgresql_catalog_holds_a_tree_here() {
    let Some(url) = std::env::var_os("FIXITY_TEST_PG") else {
        // (On Linux, tests/fleet.rs runs every catalog case on a server of its own.)
        let why = "FIXITY_TEST_PG names no PostgreSQL database to test with";
        assert!(std::env::var_os("CI").is_none() || cfg!(unix), "{why}");
        eprintln!("skipped: {why}");
        return;
    };
    let url = url.to_str().expect("FIXITY_TEST_PG is text").to_string();
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    let catalog = ["--catalog", url.as_str()];
    let out = run(d.path(), [&["scan", "-q"][..], &catalog, &["photos"]].concat());
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    rot(d.path(), "photos/a.txt", b"HELLO\n");
    let out = fixity(d.path())
        .args([&["verify"][..], &catalog, &["photos"]].concat())
        .env("FIXITY_CTIME", "ignore")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("CORRUPT     a.txt"), "{}", text(&out.stdout));
    let out = run(d.path(), [&["status"][..], &catalog, &["photos"]].concat());
    assert!(text(&out.stdout).contains("corrupt 1"), "{}", text(&out.stdout));
}
