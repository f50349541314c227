use super::*;

#[test]
fn exclusion_applies_to_every_directory_above() {
    let ex = Exclude::new(&["*.tmp".into(), ".git".into(), "build/out".into()]).unwrap();
    assert!(excluded(&ex, b"a/b/c.tmp"));
    assert!(excluded(&ex, b"x/.git/config"));
    assert!(excluded(&ex, b".git"));
    assert!(excluded(&ex, b"build/out/a.o"));
    assert!(!excluded(&ex, b"a/b/c.txt"));
    assert!(!excluded(&ex, b"src/build/out"));
    assert!(!excluded(&Exclude::default(), b"a.tmp"));
}

// ---------------------------------------------------------------------------------------
// The engine over a store of a third kind: records in memory. It remembers gone files and
// re-reads in walk order, and lists no findings (the engine hands them over).

use crate::algo::Algorithm;
use crate::catalog::{
    Found, Pages, Pass, PassOrder, Record, Records, ReportFn, Store, StoreError, Summary,
};
use crate::digest::Digest;
use std::collections::BTreeMap;

struct MemStore {
    algo: &'static Algorithm,
    records: BTreeMap<Vec<u8>, Record>,
    cursor: Option<Vec<u8>>,
    /// (the batch the last write went into, the first batch not committed), for a store
    /// that commits batches while the run goes on.
    batches: std::rc::Rc<std::cell::Cell<Option<(u64, u64)>>>,
}

struct MemRecords(std::collections::VecDeque<Record>);

impl MemRecords {
    fn take(&mut self, rel: &[u8]) -> Option<Record> {
        match self.0.front() {
            Some(r) if r.path == rel => self.0.pop_front(),
            _ => None,
        }
    }
}

impl Records for MemRecords {
    fn next_before(&mut self, rel: Option<&[u8]>) -> Option<Record> {
        let r = self.0.front()?;
        if rel.is_some_and(|rel| r.path.as_slice() >= rel) {
            return None;
        }
        self.0.pop_front()
    }
    fn file(&mut self, rel: &[u8], _full: &Path) -> Result<Option<Record>, String> {
        Ok(self.take(rel))
    }
    fn other(&mut self, rel: &[u8]) -> Option<Record> {
        self.take(rel)
    }
    fn error(&mut self) -> Option<StoreError> {
        None
    }
    fn none(&mut self) -> bool {
        self.0.is_empty()
    }
}

fn refused() -> StoreError {
    StoreError::Refused("not kept in memory".into())
}

impl MemStore {
    fn set(&mut self, rel: &[u8], found: &Found, class: Class, now: i64) {
        let r = Record {
            path: rel.to_vec(),
            algo: self.algo,
            digest: found.digest,
            size: Some(found.stamp.size),
            mtime_ns: found.stamp.mtime_ns,
            precision: 9,
            last_result: class,
            missing_since: None,
            last_verified: now,
            foreign: false,
            imported: false,
            ctime_ns: found.stamp.ctime_ns,
            access: found.access,
        };
        self.records.insert(rel.to_vec(), r);
    }

    fn update(&mut self, rel: &[u8], f: impl FnOnce(&mut Record)) {
        if let Some(r) = self.records.get_mut(rel) {
            f(r);
        }
    }
}

