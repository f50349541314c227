//! The PostgreSQL catalog: the catalog cases of tests/catalog.rs on PostgreSQL, many
//! hosts and processes scanning into one database, kill -9 mid-scan, the fleet's status,
//! export equal to SQLite's, the run lock, and connection errors.

use crate::catalog::{Cat, all_records, many_files, mtime, set_mtime};
use crate::util::pg::{self, Database};
use crate::util::{fixity, tempdir, write};
use fixity::catalog::postgres::PgSpec;
use fixity::catalog::{OpenOptions, Record, StoreSpec, open_store};
use std::path::Path;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A catalog in a fresh database of the test cluster.
fn postgres() -> Option<Cat> {
    pg::database().map(|db| Cat::Postgres(db.secret))
}

mod cases {
    crate::catalog::catalog_cases!(super::postgres());
}

mod part_cases {
    crate::parts::part_cases!(super::postgres());
}

/// `fixity ARGS` in `dir` as the host `host`.
fn on_host(dir: &Path, host: &str, args: &[&str]) -> Command {
    let mut c = fixity(dir);
    c.env("FIXITY_HOST", host).args(args);
    c
}

/// Every record of `host`'s tree at `tree`.
fn records(url: &str, host: &str, tree: &Path) -> Vec<Record> {
    let spec = StoreSpec::Postgres(PgSpec::new(url, Some(host), tree));
    let how = OpenOptions { read_only: true, ..OpenOptions::default() };
    let store = open_store(&spec, &how).unwrap_or_else(|e| panic!("open {host}:{tree:?}: {e}"));
    all_records(store.as_ref())
}

/// (path, size, mtime ns, digest) of every file under `root`, in path order, the digest
/// blake3's: what a scan must record.
fn tree_files(root: &Path) -> Vec<(Vec<u8>, u64, i128, Vec<u8>)> {
    use std::os::unix::ffi::OsStrExt;
    fn visit(dir: &Path, root: &Path, out: &mut Vec<(Vec<u8>, u64, i128, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                visit(&p, root, out);
            } else if m.is_file() {
                use std::os::unix::fs::MetadataExt;
                let rel = p.strip_prefix(root).unwrap().as_os_str().as_bytes().to_vec();
                let mtime = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
                let blake3 = fixity::algo::lookup("blake3").unwrap();
                let digest = blake3.digest(&std::fs::read(&p).unwrap()).as_bytes().to_vec();
                out.push((rel, m.len(), mtime, digest));
            }
        }
    }
    let mut out = Vec::new();
    visit(root, root, &mut out);
    out.sort();
    out
}

fn as_rows(records: &[Record]) -> Vec<(Vec<u8>, u64, i128, Vec<u8>)> {
    records
        .iter()
        .filter(|r| r.missing_since.is_none())
        .map(|r| (r.path.clone(), r.size.unwrap(), r.mtime_ns, r.digest.as_bytes().to_vec()))
        .collect()
}

fn wait_ok(child: Child, what: &str) {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{what}: {}{}", text(&out.stdout), text(&out.stderr));
}

#[test]
fn eight_scans_at_once_from_two_hosts_lose_and_double_nothing() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let trees: Vec<(String, String)> = (0..8)
        .map(|i| (if i < 4 { "alpha" } else { "beta" }.to_string(), format!("t{i}")))
        .collect();
    for (i, (_, t)) in trees.iter().enumerate() {
        for f in 0..150 {
            write(&d.path().join(t), format!("d{}/f{f:03}", f % 7), format!("{i}:{f}").as_bytes());
        }
    }
    // Eight processes, each making the schema if it is first: all at once.
    let children: Vec<Child> = trees
        .iter()
        .map(|(host, t)| {
            on_host(d.path(), host, &["scan", "-q", "--catalog", &db.url, t]).spawn().unwrap()
        })
        .collect();
    for (c, (host, t)) in children.into_iter().zip(&trees) {
        wait_ok(c, &format!("scan of {host}:{t}"));
    }
    // Two more runs of one tree at once: one waits for the other's run lock.
    let again: Vec<Child> = (0..2)
        .map(|_| {
            on_host(d.path(), "alpha", &["scan", "-q", "--wait", "--catalog", &db.url, "t0"])
                .spawn()
                .unwrap()
        })
        .collect();
    for c in again {
        wait_ok(c, "second scan of alpha:t0");
    }
    for (host, t) in &trees {
        let root = d.path().join(t);
        assert_eq!(as_rows(&records(&db.secret, host, &root)), tree_files(&root), "{host}:{t}");
    }
    let mut c = db.client();
    let row = c
        .query_one(
            "SELECT count(*), count(DISTINCT (tree, path)), count(DISTINCT tree),
                    (SELECT count(DISTINCT host) FROM fixity.trees) FROM fixity.files",
            &[],
        )
        .unwrap();
    let n = |i| row.get::<_, i64>(i);
    assert_eq!((n(0), n(1), n(2), n(3)), (8 * 150, 8 * 150, 8, 2));
    // The same root on another host is another tree, which beta never scanned.
    let spec = StoreSpec::Postgres(PgSpec::new(&db.secret, Some("beta"), &d.path().join("t0")));
    let how = OpenOptions { read_only: true, ..OpenOptions::default() };
    let err = open_store(&spec, &how).err().expect("no such tree").to_string();
    assert!(err.contains("no catalog for beta:"), "{err}");
}

/// Waits until a backend of fixity's waits for a lock (one the test holds: a row, or a
/// run lock).
fn wait_until_blocked(db: &Database) {
    wait_until_blocked_or_done(db, None);
}

