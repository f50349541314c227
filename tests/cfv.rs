//! cfv's `.csv` format: `fixity hash --format cfv-csv` against a golden recorded from the
//! real cfv (`tests/fixtures/cfv/make.sh`), `fixity check` on cfv's file, and cfv checking
//! fixity's.

use crate::util;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cfv").join(name)
}

fn build_tree(dir: &Path) {
    let spec = std::fs::read_to_string(fixture("tree.txt")).unwrap();
    for line in spec.lines().filter(|l| !l.starts_with('#')) {
        let (name, content) = line.split_once('\t').expect("name<TAB>content");
        util::write(dir, Path::new("tree").join(name), content.replace("\\n", "\n").as_bytes());
    }
}

#[test]
fn hash_equals_cfvs_csv() {
    let tmp = util::tempdir();
    build_tree(tmp.path());
    let out = util::run(tmp.path(), ["hash", "--format", "cfv-csv", "tree"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        std::fs::read_to_string(fixture("tree.csv")).unwrap()
    );
}

#[test]
fn check_reads_cfvs_csv() {
    let tmp = util::tempdir();
    build_tree(tmp.path());
    std::fs::copy(fixture("tree.csv"), tmp.path().join("tree.csv")).unwrap();
    let out = util::run(tmp.path(), ["check", "tree.csv"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 9);
    assert!(text.contains("tree/quo\"te: OK\ntree/sp ace: OK\n"), "{text}");
    // Under another name too (the lines are recognised), and a changed file fails.
    std::fs::copy(fixture("tree.csv"), tmp.path().join("sums.txt")).unwrap();
    util::write(tmp.path(), "tree/with,comma.txt", b"y");
    let out = util::run(tmp.path(), ["check", "sums.txt"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("tree/with,comma.txt: FAILED\n"));
}

#[test]
fn only_crc32_and_no_newlines() {
    let tmp = util::tempdir();
    util::write(tmp.path(), "d/a\nb", b"1");
    util::write(tmp.path(), "d/ok", b"2");
    let out = util::run(tmp.path(), ["hash", "--format", "cfv-csv", "-a", "md5", "d"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("CRC32 only"));
    let out = util::run(tmp.path(), ["hash", "--format", "cfv-csv", "d"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a cfv .csv file cannot hold a name"));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "d/ok,1,1ad5be0d,\n");
}

#[test]
fn cfv_checks_fixitys_csv_and_fixity_checks_cfvs() {
    if !util::have("cfv") {
        return util::missing("cfv", "not installed");
    }
    let tmp = util::tempdir();
    build_tree(tmp.path());
    let out = util::run(tmp.path(), ["hash", "--format", "cfv-csv", "-o", "f.csv", "tree"]);
    assert!(out.status.success());
    let cfv =
        Command::new("cfv").args(["-T", "-f", "f.csv"]).current_dir(tmp.path()).output().unwrap();
    assert!(cfv.status.success(), "{}", String::from_utf8_lossy(&cfv.stdout));
    assert!(String::from_utf8_lossy(&cfv.stdout).contains("9 files, 9 OK"));
    let made = Command::new("cfv")
        .args(["-C", "-t", "csv", "-rr", "-f", "c.csv", "tree"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(made.status.success());
    let out = util::run(tmp.path(), ["check", "--quiet", "c.csv"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    util::write(tmp.path(), "tree/a.txt", b"abd");
    let cfv =
        Command::new("cfv").args(["-T", "-f", "f.csv"]).current_dir(tmp.path()).output().unwrap();
    assert!(!cfv.status.success());
}
