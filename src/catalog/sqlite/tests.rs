use super::*;
use crate::catalog::store::{Found, OpenOptions, Store};

fn stamp(size: u64, mtime_ns: i128) -> Stamp {
    Stamp::sized(size, mtime_ns)
}

#[test]
fn create_reopen_and_algorithm_is_fixed() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x/catalog.db");
    assert!(matches!(Catalog::open(&p, false, None), Err(CatalogError::NotFound(_))));
    let sha = algo::lookup("sha256");
    let c = Catalog::open(&p, true, sha).unwrap();
    assert_eq!(c.algorithm().name, "sha256");
    drop(c);
    assert_eq!(Catalog::open(&p, false, None).unwrap().algorithm().name, "sha256");
    let other = Catalog::open(&p, false, algo::lookup("md5"));
    assert!(matches!(other, Err(CatalogError::AlgorithmMismatch(_, "sha256"))));
    let c = Catalog::open(&p, false, None).unwrap();
    assert_eq!(c.integrity_check().unwrap(), "ok");
}

#[test]
fn a_new_catalog_appears_whole_and_a_foreign_file_is_refused_untouched() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("c.db");
    drop(Catalog::open(&p, true, None).unwrap());
    let names: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec!["c.db".to_string()], "no temporary file left");
    for (content, why) in [
        (&b""[..], "the file is empty"),
        (b"SQLite format", "not an SQLite database"),
        (b"hello, world, this is text\n", "not an SQLite database"),
    ] {
        let f = d.path().join("f.db");
        std::fs::write(&f, content).unwrap();
        for r in [Catalog::open(&f, true, None), Catalog::open_read_only(&f)] {
            assert!(matches!(r, Err(CatalogError::Foreign(_, w)) if w == why));
        }
        assert_eq!(std::fs::read(&f).unwrap(), content);
    }
}

#[test]
fn forget_takes_missing_files_at_or_below_a_path() {
    let d = tempfile::tempdir().unwrap();
    let c = Catalog::open(&d.path().join("c.db"), true, None).unwrap();
    let mut w = c.writer();
    for p in [&b"a"[..], b"a/x", b"a/y/z", b"a.txt", b"a0", b"b"] {
        w.insert(p, stamp(1, 1), None, b"d", 10).unwrap();
    }
    for p in [&b"a/x"[..], b"a/y/z", b"a.txt", b"a0"] {
        w.missing(p, 20).unwrap();
    }
    w.commit().unwrap();
    assert_eq!(c.count_under(b"a").unwrap(), (1, 2), "a itself, a/x and a/y/z");
    assert_eq!(c.count_under(b"").unwrap(), (2, 4));
    let mut w = c.writer();
    assert_eq!(w.forget_missing(b"a").unwrap(), 2);
    assert_eq!(w.forget_missing(b"b").unwrap(), 0, "present files stay");
    w.commit().unwrap();
    let left: Vec<_> = c.missing().unwrap().into_iter().map(|r| r.path).collect();
    assert_eq!(left, vec![b"a.txt".to_vec(), b"a0".to_vec()]);
    let mut w = c.writer();
    assert_eq!(w.forget_missing(b"").unwrap(), 2);
    w.commit().unwrap();
    assert_eq!(c.count_under(b"").unwrap(), (2, 0));
}

#[test]
fn newer_schema_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("c.db");
    drop(Catalog::open(&p, true, None).unwrap());
    let conn = Connection::open(&p).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    assert!(matches!(Catalog::open(&p, false, None), Err(CatalogError::TooNew(_, 99, _))));
}

