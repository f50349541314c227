//! faultfs: a small read-only FUSE file system that fails on purpose, for fixity's fault
//! tests (`tests/faults.rs`; how they use it is in `docs/testing.md`).
//!
//! ```text
//! faultfs [--source DIR] [--disarmed] MOUNTPOINT [PATH=SPEC]...
//! ```
//!
//! It serves the tree under `--source DIR` (directories and regular files; other kinds are
//! left out), plus the files the rules add, at MOUNTPOINT, until it is unmounted
//! (`fusermount3 -u MOUNTPOINT`) or sent SIGTERM, SIGINT or SIGHUP (then it unmounts
//! itself); either way it exits 0. A rule `PATH=SPEC` names a file relative to the root;
//! SPEC is a comma-separated list of:
//!
//! - `size=N`: the file's content is N deterministic pseudo-random bytes (made from the
//!   offset alone, so a test can build the same bytes), instead of the source file's;
//! - `ok`: no fault;
//! - `eio@OFF`: every read request whose byte range holds offset OFF fails with EIO (a bad
//!   sector: ranges before or after it still read);
//! - `shrink@OFF:SIZE`: the first read request that reaches OFF (its range ends past OFF),
//!   through a file opened since the file system was last armed (not a queued readahead of
//!   a process that has gone), makes the file SIZE bytes long from then on: that read and
//!   later ones stop at SIZE, and getattr reports SIZE (a truncation while the file is
//!   read). While armed, a read of such a file through a handle opened before the last
//!   arming fails (EIO), so no page a gone process's readahead asked for is cached for the
//!   next one, which then meets the fault with reads of its own;
//! - `grow@OFF:SIZE`: the same, making the file longer; bytes past the original content
//!   are the deterministic pattern;
//! - `stall@OFF:MS`: every read request whose range holds OFF sleeps MS milliseconds, then
//!   succeeds.
//!
//! Sizes and offsets take a `K` or `M` suffix (KiB, MiB). Faults act only while the file
//! system is armed: it starts armed (or disarmed with `--disarmed`); SIGUSR1 arms it and
//! SIGUSR2 disarms it, so a test can record a tree and then make it fail under the same
//! mount (the same device, inodes and times). Arming also puts every file back to its
//! original size, so a shrink or growth happens again (a test can run several tools on
//! the same fault). Each signal is acknowledged by a line on stdout, `armed` or
//! `disarmed`, once it has taken effect.
//!
//! What it models: the kernel sees these faults as a real disk's, through its page cache.
//! Files are opened without `direct_io`, so the kernel caches and memory-maps them as it
//! does any file; a failed read leaves the page not up to date, so `read(2)` returns EIO
//! and a mapped access to that page raises SIGBUS, as on a bad sector. Attribute and entry
//! cache timeouts are 0 and the page cache is dropped at each open, so a change of size is
//! seen by the next `stat`, and a short read moves the kernel's idea of the end of file.
//! Requests go through the kernel's readahead, so the ranges the server is asked for are
//! the kernel's (pages, up to the readahead window), not the application's: a fault "at
//! OFF" hits the request holding OFF, wherever the application's own reads begin.
//!
//! What it does not model: writes (the mount is read-only), timestamps that change with
//! the content (a shrink or growth keeps the mtime, as a fault below the file system
//! would, so a tool that trusts mtime cannot tell), faults of metadata (stat, readdir,
//! open never fail), a device that hangs for ever (a stall always ends), and errors other
//! than EIO.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEntry, ReplyOpen,
    Request,
};

/// Attribute and entry cache timeout: none, so every `stat` asks the server.
const TTL: Duration = Duration::ZERO;

/// One fault of a file.
#[derive(Debug)]
enum Fault {
    /// A read request holding this offset fails with EIO.
    Eio(u64),
    /// Shrink or grow: at the first read reaching `at`, the size becomes `to`.
    Resize { at: u64, to: u64 },
    /// A read request holding `at` waits `ms` milliseconds first.
    Stall { at: u64, ms: u64 },
}

/// Where a file's bytes come from.
#[derive(Debug)]
enum Content {
    /// The source file (its length is the file's original size), then the pattern.
    Source(PathBuf),
    /// The deterministic pattern only.
    Pattern,
}

