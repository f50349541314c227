//! Roles of a shared PostgreSQL catalog (`fixity catalog init-roles`): each host's role
//! reads and writes only its own trees, a monitor reads everything and writes nothing,
//! the owner migrates. Against the test cluster, with the roles' passwords over TCP.

use crate::util::pg::{self, Database};
use crate::util::{fixity, tempdir, write};
use std::path::Path;
use std::process::Output;
use std::sync::Mutex;

/// init-roles makes the group roles (fixity_hosts, fixity_monitors) of the whole
/// cluster: two tests making them at once would race for the first creation.
static CLUSTER_ROLES: Mutex<()> = Mutex::new(());

const PW: &str = "role-pw";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The login roles of one test (role names are the cluster's: each test its own).
struct Roles {
    owner: String,
    a: String,
    /// Host B's role, with characters that need quoting.
    b: String,
    monitor: String,
}

impl Roles {
    fn of(db: &Database) -> Roles {
        let n = &db.name;
        Roles {
            owner: format!("{n}_owner"),
            a: format!("{n}_a"),
            b: format!("{n} b'\"o"),
            monitor: format!("{n}_mon"),
        }
    }

    /// init-roles' arguments for these roles (hosts hostA and hostB).
    fn args(&self) -> Vec<String> {
        vec![
            "catalog".into(),
            "init-roles".into(),
            "--owner".into(),
            self.owner.clone(),
            "--host".into(),
            format!("{}=hostA", self.a),
            "--host".into(),
            format!("{}=hostB", self.b),
            "--monitor".into(),
            self.monitor.clone(),
        ]
    }

    /// Applies the roles as the test's superuser, and gives each login role a password.
    fn apply(&self, db: &Database, dir: &Path) {
        let _one_at_a_time = CLUSTER_ROLES.lock().unwrap_or_else(|e| e.into_inner());
        let mut args = self.args();
        args.extend(["--apply".into(), "--catalog".into(), db.url.clone()]);
        let out = fixity(dir).args(&args).output().unwrap();
        assert!(out.status.success(), "init-roles --apply: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("roles set up"), "{}", text(&out.stdout));
        self.passwords(db);
    }

    fn passwords(&self, db: &Database) {
        let mut c = db.client();
        for r in [&self.owner, &self.a, &self.b, &self.monitor] {
            c.batch_execute(&format!("ALTER ROLE \"{}\" PASSWORD '{PW}'", r.replace('"', "\"\"")))
                .unwrap();
        }
    }
}

/// `fixity ARGS` in `dir` as `role` of `db` (its URL in place of `CATALOG`), on `host`.
fn as_role(db: &Database, role: &str, host: &str, dir: &Path, args: &[&str]) -> Output {
    let url = db.url_as(role);
    let args: Vec<&str> =
        args.iter().map(|a| if *a == "CATALOG" { url.as_str() } else { a }).collect();
    fixity(dir).env("FIXITY_HOST", host).env("PGPASSWORD", PW).args(&args).output().unwrap()
}

fn ok(out: &Output, what: &str) -> String {
    assert!(out.status.success(), "{what}: {}{}", text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

/// Asserts `out` is a refusal (exit 2) whose message holds each of `says`.
fn refused(out: &Output, what: &str, says: &[&str]) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {}{err}", text(&out.stdout));
    for s in says {
        assert!(err.contains(s), "{what}: {err:?} should say {s:?}");
    }
}

/// Every row of host B's tree, its files and its runs, as text: what must not change.
fn snapshot(db: &Database, host: &str) -> (String, Vec<String>, Vec<String>) {
    let mut c = db.client();
    let tree = c
        .query_one("SELECT id, row(t.*)::text FROM fixity.trees t WHERE host = $1", &[&host])
        .unwrap();
    let id: i32 = tree.get(0);
    let rows = |c: &mut postgres::Client, sql: &str| -> Vec<String> {
        c.query(sql, &[&id]).unwrap().iter().map(|r| r.get(0)).collect()
    };
    let files =
        rows(&mut c, "SELECT row(f.*)::text FROM fixity.files f WHERE tree = $1 ORDER BY path");
    let runs = rows(&mut c, "SELECT row(r.*)::text FROM fixity.runs r WHERE tree = $1 ORDER BY id");
    assert!(!files.is_empty() && !runs.is_empty());
    (tree.get(1), files, runs)
}

#[test]
fn a_host_role_cannot_read_change_or_delete_another_hosts_records() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let roles = Roles::of(&db);
    roles.apply(&db, d.path());
    for f in 0..5 {
        write(d.path(), format!("ta/d/f{f}"), format!("a{f}").as_bytes());
        write(d.path(), format!("tb/d/f{f}"), format!("b{f}").as_bytes());
    }
    let (a, b) = (roles.a.as_str(), roles.b.as_str());
    // Each host scans and verifies its own tree with its own role.
    for (role, host, tree) in [(a, "hostA", "ta"), (b, "hostB", "tb")] {
        for cmd in ["scan", "verify"] {
            let out =
                as_role(&db, role, host, d.path(), &[cmd, "-q", "--catalog", "CATALOG", tree]);
            ok(&out, &format!("{cmd} of {host} as its role"));
        }
    }
    // A finding of B's, for accept and forget to be asked about.
    std::fs::remove_file(d.path().join("tb/d/f4")).unwrap();
    let out = as_role(&db, b, "hostB", d.path(), &["verify", "-q", "--catalog", "CATALOG", "tb"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let before = snapshot(&db, "hostB");

    // With A's credentials, every command on B's tree is refused by name.
    let other = [
        &*format!("role \"{a}\" may only read and write the trees of host \"hostA\""),
        "not host \"hostB\"'s",
    ];
    let head = d.path().join("b-head.txt");
    let out =
        as_role(&db, b, "hostB", d.path(), &["status", "--proof", "--catalog", "CATALOG", "tb"]);
    std::fs::write(&head, ok(&out, "B's head")).unwrap();
    let head = head.to_str().unwrap();
    let attempts: [(&str, &[&str]); 12] = [
        ("status of B's tree", &["status", "--catalog", "CATALOG", "--host", "hostB", "tb"]),
        ("B's head", &["status", "--proof", "--catalog", "CATALOG", "--host", "hostB", "tb"]),
        (
            "an audit of B",
            &["audit-proof", "--catalog", "CATALOG", "--host", "hostB", "tb", "--head", head],
        ),
        ("fleet status of B", &["status", "--catalog", "CATALOG", "--host", "hostB"]),
        ("scan of B", &["scan", "--catalog", "CATALOG", "tb"]),
        ("verify of B", &["verify", "--catalog", "CATALOG", "tb"]),
        ("accept in B", &["accept", "--catalog", "CATALOG", "--tree", "tb", "tb/d/f0"]),
        ("forget in B", &["forget", "--catalog", "CATALOG", "--tree", "tb", "tb/d/f4"]),
        ("report of B", &["report", "--json", "--catalog", "CATALOG", "--host", "hostB", "tb"]),
        ("export of B", &["export", "--catalog", "CATALOG", "--host", "hostB", "tb"]),
        ("dups of B", &["dups", "--catalog", "CATALOG", "--host", "hostB", "tb"]),
        (
            "status --nagios of B",
            &["status", "--nagios", "--catalog", "CATALOG", "--host", "hostB", "tb"],
        ),
    ];
    for (what, args) in attempts {
        let out = as_role(&db, a, "hostB", d.path(), args);
        match what {
            // A monitoring plugin cannot judge it: UNKNOWN (3), saying why on its line.
            "status --nagios of B" => {
                let line = text(&out.stdout);
                assert_eq!(out.status.code(), Some(3), "{what}: {line}{}", text(&out.stderr));
                assert!(other.iter().all(|s| line.contains(s)), "{what}: {line}");
            }
            _ => refused(&out, what, &other),
        }
    }
    // B's own audit, with its own role, finds its history whole.
    let audit = ["audit-proof", "--catalog", "CATALOG", "tb", "--head", head];
    ok(&as_role(&db, b, "hostB", d.path(), &audit), "B's audit of its own tree");
    // A's fleet view lists A's trees only.
    let fleet =
        ok(&as_role(&db, a, "hostA", d.path(), &["status", "--catalog", "CATALOG"]), "A's fleet");
    assert!(fleet.contains("host hostA") && !fleet.contains("hostB"), "{fleet}");

    // The same attempts in SQL, connected as A: B's rows are not there to read, change or
    // delete, and no row of B's can be made.
    let b_id: i32 = db
        .client()
        .query_one("SELECT id FROM fixity.trees WHERE host = 'hostB'", &[])
        .unwrap()
        .get(0);
    let mut c = db.client_as(a, PW);
    let count =
        |c: &mut postgres::Client, sql: &str| -> i64 { c.query_one(sql, &[&b_id]).unwrap().get(0) };
    assert_eq!(
        count(&mut c, "SELECT count(*) FROM fixity.trees WHERE id = $1 OR host = 'hostB'"),
        0
    );
    for table in ["files", "runs", "digests", "remote_checks", "proofs"] {
        assert_eq!(
            count(&mut c, &format!("SELECT count(*) FROM fixity.{table} WHERE tree = $1")),
            0,
            "{table}"
        );
    }
    let mine: i64 = c.query_one("SELECT count(*) FROM fixity.files", &[]).unwrap().get(0);
    assert_eq!(mine, 5, "A sees its own files");
    for sql in [
        "UPDATE fixity.files SET digest = '\\x00', last_result = 'ok' WHERE tree = $1",
        "UPDATE fixity.trees SET root = '\\x2f' WHERE id = $1",
        "UPDATE fixity.runs SET summary = 'x' WHERE tree = $1",
        "DELETE FROM fixity.files WHERE tree = $1",
        "DELETE FROM fixity.runs WHERE tree = $1",
        "UPDATE fixity.proofs SET root = '\\x00' WHERE tree = $1",
        "DELETE FROM fixity.proofs WHERE tree = $1",
        "DELETE FROM fixity.trees WHERE id = $1",
    ] {
        assert_eq!(c.execute(sql, &[&b_id]).unwrap(), 0, "{sql}");
    }
    let rls = |r: Result<u64, postgres::Error>, what: &str, says: &str| {
        let e = r.expect_err(what);
        let db_err = e.as_db_error().unwrap_or_else(|| panic!("{what}: {e}"));
        assert_eq!(db_err.code(), &postgres::error::SqlState::INSUFFICIENT_PRIVILEGE, "{what}");
        assert!(db_err.message().contains(says), "{what}: {}", db_err.message());
    };
    rls(
        c.execute("INSERT INTO fixity.trees (host, root, algorithm, created) VALUES ('hostB', '\\x2f78', 'blake3', 0)", &[]),
        "a tree of host B",
        "row-level security",
    );
    rls(
        c.execute(
            "INSERT INTO fixity.files (tree, path, size, mtime_ns, digest, first_seen, last_verified, last_checked, last_result)
             VALUES ($1, 'x', 0, 0, '\\x00', 0, 0, 0, 'ok')",
            &[&b_id],
        ),
        "a file in B's tree",
        "row-level security",
    );
    rls(
        c.execute("UPDATE fixity.trees SET host = 'hostB' WHERE host = 'hostA'", &[]),
        "A's tree given to B",
        "row-level security",
    );
    rls(
        c.execute("INSERT INTO fixity.host_roles (role, host) VALUES (current_user, 'hostB')", &[]),
        "A mapping itself to B",
        "permission denied",
    );
    rls(
        c.execute("UPDATE fixity.meta SET value = '0'", &[]),
        "the schema's version",
        "permission denied",
    );
    drop(c);

    // B's records are as they were, and B still reads and writes them.
    assert_eq!(snapshot(&db, "hostB"), before);
    let out = as_role(
        &db,
        b,
        "hostB",
        d.path(),
        &["forget", "--catalog", "CATALOG", "--tree", "tb", "tb/d/f4"],
    );
    ok(&out, "B forgets its own missing file");

    // The monitor sees the whole fleet and writes nothing.
    let m = roles.monitor.as_str();
    let fleet = ok(
        &as_role(&db, m, "monitor", d.path(), &["status", "--catalog", "CATALOG"]),
        "monitor's fleet",
    );
    assert!(fleet.contains("host hostA") && fleet.contains("host hostB"), "{fleet}");
    let out = as_role(
        &db,
        m,
        "monitor",
        d.path(),
        &["status", "--json", "--catalog", "CATALOG", "--host", "hostB", "tb"],
    );
    ok(&out, "the monitor reads B's tree");
    let out = as_role(&db, m, "hostB", d.path(), &["scan", "--catalog", "CATALOG", "tb"]);
    refused(
        &out,
        "the monitor's scan",
        &[&format!("role \"{m}\" may not"), "permission denied", "monitor's role only reads"],
    );
    let out = as_role(
        &db,
        m,
        "hostA",
        d.path(),
        &["accept", "--catalog", "CATALOG", "--tree", "ta", "ta/d/f0"],
    );
    refused(&out, "the monitor's accept", &[&format!("role \"{m}\" may not"), "permission denied"]);
    let mut c = db.client_as(m, PW);
    rls(c.execute("DELETE FROM fixity.files", &[]), "the monitor deleting", "permission denied");
    let n: i64 = c.query_one("SELECT count(*) FROM fixity.files", &[]).unwrap().get(0);
    assert_eq!(n, 9, "the monitor reads every host's files (B forgot one)");
}

#[test]
fn a_host_role_cannot_make_or_migrate_the_schema_and_the_owner_migrates_with_policies() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    write(d.path(), "ta/f", b"a");
    let roles = Roles::of(&db);
    roles.apply(&db, d.path());
    // A database without the schema: a host's role may not make it.
    let Some(bare) = pg::database() else { return };
    let out = as_role(&bare, &roles.a, "hostA", d.path(), &["scan", "--catalog", "CATALOG", "ta"]);
    refused(
        &out,
        "a host making the schema",
        &[&format!("role \"{}\" may not create or migrate the catalog's schema", roles.a), "owner"],
    );
    // A schema from before the proofs (as a newer fixity finds it): the host's role is
    // refused, the owner migrates, and the table the step makes gets the policies.
    let mut c = db.client();
    c.batch_execute(
        "DROP TABLE fixity.proofs;
         CREATE INDEX files_by_verified ON fixity.files (tree, last_verified, path);
         ALTER TABLE fixity.trees DROP COLUMN pass_after;
         DROP INDEX fixity.files_by_listed; ALTER TABLE fixity.files DROP COLUMN listed_at;
         ALTER TABLE fixity.files DROP COLUMN ctime_ns, DROP COLUMN mode, DROP COLUMN uid,
             DROP COLUMN gid;
         CREATE INDEX files_by_checked ON fixity.files (tree, last_checked);
         UPDATE fixity.meta SET value = '4' WHERE key = 'schema_version'",
    )
    .unwrap();
    let out = as_role(&db, &roles.a, "hostA", d.path(), &["scan", "--catalog", "CATALOG", "ta"]);
    refused(
        &out,
        "a host migrating",
        &["may not create or migrate the catalog's schema", "permission denied"],
    );
    let out = as_role(
        &db,
        &roles.owner,
        "hostA",
        d.path(),
        &["scan", "-q", "--catalog", "CATALOG", "ta"],
    );
    ok(&out, "the owner's scan migrates");
    let policies: Vec<(String, String)> = c
        .query(
            "SELECT tablename::text, policyname::text FROM pg_policies
             WHERE schemaname = 'fixity' AND tablename = 'proofs' ORDER BY 1, 2",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let want: Vec<(String, String)> = ["proofs"]
        .iter()
        .flat_map(|t| {
            [(t.to_string(), "fixity_host".into()), (t.to_string(), "fixity_monitor".into())]
        })
        .collect();
    assert_eq!(policies, want);
    let owner: String = c
        .query_one("SELECT tableowner::text FROM pg_tables WHERE schemaname = 'fixity' AND tablename = 'proofs'", &[])
        .unwrap()
        .get(0);
    assert_eq!(owner, roles.owner);
    // And the host works on at the new version.
    let out =
        as_role(&db, &roles.a, "hostA", d.path(), &["verify", "-q", "--catalog", "CATALOG", "ta"]);
    ok(&out, "the host's verify after the owner's migration");
}

/// Every policy of schema fixity: (table, name, roles, command, using, with check).
fn policies(c: &mut postgres::Client) -> Vec<Vec<Option<String>>> {
    c.query(
        "SELECT tablename::text, policyname::text, roles::text, cmd, qual, with_check
         FROM pg_policies WHERE schemaname = 'fixity' ORDER BY tablename, policyname",
        &[],
    )
    .unwrap()
    .iter()
    .map(|r| (0..6).map(|i| r.get(i)).collect())
    .collect()
}

#[test]
fn the_printed_sql_is_what_apply_runs_and_can_be_run_again() {
    let Some(applied) = pg::database() else { return };
    let Some(printed) = pg::database() else { return };
    let d = tempdir();
    let roles = Roles::of(&applied);
    roles.apply(&applied, d.path());
    // The same roles (they exist now), printed and run through a client, twice.
    let out = fixity(d.path()).args(roles.args()).output().unwrap();
    let sql = ok(&out, "init-roles printing");
    assert!(sql.contains("CREATE POLICY fixity_host ON fixity.trees"), "{sql}");
    let mut c = printed.client();
    {
        let _one_at_a_time = CLUSTER_ROLES.lock().unwrap_or_else(|e| e.into_inner());
        c.batch_execute(&sql).expect("the printed SQL runs");
        c.batch_execute(&sql).expect("the printed SQL runs again");
    }
    let want = policies(&mut applied.client());
    let tables: Vec<&str> = want.iter().map(|p| p[0].as_deref().unwrap()).collect();
    assert_eq!(
        tables,
        [
            "digests",
            "digests",
            "files",
            "files",
            "proofs",
            "proofs",
            "remote_checks",
            "remote_checks",
            "runs",
            "runs",
            "trees",
            "trees"
        ]
    );
    assert_eq!(policies(&mut c), want);
    let rls: Vec<(String, bool)> = c
        .query(
            "SELECT c.relname::text, c.relrowsecurity FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'fixity' AND c.relkind = 'r' ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let on = |t: &str| rls.iter().find(|(n, _)| n == t).unwrap().1;
    assert!(
        ["trees", "files", "runs", "digests", "remote_checks", "proofs"].iter().all(|t| on(t)),
        "{rls:?}"
    );
    assert!(!on("meta") && !on("host_roles"), "{rls:?}");
    // A host added later: the mapping grows, nothing else changes.
    let mut args = roles.args();
    args.extend([
        "--host".into(),
        format!("{}=hostC", roles.a),
        "--apply".into(),
        "--catalog".into(),
        applied.url.clone(),
    ]);
    {
        let _one_at_a_time = CLUSTER_ROLES.lock().unwrap_or_else(|e| e.into_inner());
        ok(&fixity(d.path()).args(&args).output().unwrap(), "init-roles with one more host");
    }
    let mut a = applied.client();
    let map: Vec<(String, String)> = a
        .query("SELECT role::text, host FROM fixity.host_roles ORDER BY host", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        map,
        [
            (roles.a.clone(), "hostA".into()),
            (roles.b.clone(), "hostB".into()),
            (roles.a.clone(), "hostC".into())
        ]
    );
    assert_eq!(policies(&mut a), want);
    // A login role that is a superuser is refused: row-level security would not bind it.
    a.batch_execute(&format!("ALTER ROLE \"{}\" SUPERUSER", roles.monitor)).unwrap();
    let _one_at_a_time = CLUSTER_ROLES.lock().unwrap_or_else(|e| e.into_inner());
    let out = fixity(d.path()).args(&args).output().unwrap();
    refused(
        &out,
        "a superuser as monitor",
        &[&format!("role {} is a superuser or has BYPASSRLS", roles.monitor)],
    );
    a.batch_execute(&format!("ALTER ROLE \"{}\" NOSUPERUSER", roles.monitor)).unwrap();
}

/// `fixity serve` with the roles of init-roles: as the monitor it shows every host's
/// trees (and, read-only, offers no action; the database would refuse one anyway); as a
/// host's role it acts on that host's tree, the run recorded as the user's.
#[test]
fn fixity_serve_views_the_fleet_as_the_monitor_and_acts_as_the_host() {
    use crate::util::serve::Server;
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    let roles = Roles::of(&db);
    roles.apply(&db, d.path());
    for f in 0..3 {
        write(d.path(), format!("ta/f{f}"), format!("a{f}").as_bytes());
        write(d.path(), format!("tb/f{f}"), format!("b{f}").as_bytes());
    }
    for (role, host, tree) in [(roles.a.as_str(), "hostA", "ta"), (roles.b.as_str(), "hostB", "tb")]
    {
        ok(
            &as_role(&db, role, host, d.path(), &["scan", "-q", "--catalog", "CATALOG", tree]),
            "scan",
        );
    }
    let env = [("PGPASSWORD", PW), ("FIXITY_HOST", "hostA")];
    let monitor = db.url_as(&roles.monitor);
    let s = Server::start(d.path(), &["--read-only", "--catalog", &monitor], &env);
    let fleet = s.get("/api/fleet", &[]).json();
    let hosts: Vec<&str> =
        fleet["trees"].as_array().unwrap().iter().map(|t| t["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["hostA", "hostB"], "{fleet}");
    assert!(fleet["trees"].as_array().unwrap().iter().all(|t| t["trouble"].is_null()), "{fleet}");
    let tree = s.get("/api/tree/1", &[]).json();
    assert_eq!(tree["files"], 3, "{tree}");
    assert!(!s.get("/tree/0", &[]).text().contains("class=\"action\""));
    drop(s);
    // Host A's role serves A's trees only, and acts on them.
    let host = db.url_as(&roles.a);
    let s = Server::start(d.path(), &["--catalog", &host, "ta"], &env);
    let fleet = s.get("/api/fleet", &[]).json();
    assert_eq!(fleet["trees"].as_array().unwrap().len(), 1, "{fleet}");
    let token = s.get("/tree/0", &[]).csrf().expect("an action form");
    let r = s.post("/tree/0/action", &[], &[("csrf", &token), ("kind", "verify")]);
    assert_eq!(r.status, 303, "{}", r.text());
    let a = s.wait_json("/api/actions/1", &[], 60, |a| !a["finished"].is_null());
    assert_eq!(a["exit"], 0, "{a}");
    let by: String = db
        .client()
        .query_one("SELECT summary FROM fixity.runs ORDER BY id DESC LIMIT 1", &[])
        .unwrap()
        .get(0);
    assert!(by.contains("\"by\":\"fixity serve (loopback, no login)\""), "{by}");
}
