//! Safety of paths and outputs: `--confine` against symlinks, `-o` over existing files and
//! symlinks, fixity's own state never hashed, `bag create` recovering an interrupted run.

use crate::util::{run, tempdir, write};
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A GNU line for `data` under `name`, with fixity's own digest.
fn sha256_line(dir: &Path, name: &str) -> String {
    let out = run(dir, ["hash", "-a", "sha256", name]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn confine_refuses_a_symlink_that_leads_out_of_the_tree() {
    let outer = tempdir();
    let tree = outer.path().join("tree");
    write(outer.path(), "secret", b"outside\n");
    write(&tree, "a", b"a\n");
    write(&tree, "sub/b", b"b\n");
    symlink(outer.path(), tree.join("outlink")).unwrap();
    symlink("sub", tree.join("inlink")).unwrap();
    // A manifest with the outside file seen through the link (as `sha256sum` of the
    // real path would give, then renamed): the lexical test sees a plain relative name.
    let secret = sha256_line(outer.path(), "secret").replace("secret", "outlink/secret");
    let list = format!(
        "{}{}{}",
        sha256_line(&tree, "a"),
        secret,
        sha256_line(&tree, "sub/b").replace("sub/b", "inlink/b")
    );
    write(&tree, "list.sha256", list.as_bytes());

    let out = run(&tree, ["check", "--confine", "list.sha256"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // The file outside is never read, and the line is named; the link inside still works.
    assert_eq!(text(&out.stdout), "a: OK\ninlink/b: OK\n");
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "list.sha256: 2: outlink/secret: refused: the path escapes the tree through a \
             symbolic link"
        ),
        "{err}"
    );
    assert!(err.contains("WARNING: 1 line was refused"), "{err}");
    // Without --confine the link is followed, as coreutils follows it.
    let out = run(&tree, ["check", "list.sha256"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("outlink/secret: OK"));
}

/// Whether the tests run as root (who may give a file to another owner).
fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[test]
fn output_over_a_manifest_keeps_its_mode_and_owner() {
    let d = tempdir();
    write(d.path(), "f", b"data\n");
    let m = d.path().join("m.sha256");
    // Two modes no umask gives a new file both of.
    for mode in [0o600, 0o604] {
        std::fs::write(&m, b"old\n").unwrap();
        std::fs::set_permissions(&m, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = run(d.path(), ["hash", "-a", "sha256", "-o", "m.sha256", "f"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&std::fs::read(&m).unwrap()).ends_with("  f\n"));
        let got = std::fs::metadata(&m).unwrap().mode() & 0o7777;
        assert_eq!(got, mode, "{got:o} instead of {mode:o}");
    }
    if !is_root() {
        crate::util::skip("owner kept by -o", "not running as root (cannot chown)");
        return;
    }
    std::os::unix::fs::chown(&m, Some(65534), Some(65534)).unwrap();
    let out = run(d.path(), ["hash", "-a", "sha256", "-o", "m.sha256", "f"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = std::fs::metadata(&m).unwrap();
    assert_eq!((md.uid(), md.gid()), (65534, 65534));
    assert_eq!(md.mode() & 0o7777, 0o604);
}

#[test]
fn output_over_a_symlink_writes_its_target_and_keeps_the_link() {
    let d = tempdir();
    write(d.path(), "tree/f", b"data\n");
    write(d.path(), "store/m.sha256", b"old\n");
    symlink("../store/m.sha256", d.path().join("tree/m.sha256")).unwrap();
    let tree = d.path().join("tree");
    let out = run(&tree, ["hash", "-a", "sha256", "-o", "m.sha256", "f"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let link = std::fs::symlink_metadata(tree.join("m.sha256")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced by a file");
    let written = text(&std::fs::read(d.path().join("store/m.sha256")).unwrap());
    assert!(written.ends_with("  f\n"), "{written}");
    // No temporary file is left beside the link or the target.
    let names = |p: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&tree), ["f", "m.sha256"]);
    assert_eq!(names(&d.path().join("store")), ["m.sha256"]);

    // A dangling link: its target is created, as the shell's `>` creates it.
    symlink("../store/new.sha256", tree.join("new.sha256")).unwrap();
    let out = run(&tree, ["hash", "-a", "sha256", "-o", "new.sha256", "f"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::symlink_metadata(tree.join("new.sha256")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(d.path().join("store/new.sha256")).unwrap(), written.as_bytes());
}

#[test]
fn fixitys_own_state_is_never_hashed() {
    let d = tempdir();
    write(d.path(), "t/a", b"alpha\n");
    write(d.path(), "t/sub/b", b"beta\n");
    // A real catalog, made by a scan of the tree and one of a subtree of its own (named:
    // a scan of a directory inside a tree works on that tree's catalog).
    let scans: [&[&str]; 2] =
        [&["scan", "t"], &["scan", "--catalog", "t/sub/.fixity/catalog.db", "t/sub"]];
    for argv in scans {
        let out = run(d.path(), argv);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    assert!(d.path().join("t/.fixity/catalog.db").exists());
    assert!(d.path().join("t/sub/.fixity/catalog.db").exists());
    // And a temporary manifest left by a killed `hash -o`.
    write(d.path(), "t/.m.sha256.fixity-tmp.4194303.0", b"partial");

    let out = run(d.path(), ["hash", "-a", "sha256", "-r", "t"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let names: Vec<String> =
        text(&out.stdout).lines().map(|l| l.split_once("  ").unwrap().1.to_string()).collect();
    assert_eq!(names, ["t/a", "t/sub/b"]);

    let out =
        run(d.path(), ["bench", "tree", "t", "-a", "crc32", "--runs", "1", "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["files"], 2, "{v}");
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn bag_create_recovers_the_staging_directory_of_a_killed_run() {
    let d = tempdir();
    // As a run killed while moving the payload leaves it: some entries moved into its
    // staging directory (named after a process that no longer runs), the rest not yet.
    write(d.path(), "bag/a.txt", b"a\n");
    write(d.path(), "bag/.fixity-bag-4194303.0/b.txt", b"b\n");
    write(d.path(), "bag/.fixity-bag-4194303.0/sub/c.txt", b"c\n");
    let out = run(d.path(), ["bag", "create", "-a", "sha256", "bag"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains(".fixity-bag-4194303.0: recovered 2 entries"), "{err}");
    let bag = d.path().join("bag");
    assert_eq!(
        listing(&bag),
        ["bag-info.txt", "bagit.txt", "data", "manifest-sha256.txt", "tagmanifest-sha256.txt"]
    );
    // Never buried in data/: its entries are back where they were.
    assert_eq!(listing(&bag.join("data")), ["a.txt", "b.txt", "sub"]);
    let manifest = text(&std::fs::read(bag.join("manifest-sha256.txt")).unwrap());
    assert!(!manifest.contains(".fixity-bag-"), "{manifest}");
    let out = run(d.path(), ["bag", "check", "bag"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    // A clash (the same name in the staging directory and beside it) moves nothing.
    write(d.path(), "two/x", b"here\n");
    write(d.path(), "two/.fixity-bag-4194303.1/x", b"staged\n");
    let out = run(d.path(), ["bag", "create", "two"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("move one of them away"), "{}", text(&out.stderr));
    assert_eq!(listing(&d.path().join("two")), [".fixity-bag-4194303.1", "x"]);

    // While another create works in the directory (holding its lock), nothing is touched.
    std::fs::remove_file(d.path().join("two/x")).unwrap();
    let held = std::fs::File::open(d.path().join("two")).unwrap();
    held.try_lock().unwrap();
    let out = run(d.path(), ["bag", "create", "two"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("another `fixity bag create`"), "{}", text(&out.stderr));
    assert_eq!(listing(&d.path().join("two")), [".fixity-bag-4194303.1"]);
    drop(held);
    let out = run(d.path(), ["bag", "create", "two"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(listing(&d.path().join("two/data")), ["x"]);
}

#[test]
fn bag_create_refuses_a_bag_killed_while_writing_its_tag_files() {
    let d = tempdir();
    // data/ in place and a payload manifest written, bagit.txt not yet.
    write(d.path(), "bag/data/a.txt", b"a\n");
    write(d.path(), "bag/manifest-sha256.txt", b"");
    let out = run(d.path(), ["bag", "create", "bag"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("holds data/ and manifest-sha256.txt but no bagit.txt"), "{err}");
    assert_eq!(listing(&d.path().join("bag")), ["data", "manifest-sha256.txt"]);
    assert_eq!(listing(&d.path().join("bag/data")), ["a.txt"]);
}

#[test]
fn bag_check_flags_a_leftover_staging_directory() {
    let d = tempdir();
    write(d.path(), "bag/a.txt", b"a\n");
    write(d.path(), "bag/sub/b.txt", b"b\n");
    let out = run(d.path(), ["bag", "create", "-a", "sha256", "bag"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bag = d.path().join("bag");

    // Beside the bag's tag files: an interrupted run's.
    std::fs::create_dir(bag.join(".fixity-bag-4194303.0")).unwrap();
    let out = run(d.path(), ["bag", "check", "bag"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("bag/.fixity-bag-4194303.0: the staging directory of an interrupted"));
    std::fs::remove_dir(bag.join(".fixity-bag-4194303.0")).unwrap();

    // Inside data/, with its files listed (what a rerun of an older fixity made): the
    // manifests agree with the payload, and the bag is still not right.
    std::fs::rename(bag.join("data/sub"), bag.join("data/.fixity-bag-4194303.0")).unwrap();
    let m = bag.join("manifest-sha256.txt");
    let fixed =
        text(&std::fs::read(&m).unwrap()).replace("data/sub/", "data/.fixity-bag-4194303.0/");
    std::fs::write(&m, fixed).unwrap();
    std::fs::remove_file(bag.join("tagmanifest-sha256.txt")).unwrap();
    let out = run(d.path(), ["bag", "check", "bag"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("bag/data/.fixity-bag-4194303.0: the staging directory"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
