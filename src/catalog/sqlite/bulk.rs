//! Many new records at once (a first scan, an import): the digest index is left out
//! while they go in, and made again by one sort only when something looks a digest up.
//!
//! Paths go into the catalog in walk order, which is the order of its table and of its
//! other index (by time, then path): each batch appends to their ends. The digest index
//! is in the order of the digests, random beside the walk: with more entries than the
//! page cache holds, each new row reads and rewrites a page of it somewhere (a first
//! scan of a million files made 3.6 page writes and 2.5 page reads per file, against 0.45
//! and 0.14 for 50,000). So once a run has inserted many rows, and a good share of the
//! catalog, the index is dropped (in the open batch: a killed run leaves the catalog
//! consistent, only without the index).
//!
//! The index serves one look-up only: where a missing file moved to
//! (`move_candidates`). It is made again (`CREATE INDEX` sorts: about 0.9 s for a million
//! rows) before the first such look-up, not at the end of the run that dropped it: a
//! catalog whose files never move never pays for it, and a first scan does not end
//! with a sort on one core. A catalog without it is sound; later inserts are cheaper.

use super::{Catalog, Result, Writer};

/// Inserts of a run before the first look at whether to drop the index; then again at
/// each doubling.
pub(super) const FIRST_LOOK: u64 = if cfg!(test) { 64 } else { 50_000 };

/// The index is dropped once the run's inserts are at least this share of the rows.
const SHARE: u64 = 8;

pub(super) const DIGEST_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS files_by_digest ON files (digest)";

/// A run's inserts, and whether the digest index is out.
#[derive(Default)]
pub(super) struct Bulk {
    inserted: std::cell::Cell<u64>,
    dropped: std::cell::Cell<bool>,
}

impl Bulk {
    /// The bookkeeping of a catalog opened with (`indexed`) or without the index.
    pub(super) fn opened(indexed: bool) -> Bulk {
        Bulk { inserted: Default::default(), dropped: std::cell::Cell::new(!indexed) }
    }
}

/// Whether the catalog on `conn` has the digest index.
pub(super) fn has_digest_index(conn: &rusqlite::Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'files_by_digest'",
        [],
        |r| r.get::<_, i64>(0).map(|n| n > 0),
    )
}

impl Catalog {
    /// Counts an insert made through `w`; drops the digest index when the run's inserts
    /// have become many, and a large share of the catalog.
    pub(super) fn inserted(&self, w: &mut Writer<'_>) -> Result<()> {
        let n = self.bulk.inserted.get() + 1;
        self.bulk.inserted.set(n);
        let look = n.is_multiple_of(FIRST_LOOK) && (n / FIRST_LOOK).is_power_of_two();
        if self.bulk.dropped.get() || !look {
            return Ok(());
        }
        let rows: i64 = self
            .conn
            .query_row("SELECT count(*) FROM files", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if n * SHARE >= rows as u64 {
            w.exec("DROP INDEX IF EXISTS files_by_digest", [])?;
            self.bulk.dropped.set(true);
        }
        Ok(())
    }

    /// Makes again the index [`Catalog::inserted`] (or an earlier run) dropped, after
    /// committing the open batch: before a look-up by digest.
    pub(crate) fn digest_index(&self) -> Result<()> {
        if !self.bulk.dropped.get() {
            return Ok(());
        }
        self.writer().commit()?;
        self.conn.execute_batch(DIGEST_INDEX).map_err(|e| self.err(e))?;
        self.bulk.dropped.set(false);
        Ok(())
    }

    /// Whether the digest index is out (tests).
    #[cfg(test)]
    pub(super) fn digest_index_out(&self) -> bool {
        self.bulk.dropped.get()
    }
}
