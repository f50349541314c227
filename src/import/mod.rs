//! `fixity import`: filling a tree's catalog from digests other tools already took, so
//! a migration to fixity costs no re-hashing. Each imported record is marked "imported,
//! not yet verified by fixity" ([`crate::catalog::Record::imported`]) until a
//! verification reads the file and finds it as recorded.
//!
//! One file per source implements [`Importer`] (it reads the source and hands over
//! [`Entry`]s); [`run`] checks each entry against the tree and records it, and
//! [`uncovered`] lists the tree's files that got no digest. Sources:
//!
//! - [`xattrs`]: `user.checksum.ALGO` (checksum scripts) or cshatag's `user.shatag.*`;
//! - [`streams`]: RapidCRC-Unicode's and TeraCopy's NTFS alternate data streams;
//! - [`chkbit`]: chkbit's `.chkbit` index per directory, or its `.chkbit-db` file;
//! - [`bitrot`]: bitrot's `.bitrot.db` (SQLite);
//! - [`scorch`]: scorch's database (CSV, gzip-compressed);
//! - [`manifest`]: any checksum manifest `fixity check` reads.
//!
//! An entry is refused, never imported silently, when its path leaves the tree, its file
//! is missing or not a regular file, its recorded size or mtime is not the file's now,
//! or it has no digest in the catalog's algorithm ([`Refusal`]).

pub mod bitrot;
pub mod chkbit;
mod json;
pub mod manifest;
pub mod scorch;
pub mod streams;
pub mod xattrs;

/// For the fuzz target `import_sources`: the entries one chkbit index's text gives, read
/// as the index of directory `dir`.
#[doc(hidden)]
pub fn fuzz_chkbit_index(text: &[u8], dir: &[u8]) -> Vec<Entry> {
    chkbit::index_entries(text, dir)
}

/// For the fuzz target `import_sources`: the rows of a scorch database's CSV text.
#[doc(hidden)]
pub fn fuzz_scorch_rows(text: &[u8]) -> Vec<Result<Vec<Vec<u8>>, String>> {
    scorch::rows(text)
}

use crate::algo::Algorithm;
use crate::catalog::{Found, Store, StoreError};
use crate::device::Stamp;
use crate::digest::Digest;
use crate::scrub::{excluded, full_path, rel_of};
use crate::sys::OsStrExt;
use crate::walk::{Exclude, WalkEvent, WalkOptions, default_threads, walk};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// How an import walks a tree: every file, symbolic links as themselves (never followed
/// out of it), leaving out `exclude`.
pub(crate) fn tree_walk(exclude: &Exclude) -> WalkOptions {
    WalkOptions { follow: false, exclude: exclude.clone(), threads: default_threads(), stat: false }
}

/// A source of digests.
pub trait Importer {
    /// The tool's name, kept with each imported record (`chkbit`, `bitrot` ...).
    fn name(&self) -> &'static str;
    /// The algorithm of every digest, when the source has only one (known without
    /// reading it).
    fn algorithm(&self) -> Option<&'static Algorithm> {
        None
    }
    /// Fails, saying why, when the source cannot be read at all (checked before a
    /// catalog is made for it).
    fn ready(&self) -> Result<(), String> {
        Ok(())
    }
    /// Whether the source holds other trees' files too (absolute paths outside the tree
    /// are then passed over, not refused).
    fn holds_other_trees(&self) -> bool {
        false
    }
    /// Hands every entry of the source to `each`, in any order. May be called more than
    /// once (the first time to learn the algorithms). `Err`: the source cannot be read.
    fn entries(&mut self, each: &mut dyn FnMut(Entry)) -> Result<(), String>;
}

/// Where an entry says its file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryPath {
    /// Relative to the tree's root (`./` and empty components allowed).
    Relative(Vec<u8>),
    /// An absolute path (scorch's): a file under the tree, or one of another tree.
    Absolute(Vec<u8>),
}

/// A file's mtime as a source recorded it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mtime {
    /// `value` whole units of `unit_ns` since the epoch (chkbit's ms, bitrot's seconds,
    /// cshatag's ns), taken by truncation; one unit of slack either way (Python computes
    /// them through a float).
    Units { value: i128, unit_ns: i128 },
    /// Seconds as a float (Python's `st_mtime`, scorch's).
    Seconds(f64),
}

