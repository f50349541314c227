//! What the tamper evidence ([`crate::proof`]) commits to of a store: each record as a
//! [`Leaf`], and the root of all of a tree's records. The SQLite and PostgreSQL stores
//! append an entry to their chain as each run finishes (their `finish_run`), the audit
//! recomputes the root through [`state_root`].

use super::Class;
use super::store::{Record, Store, StoreError};
use crate::proof::{Hash, Leaf, RootHasher, Standing};

/// The standing finding of a record whose last result is `last` (`missing`: it is gone).
pub(crate) fn standing(last: Class, missing: bool) -> Standing {
    match last {
        _ if missing => Standing::Missing,
        Class::Corrupt => Standing::Corrupt,
        Class::Unreadable => Standing::Unreadable,
        Class::Changed => Standing::Changed,
        _ => Standing::None,
    }
}

/// A record as the root commits to it.
pub fn leaf(r: &Record) -> Leaf<'_> {
    Leaf {
        path: &r.path,
        size: r.size.unwrap_or(0),
        mtime_ns: r.mtime_ns as i64,
        digest: r.digest.as_bytes(),
        standing: standing(r.last_result, r.missing_since.is_some()),
    }
}

/// The root of every record of `store` (and how many), read page by page in path order;
/// `each` sees every record on the way.
pub fn state_root(
    store: &dyn Store,
    mut each: impl FnMut(&Record),
) -> Result<(Hash, u64), StoreError> {
    let mut root = RootHasher::new(store.algorithm().name);
    let mut pages = super::RecordPages::after(None);
    while let Some(page) = pages.next(store)? {
        for r in &page {
            root.add(&leaf(r));
            each(r);
        }
    }
    Ok(root.finish())
}
