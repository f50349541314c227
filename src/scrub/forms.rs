//! Names that changed form. One name can be two byte strings: `café` as typed (NFC) and
//! as macOS's HFS+ and many Mac programs write it (NFD, `e` and a combining accent). A
//! tree copied through a system that turns one into the other (a Mac's files on a Linux
//! share, `rsync --iconv`, a zip) holds each such file under other bytes than its record:
//! the record is missing and the file is new. Such a pair is one file: the record takes
//! the name the disk has now, and what the file holds is judged against the record as at
//! its own path: as recorded (counted moved), an edit (modified), or CORRUPT. A copy that
//! damaged the file is a finding, never a new file beside a missing one.
//!
//! Only a file new since the loss pairs (recorded new by this run, or by an earlier run
//! that did not pair it), and only with a missing record whose name is the same in
//! another form; ASCII names have one form and cost nothing.

use super::recorder::Recorder;
use super::{Notice, Report, Seen, Window, classify};
use crate::catalog::{Class, Found, Record};
use crate::pathtext::other_forms;

/// Pairs the missing record `m` with the file at another form of its name recorded new
/// since `since` (the loss), if there is one (`holds`: whether a path is in the run's
/// part of the tree). `true` when paired.
pub(super) fn pair(
    rec: &mut Recorder<'_>,
    report: &mut Report,
    (now, window, since): (i64, Window, i64),
    holds: &dyn Fn(&[u8]) -> bool,
    m: &Record,
    notice: &mut dyn FnMut(Notice),
) -> bool {
    for form in other_forms(&m.path) {
        let twin = match rec.store.lookup(&form) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(e) => {
                rec.fail(e, notice);
                return false;
            }
        };
        // (Digests of two algorithms say nothing of each other.)
        let comparable = std::ptr::eq(twin.algo, m.algo);
        let new_here = twin.missing_since.is_none() && twin.last_result == Class::New;
        if !new_here || !comparable || !holds(&twin.path) {
            continue;
        }
        // New since the loss, as a moved file's candidates are (one that was there beside
        // the lost file is another file: a Linux directory can hold both forms).
        let size = twin.size.unwrap_or(0);
        match rec.store.move_candidates(size, &twin.digest, since) {
            Ok(c) if c.iter().any(|c| c.path == twin.path) => {}
            Ok(_) => continue,
            Err(e) => {
                rec.fail(e, notice);
                return false;
            }
        }
        let found = Found { digest: twin.digest, stamp: twin.stamp(), file_id: None, access: None };
        // By size and mtime alone, as a moved file is: a rename or a copy gives the file
        // a new ctime, which tells nothing of its content.
        let class = classify(Some(m), Seen::Content(&found), Window { ctime: None, ..window });
        // The file as recorded: moved, as a move is (the new record stands, with the
        // history of the old one).
        if class == Class::Ok {
            super::moves::moved_to(rec, report, (&m.path, &twin.path, now), notice);
            return true;
        }
        report.sub(Class::Missing);
        report.sub(Class::New);
        // Otherwise the old record takes the new name, and what the file holds is
        // recorded against it as at its own path.
        let _ = rec.write(notice, None, |s| s.record_renamed(&m.path, &twin.path, now));
        let renamed = Record { path: twin.path.clone(), missing_since: None, ..m.clone() };
        let rel = twin.path.clone();
        match class {
            // Edited since: the new content, as any edit is.
            Class::Modified => {
                rec.settle(report, notice, &rel, (class, None), |s| {
                    s.record_content(&renamed, &found, class, now)
                });
            }
            // The recorded version with other content (CORRUPT): the record keeps its
            // digest, and the finding stands under the new name.
            _ => {
                let encode = |d: &crate::digest::Digest| d.encode(m.algo.encoding);
                let note =
                    super::corrupt_note(&encode(&m.digest), &encode(&found.digest), m.imported);
                rec.settle(report, notice, &rel, (class, Some(note.clone())), |s| {
                    s.record_check(&renamed, class, Some(&found), Some(&note), now)
                });
            }
        }
        return true;
    }
    false
}
