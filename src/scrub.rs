//! `scan` and `verify` over a catalog: walk the tree beside the catalog's rows (both in
//! byte order of their paths, so they merge in one pass with bounded memory), classify
//! every file (see [`Class`]), and update the catalog as it goes.
//!
//! - **scan** records the tree as it is now: new files are hashed, files whose size or
//!   mtime changed are re-hashed, unchanged files are only `stat`ed (no reads), and files
//!   gone are reported as missing (after looking for where they moved).
//! - **verify** does the same bookkeeping, and then re-reads files whose size and mtime
//!   did not change, least recently verified first, comparing their content with the
//!   catalog: a difference there is corruption. `max_bytes` and `max_duration` make it a
//!   slice; the next slice continues with what this one left.
//!
//! Findings stand until they are resolved: a missing file stays on record (reported by
//! every run) until it is back or explicitly forgotten, and a corrupt or unreadable file
//! is read again by every run, scan or verify, slice or not, until it reads as recorded
//! (restored) or its new content is explicitly accepted.
//!
//! With the xattr store ([`run_xattr`]) each file carries its own record: the same
//! classes except missing and moved (nothing remembers a file that is gone), and slices
//! continue from a cursor kept on the root directory.

use crate::algo::Algorithm;
use crate::catalog::sqlite::{self, Catalog, CatalogError, Row};
use crate::catalog::xattr as xa;
use crate::catalog::{Class, now_ms};
use crate::device::Stamp;
use crate::digest::Digest;
use crate::pathtext::path_bytes;
use crate::pipeline::{self, Config, Hashed, Task, Work};
use crate::read::{OpenMode, ReadError, io_message};
use crate::walk::{Exclude, WalkEvent, WalkOptions, walk};
use std::collections::VecDeque;
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Record changes; read only new and changed files.
    Scan,
    /// Record changes, then re-read unchanged files and compare.
    Verify,
}

impl Mode {
    /// The command's name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Scan => "scan",
            Mode::Verify => "verify",
        }
    }
}

/// How to run.
#[derive(Clone)]
pub struct Options {
    /// scan or verify.
    pub mode: Mode,
    /// Follow symlinks inside the tree.
    pub follow: bool,
    /// Paths to leave out (besides the catalog itself).
    pub exclude: Exclude,
    /// Stop starting new reads after this many bytes (a slice).
    pub max_bytes: Option<u64>,
    /// Stop starting new reads after this long (a slice).
    pub max_duration: Option<Duration>,
    /// The read engine's settings (workers, serial reads).
    pub engine: Config,
    /// How far apart two mtimes may be and still count as equal (see [`Stamp::matches`];
    /// `--modify-window`).
    pub modify_window_ns: i128,
}

/// Something to tell the user as it happens (not a classification).
#[derive(Debug)]
pub enum Notice {
    /// An entry skipped on purpose: a symlink not followed, a FIFO, a device.
    Skipped(Vec<u8>, &'static str),
    /// A finding the catalog could not record (a write failed, see
    /// [`Report::catalog_error`]): the catalog's report will not list it, so it is
    /// handed over now.
    Unrecorded(Finding),
}

/// What a run did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Report {
    /// `scan` or `verify`.
    pub command: &'static str,
    /// Files per class, indexed like [`Class::ALL`].
    #[serde(serialize_with = "counts_by_name")]
    pub counts: [u64; 7],
    /// Files read and hashed.
    pub files_read: u64,
    /// Bytes read and hashed.
    pub bytes_read: u64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Whether every file due was looked at (false when a slice stopped early).
    pub complete: bool,
    /// What stopped a slice: "max-bytes" or "max-duration".
    pub stopped_by: Option<&'static str>,
    /// Files (and bytes) left for later slices.
    pub remaining_files: u64,
    /// Their size.
    pub remaining_bytes: u64,
    /// Entries skipped on purpose (symlinks, special files).
    pub skipped: u64,
    /// When the verification pass this run worked on began (ms; 0 for a scan).
    pub pass_started_ms: i64,
    /// When the run started (ms since the epoch); the catalog marks what it touched with it.
    pub started_ms: i64,
    /// Problems the catalog cannot hold (a file never recorded that could not be read, a
    /// directory that could not be listed), to list beside the catalog's report.
    #[serde(skip)]
    pub extra: Vec<Finding>,
    /// Directories under which every recorded file is missing (outermost only; the empty
    /// path is the root): (directory, files). An unmounted file system looks like this.
    #[serde(skip)]
    pub vanished: Vec<(Vec<u8>, u64)>,
    /// Such directories beyond those listed in `vanished`.
    #[serde(skip)]
    pub vanished_more: u64,
    /// The first catalog error of the run, if any: from then on nothing was recorded and
    /// findings went to [`Notice::Unrecorded`].
    #[serde(skip)]
    pub catalog_error: Option<String>,
}

impl Report {
    /// Count for one class.
    pub fn count(&self, c: Class) -> u64 {
        self.counts[c as usize]
    }

    fn add(&mut self, c: Class) {
        self.counts[c as usize] += 1;
    }

    fn sub(&mut self, c: Class) {
        self.counts[c as usize] = self.counts[c as usize].saturating_sub(1);
    }

    /// Whether anything was found that means data may be lost (the exit status).
    pub fn failed(&self) -> bool {
        Class::ALL.iter().any(|c| c.is_failure() && self.count(*c) > 0)
    }
}

fn counts_by_name<S: serde::Serializer>(counts: &[u64; 7], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(counts.len()))?;
    for c in Class::ALL {
        m.serialize_entry(c.name(), &counts[c as usize])?;
    }
    m.end()
}