impl Store for MemStore {
    fn location(&self) -> &Path {
        Path::new("memory")
    }
    fn algorithm(&self) -> &'static Algorithm {
        self.algo
    }
    fn remembers_gone(&self) -> bool {
        true
    }
    fn lists_findings(&self) -> bool {
        false
    }
    fn pass_order(&self) -> PassOrder {
        PassOrder::Walk
    }
    fn clock(&self) -> Result<i64, StoreError> {
        Ok(1_000)
    }
    fn start_run(&mut self, _: &'static str, _: i64) -> Result<(), StoreError> {
        Ok(())
    }
    fn finish_run(&mut self, _: bool, _: &str) -> Result<(), StoreError> {
        Ok(())
    }
    fn records(&self, from: Option<&[u8]>) -> Result<Box<dyn Records>, StoreError> {
        let from = from.unwrap_or_default();
        let held = self.records.values().filter(|r| r.path.as_slice() >= from);
        Ok(Box::new(MemRecords(held.cloned().collect())))
    }
    fn lookup(&self, rel: &[u8]) -> Result<Option<Record>, StoreError> {
        Ok(self.records.get(rel).cloned())
    }
    fn record_new(&mut self, rel: &[u8], found: &Found, now: i64) -> Result<(), StoreError> {
        self.set(rel, found, Class::New, now);
        Ok(())
    }
    fn record_content(
        &mut self,
        rec: &Record,
        f: &Found,
        c: Class,
        now: i64,
    ) -> Result<(), StoreError> {
        self.set(&rec.path, f, c, now);
        Ok(())
    }
    fn record_check(
        &mut self,
        rec: &Record,
        class: Class,
        found: Option<&Found>,
        _: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        self.update(&rec.path, |r| {
            r.last_result = class;
            if class == Class::Ok {
                r.last_verified = now;
                // The content as recorded, the inode changed (a chmod): its new ctime.
                if let Some(f) = found.filter(|f| rec.inode_moved(f)) {
                    (r.ctime_ns, r.access) = (f.stamp.ctime_ns, f.access);
                }
            }
        });
        Ok(())
    }
    fn record_missing(&mut self, rel: &[u8], now: i64) -> Result<(), StoreError> {
        self.update(rel, |r| {
            r.missing_since.get_or_insert(now);
            r.last_result = Class::Missing;
        });
        Ok(())
    }
    fn record_present(&mut self, rel: &[u8]) -> Result<(), StoreError> {
        self.update(rel, |r| r.missing_since = None);
        Ok(())
    }
    fn record_moved(&mut self, from: &[u8], to: &[u8], _now: i64) -> Result<(), StoreError> {
        self.records.remove(from);
        self.update(to, |r| r.last_result = Class::Moved);
        Ok(())
    }
    fn missing_page(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<Record>, StoreError> {
        let after = |r: &&Record| after.is_none_or(|a| r.path.as_slice() > a);
        let missing = self.records.values().filter(|r| r.missing_since.is_some());
        Ok(missing.filter(after).take(limit).cloned().collect())
    }
    fn new_since_a_loss(&self) -> Result<bool, StoreError> {
        Ok(self.records.values().any(|r| r.last_result == Class::New))
    }
    fn move_candidates(&self, size: u64, d: &Digest, _: i64) -> Result<Vec<Record>, StoreError> {
        let new = self.records.values().filter(|r| r.last_result == Class::New);
        Ok(new.filter(|r| r.size == Some(size) && r.digest.ct_eq(d)).cloned().collect())
    }
    fn presence_page(
        &self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, bool)>, StoreError> {
        let after = |r: &&Record| after.is_none_or(|a| r.path.as_slice() > a);
        let rows = self.records.values().filter(after).take(limit);
        Ok(rows.map(|r| (r.path.clone(), r.missing_since.is_some())).collect())
    }
    fn pass(&self, _: bool, _: i64) -> Result<Pass, StoreError> {
        Ok(Pass { since: 0, after: self.cursor.clone() })
    }
    fn pass_begun(&mut self, _: i64) -> Result<(), StoreError> {
        Ok(())
    }
    fn stale(&self, _: i64, _: Option<&[u8]>) -> Result<Box<dyn Pages>, StoreError> {
        Err(refused())
    }
    fn stale_count(&self, _: i64) -> Result<(u64, u64), StoreError> {
        Err(refused())
    }
    fn pass_end(&mut self, resume_after: Option<&[u8]>, _: i64) -> Result<(), StoreError> {
        self.cursor = resume_after.map(<[u8]>::to_vec);
        Ok(())
    }
    fn findings(&self, _: i64, _: bool, _: &mut ReportFn<'_>) -> Result<(), StoreError> {
        Ok(())
    }
    fn summary(&self, _: i64) -> Result<Summary, StoreError> {
        Err(refused())
    }
    fn records_page(&self, _: Option<&[u8]>, _: usize) -> Result<Vec<Record>, StoreError> {
        Err(refused())
    }
    fn count_under(&self, _: &[u8]) -> Result<(u64, u64), StoreError> {
        Err(refused())
    }
    fn last_batch(&self) -> u64 {
        self.batches.get().map_or(0, |(last, _)| last)
    }
    fn committed_below(&self) -> u64 {
        self.batches.get().map_or(u64::MAX, |(_, below)| below)
    }
    fn forget_missing(&mut self, _: &[u8]) -> Result<usize, StoreError> {
        Err(refused())
    }
}

