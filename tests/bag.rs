//! `fixity bag create|check` (BagIt, RFC 8493): odd names, tampering, missing and extra
//! files, escaping paths, fast mode, and bagit-python both ways when it is installed.

use crate::util;
use std::path::Path;
use std::process::{Command, Output};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A directory with awkward names, made into a bag with `args`.
fn make_bag(dir: &Path, names: &[&str], args: &[&str]) {
    for (i, n) in names.iter().enumerate() {
        util::write(dir, Path::new("bag").join(n), format!("content {i}\n").as_bytes());
    }
    let mut a = vec!["bag", "create"];
    a.extend_from_slice(args);
    a.push("bag");
    let out = util::run(dir, a);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

const ODD: &[&str] =
    &["plain.txt", "sp ace", "new\nline", "cr\rname", "50%", "pct%0A", "sub/deep/x"];

fn check(dir: &Path, extra: &[&str]) -> Output {
    let mut a = vec!["bag", "check"];
    a.extend_from_slice(extra);
    a.push("bag");
    util::run(dir, a)
}

#[test]
fn create_then_check_with_odd_names() {
    let tmp = util::tempdir();
    let d = tmp.path();
    make_bag(d, ODD, &["--info", "Contact-Name=Jo Smith"]);
    for n in ODD {
        assert!(d.join("bag/data").join(n).is_file(), "{n} moved into data/");
    }
    let sha = std::fs::read_to_string(d.join("bag/manifest-sha256.txt")).unwrap();
    assert_eq!(sha.lines().count(), ODD.len());
    assert!(sha.contains("  data/new%0Aline\n") && sha.contains("  data/cr%0Dname\n"), "{sha}");
    assert!(sha.contains("  data/50%25\n") && sha.contains("  data/pct%250A\n"), "{sha}");
    assert_eq!(
        std::fs::read_to_string(d.join("bag/bagit.txt")).unwrap(),
        "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
    );
    let info = std::fs::read_to_string(d.join("bag/bag-info.txt")).unwrap();
    let bytes: usize = (0..ODD.len()).map(|i| format!("content {i}\n").len()).sum();
    assert!(info.contains(&format!("\nPayload-Oxum: {bytes}.{}\n", ODD.len())), "{info}");
    assert!(
        info.contains("\nBagging-Date: 20") && info.ends_with("Contact-Name: Jo Smith\n"),
        "{info}"
    );
    for t in ["tagmanifest-sha256.txt", "tagmanifest-sha512.txt", "manifest-sha512.txt"] {
        assert!(d.join("bag").join(t).is_file(), "{t}");
    }
    let tags = std::fs::read_to_string(d.join("bag/tagmanifest-sha512.txt")).unwrap();
    assert_eq!(tags.lines().count(), 4, "{tags}");

    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "bag: valid ({} payload files, {bytes} bytes, {} files verified with sha256, sha512)\n",
            ODD.len(),
            ODD.len() + 4
        )
    );
    let fast = check(d, &["--fast"]);
    assert_eq!(fast.status.code(), Some(0));
    assert!(text(&fast.stdout).contains("valid (fast: Payload-Oxum"));
    // Bagging twice is refused.
    let again = util::run(d, ["bag", "create", "bag"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("already a bag"));
}

#[test]
fn tampered_missing_and_extra_files() {
    let tmp = util::tempdir();
    let d = tmp.path();
    make_bag(d, &["a", "b", "c"], &["-a", "sha256"]);
    util::write(d, "bag/data/a", b"CONTENT 0\n");
    std::fs::remove_file(d.join("bag/data/b")).unwrap();
    util::write(d, "bag/data/extra", b"x");
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("bag/manifest-sha256.txt: 1: data/a: sha256 digest does not match (expected "),
        "{err}"
    );
    assert!(err.contains("bag/manifest-sha256.txt: 2: data/b: missing"), "{err}");
    assert!(err.contains("bag/data/extra: not listed in manifest-sha256.txt"), "{err}");
    assert!(
        err.contains("bag/bag-info.txt: 3: Payload-Oxum says 30.3, the payload is 21.3"),
        "{err}"
    );
    assert_eq!(text(&out.stdout), "bag: invalid (4 problems)\n");
    let json = check(d, &["--json"]);
    assert_eq!(json.status.code(), Some(1));
    let lines: Vec<serde_json::Value> =
        text(&json.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[4]["valid"], false);
    assert!(lines.iter().any(|l| l["file"] == "manifest-sha256.txt" && l["line"] == 1));
}

