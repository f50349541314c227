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
        return util::missing("hashdeep", "not installed");
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

// ------------------------------------------------------------------ audit

fn audit(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["check", "--audit", "-k", "known.txt"];
    args.extend_from_slice(extra);
    util::run(dir, args)
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn audit_of_an_unchanged_tree_passes() {
    let tmp = util::tempdir();
    build_tree(tmp.path());
    let made = util::run(tmp.path(), ["hash", "--format", "hashdeep", "-o", "known.txt", "tree"]);
    assert!(made.status.success());
    let out = audit(tmp.path(), &["tree"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        "fixity: Audit passed\n   Input files examined: 10\n  Known files expecting: 10\n\
         \x20         Files matched: 10\nFiles partially matched: 0\n            Files moved: 0\n\
         \x20       New files found: 0\n  Known files not found: 0\n"
    );
    // From inside the tree, `./name` and the default path `.`: the known file is not
    // audited, and names are compared without `./`.
    let made = util::run(
        &tmp.path().join("tree"),
        ["hash", "--format", "hashdeep", "-o", "known.txt", "."],
    );
    assert!(made.status.success());
    let out = audit(&tmp.path().join("tree"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("Files matched: 10\n"));
}

#[test]
fn audit_finds_every_category() {
    let tmp = util::tempdir();
    let d = tmp.path();
    for (name, data) in [("a", "same"), ("b", "moving"), ("c", "to change"), ("e", "to delete")] {
        util::write(d, format!("t/{name}"), data.as_bytes());
    }
    util::write(d, "t/p", b"partly");
    util::write(d, "t/s", b"sized");
    let made = util::run(d, ["hash", "--format", "hashdeep", "-o", "known.txt", "t"]);
    assert!(made.status.success());
    // Make t/p's sha256 and t/s's size disagree with the files (partial matches).
    let known = std::fs::read_to_string(d.join("known.txt")).unwrap();
    let p_sha = fixity::algo::lookup("sha256").unwrap().digest(b"partly").to_hex();
    let known: Vec<String> = known
        .replace(&p_sha, &"0".repeat(64))
        .lines()
        .map(|l| if l.ends_with(",t/s") { format!("6{}", &l[1..]) } else { l.to_string() })
        .collect();
    std::fs::write(d.join("known.txt"), known.join("\n") + "\n").unwrap();
    std::fs::rename(d.join("t/b"), d.join("t/b2")).unwrap();
    util::write(d, "t/c", b"changed");
    std::fs::remove_file(d.join("t/e")).unwrap();
    util::write(d, "t/n", b"brand new");

    let out = audit(d, &["t"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "t/b2: Moved from t/b\nt/c: No match\nt/n: No match\n\
         t/p: Hash collision with t/p\nt/s: Hash collision with t/s\n\
         t/c: Known file not used\nt/e: Known file not used\nfixity: Audit failed\n\
         \x20  Input files examined: 6\n  Known files expecting: 6\n          Files matched: 1\n\
         Files partially matched: 2\n            Files moved: 1\n        New files found: 2\n\
         \x20 Known files not found: 2\n"
    );
    let verbose = audit(d, &["-v", "t"]);
    assert!(stdout(&verbose).starts_with("t/a: Ok\nt/b2: Moved from t/b\n"));

    let json = audit(d, &["--json", "t"]);
    assert_eq!(json.status.code(), Some(1));
    let objs: Vec<serde_json::Value> =
        stdout(&json).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let classes: Vec<&str> =
        objs[..objs.len() - 1].iter().map(|o| o["class"].as_str().unwrap()).collect();
    assert_eq!(classes, ["moved", "new", "new", "partial", "partial", "not_found", "not_found"]);
    assert_eq!(objs[0]["moved_from"], "t/b");
    let last = &objs[objs.len() - 1];
    assert_eq!(last["passed"], false);
    assert_eq!(last["summary"]["matched"], 1);
    assert_eq!(last["summary"]["partial"], 2);
    assert_eq!(last["summary"]["not_found"], 2);

    let quiet = audit(d, &["--quiet", "t"]);
    assert_eq!(stdout(&quiet), "fixity: Audit failed\n");
    let status = audit(d, &["--status", "t"]);
    assert_eq!(status.status.code(), Some(1));
    assert!(status.stdout.is_empty());
}

#[test]
fn audit_refuses_a_bad_known_file_naming_file_and_line() {
    let tmp = util::tempdir();
    util::write(tmp.path(), "known.txt", b"%%%% HASHDEEP-1.0\n%%%% size,md5,blake3,filename\n");
    util::write(tmp.path(), "t/a", b"a");
    let out = audit(tmp.path(), &["t"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("known.txt: 2: unknown column 'blake3'"), "{err}");
    util::write(
        tmp.path(),
        "known.txt",
        b"%%%% HASHDEEP-1.0\n%%%% size,md5,filename\n## \n3,zz,a\n",
    );
    let err = String::from_utf8_lossy(&audit(tmp.path(), &["t"]).stderr).into_owned();
    assert!(err.contains("known.txt: 4: 'zz' is not a md5 digest"), "{err}");
    util::write(tmp.path(), "known.txt", b"d41d8cd98f00b204e9800998ecf8427e  a\n");
    let err = String::from_utf8_lossy(&audit(tmp.path(), &["t"]).stderr).into_owned();
    assert!(err.contains("known.txt: 1: not a hashdeep file"), "{err}");
    let usage = util::run(tmp.path(), ["check", "--audit", "t"]);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn fixity_audits_hashdeeps_file() {
    if !util::have("hashdeep") {
        return util::missing("hashdeep", "not installed");
    }
    let tmp = util::tempdir();
    build_tree(tmp.path());
    let made = std::process::Command::new("hashdeep")
        .args(["-c", "md5,sha1,sha256,tiger,whirlpool", "-l", "-r", "tree"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(made.status.success());
    std::fs::write(tmp.path().join("known.txt"), &made.stdout).unwrap();
    let out = audit(tmp.path(), &["tree"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("Files matched: 10\n"));
    util::write(tmp.path(), "tree/sp ace", b"hellp");
    let out = audit(tmp.path(), &["tree"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).starts_with("tree/sp ace: No match\ntree/sp ace: Known file not used\n"));
}
