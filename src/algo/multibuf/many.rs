//! The digests of many messages held whole in memory, of any lengths, through the lanes:
//! PAR2's slices and file heads, and the catalog's digests of the small files a recovery
//! set reads whole.
//!
//! The messages are taken in order of length, a lane's worth at a time, so the lanes of a
//! call hold messages of about one length. A group compresses the whole blocks all its
//! messages have in one kernel call; then each lane goes on through the rest of its
//! message and its padding ([`super::final_blocks`]), every call as many blocks as the
//! busy lane with the fewest left has, so the padding too runs in the lanes (finishing
//! each message in the single-stream code cost as much as the lanes' own work for slices
//! of 3 KiB: 4% of a `protect` of D3). Groups with fewer messages than the kernel's
//! break-even, and every message when no kernel is allowed (the SIMD cap, no AVX2), use
//! the single-stream code.

use super::{Family, Kernel, b3, digest, final_blocks, finish, initial};
use crate::digest::Digest;

/// The digest of every message of `msgs` (`family`'s own bytes: 16, 20 or 32), in order.
pub(crate) fn digests(family: Family, msgs: &[&[u8]]) -> Vec<Digest> {
    if family == Family::Blake3 {
        return blake3_digests(msgs);
    }
    let Some(kernel) = Kernel::for_engine(family) else {
        return msgs.iter().map(|m| single(family, m)).collect();
    };
    let least = kernel.break_even().unwrap_or(usize::MAX);
    let mut order: Vec<usize> = (0..msgs.len()).collect();
    order.sort_by_key(|&i| msgs[i].len());
    let mut out = vec![Digest::new(&[]); msgs.len()];
    for group in order.chunks(kernel.lanes()) {
        if group.len() < least {
            for &i in group {
                out[i] = single(family, msgs[i]);
            }
            continue;
        }
        let lanes: Vec<&[u8]> = group.iter().map(|&i| msgs[i]).collect();
        for (&i, d) in group.iter().zip(in_lanes(kernel, &lanes)) {
            out[i] = d;
        }
    }
    out
}

/// One message in the single-stream code ([`finish`] takes whole blocks too).
fn single(family: Family, m: &[u8]) -> Digest {
    finish(family, initial(family), m, m.len() as u64)
}

/// The digests of `msgs` (at most a lane each, shortest first) in `kernel`'s lanes.
fn in_lanes(kernel: &Kernel, msgs: &[&[u8]]) -> Vec<Digest> {
    let family = kernel.family();
    let n = kernel.lanes();
    let mut states = vec![initial(family); n];
    // Each lane's message: its whole blocks, then its last block or two.
    let last: Vec<([u8; 128], usize)> = msgs
        .iter()
        .map(|m| final_blocks(family, &m[m.len() - m.len() % 64..], m.len() as u64))
        .collect();
    let mut parts: Vec<[&[u8]; 2]> = msgs
        .iter()
        .zip(&last)
        .map(|(m, (buf, k))| [&m[..m.len() - m.len() % 64], &buf[..*k]])
        .collect();
    // The part a lane is in.
    fn current<'a>(p: &[&'a [u8]; 2]) -> &'a [u8] {
        if p[0].is_empty() { p[1] } else { p[0] }
    }
    // Each call as many blocks as the busy lane with the fewest left in its part has.
    while let Some(fewest) = parts.iter().map(|p| current(p).len() / 64).filter(|&b| b > 0).min() {
        let mut data: Vec<&[u8]> = parts.iter().map(current).collect();
        data.resize(n, &[]);
        kernel.compress(&mut states, &data, fewest);
        for p in &mut parts {
            let k = usize::from(p[0].is_empty());
            if !p[k].is_empty() {
                p[k] = &p[k][fewest * 64..];
            }
        }
    }
    states[..msgs.len()].iter().map(|s| digest(family, s)).collect()
}

