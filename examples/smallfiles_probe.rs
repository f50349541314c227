//! Measures the kernel's per-file cost of reading many small files, by several methods, to
//! decide how fixity should read them (docs/benchmarks.md, "Per-file cost on small files"):
//!
//!     cargo run --profile bench-fast --example smallfiles_probe -- DIR [ROUNDS] [METHOD...]
//!
//! The tree is walked once, untimed (a stat of each regular file: its size sets the read).
//! Every file must be at most 64 KiB. Then each method reads every file, warm cache,
//! `ROUNDS` times (default 5), the methods interleaved round by round; the best and the
//! median round are printed, as wall time and as the process's CPU time (user + system,
//! the kernel's io_uring worker threads included), which a busy machine disturbs less.
//! The bytes are summed (a stand-in for the hash, too cheap to matter), and the sum must
//! be the same for every method, so none of them skips work.
//!
//! Methods (files opened with `O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_NOCTTY`, as fixity opens
//! a walked file; T is a thread count, B the files per io_uring submission):
//! - `abs-T`: per file open(full path) + fstat + read + fstat + close: what fixity's
//!   reader does (`read::open`, `Reader::read_file`).
//! - `abs-nostat-T`: the same without the two fstats (the floor of the syscall path).
//! - `at-T`: per directory one open(O_DIRECTORY), then per file openat(dirfd, name) +
//!   fstat + read + fstat + close (directory-ordered opens).
//! - `uring-T-B`: each thread its own io_uring; per file a linked chain
//!   OPENAT(dirfd, name, into a direct descriptor) -> READ(fixed file) -> CLOSE. No stat at
//!   all: a lower bound, not something fixity may do.
//! - `uringstat-T-B`: as `uring`, with STATX(dirfd, name) in the chain before OPENAT and
//!   after READ (by name: the kernel refuses STATX of a direct descriptor with EBADF, and
//!   runs STATX on its io-wq worker threads, never inline).
//! - `uringsync-T-B`: as `uring`, with fstatat(dirfd, name) syscalls for the whole batch
//!   before it is submitted and after it completes (by name, so weaker than a stat of the
//!   open file: a name swapped away and back during the read goes unseen).
//! - `uringfd-T-B`: the stats fixity needs, on the open file: one submission opens the
//!   batch into plain descriptors (OPENAT), then per file fstat (a syscall), READ through
//!   the ring, fstat again, and CLOSE through the ring. Keeps every guarantee.
//! - `uringfdstat-T-B`: as `uringfd`, with both stats as STATX(fd, "", AT_EMPTY_PATH) in
//!   the chain STATX -> READ -> STATX -> CLOSE.
//! - `list-std`, `list-raw`: the walk's part, not reads: every directory listed once, with
//!   `std::fs::read_dir` (glibc's opendir: open + fstat + a 32 KiB buffer, getdents until
//!   0, close), or with open + getdents64 into one reused buffer + close.

use io_uring::{IoUring, opcode, squeue, types};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// One file found by the walk.
struct Entry {
    dir: usize,
    name: CString,
    path: CString,
    size: u64,
}

struct Tree {
    dirs: Vec<CString>,
    files: Vec<Entry>,
}

const FLAGS: i32 =
    libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;

fn walk(root: &Path) -> Tree {
    let mut tree = Tree { dirs: Vec::new(), files: Vec::new() };
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap()).collect();
        entries.sort_by_key(|e| e.file_name());
        let d = tree.dirs.len();
        tree.dirs.push(CString::new(dir.as_os_str().as_bytes()).unwrap());
        for e in entries.iter().rev() {
            let md = e.metadata().unwrap();
            if md.is_dir() {
                stack.push(e.path());
            } else if md.is_file() {
                tree.files.push(Entry {
                    dir: d,
                    name: CString::new(e.file_name().as_bytes()).unwrap(),
                    path: CString::new(e.path().as_os_str().as_bytes()).unwrap(),
                    size: md.size(),
                });
            }
        }
    }
    tree.files.sort_by_key(|f| f.dir);
    tree
}

/// Sums the bytes (a cheap stand-in for the hash, so reads are not optimized away).
fn sum(b: &[u8]) -> u64 {
    b.iter().map(|&x| x as u64).sum()
}

fn fstat(fd: i32) -> libc::stat {
    // SAFETY: a plain fstat into a zeroed struct.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        assert_eq!(libc::fstat(fd, &mut st), 0);
        st
    }
}

