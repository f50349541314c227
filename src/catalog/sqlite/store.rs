//! The SQLite catalog as a [`Store`]: the run lock beside the catalog's file, batched
//! writes on one connection, and reads that stream pages on connections of their own.

use super::Catalog;
use super::batches::{Batches, Op};
use super::{CatalogError, PASS_AFTER_KEY, PASS_COMPLETED_KEY, PASS_KEY, Reader, Row};
use crate::algo::Algorithm;
use crate::catalog::lock::{RunLock, lock_path};
use crate::catalog::store::{
    Found, History, OpenOptions, Pages, Pass, PassOrder, Record, Records, ReportFn, RunInfo, Store,
    StoreError, Summary,
};
use crate::catalog::stream::{StaleStream, Stream};
use crate::catalog::{Class, Extra, RemoteCheck};
use crate::clock::now_ms;
use crate::digest::Digest;
use crate::proof::{Entry, Link};
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// A SQLite catalog opened for a run, `accept`/`forget`, or for reading.
pub(crate) struct SqliteStore {
    /// The catalog, its writes committed in batches by a thread of their own.
    cat: Batches,
    /// The catalog's file and algorithm (as the catalog says: kept here to be read
    /// without waiting for a batch).
    path: PathBuf,
    algo: &'static Algorithm,
    /// The run being recorded.
    run_id: Option<i64>,
    /// Why a catalog opened for a run could only be opened to read.
    read_only_reason: Option<String>,
    /// The schema version the catalog had before this open upgraded it.
    upgraded_from: Option<i64>,
    /// A read connection for the pages read while the main one writes.
    reader: RefCell<Option<Reader>>,
    /// Held for as long as the store is open (none when only reading).
    _lock: Option<RunLock>,
}

