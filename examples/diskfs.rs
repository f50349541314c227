//! diskfs: a spinning disk modelled in a read-only FUSE file system, for fixity's storage
//! benchmarks (`bench/disk-model.sh`; what it models and what not: docs/benchmarks.md, "The
//! disk model").
//!
//! ```text
//! diskfs [--mbps N] [--rpm N] [--seek MIN:MAX] [--track SIZE] [--capacity SIZE]
//!        [--inodes placement|source] SOURCE MOUNTPOINT
//! ```
//!
//! It serves the tree under SOURCE (directories and regular files) at MOUNTPOINT until it
//! is unmounted (`fusermount3 -u MOUNTPOINT`) or sent SIGTERM, SIGINT or SIGHUP (then it
//! unmounts itself). SIGUSR1 makes it print what the disk did since the last SIGUSR1 (read
//! requests, seeks, bytes, seconds busy) as one line on stdout; so does the end.
//!
//! The model: the files lie one after another on one platter, in the order their data
//! lies on SOURCE's own disk (its first extent, from FIEMAP; its inode number where the file
//! system does not say). FUSE passes no FIEMAP on, so the place of a file shows in its
//! inode number instead: files are numbered in the order they lie (`--inodes placement`,
//! the default: a file system that says where its files are, as ext4 or XFS do through
//! FIEMAP), or keep SOURCE's numbers (`--inodes source`: one that does not, where inode
//! order only approximates the placement). One head serves one read request
//! at a time (the kernel's requests: readahead windows of up to 128 KiB, or the
//! application's own size with `O_DIRECT`). A request that starts where the last one ended
//! costs only its transfer (`--mbps`, 150 MB/s); one that starts a little further on the
//! same track (`--track`, 1 MiB) also waits while the gap passes under the head; any other
//! costs a seek, MIN + (MAX - MIN) * sqrt(distance / capacity) ms (`--seek`, 0.6:7), and half a
//! rotation (`--rpm`, 7200: 4.17 ms). The defaults make a random 4 KiB read across the data
//! cost about 8.2 ms on average: about 120 per second. `--capacity` (default: the data's
//! size, as if it filled the disk) places the data on a larger disk: shorter seeks.
//!
//! Each open drops the file's pages from the kernel's page cache (no `FOPEN_KEEP_CACHE`),
//! so every run is cold. Metadata (lookup, stat, readdir) is answered from memory at once:
//! a real disk would read directories and inodes too.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEntry, ReplyOpen,
    Request,
};

/// Attribute and entry cache timeout: the tree never changes.
const TTL: Duration = Duration::from_secs(3600);
/// Files start on 4 KiB boundaries of the platter.
const BLOCK: u64 = 4096;

/// The disk's figures.
#[derive(Clone, Copy, Debug)]
struct Figures {
    /// Transfer rate, bytes per second.
    bytes_per_s: f64,
    /// Half a rotation, seconds: the average wait for the sector after a seek.
    half_turn: f64,
    /// Shortest and longest seek, seconds.
    seek: (f64, f64),
    /// Bytes on one track: a forward gap within it costs its passing, not a seek.
    track: u64,
    /// Bytes the seek distances are measured against.
    capacity: u64,
    /// Files numbered in the order they lie on the platter (else SOURCE's numbers).
    placement_inodes: bool,
}

impl Figures {
    /// Seconds to serve `len` bytes at `to` with the head at `head`.
    fn cost(&self, head: u64, to: u64, len: u64) -> (f64, bool) {
        let transfer = len as f64 / self.bytes_per_s;
        if to == head {
            return (transfer, false);
        }
        if to > head && to - head <= self.track {
            return ((to - head) as f64 / self.bytes_per_s + transfer, false);
        }
        let d = head.abs_diff(to).min(self.capacity) as f64 / self.capacity.max(1) as f64;
        let seek = self.seek.0 + (self.seek.1 - self.seek.0) * d.sqrt();
        (seek + self.half_turn + transfer, true)
    }
}

