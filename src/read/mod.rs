//! Reading a file once and feeding its bytes to every sink (the hashers): open, stat,
//! fetch the bytes as the [`ReadPlan`] says, stat again. A file whose size or mtime moved
//! while it was read is reported as changed, never given a digest.
//!
//! Reading knows bytes, not algorithms: the caller (the engine, `pipeline::hash_path`, or
//! a drop-in) picks the plan from what its sinks need, and this module carries it out.
//! Each way of fetching a regular file's bytes is a [`Fetch`] variant executed by a file
//! of its own: `stream` (a reused buffer, or one reader at a time on a seeking disk,
//! as the [`Serial`] policy says), `mapped` (a guarded memory map, fed in windows; on
//! Windows `unmapped.rs`, which never maps) and `samples` (only the ranges a sampled
//! hasher asks for). A sparse file is read by its data extents, its holes hashed from
//! zeros, whatever the plan (`sparse`). With `unsafe` for `madvise`; the system calls
//! that ask the device (`posix_fadvise`, `preadv2`, `lseek`) are `crate::device`'s.

#[cfg(unix)]
mod mapped;
#[cfg(not(unix))]
#[path = "unmapped.rs"]
mod mapped;
mod samples;
mod sparse;
mod stream;
pub(crate) use sparse::{Extents, Span, Zeroed, worth_it as is_sparse};
pub(crate) use stream::{advise_sequential, advise_willneed};

use crate::algo::{Hasher, Input};
use crate::confine::{self, Refused};
use crate::device::{kind_name, mtime_ns, sized_by_content};
use crate::sys::MetadataExt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

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
    /// threads (BLAKE3). `None` turns mapping off (rotational disks, `--no-mmap`). The
    /// engine turns it into the plan's [`Fetch::Mapped`].
    pub mmap_threshold: Option<u64>,
    /// Files never to read (device, inode): the manifest being written and the one it
    /// replaces.
    pub skip_inodes: [Option<(u64, u64)>; 2],
    /// Bytes hashed so far, added to as each chunk is hashed (for a progress bar that moves
    /// inside large files too).
    pub progress: Option<&'static AtomicU64>,
    /// Tell the kernel that a large file is read front to back
    /// (`posix_fadvise(POSIX_FADV_SEQUENTIAL)`: a wider read-ahead). Off where reads must
    /// reach the device as a peer's tool's do (the drop-ins: what they read of a file that
    /// changes meanwhile depends on the read-ahead).
    pub advise: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            buffer_size: 512 * 1024,
            mmap_threshold: Some(64 * 1024),
            skip_inodes: [None; 2],
            progress: None,
            advise: true,
        }
    }
}

/// How the bytes of a file reach the sinks: picked by the caller from what its sinks
/// need, carried out by [`Reader`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadPlan {
    /// How a regular file's bytes are fetched (streams are always read front to back).
    pub fetch: Fetch,
    /// Set when a sink places its reads by the input's size (imohash): an input whose
    /// size is unknown before reading (standard input, a FIFO) is refused with
    /// [`ReadError::NeedsSize`] and this name.
    pub needs_size: Option<&'static str>,
    /// What a file that changes while it is read gets.
    pub on_change: OnChange,
}

impl ReadPlan {
    /// Every byte through the buffer, a file changed meanwhile refused.
    pub const WHOLE: ReadPlan =
        ReadPlan { fetch: Fetch::Whole, needs_size: None, on_change: OnChange::Refuse };
}

/// The ways of fetching a regular file's bytes; each is carried out by a module of its
/// own (see the module's notes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fetch {
    /// Every byte, front to back, through the reader's buffer (`stream`).
    Whole,
    /// Every byte; a file of at least `from` bytes is mapped and handed over in windows
    /// (`mapped`), a smaller one (or one that cannot be mapped) read as `Whole`.
    /// `parallel`: the sink hashes a large window on several threads, so the kernel is not
    /// told to read ahead sequentially.
    Mapped { from: u64, parallel: bool },
    /// Only the byte ranges the sinks ask for ([`Hasher::sample_ranges`]), with `pread`
    /// (`samples`).
    Samples,
}

/// What a file whose size or mtime moves while it is read gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnChange {
    /// [`ReadError::Changed`]: the digest would be of no version the file ever had. A
    /// regular file is read up to the size its stat gave (the stat after the read catches
    /// growth).
    Refuse,
    /// The digest of whatever the reads returned, up to the end of the file as it is
    /// then, as the peers' tools that do so (xxhsum, b3sum) give it.
    Accept,
}

