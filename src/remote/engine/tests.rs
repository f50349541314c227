//! The comparison's merge and classes with a store of objects made here (no server): pages
//! merged with the catalog's records in byte order, keys skipped, listing errors, HEAD
//! failures; and the digests kept so a second run reads nothing.

use super::*;
use crate::algo::lookup;
use crate::catalog::{Found, OpenOptions, StoreSpec, open_store};
use crate::digest::Digest;
use std::cell::Cell;
use std::collections::{HashMap, VecDeque};

/// Pages of objects, and what a HEAD of each key says.
struct Fake {
    pages: VecDeque<Vec<Listed>>,
    heads: HashMap<String, Result<Head, &'static str>>,
    asked: Cell<u64>,
}

impl ObjectStore for Fake {
    fn describe(&self) -> String {
        "s3://fake/p".into()
    }
    fn next_page(&mut self) -> Result<Option<Vec<Listed>>, RemoteError> {
        Ok(self.pages.pop_front())
    }
    fn head_many(&self, keys: &[(String, bool)]) -> Vec<Result<Head, RemoteError>> {
        self.asked.set(self.asked.get() + keys.len() as u64);
        keys.iter()
            .map(|(k, _)| match self.heads.get(k) {
                Some(Ok(h)) => Ok(h.clone()),
                Some(Err("gone")) | None => Err(RemoteError::Gone),
                Some(Err(e)) => Err(RemoteError::Object(e.to_string())),
            })
            .collect()
    }
    fn download_many(
        &self,
        keys: &[(String, Vec<&'static Algorithm>)],
    ) -> Vec<Result<(u64, Vec<Digest>), RemoteError>> {
        keys.iter().map(|_| Err(RemoteError::Object("no downloads here".into()))).collect()
    }
    fn requests(&self) -> u64 {
        self.asked.get()
    }
}

fn md5_hex(data: &[u8]) -> String {
    lookup("md5").unwrap().digest(data).to_hex()
}

fn obj(key: &str, data: &[u8]) -> Listed {
    Listed {
        key: key.into(),
        size: data.len() as u64,
        etag: Some(md5_hex(data)),
        checksums: Vec::new(),
    }
}

/// A tree at `dir/t` with these files, and an MD5 catalog recording them.
fn tree(dir: &Path, files: &[(&str, &[u8])]) -> Box<dyn Store> {
    let root = dir.join("t");
    let md5 = lookup("md5").unwrap();
    let how = OpenOptions { create: true, algorithm: Some(md5), ..OpenOptions::default() };
    let mut store = open_store(&StoreSpec::Sqlite(root.join(".fixity/catalog.db")), &how).unwrap();
    for (name, data) in files {
        let p = root.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, data).unwrap();
        let m = std::fs::metadata(&p).unwrap();
        let stamp = Stamp::of(&m);
        let found = Found { digest: md5.digest(data), stamp, file_id: None, access: None };
        store.record_new(name.as_bytes(), &found, 1).unwrap();
    }
    store.commit().unwrap();
    store
}

fn run(
    store: &mut dyn Store,
    dir: &Path,
    fake: &mut Fake,
) -> (Vec<(String, Class, Option<Proof>)>, Summary) {
    let mut seen = Vec::new();
    let sum = compare(store, &dir.join("t"), fake, "p/", &Options::default(), &mut |e| {
        seen.push((String::from_utf8_lossy(&e.path).into_owned(), e.class, e.proof));
    })
    .unwrap();
    (seen, sum)
}

#[test]
fn pages_merge_with_records_in_byte_order() {
    let d = tempfile::tempdir().unwrap();
    let files: &[(&str, &[u8])] =
        &[("a", b"A"), ("b", b"B"), ("c/x", b"CX"), ("c-d", b"CD"), ("e", b"E")];
    let mut store = tree(d.path(), files);
    // "c-d" sorts before "c/x" in bytes ('-' < '/'), as S3 lists them.
    let pages = VecDeque::from([
        vec![obj("p/.fixity/catalog.db", b"x"), obj("p/a", b"A"), obj("p/c-d", b"CD")],
        vec![obj("p/c/x", b"CX"), obj("p/dir/", b""), obj("p/x", b"X")],
    ]);
    let mut fake = Fake { pages, heads: HashMap::new(), asked: Cell::new(0) };
    let (seen, sum) = run(store.as_mut(), d.path(), &mut fake);
    let want = [
        ("a", Class::Ok, Some(Proof::Md5Etag)),
        ("b", Class::Missing, None),
        ("c-d", Class::Ok, Some(Proof::Md5Etag)),
        ("c/x", Class::Ok, Some(Proof::Md5Etag)),
        ("e", Class::Missing, None),
        ("x", Class::Extra, None),
    ];
    let want: Vec<(String, Class, Option<Proof>)> =
        want.iter().map(|(p, c, x)| (p.to_string(), *c, *x)).collect();
    assert_eq!(seen, want);
    assert_eq!((sum.objects, sum.skipped, sum.files_read), (4, 2, 0));
    assert_eq!(fake.asked.get(), 0, "the MD5 catalog proves every ETag: no HEAD");
    assert_eq!(sum.findings(), 2);
}

#[test]
fn a_listing_out_of_order_cannot_be_merged() {
    let d = tempfile::tempdir().unwrap();
    let mut store = tree(d.path(), &[("a", b"A")]);
    let pages = VecDeque::from([vec![obj("p/b", b"B")], vec![obj("p/a", b"A")]]);
    let mut fake = Fake { pages, heads: HashMap::new(), asked: Cell::new(0) };
    let got = compare(
        store.as_mut(),
        &d.path().join("t"),
        &mut fake,
        "p/",
        &Options::default(),
        &mut |_| {},
    );
    let failed = got.expect_err("refused");
    assert!(matches!(&failed.error, RemoteError::Fatal(m) if m.contains("not in byte order")));
    assert!(!failed.summary.complete);
}

#[test]
fn heads_that_fail_are_findings_and_the_run_goes_on() {
    let d = tempfile::tempdir().unwrap();
    let mut store = tree(d.path(), &[("gone", b"G"), ("kms", b"K"), ("sick", b"S")]);
    // ETags that are not the content's MD5: each object needs its HEAD.
    let opaque =
        |key: &str, data: &[u8]| Listed { etag: Some(md5_hex(b"other")), ..obj(key, data) };
    let pages = VecDeque::from([vec![
        opaque("p/gone", b"G"),
        opaque("p/kms", b"K"),
        opaque("p/sick", b"S"),
    ]]);
    let kms = Head { size: 1, encryption: Some("aws:kms".into()), ..Head::default() };
    let heads = HashMap::from([
        ("p/kms".to_string(), Ok(kms)),
        ("p/sick".to_string(), Err("HTTP 500: InternalError")),
    ]);
    let mut fake = Fake { pages, heads, asked: Cell::new(0) };
    let (seen, _) = run(store.as_mut(), d.path(), &mut fake);
    let classes: Vec<(&str, Class)> = seen.iter().map(|(p, c, _)| (p.as_str(), *c)).collect();
    assert_eq!(
        classes,
        [("gone", Class::Missing), ("kms", Class::Unprovable), ("sick", Class::Error)]
    );
}

#[test]
fn digests_read_once_are_kept_for_the_next_run() {
    let d = tempfile::tempdir().unwrap();
    // A BLAKE3 catalog: the ETag's MD5 needs a read of the file, once.
    let root = d.path().join("t");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("f"), b"content").unwrap();
    let b3 = lookup("blake3").unwrap();
    let how = OpenOptions { create: true, algorithm: Some(b3), ..OpenOptions::default() };
    let mut store = open_store(&StoreSpec::Sqlite(root.join(".fixity/catalog.db")), &how).unwrap();
    let m = std::fs::metadata(root.join("f")).unwrap();
    let stamp = Stamp::of(&m);
    store
        .record_new(
            b"f",
            &Found { digest: b3.digest(b"content"), stamp, file_id: None, access: None },
            1,
        )
        .unwrap();
    store.commit().unwrap();
    for reads in [1, 0] {
        let pages = VecDeque::from([vec![obj("p/f", b"content")]]);
        let mut fake = Fake { pages, heads: HashMap::new(), asked: Cell::new(0) };
        let (seen, sum) = run(store.as_mut(), d.path(), &mut fake);
        assert_eq!(seen, [("f".to_string(), Class::Ok, Some(Proof::Md5Etag))]);
        assert_eq!((sum.files_read, fake.asked.get()), (reads, 0));
    }
    // An edit the catalog has not seen. The copy of the recorded content is still proven
    // by the kept MD5 (the record's version); a copy of the edited content is not taken
    // for the recorded one: the file is no longer the recorded version, nothing proves it.
    std::fs::write(root.join("f"), b"CONTENT").unwrap();
    assert!(filetime_later(&root.join("f")));
    let pages = VecDeque::from([vec![obj("p/f", b"content")]]);
    let mut fake = Fake { pages, heads: HashMap::new(), asked: Cell::new(0) };
    let (seen, _) = run(store.as_mut(), d.path(), &mut fake);
    assert_eq!(seen, [("f".to_string(), Class::Ok, Some(Proof::Md5Etag))]);
    let pages = VecDeque::from([vec![obj("p/f", b"CONTENT")]]);
    let heads = HashMap::from([("p/f".to_string(), Ok(Head { size: 7, ..Head::default() }))]);
    let mut fake = Fake { pages, heads, asked: Cell::new(0) };
    let (seen, sum) = run(store.as_mut(), d.path(), &mut fake);
    assert_eq!(seen, [("f".to_string(), Class::Differs, Some(Proof::Md5Etag))], "{sum:?}");
}

