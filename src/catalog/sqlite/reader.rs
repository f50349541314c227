//! Reading the catalog in pages on a connection of its own, while another writes.

use super::{ROW_COLUMNS, Row, row_of, run_of};
use crate::catalog::Class;
use crate::catalog::store::{History, RunInfo};
use crate::digest::Digest;
use rusqlite::{Connection, params};

/// The condition for rows after `?1`, a path or NULL (from the start). Spelled apart for
/// the two cases: SQLite plans `?1 IS NULL OR path > ?1` as a scan of the whole table,
/// so every page of a paged read would read the catalog from its start (a million-file
/// re-scan made 6.8 page reads per file).
pub(super) fn after_clause(after: Option<&[u8]>) -> &'static str {
    if after.is_some() { "path > ?1" } else { "?1 IS NULL" }
}

/// The condition for the rows at `?2` or below it, `?1` and `?3` being its bounds from
/// [`below`] (all rows for an empty path, when both are NULL). Spelled apart for the two
/// cases, as [`after_clause`]: with an `?1 IS NULL OR` before it, SQLite would
/// scan the whole table instead of searching the range.
pub(super) fn under_clause(rel: &[u8]) -> &'static str {
    if rel.is_empty() {
        "?1 IS NULL AND ?3 IS NULL"
    } else {
        "(path = ?2 OR (path > ?1 AND path < ?3))"
    }
}

/// A read-only connection used to stream rows in order while another connection writes.
pub struct Reader {
    pub(super) conn: Connection,
}

impl Reader {
    /// Up to `limit` rows (present or missing) with paths after `after` (or from it, when
    /// `inclusive`), in byte order of their paths: the order a sorted walk of the tree
    /// visits them.
    pub fn by_path(
        &self,
        after: Option<&[u8]>,
        inclusive: bool,
        limit: usize,
    ) -> rusqlite::Result<Vec<Row>> {
        let from = match (after, inclusive) {
            (None, _) => "?1 IS NULL",
            (Some(_), true) => "path >= ?1",
            (Some(_), false) => "path > ?1",
        };
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {ROW_COLUMNS} FROM files WHERE {from} ORDER BY path LIMIT ?2"
        ))?;
        let rows = st.query_map(params![after, limit as i64], row_of)?;
        rows.collect()
    }

    /// Up to `limit` present rows not looked at since `pass_start` (the start of the
    /// current verification pass), in path order, after the path `after` (from the start
    /// with `None`) and not after `upto` (to the end with `None`): the table read in its
    /// own order from where the last page ended.
    pub(crate) fn stale(
        &self,
        pass_start: i64,
        (after, upto): (Option<&[u8]>, Option<&[u8]>),
        limit: usize,
    ) -> rusqlite::Result<Vec<Row>> {
        let upto_clause = if upto.is_some() { "path <= ?4" } else { "?4 IS NULL" };
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {ROW_COLUMNS} FROM files
             WHERE {} AND {upto_clause} AND missing_since IS NULL AND last_checked < ?2
             ORDER BY path LIMIT ?3",
            after_clause(after)
        ))?;
        let rows = st.query_map(params![after, pass_start, limit as i64, upto], row_of)?;
        rows.collect()
    }

    /// Up to `limit` rows recorded as missing with paths after `after`, in path order.
    pub(crate) fn missing(&self, after: Option<&[u8]>, limit: usize) -> rusqlite::Result<Vec<Row>> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT {ROW_COLUMNS} FROM files WHERE missing_since IS NOT NULL
               AND {} ORDER BY path LIMIT ?2",
            after_clause(after)
        ))?;
        let rows = st.query_map(params![after, limit as i64], row_of)?;
        rows.collect()
    }

    /// Up to `limit` (path, missing) pairs after `after`, in path order: the whole
    /// catalog's shape, without the rest of each row.
    pub(crate) fn presence(
        &self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> rusqlite::Result<Vec<(Vec<u8>, bool)>> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT path, missing_since IS NOT NULL FROM files
             WHERE {} ORDER BY path LIMIT ?2",
            after_clause(after)
        ))?;
        let rows = st.query_map(params![after, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect()
    }

    /// Up to `limit` records with their history after `after`, in path order: all, or
    /// (`standing`) only the standing findings. A catalog of schema 1 (read without
    /// migrating it) has no history columns: they read as unknown.
    pub(crate) fn history(
        &self,
        after: Option<&[u8]>,
        limit: usize,
        standing: bool,
        kept: bool,
    ) -> rusqlite::Result<Vec<History>> {
        let extra = if kept { "finding_since, found_digest" } else { "NULL, NULL" };
        // The standing findings are read through the partial index of the rows that are
        // neither ok nor new (a missing file's result is `missing`): a few rows sorted, where
        // the table in path order is a million rows read to find them (0.2-1 ms against
        // 130-190 ms a page at a million files). `+path` keeps SQLite off the key's order.
        let (filter, key) = if standing {
            (
                "AND last_result NOT IN ('ok', 'new')
                 AND (missing_since IS NOT NULL OR last_result IN ('corrupt', 'unreadable', 'changed'))",
                "+path",
            )
        } else {
            ("", "path")
        };
        let from = if after.is_some() { format!("{key} > ?1") } else { "?1 IS NULL".into() };
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT path, size, digest, first_seen, last_verified, last_checked, last_result,
                    missing_since, {extra}, note, moved_from
             FROM files WHERE {from} {filter} ORDER BY {key} LIMIT ?2"
        ))?;
        let rows = st.query_map(params![after, limit as i64], |r| {
            let result: String = r.get(6)?;
            let found: Option<Vec<u8>> = r.get(9)?;
            Ok(History {
                path: r.get(0)?,
                size: r.get::<_, i64>(1)? as u64,
                digest: Digest::new(&r.get::<_, Vec<u8>>(2)?),
                first_seen: r.get(3)?,
                last_verified: r.get(4)?,
                last_checked: r.get(5)?,
                last_result: Class::from_name(&result).unwrap_or(Class::Ok),
                missing_since: r.get(7)?,
                finding_since: r.get(8)?,
                found_digest: found.map(|d| Digest::new(&d)),
                note: r.get(10)?,
                moved_from: r.get(11)?,
            })
        })?;
        rows.collect()
    }

    /// The last `limit` runs, oldest first.
    pub(crate) fn runs(&self, limit: usize) -> rusqlite::Result<Vec<RunInfo>> {
        let mut st = self.conn.prepare_cached(
            "SELECT command, started, finished, complete, summary FROM
               (SELECT * FROM runs ORDER BY id DESC LIMIT ?1) ORDER BY id",
        )?;
        let rows = st.query_map([limit as i64], run_of)?;
        rows.collect()
    }
}
