//! Digests joined from pieces: for the algorithms whose digest of a whole input follows
//! exactly from digests of its byte ranges hashed apart (on other machines, see
//! [`crate::shard`]). A registry row says so, and how, with its [`Combine`] fact.
//!
//! - A CRC: the CRC of `A ‖ B` follows from `crc(A)`, `crc(B)` and the length of `B`
//!   (crc-fast's `checksum_combine`). A piece's state is the CRC of its bytes.
//! - BLAKE3: its tree (section 2.1 of the BLAKE3 paper). Pieces start at multiples of a
//!   unit `U`, a power of two of at least one 1 KiB chunk. Each whole `U`-block of the
//!   input, and its final block `[m·U, size)`, is then a subtree of the input's tree (a
//!   subtree starting at chunk `k·U/1024` may hold `U` bytes), so a piece records the
//!   chaining value of every block it holds; the join builds the tree over the blocks,
//!   the left child always the largest power of two of blocks below the count, as
//!   BLAKE3 splits bytes, and the root merge at the top. Only an input of two blocks or
//!   more (larger than `U`) has a root made of parents.

use crate::digest::Digest;
use blake3::hazmat::{HasherExt, Mode, merge_subtrees_non_root, merge_subtrees_root};

/// How an algorithm's digest of an input is joined from its pieces' states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// BLAKE3's tree over the chaining values of `U`-blocks.
    Blake3Tree,
    /// CRC-32 (ISO-HDLC, zip's and rhash's `crc32`).
    Crc32,
    /// CRC-32C (Castagnoli, iSCSI).
    Crc32c,
    /// CRC-64/NVME (the S3 default checksum).
    Crc64Nvme,
}

/// The smallest unit pieces may be cut at: one BLAKE3 chunk.
pub const MIN_UNIT: u64 = blake3::CHUNK_LEN as u64;

/// Bytes of one chaining value.
const CV: usize = blake3::OUT_LEN;

/// Why pieces' states do not join into a digest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JoinError(String);

impl Combine {
    /// A hasher for the piece of an input that starts at `start`, a multiple of `unit`
    /// (a power of two, at least [`MIN_UNIT`]).
    pub fn piece(self, unit: u64, start: u64) -> Piece {
        assert!(valid_unit(unit) && start.is_multiple_of(unit), "a piece at {start} of {unit}");
        Piece(match self {
            Combine::Blake3Tree => State::Tree(Tree {
                unit,
                filled: 0,
                block: block_hasher(start),
                offset: start,
                cvs: Vec::new(),
            }),
            Combine::Crc32 => State::Crc32(crc32fast::Hasher::new()),
            Combine::Crc32c => {
                State::Fast(crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Iscsi), 4)
            }
            Combine::Crc64Nvme => {
                State::Fast(crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc64Nvme), 8)
            }
        })
    }

    /// Joins the states of consecutive pieces that cover an input from its first byte:
    /// `(length, state)` of each, in order, as [`Piece::finish`] gave them, cut at
    /// multiples of `unit`.
    pub fn join(self, unit: u64, pieces: &[(u64, &[u8])]) -> Result<Digest, JoinError> {
        let bad = |why: String| Err(JoinError(why));
        if pieces.is_empty() {
            return bad("no pieces".into());
        }
        let (width, algorithm) = match self {
            Combine::Blake3Tree => return join_tree(unit, pieces),
            Combine::Crc32 => (4, crc_fast::CrcAlgorithm::Crc32IsoHdlc),
            Combine::Crc32c => (4, crc_fast::CrcAlgorithm::Crc32Iscsi),
            Combine::Crc64Nvme => (8, crc_fast::CrcAlgorithm::Crc64Nvme),
        };
        let mut acc: Option<u64> = None;
        for (len, state) in pieces {
            if state.len() != width {
                return bad(format!("a CRC state of {} bytes, not {width}", state.len()));
            }
            let mut b = [0u8; 8];
            b[8 - width..].copy_from_slice(state);
            let crc = u64::from_be_bytes(b);
            acc = Some(match acc {
                None => crc,
                Some(a) => crc_fast::checksum_combine(algorithm, a, crc, *len),
            });
        }
        let crc = acc.expect("one piece at least").to_be_bytes();
        Ok(Digest::new(&crc[8 - width..]))
    }
}

/// Whether `unit` can be a unit pieces are cut at.
pub fn valid_unit(unit: u64) -> bool {
    unit >= MIN_UNIT && unit.is_power_of_two()
}

