//! `fixity protect`: PAR2 recovery data for the files the catalog records as good, kept in
//! step with the catalog.
//!
//! The catalog's records, in path order, are cut into sets (`plan`). A set whose sidecar
//! says it was made from exactly the records the catalog holds now is current and is not
//! read. A set holding a file with a standing finding (corrupt, unreadable, missing) is
//! never re-made: its recovery data is what can repair that file. Any other set is made
//! anew in one read of its files, which also computes each file's catalog digest: a file
//! whose size and mtime are as recorded but whose content is not is rot, recorded as
//! CORRUPT (reported first) and never protected; its old set, if any, is kept. A file
//! changed since the catalog recorded it, or unreadable, is left out of the set and said.
//! Sets of files no longer recorded are removed, unless they hold a finding's data.

use super::making::{self, Ctx, End, Made, finding};
use super::plan::{Planned, Planner};
use super::sidecar::{Entry, Sidecar};
use super::{Event, Left, RepairError, sidecar_path};
use crate::catalog::Store;
use crate::par2;
use crate::pathtext::bytes_path;
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::thread::{Scope, ScopedJoinHandle};

/// How to protect.
#[derive(Clone, Debug)]
pub struct ProtectOptions {
    /// Recovery data as a share of the data (0.10 for 10%).
    pub redundancy: f64,
    /// Bytes the recovery data being computed may take at once.
    pub memory: u64,
    /// Where the sets are kept (default: TREE/.fixity/par2).
    pub par2_dir: PathBuf,
    /// Sets to re-make even if current (their recovery data was found damaged).
    pub remake: Vec<String>,
}

/// What a protect run did, in numbers.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ProtectReport {
    /// Sets made (or re-made), current (not read), kept (holding a finding), removed.
    pub made: u64,
    pub current: u64,
    pub kept: u64,
    pub removed: u64,
    /// Files in sets now, and their bytes.
    pub files: u64,
    pub bytes: u64,
    /// Bytes read by this run, and the bytes of the PAR2 files written.
    pub read: u64,
    pub written: u64,
    /// Bytes of recovery slice data written.
    pub recovery: u64,
    /// Files left out (corrupt, changed, unreadable; not those with a standing finding).
    pub left_out: u64,
    /// Of those, found corrupt.
    pub corrupt: u64,
}

/// Protects the tree at `root` whose records `store` holds.
pub fn protect(
    root: &Path,
    store: &mut dyn Store,
    opts: &ProtectOptions,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<ProtectReport, RepairError> {
    // The catalog's tree, or refused before anything is made (see `Store::claim_tree`).
    store.claim_tree(root)?;
    let existed = opts.par2_dir.exists();
    std::fs::create_dir_all(&opts.par2_dir)
        .map_err(|e| RepairError::Par2Dir(opts.par2_dir.clone(), e))?;
    let canonical = |p: &Path| crate::sys::canonicalize(p);
    if let (Ok(dir), Ok(tree)) = (canonical(&opts.par2_dir), canonical(root))
        && dir.starts_with(&tree)
        && !dir.starts_with(tree.join(crate::pathtext::STATE_DIR))
    {
        if !existed {
            let _ = std::fs::remove_dir(&opts.par2_dir);
        }
        return Err(RepairError::InsideTree(opts.par2_dir.clone()));
    }
    let now = store.clock()?;
    store.start_run("protect", now)?;
    // The sets' files as the run begins, read once (see `par2::Listing`).
    let listing = par2::Listing::read(&opts.par2_dir)
        .map_err(|e| RepairError::Par2Dir(opts.par2_dir.clone(), e))?;
    // Volumes of a run killed before its set was complete: nobody writes them now (the
    // run lock is held).
    for name in listing.names().filter(|n| crate::output::foreign_temp_name(n)) {
        use crate::sys::OsStrExt;
        let _ = std::fs::remove_file(listing.dir().join(std::ffi::OsStr::from_bytes(name)));
    }
    let ctime = crate::device::times(root).ctime_within(store.ctime_slack_ns());
    let report = ProtectReport::default();
    let mut job = Job { root, opts, now, ctime, report, stems: HashSet::new(), listing: &listing };
    let mut planner = Planner::default();
    std::thread::scope(|scope| -> Result<(), RepairError> {
        let mut flow = Flow { slots: VecDeque::new(), making: 0, held: 0, bytes: 0 };
        let mut pages = crate::catalog::RecordPages::after(None);
        while let Some(page) = pages.next(store)? {
            for rec in page {
                for set in planner.push(rec) {
                    job.set(scope, &mut flow, store, set, on)?;
                }
            }
        }
        if let Some(set) = planner.close() {
            job.set(scope, &mut flow, store, set, on)?;
        }
        while let Some(slot) = flow.slots.pop_front() {
            job.settle(&mut flow, store, slot, on)?;
        }
        Ok(())
    })?;
    job.sweep(store, on)?;
    store.commit()?;
    let summary = serde_json::to_string(&job.report).unwrap_or_default();
    store.finish_run(true, &summary)?;
    store.commit()?;
    Ok(job.report)
}

struct Job<'a> {
    root: &'a Path,
    opts: &'a ProtectOptions,
    now: i64,
    /// The ctime rule (the store's slack; `None` where ctimes are not trusted).
    ctime: Option<i128>,
    report: ProtectReport,
    /// The stems planned this run.
    stems: HashSet<String>,
    /// The sets' files when the run began.
    listing: &'a par2::Listing,
}

