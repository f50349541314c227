//! Rows of many messages of one size at once, as a tree of small files is hashed: the
//! lane kernels (multi-buffer MD5, SHA-1 and SHA-256, BLAKE3's lanes) that the SIMD cap
//! allows, or the single-stream code below AVX2. One thread; [`MANY`] messages a call.
//! These rows, and the PAR2 row, are the ones whose speed depends on the SIMD level
//! (`fixity bench algorithms --levels`); the crates' own code does not.

use super::algos::{AlgoRow, measure_named};
use crate::algo::Algorithm;
use crate::algo::multibuf::{self, Family, Kernel, b3};

/// Messages hashed per call.
pub const MANY: usize = 64;

/// The largest message size measured many at once: the lane engine takes small files
/// (BLAKE3's lanes up to 64 KiB, MD5 and SHA up to a few MiB); 64 messages of more would
/// hold the rows' memory for nothing.
pub const MANY_MAX: usize = 1 << 20;

/// The row's name: `md5-many`, `sha1-many`, `sha256-many`, `blake3-many`.
fn row_name(family: Family) -> &'static str {
    match family {
        Family::Md5 => "md5-many",
        Family::Sha1 => "sha1-many",
        Family::Sha256 => "sha256-many",
        Family::Blake3 => "blake3-many",
    }
}

/// The lane kernel the lane engine takes for files of `size` bytes of `family` now: the
/// engine's own rules ([`Kernel::for_engine`], BLAKE3's [`b3::Kernel::takes`]).
fn engine_kernel(family: Family, size: usize) -> Option<&'static str> {
    match family {
        Family::Blake3 => b3::Kernel::best().filter(|k| k.takes(size as u64)).map(|k| k.name()),
        f => Kernel::for_engine(f).map(|k| k.name()),
    }
}

/// The code that hashes many messages of `family` of `size` bytes now: the lane kernel's
/// name (`avx2x8`, `avx512x16`, ...) or, when the engine takes none, the single-stream
/// code's.
pub(crate) fn kernel(family: Family, size: usize) -> String {
    engine_kernel(family, size).unwrap_or_else(|| single_stream(family)).to_string()
}

/// What hashes one message of `family` (the crates pick it at run time).
pub(crate) fn single_stream(family: Family) -> &'static str {
    match family {
        Family::Md5 => "scalar",
        Family::Sha1 | Family::Sha256 if multibuf::sha_ni() => "sha-ni",
        Family::Sha1 | Family::Sha256 => "scalar",
        Family::Blake3 => "crate",
    }
}

/// A row per (algorithm with lanes, size up to [`MANY_MAX`]) of `algos`, at the current
/// SIMD cap, the row's `simd` set to `level`.
pub fn rows(
    algos: &[&'static Algorithm],
    sizes: &[usize],
    runs: usize,
    level: Option<crate::simd::Level>,
    on_row: &mut dyn FnMut(&AlgoRow),
) -> Vec<AlgoRow> {
    let Some(max) = sizes.iter().copied().filter(|&s| s <= MANY_MAX).max() else {
        return Vec::new();
    };
    let data: Vec<u8> = (0..(max * MANY) as u64)
        .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
        .collect();
    let mut rows = Vec::new();
    for family in algos.iter().filter_map(|a| a.lanes) {
        for &size in sizes.iter().filter(|&&s| s <= MANY_MAX) {
            let msgs: Vec<&[u8]> = data.chunks_exact(max).map(|c| &c[..size]).collect();
            let kernel_name = kernel(family, size);
            let mut row = measure_named(row_name(family), size * MANY, 1, runs, &|| {
                std::hint::black_box(hash_many(family, &msgs));
            });
            row.size = size;
            row.kernel = kernel_name;
            row.simd = level.map(|l| l.name());
            on_row(&row);
            rows.push(row);
        }
    }
    rows
}

/// The digests of `msgs` (all of one length) as the lane engine makes them at the cap:
/// whole blocks of a lane's worth of messages in one kernel call, the padding in the
/// lanes too; or one message at a time where the engine takes no kernel
/// ([`multibuf::digests`]).
pub(crate) fn hash_many(family: Family, msgs: &[&[u8]]) -> Vec<crate::digest::Digest> {
    multibuf::digests(family, msgs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::multibuf::harness::reference;

    #[test]
    fn many_at_once_gives_each_message_its_digest_at_every_level() {
        let data: Vec<u8> = (0..70 * 300).map(|i| (i * 7 + i / 13) as u8).collect();
        for len in [0, 1, 55, 56, 64, 119, 120, 1000] {
            let msgs: Vec<&[u8]> =
                data.chunks_exact(300).take(70).map(|c| &c[..len.min(300)]).collect();
            let long: Vec<Vec<u8>> = (0..20).map(|i| data[i..i + len].to_vec()).collect();
            let long: Vec<&[u8]> = long.iter().map(Vec::as_slice).collect();
            crate::simd::tests::each_level("bench's many-at-once rows", |level| {
                for family in [Family::Md5, Family::Sha1, Family::Sha256, Family::Blake3] {
                    for set in [&msgs, &long] {
                        let got = hash_many(family, set);
                        assert_eq!(got.len(), set.len());
                        for (m, d) in set.iter().zip(&got) {
                            let want = match family {
                                Family::Blake3 => blake3::hash(m).as_bytes().to_vec(),
                                f => reference(f.name(), m),
                            };
                            assert_eq!(d.as_bytes(), want, "{family:?} {len} at {level}");
                        }
                    }
                    let k = kernel(family, len);
                    assert!(!k.is_empty());
                    if level < crate::simd::Level::Avx2 {
                        assert_eq!(k, single_stream(family), "no lanes below AVX2");
                    }
                }
            });
        }
    }

    #[test]
    fn a_row_per_family_and_small_size_with_its_kernel() {
        let algos: Vec<&'static Algorithm> =
            ["md5", "blake3", "crc32"].iter().map(|n| crate::algo::lookup(n).unwrap()).collect();
        let mut seen = 0;
        let rows = rows(&algos, &[1000, 4096, MANY_MAX + 1], 1, None, &mut |_| seen += 1);
        assert_eq!((rows.len(), seen), (4, 4), "two families, two sizes (not above MANY_MAX)");
        assert_eq!(rows[0].algorithm, "md5-many");
        assert_eq!(rows[3].algorithm, "blake3-many");
        assert!(rows.iter().all(|r| !r.kernel.is_empty() && r.simd.is_none() && r.best_mbps > 0.0));
        assert_eq!((rows[1].size, rows[1].threads), (4096, 1));
    }
}
