//! A run's writes committed by a thread of their own: the run holds its writes in the
//! open batch (a few thousand, or one second's), hands a full batch to the committer
//! thread, which writes and commits it on the catalog's connection while the run fills
//! the next one. At most one batch is on its way, so memory stays bounded and the run
//! waits only when SQLite takes longer over a batch than the run takes to fill the next.
//! On a tree of a million small files the catalog's B-tree work (a row and two or three
//! index entries a file) was a third of the run's own thread, the one that walks and
//! merges; now it runs beside it.
//!
//! Batches are numbered ([`BatchNumbers`], as the PostgreSQL catalog's): the store tells
//! which are committed, so the run knows which findings are kept (`scrub::recorder`). A batch that fails on its way is told at the next write, commit
//! or read. Any other use of the catalog ([`Batches::get`]) waits for the batch on its
//! way and writes what is held first (in the open transaction), so it sees every write
//! made before it. A run killed at any moment leaves the committed batches; SQLite rolls
//! back the open one. Dropping the store waits for the batch on its way, so the catalog
//! is closed before the run lock is let go.

use super::{Catalog, CatalogError, Inode, Result, Writer};
use crate::catalog::Class;
use crate::catalog::numbers::BatchNumbers;
use crate::device::Stamp;
use crate::digest::Digest;
use crossbeam_channel::{Receiver, Sender};
use std::cell::{Cell, RefCell};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Writes in a batch, at most.
const BATCH_ROWS: usize = 4096;

/// One held write: a call of [`Writer`], with what it needs owned.
pub(super) enum Op {
    Insert {
        path: Vec<u8>,
        stamp: Stamp,
        id: Inode,
        digest: Digest,
        now: i64,
    },
    Rehashed {
        path: Vec<u8>,
        stamp: Stamp,
        id: Inode,
        digest: Digest,
        class: Class,
        now: i64,
    },
    Checked {
        path: Vec<u8>,
        class: Class,
        now: i64,
        note: Option<String>,
        found: Option<Digest>,
    },
    Imported {
        path: Vec<u8>,
        stamp: Stamp,
        id: Inode,
        digest: Digest,
        source: &'static str,
        now: i64,
    },
    Restamped {
        path: Vec<u8>,
        stamp: Stamp,
        id: Inode,
    },
    Missing {
        path: Vec<u8>,
        now: i64,
    },
    Present {
        path: Vec<u8>,
    },
    Moved {
        from: Vec<u8>,
        to: Vec<u8>,
        now: i64,
    },
    Renamed {
        from: Vec<u8>,
        to: Vec<u8>,
        now: i64,
    },
}

impl Op {
    fn apply(self, w: &mut Writer<'_>) -> Result<()> {
        match self {
            Op::Insert { path, stamp, id, digest, now } => {
                w.insert(&path, stamp, id, digest.as_bytes(), now)
            }
            Op::Rehashed { path, stamp, id, digest, class, now } => {
                w.rehashed(&path, stamp, id, digest.as_bytes(), class, now)
            }
            Op::Checked { path, class, now, note, found } => {
                let found = found.as_ref().map(Digest::as_bytes);
                w.checked(&path, class, now, (note.as_deref(), found))
            }
            Op::Imported { path, stamp, id, digest, source, now } => {
                w.imported(&path, stamp, id, digest.as_bytes(), source, now)
            }
            Op::Restamped { path, stamp, id } => w.restamped(&path, stamp, id),
            Op::Missing { path, now } => w.missing(&path, now),
            Op::Present { path } => w.present(&path),
            Op::Moved { from, to, now } => w.moved(&from, &to, now),
            Op::Renamed { from, to, now } => w.renamed(&from, &to, now),
        }
    }
}

/// Writes `ops` (leaving it empty) in the catalog's open batch and commits it; gives it
/// up on failure.
fn write_and_commit(cat: &Catalog, ops: &mut Vec<Op>) -> Result<()> {
    let mut w = cat.writer();
    let done = ops.drain(..).try_for_each(|op| op.apply(&mut w)).and_then(|()| w.commit());
    if done.is_err() {
        w.abandon();
    }
    done
}

