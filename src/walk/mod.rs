//! Walking a tree: directories are listed ahead in parallel (to warm a cold cache), and
//! entries come out in a deterministic order that equals byte-wise sorting of
//! the full paths (`find DIR | LC_ALL=C sort`): within a directory, a subdirectory sorts as
//! its name followed by `/`. Symlinks are not followed unless asked; when they are, a
//! directory that is its own ancestor (by device and inode) is reported as a loop and not
//! entered. Excluded names are pruned before their directories are read, and so is
//! fixity's own state: a directory named `.fixity` (the catalog, its journal and lock) and
//! another fixity process's temporary manifest are never part of a tree's content (BagIt's
//! payload, where every file counts, aside).

use crate::sys::OsStrExt;
use globset::{Glob, GlobSet, GlobSetBuilder};
use std::cmp::Ordering;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};
use std::time::{Duration, Instant};

use crate::device::Stamp;

mod ahead;

/// How many threads list directories ahead of a walk: two per core the process may use
/// (listing waits on the disk more than on the CPU), at least 4, at most 16.
pub(crate) fn default_threads() -> usize {
    (2 * crate::pipeline::cores()).clamp(4, 16)
}

/// What to walk and how.
#[derive(Clone)]
pub struct WalkOptions {
    /// Follow symbolic links (`-L`).
    pub follow: bool,
    /// Names to leave out.
    pub exclude: Exclude,
    /// Threads listing directories ahead of the walk (0: none).
    pub threads: usize,
    /// `stat` each file while listing its directory (relative to the directory's open
    /// descriptor, as `find` does, so no path lookup), and hand the stamp over with it.
    pub stat: bool,
}

/// Exclusion globs: a pattern without `/` matches any path component's name (`*.tmp`,
/// `.git`); a pattern with `/` matches the path relative to the walk's root (`build/**`).
#[derive(Clone, Default)]
pub struct Exclude {
    names: Option<Arc<GlobSet>>,
    paths: Option<Arc<GlobSet>>,
    /// Walk into `.fixity` directories too (see [`Exclude::keeping_state`]).
    keep_state: bool,
}

pub(crate) use crate::pathtext::STATE_DIR;

impl Exclude {
    /// Builds the matcher from `--exclude` patterns.
    pub fn new(patterns: &[String]) -> Result<Exclude, globset::Error> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        let (mut n, mut p) = (0, 0);
        for pat in patterns {
            let pat = pat.trim_end_matches('/');
            if pat.contains('/') {
                paths.add(Glob::new(pat.trim_start_matches("./"))?);
                p += 1;
            } else {
                names.add(Glob::new(pat)?);
                n += 1;
            }
        }
        Ok(Exclude {
            names: (n > 0).then(|| names.build()).transpose()?.map(Arc::new),
            paths: (p > 0).then(|| paths.build()).transpose()?.map(Arc::new),
            keep_state: false,
        })
    }

    /// The same, but `.fixity` directories are walked like any other: for a BagIt
    /// payload, of which every file must be listed whatever its name.
    pub(crate) fn keeping_state(self) -> Exclude {
        Exclude { keep_state: true, ..self }
    }

    /// Whether the entry `name` at `rel` (relative to the root) is excluded.
    pub(crate) fn matches(&self, name: &Path, rel: &Path) -> bool {
        self.names.as_ref().is_some_and(|g| g.is_match(name))
            || self.paths.as_ref().is_some_and(|g| g.is_match(rel))
    }

    /// Whether no pattern was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.names.is_none() && self.paths.is_none()
    }
}

/// Whether `FIXITY_KEEP_SYSTEM_FILES=1` asks walks to keep the files the system writes
/// beside a user's ([`crate::sys::system_file`]); asked once a process.
fn keep_system_files() -> bool {
    static KEEP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEP.get_or_init(|| std::env::var_os("FIXITY_KEEP_SYSTEM_FILES").is_some_and(|v| v == "1"))
}

