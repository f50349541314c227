//! Batched writes: statements go into transactions of a few thousand rows (or one
//! second), each committed whole, as in the SQLite catalog. A run killed at any moment
//! leaves the rows of the committed batches; PostgreSQL rolls back the open one when the
//! connection goes.

use super::PgError;
use super::db::Db;
use crate::catalog::{Class, below};
use crate::device::Stamp;
use postgres::types::ToSql;
use std::time::{Duration, Instant};

/// The open batch: statements in it, and when it began.
#[derive(Default)]
pub(super) struct Batch {
    pending: usize,
    since: Option<Instant>,
}

/// Writes into one tree's rows, in the open batch of `batch`.
pub(super) struct Writer<'a> {
    pub(super) db: &'a mut Db,
    pub(super) batch: &'a mut Batch,
}

impl Batch {
    /// Statements in the open batch (0 right after a commit).
    pub(super) fn pending(&self) -> usize {
        self.pending
    }
}

fn id_of(id: Option<(u64, u64)>) -> (Option<i64>, Option<i64>) {
    match id {
        Some((d, i)) => (Some(d as i64), Some(i as i64)),
        None => (None, None),
    }
}

impl Writer<'_> {
    /// Runs one statement in the open batch (the tree is `$1`); returns the rows changed.
    fn exec(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, PgError> {
        if self.batch.pending == 0 {
            self.db.client.batch_execute("BEGIN").map_err(|e| self.db.err(e))?;
            self.batch.since = Some(Instant::now());
        }
        self.batch.pending += 1;
        let changed = self.db.execute(sql, params)?;
        let old = self.batch.since.is_some_and(|s| s.elapsed() > Duration::from_secs(1));
        if self.batch.pending >= 4096 || old {
            self.commit()?;
        }
        Ok(changed)
    }

    /// Commits the open batch.
    pub(super) fn commit(&mut self) -> Result<(), PgError> {
        if self.batch.pending > 0 {
            self.batch.pending = 0;
            self.db.client.batch_execute("COMMIT").map_err(|e| self.db.err(e))?;
        }
        Ok(())
    }

    /// Gives up the open batch (after a failed write).
    pub(super) fn abandon(&mut self) {
        if self.batch.pending > 0 {
            self.batch.pending = 0;
            let _ = self.db.client.batch_execute("ROLLBACK");
        }
    }

    /// Records a file hashed for the first time.
    pub(super) fn insert(
        &mut self,
        path: &[u8],
        stamp: Stamp,
        file_id: Option<(u64, u64)>,
        digest: &[u8],
        now: i64,
    ) -> Result<(), PgError> {
        let (dev, ino) = id_of(file_id);
        let (size, mtime) = (stamp.size as i64, stamp.mtime_ns as i64);
        self.exec(
            "INSERT INTO fixity.files (tree, path, size, mtime_ns, dev, ino, digest, first_seen,
                 last_verified, last_checked, last_result, missing_since)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $8, 'new', NULL)
             ON CONFLICT (tree, path) DO UPDATE SET size = $3, mtime_ns = $4, dev = $5,
                ino = $6, digest = $7, last_verified = $8, last_checked = $8,
                last_result = 'new', missing_since = NULL, moved_from = NULL, note = NULL",
            &[&path, &size, &mtime, &dev, &ino, &digest, &now],
        )
        .map(drop)
    }

    /// Records a new digest for a known file: `class` is what the run found.
    pub(super) fn rehashed(
        &mut self,
        path: &[u8],
        (stamp, file_id, digest): (Stamp, Option<(u64, u64)>, &[u8]),
        class: Class,
        now: i64,
    ) -> Result<(), PgError> {
        let (dev, ino) = id_of(file_id);
        let (size, mtime) = (stamp.size as i64, stamp.mtime_ns as i64);
        self.exec(
            "UPDATE fixity.files SET size = $3, mtime_ns = $4, dev = $5, ino = $6, digest = $7,
                last_verified = $8, last_checked = $8, last_result = $9, missing_since = NULL,
                moved_from = NULL, note = NULL
             WHERE tree = $1 AND path = $2",
            &[&path, &size, &mtime, &dev, &ino, &digest, &now, &class.name()],
        )
        .map(drop)
    }

    /// Records a check that leaves the digest alone: ok (also the last-verified time),
    /// corrupt or unreadable.
    pub(super) fn checked(
        &mut self,
        path: &[u8],
        class: Class,
        now: i64,
        note: Option<&str>,
    ) -> Result<(), PgError> {
        self.exec(
            "UPDATE fixity.files SET last_checked = $3, last_result = $4, note = $5,
                moved_from = NULL,
                last_verified = CASE WHEN $4 = 'ok' THEN $3 ELSE last_verified END
             WHERE tree = $1 AND path = $2",
            &[&path, &now, &class.name(), &note],
        )
        .map(drop)
    }

    /// A file recorded as missing is back (unchanged).
    pub(super) fn present(&mut self, path: &[u8]) -> Result<(), PgError> {
        self.exec(
            "UPDATE fixity.files SET missing_since = NULL, last_result = 'ok'
             WHERE tree = $1 AND path = $2",
            &[&path],
        )
        .map(drop)
    }

    /// Records that a file is gone (keeping when it first went missing).
    pub(super) fn missing(&mut self, path: &[u8], now: i64) -> Result<(), PgError> {
        self.exec(
            "UPDATE fixity.files SET missing_since = coalesce(missing_since, $3),
                last_checked = $3, last_result = 'missing'
             WHERE tree = $1 AND path = $2",
            &[&path, &now],
        )
        .map(drop)
    }

    /// Forgets the missing files at `rel` or below (every one for an empty `rel`).
    pub(super) fn forget_missing(&mut self, rel: &[u8]) -> Result<usize, PgError> {
        let (lo, hi) = below(rel);
        let n = self.exec(
            "DELETE FROM fixity.files WHERE tree = $1 AND missing_since IS NOT NULL
               AND ($2::bytea IS NULL OR path = $3 OR (path > $2 AND path < $4))",
            &[&lo, &rel, &hi],
        )?;
        Ok(n as usize)
    }

    /// The file at `from` (missing) now lives at `to`, which inherits its history.
    pub(super) fn moved(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), PgError> {
        self.exec(
            "UPDATE fixity.files SET last_result = 'moved', moved_from = $2, last_checked = $4,
                first_seen = least(first_seen,
                    (SELECT first_seen FROM fixity.files WHERE tree = $1 AND path = $2))
             WHERE tree = $1 AND path = $3",
            &[&from, &to, &now],
        )?;
        self.exec("DELETE FROM fixity.files WHERE tree = $1 AND path = $2", &[&from]).map(drop)
    }
}
