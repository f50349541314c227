//! Batched writes: a run's writes are held in the open batch and sent a few statements
//! at a time (`rows.rs`: one statement over arrays per kind of write), in transactions
//! of a few thousand rows (or one second), each committed whole, as in the SQLite
//! catalog. A full batch is sent and committed by a thread of its own (a sender) while
//! the run fills the next one. Up to [`WRITERS`] batches are on their way at once, each
//! on a connection of its own (a server process of its own: the server's work per row
//! of a verify is more than the run's, issue 27), unless a batch writes a path one on
//! its way writes, or rows it does not name: then it waits for that one, so the later
//! write to a path lands last. The run waits only when every sender is busy.
//! Batches are numbered ([`BatchNumbers`], as the SQLite catalog's): the store tells
//! which are committed, so the run knows which of its findings are kept
//! (`scrub::recorder`). A batch that fails on its way is a catalog error at the next
//! write, commit or read.
//!
//! Reads on the writing connection wait for the batches on their way and send what is
//! held first, so they see every write made before them. A run killed at any moment
//! leaves the rows of the committed batches; PostgreSQL rolls back the open one (and
//! those on their way, if their commit had not ended) when the connections go.

use super::PgError;
use super::db::{Db, Recipe};
use super::rows::{Content, Rows};
use crate::catalog::numbers::BatchNumbers;
use crate::catalog::{Class, below};
use crossbeam_channel::{Receiver, Sender};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Rows in a batch, at most (`FIXITY_PG_BATCH` sets another number, for tests).
const BATCH_ROWS: usize = 4096;

/// Batches on their way at once, at most: each has a connection and a sender thread.
const WRITERS: usize = 2;

/// A batch handed to a sender: its number, the connection (its transaction begun when
/// `open`) and the rows to send before the commit.
type Job = (u64, Db, Rows, bool);

/// The connection handed back by a sender, and how its batch went.
type Done = (u64, Db, Result<(), PgError>);

/// What is kept of a batch on its way: the paths it writes (`None`: rows it does not
/// name, such as every missing file below a directory).
type Paths = Option<HashSet<Vec<u8>>>;

/// The writing connections and the open batch.
pub(super) struct Conn {
    /// The open batch's connection (holding its transaction when `open`): `None` while
    /// every connection is away with a sender.
    db: Option<Db>,
    /// Connections back from the senders, beside `db`.
    spare: Vec<Db>,
    /// Connections made, the first included.
    made: usize,
    /// What another connection is made from.
    recipe: Recipe,
    /// The batches' numbers; those on their way with their paths.
    batches: BatchNumbers<Paths>,
    /// The senders' queue and their answers, made with the first batch handed off.
    sender: Option<(Sender<Job>, Receiver<Done>)>,
    /// Writes in the open batch (held or sent).
    pending: usize,
    since: Option<Instant>,
    /// The open batch's transaction has begun on the server.
    open: bool,
    /// The open batch writes rows it does not name.
    wide: bool,
    rows: Rows,
    limit: usize,
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
        rows.send(db, (!open).then_some(BEGIN))?;
        db.client.batch_execute("COMMIT").map_err(|e| db.err(e))
    })();
    if sent.is_err() {
        let _ = db.client.batch_execute("ROLLBACK");
    }
    sent
}

/// The senders: `WRITERS` threads taking batches from one queue (none when no thread
/// can start: the batches are then sent by the run itself).
fn senders() -> Option<(Sender<Job>, Receiver<Done>)> {
    let (jobs, todo) = crossbeam_channel::bounded::<Job>(WRITERS);
    let (back, done) = crossbeam_channel::bounded::<Done>(WRITERS);
    let mut started = 0;
    for _ in 0..WRITERS {
        let (todo, back) = (todo.clone(), back.clone());
        let spawned = std::thread::Builder::new().name("fixity-pg-send".into()).spawn(move || {
            for (number, mut db, rows, open) in todo {
                let sent = send_and_commit(&mut db, rows, open);
                if back.send((number, db, sent)).is_err() {
                    return;
                }
            }
        });
        started += usize::from(spawned.is_ok());
    }
    (started > 0).then_some((jobs, done))
}