/// One thing found by the walk.
#[derive(Debug)]
pub enum WalkEvent {
    /// A file to hash (a regular file, or with `follow`, a symlink's target), with its
    /// size and mtime when the walk was asked to `stat`.
    File(PathBuf, Option<Stamp>),
    /// An entry that is not hashed on purpose: a symlink not followed, a FIFO, a socket,
    /// a device, a directory loop. The text says which.
    Skipped(PathBuf, &'static str),
    /// A directory or entry that could not be read.
    Error(PathBuf, io::Error),
}

/// A directory being listed: its sorted entries and where the walk is in them.
struct Frame {
    path: PathBuf,
    entries: std::vec::IntoIter<Child>,
    /// (device, inode) of this directory, for loop detection under `follow`.
    id: Option<(u64, u64)>,
}

struct Child {
    name: std::ffi::OsString,
    kind: Kind,
    stamp: Option<Stamp>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Symlink,
    Special(&'static str),
}

impl Kind {
    fn of(ft: std::fs::FileType) -> Kind {
        if ft.is_file() {
            Kind::File
        } else if ft.is_dir() {
            Kind::Dir
        } else if ft.is_symlink() {
            Kind::Symlink
        } else {
            Kind::Special(crate::device::skipping(&ft))
        }
    }
}

/// What a walk would say of the entry at `path` now, looked at by itself (a plan's list
/// replayed against the tree: `scan|verify --plan`): a file with its stamp, or an entry
/// skipped on purpose; `None` when no file is there any more (gone, or a directory now).
/// A `stat` that fails otherwise gives the file without a stamp: reading it reports why.
pub(crate) fn event_at(path: &Path, follow: bool) -> Option<WalkEvent> {
    let md = if follow { std::fs::metadata(path) } else { std::fs::symlink_metadata(path) };
    let md = match md {
        Ok(md) => md,
        Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
            return None;
        }
        Err(_) => return Some(WalkEvent::File(path.to_path_buf(), None)),
    };
    Some(match Kind::of(md.file_type()) {
        Kind::File => WalkEvent::File(path.to_path_buf(), Some(Stamp::of(&md))),
        Kind::Dir => return None,
        Kind::Symlink => WalkEvent::Skipped(path.to_path_buf(), NOT_FOLLOWED),
        Kind::Special(what) => WalkEvent::Skipped(path.to_path_buf(), what),
    })
}

const NOT_FOLLOWED: &str = "symbolic link not followed (use -L to follow)";

const LOOP: &str = "directory loop (a symlink to one of its ancestors)";

/// Walks `root` (a directory), calling `emit` for each event in sorted order until it
/// returns `false`. Directory listings use the kernel's entry types, so files cost no
/// `stat` here; the reader's `fstat` is the only one. Subdirectories are listed ahead on
/// helper threads (see `Prefetch`) so a cold tree's directory reads overlap; on a warm tree,
/// where that would only list every directory twice, they are not (see `Pace`).
pub fn walk(root: &Path, opts: &WalkOptions, emit: &mut dyn FnMut(WalkEvent) -> bool) {
    walk_under(root, root, opts, emit)
}

/// [`walk`] of the directory `start` inside the tree at `root` only: the exclusions match
/// the paths below `root`, as in a walk of the whole tree.
pub fn walk_under(
    root: &Path,
    start: &Path,
    opts: &WalkOptions,
    emit: &mut dyn FnMut(WalkEvent) -> bool,
) {
    let prefetch = Prefetch::new(opts.threads);
    // Listings that stat are worth making beside the walk (not under `follow`, whose
    // loops the walk decides as it goes).
    let mut ahead = (opts.stat && !opts.follow && opts.threads > 0)
        .then(|| ahead::Ahead::new(root, opts, prefetch.pace.clone()))
        .flatten();
    let root_id = crate::sys::path_id(start).ok();
    let mut stack: Vec<Frame> = Vec::new();
    match list(start, opts, root, &prefetch, &mut ahead) {
        Ok(entries) => stack.push(Frame { path: start.to_path_buf(), entries, id: root_id }),
        Err(e) => {
            emit(WalkEvent::Error(start.to_path_buf(), e));
            return;
        }
    }
    while let Some(frame) = stack.last_mut() {
        let Some(child) = frame.entries.next() else {
            stack.pop();
            continue;
        };
        let path = crate::sys::join(&frame.path, &child.name);
        let mut kind = child.kind;
        let mut stamp = child.stamp;
        if kind == Kind::Symlink && opts.follow {
            kind = match std::fs::metadata(&path) {
                Ok(md) => {
                    stamp = opts.stat.then(|| Stamp::of(&md));
                    Kind::of(md.file_type())
                }
                Err(e) => {
                    if !emit(WalkEvent::Error(path, e)) {
                        return;
                    }
                    continue;
                }
            };
        }
        let event = match kind {
            Kind::File => WalkEvent::File(path, stamp),
            Kind::Symlink => WalkEvent::Skipped(path, NOT_FOLLOWED),
            Kind::Special(what) => WalkEvent::Skipped(path, what),
            Kind::Dir => {
                let id = if opts.follow { crate::sys::path_id(&path).ok() } else { None };
                if id.is_some() && stack.iter().any(|f| f.id == id) {
                    WalkEvent::Skipped(path, LOOP)
                } else {
                    match list(&path, opts, root, &prefetch, &mut ahead) {
                        Ok(entries) => {
                            stack.push(Frame { path, entries, id });
                            continue;
                        }
                        Err(e) => WalkEvent::Error(path, e),
                    }
                }
            }
        };
        if !emit(event) {
            return;
        }
    }
}

/// Lists `dir` for the walk: takes its listing made ahead or makes it, asks the
/// prefetcher to warm the subdirectories (on a cold tree), and has the next ones listed
/// ahead.
fn list(
    dir: &Path,
    opts: &WalkOptions,
    root: &Path,
    prefetch: &Prefetch,
    ahead: &mut Option<ahead::Ahead>,
) -> io::Result<std::vec::IntoIter<Child>> {
    let listing = ahead.as_mut().and_then(|a| a.take(dir));
    let children = listing.unwrap_or_else(|| list_sorted(dir, opts, root, &prefetch.pace))?;
    if prefetch.pace.cold() {
        for c in &children {
            if c.kind == Kind::Dir {
                prefetch.warm(crate::sys::join(dir, &c.name));
            }
        }
    }
    if let Some(a) = ahead.as_mut() {
        a.listed(dir, &children);
    }
    Ok(children.into_iter())
}

/// Lists `dir`: drops excluded names, stats files (with `opts.stat`), sorts; records how
/// long it took in `pace`.
fn list_sorted(dir: &Path, opts: &WalkOptions, root: &Path, pace: &Pace) -> io::Result<Vec<Child>> {
    let mut children = Vec::new();
    let started = Instant::now();
    let mut seen = 0usize;
    // The directory below the root, once; each entry's path below the root is made in
    // `rel` for the exclusions.
    let dir_rel = crate::pathtext::strip_root(root, dir).unwrap_or(dir);
    let mut rel = PathBuf::new();
    for entry in std::fs::read_dir(dir)? {
        seen += 1;
        let entry = entry?;
        let name = entry.file_name();
        if name == STATE_DIR
            && !opts.exclude.keep_state
            && entry.file_type().is_ok_and(|t| t.is_dir())
        {
            continue;
        }
        // Another fixity's temporary file (being written, or left by a killed run), or
        // one the system writes beside the user's (macOS's `.DS_Store`, `._NAME`).
        if !opts.exclude.keep_state
            && (crate::output::foreign_temp_name(name.as_bytes())
                || (crate::sys::system_file(name.as_bytes()) && !keep_system_files()))
        {
            continue;
        }
        if !opts.exclude.is_empty() {
            rel.as_mut_os_string().clear();
            rel.push(dir_rel);
            rel.push(&name);
            if opts.exclude.matches(Path::new(&name), &rel) {
                continue;
            }
        }
        let kind = Kind::of(entry.file_type()?);
        // DirEntry::metadata is fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW): no path walk.
        let stamp = if opts.stat && kind == Kind::File {
            entry.metadata().ok().filter(|m| m.is_file()).map(|m| Stamp::of(&m))
        } else {
            None
        };
        children.push(Child { name, kind, stamp });
    }
    pace.record(started.elapsed(), seen, opts.stat);
    children.sort_by(sort_key_cmp);
    Ok(children)
}

/// Lists directories ahead of the walk on a few threads, only to bring their entries into
/// the kernel's cache: on a cold tree the walk's own `getdents` calls then return at once,
/// while the walk itself stays sequential and ordered. Bounded: when the queue is full, a
/// directory is simply not prefetched. Only while the tree reads as cold ([`Pace`]): on a
/// warm one, listing every directory a second time would cost as much as the walk's own
/// listing and save nothing.
struct Prefetch {
    tx: Option<crossbeam_channel::Sender<PathBuf>>,
    pace: Arc<Pace>,
}

impl Prefetch {
    fn new(threads: usize) -> Prefetch {
        let pace = Arc::new(Pace::new());
        if threads == 0 {
            return Prefetch { tx: None, pace };
        }
        let (tx, rx) = crossbeam_channel::bounded::<PathBuf>(1024);
        for _ in 0..threads {
            let rx = rx.clone();
            let pace = pace.clone();
            std::thread::spawn(move || {
                for dir in rx.iter() {
                    // Sent while the tree looked cold (as every tree does at first): if
                    // it has turned out warm since, a second listing would only cost.
                    if !pace.cold() {
                        continue;
                    }
                    let started = Instant::now();
                    if let Ok(rd) = std::fs::read_dir(&dir) {
                        let seen = rd.count();
                        pace.record(started.elapsed(), seen, false);
                    }
                }
            });
        }
        Prefetch { tx: Some(tx), pace }
    }

