//! EDON-R 256 and EDON-R 512 (D. Gligoroski, R. S. Ødegård, M. Mihova, S. J. Knapskog,
//! L. Kocarev, A. Drápal, V. Klima: "Cryptographic Hash Function EDON-R", submission
//! to NIST's SHA-3 competition, 2008), written from the submission's description.
//!
//! This is the function as submitted to round 1, which is what rhash computes and what
//! the SUPERCOP (eBASH) implementation computes: the compression function's output
//! replaces the double pipe. The later tweak "EDON-R'" (XORing the old pipe and the
//! message block into that output) gives other digests, which no peer tool prints.
//!
//! The state is a double pipe of sixteen words (32-bit for EDON-R 256, 64-bit for
//! EDON-R 512); a block is sixteen little-endian words. The compression is eight
//! applications of the quasigroup operation `Q` on half-blocks; the digest is the last
//! eight words of the pipe, little-endian. Padding is MD-style with a little-endian
//! 64-bit length in bits in the last 8 bytes of the last block.

use super::Hasher;
use super::block::BlockBuffer;
use crate::digest::Digest;
use std::ops::BitXor;

/// The operations `Q` needs on one word, and the constants that differ between the
/// 32-bit and the 64-bit variant.
trait Word: Copy + BitXor<Output = Self> + Send + 'static {
    const BYTES: usize;
    /// The constants 0xaaaa... and 0x5555... added in the two halves of `Q`.
    const AA: Self;
    const FIVES: Self;
    /// Left rotations of the seven rotated sums in the first and second half of `Q`.
    const ROT_X: [u32; 7];
    const ROT_Y: [u32; 7];
    /// The initial double pipe.
    const IV: [Self; 16];
    fn add(self, other: Self) -> Self;
    fn rotl(self, n: u32) -> Self;
    fn read(bytes: &[u8]) -> Self;
    fn write(self, out: &mut [u8]);
}

impl Word for u32 {
    const BYTES: usize = 4;
    const AA: u32 = 0xaaaa_aaaa;
    const FIVES: u32 = 0x5555_5555;
    const ROT_X: [u32; 7] = [5, 11, 13, 17, 19, 29, 31];
    const ROT_Y: [u32; 7] = [3, 7, 11, 17, 19, 23, 29];
    // The bytes 0x40, 0x41, ..., 0x7f, four to a word, most significant first.
    const IV: [u32; 16] = {
        let mut iv = [0; 16];
        let mut i = 0;
        while i < 16 {
            iv[i] = 0x4041_4243 + 0x0404_0404 * i as u32;
            i += 1;
        }
        iv
    };
    fn add(self, other: u32) -> u32 {
        self.wrapping_add(other)
    }
    fn rotl(self, n: u32) -> u32 {
        self.rotate_left(n)
    }
    fn read(bytes: &[u8]) -> u32 {
        u32::from_le_bytes(bytes.try_into().expect("4 bytes"))
    }
    fn write(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
}

impl Word for u64 {
    const BYTES: usize = 8;
    const AA: u64 = 0xaaaa_aaaa_aaaa_aaaa;
    const FIVES: u64 = 0x5555_5555_5555_5555;
    const ROT_X: [u32; 7] = [5, 19, 29, 31, 41, 57, 61];
    const ROT_Y: [u32; 7] = [3, 17, 23, 31, 37, 45, 59];
    // The bytes 0x80, 0x81, ..., 0xff, eight to a word, most significant first.
    const IV: [u64; 16] = {
        let mut iv = [0; 16];
        let mut i = 0;
        while i < 16 {
            iv[i] = 0x8081_8283_8485_8687 + 0x0808_0808_0808_0808 * i as u64;
            i += 1;
        }
        iv
    };
    fn add(self, other: u64) -> u64 {
        self.wrapping_add(other)
    }
    fn rotl(self, n: u32) -> u64 {
        self.rotate_left(n)
    }
    fn read(bytes: &[u8]) -> u64 {
        u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
    }
    fn write(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
}

/// The quasigroup operation `Q(x, y)` of order 2^(8w): each half sums, for every output
/// word, the five inputs its Latin square selects (the first adds 0xaa..., the second
/// 0x55..., to word 0), rotates seven of the sums, and XORs them in threes; the output is
/// the first half's words plus the second's, in the orthogonal squares' pairing.
#[inline(always)]
fn q<W: Word>(x: &[W; 8], y: &[W; 8]) -> [W; 8] {
    let [x0, x1, x2, x3, x4, x5, x6, x7] = *x;
    let rx = W::ROT_X;
    let (x04, x17, x23, x56) = (x0.add(x4), x1.add(x7), x2.add(x3), x5.add(x6));
    let (x0147, x2356) = (x04.add(x17), x23.add(x56));
    let s0 = W::AA.add(x0147).add(x2);
    let s1 = x0147.add(x3).rotl(rx[0]);
    let s2 = x0147.add(x6).rotl(rx[1]);
    let s3 = x2356.add(x7).rotl(rx[2]);
    let s4 = x2356.add(x1).rotl(rx[3]);
    let s5 = x04.add(x23).add(x5).rotl(rx[4]);
    let s6 = x0.add(x17).add(x56).rotl(rx[5]);
    let s7 = x2356.add(x4).rotl(rx[6]);
    let a = [
        s3 ^ s5 ^ s6,
        s2 ^ s5 ^ s6,
        s2 ^ s3 ^ s5,
        s0 ^ s1 ^ s4,
        s0 ^ s4 ^ s7,
        s1 ^ s6 ^ s7,
        s2 ^ s3 ^ s4,
        s0 ^ s1 ^ s7,
    ];

    let [y0, y1, y2, y3, y4, y5, y6, y7] = *y;
    let ry = W::ROT_Y;
    let (y01, y25, y34, y67) = (y0.add(y1), y2.add(y5), y3.add(y4), y6.add(y7));
    let (y0125, y0134, y3467, y2567) = (y01.add(y25), y01.add(y34), y34.add(y67), y25.add(y67));
    let t0 = W::FIVES.add(y0125).add(y7);
    let t1 = y0134.add(y6).rotl(ry[0]);
    let t2 = y0125.add(y3).rotl(ry[1]);
    let t3 = y3467.add(y2).rotl(ry[2]);
    let t4 = y0134.add(y5).rotl(ry[3]);
    let t5 = y2567.add(y4).rotl(ry[4]);
    let t6 = y2567.add(y1).rotl(ry[5]);
    let t7 = y3467.add(y0).rotl(ry[6]);

    [
        a[3].add(t0 ^ t1 ^ t5),
        a[4].add(t2 ^ t6 ^ t7),
        a[5].add(t0 ^ t1 ^ t3),
        a[6].add(t0 ^ t3 ^ t4),
        a[7].add(t1 ^ t2 ^ t5),
        a[0].add(t3 ^ t4 ^ t6),
        a[1].add(t2 ^ t5 ^ t7),
        a[2].add(t4 ^ t6 ^ t7),
    ]
}

/// The compression function R: four rows of two `Q`s over the two message halves
/// (`m0`, `m1`) and the two pipe halves (`p0`, `p1`).
#[inline(always)]
fn compress_one<W: Word>(pipe: &mut [W; 16], m: &[W; 16]) {
    let half = |s: &[W; 16], from: usize| -> [W; 8] { std::array::from_fn(|i| s[from + i]) };
    let reversed =
        |s: &[W; 16], from: usize| -> [W; 8] { std::array::from_fn(|i| s[from + 7 - i]) };
    let (m0, m1) = (half(m, 0), half(m, 8));
    let (p0, p1) = (half(pipe, 0), half(pipe, 8));
    // Row 1: the message with itself.
    let a = q(&reversed(m, 8), &m0);
    let b = q(&a, &m1);
    // Row 2: the second half of the pipe.
    let a = q(&p1, &a);
    let b = q(&a, &b);
    // Row 3: the first half of the pipe.
    let a = q(&a, &p0);
    let b = q(&b, &a);
    // Row 4: the message again; the results are the new pipe.
    let n0 = q(&reversed(m, 0), &a);
    let n1 = q(&n0, &b);
    pipe[..8].copy_from_slice(&n0);
    pipe[8..].copy_from_slice(&n1);
}

fn compress<W: Word, const N: usize>(pipe: &mut [W; 16], blocks: &[[u8; N]]) {
    for block in blocks {
        let m: [W; 16] = std::array::from_fn(|i| W::read(&block[i * W::BYTES..(i + 1) * W::BYTES]));
        compress_one(pipe, &m);
    }
}

/// `N` = the block size in bytes, sixteen words.
#[derive(Clone)]
struct EdonR<W: Word, const N: usize> {
    pipe: [W; 16],
    buf: BlockBuffer<N>,
}

impl<W: Word, const N: usize> EdonR<W, N> {
    fn new() -> Self {
        assert_eq!(N, 16 * W::BYTES, "a block is sixteen words");
        EdonR { pipe: W::IV, buf: BlockBuffer::new() }
    }
}

impl<W: Word, const N: usize> Hasher for EdonR<W, N> {
    fn update(&mut self, data: &[u8]) {
        let pipe = &mut self.pipe;
        self.buf.update(data, |blocks| compress(pipe, blocks));
    }

