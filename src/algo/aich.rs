//! eMule's AICH (Advanced Intelligent Corruption Handling) root hash, as rhash computes
//! it: a SHA-1 Merkle tree whose leaves are 180 KiB (184,320-byte) blocks, grouped under
//! 9500 KiB (9,728,000-byte) parts. A leaf is SHA-1 of its block, an inner node SHA-1 of
//! its two children's hashes concatenated.
//!
//! The shape follows eMule's `CAICHHashTree`: a node spanning `n` units (parts while it
//! spans more than one part, blocks below that) gives its left child `(n + 1) / 2` units
//! when the node is itself a left child (or the root) and `n / 2` when it is a right
//! child; the right child takes the rest. So a part's subtree depends on whether the part
//! sits on a left or a right branch of the file's tree, which is known only at the end:
//! each finished part keeps both variants (40 bytes per 9.5 MB), and the blocks of the
//! current part (at most 53 hashes) are the only other state.

use super::Hasher;
use crate::digest::Digest;
use sha1::{Digest as _, Sha1};

pub(crate) const PART: u64 = 9_728_000;
const BLOCK: u64 = 184_320;

type H = [u8; 20];

#[derive(Clone)]
pub(super) struct Aich {
    /// SHA-1 of the current block so far.
    block: Sha1,
    in_block: u64,
    /// Hashes of the finished blocks of the current part.
    blocks: Vec<H>,
    in_part: u64,
    /// Finished parts: (hash as a left branch, hash as a right branch).
    parts: Vec<(H, H)>,
}

fn pair(left: &H, right: &H) -> H {
    let mut s = Sha1::new();
    s.update(left);
    s.update(right);
    s.finalize().into()
}

/// The root of the subtree over `leaves` (at least one), for a node that is a left
/// (`true`) or right child.
fn subtree(leaves: &[H], is_left: bool) -> H {
    if leaves.len() == 1 {
        return leaves[0];
    }
    let n = leaves.len();
    let left_n = if is_left { n.div_ceil(2) } else { n / 2 };
    pair(&subtree(&leaves[..left_n], true), &subtree(&leaves[left_n..], false))
}

/// The root over whole parts (at least one), each known as both branch variants.
fn part_tree(parts: &[(H, H)], is_left: bool) -> H {
    if parts.len() == 1 {
        return if is_left { parts[0].0 } else { parts[0].1 };
    }
    let n = parts.len();
    let left_n = if is_left { n.div_ceil(2) } else { n / 2 };
    pair(&part_tree(&parts[..left_n], true), &part_tree(&parts[left_n..], false))
}

impl Aich {
    fn new() -> Aich {
        Aich {
            block: Sha1::new(),
            in_block: 0,
            blocks: Vec::with_capacity(PART.div_ceil(BLOCK) as usize),
            in_part: 0,
            parts: Vec::new(),
        }
    }

    /// The block hashes of the current part, its unfinished block included.
    fn current_blocks(&self) -> Vec<H> {
        let mut blocks = self.blocks.clone();
        if self.in_block > 0 {
            blocks.push(self.block.clone().finalize().into());
        }
        blocks
    }
}

impl Hasher for Aich {
    fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let take = ((BLOCK - self.in_block).min(PART - self.in_part) as usize).min(data.len());
            self.block.update(&data[..take]);
            self.in_block += take as u64;
            self.in_part += take as u64;
            data = &data[take..];
            if self.in_block == BLOCK || self.in_part == PART {
                self.blocks.push(self.block.finalize_reset().into());
                self.in_block = 0;
            }
            if self.in_part == PART {
                let both = (subtree(&self.blocks, true), subtree(&self.blocks, false));
                self.parts.push(both);
                self.blocks.clear();
                self.in_part = 0;
            }
        }
    }

    fn finish(&self) -> Digest {
        let mut parts = self.parts.clone();
        if self.in_part > 0 {
            let blocks = self.current_blocks();
            parts.push((subtree(&blocks, true), subtree(&blocks, false)));
        }
        let root = match parts.len() {
            // The empty input: one empty block.
            0 => Sha1::digest(b"").into(),
            _ => part_tree(&parts, true),
        };
        Digest::new(&root)
    }
}

pub(super) fn aich() -> Box<dyn Hasher> {
    Box::new(Aich::new())
}