/// What a read learnt about the file besides its bytes.
#[derive(Clone, Copy, Debug)]
pub struct Fetched {
    /// Bytes read (for sampled sinks: the size they were told).
    pub size: u64,
    /// Modification time (ns since the epoch) at the start of the read, if a file.
    pub mtime_ns: Option<i128>,
    /// (device, inode) of a regular file.
    pub file_id: Option<(u64, u64)>,
    /// Inode change time (ns since the epoch) at the start of the read, if a file.
    pub ctime_ns: Option<i128>,
    /// Its permission bits, owner and group, if a file.
    pub access: Option<crate::device::Access>,
}

impl Fetched {
    /// What reading `size` bytes of a stream (standard input, a FIFO) learnt: nothing of
    /// a file's inode.
    fn stream(size: u64) -> Fetched {
        Fetched { size, mtime_ns: None, file_id: None, ctime_ns: None, access: None }
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

impl From<Refused> for ReadError {
    fn from(r: Refused) -> ReadError {
        match r {
            Refused::Io(e) => ReadError::Io(e),
            Refused::Escapes => ReadError::Escapes,
            // The name now leads elsewhere than when it was looked at.
            Refused::Swapped => ReadError::Changed,
        }
    }
}

/// Where looking at `path` failed with `e` because a directory above it cannot be searched
/// or read (a tree root of mode 000, a directory whose lookups fail with EIO): that
/// directory and its error, which a message should name instead of the file inside it
/// that fixity tried to open (`ROOT/.fixity/catalog.db`, `ROOT/.fixityignore`). `None`
/// when the file itself is at fault, or for a "not found".
pub fn blocked_above(path: &Path, e: &io::Error) -> Option<(PathBuf, io::Error)> {
    if e.kind() == io::ErrorKind::NotFound {
        return None;
    }
    let mut above: Vec<&Path> =
        path.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()).collect();
    above.reverse();
    above.push(path);
    // The first name that cannot be looked at: its directory is what stops the lookup.
    let mut prev: Option<&Path> = None;
    for a in above {
        if let Err(err) = std::fs::metadata(a) {
            let dir = prev.filter(|_| err.kind() != io::ErrorKind::NotFound)?;
            return Some((dir.to_path_buf(), err));
        }
        prev = Some(a);
    }
    None
}

/// An I/O error as coreutils prints it: the C library's text without Rust's
/// " (os error N)" suffix.
pub fn io_message(e: &io::Error) -> String {
    if crate::sys::in_use(e) {
        // Windows: another program opened it without sharing; the next run reads it.
        return "in use by another program".to_string();
    }
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Opens `path` as `mode` says (not for [`OpenMode::Stdin`]). Errors here are the open's:
/// a caller that words open and read failures differently (the xxhsum drop-in) opens
/// first, then hands the file to [`Reader::read_file`].
pub fn open(path: &Path, mode: OpenMode) -> Result<File, ReadError> {
    if mode == OpenMode::Beneath {
        return Ok(confine::open_beneath(path)?);
    }
    let mut oo = std::fs::OpenOptions::new();
    oo.read(true);
    // Never block on a FIFO that replaced a file after the walk saw it, and never
    // follow a symlink the walk was told not to follow.
    let walked = match mode {
        OpenMode::Walked { follow } => Some(follow),
        _ => None,
    };
    crate::sys::reading(&mut oo, walked);
    match oo.open(path) {
        Ok(f) => Ok(f),
        Err(e)
            if crate::sys::refused_symlink(&e)
                && matches!(mode, OpenMode::Walked { follow: false }) =>
        {
            Err(ReadError::Symlink)
        }
        Err(e) => Err(ReadError::Io(e)),
    }
}

/// What an opened input is, once [`admit`] has looked at it.
pub(crate) enum Admitted {
    /// A regular file, with its stat before the read.
    Regular(std::fs::Metadata),
    /// A FIFO or device named by the user: read as a stream, to its end.
    Stream,
}

/// Looks at an opened input before it is read: the manifest being written is refused, a
/// directory is an error, a walked entry that is not a regular file is skipped (with its
/// kind), and a stream is refused to an algorithm that needs the size (`needs_size`).
pub(crate) fn admit(
    file: &File,
    mode: OpenMode,
    needs_size: Option<&'static str>,
    opts: &ReadOptions,
) -> Result<Admitted, ReadError> {
    let before = file.metadata().map_err(ReadError::Io)?;
    if opts.skip_inodes.iter().any(|s| s.is_some())
        && opts.skip_inodes.contains(&Some(crate::sys::id(file, &before)))
    {
        return Err(ReadError::OwnOutput);
    }
    let ft = before.file_type();
    if ft.is_dir() {
        return Err(ReadError::Io(crate::sys::is_a_directory()));
    }
    if ft.is_file() {
        return Ok(Admitted::Regular(before));
    }
    if let OpenMode::Walked { .. } = mode {
        return Err(ReadError::NotRegular(kind_name(&ft)));
    }
    match needs_size {
        Some(name) => Err(ReadError::NeedsSize(name)),
        None => Ok(Admitted::Stream),
    }
}

/// What a read of `size` bytes of the regular `file` (whose stat before the read was
/// `before`) learnt; with [`OnChange::Refuse`], a file whose size or mtime moved meanwhile
/// (or that was shorter than its stat said) is [`ReadError::Changed`].
pub(crate) fn settle(
    file: &File,
    before: &std::fs::Metadata,
    size: u64,
    on_change: OnChange,
) -> Result<Fetched, ReadError> {
    if on_change == OnChange::Refuse {
        let after = file.metadata().map_err(ReadError::Io)?;
        let len = before.len();
        let same_stat = mtime_ns(before) == mtime_ns(&after) && len == after.len();
        if !same_stat || (size != after.len() && !sized_by_content(file)) {
            return Err(ReadError::Changed);
        }
    }
    Ok(Fetched {
        size,
        mtime_ns: Some(mtime_ns(before)),
        file_id: Some(crate::sys::id(file, before)),
        ctime_ns: Some(crate::device::ctime_ns(before)),
        access: Some(crate::device::Access::of(before)),
    })
}

/// The storage policy as the reader sees it: which files are read one at a time. On a
/// seeking disk, one reader at a time makes the head serve one file after another, front
/// to back; elsewhere reads run in parallel. The engine's per-device policy
/// (`storage::Devices`) answers by device; a plain `Mutex<()>` serializes every file.
pub trait Serial: Sync {
    /// What is known of `dev` (an `st_dev`): `Some(true)`, its files are read one at a
    /// time (a seeking disk); `Some(false)`, in parallel, so the reader need not ask
    /// [`Serial::wait`]; `None`, not decided yet: its first read that would wait for it
    /// decides it, through [`Serial::wait`].
    fn seeking(&self, dev: u64) -> Option<bool>;
    /// Asked at the first read of `path` (on `dev`) that would wait for the device (the
    /// page cache does not hold it): the lock to read the rest under, or `None` when
    /// reads of that device may run in parallel after all.
    fn wait(&self, dev: u64, path: &Path) -> Option<&Mutex<()>>;
}

impl Serial for Mutex<()> {
    fn seeking(&self, _dev: u64) -> Option<bool> {
        Some(true)
    }
    fn wait(&self, _dev: u64, _path: &Path) -> Option<&Mutex<()>> {
        Some(self)
    }
}

/// A file whose reads may have to go one at a time: what the reader asks [`Serial::wait`]
/// about once a read would wait for the device.
#[derive(Clone, Copy)]
struct Turn<'a> {
    serial: &'a dyn Serial,
    dev: u64,
    path: &'a Path,
}

impl<'a> Turn<'a> {
    /// The lock to take now that a read would wait, if any.
    fn lock(self) -> Option<&'a Mutex<()>> {
        self.serial.wait(self.dev, self.path)
    }
}

