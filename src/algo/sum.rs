//! The three checksums of the Unix `cksum` and `sum` commands, written from their
//! specifications:
//!
//! - POSIX `cksum` (IEEE Std 1003.1, "cksum"): CRC-32 with the generator polynomial
//!   0x04C11DB7, most significant bit first (not reflected), initial value 0, over the
//!   data followed by the data's length in octets (least significant octet first, as few
//!   octets as needed), complemented. The CRC catalogue calls the CRC part CRC-32/CKSUM
//!   (check value 0x765E7680 for "123456789" without the length).
//! - BSD `sum` (`sum -r`): a 16-bit checksum rotated right by one bit before each byte is
//!   added.
//! - System V `sum` (`sum -s`): the byte sum modulo 2^32, folded twice to 16 bits.
//!
//! Each digest is printed big-endian: 4 bytes for `cksum`, 2 bytes for the sums. The
//! block counts `sum` prints beside the checksum come from the file size (see
//! `formats::cksum`), not from the digest.
//!
//! The CRC itself is computed by `crc-fast` (carry-less multiplication folding, like
//! coreutils' pclmul path; a 1 GiB file in page cache hashes about 5x faster than with
//! slice-by-16 tables). The tests check it against a slice-by-16 table implementation
//! and the bit-at-a-time definition, both written here from the polynomial.

use super::Hasher;
use crate::digest::Digest;

#[cfg(test)]
const POLY: u32 = 0x04c1_1db7;
/// Bytes consumed per step of the sliced loop.
#[cfg(test)]
const SLICE: usize = 16;

/// `TABLES[k][b]` is the CRC register contribution of byte `b` followed by `k` zero
/// bytes, so 16 input bytes are folded in with 16 independent table lookups.
#[cfg(test)]
static TABLES: [[u32; 256]; SLICE] = make_tables();

#[cfg(test)]
const fn make_tables() -> [[u32; 256]; SLICE] {
    let mut t = [[0u32; 256]; SLICE];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u32) << 24;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 0x8000_0000 != 0 { (c << 1) ^ POLY } else { c << 1 };
            bit += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut k = 1;
    while k < SLICE {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev << 8) ^ t[0][(prev >> 24) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}

/// Feeds `data` into the (uncomplemented) CRC register `crc`.
#[cfg(test)]
fn crc_update(mut crc: u32, data: &[u8]) -> u32 {
    let t = &TABLES;
    let mut chunks = data.chunks_exact(SLICE);
    for c in &mut chunks {
        let w0 = u32::from_be_bytes([c[0], c[1], c[2], c[3]]) ^ crc;
        let w1 = u32::from_be_bytes([c[4], c[5], c[6], c[7]]);
        let w2 = u32::from_be_bytes([c[8], c[9], c[10], c[11]]);
        let w3 = u32::from_be_bytes([c[12], c[13], c[14], c[15]]);
        crc = t[15][(w0 >> 24) as usize]
            ^ t[14][(w0 >> 16) as usize & 0xff]
            ^ t[13][(w0 >> 8) as usize & 0xff]
            ^ t[12][w0 as usize & 0xff]
            ^ t[11][(w1 >> 24) as usize]
            ^ t[10][(w1 >> 16) as usize & 0xff]
            ^ t[9][(w1 >> 8) as usize & 0xff]
            ^ t[8][w1 as usize & 0xff]
            ^ t[7][(w2 >> 24) as usize]
            ^ t[6][(w2 >> 16) as usize & 0xff]
            ^ t[5][(w2 >> 8) as usize & 0xff]
            ^ t[4][w2 as usize & 0xff]
            ^ t[3][(w3 >> 24) as usize]
            ^ t[2][(w3 >> 16) as usize & 0xff]
            ^ t[1][(w3 >> 8) as usize & 0xff]
            ^ t[0][w3 as usize & 0xff];
    }
    for &b in chunks.remainder() {
        crc = (crc << 8) ^ t[0][((crc >> 24) as u8 ^ b) as usize];
    }
    crc
}

/// POSIX `cksum`: CRC-32/CKSUM (init 0, not reflected, complemented at the end) over
/// the data and then the length octets.
#[derive(Clone)]
struct Cksum {
    crc: crc_fast::Digest,
    len: u64,
}

