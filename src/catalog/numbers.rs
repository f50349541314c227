//! The numbers of a run's write batches, for the catalogs that commit a batch on a thread
//! of their own while the run fills the next (SQLite, PostgreSQL): which batch is open,
//! which one the last write went into, which are on their way and which were lost, so
//! the recorder knows which of its findings are kept ([`crate::catalog::Store::committed_below`],
//! [`crate::catalog::Store::committed`]).

use std::collections::BTreeSet;

/// Batch numbers (from 1) of one writer; each batch on its way carries what the writer
/// keeps of it (`T`: PostgreSQL, the paths it writes).
#[derive(Debug)]
pub(crate) struct BatchNumbers<T = ()> {
    /// The open batch.
    open: u64,
    /// The batch the last write went into.
    last: u64,
    /// The batches on their way, oldest first.
    on_way: Vec<(u64, T)>,
    /// The batches that failed or were given up: never committed.
    lost: BTreeSet<u64>,
}

impl<T> Default for BatchNumbers<T> {
    fn default() -> BatchNumbers<T> {
        BatchNumbers { open: 1, last: 0, on_way: Vec::new(), lost: BTreeSet::new() }
    }
}

impl<T> BatchNumbers<T> {
    /// A write went into the open batch.
    pub(crate) fn wrote(&mut self) {
        self.last = self.open;
    }

    /// The batch the last write went into.
    pub(crate) fn last(&self) -> u64 {
        self.last
    }

    /// Closes the open batch (committed, handed off or given up): its number.
    pub(crate) fn close(&mut self) -> u64 {
        self.open += 1;
        self.open - 1
    }

    /// Closes the open batch, handed to a thread that commits it.
    pub(crate) fn send(&mut self, kept: T) -> u64 {
        let n = self.close();
        self.on_way.push((n, kept));
        n
    }

    /// Batch `n` is back from its thread: committed, or (`ok` false) lost.
    pub(crate) fn back(&mut self, n: u64, ok: bool) {
        self.on_way.retain(|(w, _)| *w != n);
        if !ok {
            self.lost.insert(n);
        }
    }

    /// Batch `n` failed (or was given up) and is never committed.
    pub(crate) fn lose(&mut self, n: u64) {
        self.back(n, false);
    }

    /// Every batch on its way is lost (its thread ended).
    pub(crate) fn lose_on_way(&mut self) {
        self.lost.extend(self.on_way.drain(..).map(|(n, _)| n));
    }

    /// Gives up the open batch.
    pub(crate) fn abandon(&mut self) {
        let n = self.close();
        self.lost.insert(n);
    }

    /// The batches on their way, oldest first, with what is kept of each.
    pub(crate) fn on_way(&self) -> &[(u64, T)] {
        &self.on_way
    }

    /// Every batch numbered below this one is committed; after a batch was lost, it stays
    /// below that one.
    pub(crate) fn committed_below(&self) -> u64 {
        let first_lost = self.lost.first().copied().unwrap_or(u64::MAX);
        self.on_way.first().map_or(self.open, |(n, _)| *n).min(first_lost)
    }

    /// Whether batch `n` is committed (one after a lost batch may be, when several are on
    /// their way at once).
    pub(crate) fn committed(&self, n: u64) -> bool {
        n < self.open && !self.lost.contains(&n) && !self.on_way.iter().any(|(w, _)| *w == n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_count_as_committed_once_back_and_never_once_lost() {
        let mut b = BatchNumbers::<()>::default();
        b.wrote();
        assert_eq!((b.last(), b.committed_below()), (1, 1));
        assert_eq!((b.send(()), b.send(())), (1, 2));
        b.wrote();
        assert_eq!((b.last(), b.committed_below()), (3, 1));
        // Batch 2 commits before batch 1, which then fails.
        b.back(2, true);
        assert!(b.committed(2) && !b.committed(1));
        assert_eq!(b.committed_below(), 1);
        b.back(1, false);
        assert_eq!(b.committed_below(), 1, "below the lost batch for good");
        assert!(b.committed(2) && !b.committed(1) && !b.committed(3), "3 is open");
        b.abandon();
        assert!(!b.committed(3));
        assert_eq!(b.close(), 4);
        assert!(b.committed(4) && b.on_way().is_empty());
        b.lose(4);
        assert!(!b.committed(4));
        b.send(());
        b.lose_on_way();
        assert!(!b.committed(5) && b.on_way().is_empty());
    }
}
