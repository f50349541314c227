//! The check engine: the one place that decides whether a file still has the digest a
//! manifest recorded, and what became of each manifest line.
//!
//! - [`digests_match`] and `agreeing` compare digests in constant time (a `Digest` has
//!   no `==`); every front end (check, audit, bag check, the embedded-CRC check, the
//!   drop-ins) compares through them.
//! - [`classify`] turns a read result and what the line expected into an [`Outcome`].
//! - [`run`] is the check job: it reads the manifests of a [`CheckPlan`], hashes the files
//!   they list in parallel and emits an [`Event`] per line, in manifest order, with the
//!   totals of each manifest. It prints nothing: the binary renders the events (coreutils
//!   lines, JSON, a progress bar, a drop-in's exact words).
//! - `resolve` decides which algorithm a line is checked with.

mod job;
mod names;
mod resolve;
#[cfg(test)]
mod tests;

pub use job::{CheckPlan, Counts, Event, Verdict, plural, run};
pub(crate) use resolve::{AlgoHints, Resolved, reaches_outside, resolve};

use crate::digest::Digest;
use crate::pipeline::Hashed;
use crate::read::ReadError;
use std::borrow::Borrow;
use std::io;

/// How many of `pairs` (expected, computed) agree. Every pair is compared in full, in time
/// that depends only on the digests' lengths, never on where they first differ.
pub(crate) fn agreeing<'a, 'b>(pairs: impl IntoIterator<Item = (&'a Digest, &'b Digest)>) -> usize {
    pairs.into_iter().map(|(want, got)| usize::from(want.ct_eq(got))).sum()
}

/// Whether every pair (expected, computed) agrees; every pair is compared, with no early
/// exit, each in constant time. An empty list matches.
pub fn digests_match<'a, 'b>(pairs: impl IntoIterator<Item = (&'a Digest, &'b Digest)>) -> bool {
    pairs.into_iter().fold(true, |ok, (want, got)| want.ct_eq(got) & ok)
}

/// What checking one listed file found.
#[derive(Debug)]
pub enum Outcome {
    /// Every digest (and the size, where the line records one) matched.
    Ok,
    /// A digest or the size differed.
    Failed,
    /// The file does not exist.
    Missing(ReadError),
    /// The file does not exist and `--ignore-missing` was given: not counted as checked.
    IgnoredMissing,
    /// The file changed (size or modification time) while it was read.
    Changed(ReadError),
    /// The file could not be opened or read.
    Unreadable(ReadError),
    /// Under `--confine`, the path leads out of the tree through a symbolic link.
    Escapes,
}

impl Outcome {
    /// The outcome of a file that could not be read.
    pub(crate) fn of_error(e: ReadError, ignore_missing: bool) -> Outcome {
        match e {
            ReadError::Io(io) if io.kind() == io::ErrorKind::NotFound => {
                if ignore_missing {
                    Outcome::IgnoredMissing
                } else {
                    Outcome::Missing(ReadError::Io(io))
                }
            }
            ReadError::Changed => Outcome::Changed(e),
            ReadError::Escapes => Outcome::Escapes,
            e => Outcome::Unreadable(e),
        }
    }

    /// The read error behind a missing, changed or unreadable file.
    pub fn error(&self) -> Option<&ReadError> {
        match self {
            Outcome::Missing(e) | Outcome::Changed(e) | Outcome::Unreadable(e) => Some(e),
            _ => None,
        }
    }

    /// The outcome's name in JSON reports.
    pub fn key(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed => "failed",
            Outcome::Missing(_) => "missing",
            Outcome::IgnoredMissing => "ignored",
            Outcome::Changed(_) => "changed",
            Outcome::Unreadable(_) => "unreadable",
            Outcome::Escapes => "refused",
        }
    }
}

/// Classifies one listed file: `expected` are the line's digests in the order they were
/// computed, `size` the size the line records (if any), `read` what reading the file gave.
pub fn classify<'a>(
    expected: impl IntoIterator<Item = &'a Digest>,
    size: Option<u64>,
    read: Result<impl Borrow<Hashed>, ReadError>,
    ignore_missing: bool,
) -> Outcome {
    match read {
        Ok(h) => {
            let h = h.borrow();
            // Every digest is compared (no early exit), and the size where there is one.
            let digests = digests_match(expected.into_iter().zip(&h.digests));
            if digests && size.is_none_or(|s| s == h.size) { Outcome::Ok } else { Outcome::Failed }
        }
        Err(e) => Outcome::of_error(e, ignore_missing),
    }
}
