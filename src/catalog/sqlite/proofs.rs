//! The SQLite catalog's chain of proofs (see [`crate::proof`]): one row per run that
//! finished, appended in the transaction that records the run's end, after the run's
//! changes are committed, so the entry's root is of exactly what the run left.

use super::reader::after_clause;
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

/// Rows of the state root each connection reads in turn (see [`Catalog::state_root`]).
const CHUNK: i64 = if cfg!(test) { 3 } else { 32_768 };

/// One chunk as the second connection sends it: the records encoded, how many, the last
/// one's path.
type Encoded = rusqlite::Result<(Vec<u8>, i64, Option<Vec<u8>>)>;

/// Reads up to `limit` records after `after` (from the start with `None`) in path order,
/// each to `each` as the root commits to it; how many, and the last one's path.
fn read_chunk(
    conn: &rusqlite::Connection,
    after: Option<&[u8]>,
    limit: i64,
    mut each: impl FnMut(&Leaf<'_>),
) -> rusqlite::Result<(i64, Option<Vec<u8>>)> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT path, size, mtime_ns, digest, last_result, missing_since IS NOT NULL
         FROM files WHERE {} ORDER BY path LIMIT ?2",
        after_clause(after)
    ))?;
    let mut rows = st.query(params![after, limit])?;
    let (mut n, mut last) = (0, None);
    while let Some(r) = rows.next()? {
        let result = Class::from_name(r.get_ref(4)?.as_str()?).unwrap_or(Class::Ok);
        let path = bytes(r.get_ref(0)?, 0)?;
        each(&Leaf {
            path,
            size: r.get::<_, i64>(1)? as u64,
            mtime_ns: r.get(2)?,
            digest: bytes(r.get_ref(3)?, 3)?,
            standing: standing(result, r.get(5)?),
        });
        n += 1;
        if n == limit {
            last = Some(path.to_vec());
        }
    }
    Ok((n, last))
}

/// The second connection's part of the state root: chunks 1, 3, 5 ... (stepping over
/// the ones between, which the first reads), encoded, sent in order. Ends after a short
/// chunk, at the end of the table, or when the first stops taking them.
fn odd_chunks(conn: &rusqlite::Connection, tx: &crossbeam_channel::Sender<Encoded>) {
    let mut after: Option<Vec<u8>> = None;
    loop {
        // The last path of the chunk before, which the other connection reads.
        let skipped = conn
            .query_row(
                &format!(
                    "SELECT path FROM files WHERE {} ORDER BY path LIMIT 1 OFFSET ?2",
                    after_clause(after.as_deref())
                ),
                params![after, CHUNK - 1],
                |r| r.get::<_, Vec<u8>>(0),
            )
            .optional();
        let from = match skipped {
            Ok(Some(p)) => p,
            Ok(None) => {
                let _ = tx.send(Ok((Vec::new(), 0, None)));
                return;
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        let mut bytes = Vec::new();
        let got = read_chunk(conn, Some(&from), CHUNK, |leaf| leaf.encode(&mut bytes));
        let (n, last) = match got {
            Ok(got) => got,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        if tx.send(Ok((bytes, n, last.clone()))).is_err() || n < CHUNK {
            return;
        }
        after = last;
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

    /// The root of every record, in path order: only the columns the root commits to,
    /// borrowed from the row (no copy per record). Read inside the caller's transaction,
    /// which holds the write lock: a large catalog is read by two connections at once,
    /// this one and a reader's (whose snapshot is the same: nothing else can commit), in
    /// chunks of [`CHUNK`] rows taken in turn; the reader encodes its chunks and this
    /// thread hashes everything in order, so memory stays at two chunks.
    fn state_root(&self) -> rusqlite::Result<(Hash, u64)> {
        let mut root = RootHasher::new(self.algo.name);
        let rows: i64 = self.conn.query_row("SELECT count(*) FROM files", [], |r| r.get(0))?;
        let helper = match rows > 2 * CHUNK {
            true => self.reader().ok(),
            false => None,
        };
        let Some(helper) = helper else {
            read_chunk(&self.conn, None, i64::MAX, |leaf| root.add(leaf))?;
            return Ok(root.finish());
        };
        std::thread::scope(|scope| {
            // Made here, so an early return drops the receiving end before the scope
            // joins the reader (which then stops at its next send).
            let (tx, rx) = crossbeam_channel::bounded(1);
            scope.spawn(move || odd_chunks(&helper.conn, &tx));
            let mut after: Option<Vec<u8>> = None;
            loop {
                let (n, _) = read_chunk(&self.conn, after.as_deref(), CHUNK, |l| root.add(l))?;
                if n < CHUNK {
                    break;
                }
                // The next chunk, read meanwhile by the other connection.
                let Ok(next) = rx.recv() else { break };
                let (bytes, n, last) = next?;
                root.add_encoded(&bytes, n as u64);
                if n < CHUNK {
                    break;
                }
                after = last;
            }
            Ok(root.finish())
        })
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
