//! The one interface to what fixity remembers about a tree: [`Store`]. The scan/verify
//! engine ([`crate::scrub::run`]), `status`, `export`, `accept` and `forget` see a store
//! only through it; [`open_store`] picks the implementation from a [`StoreSpec`].
//!
//! Adding a store: one file implementing [`Store`] (and [`Records`] for its run cursor),
//! one [`StoreSpec`] variant and its arm in [`open_store`].

use super::Class;
use super::error::CatalogError;
use super::extra::{Extra, RemoteCheck};
use super::postgres::{PgSpec, PgStore};
use super::sqlite::SqliteStore;
use super::xattr::XattrStore;
use crate::algo::Algorithm;
use crate::device::{Access, Stamp};
use crate::digest::Digest;
use crate::proof::{Entry, Identity, Link};
use crate::read::io_message;
use std::io;
use std::path::{Path, PathBuf};

/// One file as a store records it.
#[derive(Clone, Debug)]
pub struct Record {
    /// Path relative to the tree's root, raw bytes.
    pub path: Vec<u8>,
    /// The algorithm of `digest`.
    pub algo: &'static Algorithm,
    /// The recorded digest: the content the file had when it was last hashed or accepted.
    pub digest: Digest,
    /// The size it was taken at, when recorded (cshatag's attributes do not record it).
    pub size: Option<u64>,
    /// The mtime it was taken at, ns since the epoch.
    pub mtime_ns: i128,
    /// Fraction digits of the recorded mtime (9 but for records another tool wrote with
    /// fewer): the mtimes are compared at this precision.
    pub precision: u32,
    /// What the last run found; [`Class::Corrupt`] and [`Class::Unreadable`] are standing
    /// findings, read again by every run until resolved.
    pub last_result: Class,
    /// Since when the file has been missing (ms), if it is.
    pub missing_since: Option<i64>,
    /// When its content last matched (or was hashed), ms; 0 if never or not recorded.
    pub last_verified: i64,
    /// The record is in another tool's layout (cshatag's attributes): the next
    /// verification that finds the content as recorded also writes fixity's own.
    pub foreign: bool,
    /// The digest was imported from another tool (`fixity import`) and fixity has not yet
    /// read the file and found it matching: the mark goes once a verification does.
    pub imported: bool,
    /// The inode's change time when the record was last written (ns since the epoch);
    /// `None` for a record made before fixity kept it, or by another tool.
    pub ctime_ns: Option<i128>,
    /// The file's permission bits, owner and group when the record was last written;
    /// `None` where not known (a record made before fixity kept them).
    pub access: Option<Access>,
}

impl Record {
    /// A record of `path` (tests): an ok file of `size` bytes, mtime 0, digest all zero
    /// of `algo`, never verified.
    #[cfg(test)]
    pub(crate) fn sample(path: &[u8], algo: &str, size: Option<u64>) -> Record {
        Record {
            path: path.to_vec(),
            algo: crate::algo::lookup(algo).unwrap(),
            digest: Digest::new(&[0; 32]),
            size,
            mtime_ns: 0,
            precision: 9,
            last_result: Class::Ok,
            missing_since: None,
            last_verified: 0,
            foreign: false,
            imported: false,
            ctime_ns: None,
            access: None,
        }
    }

    /// Whether the file's current `stamp` is the version this record describes: the same
    /// size (when recorded) and the same mtime at the recorded precision, within
    /// `window_ns` (`--modify-window`).
    pub(crate) fn describes(&self, stamp: &Stamp, window_ns: i128) -> bool {
        if self.size.is_some_and(|s| s != stamp.size) {
            return false;
        }
        let unit = 10i128.pow(9 - self.precision.min(9));
        let now = stamp.mtime_ns.div_euclid(unit) * unit;
        (now - self.mtime_ns).abs() <= window_ns.max(0)
    }

    /// Whether the file's inode changed since the record was written although `stamp`
    /// may still be the recorded version: both ctimes known and further apart than
    /// `slack_ns` (0 but for the xattr store, whose own attribute write moves the ctime
    /// once more after it is taken: [`crate::catalog::xattr`]). A chmod, a chown, a
    /// rename or a new link moves it with the content unchanged; an edit whose mtime was
    /// put back moves it with other content (never bitrot, which moves neither).
    pub(crate) fn ctime_moved(&self, stamp: &Stamp, slack_ns: i128) -> bool {
        match (self.ctime_ns, stamp.ctime_ns) {
            (Some(then), Some(now)) => now < then || now - then > slack_ns,
            _ => false,
        }
    }

