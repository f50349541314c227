//! The PostgreSQL catalog's part of remote comparisons (schema 4): further digests of a
//! tree's files (`fixity.digests`) and each comparison's outcome (`fixity.remote_checks`).

use super::db::Db;
use super::error::PgError;
use crate::catalog::{Extra, RemoteCheck};

impl Db {
    /// The further digests kept for `rel`.
    pub(super) fn extras(&mut self, rel: &[u8]) -> Result<Vec<Extra>, PgError> {
        let rows = self.query(
            "SELECT algo, digest, size, mtime_ns FROM fixity.digests WHERE tree = $1 AND path = $2",
            &[&rel],
        )?;
        Ok(rows
            .iter()
            .map(|r| Extra {
                algo: r.get(0),
                digest: r.get(1),
                size: r.get::<_, i64>(2) as u64,
                mtime_ns: r.get(3),
            })
            .collect())
    }

    /// Keeps `extras` for `rel`, each replacing its algorithm's.
    pub(super) fn keep_extras(&mut self, rel: &[u8], extras: &[Extra]) -> Result<(), PgError> {
        for x in extras {
            self.execute(
                "INSERT INTO fixity.digests (tree, path, algo, digest, size, mtime_ns)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (tree, path, algo) DO UPDATE
                 SET digest = EXCLUDED.digest, size = EXCLUDED.size, mtime_ns = EXCLUDED.mtime_ns",
                &[&rel, &x.algo, &x.digest, &(x.size as i64), &x.mtime_ns],
            )?;
        }
        Ok(())
    }

    /// Records one comparison with a remote copy.
    pub(super) fn remote_check(&mut self, c: &RemoteCheck) -> Result<(), PgError> {
        self.execute(
            "INSERT INTO fixity.remote_checks (tree, remote, started, finished, complete, summary)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[&c.remote, &c.started, &c.finished, &c.complete, &c.summary],
        )?;
        Ok(())
    }

    /// The latest comparison with each remote, newest first.
    pub(super) fn remote_checks(&mut self) -> Result<Vec<RemoteCheck>, PgError> {
        let rows = self.query(
            "SELECT remote, started, finished, complete, summary FROM fixity.remote_checks
             WHERE id IN (SELECT max(id) FROM fixity.remote_checks WHERE tree = $1 GROUP BY remote)
             ORDER BY id DESC",
            &[],
        )?;
        Ok(rows
            .iter()
            .map(|r| RemoteCheck {
                remote: r.get(0),
                started: r.get(1),
                finished: r.get(2),
                complete: r.get(3),
                summary: r.get(4),
            })
            .collect())
    }
}