/// The head and what it has done.
#[derive(Debug, Default)]
struct Head {
    at: u64,
    reads: u64,
    seeks: u64,
    bytes: u64,
    busy: f64,
}

#[derive(Debug)]
struct FileNode {
    source: PathBuf,
    size: u64,
    /// Where the file starts on the platter.
    start: u64,
    mtime: SystemTime,
    perm: u16,
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

struct DiskFs {
    /// By inode number (SOURCE's; the root is 1).
    nodes: HashMap<u64, Node>,
    figures: Figures,
    head: Arc<Mutex<Head>>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    let (digits, unit) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 1 << 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&s[..s.len() - 1], 1 << 30),
        Some(b'T' | b't') => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| format!("not a size: {s:?}"))
}

impl DiskFs {
    /// The tree under `source`, laid out on the platter as described in the module notes.
    fn load(source: &Path, mut figures: Figures) -> std::io::Result<DiskFs> {
        let mut nodes = HashMap::new();
        nodes.insert(1, Node { parent: 1, kind: Kind::Dir(Vec::new()) });
        let dev = std::fs::metadata(source)?.dev();
        let mut files = Vec::new();
        Self::walk(&mut nodes, &mut files, 1, source, dev)?;
        // Where each file's data lies on SOURCE's disk, then one after another on ours.
        let mut placed: Vec<(u64, u64, u64)> = files
            .iter()
            .map(|&ino| {
                let Kind::File(f) = &nodes[&ino].kind else { unreachable!() };
                let extent = std::fs::File::open(&f.source)
                    .ok()
                    .and_then(|file| fixity::device::first_extent(&file));
                (extent.unwrap_or(u64::MAX), ino, f.size)
            })
            .collect();
        placed.sort_unstable();
        let mut at = 0;
        for &(_, ino, size) in &placed {
            if let Some(Node { kind: Kind::File(f), .. }) = nodes.get_mut(&ino) {
                f.start = at;
            }
            at += size.div_ceil(BLOCK).max(1) * BLOCK;
        }
        if figures.capacity == 0 {
            figures.capacity = at;
        }
        if figures.placement_inodes {
            let files = placed.iter().map(|p| p.1);
            nodes = Self::renumber(nodes, files.collect());
        }
        Ok(DiskFs { nodes, figures, head: Arc::default() })
    }

    /// The tree with files numbered 2, 3, ... in the order of `files`, and directories
    /// after them (the root stays 1).
    fn renumber(nodes: HashMap<u64, Node>, files: Vec<u64>) -> HashMap<u64, Node> {
        let mut dirs: Vec<u64> = nodes
            .iter()
            .filter(|(ino, n)| **ino != 1 && matches!(n.kind, Kind::Dir(_)))
            .map(|(ino, _)| *ino)
            .collect();
        dirs.sort_unstable();
        let new: HashMap<u64, u64> = files
            .into_iter()
            .chain(dirs)
            .enumerate()
            .map(|(i, old)| (old, i as u64 + 2))
            .chain([(1, 1)])
            .collect();
        nodes
            .into_iter()
            .map(|(ino, mut node)| {
                node.parent = new[&node.parent];
                if let Kind::Dir(children) = &mut node.kind {
                    for (_, child) in children.iter_mut() {
                        *child = new[child];
                    }
                }
                (new[&ino], node)
            })
            .collect()
    }

