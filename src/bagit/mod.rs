//! BagIt (RFC 8493): make a directory into a bag in place, and validate bags.
//!
//! A bag is a directory holding `bagit.txt` (version and tag-file encoding), the payload
//! under `data/`, one or more payload manifests `manifest-ALG.txt` (`digest path` per
//! payload file, paths relative to the bag), optional tag manifests
//! `tagmanifest-ALG.txt` over the tag files, and optional `bag-info.txt` metadata
//! (`Label: value` lines; `Payload-Oxum: octets.streamcount` allows a quick check).
//! In manifest paths, LF, CR and `%` are percent-encoded (`%0A`, `%0D`, `%25`); the text
//! forms are [`crate::formats::bagit`].
//!
//! Creation ([`create`]) hashes the payload first (nothing is moved if a file cannot be
//! read), then moves the directory's entries into a temporary directory that is renamed
//! to `data/`, and writes each tag file atomically. Validation ([`check`]) reads every
//! payload and tag file once for all its algorithms, in parallel, and compares through
//! the check engine ([`crate::check`]).

mod check;
mod create;
mod encoding;
mod names;
mod tags;

pub use check::check;
pub use create::create;

use crate::algo::Algorithm;
use std::path::PathBuf;

/// The BagIt version fixity writes.
pub(crate) const VERSION: &str = "1.0";

/// The algorithms `bag create` uses without `-a` (RFC 8493 recommends SHA-512; SHA-256
/// is what most tools check).
pub const DEFAULT_ALGORITHMS: &[&str] = &["sha512", "sha256"];

/// A problem found in a bag: the file (relative to the bag) and line it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub file: Vec<u8>,
    pub line: Option<u64>,
    pub message: String,
}

impl Problem {
    fn new(file: impl AsRef<[u8]>, line: Option<u64>, message: impl Into<String>) -> Problem {
        Problem { file: file.as_ref().to_vec(), line, message: message.into() }
    }
}

/// A bag could not be made or checked at all (not a directory, unreadable, already a
/// bag): a usage error, as opposed to an invalid bag.
#[derive(Debug, thiserror::Error)]
pub enum BagError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Io(String),
}

/// What `check` found.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Problems, in the order found: the bag is valid when there are none.
    pub problems: Vec<Problem>,
    /// What the RFC tolerates but a strict validation refuses (a SHOULD not followed, a
    /// form accepted for compatibility): the bag is still valid (`--strict`: it is not).
    pub warnings: Vec<Problem>,
    /// Payload files fetch.txt lists that are not here yet: their paths and URLs.
    pub to_fetch: Vec<(Vec<u8>, String)>,
    /// Payload files found under `data/`.
    pub payload_files: u64,
    /// Their total size.
    pub payload_bytes: u64,
    /// Files read and compared (payload and tag files).
    pub verified: u64,
    /// The payload manifests' algorithms.
    pub algorithms: Vec<&'static Algorithm>,
}

impl CheckReport {
    pub fn valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What `create` made.
#[derive(Clone, Debug, Default)]
pub struct CreateReport {
    pub files: u64,
    pub bytes: u64,
    /// Staging directories of interrupted runs that were emptied back into the directory
    /// before bagging: each one's name and how many entries it held.
    pub recovered: Vec<(PathBuf, u64)>,
}
