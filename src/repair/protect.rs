//! `fixity protect`: PAR2 recovery data for the files the catalog records as good, kept in
//! step with the catalog.
//!
//! The catalog's records, in path order, are cut into sets (`plan`). A set whose sidecar
//! says it was made from exactly the records the catalog holds now is current and is not
//! read. A set holding a file with a standing finding (corrupt, unreadable, missing) is
//! never re-made: its recovery data is what can repair that file. Any other set is made
//! anew in one read of its files, which also computes each file's catalog digest: a file
//! whose size and mtime are as recorded but whose content is not is rot, recorded as
//! CORRUPT (reported first) and never protected; its old set, if any, is kept. A file
//! changed since the catalog recorded it, or unreadable, is left out of the set and said.
//! Sets of files no longer recorded are removed, unless they hold a finding's data.

use super::plan::{Planned, Planner, recovery_count, slice_size};
use super::sidecar::{Entry, Sidecar};
use super::{Event, Left, RepairError, sidecar_path};
use crate::algo::Hasher;
use crate::catalog::{Class, Found, Record, Store};
use crate::device::Stamp;
use crate::par2::{self, CreateError, Member};
use crate::pathtext::bytes_path;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// How to protect.
#[derive(Clone, Debug)]
pub struct ProtectOptions {
    /// Recovery data as a share of the data (0.10 for 10%).
    pub redundancy: f64,
    /// Bytes the recovery data being computed may take at once.
    pub memory: u64,
    /// Where the sets are kept (default: TREE/.fixity/par2).
    pub par2_dir: PathBuf,
    /// Sets to re-make even if current (their recovery data was found damaged).
    pub remake: Vec<String>,
}

/// What a protect run did, in numbers.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ProtectReport {
    /// Sets made (or re-made), current (not read), kept (holding a finding), removed.
    pub made: u64,
    pub current: u64,
    pub kept: u64,
    pub removed: u64,
    /// Files in sets now, and their bytes.
    pub files: u64,
    pub bytes: u64,
    /// Bytes read by this run, and the bytes of the PAR2 files written.
    pub read: u64,
    pub written: u64,
    /// Bytes of recovery slice data written.
    pub recovery: u64,
    /// Files left out (corrupt, changed, unreadable; not those with a standing finding).
    pub left_out: u64,
    /// Of those, found corrupt.
    pub corrupt: u64,
}

