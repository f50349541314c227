use super::*;
use crate::algo::{Algorithm, lookup};
use crate::digest::Digest;
use crate::pipeline::hash_path;

/// Whether two lists of digests are the same, digest by digest.
fn same(a: &[Digest], b: &[Digest]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.ct_eq(y))
}

#[cfg(unix)]
/// Makes a FIFO named `fifo` in `dir`.
fn mkfifo(dir: &Path) -> std::path::PathBuf {
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: plain mkfifo on a path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    fifo
}

#[test]
fn reads_once_for_many_algorithms() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&p, &data).unwrap();
    let algos = [lookup("md5").unwrap(), lookup("sha256").unwrap(), lookup("blake3").unwrap()];
    let mut buf = Vec::new();
    let h =
        hash_path(&p, OpenMode::Named, &algos, &mut buf, &ReadOptions::default(), None).unwrap();
    assert_eq!(h.size, data.len() as u64);
    for (a, d) in algos.iter().zip(&h.digests) {
        assert!(d.ct_eq(&a.digest(&data)), "{}", a.name);
    }
}

#[test]
fn mapped_blake3_matches_buffered() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big");
    let data: Vec<u8> = (0..(9 << 20) as u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(&p, &data).unwrap();
    let b3 = [lookup("blake3").unwrap()];
    let mut buf = Vec::new();
    let opts = ReadOptions {
        buffer_size: 65536,
        mmap_threshold: Some(1),
        skip_inodes: [None; 2],
        progress: None,
        advise: true,
    };
    let mapped = hash_path(&p, OpenMode::Named, &b3, &mut buf, &opts, None).unwrap();
    let opts = ReadOptions {
        buffer_size: 65536,
        mmap_threshold: None,
        skip_inodes: [None; 2],
        progress: None,
        advise: true,
    };
    let read = hash_path(&p, OpenMode::Named, &b3, &mut buf, &opts, None).unwrap();
    assert!(same(&mapped.digests, &read.digests));
    assert!(mapped.digests[0].ct_eq(&b3[0].digest(&data)));
}

#[cfg(unix)]
#[test]
fn walked_open_refuses_fifo_and_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = mkfifo(dir.path());
    let md5 = [lookup("md5").unwrap()];
    let mut buf = Vec::new();
    let o = ReadOptions::default();
    let r = hash_path(&fifo, OpenMode::Walked { follow: false }, &md5, &mut buf, &o, None);
    assert!(matches!(r, Err(ReadError::NotRegular("FIFO"))), "{r:?}");
    std::fs::write(dir.path().join("t"), b"x").unwrap();
    std::os::unix::fs::symlink("t", dir.path().join("l")).unwrap();
    let r = hash_path(
        &dir.path().join("l"),
        OpenMode::Walked { follow: false },
        &md5,
        &mut buf,
        &o,
        None,
    );
    assert!(matches!(r, Err(ReadError::Symlink)), "{r:?}");
    let r = hash_path(
        &dir.path().join("l"),
        OpenMode::Walked { follow: true },
        &md5,
        &mut buf,
        &o,
        None,
    );
    assert!(r.unwrap().digests[0].ct_eq(&md5[0].digest(b"x")));
}