    /// Whether a file read as this record's version has another inode than the record
    /// says: its ctime or its mode, owner or group moved (a new (device, inode) comes with
    /// a new ctime), or the record predates fixity keeping them. A store writes the new
    /// ones (no finding: a chmod, a rename).
    pub(crate) fn inode_moved(&self, found: &Found) -> bool {
        fn differs<T: PartialEq>(a: Option<T>, b: Option<T>) -> bool {
            a.is_some() && b.is_some() && a != b
        }
        let owner = |a: &Access| (a.mode, a.uid, a.gid);
        differs(self.ctime_ns, found.stamp.ctime_ns)
            || differs(self.access.as_ref().map(owner), found.access.as_ref().map(owner))
            || (self.ctime_ns.is_none() && found.stamp.ctime_ns.is_some())
    }

    /// The size and mtime this record describes (size 0 when not recorded), with the
    /// recorded ctime.
    pub(crate) fn stamp(&self) -> Stamp {
        Stamp { size: self.size.unwrap_or(0), mtime_ns: self.mtime_ns, ctime_ns: self.ctime_ns }
    }
}

/// What reading a file found: its content's digest and the version read.
#[derive(Clone, Copy, Debug)]
pub struct Found {
    /// The digest, with the algorithm of the file's record (or the store's, for a new file).
    pub digest: Digest,
    /// Size and mtime at the start of the read.
    pub stamp: Stamp,
    /// (device, inode), when known.
    pub file_id: Option<(u64, u64)>,
    /// Its permission bits, owner and group at the start of the read, when known.
    pub access: Option<Access>,
}

/// What a store keeps of a file's inode besides its stamp (whose ctime it has): (device,
/// inode) and who may read it. `None` converts to an inode with neither known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inode {
    pub id: Option<(u64, u64)>,
    pub access: Option<Access>,
}

impl From<Option<(u64, u64)>> for Inode {
    fn from(id: Option<(u64, u64)>) -> Inode {
        Inode { id, access: None }
    }
}

impl Found {
    /// The inode the file was read from.
    pub(crate) fn inode(&self) -> Inode {
        Inode { id: self.file_id, access: self.access }
    }
}

/// Errors of a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The catalog failed: from then on a run records nothing (its findings are handed
    /// over instead, see [`crate::scrub::Notice::Unrecorded`]).
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// One file's record could not be read or stored (its extended attributes); that
    /// file is reported unreadable and the run goes on.
    #[error("cannot store attributes: {}", io_message(.0))]
    Attributes(io::Error),
    /// The store cannot do this at all, or can no longer go on (the message says why).
    #[error("{0}")]
    Refused(String),
}

/// Receives (path, class, moved-from path, note) for each reported file.
pub type ReportFn<'a> = dyn FnMut(&[u8], Class, Option<&[u8]>, Option<&str>) + 'a;

/// The order of a verification pass over files whose size and mtime did not change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassOrder {
    /// During the walk, in path order, continuing after where the last slice stopped
    /// (a store without an index of its records: the records are in the files).
    Walk,
    /// After the walk, every file not looked at since the pass began, read from the
    /// catalog in path order; a slice goes on after the path where the last one stopped
    /// and wraps to the start for what is left (a store that keeps its records: the
    /// catalog).
    Stale,
}

/// Where a verification pass stands when a run joins it.
#[derive(Clone, Debug, Default)]
pub struct Pass {
    /// When the pass began (ms); 0 when the store does not keep it.
    pub since: i64,
    /// The last path an earlier slice of the pass took: this run goes on after it.
    pub after: Option<Vec<u8>>,
}

impl Pass {
    /// The pass a run takes part in, for a store that keeps the start of the pass
    /// under way (`stored`, with where its last slice stopped): a slice (`sliced`) joins
    /// it; a run without a budget is a pass of its own, begun `now`.
    pub(crate) fn joined(stored: Option<(i64, Option<Vec<u8>>)>, sliced: bool, now: i64) -> Pass {
        match stored {
            Some((since, after)) if sliced => Pass { since, after },
            _ => Pass { since: now, after: None },
        }
    }
}

