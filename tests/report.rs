//! `fixity report` (HTML and JSON) and `export --format premis` on real trees, with
//! SQLite and PostgreSQL catalogs: a corrupt file's history, missing files with names
//! that are not UTF-8 or hold a newline, the runs chart rendered in headless Chromium,
//! the PREMIS XML validated against the Library of Congress's PREMIS 3.0 schema, and a
//! catalog of schema 1 read as it is and then migrated.

use crate::catalog::Cat;
use crate::util::{have, missing, pg, tempdir, write};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::SystemTime;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SCRIPT: &str = "<script>alert(1)<\\script>.txt";

/// A tree `t` in `dir`, scanned, then: one file rotten (same size and mtime), a file
/// whose name is not UTF-8 and one whose name holds a newline gone; verified twice.
fn tree_with_findings(cat: &Cat, dir: &Path, algo: &str) {
    let t = dir.join("t");
    write(&t, "keep.txt", b"unchanged");
    write(&t, "empty", b"");
    write(&t, SCRIPT, b"0123456789abcdef");
    write(&t, OsStr::from_bytes(b"bad\xff.bin"), b"not utf-8");
    write(&t, "two\nlines", b"newline");
    let out = cat.run(dir, &["scan", "t", "-q", "-a", algo]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rot = t.join(SCRIPT);
    let before: SystemTime = std::fs::metadata(&rot).unwrap().modified().unwrap();
    std::fs::write(&rot, b"0123456789abcdeF").unwrap();
    std::fs::File::options().write(true).open(&rot).unwrap().set_modified(before).unwrap();
    std::fs::remove_file(t.join(OsStr::from_bytes(b"bad\xff.bin"))).unwrap();
    std::fs::remove_file(t.join("two\nlines")).unwrap();
    for _ in 0..2 {
        let out = cat.run(dir, &["verify", "t", "-q"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    }
}

/// Runs `report t --html r.html --json`: (the page, the JSON).
fn report(cat: &Cat, dir: &Path) -> (String, serde_json::Value) {
    let out = cat.run(dir, &["report", "t", "--html", "r.html", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json = serde_json::from_slice(&out.stdout).expect("one JSON document");
    (std::fs::read_to_string(dir.join("r.html")).unwrap(), json)
}

/// What both catalogs must report of the tree of [`tree_with_findings`].
fn check_report(html: &str, v: &serde_json::Value) {
    assert_eq!(v["standing"], serde_json::json!({"corrupt": 1, "unreadable": 0, "missing": 2}));
    assert_eq!((v["files"].as_u64(), v["missing"].as_u64()), (Some(3), Some(2)));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "scan and two verifies");
    let run_findings: Vec<_> = runs.iter().map(|r| r["findings"].as_u64().unwrap()).collect();
    assert_eq!(run_findings, [0, 3, 3]);
    assert!(runs.iter().all(|r| r["bytes_read"].as_u64().unwrap() > 0 && r["state"] == "complete"));
    let findings = v["findings"].as_array().unwrap();
    let paths: Vec<(&str, &str, &str)> = findings
        .iter()
        .map(|f| {
            let p = &f["path"];
            (
                p["text"].as_str().unwrap(),
                p["encoding"].as_str().unwrap(),
                f["class"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            (SCRIPT, "utf-8", "corrupt"),
            ("bad%FF.bin", "percent", "missing"),
            ("two%0Alines", "percent", "missing")
        ]
    );
    // The corrupt file's history: found by the first verify, seen again by the second,
    // the good digest kept beside the one its content has now.
    let rot = &findings[0];
    let (first, last) = (rot["first_found"].as_i64().unwrap(), rot["last_seen"].as_i64().unwrap());
    assert_eq!(first, runs[1]["started"].as_i64().unwrap());
    assert_eq!(last, runs[2]["started"].as_i64().unwrap());
    assert!(rot["last_good"].as_i64().unwrap() < first);
    let (recorded, now) =
        (rot["recorded_digest"].as_str().unwrap(), rot["current_digest"].as_str().unwrap());
    assert!(recorded.len() == now.len() && recorded != now, "{recorded} {now}");
    assert_eq!(findings[1]["first_found"], runs[1]["started"], "missing since the first verify");
    assert!(v["last_complete_pass"].as_i64().is_some());
    assert_eq!(v["coverage"]["pass"], "completed");
    // The rotten file last matched when the scan hashed it, today too.
    assert_eq!(v["coverage"]["verified_within"][0]["files"], 3);
    assert_eq!(v["coverage"]["pass_share"], 1.0);

    // The page: the finding with its history, escaped; the chart with a point per run.
    assert!(html.contains("&lt;script&gt;alert(1)&lt;\\script&gt;.txt"), "escaped name");
    assert!(!html.contains("<script"), "no script element, not even from a name");
    assert!(html.contains("bad%FF.bin <span class=\"enc\">(percent-encoded)</span>"));
    assert!(html.contains(recorded) && html.contains(now));
    assert_eq!(html.matches("<tr class=\"finding\">").count(), 3);
    assert_eq!(html.matches("<rect class=\"bytes\"").count(), 3, "a bar per run");
    assert_eq!(html.matches("<circle class=\"findings\"").count(), 3, "a point per run");
    assert!(!html.contains("http://") && !html.contains("https://"), "loads nothing");
    assert!(!html.contains(" src=") && !html.contains(" href="), "links to nothing");
    assert!(html.contains("default-src 'none'"), "and a policy that forbids loading");
}

#[test]
fn a_report_lists_findings_with_their_history_and_renders_in_a_browser() {
    let d = tempdir();
    tree_with_findings(&Cat::Sqlite, d.path(), "blake3");
    let (html, json) = report(&Cat::Sqlite, d.path());
    check_report(&html, &json);
    // Written atomically: nothing left beside it.
    let names: Vec<_> =
        std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "t and r.html: {names:?}");

    let browser = ["chromium", "chromium-browser", "google-chrome"].into_iter().find(|b| have(b));
    let Some(browser) = browser else {
        missing("report rendering", "no headless Chromium installed");
        return;
    };
    let dom = std::process::Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", d.path().join("r.html").display()))
        .stderr(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(dom.status.success());
    let dom = text(&dom.stdout);
    assert!(dom.contains("<svg class=\"chart\""), "the chart is in the rendered page");
    assert_eq!(dom.matches("<rect class=\"bytes\"").count(), 3);
    assert_eq!(dom.matches("<circle class=\"findings\"").count(), 3);
    assert_eq!(dom.matches("<tr class=\"finding\">").count(), 3, "the findings table's rows");
    assert!(!dom.contains("<script"), "the name stayed text");
    assert!(dom.contains("&lt;script&gt;alert(1)"));
}

#[test]
fn a_report_from_postgresql_says_what_sqlite_says() {
    let Some(db) = pg::database() else { return };
    let cat = Cat::Postgres(db.secret.clone());
    let d = tempdir();
    tree_with_findings(&cat, d.path(), "blake3");
    let (html, json) = report(&cat, d.path());
    check_report(&html, &json);
    let shown = json["catalog"].as_str().unwrap();
    assert!(json["host"].is_string() && shown.starts_with("postgresql://fixity@"), "{shown}");
    assert!(!shown.contains(pg::PASSWORD));
}

#[test]
fn report_needs_an_output_and_a_catalog() {
    let d = tempdir();
    write(&d.path().join("t"), "f", b"x");
    let out = Cat::Sqlite.run(d.path(), &["report", "t", "--json"]);
    assert_eq!(out.status.code(), Some(2), "no catalog");
    assert!(text(&out.stderr).contains("catalog"), "{}", text(&out.stderr));
    assert_eq!(Cat::Sqlite.run(d.path(), &["scan", "t"]).status.code(), Some(0));
    let out = Cat::Sqlite.run(d.path(), &["report", "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--html"), "{}", text(&out.stderr));
    let out = Cat::Sqlite.run(d.path(), &["report", "t", "--html", "no/such/dir/r.html"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot write"), "{}", text(&out.stderr));
}

/// Takes the catalog of `dir/t` back to schema 1 (no history columns, no imported mark).
fn downgrade(cat: &Cat, dir: &Path) {
    match cat {
        Cat::Sqlite => {
            let db = dir.join("t/.fixity/catalog.db");
            let c = rusqlite::Connection::open(db).unwrap();
            c.execute_batch(
                "ALTER TABLE files DROP COLUMN finding_since;
                 ALTER TABLE files DROP COLUMN found_digest;
                 ALTER TABLE files DROP COLUMN imported;
                 ALTER TABLE files DROP COLUMN ctime_ns; ALTER TABLE files DROP COLUMN mode;
                 ALTER TABLE files DROP COLUMN uid; ALTER TABLE files DROP COLUMN gid;
                 DROP TABLE digests; DROP TABLE remote_checks; DROP TABLE proofs;
                 CREATE INDEX files_by_verified ON files (last_verified, path);
                 PRAGMA user_version = 1;",
            )
            .unwrap();
        }
        Cat::Postgres(url) => {
            let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
            c.batch_execute(
                "ALTER TABLE fixity.files DROP COLUMN finding_since, DROP COLUMN found_digest,
                     DROP COLUMN imported, DROP COLUMN ctime_ns, DROP COLUMN mode,
                     DROP COLUMN uid, DROP COLUMN gid;
                 DROP TABLE fixity.digests, fixity.remote_checks, fixity.proofs;
                 CREATE INDEX files_by_verified ON fixity.files (tree, last_verified, path);
                 ALTER TABLE fixity.trees DROP COLUMN pass_after;
                 DROP INDEX fixity.files_by_listed; ALTER TABLE fixity.files DROP COLUMN listed_at;
                 CREATE INDEX files_by_checked ON fixity.files (tree, last_checked);
                 UPDATE fixity.meta SET value = '1' WHERE key = 'schema_version';",
            )
            .unwrap();
        }
    }
}

fn schema_1_is_read_as_it_is_and_migrated_by_a_run(cat: &Cat) {
    let d = tempdir();
    tree_with_findings(cat, d.path(), "sha256");
    downgrade(cat, d.path());
    check_premis(cat, d.path());
    let (_, v) = report(cat, d.path());
    let rot = &v["findings"][0];
    assert_eq!(rot["class"], "corrupt");
    assert!(rot["first_found"].is_null() && rot["current_digest"].is_null(), "not kept then");
    // A run migrates the catalog; the finding's history starts with it.
    let out = cat.run(d.path(), &["verify", "t", "-q"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let (_, v) = report(cat, d.path());
    let rot = &v["findings"][0];
    assert_eq!(rot["first_found"], serde_json::Value::Null, "found before the catalog kept it");
    assert!(rot["current_digest"].is_string(), "the content's digest is kept from now on");
}

#[test]
fn a_sqlite_catalog_of_schema_1_is_read_and_migrated() {
    schema_1_is_read_as_it_is_and_migrated_by_a_run(&Cat::Sqlite);
}

#[test]
fn a_postgresql_catalog_of_schema_1_is_read_and_migrated() {
    if let Some(db) = pg::database() {
        schema_1_is_read_as_it_is_and_migrated_by_a_run(&Cat::Postgres(db.secret));
    }
}

/// Writes `export t --format premis -o p.xml` and checks it against the tree of
/// [`tree_with_findings`] (scanned with sha256) and the PREMIS 3.0 schema.
fn check_premis(cat: &Cat, dir: &Path) {
    let out = cat.run(dir, &["export", "t", "--format", "premis", "-o", "p.xml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let xml = std::fs::read_to_string(dir.join("p.xml")).unwrap();
    let stdout = cat.run(dir, &["export", "t", "--format", "PREMIS"]).stdout;
    assert_eq!(text(&stdout), xml, "standard output and -o write the same");
    // Every recorded file is an object (missing ones too), with its recorded digest.
    assert_eq!(xml.matches("<premis:object xsi:type=\"premis:file\">").count(), 5);
    assert_eq!(xml.matches("<premis:messageDigestAlgorithm>SHA-256<").count(), 5);
    let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    assert!(xml.contains(&format!("<premis:messageDigest>{empty}<")), "the empty file");
    assert!(
        xml.contains("<premis:objectIdentifierValue>&lt;script&gt;alert(1)&lt;\\script&gt;.txt<")
    );
    assert!(xml.contains(
        "<premis:objectIdentifierType>relative path, percent-encoded</premis:objectIdentifierType>\n      \
         <premis:objectIdentifierValue>bad%FF.bin<"
    ));
    assert!(xml.contains("<premis:objectIdentifierValue>two%0Alines<"));
    // Fixity checks: keep.txt and empty pass; the corrupt file fails when last seen (and
    // when first found, where the catalog kept it); each missing file fails once.
    let fails = xml.matches("<premis:eventOutcome>fail<").count();
    let kept = xml.contains("first found corrupt");
    assert_eq!(fails, if kept { 4 } else { 3 });
    assert_eq!(xml.matches("<premis:eventType>fixity check<").count(), 2 + fails);
    assert_eq!(xml.matches("<premis:eventOutcome>pass<").count(), 2);
    assert!(
        xml.contains(&format!(
            "<premis:agentIdentifierValue>fixity {}<",
            env!("CARGO_PKG_VERSION")
        ))
    );
    assert_eq!(xml.matches("<premis:linkingAgentRole>executing program<").count(), 2 + fails);

    if !have("xmllint") {
        missing("PREMIS schema validation", "xmllint (libxml2-utils) is not installed");
        return;
    }
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/premis/premis-v3-0.xsd");
    let check = std::process::Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(dir.join("p.xml"))
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", text(&check.stderr));
}

#[test]
fn premis_export_is_valid_premis_3_with_loc_names_and_encoded_paths() {
    let d = tempdir();
    tree_with_findings(&Cat::Sqlite, d.path(), "sha256");
    check_premis(&Cat::Sqlite, d.path());
    let xml = std::fs::read_to_string(d.path().join("p.xml")).unwrap();
    assert!(xml.contains("first found corrupt"), "a catalog of schema 2 keeps it");
}

#[test]
fn premis_export_from_postgresql() {
    let Some(db) = pg::database() else { return };
    let cat = Cat::Postgres(db.secret);
    let d = tempdir();
    tree_with_findings(&cat, d.path(), "sha256");
    check_premis(&cat, d.path());
}