/// A BLAKE3 hasher for the subtree that starts at byte `offset`.
fn block_hasher(offset: u64) -> blake3::Hasher {
    let mut h = blake3::Hasher::new();
    h.set_input_offset(offset);
    h
}

/// A running piece.
pub struct Piece(State);

// One per algorithm of a piece being read: the sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum State {
    Tree(Tree),
    Crc32(crc32fast::Hasher),
    /// A crc-fast CRC and its width in bytes.
    Fast(crc_fast::Digest, usize),
}

/// A BLAKE3 piece: the block being hashed, and the chaining values of those done.
struct Tree {
    unit: u64,
    /// Bytes of the current block fed so far, and where it starts in the input.
    filled: u64,
    offset: u64,
    block: blake3::Hasher,
    cvs: Vec<u8>,
}

impl Piece {
    /// Feeds the next bytes of the piece.
    pub fn update(&mut self, mut data: &[u8]) {
        match &mut self.0 {
            State::Crc32(h) => h.update(data),
            State::Fast(h, _) => h.update(data),
            State::Tree(t) => {
                while !data.is_empty() {
                    let room = t.unit - t.filled;
                    let n = usize::try_from(room).unwrap_or(usize::MAX).min(data.len());
                    // Large slices on several threads, as the whole-file adapter does.
                    if n >= 256 * 1024 {
                        t.block.update_rayon(&data[..n]);
                    } else {
                        t.block.update(&data[..n]);
                    }
                    t.filled += n as u64;
                    data = &data[n..];
                    if t.filled == t.unit {
                        t.cvs.extend_from_slice(&t.block.finalize_non_root());
                        t.offset += t.unit;
                        t.filled = 0;
                        t.block = block_hasher(t.offset);
                    }
                }
            }
        }
    }

    /// The piece's state, for [`Combine::join`]: a CRC's value (big-endian, its width),
    /// or BLAKE3's chaining values of the blocks, 32 bytes each. A piece of no bytes has
    /// no state.
    pub fn finish(self) -> Vec<u8> {
        match self.0 {
            State::Crc32(h) => h.finalize().to_be_bytes().to_vec(),
            State::Fast(h, width) => h.finalize().to_be_bytes()[8 - width..].to_vec(),
            State::Tree(mut t) => {
                if t.filled > 0 {
                    t.cvs.extend_from_slice(&t.block.finalize_non_root());
                }
                t.cvs
            }
        }
    }
}

/// BLAKE3's root over the blocks' chaining values the pieces hold.
fn join_tree(unit: u64, pieces: &[(u64, &[u8])]) -> Result<Digest, JoinError> {
    let bad = |why: String| Err(JoinError(why));
    if !valid_unit(unit) {
        return bad(format!("{unit} is not a unit pieces are cut at"));
    }
    let size: u64 = pieces.iter().map(|(len, _)| len).sum();
    let mut cvs: Vec<[u8; CV]> = Vec::new();
    for (i, (len, state)) in pieces.iter().enumerate() {
        let last = i + 1 == pieces.len();
        if !last && !len.is_multiple_of(unit) {
            return bad(format!("piece {i} of {len} bytes is not cut at a multiple of {unit}"));
        }
        if state.len() as u64 != len.div_ceil(unit) * CV as u64 {
            return bad(format!("piece {i} of {len} bytes has {} bytes of state", state.len()));
        }
        cvs.extend(state.chunks_exact(CV).map(|c| <[u8; CV]>::try_from(c).expect("CV bytes")));
    }
    if size <= unit {
        return bad(format!("{size} bytes are one block of {unit}: hash them whole"));
    }
    let split = largest_power_below(cvs.len());
    let root = merge_subtrees_root(&subtree(&cvs[..split]), &subtree(&cvs[split..]), Mode::Hash);
    Ok(Digest::new(root.as_bytes()))
}

/// The chaining value of the subtree over `cvs` (blocks in order).
fn subtree(cvs: &[[u8; CV]]) -> [u8; CV] {
    if cvs.len() == 1 {
        return cvs[0];
    }
    let split = largest_power_below(cvs.len());
    merge_subtrees_non_root(&subtree(&cvs[..split]), &subtree(&cvs[split..]), Mode::Hash)
}

/// The largest power of two strictly below `n` (at least 2).
fn largest_power_below(n: usize) -> usize {
    debug_assert!(n >= 2);
    1 << (usize::BITS - 1 - (n - 1).leading_zeros())
}

#[cfg(test)]
mod tests;
