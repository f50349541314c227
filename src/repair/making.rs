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
use crate::algo::{Algorithm, Hasher};
use crate::catalog::{Class, Found, Record};
use crate::device::{Access, Stamp};
use crate::digest::Digest;
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
        let mut digests = Digests::new(&members);
        let made = par2::make(&pm, &sizes, slice, recovery, memory, dir, stem, &mut digests);
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
        let found: Vec<Digest> = (0..members.len()).map(|i| digests.finish(i)).collect();
        let rotten: Vec<usize> =
            (0..members.len()).filter(|&i| !found[i].ct_eq(&members[i].digest)).collect();
        if !rotten.is_empty() {
            for &i in rotten.iter().rev() {
                let rec = members.remove(i);
                let stamp = stamps.remove(i);
                let found = Found { digest: found[i], stamp, file_id: None, access: None };
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

/// The members' catalog digests, taken as the set is made ([`par2::Sink`]): the small
/// files read whole together, in the lanes of their algorithm's kernel where it has one
/// (BLAKE3's, MD5's, ...: most of a tree of small files), the others as their bytes come.
struct Digests {
    algos: Vec<&'static Algorithm>,
    /// A member's hasher, made at its first bytes.
    hashers: Vec<Option<Box<dyn Hasher>>>,
    /// A member's digest, taken whole.
    done: Vec<Option<Digest>>,
}

impl Digests {
    fn new(members: &[&Record]) -> Digests {
        Digests {
            algos: members.iter().map(|r| r.algo).collect(),
            hashers: members.iter().map(|_| None).collect(),
            done: vec![None; members.len()],
        }
    }

    /// Member `i`'s digest (all its bytes seen).
    fn finish(&self, i: usize) -> Digest {
        match (&self.done[i], &self.hashers[i]) {
            (Some(d), _) => *d,
            (None, Some(h)) => h.finish(),
            (None, None) => self.algos[i].digest(&[]),
        }
    }
}

impl par2::Sink for Digests {
    fn update(&mut self, i: usize, data: &[u8]) {
        self.hashers[i].get_or_insert_with(|| self.algos[i].hasher()).update(data);
    }

    fn whole(&mut self, members: &[(usize, &[u8])]) {
        use rayon::prelude::*;
        // The members of one algorithm at a time (a tree has one, mostly), a group of them
        // per task, each group in the algorithm's lanes.
        let mut left: Vec<(usize, &[u8])> = members.to_vec();
        while let Some(&(first, _)) = left.first() {
            let algo = self.algos[first];
            let (group, rest): (Vec<_>, Vec<_>) =
                left.into_iter().partition(|&(i, _)| std::ptr::eq(self.algos[i], algo));
            left = rest;
            let per = group.len().div_ceil(rayon::current_num_threads() * 4).max(64);
            let digests: Vec<Digest> = group
                .par_chunks(per)
                .flat_map_iter(|chunk| {
                    let msgs: Vec<&[u8]> = chunk.iter().map(|&(_, d)| d).collect();
                    digests_of(algo, &msgs)
                })
                .collect();
            for ((i, _), d) in group.into_iter().zip(digests) {
                self.done[i] = Some(d);
            }
        }
    }
}

/// The `algo` digests of whole messages: in the lanes where its registry row has a lane
/// family, else one at a time ([`Algorithm::digest`]).
fn digests_of(algo: &Algorithm, msgs: &[&[u8]]) -> Vec<Digest> {
    match algo.lanes {
        Some(family) => crate::algo::multibuf::digests(family, msgs),
        None => msgs.iter().map(|m| algo.digest(m)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::par2::Sink;

    #[test]
    fn digests_whole_or_in_pieces_are_each_algorithms_own() {
        let algos = ["blake3", "md5", "xxh3", "sha256", "blake3", "crc32", "md5", "sha1"];
        let recs: Vec<Record> = (0..40)
            .map(|i| Record::sample(format!("f{i}").as_bytes(), algos[i % algos.len()], None))
            .collect();
        let refs: Vec<&Record> = recs.iter().collect();
        let data: Vec<Vec<u8>> =
            (0..40).map(|i| (0..i * 397).map(|j| (j * 7 + i) as u8).collect()).collect();
        let mut d = Digests::new(&refs);
        // The even ones whole (in two calls), the odd ones in pieces of 1000 bytes.
        let whole: Vec<(usize, &[u8])> = (0..40).step_by(2).map(|i| (i, &data[i][..])).collect();
        d.whole(&whole[..7]);
        d.whole(&whole[7..]);
        for i in (1..40).step_by(2) {
            for piece in data[i].chunks(1000) {
                d.update(i, piece);
            }
        }
        for (i, rec) in recs.iter().enumerate() {
            let want = rec.algo.digest(&data[i]);
            assert_eq!(d.finish(i), want, "{} of {} bytes", rec.algo.name, data[i].len());
        }
    }
}
