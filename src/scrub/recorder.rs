//! Recording what a run classified: the sink of the engine's pipelines, and the
//! [`Recorder`] that keeps a finding from being lost with a store that fails.

use super::{Finding, Mode, Notice, Report, Seen, Window, classify};
use crate::catalog::{Class, Found, Record, Store, StoreError};
use crate::device::Stamp;
use crate::pipeline;
use crate::pipeline::Hashed;
use crate::read::ReadError;
use std::collections::VecDeque;
use std::io;

/// What the producer hands the sink.
pub(super) enum Item {
    /// A file to read, with its record if the store has one.
    File(Vec<u8>, Option<Record>),
    /// A record with no file in the tree.
    Gone(Record),
    /// A record under a directory that could not be read: its fate is unknown.
    Unreachable(Record, String),
    /// An entry the run cannot look at and no record speaks for: a directory that could
    /// not be listed, a file whose record could not be read.
    Unlisted(Vec<u8>, String),
    /// An entry skipped on purpose.
    Skipped(Vec<u8>, &'static str),
    /// A known file whose size and mtime are unchanged (seen by the walk's stat), with its
    /// path when it had been recorded as missing.
    Unchanged(Option<Vec<u8>>),
}

/// The store, and what happens when it fails. Findings are recorded first and listed
/// from the store after the run (or, for a store that lists none, handed over at once);
/// when a write fails (a full file system, a catalog gone read-only), the first error is
/// kept, the open batch is abandoned, and the findings of that batch and every later
/// one go to [`Notice::Unrecorded`] at once: a finding is never lost with a store that
/// cannot hold it. The run goes on without writing.
pub(super) struct Recorder<'s> {
    pub(super) store: &'s mut dyn Store,
    pub(super) lists: bool,
    /// Findings not yet committed, each with the number of its batch
    /// ([`Store::last_batch`]): reported from here if their batch never commits.
    pub(super) batch: VecDeque<(u64, Finding)>,
    /// The first store error.
    pub(super) failed: Option<StoreError>,
    /// The tree's root: where a file whose record is written is asked for its attributes
    /// (an ACL, others: [`crate::device::Access::with_attributes`]).
    pub(super) root: Option<std::path::PathBuf>,
}

