//! Where a missing file may have moved to: files recorded as new since it went missing,
//! with its size and digest.

use super::{Catalog, ROW_COLUMNS, Result, Row, row_of};
use rusqlite::params;

impl Catalog {
    /// Present files recorded as new since `since` (ms) with this size and digest: where
    /// a missing file may have moved to.
    pub(crate) fn move_candidates(&self, size: u64, digest: &[u8], since: i64) -> Result<Vec<Row>> {
        self.digest_index()?;
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT {ROW_COLUMNS} FROM files WHERE digest = ?1 AND size = ?2
                 AND missing_since IS NULL AND last_result = 'new' AND first_seen >= ?3
                 ORDER BY path"
            ))
            .map_err(|e| self.err(e))?;
        let rows =
            st.query_map(params![digest, size as i64, since], row_of).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.err(e))
    }

    /// Whether any present file recorded as new is no older than the oldest missing file's
    /// loss: without one, no missing file can be found moved.
    pub(crate) fn new_since_a_loss(&self) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM files WHERE last_result = 'new'
                   AND missing_since IS NULL
                   AND first_seen >= (SELECT min(missing_since) FROM files))",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }
}
