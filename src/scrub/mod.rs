//! `scan` and `verify` over a catalog: walk the tree beside the catalog's rows (both in
//! byte order of their paths, so they merge in one pass with bounded memory), classify
//! every file (see [`Class`]), and update the catalog as it goes.
//!
//! - **scan** records the tree as it is now: new files are hashed, files whose size or
//!   mtime changed are re-hashed, unchanged files are only `stat`ed (no reads), and files
//!   gone are reported as missing (after looking for where they moved).
//! - **verify** does the same bookkeeping, and then re-reads files whose size and mtime
//!   did not change, least recently verified first, comparing their content with the
//!   catalog: a difference there is corruption. `max_bytes` and `max_duration` make it a
//!   slice; the next slice continues with what this one left.
//!
//! Findings stand until they are resolved: a missing file stays on record (reported by
//! every run) until it is back or explicitly forgotten, and a corrupt or unreadable file
//! is read again by every run, scan or verify, slice or not, until it reads as recorded
//! (restored) or its new content is explicitly accepted.
//!
//! One engine ([`run`]) over any [`Store`](crate::catalog::Store): with the SQLite
//! catalog, and with the xattr store, where each file carries its own record: the same
//! classes except missing and moved (nothing remembers a file that is gone), findings
//! handed over as they are found, and slices that continue from a cursor kept on the
//! root directory. The rule that classifies a file is `classify`.

mod classify;
mod engine;
mod forms;
mod moves;
mod recorder;
mod scope;
mod vanished;

pub(crate) use classify::{Seen, Window, classify};
pub use engine::{run, run_part, run_subtree};
pub use scope::{Bounds, Listed, PartOf, Scope};

use crate::catalog::Class;
use crate::catalog::StoreError;
use crate::catalog::sqlite::CatalogError;
use crate::pathtext::path_bytes;
use crate::pipeline::Config;
use crate::sys::OsStrExt;
use crate::walk::Exclude;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Which command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Record changes; read only new and changed files.
    Scan,
    /// Record changes, then re-read unchanged files and compare.
    Verify,
}

impl Mode {
    /// The command's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Scan => "scan",
            Mode::Verify => "verify",
        }
    }
}

/// How to run.
#[derive(Clone)]
pub struct Options {
    /// scan or verify.
    pub mode: Mode,
    /// Follow symlinks inside the tree.
    pub follow: bool,
    /// Paths to leave out (besides the catalog itself).
    pub exclude: Exclude,
    /// Stop starting new reads after this many bytes (a slice).
    pub max_bytes: Option<u64>,
    /// Stop starting new reads after this long (a slice).
    pub max_duration: Option<Duration>,
    /// The read engine's settings (workers, serial reads).
    pub engine: Config,
    /// How far apart two mtimes may be and still count as equal (see `Record::describes`;
    /// `--modify-window`); `None`: as fine as the tree's file system keeps them
    /// ([`crate::device::Times::window_ns`]: 2 s on FAT, 10 ms on exFAT, else 0).
    pub modify_window_ns: Option<i128>,
}

/// Something to tell the user as it happens (not a classification).
#[derive(Debug)]
pub enum Notice {
    /// An entry skipped on purpose: a symlink not followed, a FIFO, a device.
    Skipped(Vec<u8>, &'static str),
    /// A finding the catalog could not record (a write failed, see
    /// [`Report::catalog_error`]): the catalog's report will not list it, so it is
    /// handed over now.
    Unrecorded(Finding),
    /// A finding of a store that lists none afterwards (see
    /// [`Store::lists_findings`](crate::catalog::Store::lists_findings)), as it is
    /// classified, in path order.
    Found(Finding),
}

/// What a run did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Report {
    /// `scan` or `verify`.
    pub command: &'static str,
    /// Files per class, indexed like [`Class::ALL`].
    #[serde(serialize_with = "counts_by_name")]
    pub counts: [u64; Class::ALL.len()],
    /// Files read and hashed.
    pub files_read: u64,
    /// Bytes read and hashed.
    pub bytes_read: u64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Whether every file due was looked at (false when a slice stopped early).
    pub complete: bool,
    /// What stopped a slice: "max-bytes" or "max-duration".
    pub stopped_by: Option<&'static str>,
    /// Files (and bytes) left for later slices.
    pub remaining_files: u64,
    /// Their size.
    pub remaining_bytes: u64,
    /// Entries skipped on purpose (symlinks, special files).
    pub skipped: u64,
    /// When the verification pass this run worked on began (ms; 0 for a scan).
    pub pass_started_ms: i64,
    /// When the run started (ms since the epoch); the catalog marks what it touched with it.
    pub started_ms: i64,
    /// The part of a plan the run covered (`scan|verify --plan`), if it covered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<PartOf>,
    /// The subtree the run covered (its directory's path below the root), if it covered
    /// one: a verify of a subtree is no verification pass of the tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtree: Option<String>,
    /// Problems the catalog cannot hold (a file never recorded that could not be read, a
    /// directory that could not be listed), to list beside the catalog's report.
    #[serde(skip)]
    pub extra: Vec<Finding>,
    /// Directories under which every recorded file is missing (outermost only; the empty
    /// path is the root): (directory, files). An unmounted file system looks like this.
    #[serde(skip)]
    pub vanished: Vec<(Vec<u8>, u64)>,
    /// Such directories beyond those listed in `vanished`.
    #[serde(skip)]
    pub vanished_more: u64,
    /// The first catalog error of the run, if any: from then on nothing was recorded and
    /// findings went to [`Notice::Unrecorded`].
    #[serde(skip)]
    pub catalog_error: Option<String>,
}

