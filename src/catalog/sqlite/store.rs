//! The SQLite catalog as a [`Store`]: the run lock beside the catalog's file, batched
//! writes on one connection, and reads that stream pages on connections of their own.

use super::{Catalog, Writer};
use super::{CatalogError, PASS_COMPLETED_KEY, PASS_KEY, Reader, Row};
use crate::algo::Algorithm;
use crate::catalog::lock::{RunLock, lock_path};
use crate::catalog::store::{
    Found, History, OpenOptions, Pages, Pass, PassOrder, Record, Records, ReportFn, RunInfo, Store,
    StoreError, Summary,
};
use crate::catalog::stream::Stream;
use crate::catalog::{Class, Extra, RemoteCheck};
use crate::clock::now_ms;
use crate::digest::Digest;
use crate::proof::{Entry, Link};
use std::cell::RefCell;
use std::path::Path;

/// A SQLite catalog opened for a run, `accept`/`forget`, or for reading.
pub(crate) struct SqliteStore {
    cat: Catalog,
    /// The run being recorded.
    run_id: Option<i64>,
    /// Why a catalog opened for a run could only be opened to read.
    read_only_reason: Option<String>,
    /// A read connection for the pages read while the main one writes.
    reader: RefCell<Option<Reader>>,
    /// Held for as long as the store is open (none when only reading).
    _lock: Option<RunLock>,
}

