//! Batched writes: a run's writes are held in the open batch and sent a few statements
//! at a time (`rows.rs`: one statement over arrays per kind of write), in transactions
//! of a few thousand rows (or one second), each committed whole, as in the SQLite
//! catalog. Reads on the writing connection send what is held first, so they see every
//! write made before them. A run killed at any moment leaves the rows of the committed
//! batches; PostgreSQL rolls back the open one when the connection goes.

use super::PgError;
use super::db::Db;
use super::rows::{Content, Rows};
use crate::catalog::{Class, below};
use std::time::{Duration, Instant};

/// Rows in a batch, at most (`FIXITY_PG_BATCH` sets another number, for tests).
const BATCH_ROWS: usize = 4096;

/// The open batch: writes in it (held or sent), when it began, and what is not sent yet.
pub(super) struct Batch {
    pending: usize,
    since: Option<Instant>,
    /// The batch's transaction has begun on the server.
    open: bool,
    rows: Rows,
    limit: usize,
}

/// Writes into one tree's rows, in the open batch of `batch`.
pub(super) struct Writer<'a> {
    pub(super) db: &'a mut Db,
    pub(super) batch: &'a mut Batch,
}

impl Batch {
    pub(super) fn new() -> Batch {
        let limit = std::env::var("FIXITY_PG_BATCH").ok().and_then(|n| n.parse().ok());
        Batch {
            pending: 0,
            since: None,
            open: false,
            rows: Rows::default(),
            limit: limit.filter(|&n| n > 0).unwrap_or(BATCH_ROWS),
        }
    }

    /// Writes in the open batch (0 right after a commit).
    pub(super) fn pending(&self) -> usize {
        self.pending
    }
}

impl Writer<'_> {
    /// Counts a write held in the batch; commits the batch when it is full or old.
    fn wrote(&mut self) -> Result<(), PgError> {
        if self.batch.pending == 0 {
            self.batch.since = Some(Instant::now());
        }
        self.batch.pending += 1;
        let old = self.batch.since.is_some_and(|s| s.elapsed() > Duration::from_secs(1));
        if self.batch.pending >= self.batch.limit || old {
            self.commit()?;
        }
        Ok(())
    }

    /// Sends the held writes, in the batch's transaction (begun here if need be).
    pub(super) fn flush(&mut self) -> Result<(), PgError> {
        if self.batch.rows.is_empty() {
            return Ok(());
        }
        self.begin()?;
        self.batch.rows.send(self.db)
    }

    /// Begins the batch's transaction on the server, if it has not begun.
    fn begin(&mut self) -> Result<(), PgError> {
        if !self.batch.open {
            self.db.client.batch_execute("BEGIN").map_err(|e| self.db.err(e))?;
            self.batch.open = true;
        }
        Ok(())
    }

    /// Sends what is held and commits the open batch.
    pub(super) fn commit(&mut self) -> Result<(), PgError> {
        self.flush()?;
        if self.batch.open {
            self.batch.open = false;
            self.db.client.batch_execute("COMMIT").map_err(|e| self.db.err(e))?;
        }
        self.batch.pending = 0;
        Ok(())
    }

    /// Gives up the open batch (after a failed write).
    pub(super) fn abandon(&mut self) {
        self.batch.rows.clear();
        self.batch.pending = 0;
        if self.batch.open {
            self.batch.open = false;
            let _ = self.db.client.batch_execute("ROLLBACK");
        }
    }

    /// Records a file hashed for the first time.
    pub(super) fn insert(
        &mut self,
        path: &[u8],
        content: Content<'_>,
        now: i64,
    ) -> Result<(), PgError> {
        self.batch.rows.new_file(path, content, now);
        self.wrote()
    }

    /// Records a new digest for a known file: `class` is what the run found.
    pub(super) fn rehashed(
        &mut self,
        path: &[u8],
        content: Content<'_>,
        class: Class,
        now: i64,
    ) -> Result<(), PgError> {
        self.batch.rows.rehashed(path, content, class.name(), now);
        self.wrote()
    }

    /// Records a digest imported from the tool `source`, not yet verified by fixity.
    pub(super) fn imported(
        &mut self,
        path: &[u8],
        content: Content<'_>,
        source: &'static str,
        now: i64,
    ) -> Result<(), PgError> {
        self.batch.rows.imported(path, content, source, now);
        self.wrote()
    }

    /// Records a check that leaves the digest alone: ok (also the last-verified time),
    /// corrupt (`found`: the digest of what it holds now) or unreadable.
    pub(super) fn checked(
        &mut self,
        path: &[u8],
        class: Class,
        now: i64,
        (note, found): (Option<&str>, Option<&[u8]>),
    ) -> Result<(), PgError> {
        self.batch.rows.checked(path, class.name(), now, (note, found));
        self.wrote()
    }

    /// A file recorded as missing is back (unchanged).
    pub(super) fn present(&mut self, path: &[u8]) -> Result<(), PgError> {
        self.batch.rows.present(path);
        self.wrote()
    }

    /// Records that a file is gone (keeping when it first went missing).
    pub(super) fn missing(&mut self, path: &[u8], now: i64) -> Result<(), PgError> {
        self.batch.rows.missing(path, now);
        self.wrote()
    }

    /// The file at `from` (missing) now lives at `to`, which inherits its history.
    pub(super) fn moved(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), PgError> {
        self.batch.rows.moved(from, to, now);
        self.wrote()
    }

    /// Forgets the missing files at `rel` or below (every one for an empty `rel`), after
    /// the writes held before it.
    pub(super) fn forget_missing(&mut self, rel: &[u8]) -> Result<usize, PgError> {
        self.flush()?;
        self.begin()?;
        let (lo, hi) = below(rel);
        let n = self.db.execute(
            "DELETE FROM fixity.files WHERE tree = $1 AND missing_since IS NOT NULL
               AND ($2::bytea IS NULL OR path = $3 OR (path > $2 AND path < $4))",
            &[&lo, &rel, &hi],
        )?;
        self.wrote()?;
        Ok(n as usize)
    }
}
