//! Tiger Tree Hash (TTH) as DC++ and rhash compute it: the THEX Merkle tree
//! (draft-jchapweske-thex-02) over Tiger, with 1024-byte leaves. A leaf hashes as
//! Tiger(0x00 || leaf), an inner node as Tiger(0x01 || left || right); a node without a
//! sibling is promoted to the next level unchanged; the empty input is Tiger(0x00).
//! Streaming: finished subtrees wait on a stack, at most one per level (64 levels cover
//! any 64-bit length), so memory stays bounded whatever the input size.

use super::Hasher;
use crate::digest::Digest;
use tiger::{Digest as _, Tiger};

const LEAF: usize = 1024;

type Node = [u8; 24];

#[derive(Clone)]
pub(super) struct Tth {
    /// The partial leaf being filled.
    buf: [u8; LEAF],
    filled: usize,
    /// Whether any leaf has been hashed.
    any_leaf: bool,
    /// Finished subtrees, (level, hash), levels strictly decreasing from bottom to top.
    stack: Vec<(u32, Node)>,
}

fn leaf_hash(data: &[u8]) -> Node {
    let mut t = Tiger::new();
    t.update([0u8]);
    t.update(data);
    t.finalize().into()
}

fn node_hash(left: &Node, right: &Node) -> Node {
    let mut t = Tiger::new();
    t.update([1u8]);
    t.update(left);
    t.update(right);
    t.finalize().into()
}

impl Tth {
    fn new() -> Tth {
        Tth { buf: [0; LEAF], filled: 0, any_leaf: false, stack: Vec::with_capacity(64) }
    }

    /// Adds a finished leaf and merges equal-level subtrees.
    fn push_leaf(&mut self, h: Node) {
        self.any_leaf = true;
        let mut level = 0u32;
        let mut h = h;
        while let Some(&(l, left)) = self.stack.last() {
            if l != level {
                break;
            }
            self.stack.pop();
            h = node_hash(&left, &h);
            level += 1;
        }
        self.stack.push((level, h));
    }
}

impl Hasher for Tth {
    fn update(&mut self, mut data: &[u8]) {
        if self.filled > 0 {
            let take = (LEAF - self.filled).min(data.len());
            self.buf[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled < LEAF {
                return;
            }
            let h = leaf_hash(&self.buf);
            self.push_leaf(h);
            self.filled = 0;
        }
        let (leaves, rest) = data.as_chunks::<LEAF>();
        for leaf in leaves {
            self.push_leaf(leaf_hash(leaf));
        }
        self.buf[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
    }

    fn finish(&self) -> Digest {
        let mut stack = self.stack.clone();
        if self.filled > 0 || !self.any_leaf {
            // The last, short leaf (or the one empty leaf of the empty input).
            let mut t = self.clone();
            t.push_leaf(leaf_hash(&self.buf[..self.filled]));
            stack = t.stack;
        }
        // Unpaired subtrees on the right are promoted until they meet a left sibling.
        let (_, mut h) = stack.pop().expect("at least one leaf");
        while let Some((_, left)) = stack.pop() {
            h = node_hash(&left, &h);
        }
        Digest::new(&h)
    }
}

pub(super) fn tth() -> Box<dyn Hasher> {
    Box::new(Tth::new())
}
