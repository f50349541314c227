//! What `fixity report` and `export --format premis` read from PostgreSQL: each file's
//! record with its history, and the runs over time.

use super::PgError;
use super::db::Db;
use crate::catalog::Class;
use crate::catalog::store::{History, RunInfo};
use crate::digest::Digest;

/// The statement of a page of histories: `$2` the path they follow, `$3` the limit;
/// `$extra` the history columns (or NULLs, for a schema that has none), `$filter` which
/// records.
macro_rules! history_sql {
    ($extra:literal, $filter:literal) => {
        concat!(
            "SELECT path, size, digest, first_seen, last_verified, last_checked, last_result,
                    missing_since, ",
            $extra,
            ", note, moved_from FROM fixity.files WHERE tree = $1 AND path > $2 ",
            $filter,
            " ORDER BY path LIMIT $3"
        )
    };
}

impl Db {
    /// Up to `limit` records with their history after `after`, in path order: all, or
    /// (`standing`) the standing findings only; `kept`: the schema has the history
    /// columns (version 2 on).
    pub(super) fn history(
        &mut self,
        after: Option<&[u8]>,
        limit: usize,
        standing: bool,
        kept: bool,
    ) -> Result<Vec<History>, PgError> {
        let sql = match (standing, kept) {
            (false, true) => history_sql!("finding_since, found_digest", ""),
            (false, false) => history_sql!("NULL::bigint, NULL::bytea", ""),
            (true, true) => history_sql!(
                "finding_since, found_digest",
                "AND (missing_since IS NOT NULL OR last_result IN ('corrupt', 'unreadable', 'changed'))"
            ),
            (true, false) => history_sql!(
                "NULL::bigint, NULL::bytea",
                "AND (missing_since IS NOT NULL OR last_result IN ('corrupt', 'unreadable', 'changed'))"
            ),
        };
        let after = after.unwrap_or(b"");
        let rows = self.query(sql, &[&after, &(limit as i64)])?;
        Ok(rows
            .iter()
            .map(|r| History {
                path: r.get(0),
                size: r.get::<_, i64>(1) as u64,
                digest: Digest::new(r.get::<_, &[u8]>(2)),
                first_seen: r.get(3),
                last_verified: r.get(4),
                last_checked: r.get(5),
                last_result: Class::from_name(r.get(6)).unwrap_or(Class::Ok),
                missing_since: r.get(7),
                finding_since: r.get(8),
                found_digest: r.get::<_, Option<&[u8]>>(9).map(Digest::new),
                note: r.get(10),
                moved_from: r.get(11),
            })
            .collect())
    }

    /// The tree's last `limit` runs, oldest first.
    pub(super) fn runs(&mut self, limit: usize) -> Result<Vec<RunInfo>, PgError> {
        let rows = self.query(
            "SELECT command, started, finished, complete, summary FROM
               (SELECT * FROM fixity.runs WHERE tree = $1 ORDER BY id DESC LIMIT $2) r
             ORDER BY id",
            &[&(limit as i64)],
        )?;
        Ok(rows.iter().map(super::summary::run_of).collect())
    }
}
