//! What a catalog knows about one subtree of its tree (`fixity status DIR` for a
//! directory inside the tree): the records below the directory's path, one range of
//! paths (see [`super::below`]), read in pages.

use super::store::{Record, Store, StoreError, Summary};
use std::collections::BTreeMap;

/// The [`Summary`] of the records below `sub` (a directory's path below the root): its
/// counts, oldest verification and standing findings are the subtree's; the runs and
/// the verification pass are the tree's (`tree`, the tree's summary), as a subtree has
/// none of its own.
pub fn summary_under(
    store: &dyn Store,
    sub: &[u8],
    now: i64,
    tree: Summary,
) -> Result<Summary, StoreError> {
    if sub.is_empty() {
        return Ok(tree);
    }
    let mut s = Summary { runs: tree.runs, pass: tree.pass, ..Summary::default() };
    let mut by_result: BTreeMap<String, u64> = BTreeMap::new();
    let days = [1u32, 7, 30];
    let mut within = [0u64; 3];
    each_under(store, sub, &mut |r| {
        if r.missing_since.is_some() {
            s.missing += 1;
            if s.problems.len() < 100 {
                s.problems.push((r.path, "missing".into()));
            }
            return;
        }
        s.files += 1;
        s.bytes += r.size.unwrap_or(0);
        s.imported += u64::from(r.imported);
        *by_result.entry(r.last_result.name().to_string()).or_default() += 1;
        for (n, d) in within.iter_mut().zip(days) {
            *n += u64::from(r.last_verified >= now - i64::from(d) * 86_400_000);
        }
        if s.oldest_verified.as_ref().is_none_or(|(_, t)| r.last_verified < *t) {
            s.oldest_verified = Some((r.path.clone(), r.last_verified));
        }
        if r.last_result.is_failure() && s.problems.len() < 100 {
            s.problems.push((r.path, r.last_result.name().into()));
        }
    })?;
    s.by_result = by_result.into_iter().collect();
    s.verified_within = [(1, within[0]), (7, within[1]), (30, within[2])];
    Ok(s)
}

/// Calls `each` with every record below `sub` (present and missing), in path order, read
/// a page at a time. Nothing for an empty `sub` (the whole tree is no subtree).
pub fn each_under(
    store: &dyn Store,
    sub: &[u8],
    each: &mut dyn FnMut(Record),
) -> Result<(), StoreError> {
    let (Some(from), _) = super::below(sub) else { return Ok(()) };
    let mut pages = super::RecordPages::after(Some(from.clone()));
    while let Some(page) = pages.next(store)? {
        for r in page {
            if !r.path.starts_with(&from) {
                return Ok(());
            }
            each(r);
        }
    }
    Ok(())
}