/// [`wait_until_blocked`], and when `run` is given, a run that ends before it blocks fails
/// the test with what it said (instead of a wait that can only time out).
fn wait_until_blocked_or_done(db: &Database, mut run: Option<&mut std::process::Child>) {
    let mut c = db.client();
    let start = Instant::now();
    loop {
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE application_name = 'fixity' AND wait_event_type = 'Lock'
                   AND datname = current_database()",
                &[],
            )
            .unwrap()
            .get(0);
        if n > 0 {
            return;
        }
        if let Some(child) = run.as_deref_mut()
            && let Some(status) = child.try_wait().unwrap()
        {
            let mut err = String::new();
            if let Some(e) = child.stderr.as_mut() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            panic!("the run ended ({status}) before it reached the held row: {err}");
        }
        assert!(start.elapsed() < Duration::from_secs(120), "the run never reached the held row");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn parts_run_on_many_hosts_land_in_the_tree_of_the_host_that_made_the_plan() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    many_files(&t, 600);
    let want = tree_files(&t);
    let out =
        on_host(d.path(), "login", &["plan", "t", "--parts", "4", "-o", "plan"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Four nodes at once, each its own part, as a job array would run them.
    let nodes: Vec<Child> = (0..4)
        .map(|i| {
            let node = format!("node{i}");
            let mut c =
                on_host(d.path(), &node, &["scan", "-q", "--catalog", &db.url, "--plan", "plan"]);
            c.env("SLURM_ARRAY_TASK_ID", i.to_string()).stderr(std::process::Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    for n in nodes {
        let out = n.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let got: Vec<_> = records(&db.secret, "login", &t)
        .into_iter()
        .map(|r| (r.path, r.size.unwrap(), r.mtime_ns, r.digest.as_bytes().to_vec()))
        .collect();
    assert_eq!(got, want);
    // The fleet has one tree, the plan host's: no node has one of its own.
    let out = fixity(d.path()).args(["status", "--json", "--catalog", &db.url]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hosts: Vec<_> = v["hosts"].as_array().unwrap().iter().map(|h| h["host"].clone()).collect();
    assert_eq!(hosts, ["login"], "{v}");
    assert_eq!(v["hosts"][0]["trees"][0]["files"], 600, "{v}");
    // A verify fanned out the same way reads every file once and finds nothing.
    for i in 0..4 {
        let out = on_host(
            d.path(),
            "other",
            &["verify", "--catalog", &db.url, "--plan", "plan", "--part", &i.to_string(), "--json"],
        )
        .output()
        .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let stale =
        records(&db.secret, "login", &t).into_iter().filter(|r| r.last_verified == 0).count();
    assert_eq!(stale, 0);
}

/// Scans `t` in `dir` as host `k` with every file left out: the schema and the tree's
/// row, nothing in it yet. A client of the database, and the tree's id.
fn empty_tree_of_k(dir: &Path, db: &Database) -> (postgres::Client, i32) {
    let out = on_host(dir, "k", &["scan", "-q", "--catalog", &db.url, "--exclude", "d*", "t"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut c = db.client();
    let tree: i32 =
        c.query_one("SELECT id FROM fixity.trees WHERE host = 'k'", &[]).unwrap().get(0);
    (c, tree)
}

/// Inserts a row for `path` in `tx` (left open): a run writing that row waits for `tx`.
fn hold_row(tx: &mut postgres::Transaction<'_>, tree: i32, path: &str) {
    tx.execute(
        "INSERT INTO fixity.files (tree, path, size, mtime_ns, digest, first_seen, last_verified,
             last_checked, last_result) VALUES ($1, $2, 0, 0, '', 0, 0, 0, 'new')",
        &[&tree, &path.as_bytes()],
    )
    .unwrap();
}

/// Scans `t` (with `args`, and batches of `batch` rows) while the test holds the row of
/// d20/f00100 in an open transaction, ends the run's connection once it waits for it,
/// and returns what the run said.
fn scan_cut_at_held_row(
    db: &Database,
    dir: &Path,
    c: &mut postgres::Client,
    tree: i32,
    args: &[&str],
    batch: Option<&str>,
) -> std::process::Output {
    let mut hold = c.transaction().unwrap();
    hold_row(&mut hold, tree, "d20/f00100");
    let mut cmd = on_host(dir, "k", &["scan", "--json", "--catalog", &db.url]);
    cmd.args(args).arg("t");
    if let Some(n) = batch {
        cmd.env("FIXITY_PG_BATCH", n);
    }
    let mut scan = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_blocked_or_done(db, Some(&mut scan));
    db.client()
        .execute(
            // This test's database only: tests in parallel hold rows of their own.
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE application_name = 'fixity' AND wait_event_type = 'Lock'
               AND datname = current_database()",
            &[],
        )
        .unwrap();
    let out = scan.wait_with_output().unwrap();
    hold.rollback().unwrap();
    out
}

/// Scans `t` on one thread (in batches of `batch` rows) while the test holds the row of
/// `held` in an open transaction, and kills the run (SIGKILL) once it waits for it.
fn scan_killed_at_held_row(
    db: &Database,
    dir: &Path,
    c: &mut postgres::Client,
    (tree, held): (i32, &str),
    batch: Option<&str>,
) {
    let mut hold = c.transaction().unwrap();
    hold_row(&mut hold, tree, held);
    let mut cmd = on_host(dir, "k", &["scan", "-q", "-j", "1", "--catalog", &db.url, "t"]);
    if let Some(n) = batch {
        cmd.env("FIXITY_PG_BATCH", n);
    }
    let mut scan = cmd.spawn().unwrap();
    wait_until_blocked_or_done(db, Some(&mut scan));
    scan.kill().unwrap();
    assert!(scan.wait().unwrap().code().is_none(), "killed mid-way");
    hold.rollback().unwrap();
}

#[test]
fn kill_9_mid_scan_leaves_the_database_consistent_and_a_rerun_converges() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    many_files(&t, 3000);
    let want = tree_files(&t);
    // The schema and the tree's row, with nothing in it yet.
    let (mut c, tree) = empty_tree_of_k(d.path(), &db);

    // The scan is killed while it waits for a row the test holds, half way through.
    scan_killed_at_held_row(&db, d.path(), &mut c, (tree, "d20/f01500"), None);
    let partial = as_rows(&records(&db.secret, "k", &t));
    assert!(partial.len() < want.len(), "the killed run did not finish");
    assert!(partial.iter().all(|r| want.contains(r)), "only whole rows, each as the tree has it");

    // A verify killed the same way, while it waits to update a row.
    let out = on_host(d.path(), "k", &["scan", "-q", "--wait", "--catalog", &db.url, "t"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut c = db.client();
    let mut hold = c.transaction().unwrap();
    hold.execute(
        "SELECT 1 FROM fixity.files WHERE tree = $1 AND path = 'd20/f01500' FOR UPDATE",
        &[&tree],
    )
    .unwrap();
    let mut verify =
        on_host(d.path(), "k", &["verify", "-q", "-j", "1", "--catalog", &db.url, "t"])
            .spawn()
            .unwrap();
    wait_until_blocked(&db);
    verify.kill().unwrap();
    verify.wait().unwrap();
    hold.rollback().unwrap();

    // The rerun (waiting for the dead run's lock to go with its connection) converges.
    let out = on_host(d.path(), "k", &["scan", "-q", "--wait", "--catalog", &db.url, "t"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(as_rows(&records(&db.secret, "k", &t)), want);
    let out = on_host(d.path(), "k", &["verify", "-q", "--wait", "--catalog", &db.url, "t"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
}

#[test]
fn status_shows_the_fleet_by_host_and_tree() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    write(d.path(), "a/x", b"xx");
    write(d.path(), "a/y", b"yyy");
    let gone = write(d.path(), "b/gone", b"g");
    write(d.path(), "b/keep", b"k");
    for (host, t) in [("alpha", "a"), ("beta", "a"), ("beta", "b")] {
        let out =
            on_host(d.path(), host, &["scan", "-q", "--catalog", &db.url, t]).output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    std::fs::remove_file(gone).unwrap();
    let out =
        on_host(d.path(), "beta", &["verify", "-q", "--catalog", &db.url, "b"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "a missing file");
    let status = |args: &[&str]| -> serde_json::Value {
        let out = on_host(d.path(), "alpha", args).output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = status(&["status", "--json", "--catalog", &db.url]);
    assert_eq!(v["catalog"], db.url.replace(pg::PASSWORD, "***"));
    let hosts = v["hosts"].as_array().unwrap();
    assert_eq!(
        hosts.iter().map(|h| h["host"].as_str().unwrap()).collect::<Vec<_>>(),
        ["alpha", "beta"]
    );
    let a = std::fs::canonicalize(d.path().join("a")).unwrap();
    let b = std::fs::canonicalize(d.path().join("b")).unwrap();
    let beta = hosts[1]["trees"].as_array().unwrap();
    assert_eq!(beta.len(), 2);
    assert_eq!(beta[0]["tree"], a.to_str().unwrap());
    assert_eq!((beta[0]["files"].as_u64(), beta[0]["bytes"].as_u64()), (Some(2), Some(5)));
    assert_eq!(beta[0]["last_run"]["command"], "scan");
    assert_eq!(beta[0]["last_complete_pass"], serde_json::Value::Null);
    assert_eq!(beta[1]["tree"], b.to_str().unwrap());
    assert_eq!(beta[1]["files"], 1);
    assert_eq!(beta[1]["findings"]["missing"], 1);
    assert_eq!(beta[1]["findings"]["corrupt"], 0);
    assert_eq!(beta[1]["last_run"]["command"], "verify");
    assert!(beta[1]["last_complete_pass"].as_i64().is_some(), "the verify was a whole pass");
    // One host's trees; one tree of another host.
    let v = status(&["status", "--json", "--host", "alpha", "--catalog", &db.url]);
    assert_eq!(v["hosts"].as_array().unwrap().len(), 1);
    assert_eq!(v["hosts"][0]["trees"][0]["files"], 2);
    let v = status(&["status", "--json", "--host", "beta", "--catalog", &db.url, "b"]);
    assert_eq!(
        (v["host"].as_str(), v["files"].as_u64(), v["missing"].as_u64()),
        (Some("beta"), Some(1), Some(1))
    );
    // The text view, grouped by host.
    let out = on_host(d.path(), "alpha", &["status", "--catalog", &db.url]).output().unwrap();
    let shown = text(&out.stdout);
    assert!(shown.contains("host alpha\n") && shown.contains("host beta\n"), "{shown}");
    assert!(shown.contains("missing 1"), "{shown}");
    assert!(!shown.contains(pg::PASSWORD), "{shown}");
}

#[test]
fn export_from_postgresql_equals_export_from_sqlite() {
    use std::os::unix::ffi::OsStrExt;
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "a b", b"one");
    write(&t, "back\\slash", b"two");
    write(&t, "sub/c", b"three");
    std::fs::write(t.join(std::ffi::OsStr::from_bytes(b"bad\xffname")), b"four").unwrap();
    for catalog in [&["--catalog", "sqlite.db"][..], &["--catalog", &db.url]] {
        let out = fixity(d.path())
            .args(["scan", "-q", "-a", "sha256"])
            .args(catalog)
            .arg("t")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    for format in ["sha256sum", "bsd", "json", "hashdeep"] {
        let export = |catalog: &str| -> Output {
            fixity(d.path())
                .args(["export", "--format", format, "--catalog", catalog, "t"])
                .output()
                .unwrap()
        };
        // The password on the command line: hashdeep's header shows the command masked.
        let (from_sqlite, from_pg) = (export("sqlite.db"), export(&db.secret));
        assert!(from_pg.status.success(), "{format}: {}", text(&from_pg.stderr));
        assert!(!from_pg.stdout.is_empty());
        // hashdeep's header holds the command line: the catalog differs there, and the
        // password is masked.
        let without_command = |out: &[u8]| -> Vec<u8> {
            let lines = out.split_inclusive(|&b| b == b'\n');
            lines
                .filter(|l| !l.starts_with(b"## # ") && !l.starts_with(b"## $ "))
                .flatten()
                .copied()
                .collect()
        };
        assert_eq!(
            without_command(&from_pg.stdout),
            without_command(&from_sqlite.stdout),
            "{format}"
        );
        let shown = text(&from_pg.stdout);
        assert!(!shown.contains(pg::PASSWORD), "{shown}");
        if format == "hashdeep" {
            assert!(shown.contains("--catalog postgresql://fixity:***@"), "{shown}");
        } else {
            assert_eq!(from_pg.stdout, from_sqlite.stdout, "{format}");
        }
        // The only message: the password on the command line is seen by `ps`.
        let warned = text(&from_pg.stderr);
        assert!(warned.starts_with("fixity: warning: the password in --catalog's URL"), "{warned}");
        assert_eq!(warned.lines().count(), 1, "{warned}");
        assert!(from_sqlite.stderr.is_empty());
    }
}

#[test]
fn a_busy_tree_is_refused_or_waited_for() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    let scan = |extra: &[&str]| {
        on_host(
            d.path(),
            "h",
            // The password on the command line: the messages show it masked.
            &[&["verify", "-q", "--catalog", &db.secret][..], extra, &["t"]].concat(),
        )
    };
    assert!(
        on_host(d.path(), "h", &["scan", "-q", "--catalog", &db.url, "t"])
            .status()
            .unwrap()
            .success()
    );
    let mut c = db.client();
    let tree: i32 = c.query_one("SELECT id FROM fixity.trees", &[]).unwrap().get(0);
    // The run lock of another run (its class, then the tree's id).
    c.execute("SELECT pg_advisory_lock($1, $2)", &[&0x6669_7801i32, &tree]).unwrap();
    let out = scan(&[]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("is busy for h:") && err.contains("pass --wait"), "{err}");
    assert!(err.contains("fixity:***@127.0.0.1") && !err.contains(pg::PASSWORD), "{err}");
    // Another tree (another host's) is not held up.
    assert!(
        on_host(d.path(), "other", &["scan", "-q", "--catalog", &db.url, "t"])
            .status()
            .unwrap()
            .success()
    );
    // With --wait the run queues until the lock is let go.
    let mut waiting = scan(&["--wait"]).stderr(std::process::Stdio::piped()).spawn().unwrap();
    wait_until_blocked(&db);
    if waiting.try_wait().unwrap().is_some() {
        let out = waiting.wait_with_output().unwrap();
        panic!("the run did not wait for the lock: {:?} {}", out.status, text(&out.stderr));
    }
    c.execute("SELECT pg_advisory_unlock($1, $2)", &[&0x6669_7801i32, &tree]).unwrap();
    assert!(waiting.wait().unwrap().success());
}

#[test]
fn a_wrong_password_or_no_server_is_exit_2_naming_the_catalog_not_the_password() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    let wrong = db.url_with_password("not-the-password");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let nobody = format!("postgresql://fixity:{}@127.0.0.1:{port}/x", pg::PASSWORD);
    for (url, why) in [(&wrong, "password authentication failed"), (&nobody, "Connection refused")]
    {
        for args in
            [&["scan", "t"][..], &["verify", "t"], &["status"], &["status", "t"], &["export", "t"]]
        {
            let out = fixity(d.path()).args(args).args(["--catalog", url]).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{args:?} {url}");
            let err = text(&out.stderr);
            let shown = url.replace(pg::PASSWORD, "***").replace("not-the-password", "***");
            assert!(err.contains(&format!("cannot connect to catalog {shown}: ")), "{err}");
            assert!(err.contains(why), "{err}");
            assert!(!err.contains(pg::PASSWORD) && !err.contains("not-the-password"), "{err}");
        }
    }
    // The password from PGPASSWORD when the URL has none; a bad PGSSLMODE is named.
    let bare = db.url.replace(&format!(":{}@", pg::PASSWORD), "@");
    let out = fixity(d.path())
        .args(["scan", "-q", "--catalog", &bare, "t"])
        .env("PGPASSWORD", pg::PASSWORD)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = fixity(d.path())
        .args(["status", "--catalog", &bare])
        .env("PGSSLMODE", "sometimes")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("PGSSLMODE: invalid sslmode \"sometimes\""),
        "{}",
        text(&out.stderr)
    );
}

/// `(class, path)` of every file a `--json` run reported (`from -> to` for a move), and
/// the exit code.
fn reported(out: &Output) -> (Vec<(String, String)>, Option<i32>) {
    let mut found = Vec::new();
    for line in text(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        if v.get("summary").is_some() {
            continue;
        }
        let path = v["path"].as_str().unwrap().to_string();
        let path = match v.get("moved_from") {
            Some(from) => format!("{} -> {path}", from.as_str().unwrap()),
            None => path,
        };
        found.push((v["class"].as_str().unwrap().to_string(), path));
    }
    found.sort();
    (found, out.status.code())
}

#[test]
fn runs_of_more_rows_than_a_batch_record_every_row_exactly() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    many_files(&t, 5000);
    // More new files than one batch holds (4096 rows).
    let out = on_host(d.path(), "h", &["scan", "-q", "--catalog", &db.url, "t"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(as_rows(&records(&db.secret, "h", &t)), tree_files(&t));

    // Every kind of write, in batches of 7 rows. Files 0..256 have distinct contents
    // (file i and i + 256 are alike), so each move pairs with its own source.
    let name = |i: usize| format!("d{:02}/f{i:05}", i % 40);
    let mut want = Vec::new();
    for k in 0..26 {
        let (edit, gone, moved) = (name(10 * k), name(10 * k + 1), name(10 * k + 2));
        write(&t, &edit, format!("edited {k}").as_bytes());
        std::fs::remove_file(t.join(&gone)).unwrap();
        let to = format!("moved/f{:05}", 10 * k + 2);
        std::fs::create_dir_all(t.join("moved")).unwrap();
        std::fs::rename(t.join(&moved), t.join(&to)).unwrap();
        want.extend([
            ("modified".to_string(), edit),
            ("missing".to_string(), gone),
            ("moved".to_string(), format!("{moved} -> {to}")),
        ]);
    }
    for i in 0..30 {
        write(&t, format!("new/n{i:02}"), format!("new {i}").as_bytes());
        want.push(("new".to_string(), format!("new/n{i:02}")));
    }
    want.sort();
    let run = |cmd: &str| {
        on_host(d.path(), "h", &[cmd, "--json", "--catalog", &db.url, "t"])
            .env("FIXITY_PG_BATCH", "7")
            .output()
            .unwrap()
    };
    let out = run("scan");
    assert_eq!(reported(&out), (want, Some(1)), "{}", text(&out.stderr));
    let recorded = records(&db.secret, "h", &t);
    assert_eq!(as_rows(&recorded), tree_files(&t));
    assert_eq!(recorded.iter().filter(|r| r.missing_since.is_some()).count(), 26);

    // A verify in batches of 7 looks at every present file once: each ok, the losses
    // still missing.
    let before = records(&db.secret, "h", &t);
    let out = run("verify");
    let (found, code) = reported(&out);
    assert_eq!(code, Some(1), "{}", text(&out.stderr));
    assert_eq!(found.len(), 26);
    assert!(found.iter().all(|(class, _)| class == "missing"), "{found:?}");
    let after = records(&db.secret, "h", &t);
    assert_eq!(as_rows(&after), tree_files(&t));
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(a.path, b.path);
        if a.missing_since.is_none() {
            assert!(a.last_verified > b.last_verified, "{:?} verified", text(&a.path));
            assert_eq!(a.last_result, fixity::catalog::Class::Ok);
        }
    }
}

/// The tree `t` (made) of host `h` in `db`, opened to write through the library, in
/// batches of `batch_rows` (`None`: the usual).
fn store_of_h(
    db: &Database,
    t: &Path,
    batch_rows: Option<usize>,
) -> Box<dyn fixity::catalog::Store> {
    std::fs::create_dir_all(t).unwrap();
    let mut spec = PgSpec::new(&db.secret, Some("h"), t);
    spec.batch_rows = batch_rows;
    let how = OpenOptions { create: true, ..OpenOptions::default() };
    open_store(&StoreSpec::Postgres(spec), &how).unwrap()
}

/// A 10-byte file's content, its digest and inode `b`.
fn found(b: u8) -> fixity::catalog::Found {
    fixity::catalog::Found {
        digest: fixity::digest::Digest::new(&[b; 32]),
        stamp: fixity::device::Stamp::sized(10, 1),
        file_id: Some((1, u64::from(b))),
        access: None,
    }
}

#[test]
fn later_writes_to_a_path_in_one_batch_win_and_reads_see_them() {
    use fixity::catalog::{Class, StoreError};
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    let mut s = store_of_h(&db, &t, None);
    let lookup = |s: &dyn fixity::catalog::Store, p: &str| s.lookup(p.as_bytes()).unwrap();
    s.record_new(b"old", &found(1), 100).unwrap();
    s.commit().unwrap();

    // In one batch: a file recorded new, then the missing one found moved to it; a file
    // recorded new, missing, back, and checked.
    s.record_missing(b"old", 200).unwrap();
    s.record_new(b"new", &found(1), 200).unwrap();
    s.record_moved(b"old", b"new", 200).unwrap();
    s.record_new(b"again", &found(2), 200).unwrap();
    s.record_missing(b"again", 200).unwrap();
    s.record_present(b"again").unwrap();
    let mut rec = lookup(&*s, "new").expect("a read sees the batch's writes");
    assert!(s.uncommitted(), "read, not committed");
    assert_eq!(rec.last_result, Class::Moved);
    assert_eq!(lookup(&*s, "old").map(|r| r.path), None, "the move's source is gone");
    rec.path = b"again".to_vec();
    s.record_check(&rec, Class::Corrupt, None, Some("bad"), 300).unwrap();
    s.record_check(&rec, Class::Ok, None, None, 300).unwrap();
    s.commit().unwrap();
    assert!(!s.uncommitted());
    let again = records(&db.secret, "h", &t).into_iter().find(|r| r.path == b"again").unwrap();
    assert_eq!(
        (again.last_result, again.missing_since, again.last_verified),
        (Class::Ok, None, 300)
    );
    let listed = |s: &dyn fixity::catalog::Store, new: bool| {
        let mut listed = Vec::new();
        s.findings(200, new, &mut |p, class, from, _| {
            listed.push((text(p), class, from.map(text)));
        })
        .unwrap();
        listed
    };
    let moved = ("new".to_string(), Class::Moved, Some("old".to_string()));
    assert_eq!(listed(&*s, true), std::slice::from_ref(&moved));
    // New files are listed when asked for.
    s.record_new(b"fresh", &found(6), 200).unwrap();
    s.commit().unwrap();
    assert_eq!(listed(&*s, false), std::slice::from_ref(&moved));
    assert_eq!(listed(&*s, true), [("fresh".to_string(), Class::New, None), moved]);

    // An abandoned batch leaves nothing, held or sent.
    s.record_new(b"dropped", &found(3), 400).unwrap();
    assert!(lookup(&*s, "dropped").is_some());
    s.record_new(b"dropped too", &found(4), 400).unwrap();
    s.abandon();
    assert!(!s.uncommitted());
    s.commit().unwrap();
    assert!(lookup(&*s, "dropped").is_none() && lookup(&*s, "dropped too").is_none());

    // A batch that cannot be sent is a catalog error, at the commit that sends it.
    s.record_new(b"lost", &found(5), 500).unwrap();
    let mut c = db.client();
    c.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE application_name = 'fixity' AND datname = current_database()",
        &[],
    )
    .unwrap();
    let err = s.commit().expect_err("the connection is gone");
    assert!(matches!(err, StoreError::Catalog(_)), "{err}");
    s.abandon();
    drop(s);
    assert!(records(&db.secret, "h", &t).iter().all(|r| r.path != b"lost"));
}

#[test]
fn a_batch_that_fails_to_send_reports_the_findings_and_exits_2() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    many_files(&t, 300);
    let (mut c, tree) = empty_tree_of_k(d.path(), &db);
    // The run's insert waits for a row the test holds; its connection is then ended.
    let out = scan_cut_at_held_row(&db, d.path(), &mut c, tree, &[], None);
    let (found, code) = reported(&out);
    assert_eq!(code, Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("were not recorded"), "{}", text(&out.stderr));
    assert_eq!(found.len(), 300, "every new file is reported, unrecorded");
    assert!(
        records(&db.secret, "k", &t).is_empty(),
        "the batch with the held row is not committed"
    );
}

#[test]
fn a_row_committed_under_a_scans_insert_is_made_the_new_file() {
    // A scan inserts its new files' rows plainly (none has a row: it holds the tree's
    // lock and met no record of them). Here one appears all the same: the test inserts
    // it in a transaction the run cannot see, the run's insert waits for it, and the test
    // commits. The run's insert then fails on that row, at a savepoint: its fallback makes
    // the row the new file, and the batch's other rows stand.
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    many_files(&t, 300);
    let (mut c, tree) = empty_tree_of_k(d.path(), &db);
    let mut hold = c.transaction().unwrap();
    hold_row(&mut hold, tree, "d20/f00100");
    let mut scan = on_host(d.path(), "k", &["scan", "-q", "--catalog", &db.url, "t"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_blocked_or_done(&db, Some(&mut scan));
    hold.commit().unwrap();
    let out = scan.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    let recorded = records(&db.secret, "k", &t);
    assert_eq!(as_rows(&recorded), tree_files(&t), "every file as it is, the held row too");
    assert!(recorded.iter().all(|r| r.last_result == fixity::catalog::Class::New));
}

/// libpq's files, as every PostgreSQL client reads them: a password in ~/.pgpass (mode
/// 0600) for a URL without one, a service file naming the whole connection (in the URL,
/// or PGSERVICE); a password file others can read is not read, and the failed connection
/// says why.
#[test]
fn pgpass_and_service_files_are_read_as_libpq_reads_them() {
    use std::os::unix::fs::PermissionsExt;
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    write(&d.path().join("t"), "a", b"a");
    let home = d.path().join("home");
    let line = format!("127.0.0.1:{}:{}:{}:{}\n", db.port, db.name, pg::USER, pg::PASSWORD);
    let pgpass = write(&home, ".pgpass", line.as_bytes());
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let service = format!(
        "[fleet]\nhost=127.0.0.1\nport={}\ndbname={}\nuser={}\n",
        db.port,
        db.name,
        pg::USER
    );
    write(&home, ".pg_service.conf", service.as_bytes());
    let run = |catalog: &str, env: &[(&str, &str)], args: &[&str]| {
        let mut c = fixity(d.path());
        for v in ["PGPASSWORD", "PGSERVICE", "PGPASSFILE", "PGSERVICEFILE", "PGHOST", "PGUSER"] {
            c.env_remove(v);
        }
        c.env("HOME", &home).envs(env.iter().copied());
        c.args(args).args(["--catalog", catalog, "t"]).output().unwrap()
    };
    let bare = format!("postgresql://{}@127.0.0.1:{}/{}", pg::USER, db.port, db.name);
    let out = run(&bare, &[], &["scan", "-q"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run("postgresql://?service=fleet", &[], &["verify", "-q"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run("postgresql://", &[("PGSERVICE", "fleet")], &["status"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("files:     1"));
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = run(&bare, &[], &["verify", "-q"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("group or world access") && err.contains("0600"), "{err}");
    let out = run("postgresql://?service=nosuch", &[], &["status"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nosuch"));
}

/// Every path of the files of `many_files(_, n)`.
fn many_paths(n: usize) -> std::collections::BTreeSet<String> {
    (0..n).map(|i| format!("d{:02}/f{i:05}", i % 40)).collect()
}

#[test]
fn a_batch_failing_while_the_next_fills_loses_no_finding_and_tells_none_twice() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    many_files(&t, 300);
    let (mut c, tree) = empty_tree_of_k(d.path(), &db);
    // Batches of 7: the one that holds d20/f00100 waits for the test's row, while those
    // after it go on the other connection; the waiting connection is then ended.
    let out = scan_cut_at_held_row(&db, d.path(), &mut c, tree, &["-j", "1"], Some("7"));
    let (found, code) = reported(&out);
    assert_eq!(code, Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("were not recorded"), "{}", text(&out.stderr));
    // Each finding is told once: listed from the catalog when its batch committed (if
    // the connection that lists them still stands), else as not recorded.
    let told: std::collections::BTreeSet<String> = found.iter().map(|(_, p)| p.clone()).collect();
    assert_eq!(told.len(), found.len(), "a finding told twice: {found:?}");
    let rows = records(&db.secret, "k", &t);
    let kept: std::collections::BTreeSet<String> = rows.iter().map(|r| text(&r.path)).collect();
    assert!(
        kept.len() >= 150 && kept.len() < 300,
        "every batch but the failed one and the one filling: {}",
        kept.len()
    );
    assert!(!kept.contains("d20/f00100") && told.contains("d20/f00100"), "{told:?}");
    // Listed from the catalog: every one; else none that was committed.
    assert!(
        told.len() == 300 || told.is_disjoint(&kept),
        "{} told, {} kept",
        told.len(),
        kept.len()
    );
    let all: std::collections::BTreeSet<String> = told.union(&kept).cloned().collect();
    assert_eq!(all, many_paths(300), "each new file is kept or told");
    let want = tree_files(&t);
    assert!(as_rows(&rows).iter().all(|r| want.contains(r)), "whole rows, as the tree has them");
}

#[test]
fn a_run_killed_with_batches_on_their_way_leaves_whole_batches_and_converges() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    many_files(&t, 400);
    let want = tree_files(&t);
    let (mut c, tree) = empty_tree_of_k(d.path(), &db);
    // SIGKILL, with a batch on its way and the next one filling.
    scan_killed_at_held_row(&db, d.path(), &mut c, (tree, "d30/f00110"), Some("5"));
    let partial = as_rows(&records(&db.secret, "k", &t));
    // Every batch before the one waiting for the held row (the 303rd file) is kept.
    assert!(partial.len() >= 290 && partial.len() < 400, "{}", partial.len());
    assert!(partial.iter().all(|r| want.contains(r)), "only whole rows, each as the tree has it");

    // A verify in batches of 5, killed the same way, then a scan and a verify converge.
    let mut c = db.client();
    let mut hold = c.transaction().unwrap();
    hold.execute(
        "SELECT 1 FROM fixity.files WHERE tree = $1 AND path = 'd05/f00005' FOR UPDATE",
        &[&tree],
    )
    .unwrap();
    let mut verify =
        on_host(d.path(), "k", &["verify", "-q", "-j", "1", "--wait", "--catalog", &db.url, "t"])
            .env("FIXITY_PG_BATCH", "5")
            .spawn()
            .unwrap();
    wait_until_blocked(&db);
    verify.kill().unwrap();
    verify.wait().unwrap();
    hold.rollback().unwrap();
    for cmd in ["scan", "verify"] {
        let out = on_host(d.path(), "k", &[cmd, "-q", "--wait", "--catalog", &db.url, "t"])
            .env("FIXITY_PG_BATCH", "5")
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd}: {}{}", text(&out.stdout), text(&out.stderr));
    }
    assert_eq!(as_rows(&records(&db.secret, "k", &t)), want);
    let stale: i64 = db
        .client()
        .query_one(
            "SELECT count(*) FROM fixity.files WHERE tree = $1 AND last_result <> 'ok'",
            &[&tree],
        )
        .unwrap()
        .get(0);
    assert_eq!(stale, 0, "the last verify looked at every file");
}

#[test]
fn a_whole_pass_reads_by_the_key_and_updates_ok_rows_without_an_index_entry() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    for i in 0..40 {
        write(d.path(), format!("t/d{}/f{i:02}", i % 4), format!("file {i}").as_bytes());
    }
    let run = |cmd: &str| {
        on_host(d.path(), "k", &[cmd, "-q", "--catalog", &db.url, "t"]).output().unwrap()
    };
    assert!(run("scan").status.success());
    let rot = d.path().join("t/d1/f05");
    let before = mtime(&rot);
    std::fs::write(&rot, b"FILE 5").unwrap();
    set_mtime(&rot, before);
    let out = run("verify");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("CORRUPT     d1/f05"), "{}", text(&out.stdout));
    let mut c = db.client();
    // The index of the findings holds them alone, by a column a verify's update of an ok
    // row leaves unchanged...
    let def: String = c
        .query_one("SELECT pg_get_indexdef('fixity.files_by_listed'::regclass)", &[])
        .unwrap()
        .get(0);
    assert!(def.contains("(tree, listed_at, path) WHERE (listed_at IS NOT NULL)"), "{def}");
    let listed: i64 = c
        .query_one("SELECT count(*) FROM fixity.files WHERE listed_at IS NOT NULL", &[])
        .unwrap()
        .get(0);
    assert_eq!(listed, 1, "the corrupt file alone");
    // ... so the server can update those rows in place, with no index entry: heap-only
    // updates (counted once the statistics are sent, at the end of each transaction).
    let hot = |c: &mut postgres::Client| -> i64 {
        c.batch_execute("SELECT pg_stat_force_next_flush()").unwrap_or(());
        c.query_one(
            "SELECT coalesce(sum(n_tup_hot_upd), 0)::bigint FROM pg_stat_all_tables
             WHERE schemaname = 'fixity' AND relname = 'files'",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let before = hot(&mut c);
    assert_eq!(run("verify").status.code(), Some(1));
    std::thread::sleep(Duration::from_millis(1500));
    let after = hot(&mut c);
    // How many fit on their page beside the old version depends on the page (and on
    // what the last run left to prune); while an index held the check's time, none did.
    assert!(after > before, "ok rows updated in place: {before} -> {after}");
    let plan = |c: &mut postgres::Client, sql: &str| -> String {
        let mut tx = c.transaction().unwrap();
        tx.batch_execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
            .unwrap();
        let rows = tx.query(&format!("EXPLAIN {sql}"), &[]).unwrap();
        rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>().join("\n")
    };
    // ... and still finds a run's findings.
    let p = plan(
        &mut c,
        "SELECT path FROM fixity.files WHERE tree = 1 AND listed_at = 5 AND path > 'a'
           ORDER BY path LIMIT 4096",
    );
    assert!(p.contains("files_by_listed"), "{p}");
    assert!(!p.contains("Sort"), "{p}");
    // With the new files (not in that index), by the primary key in its order.
    let p = plan(
        &mut c,
        "SELECT path FROM fixity.files WHERE tree = 1 AND last_checked = 5
           AND last_result <> 'ok' AND path > 'a' ORDER BY path LIMIT 4096",
    );
    assert!(p.contains("files_pkey") && !p.contains("Sort"), "{p}");
    // A whole pass reads what it has not looked at in the primary key's order.
    let p = plan(
        &mut c,
        "SELECT path FROM fixity.files WHERE tree = 1 AND path > 'a' AND missing_since IS NULL
           AND last_checked < 5 ORDER BY path LIMIT 4096",
    );
    assert!(p.contains("Index Scan using files_pkey"), "{p}");
    assert!(!p.contains("Sort"), "{p}");
    // A second whole pass sees every file once more: the corrupt file again.
    let out = run("verify");
    assert_eq!(out.status.code(), Some(1));
    let shown = text(&out.stdout);
    assert_eq!(shown.matches("d1/f05").count(), 1, "{shown}");
}

#[test]
fn writes_to_one_path_in_batches_on_their_way_at_once_land_in_order() {
    use fixity::catalog::Class;
    // Batches of one row, two on their way at once: each path is written in one batch
    // and again in the next (recorded new, then checked), and a later batch must not
    // overtake the earlier one (its update would find no row yet).
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    let mut s = store_of_h(&db, &t, Some(1));
    let found = found(7);
    s.record_new(b"f000", &found, 100).unwrap();
    let model = s.lookup(b"f000").unwrap().expect("a read sees the write");
    for i in 1..200 {
        let path = format!("f{i:03}").into_bytes();
        s.record_new(&path, &found, 100).unwrap();
        let rec = Record { path, ..model.clone() };
        s.record_check(&rec, Class::Corrupt, None, Some("later"), 200).unwrap();
    }
    s.commit().unwrap();
    drop(s);
    let rows = records(&db.secret, "h", &t);
    assert_eq!(rows.len(), 200);
    for r in &rows[1..] {
        assert_eq!(r.last_result, Class::Corrupt, "{}", text(&r.path));
    }
}

#[test]
fn a_new_file_whose_row_is_there_after_all_is_made_new_and_its_batch_stands() {
    // The writer inserts a new file's row plainly (the run met no record of it); should a
    // row of the path be there, the insert fails at the savepoint begun with the batch's
    // transaction and an insert-or-update takes its place: the batch's other rows stand.
    // Both with the batch sent by the run itself and by the senders (batches of 1 row).
    for batch_rows in [None, Some(1)] {
        let Some(db) = pg::database() else { return };
        let d = tempdir();
        let t = d.path().join("t");
        let mut s = store_of_h(&db, &t, batch_rows);
        s.record_new(b"dup", &found(1), 100).unwrap();
        s.commit().unwrap();
        s.record_new(b"before", &found(3), 200).unwrap();
        s.record_new(b"dup", &found(2), 200).unwrap();
        s.record_new(b"after", &found(4), 200).unwrap();
        s.commit().unwrap();
        let mut got: Vec<(String, u8, i64, fixity::catalog::Class)> = records(&db.secret, "h", &t)
            .into_iter()
            .map(|r| (text(&r.path), r.digest.as_bytes()[0], r.last_verified, r.last_result))
            .collect();
        got.sort();
        let new = fixity::catalog::Class::New;
        let want = [("after", 4, 200), ("before", 3, 200), ("dup", 2, 200)]
            .map(|(p, b, at)| (p.to_string(), b, at, new));
        assert_eq!(got, want, "batches of {batch_rows:?} rows");
    }
}
