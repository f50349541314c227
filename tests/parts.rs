//! `scan|verify --plan DIR --part I`: a tree's catalog run fanned out by a plan's parts.
//! The parts together record what one scan records; each finding (corrupt, missing,
//! moved) is reported by exactly one part, whatever order they run in, at once or one
//! after another; the catalog's records are split by path so a file gone from the tree
//! has one owner. The cases take a catalog (SQLite here; tests/fleet.rs runs them on
//! PostgreSQL).

use crate::catalog::Cat;
use crate::util::{fixity, run, tempdir, write};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Output, Stdio};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A tree with hard names, in three directories, and a file before and after them.
fn tree(d: &Path) {
    for i in 0..30u32 {
        let data: Vec<u8> = (0..1000 + i * 131).map(|j| (j * 7 + i) as u8).collect();
        write(d, format!("t/d{}/f{i:02}", i % 3), &data);
    }
    write(d, "t/empty", b"");
    write(d, "t/d1/new\nline", b"newline");
    write(d, OsStr::from_bytes(b"t/d2/bad\xffname"), b"latin1");
    std::os::unix::fs::symlink("empty", d.join("t/link")).unwrap();
}

/// The (path, class) findings of a run and its exit status.
fn findings(cat: &Cat, d: &Path, args: &[&str]) -> (BTreeMap<String, String>, i32) {
    let (found, summary, code) = cat.classify(d, args);
    assert!(summary.is_object(), "a summary: {args:?}");
    (found, code)
}

/// A record as (path, size, digest, missing), for comparing catalogs.
type Held = (Vec<u8>, Option<u64>, Vec<u8>, bool);

/// Every record of the tree at `tree`.
fn contents(cat: &Cat, tree: &Path) -> Vec<Held> {
    cat.records(tree)
        .into_iter()
        .map(|r| (r.path, r.size, r.digest.as_bytes().to_vec(), r.missing_since.is_some()))
        .collect()
}