    /// Mirrors `dir` into the directory `parent`, leaving out what is on another device.
    fn walk(
        nodes: &mut HashMap<u64, Node>,
        files: &mut Vec<u64>,
        parent: u64,
        dir: &Path,
        dev: u64,
    ) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let md = std::fs::symlink_metadata(e.path())?;
            // Inode 1 is the root's here; no file system gives it to a file or directory.
            if md.dev() != dev || md.ino() <= 1 || !(md.is_dir() || md.is_file()) {
                continue;
            }
            let ino = md.ino();
            let kind = if md.is_dir() {
                Kind::Dir(Vec::new())
            } else {
                files.push(ino);
                Kind::File(FileNode {
                    source: e.path(),
                    size: md.len(),
                    start: 0,
                    mtime: md.modified()?,
                    perm: (md.mode() & 0o7777) as u16,
                })
            };
            nodes.insert(ino, Node { parent, kind });
            if let Some(Node { kind: Kind::Dir(children), .. }) = nodes.get_mut(&parent) {
                children.push((e.file_name(), ino));
            }
            if md.is_dir() {
                Self::walk(nodes, files, ino, &e.path(), dev)?;
            }
        }
        Ok(())
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let (kind, size, mtime, perm, nlink) = match &self.nodes.get(&ino)?.kind {
            Kind::Dir(_) => (FileType::Directory, 0, UNIX_EPOCH, 0o755, 2),
            Kind::File(f) => (FileType::RegularFile, f.size, f.mtime, f.perm, 1),
        };
        Some(FileAttr {
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
        })
    }

    /// Moves the head for a read of `len` bytes at `to` and waits as long as the disk
    /// would, holding the head meanwhile (one request at a time).
    fn serve(&self, to: u64, len: u64) {
        let mut head = self.head.lock().unwrap_or_else(|e| e.into_inner());
        let (secs, seek) = self.figures.cost(head.at, to, len);
        let until = Instant::now() + Duration::from_secs_f64(secs);
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            std::thread::sleep(left);
        }
        head.at = to + len;
        head.reads += 1;
        head.seeks += u64::from(seek);
        head.bytes += len;
        head.busy += secs;
    }
}