/// Where the verification pass stands, for `fixity status` and the health checks.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PassState {
    /// A pass that slices are working through, if one is under way.
    pub under_way: Option<PassUnderWay>,
    /// When the last complete pass ended (ms since the epoch), if one has.
    pub last_completed: Option<i64>,
}

/// A verification pass begun and not yet complete.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PassUnderWay {
    /// When it began, ms since the epoch.
    pub since: i64,
    /// Present files not looked at since then.
    pub files_left: u64,
    /// Their size.
    pub bytes_left: u64,
}

/// Counts and times for `fixity status`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Files present (not missing).
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
    /// Files recorded as missing.
    pub missing: u64,
    /// Present files per last result.
    pub by_result: Vec<(String, u64)>,
    /// The least recently verified present file and when (ms).
    pub oldest_verified: Option<(Vec<u8>, i64)>,
    /// Present files verified within the last 1, 7 and 30 days.
    pub verified_within: [(u32, u64); 3],
    /// Present files whose digest was imported from another tool and not yet verified
    /// by fixity.
    pub imported: u64,
    /// Standing findings: files whose last result is corrupt or unreadable, and missing
    /// files (first 100, by path).
    pub problems: Vec<(Vec<u8>, String)>,
    /// The last few runs: command, started, finished, complete, summary JSON.
    pub runs: Vec<RunInfo>,
    /// The verification pass.
    #[serde(skip)]
    pub pass: PassState,
}

/// One file's record with what the store keeps of its history: what `fixity report`
/// lists for a finding and `export --format premis` writes for every file.
#[derive(Clone, Debug)]
pub struct History {
    /// Path relative to the tree's root, raw bytes.
    pub path: Vec<u8>,
    /// The size it was recorded at.
    pub size: u64,
    /// The recorded digest: the content the file had when it was last hashed or accepted
    /// (a corrupt file's record keeps the good content's).
    pub digest: Digest,
    /// When the file was first recorded (ms).
    pub first_seen: i64,
    /// When its content last matched the record, or was hashed (ms; 0 if never).
    pub last_verified: i64,
    /// When a run last looked at it (ms): the last time a standing finding was seen.
    pub last_checked: i64,
    /// What that run found.
    pub last_result: Class,
    /// Since when the file has been missing (ms), if it is.
    pub missing_since: Option<i64>,
    /// When its standing finding (corrupt or unreadable) was first found (ms); `None`
    /// when there is none, or when it was found before the catalog kept this (schema 1).
    pub finding_since: Option<i64>,
    /// The digest its content had when a run last found it corrupt.
    pub found_digest: Option<Digest>,
    /// The note of the last look: the read error of an unreadable file, or a corrupt
    /// file's two digests.
    pub note: Option<String>,
    /// The path it was found moved from, if the last run found it moved.
    pub moved_from: Option<Vec<u8>>,
}

impl History {
    /// The standing finding this record is, if any: missing (whatever the last result
    /// was), corrupt or unreadable.
    pub fn finding(&self) -> Option<Class> {
        if self.missing_since.is_some() {
            return Some(Class::Missing);
        }
        self.last_result.is_failure().then_some(self.last_result)
    }
}

/// One run as the store remembers it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunInfo {
    /// `scan` or `verify`.
    pub command: String,
    /// Start, ms since the epoch.
    pub started: i64,
    /// End, if it ended normally.
    pub finished: Option<i64>,
    /// Whether it covered everything it set out to (a slice may stop early).
    pub complete: Option<bool>,
    /// Its counts, as JSON: the engine's `scrub::Report` (`counts` per class,
    /// `files_read`, `bytes_read`, `seconds`, `complete` ...).
    pub summary: Option<String>,
}

