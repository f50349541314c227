//! What `fixity status` shows from PostgreSQL: one tree's summary (as the SQLite
//! catalog's), and the fleet: every tree of every host (or of one), grouped by host.

use super::db::Db;
use super::{PgError, Target, roles, schema};
use crate::catalog::store::{PassState, PassUnderWay, RunInfo, Summary};

impl Db {
    /// One tree's summary at `now`.
    pub(super) fn summary(&mut self, now: i64) -> Result<Summary, PgError> {
        let r = self.one(
            "SELECT count(*) FILTER (WHERE missing_since IS NULL),
                    coalesce(sum(size) FILTER (WHERE missing_since IS NULL), 0)::bigint,
                    count(*) FILTER (WHERE missing_since IS NOT NULL),
                    count(*) FILTER (WHERE missing_since IS NULL AND last_verified >= $2),
                    count(*) FILTER (WHERE missing_since IS NULL AND last_verified >= $3),
                    count(*) FILTER (WHERE missing_since IS NULL AND last_verified >= $4),
                    count(*) FILTER (WHERE missing_since IS NULL AND imported IS NOT NULL)
             FROM fixity.files WHERE tree = $1",
            &[&(now - 86_400_000), &(now - 7 * 86_400_000), &(now - 30 * 86_400_000)],
        )?;
        let n = |i: usize| r.get::<_, i64>(i) as u64;
        let verified_within = [(1, n(3)), (7, n(4)), (30, n(5))];
        let by_result = self
            .query(
                "SELECT last_result, count(*) FROM fixity.files
                 WHERE tree = $1 AND missing_since IS NULL
                 GROUP BY last_result ORDER BY last_result",
                &[],
            )?
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64))
            .collect();
        let oldest_verified = self
            .query(
                "SELECT path, last_verified FROM fixity.files
                 WHERE tree = $1 AND missing_since IS NULL
                 ORDER BY last_verified, path LIMIT 1",
                &[],
            )?
            .first()
            .map(|r| (r.get(0), r.get(1)));
        let problems = self
            .query(
                "SELECT path, last_result FROM fixity.files
                 WHERE tree = $1 AND ((last_result IN ('corrupt', 'unreadable', 'changed')
                        AND missing_since IS NULL) OR missing_since IS NOT NULL)
                 ORDER BY path LIMIT 100",
                &[],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let runs = self
            .query(
                "SELECT command, started, finished, complete, summary FROM fixity.runs
                 WHERE tree = $1 ORDER BY id DESC LIMIT 5",
                &[],
            )?
            .iter()
            .map(run_of)
            .collect();
        Ok(Summary {
            files: n(0),
            bytes: n(1),
            missing: n(2),
            by_result,
            oldest_verified,
            verified_within,
            imported: n(6),
            problems,
            runs,
            pass: self.pass_state()?,
        })
    }

    /// (pass under way since, last pass completed), ms.
    pub(super) fn pass_times(&mut self) -> Result<(Option<i64>, Option<i64>), PgError> {
        let r = self
            .one("SELECT pass_started, last_pass_completed FROM fixity.trees WHERE id = $1", &[])?;
        Ok((r.get(0), r.get(1)))
    }

    /// Where the last slice of the pass under way stopped (schema 7 on).
    pub(super) fn pass_after(&mut self) -> Result<Option<Vec<u8>>, PgError> {
        Ok(self.one("SELECT pass_after FROM fixity.trees WHERE id = $1", &[])?.get(0))
    }

    fn pass_state(&mut self) -> Result<PassState, PgError> {
        let (started, completed) = self.pass_times()?;
        let under_way = match started {
            Some(since) => {
                let (files_left, bytes_left) = self.stale_count(since)?;
                Some(PassUnderWay { since, files_left, bytes_left })
            }
            None => None,
        };
        Ok(PassState { under_way, last_completed: completed })
    }
}

/// One tree in the fleet view.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TreeState {
    /// The host the tree is on.
    pub host: String,
    /// The tree's root (absolute; raw bytes).
    #[serde(skip)]
    pub root: Vec<u8>,
    /// The algorithm of its digests.
    pub algorithm: String,
    /// Files present, and their total size.
    pub files: u64,
    pub bytes: u64,
    /// Standing findings: present files whose last result is corrupt or unreadable, and
    /// missing files.
    pub corrupt: u64,
    pub unreadable: u64,
    pub missing: u64,
    /// Present files whose imported digest no verification has confirmed yet.
    pub imported: u64,
    /// When the last complete verification pass ended (ms).
    pub last_complete_pass: Option<i64>,
    /// The last run.
    pub last_run: Option<RunInfo>,
}