/// Runs `work` on `threads` threads over chunks of `chunk` consecutive files; returns the
/// byte sum.
fn parallel(
    tree: &Tree,
    threads: usize,
    chunk: usize,
    work: &(dyn Fn(&[Entry]) -> u64 + Sync),
) -> u64 {
    let next = AtomicUsize::new(0);
    let total = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut acc = 0u64;
                loop {
                    let i = next.fetch_add(chunk, Ordering::Relaxed);
                    if i >= tree.files.len() {
                        break;
                    }
                    acc += work(&tree.files[i..(i + chunk).min(tree.files.len())]);
                }
                total.fetch_add(acc as usize, Ordering::Relaxed);
            });
        }
    });
    total.into_inner() as u64
}

fn sync_read(fd: i32, e: &Entry, buf: &mut [u8], stat: bool) -> u64 {
    let before = stat.then(|| fstat(fd));
    // SAFETY: reading into our buffer.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), e.size as usize) };
    assert_eq!(n as u64, e.size);
    if let Some(b) = before {
        let a = fstat(fd);
        assert_eq!((a.st_size, a.st_mtime_nsec), (b.st_size, b.st_mtime_nsec));
    }
    sum(&buf[..n as usize])
}

fn by_path(tree: &Tree, threads: usize, stat: bool) -> u64 {
    parallel(tree, threads, 64, &|files| {
        let mut buf = vec![0u8; 1 << 20];
        let mut acc = 0;
        for e in files {
            // SAFETY: a NUL-terminated path.
            let fd = unsafe { libc::open(e.path.as_ptr(), FLAGS) };
            assert!(fd >= 0);
            acc += sync_read(fd, e, &mut buf, stat);
            // SAFETY: our descriptor.
            unsafe { libc::close(fd) };
        }
        acc
    })
}

/// Directory descriptors, opened once per chunk's directories.
struct Dirs<'a> {
    tree: &'a Tree,
    open: Vec<(usize, i32)>,
}

impl Dirs<'_> {
    fn fd(&mut self, d: usize) -> i32 {
        if let Some(&(_, fd)) = self.open.iter().find(|(x, _)| *x == d) {
            return fd;
        }
        // SAFETY: a NUL-terminated path.
        let fd = unsafe {
            libc::open(
                self.tree.dirs[d].as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        assert!(fd >= 0);
        self.open.push((d, fd));
        fd
    }
}

impl Drop for Dirs<'_> {
    fn drop(&mut self) {
        for &(_, fd) in &self.open {
            // SAFETY: our descriptors.
            unsafe { libc::close(fd) };
        }
    }
}

fn by_dirfd(tree: &Tree, threads: usize) -> u64 {
    parallel(tree, threads, 64, &|files| {
        let mut buf = vec![0u8; 1 << 20];
        let mut dirs = Dirs { tree, open: Vec::new() };
        let mut acc = 0;
        for e in files {
            let dfd = dirs.fd(e.dir);
            // SAFETY: a NUL-terminated name.
            let fd = unsafe { libc::openat(dfd, e.name.as_ptr(), FLAGS) };
            assert!(fd >= 0);
            acc += sync_read(fd, e, &mut buf, true);
            // SAFETY: our descriptor.
            unsafe { libc::close(fd) };
        }
        acc
    })
}

/// Per thread: a ring, B fixed-file slots and B buffer slots of 64 KiB.
struct Ring {
    ring: IoUring,
    bufs: Vec<Vec<u8>>,
    stats: Vec<libc::statx>,
}

const SLOT: usize = 64 * 1024;

impl Ring {
    fn new(batch: usize) -> Ring {
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build((batch * 5).next_power_of_two() as u32)
            .expect("io_uring");
        ring.submitter().register_files_sparse(batch as u32).unwrap();
        // SAFETY: statx is plain data.
        let zero: libc::statx = unsafe { std::mem::zeroed() };
        Ring { ring, bufs: vec![vec![0u8; SLOT]; batch], stats: vec![zero; 2 * batch] }
    }

    fn push(&mut self, e: squeue::Entry) {
        // SAFETY: every pointer in the entries stays valid until the batch completes.
        unsafe { self.ring.submission().push(&e).expect("queue full") };
    }

    /// Submits and waits for `n` completions; returns (user_data, result) pairs.
    fn complete(&mut self, n: usize) -> Vec<(u64, i32)> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            self.ring.submit_and_wait(n - out.len()).unwrap();
            out.extend(self.ring.completion().map(|c| (c.user_data(), c.result())));
        }
        out
    }
}