impl Recorder<'_> {
    /// Records with `op`; `finding` is what the user must hear of. `Err`: this one file's
    /// record could not be stored.
    pub(super) fn write(
        &mut self,
        notice: &mut dyn FnMut(Notice),
        finding: Option<Finding>,
        op: impl FnOnce(&mut dyn Store) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        if self.failed.is_some() {
            if let Some(f) = finding {
                notice(Notice::Unrecorded(f));
            }
            return Ok(());
        }
        match op(&mut *self.store) {
            Ok(()) if !self.lists => finding.into_iter().for_each(|f| notice(Notice::Found(f))),
            Ok(()) => {
                if let Some(f) = finding {
                    self.batch.push_back((self.store.last_batch(), f));
                }
                // Those of the batches committed by now are kept: the store lists them.
                let below = self.store.committed_below();
                while self.batch.front().is_some_and(|(n, _)| *n < below) {
                    self.batch.pop_front();
                }
            }
            Err(e @ StoreError::Catalog(_)) => {
                self.fail(e, notice);
                if let Some(f) = finding {
                    notice(Notice::Unrecorded(f));
                }
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// Records `class` for the file at `path` with `op`, and counts it; a file whose
    /// record cannot be stored is counted and reported unreadable instead.
    pub(super) fn settle(
        &mut self,
        report: &mut Report,
        notice: &mut dyn FnMut(Notice),
        path: &[u8],
        (class, note): (Class, Option<String>),
        op: impl FnOnce(&mut dyn Store) -> Result<(), StoreError>,
    ) {
        let finding = (class != Class::Ok).then(|| Finding { path: path.to_vec(), class, note });
        match self.write(notice, finding, op) {
            Ok(()) => report.add(class),
            Err(e) => {
                let note = Some(e.to_string());
                let f = Finding { path: path.to_vec(), class: Class::Unreadable, note };
                self.unlisted(report, notice, f);
            }
        }
    }

    /// A finding with no record to keep it: listed beside the store's report, or handed
    /// over now.
    pub(super) fn unlisted(&self, report: &mut Report, notice: &mut dyn FnMut(Notice), f: Finding) {
        report.add(f.class);
        if self.lists {
            report.extra.push(f);
        } else {
            notice(Notice::Found(f));
        }
    }

    pub(super) fn commit(&mut self, notice: &mut dyn FnMut(Notice)) {
        let _ = self.write(notice, None, |s| s.commit());
    }

    /// Marks the store failed (keeping the first error) and reports the findings of
    /// every batch that was not committed.
    pub(super) fn fail(&mut self, e: StoreError, notice: &mut dyn FnMut(Notice)) {
        self.store.abandon();
        self.failed.get_or_insert(e);
        for (n, f) in std::mem::take(&mut self.batch) {
            if !self.store.committed(n) {
                notice(Notice::Unrecorded(f));
            }
        }
    }

    pub(super) fn ok(&self) -> bool {
        self.failed.is_none()
    }
}

/// Classifies one finished task and records it.
#[allow(clippy::too_many_arguments)]
pub(super) fn sink(
    item: Item,
    outcome: pipeline::Outcome,
    now: i64,
    window: Window,
    remembers_gone: bool,
    rec: &mut Recorder<'_>,
    report: &mut Report,
    notice: &mut dyn FnMut(Notice),
) {
    match (item, outcome) {
        (Item::Unchanged(back), _) => {
            if let Some(rel) = back {
                let _ = rec.write(notice, None, |s| s.record_present(&rel));
            }
            if report.command == Mode::Scan.name() {
                report.add(Class::Ok);
            }
        }
        (Item::Skipped(rel, why), _) => {
            report.skipped += 1;
            notice(Notice::Skipped(rel, why));
        }
        (Item::Unlisted(rel, why), _) => {
            // Known files below an unreadable directory are reported one by one as
            // unreachable; the directory itself is listed once (the root as ".").
            let path = if rel.is_empty() { b".".to_vec() } else { rel };
            let f = Finding { path, class: Class::Unreadable, note: Some(why) };
            rec.unlisted(report, notice, f);
        }
        (Item::Unreachable(r, why), _) => {
            let note = format!("directory unreadable: {why}");
            let class = classify(Some(&r), Seen::Unreadable, window);
            rec.settle(report, notice, &r.path, (class, Some(note.clone())), |s| {
                s.record_check(&r, class, None, Some(&note), now)
            });
        }
        (Item::Gone(r), _) => {
            let class = classify(Some(&r), Seen::Absent, window);
            rec.settle(report, notice, &r.path, (class, None), |s| s.record_missing(&r.path, now));
        }
        (Item::File(rel, known), Some(Ok(h))) => {
            report.files_read += 1;
            report.bytes_read += h.size;
            record_content(&rel, known.as_ref(), &h, now, window, rec, report, notice);
        }
        (Item::File(rel, known), Some(Err(e))) => {
            failed_read(&rel, known.as_ref(), e, now, remembers_gone, rec, report, notice);
        }
        (Item::File(..), None) => unreachable!("files carry work"),
    }
}

/// A file was read: recorded as new, as an edit, or as checked (ok or corrupt).
#[allow(clippy::too_many_arguments)]
fn record_content(
    rel: &[u8],
    known: Option<&Record>,
    h: &Hashed,
    now: i64,
    window: Window,
    rec: &mut Recorder<'_>,
    report: &mut Report,
    notice: &mut dyn FnMut(Notice),
) {
    let stamp = Stamp { size: h.size, mtime_ns: h.mtime_ns.unwrap_or(0), ctime_ns: h.ctime_ns };
    let mut found = Found { digest: h.digests[0], stamp, file_id: h.file_id, access: h.access };
    // Where ctimes are not trusted (FUSE), none is recorded either: one that moves on its
    // own would have every read write the row again.
    if window.ctime.is_none() {
        found.stamp.ctime_ns = None;
    }
    let class = classify(known, Seen::Content(&found), window);
    // A record written (a new file, an edit, a file as recorded whose inode changed)
    // keeps whether the file has an ACL or other attributes: asked only then.
    let writes = match known {
        None => true,
        Some(r) => matches!(class, Class::New | Class::Modified) || r.inode_moved(&found),
    };
    if let (true, Some(root), Some(a)) = (writes, &rec.root, found.access) {
        found.access = Some(a.with_attributes(&super::full_path(root, rel)));
    }
    // A file recorded missing that is back and read: present again, then checked (new
    // and changed content is recorded whole, which marks it present too).
    if let Some(r) = known
        && r.missing_since.is_some()
        && !matches!(class, Class::New | Class::Modified)
    {
        let _ = rec.write(notice, None, |s| s.record_present(rel));
    }
    match (class, known) {
        (Class::New, _) | (_, None) => {
            rec.settle(report, notice, rel, (Class::New, None), |s| s.record_new(rel, &found, now));
        }
        (Class::Modified, Some(r)) => {
            rec.settle(report, notice, rel, (class, None), |s| {
                s.record_content(r, &found, class, now)
            });
        }
        (Class::Corrupt | Class::Changed, Some(r)) => {
            // As the algorithm writes its digests (an S3 ETag as `hex-N`). An imported
            // digest that never matched: the other tool's record may be what is wrong, but
            // nothing says so; it stands as any corrupt file does.
            let encode = |d: &crate::digest::Digest| d.encode(r.algo.encoding);
            let mut note =
                super::corrupt_note(&encode(&r.digest), &encode(&found.digest), r.imported);
            if class == Class::Changed {
                note.push_str(&super::changed_note(r.ctime_ns, found.stamp.ctime_ns));
            }
            rec.settle(report, notice, rel, (class, Some(note.clone())), |s| {
                s.record_check(r, class, Some(&found), Some(&note), now)
            });
        }
        (_, Some(r)) => {
            rec.settle(report, notice, rel, (class, None), |s| {
                s.record_check(r, class, Some(&found), None, now)
            });
        }
    }
}

/// A file could not be read: gone since the walk (missing, when the store remembers
/// it), or unreadable.
#[allow(clippy::too_many_arguments)]
fn failed_read(
    rel: &[u8],
    known: Option<&Record>,
    e: ReadError,
    now: i64,
    remembers_gone: bool,
    rec: &mut Recorder<'_>,
    report: &mut Report,
    notice: &mut dyn FnMut(Notice),
) {
    let gone = match &e {
        ReadError::Io(io) => io.kind() == io::ErrorKind::NotFound,
        ReadError::NotRegular(_) | ReadError::Symlink => true,
        _ => false,
    };
    if gone {
        // Vanished (or stopped being a regular file) between the walk and the read.
        if let Some(r) = known.filter(|_| remembers_gone) {
            let class = classify(Some(r), Seen::Absent, Window::default());
            rec.settle(report, notice, rel, (class, None), |s| s.record_missing(rel, now));
        }
        return;
    }
    if matches!(e, ReadError::OwnOutput) {
        return;
    }
    let message = e.message();
    let class = classify(known, Seen::Unreadable, Window::default());
    match known {
        Some(r) => rec.settle(report, notice, rel, (class, Some(message.clone())), |s| {
            s.record_check(r, class, None, Some(&message), now)
        }),
        // Never recorded (there is no digest to keep): listed from memory instead.
        None => {
            rec.unlisted(report, notice, Finding { path: rel.to_vec(), class, note: Some(message) })
        }
    }
}