/// Sets made on threads of their own at once, at most (one set's reading, writing and
/// serial steps overlap another's arithmetic): 1.5x faster on a tree of 50,000 small files
/// (D3, 2 cores), where a set is a few MiB.
const MAKING: usize = 4;
/// The bytes of the files of the sets being made together, at most (unless one set alone
/// holds more): each set's reading holds up to its size in memory at once.
const IN_FLIGHT: u64 = super::plan::SET_MAX;

/// The sets planned and not yet settled, in path order: those decided at once and those
/// being made on a thread. Their recovery data together stays within `--memory`: a set is
/// started with the share it needs (`held`, all of it at most: then it runs alone, in as
/// many passes as it takes).
struct Flow<'s> {
    slots: VecDeque<Slot<'s>>,
    /// Sets being made, the memory their shares hold, and their files' bytes.
    making: usize,
    held: u64,
    bytes: u64,
}

impl Flow<'_> {
    /// Whether a set of `bytes` needing `need` bytes of recovery data (at most `memory`)
    /// may start now: always when none is being made, else while fewer than [`MAKING`] are,
    /// the shares together stay within `memory` and the files within [`IN_FLIGHT`].
    fn room(&self, need: u64, bytes: u64, memory: u64) -> bool {
        self.making == 0
            || (self.making < MAKING
                && self.held + need <= memory
                && self.bytes + bytes <= IN_FLIGHT)
    }
}