impl Filesystem for DiskFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let found = match self.nodes.get(&u64::from(parent)).map(|n| &n.kind) {
            Some(Kind::Dir(children)) => children.iter().find(|(n, _)| n == name),
            _ => None,
        };
        match found.and_then(|&(_, ino)| self.attr(ino)) {
            Some(attr) => reply.entry(&TTL, &attr, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(u64::from(ino)) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.nodes.get(&u64::from(ino)).map(|n| &n.kind) {
            // No FOPEN_KEEP_CACHE: each open drops the pages an earlier one cached.
            Some(Kind::File(_)) => reply.opened(FileHandle(0), FopenFlags::empty()),
            Some(Kind::Dir(_)) => reply.error(Errno::EISDIR),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let Some(Kind::File(f)) = self.nodes.get(&u64::from(ino)).map(|n| &n.kind) else {
            reply.error(Errno::ENOENT);
            return;
        };
        let end = (offset + u64::from(size)).min(f.size);
        if offset >= end {
            reply.data(&[]);
            return;
        }
        self.serve(f.start + offset, end - offset);
        let mut buf = vec![0u8; (end - offset) as usize];
        match std::fs::File::open(&f.source).and_then(|s| s.read_exact_at(&mut buf, offset)) {
            Ok(()) => reply.data(&buf),
            Err(e) => {
                eprintln!("diskfs: reading {}: {e}", f.source.display());
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
        let Some(Node { parent, kind: Kind::Dir(children) }) = self.nodes.get(&u64::from(ino))
        else {
            reply.error(Errno::ENOTDIR);
            return;
        };
        let mut entries = vec![
            (u64::from(ino), FileType::Directory, OsStr::new(".")),
            (*parent, FileType::Directory, OsStr::new("..")),
        ];
        for (name, child) in children {
            let kind = match self.nodes[child].kind {
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

fn usage(msg: &str) -> ! {
    eprintln!("diskfs: {msg}");
    eprintln!(
        "usage: diskfs [--mbps N] [--rpm N] [--seek MIN:MAX] [--track SIZE] [--capacity SIZE] \
         [--inodes placement|source] SOURCE MOUNTPOINT"
    );
    std::process::exit(2);
}

/// The figures the command line sets (the module notes give the defaults and why).
fn figures(args: &mut Vec<OsString>) -> Figures {
    let mut f = Figures {
        bytes_per_s: 150e6,
        half_turn: 0.5 * 60.0 / 7200.0,
        seek: (0.6e-3, 7e-3),
        track: 1 << 20,
        capacity: 0,
        placement_inodes: true,
    };
    let number = |v: Option<&OsString>, what: &str| -> f64 {
        v.and_then(|v| v.to_str()?.parse().ok())
            .filter(|n: &f64| *n > 0.0)
            .unwrap_or_else(|| usage(&format!("{what} needs a positive number")))
    };
    let size = |v: Option<&OsString>, what: &str| -> u64 {
        let text = v.and_then(|v| v.to_str()).unwrap_or_else(|| usage(&format!("{what}: SIZE")));
        parse_size(text).unwrap_or_else(|e| usage(&e))
    };
    let mut rest = Vec::new();
    let mut it = args.drain(..);
    while let Some(a) = it.next() {
        match a.as_bytes() {
            b"--mbps" => f.bytes_per_s = number(it.next().as_ref(), "--mbps") * 1e6,
            b"--rpm" => f.half_turn = 0.5 * 60.0 / number(it.next().as_ref(), "--rpm"),
            b"--track" => f.track = size(it.next().as_ref(), "--track"),
            b"--capacity" => f.capacity = size(it.next().as_ref(), "--capacity"),
            b"--inodes" => {
                f.placement_inodes = match it.next().as_ref().map(|v| v.as_bytes()) {
                    Some(b"placement") => true,
                    Some(b"source") => false,
                    _ => usage("--inodes placement or --inodes source"),
                }
            }
            b"--seek" => {
                let v = it.next();
                let text = v.as_ref().and_then(|v| v.to_str()).unwrap_or("");
                let (a, b) = text.split_once(':').unwrap_or_else(|| usage("--seek MIN:MAX"));
                let ms = |s: &str| s.parse::<f64>().unwrap_or_else(|_| usage("--seek MIN:MAX"));
                f.seek = (ms(a) / 1e3, ms(b) / 1e3);
            }
            _ => rest.push(a),
        }
    }
    drop(it);
    *args = rest;
    f
}

fn main() {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let figures = figures(&mut args);
    let [source, mountpoint] =
        <[OsString; 2]>::try_from(args).unwrap_or_else(|_| usage("needs SOURCE and MOUNTPOINT"));
    let mountpoint = PathBuf::from(mountpoint);
    let mountpoint = std::path::absolute(&mountpoint).unwrap_or(mountpoint);
    let fs = DiskFs::load(Path::new(&source), figures)
        .unwrap_or_else(|e| usage(&format!("{}: {e}", Path::new(&source).display())));
    let head = fs.head.clone();
    eprintln!("diskfs: {:?}", fs.figures);

    // Block the signals this thread waits for before any other thread starts.
    // SAFETY: plain libc calls on a local, initialized signal set.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGUSR1, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    let mut config = Config::default();
    config.mount_options.extend([
        MountOption::RO,
        MountOption::FSName("diskfs".into()),
        MountOption::Subtype("diskfs".into()),
    ]);
    // Metadata is answered while the head is busy; reads queue for the head.
    config.n_threads = Some(4);
    let session = match fuser::spawn_mount(fs, &mountpoint, &config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("diskfs: mounting {}: {e}", mountpoint.display());
            std::process::exit(1);
        }
    };
    let mut unmounted = false;
    loop {
        let wait = libc::timespec { tv_sec: 0, tv_nsec: 100_000_000 };
        // SAFETY: `set` is initialized; a null info pointer is allowed.
        let sig = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &wait) };
        if sig == libc::SIGUSR1 {
            report(&head);
        }
        if matches!(sig, libc::SIGTERM | libc::SIGINT | libc::SIGHUP) {
            break;
        }
        if session.guard.is_finished() {
            unmounted = true;
            break;
        }
    }
    let end = if unmounted { session.join() } else { session.umount_and_join() };
    report(&head);
    if let Err(e) = end {
        eprintln!("diskfs: {e}");
        std::process::exit(1);
    }
}

/// Prints what the head did since the last report, and starts counting again.
fn report(head: &Mutex<Head>) {
    use std::io::Write;
    let h = {
        let mut g = head.lock().unwrap_or_else(|e| e.into_inner());
        let at = g.at;
        std::mem::replace(&mut *g, Head { at, ..Head::default() })
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "diskfs: {} read requests, {} seeks, {} bytes, {:.3} s busy",
        h.reads, h.seeks, h.bytes, h.busy
    )
    .and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk() -> Figures {
        Figures {
            bytes_per_s: 150e6,
            half_turn: 0.5 * 60.0 / 7200.0,
            seek: (0.6e-3, 7e-3),
            track: 1 << 20,
            capacity: 1 << 30,
            placement_inodes: true,
        }
    }

    #[test]
    fn sequential_reads_cost_their_transfer_and_jumps_a_seek() {
        let f = disk();
        let (t, seek) = f.cost(1000, 1000, 150_000);
        assert!(!seek && (t - 0.001).abs() < 1e-12);
        // A small gap on the track passes under the head.
        let (t, seek) = f.cost(0, 150_000, 150_000);
        assert!(!seek && (t - 0.002).abs() < 1e-12);
        // Backwards, or far: a seek and half a turn.
        let (t, seek) = f.cost(5000, 0, 0);
        assert!(seek && t > f.seek.0 + f.half_turn && t < f.seek.0 + f.half_turn + 1e-4);
        let (t, _) = f.cost(0, 1 << 30, 0);
        assert!((t - (f.seek.1 + f.half_turn)).abs() < 1e-12, "full stroke");
    }

    #[test]
    fn random_reads_average_about_120_a_second() {
        // The mean over pairs of evenly spread positions: E[sqrt(|u - v|)] = 8/15.
        let f = disk();
        let n = 400u64;
        let mut total = 0.0;
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let (a, b) = (i * (f.capacity / n), j * (f.capacity / n));
                    total += f.cost(a, b, 4096).0;
                }
            }
        }
        let per_s = 1.0 / (total / (n * (n - 1)) as f64);
        assert!((110.0..130.0).contains(&per_s), "{per_s:.0} reads/s");
    }

    #[test]
    fn files_are_numbered_in_the_order_they_lie() {
        let dir = std::env::temp_dir().join(format!("diskfs-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for name in ["b", "a", "sub/c"] {
            std::fs::write(dir.join(name), name.repeat(5000)).unwrap();
        }
        let fs = DiskFs::load(&dir, disk()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let mut files: Vec<(u64, u64)> = fs
            .nodes
            .iter()
            .filter_map(|(ino, n)| match &n.kind {
                Kind::File(f) => Some((*ino, f.start)),
                Kind::Dir(_) => None,
            })
            .collect();
        files.sort_unstable();
        assert_eq!(files.iter().map(|f| f.0).collect::<Vec<_>>(), [2, 3, 4]);
        assert!(files.windows(2).all(|w| w[0].1 < w[1].1), "{files:?}");
        // Every directory entry leads to a node, and every node's parent is a directory.
        for node in fs.nodes.values() {
            assert!(matches!(fs.nodes[&node.parent].kind, Kind::Dir(_)));
            if let Kind::Dir(children) = &node.kind {
                assert!(children.iter().all(|(_, c)| fs.nodes.contains_key(c)));
            }
        }
        assert_eq!(fs.nodes.len(), 5, "root, sub and three files");
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert_eq!(parse_size("64k"), Ok(65536));
        assert!(parse_size("x").is_err());
    }
}