#[test]
fn serial_reads_give_the_same_digests() {
    let dir = tempfile::tempdir().unwrap();
    let lock = Mutex::new(());
    let algos = [lookup("sha256").unwrap(), lookup("crc32").unwrap()];
    let mut buf = Vec::new();
    for len in [0usize, 1, 4096, 1 << 20, (1 << 20) + 1, 3 << 20] {
        let p = dir.path().join(format!("f{len}"));
        let data: Vec<u8> = (0..len).map(|i| (i % 249) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let opts = ReadOptions::default();
        let h =
            hash_path(&p, OpenMode::Walked { follow: false }, &algos, &mut buf, &opts, Some(&lock))
                .unwrap();
        assert_eq!(h.size, len as u64);
        assert!(h.digests[0].ct_eq(&algos[0].digest(&data)));
        assert!(h.digests[1].ct_eq(&algos[1].digest(&data)));
    }
}

/// imohash alone reads its three samples and nothing else (the progress counter counts
/// every byte read); with another algorithm the file is read once, whole, and both
/// ways give the same digest.
#[test]
fn sampled_alone_reads_only_the_samples() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let data: Vec<u8> = (0..10_000_000u32).map(|i| (i % 247) as u8).collect();
    std::fs::write(&p, &data).unwrap();
    let imo = lookup("imohash").unwrap();
    let mut buf = Vec::new();
    let counted = |algos: &[&'static Algorithm], buf: &mut Vec<u8>| {
        let read: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
        let opts = ReadOptions { progress: Some(read), ..ReadOptions::default() };
        let h = hash_path(&p, OpenMode::Named, algos, buf, &opts, None).unwrap();
        (h, read.load(Ordering::Relaxed))
    };
    let (alone, read) = counted(&[imo], &mut buf);
    assert_eq!(read, 3 * 16384);
    assert_eq!(alone.size, data.len() as u64);
    let (with_md5, read) = counted(&[lookup("md5").unwrap(), imo], &mut buf);
    assert_eq!(read, data.len() as u64);
    assert!(with_md5.digests[1].ct_eq(&alone.digests[0]));
    assert!(alone.digests[0].ct_eq(&imo.digest(&data)));
}

/// /proc and /sys files report a size of 0 (or a page) yet have content: they are read
/// to the end and hashed, as coreutils does, not called "changed while read".
#[cfg(unix)]
#[test]
fn proc_and_sys_files_are_hashed_by_their_content() {
    let md5 = [lookup("md5").unwrap()];
    let mut buf = Vec::new();
    let o = ReadOptions::default();
    for p in ["/proc/self/stat", "/proc/cpuinfo", "/sys/kernel/mm/transparent_hugepage/enabled"] {
        let p = Path::new(p);
        if !p.exists() {
            continue;
        }
        let h = hash_path(p, OpenMode::Named, &md5, &mut buf, &o, None)
            .unwrap_or_else(|e| panic!("{}: {}", p.display(), e.message()));
        assert!(h.size > 0, "{}", p.display());
    }
    // A stable one gives the digest of the bytes a plain read returns.
    let p = Path::new("/proc/self/cmdline");
    let h = hash_path(p, OpenMode::Named, &md5, &mut buf, &o, None).unwrap();
    let direct = std::fs::read(p).unwrap();
    assert_eq!(h.size, direct.len() as u64);
    assert!(h.digests[0].ct_eq(&md5[0].digest(&direct)));
}

/// A sink that resizes its file the first time it is fed: the file shrinks while it is
/// being read, as a log rotated with copytruncate does, or grows, as a log written to.
struct Resizing {
    inner: Box<dyn Hasher>,
    path: std::path::PathBuf,
    to: u64,
    done: bool,
}

impl Resizing {
    fn sha256(path: &Path, to: u64) -> Box<Resizing> {
        let inner = lookup("sha256").unwrap().hasher();
        Box::new(Resizing { inner, path: path.to_path_buf(), to, done: false })
    }
}

impl Hasher for Resizing {
    fn update(&mut self, data: &[u8]) {
        if !self.done {
            self.done = true;
            std::fs::OpenOptions::new()
                .write(true)
                .open(&self.path)
                .unwrap()
                .set_len(self.to)
                .unwrap();
        }
        self.inner.update(data);
    }
    fn finish(&self) -> Digest {
        self.inner.finish()
    }
}

/// A mapped file that shrinks mid-read: no SIGBUS, the read reports the change.
#[cfg(unix)]
#[test]
fn a_file_shrinking_under_a_mapping_is_changed_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log");
    std::fs::write(&p, vec![5u8; 6 << 20]).unwrap();
    let file = File::open(&p).unwrap();
    let len = file.metadata().unwrap().len();
    let mut sinks = [Resizing::sha256(&p, 4096)];
    let r = mapped::read(&file, len, &mut sinks, false, false, None).unwrap();
    assert!(matches!(r, Err(ReadError::Changed)), "{r:?}");
}

