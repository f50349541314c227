//! The SQLite catalog's chain of proofs (see [`crate::proof`]): one row per run that
//! finished, appended in the transaction that records the run's end, after the run's
//! changes are committed, so the entry's root is of exactly what the run left.

use super::{Catalog, CatalogError, Result};
use crate::catalog::Class;
use crate::catalog::proofs::standing;
use crate::proof::{Entry, Hash, Identity, Leaf, Link, RootHasher, hash_of};
use rusqlite::{OptionalExtension, params};

/// Schema step 5: the chain. One tree per catalog: its entries are keyed by number only,
/// and the run is not a foreign key (a deleted run must leave its entry for the audit).
pub(super) const SCHEMA: &str = "CREATE TABLE proofs (
         seq INTEGER PRIMARY KEY,
         run INTEGER NOT NULL,
         at INTEGER NOT NULL,
         files INTEGER NOT NULL,
         root BLOB NOT NULL,
         prev BLOB NOT NULL,
         head BLOB NOT NULL
     )";

/// The schema version that keeps the chain.
const SINCE: i64 = 5;

/// An entry (with whether its run is kept) from `SELECT seq, run, at, files, root, prev,
/// head, EXISTS (run)`.
fn link_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Link> {
    let hash = |i| Ok::<Hash, rusqlite::Error>(hash_of(&r.get::<_, Vec<u8>>(i)?));
    let entry = Entry {
        seq: r.get::<_, i64>(0)? as u64,
        run: r.get(1)?,
        at: r.get(2)?,
        files: r.get::<_, i64>(3)? as u64,
        root: hash(4)?,
        prev: hash(5)?,
        head: hash(6)?,
    };
    Ok(Link { entry, run_kept: r.get(7)? })
}

/// A column's bytes, stored as a blob or as text (column `i`, for the error).
fn bytes(v: rusqlite::types::ValueRef<'_>, i: usize) -> rusqlite::Result<&[u8]> {
    match v {
        rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => Ok(b),
        other => Err(rusqlite::Error::InvalidColumnType(i, "bytes".into(), other.data_type())),
    }
}

const SELECT_LINKS: &str = "SELECT seq, run, at, files, root, prev, head,
        EXISTS (SELECT 1 FROM runs WHERE runs.id = proofs.run) FROM proofs";

impl Catalog {
    /// Records the end of run `id` and appends its entry to the chain, in one
    /// transaction that holds the catalog's write lock, so no other writer (another part
    /// of a plan) changes the records between the root and the entry. The run's own
    /// writes must be committed first.
    pub(crate) fn finish_proved(&self, id: i64, complete: bool, summary: &str) -> Result<()> {
        let c = &self.conn;
        c.execute_batch("BEGIN IMMEDIATE").map_err(|e| self.err(e))?;
        let done = (|| {
            let at = crate::clock::now_ms();
            c.execute(
                "UPDATE runs SET finished = ?1, complete = ?2, summary = ?3 WHERE id = ?4",
                params![at, complete, summary, id],
            )?;
            let root = self.state_root()?;
            let last = c
                .query_row(&format!("{SELECT_LINKS} ORDER BY seq DESC LIMIT 1"), [], link_of)
                .optional()?;
            let e = Entry::next(&Identity::default(), last.map(|l| l.entry).as_ref(), id, at, root);
            c.execute(
                "INSERT INTO proofs (seq, run, at, files, root, prev, head)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    e.seq as i64,
                    id,
                    at,
                    e.files as i64,
                    &e.root[..],
                    &e.prev[..],
                    &e.head[..]
                ],
            )?;
            Ok(())
        })();
        match done {
            Ok(()) => c.execute_batch("COMMIT").map_err(|e| self.err(e)),
            Err(e) => {
                let _ = c.execute_batch("ROLLBACK");
                Err(self.err(e))
            }
        }
    }

    /// The root of every record, read in path order on the catalog's own connection
    /// (inside the caller's transaction): only the columns the root commits to, borrowed
    /// from the row (no copy per record).
    fn state_root(&self) -> rusqlite::Result<(Hash, u64)> {
        let mut root = RootHasher::new(self.algo.name);
        let mut st = self.conn.prepare(
            "SELECT path, size, mtime_ns, digest, last_result, missing_since IS NOT NULL
             FROM files ORDER BY path",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let result = Class::from_name(r.get_ref(4)?.as_str()?).unwrap_or(Class::Ok);
            root.add(&Leaf {
                path: bytes(r.get_ref(0)?, 0)?,
                size: r.get::<_, i64>(1)? as u64,
                mtime_ns: r.get(2)?,
                digest: bytes(r.get_ref(3)?, 3)?,
                standing: standing(result, r.get(5)?),
            });
        }
        Ok(root.finish())
    }

    /// Up to `limit` entries numbered after `after`, in order.
    pub(crate) fn proof_page(&self, after: u64, limit: usize) -> Result<Vec<Link>> {
        self.before_proofs()?;
        let mut st = self
            .conn
            .prepare_cached(&format!("{SELECT_LINKS} WHERE seq > ?1 ORDER BY seq LIMIT ?2"))
            .map_err(|e| self.err(e))?;
        let rows = st.query_map(params![after as i64, limit as i64], link_of);
        rows.and_then(|r| r.collect()).map_err(|e| self.err(e))
    }

    /// The last entry, if any.
    pub(crate) fn last_proof(&self) -> Result<Option<Entry>> {
        self.before_proofs()?;
        self.conn
            .query_row(&format!("{SELECT_LINKS} ORDER BY seq DESC LIMIT 1"), [], link_of)
            .optional()
            .map(|l| l.map(|l| l.entry))
            .map_err(|e| self.err(e))
    }

    /// Refuses a catalog older than the chain (read where it is, not migrated).
    fn before_proofs(&self) -> Result<()> {
        if self.version < SINCE {
            return Err(CatalogError::BeforeProofs(self.path.display().to_string()));
        }
        Ok(())
    }
}
