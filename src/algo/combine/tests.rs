//! Joined pieces give the one-shot digest, for every row that says it combines, on random
//! data cut at random multiples of the unit; CRC-64/NVME against a bitwise reference.

use super::*;
use crate::algo::{ALGORITHMS, Algorithm, lookup};
use proptest::prelude::*;

/// Bytes from a seed (SplitMix64).
fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// `a`'s digest of `input` joined from pieces cut at `cuts` (multiples of `unit`, in
/// order, inside the input), each fed in slices of `step` bytes.
fn joined(a: &Algorithm, input: &[u8], unit: u64, cuts: &[u64], step: usize) -> Digest {
    let c = a.combine.expect("combines");
    let mut bounds = vec![0u64];
    bounds.extend_from_slice(cuts);
    bounds.push(input.len() as u64);
    let states: Vec<(u64, Vec<u8>)> = bounds
        .windows(2)
        .map(|w| {
            let mut p = c.piece(unit, w[0]);
            for s in input[w[0] as usize..w[1] as usize].chunks(step.max(1)) {
                p.update(s);
            }
            (w[1] - w[0], p.finish())
        })
        .collect();
    let refs: Vec<(u64, &[u8])> = states.iter().map(|(l, s)| (*l, &s[..])).collect();
    c.join(unit, &refs).unwrap_or_else(|e| panic!("{a}: {e}"))
}

fn combining() -> Vec<&'static Algorithm> {
    ALGORITHMS.iter().filter(|a| a.combine.is_some()).collect()
}

#[test]
fn the_rows_that_combine_are_blake3_and_the_crcs() {
    let names: Vec<&str> = combining().iter().map(|a| a.name).collect();
    assert_eq!(names, ["crc32", "crc32c", "crc64nvme", "blake3"]);
    assert_eq!(lookup("CRC-64/NVME").map(|a| a.name), Some("crc64nvme"));
    assert_eq!(lookup("sha256").unwrap().combine, None);
}

/// Sizes around the unit and its multiples, one cut at every block, none but one cut.
#[test]
fn edges_of_blocks_join_to_the_one_shot_digest() {
    for unit in [1024u64, 4096] {
        let u = unit as usize;
        for size in [u + 1, 2 * u - 1, 2 * u, 2 * u + 1, 3 * u, 4 * u, 5 * u + 7, 37 * u, 64 * u] {
            let input = data(size, size as u64);
            let every: Vec<u64> = (1..size.div_ceil(u) as u64).map(|k| k * unit).collect();
            for a in combining() {
                let want = a.digest(&input);
                for cuts in [&every[..], &every[..1], &every[every.len() - 1..]] {
                    for step in [1000, u, 1 << 20] {
                        assert_eq!(
                            joined(a, &input, unit, cuts, step),
                            want,
                            "{a} {size} {cuts:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn one_block_or_bad_states_do_not_join() {
    let tree = Combine::Blake3Tree;
    let mut p = tree.piece(1024, 0);
    p.update(&[1; 1024]);
    let one = p.finish();
    assert!(tree.join(1024, &[(1024, &one)]).is_err(), "one block is hashed whole");
    assert!(tree.join(1024, &[(1024, &one), (10, &one[..5])]).is_err());
    assert!(tree.join(1000, &[(1000, &one), (10, &one)]).is_err(), "not a unit");
    assert!(tree.join(1024, &[(1000, &one), (1048, &one)]).is_err(), "not cut at the unit");
    assert!(Combine::Crc32.join(1024, &[(3, &[1, 2, 3])]).is_err());
    assert!(Combine::Crc64Nvme.join(1024, &[]).is_err());
    assert!(!valid_unit(512) && !valid_unit(3072) && valid_unit(1 << 30));
}

/// CRC-64/NVME bit by bit from its catalogue parameters (width 64, poly
/// 0xad93d23594c93659, init and xorout all ones, reflected in and out): written here from
/// the parameters, independent of crc-fast's tables and folding.
fn crc64nvme_bitwise(data: &[u8]) -> u64 {
    let poly = 0xad93_d235_94c9_3659u64.reverse_bits();
    let mut crc = !0u64;
    for &b in data {
        crc ^= u64::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ poly } else { crc >> 1 };
        }
    }
    !crc
}

#[test]
fn crc64nvme_has_the_catalogue_check_value() {
    assert_eq!(crc64nvme_bitwise(b"123456789"), 0xae8b_1486_0a79_9888);
    let a = lookup("crc64nvme").unwrap();
    assert_eq!(a.digest(b"123456789").to_hex(), "ae8b14860a799888");
    assert_eq!(a.len, 8);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn crc64nvme_equals_the_bitwise_reference(input in prop::collection::vec(any::<u8>(), 0..3000)) {
        let a = lookup("crc64nvme").unwrap();
        let got = a.digest(&input);
        prop_assert_eq!(got.as_bytes(), &crc64nvme_bitwise(&input).to_be_bytes()[..]);
    }

    /// Random sizes over one unit, random cuts at multiples of it, random slices.
    #[test]
    fn random_pieces_join_to_the_one_shot_digest(
        unit_shift in 0u32..3,
        blocks in 1u64..40,
        tail in 0u64..4096,
        seed in any::<u64>(),
        cut_bits in any::<u64>(),
        step in 1usize..9000,
    ) {
        let unit = 1024u64 << unit_shift;
        let size = (blocks * unit + tail % unit).max(unit + 1);
        let input = data(size as usize, seed);
        let cuts: Vec<u64> =
            (1..size.div_ceil(unit)).filter(|k| cut_bits >> (k % 64) & 1 == 1).map(|k| k * unit).collect();
        for a in combining() {
            prop_assert_eq!(joined(a, &input, unit, &cuts, step), a.digest(&input), "{}", a);
        }
    }
}