#[test]
fn tampered_tag_file_and_bad_declaration() {
    let tmp = util::tempdir();
    let d = tmp.path();
    make_bag(d, &["a"], &["-a", "sha256"]);
    let info = d.join("bag/bag-info.txt");
    let mut s = std::fs::read_to_string(&info).unwrap();
    s.push_str("Note: added\n");
    std::fs::write(&info, s).unwrap();
    std::fs::write(
        d.join("bag/bagit.txt"),
        "BagIt-Version: one\nTag-File-Character-Encoding: UTF-8\n",
    )
    .unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("bag/bagit.txt: 1: BagIt-Version 'one' is not M.N"), "{err}");
    assert!(err.contains(": bag-info.txt: sha256 digest does not match"), "{err}");
    assert!(err.contains(": bagit.txt: sha256 digest does not match"), "{err}");
}

#[test]
fn escaping_paths_are_refused_naming_manifest_and_line() {
    let tmp = util::tempdir();
    let d = tmp.path();
    make_bag(d, &["a"], &["-a", "md5"]);
    util::write(d, "outside", b"secret");
    let m = d.join("bag/manifest-md5.txt");
    let mut s = std::fs::read_to_string(&m).unwrap();
    let md5 = fixity::algo::lookup("md5").unwrap().digest(b"secret").to_hex();
    s.push_str(&format!("{md5}  data/../../outside\n{md5}  /etc/passwd\n"));
    std::fs::write(&m, s).unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "bag/manifest-md5.txt: 2: data/../../outside: refused: the path climbs out with '..'"
        ),
        "{err}"
    );
    assert!(
        err.contains("bag/manifest-md5.txt: 3: /etc/passwd: refused: the path is absolute"),
        "{err}"
    );
}