/// BLAKE3: the inputs the lane kernel takes, together; the rest (empty, or above its
/// largest input) by the crate, which is multi-lane within one large input.
fn blake3_digests(msgs: &[&[u8]]) -> Vec<Digest> {
    let crate_hash = |m: &[u8]| Digest::new(::blake3::hash(m).as_bytes());
    let Some(kernel) = b3::Kernel::best() else {
        return msgs.iter().map(|m| crate_hash(m)).collect();
    };
    let (taken, rest): (Vec<usize>, Vec<usize>) =
        (0..msgs.len()).partition(|&i| kernel.takes(msgs[i].len() as u64));
    let mut out = vec![Digest::new(&[]); msgs.len()];
    let inputs: Vec<&[u8]> = taken.iter().map(|&i| msgs[i]).collect();
    for (&i, d) in taken.iter().zip(b3::hash_many(kernel, &inputs)) {
        out[i] = Digest::new(&d);
    }
    for i in rest {
        out[i] = crate_hash(msgs[i]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crates' digest of `m`.
    fn reference(family: Family, m: &[u8]) -> Vec<u8> {
        match family {
            Family::Blake3 => ::blake3::hash(m).as_bytes().to_vec(),
            f => crate::algo::multibuf::harness::reference(f.name(), m),
        }
    }

    /// Every family, BLAKE3 too (`Family::ALL` is the block families).
    const FAMILIES: [Family; 4] = [Family::Md5, Family::Sha1, Family::Sha256, Family::Blake3];

    /// Messages of every length around the block and padding edges, and a run of
    /// lengths spread over a few KiB (PAR2's slices, small files), in no order.
    fn messages() -> Vec<Vec<u8>> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut byte = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        };
        let mut lens: Vec<usize> = (0..=130).collect();
        lens.extend((0..90).map(|i| (i * 977 + 333) % 9000));
        lens.extend([3072, 3072, 3072, 4096, 16384, 65536, 70000]);
        lens.iter().map(|&n| (0..n).map(|_| byte()).collect()).collect()
    }

    #[test]
    fn every_message_gets_its_digest_at_every_level() {
        let msgs = messages();
        let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
        crate::simd::tests::each_level("digests of many messages", |level| {
            for family in FAMILIES {
                // All at once, a handful (under a lane's worth), one, none.
                for set in [&refs[..], &refs[100..105], &refs[7..8], &[]] {
                    let got = digests(family, set);
                    assert_eq!(got.len(), set.len());
                    for (m, d) in set.iter().zip(&got) {
                        let want = reference(family, m);
                        assert_eq!(
                            d.as_bytes(),
                            want,
                            "{family:?} of {} bytes at {level}",
                            m.len()
                        );
                    }
                }
            }
        });
    }

    #[test]
    fn the_lanes_give_what_the_registry_rows_hasher_gives() {
        let msgs = messages();
        let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
        let rows = crate::algo::ALGORITHMS.iter().filter_map(|a| a.lanes.map(|f| (a, f)));
        let mut seen = 0;
        for (algo, family) in rows {
            seen += 1;
            for (m, d) in refs.iter().zip(digests(family, &refs)) {
                assert_eq!(
                    d.as_bytes(),
                    algo.digest(m).as_bytes(),
                    "{} of {} bytes",
                    algo.name,
                    m.len()
                );
            }
        }
        assert_eq!(seen, FAMILIES.len(), "a registry row for each family");
    }

    #[test]
    fn equal_lengths_in_the_lanes_at_the_best_level() {
        // A set's slices: all one length, the padding of each in the lanes.
        let data: Vec<u8> = (0..40 * 3100).map(|i| (i * 31 + i / 7) as u8).collect();
        for len in [3072, 3100, 3063, 3064] {
            let msgs: Vec<&[u8]> = data.chunks_exact(3100).map(|c| &c[..len]).collect();
            for family in FAMILIES {
                for (m, d) in msgs.iter().zip(digests(family, &msgs)) {
                    assert_eq!(d.as_bytes(), reference(family, m), "{family:?} {len}");
                }
            }
        }
    }
}