fn options(mode: Mode, max_bytes: Option<u64>) -> Options {
    let engine = crate::pipeline::Config {
        workers: 2,
        window: 8,
        read: Default::default(),
        serial_reads: false,
        storage: None,
    };
    Options {
        mode,
        follow: false,
        exclude: Exclude::default(),
        max_bytes,
        max_duration: None,
        engine,
        modify_window_ns: Some(0),
    }
}

/// Runs the engine; returns the report and the findings handed over, by path.
fn run_mem(
    root: &Path,
    store: &mut MemStore,
    mode: Mode,
    max_bytes: Option<u64>,
) -> (Report, Vec<(String, Class)>) {
    let mut found = Vec::new();
    let report = run(root, store, &options(mode, max_bytes), &mut |n| {
        if let Notice::Found(f) = n {
            found.push((String::from_utf8(f.path).unwrap(), f.class));
        }
    })
    .unwrap();
    (report, found)
}

#[cfg(unix)]
#[test]
fn the_engine_classifies_every_kind_of_change_over_any_store() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    for (name, data) in [("a", "alpha"), ("b", "bravo"), ("c", "charlie"), ("e", "echo")] {
        std::fs::write(root.join(name), data).unwrap();
    }
    let algo = crate::algo::default_algorithm();
    let mut store =
        MemStore { algo, records: BTreeMap::new(), cursor: None, batches: Default::default() };
    let (r, found) = run_mem(root, &mut store, Mode::Scan, None);
    let new = |n: &str| (n.to_string(), Class::New);
    assert_eq!(found, vec![new("a"), new("b"), new("c"), new("e")]);
    assert_eq!((r.count(Class::New), r.files_read), (4, 4));

    // b rots (its record says other content at the same size and mtime), c is edited,
    // e moves to f, d is new, and g is recorded but gone.
    store.update(b"b", |r| r.digest = algo.digest(b"BRAVO"));
    std::fs::write(root.join("c"), "charlie, edited").unwrap();
    std::fs::rename(root.join("e"), root.join("f")).unwrap();
    std::fs::write(root.join("d"), "delta").unwrap();
    let gone = Found {
        digest: algo.digest(b"golf"),
        stamp: crate::device::Stamp::sized(4, 9),
        file_id: None,
        access: None,
    };
    store.set(b"g", &gone, Class::Ok, 10);
    let (r, found) = run_mem(root, &mut store, Mode::Scan, None);
    // A scan reads no unchanged file: b's rot is not seen yet. Moves are only known
    // after the walk, so f was handed over as new and e as missing.
    let by = |n: &str, c| (n.to_string(), c);
    assert_eq!(
        found,
        vec![
            by("c", Class::Modified),
            by("d", Class::New),
            by("e", Class::Missing),
            by("f", Class::New),
            by("g", Class::Missing)
        ]
    );
    let counts: Vec<u64> = Class::ALL.iter().map(|c| r.count(*c)).collect();
    // ok a, b; modified c; missing g; new d; moved e -> f.
    assert_eq!(counts, vec![2, 1, 0, 1, 1, 1, 0, 0]);
    assert!(store.lookup(b"e").unwrap().is_none(), "a move forgets the old path");

    // verify re-reads the unchanged files: b is corrupt, and stays so in the store.
    let (r, found) = run_mem(root, &mut store, Mode::Verify, None);
    assert_eq!(found, vec![by("b", Class::Corrupt), by("g", Class::Missing)]);
    assert_eq!((r.count(Class::Ok), r.count(Class::Corrupt)), (4, 1));
    assert_eq!(store.lookup(b"b").unwrap().unwrap().last_result, Class::Corrupt);
    assert!(r.failed() && r.complete);

    // a is edited and its mtime put back (as `touch -r` does): its ctime moved, so a
    // scan reads it (not only a verify) and finds it CHANGED, not corrupt. f is made
    // private (a chmod moves the ctime, not the content): read, ok, no finding, and its
    // new ctime and mode recorded so the next scan reads it no more. b's rot moved no
    // ctime: still corrupt. (The pause: so the edit's ctime cannot fall in the timestamp
    // tick of the scan that recorded it, on a kernel with coarse timestamps.)
    std::thread::sleep(std::time::Duration::from_millis(20));
    let a = root.join("a");
    let mtime = std::fs::metadata(&a).unwrap().modified().unwrap();
    std::fs::write(&a, "ALPHA").unwrap();
    std::fs::File::options().write(true).open(&a).unwrap().set_modified(mtime).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.join("f"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let (r, found) = run_mem(root, &mut store, Mode::Scan, None);
    let changed = vec![by("a", Class::Changed), by("b", Class::Corrupt), by("g", Class::Missing)];
    assert_eq!(found, changed);
    assert_eq!((r.files_read, r.count(Class::Ok)), (3, 3), "a, b and f read; f ok");
    let f = store.lookup(b"f").unwrap().unwrap();
    assert_eq!(f.access.map(|a| a.mode), Some(0o600));
    assert_eq!(store.lookup(b"a").unwrap().unwrap().digest, algo.digest(b"alpha"));
    let (r, found) = run_mem(root, &mut store, Mode::Scan, None);
    assert_eq!(found, changed, "a finding stands");
    assert_eq!(r.files_read, 2, "a and b read again, f no more");
}