#[test]
fn rows_stream_in_byte_order_stale_ones_too() {
    let d = tempfile::tempdir().unwrap();
    let c = Catalog::open(&d.path().join("c.db"), true, None).unwrap();
    let mut w = c.writer();
    // Byte order: "a.txt" < "a/b" ('.' < '/'), and non-UTF-8 bytes sort last.
    for (i, name) in [&b"a/b"[..], b"a.txt", b"\xff\xfe", b"B"].iter().enumerate() {
        w.insert(name, stamp(i as u64, 5), None, &[i as u8; 4], 1000 + i as i64).unwrap();
    }
    w.commit().unwrap();
    let r = c.reader().unwrap();
    let all: Vec<_> = r.by_path(None, false, 100).unwrap().into_iter().map(|r| r.path).collect();
    assert_eq!(all, vec![b"B".to_vec(), b"a.txt".to_vec(), b"a/b".to_vec(), b"\xff\xfe".to_vec()]);
    let page: Vec<_> =
        r.by_path(Some(b"a.txt"), false, 1).unwrap().into_iter().map(|r| r.path).collect();
    assert_eq!(page, vec![b"a/b".to_vec()]);
    // Stale rows: in path order; rows checked in this run are left out; from a cursor to
    // the end, or from the start to a cursor.
    let mut w = c.writer();
    w.checked(b"a/b", Class::Ok, 5000, (None, None)).unwrap();
    w.commit().unwrap();
    let stale = |after: Option<&[u8]>, upto: Option<&[u8]>| -> Vec<Vec<u8>> {
        r.stale(5000, (after, upto), 100).unwrap().into_iter().map(|r| r.path).collect()
    };
    assert_eq!(stale(None, None), [b"B".to_vec(), b"a.txt".to_vec(), b"\xff\xfe".to_vec()]);
    assert_eq!(stale(Some(b"a.txt"), None), [b"\xff\xfe".to_vec()]);
    assert_eq!(stale(None, Some(b"a.txt")), [b"B".to_vec(), b"a.txt".to_vec()]);
    assert_eq!(stale(Some(b"B"), Some(b"a/b")), [b"a.txt".to_vec()]);
}

#[test]
fn corrupt_keeps_the_digest_and_the_last_verified_time() {
    let d = tempfile::tempdir().unwrap();
    let c = Catalog::open(&d.path().join("c.db"), true, None).unwrap();
    let mut w = c.writer();
    w.insert(b"f", stamp(3, 7), Some((1, 2)), b"good", 100).unwrap();
    w.checked(b"f", Class::Corrupt, 200, (Some("x"), None)).unwrap();
    w.commit().unwrap();
    let row = c.get(b"f").unwrap().unwrap();
    assert_eq!(row.digest, b"good");
    assert_eq!((row.last_verified, row.last_checked, row.last_result), (100, 200, Class::Corrupt));
}

#[test]
fn a_move_keeps_first_seen_and_forgets_the_old_path() {
    let d = tempfile::tempdir().unwrap();
    let c = Catalog::open(&d.path().join("c.db"), true, None).unwrap();
    let mut w = c.writer();
    w.insert(b"old", stamp(3, 7), None, b"dig", 100).unwrap();
    w.missing(b"old", 500).unwrap();
    w.insert(b"new", stamp(3, 9), None, b"dig", 500).unwrap();
    w.commit().unwrap();
    assert_eq!(c.missing().unwrap().len(), 1);
    let paths = |rows: Vec<Row>| rows.into_iter().map(|r| r.path).collect::<Vec<_>>();
    assert_eq!(paths(c.move_candidates(3, b"dig", 500).unwrap()), vec![b"new".to_vec()]);
    assert!(c.move_candidates(3, b"dig", 501).unwrap().is_empty());
    let mut w = c.writer();
    w.moved(b"old", b"new", 1).unwrap();
    w.commit().unwrap();
    assert!(c.get(b"old").unwrap().is_none());
    let row = c.get(b"new").unwrap().unwrap();
    assert_eq!((row.first_seen, row.last_result), (100, Class::Moved));
}

