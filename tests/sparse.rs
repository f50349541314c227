//! Sparse files (issue 27): their holes are hashed from zeros, never read, by every
//! family of algorithm (the lane engine's MD5 and SHA-256, the CRCs, BLAKE3's mapped
//! path, XXH3, several at once), by `scan`, `verify` and `protect`; the digests are
//! those of the same bytes in a file without holes, and reading a cold sparse file
//! leaves the page cache without its holes' zeroed pages.

use crate::util::{missing, run, tempdir};
use fixity::algo::lookup;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Output;

const M: u64 = 1 << 20;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}\n{}", text(&o.stdout), text(&o.stderr));
    text(&o.stdout)
}

/// Whether the file system under `dir` reports holes (`lseek(SEEK_DATA)` past one); if
/// not, the test is skipped ("skipped: ..." outside CI, a failure in CI).
fn holes_reported(dir: &Path) -> bool {
    let p = dir.join(".probe");
    let f = File::create(&p).unwrap();
    f.set_len(M).unwrap();
    // SAFETY: lseek on an open descriptor.
    let r = unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_DATA) };
    let enxio = r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO);
    std::fs::remove_file(&p).unwrap();
    if !enxio {
        missing("sparse files", &format!("the file system under {dir:?} reports no holes"));
    }
    enxio
}

/// Makes the sparse file `path` of `size` bytes with `data` at its offsets.
fn sparse(path: &Path, size: u64, data: &[(u64, &[u8])]) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let f = File::create(path).unwrap();
    f.set_len(size).unwrap();
    for (off, bytes) in data {
        f.write_all_at(bytes, *off).unwrap();
    }
    path.to_path_buf()
}

/// The bytes of a small sparse file, written again into `to` without holes.
fn dense_copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::write(to, std::fs::read(from).unwrap()).unwrap();
}

/// Bytes `i` of a test's data.
fn bytes(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (j.wrapping_mul(31) ^ i.wrapping_mul(131) ^ 0x5a) as u8).collect()
}

/// Bytes written at offsets.
type Writes = Vec<(u64, Vec<u8>)>;

/// A tree `s` of sparse files (holes at the start, middle and end, an all-hole one, holes
/// not aligned to anything) and `d`, their dense copies.
fn trees(dir: &Path) {
    let b = |i, n| bytes(i, n);
    let shapes: Vec<(u64, Writes)> = vec![
        (3 * M + 1, vec![(3 * M - 4000, b(1, 4001))]),
        (5 * M, vec![(0, b(2, 70_000)), (2 * M + 12_345, b(3, 5000))]),
        (2 * M + 777, vec![(0, b(4, 10))]),
        (4 * M + 4096, vec![]),
        (6 * M + 3, vec![(M, b(5, 300_000)), (4 * M + 1, b(6, 1)), (6 * M, b(7, 3))]),
    ];
    for round in 0..3 {
        for (k, (size, data)) in shapes.iter().enumerate() {
            let name = format!("f{round}{k}");
            let data: Vec<(u64, &[u8])> = data.iter().map(|(o, v)| (*o, &v[..])).collect();
            let s = sparse(&dir.join("s").join(&name), *size + round, &data);
            dense_copy(&s, &dir.join("d").join(&name));
        }
    }
}

/// Every family of algorithm gives a sparse file the digest of its bytes: the same as
/// the file's copy without holes, many files at once (the lane engine) and one alone.
#[test]
fn sparse_files_hash_as_their_bytes_with_every_family() {
    let d = tempdir();
    if !holes_reported(d.path()) {
        return;
    }
    trees(d.path());
    for algos in ["md5", "sha256", "crc32c", "blake3", "xxh3", "md5,crc32c,sha256", "sha1,blake3"] {
        let s = ok(run(d.path(), ["hash", "-a", algos, "s"]));
        let dense = ok(run(d.path(), ["hash", "-a", algos, "d"]));
        assert_eq!(s.replace("s/", "X/"), dense.replace("d/", "X/"), "{algos}");
        assert_eq!(s.lines().count(), 15 * algos.split(',').count(), "{algos}: {s}");
        for one in ["f01", "f13", "f24"] {
            let s = ok(run(d.path(), ["hash", "-a", algos, &format!("s/{one}")]));
            let dense = ok(run(d.path(), ["hash", "-a", algos, &format!("d/{one}")]));
            assert_eq!(s.replace("s/", "X/"), dense.replace("d/", "X/"), "{algos} {one}");
        }
    }
    // And the digest is that of the bytes, computed here.
    let data = std::fs::read(d.path().join("d/f11")).unwrap();
    let s = ok(run(d.path(), ["hash", "-a", "md5", "s/f11"]));
    assert_eq!(s, format!("{}  s/f11\n", lookup("md5").unwrap().digest(&data)));
}

