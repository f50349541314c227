//! Reading a file once and feeding every requested hasher: open, stat, read with a large
//! reused buffer (or map a large file for BLAKE3's multi-threaded tree), stat again. A file
//! whose size or mtime moved while it was read is reported as changed, never given a digest.
//! With `unsafe` for the memory map (guarded by [`crate::mapping`]) and `preadv2`.

use crate::algo::{Algorithm, Hasher, Input, Strength};
use crate::digest::Digest;
use crate::mapping::{self, FaultKind, Mapping};
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// How a path is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Found by walking a tree: symlinks are not followed (unless the walk follows them),
    /// the open never blocks, and only regular files are read.
    Walked { follow: bool },
    /// Named by the user (on the command line or in a manifest): symlinks are followed and
    /// FIFOs are read, as coreutils does; directories are an error.
    Named,
    /// Named in a manifest checked with `--confine`: as `Named`, but resolved beneath the
    /// current directory; a path that leads out of it (through a symlink) is refused with
    /// [`ReadError::Escapes`] (see [`crate::confine`]).
    Beneath,
    /// Standard input.
    Stdin,
}

/// Tuning for reads.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// Size of each read.
    pub buffer_size: usize,
    /// Map files at least this large when an algorithm can hash a mapping with several
    /// threads (BLAKE3). `None` turns mapping off (rotational disks, `--no-mmap`).
    pub mmap_threshold: Option<u64>,
    /// Files never to read (device, inode): the manifest being written and the one it
    /// replaces.
    pub skip_inodes: [Option<(u64, u64)>; 2],
    /// Bytes hashed so far, added to as each chunk is hashed (for a progress bar that moves
    /// inside large files too).
    pub progress: Option<&'static AtomicU64>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            buffer_size: 512 * 1024,
            mmap_threshold: Some(64 * 1024),
            skip_inodes: [None; 2],
            progress: None,
        }
    }
}

/// A file read to the end and hashed.
#[derive(Clone, Debug)]
pub struct Hashed {
    /// Bytes read.
    pub size: u64,
    /// Modification time (ns since the epoch) at the start of the read, if a file.
    pub mtime_ns: Option<i128>,
    /// One digest per requested algorithm, in the order requested.
    pub digests: Vec<Digest>,
    /// (device, inode) of a regular file.
    pub file_id: Option<(u64, u64)>,
}

/// What identifies a version of a file without reading it: size and modification time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
}

impl Stamp {
    /// The stamp of a file's metadata.
    pub fn of(md: &Metadata) -> Stamp {
        Stamp { size: md.len(), mtime_ns: mtime_ns(md) }
    }

    /// Whether `other` is the same version: equal sizes and mtimes no more than
    /// `window_ns` apart (0 for exact; file systems such as FAT and SMB shares keep
    /// coarse or drifting times, hence `--modify-window`).
    pub fn matches(&self, other: &Stamp, window_ns: i128) -> bool {
        self.size == other.size && (self.mtime_ns - other.mtime_ns).abs() <= window_ns
    }
}