impl Mtime {
    /// Whether a file whose mtime is `ns` is the version recorded.
    pub fn matches(&self, ns: i128) -> bool {
        match *self {
            Mtime::Units { value, unit_ns } => (ns.div_euclid(unit_ns.max(1)) - value).abs() <= 1,
            Mtime::Seconds(s) => {
                let now = ns.div_euclid(1_000_000_000) as f64
                    + ns.rem_euclid(1_000_000_000) as f64 * 1e-9;
                (now - s).abs() <= 2e-6
            }
        }
    }
}

/// One record of a source.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Where in the source, for messages (`photos/.chkbit`, `line 12`); may be empty.
    pub at: String,
    pub path: EntryPath,
    /// The digests the source has for the file (several for hashdeep's columns).
    pub digests: Vec<(&'static Algorithm, Digest)>,
    /// Algorithms named by the source that fixity does not compute (`adler32`).
    pub unknown: Option<String>,
    pub size: Option<u64>,
    pub mtime: Option<Mtime>,
    /// Why the entry cannot be read (a malformed line): it is refused.
    pub problem: Option<String>,
}

impl Entry {
    /// An entry for `path` with one digest.
    pub fn new(at: String, path: EntryPath, digest: Option<(&'static Algorithm, Digest)>) -> Entry {
        Entry {
            at,
            path,
            digests: digest.into_iter().collect(),
            unknown: None,
            size: None,
            mtime: None,
            problem: None,
        }
    }

    /// An entry that could not be read.
    pub fn malformed(at: String, path: EntryPath, why: String) -> Entry {
        Entry { problem: Some(why), ..Entry::new(at, path, None) }
    }
}

/// Why an entry was not imported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The path leaves the tree (`..`, an absolute path in a relative source), goes
    /// through a symbolic link, or into fixity's own `.fixity` directory.
    Escapes(&'static str),
    /// No file there.
    Missing,
    /// Something else than a regular file is there (what).
    NotAFile(&'static str),
    /// The size the source recorded is not the file's.
    Size { recorded: u64, now: u64 },
    /// The mtime the source recorded is not the file's: edited since.
    Changed,
    /// No digest in the catalog's algorithm (the ones it has).
    Algorithm(String),
    /// The entry could not be read.
    Malformed(String),
    /// The file could not be looked at (the error).
    Unreadable(String),
    /// The source lists the file a second time (the first one counts).
    Duplicate,
}

impl Refusal {
    /// A short name (JSON's `class`, the first column of a line).
    pub fn key(&self) -> &'static str {
        match self {
            Refusal::Escapes(_) => "escapes",
            Refusal::Missing => "missing",
            Refusal::NotAFile(_) => "not-a-file",
            Refusal::Size { .. } => "size",
            Refusal::Changed => "changed",
            Refusal::Algorithm(_) => "algorithm",
            Refusal::Malformed(_) => "malformed",
            Refusal::Unreadable(_) => "unreadable",
            Refusal::Duplicate => "duplicate",
        }
    }
}

/// What happened to an entry, or a file of the tree.
#[derive(Debug)]
pub enum Event<'a> {
    /// Recorded as imported, not yet verified.
    Imported(&'a [u8]),
    /// Not imported: a finding (the entry, and its path as given when it has none in the
    /// tree).
    Refused(&'a Entry, &'a [u8], Refusal),
    /// The catalog already has a record of the file: kept as it is.
    Known(&'a [u8]),
    /// Excluded from the tree (`--exclude`, `.fixityignore`): a scan never looks at it.
    Excluded(&'a [u8]),
    /// An absolute path of another tree (a scorch database holds many).
    Elsewhere(&'a [u8]),
    /// A file of the tree without a record after the import: a scan will hash it.
    Uncovered(&'a [u8]),
}

/// Counts of a run.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Report {
    pub source: &'static str,
    pub entries: u64,
    pub imported: u64,
    pub refused: u64,
    pub known: u64,
    pub excluded: u64,
    pub elsewhere: u64,
    pub uncovered: u64,
    /// Refusals per kind.
    pub refused_by: std::collections::BTreeMap<&'static str, u64>,
}

/// What a first read of a source found: how many digests of each algorithm.
#[derive(Clone, Debug, Default)]
pub struct Survey {
    pub entries: u64,
    /// (algorithm, entries with a digest in it), most entries first.
    pub algorithms: Vec<(&'static Algorithm, u64)>,
}

impl Survey {
    /// The algorithm most entries have.
    pub fn main_algorithm(&self) -> Option<&'static Algorithm> {
        self.algorithms.first().map(|(a, _)| *a)
    }

    /// Whether some entry has a digest in `a`.
    pub fn has(&self, a: &Algorithm) -> bool {
        self.algorithms.iter().any(|(b, _)| b.name == a.name)
    }
}

/// Reads the source once to learn its algorithms (unless it has only one); fails when it
/// cannot be read.
pub fn survey(source: &mut dyn Importer) -> Result<Survey, String> {
    source.ready()?;
    if let Some(a) = source.algorithm() {
        return Ok(Survey { entries: 0, algorithms: vec![(a, 0)] });
    }
    let mut counts: HashMap<&'static str, (&'static Algorithm, u64)> = HashMap::new();
    let mut entries = 0;
    source.entries(&mut |e| {
        entries += 1;
        for (a, _) in &e.digests {
            counts.entry(a.name).or_insert((a, 0)).1 += 1;
        }
    })?;
    let mut algorithms: Vec<_> = counts.into_values().collect();
    algorithms.sort_by(|x, y| y.1.cmp(&x.1).then(y.0.len.cmp(&x.0.len)));
    Ok(Survey { entries, algorithms })
}

/// Errors that end an import.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The source cannot be read.
    #[error("{0}")]
    Source(String),
    /// The catalog failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Imports every entry of `source` into `store` (whose algorithm the digests must have)
/// for the tree at `root`; paths matching `exclude` are left out. Calls `on_event` for
/// each entry. The import is recorded as a run (`import`).
pub fn run(
    root: &Path,
    store: &mut dyn Store,
    source: &mut dyn Importer,
    exclude: &Exclude,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Report, ImportError> {
    let name = source.name();
    let others = source.holds_other_trees();
    let algo = store.algorithm();
    let now = store.clock()?;
    store.start_run("import", now)?;
    let base = crate::sys::canonicalize(root)
        .map_err(|e| ImportError::Source(format!("{}: {e}", root.display())))?;
    // Lookups only where the catalog has records to find; paths seen, by digest of the
    // path (16 bytes each), for a source that lists one twice.
    let (present, missing) = store.count_under(b"")?;
    let empty = present + missing == 0;
    let mut seen: HashSet<u128> = HashSet::new();
    let mut dirs = DirCache::default();
    let mut report = Report { source: name, ..Report::default() };
    let mut failed: Option<StoreError> = None;
    let read = source.entries(&mut |e| {
        if failed.is_some() {
            return;
        }
        report.entries += 1;
        let refuse = |report: &mut Report, on: &mut dyn FnMut(Event<'_>), p: &[u8], r: Refusal| {
            report.refused += 1;
            *report.refused_by.entry(r.key()).or_default() += 1;
            on(Event::Refused(&e, p, r));
        };
        let given = match &e.path {
            EntryPath::Relative(p) | EntryPath::Absolute(p) => p.clone(),
        };
        if let Some(why) = &e.problem {
            return refuse(&mut report, on_event, &given, Refusal::Malformed(why.clone()));
        }
        let rel = match relative(&base, root, &e.path) {
            Ok(rel) => rel,
            Err(None) if !others => {
                let r = Refusal::Escapes("an absolute path outside the tree");
                return refuse(&mut report, on_event, &given, r);
            }
            Err(None) => {
                report.elsewhere += 1;
                return on_event(Event::Elsewhere(&given));
            }
            Err(Some(r)) => return refuse(&mut report, on_event, &given, r),
        };
        if excluded(exclude, &rel) {
            report.excluded += 1;
            return on_event(Event::Excluded(&rel));
        }
        let md = match dirs.file(root, &rel) {
            Ok(md) => md,
            Err(r) => return refuse(&mut report, on_event, &rel, r),
        };
        let stamp = Stamp::of(&md);
        if let Some(recorded) = e.size.filter(|&s| s != stamp.size) {
            let r = Refusal::Size { recorded, now: stamp.size };
            return refuse(&mut report, on_event, &rel, r);
        }
        if e.mtime.is_some_and(|m| !m.matches(stamp.mtime_ns)) {
            return refuse(&mut report, on_event, &rel, Refusal::Changed);
        }
        let Some(digest) = e.digests.iter().find(|(a, _)| a.name == algo.name).map(|d| d.1) else {
            let mut have: Vec<&str> = e.digests.iter().map(|(a, _)| a.name).collect();
            have.extend(e.unknown.as_deref());
            let r = Refusal::Algorithm(have.join(", "));
            return refuse(&mut report, on_event, &rel, r);
        };
        if !seen.insert(path_key(&rel)) {
            return refuse(&mut report, on_event, &rel, Refusal::Duplicate);
        }
        if !empty {
            match store.lookup(&rel) {
                Ok(Some(_)) => {
                    report.known += 1;
                    return on_event(Event::Known(&rel));
                }
                Ok(None) => {}
                Err(err) => {
                    failed = Some(err);
                    return;
                }
            }
        }
        let found = Found {
            digest,
            stamp,
            file_id: Some(crate::sys::meta_id(&root.join(crate::pathtext::bytes_path(&rel)), &md)),
            access: Some(crate::device::Access::of(&md)),
        };
        match store.record_imported(&rel, &found, name, now) {
            Ok(()) => {
                report.imported += 1;
                on_event(Event::Imported(&rel));
            }
            Err(StoreError::Attributes(err)) => {
                let r = Refusal::Unreadable(crate::read::io_message(&err));
                refuse(&mut report, on_event, &rel, r);
            }
            Err(err) => failed = Some(err),
        }
    });
    if let Some(e) = failed {
        store.abandon();
        return Err(e.into());
    }
    let complete = read.is_ok();
    store.commit()?;
    let summary = serde_json::to_string(&report).unwrap_or_default();
    store.finish_run(complete, &summary)?;
    store.commit()?;
    read.map_err(ImportError::Source)?;
    Ok(report)
}

/// Walks the tree at `root` (leaving out `exclude`) beside the store's records, and
/// calls `on_event` with [`Event::Uncovered`] for each file without one; returns how
/// many. Walk errors are handed over as (path, message).
pub fn uncovered(
    root: &Path,
    store: &dyn Store,
    exclude: &Exclude,
    on_event: &mut dyn FnMut(Event<'_>),
    on_error: &mut dyn FnMut(&Path, String),
) -> Result<u64, StoreError> {
    let mut records = store.records(None)?;
    let opts = tree_walk(exclude);
    let mut n = 0;
    walk(root, &opts, &mut |ev| {
        match ev {
            WalkEvent::File(path, _) => {
                let rel = rel_of(root, &path).to_vec();
                while records.next_before(Some(&rel)).is_some() {}
                if !matches!(records.file(&rel, &path), Ok(Some(_))) {
                    n += 1;
                    on_event(Event::Uncovered(&rel));
                }
            }
            WalkEvent::Skipped(..) => {}
            WalkEvent::Error(path, e) => on_error(&path, crate::read::io_message(&e)),
        }
        true
    });
    match records.error() {
        Some(e) => Err(e),
        None => Ok(n),
    }
}

fn path_key(rel: &[u8]) -> u128 {
    let h = blake3::hash(rel);
    u128::from_le_bytes(h.as_bytes()[..16].try_into().expect("16 bytes"))
}

/// The path below the root an entry names, cleaned (`./`, empty and `.` components
/// dropped). `Err(None)`: an absolute path outside the tree; `Err(Some)`: refused.
fn relative(base: &Path, root: &Path, path: &EntryPath) -> Result<Vec<u8>, Option<Refusal>> {
    let rel: &[u8] = match path {
        EntryPath::Relative(p) if p.first() == Some(&b'/') => {
            return Err(Some(Refusal::Escapes("an absolute path")));
        }
        EntryPath::Relative(p) => p,
        EntryPath::Absolute(p) => {
            let under = |dir: &Path| {
                let d = dir.as_os_str().as_bytes();
                let d = d.strip_suffix(b"/").unwrap_or(d);
                p.strip_prefix(d).and_then(|r| r.strip_prefix(b"/"))
            };
            match under(base).or_else(|| under(root)) {
                Some(r) => r,
                None => return Err(None),
            }
        }
    };
    let mut out: Vec<u8> = Vec::with_capacity(rel.len());
    for c in rel.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => return Err(Some(Refusal::Escapes("a '..' component"))),
            c => {
                if !out.is_empty() {
                    out.push(b'/');
                }
                out.extend_from_slice(c);
            }
        }
    }
    if out.is_empty() {
        return Err(Some(Refusal::Malformed("an empty path".into())));
    }
    if out.split(|&b| b == b'/').any(|c| c == crate::walk::STATE_DIR.as_bytes()) {
        return Err(Some(Refusal::Escapes("fixity's own directory")));
    }
    Ok(out)
}

/// Looks at a file below the root without following a symbolic link anywhere on the way
/// (so no path leads out of the tree), remembering the directories found sound.
#[derive(Default)]
struct DirCache {
    sound: HashSet<PathBuf>,
}

impl DirCache {
    fn file(&mut self, root: &Path, rel: &[u8]) -> Result<std::fs::Metadata, Refusal> {
        let gone = |e: &std::io::Error| {
            matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory)
        };
        let mut dir = root.to_path_buf();
        let parts: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
        for part in &parts[..parts.len() - 1] {
            dir.push(std::ffi::OsStr::from_bytes(part));
            if self.sound.contains(&dir) {
                continue;
            }
            match std::fs::symlink_metadata(&dir) {
                Ok(md) if md.is_dir() => {
                    self.sound.insert(dir.clone());
                }
                Ok(md) if md.file_type().is_symlink() => {
                    return Err(Refusal::Escapes("a symbolic link on the way"));
                }
                Ok(_) => return Err(Refusal::Missing),
                Err(e) if gone(&e) => return Err(Refusal::Missing),
                Err(e) => return Err(Refusal::Unreadable(crate::read::io_message(&e))),
            }
        }
        let full = full_path(root, rel);
        match std::fs::symlink_metadata(&full) {
            Ok(md) if md.is_file() => Ok(md),
            Ok(md) => Err(Refusal::NotAFile(crate::device::kind_name(&md.file_type()))),
            Err(e) if gone(&e) => Err(Refusal::Missing),
            Err(e) => Err(Refusal::Unreadable(crate::read::io_message(&e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_cleaned_and_kept_inside_the_tree() {
        let (base, root) = (Path::new("/srv/data"), Path::new("data"));
        let rel = |p: &[u8]| relative(base, root, &EntryPath::Relative(p.to_vec()));
        let abs = |p: &[u8]| relative(base, root, &EntryPath::Absolute(p.to_vec()));
        assert_eq!(rel(b"./a//b/./c"), Ok(b"a/b/c".to_vec()));
        assert_eq!(rel(b"a\nb"), Ok(b"a\nb".to_vec()));
        assert_eq!(rel(b"../x"), Err(Some(Refusal::Escapes("a '..' component"))));
        assert_eq!(rel(b"a/../../x"), Err(Some(Refusal::Escapes("a '..' component"))));
        assert_eq!(rel(b"/etc/passwd"), Err(Some(Refusal::Escapes("an absolute path"))));
        assert_eq!(
            rel(b".fixity/catalog.db"),
            Err(Some(Refusal::Escapes("fixity's own directory")))
        );
        assert!(matches!(rel(b"./"), Err(Some(Refusal::Malformed(_)))));
        assert_eq!(abs(b"/srv/data/a/b"), Ok(b"a/b".to_vec()));
        assert_eq!(abs(b"/srv/database/a"), Err(None), "another tree");
        assert_eq!(abs(b"/srv/data/../etc/x"), Err(Some(Refusal::Escapes("a '..' component"))));
    }

    #[test]
    fn mtimes_match_at_their_precision() {
        let ns = 1_700_000_000_123_456_789i128;
        assert!(Mtime::Units { value: 1_700_000_000_123, unit_ns: 1_000_000 }.matches(ns));
        assert!(Mtime::Units { value: 1_700_000_000_122, unit_ns: 1_000_000 }.matches(ns));
        assert!(!Mtime::Units { value: 1_700_000_000_125, unit_ns: 1_000_000 }.matches(ns));
        assert!(Mtime::Units { value: 1_700_000_000, unit_ns: 1_000_000_000 }.matches(ns));
        assert!(!Mtime::Units { value: 1_700_000_005, unit_ns: 1_000_000_000 }.matches(ns));
        assert!(Mtime::Seconds(1_700_000_000.123_456_7).matches(ns));
        assert!(!Mtime::Seconds(1_700_000_000.2).matches(ns));
    }
}
