use super::*;
use crate::algo::lookup;
use crate::read::{OnChange, OpenMode, ReadError, ReadOptions, ReadPlan, Reader};
use std::path::Path;

const K: u64 = 4096;

/// Whether the file system under `dir` reports holes (`SEEK_DATA` past a hole): some
/// (old kernels, a few network file systems) call every byte data.
fn reports_holes(dir: &Path) -> bool {
    let p = dir.join("probe");
    let f = File::create(&p).unwrap();
    f.set_len(1 << 20).unwrap();
    let holes =
        matches!(seek_extent(&f, 0, false), Err(e) if e.raw_os_error() == Some(libc::ENXIO));
    std::fs::remove_file(&p).unwrap();
    holes
}

/// A sparse file of `size` bytes with `data` written at its offsets, the rest holes; `None`
/// (the reason printed) when the file system does not report holes.
fn sparse(dir: &Path, name: &str, size: u64, data: &[(u64, &[u8])]) -> Option<File> {
    if !reports_holes(dir) {
        eprintln!("skipped: sparse files: the file system under {dir:?} reports no holes");
        return None;
    }
    let p = dir.join(name);
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&p)
        .unwrap();
    f.set_len(size).unwrap();
    for (off, bytes) in data {
        f.write_all_at(bytes, *off).unwrap();
    }
    f.sync_all().unwrap();
    Some(f)
}

/// The spans of `file` from 0 to `size`, as a walk finds them one after another.
fn walk(file: &File, size: u64) -> Vec<(u64, Span)> {
    let mut x = Extents::new(size);
    let mut spans = Vec::new();
    let mut off = 0;
    while off < size {
        let s = x.at(file, off);
        assert!(s.end() > off && s.end() <= size, "{s:?} at {off}");
        spans.push((off, s));
        off = s.end();
    }
    spans
}

/// Every byte of `file`, as [`Extents::read_at`] gives them through a buffer of `buf`
/// bytes.
fn read_all(file: &File, size: u64, buf: usize) -> Vec<u8> {
    let mut x = Extents::new(size);
    let mut out = Vec::new();
    let mut b = vec![0xAAu8; buf];
    loop {
        let n = x.read_at(file, &mut b, out.len() as u64).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[..n]);
    }
}

/// The bytes the file holds, from a plain read (at offsets: the walks move the file's
/// position).
fn plain(file: &File) -> Vec<u8> {
    let mut v = vec![0u8; file.metadata().unwrap().len() as usize];
    file.read_exact_at(&mut v, 0).unwrap();
    v
}

fn holes(spans: &[(u64, Span)]) -> Vec<(u64, u64)> {
    spans.iter().filter_map(|&(o, s)| matches!(s, Span::Hole(_)).then_some((o, s.end()))).collect()
}

#[test]
fn a_hole_at_the_start() {
    let d = tempfile::tempdir().unwrap();
    let Some(f) = sparse(d.path(), "f", 8 * K + 10, &[(8 * K, b"tail bytes")]) else { return };
    assert_eq!(walk(&f, 8 * K + 10), [(0, Span::Hole(8 * K)), (8 * K, Span::Data(8 * K + 10))]);
    assert_eq!(read_all(&f, 8 * K + 10, 3000), plain(&f));
}

#[test]
fn a_hole_in_the_middle_not_aligned_to_the_buffer() {
    let d = tempfile::tempdir().unwrap();
    let size = 40 * K;
    let Some(f) = sparse(d.path(), "f", size, &[(0, &[1u8; 5000]), (30 * K + 7, &[2u8; 100])])
    else {
        return;
    };
    // Data in whole blocks: [0, 8K) and [28K, 32K)... whatever the file system's block,
    // the hole lies between them and the bytes read are the file's.
    let spans = walk(&f, size);
    let h = holes(&spans);
    assert!(h.iter().any(|&(a, b)| a <= 8 * K && b >= 28 * K), "{spans:?}");
    for buf in [1, 4095, 4097, 10_007, 65_536] {
        assert_eq!(read_all(&f, size, buf), plain(&f), "buffer {buf}");
    }
}

#[test]
fn a_hole_at_the_end() {
    let d = tempfile::tempdir().unwrap();
    let size = 64 * K + 3;
    let Some(f) = sparse(d.path(), "f", size, &[(0, b"head")]) else { return };
    let spans = walk(&f, size);
    assert!(matches!(spans[0], (0, Span::Data(_))), "{spans:?}");
    assert_eq!(spans.last().unwrap().1, Span::Hole(size), "{spans:?}");
    assert_eq!(read_all(&f, size, 10_000), plain(&f));
}

