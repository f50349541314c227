//! The x86-64 SIMD kernels of `mul_add_matrix` (see the parent module for the math).
//!
//! The tiling driver of `tile.rs` (shared with the aarch64 kernel) serves every kernel. Each
//! kernel supplies three things: the prepared form of a coefficient (GFNI matrices or
//! `vpshufb` nibble tables, which the driver makes), a transform that de-interleaves a
//! tile of a source into the scratch buffer, and a block routine that multiplies-and-adds
//! the scratch of a block of sources into K outputs at once (K accumulators in registers).
//!
//! De-interleaving uses lane-local shuffles only: within each 128-bit lane, `vpshufb` gathers
//! the 8 low bytes then the 8 high bytes of 8 words; `vpunpck{l,h}qdq` of two such vectors give
//! the vectors L and H; `vpunpck{l,h}bw` of L and H give back the two input vectors. Positions
//! inside L and H are some fixed permutation of the words, the same for sources and outputs,
//! which is all the element-wise arithmetic needs.

use std::arch::x86_64::*;

use super::tile::{Args, Rows, Spec, drive};
use super::{Prepared, gfni_prepare, nibble_prepare};

/// The SIMD kernels, fastest first.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Avx512Gfni,
    Avx2Gfni,
    Avx512Bw,
    Avx2,
    /// 128-bit `pshufb` (CPUs before AVX2, and VMs that hide it).
    Ssse3,
}

impl Kind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Avx512Gfni => "avx512-gfni",
            Kind::Avx2Gfni => "avx2-gfni",
            Kind::Avx512Bw => "avx512bw",
            Kind::Avx2 => "avx2",
            Kind::Ssse3 => "ssse3",
        }
    }

    /// The level of [`crate::simd`] it needs.
    pub(super) fn level(self) -> crate::simd::Level {
        use crate::simd::Level;
        match self {
            Kind::Avx512Gfni | Kind::Avx2Gfni => Level::Gfni,
            Kind::Avx512Bw => Level::Avx512,
            Kind::Avx2 => Level::Avx2,
            Kind::Ssse3 => Level::Ssse3,
        }
    }
}

/// The kernels the running CPU supports, fastest first.
pub(super) fn supported() -> Vec<Kind> {
    let avx2 = is_x86_feature_detected!("avx2");
    let bw = is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw");
    let gfni = is_x86_feature_detected!("gfni");
    let all = [(Kind::Avx512Gfni, bw && gfni), (Kind::Avx2Gfni, avx2 && gfni)];
    let ssse3 = is_x86_feature_detected!("ssse3");
    let all =
        all.into_iter().chain([(Kind::Avx512Bw, bw), (Kind::Avx2, avx2), (Kind::Ssse3, ssse3)]);
    all.filter(|&(_, ok)| ok).map(|(k, _)| k).collect()
}

/// Runs `kind` (which must be in `supported()`) on validated, non-empty arguments: the
/// rows `range` of the matrix's coefficients `all`, `outs.len()` rows of `srcs.len()`,
/// with the matrix's cache of them in each kernel's form.
pub(super) fn matrix(
    kind: Kind,
    outs: &mut [&mut [u8]],
    srcs: &[&[u8]],
    (all, range): (&[u16], std::ops::Range<usize>),
    cache: &Prepared,
) {
    assert!(super::supported().contains(&super::Kernel::Simd(kind)));
    let nib = Rows { all, range: range.clone(), prepared: &cache.nib };
    let gfni = Rows { all, range, prepared: &cache.gfni };
    // SAFETY: the CPU has the target features of `kind`'s routines (`supported` detected
    // them, and the parent's list of them, asked once, holds `kind`: asserted above).
    unsafe {
        match kind {
            Kind::Avx512Gfni => drive(&w512::GFNI, outs, srcs, gfni),
            Kind::Avx2Gfni => drive(&w256::GFNI, outs, srcs, gfni),
            Kind::Avx512Bw => drive(&w512::NIB, outs, srcs, nib),
            Kind::Avx2 => drive(&w256::NIB, outs, srcs, nib),
            Kind::Ssse3 => drive(&w128::NIB, outs, srcs, nib),
        }
    }
}

