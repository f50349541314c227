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

/// Where a test's catalog is: each tree's own SQLite file, or a PostgreSQL database
/// (`--catalog URL`). The cases every catalog must pass take one
/// (`tests/fleet.rs` runs them on PostgreSQL).
pub(crate) enum Cat {
    Sqlite,
    Postgres(String),
}

impl Cat {
    /// `args` (a fixity command line) with this catalog's options after the command; a
    /// PostgreSQL catalog's `accept` and `forget` name the tree `t`.
    pub(crate) fn with(&self, args: &[&str]) -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        if let Cat::Postgres(url) = self {
            let mut extra = vec!["--catalog".to_string(), crate::util::pg::public(url)];
            if matches!(args.first(), Some(&("accept" | "forget"))) && !args.contains(&"--tree") {
                extra.extend(["--tree".to_string(), "t".to_string()]);
            }
            all.splice(1..1, extra);
        }
        all
    }

    pub(crate) fn run(&self, dir: &Path, args: &[&str]) -> Output {
        fixity(dir).args(self.with(args)).output().unwrap()
    }

    pub(crate) fn classify(
        &self,
        dir: &Path,
        args: &[&str],
    ) -> (BTreeMap<String, String>, serde_json::Value, i32) {
        let all = self.with(args);
        classify(dir, &all.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// The tree at `tree`'s catalog, opened to read.
    pub(crate) fn store(&self, tree: &Path) -> Box<dyn fixity::catalog::Store> {
        use fixity::catalog::{OpenOptions, StoreSpec, open_store};
        let spec = match self {
            Cat::Sqlite => StoreSpec::Sqlite(Catalog::default_path(tree)),
            Cat::Postgres(url) => {
                StoreSpec::Postgres(fixity::catalog::postgres::PgSpec::new(url, None, tree))
            }
        };
        let how = OpenOptions { read_only: true, ..OpenOptions::default() };
        open_store(&spec, &how).unwrap_or_else(|e| panic!("open the catalog: {e}"))
    }

    /// The record of `rel` in the tree at `tree`.
    pub(crate) fn record(&self, tree: &Path, rel: &[u8]) -> Option<fixity::catalog::Record> {
        self.store(tree).lookup(rel).unwrap()
    }

    /// Every record of the tree at `tree`, in path order.
    pub(crate) fn records(&self, tree: &Path) -> Vec<fixity::catalog::Record> {
        all_records(self.store(tree).as_ref())
    }

    /// When each file's content last matched: which files a run looked at (all ok).
    pub(crate) fn verified_times(&self, tree: &Path) -> BTreeMap<Vec<u8>, i64> {
        self.records(tree).into_iter().map(|r| (r.path, r.last_verified)).collect()
    }
}

/// Every record a store holds, in path order.
pub(crate) fn all_records(store: &dyn fixity::catalog::Store) -> Vec<fixity::catalog::Record> {
    let mut all: Vec<fixity::catalog::Record> = Vec::new();
    loop {
        let page = store.records_page(all.last().map(|r| r.path.as_slice()), 1000).unwrap();
        if page.is_empty() {
            return all;
        }
        all.extend(page);
    }
}

/// The cases every catalog must pass, each a `#[test]` of the same name (in the module
/// that invokes this) on the catalog `$cat` gives; `None` skips them (the reason said).
macro_rules! catalog_cases {
    ($cat:expr) => {
        $crate::catalog::catalog_cases!(@each $cat;
            every_class_is_found_on_a_real_tree,
            a_rescan_of_an_unchanged_tree_reads_nothing,
            slices_resume_and_cover_every_file_once,
            slices_go_on_in_path_order_and_come_round_for_what_is_left,
            a_duration_budget_stops_a_slice,
            modify_window_tolerates_coarse_mtimes,
            non_utf8_and_newline_names_round_trip_through_the_catalog,
            unreadable_files_and_directories_are_reported_not_missing,
            a_corrupt_file_stays_corrupt_in_every_slice_until_restored_or_accepted,
            a_missing_file_stays_missing_until_back_or_forgotten,
            a_file_missing_for_several_runs_is_still_found_moved,
            names_in_another_unicode_form_keep_their_records,
            a_whole_verify_reads_each_file_once,
            health_checks_follow_the_runs
        );
    };
    (@each $cat:expr; $($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                let cat: Option<$crate::catalog::Cat> = $cat;
                if let Some(cat) = cat {
                    $crate::catalog::$name(&cat);
                }
            }
        )*
    };
}
pub(crate) use crate::monitor::health_checks_follow_the_runs;
pub(crate) use catalog_cases;

mod sqlite {
    super::catalog_cases!(Some(super::Cat::Sqlite));
}

pub(crate) fn set_mtime(p: &Path, t: SystemTime) {
    std::fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
}

pub(crate) fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

