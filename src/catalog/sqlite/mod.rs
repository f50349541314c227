//! The SQLite catalog: one row per file (path as raw bytes, size, mtime, inode, digest,
//! first seen, last verified, last checked, last result, missing since), a `runs` table
//! with one row per run, and a `meta` table (algorithm, creation time). WAL journaling
//! and batched transactions: a run killed at any moment leaves the database consistent,
//! with everything up to the last committed batch, and the next run simply continues.
//!
//! The schema is versioned with `PRAGMA user_version`; `MIGRATIONS` takes any older
//! catalog forward, and a catalog from a newer fixity is refused rather than damaged.

use super::Class;
pub use super::error::CatalogError;
use super::store::{ReportFn, RunInfo};
use crate::algo::{self, Algorithm};
use crate::device::Stamp;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Schema steps, in order; step `i` takes `user_version` from `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: the first schema.
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     CREATE TABLE files (
         path BLOB PRIMARY KEY,
         size INTEGER NOT NULL,
         mtime_ns INTEGER NOT NULL,
         dev INTEGER,
         ino INTEGER,
         digest BLOB NOT NULL,
         first_seen INTEGER NOT NULL,
         last_verified INTEGER NOT NULL,
         last_checked INTEGER NOT NULL,
         last_result TEXT NOT NULL,
         missing_since INTEGER,
         moved_from BLOB,
         note TEXT
     ) WITHOUT ROWID;
     CREATE INDEX files_by_verified ON files (last_verified, path);
     CREATE INDEX files_by_digest ON files (digest);
     CREATE INDEX files_by_checked ON files (last_checked);
     CREATE TABLE runs (
         id INTEGER PRIMARY KEY,
         command TEXT NOT NULL,
         started INTEGER NOT NULL,
         finished INTEGER,
         complete INTEGER,
         summary TEXT
     );",
    // 2: a standing finding's history: when it was first found, and the digest the
    // content had when it was last found corrupt.
    "ALTER TABLE files ADD COLUMN finding_since INTEGER;
     ALTER TABLE files ADD COLUMN found_digest BLOB;",
    // 3: digests imported from other tools (`fixity import`): the tool's name while the
    // file has not been read by fixity and found matching.
    "ALTER TABLE files ADD COLUMN imported TEXT",
    // 4: remote comparisons (`verify --remote`): further digests of files, and each
    // comparison's outcome (see remote.rs).
    "CREATE TABLE digests (
         path BLOB NOT NULL,
         algo TEXT NOT NULL,
         digest BLOB NOT NULL,
         size INTEGER NOT NULL,
         mtime_ns INTEGER NOT NULL,
         PRIMARY KEY (path, algo)
     ) WITHOUT ROWID;
     CREATE TABLE remote_checks (
         id INTEGER PRIMARY KEY,
         remote TEXT NOT NULL,
         started INTEGER NOT NULL,
         finished INTEGER NOT NULL,
         complete INTEGER NOT NULL,
         summary TEXT NOT NULL
     );
     CREATE INDEX remote_checks_by_remote ON remote_checks (remote, id);",
    // 5: the chain of proofs (tamper evidence, see proofs.rs).
    proofs::SCHEMA,
    // 6: rows found ok stay out of the index by check time (it finds a run's findings).
    "DROP INDEX files_by_checked;
     CREATE INDEX files_by_checked ON files (last_checked) WHERE last_result != 'ok';",
    // 7: no index by last verification: a verification pass reads the table in path
    // order from a cursor, and a verify's update of a row moves no index entry.
    "DROP INDEX files_by_verified;",
    // 8: new rows stay out of the index of a run's findings too: a first scan's inserts
    // and the verify after it (new to ok) make no entry in it; a listing that wants the
    // new files (-v, --json) reads the table in its order.
    "DROP INDEX files_by_checked;
     CREATE INDEX files_by_checked ON files (last_checked) WHERE last_result NOT IN ('ok', 'new');",
    // 9: each file's inode change time (which tells an edit that kept its mtime from
    // bitrot) and who may read it (mode, owner, group: a file a repair rebuilds gets them
    // back). NULL in rows written before: such a row is classed by size and mtime alone
    // until a run writes it again.
    "ALTER TABLE files ADD COLUMN ctime_ns INTEGER;
     ALTER TABLE files ADD COLUMN mode INTEGER;
     ALTER TABLE files ADD COLUMN uid INTEGER;
     ALTER TABLE files ADD COLUMN gid INTEGER;",
];

/// The `meta` key holding the start of the verification pass that slices are working
/// through.
pub(crate) const PASS_KEY: &str = "pass_started";

/// The `meta` key holding the path where the last slice of the pass under way stopped
/// (bytes): the next slice goes on after it.
pub(crate) const PASS_AFTER_KEY: &str = "pass_after";

/// The `meta` key holding when the last verification pass completed.
pub(crate) const PASS_COMPLETED_KEY: &str = "last_pass_completed";

/// The schema from which a row records its file's ctime and access (see
/// [`crate::catalog::INODE_NOTE`]).
pub(crate) const INODE_SCHEMA: i64 = 9;

/// Result of catalog operations.
pub(crate) type Result<T> = std::result::Result<T, CatalogError>;

/// One file as the catalog records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Path relative to the tree's root, raw bytes.
    pub path: Vec<u8>,
    /// Size and mtime when the digest was taken.
    pub stamp: Stamp,
    /// Digest of the content (the catalog's algorithm).
    pub digest: Vec<u8>,
    /// When the file was first recorded (ms since the epoch).
    pub first_seen: i64,
    /// When its content last matched (or was hashed), ms; 0 if never.
    pub last_verified: i64,
    /// When a run last looked at it, ms.
    pub last_checked: i64,
    /// What that run found.
    pub last_result: Class,
    /// Since when it has been missing, if it is.
    pub missing_since: Option<i64>,
    /// The tool its digest was imported from, until fixity verifies it.
    pub imported: Option<String>,
    /// Its inode: (device, inode) and access; its ctime is in `stamp`.
    pub inode: Inode,
}

const ROW_COLUMNS: &str = "path, size, mtime_ns, digest, first_seen, last_verified, last_checked, last_result, missing_since, imported, ctime_ns, dev, ino, mode, uid, gid";

fn row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let result: String = r.get(7)?;
    Ok(Row {
        path: r.get(0)?,
        stamp: Stamp {
            size: r.get::<_, i64>(1)? as u64,
            mtime_ns: r.get::<_, i64>(2)? as i128,
            ctime_ns: r.get::<_, Option<i64>>(10)?.map(i128::from),
        },
        digest: r.get(3)?,
        first_seen: r.get(4)?,
        last_verified: r.get(5)?,
        last_checked: r.get(6)?,
        last_result: Class::from_name(&result).unwrap_or(Class::Ok),
        missing_since: r.get(8)?,
        imported: r.get(9)?,
        inode: {
            let (dev, ino) = (r.get::<_, Option<i64>>(11)?, r.get::<_, Option<i64>>(12)?);
            let (mode, uid, gid): (Option<i64>, Option<i64>, Option<i64>) =
                (r.get(13)?, r.get(14)?, r.get(15)?);
            Inode {
                id: dev.zip(ino).map(|(d, i)| (d as u64, i as u64)),
                access: match (mode, uid, gid) {
                    (Some(mode), Some(uid), Some(gid)) => Some(crate::device::Access::from_stored(
                        mode as u32,
                        uid as u32,
                        gid as u32,
                    )),
                    _ => None,
                },
            }
        },
    })
}

/// A run from `SELECT command, started, finished, complete, summary FROM runs`.
pub(super) fn run_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunInfo> {
    Ok(RunInfo {
        command: r.get(0)?,
        started: r.get(1)?,
        finished: r.get(2)?,
        complete: r.get(3)?,
        summary: r.get(4)?,
    })
}

/// An open catalog.
pub struct Catalog {
    conn: Connection,
    path: PathBuf,
    algo: &'static Algorithm,
    /// For a catalog opened read-only: the URI its connections use.
    read_only: Option<String>,
    /// The schema version (an older catalog is read as it is, without migrating it).
    version: i64,
    /// The version this open upgraded the catalog from, if it did.
    upgraded_from: Option<i64>,
    /// (device, inode) of the file when it was opened, to notice its deletion.
    identity: Option<(u64, u64)>,
    /// Statements in the open batch (see [`Writer`]), and when it began.
    pending: Cell<usize>,
    since: Cell<Instant>,
    /// A run's inserts (see `bulk.rs`).
    bulk: bulk::Bulk,
}

impl Catalog {
    /// Where a tree's catalog lives unless `--catalog` says otherwise.
    pub fn default_path(root: &Path) -> PathBuf {
        crate::sys::join(&crate::sys::join(root, ".fixity".as_ref()), "catalog.db".as_ref())
    }

    /// Opens the catalog at `path` for a run that writes. With `create` it is made if
    /// absent, recording `algo` (or the default algorithm); an existing catalog keeps its
    /// algorithm and refuses a different explicit one. A file that is not a fixity
    /// catalog (empty, not SQLite, another program's database) is refused untouched.
    pub fn open(path: &Path, create: bool, algo: Option<&'static Algorithm>) -> Result<Catalog> {
        let exists = match std::fs::metadata(path) {
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(CatalogError::unreadable(path, e)),
        };
        if !exists && !create {
            return Err(CatalogError::NotFound(path.to_path_buf()));
        }
        if exists {
            probe(path)?;
        } else {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| CatalogError::Io(dir.to_path_buf(), e))?;
            }
            create_new(path, algo.unwrap_or_else(algo::default_algorithm))?;
        }
        let sql = |e| CatalogError::Sqlite(path.to_path_buf(), e);
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql)?;
        conn.busy_timeout(Duration::from_secs(60)).map_err(sql)?;
        // Before anything that writes: another program's database is left as it is.
        let version = check_schema(&conn, path)?;
        // WAL: readers (status, export, the walk's cursor) never block the writer and a
        // crash rolls back to the last commit. FULL syncs the log at each commit.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(sql)?;
        tune(&conn).map_err(sql)?;
        if version < MIGRATIONS.len() as i64 {
            // Schema steps go in one transaction: a catalog killed while being migrated
            // is either migrated or as it was.
            conn.execute_batch("BEGIN IMMEDIATE").map_err(sql)?;
            if let Err(e) = migrate(&conn) {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(match e {
                    MigrateError::TooNew(v) => {
                        CatalogError::TooNew(path.to_path_buf(), v, MIGRATIONS.len())
                    }
                    MigrateError::Sqlite(e) => sql(e),
                });
            }
            conn.execute_batch("COMMIT").map_err(sql)?;
        }
        let indexed = bulk::has_digest_index(&conn).map_err(sql)?;
        let algo = stored_algorithm(&conn, path, algo)?;
        let identity = file_identity(path);
        Ok(Catalog {
            conn,
            path: path.to_path_buf(),
            algo,
            read_only: None,
            version: MIGRATIONS.len() as i64,
            upgraded_from: (version < MIGRATIONS.len() as i64).then_some(version),
            identity,
            pending: Cell::new(0),
            since: Cell::new(Instant::now()),
            bulk: bulk::Bulk::opened(indexed),
        })
    }

    /// Opens the catalog at `path` only to read it (`status`, `export`), changing
    /// nothing, also on read-only media: when SQLite cannot set up its shared-memory
    /// index beside the file (a directory it may not write), the file is opened as
    /// immutable.
    pub(crate) fn open_read_only(path: &Path) -> Result<Catalog> {
        match std::fs::metadata(path) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CatalogError::NotFound(path.to_path_buf()));
            }
            Err(e) => return Err(CatalogError::unreadable(path, e)),
        }
        probe(path)?;
        let sql = |e| CatalogError::Sqlite(path.to_path_buf(), e);
        let plain = uri_of(path, false);
        let (conn, uri) = match connect_read_only(&plain) {
            Ok(c) => (c, plain),
            Err(first) => {
                let immutable = uri_of(path, true);
                match connect_read_only(&immutable) {
                    Ok(c) => (c, immutable),
                    Err(_) => return Err(sql(first)),
                }
            }
        };
        // Every schema version so far reads alike: an older catalog is read as it is.
        let version = check_schema(&conn, path)?;
        let algo = stored_algorithm(&conn, path, None)?;
        Ok(Catalog {
            conn,
            path: path.to_path_buf(),
            algo,
            read_only: Some(uri),
            version,
            upgraded_from: None,
            identity: file_identity(path),
            pending: Cell::new(0),
            since: Cell::new(Instant::now()),
            bulk: bulk::Bulk::default(),
        })
    }

    /// Whether the catalog's file is still the one this catalog opened (not deleted or
    /// replaced since).
    pub(crate) fn in_place(&self) -> bool {
        self.identity.is_none() || file_identity(&self.path) == self.identity
    }

    /// A second, read-only connection, for a thread that reads while this one writes.
    pub fn reader(&self) -> Result<Reader> {
        let sql = |e| CatalogError::Sqlite(self.path.clone(), e);
        let conn = match &self.read_only {
            Some(uri) => connect_read_only(uri).map_err(sql)?,
            None => Connection::open_with_flags(
                &self.path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(sql)?,
        };
        conn.busy_timeout(Duration::from_secs(60)).map_err(sql)?;
        tune(&conn).map_err(sql)?;
        Ok(Reader { conn })
    }

    /// The schema version of the catalog's file.
    pub(crate) fn version(&self) -> i64 {
        self.version
    }

    /// The catalog's file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The algorithm of every digest in the catalog.
    /// The schema version this open upgraded the catalog from, if it did.
    pub(crate) fn upgraded_from(&self) -> Option<i64> {
        self.upgraded_from
    }

    pub fn algorithm(&self) -> &'static Algorithm {
        self.algo
    }

    fn err(&self, e: rusqlite::Error) -> CatalogError {
        CatalogError::Sqlite(self.path.clone(), e)
    }

    /// Starts recording a run; returns its id.
    pub(crate) fn start_run(&self, command: &str, started: i64) -> Result<i64> {
        self.conn
            .execute(
                "INSERT INTO runs (command, started, summary) VALUES (?1, ?2, ?3)",
                params![command, started, super::actor().map(|by| super::signed("{}", Some(by)))],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// A batching writer: statements go into transactions of a few thousand rows (or
    /// one second), each committed whole.
    pub(crate) fn writer(&self) -> Writer<'_> {
        Writer::new(self)
    }

    /// Rows recorded as missing, with the time they went missing.
    pub fn missing(&self) -> Result<Vec<Row>> {
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {ROW_COLUMNS} FROM files WHERE missing_since IS NOT NULL ORDER BY path"
            ))
            .map_err(|e| self.err(e))?;
        let rows = st.query_map([], row_of).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.err(e))
    }

    /// One row by path.
    pub fn get(&self, path: &[u8]) -> Result<Option<Row>> {
        self.conn
            .query_row(&format!("SELECT {ROW_COLUMNS} FROM files WHERE path = ?1"), [path], row_of)
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Files present (not recorded as missing) and their total size.
    pub(crate) fn present(&self) -> Result<(u64, u64)> {
        self.conn
            .query_row(
                "SELECT count(*), coalesce(sum(size), 0) FROM files WHERE missing_since IS NULL",
                [],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .map_err(|e| self.err(e))
    }

    /// Calls `each` with every file run `run` (started at `run_start`) found not ok, in
    /// path order: (path, class, moved-from path, note). Streams from the database, so a
    /// report of any size costs no memory.
    pub(crate) fn report(&self, run_start: i64, new: bool, each: &mut ReportFn<'_>) -> Result<()> {
        // Without the new files, the index (which holds the others alone); with them, the
        // table in its own order (after a first scan they are every row).
        let classes = match new {
            true => "last_result != 'ok'",
            false => "last_result NOT IN ('ok', 'new')",
        };
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT path, last_result, moved_from, note FROM files
                 WHERE last_checked = ?1 AND {classes} ORDER BY path"
            ))
            .map_err(|e| self.err(e))?;
        let mut rows = st.query([run_start]).map_err(|e| self.err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let path: Vec<u8> = r.get(0).map_err(|e| self.err(e))?;
            let class: String = r.get(1).map_err(|e| self.err(e))?;
            let from: Option<Vec<u8>> = r.get(2).map_err(|e| self.err(e))?;
            let note: Option<String> = r.get(3).map_err(|e| self.err(e))?;
            let Some(class) = Class::from_name(&class) else { continue };
            each(&path, class, from.as_deref(), note.as_deref());
        }
        Ok(())
    }

    /// Recorded files at `rel` or below it (the whole tree for an empty `rel`): (present,
    /// missing).
    pub(crate) fn count_under(&self, rel: &[u8]) -> Result<(u64, u64)> {
        let (lo, hi) = below(rel);
        self.conn
            .query_row(
                &format!(
                    "SELECT count(*) FILTER (WHERE missing_since IS NULL),
                        count(*) FILTER (WHERE missing_since IS NOT NULL)
                 FROM files WHERE {}",
                    under_clause(rel)
                ),
                params![lo, rel, hi],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .map_err(|e| self.err(e))
    }

    /// Present files not looked at since `pass_start`: what later slices still have to do.
    pub(crate) fn stale_count(&self, pass_start: i64) -> Result<(u64, u64)> {
        self.conn
            .query_row(
                "SELECT count(*), coalesce(sum(size), 0) FROM files
                 WHERE missing_since IS NULL AND last_checked < ?1",
                [pass_start],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .map_err(|e| self.err(e))
    }

    /// A value from the `meta` table.
    pub(crate) fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    /// A `meta` value kept as bytes (a path).
    pub(crate) fn meta_blob(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Sets (or with `None` removes) a `meta` value kept as bytes.
    pub(crate) fn set_meta_blob(&self, key: &str, value: Option<&[u8]>) -> Result<()> {
        self.put_meta(key, value.map(|v| ToSqlOutput::Borrowed(ValueRef::Blob(v))))
    }

    /// Sets (or with `None` removes) a `meta` value.
    pub(crate) fn set_meta(&self, key: &str, value: Option<&str>) -> Result<()> {
        self.put_meta(key, value.map(|v| ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes()))))
    }

    fn put_meta(&self, key: &str, value: Option<ToSqlOutput<'_>>) -> Result<()> {
        match value {
            Some(v) => self.conn.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = ?2",
                params![key, v],
            ),
            None => self.conn.execute("DELETE FROM meta WHERE key = ?1", [key]),
        }
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The latest start time of any run (so a new run can start strictly after it).
    pub(crate) fn last_run_start(&self) -> Result<i64> {
        self.conn
            .query_row("SELECT coalesce(max(started), 0) FROM runs", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// `PRAGMA integrity_check`: "ok" for a sound database.
    pub fn integrity_check(&self) -> Result<String> {
        self.conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).map_err(|e| self.err(e))
    }
}

mod batches;
mod bulk;
mod file;
mod moves;
mod proofs;
mod reader;
mod remote;
mod store;
mod summary;
mod tree;
mod writer;

use super::below;
pub(crate) use crate::catalog::store::Inode;
use file::{
    MigrateError, check_schema, connect_read_only, create_new, file_identity, migrate, probe,
    stored_algorithm, tune, uri_of,
};
pub(crate) use reader::Reader;
use reader::under_clause;
pub(crate) use store::SqliteStore;
pub(crate) use writer::Writer;

#[cfg(test)]
mod tests;