fn plan(d: &Path, n: usize) {
    let out = run(d, ["plan", "t", "--parts", &n.to_string(), "-o", "plan"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

fn part(cat: &Cat, d: &Path, cmd: &str, i: usize) -> Output {
    cat.run(d, &[cmd, "--plan", "plan", "--part", &i.to_string()])
}

pub(crate) fn scanned_parts_record_what_one_scan_records(cat: &Cat) {
    let d = tempdir();
    tree(d.path());
    plan(d.path(), 4);
    for i in [2, 0, 3, 1] {
        let out = part(cat, d.path(), "scan", i);
        assert_eq!(out.status.code(), Some(0), "part {i}: {}", text(&out.stderr));
        let said = text(&out.stdout);
        assert!(said.contains(&format!("part {i} of 4")), "{said}");
    }
    let parts = contents(cat, &d.path().join("t"));
    assert_eq!(parts.len(), 33, "every file once (the symlink left out)");
    // One scan of a copy of the tree records the same.
    let other = tempdir();
    tree(other.path());
    let out = cat.run(other.path(), &["scan", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(contents(cat, &other.path().join("t")), parts);
    // And a scan of the whole tree afterwards finds nothing new.
    let (found, code) = findings(cat, d.path(), &["scan", "t"]);
    assert_eq!((found, code), (BTreeMap::new(), 0));
}

pub(crate) fn each_finding_is_reported_by_the_one_part_that_owns_it(cat: &Cat) {
    let d = tempdir();
    tree(d.path());
    // Files before and after every planned one, recorded and then gone: the first and
    // the last part own them.
    write(d.path(), "t/0first", b"first");
    write(d.path(), "t/zzlast", b"last");
    assert_eq!(cat.run(d.path(), &["scan", "t"]).status.code(), Some(0));
    std::fs::remove_file(d.path().join("t/0first")).unwrap();
    std::fs::remove_file(d.path().join("t/zzlast")).unwrap();
    plan(d.path(), 3);
    // After the plan: one file gone, one corrupt (same size and mtime), one edited.
    std::fs::remove_file(d.path().join("t/d1/f10")).unwrap();
    let victim = d.path().join("t/d2/f14");
    let mtime = std::fs::metadata(&victim).unwrap().modified().unwrap();
    let mut data = std::fs::read(&victim).unwrap();
    data[5] ^= 0x10;
    std::fs::write(&victim, &data).unwrap();
    std::fs::File::options().write(true).open(&victim).unwrap().set_modified(mtime).unwrap();
    write(d.path(), "t/d0/f03", b"edited");

    // All parts at once: no run is refused for the others', and no finding is lost or
    // reported twice.
    let children: Vec<_> = (0..3)
        .map(|i| {
            let mut c = fixity(d.path());
            c.args(cat.with(&["verify", "--plan", "plan", "--part", &i.to_string(), "--json"]));
            c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    let mut all: Vec<(String, String)> = Vec::new();
    let mut codes = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(!text(&out.stderr).contains("busy"), "{}", text(&out.stderr));
        codes.push(
            out.status.code().unwrap_or_else(|| panic!("{:?}: {}", out.status, text(&out.stderr))),
        );
        for line in text(&out.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(s) = v.get("summary") {
                assert_eq!(s["part"]["parts"], 3, "{s}");
                continue;
            }
            all.push((v["path"].as_str().unwrap().into(), v["class"].as_str().unwrap().into()));
        }
    }
    all.sort();
    let want: Vec<(String, String)> = [
        ("0first", "missing"),
        ("d0/f03", "modified"),
        ("d1/f10", "missing"),
        ("d2/f14", "corrupt"),
        ("zzlast", "missing"),
    ]
    .iter()
    .map(|(p, c)| (p.to_string(), c.to_string()))
    .collect();
    assert_eq!(all, want);
    assert!(codes.iter().all(|&c| c <= 1) && codes.contains(&1), "{codes:?}");
    // Every file of the tree was read again by its part.
    let stale: Vec<_> = cat
        .verified_times(&d.path().join("t"))
        .into_iter()
        .filter(|(p, t)| *t == 0 && !p.starts_with(b"0") && !p.starts_with(b"zz"))
        .collect();
    assert!(stale.is_empty(), "{stale:?}");

    // Findings stand: the corrupt file again, one part at a time, by its owner only.
    let mut owners = Vec::new();
    for i in 0..3 {
        let (found, code) =
            findings(cat, d.path(), &["verify", "--plan", "plan", "--part", &i.to_string()]);
        if found.get("d2/f14").is_some_and(|c| c == "corrupt") {
            owners.push(i);
        }
        assert!(code <= 1);
    }
    assert_eq!(owners.len(), 1, "{owners:?}");
}

pub(crate) fn a_file_moved_before_the_plan_is_paired_across_parts(cat: &Cat) {
    let d = tempdir();
    tree(d.path());
    assert_eq!(cat.run(d.path(), &["scan", "t"]).status.code(), Some(0));
    std::fs::rename(d.path().join("t/d0/f00"), d.path().join("t/d2/zz-moved")).unwrap();
    plan(d.path(), 2);
    // The part that finds it new first, then the one that finds it gone: paired.
    let (found, _) = findings(cat, d.path(), &["scan", "--plan", "plan", "--part", "1"]);
    assert_eq!(found.get("d2/zz-moved").map(String::as_str), Some("new"), "{found:?}");
    let (found, code) = findings(cat, d.path(), &["scan", "--plan", "plan", "--part", "0"]);
    assert_eq!(found.get("d0/f00 -> d2/zz-moved").map(String::as_str), Some("moved"), "{found:?}");
    assert_eq!(code, 0);
}

macro_rules! part_cases {
    ($cat:expr) => {
        $crate::parts::part_cases!(@each $cat;
            scanned_parts_record_what_one_scan_records,
            each_finding_is_reported_by_the_one_part_that_owns_it,
            a_file_moved_before_the_plan_is_paired_across_parts
        );
    };
    (@each $cat:expr; $($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                let cat: Option<$crate::catalog::Cat> = $cat;
                if let Some(cat) = cat {
                    $crate::parts::$name(&cat);
                }
            }
        )*
    };
}
pub(crate) use part_cases;

mod sqlite {
    super::part_cases!(Some(crate::catalog::Cat::Sqlite));
}

#[test]
fn the_part_comes_from_the_scheduler_and_is_checked() {
    let d = tempdir();
    tree(d.path());
    plan(d.path(), 2);
    let out = fixity(d.path())
        .args(["scan", "--plan", "plan"])
        .env("SLURM_ARRAY_TASK_ID", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("part 1 of 2"), "{}", text(&out.stdout));
    let out = run(d.path(), ["scan", "--plan", "plan", "--part", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("part 2 is out of range"), "{}", text(&out.stderr));
    let out = fixity(d.path())
        .args(["verify", "--plan", "plan"])
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("which part?"), "{}", text(&out.stderr));
}

#[test]
fn what_cannot_split_a_catalog_is_refused_with_the_reason() {
    let d = tempdir();
    tree(d.path());
    write(d.path(), "other/x", b"x");
    plan(d.path(), 2);
    let refused = |args: &[&str], says: &str| {
        let out = run(d.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{args:?}: {}", text(&out.stderr));
        assert!(!d.path().join("other/.fixity").exists(), "nothing recorded");
    };
    refused(&["scan", "other", "--plan", "plan", "--part", "0"], "is not the tree the plan");
    refused(&["verify", "--plan", "plan", "--part", "0", "--max-bytes", "1M"], "cannot be used");
    // A plan made from a list in no particular order.
    let list = b"t/d2/f02\0t/d0/f00\0t/d1/f01\0";
    std::fs::write(d.path().join("list"), list).unwrap();
    let out = run(d.path(), ["plan", "--from-list", "list", "--parts", "1", "-o", "unsorted"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    refused(&["scan", "--plan", "unsorted", "--part", "0"], "not made of one directory");
    refused(&["scan", "t", "--plan", "unsorted", "--part", "0"], "not in path order");
    refused(&["scan", "other", "--plan", "unsorted", "--part", "0"], "is not under");
    // The same list sorted is a plan of the tree.
    std::fs::write(d.path().join("list"), b"t/d0/f00\0t/d1/f01\0t/d2/f02\0").unwrap();
    let out = run(d.path(), ["plan", "--from-list", "list", "--parts", "2", "-o", "sorted"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for i in ["0", "1"] {
        let out = run(d.path(), ["scan", "t", "--plan", "sorted", "--part", i]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let store = Cat::Sqlite.records(&d.path().join("t"));
    let names: Vec<_> = store.iter().map(|r| text(&r.path)).collect();
    assert_eq!(names, ["d0/f00", "d1/f01", "d2/f02"]);
}

#[test]
fn a_file_split_across_parts_is_one_file_of_the_catalog() {
    let d = tempdir();
    tree(d.path());
    let big: Vec<u8> = (0..300_000u32).map(|i| (i * 13 + i / 7) as u8).collect();
    write(d.path(), "t/d1/huge", &big);
    let out = run(d.path(), ["plan", "t", "--parts", "4", "--piece-size", "4096", "-o", "plan"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lists: Vec<String> = (0..4)
        .map(|i| text(&std::fs::read(d.path().join(format!("plan/list-{i}"))).unwrap()))
        .collect();
    let holding = lists.iter().filter(|l| l.contains("d1/huge")).count();
    assert!(holding >= 2, "the big file is split across parts: {lists:?}");
    for i in 0..4 {
        let out = part(&Cat::Sqlite, d.path(), "scan", i);
        assert_eq!(out.status.code(), Some(0), "part {i}: {}", text(&out.stderr));
    }
    let other = tempdir();
    tree(other.path());
    write(other.path(), "t/d1/huge", &big);
    assert_eq!(Cat::Sqlite.run(other.path(), &["scan", "t"]).status.code(), Some(0));
    assert_eq!(
        contents(&Cat::Sqlite, &d.path().join("t")),
        contents(&Cat::Sqlite, &other.path().join("t"))
    );
    // Verified by parts: the part with its first piece reads it again, and no part
    // calls it missing.
    let t = d.path().join("t");
    let before = Cat::Sqlite.verified_times(&t)[&b"d1/huge"[..]];
    std::thread::sleep(std::time::Duration::from_millis(5));
    for i in 0..4 {
        let args = ["verify", "--plan", "plan", "--part", &i.to_string()];
        let (found, code) = findings(&Cat::Sqlite, d.path(), &args);
        assert_eq!((found, code), (BTreeMap::new(), 0), "part {i}");
    }
    assert!(Cat::Sqlite.verified_times(&t)[&b"d1/huge"[..]] > before);
}
