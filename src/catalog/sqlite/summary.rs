//! What `fixity status` shows from the SQLite catalog: counts, the oldest verification,
//! standing findings, the last runs and the pass under way.

use super::{Catalog, PASS_COMPLETED_KEY, PASS_KEY, Result, run_of};
use crate::catalog::error::CatalogError;
use crate::catalog::store::{PassState, PassUnderWay, Summary};

impl Catalog {
    /// What `fixity status` shows.
    pub(crate) fn summary(&self, now: i64) -> Result<Summary> {
        let e = |e| self.err(e);
        let c = &self.conn;
        let (files, bytes) = self.present()?;
        let missing: i64 = c
            .query_row("SELECT count(*) FROM files WHERE missing_since IS NOT NULL", [], |r| {
                r.get(0)
            })
            .map_err(e)?;
        let mut st = c
            .prepare(
                "SELECT last_result, count(*) FROM files WHERE missing_since IS NULL
                 GROUP BY last_result ORDER BY last_result",
            )
            .map_err(e)?;
        let by_result = st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))
            .map_err(e)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(e)?;
        // One pass over the table (there is no index by verification time): the least
        // recently verified file (of those with the oldest time, the first in path order,
        // the table's), how many were verified within 1, 7 and 30 days, and how many
        // imported digests no verification has confirmed yet.
        let day = |n: i64| now - n * 86_400_000;
        let (oldest_verified, within, imported) = c
            .query_row(
                "SELECT min(last_verified), path,
                        count(*) FILTER (WHERE last_verified >= ?1),
                        count(*) FILTER (WHERE last_verified >= ?2),
                        count(*) FILTER (WHERE last_verified >= ?3),
                        count(*) FILTER (WHERE imported IS NOT NULL)
                 FROM files WHERE missing_since IS NULL",
                [day(1), day(7), day(30)],
                |r| {
                    let oldest = match r.get::<_, Option<i64>>(0)? {
                        Some(t) => Some((r.get(1)?, t)),
                        None => None,
                    };
                    let n = |i| r.get::<_, i64>(i).map(|n| n as u64);
                    Ok((oldest, [n(2)?, n(3)?, n(4)?], n(5)?))
                },
            )
            .map_err(e)?;
        let verified_within = [(1u32, within[0]), (7, within[1]), (30, within[2])];
        let mut st = c
            .prepare(
                "SELECT path, last_result FROM files
                 WHERE (last_result IN ('corrupt', 'unreadable', 'changed') AND missing_since IS NULL)
                    OR missing_since IS NOT NULL
                 ORDER BY path LIMIT 100",
            )
            .map_err(e)?;
        let problems = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(e)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(e)?;
        let mut st = c
            .prepare(
                "SELECT command, started, finished, complete, summary FROM runs
                 ORDER BY id DESC LIMIT 5",
            )
            .map_err(e)?;
        let runs = st
            .query_map([], run_of)
            .map_err(e)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(e)?;
        Ok(Summary {
            files,
            bytes,
            missing: missing as u64,
            by_result,
            oldest_verified,
            verified_within,
            imported,
            problems,
            runs,
            pass: self.pass_state()?,
        })
    }

    /// Where the verification pass stands.
    fn pass_state(&self) -> Result<PassState> {
        let time = |key| Ok::<_, CatalogError>(self.meta(key)?.and_then(|v| v.parse::<i64>().ok()));
        let under_way = match time(PASS_KEY)? {
            Some(since) => {
                let (files_left, bytes_left) = self.stale_count(since)?;
                Some(PassUnderWay { since, files_left, bytes_left })
            }
            None => None,
        };
        Ok(PassState { under_way, last_completed: time(PASS_COMPLETED_KEY)? })
    }
}