    fn warm(&self, dir: PathBuf) {
        if let Some(tx) = &self.tx {
            let _ = tx.try_send(dir);
        }
    }
}

/// Tells a cold tree from a warm one by how long its directory listings take (the walk's
/// and the prefetchers'), so that directories are listed ahead only where that saves
/// waiting. A listing is slow when it took longer than a cached one could: more than
/// [`Pace::SLOW_BASE`] plus a little per entry (a cached listing of a small directory
/// takes 10-20 µs; one that reads the disk, 100 µs on flash behind a VM and milliseconds on
/// a spinning disk). The tree is cold while at least [`Pace::COLD_SHARE`] of the last 32
/// listings were slow, and starts cold: a warm tree turns prefetching off after 25 quick
/// listings, and a run of slow ones (a cold subtree, a network file system) turns it back
/// on. An odd slow listing on a busy machine (a preempted thread) does not.
struct Pace {
    /// One bit per listing, the newest lowest: 1 for slow. Starts all slow.
    history: AtomicU32,
}

impl Pace {
    /// A listing slower than this (plus the per-entry allowance) read the disk.
    const SLOW_BASE: Duration = Duration::from_micros(50);
    /// Allowance per entry listed; per entry also `stat`ed.
    const PER_ENTRY: Duration = Duration::from_nanos(500);
    const PER_STAT: Duration = Duration::from_micros(3);
    /// Slow listings among the last 32 that make the tree cold.
    const COLD_SHARE: u32 = 8;