    fn finish(&self) -> Digest {
        let mut pipe = self.pipe;
        let pending = self.buf.pending();
        let mut tail = [[0u8; N]; 2];
        let flat = tail.as_flattened_mut();
        flat[..pending.len()].copy_from_slice(pending);
        flat[pending.len()] = 0x80;
        let n = if pending.len() < N - 8 { N } else { 2 * N };
        flat[n - 8..n].copy_from_slice(&self.buf.total().wrapping_mul(8).to_le_bytes());
        compress(&mut pipe, &tail[..n / N]);
        let mut out = [0u8; 64];
        for (o, w) in out.chunks_exact_mut(W::BYTES).zip(&pipe[8..]) {
            w.write(o);
        }
        Digest::new(&out[..8 * W::BYTES])
    }
}

pub(super) fn edonr256() -> Box<dyn Hasher> {
    Box::new(EdonR::<u32, 64>::new())
}

pub(super) fn edonr512() -> Box<dyn Hasher> {
    Box::new(EdonR::<u64, 128>::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_pipes_are_the_byte_sequences() {
        let bytes32: Vec<u8> = u32::IV.iter().flat_map(|w| w.to_be_bytes()).collect();
        assert_eq!(bytes32, (0x40..=0x7f).collect::<Vec<u8>>());
        let bytes64: Vec<u8> = u64::IV.iter().flat_map(|w| w.to_be_bytes()).collect();
        assert_eq!(bytes64, (0x80..=0xff).collect::<Vec<u8>>());
    }

    /// `Q` is a quasigroup operation: with one argument fixed it is a bijection of the
    /// other. A cheap necessary check: distinct `y` give distinct results.
    #[test]
    fn q_separates_nearby_inputs() {
        let x: [u32; 8] = std::array::from_fn(|i| i as u32 * 0x0101_0101);
        let mut seen = std::collections::HashSet::new();
        for k in 0..8 {
            for bit in 0..32 {
                let mut y = [0u32; 8];
                y[k] = 1 << bit;
                assert!(seen.insert(q(&x, &y)), "Q(x, .) repeats at word {k} bit {bit}");
            }
        }
        assert!(seen.insert(q(&x, &[0; 8])));
    }
}