/// Errors of a run: the catalog failed, or the store cannot work here.
#[derive(Debug, thiserror::Error)]
pub enum ScrubError {
    /// A catalog error.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The tree's root or its attributes.
    #[error("{0}")]
    Store(String),
}

/// The relative path of `full` under `root`, as bytes.
fn rel_of<'a>(root: &Path, full: &'a Path) -> &'a [u8] {
    match full.strip_prefix(root) {
        Ok(r) => path_bytes(r),
        Err(_) => path_bytes(full),
    }
}

/// Whether `rel` (or a directory above it) is excluded.
fn excluded(ex: &Exclude, rel: &[u8]) -> bool {
    if ex.is_empty() {
        return false;
    }
    let mut start = 0;
    loop {
        let next = rel[start..].iter().position(|&b| b == b'/').map_or(rel.len(), |i| start + i);
        let name = Path::new(OsStr::from_bytes(&rel[start..next]));
        if ex.matches(name, Path::new(OsStr::from_bytes(&rel[..next]))) {
            return true;
        }
        if next >= rel.len() {
            return false;
        }
        start = next + 1;
    }
}

/// Streams the catalog's rows in path order. A thread of its own reads pages ahead
/// (bounded), so decoding rows overlaps with the walk. A read error ends the stream and
/// is kept: the merge must then stop, since every file after it would look new.
struct RowStream {
    pages: crossbeam_channel::Receiver<rusqlite::Result<Vec<Row>>>,
    page: VecDeque<Row>,
    error: Option<rusqlite::Error>,
}