#[test]
fn all_hole_and_no_hole() {
    let d = tempfile::tempdir().unwrap();
    let Some(f) = sparse(d.path(), "holes", 100 * K + 1, &[]) else { return };
    assert_eq!(walk(&f, 100 * K + 1), [(0, Span::Hole(100 * K + 1))]);
    assert_eq!(read_all(&f, 100 * K + 1, 7777), vec![0u8; 100 * K as usize + 1]);

    let full: Vec<u8> = (0..50_000u32).map(|i| (i % 249) as u8).collect();
    let Some(f) = sparse(d.path(), "full", full.len() as u64, &[(0, &full)]) else { return };
    assert_eq!(walk(&f, full.len() as u64), [(0, Span::Data(full.len() as u64))]);
    assert_eq!(read_all(&f, full.len() as u64, 4096), full);
}

/// Past 4 GiB (32-bit offsets would wrap): a file of holes but for a few bytes, which
/// costs no disk.
#[test]
fn holes_past_4_gib() {
    let d = tempfile::tempdir().unwrap();
    let size = (5 << 30) + 123;
    let at = (4 << 30) + 5;
    let Some(f) = sparse(d.path(), "big", size, &[(at, b"past four")]) else { return };
    let spans = walk(&f, size);
    assert_eq!(spans.len(), 3, "{spans:?}");
    assert!(matches!(spans[0], (0, Span::Hole(e)) if e <= at && e + K > at), "{spans:?}");
    assert_eq!(spans[2].1, Span::Hole(size));
    let mut x = Extents::new(size);
    let mut b = vec![0xAAu8; 64];
    assert_eq!(x.read_at(&f, &mut b, at - 5).unwrap(), 64);
    assert_eq!(&b[..14], b"\0\0\0\0\0past four");
    assert_eq!(x.read_at(&f, &mut b, size - 3).unwrap(), 3);
    assert_eq!(&b[..3], [0, 0, 0]);
    assert_eq!(x.read_at(&f, &mut b, size).unwrap(), 0);
    assert_eq!(x.read_at(&f, &mut b, 3 << 30).unwrap(), 64);
    assert_eq!(b, [0u8; 64]);
}

/// A file system without `SEEK_DATA`: everything is data, read plainly.
#[test]
fn without_seek_data_everything_is_data() {
    let d = tempfile::tempdir().unwrap();
    let Some(f) = sparse(d.path(), "f", 40 * K, &[(20 * K, b"x")]) else { return };
    let mut x = Extents::new(40 * K);
    x.plain = true;
    assert_eq!(x.at(&f, 0), Span::Data(40 * K));
    let mut b = vec![1u8; 40 * K as usize];
    assert_eq!(x.read_at(&f, &mut b, 0).unwrap(), 40 * K as usize);
    assert_eq!(b, plain(&f));
}

/// Data written into a hole before the walk reaches it is read: each extent is asked
/// for when the read gets there.
#[test]
fn data_that_appears_ahead_of_the_walk_is_read() {
    let d = tempfile::tempdir().unwrap();
    let size = 400 * K;
    let Some(f) = sparse(d.path(), "f", size, &[(0, b"first")]) else { return };
    let mut x = Extents::new(size);
    assert!(matches!(x.at(&f, 0), Span::Data(e) if e < 100 * K));
    f.write_all_at(b"later", 300 * K).unwrap();
    let mut b = [0u8; 8];
    let mut off = 300 * K - 3;
    let mut got = Vec::new();
    while got.len() < 8 {
        let n = x.read_at(&f, &mut b[got.len()..], off).unwrap();
        got.extend_from_slice(&b[got.len()..got.len() + n]);
        off += n as u64;
    }
    assert_eq!(got, b"\0\0\0later");
}

#[test]
fn only_files_with_enough_holes_are_worth_it() {
    let d = tempfile::tempdir().unwrap();
    if !reports_holes(d.path()) {
        return eprintln!("skipped: sparse files: the file system reports no holes");
    }
    std::fs::write(d.path().join("dense"), vec![7u8; 3 << 20]).unwrap();
    let dense = std::fs::metadata(d.path().join("dense")).unwrap();
    assert!(!worth_it(&dense));
    let f = sparse(d.path(), "small", MIN_HOLES / 2, &[]).unwrap();
    assert!(!worth_it(&f.metadata().unwrap()), "too few holes to pay for the lseeks");
    let f = sparse(d.path(), "big", 3 * MIN_HOLES, &[(0, b"x")]).unwrap();
    assert!(worth_it(&f.metadata().unwrap()));
}

/// [`Zeroed`] gives the file's bytes from any offset, sparse or not, up to the stat's
/// size.
#[test]
fn zeroed_reads_the_bytes_from_an_offset() {
    let d = tempfile::tempdir().unwrap();
    let size = 3 * MIN_HOLES + 17;
    let Some(f) = sparse(d.path(), "f", size, &[(5, b"abc"), (MIN_HOLES + 3, b"def")]) else {
        return;
    };
    let all = plain(&f);
    for from in [0, 4, MIN_HOLES, size - 1, size] {
        let mut v = Vec::new();
        Zeroed::new(&f, &f.metadata().unwrap(), from).read_to_end(&mut v).unwrap();
        assert_eq!(v, all[from as usize..], "from {from}");
    }
}