impl Report {
    /// Count for one class.
    pub fn count(&self, c: Class) -> u64 {
        self.counts[c as usize]
    }

    pub(crate) fn add(&mut self, c: Class) {
        self.counts[c as usize] += 1;
    }

    pub(crate) fn sub(&mut self, c: Class) {
        self.counts[c as usize] = self.counts[c as usize].saturating_sub(1);
    }

    /// Files the run looked at in the tree (every class but missing): by their stat, or
    /// read.
    pub fn files_looked(&self) -> u64 {
        Class::ALL.iter().filter(|c| **c != Class::Missing).map(|c| self.count(*c)).sum()
    }

    /// Whether anything was found that means data may be lost (the exit status).
    pub fn failed(&self) -> bool {
        Class::ALL.iter().any(|c| c.is_failure() && self.count(*c) > 0)
    }
}

fn counts_by_name<S: serde::Serializer>(
    counts: &[u64; Class::ALL.len()],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(counts.len()))?;
    for c in Class::ALL {
        m.serialize_entry(c.name(), &counts[c as usize])?;
    }
    m.end()
}

/// Errors of a run: the catalog failed, or the store cannot work here.
#[derive(Debug, thiserror::Error)]
pub enum ScrubError {
    /// A catalog error.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The tree's root or its attributes.
    #[error("{0}")]
    Store(String),
}

impl From<StoreError> for ScrubError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Catalog(e) => ScrubError::Catalog(e),
            e => ScrubError::Store(e.to_string()),
        }
    }
}

/// The relative path of `full` under `root`, as bytes.
pub(crate) fn rel_of<'a>(root: &Path, full: &'a Path) -> &'a [u8] {
    match crate::pathtext::strip_root(root, full) {
        Some(r) => path_bytes(r),
        None => path_bytes(full),
    }
}

/// Whether `rel` (or a directory above it) is excluded.
pub(crate) fn excluded(ex: &Exclude, rel: &[u8]) -> bool {
    if ex.is_empty() {
        return false;
    }
    let mut start = 0;
    loop {
        let next = rel[start..].iter().position(|&b| b == b'/').map_or(rel.len(), |i| start + i);
        let name = Path::new(OsStr::from_bytes(&rel[start..next]));
        if ex.matches(name, Path::new(OsStr::from_bytes(&rel[..next]))) {
            return true;
        }
        if next >= rel.len() {
            return false;
        }
        start = next + 1;
    }
}

/// One classified file, as the run hands it over (not listed from the store).
#[derive(Clone, Debug)]
pub struct Finding {
    /// Path relative to the root.
    pub path: Vec<u8>,
    /// What was found.
    pub class: Class,
    /// Details (the error, or recorded and actual digests).
    pub note: Option<String>,
}

/// The note a corrupt file's record carries: the recorded (good) digest and the one read
/// now, each as its algorithm writes it (hex, an S3 ETag's `hex-N`, base32 for TTH), and
/// whether the recorded digest was imported from another tool and never verified.
/// [`corrupt_digests`] reads the digests back.
pub fn corrupt_note(recorded: &str, now: &str, imported: bool) -> String {
    let mut note = format!("recorded {recorded}, now {now}");
    if imported {
        note.push_str("; the recorded digest was imported and never verified by fixity");
    }
    note
}

/// What a [`Class::Changed`] finding's note adds to [`corrupt_note`]'s: the mtime kept,
/// and the ctime then and now (UTC, to the second, with the nanoseconds when the two
/// fall in one second).
pub fn changed_note(then_ns: Option<i128>, now_ns: Option<i128>) -> String {
    let show = |ns: Option<i128>| match ns {
        Some(ns) => {
            let ms = ns.div_euclid(1_000_000) as i64;
            format!("{}.{:09}", crate::clock::format_time(ms), ns.rem_euclid(1_000_000_000))
        }
        None => "unknown".to_string(),
    };
    format!(
        "; mtime kept, ctime moved from {} to {} UTC: an edit, never repaired; \
         `fixity accept` takes it",
        show(then_ns),
        show(now_ns)
    )
}

/// The (recorded, now) digests of a note written by [`corrupt_note`].
pub fn corrupt_digests(note: &str) -> Option<(&str, &str)> {
    let (recorded, rest) = note.strip_prefix("recorded ")?.split_once(", now ")?;
    let now = rest.split_once("; ").map_or(rest, |(now, _)| now);
    let token =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    (token(recorded) && token(now)).then_some((recorded, now))
}

pub fn full_path(root: &Path, rel: &[u8]) -> PathBuf {
    crate::sys::join(root, OsStr::from_bytes(rel))
}

#[cfg(test)]
mod tests;
