//! The making of one recovery set for `protect`, apart from the catalog, so that sets can
//! be made on threads of their own while the run goes on (`protect.rs` hands each set to a
//! thread and settles the results in the planned order).
//!
//! A set is made from its files as they are, when they are as recorded: each member's
//! stamp is taken, the set is made in one read that also computes each member's catalog
//! digest, and a member found changed, unreadable or rotten is left out (the set made again
//! without it, or the old set kept when there is one). What the catalog must be told is
//! returned as [`Step`]s, in order, for the thread that holds the store: reported first,
//! then recorded.

use super::plan::{Planned, recovery_count, slice_size};
use super::sidecar::Entry;
use super::{Left, RepairError};
use crate::algo::Hasher;
use crate::catalog::{Class, Found, Record};
use crate::device::{Access, Stamp};
use crate::par2::{self, CreateError, Member, Pending};
use crate::pathtext::bytes_path;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// What a set's making needs to know of the run.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub(super) root: &'a Path,
    /// The recovery directory's files when the run began (and the directory).
    pub(super) listing: &'a par2::Listing,
    pub(super) redundancy: f64,
    /// The ctime rule (the store's slack; `None` where ctimes are not trusted).
    pub(super) ctime: Option<i128>,
}

/// A file left out of the set: said, then (if any) recorded in the catalog.
pub(super) struct Step {
    pub(super) path: Vec<u8>,
    pub(super) why: Left,
    pub(super) record: Option<Recorded>,
}

/// A check result for the catalog (`Store::record_check`).
pub(super) struct Recorded {
    pub(super) rec: Record,
    pub(super) class: Class,
    pub(super) found: Option<Found>,
    pub(super) note: Option<String>,
}