impl Conn {
    /// The writer on `db`, in batches of `limit` rows (`None`: `FIXITY_PG_BATCH`, else
    /// [`BATCH_ROWS`]).
    pub(super) fn new(db: Db, limit: Option<usize>) -> Conn {
        let set = || std::env::var("FIXITY_PG_BATCH").ok().and_then(|n| n.parse().ok());
        let limit = limit.or_else(set);
        Conn {
            shown: db.target.shown.clone(),
            recipe: db.recipe(),
            db: Some(db),
            spare: Vec::new(),
            made: 1,
            batches: BatchNumbers::default(),
            sender: None,
            pending: 0,
            since: None,
            open: false,
            wide: false,
            rows: Rows::default(),
            limit: limit.filter(|&n| n > 0).unwrap_or(BATCH_ROWS),
        }
    }

    /// Whether writes are not committed yet: held, sent in the open transaction, or on
    /// their way.
    pub(super) fn uncommitted(&self) -> bool {
        self.pending > 0 || !self.batches.on_way().is_empty()
    }

    /// The batches' numbers.
    pub(super) fn batches(&self) -> &BatchNumbers<Paths> {
        &self.batches
    }

    /// The connection, once every batch on its way is committed: the failure of one,
    /// if one failed (said once).
    pub(super) fn db(&mut self) -> Result<&mut Db, PgError> {
        self.wait(true)?;
        if self.db.is_none() {
            self.db = self.spare.pop();
        }
        let shown = &self.shown;
        self.db.as_mut().ok_or_else(|| PgError::Query {
            catalog: shown.clone(),
            cause: "the connection was lost with the thread sending a batch".into(),
        })
    }

    /// Takes back a batch a sender is done with.
    fn back(&mut self, (number, db, sent): Done) -> Result<(), PgError> {
        self.spare.push(db);
        self.batches.back(number, sent.is_ok());
        sent
    }

    /// Takes back one batch on its way, waiting for it; with none on its way, nothing.
    fn wait_one(&mut self) -> Result<(), PgError> {
        let (false, Some((_, done))) = (self.batches.on_way().is_empty(), &self.sender) else {
            return Ok(());
        };
        match done.recv() {
            Ok(back) => self.back(back),
            // The senders hand back every connection they are given, unless they
            // panicked: what is on its way is lost.
            Err(_) => {
                self.batches.lose_on_way();
                self.db().map(drop)
            }
        }
    }

    /// Takes back the batches that are done (waiting for every one with `block`); the
    /// first failure among them is the answer.
    fn wait(&mut self, block: bool) -> Result<(), PgError> {
        let mut first = Ok(());
        while !self.batches.on_way().is_empty() {
            let got = match block {
                true => self.wait_one(),
                false => {
                    let Some((_, done)) = &self.sender else { break };
                    match done.try_recv() {
                        Ok(back) => self.back(back),
                        Err(crossbeam_channel::TryRecvError::Empty) => break,
                        Err(crossbeam_channel::TryRecvError::Disconnected) => self.wait_one(),
                    }
                }
            };
            if first.is_ok() {
                first = got;
            }
        }
        first
    }

    /// A connection for a batch not begun on the server: one back from the senders, a
    /// new one while fewer than `WRITERS` are made (none made: the run goes on with
    /// those it has), or the first one a sender hands back.
    fn free_connection(&mut self) -> Result<Db, PgError> {
        loop {
            if let Some(db) = self.db.take().or_else(|| self.spare.pop()) {
                return Ok(db);
            }
            if self.made < WRITERS {
                match self.recipe.connect() {
                    Ok(db) => {
                        self.made += 1;
                        return Ok(db);
                    }
                    // Not made (the server's connection limit, say): the run goes on
                    // with the connections it has.
                    Err(_) => self.made = WRITERS,
                }
            }
            if self.batches.on_way().is_empty() {
                // Every connection is away and none is on its way back.
                return Err(PgError::Query {
                    catalog: self.shown.clone(),
                    cause: "the connection was lost with the thread sending a batch".into(),
                });
            }
            self.wait_one()?;
        }
    }