/// The kernels' bodies, written once over the width-specific helpers of the module they are
/// expanded in: `$gf` the target features of the GFNI kernel, `$nf` of the nibble kernel.
macro_rules! kernels {
    ($gf:literal, $nf:literal) => {
        kernels!(nib $nf);
        pub(super) const GFNI: Spec<[u64; 4]> = Spec {
            step: 2 * W,
            scratch: 2 * W,
            transform: gfni_transform,
            blocks: [gfni_block::<1>, gfni_block::<2>, gfni_block::<3>, gfni_block::<4>],
            prepare: gfni_prepare,
        };
        /// Stores (L, H) of each step.
        #[target_feature(enable = $nf)]
        unsafe fn gfni_transform(src: *const u8, steps: usize, dst: *mut u8) {
            for s in 0..steps {
                // SAFETY: `steps` steps of 2 W bytes at src and at dst.
                unsafe {
                    let (l, h) = deint(ld(src.add(s * 2 * W)), ld(src.add(s * 2 * W + W)));
                    st(dst.add(s * 2 * W), l);
                    st(dst.add(s * 2 * W + W), h);
                }
            }
        }

        #[target_feature(enable = $gf)]
        unsafe fn gfni_block<const K: usize>(a: &Args<'_, [u64; 4]>) {
            for s in 0..a.steps {
                let (mut lo, mut hi) = ([zero(); K], [zero(); K]);
                for i in 0..a.ib {
                    // SAFETY: the scratch holds `steps` steps of (L, H) for each of ib sources.
                    let (l, h) = unsafe {
                        let p = a.scratch.add((i * a.steps + s) * 2 * W);
                        (ld(p), ld(p.add(W)))
                    };
                    for k in 0..K {
                        // SAFETY: row k of the coefficients has ib entries from a.coefs.
                        let m = unsafe { &*a.coefs.add(k * a.stride + i) };
                        lo[k] = xor(lo[k], xor(aff(l, m[0]), aff(h, m[1])));
                        hi[k] = xor(hi[k], xor(aff(l, m[2]), aff(h, m[3])));
                    }
                }
                // SAFETY: as for this function.
                unsafe { finish(a.outs, s, lo, hi) };
            }
        }
    };
    (nib $nf:literal) => {
        pub(super) const NIB: Spec<[[u8; 16]; 8]> = Spec {
            step: 2 * W,
            scratch: 4 * W,
            transform: nib_transform,
            blocks: [nib_block::<1>, nib_block::<2>, nib_block::<3>, nib_block::<4>],
            prepare: nibble_prepare,
        };

        /// Stores the nibbles (n0, n1, n2, n3) of each step.
        #[target_feature(enable = $nf)]
        unsafe fn nib_transform(src: *const u8, steps: usize, dst: *mut u8) {
            for s in 0..steps {
                // SAFETY: `steps` steps of 2 W bytes at src, of 4 W bytes at dst.
                unsafe {
                    let (l, h) = deint(ld(src.add(s * 2 * W)), ld(src.add(s * 2 * W + W)));
                    for (j, v) in nibbles(l, h).into_iter().enumerate() {
                        st(dst.add(s * 4 * W + j * W), v);
                    }
                }
            }
        }

        /// Xors the interleaved (lo, hi) of each output into it.
        #[target_feature(enable = $nf)]
        unsafe fn finish<const K: usize>(outs: &[*mut u8], s: usize, lo: [V; K], hi: [V; K]) {
            for k in 0..K {
                let (r0, r1) = inter(lo[k], hi[k]);
                // SAFETY: every output has at least s + 1 steps of 2 W bytes.
                unsafe {
                    let p = outs[k].add(s * 2 * W);
                    st(p, xor(ld(p), r0));
                    st(p.add(W), xor(ld(p.add(W)), r1));
                }
            }
        }

        #[target_feature(enable = $nf)]
        unsafe fn nib_block<const K: usize>(a: &Args<'_, [[u8; 16]; 8]>) {
            for s in 0..a.steps {
                let (mut lo, mut hi) = ([zero(); K], [zero(); K]);
                for i in 0..a.ib {
                    // SAFETY: the scratch holds `steps` steps of 4 nibble vectors per source.
                    let n: [V; 4] = unsafe {
                        let p = a.scratch.add((i * a.steps + s) * 4 * W);
                        [ld(p), ld(p.add(W)), ld(p.add(2 * W)), ld(p.add(3 * W))]
                    };
                    for k in 0..K {
                        // SAFETY: row k of the coefficients has ib entries from a.coefs.
                        let t = unsafe { &*a.coefs.add(k * a.stride + i) };
                        // SAFETY: each table is 16 bytes.
                        let lk = |j: usize| shuf(unsafe { tbl(t[j].as_ptr()) }, n[j % 4]);
                        lo[k] = xor(lo[k], xor(xor(lk(0), lk(1)), xor(lk(2), lk(3))));
                        hi[k] = xor(hi[k], xor(xor(lk(4), lk(5)), xor(lk(6), lk(7))));
                    }
                }
                // SAFETY: as for this function.
                unsafe { finish(a.outs, s, lo, hi) };
            }
        }
    };
}