enum Slot<'s> {
    Current { stem: String, files: u64, bytes: u64 },
    Kept { stem: String, why: &'static str },
    Making { stem: String, share: u64, bytes: u64, thread: ScopedJoinHandle<'s, Made> },
}

impl<'a> Job<'a> {
    /// Decides what `set` needs; one to make is started on a thread of its own (once the
    /// sets before it leave room), its result settled in turn.
    fn set<'s>(
        &mut self,
        scope: &'s Scope<'s, '_>,
        flow: &mut Flow<'s>,
        store: &mut dyn Store,
        set: Planned,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), RepairError>
    where
        'a: 's,
    {
        let dir = &self.opts.par2_dir;
        self.stems.insert(set.stem.clone());
        let side = sidecar_path(dir, &set.stem);
        let old = Sidecar::read(&side).ok().flatten();
        let algo = store.algorithm().name;
        let now_entries: Vec<Entry> = set.records.iter().map(Entry::of).collect();
        let index = dir.join(format!("{}.par2", set.stem));
        let current = !self.opts.remake.contains(&set.stem)
            && old.as_ref().is_some_and(|s| {
                s.entries.len() == now_entries.len()
                    && s.entries.iter().zip(&now_entries).all(|(a, b)| a.same_content(b))
                    && s.algorithm == algo
                    && (s.set.is_empty() || index.exists())
            });
        let slot = if current {
            if let Some(old) = old.filter(|s| !s.sparse_known) {
                self.note_sparse(old, &side)?;
            }
            let files = set.records.len() as u64;
            let bytes: u64 = set.records.iter().map(|r| r.size.unwrap_or(0)).sum();
            Slot::Current { stem: set.stem, files, bytes }
        } else if old.as_ref().is_some_and(|s| {
            // The old set holds the recorded content of a file with a finding: keep it.
            set.records
                .iter()
                .filter(|r| finding(r))
                .any(|r| s.entries.iter().any(|e| e.path == r.path))
        }) {
            let why = if self.opts.remake.contains(&set.stem) {
                "its recovery data is damaged, but it holds a file with a finding: re-made once \
                 that is resolved"
            } else {
                "it holds a file with a finding"
            };
            Slot::Kept { stem: set.stem, why }
        } else {
            // Room first: the sets before it settled until this one's share fits.
            let memory = self.opts.memory;
            let need = making::recovery_bytes(&set, self.opts.redundancy).clamp(1, memory.max(1));
            let bytes: u64 = set.records.iter().map(|r| r.size.unwrap_or(0)).sum();
            while !flow.room(need, bytes, memory) {
                let slot = flow.slots.pop_front().expect("a set being made is in the flow");
                self.settle(flow, store, slot, on)?;
            }
            let share = need;
            let ctx = Ctx {
                root: self.root,
                listing: self.listing,
                redundancy: self.opts.redundancy,
                ctime: self.ctime,
            };
            let had_set = old.is_some();
            let stem = set.stem.clone();
            let thread = scope.spawn(move || making::make(ctx, &set, had_set, share));
            flow.making += 1;
            flow.held += share;
            flow.bytes += bytes;
            Slot::Making { stem, share, bytes, thread }
        };
        flow.slots.push_back(slot);
        // Whatever is settled at the front is said now.
        while let Some(front) = flow.slots.front() {
            if matches!(front, Slot::Making { thread, .. } if !thread.is_finished()) {
                break;
            }
            let slot = flow.slots.pop_front().expect("a front slot");
            self.settle(flow, store, slot, on)?;
        }
        Ok(())
    }

    /// Says (and records) what became of a set, in the planned order; a set made is put in
    /// place here.
    fn settle(
        &mut self,
        flow: &mut Flow<'_>,
        store: &mut dyn Store,
        slot: Slot<'_>,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), RepairError> {
        let (stem, share, bytes, thread) = match slot {
            Slot::Current { stem, files, bytes } => {
                self.report.current += 1;
                self.report.files += files;
                self.report.bytes += bytes;
                on(Event::SetCurrent { stem: &stem, files: files as usize });
                return Ok(());
            }
            Slot::Kept { stem, why } => {
                self.report.kept += 1;
                on(Event::SetKept { stem: &stem, why });
                return Ok(());
            }
            Slot::Making { stem, share, bytes, thread } => (stem, share, bytes, thread),
        };
        let made = thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        flow.making -= 1;
        flow.held -= share;
        flow.bytes -= bytes;
        let Made { steps, end } = made;
        // Reported, then recorded.
        for step in steps {
            self.left(on, &step.path, step.why);
            if let Some(r) = step.record {
                store.record_check(
                    &r.rec,
                    r.class,
                    r.found.as_ref(),
                    r.note.as_deref(),
                    self.now,
                )?;
            }
        }
        let dir = self.opts.par2_dir.clone();
        match end? {
            End::Kept(why) => {
                self.report.kept += 1;
                on(Event::SetKept { stem: &stem, why });
            }
            End::Made { pending, entries, bytes, read, slice, recovery } => {
                // Nothing of the new set was in place until now: rot leaves the old one whole.
                let written = pending
                    .finish(self.listing)
                    .map_err(|e| RepairError::Par2Dir(dir.clone(), e))?;
                let side = Sidecar {
                    set: crate::digest::hex_encode(&written.set_id, false),
                    algorithm: store.algorithm().name.to_string(),
                    redundancy: self.opts.redundancy,
                    recovery,
                    entries,
                    sparse_known: true,
                };
                side.write(&sidecar_path(&dir, &stem))
                    .map_err(|e| RepairError::Par2Dir(dir.clone(), e))?;
                self.report.read += read;
                self.report.made += 1;
                self.report.files += side.entries.len() as u64;
                self.report.bytes += bytes;
                self.report.written += written.bytes;
                self.report.recovery += written.recovery_bytes;
                on(Event::SetMade {
                    stem: &stem,
                    files: side.entries.len(),
                    bytes,
                    par2_bytes: written.bytes,
                    slice,
                    recovery_slices: recovery,
                });
            }
            // Only empty files (or none): a sidecar alone says what the set covers.
            End::Empty(entries) if !entries.is_empty() => {
                let side = Sidecar {
                    set: String::new(),
                    algorithm: store.algorithm().name.to_string(),
                    redundancy: self.opts.redundancy,
                    recovery: 0,
                    entries,
                    sparse_known: true,
                };
                side.write(&sidecar_path(&dir, &stem))
                    .map_err(|e| RepairError::Par2Dir(dir.clone(), e))?;
                self.report.files += side.entries.len() as u64;
            }
            End::Empty(_) => {
                let _ = std::fs::remove_file(sidecar_path(&dir, &stem));
            }
        }
        Ok(())
    }

    /// Writes the version-1 or 2 sidecar `old` of a current set again with the sparse
    /// and access columns: whether each file is sparse now (it is as recorded, so as when
    /// the set was made) and who may read it, for a repair to rebuild it so. The set
    /// itself is not read or made again.
    fn note_sparse(&self, mut old: Sidecar, side: &Path) -> Result<(), RepairError> {
        for e in &mut old.entries {
            let path = self.root.join(bytes_path(&e.path));
            let meta = std::fs::symlink_metadata(&path).ok().filter(|m| m.is_file());
            e.sparse = meta.as_ref().is_some_and(crate::read::is_sparse);
            e.access = meta.as_ref().map(|m| crate::device::Access::of(m).with_attributes(&path));
        }
        old.sparse_known = true;
        old.write(side).map_err(|e| RepairError::Par2Dir(self.opts.par2_dir.clone(), e))
    }

    fn left(&mut self, on: &mut dyn FnMut(Event<'_>), path: &[u8], why: Left) {
        // A standing finding is reported by scan and verify already: not a new problem.
        if !matches!(why, Left::Finding(_)) {
            self.report.left_out += 1;
        }
        self.report.corrupt += u64::from(why == Left::Corrupt);
        on(Event::Left { path, why });
    }

    /// Removes sets not planned this run, unless one holds a file with a finding.
    fn sweep(
        &mut self,
        store: &dyn Store,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), RepairError> {
        let dir = &self.opts.par2_dir;
        // Only the sets not planned are read.
        let stale = super::sidecar::stems(dir)
            .into_iter()
            .filter(|stem| !self.stems.contains(stem) && stem.starts_with("set-"));
        for stem in stale {
            let side = Sidecar::read(&sidecar_path(dir, &stem)).ok().flatten();
            let mut holds = false;
            for e in side.iter().flat_map(|s| &s.entries) {
                if store.lookup(&e.path)?.as_ref().is_some_and(finding) {
                    holds = true;
                    break;
                }
            }
            if holds {
                self.report.kept += 1;
                on(Event::SetKept { stem: &stem, why: "it holds a file with a finding" });
                continue;
            }
            self.listing
                .remove(std::ffi::OsStr::new(&stem))
                .and_then(|()| std::fs::remove_file(sidecar_path(dir, &stem)))
                .map_err(|e| RepairError::Par2Dir(dir.clone(), e))?;
            self.report.removed += 1;
            on(Event::SetRemoved { stem: &stem });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_start_side_by_side_only_within_the_memory() {
        let flow = |making, held, bytes| Flow { slots: VecDeque::new(), making, held, bytes };
        // Alone: whatever it needs (its share is all of the memory at most), however large.
        assert!(flow(0, 0, 0).room(100, 10 * IN_FLIGHT, 100));
        // Beside another while both shares fit.
        assert!(flow(1, 40, 1).room(60, 1, 100));
        assert!(!flow(1, 41, 1).room(60, 1, 100));
        // A set that needs all of it waits for the others.
        assert!(!flow(1, 1, 1).room(100, 1, 100));
        // And so does one whose files would take the bytes in flight past the bound.
        assert!(flow(1, 0, IN_FLIGHT / 2).room(1, IN_FLIGHT / 2, 100));
        assert!(!flow(1, 0, IN_FLIGHT / 2).room(1, IN_FLIGHT / 2 + 1, 100));
        // Never more than MAKING at once, however small.
        assert!(!flow(MAKING, 0, 0).room(1, 1, u64::MAX));
    }
}