#[test]
fn summary_counts_present_missing_and_problems() {
    let d = tempfile::tempdir().unwrap();
    let c = Catalog::open(&d.path().join("c.db"), true, None).unwrap();
    let now = 100 * 86_400_000;
    let mut w = c.writer();
    w.insert(b"a", stamp(10, 1), None, b"1", now - 2 * 86_400_000).unwrap();
    w.insert(b"b", stamp(20, 1), None, b"2", now - 10).unwrap();
    w.insert(b"c", stamp(30, 1), None, b"3", now - 10).unwrap();
    w.checked(b"b", Class::Corrupt, now, (None, None)).unwrap();
    w.missing(b"c", now).unwrap();
    w.commit().unwrap();
    let s = c.summary(now).unwrap();
    assert_eq!((s.files, s.bytes, s.missing), (2, 30, 1));
    assert_eq!(s.oldest_verified, Some((b"a".to_vec(), now - 2 * 86_400_000)));
    assert_eq!(s.verified_within, [(1, 1), (7, 2), (30, 2)]);
    assert_eq!(
        s.problems,
        vec![(b"b".to_vec(), "corrupt".to_string()), (b"c".to_vec(), "missing".to_string())]
    );
}

#[test]
fn a_finding_keeps_when_it_was_first_found_until_it_is_resolved() {
    let d = tempfile::tempdir().unwrap();
    let c = Catalog::open(&d.path().join("c.db"), true, None).unwrap();
    let history = |c: &Catalog| {
        let all = c.reader().unwrap().history(None, 10, false, true).unwrap();
        let h = all.into_iter().next().unwrap();
        (h.last_result, h.finding_since, h.found_digest.map(|d| d.to_hex()), h.last_checked)
    };
    let mut w = c.writer();
    w.insert(b"f", stamp(1, 1), None, b"\x01", 10).unwrap();
    w.checked(b"f", Class::Corrupt, 20, (Some("x"), Some(b"\x02"))).unwrap();
    w.commit().unwrap();
    assert_eq!(history(&c), (Class::Corrupt, Some(20), Some("02".into()), 20));
    let mut w = c.writer();
    w.checked(b"f", Class::Corrupt, 30, (Some("x"), Some(b"\x03"))).unwrap();
    w.commit().unwrap();
    assert_eq!(history(&c), (Class::Corrupt, Some(20), Some("03".into()), 30), "kept");
    let mut w = c.writer();
    w.checked(b"f", Class::Unreadable, 40, (Some("EIO"), None)).unwrap();
    w.commit().unwrap();
    assert_eq!(history(&c), (Class::Unreadable, Some(40), None, 40), "another finding");
    let mut w = c.writer();
    w.checked(b"f", Class::Ok, 50, (None, None)).unwrap();
    w.commit().unwrap();
    assert_eq!(history(&c), (Class::Ok, None, None, 50), "resolved");
    let standing = c.reader().unwrap().history(None, 10, true, true).unwrap();
    assert!(standing.is_empty());
    let mut w = c.writer();
    w.missing(b"f", 60).unwrap();
    w.commit().unwrap();
    let standing = c.reader().unwrap().history(None, 10, true, false).unwrap();
    assert_eq!(standing[0].missing_since, Some(60));
    assert_eq!(standing[0].finding_since, None, "schema 1: not read");
}

#[test]
fn a_schema_1_catalog_is_read_as_it_is_and_migrated_when_opened_to_write() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("old.db");
    {
        // A catalog as fixity made it before imports (schema 1), with one file.
        let conn = Connection::open(&p).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute_batch(
            "INSERT INTO meta (key, value) VALUES ('algorithm', 'sha256');
             INSERT INTO files (path, size, mtime_ns, digest, first_seen, last_verified,
                 last_checked, last_result) VALUES (x'61', 1, 2, x'00', 3, 3, 3, 'ok');",
        )
        .unwrap();
    }
    let ro = Catalog::open_read_only(&p).unwrap();
    assert_eq!(ro.summary(10).unwrap().imported, 0);
    assert_eq!(ro.reader().unwrap().by_path(None, false, 10).unwrap()[0].imported, None);
    drop(ro);
    let version = |p: &Path| -> i64 {
        Connection::open(p).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(version(&p), 1, "reading changes nothing");
    let c = Catalog::open(&p, false, None).unwrap();
    assert_eq!(version(&p), MIGRATIONS.len() as i64);
    let mut w = c.writer();
    w.imported(b"b", stamp(1, 2), None, &[1; 32], "chkbit", 5).unwrap();
    w.commit().unwrap();
    assert_eq!(c.get(b"b").unwrap().unwrap().imported.as_deref(), Some("chkbit"));
    assert_eq!(c.summary(10).unwrap().imported, 1);
    // A check that found the content as recorded clears the mark; one that did not keeps it.
    let mut w = c.writer();
    w.checked(b"b", Class::Corrupt, 6, (None, None)).unwrap();
    w.commit().unwrap();
    assert!(c.get(b"b").unwrap().unwrap().imported.is_some());
    let mut w = c.writer();
    w.checked(b"b", Class::Ok, 7, (None, None)).unwrap();
    w.commit().unwrap();
    assert_eq!(c.get(b"b").unwrap().unwrap().imported, None);
}