#[derive(Debug)]
struct FileNode {
    content: Content,
    faults: Vec<Fault>,
    /// What the faults have changed.
    state: Mutex<State>,
    /// The original size: the source file's length, or `size=N`.
    original: u64,
    mtime: SystemTime,
    perm: u16,
}

/// The part of a file that faults change; reset to the original when the file system is
/// armed again.
#[derive(Debug)]
struct State {
    /// The value of `ARMINGS` this state belongs to.
    arming: u64,
    size: u64,
    /// Which resize faults have happened (one flag per fault).
    fired: Vec<bool>,
}

impl FileNode {
    fn new(content: Content, size: u64, mtime: SystemTime, perm: u16) -> FileNode {
        let state = State { arming: 0, size, fired: Vec::new() };
        FileNode {
            content,
            faults: Vec::new(),
            state: Mutex::new(state),
            original: size,
            mtime,
            perm,
        }
    }

    /// The current state, first reset to the original if the file system was armed again
    /// since it was last changed.
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        let mut st = self.state.lock().unwrap();
        let arming = ARMINGS.load(Ordering::SeqCst);
        if st.arming != arming {
            *st = State { arming, size: self.original, fired: vec![false; self.faults.len()] };
        }
        st.fired.resize(self.faults.len(), false);
        st
    }
}

#[derive(Debug)]
enum Kind {
    Dir(Vec<(OsString, u64)>),
    File(FileNode),
}

#[derive(Debug)]
struct Node {
    parent: u64,
    kind: Kind,
}

struct FaultFs {
    /// Inode number i is `nodes[i - 1]`; the root is 1.
    nodes: Vec<Node>,
}

/// Byte `i` of the deterministic pattern: a splitmix64 of the 8-byte block's index.
fn pattern_byte(i: u64) -> u8 {
    let mut z = (i / 8).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    z.to_le_bytes()[(i % 8) as usize]
}

fn parse_size(s: &str) -> Result<u64, String> {
    let (digits, unit) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 1024),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 1024 * 1024),
        _ => (s, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| format!("not a size: {s:?}"))
}

/// Parses `OFF:N` into its two numbers.
fn parse_pair(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s.split_once(':').ok_or_else(|| format!("expected OFF:N, got {s:?}"))?;
    Ok((parse_size(a)?, parse_size(b)?))
}

/// A parsed rule: an optional synthetic size and the faults.
fn parse_spec(spec: &str) -> Result<(Option<u64>, Vec<Fault>), String> {
    let mut size = None;
    let mut faults = Vec::new();
    for item in spec.split(',') {
        if item == "ok" {
            continue;
        }
        if let Some(n) = item.strip_prefix("size=") {
            size = Some(parse_size(n)?);
            continue;
        }
        let (what, arg) = item.split_once('@').ok_or_else(|| format!("unknown item {item:?}"))?;
        faults.push(match what {
            "eio" => Fault::Eio(parse_size(arg)?),
            "shrink" | "grow" => {
                let (at, to) = parse_pair(arg)?;
                Fault::Resize { at, to }
            }
            "stall" => {
                let (at, ms) = parse_pair(arg)?;
                Fault::Stall { at, ms }
            }
            _ => return Err(format!("unknown fault {what:?}")),
        });
    }
    Ok((size, faults))
}

impl FaultFs {
    fn new() -> Self {
        let root = Node { parent: 1, kind: Kind::Dir(Vec::new()) };
        FaultFs { nodes: vec![root] }
    }

    fn node(&self, ino: INodeNo) -> Option<&Node> {
        let i = u64::from(ino);
        if i == 0 { None } else { self.nodes.get(i as usize - 1) }
    }

    /// Adds a node named `name` under directory `parent`; returns its inode number.
    fn add(&mut self, parent: u64, name: &OsStr, kind: Kind) -> u64 {
        let ino = self.nodes.len() as u64 + 1;
        self.nodes.push(Node { parent, kind });
        if let Kind::Dir(children) = &mut self.nodes[parent as usize - 1].kind {
            children.push((name.to_owned(), ino));
        }
        ino
    }

    fn child(&self, parent: u64, name: &OsStr) -> Option<u64> {
        match &self.nodes[parent as usize - 1].kind {
            Kind::Dir(children) => children.iter().find(|(n, _)| n == name).map(|&(_, i)| i),
            Kind::File(_) => None,
        }
    }