#[test]
fn fast_mode_reads_only_the_oxum() {
    let tmp = util::tempdir();
    let d = tmp.path();
    make_bag(d, &["a", "b"], &[]);
    // Same size, other content: fast mode cannot see it, a full check does.
    util::write(d, "bag/data/a", b"CONTENT 0\n");
    assert_eq!(check(d, &["--fast"]).status.code(), Some(0));
    assert_eq!(check(d, &[]).status.code(), Some(1));
    util::write(d, "bag/data/c", b"more");
    let out = check(d, &["--fast"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("Payload-Oxum says 20.2, the payload is 24.3"));
    // Without a Payload-Oxum, --fast cannot decide: usage error.
    std::fs::write(d.join("bag/bag-info.txt"), "Contact-Name: x\n").unwrap();
    let out = check(d, &["--fast"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no Payload-Oxum"));
}

#[test]
fn usage_errors_and_untouched_directories() {
    let tmp = util::tempdir();
    let d = tmp.path();
    assert_eq!(util::run(d, ["bag", "check", "nope"]).status.code(), Some(2));
    assert_eq!(util::run(d, ["bag", "create", "nope"]).status.code(), Some(2));
    util::write(d, "dir/a", b"a");
    std::os::unix::fs::symlink("a", d.join("dir/link")).unwrap();
    let out = util::run(d, ["bag", "create", "dir"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("nothing was moved"), "{}", text(&out.stderr));
    assert!(d.join("dir/a").is_file() && !d.join("dir/data").exists());
    let out = util::run(d, ["bag", "create", "--info", "Payload-Oxum=1.1", "dir"]);
    assert_eq!(out.status.code(), Some(2));
    // A directory that is not a bag is invalid, naming bagit.txt.
    std::fs::remove_file(d.join("dir/link")).unwrap();
    let out = util::run(d, ["bag", "check", "dir"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("dir/bagit.txt: missing: this is not a bag"));
}

#[test]
fn follow_bags_symlinks_and_keeps_them_resolving() {
    let tmp = util::tempdir();
    let d = tmp.path();
    util::write(d, "outside", b"from outside the bag");
    util::write(d, "bag/in", b"inside");
    std::fs::create_dir(d.join("bag/s")).unwrap();
    std::os::unix::fs::symlink("../outside", d.join("bag/link")).unwrap();
    std::os::unix::fs::symlink("../../outside", d.join("bag/s/deep")).unwrap();
    std::os::unix::fs::symlink("../in", d.join("bag/s/inner")).unwrap();
    let out = util::run(d, ["bag", "create", "-L", "bag"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Links out of the tree gained a level; the one inside moved with its target.
    let target = |p: &str| std::fs::read_link(d.join(p)).unwrap();
    assert_eq!(target("bag/data/link"), Path::new("../../outside"));
    assert_eq!(target("bag/data/s/deep"), Path::new("../../../outside"));
    assert_eq!(target("bag/data/s/inner"), Path::new("../in"));
    for p in ["bag/data/link", "bag/data/s/deep", "bag/data/s/inner"] {
        assert!(std::fs::metadata(d.join(p)).is_ok_and(|m| m.is_file()), "{p} resolves");
    }
    let manifest = std::fs::read_to_string(d.join("bag/manifest-sha256.txt")).unwrap();
    assert!(manifest.contains(" data/link\n") && manifest.contains(" data/s/deep\n"), "{manifest}");
    let plain = check(d, &[]);
    assert_eq!(plain.status.code(), Some(1));
    assert!(
        text(&plain.stderr)
            .contains("bag/data/link: symbolic link not followed (use -L to follow)")
    );
    let followed = check(d, &["-L"]);
    assert!(followed.status.success(), "{}", text(&followed.stderr));
    assert!(
        text(&followed.stdout).contains("valid (4 payload files"),
        "{}",
        text(&followed.stdout)
    );
}

pub(crate) fn bagit_py() -> Option<Command> {
    if util::have("bagit.py") {
        return Some(Command::new("bagit.py"));
    }
    let probe = Command::new("python3").args(["-c", "import bagit"]).output().ok()?;
    probe.status.success().then(|| {
        let mut c = Command::new("python3");
        c.args(["-m", "bagit"]);
        c
    })
}

#[test]
fn bagit_python_validates_fixitys_bag_and_fixity_validates_its() {
    let Some(_) = bagit_py() else {
        return util::missing("bagit.py", "not installed (pip install bagit)");
    };
    let tmp = util::tempdir();
    let d = tmp.path();
    // bagit-python 1.9 writes and reads BagIt 0.97 paths, where `%` is not encoded: leave
    // `%` out of the names it must read from fixity's 1.0 bag.
    let names = ["plain.txt", "sp ace", "new\nline", "sub/deep/x", ".hidden"];
    make_bag(d, &names, &[]);
    let out = bagit_py().unwrap().args(["--validate", "bag"]).current_dir(d).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out =
        bagit_py().unwrap().args(["--validate", "--fast", "bag"]).current_dir(d).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    util::write(d, "bag/data/sp ace", b"changed");
    let out = bagit_py().unwrap().args(["--validate", "bag"]).current_dir(d).output().unwrap();
    assert!(!out.status.success());

    // The other way: bagit-python's bag (with a `%` name, unencoded in its 0.97 bag).
    for (i, n) in ["a.txt", "sp ace", "new\nline", "50%", "sub/deep"].iter().enumerate() {
        util::write(d, Path::new("pb").join(n), format!("{i}").as_bytes());
    }
    let out = bagit_py()
        .unwrap()
        .args(["--sha256", "--sha512", "--contact-name", "Jo", "pb"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = util::run(d, ["bag", "check", "pb"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("valid (5 payload files"));
    assert_eq!(util::run(d, ["bag", "check", "--fast", "pb"]).status.code(), Some(0));
    std::fs::remove_file(d.join("pb/data/50%")).unwrap();
    let out = util::run(d, ["bag", "check", "pb"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(": data/50%: missing"), "{}", text(&out.stderr));
}
