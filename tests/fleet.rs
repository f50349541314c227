//! The PostgreSQL catalog: the catalog cases of tests/catalog.rs on PostgreSQL, many
//! hosts and processes scanning into one database, kill -9 mid-scan, the fleet's status,
//! export equal to SQLite's, and connection errors.

use crate::catalog::Cat;
use crate::util::pg;
use crate::util::{fixity, tempdir, write};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A catalog in a fresh database of the test cluster.
fn postgres() -> Option<Cat> {
    pg::database().map(|db| Cat::Postgres(db.url))
}

mod cases {
    crate::catalog::catalog_cases!(super::postgres());
}
