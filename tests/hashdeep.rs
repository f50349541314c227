//! hashdeep's format: fixity's `hash --format hashdeep` against goldens recorded from the
//! real hashdeep (`tests/fixtures/hashdeep/make.sh`), and audits both ways.

use crate::util;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hashdeep").join(name)
}

/// Builds `tree.txt`'s tree as `dir/tree`.
pub fn build_tree(dir: &Path) {
    let spec = std::fs::read_to_string(fixture("tree.txt")).unwrap();
    for line in spec.lines().filter(|l| !l.starts_with('#')) {
        let (name, content) = line.split_once('\t').expect("name<TAB>content");
        util::write(dir, Path::new("tree").join(name), content.replace("\\n", "\n").as_bytes());
    }
}

/// The header lines and the sorted file lines of a hashdeep file.
fn split(text: &[u8]) -> (Vec<String>, Vec<String>) {
    let text = String::from_utf8(text.to_vec()).unwrap();
    let lines: Vec<String> = text.lines().map(String::from).collect();
    assert!(lines.len() >= 5, "short hashdeep file: {text}");
    let mut files = lines[5..].to_vec();
    files.sort();
    (lines[..5].to_vec(), files)
}

fn compare_with_golden(golden: &str, algos: &str) {
    let tmp = util::tempdir();
    build_tree(tmp.path());
    let out = util::run(tmp.path(), ["hash", "--format", "hashdeep", "-a", algos, "tree"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (ours_head, ours) = split(&out.stdout);
    let (theirs_head, theirs) = split(&std::fs::read(fixture(golden)).unwrap());
    assert_eq!(ours, theirs);
    assert_eq!(ours_head[..2], theirs_head[..2]);
    assert_eq!(ours_head[4], theirs_head[4]);
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    assert_eq!(ours_head[2], format!("## Invoked from: {}", cwd.display()));
    assert!(theirs_head[2].starts_with("## Invoked from: /"));
    let command = ours_head[3].strip_prefix("## $ ").or(ours_head[3].strip_prefix("## # "));
    assert!(
        command.is_some_and(|c| c.ends_with(&format!("hash --format hashdeep -a {algos} tree"))),
        "{}",
        ours_head[3]
    );
    assert!(
        theirs_head[3].starts_with("## $ hashdeep") || theirs_head[3].starts_with("## # hashdeep")
    );
}

#[test]
fn md5_sha256_equals_hashdeeps() {
    compare_with_golden("md5_sha256.txt", "md5,sha256");
}

#[test]
fn all_five_columns_in_hashdeeps_order() {
    compare_with_golden("all5.txt", "whirlpool,tiger,sha256,sha1,md5");
}

#[test]
fn default_algorithms_are_hashdeeps() {
    let tmp = util::tempdir();
    build_tree(tmp.path());
    let out = util::run(tmp.path(), ["hash", "--format", "hashdeep", "tree"]);
    assert!(out.status.success());
    assert!(out.stdout.starts_with(b"%%%% HASHDEEP-1.0\n%%%% size,md5,sha256,filename\n"));
}

#[test]
fn algorithms_hashdeep_lacks_are_refused() {
    let tmp = util::tempdir();
    build_tree(tmp.path());
    let out = util::run(tmp.path(), ["hash", "--format", "hashdeep", "-a", "md5,blake3", "tree"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not blake3"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn newline_names_are_refused() {
    let tmp = util::tempdir();
    util::write(tmp.path(), "d/a\nb", b"1");
    util::write(tmp.path(), "d/ok", b"2");
    let out = util::run(tmp.path(), ["hash", "--format", "hashdeep", "d"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a hashdeep file cannot hold a name with a newline"), "{err}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with(",d/ok\n"), "{text}");
    assert_eq!(text.lines().count(), 6);
}

#[test]
fn hashdeep_audits_fixitys_file() {
    if !util::have("hashdeep") {
        return util::skip("hashdeep", "not installed");
    }
    let tmp = util::tempdir();
    build_tree(tmp.path());
    let out = util::run(
        tmp.path(),
        [
            "hash",
            "--format",
            "hashdeep",
            "-a",
            "md5,sha1,sha256,tiger,whirlpool",
            "-o",
            "k.txt",
            "tree",
        ],
    );
    assert!(out.status.success());
    let audit = std::process::Command::new("hashdeep")
        .args(["-a", "-k", "k.txt", "-l", "-r", "tree"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(audit.status.success(), "{}", String::from_utf8_lossy(&audit.stdout));
    assert_eq!(String::from_utf8_lossy(&audit.stdout), "hashdeep: Audit passed\n");
    // And a changed file fails it.
    util::write(tmp.path(), "tree/a.txt", b"abd");
    let audit = std::process::Command::new("hashdeep")
        .args(["-a", "-k", "k.txt", "-l", "-r", "tree"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(audit.status.code(), Some(1));
}
