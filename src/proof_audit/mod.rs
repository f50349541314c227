//! `fixity audit-proof`: where a tree's catalog and files part from a head kept outside
//! the machine. In order:
//!
//! 1. the head's signature, when a key is given ([`sign`]: OpenSSH or minisign);
//! 2. the head itself (its fields give its head, it names this tree) and the chain, entry
//!    by entry ([`crate::proof::Chain`]): heads that recompute, `prev` links, no number
//!    missing, runs still recorded, and at the head's number the very entry it describes;
//! 3. the catalog's current records against the last entry's root: a record edited since
//!    the last run, outside fixity;
//! 4. (unless told not to read) each present file against its record: content changed
//!    without its record.
//!
//! A file changed together with its record is caught by 2 or 3 (the root moved without a
//! run, or the history was rewritten and no longer gives the kept head); a file changed
//! alone by 4. Each break is handed to the caller as a [`Finding`] as it is found.

pub mod sign;

use crate::catalog::{Record, Store, StoreError, state_root};
use crate::digest::Digest;
use crate::pipeline::hash_path;
use crate::proof::{Break, Chain, Entry, Statement};
use crate::read::{OpenMode, ReadError, ReadOptions};
use std::path::Path;

/// Entries read at a time.
const PAGE: usize = 1024;

/// What to audit beyond the chain.
#[derive(Clone, Debug)]
pub struct Options<'a> {
    /// The tree's directory (records are relative to it).
    pub root: &'a Path,
    /// Read each present file and compare it with its record.
    pub read: bool,
}

/// Where the chain breaks.
#[derive(Clone, Debug)]
pub enum Finding {
    /// The head's signature does not verify (the verifier's words).
    Signature(String),
    /// The head or the chain (see [`Break`]).
    Chain(Break),
    /// The catalog's records are not those the last entry (`seq`) committed to: a record
    /// changed, added or removed since the last run, outside fixity.
    Records { seq: u64, files_then: u64, files_now: u64 },
    /// The catalog holds no chain while a head names one.
    NoChain,
    /// A present file does not hold its recorded content.
    File { path: Vec<u8>, cause: FileCause },
}

/// Why a file fails.
#[derive(Clone, Debug)]
pub enum FileCause {
    /// Its digest is not the recorded one; `stamp_as_recorded`: its size and mtime are
    /// (the content changed without them, or with them put back).
    Differs { recorded: Digest, now: Digest, stamp_as_recorded: bool },
    /// Not there, though recorded as present.
    Missing,
    /// It could not be read (why).
    Unreadable(String),
}

/// What an audit went over.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    /// Entries in the chain.
    pub entries: u64,
    /// The last entry's number, if any.
    pub last_seq: Option<u64>,
    /// Records in the catalog now.
    pub files: u64,
    /// Files read and compared.
    pub files_read: u64,
    /// Records not read: missing, or with a standing finding (corrupt, unreadable) the
    /// catalog already reports.
    pub files_skipped: u64,
    /// Breaks found.
    pub breaks: u64,
}

/// Audits `store` (the tree at `opts.root`) against the head `kept` (its signature is
/// the caller's: [`sign`]); each break goes to `on` as it is found.
pub fn run(
    store: &dyn Store,
    kept: &Statement,
    opts: &Options<'_>,
    on: &mut dyn FnMut(&Finding),
) -> Result<Summary, StoreError> {
    let mut sum = Summary::default();
    let mut report = |f: Finding, sum: &mut Summary| {
        sum.breaks += 1;
        on(&f);
    };
    let identity = store.proof_identity();
    let mut breaks = Vec::new();
    let mut chain = Chain::new(&identity, Some(kept), &mut breaks);
    let mut after = 0;
    loop {
        let page = store.proof_page(after, PAGE)?;
        for link in &page {
            chain.feed(link, &mut breaks);
            for b in breaks.drain(..) {
                report(Finding::Chain(b), &mut sum);
            }
        }
        match page.last() {
            Some(l) => after = l.entry.seq,
            None => break,
        }
    }
    let (last, entries) = chain.finish(&mut breaks);
    sum.entries = entries;
    sum.last_seq = last.as_ref().map(|l| l.seq);
    if last.is_none() {
        report(Finding::NoChain, &mut sum);
    }
    for b in breaks.drain(..) {
        report(Finding::Chain(b), &mut sum);
    }

    let mut buf = Vec::new();
    let (root, count) = state_root(store, |r| {
        if !opts.read {
            return;
        }
        if r.missing_since.is_some() || r.last_result.is_failure() {
            sum.files_skipped += 1;
            return;
        }
        sum.files_read += 1;
        if let Some(cause) = look(opts.root, r, &mut buf) {
            report(Finding::File { path: r.path.clone(), cause }, &mut sum);
        }
    })?;
    sum.files = count;
    if let Some(Entry { seq, root: then, files: files_then, .. }) = last
        && then != root
    {
        report(Finding::Records { seq, files_then, files_now: count }, &mut sum);
    }
    Ok(sum)
}

/// Reads the file of `r` under `root`: why it fails its record, if it does.
fn look(root: &Path, r: &Record, buf: &mut Vec<u8>) -> Option<FileCause> {
    let full = crate::scrub::full_path(root, &r.path);
    let mode = OpenMode::Walked { follow: false };
    match hash_path(&full, mode, &[r.algo], buf, &ReadOptions::default(), None) {
        Ok(h) if h.digests[0].ct_eq(&r.digest) => None,
        Ok(h) => {
            let stamp = crate::device::Stamp {
                size: h.size,
                mtime_ns: h.mtime_ns.unwrap_or(0),
                ctime_ns: h.ctime_ns,
            };
            Some(FileCause::Differs {
                recorded: r.digest,
                now: h.digests[0],
                stamp_as_recorded: r.describes(&stamp, 0),
            })
        }
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Some(FileCause::Missing)
        }
        Err(e) => Some(FileCause::Unreadable(e.message())),
    }
}
