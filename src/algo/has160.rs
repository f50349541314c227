//! HAS-160, the Korean standard hash (TTAS.KO-12.0011/R2, "Hash Function Standard -
//! Part 2: Hash Function Algorithm Standard (HAS-160)"), written from the standard.
//!
//! The structure is SHA-1's (five 32-bit chaining words, 80 steps in four rounds of 20,
//! the same initial values and round constants) with little-endian words and length, as
//! MD5 has, and its own message schedule: each round reads the sixteen message words in
//! its own order, in four groups of four, and four extra words, each the XOR of one
//! group, lead the groups. The rotation of `A` changes every step, that of `B` every
//! round.

use super::Hasher;
use super::block::BlockBuffer;
use crate::digest::Digest;

const IV: [u32; 5] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476, 0xc3d2_e1f0];

/// The order in which each round reads the message words X[0..16]; the four groups of
/// four define the extra words X[16..20] of that round (X[16 + g] = XOR of group g).
const ORDER: [[usize; 16]; 4] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [3, 6, 9, 12, 15, 2, 5, 8, 11, 14, 1, 4, 7, 10, 13, 0],
    [12, 5, 14, 7, 0, 9, 2, 11, 4, 13, 6, 15, 8, 1, 10, 3],
    [7, 2, 13, 8, 3, 14, 9, 4, 15, 10, 5, 0, 11, 6, 1, 12],
];

/// Within a round, step 5g reads the extra word X[16 + EXTRA[g]] and steps 5g+1..5g+5
/// the message words of group g (the standard's l(j) = 18, ..., 19, ..., 16, ..., 17, ...).
const EXTRA: [usize; 4] = [2, 3, 0, 1];

/// The left rotation of `A` in step j of every round (s1(j mod 20)).
const S1: [u32; 20] = [5, 11, 7, 15, 6, 13, 8, 14, 7, 12, 9, 11, 8, 15, 6, 12, 9, 14, 5, 13];

/// Per round: the left rotation of `B` (s2) and the constant K.
const S2: [u32; 4] = [10, 17, 25, 30];
const K: [u32; 4] = [0, 0x5a82_7999, 0x6ed9_eba1, 0x8f1b_bcdc];

/// The message word step `J` of round `R` reads.
#[inline(always)]
fn word<const R: usize, const J: usize>(x: &[u32; 16], extra: &[u32; 4]) -> u32 {
    let (g, i) = (J / 5, J % 5);
    if i == 0 { extra[EXTRA[g]] } else { x[ORDER[R][4 * g + i - 1]] }
}

/// Round `R`, its 20 steps spelled out so that every index and rotation is a constant.
#[inline(always)]
fn round<const R: usize>(v: &mut [u32; 5], x: &[u32; 16], f: impl Fn(u32, u32, u32) -> u32) {
    let order = &ORDER[R];
    let extra: [u32; 4] = std::array::from_fn(|g| {
        x[order[4 * g]] ^ x[order[4 * g + 1]] ^ x[order[4 * g + 2]] ^ x[order[4 * g + 3]]
    });
    let [mut a, mut b, mut c, mut d, mut e] = *v;
    macro_rules! steps {
        ($($j:literal)*) => {$(
            let t = a
                .rotate_left(S1[$j])
                .wrapping_add(f(b, c, d))
                .wrapping_add(e)
                .wrapping_add(word::<R, $j>(x, &extra))
                .wrapping_add(K[R]);
            e = d;
            d = c;
            c = b.rotate_left(S2[R]);
            b = a;
            a = t;
        )*};
    }
    steps!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19);
    *v = [a, b, c, d, e];
}

fn compress(h: &mut [u32; 5], blocks: &[[u8; 64]]) {
    for block in blocks {
        let x: [u32; 16] = std::array::from_fn(|i| {
            u32::from_le_bytes(block[4 * i..4 * i + 4].try_into().expect("4 bytes"))
        });
        let mut v = *h;
        round::<0>(&mut v, &x, |x, y, z| (x & y) | (!x & z));
        round::<1>(&mut v, &x, |x, y, z| x ^ y ^ z);
        round::<2>(&mut v, &x, |x, y, z| y ^ (x | !z));
        round::<3>(&mut v, &x, |x, y, z| x ^ y ^ z);
        for (h, v) in h.iter_mut().zip(v) {
            *h = h.wrapping_add(v);
        }
    }
}

#[derive(Clone)]
struct Has160 {
    h: [u32; 5],
    buf: BlockBuffer<64>,
}

impl Hasher for Has160 {
    fn update(&mut self, data: &[u8]) {
        let h = &mut self.h;
        self.buf.update(data, |blocks| compress(h, blocks));
    }

    fn finish(&self) -> Digest {
        // MD-style padding: 0x80, zeroes, the length in bits as a little-endian u64.
        let mut h = self.h;
        let pending = self.buf.pending();
        let mut tail = [[0u8; 64]; 2];
        let flat = tail.as_flattened_mut();
        flat[..pending.len()].copy_from_slice(pending);
        flat[pending.len()] = 0x80;
        let n = if pending.len() < 56 { 64 } else { 128 };
        flat[n - 8..n].copy_from_slice(&self.buf.total().wrapping_mul(8).to_le_bytes());
        compress(&mut h, &tail[..n / 64]);
        let mut out = [0u8; 20];
        for (o, w) in out.chunks_exact_mut(4).zip(h) {
            o.copy_from_slice(&w.to_le_bytes());
        }
        Digest::new(&out)
    }
}

pub(super) fn has160() -> Box<dyn Hasher> {
    Box::new(Has160 { h: IV, buf: BlockBuffer::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_words_lead_groups_as_the_standard_lists_them() {
        // The standard's l(j) for round 2: 18, 3, 6, 9, 12, 19, 15, 2, 5, 8, 16, 11, 14,
        // 1, 4, 17, 7, 10, 13, 0 (indices >= 16 are the extra words).
        let want = [18, 3, 6, 9, 12, 19, 15, 2, 5, 8, 16, 11, 14, 1, 4, 17, 7, 10, 13, 0];
        let got: Vec<usize> = (0..20)
            .map(|j| {
                let (g, i) = (j / 5, j % 5);
                if i == 0 { 16 + EXTRA[g] } else { ORDER[1][4 * g + i - 1] }
            })
            .collect();
        assert_eq!(got, want);
        for order in ORDER {
            let mut sorted = order;
            sorted.sort();
            assert_eq!(sorted, std::array::from_fn(|i| i), "each round reads every word once");
        }
    }
}
