use super::rank::{Candidate, Ranker};
use super::*;
use crate::catalog::{OpenOptions, Store, StoreSpec, open_store};
use crate::pipeline::Config;
use crate::scrub::{Mode, Options as ScrubOptions};
use crate::sys::OsStrExt;
use std::path::Path;

/// A group as the events give it: size, files, links, and each name with its link flag.
type Seen = (u64, u64, u64, Vec<(String, bool)>);

fn collect(events: &mut Vec<Seen>) -> impl FnMut(Event<'_>) + '_ {
    move |e| match e {
        Event::Group(g) => events.push((g.size, g.files, g.links, Vec::new())),
        Event::Name { path, link } => {
            let name = String::from_utf8_lossy(path).into_owned();
            events.last_mut().expect("a group").3.push((name, link));
        }
        _ => {}
    }
}

fn config() -> Config {
    Config { workers: 2, window: 8, serial_reads: false, ..Config::for_storage(false) }
}

fn options(temp: &Path) -> Options {
    Options { temp_dir: temp.to_path_buf(), ..Options::default() }
}

/// The ranking: waste first, ties by first path; a file's links right after it; a group
/// of one inode is no group; and the same with sorts and a group spilled to disk.
#[test]
fn groups_are_ranked_by_waste_and_links_fold() {
    for budget in [1 << 20, 64] {
        let temp = tempfile::tempdir().unwrap();
        let mut r = Ranker::new(temp.path(), budget);
        let mut add = |size, key: u8, id: u64, path: &str| {
            let key = [key; 32];
            let c = Candidate { size, key: &key, id: (1, id), path: path.as_bytes() };
            r.push(&c).unwrap();
        };
        add(10, 1, 1, "b/x");
        add(10, 1, 2, "a/x");
        add(10, 1, 2, "z/link-of-a");
        add(10, 2, 3, "only/one");
        add(10, 3, 4, "links/1");
        add(10, 3, 4, "links/2");
        add(5, 1, 5, "small/1");
        add(5, 1, 6, "small/2");
        add(5, 1, 7, "small/3");
        add(20, 9, 8, "big/2");
        add(20, 9, 9, "big/1");
        let mut seen = Vec::new();
        let totals = r.finish("blake3", &mut collect(&mut seen)).unwrap();
        let names = |v: &[(&str, bool)]| v.iter().map(|(n, l)| (n.to_string(), *l)).collect();
        let want: Vec<Seen> = vec![
            (20, 2, 0, names(&[("big/1", false), ("big/2", false)])),
            (10, 2, 1, names(&[("a/x", false), ("z/link-of-a", true), ("b/x", false)])),
            (5, 3, 0, names(&[("small/1", false), ("small/2", false), ("small/3", false)])),
        ];
        assert_eq!(seen, want, "budget {budget}");
        assert_eq!(totals, [3, 7, 1, 20 + 10 + 10]);
        assert_eq!(std::fs::read_dir(temp.path()).unwrap().count(), 0, "temporary files removed");
    }
}

/// A group larger than the spool's memory goes through its file and comes back whole.
#[test]
fn a_large_group_is_spooled() {
    let temp = tempfile::tempdir().unwrap();
    let mut r = Ranker::new(temp.path(), 4096);
    let key = [7u8; 32];
    for i in 0..500u64 {
        let path = format!("dir/{i:04}");
        r.push(&Candidate { size: 3, key: &key, id: (1, i), path: path.as_bytes() }).unwrap();
    }
    let mut seen = Vec::new();
    r.finish("blake3", &mut collect(&mut seen)).unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1, 500);
    let want: Vec<(String, bool)> = (0..500).map(|i| (format!("dir/{i:04}"), false)).collect();
    assert_eq!(seen[0].3, want);
}

fn write(root: &Path, rel: &str, data: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, data).unwrap();
}

/// A tree with each kind of case: copies, equal sizes with other content, a large file
/// that differs only in its middle (same ends), hard links, empty files, a symlink.
fn tree(root: &Path) {
    let big: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut middle = big.clone();
    middle[50_000] ^= 1;
    write(root, "a/copy1", b"same content");
    write(root, "b/copy2", b"same content");
    write(root, "c/other", b"othr content");
    write(root, "big1", &big);
    write(root, "sub/big2", &big);
    write(root, "sub/big-middle", &middle);
    write(root, "empty1", b"");
    write(root, "empty2", b"");
    std::fs::hard_link(root.join("big1"), root.join("sub/big-link")).unwrap();
    std::os::unix::fs::symlink("big1", root.join("sym")).unwrap();
}

fn read_groups(root: &Path, opts: &Options) -> (Vec<Seen>, Summary) {
    let mut seen = Vec::new();
    let summary = read_tree(root, opts, &config(), &mut collect(&mut seen)).unwrap();
    (seen, summary)
}