/// Per 128-bit lane: the low bytes of 8 words, then their high bytes.
const DEINT: [i8; 16] = [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15];

/// The 128-bit form: SSSE3's `pshufb` for the nibble kernel (no GFNI form: every CPU with
/// GFNI has AVX2, whose kernels come first).
mod w128 {
    use super::*;
    type V = __m128i;
    const W: usize = 16;

    #[target_feature(enable = "ssse3")]
    unsafe fn ld(p: *const u8) -> V {
        // SAFETY: the caller guarantees W readable bytes.
        unsafe { _mm_loadu_si128(p.cast()) }
    }
    #[target_feature(enable = "ssse3")]
    unsafe fn st(p: *mut u8, v: V) {
        // SAFETY: the caller guarantees W writable bytes.
        unsafe { _mm_storeu_si128(p.cast(), v) }
    }
    #[target_feature(enable = "ssse3")]
    unsafe fn tbl(p: *const u8) -> V {
        // SAFETY: the caller guarantees 16 readable bytes.
        unsafe { _mm_loadu_si128(p.cast()) }
    }
    #[target_feature(enable = "ssse3")]
    fn zero() -> V {
        _mm_setzero_si128()
    }
    #[target_feature(enable = "ssse3")]
    fn xor(a: V, b: V) -> V {
        _mm_xor_si128(a, b)
    }
    #[target_feature(enable = "ssse3")]
    fn shuf(t: V, i: V) -> V {
        _mm_shuffle_epi8(t, i)
    }
    #[target_feature(enable = "ssse3")]
    fn deint(x0: V, x1: V) -> (V, V) {
        // SAFETY: DEINT is 16 bytes.
        let p = unsafe { _mm_loadu_si128(DEINT.as_ptr().cast()) };
        let (y0, y1) = (_mm_shuffle_epi8(x0, p), _mm_shuffle_epi8(x1, p));
        (_mm_unpacklo_epi64(y0, y1), _mm_unpackhi_epi64(y0, y1))
    }
    #[target_feature(enable = "ssse3")]
    fn inter(l: V, h: V) -> (V, V) {
        (_mm_unpacklo_epi8(l, h), _mm_unpackhi_epi8(l, h))
    }
    #[target_feature(enable = "ssse3")]
    fn nibbles(l: V, h: V) -> [V; 4] {
        let m = _mm_set1_epi8(0x0f);
        let hi = |v| _mm_and_si128(_mm_srli_epi16(v, 4), m);
        [_mm_and_si128(l, m), hi(l), _mm_and_si128(h, m), hi(h)]
    }
    kernels!(nib "ssse3");
}

mod w256 {
    use super::*;
    type V = __m256i;
    const W: usize = 32;

