//! Monitoring: `scan|verify|status --metrics FILE.prom` (node_exporter's textfile format,
//! read back by a real node_exporter), `status --nagios` (the plugin's line and exit
//! status) and `status --max-age` (staleness).

use crate::catalog::Cat;
use crate::util::{self, fixity, tempdir, write};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The samples of a textfile: series (name and labels as written) -> value. Every line
/// is a comment (`# HELP`, `# TYPE`) or a sample.
fn samples(file: &Path) -> BTreeMap<String, f64> {
    let body = std::fs::read_to_string(file).unwrap();
    assert!(body.ends_with('\n'), "{body}");
    let mut out = BTreeMap::new();
    for line in body.lines() {
        if line.starts_with("# HELP ") || line.starts_with("# TYPE ") {
            continue;
        }
        let (series, value) =
            line.rsplit_once(' ').unwrap_or_else(|| panic!("sample line: {line}"));
        out.insert(series.to_string(), value.parse().unwrap_or_else(|_| panic!("value: {line}")));
    }
    out
}

/// The value of the one series named `name` whose labels include every one of `labels`.
fn get(s: &BTreeMap<String, f64>, name: &str, labels: &[&str]) -> f64 {
    let hits: Vec<_> = s
        .iter()
        .filter(|(k, _)| {
            k.starts_with(&format!("{name}{{")) && labels.iter().all(|l| k.contains(l))
        })
        .collect();
    assert_eq!(hits.len(), 1, "{name} {labels:?} in {s:#?}");
    *hits[0].1
}

/// The plugin's line: exactly one, then its exit status.
fn nagios(cat: &Cat, dir: &Path, extra: &[&str]) -> (String, i32) {
    let mut args = vec!["status", "--nagios"];
    args.extend_from_slice(extra);
    args.push("t");
    let out: Output = cat.run(dir, &args);
    let line = text(&out.stdout);
    assert_eq!(line.lines().count(), 1, "one line: {line:?}");
    assert_eq!(line.matches('|').count(), 1, "{line}");
    (line.trim_end().to_string(), out.status.code().unwrap())
}

fn rot(p: &Path, data: &[u8]) {
    let before = std::fs::metadata(p).unwrap().modified().unwrap();
    std::fs::write(p, data).unwrap();
    std::fs::File::options().write(true).open(p).unwrap().set_modified(before).unwrap();
}