    /// Mirrors the tree under `dir` into directory `parent`.
    fn load(&mut self, parent: u64, dir: &Path) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let md = std::fs::symlink_metadata(e.path())?;
            if md.is_dir() {
                let ino = self.add(parent, &e.file_name(), Kind::Dir(Vec::new()));
                self.load(ino, &e.path())?;
            } else if md.is_file() {
                let perm = (md.mode() & 0o7777) as u16;
                let file = FileNode::new(Content::Source(e.path()), md.len(), md.modified()?, perm);
                self.add(parent, &e.file_name(), Kind::File(file));
            }
        }
        Ok(())
    }

    /// Applies the rule `path=spec`, creating the file (and its directories) for `size=N`.
    fn rule(&mut self, path: &str, spec: &str) -> Result<(), String> {
        let (size, faults) = parse_spec(spec)?;
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let (last, dirs) = parts.split_last().ok_or_else(|| format!("empty path in {path:?}"))?;
        let mut dir = 1;
        for d in dirs {
            dir = match self.child(dir, OsStr::new(d)) {
                Some(i) => i,
                None => self.add(dir, OsStr::new(d), Kind::Dir(Vec::new())),
            };
        }
        let existing = self.child(dir, OsStr::new(last));
        let ino = match (existing, size) {
            (_, Some(n)) => {
                let mtime = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
                let file = FileNode::new(Content::Pattern, n, mtime, 0o644);
                match existing {
                    Some(i) => {
                        self.nodes[i as usize - 1].kind = Kind::File(file);
                        i
                    }
                    None => self.add(dir, OsStr::new(last), Kind::File(file)),
                }
            }
            (Some(i), None) => i,
            (None, None) => return Err(format!("{path}: no such file in the source tree")),
        };
        match &mut self.nodes[ino as usize - 1].kind {
            Kind::File(f) => {
                f.faults.extend(faults);
                Ok(())
            }
            Kind::Dir(_) => Err(format!("{path}: a directory")),
        }
    }

    fn attr(&self, ino: u64) -> FileAttr {
        let node = &self.nodes[ino as usize - 1];
        let (kind, size, mtime, perm, nlink) = match &node.kind {
            Kind::Dir(_) => (FileType::Directory, 0, UNIX_EPOCH, 0o755, 2),
            Kind::File(f) => (FileType::RegularFile, f.state().size, f.mtime, f.perm, 1),
        };
        FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: mtime,
            mtime,
            ctime: mtime,
            crtime: mtime,
            kind,
            perm,
            nlink,
            // SAFETY: getuid and getgid cannot fail.
            uid: unsafe { libc::getuid() },
            gid: unsafe { libc::getgid() },
            rdev: 0,
            flags: 0,
            blksize: 4096,
        }
    }

    /// The bytes `[offset, end)` of `f`, within its original content or the pattern.
    fn content(f: &FileNode, offset: u64, end: u64) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0u8; (end - offset) as usize];
        let from_source = match &f.content {
            Content::Source(path) if offset < f.original => {
                let n = (f.original.min(end) - offset) as usize;
                std::fs::File::open(path)?.read_exact_at(&mut buf[..n], offset)?;
                n
            }
            _ => 0,
        };
        for (i, b) in buf.iter_mut().enumerate().skip(from_source) {
            *b = pattern_byte(offset + i as u64);
        }
        Ok(buf)
    }
}

