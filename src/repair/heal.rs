//! `fixity repair`: rebuild files with findings (corrupt, missing, unreadable) as the
//! catalog recorded them, from a replica (`--from`) or from the recovery sets.
//!
//! Each target is looked at first: a file that reads as recorded now has nothing to
//! repair (its finding ends); a file whose size or mtime changed is an edit the catalog
//! has not recorded, never overwritten. The others are taken from the replica when a file
//! there has the recorded digest (at the same path, else found by digest among the
//! replica's files of the same size), then from the recovery set that protects them: the
//! set is checked against the tree, its lost slices computed, and each target written
//! only when the result has the recorded digest (`install`). A repaired file's finding
//! ends, with the repair as its note in the history; an unrepairable one keeps its
//! finding, and the event says why.

use super::install::install;
use super::replica;
use super::sidecar::Sidecar;
use super::{Event, RepairError, Source};
use crate::catalog::{Class, Record, Store};
use crate::device::Stamp;
use crate::par2::{self, Placed, Set, State};
use crate::pathtext::bytes_path;
use crate::pipeline::hash_file;
use crate::read::{OpenMode, ReadError, ReadOptions};
use crate::sys::OsStrExt;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// How to repair.
#[derive(Clone, Debug)]
pub struct RepairOptions {
    /// Where the sets are (default: TREE/.fixity/par2).
    pub par2_dir: PathBuf,
    /// Bytes the lost slices may take while computed.
    pub memory: u64,
    /// A replica of the tree to take good copies from (never written).
    pub from: Option<PathBuf>,
    /// Keep each damaged file aside (TREE/.fixity/damaged/RUN/PATH) before replacing it.
    pub keep_damaged: bool,
    /// Only these files (paths relative to the tree); all files with findings if empty.
    pub paths: Vec<Vec<u8>>,
    /// Write the recorded content over the files of `paths` even where they were edited
    /// since the catalog recorded them (`repair --force PATH`): changed with the mtime
    /// kept, or with another size or mtime. Never for files not named.
    pub force: bool,
}

/// What a repair run did, in numbers.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RepairReport {
    pub targets: u64,
    pub repaired: u64,
    pub from_par2: u64,
    pub from_replica: u64,
    pub intact: u64,
    pub unrepaired: u64,
}