#[test]
fn a_walk_order_slice_continues_after_the_last_file_it_took() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    for name in ["a", "b", "c", "d", "e"] {
        std::fs::write(root.join(name), [b'x'; 10]).unwrap();
    }
    let algo = crate::algo::default_algorithm();
    let mut store =
        MemStore { algo, records: BTreeMap::new(), cursor: None, batches: Default::default() };
    run_mem(root, &mut store, Mode::Scan, None);
    // 15 bytes: a file is taken while the budget is not used up, so two files a slice.
    let (r, _) = run_mem(root, &mut store, Mode::Verify, Some(15));
    assert_eq!((r.files_read, r.stopped_by, r.complete), (2, Some("max-bytes"), false));
    assert_eq!(store.cursor.as_deref(), Some(&b"b"[..]));
    let (r, _) = run_mem(root, &mut store, Mode::Verify, Some(15));
    assert_eq!((r.files_read, r.stopped_by), (2, Some("max-bytes")));
    assert_eq!(store.cursor.as_deref(), Some(&b"d"[..]));
    // The pass ends with e: the cursor goes.
    let (r, _) = run_mem(root, &mut store, Mode::Verify, Some(15));
    assert_eq!((r.files_read, r.stopped_by, r.complete), (1, None, true));
    assert_eq!(r.count(Class::Ok), 1);
    assert_eq!(store.cursor, None);
}

