//! Batched writes: a run's writes are held in the open batch and sent a few statements
//! at a time (`rows.rs`: one statement over arrays per kind of write), in transactions
//! of a few thousand rows (or one second), each committed whole, as in the SQLite
//! catalog. A full batch is sent and committed by a thread of its own (the sender) while
//! the run fills the next one: at most one batch is on its way, so the run waits only
//! when the server takes longer over a batch than the run takes to fill the next.
//! Batches are numbered: [`Conn::committed_below`] tells which are committed, so the
//! run knows which of its findings are kept (`scrub::recorder`). A batch that fails on
//! its way is a catalog error at the next write, commit or read.
//!
//! Reads on the writing connection wait for the batch on its way and send what is held
//! first, so they see every write made before them. A run killed at any moment leaves
//! the rows of the committed batches; PostgreSQL rolls back the open one (and the one on
//! its way, if its commit had not ended) when the connection goes.

use super::PgError;
use super::db::Db;
use super::rows::{Content, Rows};
use crate::catalog::{Class, below};
use crossbeam_channel::{Receiver, Sender};
use std::time::{Duration, Instant};

/// Rows in a batch, at most (`FIXITY_PG_BATCH` sets another number, for tests).
const BATCH_ROWS: usize = 4096;

/// A batch handed to the sender: the connection (its transaction begun when `open`) and
/// the rows to send before the commit.
type Job = (Db, Rows, bool);

/// The connection handed back by the sender, and how its batch went.
type Done = (Db, Result<(), PgError>);

/// The writing connection and the open batch.
pub(super) struct Conn {
    /// The connection: away (with the sender) while a batch is on its way.
    db: Option<Db>,
    /// The batch on its way (its number), if one is.
    sending: Option<u64>,
    /// The sender thread, started with the first batch handed to it.
    sender: Option<(Sender<Job>, Receiver<Done>)>,
    /// Writes in the open batch (held or sent).
    pending: usize,
    since: Option<Instant>,
    /// The open batch's transaction has begun on the server.
    open: bool,
    rows: Rows,
    limit: usize,
    /// The open batch's number (from 1).
    number: u64,
    /// The batch the last write went into.
    last: u64,
    /// The catalog as messages name it (for a connection lost with its sender).
    shown: String,
}

/// What begins a batch's transaction. The writes join their arrays of paths with the
/// tree's rows: one probe of the primary key per row, which the planner would otherwise
/// trade for a hash of every row of the tree (read whole for each batch; issue 27).
const BEGIN: &str = "BEGIN; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off";

/// Sends `rows` on `db` and commits (begun first unless `open`); rolls back on failure.
fn send_and_commit(db: &mut Db, mut rows: Rows, open: bool) -> Result<(), PgError> {
    let sent = (|| {
        if !open {
            db.client.batch_execute(BEGIN).map_err(|e| db.err(e))?;
        }
        rows.send(db)?;
        db.client.batch_execute("COMMIT").map_err(|e| db.err(e))
    })();
    if sent.is_err() {
        let _ = db.client.batch_execute("ROLLBACK");
    }
    sent
}

impl Conn {
    pub(super) fn new(db: Db) -> Conn {
        let limit = std::env::var("FIXITY_PG_BATCH").ok().and_then(|n| n.parse().ok());
        Conn {
            shown: db.target.shown.clone(),
            db: Some(db),
            sending: None,
            sender: None,
            pending: 0,
            since: None,
            open: false,
            rows: Rows::default(),
            limit: limit.filter(|&n| n > 0).unwrap_or(BATCH_ROWS),
            number: 1,
            last: 0,
        }
    }

    /// Whether writes are not committed yet: held, sent in the open transaction, or on
    /// their way.
    pub(super) fn uncommitted(&self) -> bool {
        self.pending > 0 || self.sending.is_some()
    }

    /// The number of the batch the last write went into.
    pub(super) fn last_batch(&self) -> u64 {
        self.last
    }

    /// Every batch numbered below this one is committed.
    pub(super) fn committed_below(&self) -> u64 {
        self.sending.unwrap_or(self.number)
    }

    /// The connection, once the batch on its way is committed: its failure, if it
    /// failed (said once).
    pub(super) fn db(&mut self) -> Result<&mut Db, PgError> {
        self.wait(true)?;
        let shown = &self.shown;
        self.db.as_mut().ok_or_else(|| PgError::Query {
            catalog: shown.clone(),
            cause: "the connection was lost with the thread sending a batch".into(),
        })
    }

    /// Takes the batch on its way back, when it is done (or waiting for it with `block`).
    fn wait(&mut self, block: bool) -> Result<(), PgError> {
        let (Some(_), Some((_, done))) = (self.sending, &self.sender) else { return Ok(()) };
        let back = match block {
            true => done.recv().ok(),
            false => match done.try_recv() {
                Ok(back) => Some(back),
                Err(crossbeam_channel::TryRecvError::Empty) => return Ok(()),
                Err(crossbeam_channel::TryRecvError::Disconnected) => None,
            },
        };
        self.sending = None;
        match back {
            Some((db, sent)) => {
                self.db = Some(db);
                sent
            }
            // The sender hands back every connection it is given, unless it panicked.
            None => self.db().map(drop),
        }
    }

