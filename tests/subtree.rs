//! Commands given a directory inside a tree (issue 38, part 4): the tree's catalog is
//! found upward, as git finds its repository, and the command works on that subtree
//! only: a subtree verify reports and records its files alone, nothing outside it is
//! missing, a move pairs only inside it, new files are recorded by their paths from the
//! root; `--catalog` still wins; a directory in no tree is a clear error.

use crate::util::{fixity, tempdir, write};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    fixity(dir).args(args).output().unwrap()
}

/// `--json` lines of a scan or verify: (path -> class) of each file listed, and the
/// summary object.
fn classes(out: &Output) -> (BTreeMap<String, String>, serde_json::Value) {
    let mut found = BTreeMap::new();
    let mut summary = serde_json::Value::Null;
    for line in text(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        if v.get("summary").is_some() {
            summary = v;
        } else if let Some(p) = v["path"].as_str() {
            found.insert(p.to_string(), v["class"].as_str().unwrap_or_default().to_string());
        }
    }
    (found, summary)
}

/// Changes `p`'s content, keeping its size and mtime: bit rot.
fn rot(p: &Path) {
    let mtime = std::fs::metadata(p).unwrap().modified().unwrap();
    let mut data = std::fs::read(p).unwrap();
    data[0] ^= 0xff;
    std::fs::write(p, &data).unwrap();
    std::fs::File::options().write(true).open(p).unwrap().set_modified(mtime).unwrap();
}