/// The roots of `host`'s trees in the catalog at `url` (absolute; raw bytes): where a
/// directory inside one of them finds its tree (see `catalog::locate::among`).
pub fn tree_roots(url: &str, host: &str) -> Result<Vec<Vec<u8>>, PgError> {
    let t = Target::new(url)?;
    let mut client = t.connect()?;
    let Some(version) = schema::version(&mut client, &t)? else {
        return Ok(Vec::new());
    };
    schema::check_version(version, &t)?;
    let rows = client
        .query_typed(
            "SELECT root FROM fixity.trees WHERE host = $1",
            &[(&host, postgres::types::Type::TEXT)],
        )
        .map_err(|e| t.query_error(&e))?;
    super::connect::keep_spare(url, client, version);
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Every tree in the catalog at `url` (only `host`'s, if given), by host and root: every
/// tree the connected role may read (a host's role of `fixity catalog init-roles` reads
/// its own hosts' trees, and is refused another host's by name).
pub fn fleet(url: &str, host: Option<&str>) -> Result<Vec<TreeState>, PgError> {
    let t = Target::new(url)?;
    let mut client = t.connect()?;
    let Some(version) = schema::version(&mut client, &t)? else {
        return Ok(Vec::new());
    };
    schema::check_version(version, &t)?;
    if let Some(host) = host {
        roles::check_host(&mut client, &t, host)?;
    }
    // Before schema 3 (not migrated by a read) there are no imported digests.
    let imported = match version {
        v if v < 3 => "0::bigint",
        _ => "count(*) FILTER (WHERE missing_since IS NULL AND imported IS NOT NULL)",
    };
    let sql = FLEET.replace("IMPORTED", imported);
    let rows = client.query(&sql, &[&host]).map_err(|e| t.query_error(&e))?;
    Ok(rows
        .iter()
        .map(|r| {
            let n = |i: usize| r.get::<_, i64>(i) as u64;
            let last_run = r.get::<_, Option<String>>(9).map(|command| RunInfo {
                command,
                started: r.get(10),
                finished: r.get(11),
                complete: r.get(12),
                summary: r.get(13),
            });
            TreeState {
                host: r.get(0),
                root: r.get(1),
                algorithm: r.get(2),
                last_complete_pass: r.get(3),
                files: n(4),
                bytes: n(5),
                corrupt: n(6),
                unreadable: n(7),
                missing: n(8),
                imported: n(14),
                last_run,
            }
        })
        .collect())
}

/// The fleet view's query (`IMPORTED`: the count of imported-unverified files).
const FLEET: &str = "SELECT t.host, t.root, t.algorithm, t.last_pass_completed,
                    coalesce(f.files, 0), coalesce(f.bytes, 0), coalesce(f.corrupt, 0),
                    coalesce(f.unreadable, 0), coalesce(f.missing, 0),
                    r.command, r.started, r.finished, r.complete, r.summary,
                    coalesce(f.imported, 0)
             FROM fixity.trees t
             LEFT JOIN LATERAL (
                 SELECT count(*) FILTER (WHERE missing_since IS NULL) AS files,
                        coalesce(sum(size) FILTER (WHERE missing_since IS NULL), 0)::bigint
                            AS bytes,
                        count(*) FILTER (WHERE missing_since IS NULL
                            AND last_result = 'corrupt') AS corrupt,
                        count(*) FILTER (WHERE missing_since IS NULL
                            AND last_result = 'unreadable') AS unreadable,
                        count(*) FILTER (WHERE missing_since IS NOT NULL) AS missing,
                        IMPORTED AS imported
                 FROM fixity.files WHERE tree = t.id) f ON true
             LEFT JOIN LATERAL (
                 SELECT command, started, finished, complete, summary FROM fixity.runs
                 WHERE tree = t.id ORDER BY id DESC LIMIT 1) r ON true
             WHERE $1::text IS NULL OR t.host = $1
             ORDER BY t.host, t.root";

/// A run from `SELECT command, started, finished, complete, summary FROM fixity.runs`.
pub(super) fn run_of(r: &postgres::Row) -> RunInfo {
    RunInfo {
        command: r.get(0),
        started: r.get(1),
        finished: r.get(2),
        complete: r.get(3),
        summary: r.get(4),
    }
}