/// A catalog case (run on SQLite here and on PostgreSQL by tests/fleet.rs): the metrics,
/// the plugin and the staleness warning follow scans and verifies, clean and not.
pub(crate) fn health_checks_follow_the_runs(cat: &Cat) {
    let d = tempdir();
    for i in 0..6 {
        write(d.path(), format!("t/f{i}"), &[i as u8; 100]);
    }
    let prom = d.path().join("m.prom");
    let prom_arg = prom.to_str().unwrap();
    assert!(cat.run(d.path(), &["scan", "-q", "t", "--metrics", prom_arg]).status.success());
    let m = samples(&prom);
    assert_eq!(get(&m, "fixity_catalog_files", &[]), 6.0);
    assert_eq!(get(&m, "fixity_last_run_files", &["command=\"scan\"", "class=\"new\""]), 6.0);
    assert_eq!(get(&m, "fixity_findings", &["class=\"corrupt\""]), 0.0);
    let mut names: Vec<_> =
        std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["m.prom", "t"], "no temporary file is left beside the metrics");

    assert!(cat.run(d.path(), &["verify", "-q", "t", "--metrics", prom_arg]).status.success());
    let m = samples(&prom);
    let clean_end = get(&m, "fixity_last_run_end_timestamp_seconds", &["command=\"verify\""]);
    assert!(clean_end > 1.7e9, "{clean_end}");
    assert_eq!(
        get(&m, "fixity_last_success_timestamp_seconds", &["command=\"verify\""]),
        clean_end
    );
    let pass_end = get(&m, "fixity_pass_last_complete_timestamp_seconds", &[]);
    assert!(pass_end > 1.7e9 && pass_end <= clean_end, "{pass_end} {clean_end}");
    let (line, code) = nagios(cat, d.path(), &[]);
    assert_eq!(code, 0, "{line}");
    assert!(
        line.starts_with(
            "FIXITY OK - t: 6 files, 0 corrupt, 0 unreadable, 0 missing; last complete pass "
        ),
        "{line}"
    );
    assert!(line.contains(" | files=6;;;0 bytes=600B;;;0 corrupt=0;;0;0 "), "{line}");

    rot(&d.path().join("t/f2"), &[0xee; 100]);
    std::fs::remove_file(d.path().join("t/f4")).unwrap();
    let out = cat.run(d.path(), &["verify", "-q", "t", "--metrics", prom_arg]);
    assert_eq!(out.status.code(), Some(1));
    let m = samples(&prom);
    assert_eq!(get(&m, "fixity_findings", &["class=\"corrupt\""]), 1.0);
    assert_eq!(get(&m, "fixity_findings", &["class=\"missing\""]), 1.0);
    assert_eq!(get(&m, "fixity_last_run_files", &["command=\"verify\"", "class=\"corrupt\""]), 1.0);
    assert!(get(&m, "fixity_last_run_end_timestamp_seconds", &["command=\"verify\""]) > clean_end);
    assert_eq!(
        get(&m, "fixity_last_success_timestamp_seconds", &["command=\"verify\""]),
        clean_end,
        "a run with findings is no success: the last one stays"
    );

    let (line, code) = nagios(cat, d.path(), &[]);
    assert_eq!(code, 2, "{line}");
    assert!(line.starts_with("FIXITY CRITICAL - 1 corrupt, 2 findings: t: 5 files, 1 corrupt, 0 unreadable, 1 missing;"), "{line}");
    let (line, code) = nagios(cat, d.path(), &["--critical-corrupt", "1"]);
    assert_eq!(code, 1, "{line}");
    assert!(line.starts_with("FIXITY WARNING - 2 findings: "), "{line}");
    let (line, code) =
        nagios(cat, d.path(), &["--critical-corrupt", "1", "--warning-findings", "2"]);
    assert_eq!(code, 0, "{line}");

    // Time passes: a pass older than --max-age is stale.
    std::thread::sleep(Duration::from_millis(60));
    let fresh = cat.run(d.path(), &["status", "t", "--max-age", "1d"]);
    assert_eq!(fresh.status.code(), Some(0), "{}", text(&fresh.stderr));
    assert!(
        text(&fresh.stdout).contains("fresh:     last complete pass "),
        "{}",
        text(&fresh.stdout)
    );
    let stale = cat.run(d.path(), &["status", "t", "--max-age", "0.02"]);
    assert_eq!(stale.status.code(), Some(1));
    let err = text(&stale.stderr);
    assert!(
        err.contains("warning: t: last complete pass ") && err.contains("more than --max-age 0.02"),
        "{err}"
    );
    let args = [
        "--max-age",
        "0.02",
        "--critical-age",
        "1d",
        "--critical-corrupt",
        "5",
        "--warning-findings",
        "5",
    ];
    let (line, code) = nagios(cat, d.path(), &args);
    assert_eq!(code, 1, "{line}");
    assert!(line.starts_with("FIXITY WARNING - verification older than "), "{line}");
    assert!(line.contains(";86400;0"), "the critical age in the perfdata: {line}");

    let json: serde_json::Value = serde_json::from_slice(
        &cat.run(d.path(), &["status", "--json", "--max-age", "0.02", "t"]).stdout,
    )
    .unwrap();
    assert_eq!(json["stale"], true);
    assert!(json["pass"]["last_completed"].as_i64().unwrap() > 0, "{json}");
    assert!(json["verification_age_seconds"].is_u64(), "{json}");
    assert_eq!(json["runs"][0]["summary"]["counts"]["corrupt"], 1, "{json}");
}