/// A file that grows while it is read: refused under `OnChange::Refuse`; under
/// `Accept` (the drop-ins that hash what they read) read to its new end, and the
/// digest is of every byte read.
#[test]
fn a_growing_file_is_refused_or_read_to_its_new_end() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log");
    let opts = ReadOptions { buffer_size: 64 << 10, ..ReadOptions::default() };
    let mut buf = Vec::new();
    let mut reader = Reader { buf: &mut buf, opts: &opts, serial: None };
    for on_change in [OnChange::Refuse, OnChange::Accept] {
        std::fs::write(&p, vec![1u8; 100_000]).unwrap();
        let mut sinks = [Resizing::sha256(&p, 300_000)];
        let plan = ReadPlan { on_change, ..ReadPlan::WHOLE };
        let r = reader.read_path(&p, OpenMode::Named, &plan, &mut sinks);
        match on_change {
            OnChange::Refuse => assert!(matches!(r, Err(ReadError::Changed)), "{r:?}"),
            OnChange::Accept => {
                let mut all = vec![1u8; 100_000];
                all.resize(300_000, 0);
                assert_eq!(r.unwrap().size, 300_000);
                assert!(sinks[0].finish().ct_eq(&lookup("sha256").unwrap().digest(&all)));
            }
        }
    }
}

#[cfg(unix)]
/// Streams have no size before they are read: a plan whose sink needs one refuses them
/// before reading a byte, with the sink's name.
#[test]
fn a_plan_that_needs_the_size_refuses_a_stream() {
    let fifo_dir = tempfile::tempdir().unwrap();
    let fifo = mkfifo(fifo_dir.path());
    // Opened for writing too (O_RDWR never blocks on a FIFO), so the open succeeds.
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
    let opts = ReadOptions::default();
    let mut buf = Vec::new();
    let mut reader = Reader { buf: &mut buf, opts: &opts, serial: None };
    let plan = ReadPlan { needs_size: Some("imohash"), ..ReadPlan::WHOLE };
    let mut sinks = [lookup("md5").unwrap().hasher()];
    let r = reader.read_file(&file, &fifo, OpenMode::Named, &plan, &mut sinks);
    assert!(matches!(r, Err(ReadError::NeedsSize("imohash"))), "{r:?}");
    let r = reader.read_path(Path::new("-"), OpenMode::Stdin, &plan, &mut sinks);
    assert!(matches!(r, Err(ReadError::NeedsSize("imohash"))), "{r:?}");
}

/// The sinks may be of any one type, not only boxed trait objects: the b3sum drop-in's
/// keyed BLAKE3 state is read into and taken back.
#[test]
fn sinks_of_a_concrete_type_are_fed_and_kept() {
    struct Collect(Vec<u8>);
    impl Hasher for Collect {
        fn update(&mut self, data: &[u8]) {
            self.0.extend_from_slice(data);
        }
        fn finish(&self) -> Digest {
            Digest::new(&self.0[..self.0.len().min(8)])
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 241) as u8).collect();
    std::fs::write(&p, &data).unwrap();
    let opts = ReadOptions { buffer_size: 4096, ..ReadOptions::default() };
    let mut buf = Vec::new();
    let mut reader = Reader { buf: &mut buf, opts: &opts, serial: None };
    for fetch in [Fetch::Whole, Fetch::Mapped { from: 1, parallel: true }] {
        let mut sinks = [Box::new(Collect(Vec::new()))];
        let plan = ReadPlan { fetch, ..ReadPlan::WHOLE };
        let got = reader.read_path(&p, OpenMode::Named, &plan, &mut sinks).unwrap();
        assert_eq!(got.size, data.len() as u64, "{fetch:?}");
        assert!(sinks[0].0 == data, "{fetch:?}");
    }
}

#[cfg(unix)]
#[test]
fn io_message_drops_os_error_suffix() {
    let e = io::Error::from_raw_os_error(libc::EACCES);
    assert_eq!(io_message(&e), "Permission denied");
}