#[test]
fn each_finished_run_appends_an_entry_over_what_it_left() {
    use crate::catalog::store::{Found, OpenOptions, Store};
    use crate::proof::{Chain, Identity, Link};
    let d = tempfile::tempdir().unwrap();
    let how = OpenOptions { create: true, ..OpenOptions::default() };
    let mut store = SqliteStore::open(&d.path().join("c.db"), &how).unwrap();
    assert_eq!(store.last_proof().unwrap(), None);
    let digest = crate::digest::Digest::new(&[5; 32]);
    let found = |size| Found { digest, stamp: stamp(size, 7), file_id: None, access: None };
    // Two runs; the second's writes are still in the open batch when it finishes.
    let mut entries = Vec::new();
    for (run, size) in [(1_000, 3), (2_000, 4)] {
        store.start_run("scan", run).unwrap();
        store.record_new(format!("f{size}").as_bytes(), &found(size), run).unwrap();
        assert!(store.uncommitted());
        store.finish_run(true, "{}").unwrap();
        let last = store.last_proof().unwrap().expect("an entry");
        // The root is of every record the run left, read as any store's records are.
        let root = crate::catalog::state_root(&store, |_| {}).unwrap();
        assert_eq!((last.root, last.files), root);
        entries.push(last);
    }
    assert_eq!((entries[0].seq, entries[1].seq), (1, 2));
    assert_eq!(entries[1].prev, entries[0].head);
    let links: Vec<Link> = store.proof_page(0, 10).unwrap();
    assert_eq!(links.len(), 2);
    assert!(links.iter().all(|l| l.run_kept));
    let (id, mut breaks) = (Identity::default(), Vec::new());
    let mut chain = Chain::new(&id, None, &mut breaks);
    links.iter().for_each(|l| chain.feed(l, &mut breaks));
    chain.finish(&mut breaks);
    assert_eq!(breaks, vec![], "the chain is whole");
    assert_eq!(store.proof_page(1, 10).unwrap()[0].entry, entries[1]);
}

/// SQLite's plan of `sql` with the parameters `n` of them (`EXPLAIN QUERY PLAN`'s details).
fn plan(c: &Catalog, sql: &str, p: impl rusqlite::Params) -> String {
    let mut st = c.conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let rows = st.query_map(p, |r| r.get::<_, String>(3)).unwrap();
    rows.map(|r| r.unwrap()).collect::<Vec<_>>().join("; ")
}