/// The digest of `size` bytes of zeros with `data` at its offsets (in order), computed
/// here from a buffer of zeros.
fn digest_of(algo: &str, size: u64, data: &[(u64, &[u8])]) -> String {
    let zeros = vec![0u8; 4 << 20];
    let mut h = lookup(algo).unwrap().hasher();
    let mut at = 0u64;
    let zero_to = |h: &mut Box<dyn fixity::algo::Hasher>, at: &mut u64, end: u64| {
        while *at < end {
            let n = (end - *at).min(zeros.len() as u64) as usize;
            h.update(&zeros[..n]);
            *at += n as u64;
        }
    };
    for (off, bytes) in data {
        zero_to(&mut h, &mut at, *off);
        h.update(bytes);
        at += bytes.len() as u64;
    }
    zero_to(&mut h, &mut at, size);
    h.finish().to_string()
}

/// A sparse file past 4 GiB (holes but for a few bytes on either side of 4 GiB; no disk
/// to speak of): the digests of its bytes, one algorithm and several.
#[test]
fn a_sparse_file_past_4_gib_hashes_as_its_bytes() {
    let d = tempdir();
    if !holes_reported(d.path()) {
        return;
    }
    let size = (4 << 30) + 3 * M + 5;
    let data: [(u64, &[u8]); 3] =
        [(12_345, b"early"), ((4 << 30) - 2, b"across 4 GiB"), (size - 1, b"!")];
    sparse(&d.path().join("big"), size, &data);
    // Several algorithms through the reader, and one through the lane engine.
    let out = ok(run(d.path(), ["hash", "-a", "md5,crc32c", "big"]));
    let want: String = [("md5", "MD5"), ("crc32c", "CRC32C")]
        .iter()
        .map(|(a, tag)| format!("{tag} (big) = {}\n", digest_of(a, size, &data)))
        .collect();
    assert_eq!(out, want);
    let out = ok(run(d.path(), ["hash", "-a", "sha256", "big"]));
    assert_eq!(out, format!("{}  big\n", digest_of("sha256", size, &data)));
}

/// The pages of `path` in the page cache, and its pages.
fn resident(path: &Path) -> (usize, usize) {
    let f = File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let pages = len.div_ceil(4096);
    // SAFETY: a read-only shared mapping of the file, never touched (mincore does not
    // fault pages in), unmapped before return.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        let mut v = vec![0u8; pages];
        assert_eq!(libc::mincore(p, len, v.as_mut_ptr()), 0);
        libc::munmap(p, len);
        (v.iter().filter(|b| **b & 1 == 1).count(), pages)
    }
}

/// Drops `path`'s clean pages from the page cache (after writing its data back).
fn evict(path: &Path) {
    let f = File::open(path).unwrap();
    f.sync_all().unwrap();
    // SAFETY: advice on an open descriptor.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
}

