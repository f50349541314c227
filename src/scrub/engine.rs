//! The scan/verify engine over a [`Store`]: phase one walks the tree beside the store's
//! records; then moves are paired and wholly missing directories found (stores that
//! remember gone files); phase two (verify, [`PassOrder::Stale`]) re-reads unchanged
//! files least recently verified first. A verify without a budget reads every file in
//! phase one instead (the walk takes no stat: the reader's tells a changed file), and
//! phase two reads only the records the walk did not meet. With [`PassOrder::Walk`] the
//! re-reading happens during the walk, in path order after the cursor an earlier slice
//! left. A run over one part of a tree ([`run_part`]) takes the part's list for the walk
//! and the part's range of records, and a verify of a part reads its files during that
//! walk.

use super::moves::{find_vanished, pair_moves};
use super::recorder::{Item, Recorder, sink};
use super::scope::{Bounds, Listed, Scope};
use super::{Mode, Notice, Options, Report, ScrubError, Window, excluded, rel_of};
use crate::algo::Algorithm;
use crate::catalog::{Class, Pass, PassOrder, Records, Store, StoreError};
use crate::pipeline::{self, Task, Work};
use crate::read::{OpenMode, io_message};
use crate::walk::{WalkEvent, WalkOptions, default_threads, event_at, walk_under};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Runs `scan` or `verify` over the tree at `root` with `store`. With a store that lists
/// findings ([`Store::lists_findings`]), classified files are recorded, not reported:
/// list them afterwards in path order with [`Store::findings`] (moves are only known at
/// the end), beside [`Report::extra`]. Otherwise every file that is not ok goes to
/// `notice` ([`Notice::Found`]) as it is classified. `notice` also gets skipped entries,
/// and findings the store could not record ([`Notice::Unrecorded`]); the store's error
/// is then in [`Report::catalog_error`]. Known corrupt and unreadable files are re-read
/// by every run, budget or not, so a finding stands until it is resolved.
pub fn run(
    root: &Path,
    store: &mut dyn Store,
    opts: &Options,
    notice: &mut dyn FnMut(Notice),
) -> Result<Report, ScrubError> {
    run_in(root, store, opts, None, None, notice)
}

/// Runs `scan` or `verify` over one part of the tree at `root` (see [`Scope`]), as
/// [`run`] does over all of it, with three differences: the files are the ones the
/// part's list names (looked at now: gone ones are missing, none is new that the list
/// does not name); only the records in the part's range are looked at (so each gone
/// file is reported by one part); and a verify reads every unchanged file of the part
/// in path order, leaving the store's verification pass (of the whole tree) alone. A
/// part takes no budget: split the tree into more parts instead.
pub fn run_part(
    root: &Path,
    store: &mut dyn Store,
    opts: &Options,
    scope: Scope,
    notice: &mut dyn FnMut(Notice),
) -> Result<Report, ScrubError> {
    run_in(root, store, opts, Some(scope), None, notice)
}

/// Runs `scan` or `verify` over the subtree `sub` of the tree at `root` (the path of a
/// directory below the root, relative to it, without a trailing `/`), as [`run`] does
/// over the whole tree, but only there: the walk starts at the subtree's directory, only
/// the records below it are looked at (a file gone elsewhere is not missing), a missing
/// file pairs only with a new file below it (a move), and new files are recorded by
/// their paths from the root. A verify reads every file of the subtree in its walk, in
/// a pass of its own: the files' last verification is recorded, the tree's verification
/// pass is neither advanced nor completed (a subtree verified is not the tree verified).
/// A subtree takes no budget (`max_bytes`, `max_duration`).
pub fn run_subtree(
    root: &Path,
    store: &mut dyn Store,
    opts: &Options,
    sub: &[u8],
    notice: &mut dyn FnMut(Notice),
) -> Result<Report, ScrubError> {
    run_in(root, store, opts, None, Some(sub).filter(|s| !s.is_empty()), notice)
}

