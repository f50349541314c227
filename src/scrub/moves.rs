//! After the walk, for stores that remember gone files: a missing file found again at a
//! path new in the tree (moved; or under another Unicode form of its name, [`super::forms`]),
//! and directories whose every recorded file is missing
//! (unmounted, or gone whole). A part of a plan looks only at the records in its range.

use super::recorder::Recorder;
use super::scope::Bounds;
use super::vanished::vanished_dirs;
use super::{Notice, Report, Seen, Window, classify};
use crate::catalog::{Class, Found, Record};

/// Moves: a missing file whose content now lives at a path new in the tree. Missing
/// records are read in pages, so a tree that vanished whole costs no memory; and they
/// are only read when some file is new since the oldest loss (else nothing can pair).
pub(super) fn pair_moves(
    rec: &mut Recorder<'_>,
    report: &mut Report,
    (now, window): (i64, Window),
    (bounds, listed_ms, confined): (&Bounds, Option<i64>, bool),
    notice: &mut dyn FnMut(Notice),
) {
    // (A part's candidates may be older than its losses: see `Scope::listed_ms`.)
    let candidates = match listed_ms {
        Some(_) => Ok(true),
        None => rec.store.new_since_a_loss(),
    };
    let candidates = match candidates {
        Ok(any) => any,
        Err(e) => {
            rec.fail(e, notice);
            false
        }
    };
    if !rec.ok() || !candidates {
        return;
    }
    // The missing records in `bounds`: the one at `from` itself, then pages after it.
    let mut after: Option<Vec<u8>> = None;
    let mut first = bounds.from.clone();
    'pages: loop {
        let page = match first.take() {
            Some(from) => match rec.store.lookup(&from) {
                Ok(r) => {
                    after = Some(from);
                    r.into_iter().filter(|r| r.missing_since.is_some()).collect()
                }
                Err(e) => {
                    rec.fail(e, notice);
                    break;
                }
            },
            None => match rec.store.missing_page(after.as_deref(), 1024) {
                Ok(p) if p.is_empty() => break,
                Ok(p) => {
                    after = p.last().map(|r| r.path.clone());
                    p
                }
                Err(e) => {
                    rec.fail(e, notice);
                    break;
                }
            },
        };
        for m in page {
            if bounds.past(&m.path) {
                break 'pages;
            }
            let lost = m.missing_since.unwrap_or(now);
            let since = listed_ms.map_or(lost, |l| l.min(lost));
            // The same name in another form is the strongest sign: looked at first.
            let holds = |p: &[u8]| !confined || bounds.holds(p);
            let paired = super::forms::pair(rec, report, (now, window, since), &holds, &m, notice);
            if !rec.ok() {
                break 'pages;
            }
            if paired {
                continue;
            }
            let Some(size) = m.size.filter(|&s| s > 0) else {
                continue; // every empty file looks alike
            };
            // A candidate paired earlier in this loop is 'moved' now, no longer 'new'.
            let cands = match rec.store.move_candidates(size, &m.digest, since) {
                Ok(c) => c,
                Err(e) => {
                    rec.fail(e, notice);
                    break 'pages;
                }
            };
            // A subtree's (`confined`) losses pair only with files new inside it.
            let moved = |c: &&Record| {
                if confined && !bounds.holds(&c.path) {
                    return false;
                }
                let found =
                    Found { digest: c.digest, stamp: c.stamp(), file_id: None, access: None };
                classify(Some(&m), Seen::Elsewhere(&found), Window { ctime: None, ..window })
                    == Class::Moved
            };
            let base = |p: &[u8]| p.rsplit(|&b| b == b'/').next().map(<[u8]>::to_vec);
            let mut cands = cands.iter().filter(moved).peekable();
            let first = cands.peek().copied();
            let pick = cands.find(|c| base(&c.path) == base(&m.path)).or(first);
            if let Some(to) = pick {
                moved_to(rec, report, (&m.path, &to.path, now), notice);
                if !rec.ok() {
                    break 'pages;
                }
            }
        }
    }
    rec.commit(notice);
}

/// Records the missing file at `from` as the new one at `to` (same content), and counts
/// the pair moved in place of missing and new (unless the store failed: nothing moved).
pub(super) fn moved_to(
    rec: &mut Recorder<'_>,
    report: &mut Report,
    (from, to, now): (&[u8], &[u8], i64),
    notice: &mut dyn FnMut(Notice),
) {
    let _ = rec.write(notice, None, |s| s.record_moved(from, to, now));
    if !rec.ok() {
        return;
    }
    report.sub(Class::Missing);
    report.sub(Class::New);
    report.add(Class::Moved);
}

/// Directories whose every recorded file is missing: unmounted, or gone whole.
pub(super) fn find_vanished(
    rec: &mut Recorder<'_>,
    report: &mut Report,
    bounds: &Bounds,
    notice: &mut dyn FnMut(Notice),
) {
    let mut after: Option<Vec<u8>> = None;
    let mut first = bounds.from.clone();
    let mut failed = None;
    let store = &*rec.store;
    // The records in `bounds`: the one at `from` itself, then pages after it.
    let pages = std::iter::from_fn(|| {
        if let Some(from) = first.take() {
            return match store.lookup(&from) {
                Ok(r) => {
                    after = Some(from);
                    Some(r.map(|r| (r.path, r.missing_since.is_some())).into_iter().collect())
                }
                Err(e) => {
                    failed = Some(e);
                    None
                }
            };
        }
        match store.presence_page(after.as_deref(), 4096) {
            Ok(p) if p.is_empty() => None,
            Ok(p) => {
                after = p.last().map(|(path, _)| path.clone());
                Some(p)
            }
            Err(e) => {
                failed = Some(e);
                None
            }
        }
    });
    let held = pages.flatten().take_while(|(path, _)| !bounds.past(path));
    let (dirs, more) = vanished_dirs(held, 100);
    if let Some(e) = failed {
        rec.fail(e, notice);
    } else {
        report.vanished = dirs;
        report.vanished_more = more;
    }
}
