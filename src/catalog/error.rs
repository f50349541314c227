//! The errors of the catalogs (SQLite and PostgreSQL): what a run, `status` or `export`
//! says when a catalog cannot be opened, read or written.

use super::postgres::PgError;
use crate::pathtext::{path_bytes, quote_env};
use crate::read::io_message;
use std::path::{Path, PathBuf};

impl CatalogError {
    /// The catalog at `path` could not be looked at (`e`): a read error naming the
    /// directory above it that stops the lookup, if one does, else the file.
    pub(crate) fn unreadable(path: &Path, e: std::io::Error) -> CatalogError {
        match crate::read::blocked_above(path, &e) {
            Some((dir, e)) => CatalogError::Read(dir, e),
            None => CatalogError::Read(path.to_path_buf(), e),
        }
    }
}

/// Errors opening or using a catalog.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// No catalog where one was expected.
    #[error("no catalog at {0} (run `fixity scan` first)")]
    NotFound(PathBuf),
    /// Written by a newer fixity.
    #[error("catalog {0} has schema version {1}; this fixity knows up to {2}")]
    TooNew(PathBuf, i64, usize),
    /// The catalog records another algorithm than the one asked for.
    #[error("catalog {0} holds {1} digests; drop -a or pass -a {1}")]
    AlgorithmMismatch(PathBuf, &'static str),
    /// The catalog names an algorithm this fixity does not have.
    #[error("catalog {0} uses unknown algorithm {1:?}")]
    UnknownAlgorithm(PathBuf, String),
    /// SQLite said no.
    #[error("catalog {0}: {1}")]
    Sqlite(PathBuf, rusqlite::Error),
    /// Creating the catalog's directory failed.
    #[error("cannot create {}: {}", quote_env(path_bytes(.0)), io_message(.1))]
    Io(PathBuf, std::io::Error),
    /// The catalog's file could not be read (or the directory above it that stops the
    /// lookup: a tree root that cannot be searched).
    #[error("cannot read {}: {}", quote_env(path_bytes(.0)), io_message(.1))]
    Read(PathBuf, std::io::Error),
    /// The file is not a fixity catalog: empty, not SQLite, or another program's
    /// database. It is left as it is.
    #[error(
        "{0} is not a fixity catalog ({1}); leaving it untouched: move it away or pass \
         another --catalog"
    )]
    Foreign(PathBuf, &'static str),
    /// The catalog was deleted or replaced while a run was writing to it.
    #[error("catalog {0} was deleted or replaced during the run: this run's records are lost")]
    Vanished(PathBuf),
    /// The catalog's directory could not be made.
    #[error("cannot create {}: {}", quote_env(path_bytes(.0)), io_message(.1))]
    CreateDir(PathBuf, std::io::Error),
    /// The run lock (the file given) could not be taken.
    #[error("cannot lock {}: {}", quote_env(path_bytes(.0)), io_message(.1))]
    Lock(PathBuf, std::io::Error),
    /// Another run holds the catalog's run lock.
    #[error(
        "catalog {} is busy: another fixity run is using it (pass --wait to queue)",
        quote_env(path_bytes(.0))
    )]
    Busy(PathBuf),
    /// The catalog (named as messages name it) is of a schema older than the chain of
    /// proofs, read where it is (`status`, `audit-proof`) without being upgraded.
    #[error("catalog {0} predates tamper evidence (a scan or verify by this fixity upgrades it)")]
    BeforeProofs(String),
    /// The PostgreSQL catalog failed (its message names the catalog, password masked).
    #[error(transparent)]
    Postgres(#[from] PgError),
}