#[test]
fn a_part_looks_at_its_list_and_owns_only_its_range_of_records() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    for name in ["a", "b", "c", "d", "e", "f"] {
        std::fs::write(root.join(name), name).unwrap();
    }
    let algo = crate::algo::default_algorithm();
    let mut store =
        MemStore { algo, records: BTreeMap::new(), cursor: None, batches: Default::default() };
    run_mem(root, &mut store, Mode::Scan, None);
    // b and e go, cc comes; c rots. The part's list names b, c, d; it owns [b, e).
    std::fs::remove_file(root.join("b")).unwrap();
    std::fs::remove_file(root.join("e")).unwrap();
    std::fs::write(root.join("cc"), "new").unwrap();
    store.update(b"c", |r| r.digest = algo.digest(b"C"));
    let listed: Vec<Result<Listed, String>> =
        ["b", "c", "d"].iter().map(|n| Ok(Listed::Path(n.as_bytes().to_vec()))).collect();
    let scope = Scope {
        bounds: Bounds { from: Some(b"b".to_vec()), until: Some(b"e".to_vec()) },
        entries: Box::new(listed.into_iter()),
        part: PartOf { plan: "p".into(), part: 1, parts: 3 },
        listed_ms: 0,
    };
    let mut found = Vec::new();
    let r = run_part(root, &mut store, &options(Mode::Verify, None), scope, &mut |n| {
        if let Notice::Found(f) = n {
            found.push((String::from_utf8(f.path).unwrap(), f.class));
        }
    })
    .unwrap();
    // e is another part's, cc is in no list: neither is seen here.
    assert_eq!(found, vec![("b".to_string(), Class::Missing), ("c".to_string(), Class::Corrupt)]);
    assert_eq!((r.files_read, r.count(Class::Ok), r.complete), (2, 1, true));
    assert_eq!(r.part.as_ref().map(|p| p.part), Some(1));
    assert!(store.lookup(b"cc").unwrap().is_none());
    assert!(store.lookup(b"e").unwrap().unwrap().missing_since.is_none());
    assert_eq!(store.cursor, None, "the tree's pass is not the part's");
    // A budget is refused: a part is verified whole.
    let scope = Scope {
        bounds: Bounds::default(),
        entries: Box::new(std::iter::empty()),
        part: PartOf::default(),
        listed_ms: 0,
    };
    let refused = run_part(root, &mut store, &options(Mode::Verify, Some(1)), scope, &mut |_| {});
    assert!(matches!(refused, Err(ScrubError::Store(_))));
}

#[test]
fn a_corrupt_note_gives_back_its_digests() {
    let note = super::corrupt_note("00ff", "abcd", false);
    assert_eq!(note, "recorded 00ff, now abcd");
    assert_eq!(super::corrupt_digests(&note), Some(("00ff", "abcd")));
    let etags = super::corrupt_note("9b2cf535f27731c974343645a3985328-2", "00ff-2", true);
    assert!(etags.ends_with("; the recorded digest was imported and never verified by fixity"));
    assert_eq!(
        super::corrupt_digests(&etags),
        Some(("9b2cf535f27731c974343645a3985328-2", "00ff-2"))
    );
    assert_eq!(super::corrupt_digests("recorded 00ff"), None);
    assert_eq!(super::corrupt_digests("recorded z z, now abcd"), None);
    assert_eq!(super::corrupt_digests("changed while read"), None);
}

#[test]
fn a_failed_store_reports_the_findings_of_every_batch_not_committed_and_no_other() {
    use super::recorder::Recorder;
    let algo = crate::algo::lookup("sha256").unwrap();
    let batches = std::rc::Rc::new(std::cell::Cell::new(None));
    let mut store = MemStore { algo, records: BTreeMap::new(), cursor: None, batches };
    let batches = store.batches.clone();
    let mut told = Vec::new();
    let mut notice = |n: Notice| {
        if let Notice::Unrecorded(f) = n {
            told.push(String::from_utf8(f.path).unwrap());
        }
    };
    let mut rec = Recorder {
        store: &mut store,
        lists: true,
        batch: Default::default(),
        failed: None,
        root: None,
    };
    let mut write = |rec: &mut Recorder<'_>, path: &str, after: (u64, u64)| {
        let f = Finding { path: path.into(), class: Class::New, note: None };
        rec.write(&mut notice, Some(f), |_| {
            // (the batch this write went into, the first batch not committed)
            batches.set(Some(after));
            match path {
                "fails" => {
                    Err(StoreError::Catalog(crate::catalog::CatalogError::NotFound("gone".into())))
                }
                _ => Ok(()),
            }
        })
        .unwrap();
    };
    // Batch 1 fills and goes on its way while batch 2 fills; batch 1 commits; batch 2 goes
    // on its way while batch 3 fills, and fails.
    write(&mut rec, "a", (1, 1));
    write(&mut rec, "b", (1, 1));
    write(&mut rec, "c", (2, 1));
    write(&mut rec, "d", (2, 2));
    write(&mut rec, "e", (3, 2));
    write(&mut rec, "fails", (3, 2));
    write(&mut rec, "after", (3, 2));
    assert!(!rec.ok());
    drop(rec);
    assert_eq!(told, ["c", "d", "e", "fails", "after"], "batch 1 was committed: a, b are kept");
}
