//! `fixity dups`: groups of files with the same content, from a tree's catalog (no file
//! read, [`from_catalog`]) or by reading a tree that has none ([`read_tree`]).
//!
//! Both end in the same place ([`rank`]): every candidate name with its size, a content
//! key (a strong digest), and its file's (device, inode) goes into an external sort;
//! names of one inode fold into one file (links: not waste); groups of two or more files
//! come out largest waste first (size x (files - 1)), ties by their first path, each
//! file followed by its other names. Memory stays bounded whatever the tree: the sort
//! holds at most [`Options::sort_budget`] bytes per stage and spills sorted runs to
//! [`Options::temp_dir`] beyond it; one group's names are held up to 8 MiB, then spooled
//! to disk as well.
//!
//! - From the catalog: two passes over the records in pages. The first keeps an 8-byte
//!   fingerprint of (size, digest) per present record (sorted, so 8 bytes a record, the
//!   only per-record memory); the second stats the records whose fingerprint occurs twice
//!   or more (never reads them) and sorts those. A file whose size or mtime is not the
//!   recorded one, or that is gone, is left out and counted (its digest no longer
//!   describes it); so is a file with a standing finding (corrupt, unreadable: its record
//!   holds the good content's digest, the file on disk does not). A catalog whose
//!   algorithm is not cryptographic ([`crate::algo::Strength`]: CRCs, xxHash, MD5, SHA-1,
//!   imohash) only proposes candidates: each is read whole and grouped by its BLAKE3
//!   digest instead, and the summary says so.
//! - Reading ([`read_tree`]): the walk (with its stat) lists files; only files whose size
//!   another file shares are opened; their first and last 4 KiB (the whole file up to
//!   16 KiB) sort out most differences; the rest are read whole once, through the
//!   engine's read path, for a BLAKE3 digest. Groups are never made on anything weaker
//!   than BLAKE3 of the whole content.
//!
//! The jobs print nothing: they hand [`Event`]s to the caller, in output order.

mod catalog;
mod rank;
mod read;

pub use catalog::from_catalog;
pub use read::read_tree;

use crate::catalog::{Class, StoreError};
use crate::walk::Exclude;
use std::path::PathBuf;

/// What to look for and where to sort.
#[derive(Clone)]
pub struct Options {
    /// Files smaller than this are left out (1 by default: empty files are not
    /// duplicates, as for jdupes and rdfind; 0 takes them in).
    pub min_size: u64,
    /// Names left out, as a walk leaves them out (`--exclude`, `.fixityignore`).
    pub exclude: Exclude,
    /// Most bytes each sort stage holds in memory before it writes a sorted run to disk.
    pub sort_budget: usize,
    /// Where sorted runs and spooled groups go (a directory of their own is made inside
    /// when the first spills, and removed at the end).
    pub temp_dir: PathBuf,
    /// From the catalog: only the files below this directory (its path below the tree's
    /// root; empty: the whole tree), a subtree's duplicates among themselves.
    pub within: Vec<u8>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            min_size: 1,
            exclude: Exclude::default(),
            sort_budget: 32 << 20,
            temp_dir: std::env::temp_dir(),
            within: Vec::new(),
        }
    }
}

/// One group of files with the same content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Each file's size.
    pub size: u64,
    /// Distinct files (inodes): at least 2.
    pub files: u64,
    /// Names beyond one per file: other links to a file of the group.
    pub links: u64,
    /// The algorithm of `digest`.
    pub algorithm: &'static str,
    /// The content's digest (the catalog's, or BLAKE3 when the files were read).
    pub digest: Vec<u8>,
}

impl Group {
    /// The bytes the copies take beyond one: size x (files - 1).
    pub fn wasted(&self) -> u64 {
        self.size.saturating_mul(self.files.saturating_sub(1))
    }
}

/// Why a catalog's record is left out of the groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Left {
    /// Its size or mtime is not the recorded one: the digest no longer describes it.
    Changed,
    /// It is gone from the tree since the last scan.
    Gone,
    /// Its standing finding (corrupt or unreadable): the record holds the good content's
    /// digest, not what the file holds now.
    Finding(Class),
}

/// What a job hands over, in order: notes about single files as they come, then the
/// groups, largest waste first.
#[derive(Debug)]
pub enum Event<'a> {
    /// A file left out of the groups, and why (catalog only).
    Left { path: &'a [u8], why: Left },
    /// A file or directory that could not be looked at or read: left out, counted.
    Error { path: &'a [u8], message: String },
    /// Before the whole-file reads: how many files and bytes will be read.
    Reading { files: u64, bytes: u64 },
    /// A group begins; its names follow.
    Group(&'a Group),
    /// A name in the current group: a file (`link` false), or another name of the file
    /// before it (`link` true).
    Name { path: &'a [u8], link: bool },
    /// The current group is complete.
    GroupEnd,
}

/// What a job did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// `catalog` or `read`.
    pub source: &'static str,
    /// The algorithm groups were made on.
    pub algorithm: &'static str,
    /// The catalog's algorithm (`None` when the tree was read).
    pub catalog_algorithm: Option<&'static str>,
    /// The catalog's algorithm was not cryptographic: candidates were read and grouped
    /// by BLAKE3 instead.
    pub confirmed_by_reading: bool,
    /// Groups reported.
    pub groups: u64,
    /// Files in them (one per inode).
    pub files: u64,
    /// Other names of those files (links), not counted as waste.
    pub links: u64,
    /// Bytes the copies take beyond one per group.
    pub wasted_bytes: u64,
    /// Files looked at: present records, or files walked, at least `min_size` and not
    /// excluded.
    pub files_considered: u64,
    /// Files opened and read (in part or whole), and the bytes read.
    pub files_read: u64,
    pub bytes_read: u64,
    /// Records left out because the file changed or went since the last scan.
    pub changed_since_scan: u64,
    /// Records left out for a standing finding (corrupt, unreadable).
    pub left_out_findings: u64,
    /// Files or directories that could not be looked at or read.
    pub errors: u64,
}

/// Errors that stop a job.
#[derive(Debug, thiserror::Error)]
pub enum DupsError {
    /// The catalog could not be read, or cannot list its records.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A temporary file of the sort could not be written or read.
    #[error("temporary file {}: {}", .0.display(), crate::read::io_message(.1))]
    Temp(PathBuf, std::io::Error),
}

impl From<crate::shard::PlanError> for DupsError {
    fn from(e: crate::shard::PlanError) -> DupsError {
        match e {
            crate::shard::PlanError::Io(p, e) => DupsError::Temp(p, e),
            other => DupsError::Temp(PathBuf::new(), std::io::Error::other(other.to_string())),
        }
    }
}

/// `root`'s path joined with `rel`, as bytes: how a walk of `root` names the file.
pub(crate) fn joined(root: &[u8], rel: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(root.len() + 1 + rel.len());
    p.extend_from_slice(root);
    if !root.is_empty() && !root.ends_with(b"/") {
        p.push(b'/');
    }
    p.extend_from_slice(rel);
    p
}

// Hard links and symbolic links are what these tests are about: Unix only.
#[cfg(all(test, unix))]
mod tests;