pub(crate) fn every_class_is_found_on_a_real_tree(cat: &Cat) {
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "keep", b"unchanged content");
    write(&t, "rot.bin", b"0123456789abcdef");
    write(&t, "edit.txt", b"first version");
    write(&t, "dir/old-name", b"content that moves");
    write(&t, "gone", b"deleted later");
    let (found, summary, code) = cat.classify(d.path(), &["scan", "t"]);
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

    let (found, summary, code) = cat.classify(d.path(), &["verify", "t"]);
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
    let out = cat.run(d.path(), &["verify", "t"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("CORRUPT     rot.bin (recorded "), "{stdout}");
    assert!(stdout.contains("missing     gone\n"), "{stdout}");
    let row = cat.record(&t, b"rot.bin").unwrap();
    assert_eq!(row.digest.as_bytes(), row.algo.digest(b"0123456789abcdef").as_bytes());

    // Restoring the file from a backup (same bytes, same mtime) makes it ok again.
    std::fs::write(&rot, b"0123456789abcdef").unwrap();
    set_mtime(&rot, before);
    let (found, _, code) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!(code, 1, "a missing file is a finding");
    assert_eq!(found, map(&[("gone", "missing")]), "verify keeps reporting a missing file");
    // So does a scan, until the loss is accepted with `forget`.
    let (found, _, code) = cat.classify(d.path(), &["scan", "t"]);
    assert_eq!((found, code), (map(&[("gone", "missing")]), 1));
    let out = cat.run(d.path(), &["forget", "t/gone"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (found, summary, code) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!((found.len(), code), (0, 0));
    assert_eq!(summary["counts"]["ok"], 5);
}

pub(crate) fn a_rescan_of_an_unchanged_tree_reads_nothing(cat: &Cat) {
    let d = tempdir();
    for i in 0..50 {
        write(d.path(), format!("t/d{}/f{i}", i % 5), format!("file {i}").as_bytes());
    }
    let (_, s, _) = cat.classify(d.path(), &["scan", "t"]);
    assert_eq!(s["files_read"], 50);
    let (found, s, code) = cat.classify(d.path(), &["scan", "t"]);
    assert_eq!((found.len(), code), (0, 0));
    assert_eq!(s["files_read"], 0, "unchanged files are only statted");
    assert_eq!(s["counts"]["ok"], 50);
}

pub(crate) fn slices_resume_and_cover_every_file_once(cat: &Cat) {
    let d = tempdir();
    for i in 0..23 {
        write(d.path(), format!("t/f{i:02}"), &[i as u8; 1000]);
    }
    assert!(cat.run(d.path(), &["scan", "-q", "t"]).status.success());
    let tree = d.path().join("t");
    let mut seen: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
    let mut before = cat.verified_times(&tree);
    let mut slices = 0;
    loop {
        slices += 1;
        assert!(slices < 20, "slices never finished");
        let (_, s, code) = cat.classify(d.path(), &["verify", "--max-bytes", "4K", "t"]);
        assert_eq!(code, 0);
        let after = cat.verified_times(&tree);
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
    let (_, s, _) = cat.classify(d.path(), &["verify", "--max-bytes", "4K", "t"]);
    assert_eq!(s["counts"]["ok"], 5);
    let status = text(&cat.run(d.path(), &["status", "t"]).stdout);
    assert!(status.contains("pass:      in progress since"), "{status}");
    assert!(status.contains("18 files"), "{status}");
}

pub(crate) fn slices_go_on_in_path_order_and_come_round_for_what_is_left(cat: &Cat) {
    let d = tempdir();
    for i in 0..9 {
        write(d.path(), format!("t/f{i}"), &[i as u8; 1000]);
    }
    assert!(cat.run(d.path(), &["scan", "-q", "t"]).status.success());
    let tree = d.path().join("t");
    // Each slice reads up to 3,000 bytes: three of these files.
    let slice = |before: &mut BTreeMap<Vec<u8>, i64>, want: &[&str], complete: bool| {
        let (found, s, code) = cat.classify(d.path(), &["verify", "--max-bytes", "3000", "t"]);
        assert_eq!((found.len(), code), (0, 0), "{found:?}");
        let after = cat.verified_times(&tree);
        let touched: Vec<String> = after
            .iter()
            .filter(|(p, t)| before.get(*p) != Some(t))
            .map(|(p, _)| String::from_utf8(p.clone()).unwrap())
            .collect();
        assert_eq!(touched, want, "each slice goes on where the last one stopped");
        assert_eq!(s["complete"], complete, "{s}");
        *before = after;
    };
    let mut before = cat.verified_times(&tree);
    slice(&mut before, &["f0", "f1", "f2"], false);
    slice(&mut before, &["f3", "f4", "f5"], false);
    // A digest imported meanwhile for a file before the place the slices reached (never
    // verified): taken when the pass comes round to the start, before it ends.
    write(d.path(), "t/a", b"alpha");
    let out = fixity(d.path()).args(["hash", "-a", "blake3", "a"]).current_dir(&tree).output();
    std::fs::write(d.path().join("m.b3"), out.unwrap().stdout).unwrap();
    let import = ["import", "--from", "manifest", "--source", "m.b3", "t"];
    let out = cat.run(d.path(), &import);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    before = cat.verified_times(&tree);
    slice(&mut before, &["f6", "f7", "f8"], false);
    slice(&mut before, &["a"], true);
    // The next pass starts from the beginning.
    slice(&mut before, &["a", "f0", "f1", "f2"], false);
}

pub(crate) fn a_duration_budget_stops_a_slice(cat: &Cat) {
    let d = tempdir();
    for i in 0..5 {
        write(d.path(), format!("t/f{i}"), b"x");
    }
    cat.run(d.path(), &["scan", "-q", "t"]);
    let (_, s, _) = cat.classify(d.path(), &["verify", "--max-duration", "0s", "t"]);
    assert_eq!(s["stopped_by"], "max-duration");
    assert_eq!(s["complete"], false);
    assert_eq!(s["remaining_files"], 5);
    let out = cat.run(d.path(), &["verify", "--max-duration", "soon", "t"]);
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
fn export_writes_rhash_layouts_that_hold_the_catalogs_algorithm() {
    let d = tempdir();
    write(d.path(), "t/a", b"hello\n");
    // A fixed mtime (2001-09-09 01:46:40 UTC), which rhash's SFV header shows.
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let f = std::fs::File::options().write(true).open(d.path().join("t/a")).unwrap();
    f.set_modified(when).unwrap();
    assert!(cmd_in(d.path(), &["scan", "-q", "-a", "sha256", "t"]).status.success());
    let sha = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
    let bsd = cmd_in(d.path(), &["export", "--format", "rhash-bsd", "t"]);
    assert_eq!(text(&bsd.stdout), format!("SHA256 (a) = {sha}\n"), "{}", text(&bsd.stderr));
    let magnet = text(&cmd_in(d.path(), &["export", "--format", "MAGNET", "t"]).stdout);
    assert_eq!(magnet, format!("magnet:?xl=6&dn=a&xt=urn:sha256:{sha}\n"));
    // The size and mtime in the header come from the catalog's record, not the clock.
    let sfv = text(&cmd_in(d.path(), &["export", "--format", "rhash-sfv", "t"]).stdout);
    assert!(sfv.contains(";            6  01:46.40 2001-09-09 a\n"), "{sfv}");
    assert!(sfv.ends_with(&format!("a {}\n", sha.to_uppercase())), "{sfv}");
    // ed2k links hold ED2K (and AICH), which a sha256 catalog does not have.
    let ed2k = cmd_in(d.path(), &["export", "--format", "ed2k-link", "t"]);
    assert_eq!(ed2k.status.code(), Some(2));
    assert_eq!(ed2k.stdout, b"");
    assert!(
        text(&ed2k.stderr).contains("holds sha256 digests; ed2k-link lines hold ed2k, aich"),
        "{}",
        text(&ed2k.stderr)
    );
    let unknown = text(&cmd_in(d.path(), &["export", "--format", "bogus", "t"]).stderr);
    assert!(unknown.contains("rhash-bsd, magnet, ed2k-link,"), "{unknown}");
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

/// A catalog records the tree its paths are relative to. A run over a directory around
/// that tree, while the tree is still there, is refused before anything is written (its
/// files would be recorded moved, missing and new under other paths); a directory inside
/// it is a subtree of it (issue 38: the run covers the records below it); a tree that
/// moved, even below where it was, is the catalog's tree from then on.
#[test]
fn a_run_over_part_of_the_catalogs_tree_is_refused_and_a_moved_tree_is_taken() {
    use std::os::unix::ffi::OsStrExt;
    let d = tempdir();
    write(d.path(), "t/a/x", b"1");
    write(d.path(), "t/b/y", b"2");
    let cat = d.path().join("c.db");
    let c = cat.to_str().unwrap();
    assert!(cmd_in(d.path(), &["scan", "-q", "--catalog", c, "t"]).status.success());
    let recorded = rows(&cat);
    assert_eq!(recorded.len(), 2);
    for args in [["verify", "t/a"], ["scan", "t/b"], ["repair", "t/a"]] {
        let out = cmd_in(d.path(), &[args[0], "--catalog", c, args[1]]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.contains("/t, subtree "), "{args:?}: {err}");
    }
    // Around the tree: refused.
    let out = cmd_in(d.path(), &["verify", "--catalog", c, "."]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(err.contains("holds") && err.contains("/t, the tree whose files catalog"), "{err}");
    assert!(err.contains("run over") && err.contains("--catalog"), "{err}");
    // Nothing was written: every record present and as it was.
    assert_eq!(rows(&cat), recorded);
    let (found, summary, code) = classify(d.path(), &["verify", "--catalog", c, "t"]);
    assert_eq!((found.len(), code), (0, 0), "{found:?}");
    assert_eq!(summary["counts"]["ok"], 2);

    // The tree moved into a directory of its own (a name that is not UTF-8): its files'
    // old paths are gone, so that directory is the tree now, and the old place (around
    // it) is refused in turn.
    let moved = d.path().join("t").join(std::ffi::OsStr::from_bytes(b"mov\xffed"));
    std::fs::create_dir(&moved).unwrap();
    for name in ["a", "b"] {
        std::fs::rename(d.path().join("t").join(name), moved.join(name)).unwrap();
    }
    let out = fixity(d.path()).args(["verify", "--json", "--catalog", c]).arg(&moved).output();
    let out = out.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(summary["summary"]["counts"]["ok"], 2, "{summary}");
    assert_eq!(rows(&cat), recorded);
    let out = cmd_in(d.path(), &["verify", "--catalog", c, "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("holds"), "{}", text(&out.stderr));
    // A copy beside the tree (neither inside it nor around it) is compared with the
    // catalog, as a copy is.
    let copy = d.path().join("copy");
    std::fs::create_dir_all(copy.join("a")).unwrap();
    std::fs::create_dir_all(copy.join("b")).unwrap();
    std::fs::write(copy.join("a/x"), b"1").unwrap();
    std::fs::write(copy.join("b/y"), b"2").unwrap();
    // (Its files' mtimes are the copy's: they are told modified, none missing or new.)
    let (found, _, code) = classify(d.path(), &["verify", "--catalog", c, "copy"]);
    assert_eq!(code, 0);
    assert_eq!(found, map(&[("a/x", "modified"), ("b/y", "modified")]));
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

pub(crate) fn modify_window_tolerates_coarse_mtimes(cat: &Cat) {
    let d = tempdir();
    let f = write(d.path(), "t/f", b"same bytes");
    cat.run(d.path(), &["scan", "-q", "t"]);
    set_mtime(&f, mtime(&f) + Duration::from_secs(1));
    let (found, _, _) = cat.classify(d.path(), &["verify", "--modify-window", "2", "t"]);
    assert!(found.is_empty(), "within the window: {found:?}");
    let (found, _, _) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!(found, map(&[("f", "modified")]));
}

pub(crate) fn non_utf8_and_newline_names_round_trip_through_the_catalog(cat: &Cat) {
    use std::os::unix::ffi::OsStrExt;
    let d = tempdir();
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    std::fs::write(t.join(std::ffi::OsStr::from_bytes(b"bad\xffname")), b"a").unwrap();
    std::fs::write(t.join("two\nlines"), b"b").unwrap();
    cat.run(d.path(), &["scan", "-q", "t"]);
    let out = cat.run(d.path(), &["verify", "t"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("ok 2"), "{}", text(&out.stdout));
    assert!(cat.record(&t, b"bad\xffname").is_some());
    assert!(cat.record(&t, b"two\nlines").is_some());
}

#[test]
fn a_busy_catalog_is_reported_not_corrupted() {
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    cmd_in(d.path(), &["scan", "-q", "t"]);
    let lock = fixity::catalog::lock::RunLock::acquire(
        &d.path().join("t/.fixity/catalog.db.lock"),
        false,
        false,
    )
    .unwrap()
    .unwrap();
    let out = cmd_in(d.path(), &["verify", "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is busy"), "{}", text(&out.stderr));
    // With --wait the second run queues and finishes once the first lets go.
    let mut waiting = fixity(d.path())
        .args(["verify", "--wait", "t"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(waiting.try_wait().unwrap().is_none(), "still waiting for the lock");
    drop(lock);
    let out = waiting.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("ok 1"), "{}", text(&out.stdout));
}

pub(crate) fn unreadable_files_and_directories_are_reported_not_missing(cat: &Cat) {
    let d = tempdir();
    write(d.path(), "t/ok", b"fine");
    let secret = write(d.path(), "t/secret", b"hidden");
    write(d.path(), "t/locked/inner", b"inside");
    let Some(mut first) = crate::util::unprivileged(d.path()) else {
        skip("unreadable files", "running as root and cannot switch to nobody here");
        return;
    };
    assert!(first.args(cat.with(&["scan", "-q", "t"])).status().unwrap().success());
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(d.path().join("t/locked"), std::fs::Permissions::from_mode(0o000))
        .unwrap();
    let out = crate::util::unprivileged(d.path())
        .unwrap()
        .args(cat.with(&["verify", "t"]))
        .output()
        .unwrap();
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
pub(crate) fn many_files(root: &Path, n: usize) {
    for i in 0..n {
        let data: Vec<u8> = (0..4096u32).map(|j| (j as usize * 31 + i * 7) as u8).collect();
        write(root, format!("d{:02}/f{i:05}", i % 40), &data);
    }
}

fn rows(catalog: &Path) -> Vec<(Vec<u8>, u64, i128, Vec<u8>)> {
    let cat = Catalog::open(catalog, false, None).unwrap();
    assert_eq!(cat.integrity_check().unwrap(), "ok");
    let r = cat.reader().unwrap();
    r.by_path(None, false, 1_000_000)
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
fn xattr_store_reads_teracopys_md5_stream_where_fixity_has_no_record() {
    let d = tempdir();
    if !xattrs_work(d.path()) {
        skip("xattr store", "the test directory's file system has no user xattrs");
        return;
    }
    // TeraCopy's MD5 stream (MD5Stream's layout) as a Samba server keeps a Windows
    // client's: the digest and the file's write time to 100 ns.
    let md5 = fixity::algo::lookup("md5").unwrap();
    let t = d.path().join("t");
    let when = std::time::UNIX_EPOCH + std::time::Duration::new(1_700_000_000, 123_456_700);
    let stream = |content: &[u8], stamp: &str| {
        let hex = md5.digest(content).to_hex().to_uppercase();
        format!("MD5={hex}\r\nFileWriteTimeUtc={stamp}\r\n\0").into_bytes()
    };
    let stamp = "2023-11-14T22:13:20.1234567Z";
    for (name, content, recorded) in [
        ("kept", &b"kept"[..], &b"kept"[..]),
        ("rotted", b"rotted", b"ROTTED"),
        ("edited", b"edited", b"EDITED"),
    ] {
        let p = write(&t, name, content);
        xattr::set(&p, "user.DosStream.MD5:$DATA", &stream(recorded, stamp)).unwrap();
        set_mtime(&p, when);
    }
    // Written after TeraCopy took its digest: an edit, not rot.
    set_mtime(&t.join("edited"), when + std::time::Duration::from_secs(2));
    let (found, s, code) = classify(d.path(), &["verify", "--store", "xattr", "t"]);
    assert_eq!(code, 1, "{found:?}");
    assert_eq!(found, map(&[("rotted", "corrupt"), ("edited", "modified")]), "{s}");
    // fixity's own record goes beside the stream of the file that matched.
    let kept = t.join("kept");
    assert!(xattr::get(&kept, "user.fixity.md5").unwrap().is_some());
    assert!(xattr::get(&kept, "user.DosStream.MD5:$DATA").unwrap().is_some(), "left as it was");
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
    assert!(err.contains("does not keep user extended attributes"), "{err}");
    assert!(err.contains("proc"), "names the file system: {err}");
}

/// Writes `data` over `p` and gives it back its mtime: content changed, nothing else.
fn rot(p: &Path, data: &[u8]) {
    let before = mtime(p);
    std::fs::write(p, data).unwrap();
    set_mtime(p, before);
}

pub(crate) fn a_corrupt_file_stays_corrupt_in_every_slice_until_restored_or_accepted(cat: &Cat) {
    let d = tempdir();
    for i in 0..12 {
        write(d.path(), format!("t/f{i:02}"), &[i as u8; 1000]);
    }
    assert!(cat.run(d.path(), &["scan", "-q", "t"]).status.success());
    rot(&d.path().join("t/f03"), &[0xee; 1000]);
    rot(&d.path().join("t/f07"), &[0xdd; 1000]);
    let (found, _, code) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!((found, code), (map(&[("f03", "corrupt"), ("f07", "corrupt")]), 1));
    // Every slice of a pass, and the slices of the next pass, report both corrupt files
    // and exit 1: they are re-checked first by every run, whatever its budget.
    let mut passes = 0;
    for slice in 0..12 {
        let (found, s, code) = cat.classify(d.path(), &["verify", "--max-bytes", "3K", "t"]);
        assert_eq!(found, map(&[("f03", "corrupt"), ("f07", "corrupt")]), "slice {slice}");
        assert_eq!(code, 1, "slice {slice}");
        assert_eq!(s["counts"]["corrupt"], 2, "slice {slice}");
        if s["complete"] == true {
            passes += 1;
        }
    }
    assert!(passes >= 2, "the slices went through whole passes");
    // A scan reads them again too (and only them).
    let (found, s, code) = cat.classify(d.path(), &["scan", "t"]);
    assert_eq!((found, code), (map(&[("f03", "corrupt"), ("f07", "corrupt")]), 1));
    assert_eq!(s["files_read"], 2);
    // Restored from a backup: ok again, in the very next slice.
    rot(&d.path().join("t/f03"), &[3u8; 1000]);
    let (found, _, code) = cat.classify(d.path(), &["verify", "--max-bytes", "1", "t"]);
    assert_eq!((found, code), (map(&[("f07", "corrupt")]), 1));
    // The new content is wanted: accept it explicitly.
    let out = cat.run(d.path(), &["accept", "t/f07"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("accepted    t/f07 (was corrupt): recorded "));
    let (found, s, code) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!((found.len(), code), (0, 0), "{found:?}");
    assert_eq!(s["counts"]["ok"], 12);
    let blake3 = fixity::algo::lookup("blake3").unwrap();
    let f07 = cat.record(&d.path().join("t"), b"f07").unwrap();
    assert_eq!(f07.digest.as_bytes(), blake3.digest(&[0xdd; 1000]).as_bytes());
    // accept refuses what it cannot accept, and then changes nothing.
    let out = cat.run(d.path(), &["accept", "t/f01", "t/nothere"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("t/nothere: not in the catalog"), "{}", text(&out.stderr));
    let out = cat.run(d.path(), &["accept", "--tree", "t", "/etc/hostname"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is not inside the tree"), "{}", text(&out.stderr));
}

pub(crate) fn a_missing_file_stays_missing_until_back_or_forgotten(cat: &Cat) {
    let d = tempdir();
    write(d.path(), "t/keep", b"k");
    let a = write(d.path(), "t/a", b"alpha");
    let b = write(d.path(), "t/b", b"bravo");
    write(d.path(), "t/sub/x", b"x");
    write(d.path(), "t/sub/deeper/y", b"y");
    assert!(cat.run(d.path(), &["scan", "-q", "t"]).status.success());
    let b_time = mtime(&b);
    std::fs::remove_file(&a).unwrap();
    std::fs::remove_file(&b).unwrap();
    for round in 0..3 {
        for command in ["scan", "verify"] {
            let (found, s, code) = cat.classify(d.path(), &[command, "t"]);
            assert_eq!(found, map(&[("a", "missing"), ("b", "missing")]), "{command} {round}");
            assert_eq!((code, s["counts"]["missing"].as_u64()), (1, Some(2)), "{command}");
        }
    }
    let status = text(&cat.run(d.path(), &["status", "t"]).stdout);
    assert!(status.contains("\nmissing    a\nmissing    b\n"), "status lists them: {status}");
    // b is back as it was: ok again, no finding.
    std::fs::write(&b, b"bravo").unwrap();
    set_mtime(&b, b_time);
    let (found, _, code) = cat.classify(d.path(), &["scan", "t"]);
    assert_eq!((found, code), (map(&[("a", "missing")]), 1));
    // forget refuses a file that is there, or one never recorded, and changes nothing.
    for (wrong, why) in [
        ("t/keep", "t/keep: not missing (forget drops the records of missing files only)"),
        ("t/zzz", "t/zzz: nothing recorded there"),
    ] {
        let out = cat.run(d.path(), &["forget", "t/a", wrong]);
        assert_eq!(out.status.code(), Some(2), "{wrong}");
        assert_eq!(text(&out.stderr), format!("fixity: {why}\nfixity: nothing was forgotten\n"));
        assert!(out.stdout.is_empty());
    }
    let (found, _, _) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!(found, map(&[("a", "missing")]));
    let out = cat.run(d.path(), &["forget", "t/a"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "forgot      t/a: 1 missing file\n");
    let (found, _, code) = cat.classify(d.path(), &["scan", "t"]);
    assert_eq!((found.len(), code), (0, 0), "{found:?}");

    // A whole directory gone: kept, named, "is it mounted?"; forgotten as one.
    std::fs::remove_dir_all(d.path().join("t/sub")).unwrap();
    let out = cat.run(d.path(), &["scan", "t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("t/sub: all 2 recorded files under it are missing: is it mounted?"),
        "{err}"
    );
    assert!(!err.contains("deeper:"), "only the outermost directory is named: {err}");
    let out = cat.run(d.path(), &["forget", "t/sub"]);
    assert_eq!(text(&out.stdout), "forgot      t/sub: 2 missing files\n", "{}", text(&out.stderr));
    let (found, _, code) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!((found.len(), code), (0, 0), "{found:?}");
}

/// A verify without a budget reads every file in its walk (the reader's stat tells a
/// changed file) and then what the walk did not meet: each file once, a file that is
/// back marked present, a standing finding read again, an excluded file still verified.
pub(crate) fn a_whole_verify_reads_each_file_once(cat: &Cat) {
    let d = tempdir();
    write(d.path(), "t/keep", b"keep");
    write(d.path(), "t/edit", b"first");
    let b = write(d.path(), "t/b", b"bravo");
    write(d.path(), "t/sub/c", b"charlie");
    assert!(cat.run(d.path(), &["scan", "-q", "t"]).status.success());
    let b_time = mtime(&b);
    std::fs::remove_file(&b).unwrap();
    let (found, s, code) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!((found, code), (map(&[("b", "missing")]), 1));
    assert_eq!((s["files_read"].as_u64(), s["complete"].as_bool()), (Some(3), Some(true)));
    // b is back as it was, keep rots, edit is edited: each file read once.
    std::fs::write(&b, b"bravo").unwrap();
    set_mtime(&b, b_time);
    rot(&d.path().join("t/keep"), b"KEEP");
    std::fs::write(d.path().join("t/edit"), b"second version").unwrap();
    let (found, s, code) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!((found, code), (map(&[("edit", "modified"), ("keep", "corrupt")]), 1));
    assert_eq!(s["files_read"].as_u64(), Some(4), "{s}");
    assert_eq!(s["counts"]["ok"].as_u64(), Some(2), "{s}");
    assert_eq!((s["remaining_files"].as_u64(), s["complete"].as_bool()), (Some(0), Some(true)));
    let back = cat.record(&d.path().join("t"), b"b").unwrap();
    assert_eq!(back.missing_since, None, "b is present again");
    let status = text(&cat.run(d.path(), &["status", "t"]).stdout);
    assert!(status.contains(", 0 missing"), "{status}");
    // The standing finding is read again; the excluded file is read after the walk.
    let (found, s, code) = cat.classify(d.path(), &["verify", "--exclude", "sub", "t"]);
    assert_eq!((found, code), (map(&[("keep", "corrupt")]), 1));
    assert_eq!(s["files_read"].as_u64(), Some(4), "{s}");
    assert_eq!((s["remaining_files"].as_u64(), s["complete"].as_bool()), (Some(0), Some(true)));
}

#[test]
fn a_report_that_cannot_be_written_forgets_nothing() {
    if !Path::new("/dev/full").exists() {
        skip("a full stdout", "no /dev/full here");
        return;
    }
    let d = tempdir();
    write(d.path(), "t/keep", b"k");
    let gone = write(d.path(), "t/gone", b"g");
    let bad = write(d.path(), "t/bad", b"good content");
    assert!(cmd_in(d.path(), &["scan", "-q", "t"]).status.success());
    std::fs::remove_file(&gone).unwrap();
    rot(&bad, b"b0rk content");
    // Found by a verify whose report cannot be written; then reported by a scan, whose
    // report cannot be written either; then by a verify.
    for (command, next) in [("verify", "scan"), ("scan", "verify")] {
        let full = std::fs::File::options().write(true).open("/dev/full").unwrap();
        let out = fixity(d.path()).args([command, "t"]).stdout(full).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("write error"), "{}", text(&out.stderr));
        // Nothing was dropped for having been "reported".
        let (found, _, code) = classify(d.path(), &[next, "t"]);
        assert_eq!((found, code), (map(&[("bad", "corrupt"), ("gone", "missing")]), 1));
    }
}

#[test]
fn a_vanished_tree_or_sub_mount_keeps_its_records() {
    // An unmounted file system shows an empty mount point: nothing is forgotten.
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    write(d.path(), "t/sub/b", b"2");
    let catalog = d.path().join("c.db");
    assert!(cmd_in(d.path(), &["scan", "-q", "--catalog", "c.db", "t"]).status.success());
    std::fs::remove_file(d.path().join("t/a")).unwrap();
    std::fs::remove_dir_all(d.path().join("t/sub")).unwrap();
    for command in ["verify", "scan", "verify"] {
        let out = cmd_in(d.path(), &[command, "--catalog", "c.db", "t"]);
        assert_eq!(out.status.code(), Some(1), "{command}");
        let err = text(&out.stderr);
        assert!(
            err.contains("t: all 2 recorded files under it are missing: is it mounted?"),
            "{err}"
        );
        let cat = Catalog::open(&catalog, false, None).unwrap();
        assert_eq!(cat.missing().unwrap().len(), 2, "still on record after {command}");
    }
    // Back, unchanged: ok.
    write(d.path(), "t/a", b"1");
    write(d.path(), "t/sub/b", b"2");
    let out = cmd_in(d.path(), &["scan", "--catalog", "c.db", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));

    // A sub-mount absent during a scan (here: moved away), one of its files corrupted
    // meanwhile: when it is back, that file is CORRUPT, not new.
    let e = tempdir();
    let t = e.path().join("t");
    write(&t, "top", b"top");
    write(&t, "mnt/photo", b"the good picture");
    write(&t, "mnt/other", b"other");
    assert!(cmd_in(e.path(), &["scan", "-q", "t"]).status.success());
    let away = e.path().join("away");
    std::fs::rename(t.join("mnt"), &away).unwrap();
    std::fs::create_dir(t.join("mnt")).unwrap(); // the empty mount point
    let out = cmd_in(e.path(), &["scan", "t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("t/mnt: all 2 recorded files under it are missing: is it mounted?"),
        "{err}"
    );
    rot(&away.join("photo"), b"the b0rk picture");
    std::fs::remove_dir(t.join("mnt")).unwrap();
    std::fs::rename(&away, t.join("mnt")).unwrap();
    let (found, _, code) = classify(e.path(), &["verify", "t"]);
    assert_eq!((found, code), (map(&[("mnt/photo", "corrupt")]), 1));
}

/// A tmpfs of `size` at `dir`, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the file system under `dir` until `leave` bytes are free.
fn fill(dir: &Path, leave: u64) {
    let free = {
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: a valid C string and a struct to fill.
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
        st.f_bavail as u64 * st.f_frsize as u64
    };
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![0u8; 4096];
    let mut left = free.saturating_sub(leave);
    use std::io::Write;
    while left > 0 {
        let n = left.min(4096) as usize;
        if f.write_all(&chunk[..n]).is_err() {
            break;
        }
        left -= n as u64;
    }
}

#[test]
fn a_full_catalog_file_system_never_hides_a_finding() {
    let d = tempdir();
    for i in 0..400 {
        write(d.path(), format!("t/f{i:03}"), format!("file {i}").as_bytes());
    }
    let mut failed_runs = 0;
    // The catalog's file system full at several points: before the run can open it,
    // when it starts, in the middle of its writes.
    for leave in [0u64, 8 << 10, 40 << 10, 64 << 10, 100 << 10] {
        let dir = d.path().join(format!("cat{leave}"));
        let Some(_mount) = Tmpfs::mount(&dir, "2m") else {
            skip("a full catalog file system", "cannot mount a tmpfs (not root?)");
            return;
        };
        let db = dir.join("c.db");
        let db_arg = db.to_str().unwrap();
        let out = cmd_in(d.path(), &["scan", "-q", "--catalog", db_arg, "t"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let victim = d.path().join("t/f123");
        rot(&victim, b"file X23");
        fill(&dir, leave);
        let out = cmd_in(d.path(), &["verify", "--catalog", db_arg, "t"]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(stdout.contains("CORRUPT     f123 (recorded "), "free {leave}: {stdout}{stderr}");
        match out.status.code() {
            Some(1) => {}
            Some(2) => {
                failed_runs += 1;
                assert!(stderr.contains("the findings above were not recorded"), "{stderr}");
                assert!(stdout.contains("CORRUPT 1"), "the summary too: {stdout}");
            }
            other => panic!("free {leave}: exit {other:?}: {stderr}"),
        }
        rot(&victim, b"file 123");
    }
    assert!(failed_runs >= 1, "at least one run could not write its catalog");
}

#[test]
fn a_catalog_deleted_mid_scan_is_an_error() {
    let d = tempdir();
    let t = d.path().join("t");
    // Enough files that the deletion lands mid-run, not in the moment between the run's
    // last look at its catalog and its exit (a deletion then is one after the run, which
    // no program can see): with 3000, that happened about once in twenty loaded runs.
    many_files(&t, 12_000);
    let catalog = d.path().join("c.db");
    for delay_ms in [100u64, 250, 600] {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(d.path().join(format!("c.db{suffix}")));
        }
        let mut child = fixity(d.path())
            .args(["scan", "-q", "--catalog", "c.db", "-j", "1", "t"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        if !catalog.exists() || child.try_wait().unwrap().is_some() {
            let _ = child.wait();
            continue;
        }
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(d.path().join(format!("c.db{suffix}")));
        }
        let out = child.wait_with_output().unwrap();
        if out.status.code() == Some(0) && !catalog.exists() {
            panic!("a scan whose catalog was deleted under it exited 0");
        }
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("was deleted or replaced during the run"),
            "{}",
            text(&out.stderr)
        );
        return;
    }
    skip("catalog deleted mid-scan", "every scan finished before its catalog could be deleted");
}

#[test]
fn status_and_export_read_a_catalog_on_read_only_media() {
    let d = tempdir();
    write(d.path(), "t/a", b"alpha");
    write(d.path(), "t/b", b"bravo");
    assert!(cmd_in(d.path(), &["scan", "-q", "-a", "sha256", "t"]).status.success());
    let Some(_) = crate::util::unprivileged(d.path()) else {
        skip("read-only catalog", "running as root and cannot switch to nobody here");
        return;
    };
    let dir = d.path().join("t/.fixity");
    let db = dir.join("catalog.db");
    let before = std::fs::read(&db).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let status = crate::util::unprivileged(d.path()).unwrap().args(["status", "t"]).output();
    let export =
        crate::util::unprivileged(d.path()).unwrap().args(["export", "t"]).output().unwrap();
    let verify = crate::util::unprivileged(d.path()).unwrap().args(["verify", "t"]).output();
    let listing: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let status = status.unwrap();
    assert_eq!(status.status.code(), Some(0), "{}", text(&status.stderr));
    assert!(
        text(&status.stdout).contains("files:     2 (10 B), 0 missing"),
        "{}",
        text(&status.stdout)
    );
    assert_eq!(export.status.code(), Some(0), "{}", text(&export.stderr));
    let sha = fixity::algo::lookup("sha256").unwrap();
    assert_eq!(
        text(&export.stdout),
        format!("{}  a\n{}  b\n", sha.digest(b"alpha").to_hex(), sha.digest(b"bravo").to_hex())
    );
    // A verify compares, and then says it could not record.
    let verify = verify.unwrap();
    assert_eq!(verify.status.code(), Some(2), "{}", text(&verify.stderr));
    assert!(text(&verify.stdout).contains("ok 2"), "{}", text(&verify.stdout));
    assert_eq!(std::fs::read(&db).unwrap(), before, "the catalog is untouched");
    assert_eq!(listing.len(), 2, "nothing added beside it: {listing:?}");
}

#[test]
fn an_empty_or_foreign_catalog_is_refused_untouched() {
    let d = tempdir();
    write(d.path(), "t/a", b"alpha");
    let other = d.path().join("other.db");
    {
        let conn = rusqlite::Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x');")
            .unwrap();
    }
    let cases: [(&str, Option<Vec<u8>>, &str); 3] = [
        ("empty.db", Some(Vec::new()), "the file is empty"),
        ("notes.txt", Some(b"shopping list\n".to_vec()), "not an SQLite database"),
        ("other.db", None, "an SQLite database without fixity's tables"),
    ];
    for (name, content, why) in cases {
        let path = d.path().join(name);
        if let Some(c) = &content {
            std::fs::write(&path, c).unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        for command in ["scan", "verify", "status", "export"] {
            let out = cmd_in(d.path(), &[command, "--catalog", name, "t"]);
            assert_eq!(out.status.code(), Some(2), "{command} {name}");
            let err = text(&out.stderr);
            assert!(err.contains(&format!("{name} is not a fixity catalog ({why})")), "{err}");
            assert_eq!(std::fs::read(&path).unwrap(), before, "{command} left {name} alone");
        }
    }
    // The default catalog, 0 bytes (as a crash of an older fixity could leave it).
    write(d.path(), "t/.fixity/catalog.db", b"");
    let out = cmd_in(d.path(), &["scan", "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is not a fixity catalog (the file is empty)"));
    assert_eq!(std::fs::metadata(d.path().join("t/.fixity/catalog.db")).unwrap().len(), 0);
}

#[test]
fn exit_statuses_are_documented_in_help() {
    for command in ["scan", "verify"] {
        let out = cmd_in(Path::new("."), &[command, "--help"]);
        let help = text(&out.stdout);
        assert!(
            help.contains("Exit status: 0 clean; 1 findings (corrupt, missing or unreadable"),
            "{help}"
        );
        assert!(help.contains("2 could not run"), "{help}");
    }
    for command in ["export", "accept", "forget"] {
        let out = cmd_in(Path::new("."), &[command, "--help"]);
        assert!(text(&out.stdout).contains("Exit status: 0 done"), "{command}");
    }
    let status = text(&cmd_in(Path::new("."), &["status", "--help"]).stdout);
    assert!(status.contains("Exit status: 0 shown; 1 with --max-age"), "{status}");
    assert!(status.contains("With --nagios: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN"), "{status}");
}

pub(crate) fn a_file_missing_for_several_runs_is_still_found_moved(cat: &Cat) {
    let d = tempdir();
    write(d.path(), "t/keep", b"k");
    let old = write(d.path(), "t/old/report.pdf", b"the report, a few bytes");
    assert!(cat.run(d.path(), &["scan", "-q", "t"]).status.success());
    std::fs::remove_file(&old).unwrap();
    for _ in 0..2 {
        let (found, _, code) = cat.classify(d.path(), &["scan", "t"]);
        assert_eq!((found, code), (map(&[("old/report.pdf", "missing")]), 1));
    }
    write(d.path(), "t/archive/report.pdf", b"the report, a few bytes");
    let (found, _, code) = cat.classify(d.path(), &["scan", "t"]);
    assert_eq!((found, code), (map(&[("old/report.pdf -> archive/report.pdf", "moved")]), 0));
}

/// A tree copied through a system that turns a Mac's NFD names into NFC (`e` and a
/// combining accent become `é`): each file is its record under another form of its
/// name. As recorded it is moved, edited it is modified, and rotted on the way it is
/// CORRUPT under its new name, never a new file beside a missing one.
pub(crate) fn names_in_another_unicode_form_keep_their_records(cat: &Cat) {
    let d = tempdir();
    let t = d.path().join("t");
    let (nfd_dir, nfc_dir) = ("cafe\u{301}", "caf\u{e9}");
    write(&t, format!("{nfd_dir}/rot.txt"), b"the recorded bytes");
    write(&t, format!("{nfd_dir}/edit.txt"), b"before");
    write(&t, format!("{nfd_dir}/empty"), b"");
    write(&t, "e\u{301}te\u{301}.txt", b"summer");
    write(&t, "plain.txt", b"ascii");
    assert!(cat.run(d.path(), &["scan", "-q", "t"]).status.success());
    // The copy: the same files under the NFC form of their names, mtimes kept.
    std::fs::rename(t.join(nfd_dir), t.join(nfc_dir)).unwrap();
    std::fs::rename(t.join("e\u{301}te\u{301}.txt"), t.join("\u{e9}t\u{e9}.txt")).unwrap();
    rot(&t.join(format!("{nfc_dir}/rot.txt")), b"the rotten bytes!!");
    let edited = t.join(format!("{nfc_dir}/edit.txt"));
    std::fs::write(&edited, b"after, longer").unwrap();
    set_mtime(&edited, SystemTime::now() + Duration::from_secs(5));

    let (found, s, code) = cat.classify(d.path(), &["verify", "-v", "t"]);
    assert_eq!(code, 1, "{found:?} {s}");
    let moved = |from: &str, to: &str| (format!("{from} -> {to}"), "moved".to_string());
    let want = BTreeMap::from([
        (format!("{nfc_dir}/rot.txt"), "corrupt".to_string()),
        (format!("{nfc_dir}/edit.txt"), "modified".to_string()),
        moved(&format!("{nfd_dir}/empty"), &format!("{nfc_dir}/empty")),
        moved("e\u{301}te\u{301}.txt", "\u{e9}t\u{e9}.txt"),
    ]);
    assert_eq!(found, want, "{s}");
    assert_eq!(s["counts"]["missing"], 0, "{s}");
    assert_eq!(s["counts"]["new"], 0, "{s}");
    assert_eq!(s["counts"]["corrupt"], 1, "{s}");
    // The finding stands under the new name until the content is back: the record kept
    // the digest of the recorded bytes.
    let (found, _, code) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!((found, code), (map(&[(&format!("{nfc_dir}/rot.txt"), "corrupt")]), 1));
    rot(&t.join(format!("{nfc_dir}/rot.txt")), b"the recorded bytes");
    let (found, s, code) = cat.classify(d.path(), &["verify", "t"]);
    assert_eq!((found.len(), code), (0, 0), "{found:?} {s}");
    assert_eq!(s["counts"]["ok"], 5, "{s}");
    // The text says why two names that look alike are a move.
    let e = tempdir();
    write(e.path(), "t/e\u{301}", b"one");
    assert!(cat.run(e.path(), &["scan", "-q", "t"]).status.success());
    std::fs::rename(e.path().join("t/e\u{301}"), e.path().join("t/\u{e9}")).unwrap();
    let out = cat.run(e.path(), &["scan", "t"]);
    assert!(
        text(&out.stdout).starts_with("moved ")
            && text(&out.stdout).contains(" (the same name in another Unicode form)\n"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_catalog_write_failing_mid_run_never_hides_a_finding() {
    // A trigger makes the catalog refuse one row's update: the run's batch (which holds
    // the corrupt file's finding) is rolled back, so the finding can only come from
    // memory. No root needed, unlike a full file system.
    let d = tempdir();
    for i in 0..10 {
        write(d.path(), format!("t/f{i}"), format!("file {i}").as_bytes());
    }
    assert!(cmd_in(d.path(), &["scan", "-q", "--catalog", "c.db", "t"]).status.success());
    rot(&d.path().join("t/f2"), b"file X");
    let conn = rusqlite::Connection::open(d.path().join("c.db")).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER refuse BEFORE UPDATE ON files WHEN NEW.path = CAST('f7' AS BLOB)
         BEGIN SELECT RAISE(ABORT, 'injected failure'); END;",
    )
    .unwrap();
    drop(conn);
    for json in [false, true] {
        let mut args = vec!["verify", "--catalog", "c.db", "t"];
        if json {
            args.push("--json");
        }
        let out = cmd_in(d.path(), &args);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
        if json {
            let line = stdout.lines().find(|l| l.contains(r#""path":"f2""#)).unwrap_or_default();
            assert!(line.contains(r#""class":"corrupt""#), "{stdout}");
        } else {
            assert!(stdout.starts_with("CORRUPT     f2 (recorded "), "{stdout}");
            assert!(stdout.contains("CORRUPT 1"), "{stdout}");
        }
        assert!(stderr.contains("injected failure"), "{stderr}");
        assert!(stderr.contains("the findings above were not recorded"), "{stderr}");
    }
    let conn = rusqlite::Connection::open(d.path().join("c.db")).unwrap();
    conn.execute_batch("DROP TRIGGER refuse").unwrap();
    drop(conn);
    let (found, _, code) = classify(d.path(), &["verify", "--catalog", "c.db", "t"]);
    assert_eq!((found, code), (map(&[("f2", "corrupt")]), 1));
}

/// A tree of `n` files scanned into the xattr store, then `t/f1` rotted and found CORRUPT
/// by a verify: the path of `t/f1`. `None` (with a visible skip) where the test directory's
/// file system has no user xattrs.
fn xattr_tree_with_a_corrupt_file(dir: &Path, n: usize, what: &str) -> Option<std::path::PathBuf> {
    if !xattrs_work(dir) {
        skip(what, "the test directory's file system has no user xattrs");
        return None;
    }
    for i in 0..n {
        write(dir, format!("t/f{i}"), &[b'a' + i as u8; 1000]);
    }
    cmd_in(dir, &["scan", "-q", "--store", "xattr", "t"]);
    let f1 = dir.join("t/f1");
    rot(&f1, &[b'z'; 1000]);
    let (found, _, code) = classify(dir, &["verify", "--store", "xattr", "t"]);
    assert_eq!((found, code), (map(&[("f1", "corrupt")]), 1));
    Some(f1)
}

#[test]
fn xattr_corrupt_files_stay_corrupt_in_every_run_until_restored() {
    let d = tempdir();
    let Some(f1) = xattr_tree_with_a_corrupt_file(d.path(), 8, "xattr corrupt findings") else {
        return;
    };
    // Slices that start past it, and scans, read it again.
    for round in 0..4 {
        let (found, _, code) =
            classify(d.path(), &["verify", "--store", "xattr", "--max-bytes", "2500", "t"]);
        assert_eq!((found, code), (map(&[("f1", "corrupt")]), 1), "slice {round}");
    }
    let (found, _, code) = classify(d.path(), &["scan", "--store", "xattr", "t"]);
    assert_eq!((found, code), (map(&[("f1", "corrupt")]), 1));
    // Restored: ok, and the mark is gone.
    rot(&f1, &[b'b'; 1000]);
    let (found, _, code) = classify(d.path(), &["scan", "--store", "xattr", "t"]);
    assert_eq!((found.len(), code), (0, 0), "{found:?}");
    assert!(xattr::get(&f1, "user.fixity.corrupt").unwrap().is_none());
}

/// With the xattr store too, `accept` is the explicit end of a corrupt finding: the new
/// content is recorded in the file's attributes and the next run finds it ok. `forget`
/// says the xattr store has nothing to forget.
#[test]
fn xattr_accept_records_the_new_content() {
    let d = tempdir();
    let Some(f1) = xattr_tree_with_a_corrupt_file(d.path(), 3, "xattr accept") else { return };
    let out = cmd_in(d.path(), &["accept", "--store", "xattr", "t/f1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.starts_with("accepted    t/f1 (was CORRUPT): recorded "), "{said}");
    assert!(xattr::get(&f1, "user.fixity.corrupt").unwrap().is_none());
    let (found, _, code) = classify(d.path(), &["verify", "--store", "xattr", "t"]);
    assert_eq!((found.len(), code), (0, 0), "{found:?}");
    // A file without a record is refused, and nothing is accepted.
    write(d.path(), "t/new", b"new");
    let out = cmd_in(d.path(), &["accept", "--store", "xattr", "t/f0", "t/new"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("t/new: no fixity record"), "{}", text(&out.stderr));
    let out = cmd_in(d.path(), &["forget", "--store", "xattr", "t/f0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nothing to forget"), "{}", text(&out.stderr));
}

/// A catalog on media that became read-only (and no lock file there): `verify` still
/// compares, prints what it finds, then says nothing was recorded, exit 2; `status` reads
/// it. (It once stopped at the lock file with nothing reported.)
#[test]
fn verify_reports_from_a_catalog_on_read_only_media() {
    let d = tempdir();
    write(d.path(), "t/a", b"alpha\n");
    write(d.path(), "t/b", b"bravo\n");
    let media = d.path().join("media");
    let Some(_fs) = Tmpfs::mount(&media, "16m") else {
        skip("a read-only catalog file system", "cannot mount a tmpfs (not root?)");
        return;
    };
    let catalog = media.join("c.db");
    let cat = catalog.to_str().unwrap();
    assert!(cmd_in(d.path(), &["scan", "-q", "--catalog", cat, "t"]).status.success());
    let _ = std::fs::remove_file(media.join("c.db.lock"));
    rot(&d.path().join("t/a"), b"alphA\n");
    let ro = std::process::Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&media)
        .status()
        .unwrap();
    assert!(ro.success());
    let out = cmd_in(d.path(), &["verify", "--catalog", cat, "t"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("CORRUPT     a (recorded "), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("the findings above were not recorded"),
        "{}",
        text(&out.stderr)
    );
    let out = cmd_in(d.path(), &["status", "--catalog", cat, "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn new_files_and_skipped_entries_are_counted_and_listed_with_v() {
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    write(d.path(), "t/b", b"2");
    for l in ["l1", "l2", "l3"] {
        std::os::unix::fs::symlink("a", d.path().join("t").join(l)).unwrap();
    }
    let out = cmd_in(d.path(), &["scan", "t"]);
    assert!(out.status.success());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!stdout.contains("new         "), "a first scan lists no new files: {stdout}");
    assert!(stdout.contains("new 2, moved 0, unreadable 0, skipped 3"), "{stdout}");
    assert_eq!(
        stderr,
        "fixity: 3 entries skipped: symbolic link not followed (use -L to follow); -v lists them\n"
    );
    let quiet = cmd_in(d.path(), &["verify", "-q", "t"]);
    assert_eq!((text(&quiet.stdout), text(&quiet.stderr)), (String::new(), String::new()));
    std::fs::remove_dir_all(d.path().join("t/.fixity")).unwrap();
    let listed = cmd_in(d.path(), &["scan", "-v", "t"]);
    let (stdout, stderr) = (text(&listed.stdout), text(&listed.stderr));
    assert!(stdout.starts_with("new         a\nnew         b\n"), "{stdout}");
    for l in ["l1", "l2", "l3"] {
        assert!(stderr.contains(&format!("fixity: {l}: symbolic link not followed")), "{stderr}");
    }
    // JSON lists every file that is not ok, new ones too.
    std::fs::remove_dir_all(d.path().join("t/.fixity")).unwrap();
    let (found, _, _) = classify(d.path(), &["scan", "t"]);
    assert_eq!(found, map(&[("a", "new"), ("b", "new")]));
}

#[test]
fn corrupt_is_painted_on_a_terminal_only() {
    if !crate::util::have("script") {
        crate::util::missing("script", "not installed (util-linux)");
        return;
    }
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    assert!(cmd_in(d.path(), &["scan", "-q", "t"]).status.success());
    rot(&d.path().join("t/a"), b"2");
    let on_tty = |no_color: bool| {
        let mut c = std::process::Command::new("script");
        c.args(["-qec", &format!("{} verify -q t", env!("CARGO_BIN_EXE_fixity")), "/dev/null"])
            .current_dir(d.path())
            .env("FIXITY_CTIME", crate::util::CTIME_IGNORED)
            .env("TERM", "xterm");
        if no_color {
            c.env("NO_COLOR", "1");
        } else {
            c.env_remove("NO_COLOR");
        }
        text(&c.output().unwrap().stdout)
    };
    let painted = on_tty(false);
    assert!(painted.contains("\u{1b}[1;31mCORRUPT     \u{1b}[0ma"), "{painted:?}");
    assert!(!on_tty(true).contains('\u{1b}'), "NO_COLOR");
    let piped = text(&cmd_in(d.path(), &["verify", "-q", "t"]).stdout);
    assert!(piped.starts_with("CORRUPT     a (recorded "), "{piped:?}");
}

#[test]
fn a_tree_that_is_not_there_or_not_a_directory_is_named_with_the_cause() {
    let d = tempdir();
    write(d.path(), "file", b"x");
    for command in ["scan", "verify", "import"] {
        let out = cmd_in(d.path(), &[command, "nope"]);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(text(&out.stderr), "fixity: nope: No such file or directory\n", "{command}");
        let out = cmd_in(d.path(), &[command, "file"]);
        assert_eq!(text(&out.stderr), "fixity: file: not a directory\n", "{command}");
    }
}

/// A tree root that cannot be listed: every command names the root and the cause, never a
/// file fixity looked for inside it (`ROOT/.fixityignore`, `ROOT/.fixity/catalog.db`).
#[test]
fn a_root_that_cannot_be_listed_is_named() {
    let d = tempdir();
    write(d.path(), "t/f", b"content");
    let Some(mut scan) = crate::util::unprivileged(d.path()) else {
        skip("an unlistable root", "running as root and cannot switch to nobody here");
        return;
    };
    assert!(scan.args(["scan", "-q", "t"]).status().unwrap().success());
    let root = d.path().join("t");
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o000)).unwrap();
    let as_nobody =
        |args: &[&str]| crate::util::unprivileged(d.path()).unwrap().args(args).output().unwrap();
    let runs: Vec<(&[&str], i32)> = vec![
        (&["scan", "t"], 2),
        (&["verify", "t"], 2),
        (&["status", "t"], 2),
        (&["export", "t"], 2),
        (&["report", "t", "--json"], 2),
        (&["dups", "t"], 2),
        (&["dups", "--read", "t"], 2),
        (&["hash", "-r", "t"], 1),
    ];
    for (args, code) in runs {
        let out = as_nobody(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        let want =
            if code == 1 { "t: Permission denied" } else { "cannot read t: Permission denied" };
        assert_eq!(err, format!("fixity: {want}\n"), "{args:?}");
    }
    // Searchable but not listable (with the catalog elsewhere): the walk names the root.
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o311)).unwrap();
    let out = as_nobody(&["scan", "t", "--catalog", "elsewhere.db"]);
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("unreadable  .: Permission denied\n"),
        "{}",
        text(&out.stdout)
    );
}