    /// Hands the open batch to the sender, to be sent and committed while the next one
    /// fills (after the one before it is committed); sent here when no thread can start.
    fn hand_off(&mut self) -> Result<(), PgError> {
        self.db()?;
        if self.sender.is_none() {
            let (jobs, todo) = crossbeam_channel::bounded::<Job>(1);
            let (back, done) = crossbeam_channel::bounded::<Done>(1);
            let started =
                std::thread::Builder::new().name("fixity-pg-send".into()).spawn(move || {
                    for (mut db, rows, open) in todo {
                        let sent = send_and_commit(&mut db, rows, open);
                        if back.send((db, sent)).is_err() {
                            return;
                        }
                    }
                });
            if started.is_ok() {
                self.sender = Some((jobs, done));
            }
        }
        let rows = std::mem::take(&mut self.rows);
        let open = std::mem::replace(&mut self.open, false);
        let db = self.db.take().expect("the connection is here");
        let number = self.number;
        self.number += 1;
        self.pending = 0;
        match &self.sender {
            Some((jobs, _)) => {
                jobs.send((db, rows, open)).expect("the sender takes jobs while it runs");
                self.sending = Some(number);
                Ok(())
            }
            None => {
                let db = self.db.insert(db);
                send_and_commit(db, rows, open)
            }
        }
    }

    /// Counts a write held in the batch; hands the batch off when it is full or old.
    fn wrote(&mut self) -> Result<(), PgError> {
        // A batch on its way that failed is told at the first write after it.
        self.wait(false)?;
        if self.pending == 0 {
            self.since = Some(Instant::now());
        }
        self.pending += 1;
        self.last = self.number;
        let old = self.since.is_some_and(|s| s.elapsed() > Duration::from_secs(1));
        if self.pending >= self.limit || old {
            self.hand_off()?;
        }
        Ok(())
    }

    /// Sends the held writes, in the batch's transaction (begun here if need be), after
    /// the batch on its way.
    pub(super) fn flush(&mut self) -> Result<(), PgError> {
        self.wait(true)?;
        if self.rows.is_empty() {
            return Ok(());
        }
        self.begin()?;
        let db = self.db.as_mut().expect("begun on it");
        self.rows.send(db)
    }

    /// Begins the batch's transaction on the server, if it has not begun.
    fn begin(&mut self) -> Result<(), PgError> {
        if !self.open {
            let db = self.db()?;
            db.client.batch_execute(BEGIN).map_err(|e| db.err(e))?;
            self.open = true;
        }
        Ok(())
    }

    /// Sends what is held and commits the open batch, after the one on its way: every
    /// write made so far is committed when this returns `Ok`.
    pub(super) fn commit(&mut self) -> Result<(), PgError> {
        self.flush()?;
        if self.open {
            self.open = false;
            let db = self.db()?;
            db.client.batch_execute("COMMIT").map_err(|e| db.err(e))?;
        }
        self.pending = 0;
        self.number += 1;
        Ok(())
    }

    /// Gives up the open batch (after a failed write); one on its way is waited for.
    pub(super) fn abandon(&mut self) {
        let _ = self.wait(true);
        self.rows.clear();
        self.pending = 0;
        self.number += 1;
        if self.open {
            self.open = false;
            if let Some(db) = self.db.as_mut() {
                let _ = db.client.batch_execute("ROLLBACK");
            }
        }
    }

    /// Records a file hashed for the first time.
    pub(super) fn insert(
        &mut self,
        path: &[u8],
        content: Content<'_>,
        now: i64,
    ) -> Result<(), PgError> {
        self.rows.new_file(path, content, now);
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
        self.rows.rehashed(path, content, class.name(), now);
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
        self.rows.imported(path, content, source, now);
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
        self.rows.checked(path, class.name(), now, (note, found));
        self.wrote()
    }

    /// A file recorded as missing is back (unchanged).
    pub(super) fn present(&mut self, path: &[u8]) -> Result<(), PgError> {
        self.rows.present(path);
        self.wrote()
    }

    /// Records that a file is gone (keeping when it first went missing).
    pub(super) fn missing(&mut self, path: &[u8], now: i64) -> Result<(), PgError> {
        self.rows.missing(path, now);
        self.wrote()
    }

    /// The file at `from` (missing) now lives at `to`, which inherits its history.
    pub(super) fn moved(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), PgError> {
        self.rows.moved(from, to, now);
        self.wrote()
    }

    /// Forgets the missing files at `rel` or below (every one for an empty `rel`), after
    /// the writes held before it.
    pub(super) fn forget_missing(&mut self, rel: &[u8]) -> Result<usize, PgError> {
        self.flush()?;
        self.begin()?;
        let (lo, hi) = below(rel);
        let n = self.db()?.execute(
            "DELETE FROM fixity.files WHERE tree = $1 AND missing_since IS NOT NULL
               AND ($2::bytea IS NULL OR path = $3 OR (path > $2 AND path < $4))",
            &[&lo, &rel, &hi],
        )?;
        self.wrote()?;
        Ok(n as usize)
    }
}

impl Drop for Conn {
    /// Takes back the connection from the sender (a batch on its way ends first), so
    /// that the sender thread ends.
    fn drop(&mut self) {
        let _ = self.wait(true);
    }
}