/// What a target is now.
enum Now {
    /// Reads as recorded.
    Intact,
    /// An edit, not to be overwritten (why).
    Edited(&'static str),
    /// Missing, unreadable or not as recorded: to repair.
    Damaged,
}

const EDITED: &str = "changed since the catalog recorded it (an edit?): not overwritten; \
                      `fixity scan` records it";
const MTIME_KEPT: &str = "edited since the catalog recorded it, its mtime put back (its ctime \
                          moved): not overwritten; `fixity accept` records the change, `fixity \
                          repair --force PATH` puts the recorded content back";

/// What the file of `rec` is now, opened beneath the tree (`base`, the directory at
/// `root`): a symbolic link on the way out of it is not the file. A file whose ctime
/// moved since the record (`ctime`: the rule, `None` where ctimes are not trusted), or
/// recorded CHANGED, is an edit that kept its mtime. With `force` (the file named), an
/// edit is not spared: it reads as recorded, or it is damaged.
fn assess(base: &File, root: &Path, rec: &Record, ctime: Option<i128>, force: bool) -> Now {
    let opened = crate::confine::open_under(base, &bytes_path(&rec.path));
    let Ok(f) = opened else { return Now::Damaged };
    let m = match f.metadata() {
        Ok(m) if m.is_file() => m,
        Ok(_) => return Now::Edited(EDITED),
        Err(_) => return Now::Damaged,
    };
    let stamp = Stamp::of(&m);
    if !force {
        if !rec.describes(&stamp, 0) {
            return Now::Edited(EDITED);
        }
        let moved = ctime.is_some_and(|slack| rec.ctime_moved(&stamp, slack));
        if moved || rec.last_result == Class::Changed {
            return Now::Edited(MTIME_KEPT);
        }
    }
    // Read as every read of the engine: a file that changes meanwhile is an edit.
    let path = root.join(bytes_path(&rec.path));
    let mode = OpenMode::Walked { follow: false };
    let mut buf = Vec::new();
    match hash_file(&f, &path, mode, &[rec.algo], &mut buf, &ReadOptions::default(), None) {
        Ok(h) if h.digests[0].ct_eq(&rec.digest) => Now::Intact,
        Err(ReadError::Changed) => Now::Edited(EDITED),
        _ => Now::Damaged,
    }
}

/// Repairs the files with findings of the tree at `root` (or `opts.paths`).
pub fn repair(
    root: &Path,
    store: &mut dyn Store,
    opts: &RepairOptions,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<RepairReport, RepairError> {
    // The catalog's tree, or refused before a file is written beneath a directory its
    // records' paths are not relative to (see `Store::claim_tree`).
    store.claim_tree(root)?;
    let now = store.clock()?;
    store.start_run("repair", now)?;
    let mut report = RepairReport::default();
    let mut targets = Vec::new();
    if opts.paths.is_empty() {
        let mut pages = crate::catalog::RecordPages::after(None);
        while let Some(page) = pages.next(store)? {
            targets.extend(
                page.into_iter()
                    .filter(|r| r.missing_since.is_some() || r.last_result.is_failure()),
            );
        }
    } else {
        for p in &opts.paths {
            match store.lookup(p)? {
                Some(r) => targets.push(r),
                None => {
                    report.unrepaired += 1;
                    on(Event::Unrepaired { path: p, why: "not in the catalog".into() });
                }
            }
        }
    }
    let base = crate::sys::open_dir(root).map_err(|e| RepairError::Tree(root.to_path_buf(), e))?;
    let ctime = crate::device::times(root).ctime_within(store.ctime_slack_ns());
    let force = opts.force && !opts.paths.is_empty();
    let mut todo = Vec::new();
    for rec in targets {
        report.targets += 1;
        match assess(&base, root, &rec, ctime, force) {
            Now::Intact => {
                if rec.missing_since.is_some() {
                    store.record_present(&rec.path)?;
                }
                if rec.last_result != Class::Ok || rec.missing_since.is_some() {
                    store.record_check(&rec, Class::Ok, None, None, now)?;
                }
                report.intact += 1;
                on(Event::Intact { path: &rec.path });
            }
            Now::Edited(why) => {
                report.unrepaired += 1;
                on(Event::Unrepaired { path: &rec.path, why: why.to_string() });
            }
            Now::Damaged => todo.push(rec),
        }
    }
    let keep = opts.keep_damaged.then_some(now);
    let done = |store: &mut dyn Store, rec: &Record, note: String| -> Result<(), RepairError> {
        if rec.missing_since.is_some() {
            store.record_present(&rec.path)?;
        }
        store.record_check(rec, Class::Ok, None, Some(&note), now)?;
        Ok(())
    };
    if todo.is_empty() {
        return finish(store, report);
    }
    // What the sets' sidecars say of the targets (their sets, and which were sparse).
    let sidecars: BTreeMap<String, Sidecar> = super::sidecar::all(&opts.par2_dir)
        .into_iter()
        .filter_map(|(stem, s)| Some((stem, s?)))
        .collect();
    let sparse = sparse_when_protected(&sidecars, &todo);
    // A record that does not say who may read its file (made before fixity kept it) takes
    // what the sidecar of its recorded content says: a file rebuilt is no wider.
    let mut todo: Vec<Record> = todo
        .into_iter()
        .map(|rec| match rec.access {
            Some(_) => rec,
            None => {
                let access = access_when_protected(&sidecars, &rec);
                Record { access, ..rec }
            }
        })
        .collect();
    if let Some(replica) = &opts.from {
        let mut left = Vec::new();
        let found =
            replica::find(replica, &todo).map_err(|e| RepairError::Tree(replica.clone(), e))?;
        for (rec, from) in todo.into_iter().zip(found) {
            let Some(from) = from else {
                left.push(rec);
                continue;
            };
            // A sparse replica is copied sparse, its holes as zeros, not read; so is a
            // file that was sparse when its set was made, whatever the copy's blocks (a
            // download or a copy by a tool that fills holes).
            let holes = sparse.contains(&rec.path)
                || std::fs::metadata(&from).is_ok_and(|m| crate::read::is_sparse(&m));
            let copied = install(root, &rec, keep, holes, &mut |w| {
                let f = File::open(&from)?;
                io::copy(&mut crate::read::Zeroed::new(&f, &f.metadata()?, 0), w).map(drop)
            });
            match copied {
                Ok(note) => {
                    done(store, &rec, format!("repaired from replica {}", from.display()))?;
                    report.repaired += 1;
                    report.from_replica += 1;
                    let from = Source::Replica { path: &from };
                    on(Event::Repaired { path: &rec.path, from, note });
                }
                Err(_) => left.push(rec),
            }
        }
        todo = left;
    }
    if todo.is_empty() {
        return finish(store, report);
    }
    // The sets, through their sidecars; sets without one (par2cmdline's) by their names.
    let groups = group(&opts.par2_dir, &sidecars, &todo)?;
    for (key, members) in groups {
        let Some(key) = key else {
            for rec in members {
                report.unrepaired += 1;
                let why = if opts.from.is_some() {
                    "no copy with the recorded digest in the replica, and no recovery set holds it"
                } else {
                    "no recovery set holds it (`fixity protect` makes them)"
                };
                on(Event::Unrepaired { path: &rec.path, why: why.into() });
            }
            continue;
        };
        let (stem, set) = key;
        let result = from_set(&base, root, &set, &members, &sparse, opts.memory, keep);
        for (rec, res) in members.iter().zip(result) {
            match res {
                Ok(note) => {
                    done(store, rec, format!("repaired from recovery set {stem}"))?;
                    report.repaired += 1;
                    report.from_par2 += 1;
                    let from = Source::Par2 { set: &stem };
                    on(Event::Repaired { path: &rec.path, from, note });
                }
                Err(why) => {
                    report.unrepaired += 1;
                    on(Event::Unrepaired { path: &rec.path, why });
                }
            }
        }
    }
    finish(store, report)
}

fn finish(store: &mut dyn Store, report: RepairReport) -> Result<RepairReport, RepairError> {
    store.commit()?;
    store
        .finish_run(report.unrepaired == 0, &serde_json::to_string(&report).unwrap_or_default())?;
    store.commit()?;
    Ok(report)
}

/// A set (its name and itself; `None`: no set holds them) and the targets it holds.
type Group = (Option<(String, Set)>, Vec<Record>);

/// Targets grouped by the set that holds them (`None`: no set does).
#[derive(Default)]
struct Groups {
    list: Vec<Group>,
    index: HashMap<Option<String>, usize>,
}

impl Groups {
    fn add(&mut self, key: Option<(String, Set)>, recs: impl IntoIterator<Item = Record>) {
        let name = key.as_ref().map(|k| k.0.clone());
        let i = *self.index.entry(name).or_insert_with(|| {
            self.list.push((key, Vec::new()));
            self.list.len() - 1
        });
        self.list[i].1.extend(recs);
    }
}

/// Whether the sidecar entry `e` describes the recorded content of `rec` (a sidecar of
/// another version of the file does not hold it).
fn describes(e: &super::sidecar::Entry, rec: &Record) -> bool {
    e.path == rec.path && e.digest == crate::digest::hex_encode(rec.digest.as_bytes(), false)
}

/// The targets a sidecar of their recorded content says were sparse when their set was
/// made: rebuilt sparse, from a set or a replica.
fn sparse_when_protected(
    sidecars: &BTreeMap<String, Sidecar>,
    todo: &[Record],
) -> HashSet<Vec<u8>> {
    let wanted: HashMap<&[u8], &Record> = todo.iter().map(|r| (&r.path[..], r)).collect();
    let entries = sidecars.values().flat_map(|s| &s.entries);
    entries
        .filter(|e| e.sparse && wanted.get(&e.path[..]).is_some_and(|rec| describes(e, rec)))
        .map(|e| e.path.clone())
        .collect()
}

/// Who could read `rec`'s file when a set of its recorded content was made, if a
/// sidecar says.
fn access_when_protected(
    sidecars: &BTreeMap<String, Sidecar>,
    rec: &Record,
) -> Option<crate::device::Access> {
    let entries = sidecars.values().flat_map(|s| &s.entries);
    entries.filter(|e| describes(e, rec)).find_map(|e| e.access)
}

/// The targets by the set that holds them (`None`: no set does).
fn group(
    dir: &Path,
    sidecars: &BTreeMap<String, Sidecar>,
    todo: &[Record],
) -> Result<Vec<Group>, RepairError> {
    let fail = |e| RepairError::Par2Dir(dir.to_path_buf(), e);
    let wanted: HashMap<&[u8], &Record> = todo.iter().map(|r| (&r.path[..], r)).collect();
    let mut by_stem: BTreeMap<String, Vec<Record>> = BTreeMap::new();
    let mut placed: HashMap<Vec<u8>, String> = HashMap::new();
    for (stem, s) in sidecars {
        for e in &s.entries {
            if let Some(rec) = wanted.get(&e.path[..])
                && describes(e, rec)
                && !placed.contains_key(&e.path)
            {
                placed.insert(e.path.clone(), stem.clone());
                by_stem.entry(stem.clone()).or_default().push((*rec).clone());
            }
        }
    }
    let mut groups = Groups::default();
    let mut loose: Vec<Record> = Vec::new();
    let listing = if by_stem.is_empty() {
        par2::Listing::default()
    } else {
        par2::Listing::read(dir).map_err(fail)?
    };
    for (stem, recs) in by_stem {
        let files = listing.files(std::ffi::OsStr::new(&stem));
        let (sets, _) = par2::load(&files);
        let want = &sidecars[&stem].set;
        let set = sets.into_iter().find(|s| crate::digest::hex_encode(&s.id, false) == *want);
        match set {
            Some(set) => groups.add(Some((stem, set)), recs),
            // Only empty files (no PAR2 set), or the set's files are gone: by name below.
            None => loose.extend(recs),
        }
    }
    loose.extend(todo.iter().filter(|r| !placed.contains_key(&r.path)).cloned());
    if !loose.is_empty() {
        // Any set in the directory that names the file (par2cmdline's too).
        let mut par2_files = Vec::new();
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries {
                let name = e.map_err(fail)?.file_name();
                if name.as_bytes().ends_with(b".par2") {
                    par2_files.push(dir.join(&name));
                }
            }
        }
        let (sets, _) = par2::load(&par2_files);
        for rec in loose {
            let holder = sets.iter().find(|s| s.descs.values().any(|d| d.name == rec.path));
            let key = match holder {
                Some(s) => Some((short_id(s), s.clone())),
                None if rec.size == Some(0) => Some((String::from("(empty)"), empty_set())),
                None => None,
            };
            groups.add(key, [rec]);
        }
    }
    Ok(groups.list)
}

fn short_id(s: &Set) -> String {
    // The index file's name when it holds packets of the set, else the first volume's.
    let mut names: Vec<String> = s
        .volumes
        .iter()
        .filter_map(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    names.sort_by_key(|n| (n.contains(".vol"), n.len()));
    let name = names.into_iter().next();
    name.unwrap_or_else(|| crate::digest::hex_encode(&s.id, false))
}

/// A set with no files: what holds empty files (their content is none).
fn empty_set() -> Set {
    par2::empty_set()
}

/// Rebuilds `members` from `set`: one result per member. Those in `sparse` (sparse when
/// the set was made) are written with holes, as one sparse in place is.
fn from_set(
    base: &File,
    root: &Path,
    set: &Set,
    members: &[Record],
    sparse: &HashSet<Vec<u8>>,
    memory: u64,
    keep: Option<i64>,
) -> Vec<Result<Option<String>, String>> {
    let layout = set.layout();
    let states: Vec<State> = layout
        .iter()
        .map(|(_, f, _)| match f {
            Some((d, i)) => par2::check_file(base, d, i, set.main.slice_size),
            None => State::Unreadable("described nowhere".into()),
        })
        .collect();
    let placed: Vec<Placed> = layout
        .iter()
        .zip(&states)
        .filter_map(|((_, f, first), state)| {
            f.map(|(desc, _)| Placed { desc, first: *first, state })
        })
        .collect();
    let needs_solution = members.iter().any(|r| r.size != Some(0));
    let solution =
        if needs_solution { Some(par2::solve(set, base, &placed, memory)) } else { None };
    members
        .iter()
        .map(|rec| {
            if rec.size == Some(0) {
                return install(root, rec, keep, false, &mut |_| Ok(()));
            }
            let Some(p) = placed.iter().find(|p| p.desc.name == rec.path) else {
                return Err("its recovery set does not describe it".into());
            };
            let solution = match solution.as_ref().expect("solved for non-empty files") {
                Ok(s) => s,
                Err(e) => return Err(e.to_string()),
            };
            install(root, rec, keep, sparse.contains(&rec.path), &mut |w| {
                let md5 = solution.write_file(base, p, w)?;
                if md5 != p.desc.md5 {
                    return Err(io::Error::other("the rebuilt file's MD5 is not the set's"));
                }
                Ok(())
            })
        })
        .collect()
}
