//! The PostgreSQL catalog's chain of proofs (see [`crate::proof`]): one row of
//! `fixity.proofs` per run that finished, keyed by (tree, seq), appended in the
//! transaction that records the run's end, after the run's writes are committed.

use super::PgError;
use super::db::Db;
use crate::catalog::proofs::leaf;
use crate::proof::{Entry, Hash, Identity, Link, RootHasher, hash_of};
use postgres::types::Type;

/// The advisory-lock class (first key) that orders the entries of one tree (second key):
/// the parts of a plan share the run lock and finish each on their own.
const PROOF_LOCK: i32 = 0x6669_7802;

/// Records per page of the chain's root (read in the entry's transaction).
const ROOT_PAGE: usize = 32768;

/// The entry (with whether its run is kept) of a row of `SELECT_LINKS`.
fn link_of(r: &postgres::Row) -> Link {
    let hash = |i| -> Hash { hash_of(r.get::<_, &[u8]>(i)) };
    let entry = Entry {
        seq: r.get::<_, i64>(0) as u64,
        run: r.get(1),
        at: r.get(2),
        files: r.get::<_, i64>(3) as u64,
        root: hash(4),
        prev: hash(5),
        head: hash(6),
    };
    Link { entry, run_kept: r.get(7) }
}

macro_rules! select_links {
    ($rest:literal) => {
        concat!(
            "SELECT p.seq, p.run, p.at, p.files, p.root, p.prev, p.head,
                    EXISTS (SELECT 1 FROM fixity.runs r WHERE r.tree = p.tree AND r.id = p.run)
             FROM fixity.proofs p WHERE p.tree = $1 ",
            $rest
        )
    };
}

impl Db {
    /// Records the end of run `id` and appends its entry to the tree's chain, in one
    /// transaction: the root is read in it, under a lock that orders the entries of the
    /// tree. The run's own writes must be committed first.
    pub(super) fn finish_proved(
        &mut self,
        id: i64,
        (complete, summary): (bool, &str),
        ident: &Identity,
    ) -> Result<(), PgError> {
        // Begun and locked in one round trip (two numbers in the text: nothing to quote).
        let begin = format!("BEGIN; SELECT pg_advisory_xact_lock({PROOF_LOCK}, {})", self.tree);
        if let Err(e) = self.client.batch_execute(&begin) {
            let _ = self.client.batch_execute("ROLLBACK");
            return Err(self.err(e));
        }
        let done = (|| {
            // Statements sent once per run: typed, one round trip each.
            let at = crate::clock::now_ms();
            self.once(
                "UPDATE fixity.runs SET finished = $2, complete = $3, summary = $4
                 WHERE tree = $1 AND id = $5",
                &[
                    (&at, Type::INT8),
                    (&complete, Type::BOOL),
                    (&summary, Type::TEXT),
                    (&id, Type::INT8),
                ],
            )?;
            let root = self.state_root()?;
            let last = self.once(select_links!("ORDER BY p.seq DESC LIMIT 1"), &[])?;
            let last = last.first().map(|r| link_of(r).entry);
            let e = Entry::next(ident, last.as_ref(), id, at, root);
            let (seq, files) = (e.seq as i64, e.files as i64);
            let (root, prev, head) = (&e.root[..], &e.prev[..], &e.head[..]);
            self.once(
                "INSERT INTO fixity.proofs (tree, seq, run, at, files, root, prev, head)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    (&seq, Type::INT8),
                    (&id, Type::INT8),
                    (&at, Type::INT8),
                    (&files, Type::INT8),
                    (&root, Type::BYTEA),
                    (&prev, Type::BYTEA),
                    (&head, Type::BYTEA),
                ],
            )?;
            Ok(())
        })();
        match done {
            Ok(()) => self.client.batch_execute("COMMIT").map_err(|e| self.err(e)),
            Err(e) => {
                let _ = self.client.batch_execute("ROLLBACK");
                Err(e)
            }
        }
    }

    /// The root of every record of the tree, read in pages by path: large ones (a round
    /// trip each; 32Ki records, some 10 MB, at most at once).
    fn state_root(&mut self) -> Result<(Hash, u64), PgError> {
        let mut root = RootHasher::new(self.algo.name);
        let mut after: Option<Vec<u8>> = None;
        loop {
            let n = ROOT_PAGE;
            let page = self.by_path(after.as_deref(), false, n)?;
            for r in &page {
                root.add(&leaf(r));
            }
            // A page shorter than asked is the last.
            let last = page.len() < n;
            match page.into_iter().last() {
                Some(r) if !last => after = Some(r.path),
                _ => return Ok(root.finish()),
            }
        }
    }

    /// Up to `limit` entries numbered after `after`, in order.
    pub(super) fn proof_page(&mut self, after: u64, limit: usize) -> Result<Vec<Link>, PgError> {
        let rows = self.query(
            select_links!("AND p.seq > $2 ORDER BY p.seq LIMIT $3"),
            &[&(after as i64), &(limit as i64)],
        )?;
        Ok(rows.iter().map(link_of).collect())
    }

    /// The last entry, if any.
    pub(super) fn last_proof(&mut self) -> Result<Option<Entry>, PgError> {
        let rows = self.query(select_links!("ORDER BY p.seq DESC LIMIT 1"), &[])?;
        Ok(rows.first().map(|r| link_of(r).entry))
    }
}