fn opts(buffer_size: usize) -> ReadOptions {
    ReadOptions { buffer_size, ..ReadOptions::default() }
}

/// Hashing a sparse file through the reader, every plan that reads it whole, gives the
/// digests of its bytes.
#[test]
fn the_reader_hashes_a_sparse_file_as_its_bytes() {
    let d = tempfile::tempdir().unwrap();
    let size = 5 * MIN_HOLES + 1001;
    let writes: [(u64, &[u8]); 3] =
        [(0, b"start"), (2 * MIN_HOLES + 4097, &[9u8; 70_000]), (size - 2, b"zz")];
    let Some(f) = sparse(d.path(), "f", size, &writes) else { return };
    assert!(worth_it(&f.metadata().unwrap()));
    let bytes = plain(&f);
    let names = ["md5", "sha256", "crc32c", "blake3", "xxh3"];
    for fetch in [
        crate::read::Fetch::Whole,
        crate::read::Fetch::Mapped { from: 1, parallel: false },
        crate::read::Fetch::Mapped { from: 1, parallel: true },
    ] {
        for buf_size in [65_536 + 1000, 512 * 1024] {
            let o = opts(buf_size);
            let mut buf = Vec::new();
            let mut r = Reader { buf: &mut buf, opts: &o, serial: None };
            let mut sinks: Vec<_> = names.iter().map(|n| lookup(n).unwrap().hasher()).collect();
            let plan = ReadPlan { fetch, ..ReadPlan::WHOLE };
            let got = r.read_path(&d.path().join("f"), OpenMode::Named, &plan, &mut sinks).unwrap();
            assert_eq!(got.size, size);
            for (n, s) in names.iter().zip(&sinks) {
                assert!(s.finish().ct_eq(&lookup(n).unwrap().digest(&bytes)), "{n} {fetch:?}");
            }
        }
    }
    // On a seeking disk's policy (every file one at a time).
    let serial = std::sync::Mutex::new(());
    let o = opts(100_000);
    let mut buf = Vec::new();
    let mut r = Reader { buf: &mut buf, opts: &o, serial: Some(&serial) };
    let mut sinks = vec![lookup("sha1").unwrap().hasher()];
    r.read_path(&d.path().join("f"), OpenMode::Named, &ReadPlan::WHOLE, &mut sinks).unwrap();
    assert!(sinks[0].finish().ct_eq(&lookup("sha1").unwrap().digest(&bytes)));
}

/// A sink that writes to its file the first time it is fed: `data` at `at`, or a
/// truncation to `at` bytes.
struct Meddling {
    inner: Box<dyn crate::algo::Hasher>,
    path: std::path::PathBuf,
    at: u64,
    data: Option<&'static [u8]>,
    done: bool,
}

impl crate::algo::Hasher for Meddling {
    fn update(&mut self, data: &[u8]) {
        if !self.done {
            self.done = true;
            let f = std::fs::OpenOptions::new().write(true).open(&self.path).unwrap();
            // The mtime must move even on a file system of coarse timestamps.
            std::thread::sleep(std::time::Duration::from_millis(20));
            match self.data {
                Some(d) => f.write_all_at(d, self.at).unwrap(),
                None => f.set_len(self.at).unwrap(),
            }
        }
        self.inner.update(data);
    }
    fn finish(&self) -> crate::digest::Digest {
        self.inner.finish()
    }
}

/// A sparse file written into (a hole filled ahead of the read or behind it) or cut
/// short while it is read is reported as changed, never given a digest.
#[test]
fn a_sparse_file_that_changes_while_read_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let size = 4 * MIN_HOLES;
    let p = d.path().join("f");
    for (at, data) in
        [(3 * MIN_HOLES, Some(&b"ahead"[..])), (10, Some(&b"behind"[..])), (MIN_HOLES, None)]
    {
        let Some(_f) = sparse(d.path(), "f", size, &[(0, b"head")]) else { return };
        let o = opts(64 * 1024);
        let mut buf = Vec::new();
        let mut r = Reader { buf: &mut buf, opts: &o, serial: None };
        let inner = lookup("md5").unwrap().hasher();
        let mut sinks = [Box::new(Meddling { inner, path: p.clone(), at, data, done: false })];
        let plan = ReadPlan { on_change: OnChange::Refuse, ..ReadPlan::WHOLE };
        let got = r.read_path(&p, OpenMode::Named, &plan, &mut sinks);
        assert!(matches!(got, Err(ReadError::Changed)), "{at} {data:?}: {got:?}");
    }
}