#[test]
fn paged_reads_search_from_where_the_last_page_ended() {
    // A page that scanned the table from its start made every paged read of a million
    // rows quadratic: each condition with a path to start from must search the key.
    let d = tempfile::tempdir().unwrap();
    let c = Catalog::open(&d.path().join("c.db"), true, None).unwrap();
    let after = Some(&b"a/b"[..]);
    for from in [reader::after_clause(after), "path >= ?1"] {
        let sql = format!("SELECT path FROM files WHERE {from} ORDER BY path LIMIT ?2");
        let p = plan(&c, &sql, params![after, 10]);
        assert!(p.contains("SEARCH files USING PRIMARY KEY (path>?)"), "{sql}: {p}");
    }
    // A run's findings are found by the time of the check, in an index ok rows stay out of.
    let sql = "SELECT path FROM files WHERE last_checked = ?1 AND last_result NOT IN ('ok', 'new')";
    let p = plan(&c, sql, params![5]);
    assert!(p.contains("INDEX files_by_checked (last_checked=?)"), "{p}");
    let (lo, hi) = below(b"a");
    let sql = format!("SELECT count(*) FROM files WHERE {}", reader::under_clause(b"a"));
    let p = plan(&c, &sql, params![lo, &b"a"[..], hi]);
    assert!(!p.contains("SCAN"), "{p}");
    // And they read what they should, at both ends.
    let mut w = c.writer();
    for name in [&b"a"[..], b"a/b", b"a/c", b"a0", b"b"] {
        w.insert(name, stamp(1, 1), None, b"d", 10).unwrap();
    }
    w.missing(b"a/c", 20).unwrap();
    w.commit().unwrap();
    assert_eq!(c.count_under(b"a").unwrap(), (2, 1));
    assert_eq!(c.count_under(b"").unwrap(), (4, 1));
    let r = c.reader().unwrap();
    let paths = |rows: Vec<Row>| rows.into_iter().map(|r| r.path).collect::<Vec<_>>();
    assert_eq!(paths(r.by_path(Some(b"a/b"), true, 2).unwrap()), [&b"a/b"[..], b"a/c"]);
    assert_eq!(paths(r.by_path(Some(b"a/c"), false, 9).unwrap()), [&b"a0"[..], b"b"]);
    assert_eq!(paths(r.missing(None, 9).unwrap()), [&b"a/c"[..]]);
    assert!(r.missing(Some(b"a/c"), 9).unwrap().is_empty());
    // A pass reads the rows not looked at since it began in the table's own order,
    // searching the key from the last page's end (and to a slice's cursor).
    for upto in [None, Some(&b"a0"[..])] {
        let sql = format!(
            "SELECT path FROM files WHERE {} AND {} AND missing_since IS NULL
             AND last_checked < ?2 ORDER BY path LIMIT ?3",
            reader::after_clause(after),
            if upto.is_some() { "path <= ?4" } else { "?4 IS NULL" }
        );
        let p = plan(&c, &sql, params![after, 25, 10, upto]);
        let key = if upto.is_some() { "(path>? AND path<?)" } else { "(path>?)" };
        assert!(p.contains(&format!("SEARCH files USING PRIMARY KEY {key}")), "{p}");
    }
    let mut w = c.writer();
    w.checked(b"a0", Class::Ok, 30, (None, None)).unwrap();
    w.commit().unwrap();
    assert_eq!(paths(r.stale(25, (None, None), 9).unwrap()), [&b"a"[..], b"a/b", b"b"]);
    assert_eq!(paths(r.stale(25, (Some(b"a/b"), None), 1).unwrap()), [&b"b"[..]]);
    assert_eq!(paths(r.stale(25, (None, Some(b"a/b")), 9).unwrap()), [&b"a"[..], b"a/b"]);
    let mut w = c.writer();
    assert_eq!(w.forget_missing(b"a").unwrap(), 1);
    w.commit().unwrap();
}

fn has_digest_index(c: &Catalog) -> bool {
    bulk::has_digest_index(&c.conn).unwrap()
}