/// The committer thread: its jobs, and how each went.
struct Committer {
    jobs: Option<Sender<Vec<Op>>>,
    /// How each batch went, and its emptied vector for the next batch.
    done: Receiver<(Result<()>, Vec<Op>)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The held writes and the batch numbers.
#[derive(Default)]
struct Held {
    ops: Vec<Op>,
    /// The vector of the last batch committed, emptied, for the next one.
    spare: Vec<Op>,
    since: Option<Instant>,
    /// The batches' numbers (one on its way at most).
    numbers: BatchNumbers,
    /// Held writes were written into the open transaction (by [`Batches::get`]) and not
    /// committed yet.
    written: bool,
}

/// The catalog of a run, with its writes batched and committed beside the run.
pub(super) struct Batches {
    cat: Arc<Mutex<Catalog>>,
    held: RefCell<Held>,
    committer: RefCell<Option<Committer>>,
    /// A batch on its way failed: said at the next use.
    failed: RefCell<Option<CatalogError>>,
    /// Batch size (tests make it small).
    limit: Cell<usize>,
}

impl Batches {
    pub(super) fn new(cat: Catalog) -> Batches {
        Batches {
            cat: Arc::new(Mutex::new(cat)),
            held: RefCell::new(Held::default()),
            committer: RefCell::new(None),
            failed: RefCell::new(None),
            limit: Cell::new(BATCH_ROWS),
        }
    }

    /// Sets the number of writes a batch holds (tests).
    #[cfg(test)]
    pub(super) fn set_limit(&self, n: usize) {
        self.limit.set(n.max(1));
    }

    fn lock(&self) -> MutexGuard<'_, Catalog> {
        // A panic on the committer thread cannot leave the catalog half-written in a way
        // SQLite does not roll back: its connection is still sound.
        self.cat.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes back how the batch on its way went, waiting for it with `block`; a failure
    /// is kept to be told.
    fn collect(&self, block: bool) {
        let mut held = self.held.borrow_mut();
        let Some(&(number, ())) = held.numbers.on_way().first() else { return };
        let committer = self.committer.borrow();
        let Some(c) = committer.as_ref() else { return };
        let back = match block {
            true => c.done.recv().ok(),
            false => match c.done.try_recv() {
                Ok(r) => Some(r),
                Err(crossbeam_channel::TryRecvError::Empty) => return,
                Err(crossbeam_channel::TryRecvError::Disconnected) => None,
            },
        };
        let failure = match back {
            Some((Ok(()), spare)) => {
                held.spare = spare;
                held.numbers.back(number, true);
                return;
            }
            Some((Err(e), _)) => e,
            None => CatalogError::Io(
                self.lock().path().to_path_buf(),
                std::io::Error::other("the thread committing the catalog's writes ended"),
            ),
        };
        held.numbers.lose(number);
        self.failed.borrow_mut().get_or_insert(failure);
    }

    /// The failure of a batch on its way, once.
    fn failure(&self) -> Result<()> {
        match self.failed.borrow_mut().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The catalog, once the batch on its way is committed and the held writes are
    /// written into the open transaction.
    pub(super) fn get(&self) -> Result<MutexGuard<'_, Catalog>> {
        self.collect(true);
        self.failure()?;
        let ops = std::mem::take(&mut self.held.borrow_mut().ops);
        let cat = self.lock();
        if !ops.is_empty() {
            let mut w = cat.writer();
            self.held.borrow_mut().written = true;
            if let Err(e) = ops.into_iter().try_for_each(|op| op.apply(&mut w)) {
                w.abandon();
                self.lost();
                return Err(e);
            }
        }
        Ok(cat)
    }

    /// The catalog as it is, for what held writes do not change (its version, whether
    /// its file is in place, a new read connection): waits only while the committer
    /// holds it, and writes nothing held.
    pub(super) fn with<T>(&self, f: impl FnOnce(&Catalog) -> T) -> T {
        f(&self.lock())
    }