/// One reader's working state: its reusable buffer, the tuning, and the storage policy,
/// which may let one reader at a time at a seeking device. A small file is read whole
/// under that device's lock and hashed after it is released (hashing stays parallel); a
/// large one is read under it, front to back, the next chunk asked of the device before
/// the current one is hashed.
pub struct Reader<'a> {
    /// The read buffer, grown to `opts.buffer_size` on first use and reused.
    pub buf: &'a mut Vec<u8>,
    /// Buffer size, files to skip, the progress counter.
    pub opts: &'a ReadOptions,
    /// The storage policy, if reads of some files are serialized.
    pub serial: Option<&'a dyn Serial>,
}

impl Reader<'_> {
    /// Opens `path` as `mode` says (standard input for [`OpenMode::Stdin`]) and feeds its
    /// bytes to `sinks` as `plan` says. The sinks are told about the input first
    /// ([`Hasher::begin`]); finishing them is the caller's part.
    pub fn read_path<H: Hasher + ?Sized>(
        &mut self,
        path: &Path,
        mode: OpenMode,
        plan: &ReadPlan,
        sinks: &mut [Box<H>],
    ) -> Result<Fetched, ReadError> {
        if mode == OpenMode::Stdin {
            if let Some(name) = plan.needs_size {
                return Err(ReadError::NeedsSize(name));
            }
            begin(sinks, &Input { size: None, name: Input::STDIN_NAME });
            let mut lock = io::stdin().lock();
            let size = stream::to_end(&mut lock, sinks, self, None).map_err(ReadError::Io)?;
            return Ok(Fetched::stream(size));
        }
        let file = open(path, mode)?;
        self.read_file(&file, path, mode, plan, sinks)
    }

    /// [`Reader::read_path`] for a file already opened (with [`open`]) from `path`.
    pub fn read_file<H: Hasher + ?Sized>(
        &mut self,
        file: &File,
        path: &Path,
        mode: OpenMode,
        plan: &ReadPlan,
        sinks: &mut [Box<H>],
    ) -> Result<Fetched, ReadError> {
        let path_bytes = path.as_os_str().as_encoded_bytes();
        let before = match admit(file, mode, plan.needs_size, self.opts)? {
            Admitted::Regular(before) => before,
            Admitted::Stream => {
                // A FIFO or device named by the user: read it as a stream, as coreutils
                // does.
                begin(sinks, &Input::for_path(path_bytes, None));
                let size = stream::to_end(&mut &*file, sinks, self, None).map_err(ReadError::Io)?;
                return Ok(Fetched::stream(size));
            }
        };
        let len = before.len();
        begin(sinks, &Input::for_path(path_bytes, Some(len)));
        let dev = before.dev();
        let turn = self.serial.filter(|s| s.seeking(dev) != Some(false)).map(|serial| Turn {
            serial,
            dev,
            path,
        });
        let size = self.fetch(file, &before, plan, sinks, turn)?;
        settle(file, &before, size, plan.on_change)
    }

    /// Fetches the bytes of the regular `file` (of stat `before`, read up to its size) as
    /// `plan` says; returns how many were read; `turn` is set when its reads may have to
    /// go one at a time. A sparse file ([`sparse::worth_it`]) is read by its extents
    /// whatever the plan, its holes hashed from zeros (`sparse`): neither read nor
    /// mapped, which would fill the page cache with zeroed pages. Adding a way of
    /// fetching: a module beside this one, a [`Fetch`] variant, and its arm here.
    fn fetch<H: Hasher + ?Sized>(
        &mut self,
        file: &File,
        before: &std::fs::Metadata,
        plan: &ReadPlan,
        sinks: &mut [Box<H>],
        turn: Option<Turn<'_>>,
    ) -> Result<u64, ReadError> {
        let len = before.len();
        match plan.fetch {
            Fetch::Samples => return samples::read(file, len, sinks, self),
            // Read as far as the file goes when it changes (the drop-ins' peers' way):
            // plainly, as they do.
            _ if plan.on_change == OnChange::Refuse && sparse::worth_it(before) => {
                return sparse::whole(file, len, sinks, self, turn).map_err(ReadError::Io);
            }
            Fetch::Mapped { from, parallel } if len >= from => {
                // On a seeking disk only a file already cached is mapped: page faults
                // from several threads come in random order and make the head seek.
                let only_if_cached = turn.is_some();
                let progress = self.opts.progress;
                if let Some(r) = mapped::read(file, len, sinks, parallel, only_if_cached, progress)
                {
                    return r;
                }
            }
            Fetch::Whole | Fetch::Mapped { .. } => {}
        }
        // Stopping at the stat's size saves the `read` that would return 0 (a third of
        // the syscalls for a small file); growth is caught by the stat after the read.
        let expect = (plan.on_change == OnChange::Refuse).then_some(len);
        stream::whole(file, len, expect, sinks, self, turn).map_err(ReadError::Io)
    }
}

/// Tells every sink about the input (a no-op call for all but BTIH and imohash).
fn begin<H: Hasher + ?Sized>(sinks: &mut [Box<H>], input: &Input) {
    for h in sinks.iter_mut() {
        h.begin(input);
    }
}

/// Feeds one chunk to every sink; several sinks on a large chunk run in parallel, so
/// asking for more algorithms does not multiply the wall time.
fn feed<H: Hasher + ?Sized>(sinks: &mut [Box<H>], chunk: &[u8], progress: Option<&AtomicU64>) {
    if let Some(p) = progress {
        p.fetch_add(chunk.len() as u64, Ordering::Relaxed);
    }
    if sinks.len() > 1 && chunk.len() >= 128 * 1024 {
        use rayon::prelude::*;
        sinks.par_iter_mut().for_each(|h| h.update(chunk));
    } else {
        for h in sinks.iter_mut() {
            h.update_parallel(chunk);
        }
    }
}

#[cfg(test)]
mod tests;
