//! The PostgreSQL catalog: many hosts' trees in one database, for a fleet of file
//! servers (`--catalog postgresql://user@db/fixity`). It keeps what the SQLite catalog
//! keeps, per tree: a tree is a row of `fixity.trees` keyed by (host, root), where host
//! is the machine's name (`FIXITY_HOST` overrides it) and root the tree's absolute path,
//! and its files are rows of `fixity.files` keyed by (tree, path). Paths and digests are
//! bytea, times bigint ms, as in SQLite.
//!
//! Writers to different trees never wait for each other; two runs on one tree are kept
//! apart by a session advisory lock (the tree's run lock), which PostgreSQL drops with
//! the connection however the process ends. Writes go in batches, each one transaction:
//! a killed run leaves every committed batch and nothing of the open one, and the next
//! run continues from there. `schema.rs` holds the schema and its migrations (under an
//! advisory lock); `url.rs` what the URL and libpq's environment say; `connect.rs` TLS;
//! `roles.rs` the roles that keep hosts from each other's records (row-level security).

mod connect;
mod db;
mod error;
mod history;
mod passfile;
mod proofs;
mod remote;
mod roles;
mod rows;
mod schema;
mod store;
mod summary;
mod tls;
mod url;
mod writer;

use connect::Target;
pub use error::PgError;
pub use roles::{
    HOSTS_GROUP, MONITORS_GROUP, PlanError, RolePlan, apply as apply_roles, init_roles_sql,
};
pub(crate) use store::PgStore;
pub use summary::{TreeState, fleet, tree_roots};
pub use url::{is_url, mask};

use std::path::Path;

/// One tree in a PostgreSQL catalog.
#[derive(Clone, Debug)]
pub struct PgSpec {
    /// The catalog's URL (`postgresql://` or `postgres://`).
    pub url: String,
    /// The host the tree is on.
    pub host: String,
    /// The tree's root: an absolute path, raw bytes.
    pub tree: Vec<u8>,
    /// Rows in a batch, at most, in place of the usual (for tests; as is
    /// `FIXITY_PG_BATCH`).
    #[doc(hidden)]
    pub batch_rows: Option<usize>,
}

impl PgSpec {
    /// The tree at `root` (made absolute, symbolic links resolved when it exists here)
    /// of `host`, or of this machine ([`this_host`]).
    pub fn new(url: &str, host: Option<&str>, root: &Path) -> PgSpec {
        use crate::sys::OsStrExt;
        let tree = crate::sys::canonicalize(root)
            .or_else(|_| crate::sys::absolute(root))
            .unwrap_or_else(|_| root.to_path_buf());
        PgSpec {
            url: url.to_string(),
            host: host.map_or_else(this_host, str::to_string),
            tree: tree.as_os_str().as_bytes().to_vec(),
            batch_rows: None,
        }
    }
}

/// This machine's name in the catalog: `FIXITY_HOST` if set (containers, tests), else
/// the host name.
pub fn this_host() -> String {
    if let Some(h) = std::env::var("FIXITY_HOST").ok().filter(|h| !h.is_empty()) {
        return h;
    }
    crate::sys::hostname().unwrap_or_else(|| "localhost".to_string())
}