#[test]
fn many_inserts_leave_the_digest_index_out_until_a_digest_is_looked_up() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("c.db");
    let c = Catalog::open(&p, true, None).unwrap();
    let mut w = c.writer();
    let name = |i: u32| format!("d/{i:05}").into_bytes();
    for i in 0..bulk::FIRST_LOOK as u32 - 1 {
        w.insert(&name(i), stamp(1, 1), None, &i.to_le_bytes(), 10).unwrap();
    }
    assert!(!c.digest_index_out() && has_digest_index(&c), "few inserts keep it");
    w.insert(&name(99_999), stamp(1, 1), None, &[7; 4], 10).unwrap();
    assert!(c.digest_index_out() && !has_digest_index(&c), "a first load drops it");
    // A look-up by digest makes it again first, and finds what was loaded.
    let found = c.move_candidates(1, &[7; 4], 10).unwrap();
    assert_eq!(found.iter().map(|r| r.path.clone()).collect::<Vec<_>>(), [name(99_999)]);
    assert!(!c.digest_index_out() && has_digest_index(&c));
    drop(w);

    // A run that ends with the index out leaves it out (no sort at its end); reopened,
    // the catalog knows it is out, and makes it for the first look-up by digest.
    let mut w = c.writer();
    for i in 0..bulk::FIRST_LOOK as u32 {
        w.insert(&name(200_000 + i), stamp(1, 1), None, &[8; 4], 20).unwrap();
    }
    assert!(c.digest_index_out());
    w.commit().unwrap();
    drop(w);
    drop(c);
    let c = Catalog::open(&p, false, None).unwrap();
    assert!(c.digest_index_out() && !has_digest_index(&c));
    assert_eq!(c.integrity_check().unwrap(), "ok");
    assert_eq!(c.move_candidates(1, &[8; 4], 20).unwrap().len(), bulk::FIRST_LOOK as usize);
    assert!(!c.digest_index_out() && has_digest_index(&c));

    // A run adding a few rows to a large catalog keeps the index: they are no share of it.
    let mut w = c.writer();
    for i in 0..8 * bulk::FIRST_LOOK as u32 {
        w.insert(&name(300_000 + i), stamp(1, 1), None, &[9; 4], 30).unwrap();
    }
    c.digest_index().unwrap();
    assert!(has_digest_index(&c));
    let mut w = c.writer();
    for i in 0..bulk::FIRST_LOOK as u32 {
        w.insert(&name(400_000 + i), stamp(1, 1), None, &[9; 4], 40).unwrap();
    }
    w.commit().unwrap();
    assert!(!c.digest_index_out() && has_digest_index(&c));
}

/// A new catalog at `p` in batches of `limit` writes, a scan begun (at 1000), and the
/// content of a file of `size` bytes it records.
fn batched(p: &Path, limit: usize) -> (SqliteStore, impl Fn(u64) -> Found) {
    let how = OpenOptions { create: true, ..OpenOptions::default() };
    let mut store = SqliteStore::open(p, &how).unwrap();
    store.set_batch_limit(limit);
    store.start_run("scan", 1_000).unwrap();
    let digest = crate::digest::Digest::new(&[5; 32]);
    (store, move |size| Found { digest, stamp: stamp(size, 7), file_id: None, access: None })
}

#[test]
fn batches_are_committed_beside_the_run_and_a_read_sees_every_write() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("c.db");
    let (mut store, found) = batched(&p, 3);
    // Batch 1 (three writes) goes to the committer; the fourth write opens batch 2.
    for i in 0..4u64 {
        store.record_new(format!("f{i}").as_bytes(), &found(i), 1_000).unwrap();
    }
    assert_eq!(store.last_batch(), 2);
    assert!(store.uncommitted());
    assert!(store.committed_below() <= 2, "batch 2 is open");
    // A read on the store waits for batch 1 and sees the held write too.
    assert_eq!(store.lookup(b"f3").unwrap().map(|r| r.size), Some(Some(3)));
    assert_eq!(store.committed_below(), 2, "batch 1 is committed");
    // Another connection sees batch 1, not the open one.
    let other = Catalog::open_read_only(&p).unwrap();
    assert!(other.get(b"f2").unwrap().is_some());
    assert!(other.get(b"f3").unwrap().is_none());
    store.commit().unwrap();
    assert!(!store.uncommitted());
    assert!(store.committed_below() > store.last_batch());
    assert!(other.get(b"f3").unwrap().is_some());
    // Dropping the store with a batch on its way waits for it: the catalog is closed
    // and whole before the run lock goes.
    for i in 4..7u64 {
        store.record_new(format!("f{i}").as_bytes(), &found(i), 1_000).unwrap();
    }
    drop(store);
    let c = Catalog::open(&p, false, None).unwrap();
    assert!(c.get(b"f6").unwrap().is_some(), "the batch on its way was committed");
    assert_eq!(c.integrity_check().unwrap(), "ok");
}