    #[target_feature(enable = "avx2")]
    unsafe fn ld(p: *const u8) -> V {
        // SAFETY: the caller guarantees W readable bytes.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[target_feature(enable = "avx2")]
    unsafe fn st(p: *mut u8, v: V) {
        // SAFETY: the caller guarantees W writable bytes.
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }
    #[target_feature(enable = "avx2")]
    unsafe fn tbl(p: *const u8) -> V {
        // SAFETY: the caller guarantees 16 readable bytes.
        _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(p.cast()) })
    }
    #[target_feature(enable = "avx2")]
    fn zero() -> V {
        _mm256_setzero_si256()
    }
    #[target_feature(enable = "avx2")]
    fn xor(a: V, b: V) -> V {
        _mm256_xor_si256(a, b)
    }
    #[target_feature(enable = "avx2")]
    fn shuf(t: V, i: V) -> V {
        _mm256_shuffle_epi8(t, i)
    }
    #[target_feature(enable = "avx2")]
    fn deint(x0: V, x1: V) -> (V, V) {
        // SAFETY: DEINT is 16 bytes.
        let p = _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(DEINT.as_ptr().cast()) });
        let (y0, y1) = (_mm256_shuffle_epi8(x0, p), _mm256_shuffle_epi8(x1, p));
        (_mm256_unpacklo_epi64(y0, y1), _mm256_unpackhi_epi64(y0, y1))
    }
    #[target_feature(enable = "avx2")]
    fn inter(l: V, h: V) -> (V, V) {
        (_mm256_unpacklo_epi8(l, h), _mm256_unpackhi_epi8(l, h))
    }
    #[target_feature(enable = "avx2")]
    fn nibbles(l: V, h: V) -> [V; 4] {
        let m = _mm256_set1_epi8(0x0f);
        let hi = |v| _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
        [_mm256_and_si256(l, m), hi(l), _mm256_and_si256(h, m), hi(h)]
    }
    #[target_feature(enable = "avx2,gfni")]
    fn aff(x: V, m: u64) -> V {
        _mm256_gf2p8affine_epi64_epi8(x, _mm256_set1_epi64x(m as i64), 0)
    }

    kernels!("avx2,gfni", "avx2");
}

mod w512 {
    use super::*;
    type V = __m512i;
    const W: usize = 64;

    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn ld(p: *const u8) -> V {
        // SAFETY: the caller guarantees W readable bytes.
        unsafe { _mm512_loadu_si512(p.cast()) }
    }
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn st(p: *mut u8, v: V) {
        // SAFETY: the caller guarantees W writable bytes.
        unsafe { _mm512_storeu_si512(p.cast(), v) }
    }
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn tbl(p: *const u8) -> V {
        // SAFETY: the caller guarantees 16 readable bytes.
        _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(p.cast()) })
    }
    #[target_feature(enable = "avx512f,avx512bw")]
    fn zero() -> V {
        _mm512_setzero_si512()
    }
    #[target_feature(enable = "avx512f,avx512bw")]
    fn xor(a: V, b: V) -> V {
        _mm512_xor_si512(a, b)
    }
    #[target_feature(enable = "avx512f,avx512bw")]
    fn shuf(t: V, i: V) -> V {
        _mm512_shuffle_epi8(t, i)
    }
    #[target_feature(enable = "avx512f,avx512bw")]
    fn deint(x0: V, x1: V) -> (V, V) {
        // SAFETY: DEINT is 16 bytes.
        let p = _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(DEINT.as_ptr().cast()) });
        let (y0, y1) = (_mm512_shuffle_epi8(x0, p), _mm512_shuffle_epi8(x1, p));
        (_mm512_unpacklo_epi64(y0, y1), _mm512_unpackhi_epi64(y0, y1))
    }
    #[target_feature(enable = "avx512f,avx512bw")]
    fn inter(l: V, h: V) -> (V, V) {
        (_mm512_unpacklo_epi8(l, h), _mm512_unpackhi_epi8(l, h))
    }
    #[target_feature(enable = "avx512f,avx512bw")]
    fn nibbles(l: V, h: V) -> [V; 4] {
        let m = _mm512_set1_epi8(0x0f);
        let hi = |v| _mm512_and_si512(_mm512_srli_epi16(v, 4), m);
        [_mm512_and_si512(l, m), hi(l), _mm512_and_si512(h, m), hi(h)]
    }
    #[target_feature(enable = "avx512f,avx512bw,gfni")]
    fn aff(x: V, m: u64) -> V {
        _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64(m as i64), 0)
    }

    kernels!("avx512f,avx512bw,gfni", "avx512f,avx512bw");
}