#[test]
fn reading_finds_content_equal_groups_only() {
    let d = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    tree(&t);
    let (seen, s) = read_groups(&t, &options(temp.path()));
    let p = |r: &str| t.join(r).to_string_lossy().into_owned();
    let want: Vec<Seen> = vec![
        (
            100_000,
            2,
            1,
            vec![(p("big1"), false), (p("sub/big-link"), true), (p("sub/big2"), false)],
        ),
        (12, 2, 0, vec![(p("a/copy1"), false), (p("b/copy2"), false)]),
    ];
    assert_eq!(seen, want);
    assert_eq!((s.groups, s.files, s.links, s.wasted_bytes), (2, 4, 1, 100_012));
    // Empty files left out by default; symlinks never followed; the big files probed (ends
    // only: the one that differs in the middle has the same ends), and the three inodes
    // read whole once each.
    assert_eq!(s.files_considered, 7);
    assert_eq!(s.errors, 0);
    assert_eq!(s.bytes_read, 3 * 12 + 4 * 8192 + 3 * 100_000);
    let (seen, _) = read_groups(&t, &Options { min_size: 0, ..options(temp.path()) });
    assert!(seen.iter().any(|g| g.0 == 0 && g.1 == 2), "{seen:?}");
    let (seen, _) = read_groups(&t, &Options { min_size: 13, ..options(temp.path()) });
    assert_eq!(seen.len(), 1);
    let exclude = crate::walk::Exclude::new(&["sub".into()]).unwrap();
    let (seen, _) = read_groups(&t, &Options { exclude, ..options(temp.path()) });
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, 12);
}

fn scan(root: &Path, algo: &str) -> Box<dyn Store> {
    let spec = StoreSpec::Sqlite(root.join(".fixity/catalog.db"));
    let how = OpenOptions {
        create: true,
        algorithm: crate::algo::lookup(algo),
        ..OpenOptions::default()
    };
    let mut store = open_store(&spec, &how).unwrap();
    let opts = ScrubOptions {
        mode: Mode::Scan,
        follow: false,
        exclude: Default::default(),
        max_bytes: None,
        max_duration: None,
        engine: config(),
        modify_window_ns: Some(0),
    };
    crate::scrub::run(root, store.as_mut(), &opts, &mut |_| {}).unwrap();
    drop(store);
    open_store(&spec, &OpenOptions { read_only: true, ..OpenOptions::default() }).unwrap()
}

fn catalog_groups(store: &dyn Store, root: &Path, temp: &Path) -> (Vec<Seen>, Summary, usize) {
    let mut seen = Vec::new();
    let mut left = 0;
    let mut on = |e: Event<'_>| match e {
        Event::Left { .. } => left += 1,
        e => collect(&mut seen)(e),
    };
    let s = from_catalog(store, root, &options(temp), &config(), &mut on).unwrap();
    (seen, s, left)
}

#[test]
fn the_catalog_gives_the_groups_reading_gives_without_reading() {
    let d = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    tree(&t);
    let store = scan(&t, "sha256");
    let (seen, s, left) = catalog_groups(store.as_ref(), &t, temp.path());
    let (read, _) = read_groups(&t, &options(temp.path()));
    assert_eq!(seen, read);
    assert_eq!((s.files_read, s.bytes_read, s.confirmed_by_reading, left), (0, 0, false, 0));
    assert_eq!(s.algorithm, "sha256");

    // A copy edited since the scan is left out, counted, never grouped on its old digest.
    std::fs::write(t.join("b/copy2"), b"same content, edited").unwrap();
    let (seen, s, left) = catalog_groups(store.as_ref(), &t, temp.path());
    assert_eq!((seen.len(), s.changed_since_scan, left), (1, 1, 1));
    std::fs::remove_file(t.join("sub/big2")).unwrap();
    let (seen, s, _) = catalog_groups(store.as_ref(), &t, temp.path());
    assert_eq!((seen.len(), s.changed_since_scan), (0, 2));
}

/// A catalog of CRC-32 digests proposes; reading decides. Two files of one size whose
/// CRC-32s collide would make a group on the catalog alone; here the check is that the
/// groups are read and made on BLAKE3.
#[test]
fn a_checksum_catalog_is_confirmed_by_reading() {
    let d = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    tree(&t);
    let store = scan(&t, "crc32");
    let (seen, s, _) = catalog_groups(store.as_ref(), &t, temp.path());
    let (read, _) = read_groups(&t, &options(temp.path()));
    assert_eq!(seen, read);
    assert!(s.confirmed_by_reading);
    assert_eq!(s.algorithm, "blake3");
    // The linked file once for its two names, its copy, and the two small copies.
    assert_eq!((s.files_read, s.bytes_read), (4, 2 * 100_000 + 2 * 12));
}

#[test]
fn names_are_joined_as_a_walk_names_them() {
    assert_eq!(joined(b"t", b"a/b"), b"t/a/b");
    assert_eq!(joined(b"t/", b"a"), b"t/a");
    assert_eq!(joined(b".", b"a"), b"./a");
    assert_eq!(joined(b"/", b"a"), b"/a");
    let odd = std::ffi::OsStr::from_bytes(b"n\xffame");
    assert_eq!(joined(b"t", odd.as_bytes()), b"t/n\xffame");
}