#[test]
fn a_batch_failing_on_its_way_is_told_at_the_next_write_and_rolled_back_whole() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("c.db");
    let (mut store, found) = batched(&p, 2);
    let found = found(1);
    store.record_new(b"a", &found, 1_000).unwrap();
    store.commit().unwrap();
    // A batch whose second write fails (an import of a path already recorded).
    store.record_new(b"b", &found, 1_000).unwrap();
    let n = store.last_batch();
    store.record_imported(b"a", &found, "sha256sum", 1_000).unwrap();
    assert!(store.committed_below() <= n, "on its way: not committed");
    // Told at the next use, once.
    let next = store.record_new(b"c", &found, 1_000);
    let next = match next {
        Err(e) => e,
        Ok(()) => store.commit().expect_err("the batch failed"),
    };
    assert!(next.to_string().contains("UNIQUE"), "{next}");
    assert!(store.committed_below() <= n, "the failed batch never counts as committed");
    store.abandon();
    drop(store);
    let c = Catalog::open(&p, false, None).unwrap();
    assert!(c.get(b"a").unwrap().is_some());
    assert!(c.get(b"b").unwrap().is_none(), "the failed batch is rolled back whole");
}

#[test]
fn a_runs_findings_leave_new_files_out_unless_asked() {
    let d = tempfile::tempdir().unwrap();
    let c = Catalog::open(&d.path().join("c.db"), true, None).unwrap();
    let mut w = c.writer();
    for name in [&b"a"[..], b"b", b"c"] {
        w.insert(name, stamp(1, 1), None, b"d", 10).unwrap();
    }
    w.checked(b"b", Class::Corrupt, 10, (Some("rot"), Some(b"e"))).unwrap();
    w.commit().unwrap();
    let listed = |new: bool| {
        let mut got = Vec::new();
        c.report(10, new, &mut |p, class, _, _| got.push((p.to_vec(), class))).unwrap();
        got
    };
    assert_eq!(listed(false), [(b"b".to_vec(), Class::Corrupt)]);
    assert_eq!(
        listed(true),
        [(b"a".to_vec(), Class::New), (b"b".to_vec(), Class::Corrupt), (b"c".to_vec(), Class::New)]
    );
    // Without the new files, the index (new rows make no entry in it: one here); with
    // them, the table in its order (no sort).
    let sql = "SELECT path, note FROM files WHERE last_checked = ?1
               AND last_result NOT IN ('ok', 'new') ORDER BY path";
    let p = plan(&c, sql, params![10]);
    assert!(p.contains("INDEX files_by_checked (last_checked=?)"), "{p}");
    let sql = "SELECT path, note FROM files WHERE last_checked = ?1 AND last_result != 'ok'
               ORDER BY path";
    let p = plan(&c, sql, params![10]);
    assert!(p.contains("SCAN files") && !p.contains("TEMP B-TREE"), "{p}");
    let def: String = c
        .conn
        .query_row("SELECT sql FROM sqlite_schema WHERE name = 'files_by_checked'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(def.ends_with("WHERE last_result NOT IN ('ok', 'new')"), "{def}");
}

#[test]
fn the_root_of_a_large_catalog_read_by_two_connections_is_the_root_of_its_records() {
    use crate::catalog::store::{Found, OpenOptions, Store};
    // Chunks are 3 rows in tests: 7 rows and more are read by two connections, in
    // chunks that end before, at and after the end of the table.
    for rows in [6, 7, 9, 12, 13, 20] {
        let d = tempfile::tempdir().unwrap();
        let how = OpenOptions { create: true, ..OpenOptions::default() };
        let mut store = SqliteStore::open(&d.path().join("c.db"), &how).unwrap();
        store.start_run("scan", 1_000).unwrap();
        for i in 0..rows {
            let digest = crate::digest::Digest::new(&[i as u8; 32]);
            let found = Found { digest, stamp: stamp(i, 7), file_id: None, access: None };
            store.record_new(format!("f{i:02}").as_bytes(), &found, 1_000).unwrap();
        }
        store.record_missing(b"f01", 1_000).unwrap();
        store.finish_run(true, "{}").unwrap();
        let last = store.last_proof().unwrap().expect("an entry");
        let root = crate::catalog::state_root(&store, |_| {}).unwrap();
        assert_eq!((last.root, last.files), root, "{rows} rows");
        assert_eq!(last.files, rows);
    }
}

#[test]
fn standing_findings_page_through_the_index_of_rows_not_ok() {
    // Every class a row can have; the standing ones (corrupt, unreadable, changed, missing)
    // come back in path order, page after page, and the query reads the partial index of
    // the rows that are neither ok nor new instead of the whole table.
    let d = tempfile::tempdir().unwrap();
    let c = Catalog::open(&d.path().join("c.db"), true, None).unwrap();
    let mut w = c.writer();
    let classes = [
        (&b"a"[..], Some(Class::Ok)),
        (b"b", Some(Class::Corrupt)),
        (b"c", None),
        (b"d", Some(Class::Modified)),
        (b"e", Some(Class::Unreadable)),
        (b"f", Some(Class::Changed)),
        (b"g", Some(Class::New)),
        (b"h", None),
        (b"i", Some(Class::Moved)),
        (b"j\xff", Some(Class::Corrupt)),
    ];
    for (name, class) in classes {
        w.insert(name, stamp(1, 1), None, b"d", 10).unwrap();
        match class {
            Some(class) => w.checked(name, class, 20, (None, None)).unwrap(),
            None => w.missing(name, 20).unwrap(),
        }
    }
    w.commit().unwrap();
    let r = c.reader().unwrap();
    let standing: Vec<Vec<u8>> = classes
        .iter()
        .filter(|(_, c)| {
            c.is_none_or(|c| matches!(c, Class::Corrupt | Class::Unreadable | Class::Changed))
        })
        .map(|(n, _)| n.to_vec())
        .collect();
    let mut got = Vec::new();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page = r.history(after.as_deref(), 2, true, true).unwrap();
        let Some(last) = page.last() else { break };
        after = Some(last.path.clone());
        got.extend(page.into_iter().map(|h| h.path));
    }
    assert_eq!(got, standing);
    let all = r.history(None, 100, false, true).unwrap();
    assert_eq!(all.len(), classes.len(), "without `standing`, every row");
    let sql = "SELECT path FROM files WHERE +path > ?1 AND last_result NOT IN ('ok', 'new')
               AND (missing_since IS NOT NULL OR last_result IN ('corrupt', 'unreadable', 'changed'))
               ORDER BY +path LIMIT ?2";
    let p = plan(&c, sql, params![&b"a"[..], 10]);
    assert!(p.contains("USING INDEX files_by_checked"), "{p}");
}

