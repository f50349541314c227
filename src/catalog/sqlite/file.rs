//! The catalog's file: refusing what is not a catalog, making a new one whole, the
//! schema and its migrations, read-only connections.

use super::{CatalogError, MIGRATIONS, Result};
use crate::algo::{self, Algorithm};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A page cache of a fixed size (8 MiB) and no memory map: a run reads every row once,
/// and a map of the whole database would make the process's memory grow with the
/// catalog (a page read through a map stays resident in it).
pub(super) fn tune(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "mmap_size", 0)?;
    conn.pragma_update(None, "cache_size", -8192)?;
    Ok(())
}

pub(super) fn file_identity(path: &Path) -> Option<(u64, u64)> {
    crate::sys::path_id(path).ok()
}

/// Refuses, before SQLite touches it, a file that cannot be a catalog: an empty one (an
/// SQLite connection would silently make it a new database) or one that is not SQLite.
pub(super) fn probe(path: &Path) -> Result<()> {
    use std::io::Read;
    let read = |e| CatalogError::Read(path.to_path_buf(), e);
    let mut file = std::fs::File::open(path).map_err(read)?;
    if !file.metadata().map_err(read)?.is_file() {
        return Err(CatalogError::Foreign(path.to_path_buf(), "not a regular file"));
    }
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(read(e)),
        }
    }
    if got == 0 {
        return Err(CatalogError::Foreign(path.to_path_buf(), "the file is empty"));
    }
    if &head[..got] != b"SQLite format 3\0" {
        return Err(CatalogError::Foreign(path.to_path_buf(), "not an SQLite database"));
    }
    Ok(())
}

/// The schema version, after checking that the database holds a fixity catalog.
pub(super) fn check_schema(conn: &Connection, path: &Path) -> Result<i64> {
    let sql = |e| CatalogError::Sqlite(path.to_path_buf(), e);
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql)?;
    if version > MIGRATIONS.len() as i64 {
        return Err(CatalogError::TooNew(path.to_path_buf(), version, MIGRATIONS.len()));
    }
    let ours: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('files', 'meta')",
            [],
            |r| r.get(0),
        )
        .map_err(sql)?;
    if version == 0 || ours != 2 {
        return Err(CatalogError::Foreign(
            path.to_path_buf(),
            "an SQLite database without fixity's tables",
        ));
    }
    Ok(version)
}

/// The catalog's algorithm, refusing a different explicit one.
pub(super) fn stored_algorithm(
    conn: &Connection,
    path: &Path,
    want: Option<&'static Algorithm>,
) -> Result<&'static Algorithm> {
    let stored: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'algorithm'", [], |r| r.get(0))
        .optional()
        .map_err(|e| CatalogError::Sqlite(path.to_path_buf(), e))?;
    let Some(name) = stored else {
        return Err(CatalogError::Foreign(path.to_path_buf(), "it records no algorithm"));
    };
    let a = algo::lookup(&name)
        .ok_or_else(|| CatalogError::UnknownAlgorithm(path.to_path_buf(), name))?;
    if want.is_some_and(|w| w.name != a.name) {
        return Err(CatalogError::AlgorithmMismatch(path.to_path_buf(), a.name));
    }
    Ok(a)
}

/// Makes a new catalog at `path` all at once: built complete under a temporary name
/// beside it, then linked into place, so `path` is never an empty or half-made file
/// (which a later run would have to refuse) however the process ends.
pub(super) fn create_new(path: &Path, algo: &'static Algorithm) -> Result<()> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".new");
    let tmp = PathBuf::from(tmp_name);
    let side = |suffix: &str| {
        let mut p = tmp.as_os_str().to_owned();
        p.push(suffix);
        PathBuf::from(p)
    };
    let io = |e| CatalogError::Io(path.to_path_buf(), e);
    for p in [tmp.clone(), side("-wal"), side("-shm"), side("-journal")] {
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
            _ => {}
        }
    }
    let sql = |e| CatalogError::Sqlite(path.to_path_buf(), e);
    {
        let conn = Connection::open(&tmp).map_err(sql)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(sql)?;
        conn.execute_batch("BEGIN IMMEDIATE").map_err(sql)?;
        migrate(&conn).map_err(|e| match e {
            MigrateError::Sqlite(e) => sql(e),
            MigrateError::TooNew(_) => unreachable!("a new database has version 0"),
        })?;
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('algorithm', ?1), ('created', ?2)",
            params![algo.name, crate::clock::now_ms().to_string()],
        )
        .map_err(sql)?;
        conn.execute_batch("COMMIT").map_err(sql)?;
        // Closing the last connection moves the log into the file and removes it.
        conn.close().map_err(|(_, e)| sql(e))?;
    }
    if side("-wal").exists() {
        return Err(io(std::io::Error::other("the new catalog's log was not folded in")));
    }
    // Opened for writing: Windows flushes only a handle that may write.
    std::fs::OpenOptions::new().write(true).open(&tmp).and_then(|f| f.sync_all()).map_err(io)?;
    // A link, not a rename: a catalog another run made meanwhile is never replaced.
    match std::fs::hard_link(&tmp, path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        // File systems without hard links.
        Err(_) => std::fs::rename(&tmp, path).map_err(io)?,
    }
    let _ = std::fs::remove_file(&tmp);
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        crate::output::sync_dir(dir);
    }
    Ok(())
}

/// A `file:` URI for a read-only connection to `path`, immutable if asked (no locks, no
/// shared-memory index: the file is taken as nothing else changes it).
pub(super) fn uri_of(path: &Path, immutable: bool) -> String {
    use crate::sys::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str(if immutable { "?mode=ro&immutable=1" } else { "?mode=ro" });
    uri
}

/// A read-only connection to the catalog at `uri`, tried with one read (which is when
/// SQLite finds out whether it can open the write-ahead log's index).
pub(super) fn connect_read_only(uri: &str) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.busy_timeout(Duration::from_secs(60))?;
    tune(&conn)?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))?;
    // A catalog of schema 1 or 2 (before imports, schema 3) read where it cannot be
    // migrated: its files are seen through a view with the later column, so every query
    // reads alike (schema 2's history columns are read only from version 2 on).
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let has_files: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'files'",
        [],
        |r| r.get(0),
    )?;
    // Likewise a catalog from before schema 9 gets the inode's columns, all NULL.
    if (1..9).contains(&version) && has_files {
        let imported = if version < 3 { "NULL AS imported, " } else { "" };
        conn.execute_batch(&format!(
            "CREATE TEMP VIEW files AS SELECT *, {imported}NULL AS ctime_ns, NULL AS mode,
                NULL AS uid, NULL AS gid FROM main.files"
        ))?;
    }
    Ok(conn)
}

pub(super) enum MigrateError {
    TooNew(i64),
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for MigrateError {
    fn from(e: rusqlite::Error) -> Self {
        MigrateError::Sqlite(e)
    }
}

/// Brings the schema to the newest version (inside the caller's transaction).
pub(super) fn migrate(conn: &Connection) -> std::result::Result<(), MigrateError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > MIGRATIONS.len() as i64 {
        return Err(MigrateError::TooNew(version));
    }
    for (i, step) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        conn.execute_batch(&format!("{step}; PRAGMA user_version = {};", i + 1))?;
    }
    Ok(())
}
