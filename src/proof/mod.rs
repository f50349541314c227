//! Tamper evidence for a catalog: each run that changes a tree's records ends by
//! committing to their state, and the commitments form a chain, so that a head kept
//! outside the machine (signed, mailed, in a git repository) proves later what the
//! catalog held, and `fixity audit-proof` finds where a catalog was changed outside
//! fixity.
//!
//! - The **root** of a tree's state ([`RootHasher`]): SHA-256 over the tree's algorithm
//!   name and every record in byte order of path, each encoded without ambiguity (lengths
//!   before bytes, fixed-width numbers): path, size, mtime, digest, standing finding.
//! - An **entry** of the chain ([`Entry`]), one per run: its sequence number, run, time,
//!   file count, root and the previous entry's head; its **head** is SHA-256 of a domain
//!   tag, the tree's [`Identity`] and those fields ([`Entry::compute_head`]).
//! - A **statement** ([`Statement`]): the head as a small text an admin signs with keys
//!   they already have (`ssh-keygen -Y sign`, minisign).
//!
//! This module is pure: the stores keep the entries (`catalog`), the audit reads them
//! back (`proof_audit`).

mod chain;
mod statement;

pub use chain::{Break, Chain};
pub use statement::{Statement, StatementError};

use sha2::{Digest as _, Sha256};

/// A SHA-256 value.
pub type Hash = [u8; 32];

/// The `prev` of the first entry.
pub const GENESIS: Hash = [0; 32];

/// What a head commits to first: the scheme and its version.
const DOMAIN: &[u8] = b"fixity-proof-v1\0";

/// The standing finding a record carries (what every run reports until resolved).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// None: the file was last found as recorded (or new, modified, moved).
    None = 0,
    /// Last found corrupt.
    Corrupt = 1,
    /// Last found unreadable.
    Unreadable = 2,
    /// Missing from the tree.
    Missing = 3,
    /// Last found with other content at the recorded size and mtime, its ctime moved: an
    /// edit whose mtime was put back, not yet accepted.
    Changed = 4,
}

/// Which tree the heads are of: the host and absolute root a PostgreSQL catalog keys it
/// by. A SQLite catalog holds one tree, and its heads name none (both empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub host: String,
    pub tree: Vec<u8>,
}

/// The root of a tree's state, fed its records in byte order of path.
pub struct RootHasher {
    hash: Sha256,
    files: u64,
}

/// One record as the root commits to it.
#[derive(Clone, Copy, Debug)]
pub struct Leaf<'a> {
    pub path: &'a [u8],
    pub size: u64,
    pub mtime_ns: i64,
    pub digest: &'a [u8],
    pub standing: Standing,
}

impl RootHasher {
    /// A root over records of digests of `algorithm` (its name).
    pub fn new(algorithm: &str) -> RootHasher {
        let mut hash = Sha256::new();
        put_bytes(&mut hash, algorithm.as_bytes());
        RootHasher { hash, files: 0 }
    }

    /// Adds the next record (the caller keeps byte order of path).
    pub fn add(&mut self, leaf: &Leaf<'_>) {
        let h = &mut self.hash;
        put_bytes(h, leaf.path);
        h.update(leaf.size.to_be_bytes());
        h.update(leaf.mtime_ns.to_be_bytes());
        // Digests are at most 64 bytes (and the registry's longest output is far below 256).
        let len = u8::try_from(leaf.digest.len()).unwrap_or(u8::MAX);
        h.update([len]);
        h.update(&leaf.digest[..usize::from(len)]);
        h.update([leaf.standing as u8]);
        self.files += 1;
    }

    /// Adds `files` records already encoded ([`Leaf::encode`]), in order.
    pub fn add_encoded(&mut self, bytes: &[u8], files: u64) {
        self.hash.update(bytes);
        self.files += files;
    }

    /// The root and how many records it covers.
    pub fn finish(self) -> (Hash, u64) {
        (self.hash.finalize().into(), self.files)
    }
}

impl Leaf<'_> {
    /// Appends to `out` the bytes [`RootHasher::add`] hashes for this record: leaves
    /// encoded by another thread are hashed in order with [`RootHasher::add_encoded`].
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.path.len() as u64).to_be_bytes());
        out.extend_from_slice(self.path);
        out.extend_from_slice(&self.size.to_be_bytes());
        out.extend_from_slice(&self.mtime_ns.to_be_bytes());
        let len = u8::try_from(self.digest.len()).unwrap_or(u8::MAX);
        out.push(len);
        out.extend_from_slice(&self.digest[..usize::from(len)]);
        out.push(self.standing as u8);
    }
}

/// A length (u64, big-endian), then the bytes.
fn put_bytes(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_be_bytes());
    h.update(bytes);
}

/// One link of a tree's chain: what the run `run` left (`files` records with root
/// `root`) at `at` (ms), chained to the previous entry's head `prev`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// 1, 2, ... in the order of the runs.
    pub seq: u64,
    /// The run's id in the store's runs.
    pub run: i64,
    /// When the run finished, ms since the epoch.
    pub at: i64,
    pub files: u64,
    pub root: Hash,
    pub prev: Hash,
    pub head: Hash,
}

impl Entry {
    /// The entry after `last` (the first when `None`), its head computed.
    pub fn next(
        id: &Identity,
        last: Option<&Entry>,
        run: i64,
        at: i64,
        root: (Hash, u64),
    ) -> Entry {
        let (seq, prev) = last.map_or((1, GENESIS), |l| (l.seq + 1, l.head));
        let mut e = Entry { seq, run, at, files: root.1, root: root.0, prev, head: GENESIS };
        e.head = e.compute_head(id);
        e
    }

    /// The head these fields give (the stored `head` is not read).
    pub fn compute_head(&self, id: &Identity) -> Hash {
        head_of(id, self.seq, self.at, self.files, &self.root, &self.prev)
    }
}

/// SHA-256 of the domain tag, the tree's identity and an entry's fields.
pub fn head_of(id: &Identity, seq: u64, at: i64, files: u64, root: &Hash, prev: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update(DOMAIN);
    put_bytes(&mut h, id.host.as_bytes());
    put_bytes(&mut h, &id.tree);
    h.update(seq.to_be_bytes());
    h.update(at.to_be_bytes());
    h.update(files.to_be_bytes());
    h.update(root);
    h.update(prev);
    h.finalize().into()
}

/// An entry with what the store says of its run.
#[derive(Clone, Debug)]
pub struct Link {
    pub entry: Entry,
    /// The run is still in the store's runs.
    pub run_kept: bool,
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A 32-byte value from 64 hex digits.
pub fn parse_hash(text: &str) -> Option<Hash> {
    let t = text.as_bytes();
    if t.len() != 64 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = GENESIS;
    for (i, pair) in t.chunks(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// A stored hash column as a [`Hash`] (a value of another length, from an edited row,
/// is cut or padded with zeros: the heads computed from it then tell).
pub fn hash_of(bytes: &[u8]) -> Hash {
    let mut out = GENESIS;
    let n = bytes.len().min(32);
    out[..n].copy_from_slice(&bytes[..n]);
    out
}

#[cfg(test)]
mod tests;