/// Why a file got no digest.
#[derive(Debug)]
pub enum ReadError {
    /// open/read failed.
    Io(io::Error),
    /// Size or mtime changed between the stat before and the stat after the read.
    Changed,
    /// Not a regular file (walked entries only): the kind, for the warning.
    NotRegular(&'static str),
    /// A symlink met during a walk that does not follow them.
    Symlink,
    /// The manifest being written (`-o` inside the tree): never listed in itself.
    OwnOutput,
    /// A sampled algorithm (imohash) asked of an input whose size is unknown before
    /// reading (standard input, a pipe): its samples are placed by the size. The
    /// algorithm's name.
    NeedsSize(&'static str),
    /// A path that leads out of the confining directory through a symlink (`Beneath`).
    Escapes,
}

impl ReadError {
    /// The message coreutils-style tools print after `PATH: `.
    pub fn message(&self) -> String {
        match self {
            ReadError::Io(e) => io_message(e),
            ReadError::Changed => "file changed while it was being read".into(),
            ReadError::NotRegular(kind) => format!("skipping {kind}"),
            ReadError::Symlink => "symbolic link not followed (use -L to follow)".into(),
            ReadError::OwnOutput => "the manifest being written".into(),
            ReadError::NeedsSize(name) => format!(
                "{name} samples a file at offsets set by its size, and a stream has no size \
                 before it is read (hash a regular file, or pick another algorithm)"
            ),
            ReadError::Escapes => "the path escapes the tree through a symbolic link".into(),
        }
    }

    /// Whether this is only a notice (the entry was skipped on purpose) rather than a
    /// failure that makes the exit status non-zero.
    pub fn is_skip(&self) -> bool {
        matches!(self, ReadError::NotRegular(_) | ReadError::Symlink | ReadError::OwnOutput)
    }
}

/// An I/O error as coreutils prints it: the C library's text without Rust's
/// " (os error N)" suffix.
pub fn io_message(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Describes a non-regular file type for messages.
pub fn kind_name(ft: &std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "directory"
    } else if ft.is_fifo() {
        "FIFO"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_char_device() {
        "character device"
    } else if ft.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

/// Modification time in nanoseconds since the epoch.
pub fn mtime_ns(md: &Metadata) -> i128 {
    md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128
}

/// Opens, reads and hashes `path` with every algorithm in `algos`. `buf` is the caller's
/// reusable read buffer. With `serial` (a rotational disk), only the holder of that lock
/// reads, so the disk sees one sequential stream: a small file is read whole under the lock
/// and hashed after it is released (hashing stays parallel); a large one is read and hashed
/// under the lock, front to back.
pub fn hash_path(
    path: &Path,
    mode: OpenMode,
    algos: &[&'static Algorithm],
    buf: &mut Vec<u8>,
    opts: &ReadOptions,
    serial: Option<&Mutex<()>>,
) -> Result<Hashed, ReadError> {
    let mut hashers: Vec<Box<dyn Hasher>> = algos.iter().map(|a| a.hasher()).collect();
    let sampled = algos.iter().find(|a| a.strength == Strength::Sampled);
    if mode == OpenMode::Stdin {
        if let Some(a) = sampled {
            return Err(ReadError::NeedsSize(a.name));
        }
        begin(&mut hashers, &Input { size: None, name: Input::STDIN_NAME });
        let stdin = io::stdin();
        let mut lock = stdin.lock();
        let size = read_into(&mut lock, &mut hashers, buf, opts.buffer_size, None, opts.progress)
            .map_err(ReadError::Io)?;
        return Ok(Hashed { size, mtime_ns: None, digests: finish(&hashers), file_id: None });
    }
    let file = open(path, mode)?;
    let before = file.metadata().map_err(ReadError::Io)?;
    if opts.skip_inodes.contains(&Some((before.dev(), before.ino()))) {
        return Err(ReadError::OwnOutput);
    }
    let ft = before.file_type();
    if ft.is_dir() {
        return Err(ReadError::Io(io::Error::from_raw_os_error(libc::EISDIR)));
    }
    let path_bytes = path.as_os_str().as_encoded_bytes();
    if !ft.is_file() {
        if let OpenMode::Walked { .. } = mode {
            return Err(ReadError::NotRegular(kind_name(&ft)));
        }
        if let Some(a) = sampled {
            return Err(ReadError::NeedsSize(a.name));
        }
        // A FIFO or device named by the user: read it as a stream, as coreutils does.
        begin(&mut hashers, &Input::for_path(path_bytes, None));
        let mut f = &file;
        let size = read_into(&mut f, &mut hashers, buf, opts.buffer_size, None, opts.progress)
            .map_err(ReadError::Io)?;
        return Ok(Hashed { size, mtime_ns: None, digests: finish(&hashers), file_id: None });
    }
    begin(&mut hashers, &Input::for_path(path_bytes, Some(before.len())));
    let len = before.len();
    let sampled_only = sampled.is_some() && algos.iter().all(|a| a.strength == Strength::Sampled);
    // Map large files instead of copying them through a buffer: from `mmap_threshold` for
    // an algorithm that hashes a mapping on several threads (BLAKE3), from 4 MiB for the
    // others (below that, mapping costs more than the copy it saves).
    let mapped = match opts.mmap_threshold {
        Some(t) if !sampled_only => {
            let parallel = hashers.len() == 1 && algos[0].multithreaded;
            let min = if parallel { t } else { t.max(4 * 1024 * 1024) };
            if len >= min {
                hash_mapped(&file, len, &mut hashers, parallel, serial.is_some(), opts.progress)
            } else {
                None
            }
        }
        _ => None,
    };
    let size = match mapped {
        Some(r) => r?,
        // Only sampled algorithms: read their ranges, not the file.
        None if sampled_only => read_samples(&file, len, &mut hashers, buf, opts.progress)?,
        None if let Some(lock) = serial => {
            advise_sequential(&file, len);
            read_serial(&file, &mut hashers, buf, opts.buffer_size, len, lock, opts.progress)
                .map_err(ReadError::Io)?
        }
        None => {
            advise_sequential(&file, len);
            let mut f = &file;
            read_into(&mut f, &mut hashers, buf, opts.buffer_size, Some(len), opts.progress)
                .map_err(ReadError::Io)?
        }
    };
    let after = file.metadata().map_err(ReadError::Io)?;
    let same_stat = mtime_ns(&before) == mtime_ns(&after) && before.len() == after.len();
    if !same_stat || (size != after.len() && !sized_by_content(&file)) {
        return Err(ReadError::Changed);
    }
    Ok(Hashed {
        size,
        mtime_ns: Some(mtime_ns(&before)),
        digests: finish(&hashers),
        file_id: Some((before.dev(), before.ino())),
    })
}

/// Whether `file` lives on a kernel pseudo file system (procfs, sysfs, ...), whose regular
/// files report a size (0, or one page) that has nothing to do with what a read returns:
/// there, the bytes read are the content, as `sha256sum /proc/cpuinfo` takes them. Asked
/// only when a read's length and the stat's size disagree, so it costs nothing otherwise.
fn sized_by_content(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // Magic numbers from linux/magic.h.
    const PSEUDO: [i64; 9] = [
        0x9fa0,     // proc
        0x62656572, // sysfs
        0x64626720, // debugfs
        0x74726163, // tracefs
        0x73636673, // securityfs
        0x62656570, // configfs
        0x27e0eb,   // cgroup
        0x63677270, // cgroup2
        0xcafe4a11, // bpf
    ];
    // SAFETY: a zeroed statfs is a valid buffer for fstatfs to fill; the descriptor is open.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) };
    r == 0 && PSEUDO.contains(&(st.f_type as i64))
}

/// Reads a regular file for a rotational disk. Data already in the page cache is read
/// without waiting (`preadv2(RWF_NOWAIT)`) and without the lock, so a warm tree hashes on
/// every core; the first read that would wait for the disk takes the lock, and the rest
/// of the file is read under it, so the disk serves one file at a time, front to back.
fn read_serial(
    file: &File,
    hashers: &mut [Box<dyn Hasher>],
    buf: &mut Vec<u8>,
    buffer_size: usize,
    len: u64,
    lock: &Mutex<()>,
    progress: Option<&AtomicU64>,
) -> io::Result<u64> {
    use std::os::unix::fs::FileExt;
    if buf.len() < buffer_size {
        // A fresh zeroed allocation (calloc: pages zeroed lazily by the kernel), not a
        // byte-by-byte fill; the old contents are scratch.
        *buf = vec![0; buffer_size];
    }
    let mut guard = None;
    let mut off = 0u64;
    loop {
        if off == len && off > 0 {
            return Ok(off);
        }
        let chunk = &mut buf[..buffer_size];
        let r =
            if guard.is_none() { pread_nowait(file, chunk, off) } else { file.read_at(chunk, off) };
        let n = match r {
            Ok(0) => return Ok(off),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if guard.is_none()
                    && (e.kind() == io::ErrorKind::WouldBlock
                        || e.raw_os_error() == Some(libc::EOPNOTSUPP)
                        || e.raw_os_error() == Some(libc::EINVAL)) =>
            {
                guard = Some(lock.lock().unwrap_or_else(|e| e.into_inner()));
                continue;
            }
            Err(e) => return Err(e),
        };
        feed(hashers, &buf[..n], progress);
        off += n as u64;
    }
}

/// One `preadv2(..., RWF_NOWAIT)`: the bytes the page cache holds at `off`, or
/// `WouldBlock` if getting them would wait for the device.
fn pread_nowait(file: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // SAFETY: one iovec describing `buf`, which is valid and writable for its length; the
    // file descriptor is open for the duration of the call.
    let n =
        unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, off as libc::off_t, libc::RWF_NOWAIT) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// Feeds one chunk to every hasher; several hashers on a large chunk run in parallel, so
/// asking for more algorithms does not multiply the wall time.
fn feed(hashers: &mut [Box<dyn Hasher>], chunk: &[u8], progress: Option<&AtomicU64>) {
    if let Some(p) = progress {
        p.fetch_add(chunk.len() as u64, Ordering::Relaxed);
    }
    if hashers.len() > 1 && chunk.len() >= 128 * 1024 {
        use rayon::prelude::*;
        hashers.par_iter_mut().for_each(|h| h.update(chunk));
    } else {
        for h in hashers.iter_mut() {
            h.update_parallel(chunk);
        }
    }
}

/// Tells every hasher about the input (a no-op call for all but BTIH and imohash).
fn begin(hashers: &mut [Box<dyn Hasher>], input: &Input) {
    for h in hashers.iter_mut() {
        h.begin(input);
    }
}

/// Reads only the byte ranges the (sampled) hashers ask for, with `pread`, and hands each
/// to them at its offset. Returns the file's size as the hashers were told it: the bytes
/// between the samples are never read (the stat before and after the read still catch a
/// change of size or mtime). A range past the end (the file shrank) is a changed file.
fn read_samples(
    file: &File,
    size: u64,
    hashers: &mut [Box<dyn Hasher>],
    buf: &mut Vec<u8>,
    progress: Option<&AtomicU64>,
) -> Result<u64, ReadError> {
    use std::os::unix::fs::FileExt;
    for h in hashers.iter_mut() {
        let ranges = h.sample_ranges().unwrap_or_else(|| std::iter::once(0..size).collect());
        for r in ranges {
            let len = (r.end - r.start) as usize;
            if buf.len() < len {
                buf.resize(len, 0);
            }
            match file.read_exact_at(&mut buf[..len], r.start) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Err(ReadError::Changed);
                }
                Err(e) => return Err(ReadError::Io(e)),
            }
            if let Some(p) = progress {
                p.fetch_add(len as u64, Ordering::Relaxed);
            }
            h.update_at(r.start, &buf[..len]);
        }
    }
    Ok(size)
}

fn finish(hashers: &[Box<dyn Hasher>]) -> Vec<Digest> {
    hashers.iter().map(|h| h.finish()).collect()
}

fn open(path: &Path, mode: OpenMode) -> Result<File, ReadError> {
    if mode == OpenMode::Beneath {
        return crate::confine::open_beneath(path);
    }
    let mut oo = std::fs::OpenOptions::new();
    oo.read(true);
    let mut flags = libc::O_NOCTTY;
    if let OpenMode::Walked { follow } = mode {
        // Never block on a FIFO that replaced a file after the walk saw it, and never
        // follow a symlink the walk was told not to follow.
        flags |= libc::O_NONBLOCK;
        if !follow {
            flags |= libc::O_NOFOLLOW;
        }
    }
    oo.custom_flags(flags);
    match oo.open(path) {
        Ok(f) => Ok(f),
        Err(e)
            if e.raw_os_error() == Some(libc::ELOOP)
                && matches!(mode, OpenMode::Walked { follow: false }) =>
        {
            Err(ReadError::Symlink)
        }
        Err(e) => Err(ReadError::Io(e)),
    }
}

/// Reads `r` to the end, feeding every hasher.
///
/// `expect` is a regular file's size from `fstat`: reading stops once that many bytes have
/// come, saving the extra `read` that would return 0 (a third of the syscalls for a small
/// file). Growth is still caught: the caller compares the size after the read.
fn read_into(
    r: &mut impl Read,
    hashers: &mut [Box<dyn Hasher>],
    buf: &mut Vec<u8>,
    buffer_size: usize,
    expect: Option<u64>,
    progress: Option<&AtomicU64>,
) -> io::Result<u64> {
    if buf.len() < buffer_size {
        // A fresh zeroed allocation (calloc: pages zeroed lazily by the kernel), not a
        // byte-by-byte fill; the old contents are scratch.
        *buf = vec![0; buffer_size];
    }
    let mut total = 0u64;
    loop {
        if expect == Some(total) && total > 0 {
            return Ok(total);
        }
        let n = match r.read(&mut buf[..buffer_size]) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        total += n as u64;
        feed(hashers, &buf[..n], progress);
    }
}

/// Maps a large file and feeds it to the hashers in windows, dropping each
/// window's pages from this process after use so resident memory stays bounded however
/// large the file. `None` when mapping is not possible, or when `only_if_cached` and most
/// of the file is not in the page cache (a rotational disk: random page faults from many
/// threads would make the head seek; the caller then reads sequentially).
///
/// The mapping is guarded ([`crate::mapping`]): a page that cannot be read (EIO, or the
/// file shrank) reads as zeros instead of killing the process, and the file is then
/// reported as unreadable or changed, never given the digest of those zeros.
fn hash_mapped(
    file: &File,
    len: u64,
    hashers: &mut [Box<dyn Hasher>],
    parallel: bool,
    only_if_cached: bool,
    progress: Option<&AtomicU64>,
) -> Option<Result<u64, ReadError>> {
    let len_usize = usize::try_from(len).ok()?;
    let map = Mapping::new(file, len_usize)?;
    let ptr = map.as_ptr();
    if only_if_cached && !mostly_resident(ptr, len_usize) {
        return None;
    }
    if !parallel {
        // One thread walks the mapping front to back: let the kernel read ahead.
        // SAFETY: advice on the live mapping.
        unsafe {
            libc::madvise(ptr, len_usize, libc::MADV_SEQUENTIAL);
        }
    }
    const WINDOW: usize = 64 * 1024 * 1024;
    let bytes = map.bytes();
    let mut off = 0usize;
    while off < len_usize {
        let n = WINDOW.min(len_usize - off);
        feed(hashers, &bytes[off..off + n], progress);
        // SAFETY: a range inside the live mapping; DONTNEED on a private read-only file
        // mapping only drops our page-table entries (the page cache keeps the data).
        unsafe {
            libc::madvise((ptr as *mut u8).add(off) as *mut libc::c_void, n, libc::MADV_DONTNEED);
        }
        if map.fault().is_some() {
            break;
        }
        off += n;
    }
    Some(match map.fault() {
        None => Ok(len),
        Some(at) => Err(fault_to_error(file, len, at)),
    })
}

/// Runs `f` over a read-only mapping of the first `len` bytes of `file`, guarded as
/// [`hash_mapped`]'s is: a page that cannot be read gives `Err` (`Changed` when the file
/// shrank, `Io` with the storage's error otherwise) instead of SIGBUS, and whatever `f`
/// computed from the zeros read there is dropped. `None` when the file cannot be mapped
/// (the caller reads it instead).
pub fn with_mapping<R>(
    file: &File,
    len: u64,
    f: impl FnOnce(&[u8]) -> R,
) -> Option<Result<R, ReadError>> {
    let map = Mapping::new(file, usize::try_from(len).ok()?)?;
    let r = f(map.bytes());
    Some(match map.fault() {
        None => Ok(r),
        Some(at) => Err(fault_to_error(file, len, at)),
    })
}

/// The error for a mapped read of `file` (mapped at `len` bytes) that faulted at `at`.
fn fault_to_error(file: &File, len: u64, at: u64) -> ReadError {
    match mapping::fault_error(file, len, at) {
        FaultKind::Shrunk => ReadError::Changed,
        FaultKind::Io(e) => ReadError::Io(e),
    }
}

/// Whether a mapping is (almost) all in the page cache: mincore on 256 pages spread
/// evenly over it, at least 90% of them resident. A sample costs microseconds where a
/// whole-file mincore cost milliseconds.
fn mostly_resident(ptr: *mut libc::c_void, len: usize) -> bool {
    resident_share(ptr, len) >= 0.9
}

/// The share of the mapping's pages in the page cache. Up to 16,384 pages (64 MiB) are
/// asked in one `mincore` call; larger mappings are sampled at 256 pages (negligible next
/// to hashing that much).
fn resident_share(ptr: *mut libc::c_void, len: usize) -> f64 {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let pages = len.div_ceil(page);
    if pages == 0 {
        return 0.0;
    }
    if pages <= 16_384 {
        let mut v = vec![0u8; pages];
        // SAFETY: the range is exactly the live mapping; `v` has one byte per page.
        let r = unsafe { libc::mincore(ptr, len, v.as_mut_ptr()) };
        if r != 0 {
            return 0.0;
        }
        return v.iter().filter(|&&b| b & 1 == 1).count() as f64 / pages as f64;
    }
    let samples = 256;
    let mut resident = 0;
    for i in 0..samples {
        let p = i * pages / samples;
        let mut v = 0u8;
        // SAFETY: page `p` lies inside the live mapping of `len` bytes; `v` receives the
        // one status byte for the one page asked about.
        let r = unsafe { libc::mincore((ptr as *mut u8).add(p * page).cast(), 1, &mut v) };
        if r == 0 && v & 1 == 1 {
            resident += 1;
        }
    }
    resident as f64 / samples as f64
}

/// Asks the kernel to drop `path`'s pages from the page cache
/// (`posix_fadvise(POSIX_FADV_DONTNEED)`; works without root, for clean pages only).
pub fn evict(path: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let file = File::open(path)?;
    // SAFETY: plain syscalls on a descriptor we own.
    let r = unsafe {
        libc::fdatasync(file.as_raw_fd());
        libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED)
    };
    if r != 0 { Err(io::Error::from_raw_os_error(r)) } else { Ok(()) }
}

/// The fraction of `path`'s pages in the page cache (see [`resident_share`]): how cold a
/// "cold" run really is. 0 for an empty file.
pub fn resident_fraction(path: &Path) -> io::Result<f64> {
    let file = File::open(path)?;
    let len = usize::try_from(file.metadata()?.len())
        .map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    if len == 0 {
        return Ok(0.0);
    }
    // Mapped only for mincore, which reads page-table state, never the data.
    let map = Mapping::new(&file, len).ok_or_else(io::Error::last_os_error)?;
    Ok(resident_share(map.as_ptr(), len))
}

fn advise_sequential(file: &File, len: u64) {
    use std::os::fd::AsRawFd;
    if len > 256 * 1024 {
        // SAFETY: plain syscall on a file descriptor we own; failure is harmless.
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL);
        }
    }
}