    /// Holds a write in the open batch; hands the batch to the committer when it is
    /// full or a second old.
    pub(super) fn write(&self, op: Op) -> Result<()> {
        self.collect(false);
        self.failure()?;
        let full = {
            let mut held = self.held.borrow_mut();
            if held.ops.is_empty() && !held.written {
                held.since = Some(Instant::now());
            }
            held.ops.push(op);
            held.numbers.wrote();
            held.ops.len() >= self.limit.get()
                || held.since.is_some_and(|s| s.elapsed() > Duration::from_secs(1))
        };
        if full { self.hand_off() } else { Ok(()) }
    }

    /// Hands the held writes to the committer thread (after the batch on its way is
    /// committed); written here when no thread can start.
    fn hand_off(&self) -> Result<()> {
        self.collect(true);
        self.failure()?;
        if self.committer.borrow().is_none() {
            let cat = self.cat.clone();
            let (jobs, todo) = crossbeam_channel::bounded::<Vec<Op>>(1);
            let (back, done) = crossbeam_channel::bounded::<(Result<()>, Vec<Op>)>(1);
            let thread =
                std::thread::Builder::new().name("fixity-commit".into()).spawn(move || {
                    for mut ops in todo {
                        let cat = cat.lock().unwrap_or_else(|p| p.into_inner());
                        let r = write_and_commit(&cat, &mut ops);
                        drop(cat);
                        if back.send((r, ops)).is_err() {
                            return;
                        }
                    }
                });
            if let Ok(thread) = thread {
                *self.committer.borrow_mut() =
                    Some(Committer { jobs: Some(jobs), done, thread: Some(thread) });
            }
        }
        let mut held = self.held.borrow_mut();
        let next = std::mem::take(&mut held.spare);
        let mut ops = std::mem::replace(&mut held.ops, next);
        held.written = false;
        held.since = None;
        match self.committer.borrow().as_ref().and_then(|c| c.jobs.as_ref()) {
            Some(jobs) => {
                jobs.send(ops).expect("the committer takes jobs while it runs");
                held.numbers.send(());
                Ok(())
            }
            None => {
                let number = held.numbers.close();
                drop(held);
                let done = write_and_commit(&self.lock(), &mut ops);
                if done.is_err() {
                    self.held.borrow_mut().numbers.lose(number);
                }
                done
            }
        }
    }

    /// The open batch failed (rolled back): it is never committed, and later writes go
    /// in the next one.
    fn lost(&self) {
        let mut held = self.held.borrow_mut();
        held.written = false;
        held.since = None;
        held.numbers.abandon();
    }

    /// Writes what is held and commits the open batch, after the one on its way: every
    /// write made so far is committed when this returns `Ok`.
    pub(super) fn commit(&self) -> Result<()> {
        let cat = self.get()?;
        if let Err(e) = cat.writer().commit() {
            self.lost();
            return Err(e);
        }
        let mut held = self.held.borrow_mut();
        held.written = false;
        held.since = None;
        held.numbers.close();
        Ok(())
    }

    /// Whether writes are not committed yet: held, written in the open transaction, or
    /// on their way.
    pub(super) fn uncommitted(&self) -> bool {
        let held = self.held.borrow();
        !held.ops.is_empty() || held.written || !held.numbers.on_way().is_empty()
    }

    /// The batches' numbers.
    pub(super) fn numbers(&self) -> std::cell::Ref<'_, BatchNumbers> {
        std::cell::Ref::map(self.held.borrow(), |h| &h.numbers)
    }

    /// Gives up the open batch (after a failed write); the one on its way is waited for.
    pub(super) fn abandon(&self) {
        self.collect(true);
        let _ = self.failed.borrow_mut().take();
        {
            let mut held = self.held.borrow_mut();
            held.ops.clear();
            held.written = false;
            held.since = None;
            held.numbers.abandon();
        }
        self.lock().writer().abandon();
    }
}

impl Drop for Batches {
    /// Waits for the batch on its way: the catalog is closed before the store's run
    /// lock is let go. Held writes are dropped (never committed), as SQLite rolls back
    /// an open batch.
    fn drop(&mut self) {
        if let Some(mut c) = self.committer.get_mut().take() {
            drop(c.jobs.take());
            if let Some(t) = c.thread.take() {
                let _ = t.join();
            }
        }
    }
}