/// user_data: file index in the batch << 3 | step.
fn ud(i: usize, step: u64) -> u64 {
    (i as u64) << 3 | step
}

/// How `uring` stats the files.
#[derive(Clone, Copy, PartialEq)]
enum Stat {
    None,
    /// STATX(dirfd, name) in the ring, before OPENAT and after READ.
    Ring,
    /// fstatat(dirfd, name) syscalls, before the batch is submitted and after it is done.
    Sync,
}

fn fstatat(dfd: i32, name: &CString) -> libc::stat {
    // SAFETY: a plain fstatat into a zeroed struct.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        assert_eq!(libc::fstatat(dfd, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW), 0);
        st
    }
}

fn uring(tree: &Tree, threads: usize, batch: usize, how: Stat) -> u64 {
    let stat = how == Stat::Ring;
    parallel(tree, threads, batch, &|files| {
        thread_local! {
            static RING: std::cell::RefCell<Option<Ring>> = const { std::cell::RefCell::new(None) };
        }
        RING.with(|r| {
            let mut r = r.borrow_mut();
            let ring = r.get_or_insert_with(|| Ring::new(batch));
            let mut dirs = Dirs { tree, open: Vec::new() };
            let mut ops = 0;
            let before: Vec<libc::stat> = match how {
                Stat::Sync => files.iter().map(|e| fstatat(dirs.fd(e.dir), &e.name)).collect(),
                _ => Vec::new(),
            };
            for (i, e) in files.iter().enumerate() {
                let dfd = types::Fd(dirs.fd(e.dir));
                let link = squeue::Flags::IO_LINK;
                if stat {
                    let sx = &mut ring.stats[2 * i] as *mut libc::statx as *mut types::statx;
                    let op = opcode::Statx::new(dfd, e.name.as_ptr(), sx)
                        .flags(libc::AT_SYMLINK_NOFOLLOW)
                        .mask(libc::STATX_BASIC_STATS)
                        .build();
                    ring.push(op.flags(link).user_data(ud(i, 0)));
                    ops += 1;
                }
                // A direct descriptor takes no O_CLOEXEC (EINVAL): it is no descriptor.
                let open = opcode::OpenAt::new(dfd, e.name.as_ptr())
                    .flags(FLAGS & !libc::O_CLOEXEC)
                    .file_index(Some(
                        types::DestinationSlot::try_from_slot_target(i as u32).unwrap(),
                    ))
                    .build();
                ring.push(open.flags(link).user_data(ud(i, 1)));
                let buf = ring.bufs[i].as_mut_ptr();
                let read = opcode::Read::new(types::Fixed(i as u32), buf, e.size as u32).build();
                ring.push(read.flags(squeue::Flags::IO_HARDLINK).user_data(ud(i, 2)));
                if stat {
                    let sx = &mut ring.stats[2 * i + 1] as *mut libc::statx as *mut types::statx;
                    let op = opcode::Statx::new(dfd, e.name.as_ptr(), sx)
                        .flags(libc::AT_SYMLINK_NOFOLLOW)
                        .mask(libc::STATX_BASIC_STATS)
                        .build();
                    ring.push(op.flags(squeue::Flags::IO_HARDLINK).user_data(ud(i, 3)));
                    ops += 1;
                }
                let close = opcode::Close::new(types::Fixed(i as u32)).build();
                ring.push(close.user_data(ud(i, 4)));
                ops += 3;
            }
            let mut acc = 0;
            for (u, res) in ring.complete(ops) {
                let (i, step) = ((u >> 3) as usize, u & 7);
                assert!(res >= 0, "step {step} of {:?}: {res}", files[i].path);
                if step == 2 {
                    assert_eq!(res as u64, files[i].size);
                    acc += sum(&ring.bufs[i][..res as usize]);
                }
            }
            if stat {
                for (e, pair) in files.iter().zip(ring.stats.chunks(2)) {
                    let (b, a) = (&pair[0], &pair[1]);
                    assert_eq!(
                        (b.stx_size, b.stx_mtime.tv_nsec),
                        (a.stx_size, a.stx_mtime.tv_nsec)
                    );
                    assert_eq!(b.stx_size, e.size);
                }
            }
            for (e, b) in files.iter().zip(&before) {
                let a = fstatat(dirs.fd(e.dir), &e.name);
                assert_eq!(
                    (a.st_ino, a.st_size, a.st_mtime_nsec),
                    (b.st_ino, b.st_size, b.st_mtime_nsec)
                );
            }
            acc
        })
    })
}