/// Hashing a cold sparse file, or scanning and verifying it, leaves its holes out of the
/// page cache: read, each 4 KiB of hole would have become a zeroed page of cache.
#[test]
fn reading_a_cold_sparse_file_does_not_fill_the_page_cache() {
    let d = tempdir();
    if !holes_reported(d.path()) {
        return;
    }
    let size = 256 * M;
    let p = sparse(&d.path().join("t/cold"), size, &[(0, &bytes(1, 9000)), (100 * M, b"mid")]);
    let runs: [&[&str]; 7] = [
        &["hash", "-a", "md5,crc32c", "t/cold"],
        &["hash", "-a", "md5", "t/cold"],
        &["hash", "-a", "sha256", "t"],
        &["hash", "-a", "blake3", "t/cold"],
        &["hash", "-a", "xxh3", "t/cold"],
        &["scan", "-q", "t"],
        &["verify", "-q", "t"],
    ];
    for args in runs {
        evict(&p);
        ok(run(d.path(), args));
        let (cached, pages) = resident(&p);
        assert!(cached * 20 < pages, "{args:?}: {cached} of {pages} pages cached");
    }
}

/// A sparse file split across a plan's parts (a VM image larger than a part's share):
/// each part reads its pieces' data and gives their holes as zeros, cold or not, and the
/// merge writes what one run writes.
#[test]
fn a_sparse_file_split_across_parts_leaves_its_holes_unread() {
    let d = tempdir();
    if !holes_reported(d.path()) {
        return;
    }
    let size = 64 * M + 5;
    let p = sparse(
        &d.path().join("t/image"),
        size,
        &[(0, &bytes(3, 70_000)), (17 * M + 3, b"mid"), (64 * M, b"tail!")],
    );
    sparse(&d.path().join("t/small"), 2 * M, &[(M, b"x")]);
    let out = run(d.path(), ["plan", "t", "--parts", "4", "--piece-size", "1048576", "-o", "p"]);
    ok(out);
    let lists: String = (0..4)
        .map(|i| std::fs::read_to_string(d.path().join(format!("p/list-{i}"))).unwrap())
        .collect();
    assert!(lists.lines().filter(|l| l.starts_with("P ")).count() >= 4, "{lists}");
    for i in 0..4 {
        evict(&p);
        let part = i.to_string();
        ok(run(d.path(), ["hash", "--plan", "p", "--part", &part, "-a", "blake3,crc32c"]));
        let (cached, pages) = resident(&p);
        assert!(cached * 20 < pages, "part {i}: {cached} of {pages} pages cached");
    }
    let merged = ok(run(d.path(), ["merge", "p", "--format", "bsd"]));
    let single = ok(run(d.path(), ["hash", "-a", "blake3,crc32c", "--format", "bsd", "t"]));
    assert_eq!(merged, single);
    // And the digests are those of the bytes.
    let want = lookup("blake3").unwrap().digest(&std::fs::read(&p).unwrap()).to_string();
    assert!(merged.contains(&want), "{merged}");
}

fn set_mtime(p: &Path, t: std::time::SystemTime) {
    std::fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
}

/// Flips the byte at `at` of `path`, its mtime kept: bit rot.
fn rot(path: &Path, at: u64) {
    let t = std::fs::metadata(path).unwrap().modified().unwrap();
    let f = File::options().read(true).write(true).open(path).unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[b[0] ^ 0x20], at).unwrap();
    drop(f);
    set_mtime(path, t);
}