    /// Hands the open batch to a sender, to be sent and committed while the next one
    /// fills; sent here when no thread can start. It goes once fewer than `WRITERS` are
    /// on their way and none of them writes a path it writes.
    fn hand_off(&mut self) -> Result<(), PgError> {
        loop {
            let on_way = self.batches.on_way();
            let clash = on_way.iter().any(|(_, paths)| match paths {
                None => true,
                Some(p) => self.wide || self.rows.touches(p),
            });
            if !clash && on_way.len() < WRITERS {
                break;
            }
            self.wait_one()?;
        }
        if self.sender.is_none() {
            self.sender = senders();
        }
        let db = match self.open {
            // Its transaction has begun there (everything on its way came back first).
            true => {
                self.db()?;
                self.db.take().expect("the connection is here")
            }
            false => self.free_connection()?,
        };
        let paths = (!self.wide).then(|| self.rows.paths());
        let rows = std::mem::take(&mut self.rows);
        let open = std::mem::replace(&mut self.open, false);
        self.wide = false;
        self.pending = 0;
        match &self.sender {
            Some((jobs, _)) => {
                let number = self.batches.send(paths);
                jobs.send((number, db, rows, open)).expect("the senders take jobs while they run");
                Ok(())
            }
            None => {
                let number = self.batches.close();
                let db = self.db.insert(db);
                let sent = send_and_commit(db, rows, open);
                if sent.is_err() {
                    self.batches.lose(number);
                }
                sent
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
        self.batches.wrote();
        let old = self.since.is_some_and(|s| s.elapsed() > Duration::from_secs(1));
        if self.pending >= self.limit || old {
            self.hand_off()?;
        }
        Ok(())
    }

    /// Sends the held writes, in the batch's transaction (begun here if need be), after
    /// the batches on their way.
    pub(super) fn flush(&mut self) -> Result<(), PgError> {
        self.wait(true)?;
        if self.rows.is_empty() {
            return Ok(());
        }
        let begin = (!self.open).then_some(BEGIN);
        self.db()?;
        // Begun with the first write (`Rows::send`); the open flag set first, so that a
        // failure (the batch then given up) still ends the transaction.
        self.open = true;
        let db = self.db.as_mut().expect("the connection is here");
        self.rows.send(db, begin)
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

    /// Sends what is held and commits the open batch, after those on their way: every
    /// write made so far is committed when this returns `Ok`.
    pub(super) fn commit(&mut self) -> Result<(), PgError> {
        self.flush()?;
        if self.open {
            self.open = false;
            let db = self.db()?;
            db.client.batch_execute("COMMIT").map_err(|e| db.err(e))?;
        }
        self.pending = 0;
        self.wide = false;
        self.batches.close();
        Ok(())
    }

    /// Gives up the open batch (after a failed write); those on their way are waited
    /// for.
    pub(super) fn abandon(&mut self) {
        let _ = self.wait(true);
        self.batches.abandon();
        self.rows.clear();
        self.pending = 0;
        self.wide = false;
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

    /// Records the new inode of a file found as recorded (a chmod, a rename).
    pub(super) fn restamped(
        &mut self,
        path: &[u8],
        stamp: crate::device::Stamp,
        inode: crate::catalog::Inode,
    ) -> Result<(), PgError> {
        self.rows.restamped(path, stamp, inode);
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

    /// The file at `from` (missing) is the one at `to` under another form of its name.
    pub(super) fn renamed(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), PgError> {
        self.rows.renamed(from, to, now);
        self.wrote()
    }

    /// Forgets the missing files at `rel` or below (every one for an empty `rel`), after
    /// the writes held before it.
    pub(super) fn forget_missing(&mut self, rel: &[u8]) -> Result<usize, PgError> {
        self.flush()?;
        self.begin()?;
        let (lo, hi) = below(rel);
        self.wide = true;
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
    /// Takes back the connections from the senders (the batches on their way end
    /// first), so that the sender threads end.
    fn drop(&mut self) {
        let _ = self.wait(true);
    }
}