impl RowStream {
    fn new(reader: sqlite::Reader) -> RowStream {
        let (tx, rx) = crossbeam_channel::bounded::<rusqlite::Result<Vec<Row>>>(4);
        std::thread::spawn(move || {
            let mut last: Option<Vec<u8>> = None;
            loop {
                match reader.by_path(last.as_deref(), 2048) {
                    Ok(rows) if rows.is_empty() => return,
                    Ok(rows) => {
                        last = rows.last().map(|r| r.path.clone());
                        if tx.send(Ok(rows)).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        RowStream { pages: rx, page: VecDeque::new(), error: None }
    }

    fn peek(&mut self) -> Option<&Row> {
        if self.page.is_empty() && self.error.is_none() {
            match self.pages.recv() {
                Ok(Ok(rows)) => self.page.extend(rows),
                Ok(Err(e)) => self.error = Some(e),
                Err(_) => {}
            }
        }
        self.page.front()
    }

    fn next(&mut self) -> Option<Row> {
        self.peek()?;
        self.page.pop_front()
    }
}

/// What the walk-and-merge producer hands the sink.
enum Item {
    /// A file in the tree, with its row if the catalog knows it.
    File(Vec<u8>, Option<Row>),
    /// A catalog row with no file in the tree.
    Gone(Row),
    /// A row under a directory that could not be read: its fate is unknown.
    Unreachable(Row, String),
    /// A walk error (an unreadable directory).
    WalkError(Vec<u8>, String),
    /// An entry skipped on purpose.
    Skipped(Vec<u8>, &'static str),
    /// Phase two: a known, unchanged file to re-read and compare.
    Check(Row),
    /// A known file whose size and mtime are unchanged (seen by the walk's stat), with its
    /// path when it had been recorded as missing.
    Unchanged(Option<Vec<u8>>),
}

/// The catalog's writer, and what happens when the catalog fails. Findings are recorded
/// first and listed from the catalog after the run; when a write fails (a full file
/// system, a catalog gone read-only), the first error is kept, the open batch is rolled
/// back, and the findings of that batch and every later one go to
/// [`Notice::Unrecorded`] at once: a finding is never lost with a catalog that cannot
/// hold it. The run goes on without writing.
struct Store<'c> {
    w: sqlite::Writer<'c>,
    /// Findings in the open batch, reported from here if it never commits.
    batch: Vec<Finding>,
    /// The first catalog error.
    failed: Option<CatalogError>,
}

impl Store<'_> {
    /// Records with `op`; `finding` is what the user must hear of if it cannot be recorded.
    fn write(
        &mut self,
        notice: &mut dyn FnMut(Notice),
        finding: Option<Finding>,
        op: impl FnOnce(&mut sqlite::Writer<'_>) -> Result<(), CatalogError>,
    ) {
        if self.failed.is_some() {
            if let Some(f) = finding {
                notice(Notice::Unrecorded(f));
            }
            return;
        }
        match op(&mut self.w) {
            Ok(()) if self.w.pending() == 0 => self.batch.clear(),
            Ok(()) => self.batch.extend(finding),
            Err(e) => {
                self.fail(e, notice);
                if let Some(f) = finding {
                    notice(Notice::Unrecorded(f));
                }
            }
        }
    }

    fn commit(&mut self, notice: &mut dyn FnMut(Notice)) {
        self.write(notice, None, |w| w.commit());
    }

    /// Marks the catalog failed (keeping the first error) and reports the open batch.
    fn fail(&mut self, e: CatalogError, notice: &mut dyn FnMut(Notice)) {
        self.w.abandon();
        self.failed.get_or_insert(e);
        for f in self.batch.drain(..) {
            notice(Notice::Unrecorded(f));
        }
    }

    fn ok(&self) -> bool {
        self.failed.is_none()
    }
}

fn finding(path: &[u8], class: Class, note: Option<String>) -> Option<Finding> {
    Some(Finding { path: path.to_vec(), class, note })
}

/// Runs `scan` or `verify` over the tree at `root` with the SQLite catalog `cat`.
/// Classified files are not reported as they are found: they are recorded in the catalog
/// and listed afterwards in path order with [`Catalog::report`] (moves are only known at
/// the end). `notice` gets skipped entries as they come, and findings the catalog could
/// not record ([`Notice::Unrecorded`]); the catalog's error is then in
/// [`Report::catalog_error`]. Known corrupt and unreadable files are re-read by every
/// run, budget or not, so a finding stands until it is resolved.
pub fn run_catalog(
    root: &Path,
    cat: &Catalog,
    opts: &Options,
    notice: &mut dyn FnMut(Notice),
) -> Result<Report, ScrubError> {
    let started = Instant::now();
    let now = now_ms().max(cat.last_run_start()? + 1);
    let algo = cat.algorithm();
    let algos: Arc<[&'static Algorithm]> = Arc::from(vec![algo]);
    let mut report =
        Report { command: opts.mode.name(), started_ms: now, complete: true, ..Default::default() };
    let window = opts.modify_window_ns;
    let follow = opts.follow;
    let mut store = Store { w: cat.writer(), batch: Vec::new(), failed: None };
    let run_id = match cat.start_run(opts.mode.name(), now) {
        Ok(id) => Some(id),
        Err(e) => {
            store.fail(e, notice);
            None
        }
    };
    let mut read_error: Option<rusqlite::Error> = None;

    // Phase one: the walk merged with the catalog.
    {
        let mut rows = RowStream::new(reader_of(cat)?);
        let walk_opts =
            WalkOptions { follow, exclude: opts.exclude.clone(), threads: 4, stat: true };
        let exclude = opts.exclude.clone();
        let algos = algos.clone();
        let read_error = &mut read_error;
        pipeline::run(
            &opts.engine,
            move |push| {
                // Rows before `rel` in path order have no file: gone, or unreachable when
                // under a directory the walk could not read.
                let mut unreadable_dir: Option<(Vec<u8>, String)> = None;
                let drain_before = |rel: Option<&[u8]>,
                                    rows: &mut RowStream,
                                    unreadable_dir: &Option<(Vec<u8>, String)>,
                                    push: &mut dyn FnMut(Task<Item>) -> bool|
                 -> bool {
                    while let Some(r) = rows.peek() {
                        if rel.is_some_and(|rel| r.path.as_slice() >= rel) {
                            break;
                        }
                        let row = rows.next().expect("peeked");
                        if excluded(&exclude, &row.path) {
                            continue;
                        }
                        let item = match unreadable_dir {
                            // An empty `dir` is the root itself: everything is unreachable.
                            Some((dir, why))
                                if row.path.starts_with(dir)
                                    && (dir.is_empty()
                                        || row.path.get(dir.len()) == Some(&b'/')) =>
                            {
                                Item::Unreachable(row, why.clone())
                            }
                            _ => Item::Gone(row),
                        };
                        if !push(Task { payload: item, work: None }) {
                            return false;
                        }
                    }
                    // The catalog could not be read on: stop before anything looks new.
                    rows.error.is_none()
                };
                let mut go_on = true;
                walk(root, &walk_opts, &mut |ev| {
                    let full = match &ev {
                        WalkEvent::File(f, _)
                        | WalkEvent::Skipped(f, _)
                        | WalkEvent::Error(f, _) => f,
                    };
                    let rel = rel_of(root, full).to_vec();
                    if !drain_before(Some(&rel), &mut rows, &unreadable_dir, push) {
                        go_on = false;
                        return false;
                    }
                    let known = match rows.peek() {
                        Some(r) if r.path == rel => rows.next(),
                        _ => None,
                    };
                    let task = match ev {
                        WalkEvent::File(f, stamp) => {
                            // Unchanged by size and mtime (the walk's stat): nothing to read,
                            // no worker. A file recorded as missing that is back unchanged is
                            // only marked present again. A known corrupt or unreadable file
                            // is read again by every run (a finding stands until resolved).
                            if let (Some(row), Some(stamp)) = (&known, stamp)
                                && stamp.matches(&row.stamp, window)
                                && !matches!(row.last_result, Class::Corrupt | Class::Unreadable)
                            {
                                let back = row.missing_since.is_some().then_some(rel);
                                go_on = push(Task { payload: Item::Unchanged(back), work: None });
                                return go_on;
                            }
                            Task {
                                payload: Item::File(rel, known),
                                work: Some(Work {
                                    path: f,
                                    mode: OpenMode::Walked { follow },
                                    algos: algos.clone(),
                                }),
                            }
                        }
                        WalkEvent::Skipped(_, why) => {
                            if let Some(row) = known
                                && !push(Task { payload: Item::Gone(row), work: None })
                            {
                                go_on = false;
                                return false;
                            }
                            Task { payload: Item::Skipped(rel, why), work: None }
                        }
                        WalkEvent::Error(_, e) => {
                            let why = io_message(&e);
                            unreadable_dir = Some((rel.clone(), why.clone()));
                            if let Some(row) = known
                                && !push(Task {
                                    payload: Item::Unreachable(row, why.clone()),
                                    work: None,
                                })
                            {
                                go_on = false;
                                return false;
                            }
                            Task { payload: Item::WalkError(rel, why), work: None }
                        }
                    };
                    go_on = push(task);
                    go_on
                });
                if go_on {
                    drain_before(None, &mut rows, &unreadable_dir, push);
                }
                *read_error = rows.error.take();
            },
            recorder(now, window, &mut store, &mut report, &mut *notice),
        );
    }
    store.commit(notice);
    if let Some(e) = read_error {
        // The merge stopped early: what it recorded stands, nothing after it was looked at.
        store.fail(CatalogError::Sqlite(cat.path().to_path_buf(), e), notice);
        report.complete = false;
    }

    // Moves: a missing file whose content now lives at a path new in the tree. Missing
    // rows are read in pages, so a tree that vanished whole costs no memory; and they are
    // only read when some file is new since the oldest loss (else nothing can pair).
    let candidates = report.count(Class::Missing) > 0
        && match cat.new_since_a_loss() {
            Ok(any) => any,
            Err(e) => {
                store.fail(e, notice);
                false
            }
        };
    if store.ok() && candidates {
        let reader = reader_of(cat)?;
        let mut after: Option<Vec<u8>> = None;
        'pages: loop {
            let page = match reader.missing(after.as_deref(), 1024) {
                Ok(p) if p.is_empty() => break,
                Ok(p) => p,
                Err(e) => {
                    store.fail(CatalogError::Sqlite(cat.path().to_path_buf(), e), notice);
                    break;
                }
            };
            after = page.last().map(|r| r.path.clone());
            for m in page {
                if m.stamp.size == 0 {
                    continue; // every empty file looks alike
                }
                let since = m.missing_since.unwrap_or(now);
                // A candidate paired earlier in this loop is 'moved' now, no longer 'new'.
                let cands = match cat.move_candidates(m.stamp.size, &m.digest, since) {
                    Ok(c) => c,
                    Err(e) => {
                        store.fail(e, notice);
                        break 'pages;
                    }
                };
                let base = |p: &[u8]| p.rsplit(|&b| b == b'/').next().map(<[u8]>::to_vec);
                let pick =
                    cands.iter().find(|c| base(c) == base(&m.path)).or_else(|| cands.first());
                if let Some(to) = pick {
                    store.write(notice, None, |w| w.moved(&m.path, to));
                    if !store.ok() {
                        break 'pages;
                    }
                    report.sub(Class::Missing);
                    report.sub(Class::New);
                    report.add(Class::Moved);
                }
            }
        }
        store.commit(notice);
    }

    // Directories whose every recorded file is missing: unmounted, or gone whole.
    if store.ok() && report.count(Class::Missing) > 0 {
        let reader = reader_of(cat)?;
        let mut after: Option<Vec<u8>> = None;
        let mut failed = None;
        let pages = std::iter::from_fn(|| match reader.presence(after.as_deref(), 4096) {
            Ok(p) if p.is_empty() => None,
            Ok(p) => {
                after = p.last().map(|(path, _)| path.clone());
                Some(p)
            }
            Err(e) => {
                failed = Some(e);
                None
            }
        });
        let (dirs, more) = vanished_dirs(pages.flatten(), 100);
        if let Some(e) = failed {
            store.fail(CatalogError::Sqlite(cat.path().to_path_buf(), e), notice);
        } else {
            report.vanished = dirs;
            report.vanished_more = more;
        }
    }

    // Phase two (verify): re-read unchanged files, least recently verified first. A run
    // without a budget is a whole pass by itself; slices share a pass recorded in the
    // catalog, which ends when every file has been looked at since it began.
    if opts.mode == Mode::Verify {
        let sliced = opts.max_bytes.is_some() || opts.max_duration.is_some();
        let stored = match cat.meta(PASS_KEY) {
            Ok(v) => v.and_then(|v| v.parse::<i64>().ok()),
            Err(e) => {
                store.fail(e, notice);
                None
            }
        };
        let pass_start = match stored {
            Some(p) if sliced => p,
            _ => now,
        };
        if store.ok()
            && let Err(e) = cat.set_meta(PASS_KEY, Some(&pass_start.to_string()))
        {
            store.fail(e, notice);
        }
        report.pass_started_ms = pass_start;
        let reader = reader_of(cat)?;
        let max_bytes = opts.max_bytes;
        let max_duration = opts.max_duration;
        let already = report.bytes_read;
        let mut stopped: Option<&'static str> = None;
        let stopped_ref = &mut stopped;
        let mut read_error: Option<rusqlite::Error> = None;
        let read_error_ref = &mut read_error;
        let algos = algos.clone();
        pipeline::run(
            &opts.engine,
            move |push| {
                let mut after: Option<(i64, Vec<u8>)> = None;
                let mut budget_used = already;
                loop {
                    let page = match reader.stale(
                        pass_start,
                        after.as_ref().map(|(t, p)| (*t, p.as_slice())),
                        1024,
                    ) {
                        Ok(p) if p.is_empty() => return,
                        Ok(p) => p,
                        Err(e) => {
                            *read_error_ref = Some(e);
                            return;
                        }
                    };
                    after = page.last().map(|r| (r.last_verified, r.path.clone()));
                    for row in page {
                        if max_bytes.is_some_and(|m| budget_used >= m) {
                            *stopped_ref = Some("max-bytes");
                            return;
                        }
                        if max_duration.is_some_and(|d| started.elapsed() >= d) {
                            *stopped_ref = Some("max-duration");
                            return;
                        }
                        budget_used += row.stamp.size;
                        let path = root.join(OsStr::from_bytes(&row.path));
                        let work =
                            Work { path, mode: OpenMode::Walked { follow }, algos: algos.clone() };
                        if !push(Task { payload: Item::Check(row), work: Some(work) }) {
                            return;
                        }
                    }
                }
            },
            recorder(now, window, &mut store, &mut report, &mut *notice),
        );
        store.commit(notice);
        if let Some(e) = read_error {
            store.fail(CatalogError::Sqlite(cat.path().to_path_buf(), e), notice);
        }
        let (files, bytes) = match cat.stale_count(pass_start) {
            Ok(n) => n,
            Err(e) => {
                store.fail(e, notice);
                (0, 0)
            }
        };
        report.remaining_files = files;
        report.remaining_bytes = bytes;
        if let Some(why) = stopped {
            report.stopped_by = Some(why);
        }
        if files == 0 && store.ok() {
            let done = cat
                .set_meta(PASS_KEY, None)
                .and_then(|()| cat.set_meta("last_pass_completed", Some(&now_ms().to_string())));
            if let Err(e) = done {
                store.fail(e, notice);
            }
        } else {
            report.complete = false;
        }
    }
    store.commit(notice);
    report.seconds = started.elapsed().as_secs_f64();
    if let Some(id) = run_id
        && store.ok()
    {
        let summary = serde_json::to_string(&report).unwrap_or_default();
        if let Err(e) = cat.finish_run(id, report.complete, &summary) {
            store.fail(e, notice);
        }
    }
    if !cat.in_place() {
        // Deleted (or replaced) under the run: SQLite wrote on into a file no one will
        // open again (or failed to, which is the same story).
        store.failed = Some(CatalogError::Vanished(cat.path().to_path_buf()));
    }
    report.catalog_error = store.failed.map(|e| e.to_string());
    Ok(report)
}

/// A second connection to the catalog; failing because the catalog is gone, says so.
fn reader_of(cat: &Catalog) -> Result<sqlite::Reader, CatalogError> {
    cat.reader().map_err(|e| match cat.in_place() {
        true => e,
        false => CatalogError::Vanished(cat.path().to_path_buf()),
    })
}

/// The directories under which every recorded file is missing, outermost only, from the
/// catalog's (path, missing) pairs in path order: `(dir, files)`, the empty path for the
/// root itself (everything is missing). At most `limit` are listed, sorted; the second
/// value counts the rest. Memory is bounded by the depth of the tree and `limit`.
fn vanished_dirs(
    rows: impl Iterator<Item = (Vec<u8>, bool)>,
    limit: usize,
) -> (Vec<(Vec<u8>, u64)>, u64) {
    struct Frame {
        dir: Vec<u8>,
        all_missing: bool,
        files: u64,
        /// Subdirectories found wholly missing, reported unless this one is too.
        kids: Vec<(Vec<u8>, u64)>,
        more_kids: u64,
    }
    let frame =
        |dir: Vec<u8>| Frame { dir, all_missing: true, files: 0, kids: Vec::new(), more_kids: 0 };
    let mut out: Vec<(Vec<u8>, u64)> = Vec::new();
    let mut more = 0u64;
    let emit =
        |out: &mut Vec<(Vec<u8>, u64)>, more: &mut u64, kids: Vec<(Vec<u8>, u64)>, extra: u64| {
            for k in kids {
                if out.len() < limit {
                    out.push(k);
                } else {
                    *more += 1;
                }
            }
            *more += extra;
        };
    let mut stack = vec![frame(Vec::new())];
    let pop = |stack: &mut Vec<Frame>, out: &mut Vec<(Vec<u8>, u64)>, more: &mut u64| {
        let f = stack.pop().expect("a frame above the root");
        let parent = stack.last_mut().expect("the root frame");
        if f.all_missing {
            if parent.kids.len() < limit {
                parent.kids.push((f.dir, f.files));
            } else {
                parent.more_kids += 1;
            }
        } else {
            emit(out, more, f.kids, f.more_kids);
        }
        parent.all_missing &= f.all_missing;
        parent.files += f.files;
    };
    for (path, missing) in rows {
        while stack.len() > 1 {
            let top = &stack.last().expect("frames").dir;
            if path.starts_with(top) && path.get(top.len()) == Some(&b'/') {
                break;
            }
            pop(&mut stack, &mut out, &mut more);
        }
        let from = match stack.len() {
            1 => 0,
            _ => stack.last().expect("frames").dir.len() + 1,
        };
        for (i, &b) in path.iter().enumerate().skip(from) {
            if b == b'/' {
                stack.push(frame(path[..i].to_vec()));
            }
        }
        let top = stack.last_mut().expect("frames");
        top.all_missing &= missing;
        top.files += 1;
    }
    while stack.len() > 1 {
        pop(&mut stack, &mut out, &mut more);
    }
    let root = stack.pop().expect("the root frame");
    if root.all_missing && root.files > 0 {
        return (vec![(Vec::new(), root.files)], 0);
    }
    emit(&mut out, &mut more, root.kids, root.more_kids);
    out.sort();
    (out, more)
}

/// The `meta` key holding the start of the verification pass that slices are working
/// through.
pub const PASS_KEY: &str = "pass_started";

/// The pipeline's sink for a catalog run: [`sink`] for each task.
fn recorder<'a, 'c>(
    now: i64,
    window: i128,
    store: &'a mut Store<'c>,
    report: &'a mut Report,
    notice: &'a mut dyn FnMut(Notice),
) -> impl FnMut(Item, pipeline::Outcome) -> bool + 'a {
    move |item, outcome| {
        sink(item, outcome, now, window, store, report, notice);
        true
    }
}

/// Classifies one finished task and records it.
fn sink(
    item: Item,
    outcome: pipeline::Outcome,
    now: i64,
    window: i128,
    st: &mut Store<'_>,
    report: &mut Report,
    notice: &mut dyn FnMut(Notice),
) {
    match (item, outcome) {
        (Item::Unchanged(back), _) => {
            if let Some(rel) = back {
                st.write(notice, None, |w| w.present(&rel));
            }
            if report.command == "scan" {
                report.add(Class::Ok);
            }
        }
        (Item::Skipped(rel, why), _) => {
            report.skipped += 1;
            notice(Notice::Skipped(rel, why));
        }
        (Item::WalkError(rel, why), _) => {
            // Known files below it are reported one by one as unreachable; the directory
            // itself is listed once.
            report.add(Class::Unreadable);
            report.extra.push(Finding { path: rel, class: Class::Unreadable, note: Some(why) });
        }
        (Item::Unreachable(row, why), _) => {
            let note = format!("directory unreadable: {why}");
            let f = finding(&row.path, Class::Unreadable, Some(note.clone()));
            st.write(notice, f, |w| w.checked(&row.path, Class::Unreadable, now, Some(&note)));
            report.add(Class::Unreadable);
        }
        (Item::Gone(row), _) => {
            st.write(notice, finding(&row.path, Class::Missing, None), |w| {
                w.missing(&row.path, now)
            });
            report.add(Class::Missing);
        }
        (Item::File(rel, known), Some(Ok(h))) => {
            report.files_read += 1;
            report.bytes_read += h.size;
            match known {
                None => {
                    st.write(notice, finding(&rel, Class::New, None), |w| {
                        w.insert(&rel, stamp_of(&h), h.file_id, h.digests[0].as_bytes(), now)
                    });
                    report.add(Class::New);
                }
                Some(row) => record_content(&row, &h, now, window, st, report, notice),
            }
        }
        (Item::Check(row), Some(Ok(h))) => {
            report.files_read += 1;
            report.bytes_read += h.size;
            record_content(&row, &h, now, window, st, report, notice);
        }
        (Item::File(rel, known), Some(Err(e))) => {
            failed_read(&rel, known.is_some(), e, now, st, report, notice);
        }
        (Item::Check(row), Some(Err(e))) => {
            failed_read(&row.path, true, e, now, st, report, notice)
        }
        (Item::File(..) | Item::Check(_), None) => unreachable!("files carry work"),
    }
}

fn stamp_of(h: &Hashed) -> Stamp {
    Stamp { size: h.size, mtime_ns: h.mtime_ns.unwrap_or(0) }
}

/// A known file was read: same version with the same content is ok, same version with
/// other content is corruption, another version is an edit.
fn record_content(
    row: &Row,
    h: &Hashed,
    now: i64,
    window: i128,
    st: &mut Store<'_>,
    report: &mut Report,
    notice: &mut dyn FnMut(Notice),
) {
    let digest = h.digests[0];
    let stamp = stamp_of(h);
    let recorded = Digest::new(&row.digest);
    let path = &row.path;
    if stamp.matches(&row.stamp, window) {
        if recorded.ct_eq(&digest) {
            st.write(notice, None, |w| w.checked(path, Class::Ok, now, None));
            report.add(Class::Ok);
        } else {
            let note = format!("recorded {}, now {}", recorded.to_hex(), digest.to_hex());
            let f = finding(path, Class::Corrupt, Some(note.clone()));
            st.write(notice, f, |w| w.checked(path, Class::Corrupt, now, Some(&note)));
            report.add(Class::Corrupt);
        }
    } else {
        st.write(notice, finding(path, Class::Modified, None), |w| {
            w.rehashed(path, stamp, h.file_id, digest.as_bytes(), Class::Modified, now)
        });
        report.add(Class::Modified);
    }
}

fn failed_read(
    rel: &[u8],
    known: bool,
    e: ReadError,
    now: i64,
    st: &mut Store<'_>,
    report: &mut Report,
    notice: &mut dyn FnMut(Notice),
) {
    let gone = match &e {
        ReadError::Io(io) => io.kind() == io::ErrorKind::NotFound,
        ReadError::NotRegular(_) | ReadError::Symlink => true,
        _ => false,
    };
    if gone {
        // Vanished (or stopped being a regular file) between the walk and the read.
        if known {
            st.write(notice, finding(rel, Class::Missing, None), |w| w.missing(rel, now));
            report.add(Class::Missing);
        }
        return;
    }
    if matches!(e, ReadError::OwnOutput) {
        return;
    }
    report.add(Class::Unreadable);
    let message = e.message();
    if known {
        let f = finding(rel, Class::Unreadable, Some(message.clone()));
        st.write(notice, f, |w| w.checked(rel, Class::Unreadable, now, Some(&message)));
    } else {
        // Never recorded (there is no digest to keep): listed from memory instead.
        report.extra.push(Finding {
            path: rel.to_vec(),
            class: Class::Unreadable,
            note: Some(message),
        });
    }
}

/// Where a file under `root` is, as a path.
pub fn full_path(root: &Path, rel: &[u8]) -> PathBuf {
    root.join(OsStr::from_bytes(rel))
}

// ---------------------------------------------------------------------------------------
// The xattr store.

/// What the xattr producer hands its sink.
enum XItem {
    /// A file whose attributes say it is unchanged (scan): nothing to read.
    Unchanged,
    /// A file with no record: hash and record.
    New(Vec<u8>),
    /// A file whose record describes another version: re-hash and record.
    Outdated(Vec<u8>, xa::Attrs),
    /// A file to re-read and compare with its record.
    Check(Vec<u8>, xa::Attrs),
    /// Attributes could not be read.
    AttrError(Vec<u8>, String),
    /// Skipped on purpose.
    Skipped(Vec<u8>, &'static str),
    /// The walk failed here.
    WalkError(Vec<u8>, String),
}

/// One classified file from the xattr store (reported as found, in path order).
#[derive(Clone, Debug)]
pub struct Finding {
    /// Path relative to the root.
    pub path: Vec<u8>,
    /// What was found.
    pub class: Class,
    /// Details (the error, or recorded and actual digests).
    pub note: Option<String>,
}

/// Runs `scan` or `verify` with digests in extended attributes. `prefer` is the
/// algorithm for files without a record; files with one are checked with theirs.
/// `found` gets every file that is not ok, in path order, as it is classified.
pub fn run_xattr(
    root: &Path,
    prefer: &'static Algorithm,
    opts: &Options,
    found: &mut dyn FnMut(Finding),
    notice: &mut dyn FnMut(Notice),
) -> Result<Report, ScrubError> {
    xa::probe(root).map_err(ScrubError::Store)?;
    let started = Instant::now();
    let now = now_ms();
    let mut report =
        Report { command: opts.mode.name(), started_ms: now, complete: true, ..Default::default() };
    let window = opts.modify_window_ns;
    let follow = opts.follow;
    let verify = opts.mode == Mode::Verify;
    // A slice continues after the last file the previous slice took.
    let cursor = if verify { xa::read_cursor(root).ok().flatten() } else { None };
    let mut stopped: Option<&'static str> = None;
    let mut last_taken: Option<Vec<u8>> = None;
    let walk_opts = WalkOptions { follow, exclude: opts.exclude.clone(), threads: 4, stat: true };
    let (max_bytes, max_duration) = (opts.max_bytes, opts.max_duration);
    {
        let (stopped, last_taken) = (&mut stopped, &mut last_taken);
        let cursor = cursor.clone();
        pipeline::run(
            &opts.engine,
            move |push| {
                let mut budget_used = 0u64;
                walk(root, &walk_opts, &mut |ev| {
                    let task = match ev {
                        WalkEvent::Skipped(f, why) => Task {
                            payload: XItem::Skipped(rel_of(root, &f).to_vec(), why),
                            work: None,
                        },
                        WalkEvent::Error(f, e) => Task {
                            payload: XItem::WalkError(rel_of(root, &f).to_vec(), io_message(&e)),
                            work: None,
                        },
                        WalkEvent::File(f, walk_stamp) => {
                            let rel = rel_of(root, &f).to_vec();
                            let attrs = match xa::read(&f, prefer) {
                                Ok(a) => a,
                                Err(e) => {
                                    let payload = XItem::AttrError(rel, io_message(&e));
                                    return push(Task { payload, work: None });
                                }
                            };
                            let stamp = walk_stamp;
                            let payload = match attrs {
                                None => XItem::New(rel),
                                Some(a) if !stamp.is_some_and(|s| a.describes(&s, window)) => {
                                    XItem::Outdated(rel, a)
                                }
                                // A standing corrupt finding: read again by every run.
                                Some(a) if a.corrupt => XItem::Check(rel, a),
                                Some(_) if !verify => XItem::Unchanged,
                                Some(_)
                                    if stopped.is_some()
                                        || cursor
                                            .as_ref()
                                            .is_some_and(|c| rel.as_slice() <= c.as_slice()) =>
                                {
                                    XItem::Unchanged
                                }
                                Some(_) if max_bytes.is_some_and(|m| budget_used >= m) => {
                                    *stopped = Some("max-bytes");
                                    XItem::Unchanged
                                }
                                Some(_) if max_duration.is_some_and(|d| started.elapsed() >= d) => {
                                    *stopped = Some("max-duration");
                                    XItem::Unchanged
                                }
                                Some(a) => {
                                    budget_used += stamp.map_or(0, |s| s.size);
                                    *last_taken = Some(rel.clone());
                                    XItem::Check(rel, a)
                                }
                            };
                            let algo = match &payload {
                                XItem::Unchanged => return push(Task { payload, work: None }),
                                XItem::Outdated(_, a) | XItem::Check(_, a) => a.algo,
                                _ => prefer,
                            };
                            let work = Work {
                                path: f,
                                mode: OpenMode::Walked { follow },
                                algos: Arc::from(vec![algo]),
                            };
                            Task { payload, work: Some(work) }
                        }
                    };
                    push(task)
                });
            },
            |item, outcome| {
                xattr_sink(
                    root,
                    prefer,
                    item,
                    outcome,
                    now,
                    window,
                    verify,
                    &mut report,
                    found,
                    notice,
                );
                true
            },
        );
    }
    if verify {
        let result = match stopped {
            Some(why) => {
                report.complete = false;
                report.stopped_by = Some(why);
                match last_taken.or(cursor) {
                    Some(c) => xa::write_cursor(root, Some(&c)),
                    None => Ok(()),
                }
            }
            None => xa::write_cursor(root, None),
        };
        if let Err(e) = result {
            return Err(ScrubError::Store(format!(
                "cannot store the slice cursor on {}: {}",
                crate::pathtext::quote_env(path_bytes(root)),
                io_message(&e)
            )));
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

fn found_one(
    report: &mut Report,
    found: &mut dyn FnMut(Finding),
    path: Vec<u8>,
    class: Class,
    note: Option<String>,
) {
    report.add(class);
    if class != Class::Ok {
        found(Finding { path, class, note });
    }
}

#[allow(clippy::too_many_arguments)]
fn xattr_sink(
    root: &Path,
    prefer: &'static Algorithm,
    item: XItem,
    outcome: pipeline::Outcome,
    now: i64,
    window: i128,
    verify: bool,
    report: &mut Report,
    found: &mut dyn FnMut(Finding),
    notice: &mut dyn FnMut(Notice),
) {
    let store_error = |e: io::Error| Some(format!("cannot store attributes: {}", io_message(&e)));
    match (item, outcome) {
        (XItem::Unchanged, _) => {
            if !verify {
                report.add(Class::Ok);
            }
        }
        (XItem::Skipped(rel, why), _) => {
            report.skipped += 1;
            notice(Notice::Skipped(rel, why));
        }
        (XItem::WalkError(rel, why) | XItem::AttrError(rel, why), _) => {
            found_one(report, found, rel, Class::Unreadable, Some(why));
        }
        (XItem::New(rel) | XItem::Outdated(rel, _) | XItem::Check(rel, _), Some(Err(e))) => {
            let vanished = matches!(&e, ReadError::Io(io) if io.kind() == io::ErrorKind::NotFound);
            if !e.is_skip() && !vanished {
                found_one(report, found, rel, Class::Unreadable, Some(e.message()));
            }
        }
        (XItem::New(rel), Some(Ok(h))) => {
            report.files_read += 1;
            report.bytes_read += h.size;
            let path = full_path(root, &rel);
            match xa::write(&path, prefer, &h.digests[0], stamp_of(&h), now) {
                Ok(()) => found_one(report, found, rel, Class::New, None),
                Err(e) => found_one(report, found, rel, Class::Unreadable, store_error(e)),
            }
        }
        (XItem::Outdated(rel, a), Some(Ok(h))) => {
            report.files_read += 1;
            report.bytes_read += h.size;
            let path = full_path(root, &rel);
            match xa::write(&path, a.algo, &h.digests[0], stamp_of(&h), now) {
                Ok(()) => found_one(report, found, rel, Class::Modified, None),
                Err(e) => found_one(report, found, rel, Class::Unreadable, store_error(e)),
            }
        }
        (XItem::Check(rel, a), Some(Ok(h))) => {
            report.files_read += 1;
            report.bytes_read += h.size;
            let path = full_path(root, &rel);
            let stamp = stamp_of(&h);
            let class = if !a.describes(&stamp, window) {
                xa::write(&path, a.algo, &h.digests[0], stamp, now).map(|()| Class::Modified)
            } else if a.digest.ct_eq(&h.digests[0]) {
                let r = if a.source == xa::Source::Shatag {
                    // Switching from cshatag: add fixity's own record beside it.
                    xa::write(&path, a.algo, &h.digests[0], stamp, now)
                } else {
                    xa::mark_verified(&path, now, a.corrupt)
                };
                r.map(|()| Class::Ok)
            } else {
                let note = format!("recorded {}, now {}", a.digest.to_hex(), h.digests[0].to_hex());
                // Marked, so that every later run (a scan, any slice) reads it again; a
                // file whose mark cannot be set is still reported now.
                let _ = xa::mark_corrupt(&path, &h.digests[0]);
                found_one(report, found, rel, Class::Corrupt, Some(note));
                return;
            };
            match class {
                Ok(c) => found_one(report, found, rel, c, None),
                Err(e) => found_one(report, found, rel, Class::Unreadable, store_error(e)),
            }
        }
        (_, None) => unreachable!("files carry work"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusion_applies_to_every_directory_above() {
        let ex = Exclude::new(&["*.tmp".into(), ".git".into(), "build/out".into()]).unwrap();
        assert!(excluded(&ex, b"a/b/c.tmp"));
        assert!(excluded(&ex, b"x/.git/config"));
        assert!(excluded(&ex, b".git"));
        assert!(excluded(&ex, b"build/out/a.o"));
        assert!(!excluded(&ex, b"a/b/c.txt"));
        assert!(!excluded(&ex, b"src/build/out"));
        assert!(!excluded(&Exclude::default(), b"a.tmp"));
    }

    fn vanished(rows: &[(&str, bool)], limit: usize) -> (Vec<(String, u64)>, u64) {
        let rows = rows.iter().map(|(p, m)| (p.as_bytes().to_vec(), *m));
        let (dirs, more) = vanished_dirs(rows, limit);
        (dirs.into_iter().map(|(d, n)| (String::from_utf8(d).unwrap(), n)).collect(), more)
    }

    #[test]
    fn vanished_directories_are_the_outermost_wholly_missing_ones() {
        let own = |v: &[(&str, u64)]| v.iter().map(|(d, n)| (d.to_string(), *n)).collect();
        // Nothing missing; one file missing beside present ones: no directory.
        assert_eq!(vanished(&[("a", false), ("b/c", false)], 10), (vec![], 0));
        assert_eq!(vanished(&[("a", true), ("b", false)], 10), (vec![], 0));
        // Everything missing: the root (the empty path).
        assert_eq!(vanished(&[("a", true), ("d/e/f", true)], 10), (own(&[("", 2)]), 0));
        // A wholly missing directory with a wholly missing subdirectory: only the outer.
        let rows = [
            ("a.txt", false),
            ("a/b", true),
            ("a/c/d", true),
            ("a/c/e", true),
            ("m/keep", false),
            ("m/x/1", true),
            ("m/y/1", true),
            ("m/y/2", false),
            ("z", false),
        ];
        assert_eq!(vanished(&rows, 10), (own(&[("a", 3), ("m/x", 1)]), 0));
        // Byte order puts "a.b/..." and "a/..." apart from "a-..." correctly.
        let rows = [("a-1", false), ("a/1", true), ("a/2", true), ("a0", false)];
        assert_eq!(vanished(&rows, 10), (own(&[("a", 2)]), 0));
        // A limit keeps memory bounded and counts the rest.
        let rows: Vec<(String, bool)> = (0..50)
            .map(|i| (format!("d{i:02}/f",), true))
            .chain([("keep".into(), false)])
            .collect();
        let rows: Vec<(&str, bool)> = rows.iter().map(|(p, m)| (p.as_str(), *m)).collect();
        let (dirs, more) = vanished(&rows, 5);
        assert_eq!((dirs.len(), more), (5, 45));
        assert_eq!(dirs[0], ("d00".to_string(), 1));
    }
}