fn run_in(
    root: &Path,
    store: &mut dyn Store,
    opts: &Options,
    scope: Option<Scope>,
    sub: Option<&[u8]>,
    notice: &mut dyn FnMut(Notice),
) -> Result<Report, ScrubError> {
    let started = Instant::now();
    let now = store.clock()?;
    let algo = store.algorithm();
    let order = store.pass_order();
    let verify = opts.mode == Mode::Verify;
    let sliced = opts.max_bytes.is_some() || opts.max_duration.is_some();
    let (bounds, listed, part) = match scope {
        Some(s) if sliced => {
            return Err(ScrubError::Store(format!(
                "part {} is verified whole: split the tree into more parts instead of a \
                 budget (--max-bytes, --max-duration)",
                s.part.part
            )));
        }
        Some(s) => (s.bounds, Some(s.entries), Some((s.part, s.listed_ms))),
        None if sub.is_some() && sliced => {
            return Err(ScrubError::Store(
                "a subtree is verified whole: drop --max-bytes and --max-duration, or \
                 verify the whole tree in slices"
                    .into(),
            ));
        }
        None => match sub.map(crate::catalog::below) {
            Some((from, until)) => (Bounds { from, until }, None, None),
            None => (Bounds::default(), None, None),
        },
    };
    let (part, listed_ms) = part.unzip();
    let in_part = listed.is_some();
    // A part or a subtree reads its files in its walk, in a pass of its own.
    let own_pass = in_part || sub.is_some();
    // A run over the whole tree at `root`: the store's tree, or refused before anything
    // is written (a part's root is the plan's, checked when the plan was made).
    if !in_part {
        store.claim_tree(root)?;
    }
    let mut report = Report {
        command: opts.mode.name(),
        started_ms: now,
        complete: true,
        part,
        subtree: sub.map(|s| String::from_utf8_lossy(s).into_owned()),
        ..Default::default()
    };
    // A whole verification pass (no budget) reads every file the walk meets, beside the
    // store's records: the reader's own `fstat` tells a changed file from an unchanged
    // one, so the walk takes no stat, and phase two finds nothing left to read but the
    // records the walk did not meet (under an exclusion; issue 27).
    let whole = verify && !sliced && !own_pass && order == PassOrder::Stale;
    // A pass in walk order is joined before the walk, which does its reading; a part's
    // verify reads all its files in that walk, in a pass of its own.
    let walk_pass = match verify && (order == PassOrder::Walk || own_pass) {
        true if own_pass => Some(Pass { since: now, after: None }),
        true => Some(store.pass(sliced, now)?),
        false => None,
    };
    let lists = store.lists_findings();
    let remembers_gone = store.remembers_gone();
    let root_dir = Some(root.to_path_buf());
    let mut rec =
        Recorder { store, lists, batch: Default::default(), failed: None, root: root_dir };
    if let Err(e) = rec.store.start_run(opts.mode.name(), now) {
        rec.fail(e, notice);
    }
    let mut records = rec.store.records(bounds.from.as_deref())?;
    // With no record at all, or every file read, no file is compared by its stat: the
    // walk takes none.
    let stat = !records.none() && !whole;
    // The file system's times (one look at its type): its mtime precision, unless
    // --modify-window says, and its ctimes within the store's slack, where trusted.
    let times = crate::device::times(root);
    let mtime_ns = opts.modify_window_ns.unwrap_or(times.window_ns);
    let window = Window { mtime_ns, ctime: times.ctime_within(rec.store.ctime_slack_ns()) };
    let algos: Arc<[&'static Algorithm]> = Arc::from(vec![algo]);

    // Phase one: the walk merged with the records.
    let mut slice = Slice {
        pass: walk_pass.clone(),
        max_bytes: opts.max_bytes,
        max_duration: opts.max_duration,
        started,
        used: 0,
        stopped: None,
        last_taken: None,
    };
    let mut read_error = None;
    let mut list_error = None;
    {
        let walk = Walker {
            root,
            start: sub.map_or_else(|| root.to_path_buf(), |s| super::full_path(root, s)),
            opts,
            walk: WalkOptions {
                follow: opts.follow,
                exclude: opts.exclude.clone(),
                threads: default_threads(),
                stat,
            },
            algos: algos.clone(),
            records,
            window,
            unreadable_dir: None,
            error: None,
            slice: &mut slice,
            listed,
            until: bounds.until.clone(),
            list_error: &mut list_error,
        };
        let read_error = &mut read_error;
        pipeline::run(
            &opts.engine,
            move |push| *read_error = walk.run(push),
            |item, outcome| {
                sink(item, outcome, now, window, remembers_gone, &mut rec, &mut report, notice);
                true
            },
        );
    }
    rec.commit(notice);
    if let Some(e) = list_error {
        // What was recorded stands; the run cannot go on without its list.
        return Err(ScrubError::Store(e));
    }
    if let Some(e) = read_error {
        // The merge stopped early: what it recorded stands, nothing after it was looked at.
        rec.fail(e, notice);
        report.complete = false;
    }

    if remembers_gone && report.count(Class::Missing) > 0 {
        let confined = sub.is_some();
        let bounded = (&bounds, listed_ms, confined);
        pair_moves(&mut rec, &mut report, (now, window), bounded, notice);
        if rec.ok() {
            find_vanished(&mut rec, &mut report, &bounds, notice);
        }
    }

    if own_pass {
        // The part's (subtree's) files were read in the walk; the tree's pass is not
        // the part's.
    } else if let Some(pass) = walk_pass {
        // A slice continues after the last file this one took (or where the last one
        // stopped, if this one took none).
        let end = match slice.stopped {
            Some(why) => {
                report.complete = false;
                report.stopped_by = Some(why);
                match slice.last_taken.or(pass.after) {
                    Some(c) => rec.store.pass_end(Some(&c), now),
                    None => Ok(()),
                }
            }
            None => rec.store.pass_end(None, now),
        };
        end?;
    } else if verify {
        stale_pass(
            root,
            &mut rec,
            &mut report,
            opts,
            (now, started, sliced, whole, window),
            notice,
        )?;
    }
    rec.commit(notice);
    report.seconds = started.elapsed().as_secs_f64();
    if rec.ok() {
        let summary = serde_json::to_string(&report).unwrap_or_default();
        if let Err(e) = rec.store.finish_run(report.complete, &summary) {
            rec.fail(e, notice);
        }
    }
    if let Err(e) = rec.store.check_in_place() {
        rec.failed = Some(e);
    }
    report.catalog_error = rec.failed.map(|e| e.to_string());
    Ok(report)
}

/// A verification slice in walk order: which unchanged files the walk reads.
struct Slice {
    /// The pass joined ([`PassOrder::Walk`] verify only).
    pass: Option<Pass>,
    max_bytes: Option<u64>,
    max_duration: Option<std::time::Duration>,
    started: Instant,
    /// Bytes of the files taken so far.
    used: u64,
    /// What stopped the slice.
    stopped: Option<&'static str>,
    /// The last path taken.
    last_taken: Option<Vec<u8>>,
}

impl Slice {
    /// Whether an unchanged file at `rel` of `size` bytes is read in this run.
    fn takes(&mut self, rel: &[u8], size: u64) -> bool {
        let Some(pass) = &self.pass else { return false };
        if self.stopped.is_some() || pass.after.as_ref().is_some_and(|c| rel <= c.as_slice()) {
            return false;
        }
        if self.max_bytes.is_some_and(|m| self.used >= m) {
            self.stopped = Some("max-bytes");
            return false;
        }
        if self.max_duration.is_some_and(|d| self.started.elapsed() >= d) {
            self.stopped = Some("max-duration");
            return false;
        }
        self.used += size;
        self.last_taken = Some(rel.to_vec());
        true
    }
}

/// The producer of phase one: the walk merged with the store's records, both in byte
/// order of their paths.
struct Walker<'a> {
    root: &'a Path,
    /// Where the walk starts: the root, or the subtree's directory.
    start: std::path::PathBuf,
    opts: &'a Options,
    walk: WalkOptions,
    /// How versions are told apart (mtime window, ctime rule).
    window: Window,
    algos: Arc<[&'static Algorithm]>,
    records: Box<dyn Records>,
    /// The last directory the walk could not read, and why.
    unreadable_dir: Option<(Vec<u8>, String)>,
    /// The error that ended the records.
    error: Option<StoreError>,
    slice: &'a mut Slice,
    /// A part's list, walked instead of the tree (see [`run_part`]).
    listed: Option<Box<dyn Iterator<Item = Result<Listed, String>> + Send>>,
    /// Where the part's records end.
    until: Option<Vec<u8>>,
    /// Why the list could not be read on.
    list_error: &'a mut Option<String>,
}

impl Walker<'_> {
    /// Walks; returns the error that ended the records early, if one did.
    fn run(mut self, push: &mut dyn FnMut(Task<Item>) -> bool) -> Option<StoreError> {
        let mut go_on = true;
        let (root, walk_opts, start) = (self.root, self.walk.clone(), self.start.clone());
        match self.listed.take() {
            None => walk_under(root, &start, &walk_opts, &mut |ev| {
                go_on = self.entry(ev, push);
                go_on
            }),
            Some(entries) => {
                for e in entries {
                    let ev = match e {
                        Ok(Listed::Path(rel)) if !excluded(&self.opts.exclude, &rel) => {
                            match event_at(&super::full_path(root, &rel), self.opts.follow) {
                                Some(ev) => ev,
                                None => continue, // gone: its record is missing
                            }
                        }
                        Ok(Listed::Path(_)) => continue,
                        Ok(Listed::Unlisted(rel, why)) => WalkEvent::Error(
                            super::full_path(root, &rel),
                            std::io::Error::other(why),
                        ),
                        Err(why) => {
                            *self.list_error = Some(why);
                            return self.error;
                        }
                    };
                    if !self.entry(ev, push) {
                        go_on = false;
                        break;
                    }
                }
            }
        }
        if go_on {
            let until = self.until.take();
            self.drain_before(until.as_deref(), push);
        }
        self.error
    }

    /// Records before `rel` in path order have no file: gone, or unreachable when under
    /// a directory the walk could not read. False when the run must stop.
    fn drain_before(
        &mut self,
        rel: Option<&[u8]>,
        push: &mut dyn FnMut(Task<Item>) -> bool,
    ) -> bool {
        while let Some(r) = self.records.next_before(rel) {
            if excluded(&self.opts.exclude, &r.path) {
                continue;
            }
            let item = match &self.unreadable_dir {
                // An empty `dir` is the root itself: everything is unreachable.
                Some((dir, why))
                    if r.path.starts_with(dir)
                        && (dir.is_empty() || r.path.get(dir.len()) == Some(&b'/')) =>
                {
                    Item::Unreachable(r, why.clone())
                }
                _ => Item::Gone(r),
            };
            if !push(Task { payload: item, work: None }) {
                return false;
            }
        }
        // The records could not be read on: stop before anything looks new.
        self.error = self.records.error();
        self.error.is_none()
    }

    fn entry(&mut self, ev: WalkEvent, push: &mut dyn FnMut(Task<Item>) -> bool) -> bool {
        let full = match &ev {
            WalkEvent::File(f, _) | WalkEvent::Skipped(f, _) | WalkEvent::Error(f, _) => f,
        };
        let rel = rel_of(self.root, full).to_vec();
        if !self.drain_before(Some(&rel), push) {
            return false;
        }
        let task = match ev {
            WalkEvent::File(f, stamp) => {
                let known = match self.records.file(&rel, &f) {
                    Ok(k) => k,
                    Err(why) => {
                        return push(Task { payload: Item::Unlisted(rel, why), work: None });
                    }
                };
                // Unchanged by size, mtime and ctime (the walk's stat): nothing to read
                // unless this run's slice takes it. A file recorded as missing that is
                // back unchanged is only marked present again. A known corrupt, changed
                // or unreadable file is read again by every run (a finding stands until
                // resolved). A file whose ctime moved is read (restic does the same): an
                // edit that put its mtime back is found by this scan, not by a verify
                // months later.
                if let (Some(r), Some(stamp)) = (&known, stamp)
                    && r.describes(&stamp, self.window.mtime_ns)
                    && !self.window.ctime_moved(r, &stamp)
                    && !r.last_result.read_again()
                    && !self.slice.takes(&rel, stamp.size)
                {
                    let back = r.missing_since.is_some().then_some(rel);
                    return push(Task { payload: Item::Unchanged(back), work: None });
                }
                let algos = match &known {
                    Some(r) if r.algo.name != self.algos[0].name => Arc::from(vec![r.algo]),
                    _ => self.algos.clone(),
                };
                let mode = OpenMode::Walked { follow: self.opts.follow };
                Task { payload: Item::File(rel, known), work: Some(Work { path: f, mode, algos }) }
            }
            WalkEvent::Skipped(_, why) => {
                if let Some(r) = self.records.other(&rel)
                    && !push(Task { payload: Item::Gone(r), work: None })
                {
                    return false;
                }
                Task { payload: Item::Skipped(rel, why), work: None }
            }
            WalkEvent::Error(_, e) => {
                let why = io_message(&e);
                self.unreadable_dir = Some((rel.clone(), why.clone()));
                if let Some(r) = self.records.other(&rel)
                    && !push(Task { payload: Item::Unreachable(r, why.clone()), work: None })
                {
                    return false;
                }
                Task { payload: Item::Unlisted(rel, why), work: None }
            }
        };
        push(task)
    }
}