/// How the making of a set ended.
pub(super) enum End {
    /// Made: its volumes wait in temporary files until [`Pending::finish`].
    Made {
        pending: Box<Pending>,
        /// Every file the set covers (its members and its empty files), in path order.
        entries: Vec<Entry>,
        /// The members' bytes, and the bytes read (once per pass).
        bytes: u64,
        read: u64,
        slice: u64,
        recovery: u32,
    },
    /// The old set is kept (why): it holds the recorded content of a file now found bad.
    Kept(&'static str),
    /// No file with content is left: the set's PAR2 files are removed; `entries` (empty
    /// files) are what a sidecar alone covers.
    Empty(Vec<Entry>),
}

/// The result of [`make`]: the steps (even when the end is an error).
pub(super) struct Made {
    pub(super) steps: Vec<Step>,
    pub(super) end: Result<End, RepairError>,
}

/// Whether a record is a standing finding (its data may need the set's recovery data).
pub(super) fn finding(rec: &Record) -> bool {
    rec.missing_since.is_some() || rec.last_result.is_failure()
}

/// The recovery data a set's making holds at most (its recovery slices), from its records.
pub(super) fn recovery_bytes(set: &Planned, redundancy: f64) -> u64 {
    let sizes: Vec<u64> = set
        .records
        .iter()
        .filter(|r| !finding(r))
        .filter_map(|r| r.size.filter(|&s| s > 0))
        .collect();
    if sizes.is_empty() {
        return 0;
    }
    let (slice, recovery) = shape(&sizes, redundancy);
    u64::from(recovery) * slice
}

/// The slice size and the recovery slices of a set of files of `sizes` (none empty).
fn shape(sizes: &[u64], redundancy: f64) -> (u64, u32) {
    let slice = slice_size(sizes, redundancy);
    let n: u64 = sizes.iter().map(|s| s.div_ceil(slice)).sum();
    (slice, recovery_count(n, redundancy))
}

/// Makes `set` anew (`had_set`: an old one exists) holding at most `memory` bytes of
/// recovery data at once.
pub(super) fn make(ctx: Ctx<'_>, set: &Planned, had_set: bool, memory: u64) -> Made {
    let mut steps = Vec::new();
    let end = make_steps(ctx, set, had_set, memory, &mut steps);
    Made { steps, end }
}

fn left(steps: &mut Vec<Step>, path: &[u8], why: Left, record: Option<Recorded>) {
    steps.push(Step { path: path.to_vec(), why, record });
}

fn make_steps(
    ctx: Ctx<'_>,
    set: &Planned,
    had_set: bool,
    memory: u64,
    steps: &mut Vec<Step>,
) -> Result<End, RepairError> {
    let mut members: Vec<&Record> = Vec::new();
    // Each member's stamp now (its ctime tells an edit that kept the mtime from rot).
    let mut stamps: Vec<Stamp> = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    // Members sparse now (their sidecar entries say so: rebuilt sparse when missing), and
    // who may read each (so a file rebuilt where none stands is no wider).
    let mut sparse: HashSet<&[u8]> = HashSet::new();
    let mut access: HashMap<&[u8], Access> = HashMap::new();
    for rec in &set.records {
        let path = ctx.root.join(bytes_path(&rec.path));
        if finding(rec) {
            let class = if rec.missing_since.is_some() { Class::Missing } else { rec.last_result };
            left(steps, &rec.path, Left::Finding(class), None);
            continue;
        }
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => {
                let stamp = Stamp::of(&m);
                if !rec.describes(&stamp, 0) {
                    left(steps, &rec.path, Left::Changed, None);
                } else if m.len() == 0 {
                    let access = Some(Access::of(&m).with_attributes(&path));
                    entries.push(Entry { access, ..Entry::of(rec) });
                } else {
                    access.insert(&rec.path, Access::of(&m).with_attributes(&path));
                    if crate::read::is_sparse(&m) {
                        sparse.insert(&rec.path);
                    }
                    members.push(rec);
                    stamps.push(stamp);
                }
            }
            Ok(_) => left(steps, &rec.path, Left::Unreadable("not a regular file".into()), None),
            Err(e) => left(steps, &rec.path, Left::Unreadable(crate::read::io_message(&e)), None),
        }
    }
    let dir = ctx.listing.dir();
    let stem = std::ffi::OsStr::new(&set.stem);
    let par2_err = |e| RepairError::Par2Dir(dir.to_path_buf(), e);
    loop {
        if members.is_empty() {
            ctx.listing.remove(stem).map_err(par2_err)?;
            return Ok(End::Empty(entries));
        }
        let pm: Vec<Member> = members
            .iter()
            .map(|r| Member { path: ctx.root.join(bytes_path(&r.path)), name: r.path.clone() })
            .collect();
        let sizes: Vec<u64> = members.iter().map(|r| r.size.unwrap_or(0)).collect();
        let (slice, recovery) = shape(&sizes, ctx.redundancy);
        let mut hashers: Vec<Box<dyn Hasher>> = members.iter().map(|r| r.algo.hasher()).collect();
        let made = par2::make(&pm, &sizes, slice, recovery, memory, dir, stem, &mut |i, d| {
            hashers[i].update(d)
        });
        let mut made = match made {
            Ok(m) => m,
            Err(CreateError::Emit(e)) => return Err(par2_err(e)),
            Err(CreateError::Member(e)) => {
                let rec = members.remove(e.member);
                stamps.remove(e.member);
                if e.changed() {
                    left(steps, &rec.path, Left::Changed, None);
                    continue;
                }
                // A file that cannot be read (EIO) needs its recovery data most: it is a
                // finding (reported, then recorded), and a set that holds it is kept.
                let msg = crate::read::io_message(&e.error);
                let record = Recorded {
                    rec: rec.clone(),
                    class: Class::Unreadable,
                    found: None,
                    note: Some(msg.clone()),
                };
                left(steps, &rec.path, Left::Unreadable(msg), Some(record));
                if had_set {
                    return Ok(End::Kept("a file in it is unreadable"));
                }
                continue;
            }
        };
        // Rot: as recorded by size and mtime, not by content; unless the ctime moved since
        // the record, which makes it an edit that put its mtime back (changed).
        let rotten: Vec<usize> = (0..members.len())
            .filter(|&i| !hashers[i].finish().ct_eq(&members[i].digest))
            .collect();
        if !rotten.is_empty() {
            for &i in rotten.iter().rev() {
                let rec = members.remove(i);
                let stamp = stamps.remove(i);
                let found =
                    Found { digest: hashers[i].finish(), stamp, file_id: None, access: None };
                let edited = ctx.ctime.is_some_and(|slack| rec.ctime_moved(&stamp, slack));
                let (class, why) = match edited {
                    true => (Class::Changed, Left::MtimeKept),
                    false => (Class::Corrupt, Left::Corrupt),
                };
                let note = edited.then(|| {
                    let encode = |d: &crate::digest::Digest| d.encode(rec.algo.encoding);
                    crate::scrub::corrupt_note(&encode(&rec.digest), &encode(&found.digest), false)
                        + &crate::scrub::changed_note(rec.ctime_ns, stamp.ctime_ns)
                });
                let record = Recorded { rec: rec.clone(), class, found: Some(found), note };
                left(steps, &rec.path, why, Some(record));
            }
            if had_set {
                return Ok(End::Kept("a file in it is corrupt or changed"));
            }
            continue;
        }
        entries.extend(members.iter().map(|r| Entry {
            sparse: sparse.contains(&r.path[..]),
            access: access.get(&r.path[..]).copied(),
            ..Entry::of(r)
        }));
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let bytes: u64 = sizes.iter().sum();
        let read = bytes * u64::from(made.passes);
        // Its files synced here, beside the other sets being made; put in place when settled.
        made.sync().map_err(par2_err)?;
        return Ok(End::Made { pending: Box::new(made), entries, bytes, read, slice, recovery });
    }
}