/// Plain descriptors: one submission opens the batch, a second reads (and stats) it.
fn uring_fd(tree: &Tree, threads: usize, batch: usize, ring_stat: bool) -> u64 {
    parallel(tree, threads, batch, &|files| {
        thread_local! {
            static RING: std::cell::RefCell<Option<Ring>> = const { std::cell::RefCell::new(None) };
        }
        RING.with(|r| {
            let mut r = r.borrow_mut();
            let ring = r.get_or_insert_with(|| Ring::new(batch));
            let mut dirs = Dirs { tree, open: Vec::new() };
            for (i, e) in files.iter().enumerate() {
                let dfd = types::Fd(dirs.fd(e.dir));
                let open = opcode::OpenAt::new(dfd, e.name.as_ptr()).flags(FLAGS).build();
                ring.push(open.user_data(ud(i, 1)));
            }
            let mut fds = vec![-1; files.len()];
            for (u, res) in ring.complete(files.len()) {
                assert!(res >= 0);
                fds[(u >> 3) as usize] = res;
            }
            let mut before = Vec::new();
            let mut ops = 0;
            for (i, e) in files.iter().enumerate() {
                let fd = types::Fd(fds[i]);
                if ring_stat {
                    let sx = &mut ring.stats[2 * i] as *mut libc::statx as *mut types::statx;
                    let op = opcode::Statx::new(fd, c"".as_ptr(), sx)
                        .flags(libc::AT_EMPTY_PATH)
                        .mask(libc::STATX_BASIC_STATS)
                        .build();
                    ring.push(op.flags(squeue::Flags::IO_LINK).user_data(ud(i, 0)));
                    ops += 1;
                } else {
                    before.push(fstat(fds[i]));
                }
                let buf = ring.bufs[i].as_mut_ptr();
                let read = opcode::Read::new(fd, buf, e.size as u32).build();
                ring.push(read.flags(squeue::Flags::IO_HARDLINK).user_data(ud(i, 2)));
                ops += 1;
                if ring_stat {
                    let sx = &mut ring.stats[2 * i + 1] as *mut libc::statx as *mut types::statx;
                    let op = opcode::Statx::new(fd, c"".as_ptr(), sx)
                        .flags(libc::AT_EMPTY_PATH)
                        .mask(libc::STATX_BASIC_STATS)
                        .build();
                    ring.push(op.flags(squeue::Flags::IO_HARDLINK).user_data(ud(i, 3)));
                    let close = opcode::Close::new(fd).build();
                    ring.push(close.user_data(ud(i, 4)));
                    ops += 2;
                }
            }
            let mut acc = 0;
            for (u, res) in ring.complete(ops) {
                let (i, step) = ((u >> 3) as usize, u & 7);
                assert!(res >= 0, "step {step}: {res}");
                if step == 2 {
                    acc += sum(&ring.bufs[i][..res as usize]);
                }
            }
            if ring_stat {
                for i in 0..files.len() {
                    let (b, a) = (&ring.stats[2 * i], &ring.stats[2 * i + 1]);
                    assert_eq!(
                        (b.stx_size, b.stx_mtime.tv_nsec),
                        (a.stx_size, a.stx_mtime.tv_nsec)
                    );
                }
            } else {
                // The stat after, then the close, through the ring.
                for (i, b) in before.iter().enumerate() {
                    let a = fstat(fds[i]);
                    assert_eq!((a.st_size, a.st_mtime_nsec), (b.st_size, b.st_mtime_nsec));
                    ring.push(opcode::Close::new(types::Fd(fds[i])).build().user_data(ud(i, 4)));
                }
                ring.complete(files.len());
            }
            acc
        })
    })
}

/// Lists every directory once with `std::fs::read_dir` (what fixity's walk does: glibc's
/// opendir is open + fstat + a 32 KiB buffer, then getdents until 0, then close). Returns
/// the number of entries.
fn list_std(tree: &Tree) -> u64 {
    let mut n = 0;
    for d in &tree.dirs {
        let path = Path::new(std::ffi::OsStr::from_bytes(d.as_bytes()));
        for e in std::fs::read_dir(path).unwrap() {
            let e = e.unwrap();
            n += e.file_type().unwrap().is_file() as u64;
        }
    }
    n
}

