//! The SQLite catalog's part of remote comparisons (schema 4): further digests of files
//! (`digests`) and each comparison's outcome (`remote_checks`).

use super::{Catalog, Result, Writer};
use crate::catalog::{Extra, RemoteCheck};
use rusqlite::{OptionalExtension, params};

impl Catalog {
    /// The further digests kept for `rel`.
    pub(crate) fn extras(&self, rel: &[u8]) -> Result<Vec<Extra>> {
        if !self.has_table("digests")? {
            return Ok(Vec::new());
        }
        let run = || {
            let mut st = self.conn.prepare_cached(
                "SELECT algo, digest, size, mtime_ns FROM digests WHERE path = ?1",
            )?;
            let rows = st.query_map(params![rel], |r| {
                Ok(Extra {
                    algo: r.get(0)?,
                    digest: r.get(1)?,
                    size: r.get::<_, i64>(2)? as u64,
                    mtime_ns: r.get(3)?,
                })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        };
        run().map_err(|e| self.err(e))
    }

    /// The latest comparison with each remote, newest first (none in a catalog of an older
    /// schema read where it is not migrated).
    pub(crate) fn remote_checks(&self) -> Result<Vec<RemoteCheck>> {
        if !self.has_table("remote_checks")? {
            return Ok(Vec::new());
        }
        let run = || {
            let mut st = self.conn.prepare_cached(
                "SELECT remote, started, finished, complete, summary FROM remote_checks
                 WHERE id IN (SELECT max(id) FROM remote_checks GROUP BY remote)
                 ORDER BY id DESC",
            )?;
            let rows = st.query_map([], |r| {
                Ok(RemoteCheck {
                    remote: r.get(0)?,
                    started: r.get(1)?,
                    finished: r.get(2)?,
                    complete: r.get(3)?,
                    summary: r.get(4)?,
                })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        };
        run().map_err(|e| self.err(e))
    }

    fn has_table(&self, name: &str) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                params![name],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(|e| self.err(e))
    }
}

impl Writer<'_> {
    /// Keeps `extras` for `rel` in the open batch, each replacing its algorithm's.
    pub(crate) fn keep_extras(&mut self, rel: &[u8], extras: &[Extra]) -> Result<()> {
        for x in extras {
            self.exec(
                "INSERT OR REPLACE INTO digests (path, algo, digest, size, mtime_ns)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![rel, x.algo, x.digest, x.size as i64, x.mtime_ns],
            )?;
        }
        Ok(())
    }

    /// Records one comparison with a remote copy, in the open batch.
    pub(crate) fn remote_check(&mut self, c: &RemoteCheck) -> Result<()> {
        self.exec(
            "INSERT INTO remote_checks (remote, started, finished, complete, summary)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![c.remote, c.started, c.finished, c.complete, c.summary],
        )?;
        Ok(())
    }
}
