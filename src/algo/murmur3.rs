//! MurmurHash3 x64 128-bit (Austin Appleby's public-domain reference, MurmurHash3.cpp,
//! `MurmurHash3_x64_128`), streaming. No vetted crate hashes it incrementally, so it is
//! written here from the reference algorithm and checked against SMHasher's verification
//! value and Python's `mmh3`. The digest is the reference's 16 output bytes (h1 then h2,
//! each little-endian), i.e. `mmh3.hash_bytes(data)`. Seed 0. A fast non-cryptographic
//! hash: it finds accidents, not tampering.

use super::Hasher;
use crate::digest::Digest;

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

#[derive(Clone)]
pub(super) struct Murmur3 {
    h1: u64,
    h2: u64,
    tail: [u8; 16],
    tail_len: usize,
    total: u64,
}

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

impl Murmur3 {
    pub(super) fn with_seed(seed: u32) -> Murmur3 {
        Murmur3 { h1: seed as u64, h2: seed as u64, tail: [0; 16], tail_len: 0, total: 0 }
    }

    fn block(&mut self, b: &[u8]) {
        let k1 = u64::from_le_bytes(b[..8].try_into().expect("16-byte block"));
        let k2 = u64::from_le_bytes(b[8..16].try_into().expect("16-byte block"));
        self.h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        self.h1 =
            self.h1.rotate_left(27).wrapping_add(self.h2).wrapping_mul(5).wrapping_add(0x52dc_e729);
        self.h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        self.h2 =
            self.h2.rotate_left(31).wrapping_add(self.h1).wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }
}

impl Hasher for Murmur3 {
    fn update(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if self.tail_len > 0 {
            let take = (16 - self.tail_len).min(data.len());
            self.tail[self.tail_len..self.tail_len + take].copy_from_slice(&data[..take]);
            self.tail_len += take;
            data = &data[take..];
            if self.tail_len < 16 {
                return;
            }
            let block = self.tail;
            self.block(&block);
            self.tail_len = 0;
        }
        let mut chunks = data.chunks_exact(16);
        for b in &mut chunks {
            self.block(b);
        }
        let rest = chunks.remainder();
        self.tail[..rest.len()].copy_from_slice(rest);
        self.tail_len = rest.len();
    }

    fn finish(&self) -> Digest {
        let (mut h1, mut h2) = (self.h1, self.h2);
        let t = &self.tail[..self.tail_len];
        // The tail: bytes 8.. make k2, bytes ..8 make k1 (little-endian, zero-padded).
        if t.len() > 8 {
            let mut b = [0u8; 8];
            b[..t.len() - 8].copy_from_slice(&t[8..]);
            h2 ^= u64::from_le_bytes(b).wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        }
        if !t.is_empty() {
            let mut b = [0u8; 8];
            let n = t.len().min(8);
            b[..n].copy_from_slice(&t[..n]);
            h1 ^= u64::from_le_bytes(b).wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        }
        h1 ^= self.total;
        h2 ^= self.total;
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        h1 = fmix64(h1);
        h2 = fmix64(h2);
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&h1.to_le_bytes());
        out[8..].copy_from_slice(&h2.to_le_bytes());
        Digest::new(&out)
    }
}

pub(super) fn murmur3() -> Box<dyn Hasher> {
    Box::new(Murmur3::with_seed(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SMHasher's VerificationTest: hash the keys {}, {0}, {0,1}, ... {0..254} with seeds
    /// 256, 255, ... 2, concatenate the 256 hashes, hash that with seed 0; the first four
    /// bytes, little-endian, are 0x6384BA69 for MurmurHash3_x64_128.
    #[test]
    fn smhasher_verification_value() {
        let mut all = Vec::with_capacity(256 * 16);
        let key: Vec<u8> = (0..=255u8).collect();
        for i in 0..256usize {
            let mut h = Murmur3::with_seed(256 - i as u32);
            h.update(&key[..i]);
            all.extend_from_slice(h.finish().as_bytes());
        }
        let mut h = Murmur3::with_seed(0);
        h.update(&all);
        let d = h.finish();
        let v = u32::from_le_bytes(d.as_bytes()[..4].try_into().unwrap());
        assert_eq!(v, 0x6384_ba69);
    }
}