/// Lists every directory once with open(O_DIRECTORY) + getdents64 into one reused buffer
/// + close (no fstat, no allocation per directory).
fn list_raw(tree: &Tree) -> u64 {
    let mut buf = vec![0u8; 32 * 1024];
    let mut n = 0;
    for d in &tree.dirs {
        // SAFETY: a NUL-terminated path.
        let fd =
            unsafe { libc::open(d.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        assert!(fd >= 0);
        loop {
            // SAFETY: getdents64 into our buffer.
            let got =
                unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len()) };
            assert!(got >= 0);
            if got == 0 {
                break;
            }
            let mut off = 0usize;
            while off < got as usize {
                // linux_dirent64: ino u64, off i64, reclen u16, type u8, name.
                let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
                n += (buf[off + 18] == libc::DT_REG) as u64;
                off += reclen;
            }
        }
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
    n
}

fn run(tree: &Tree, method: &str) -> u64 {
    if method == "list-std" {
        return list_std(tree);
    }
    if method == "list-raw" {
        return list_raw(tree);
    }
    let parts: Vec<&str> = method.split('-').collect();
    let num = |i: usize| parts[i].parse::<usize>().expect("a number in the method");
    match parts[0] {
        "abs" if parts[1] == "nostat" => by_path(tree, num(2), false),
        "abs" => by_path(tree, num(1), true),
        "at" => by_dirfd(tree, num(1)),
        "uring" => uring(tree, num(1), num(2), Stat::None),
        "uringstat" => uring(tree, num(1), num(2), Stat::Ring),
        "uringsync" => uring(tree, num(1), num(2), Stat::Sync),
        "uringfd" => uring_fd(tree, num(1), num(2), false),
        "uringfdstat" => uring_fd(tree, num(1), num(2), true),
        _ => panic!("unknown method {method}"),
    }
}

/// CPU time of the whole process so far (user + system, every thread, the kernel's
/// io_uring workers included: they belong to the process), in ms.
fn cpu_ms() -> f64 {
    // SAFETY: getrusage into a zeroed struct.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(ru.ru_utime) + ms(ru.ru_stime)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let root =
        PathBuf::from(args.next().expect("usage: smallfiles_probe DIR [ROUNDS] [METHOD...]"));
    let rounds: usize = args.next().map_or(5, |r| r.parse().unwrap());
    let mut methods: Vec<String> = args.collect();
    if methods.is_empty() {
        for t in [1, 2, 4, 8] {
            methods.push(format!("abs-{t}"));
        }
        methods.push("abs-nostat-2".into());
        for t in [1, 2, 4, 8] {
            methods.push(format!("at-{t}"));
        }
        for t in [1, 2] {
            for b in [32, 256] {
                methods.push(format!("uring-{t}-{b}"));
                methods.push(format!("uringstat-{t}-{b}"));
                methods.push(format!("uringfd-{t}-{b}"));
                methods.push(format!("uringfdstat-{t}-{b}"));
            }
        }
    }
    let tree = walk(&root);
    assert!(tree.files.iter().all(|f| f.size as usize <= SLOT), "files over 64 KiB");
    eprintln!("{} files in {} directories", tree.files.len(), tree.dirs.len());
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); methods.len()];
    let mut cpus: Vec<Vec<f64>> = vec![Vec::new(); methods.len()];
    let mut want = None;
    run(&tree, "abs-2"); // warm the cache
    for _ in 0..rounds {
        for ((m, t), c) in methods.iter().zip(&mut times).zip(&mut cpus) {
            let (start, cpu) = (Instant::now(), cpu_ms());
            let got = run(&tree, m);
            t.push(start.elapsed().as_secs_f64() * 1e3);
            c.push(cpu_ms() - cpu);
            if !m.starts_with("list-") {
                assert_eq!(*want.get_or_insert(got), got, "{m} read other bytes");
            }
        }
    }
    println!(
        "{:<20} {:>9} {:>9} {:>9} {:>9}  (ms over {rounds} rounds)",
        "method", "wall best", "median", "cpu best", "median"
    );
    for ((m, t), c) in methods.iter().zip(&mut times).zip(&mut cpus) {
        t.sort_by(f64::total_cmp);
        c.sort_by(f64::total_cmp);
        let mid = t.len() / 2;
        println!("{m:<20} {:>9.1} {:>9.1} {:>9.1} {:>9.1}", t[0], t[mid], c[0], c[mid]);
    }
}