impl Hasher for Cksum {
    fn update(&mut self, data: &[u8]) {
        self.crc.update(data);
        self.len += data.len() as u64;
    }

    fn finish(&self) -> Digest {
        let mut crc = self.crc;
        let mut n = self.len;
        while n != 0 {
            crc.update(&[n as u8]);
            n >>= 8;
        }
        // finalize() applies CRC-32/CKSUM's final complement.
        Digest::new(&(crc.finalize() as u32).to_be_bytes())
    }
}

pub(super) fn cksum() -> Box<dyn Hasher> {
    Box::new(Cksum { crc: crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Cksum), len: 0 })
}

/// BSD `sum`: rotate right one bit, add the byte, keep 16 bits.
#[derive(Clone, Default)]
struct BsdSum(u16);

impl Hasher for BsdSum {
    fn update(&mut self, data: &[u8]) {
        let mut s = self.0;
        for &b in data {
            s = s.rotate_right(1).wrapping_add(b as u16);
        }
        self.0 = s;
    }

    fn finish(&self) -> Digest {
        Digest::new(&self.0.to_be_bytes())
    }
}

pub(super) fn bsd_sum() -> Box<dyn Hasher> {
    Box::new(BsdSum::default())
}

/// System V `sum`: the byte sum (mod 2^32) folded to 16 bits.
#[derive(Clone, Default)]
struct SysvSum(u32);

impl Hasher for SysvSum {
    fn update(&mut self, data: &[u8]) {
        // Sum in u64 lanes of bounded length so no lane can overflow, then fold in.
        let mut total = self.0;
        for block in data.chunks(1 << 20) {
            let s: u64 = block.iter().map(|&b| b as u64).sum();
            total = total.wrapping_add(s as u32);
        }
        self.0 = total;
    }

    fn finish(&self) -> Digest {
        let s = self.0;
        let r = (s & 0xffff) + (s >> 16);
        let folded = (r & 0xffff) + (r >> 16);
        Digest::new(&(folded as u16).to_be_bytes())
    }
}

pub(super) fn sysv_sum() -> Box<dyn Hasher> {
    Box::new(SysvSum::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit-at-a-time definition the tables must agree with.
    fn crc_bitwise(mut crc: u32, data: &[u8]) -> u32 {
        for &b in data {
            crc ^= (b as u32) << 24;
            for _ in 0..8 {
                crc = if crc & 0x8000_0000 != 0 { (crc << 1) ^ POLY } else { crc << 1 };
            }
        }
        crc
    }

    #[test]
    fn sliced_crc_equals_the_bitwise_definition() {
        let data: Vec<u8> =
            (0..1000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for len in [0, 1, 15, 16, 17, 31, 32, 33, 100, 1000] {
            assert_eq!(crc_update(0, &data[..len]), crc_bitwise(0, &data[..len]), "len {len}");
            assert_eq!(
                crc_update(0x1234_5678, &data[..len]),
                crc_bitwise(0x1234_5678, &data[..len])
            );
        }
    }

    #[test]
    fn crc_fast_agrees_with_the_tables() {
        // Lengths around crc-fast's SIMD block sizes, and odd starting offsets.
        let data: Vec<u8> =
            (0..20_000u32).map(|i| (i.wrapping_mul(0x9e37_79b9) >> 11) as u8).collect();
        for len in [0, 1, 3, 15, 16, 31, 63, 64, 65, 127, 128, 255, 256, 257, 1000, 4096, 19_999] {
            for start in [0, 1, 7] {
                let part = &data[start..start + len.min(data.len() - start)];
                let mut d = crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Cksum);
                d.update(part);
                assert_eq!(d.finalize() as u32, !crc_update(0, part), "len {len} start {start}");
            }
        }
    }

    #[test]
    fn crc_without_length_is_the_catalogue_crc32_cksum() {
        // CRC catalogue CRC-32/CKSUM: check=0x765e7680 (the CRC of "123456789" alone,
        // complemented, without the length octets).
        assert_eq!(!crc_update(0, b"123456789"), 0x765e_7680);
    }
}