impl SqliteStore {
    /// Opens the catalog at `path` as `how` says: to read it, or for a run that writes
    /// under the run lock (made first, with its directory, with `how.create`).
    pub(crate) fn open(path: &Path, how: &OpenOptions) -> Result<SqliteStore, CatalogError> {
        let store = |cat, lock, reason| SqliteStore {
            cat,
            run_id: None,
            read_only_reason: reason,
            reader: RefCell::new(None),
            _lock: lock,
        };
        if how.read_only {
            return Ok(store(Catalog::open_read_only(path)?, None, None));
        }
        if !how.create && !path.exists() {
            // Nothing to work on: leave the tree untouched.
            return Err(CatalogError::NotFound(path.to_path_buf()));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| CatalogError::CreateDir(dir.to_path_buf(), e))?;
        }
        let lock_file = lock_path(path);
        let lock = match RunLock::acquire(&lock_file, how.wait, how.shared) {
            Ok(Some(l)) => l,
            Ok(None) => return Err(CatalogError::Busy(path.to_path_buf())),
            Err(e) => return Err(CatalogError::Lock(lock_file, e)),
        };
        match Catalog::open(path, how.create, how.algorithm) {
            Ok(cat) => Ok(store(cat, Some(lock), None)),
            // A catalog that cannot be opened for writing (a full or read-only file
            // system) can still be compared with: the run reports what it finds and then
            // fails with the reason nothing was recorded.
            Err(e @ (CatalogError::Sqlite(..) | CatalogError::Io(..)))
                if how.compare_if_read_only && path.exists() =>
            {
                match Catalog::open_read_only(path) {
                    Ok(c) if how.algorithm.is_none_or(|a| a.name == c.algorithm().name) => {
                        Ok(store(c, Some(lock), Some(e.to_string())))
                    }
                    _ => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    fn writer(&self) -> Writer<'_> {
        self.cat.writer()
    }

    fn record(&self, row: Row) -> Record {
        record_of(row, self.cat.algorithm())
    }

    /// A new read connection; failing because the catalog is gone, says so.
    fn new_reader(&self) -> Result<Reader, CatalogError> {
        self.cat.reader().map_err(|e| match self.cat.in_place() {
            true => e,
            false => CatalogError::Vanished(self.cat.path().to_path_buf()),
        })
    }

    /// Runs `read` on the store's read connection (made on first use).
    fn read<T>(&self, read: impl FnOnce(&Reader) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        let mut slot = self.reader.borrow_mut();
        if slot.is_none() {
            *slot = Some(self.new_reader()?);
        }
        let reader = slot.as_ref().expect("made above");
        read(reader).map_err(|e| self.sqlite(e))
    }

    fn sqlite(&self, e: rusqlite::Error) -> StoreError {
        CatalogError::Sqlite(self.cat.path().to_path_buf(), e).into()
    }
}

fn record_of(row: Row, algo: &'static Algorithm) -> Record {
    Record {
        path: row.path,
        algo,
        digest: Digest::new(&row.digest),
        size: Some(row.stamp.size),
        mtime_ns: row.stamp.mtime_ns,
        precision: 9,
        last_result: row.last_result,
        missing_since: row.missing_since,
        last_verified: row.last_verified,
        foreign: false,
        imported: row.imported.is_some(),
    }
}

impl Store for SqliteStore {
    fn location(&self) -> &Path {
        self.cat.path()
    }

    fn algorithm(&self) -> &'static Algorithm {
        self.cat.algorithm()
    }

    fn read_only_reason(&self) -> Option<String> {
        self.read_only_reason.clone()
    }

    fn remembers_gone(&self) -> bool {
        true
    }

    fn lists_findings(&self) -> bool {
        true
    }

    fn pass_order(&self) -> PassOrder {
        PassOrder::Stale
    }

    fn clock(&self) -> Result<i64, StoreError> {
        Ok(now_ms().max(self.cat.last_run_start()? + 1))
    }

    fn start_run(&mut self, command: &'static str, now: i64) -> Result<(), StoreError> {
        self.run_id = Some(self.cat.start_run(command, now)?);
        Ok(())
    }

    fn finish_run(&mut self, complete: bool, summary: &str) -> Result<(), StoreError> {
        if let Some(id) = self.run_id {
            // The run's changes first: the chain's entry is of what they left.
            self.writer().commit()?;
            self.cat.restore_indexes()?;
            self.cat.finish_proved(id, complete, summary)?;
        }
        Ok(())
    }

    fn records(&self, from: Option<&[u8]>) -> Result<Box<dyn Records>, StoreError> {
        let (reader, path, algo) =
            (self.new_reader()?, self.cat.path().to_path_buf(), self.algorithm());
        Ok(Box::new(Stream::spawn(from, move |after, inclusive| {
            match reader.by_path(after, inclusive, 2048) {
                Ok(rows) => Ok(rows.into_iter().map(|r| record_of(r, algo)).collect()),
                Err(e) => Err(CatalogError::Sqlite(path.clone(), e).into()),
            }
        })))
    }

    fn lookup(&self, rel: &[u8]) -> Result<Option<Record>, StoreError> {
        Ok(self.cat.get(rel)?.map(|r| self.record(r)))
    }

    fn record_new(&mut self, rel: &[u8], found: &Found, now: i64) -> Result<(), StoreError> {
        let digest = found.digest;
        Ok(self.writer().insert(rel, found.stamp, found.file_id, digest.as_bytes(), now)?)
    }

    fn record_content(
        &mut self,
        rec: &Record,
        found: &Found,
        class: Class,
        now: i64,
    ) -> Result<(), StoreError> {
        let (stamp, id, digest) = (found.stamp, found.file_id, found.digest);
        Ok(self.writer().rehashed(&rec.path, stamp, id, digest.as_bytes(), class, now)?)
    }

    fn record_check(
        &mut self,
        rec: &Record,
        class: Class,
        found: Option<&Found>,
        note: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        // The digest stays: a corrupt file's record keeps the good content's, and what
        // it holds now goes beside it.
        let now_holds = found.filter(|_| class == Class::Corrupt).map(|f| f.digest);
        let now_holds = now_holds.as_ref().map(Digest::as_bytes);
        Ok(self.writer().checked(&rec.path, class, now, (note, now_holds))?)
    }

    fn record_imported(
        &mut self,
        rel: &[u8],
        found: &Found,
        source: &'static str,
        now: i64,
    ) -> Result<(), StoreError> {
        let (stamp, id, digest) = (found.stamp, found.file_id, found.digest);
        Ok(self.writer().imported(rel, stamp, id, digest.as_bytes(), source, now)?)
    }

    fn record_missing(&mut self, rel: &[u8], now: i64) -> Result<(), StoreError> {
        Ok(self.writer().missing(rel, now)?)
    }

    fn record_present(&mut self, rel: &[u8]) -> Result<(), StoreError> {
        Ok(self.writer().present(rel)?)
    }

    fn record_moved(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), StoreError> {
        Ok(self.writer().moved(from, to, now)?)
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.writer().commit()?;
        Ok(self.cat.restore_indexes()?)
    }

    fn uncommitted(&self) -> bool {
        self.writer().pending() > 0
    }

    fn abandon(&mut self) {
        self.writer().abandon();
    }

    fn check_in_place(&self) -> Result<(), StoreError> {
        if self.cat.in_place() {
            return Ok(());
        }
        // Deleted (or replaced) under the run: SQLite wrote on into a file no one will
        // open again (or failed to, which is the same story).
        Err(CatalogError::Vanished(self.cat.path().to_path_buf()).into())
    }

    fn missing_page(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<Record>, StoreError> {
        let rows = self.read(|r| r.missing(after, limit))?;
        Ok(rows.into_iter().map(|r| self.record(r)).collect())
    }

    fn new_since_a_loss(&self) -> Result<bool, StoreError> {
        Ok(self.cat.new_since_a_loss()?)
    }

    fn move_candidates(
        &self,
        size: u64,
        digest: &Digest,
        since: i64,
    ) -> Result<Vec<Record>, StoreError> {
        let rows = self.cat.move_candidates(size, digest.as_bytes(), since)?;
        Ok(rows.into_iter().map(|r| self.record(r)).collect())
    }

    fn presence_page(
        &self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, bool)>, StoreError> {
        self.read(|r| r.presence(after, limit))
    }

    fn pass(&self, sliced: bool, now: i64) -> Result<Pass, StoreError> {
        let stored = self.cat.meta(PASS_KEY)?.and_then(|v| v.parse::<i64>().ok());
        Ok(Pass::joined(stored, sliced, now))
    }

    fn pass_begun(&mut self, since: i64) -> Result<(), StoreError> {
        Ok(self.cat.set_meta(PASS_KEY, Some(&since.to_string()))?)
    }

    fn stale(&self, since: i64) -> Result<Box<dyn Pages>, StoreError> {
        Ok(Box::new(StalePages {
            reader: self.new_reader()?,
            path: self.cat.path().to_path_buf(),
            algo: self.cat.algorithm(),
            since,
            after: None,
        }))
    }

    fn stale_count(&self, since: i64) -> Result<(u64, u64), StoreError> {
        Ok(self.cat.stale_count(since)?)
    }

    fn pass_end(&mut self, resume_after: Option<&[u8]>, _now: i64) -> Result<(), StoreError> {
        if resume_after.is_some() {
            // Unfinished: the pass's start stays recorded, and with it what is left.
            return Ok(());
        }
        self.cat.set_meta(PASS_KEY, None)?;
        Ok(self.cat.set_meta(PASS_COMPLETED_KEY, Some(&now_ms().to_string()))?)
    }

    fn findings(&self, run_start: i64, each: &mut ReportFn<'_>) -> Result<(), StoreError> {
        Ok(self.cat.report(run_start, each)?)
    }

    fn summary(&self, now: i64) -> Result<Summary, StoreError> {
        Ok(self.cat.summary(now)?)
    }

    fn records_page(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<Record>, StoreError> {
        let rows = self.read(|r| r.by_path(after, false, limit))?;
        Ok(rows.into_iter().map(|r| self.record(r)).collect())
    }

    fn count_under(&self, rel: &[u8]) -> Result<(u64, u64), StoreError> {
        Ok(self.cat.count_under(rel)?)
    }

    fn forget_missing(&mut self, rel: &[u8]) -> Result<usize, StoreError> {
        Ok(self.writer().forget_missing(rel)?)
    }

    fn history_page(
        &self,
        after: Option<&[u8]>,
        limit: usize,
        standing: bool,
    ) -> Result<Vec<History>, StoreError> {
        let kept = self.cat.version() >= 2;
        self.read(|r| r.history(after, limit, standing, kept))
    }

    fn extras(&self, rel: &[u8]) -> Result<Vec<Extra>, StoreError> {
        Ok(self.cat.extras(rel)?)
    }

    fn keep_extras(&mut self, rel: &[u8], extras: &[Extra]) -> Result<(), StoreError> {
        Ok(self.writer().keep_extras(rel, extras)?)
    }

    fn record_remote_check(&mut self, check: &RemoteCheck) -> Result<(), StoreError> {
        let mut w = self.writer();
        w.remote_check(check)?;
        Ok(w.commit()?)
    }

    fn remote_checks(&self) -> Result<Vec<RemoteCheck>, StoreError> {
        Ok(self.cat.remote_checks()?)
    }

    fn run_history(&self, limit: usize) -> Result<Vec<RunInfo>, StoreError> {
        self.read(|r| r.runs(limit))
    }

    fn proof_page(&self, after: u64, limit: usize) -> Result<Vec<Link>, StoreError> {
        Ok(self.cat.proof_page(after, limit)?)
    }

    fn last_proof(&self) -> Result<Option<Entry>, StoreError> {
        Ok(self.cat.last_proof()?)
    }
}

/// Pages of stale rows, least recently verified first, on a connection of their own.
struct StalePages {
    reader: Reader,
    path: std::path::PathBuf,
    algo: &'static Algorithm,
    since: i64,
    after: Option<(i64, Vec<u8>)>,
}

impl Pages for StalePages {
    fn next_page(&mut self, limit: usize) -> Result<Vec<Record>, StoreError> {
        let after = self.after.as_ref().map(|(t, p)| (*t, p.as_slice()));
        let page = self
            .reader
            .stale(self.since, after, limit)
            .map_err(|e| CatalogError::Sqlite(self.path.clone(), e))?;
        self.after = page.last().map(|r| (r.last_verified, r.path.clone()));
        Ok(page.into_iter().map(|r| record_of(r, self.algo)).collect())
    }
}