#[test]
fn record_pages_give_every_record_once_in_path_order_in_growing_pages() {
    for n in [0usize, 1, 2047, 2048, 2049, 6144, 6145] {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.db");
        let (mut store, found) = batched(&p, 100_000);
        let names: Vec<Vec<u8>> = (0..n).map(|i| format!("f{i:05}").into_bytes()).collect();
        for name in &names {
            store.record_new(name, &found(1), 1_000).unwrap();
        }
        store.commit().unwrap();
        let mut pages = crate::catalog::RecordPages::after(None);
        let (mut got, mut sizes) = (Vec::new(), Vec::new());
        while let Some(page) = pages.next(&store).unwrap() {
            sizes.push(page.len());
            got.extend(page.into_iter().map(|r| r.path));
        }
        assert_eq!(got, names, "{n} records");
        // Pages of 2048, 4096, 8192 ... rows: the last shorter (or empty, not seen).
        let full: Vec<usize> = [2048, 4096, 8192].into_iter().take(sizes.len()).collect();
        let (last, whole) = sizes.split_last().map_or((0, &[][..]), |(l, w)| (*l, w));
        assert_eq!(whole, &full[..whole.len()], "{n} records: {sizes:?}");
        assert!(n == 0 || last > 0 && last <= full[whole.len()], "{n}: {sizes:?}");
        // After a path: the records after it only.
        if n > 2 {
            let mut pages = crate::catalog::RecordPages::after(Some(names[1].clone()));
            let first = pages.next(&store).unwrap().unwrap();
            assert_eq!(first[0].path, names[2], "{n} records");
        }
    }
}