    fn new() -> Pace {
        Pace { history: AtomicU32::new(u32::MAX) }
    }

    /// Records one listing of `entries` entries (each also `stat`ed if `stat`) that took
    /// `took`.
    fn record(&self, took: Duration, entries: usize, stat: bool) {
        let per = if stat { Self::PER_ENTRY + Self::PER_STAT } else { Self::PER_ENTRY };
        let entries = u32::try_from(entries).unwrap_or(u32::MAX);
        let slow = took > Self::SLOW_BASE.saturating_add(per.saturating_mul(entries));
        let _ = self.history.fetch_update(AtomicOrdering::Relaxed, AtomicOrdering::Relaxed, |h| {
            Some(h << 1 | u32::from(slow))
        });
    }

    /// Whether directories should be listed ahead.
    fn cold(&self) -> bool {
        self.history.load(AtomicOrdering::Relaxed).count_ones() >= Self::COLD_SHARE
    }
}

/// Orders siblings so that the depth-first walk yields full paths in byte order: a
/// directory's name is compared as if it ended in `/`.
fn sort_key_cmp(a: &Child, b: &Child) -> Ordering {
    let (an, bn) = (a.name.as_bytes(), b.name.as_bytes());
    let common = an.len().min(bn.len());
    match an[..common].cmp(&bn[..common]) {
        Ordering::Equal => {}
        o => return o,
    }
    let next = |name: &[u8], is_dir: bool| -> Option<u8> {
        if name.len() > common {
            Some(name[common])
        } else if is_dir {
            Some(b'/')
        } else {
            None
        }
    };
    next(an, a.kind == Kind::Dir).cmp(&next(bn, b.kind == Kind::Dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(root: &Path, opts: &WalkOptions) -> Vec<String> {
        let mut out = Vec::new();
        walk(root, opts, &mut |e| {
            out.push(match e {
                WalkEvent::File(p, _) => format!("F {}", p.display()),
                WalkEvent::Skipped(p, why) => format!("S {} {why}", p.display()),
                WalkEvent::Error(p, e) => format!("E {} {e}", p.display()),
            });
            true
        });
        out
    }

    fn opts() -> WalkOptions {
        WalkOptions { follow: false, exclude: Exclude::default(), threads: 2, stat: false }
    }

    // `A` beside `a/`: one name on a case-insensitive file system (Windows, macOS).
    #[cfg(unix)]
    #[test]
    fn order_is_bytewise_on_full_paths() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for p in ["a/b", "a-c", "a.d", "b", "A", "a/x/y", "a0"] {
            let p = r.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"").unwrap();
        }
        std::fs::create_dir(r.join("empty")).unwrap();
        let got = collect(r, &opts());
        let mut want: Vec<String> = ["a/b", "a-c", "a.d", "b", "A", "a/x/y", "a0"]
            .iter()
            .map(|p| format!("F {}", r.join(p).display()))
            .collect();
        want.sort();
        assert_eq!(got, want);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_and_loops() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir(r.join("sub")).unwrap();
        std::fs::write(r.join("sub/f"), b"x").unwrap();
        std::os::unix::fs::symlink("..", r.join("sub/up")).unwrap();
        std::os::unix::fs::symlink("f", r.join("sub/lf")).unwrap();
        let got = collect(r, &opts());
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].starts_with("F ") && got[0].ends_with("sub/f"));
        assert!(got[1].starts_with("S ") && got[1].contains("sub/lf symbolic link"));
        assert!(got[2].starts_with("S ") && got[2].contains("sub/up symbolic link"));
        let got = collect(r, &WalkOptions { follow: true, ..opts() });
        assert!(got.iter().any(|l| l.ends_with("sub/lf")), "{got:?}");
        assert!(
            got.iter().any(|l| l.starts_with("S ") && l.contains("sub/up") && l.contains("loop")),
            "{got:?}"
        );
    }

    #[test]
    fn excludes_by_name_and_path() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for p in ["keep.txt", "x.tmp", "build/out/a", "src/build/b", ".git/config"] {
            let p = r.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"").unwrap();
        }
        let ex = Exclude::new(&["*.tmp".into(), ".git".into(), "build/**".into(), "build".into()])
            .unwrap();
        let got = collect(r, &WalkOptions { exclude: ex, ..opts() });
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].ends_with("keep.txt"));
        let ex = Exclude::new(&["./build/*".into()]).unwrap();
        let got = collect(r, &WalkOptions { exclude: ex, ..opts() });
        assert!(got.iter().any(|l| l.ends_with("src/build/b")), "{got:?}");
        assert!(!got.iter().any(|l| l.contains("build/out")), "{got:?}");
    }

    #[test]
    fn fixitys_own_state_is_left_out_unless_kept() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for p in ["a", ".fixity/catalog.db", "sub/.fixity/catalog.db-wal", "sub/b"] {
            let p = r.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"").unwrap();
        }
        // A file of that name is content: only the directory is fixity's.
        std::fs::write(r.join("sub/b.fixity"), b"").unwrap();
        // Another run's temporary manifest.
        std::fs::write(r.join(".m.sha256.fixity-tmp.1.0"), b"").unwrap();
        let names = |ex: Exclude| -> Vec<String> {
            let got = collect(r, &WalkOptions { exclude: ex, ..opts() });
            let root = format!("F {}/", r.display());
            got.iter().map(|l| l.strip_prefix(&root).unwrap_or(l).to_string()).collect()
        };
        assert_eq!(names(Exclude::default()), ["a", "sub/b", "sub/b.fixity"]);
        assert_eq!(names(Exclude::new(&["*.x".into()]).unwrap()), ["a", "sub/b", "sub/b.fixity"]);
        assert_eq!(names(Exclude::default().keeping_state()).len(), 6);
    }

    /// The pace detector, fed listing times as recorded on this VM: cached listings of
    /// D3's directories took 11-22 µs (a few up to 300 µs on the busy machine), listings
    /// after a remount 117-154 µs and more.
    #[test]
    fn prefetching_follows_how_fast_directories_list() {
        let us = Duration::from_micros;
        let pace = Pace::new();
        assert!(pace.cold(), "a tree starts cold: nothing is known yet");
        // Quick listings push the slow start out of the window: cold until fewer than 8
        // of the last 32 were slow.
        for i in 0..24 {
            pace.record(us(15), 10, false);
            assert!(pace.cold(), "still cold after {} quick listings", i + 1);
        }
        pace.record(us(15), 10, false);
        assert!(!pace.cold());
        // A busy machine's odd slow listing does not turn prefetching back on.
        for _ in 0..5 {
            pace.record(us(300), 10, false);
            for _ in 0..5 {
                pace.record(us(18), 10, false);
            }
        }
        assert!(!pace.cold());
        // A cold subtree does, after a few slow listings.
        let mut after = 0;
        while !pace.cold() {
            pace.record(us(150), 10, false);
            after += 1;
        }
        assert!(after <= Pace::COLD_SHARE as usize, "{after}");
        // Half quick (the walk, after the prefetch), half slow (the prefetchers): cold.
        for _ in 0..64 {
            pace.record(us(15), 10, false);
            pace.record(us(150), 10, false);
        }
        assert!(pace.cold());
    }

    /// A listing is slow by its size: a large cached directory takes longer than a small
    /// uncached one, and so does one whose entries are each `stat`ed.
    #[test]
    fn a_listing_is_slow_for_its_size() {
        let quick = |took: Duration, entries: usize, stat: bool| {
            let pace = Pace::new();
            for _ in 0..32 {
                pace.record(took, entries, stat);
            }
            !pace.cold()
        };
        assert!(quick(Duration::from_micros(40), 0, false));
        assert!(!quick(Duration::from_micros(120), 0, false));
        assert!(quick(Duration::from_millis(2), 10_000, false));
        assert!(!quick(Duration::from_millis(2), 100, false));
        assert!(quick(Duration::from_micros(200), 50, true));
        assert!(!quick(Duration::from_micros(200), 50, false));
    }

    /// Whatever the pace decides, the walk yields the same events: prefetching only warms
    /// the cache.
    #[test]
    fn prefetching_or_not_the_walk_is_the_same() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for i in 0..40 {
            let p = r.join(format!("d{}/e{}/f{i}", i % 7, i % 3));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"x").unwrap();
        }
        let with = collect(r, &opts());
        let without = collect(r, &WalkOptions { threads: 0, ..opts() });
        assert_eq!(with, without);
        assert_eq!(with.len(), 40);
    }

    /// Listed ahead by the listers or by the walk itself, a tree that stats its files
    /// walks the same: every event, every stamp, in order; deep chains (found under a
    /// directory listed after its subdirectories were sent), wide directories, empty
    /// ones and an excluded one.
    #[test]
    fn listings_made_ahead_give_the_walk_it_makes_itself() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let mut files = Vec::new();
        for i in 0..30 {
            files.push(format!("w{:02}/f{i}", i % 11));
            files.push(format!("deep/a/b{}/c/d{}/f{i}", i % 2, i % 3));
        }
        files.extend(["top".to_string(), "skip.tmp/f".to_string(), "z/y/x/w/v/u".to_string()]);
        for (k, f) in files.iter().enumerate() {
            let p = r.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, vec![b'x'; k]).unwrap();
        }
        for e in ["empty", "w03/empty", "deep/a/empty"] {
            std::fs::create_dir_all(r.join(e)).unwrap();
        }
        let stamped = |threads| {
            let exclude = Exclude::new(&["*.tmp".to_string()]).unwrap();
            let o = WalkOptions { stat: true, threads, exclude, ..opts() };
            let mut out = Vec::new();
            walk(r, &o, &mut |e| {
                if let WalkEvent::File(p, s) = e {
                    out.push((p, s.map(|s| s.size)));
                }
                true
            });
            out
        };
        let itself = stamped(0);
        assert_eq!(itself.len(), files.len() - 1, "the excluded directory's file is left out");
        assert!(itself.iter().all(|(_, s)| s.is_some()));
        for _ in 0..5 {
            assert_eq!(stamped(3), itself);
        }
    }
}
