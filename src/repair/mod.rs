//! Repair what verification finds: PAR2 recovery data kept in step with the catalog
//! (`fixity protect`), and `fixity repair` from it or from a replica.
//!
//! The catalog knows which content is good: a set is made only from files whose content
//! is what the catalog recorded (read once, for the PAR2 checksums, the recovery data and
//! the catalog's digest together), is re-made when the catalog records an edit, and is
//! never re-made over rot. A repair writes a file only when what it rebuilt has the
//! catalog's recorded digest, atomically, with the recorded mtime, and records it.
//!
//! - `plan`: which files go in which set, and each set's slice size;
//! - `sidecar`: `STEM.fixity`, what a set protects in the catalog's terms;
//! - `protect`: the protect job;
//! - `heal`: the repair job (from PAR2 sets, or `replica`);
//! - `upkeep`: after scan and verify, sets re-made and recovery files checked.
//!
//! The format itself is [`crate::par2`]. docs/repair.md explains the model.

mod heal;
mod install;
mod making;
mod plan;
mod protect;
mod replica;
mod sidecar;
mod upkeep;

pub use heal::{RepairOptions, RepairReport, repair};
pub use protect::{ProtectOptions, ProtectReport, protect};
pub use upkeep::{check_sets, upkeep};

/// For the fuzz target `sidecar`: the text a sidecar parsed from `text` writes, and the
/// text that one parses back to and writes (`None` when `text` is not a sidecar).
#[doc(hidden)]
pub fn fuzz_sidecar(text: &str) -> Option<(String, Option<String>)> {
    let first = sidecar::Sidecar::parse(text)?.text();
    let again = sidecar::Sidecar::parse(&first).map(|s| s.text());
    Some((first, again))
}

use crate::catalog::{Class, StoreError};
use crate::pathtext::{STATE_DIR, path_bytes, quote_env};
use std::path::{Path, PathBuf};

/// The default memory for recovery data being computed or used: 1 GiB.
pub const DEFAULT_MEMORY: u64 = 1 << 30;

/// The speed of making recovery data, in memory: `data` protected at `redundancy` as one
/// file would be (its slice size and recovery count). Returns the recovery bytes made.
pub fn encode_in_memory(data: &[u8], redundancy: f64) -> usize {
    let slice = plan::slice_size(&[data.len().max(1) as u64], redundancy);
    let n = (data.len() as u64).div_ceil(slice);
    crate::par2::encode_in_memory(data, slice, plan::recovery_count(n, redundancy))
}

/// Where a tree's sets are kept unless told: `TREE/.fixity/par2`.
pub fn default_par2_dir(root: &Path) -> PathBuf {
    root.join(STATE_DIR).join("par2")
}

/// The sidecar of set `stem` in `dir`.
pub(crate) fn sidecar_path(dir: &Path, stem: &str) -> PathBuf {
    dir.join(format!("{stem}.fixity"))
}

/// Why a file was left out of its set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Left {
    /// Its content is not what the catalog recorded, with the same size and mtime: rot.
    /// Now recorded CORRUPT.
    Corrupt,
    /// Its size or mtime changed since the catalog recorded it (a scan records the edit).
    Changed,
    /// Its content is not the catalog's at the recorded size and mtime, and its ctime
    /// moved since: an edit whose mtime was put back. Now recorded CHANGED; its old set,
    /// if any, is kept until `fixity accept` takes the change.
    MtimeKept,
    /// It could not be read (why).
    Unreadable(String),
    /// It has a standing finding (corrupt, unreadable or missing).
    Finding(Class),
}

/// Where a repaired file's content came from.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A recovery set (its name).
    Par2 { set: &'a str },
    /// A file of the replica.
    Replica { path: &'a Path },
}

/// What protect and repair report, one event per set or file, in order.
#[derive(Debug)]
pub enum Event<'a> {
    /// A set was made (or re-made).
    SetMade {
        stem: &'a str,
        files: usize,
        bytes: u64,
        par2_bytes: u64,
        slice: u64,
        recovery_slices: u32,
    },
    /// A set is as the catalog is: nothing read.
    SetCurrent { stem: &'a str, files: usize },
    /// A set is kept as it is although the catalog changed (why).
    SetKept { stem: &'a str, why: &'static str },
    /// A set's recovery files are damaged or missing (why): it is re-made when it can be.
    SetDamaged { stem: &'a str, why: &'a str },
    /// A set of files no longer recorded was removed.
    SetRemoved { stem: &'a str },
    /// A file was left out of its set.
    Left { path: &'a [u8], why: Left },
    /// A file was rebuilt as the catalog recorded it, and replaced; `note` says what of
    /// its recorded access it could not give it back (made 0600 instead).
    Repaired { path: &'a [u8], from: Source<'a>, note: Option<String> },
    /// A file with a finding reads as recorded now: nothing to repair (finding ended).
    Intact { path: &'a [u8] },
    /// A file could not be repaired (why); its finding stands.
    Unrepaired { path: &'a [u8], why: String },
}

/// What stops protect or repair as a whole.
#[derive(Debug, thiserror::Error)]
pub enum RepairError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The directory of the sets cannot be read or written.
    #[error("{}: {}", quote_env(path_bytes(.0)), crate::read::io_message(.1))]
    Par2Dir(PathBuf, std::io::Error),
    /// The sets' directory is inside the tree but not in its `.fixity`: the walk would
    /// take the recovery files for the tree's content, and protect them in turn.
    #[error(
        "{}: inside the tree and not under its .fixity directory: the recovery files would be \
         taken for the tree's content (give a directory outside the tree, or none)",
        quote_env(path_bytes(.0))
    )]
    InsideTree(PathBuf),
    /// The tree (or the replica) cannot be read.
    #[error("{}: {}", quote_env(path_bytes(.0)), crate::read::io_message(.1))]
    Tree(PathBuf, std::io::Error),
}