/// A run's cursor over the known records, handed to the walk's thread: the walk asks it,
/// in path order, for the record of each entry it meets and for the records that no entry
/// matched (files gone from the tree).
pub trait Records: Send {
    /// The next record whose path sorts before `rel` (every one left with `None`): a
    /// record with no entry in the tree.
    fn next_before(&mut self, rel: Option<&[u8]>) -> Option<Record>;
    /// The record of the file at `rel` (`full` is its path), if any; an error (the
    /// record could not be read) in words.
    fn file(&mut self, rel: &[u8], full: &Path) -> Result<Option<Record>, String>;
    /// The record of an entry at `rel` that is not a file (skipped, or a directory that
    /// could not be read), if the store remembers one there.
    fn other(&mut self, rel: &[u8]) -> Option<Record>;
    /// The error that ended the records early, if one did: the merge must then stop,
    /// since every file after it would look new.
    fn error(&mut self) -> Option<StoreError>;
    /// Whether there is no record at all (known once the first page is read): then no
    /// file the walk meets has a record to compare its size and mtime with, and the walk
    /// need not `stat` it (a first scan: the reader's own `fstat` stamps the record).
    /// `false` when the store cannot tell.
    fn none(&mut self) -> bool {
        false
    }
}

/// Records in pages, handed to a thread of its own; an empty page is the end.
pub trait Pages: Send {
    /// The next up to `limit` records.
    fn next_page(&mut self, limit: usize) -> Result<Vec<Record>, StoreError>;
}

/// What fixity remembers about a tree. A run calls, in order: [`Store::clock`],
/// [`Store::start_run`], [`Store::records`] and the `record_*` methods as files are
/// classified ([`Store::commit`] between phases), the moves and the verification pass,
/// then [`Store::finish_run`]; findings are listed afterwards with [`Store::findings`].
///
/// Write errors of kind [`StoreError::Catalog`] fail the store for the rest of the run
/// (the engine then calls [`Store::abandon`] and records nothing more); those of kind
/// [`StoreError::Attributes`] concern one file.
pub trait Store {
    /// Where the store is, for messages: the catalog's file, or the tree's root.
    fn location(&self) -> &Path;
    /// The algorithm a file without a record is hashed with (and, for a catalog, every
    /// record's).
    fn algorithm(&self) -> &'static Algorithm;
    /// Why this store, opened for a run, can only be read: the run compares with it and
    /// records nothing. `None` for a store opened for writing.
    fn read_only_reason(&self) -> Option<String> {
        None
    }
    /// What to tell once, when opening the store upgraded a catalog made before its
    /// records kept each file's ctime and access ([`crate::catalog::INODE_NOTE`]).
    fn upgrade_note(&self) -> Option<String> {
        None
    }
    /// Whether the store remembers files that are gone from the tree (and so reports
    /// them missing, pairs moves, and can forget them). A store kept in the files
    /// themselves does not.
    fn remembers_gone(&self) -> bool;
    /// Whether the store lists a run's findings afterwards ([`Store::findings`]); if not,
    /// the engine hands each finding over as it is classified. Moves are paired after the
    /// walk, so a store that remembers gone files should list its findings: handed over
    /// at once, a moved file would be told as missing and new.
    fn lists_findings(&self) -> bool;
    /// How far apart (ns) a file's ctime may be from the recorded one and still count as
    /// the same: 0, the ctime recorded being the file's own; the xattr store's own
    /// attribute write moves the ctime once more after it is taken.
    fn ctime_slack_ns(&self) -> i128 {
        0
    }
    /// How a verification pass goes over unchanged files.
    fn pass_order(&self) -> PassOrder;
    /// Checks that a run over the whole tree at `root` (scan, verify, protect, repair) is
    /// a run over the tree whose records this store holds, before anything is written. A store that records its
    /// tree (the SQLite catalog: its records' paths are relative to it) refuses a run
    /// over a directory inside that tree or around it, whose relative paths are not its
    /// records' (every file would be missing, moved or new, and recorded so); a tree that
    /// moved (another mount point, a copy checked against the original's catalog) is its
    /// tree from then on. Stores that keep a tree per key, or records in the files, take
    /// any root.
    fn claim_tree(&mut self, _root: &Path) -> Result<(), StoreError> {
        Ok(())
    }