/// `scan` records a tree of sparse files and `verify` finds them intact; a byte rotten in
/// a sparse file's data, or in one of its holes, makes it corrupt; `protect` makes a set
/// from which `repair` gives the bytes back.
#[test]
fn scan_verify_protect_and_repair_a_tree_of_sparse_files() {
    let d = tempdir();
    if !holes_reported(d.path()) {
        return;
    }
    let t = d.path().join("t");
    sparse(&t.join("data"), 6 * M + 11, &[(0, &bytes(1, 5000)), (3 * M, &bytes(2, 8192))]);
    sparse(&t.join("holes"), 5 * M, &[(5 * M - 1, b"z")]);
    std::fs::write(t.join("plain"), bytes(3, 100_000)).unwrap();
    // Intact beside the damaged ones: a repair reads its slices of the recovery set,
    // holes given as zeros.
    let image = sparse(&t.join("image"), 32 * M, &[(M, &bytes(4, 9000)), (20 * M, b"i")]);
    let o = run(d.path(), ["scan", "t"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let want = |name: &str| {
        let f = std::fs::read(t.join(name)).unwrap();
        lookup("blake3").unwrap().digest(&f).to_string()
    };
    let recorded = ok(run(d.path(), ["export", "t"]));
    for name in ["data", "holes", "plain"] {
        assert!(recorded.contains(&want(name)), "{name}: {recorded}");
    }
    ok(run(d.path(), ["verify", "t"]));
    let o = run(d.path(), ["protect", "t"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let before: Vec<Vec<u8>> =
        ["data", "holes"].iter().map(|n| std::fs::read(t.join(n)).unwrap()).collect();

    rot(&t.join("data"), 3 * M + 100);
    rot(&t.join("holes"), 2 * M + 3);
    let o = run(d.path(), ["verify", "t"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", text(&o.stderr));
    for l in ["CORRUPT     data", "CORRUPT     holes"] {
        assert!(out.contains(l), "{l}\n{out}");
    }
    assert!(!out.contains("CORRUPT     plain"), "{out}");
    evict(&image);
    let o = run(d.path(), ["repair", "t"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let (cached, pages) = resident(&image);
    assert!(cached * 20 < pages, "repair: {cached} of {pages} pages of the intact image cached");
    for (n, b) in ["data", "holes"].iter().zip(&before) {
        assert!(std::fs::read(t.join(n)).unwrap() == *b, "{n} restored");
        // Rebuilt sparse, as it was: its holes not written.
        let m = std::fs::metadata(t.join(n)).unwrap();
        assert!(
            m.blocks() * 512 + M <= m.len(),
            "{n}: {} blocks for {} bytes",
            m.blocks(),
            m.len()
        );
    }
    ok(run(d.path(), ["verify", "t"]));

    // Gone from the tree, back from a sparse replica: copied sparse, holes not read.
    let replica = d.path().join("r/holes");
    sparse(&replica, 5 * M, &[(5 * M - 1, b"z")]);
    std::fs::remove_file(t.join("holes")).unwrap();
    assert_eq!(run(d.path(), ["verify", "-q", "t"]).status.code(), Some(1));
    evict(&replica);
    let o = run(d.path(), ["repair", "--from", "r", "t"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("holes (from r/holes)"), "{}", text(&o.stdout));
    assert!(std::fs::read(t.join("holes")).unwrap() == before[1], "holes restored");
    let m = std::fs::metadata(t.join("holes")).unwrap();
    assert!(m.blocks() * 512 + M <= m.len(), "holes: {} blocks", m.blocks());
    let (cached, pages) = resident(&replica);
    assert!(cached * 20 < pages, "replica: {cached} of {pages} pages cached");

    // Gone from the tree with no replica: rebuilt from the recovery set, sparse as the
    // sidecar says it was when the set was made; a file that was not sparse comes back
    // whole. (Sets made anew with room for a whole missing file: data is an eighth of the
    // tree's bytes.)
    std::fs::remove_dir_all(t.join(".fixity/par2")).unwrap();
    let o = run(d.path(), ["protect", "--redundancy", "40%", "t"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The set directory's files, (path, inode, bytes): a file written again (temporary
    // file, rename) has a new inode.
    let par2_dir = t.join(".fixity/par2");
    let files = || -> Vec<(PathBuf, u64, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(&par2_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| (p.clone(), p.metadata().unwrap().ino(), std::fs::read(&p).unwrap()))
            .collect();
        v.sort();
        v
    };
    let sidecars = |files: &[(PathBuf, u64, Vec<u8>)]| -> String {
        let side = files.iter().filter(|(p, _, _)| p.extension().is_some_and(|x| x == "fixity"));
        side.map(|(_, _, b)| String::from_utf8_lossy(b).into_owned()).collect()
    };
    let made = sidecars(&files());
    // SIZE MTIME DIGEST SPARSE ACCESS PATH
    let flag = |name: &str| {
        let line = made.lines().find(|l| l.ends_with(&format!(" {name}"))).unwrap();
        line.split(' ').nth(3).unwrap().to_string()
    };
    assert_eq!((flag("data"), flag("plain")), ("sparse".into(), "-".into()), "{made}");
    // A sidecar of the first version (no sparse column) of a set that is current gets
    // the column at the next protect, the set itself not made again.
    let first_version = |text: &str| -> String {
        let mut out = String::new();
        for (i, l) in text.lines().enumerate() {
            let f: Vec<&str> = l.splitn(6, ' ').collect();
            match (i, f.len()) {
                (0, _) => out.push_str("fixity-par2-set 1\n"),
                (5.., 6) => out.push_str(&format!("{} {} {} {}\n", f[0], f[1], f[2], f[5])),
                _ => out.push_str(&format!("{l}\n")),
            }
        }
        out
    };
    for (p, _, body) in files() {
        if p.extension().is_some_and(|x| x == "fixity") {
            std::fs::write(&p, first_version(&String::from_utf8(body).unwrap())).unwrap();
        }
    }
    let old = files();
    assert!(old.iter().all(|(_, _, b)| !b.starts_with(b"fixity-par2-set 3")));
    let o = run(d.path(), ["protect", "t"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let new = files();
    assert_eq!(old.len(), new.len());
    for ((p, ino, a), (q, ino2, b)) in old.iter().zip(&new) {
        assert_eq!(p, q);
        if p.extension().is_some_and(|x| x == "fixity") {
            let b = String::from_utf8(b.clone()).unwrap();
            assert!(b.starts_with("fixity-par2-set 3\n"), "{b}");
            assert_eq!(first_version(&b).as_bytes(), &a[..], "only the columns added");
        } else {
            assert!(a == b && ino == ino2, "{p:?}: the set is not made again");
        }
    }
    let upgraded = sidecars(&new);
    assert!(upgraded.contains(" sparse 0") && upgraded.contains(" data\n"), "{upgraded}");
    assert!(upgraded.lines().any(|l| l.ends_with(" plain") && l.contains(" - 0")), "{upgraded}");
    let plain = std::fs::read(t.join("plain")).unwrap();
    std::fs::remove_file(t.join("data")).unwrap();
    std::fs::remove_file(t.join("plain")).unwrap();
    assert_eq!(run(d.path(), ["verify", "-q", "t"]).status.code(), Some(1));
    let o = run(d.path(), ["repair", "t"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("data (from recovery set"), "{out}");
    assert!(out.contains("plain (from recovery set"), "{out}");
    assert!(std::fs::read(t.join("data")).unwrap() == before[0], "data restored");
    assert!(std::fs::read(t.join("plain")).unwrap() == plain, "plain restored");
    let m = std::fs::metadata(t.join("data")).unwrap();
    assert!(m.blocks() * 512 + M <= m.len(), "data: {} blocks", m.blocks());
    let m = std::fs::metadata(t.join("plain")).unwrap();
    assert!(m.blocks() * 512 >= m.len(), "plain: {} blocks for {} bytes", m.blocks(), m.len());
    ok(run(d.path(), ["verify", "t"]));

    // Gone again, and the replica's copy dense (downloaded, or copied by a tool that
    // fills holes): rebuilt sparse all the same, as its sidecar says it was.
    let dense = d.path().join("r2/data");
    dense_copy(&t.join("data"), &dense);
    let m = std::fs::metadata(&dense).unwrap();
    assert!(m.blocks() * 512 >= m.len(), "the replica is dense: {} blocks", m.blocks());
    std::fs::remove_file(t.join("data")).unwrap();
    assert_eq!(run(d.path(), ["verify", "-q", "t"]).status.code(), Some(1));
    let o = run(d.path(), ["repair", "--from", "r2", "t"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("data (from r2/data)"), "{}", text(&o.stdout));
    assert!(std::fs::read(t.join("data")).unwrap() == before[0], "data restored");
    let m = std::fs::metadata(t.join("data")).unwrap();
    assert!(m.blocks() * 512 + M <= m.len(), "data: {} blocks", m.blocks());
    ok(run(d.path(), ["verify", "t"]));
}