/// The type of the file system holding `path` (from /proc/self/mountinfo: the longest
/// mount point that contains it).
pub fn fs_type(path: &Path) -> Option<String> {
    let abs = std::fs::canonicalize(path).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, String)> = None;
    for line in info.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else { continue };
        let (Some(mount), Some(fstype)) = (fields.get(4), fields.get(sep + 1)) else { continue };
        let mount = mount.replace("\\040", " ");
        if abs.starts_with(&mount) && best.as_ref().is_none_or(|(len, _)| mount.len() >= *len) {
            best = Some((mount.len(), fstype.to_string()));
        }
    }
    best.map(|(_, t)| t)
}

/// Whether the block device holding `path` is rotational (a spinning disk), from
/// /sys/dev/block/MAJ:MIN[/..]/queue/rotational. Unknown devices count as not rotational.
pub fn is_rotational(path: &Path) -> bool {
    let Ok(md) = std::fs::metadata(path) else { return false };
    let dev = md.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let base = format!("/sys/dev/block/{major}:{minor}");
    for rel in ["queue/rotational", "../queue/rotational"] {
        if let Ok(s) = std::fs::read_to_string(format!("{base}/{rel}")) {
            return s.trim() == "1";
        }
    }
    false
}

/// Seconds since `start`, for throughput figures.
pub fn elapsed(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::lookup;

    #[test]
    fn reads_once_for_many_algorithms() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let algos = [lookup("md5").unwrap(), lookup("sha256").unwrap(), lookup("blake3").unwrap()];
        let mut buf = Vec::new();
        let h = hash_path(&p, OpenMode::Named, &algos, &mut buf, &ReadOptions::default(), None)
            .unwrap();
        assert_eq!(h.size, data.len() as u64);
        for (a, d) in algos.iter().zip(&h.digests) {
            assert_eq!(*d, a.digest(&data), "{}", a.name);
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
        };
        let mapped = hash_path(&p, OpenMode::Named, &b3, &mut buf, &opts, None).unwrap();
        let opts = ReadOptions {
            buffer_size: 65536,
            mmap_threshold: None,
            skip_inodes: [None; 2],
            progress: None,
        };
        let read = hash_path(&p, OpenMode::Named, &b3, &mut buf, &opts, None).unwrap();
        assert_eq!(mapped.digests, read.digests);
        assert_eq!(mapped.digests[0], b3[0].digest(&data));
    }

    #[test]
    fn walked_open_refuses_fifo_and_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: plain mkfifo on a path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
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
        assert_eq!(r.unwrap().digests[0], md5[0].digest(b"x"));
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
            let h = hash_path(
                &p,
                OpenMode::Walked { follow: false },
                &algos,
                &mut buf,
                &opts,
                Some(&lock),
            )
            .unwrap();
            assert_eq!(h.size, len as u64);
            assert_eq!(h.digests[0], algos[0].digest(&data));
            assert_eq!(h.digests[1], algos[1].digest(&data));
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
        assert_eq!(with_md5.digests[1], alone.digests[0]);
        assert_eq!(alone.digests[0], imo.digest(&data));
    }

    /// /proc and /sys files report a size of 0 (or a page) yet have content: they are read
    /// to the end and hashed, as coreutils does, not called "changed while read".
    #[test]
    fn proc_and_sys_files_are_hashed_by_their_content() {
        let md5 = [lookup("md5").unwrap()];
        let mut buf = Vec::new();
        let o = ReadOptions::default();
        for p in ["/proc/self/stat", "/proc/cpuinfo", "/sys/kernel/mm/transparent_hugepage/enabled"]
        {
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
        assert_eq!(h.digests[0], md5[0].digest(&direct));
    }

    /// A hasher that truncates a file the first time it is fed: the file shrinks while it
    /// is being read, as a log rotated with copytruncate does.
    struct Truncating {
        inner: Box<dyn Hasher>,
        path: std::path::PathBuf,
        done: bool,
    }

    impl Hasher for Truncating {
        fn update(&mut self, data: &[u8]) {
            if !self.done {
                self.done = true;
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&self.path)
                    .unwrap()
                    .set_len(4096)
                    .unwrap();
            }
            self.inner.update(data);
        }
        fn finish(&self) -> Digest {
            self.inner.finish()
        }
    }

    /// A mapped file that shrinks mid-read: no SIGBUS, the read reports the change.
    #[test]
    fn a_file_shrinking_under_a_mapping_is_changed_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        std::fs::write(&p, vec![5u8; 6 << 20]).unwrap();
        let file = File::open(&p).unwrap();
        let len = file.metadata().unwrap().len();
        let mut hashers: Vec<Box<dyn Hasher>> = vec![Box::new(Truncating {
            inner: lookup("sha256").unwrap().hasher(),
            path: p.clone(),
            done: false,
        })];
        let r = hash_mapped(&file, len, &mut hashers, false, false, None).unwrap();
        assert!(matches!(r, Err(ReadError::Changed)), "{r:?}");
    }

    #[test]
    fn io_message_drops_os_error_suffix() {
        let e = io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(io_message(&e), "Permission denied");
    }
}