#[test]
fn the_plugin_is_unknown_without_a_catalog() {
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    let out = fixity(d.path()).args(["status", "--nagios", "t"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let line = text(&out.stdout);
    assert!(
        line.starts_with("FIXITY UNKNOWN - no catalog at ") && line.lines().count() == 1,
        "{line}"
    );
    let bad =
        fixity(d.path()).args(["status", "--nagios", "--max-age", "soon", "t"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(3));
    assert!(
        text(&bad.stdout).starts_with("FIXITY UNKNOWN - bad --max-age \"soon\""),
        "{}",
        text(&bad.stdout)
    );
}

#[test]
fn metrics_that_cannot_be_written_fail_the_run_after_its_findings() {
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    write(d.path(), "t/b", b"2");
    assert!(fixity(d.path()).args(["scan", "-q", "t"]).status().unwrap().success());
    rot(&d.path().join("t/a"), b"9");
    let out = fixity(d.path())
        .args(["verify", "-q", "t", "--metrics", "no/such/dir/m.prom"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stdout).contains("CORRUPT     a"), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("cannot write no/such/dir/m.prom"), "{}", text(&out.stderr));
    // The xattr store keeps no counts: refused before the run.
    let x = fixity(d.path())
        .args(["scan", "--store", "xattr", "t", "--metrics", "m.prom"])
        .output()
        .unwrap();
    assert_eq!(x.status.code(), Some(2));
    assert!(text(&x.stderr).contains("the xattr store keeps none"), "{}", text(&x.stderr));
}

/// A free port on the loopback interface.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// GET /metrics from a local exporter, retried while it starts.
fn scrape(port: u16) -> Option<String> {
    for _ in 0..100 {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            write!(s, "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n").unwrap();
            let mut body = String::new();
            s.read_to_string(&mut body).ok()?;
            return Some(body);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn node_exporter_reads_the_metrics() {
    let exporter =
        ["prometheus-node-exporter", "node_exporter"].into_iter().find(|t| util::have(t));
    let Some(exporter) = exporter else {
        util::missing("node_exporter", "not installed (apt-get install prometheus-node-exporter)");
        return;
    };
    let d = tempdir();
    // A name a label must escape: quotes, a backslash, a newline.
    let tree = "t \"q\"\\\nz";
    write(d.path(), format!("{tree}/a"), b"1");
    write(d.path(), format!("{tree}/b"), b"2");
    std::fs::create_dir(d.path().join("prom")).unwrap();
    let prom = d.path().join("prom/fixity.prom");
    let scan =
        fixity(d.path()).args(["scan", "-q", tree, "--metrics"]).arg(&prom).output().unwrap();
    assert!(scan.status.success(), "{}", text(&scan.stderr));
    rot(&d.path().join(tree).join("a"), b"9");
    assert_eq!(
        fixity(d.path())
            .args(["verify", "-q", tree, "--metrics"])
            .arg(&prom)
            .output()
            .unwrap()
            .status
            .code(),
        Some(1)
    );

    let port = free_port();
    let mut child = std::process::Command::new(exporter)
        .args(["--collector.disable-defaults", "--collector.textfile"])
        .arg(format!("--collector.textfile.directory={}", d.path().join("prom").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let body = scrape(port);
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let body =
        body.unwrap_or_else(|| panic!("node_exporter did not answer: {}", text(&out.stderr)));
    assert!(body.contains("node_textfile_scrape_error 0"), "{body}");
    // node_exporter orders the labels by name; the tree's label comes back escaped.
    let label = format!("tree=\"{}/{}\"", d.path().display(), "t \\\"q\\\"\\\\\\nz");
    let corrupt = body
        .lines()
        .find(|l| {
            l.starts_with("fixity_findings{")
                && l.contains("class=\"corrupt\"")
                && l.contains(&label)
        })
        .unwrap_or_else(|| panic!("fixity_findings with {label} in {body}"));
    assert!(corrupt.ends_with(" 1"), "{corrupt}");
    assert!(body.contains("# TYPE fixity_last_success_timestamp_seconds gauge"), "{body}");
}

#[test]
fn an_imported_tree_ages_from_its_import_not_from_1970() {
    let d = tempdir();
    write(d.path(), "t/a", b"alpha");
    write(d.path(), "t/b", b"beta");
    let sums =
        fixity(&d.path().join("t")).args(["hash", "-a", "sha256", "a", "b"]).output().unwrap();
    std::fs::write(d.path().join("t.sha256"), &sums.stdout).unwrap();
    let import = ["import", "t", "--from", "manifest", "--source", "t.sha256", "-q"];
    let out = fixity(d.path()).args(import).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (line, code) = nagios(&Cat::Sqlite, d.path(), &[]);
    assert_eq!(code, 0, "{line}");
    assert!(
        line.contains("no complete verification pass yet, in the tree's catalog since "),
        "{line}"
    );
    assert!(
        line.contains("; 2 imported, not yet verified |")
            && line.contains(" imported_unverified=2;;;0"),
        "{line}"
    );
    let out = fixity(d.path()).args(["status", "t", "--metrics", "m.prom"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        get(&samples(&d.path().join("m.prom")), "fixity_imported_unverified_files", &[]),
        2.0
    );
    // A verify reads them: nothing is left imported, and the pass is complete.
    assert!(fixity(d.path()).args(["verify", "-q", "t"]).output().unwrap().status.success());
    let (line, code) = nagios(&Cat::Sqlite, d.path(), &[]);
    assert_eq!(code, 0, "{line}");
    assert!(line.contains("last complete pass") && !line.contains("imported"), "{line}");
}