impl Filesystem for FaultFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.node(parent).map(|_| self.child(u64::from(parent), name)) {
            Some(Some(ino)) => reply.entry(&TTL, &self.attr(ino), Generation(0)),
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.node(ino) {
            Some(_) => reply.attr(&TTL, &self.attr(u64::from(ino))),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.node(ino).map(|n| &n.kind) {
            // No FOPEN_DIRECT_IO (the kernel caches and maps the file) and no
            // FOPEN_KEEP_CACHE (each open drops the pages an earlier one cached).
            // The handle is the arming it was opened under: a resize fault fires only
            // for a read through a handle of the current arming (see `read`).
            Some(Kind::File(_)) => {
                reply.opened(FileHandle(ARMINGS.load(Ordering::SeqCst)), FopenFlags::empty())
            }
            Some(Kind::Dir(_)) => reply.error(Errno::EISDIR),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let Some(Kind::File(f)) = self.node(ino).map(|n| &n.kind) else {
            reply.error(Errno::ENOENT);
            return;
        };
        let req_end = offset + u64::from(size);
        let arming = ARMINGS.load(Ordering::SeqCst);
        let holds = |at: u64| offset <= at && at < req_end;
        let resizes = f.faults.iter().any(|x| matches!(x, Fault::Resize { .. }));
        if ARMED.load(Ordering::SeqCst) && resizes && u64::from(fh) != arming {
            // A request through a handle of an earlier arming: the kernel's readahead for
            // a process that has gone, still queued when the test armed again. Served, its
            // pages would sit in the cache of the next process's handle, which would then
            // read them without a request of its own reaching the fault, and see no
            // change. Refused, nothing is cached from it.
            reply.error(Errno::EIO);
            return;
        }
        if ARMED.load(Ordering::SeqCst) {
            for (i, fault) in f.faults.iter().enumerate() {
                match fault {
                    Fault::Eio(at) if holds(*at) => {
                        reply.error(Errno::EIO);
                        return;
                    }
                    Fault::Stall { at, ms } if holds(*at) => {
                        std::thread::sleep(Duration::from_millis(*ms));
                    }
                    // Only a handle opened since the last arming: the kernel's
                    // readahead for a process that has gone (a request still queued when
                    // the test arms again) must not change the file before the next
                    // process has opened it and taken its size.
                    Fault::Resize { at, to } if req_end > *at && u64::from(fh) == arming => {
                        let mut st = f.state();
                        if !st.fired[i] {
                            st.fired[i] = true;
                            st.size = *to;
                        }
                    }
                    _ => {}
                }
            }
        }
        let end = req_end.min(f.state().size);
        if offset >= end {
            reply.data(&[]);
            return;
        }
        match Self::content(f, offset, end) {
            Ok(bytes) => reply.data(&bytes),
            Err(e) => {
                eprintln!("faultfs: reading the source: {e}");
                reply.error(Errno::EIO);
            }
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let Some(Node { parent, kind: Kind::Dir(children) }) = self.node(ino) else {
            reply.error(Errno::ENOTDIR);
            return;
        };
        let mut entries = vec![
            (u64::from(ino), FileType::Directory, OsStr::new(".")),
            (*parent, FileType::Directory, OsStr::new("..")),
        ];
        for (name, child) in children {
            let kind = match self.nodes[*child as usize - 1].kind {
                Kind::Dir(_) => FileType::Directory,
                Kind::File(_) => FileType::RegularFile,
            };
            entries.push((*child, kind, name.as_os_str()));
        }
        for (i, (child, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            // The offset given is the next entry's.
            if reply.add(INodeNo(child), i as u64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }
}

/// Whether faults act: set by SIGUSR1, cleared by SIGUSR2.
static ARMED: AtomicBool = AtomicBool::new(true);
/// How many times SIGUSR1 armed the file system: each time, files are reset to their
/// original size and their resize faults may happen again.
static ARMINGS: AtomicU64 = AtomicU64::new(0);

fn usage(msg: &str) -> ! {
    eprintln!("faultfs: {msg}");
    eprintln!("usage: faultfs [--source DIR] [--disarmed] MOUNTPOINT [PATH=SPEC]...");
    std::process::exit(2);
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    let mut source: Option<PathBuf> = None;
    let mut mountpoint: Option<PathBuf> = None;
    let mut rules: Vec<(String, String)> = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_bytes() {
            b"--source" => {
                source = Some(args.next().unwrap_or_else(|| usage("--source needs a DIR")).into())
            }
            b"--disarmed" => ARMED.store(false, Ordering::SeqCst),
            _ if mountpoint.is_none() => mountpoint = Some(arg.into()),
            _ => {
                let text = arg.to_str().unwrap_or_else(|| usage("a rule is not UTF-8"));
                let (p, s) = text.split_once('=').unwrap_or_else(|| usage("a rule is PATH=SPEC"));
                rules.push((p.to_owned(), s.to_owned()));
            }
        }
    }
    let mountpoint = mountpoint.unwrap_or_else(|| usage("no MOUNTPOINT"));
    let mountpoint = std::path::absolute(&mountpoint).unwrap_or(mountpoint);
    let mut fs = FaultFs::new();
    if let Some(dir) = &source
        && let Err(e) = fs.load(1, dir)
    {
        usage(&format!("{}: {e}", dir.display()));
    }
    for (path, spec) in &rules {
        if let Err(e) = fs.rule(path, spec) {
            usage(&e);
        }
    }

    // Block the signals this thread waits for before any other thread starts, so that
    // every thread inherits the mask and they all reach `sigtimedwait` below.
    // SAFETY: plain libc calls on a local, initialized signal set.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGUSR1, libc::SIGUSR2, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };

    let mut config = Config::default();
    config.mount_options.extend([
        MountOption::RO,
        MountOption::FSName("faultfs".into()),
        MountOption::Subtype("faultfs".into()),
    ]);
    // Several threads, so a stalled read does not hold up the others.
    config.n_threads = Some(4);
    let session = match fuser::spawn_mount(fs, &mountpoint, &config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("faultfs: mounting {}: {e}", mountpoint.display());
            std::process::exit(1);
        }
    };
    let mut unmounted = false;
    loop {
        let wait = libc::timespec { tv_sec: 0, tv_nsec: 100_000_000 };
        // SAFETY: `set` is initialized; a null info pointer is allowed.
        let sig = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &wait) };
        match sig {
            libc::SIGUSR1 | libc::SIGUSR2 => {
                if sig == libc::SIGUSR1 {
                    ARMINGS.fetch_add(1, Ordering::SeqCst);
                }
                ARMED.store(sig == libc::SIGUSR1, Ordering::SeqCst);
                // Acknowledge, for a test that waits before reading.
                let word = if sig == libc::SIGUSR1 { "armed" } else { "disarmed" };
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{word}").and_then(|()| out.flush());
            }
            libc::SIGTERM | libc::SIGINT | libc::SIGHUP => break,
            _ => {}
        }
        if session.guard.is_finished() {
            // Unmounted from outside: the session has ended.
            unmounted = true;
            break;
        }
    }
    // Unmounts (unless that was done from outside) and waits for the session's threads.
    let end = if unmounted { session.join() } else { session.umount_and_join() };
    if let Err(e) = end {
        eprintln!("faultfs: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!(parse_size("5M"), Ok(5 * 1024 * 1024));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("17"), Ok(17));
        assert!(parse_size("5G").is_err());
        let (size, faults) = parse_spec("size=8M,eio@5M,shrink@3M:2M,stall@1K:1500,ok").unwrap();
        assert_eq!(size, Some(8 * 1024 * 1024));
        assert!(matches!(faults[0], Fault::Eio(o) if o == 5 * 1024 * 1024));
        assert!(matches!(faults[1], Fault::Resize { at, to } if at == 3 << 20 && to == 2 << 20));
        assert!(matches!(faults[2], Fault::Stall { at: 1024, ms: 1500 }));
        assert_eq!(faults.len(), 3);
        assert!(parse_spec("eio").is_err());
        assert!(parse_spec("shrink@5M").is_err());
        assert!(parse_spec("melt@5M").is_err());
    }

    #[test]
    fn rules_add_files_and_directories() {
        let mut fs = FaultFs::new();
        fs.rule("d/e/x", "size=10,eio@3").unwrap();
        let d = fs.child(1, OsStr::new("d")).unwrap();
        let e = fs.child(d, OsStr::new("e")).unwrap();
        let x = fs.child(e, OsStr::new("x")).unwrap();
        assert_eq!(fs.attr(x).size, 10);
        assert_eq!(fs.attr(e).kind, FileType::Directory);
        // A rule for a file that is neither in the source tree nor given a size.
        assert!(fs.rule("nothere", "eio@3").is_err());
        assert!(fs.rule("d", "eio@3").is_err());
    }

    #[test]
    fn content_is_the_pattern_past_the_source() {
        let f = FileNode::new(Content::Pattern, 16, UNIX_EPOCH, 0o644);
        let bytes = FaultFs::content(&f, 4, 12).unwrap();
        let expected: Vec<u8> = (4..12).map(pattern_byte).collect();
        assert_eq!(bytes, expected);
        // Not a constant run.
        assert!(expected.windows(2).any(|w| w[0] != w[1]));
    }
}