/// Moves the file's mtime a second on (an edit the catalog has not seen).
fn filetime_later(p: &Path) -> bool {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    let m = f.metadata().unwrap();
    let t = m.modified().unwrap() + std::time::Duration::from_secs(1);
    f.set_modified(t).is_ok()
}

/// Records with no object, more than a batch of them between two keys and after the last:
/// reported in order, in batches (the memory of a batch, however many there are).
#[test]
fn many_records_without_objects_go_out_in_batches() {
    let d = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..2 * BATCH + 10).map(|i| format!("m{i:05}")).collect();
    let mut files: Vec<(&str, &[u8])> =
        names.iter().map(|n| (n.as_str(), b"x".as_slice())).collect();
    files.push(("a", b"A"));
    files.push(("n", b"N"));
    let mut store = tree(d.path(), &files);
    let pages = VecDeque::from([vec![obj("p/a", b"A"), obj("p/m05000", b"x"), obj("p/n", b"N")]]);
    let mut fake = Fake { pages, heads: HashMap::new(), asked: Cell::new(0) };
    let (seen, sum) = run(store.as_mut(), d.path(), &mut fake);
    let order: Vec<&str> = seen.iter().map(|(p, _, _)| p.as_str()).collect();
    let mut want: Vec<&str> = vec!["a"];
    want.extend(names.iter().map(String::as_str));
    want.push("n");
    assert_eq!(order, want);
    assert_eq!(sum.counts.get("ok"), Some(&3));
    assert_eq!(sum.counts.get("missing"), Some(&(names.len() as u64 - 1)));
}