/// Protects the tree at `root` whose records `store` holds.
pub fn protect(
    root: &Path,
    store: &mut dyn Store,
    opts: &ProtectOptions,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<ProtectReport, RepairError> {
    // The catalog's tree, or refused before anything is made (see `Store::claim_tree`).
    store.claim_tree(root)?;
    let existed = opts.par2_dir.exists();
    std::fs::create_dir_all(&opts.par2_dir)
        .map_err(|e| RepairError::Par2Dir(opts.par2_dir.clone(), e))?;
    let canonical = |p: &Path| crate::sys::canonicalize(p);
    if let (Ok(dir), Ok(tree)) = (canonical(&opts.par2_dir), canonical(root))
        && dir.starts_with(&tree)
        && !dir.starts_with(tree.join(crate::pathtext::STATE_DIR))
    {
        if !existed {
            let _ = std::fs::remove_dir(&opts.par2_dir);
        }
        return Err(RepairError::InsideTree(opts.par2_dir.clone()));
    }
    let now = store.clock()?;
    store.start_run("protect", now)?;
    // Volumes of a run killed before its set was complete: nobody writes them now (the
    // run lock is held).
    if let Ok(entries) = std::fs::read_dir(&opts.par2_dir) {
        for e in entries.flatten() {
            if crate::output::foreign_temp_name(e.file_name().as_encoded_bytes()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    let ctime = crate::device::times(root).ctime_within(store.ctime_slack_ns());
    let report = ProtectReport::default();
    let mut job = Job { root, opts, now, ctime, report, stems: HashSet::new() };
    let mut planner = Planner::default();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page = store.records_page(after.as_deref(), 4096)?;
        let Some(last) = page.last() else { break };
        after = Some(last.path.clone());
        for rec in page {
            for set in planner.push(rec) {
                job.set(store, set, on)?;
            }
        }
    }
    if let Some(set) = planner.close() {
        job.set(store, set, on)?;
    }
    job.sweep(store, on)?;
    store.commit()?;
    let summary = serde_json::to_string(&job.report).unwrap_or_default();
    store.finish_run(true, &summary)?;
    store.commit()?;
    Ok(job.report)
}

struct Job<'a> {
    root: &'a Path,
    opts: &'a ProtectOptions,
    now: i64,
    /// The ctime rule (the store's slack; `None` where ctimes are not trusted).
    ctime: Option<i128>,
    report: ProtectReport,
    /// The stems planned this run.
    stems: HashSet<String>,
}

/// Whether a record is a standing finding (its data may need the set's recovery data).
fn finding(rec: &Record) -> bool {
    rec.missing_since.is_some() || rec.last_result.is_failure()
}

impl Job<'_> {
    fn set(
        &mut self,
        store: &mut dyn Store,
        set: Planned,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), RepairError> {
        let dir = &self.opts.par2_dir;
        self.stems.insert(set.stem.clone());
        let side = sidecar_path(dir, &set.stem);
        let old = Sidecar::read(&side).ok().flatten();
        let algo = store.algorithm().name;
        let now_entries: Vec<Entry> = set.records.iter().map(Entry::of).collect();
        let index = dir.join(format!("{}.par2", set.stem));
        let current = !self.opts.remake.contains(&set.stem)
            && old.as_ref().is_some_and(|s| {
                s.entries.len() == now_entries.len()
                    && s.entries.iter().zip(&now_entries).all(|(a, b)| a.same_content(b))
                    && s.algorithm == algo
                    && (s.set.is_empty() || index.exists())
            });
        let count = set.records.len() as u64;
        let bytes: u64 = set.records.iter().map(|r| r.size.unwrap_or(0)).sum();
        if current {
            if let Some(old) = old.filter(|s| !s.sparse_known) {
                self.note_sparse(old, &side)?;
            }
            self.report.current += 1;
            self.report.files += count;
            self.report.bytes += bytes;
            on(Event::SetCurrent { stem: &set.stem, files: count as usize });
            return Ok(());
        }
        // The old set holds the recorded content of a file with a finding: keep it.
        let holds = |s: &Sidecar| {
            set.records
                .iter()
                .filter(|r| finding(r))
                .any(|r| s.entries.iter().any(|e| e.path == r.path))
        };
        if old.as_ref().is_some_and(holds) {
            self.report.kept += 1;
            let why = if self.opts.remake.contains(&set.stem) {
                "its recovery data is damaged, but it holds a file with a finding: re-made once \
                 that is resolved"
            } else {
                "it holds a file with a finding"
            };
            on(Event::SetKept { stem: &set.stem, why });
            return Ok(());
        }
        self.make(store, set, old.is_some(), on)
    }

    /// Writes the version-1 or 2 sidecar `old` of a current set again with the sparse
    /// and access columns: whether each file is sparse now (it is as recorded, so as when
    /// the set was made) and who may read it, for a repair to rebuild it so. The set
    /// itself is not read or made again.
    fn note_sparse(&self, mut old: Sidecar, side: &Path) -> Result<(), RepairError> {
        for e in &mut old.entries {
            let path = self.root.join(bytes_path(&e.path));
            let meta = std::fs::symlink_metadata(&path).ok().filter(|m| m.is_file());
            e.sparse = meta.as_ref().is_some_and(crate::read::is_sparse);
            e.access = meta.as_ref().map(|m| crate::device::Access::of(m).with_attributes(&path));
        }
        old.sparse_known = true;
        old.write(side).map_err(|e| RepairError::Par2Dir(self.opts.par2_dir.clone(), e))
    }

    /// Makes the set anew from its files as they are, when they are as recorded.
    fn make(
        &mut self,
        store: &mut dyn Store,
        set: Planned,
        had_set: bool,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), RepairError> {
        let mut members: Vec<&Record> = Vec::new();
        // Each member's stamp now (its ctime tells an edit that kept the mtime from rot).
        let mut stamps: Vec<Stamp> = Vec::new();
        let mut entries: Vec<Entry> = Vec::new();
        // Members sparse now (their sidecar entries say so: rebuilt sparse when missing),
        // and who may read each (so a file rebuilt where none stands is no wider).
        let mut sparse: HashSet<&[u8]> = HashSet::new();
        let mut access: HashMap<&[u8], crate::device::Access> = HashMap::new();
        for rec in &set.records {
            let path = self.root.join(bytes_path(&rec.path));
            if finding(rec) {
                let class =
                    if rec.missing_since.is_some() { Class::Missing } else { rec.last_result };
                self.left(on, &rec.path, Left::Finding(class));
                continue;
            }
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_file() => {
                    let stamp = Stamp::of(&m);
                    if !rec.describes(&stamp, 0) {
                        self.left(on, &rec.path, Left::Changed);
                    } else if m.len() == 0 {
                        let access = Some(crate::device::Access::of(&m).with_attributes(&path));
                        entries.push(Entry { access, ..Entry::of(rec) });
                    } else {
                        let a = crate::device::Access::of(&m).with_attributes(&path);
                        access.insert(&rec.path, a);
                        if crate::read::is_sparse(&m) {
                            sparse.insert(&rec.path);
                        }
                        members.push(rec);
                        stamps.push(stamp);
                    }
                }
                Ok(_) => self.left(on, &rec.path, Left::Unreadable("not a regular file".into())),
                Err(e) => self.left(on, &rec.path, Left::Unreadable(crate::read::io_message(&e))),
            }
        }
        let dir = self.opts.par2_dir.clone();
        loop {
            if members.is_empty() {
                par2::remove(&dir, std::ffi::OsStr::new(&set.stem))
                    .map_err(|e| RepairError::Par2Dir(dir.clone(), e))?;
                break;
            }
            let pm: Vec<Member> = members
                .iter()
                .map(|r| Member { path: self.root.join(bytes_path(&r.path)), name: r.path.clone() })
                .collect();
            let sizes: Vec<u64> = members.iter().map(|r| r.size.unwrap_or(0)).collect();
            let slice = slice_size(&sizes, self.opts.redundancy);
            let n: u64 = sizes.iter().map(|s| s.div_ceil(slice)).sum();
            let recovery = recovery_count(n, self.opts.redundancy);
            let mut hashers: Vec<Box<dyn Hasher>> =
                members.iter().map(|r| r.algo.hasher()).collect();
            let stem = std::ffi::OsStr::new(&set.stem);
            let memory = self.opts.memory;
            let made = par2::make(&pm, &sizes, slice, recovery, memory, &dir, stem, &mut |i, d| {
                hashers[i].update(d)
            });
            let made = match made {
                Ok(m) => m,
                Err(CreateError::Emit(e)) => return Err(RepairError::Par2Dir(dir.clone(), e)),
                Err(CreateError::Member(e)) => {
                    let rec = members.remove(e.member);
                    stamps.remove(e.member);
                    if e.changed() {
                        self.left(on, &rec.path, Left::Changed);
                        continue;
                    }
                    // A file that cannot be read (EIO) needs its recovery data most: it is a
                    // finding (reported, then recorded), and a set that holds it is kept.
                    let msg = crate::read::io_message(&e.error);
                    self.left(on, &rec.path, Left::Unreadable(msg.clone()));
                    store.record_check(rec, Class::Unreadable, None, Some(&msg), self.now)?;
                    if had_set {
                        self.report.kept += 1;
                        on(Event::SetKept { stem: &set.stem, why: "a file in it is unreadable" });
                        return Ok(());
                    }
                    continue;
                }
            };
            self.report.read += sizes.iter().sum::<u64>() * made.passes as u64;
            // Rot: as recorded by size and mtime, not by content; unless the ctime moved
            // since the record, which makes it an edit that put its mtime back (changed).
            let rotten: Vec<usize> = (0..members.len())
                .filter(|&i| !hashers[i].finish().ct_eq(&members[i].digest))
                .collect();
            if !rotten.is_empty() {
                for &i in rotten.iter().rev() {
                    let rec = members.remove(i);
                    let stamp = stamps.remove(i);
                    let found =
                        Found { digest: hashers[i].finish(), stamp, file_id: None, access: None };
                    let edited = self.ctime.is_some_and(|slack| rec.ctime_moved(&stamp, slack));
                    let (class, left) = match edited {
                        true => (Class::Changed, Left::MtimeKept),
                        false => (Class::Corrupt, Left::Corrupt),
                    };
                    // Reported, then recorded.
                    self.report.corrupt += u64::from(!edited);
                    self.left(on, &rec.path, left);
                    let note = edited.then(|| {
                        let encode = |d: &crate::digest::Digest| d.encode(rec.algo.encoding);
                        crate::scrub::corrupt_note(
                            &encode(&rec.digest),
                            &encode(&found.digest),
                            false,
                        ) + &crate::scrub::changed_note(rec.ctime_ns, stamp.ctime_ns)
                    });
                    store.record_check(rec, class, Some(&found), note.as_deref(), self.now)?;
                }
                if had_set {
                    self.report.kept += 1;
                    on(Event::SetKept {
                        stem: &set.stem,
                        why: "a file in it is corrupt or changed",
                    });
                    return Ok(());
                }
                continue;
            }
            // Nothing of the new set was in place until now: rot leaves the old one whole.
            let written = made.finish().map_err(|e| RepairError::Par2Dir(dir.clone(), e))?;
            entries.extend(members.iter().map(|r| Entry {
                sparse: sparse.contains(&r.path[..]),
                access: access.get(&r.path[..]).copied(),
                ..Entry::of(r)
            }));
            entries.sort_by(|a, b| a.path.cmp(&b.path));
            let side = Sidecar {
                set: crate::digest::hex_encode(&written.set_id, false),
                algorithm: store.algorithm().name.to_string(),
                redundancy: self.opts.redundancy,
                recovery,
                entries: std::mem::take(&mut entries),
                sparse_known: true,
            };
            side.write(&sidecar_path(&dir, &set.stem))
                .map_err(|e| RepairError::Par2Dir(dir.clone(), e))?;
            let bytes: u64 = sizes.iter().sum();
            self.report.made += 1;
            self.report.files += side.entries.len() as u64;
            self.report.bytes += bytes;
            self.report.written += written.bytes;
            self.report.recovery += written.recovery_bytes;
            on(Event::SetMade {
                stem: &set.stem,
                files: side.entries.len(),
                bytes,
                par2_bytes: written.bytes,
                slice,
                recovery_slices: recovery,
            });
            return Ok(());
        }
        // Only empty files (or none): a sidecar alone says what the set covers.
        if !entries.is_empty() {
            let side = Sidecar {
                set: String::new(),
                algorithm: store.algorithm().name.to_string(),
                redundancy: self.opts.redundancy,
                recovery: 0,
                entries,
                sparse_known: true,
            };
            side.write(&sidecar_path(&dir, &set.stem))
                .map_err(|e| RepairError::Par2Dir(dir.clone(), e))?;
            self.report.files += side.entries.len() as u64;
        } else {
            let _ = std::fs::remove_file(sidecar_path(&dir, &set.stem));
        }
        Ok(())
    }

    fn left(&mut self, on: &mut dyn FnMut(Event<'_>), path: &[u8], why: Left) {
        // A standing finding is reported by scan and verify already: not a new problem.
        if !matches!(why, Left::Finding(_)) {
            self.report.left_out += 1;
        }
        on(Event::Left { path, why });
    }

    /// Removes sets not planned this run, unless one holds a file with a finding.
    fn sweep(
        &mut self,
        store: &dyn Store,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), RepairError> {
        let dir = &self.opts.par2_dir;
        let stale = super::sidecar::all(dir)
            .into_iter()
            .filter(|(stem, _)| !self.stems.contains(stem) && stem.starts_with("set-"));
        for (stem, side) in stale {
            let mut holds = false;
            for e in side.iter().flat_map(|s| &s.entries) {
                if store.lookup(&e.path)?.as_ref().is_some_and(finding) {
                    holds = true;
                    break;
                }
            }
            if holds {
                self.report.kept += 1;
                on(Event::SetKept { stem: &stem, why: "it holds a file with a finding" });
                continue;
            }
            par2::remove(dir, std::ffi::OsStr::new(&stem))
                .and_then(|()| std::fs::remove_file(sidecar_path(dir, &stem)))
                .map_err(|e| RepairError::Par2Dir(dir.clone(), e))?;
            self.report.removed += 1;
            on(Event::SetRemoved { stem: &stem });
        }
        Ok(())
    }
}
