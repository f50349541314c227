//! What goes wrong with a PostgreSQL catalog, in words that name it: the URL with its
//! password masked, and for one tree the host and the tree's root.

use crate::pathtext::quote_env;

/// Errors of the PostgreSQL catalog. `catalog` is the URL as shown (password masked).
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The URL or the environment's settings cannot be used.
    #[error("catalog {catalog}: {cause}")]
    Settings { catalog: String, cause: String },
    /// No connection could be made (no server, refused, wrong password ...).
    #[error("cannot connect to catalog {catalog}: {cause}")]
    Connect { catalog: String, cause: String },
    /// A statement failed.
    #[error("catalog {catalog}: {cause}")]
    Query { catalog: String, cause: String },
    /// Nothing recorded for this tree (or no fixity tables at all).
    #[error(
        "no catalog for {host}:{} in {catalog} (run `fixity scan` first)",
        quote_env(.tree)
    )]
    NotFound { catalog: String, host: String, tree: Vec<u8> },
    /// The database's schema is from a newer fixity.
    #[error("catalog {catalog} has schema version {found}; this fixity knows up to {known}")]
    TooNew { catalog: String, found: i64, known: usize },
    /// The tree's records hold another algorithm's digests than the one asked for.
    #[error("catalog {catalog} holds {algo} digests for this tree; drop -a or pass -a {algo}")]
    AlgorithmMismatch { catalog: String, algo: &'static str },
    /// The tree's records name an algorithm this fixity does not have.
    #[error("catalog {catalog} uses unknown algorithm {algo:?}")]
    UnknownAlgorithm { catalog: String, algo: String },
    /// Another run holds the tree's run lock.
    #[error(
        "catalog {catalog} is busy for {host}:{}: another fixity run is using it (pass --wait \
         to queue)",
        quote_env(.tree)
    )]
    Busy { catalog: String, host: String, tree: Vec<u8> },
}

impl PgError {
    /// Whether the database has no record of the tree (nothing was scanned into it yet).
    pub fn is_not_found(&self) -> bool {
        matches!(self, PgError::NotFound { .. })
    }
}
