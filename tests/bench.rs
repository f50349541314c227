//! `fixity bench`: the commands run end to end on tiny inputs and write well-formed
//! reports. No test asserts a speed.

use crate::util::{fixity, have, missing, tempdir, write};
use std::path::Path;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn bench_algorithms_reports_every_cell_as_json_and_table() {
    let d = tempdir();
    let out = fixity(d.path())
        .args([
            "bench",
            "algorithms",
            "-a",
            "crc32,blake3",
            "--sizes",
            "1K,300K",
            "--runs",
            "2",
            "--threads",
            "2",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        7,
        "2 sizes x 2 algorithms + blake3 on 2 threads + blake3 many at once at 2 sizes"
    );
    assert!(
        rows.iter().all(|r| r["per_call"]["runs"] == 2 && r["median_mbps"].as_f64().unwrap() > 0.0)
    );
    assert!(rows.iter().all(|r| !r["kernel"].as_str().unwrap().is_empty()), "{v}");
    assert_eq!(rows.iter().filter(|r| r["algorithm"] == "blake3-many").count(), 2);
    assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
    let table = fixity(d.path())
        .args(["bench", "algorithms", "-a", "md5", "--sizes", "1K", "--runs", "1"])
        .output()
        .unwrap();
    let t = text(&table.stdout);
    assert!(t.contains("features dispatched at run time:"), "{t}");
    assert!(t.lines().any(|l| l.starts_with("md5") && l.contains("1K")), "{t}");
    let bad = fixity(d.path()).args(["bench", "algorithms", "--sizes", "1X"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

fn small_tree(root: &Path) {
    write(root, "t/a", b"alpha");
    write(root, "t/sub/b", &vec![3u8; 200_000]);
    write(root, "t/sub/c d", b"with a space");
}

#[test]
fn bench_tree_compares_peers_and_checks_their_digests() {
    let d = tempdir();
    small_tree(d.path());
    let out = fixity(d.path())
        .args([
            "bench",
            "tree",
            "t",
            "-a",
            "md5,crc32",
            "--runs",
            "2",
            "--compare",
            "--format",
            "json",
            "--chart",
            "c.svg",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["files"].as_u64(), v["bytes"].as_u64()), (Some(3), Some(200_017)));
    assert_eq!(v["cache"], "warm");
    assert_eq!(v["ceiling"]["seconds"]["runs"], 2);
    let rows = v["rows"].as_array().unwrap();
    let fixity_rows: Vec<_> = rows.iter().filter(|r| r["tool"] == "fixity").collect();
    assert_eq!(fixity_rows.len(), 2);
    // md5: "<32 hex>  t/a\n" etc.
    let md5 = fixity_rows.iter().find(|r| r["algorithm"] == "md5").unwrap();
    assert_eq!(md5["manifest_bytes"], (34 + 4) + (34 + 8) + (34 + 10));
    assert!(md5["bound"] == "io" || md5["bound"] == "cpu");
    if have("md5sum") {
        let peer = rows.iter().find(|r| r["tool"] == "md5sum (xargs)").expect("md5sum row");
        assert_eq!(peer["agreement"]["matched"], 3, "{peer}");
        assert!(peer["agreement"]["mismatched"].as_array().unwrap().is_empty());
        assert_eq!(peer["manifest_bytes"], md5["manifest_bytes"], "same GNU lines");
    }
    for (tool, program) in [("rhash -r", "rhash"), ("cksfv (xargs)", "cksfv")] {
        let listed = rows.iter().any(|r| r["tool"] == tool);
        let missing = v["not_installed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains(program));
        assert!(listed != missing, "{tool}: run when installed, listed as not installed otherwise");
        if listed {
            let r = rows.iter().find(|r| r["tool"] == tool).unwrap();
            assert_eq!(r["agreement"]["matched"], 3, "{r}");
        }
    }
    let svg = std::fs::read_to_string(d.path().join("c.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("read ceiling"));
}

/// However the tree is named (absolute, `./t`, `t/`), every peer's lines are matched to
/// fixity's files: hashdeep prints absolute paths, rhash drops `./`, `find` keeps both.
#[test]
fn peers_are_compared_whether_the_tree_is_named_absolute_or_dotted() {
    let d = tempdir();
    small_tree(d.path());
    let absolute = d.path().join("t").to_str().unwrap().to_string();
    for tree in [absolute.as_str(), "./t", "t/"] {
        let args =
            ["bench", "tree", tree, "-a", "md5", "--runs", "1", "--compare", "--format", "json"];
        let out = fixity(d.path()).args(args).output().unwrap();
        assert!(out.status.success(), "{tree}: {}", text(&out.stderr));
        assert!(!text(&out.stderr).contains("not compared"), "{tree}: {}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let peers: Vec<_> =
            v["rows"].as_array().unwrap().iter().filter(|r| !r["agreement"].is_null()).collect();
        assert!(!peers.is_empty(), "md5sum at least: {v}");
        for r in peers {
            assert_eq!(r["agreement"]["matched"], 3, "{tree}: {r}");
        }
    }
}

#[test]
fn bench_tree_writes_csv_and_markdown_for_a_single_file() {
    let d = tempdir();
    write(d.path(), "big", &vec![9u8; 1 << 20]);
    let csv = fixity(d.path())
        .args(["bench", "tree", "big", "-a", "sha256", "--runs", "2", "--format", "csv"])
        .output()
        .unwrap();
    assert!(csv.status.success(), "{}", text(&csv.stderr));
    let c = text(&csv.stdout);
    let lines: Vec<&str> = c.lines().collect();
    assert!(lines[0].starts_with("tool,algorithm,min_s,median_s,max_s,runs,"));
    assert!(lines[1].starts_with("read (ceiling),-,"));
    assert!(lines[2].starts_with("fixity,sha256,"));
    let md = fixity(d.path())
        .args(["bench", "tree", "big", "-a", "sha256", "--runs", "1", "--format", "markdown"])
        .output()
        .unwrap();
    let m = text(&md.stdout);
    assert!(m.contains("- data: big (1 files, 1.0 MB"), "{m}");
    assert!(m.contains("| fixity | sha256 |"), "{m}");
}

#[test]
fn cold_runs_say_how_the_cache_was_emptied() {
    let d = tempdir();
    small_tree(d.path());
    let out = fixity(d.path())
        .args(["bench", "tree", "t", "-a", "crc32", "--runs", "1", "--cold", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cache = v["cache"].as_str().unwrap();
    let how = v["eviction"].as_str().unwrap();
    assert!(how.contains("drop_caches") || how.contains("posix_fadvise"), "{how}");
    // Either verified, or the report says loudly that it is not.
    assert_eq!(cache == "cold", v["eviction_verified"] == true, "{cache}");
    if v["eviction_verified"] == false {
        assert_eq!(cache, "cold (unverified)");
        let warnings = v["warnings"].to_string();
        assert!(warnings.contains("eviction NOT verified"), "{warnings}");
    }
}

#[test]
fn the_chart_renders_in_a_browser() {
    let browser = ["chromium", "chromium-browser", "google-chrome"].into_iter().find(|b| have(b));
    let Some(browser) = browser else {
        missing("chart rendering", "no headless Chromium installed");
        return;
    };
    let d = tempdir();
    small_tree(d.path());
    let out = fixity(d.path())
        .args(["bench", "tree", "t", "-a", "md5,blake3", "--runs", "1", "--chart", "c.svg"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(d.path().join("blank.svg"), r#"<svg xmlns="http://www.w3.org/2000/svg" width="900" height="200"><rect width="100%" height="100%" fill="white"/></svg>"#).unwrap();
    let shot = |svg: &str, png: &str| -> Vec<u8> {
        let status = std::process::Command::new(browser)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--window-size=900,200"])
            .arg(format!("--screenshot={}", d.path().join(png).display()))
            .arg(format!("file://{}", d.path().join(svg).display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::read(d.path().join(png)).unwrap()
    };
    let chart = shot("c.svg", "c.png");
    let blank = shot("blank.svg", "blank.png");
    assert_eq!(&chart[..8], b"\x89PNG\r\n\x1a\n");
    // Bars, labels and the ceiling line make the picture far less compressible than white.
    assert!(chart.len() > 3 * blank.len(), "chart {} bytes, blank {}", chart.len(), blank.len());
}