/// Phase two with [`PassOrder::Stale`]: re-read unchanged files not looked at since the
/// pass began, in path order. A run without a budget is a whole pass by itself; slices
/// share a pass the store remembers, each going on after the last file the one before
/// took (and round to the start for what is left), which ends when every file has been
/// looked at since it began. After a walk that read every file it met (`walked`), only
/// what it did not meet is left.
fn stale_pass(
    root: &Path,
    rec: &mut Recorder<'_>,
    report: &mut Report,
    opts: &Options,
    (now, started, sliced, walked, window): (i64, Instant, bool, bool, Window),
    notice: &mut dyn FnMut(Notice),
) -> Result<(), ScrubError> {
    let pass = match rec.store.pass(sliced, now) {
        Ok(p) => p,
        Err(e) => {
            rec.fail(e, notice);
            Pass { since: now, after: None }
        }
    };
    if rec.ok()
        && let Err(e) = rec.store.pass_begun(pass.since)
    {
        rec.fail(e, notice);
    }
    report.pass_started_ms = pass.since;
    if walked {
        // A store that failed cannot tell what the walk read: nothing is read twice (nor
        // told twice), and the pass stays open.
        if !rec.ok() {
            report.complete = false;
            return Ok(());
        }
        let left = rec.store.stale_count(pass.since);
        if matches!(left, Ok((0, _))) {
            end_pass(rec, report, (pass.since, now), Some(left), None, notice);
            return Ok(());
        }
    }
    let mut pages = rec.store.stale(pass.since, pass.after.as_deref())?;
    // The last file this run took: where the next slice goes on.
    let mut took: Option<Vec<u8>> = None;
    let (max_bytes, max_duration) = (opts.max_bytes, opts.max_duration);
    let took_ref = &mut took;
    let remembers_gone = rec.store.remembers_gone();
    let mut budget_used = report.bytes_read;
    let mut stopped: Option<&'static str> = None;
    let mut read_error: Option<StoreError> = None;
    {
        let algos: Arc<[&'static Algorithm]> = Arc::from(vec![rec.store.algorithm()]);
        let (stopped, read_error) = (&mut stopped, &mut read_error);
        let follow = opts.follow;
        pipeline::run(
            &opts.engine,
            move |push| loop {
                let page = match pages.next_page(1024) {
                    Ok(p) if p.is_empty() => return,
                    Ok(p) => p,
                    Err(e) => {
                        *read_error = Some(e);
                        return;
                    }
                };
                for r in page {
                    if max_bytes.is_some_and(|m| budget_used >= m) {
                        *stopped = Some("max-bytes");
                        return;
                    }
                    if max_duration.is_some_and(|d| started.elapsed() >= d) {
                        *stopped = Some("max-duration");
                        return;
                    }
                    budget_used += r.size.unwrap_or(0);
                    *took_ref = Some(r.path.clone());
                    let path = super::full_path(root, &r.path);
                    let work =
                        Work { path, mode: OpenMode::Walked { follow }, algos: algos.clone() };
                    let item = Item::File(r.path.clone(), Some(r));
                    if !push(Task { payload: item, work: Some(work) }) {
                        return;
                    }
                }
            },
            |item, outcome| {
                sink(item, outcome, now, window, remembers_gone, rec, report, notice);
                true
            },
        );
    }
    rec.commit(notice);
    if let Some(e) = read_error {
        rec.fail(e, notice);
    }
    if let Some(why) = stopped {
        report.stopped_by = Some(why);
    }
    end_pass(rec, report, (pass.since, now), None, took.as_deref(), notice);
    Ok(())
}

/// Ends the verification pass begun at `since` if every present file has been looked at
/// since (the files left are in the report, counted unless `left` holds the count),
/// else leaves it under way, to go on after `took` (the last file this run took).
fn end_pass(
    rec: &mut Recorder<'_>,
    report: &mut Report,
    (since, now): (i64, i64),
    left: Option<Result<(u64, u64), StoreError>>,
    took: Option<&[u8]>,
    notice: &mut dyn FnMut(Notice),
) {
    let (files, bytes) = match left.unwrap_or_else(|| rec.store.stale_count(since)) {
        Ok(n) => n,
        Err(e) => {
            rec.fail(e, notice);
            (0, 0)
        }
    };
    report.remaining_files = files;
    report.remaining_bytes = bytes;
    if files == 0 && rec.ok() {
        if let Err(e) = rec.store.pass_end(None, now) {
            rec.fail(e, notice);
        }
        return;
    }
    report.complete = false;
    if let Some(took) = took
        && rec.ok()
        && let Err(e) = rec.store.pass_end(Some(took), now)
    {
        rec.fail(e, notice);
    }
}