    /// The run's time (ms since the epoch), strictly after any earlier run's start.
    fn clock(&self) -> Result<i64, StoreError>;
    /// Records the start of a run.
    fn start_run(&mut self, command: &'static str, now: i64) -> Result<(), StoreError>;
    /// Records the end of the run begun with [`Store::start_run`].
    fn finish_run(&mut self, complete: bool, summary: &str) -> Result<(), StoreError>;
    /// The cursor over the known records for the walk, from the path `from` on (every
    /// one with `None`).
    fn records(&self, from: Option<&[u8]>) -> Result<Box<dyn Records>, StoreError>;
    /// One record by path.
    fn lookup(&self, rel: &[u8]) -> Result<Option<Record>, StoreError>;

    /// Records a file hashed for the first time.
    fn record_new(&mut self, rel: &[u8], found: &Found, now: i64) -> Result<(), StoreError>;
    /// Records new content for a known file: `class` is [`Class::Modified`] for an edit,
    /// [`Class::Ok`] for content accepted as good (`fixity accept`).
    fn record_content(
        &mut self,
        rec: &Record,
        found: &Found,
        class: Class,
        now: i64,
    ) -> Result<(), StoreError>;
    /// Records a look at a known file that keeps its digest: [`Class::Ok`] (as
    /// recorded; also the verification time), [`Class::Corrupt`] (`found` is what it
    /// holds now) or [`Class::Unreadable`].
    fn record_check(
        &mut self,
        rec: &Record,
        class: Class,
        found: Option<&Found>,
        note: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError>;
    /// Records a digest another tool took (`source`, as `chkbit`) for a file without a
    /// record, as "imported, not yet verified" (see [`Record::imported`]): `found` holds
    /// that digest and the file's size and mtime at the import. Stores that cannot hold
    /// it refuse.
    fn record_imported(
        &mut self,
        rel: &[u8],
        found: &Found,
        source: &'static str,
        now: i64,
    ) -> Result<(), StoreError> {
        let _ = (rel, found, source, now);
        Err(StoreError::Refused("this store cannot hold imported digests".into()))
    }
    /// Records that a known file is gone (keeping when it first went missing).
    fn record_missing(&mut self, rel: &[u8], now: i64) -> Result<(), StoreError>;
    /// A file recorded as missing is back, unchanged.
    fn record_present(&mut self, rel: &[u8]) -> Result<(), StoreError>;
    /// Records that the missing file at `from` now lives at `to`, which inherits its
    /// history; the run that found it (`now`) reports it (`to` may have been recorded
    /// new by another part of the same plan).
    fn record_moved(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), StoreError>;
    /// Records that the missing file at `from` is the file at `to`, new in this run, under
    /// another Unicode form of its name: `from`'s record (digest, version, history) takes
    /// `to`'s place, present, to be checked against what `to` holds (a `record_check` or
    /// `record_content` follows). Only stores that remember gone files pair names.
    fn record_renamed(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), StoreError> {
        let _ = (from, to, now);
        Err(StoreError::Refused("this store does not remember gone files".into()))
    }
    /// Makes what was recorded so far durable (a store that writes each record as it
    /// goes has nothing to do).
    fn commit(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Whether records since the last commit are still open (lost if the store fails).
    fn uncommitted(&self) -> bool {
        false
    }
    /// The number of the batch the last record went into, for a store that commits
    /// batches while the run goes on (PostgreSQL: one is sent while the next fills);
    /// 0 for the others. See [`Store::committed_below`].
    fn last_batch(&self) -> u64 {
        0
    }
    /// Every batch numbered below this one is committed: its records are kept whatever
    /// happens to the store from now on. For a store that does not number its batches,
    /// everything while nothing is uncommitted ([`Store::uncommitted`]), else nothing.
    fn committed_below(&self) -> u64 {
        match self.uncommitted() {
            true => 0,
            false => u64::MAX,
        }
    }
    /// Whether the batch numbered `batch` is committed, once no batch is on its way
    /// (after [`Store::abandon`]): a store with several batches on their way at once
    /// may have committed one after a batch that failed.
    fn committed(&self, batch: u64) -> bool {
        batch < self.committed_below()
    }
    /// Gives up the open records after a failure.
    fn abandon(&mut self) {}
    /// Fails when the store was deleted or replaced under the run (a store that is not
    /// one file cannot be).
    fn check_in_place(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Up to `limit` records of missing files with paths after `after`, in path order.
    fn missing_page(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<Record>, StoreError>;
    /// Whether any file recorded as new is no older than the oldest loss: without one,
    /// no missing file can have moved.
    fn new_since_a_loss(&self) -> Result<bool, StoreError>;
    /// Present files recorded as new since `since` (ms) with this size and digest:
    /// where a missing file may have moved to.
    fn move_candidates(
        &self,
        size: u64,
        digest: &Digest,
        since: i64,
    ) -> Result<Vec<Record>, StoreError>;
    /// Up to `limit` (path, missing) pairs after `after`, in path order: the shape of
    /// everything recorded.
    fn presence_page(
        &self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, bool)>, StoreError>;

    /// Where the verification pass stands (`sliced`: this run is a slice of it; else it
    /// is a pass of its own, begun `now`).
    fn pass(&self, sliced: bool, now: i64) -> Result<Pass, StoreError>;
    /// Remembers that the pass begun at `since` is under way.
    fn pass_begun(&mut self, since: i64) -> Result<(), StoreError>;
    /// ([`PassOrder::Stale`]) the present records not looked at since `since`, in pages,
    /// in path order: after the path `from` to the end, then from the start to `from`
    /// (a slice going on where the last one stopped); all of them with `None`. The
    /// catalog's own order: no index look-up per record, and no index to keep by time.
    fn stale(&self, since: i64, from: Option<&[u8]>) -> Result<Box<dyn Pages>, StoreError>;
    /// ([`PassOrder::Stale`]) present files (and bytes) not looked at since `since`.
    fn stale_count(&self, since: i64) -> Result<(u64, u64), StoreError>;
    /// Ends this run's part of the pass: `resume_after` is where the next slice goes on,
    /// `None` when the pass is complete.
    fn pass_end(&mut self, resume_after: Option<&[u8]>, now: i64) -> Result<(), StoreError>;

    /// Calls `each` with every file run `run_start` found not ok, in path order; new
    /// files only with `new` (a first scan's are every file, and only a listing of new
    /// files wants them).
    fn findings(
        &self,
        run_start: i64,
        new: bool,
        each: &mut ReportFn<'_>,
    ) -> Result<(), StoreError>;
    /// What `fixity status` shows.
    fn summary(&self, now: i64) -> Result<Summary, StoreError>;
    /// Up to `limit` records (present and missing) with paths after `after`, in path
    /// order (`fixity export`); fewer only when no more are there ([`super::RecordPages`]
    /// reads them all).
    fn records_page(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<Record>, StoreError>;
    /// Recorded files at `rel` or below it (everything for an empty `rel`): (present,
    /// missing).
    fn count_under(&self, rel: &[u8]) -> Result<(u64, u64), StoreError>;
    /// Forgets the missing files at `rel` or below; returns how many.
    fn forget_missing(&mut self, rel: &[u8]) -> Result<usize, StoreError>;

    /// Up to `limit` records with their history, paths after `after`, in path order:
    /// every record, or (`standing`) only the standing findings (missing files, and
    /// present files last found corrupt or unreadable). A store that keeps no history
    /// refuses.
    fn history_page(
        &self,
        after: Option<&[u8]>,
        limit: usize,
        standing: bool,
    ) -> Result<Vec<History>, StoreError> {
        let _ = (after, limit, standing);
        Err(StoreError::Refused("this store keeps no history of its files".into()))
    }
    /// The last `limit` runs, oldest first, each with its summary as the engine recorded
    /// it (see [`RunInfo::summary`]). A store that keeps no runs refuses.
    fn run_history(&self, limit: usize) -> Result<Vec<RunInfo>, StoreError> {
        let _ = limit;
        Err(StoreError::Refused("this store keeps no record of its runs".into()))
    }

    /// The further digests kept for `rel` (see [`Extra`]), whatever version of the file
    /// they were taken of: the caller compares their size and mtime with the record's.
    /// A store that keeps none has none.
    fn extras(&self, rel: &[u8]) -> Result<Vec<Extra>, StoreError> {
        let _ = rel;
        Ok(Vec::new())
    }

    /// Keeps `extras` for `rel`, each replacing the one of its algorithm. A store that
    /// keeps none refuses (a remote comparison then reads the files again each time).
    fn keep_extras(&mut self, rel: &[u8], extras: &[Extra]) -> Result<(), StoreError> {
        let _ = (rel, extras);
        Err(StoreError::Refused("this store keeps no further digests".into()))
    }

    /// Records one comparison with a remote copy.
    fn record_remote_check(&mut self, check: &RemoteCheck) -> Result<(), StoreError> {
        let _ = check;
        Err(StoreError::Refused("this store keeps no record of remote comparisons".into()))
    }

    /// The latest comparison with each remote copy, newest first.
    fn remote_checks(&self) -> Result<Vec<RemoteCheck>, StoreError> {
        Ok(Vec::new())
    }

    /// The tree this store's heads name (see [`crate::proof`]): a PostgreSQL catalog's
    /// host and root; none for a store of one tree.
    fn proof_identity(&self) -> Identity {
        Identity::default()
    }

    /// Up to `limit` entries of the tree's chain numbered after `after`, in order, each
    /// with whether its run is still recorded. A store that keeps no chain refuses.
    fn proof_page(&self, after: u64, limit: usize) -> Result<Vec<Link>, StoreError> {
        let _ = (after, limit);
        Err(StoreError::Refused(NO_PROOFS.into()))
    }

    /// The last entry of the tree's chain (`None` before the first run that kept one).
    fn last_proof(&self) -> Result<Option<Entry>, StoreError> {
        Err(StoreError::Refused(NO_PROOFS.into()))
    }
}

/// Why a store without a chain refuses.
const NO_PROOFS: &str = "this store keeps no tamper evidence (no history of its runs): \
                         use a catalog (SQLite or PostgreSQL)";

/// Which store, and where.
#[derive(Clone, Debug)]
pub enum StoreSpec {
    /// A SQLite catalog file.
    Sqlite(PathBuf),
    /// Extended attributes on the files under this root (the empty path: paths are
    /// taken as given).
    Xattr(PathBuf),
    /// One tree in a PostgreSQL catalog.
    Postgres(PgSpec),
}

/// How a store is opened.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenOptions {
    /// Make the store if there is none (scan).
    pub create: bool,
    /// The algorithm asked for: a new store's (or the one for files without a record);
    /// an existing catalog with another refuses.
    pub algorithm: Option<&'static Algorithm>,
    /// Only to read it (status, export): no lock, nothing changes.
    pub read_only: bool,
    /// Take the run lock waiting for it, instead of failing when another run holds it.
    pub wait: bool,
    /// Share the run lock with other runs that share it (the parts of a plan: `scan|verify
    /// --plan`, each on its own files), excluding only runs over the whole tree.
    pub shared: bool,
    /// For a run: a store that cannot be opened for writing is opened to compare with
    /// ([`Store::read_only_reason`] says why nothing is recorded).
    pub compare_if_read_only: bool,
    /// Check that the store can work here (the file system takes extended attributes).
    pub probe: bool,
    /// (The xattr store) other tools' attributes to keep up to date beside fixity's.
    pub xattr_names: super::xattr::XattrNames,
}

/// Opens the store `spec` names.
pub fn open_store(spec: &StoreSpec, how: &OpenOptions) -> Result<Box<dyn Store>, StoreError> {
    Ok(match spec {
        StoreSpec::Sqlite(catalog) => Box::new(SqliteStore::open(catalog, how)?),
        StoreSpec::Xattr(root) => Box::new(XattrStore::open(root, how)?),
        StoreSpec::Postgres(tree) => {
            Box::new(PgStore::open(tree, how).map_err(CatalogError::from)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(size: Option<u64>, mtime_ns: i128, precision: u32) -> Record {
        Record { mtime_ns, precision, ..Record::sample(b"f", "sha256", size) }
    }

    #[test]
    fn a_record_describes_a_version_at_its_own_precision() {
        let stamp = |ns| Stamp::sized(9, ns);
        let coarse = record(None, 1_560_177_334_020_775_000, 6);
        assert!(coarse.describes(&stamp(1_560_177_334_020_775_051), 0));
        assert!(!coarse.describes(&stamp(1_560_177_334_020_776_051), 0));
        assert!(coarse.describes(&stamp(1_560_177_335_020_775_051), 1_000_000_000));
        let exact = record(Some(9), 5_000, 9);
        assert!(exact.describes(&stamp(5_000), 0));
        assert!(!exact.describes(&stamp(5_001), 0));
        assert!(exact.describes(&stamp(5_001), 1));
        assert!(!record(Some(8), 5_000, 9).describes(&stamp(5_000), 0), "size differs");
    }
}