impl SqliteStore {
    /// Opens the catalog at `path` as `how` says: to read it, or for a run that writes
    /// under the run lock (made first, with its directory, with `how.create`).
    pub(crate) fn open(path: &Path, how: &OpenOptions) -> Result<SqliteStore, CatalogError> {
        let store = |cat: Catalog, lock, reason| SqliteStore {
            path: cat.path().to_path_buf(),
            algo: cat.algorithm(),
            upgraded_from: cat.upgraded_from(),
            cat: Batches::new(cat),
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

    /// The catalog, once the batch on its way is committed and the held writes are in
    /// its open transaction.
    fn cat(&self) -> Result<std::sync::MutexGuard<'_, Catalog>, CatalogError> {
        self.cat.get()
    }

    /// Sets the number of writes a batch holds (tests).
    #[cfg(test)]
    pub(super) fn set_batch_limit(&self, n: usize) {
        self.cat.set_limit(n);
    }

    /// Holds a write in the open batch.
    fn write(&mut self, op: Op) -> Result<(), StoreError> {
        Ok(self.cat.write(op)?)
    }

    fn record(&self, row: Row) -> Record {
        record_of(row, self.algo)
    }

    /// A new read connection; failing because the catalog is gone, says so.
    fn new_reader(&self) -> Result<Reader, CatalogError> {
        self.cat.with(|cat| {
            cat.reader().map_err(|e| match cat.in_place() {
                true => e,
                false => CatalogError::Vanished(self.path.clone()),
            })
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
        CatalogError::Sqlite(self.path.clone(), e).into()
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
        ctime_ns: row.stamp.ctime_ns,
        access: row.inode.access,
    }
}

/// A page of rows as records; a failed read as the catalog's (at `path`) error.
fn records_of(
    rows: rusqlite::Result<Vec<Row>>,
    path: &Path,
    algo: &'static Algorithm,
) -> Result<Vec<Record>, StoreError> {
    match rows {
        Ok(rows) => Ok(rows.into_iter().map(|r| record_of(r, algo)).collect()),
        Err(e) => Err(CatalogError::Sqlite(path.to_path_buf(), e).into()),
    }
}

impl Store for SqliteStore {
    fn location(&self) -> &Path {
        &self.path
    }

    fn algorithm(&self) -> &'static Algorithm {
        self.algo
    }

    fn read_only_reason(&self) -> Option<String> {
        self.read_only_reason.clone()
    }

    fn upgrade_note(&self) -> Option<String> {
        self.upgraded_from
            .filter(|&v| v < super::INODE_SCHEMA)
            .map(|_| crate::catalog::INODE_NOTE.into())
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

    fn claim_tree(&mut self, root: &Path) -> Result<(), StoreError> {
        let write = self.read_only_reason.is_none();
        super::tree::claim(&*self.cat()?, &self.path, root, write)
    }

    fn clock(&self) -> Result<i64, StoreError> {
        Ok(now_ms().max(self.cat()?.last_run_start()? + 1))
    }

    fn start_run(&mut self, command: &'static str, now: i64) -> Result<(), StoreError> {
        let id = self.cat()?.start_run(command, now)?;
        self.run_id = Some(id);
        Ok(())
    }

    fn finish_run(&mut self, complete: bool, summary: &str) -> Result<(), StoreError> {
        if let Some(id) = self.run_id {
            // The run's changes first: the chain's entry is of what they left.
            self.cat.commit()?;
            let summary = super::super::signed(summary, super::super::actor());
            self.cat()?.finish_proved(id, complete, &summary)?;
        }
        Ok(())
    }

    fn records(&self, from: Option<&[u8]>) -> Result<Box<dyn Records>, StoreError> {
        let (reader, path, algo) = (self.new_reader()?, self.path.clone(), self.algo);
        Ok(Box::new(Stream::spawn(from, move |after, inclusive, limit| {
            records_of(reader.by_path(after, inclusive, limit), &path, algo)
        })))
    }

    fn lookup(&self, rel: &[u8]) -> Result<Option<Record>, StoreError> {
        Ok(self.cat()?.get(rel)?.map(|r| self.record(r)))
    }

    fn record_new(&mut self, rel: &[u8], found: &Found, now: i64) -> Result<(), StoreError> {
        let (stamp, digest) = (found.stamp, found.digest);
        let id = found.inode();
        self.write(Op::Insert { path: rel.to_vec(), stamp, id, digest, now })
    }

    fn record_content(
        &mut self,
        rec: &Record,
        found: &Found,
        class: Class,
        now: i64,
    ) -> Result<(), StoreError> {
        let (stamp, digest) = (found.stamp, found.digest);
        let id = found.inode();
        self.write(Op::Rehashed { path: rec.path.clone(), stamp, id, digest, class, now })
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
        if class == Class::Ok
            && let Some(f) = found
            && rec.inode_moved(f)
        {
            self.write(Op::Restamped { path: rec.path.clone(), stamp: f.stamp, id: f.inode() })?;
        }
        let found = found.filter(|_| class.keeps_found()).map(|f| f.digest);
        let note = note.map(str::to_owned);
        self.write(Op::Checked { path: rec.path.clone(), class, now, note, found })
    }

    fn record_imported(
        &mut self,
        rel: &[u8],
        found: &Found,
        source: &'static str,
        now: i64,
    ) -> Result<(), StoreError> {
        let (stamp, digest) = (found.stamp, found.digest);
        let id = found.inode();
        self.write(Op::Imported { path: rel.to_vec(), stamp, id, digest, source, now })
    }

    fn record_missing(&mut self, rel: &[u8], now: i64) -> Result<(), StoreError> {
        self.write(Op::Missing { path: rel.to_vec(), now })
    }

    fn record_present(&mut self, rel: &[u8]) -> Result<(), StoreError> {
        self.write(Op::Present { path: rel.to_vec() })
    }

    fn record_moved(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), StoreError> {
        self.write(Op::Moved { from: from.to_vec(), to: to.to_vec(), now })
    }

    fn record_renamed(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), StoreError> {
        self.write(Op::Renamed { from: from.to_vec(), to: to.to_vec(), now })
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        Ok(self.cat.commit()?)
    }

    fn uncommitted(&self) -> bool {
        self.cat.uncommitted()
    }

    fn last_batch(&self) -> u64 {
        self.cat.numbers().last()
    }

    fn committed_below(&self) -> u64 {
        self.cat.numbers().committed_below()
    }

    fn committed(&self, batch: u64) -> bool {
        self.cat.numbers().committed(batch)
    }

    fn abandon(&mut self) {
        self.cat.abandon();
    }

    fn check_in_place(&self) -> Result<(), StoreError> {
        if self.cat.with(Catalog::in_place) {
            return Ok(());
        }
        // Deleted (or replaced) under the run: SQLite wrote on into a file no one will
        // open again (or failed to, which is the same story).
        Err(CatalogError::Vanished(self.path.clone()).into())
    }

    fn missing_page(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<Record>, StoreError> {
        let rows = self.read(|r| r.missing(after, limit))?;
        Ok(rows.into_iter().map(|r| self.record(r)).collect())
    }

    fn new_since_a_loss(&self) -> Result<bool, StoreError> {
        Ok(self.cat()?.new_since_a_loss()?)
    }

    fn move_candidates(
        &self,
        size: u64,
        digest: &Digest,
        since: i64,
    ) -> Result<Vec<Record>, StoreError> {
        let rows = self.cat()?.move_candidates(size, digest.as_bytes(), since)?;
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
        let cat = self.cat()?;
        let stored = match cat.meta(PASS_KEY)?.and_then(|v| v.parse::<i64>().ok()) {
            Some(since) => Some((since, cat.meta_blob(PASS_AFTER_KEY)?)),
            None => None,
        };
        Ok(Pass::joined(stored, sliced, now))
    }

    fn pass_begun(&mut self, since: i64) -> Result<(), StoreError> {
        let cat = self.cat()?;
        let stored = cat.meta(PASS_KEY)?.and_then(|v| v.parse::<i64>().ok());
        if stored != Some(since) {
            // A new pass starts from the beginning.
            cat.set_meta_blob(PASS_AFTER_KEY, None)?;
            cat.set_meta(PASS_KEY, Some(&since.to_string()))?;
        }
        Ok(())
    }

    fn stale(&self, since: i64, from: Option<&[u8]>) -> Result<Box<dyn Pages>, StoreError> {
        let (reader, path, algo) = (self.new_reader()?, self.path.clone(), self.algo);
        Ok(Box::new(StaleStream::spawn(from, move |after, upto, limit| {
            records_of(reader.stale(since, (after, upto), limit), &path, algo)
        })))
    }

    fn stale_count(&self, since: i64) -> Result<(u64, u64), StoreError> {
        Ok(self.cat()?.stale_count(since)?)
    }

    fn pass_end(&mut self, resume_after: Option<&[u8]>, _now: i64) -> Result<(), StoreError> {
        let cat = self.cat()?;
        if resume_after.is_some() {
            // Unfinished: the pass's start stays recorded, and with it what is left; the
            // next slice goes on after the last file this one took.
            return Ok(cat.set_meta_blob(PASS_AFTER_KEY, resume_after)?);
        }
        cat.set_meta_blob(PASS_AFTER_KEY, None)?;
        cat.set_meta(PASS_KEY, None)?;
        Ok(cat.set_meta(PASS_COMPLETED_KEY, Some(&now_ms().to_string()))?)
    }

    fn findings(
        &self,
        run_start: i64,
        new: bool,
        each: &mut ReportFn<'_>,
    ) -> Result<(), StoreError> {
        Ok(self.cat()?.report(run_start, new, each)?)
    }

    fn summary(&self, now: i64) -> Result<Summary, StoreError> {
        Ok(self.cat()?.summary(now)?)
    }

    fn records_page(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<Record>, StoreError> {
        let rows = self.read(|r| r.by_path(after, false, limit))?;
        Ok(rows.into_iter().map(|r| self.record(r)).collect())
    }

    fn count_under(&self, rel: &[u8]) -> Result<(u64, u64), StoreError> {
        Ok(self.cat()?.count_under(rel)?)
    }

    fn forget_missing(&mut self, rel: &[u8]) -> Result<usize, StoreError> {
        Ok(self.cat()?.writer().forget_missing(rel)?)
    }

    fn history_page(
        &self,
        after: Option<&[u8]>,
        limit: usize,
        standing: bool,
    ) -> Result<Vec<History>, StoreError> {
        let kept = self.cat.with(Catalog::version) >= 2;
        self.read(|r| r.history(after, limit, standing, kept))
    }

    fn extras(&self, rel: &[u8]) -> Result<Vec<Extra>, StoreError> {
        Ok(self.cat()?.extras(rel)?)
    }

    fn keep_extras(&mut self, rel: &[u8], extras: &[Extra]) -> Result<(), StoreError> {
        Ok(self.cat()?.writer().keep_extras(rel, extras)?)
    }

    fn record_remote_check(&mut self, check: &RemoteCheck) -> Result<(), StoreError> {
        self.cat()?.writer().remote_check(check)?;
        Ok(self.cat.commit()?)
    }

    fn remote_checks(&self) -> Result<Vec<RemoteCheck>, StoreError> {
        Ok(self.cat()?.remote_checks()?)
    }

    fn run_history(&self, limit: usize) -> Result<Vec<RunInfo>, StoreError> {
        self.read(|r| r.runs(limit))
    }

    fn proof_page(&self, after: u64, limit: usize) -> Result<Vec<Link>, StoreError> {
        Ok(self.cat()?.proof_page(after, limit)?)
    }

    fn last_proof(&self) -> Result<Option<Entry>, StoreError> {
        Ok(self.cat()?.last_proof()?)
    }
}