/// A tree `t` under `d`, scanned at its root.
fn tree(d: &Path) {
    write(d, "t/a.txt", b"top level file");
    write(d, "t/photos/2020/x.jpg", b"photo x from 2020");
    write(d, "t/photos/2020/y.jpg", b"photo y from 2020");
    write(d, "t/photos/2021/z.jpg", b"photo z from 2021");
    write(d, "t/other/o.txt", b"another file");
    let out = run_in(d, &["scan", "-q", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_subtree_verify_reports_and_records_only_its_files() {
    let d = tempdir();
    let d = d.path();
    tree(d);
    std::fs::remove_file(d.join("t/other/o.txt")).unwrap();
    rot(&d.join("t/photos/2020/x.jpg"));
    let out = run_in(d, &["verify", "--json", "t/photos/2020"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let (found, summary) = classes(&out);
    let want = BTreeMap::from([("photos/2020/x.jpg".to_string(), "corrupt".to_string())]);
    assert_eq!(found, want, "only the subtree's finding, by its path from the root");
    let s = &summary["summary"];
    assert_eq!(s["counts"]["ok"], 1, "{summary}");
    assert_eq!(s["counts"]["missing"], 0, "nothing outside is missing: {summary}");
    assert_eq!(s["files_read"], 2, "{summary}");
    assert_eq!(s["subtree"], "photos/2020", "{summary}");
    let err = text(&out.stderr);
    assert!(err.contains("fixity: catalog ") && err.contains("subtree photos/2020"), "{err}");
    assert!(err.contains(".fixity/catalog.db (tree "), "{err}");
    // The tree's verification pass was not completed by the subtree's.
    let status = run_in(d, &["status", "--json", "t"]);
    let v: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(v["pass"]["last_completed"].is_null(), "{v}");
    // The whole tree still sees both findings.
    let (found, _) = classes(&run_in(d, &["verify", "--json", "t"]));
    assert_eq!(found.get("other/o.txt").map(String::as_str), Some("missing"), "{found:?}");
    assert_eq!(found.get("photos/2020/x.jpg").map(String::as_str), Some("corrupt"));
}

#[test]
fn commands_run_from_inside_the_tree_with_a_dot() {
    let d = tempdir();
    let d = d.path();
    tree(d);
    write(d, "t/photos/2021/new.jpg", b"a new photo");
    std::fs::remove_file(d.join("t/a.txt")).unwrap();
    let inside = d.join("t/photos");
    let out = run_in(&inside, &["scan", "--json", "-v", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (found, summary) = classes(&out);
    let want = BTreeMap::from([("photos/2021/new.jpg".to_string(), "new".to_string())]);
    assert_eq!(found, want, "{summary}");
    assert_eq!(summary["summary"]["subtree"], "photos");
    // Recorded by its path from the root: the root's scan knows it, and finds a.txt gone.
    let (found, _) = classes(&run_in(d, &["scan", "--json", "-v", "t"]));
    let want = BTreeMap::from([("a.txt".to_string(), "missing".to_string())]);
    assert_eq!(found, want);
    // status of the subtree: its files, its findings.
    rot(&d.join("t/photos/2020/y.jpg"));
    let out = run_in(&inside.join("2020"), &["verify", "-q", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("photos/2020/y.jpg"), "{}", text(&out.stdout));
    assert!(!text(&out.stdout).contains("a.txt"), "{}", text(&out.stdout));
    let out = run_in(&inside, &["status", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["subtree"], "photos", "{v}");
    assert_eq!((v["files"].as_u64(), v["missing"].as_u64()), (Some(4), Some(0)), "{v}");
    let problems: Vec<&str> =
        v["problems"].as_array().unwrap().iter().filter_map(|p| p["path"].as_str()).collect();
    assert_eq!(problems, ["photos/2020/y.jpg"], "{v}");
    // report: the subtree's findings only.
    let out = run_in(&inside, &["report", "--json", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(report.contains("photos/2020/y.jpg") && !report.contains("a.txt"), "{report}");
    // accept and forget from inside, by paths from here.
    let out = run_in(&inside.join("2020"), &["accept", "y.jpg"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::remove_file(d.join("t/photos/2021/z.jpg")).unwrap();
    let out = run_in(&inside, &["verify", "-q", "."]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("photos/2021/z.jpg"), "{}", text(&out.stdout));
    let out = run_in(&inside, &["forget", "2021"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run_in(&inside, &["verify", "-q", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn a_loss_in_a_subtree_pairs_only_with_a_file_new_inside_it() {
    let d = tempdir();
    let d = d.path();
    tree(d);
    std::fs::rename(d.join("t/photos/2020/x.jpg"), d.join("t/other/x.jpg")).unwrap();
    // The copy outside is recorded new by a scan of its own subtree ...
    let (found, _) = classes(&run_in(d, &["scan", "--json", "-v", "t/other"]));
    assert_eq!(found.get("other/x.jpg").map(String::as_str), Some("new"), "{found:?}");
    // ... and the subtree that lost it does not pair with it: missing, not moved.
    let out = run_in(d, &["scan", "--json", "t/photos/2020"]);
    let (found, _) = classes(&out);
    let want = BTreeMap::from([("photos/2020/x.jpg".to_string(), "missing".to_string())]);
    assert_eq!(found, want);
}

#[test]
fn dups_and_repair_work_on_the_subtree() {
    let d = tempdir();
    let d = d.path();
    write(d, "t/in/one", b"same content here");
    write(d, "t/in/two", b"same content here");
    write(d, "t/in/three", b"other content");
    write(d, "t/out/copy", b"same content here");
    write(d, "t/out/lost", b"lost outside");
    assert_eq!(run_in(d, &["scan", "-q", "t"]).status.code(), Some(0));
    // dups: the subtree's files among themselves.
    let out = run_in(&d.join("t/in"), &["dups", "--json", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let groups = text(&out.stdout);
    assert!(groups.contains("in/one") && groups.contains("in/two"), "{groups}");
    assert!(!groups.contains("out/copy"), "{groups}");
    // protect from inside protects the tree; repair of the subtree repairs its losses only.
    let out = run_in(&d.join("t/in"), &["protect", "-q", "--redundancy", "100%", "."]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    std::fs::remove_file(d.join("t/in/three")).unwrap();
    std::fs::remove_file(d.join("t/out/lost")).unwrap();
    assert_eq!(run_in(d, &["verify", "-q", "t"]).status.code(), Some(1));
    let out = run_in(d, &["repair", "t/in"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(std::fs::read(d.join("t/in/three")).unwrap(), b"other content");
    assert!(!d.join("t/out/lost").exists(), "outside the subtree: not repaired");
    assert!(text(&out.stdout).contains("1 repaired"), "{}", text(&out.stdout));
    // Nothing standing in the subtree: its repair looks there first (a scan of the
    // subtree), finds the loss and repairs it, and still leaves the outside alone.
    std::fs::remove_file(d.join("t/in/one")).unwrap();
    let out = run_in(&d.join("t/in"), &["repair", "."]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
    assert!(said.contains("1 repaired") && said.contains("found now"), "{said}");
    assert_eq!(std::fs::read(d.join("t/in/one")).unwrap(), b"same content here");
    assert!(!d.join("t/out/lost").exists(), "outside the subtree: not repaired");
    let out = run_in(&d.join("t/in"), &["repair", "."]);
    assert!(text(&out.stdout).contains("0 files with findings"), "{}", text(&out.stdout));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn the_catalog_given_wins_and_a_directory_in_no_tree_is_an_error() {
    let d = tempdir();
    let d = d.path();
    tree(d);
    std::fs::create_dir_all(d.join("elsewhere/deep")).unwrap();
    let out = run_in(d, &["verify", "elsewhere/deep"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("no catalog at ") && err.contains("deep/.fixity/catalog.db"), "{err}");
    assert!(err.contains("nor in a directory above it up to "), "{err}");
    for cmd in ["status", "report", "dups"] {
        let out = run_in(&d.join("elsewhere/deep"), &[cmd, "--json", "."]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert!(text(&out.stderr).contains("no catalog at "), "{cmd}: {}", text(&out.stderr));
    }
    // Another catalog of the same tree, given: it is used, the directory its subtree.
    let other = d.join("other.db");
    let other = other.to_str().unwrap();
    assert_eq!(run_in(d, &["scan", "-q", "--catalog", other, "t"]).status.code(), Some(0));
    write(d, "t/photos/2020/w.jpg", b"new since");
    let out = run_in(d, &["scan", "--json", "-v", "--catalog", other, "t/photos/2020"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (found, summary) = classes(&out);
    assert_eq!(found.keys().collect::<Vec<_>>(), ["photos/2020/w.jpg"], "{summary}");
    assert!(text(&out.stderr).contains("other.db (tree "), "{}", text(&out.stderr));
    // The tree's own catalog was not touched: it still finds the file new.
    let (found, _) = classes(&run_in(d, &["scan", "--json", "-v", "t/photos"]));
    assert_eq!(found.get("photos/2020/w.jpg").map(String::as_str), Some("new"));
    // A subtree is verified whole.
    let out = run_in(d, &["verify", "--max-bytes", "1K", "t/photos"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("a subtree is verified whole"), "{}", text(&out.stderr));
}

#[test]
fn verify_remote_of_a_subtree_compares_its_records_with_its_keys_only() {
    use crate::remote::{aws, bucket, events, server, upload};
    let Some(srv) = server() else { return };
    let d = tempdir();
    let d = d.path();
    let inside = write(d, "t/in/a.bin", b"inside file content");
    write(d, "t/out/o.bin", b"outside file content, never uploaded");
    let b = bucket("subtree");
    let spec = serde_json::json!([
        { "key": "copy/in/a.bin", "file": inside, "how": "put", "checksum": "SHA256" },
        { "key": "copy/extra.bin", "data": "an object the catalog does not record", "how": "put" },
    ]);
    upload(srv.proxy, &b, &spec);
    assert_eq!(run_in(d, &["scan", "-q", "t"]).status.code(), Some(0));
    let remote = format!("s3://{b}/copy");
    let endpoint = format!("http://127.0.0.1:{}", srv.proxy);
    let verify = |dir: &str| {
        let args = ["verify", dir, "--remote", &remote, "--endpoint", &endpoint, "--json"];
        aws(d).args(args).output().unwrap()
    };
    // The subtree: its one record against its one object; nothing outside is missing,
    // no object outside its keys is extra.
    let out = verify("t/in");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (ev, summary) = events(&out);
    assert!(ev.is_empty(), "{ev:?}");
    assert_eq!(summary["objects"], 1, "{summary}");
    assert!(text(&out.stderr).contains("subtree in"), "{}", text(&out.stderr));
    // The whole tree: the record outside has no object, the object outside no record.
    let out = verify("t");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let (ev, _) = events(&out);
    let classes: Vec<(&str, &str)> =
        ev.iter().map(|e| (e["path"].as_str().unwrap(), e["class"].as_str().unwrap())).collect();
    assert_eq!(classes, [("extra.bin", "extra"), ("out/o.bin", "missing")], "{ev:?}");
}

#[test]
fn a_postgresql_catalog_finds_the_tree_a_directory_is_in() {
    let Some(db) = crate::util::pg::database() else { return };
    let d = tempdir();
    let d = d.path();
    write(d, "t/a.txt", b"top level file");
    write(d, "t/photos/2020/x.jpg", b"photo x from 2020");
    write(d, "t/photos/2020/y.jpg", b"photo y from 2020");
    write(d, "t/other/o.txt", b"another file");
    let url = db.url.as_str();
    let out = run_in(d, &["scan", "-q", "--catalog", url, "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::remove_file(d.join("t/other/o.txt")).unwrap();
    rot(&d.join("t/photos/2020/x.jpg"));
    // The host's tree t holds the directory: it is a subtree of t, not a new tree.
    let out = run_in(d, &["verify", "--json", "--catalog", url, "t/photos/2020"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let (found, summary) = classes(&out);
    let want = BTreeMap::from([("photos/2020/x.jpg".to_string(), "corrupt".to_string())]);
    assert_eq!(found, want, "{summary}");
    assert_eq!(summary["summary"]["subtree"], "photos/2020", "{summary}");
    assert!(text(&out.stderr).contains("subtree photos/2020"), "{}", text(&out.stderr));
    let out = run_in(&d.join("t/photos"), &["status", "--json", "--catalog", url, "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["subtree"].as_str(), v["files"].as_u64()), (Some("photos"), Some(2)), "{v}");
}
