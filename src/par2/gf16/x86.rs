//! The x86-64 SIMD kernels of `mul_add_matrix` (see the parent module for the math).
//!
//! One tiling driver serves every kernel. Each kernel supplies three things: the prepared form
//! of a coefficient (GFNI matrices or `vpshufb` nibble tables), a transform that de-interleaves
//! a tile of a source into the scratch buffer, and a block routine that multiplies-and-adds
//! the scratch of a block of sources into K outputs at once (K accumulators in registers).
//!
//! De-interleaving uses lane-local shuffles only: within each 128-bit lane, `vpshufb` gathers
//! the 8 low bytes then the 8 high bytes of 8 words; `vpunpck{l,h}qdq` of two such vectors give
//! the vectors L and H; `vpunpck{l,h}bw` of L and H give back the two input vectors. Positions
//! inside L and H are some fixed permutation of the words, the same for sources and outputs,
//! which is all the element-wise arithmetic needs.

use std::arch::x86_64::*;

use super::{gfni_prepared, nibble_tables};

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

/// Bytes of each slice per tile: the scratch of a block of sources holds `SRC_BLOCK` tiles.
const TILE: usize = 2048;
/// Sources de-interleaved together into the scratch buffer.
const SRC_BLOCK: usize = 16;
/// Outputs accumulated together in registers (blocks of 1..=OUT_BLOCK).
const OUT_BLOCK: usize = 4;

/// What a block routine works on: `outs` point at the tile of K outputs, `coefs` at the
/// prepared coefficient (o0, i0) of a row-major matrix with rows of `stride` entries.
struct Args<'a, C> {
    outs: &'a [*mut u8],
    steps: usize,
    scratch: *const u8,
    coefs: *const C,
    stride: usize,
    ib: usize,
}

type Block<C> = unsafe fn(&Args<'_, C>);

/// A kernel for the driver.
struct Spec<C> {
    /// Bytes of data per step (two vectors).
    step: usize,
    /// Bytes of scratch per step.
    scratch: usize,
    prep: fn(u16) -> C,
    /// De-interleaves `steps` steps of a source at the pointer into the scratch at the other.
    transform: unsafe fn(*const u8, usize, *mut u8),
    /// The block routines for 1..=OUT_BLOCK outputs.
    blocks: [Block<C>; OUT_BLOCK],
}

/// Scratch memory, aligned for vector loads.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Runs `kind` (which must be in `supported()`) on validated, non-empty arguments.
pub(super) fn matrix(kind: Kind, outs: &mut [&mut [u8]], srcs: &[&[u8]], coeffs: &[u16]) {
    assert!(supported().contains(&kind));
    match kind {
        Kind::Avx512Gfni => drive(&w512::GFNI, outs, srcs, coeffs),
        Kind::Avx2Gfni => drive(&w256::GFNI, outs, srcs, coeffs),
        Kind::Avx512Bw => drive(&w512::NIB, outs, srcs, coeffs),
        Kind::Avx2 => drive(&w256::NIB, outs, srcs, coeffs),
        Kind::Ssse3 => drive(&w128::NIB, outs, srcs, coeffs),
    }
}

fn drive<C>(spec: &Spec<C>, outs: &mut [&mut [u8]], srcs: &[&[u8]], coeffs: &[u16]) {
    let coefs: Vec<C> = coeffs.iter().map(|&c| (spec.prep)(c)).collect();
    let len = srcs[0].len();
    let full = len - len % spec.step;
    if full > 0 {
        let o: Vec<*mut u8> = outs.iter_mut().map(|o| o.as_mut_ptr()).collect();
        let s: Vec<*const u8> = srcs.iter().map(|s| s.as_ptr()).collect();
        // SAFETY: every pointer addresses `len >= full` bytes; outputs are distinct `&mut`
        // slices, so they overlap neither each other nor the sources.
        unsafe { tiles(spec, &o, &s, full, &coefs) };
    }
    if full < len {
        // The tail: zero-padded copies of one step each.
        let (tail, step) = (len - full, spec.step);
        let mut s_pad = vec![0u8; srcs.len() * step];
        for (pad, s) in s_pad.chunks_exact_mut(step).zip(srcs) {
            pad[..tail].copy_from_slice(&s[full..]);
        }
        let mut o_pad = vec![0u8; outs.len() * step];
        for (pad, o) in o_pad.chunks_exact_mut(step).zip(outs.iter()) {
            pad[..tail].copy_from_slice(&o[full..]);
        }
        let o: Vec<*mut u8> = o_pad.chunks_exact_mut(step).map(|p| p.as_mut_ptr()).collect();
        let s: Vec<*const u8> = s_pad.chunks_exact(step).map(|p| p.as_ptr()).collect();
        // SAFETY: every pointer addresses one step of its own padded buffer.
        unsafe { tiles(spec, &o, &s, step, &coefs) };
        for (pad, o) in o_pad.chunks_exact(step).zip(outs.iter_mut()) {
            o[full..].copy_from_slice(&pad[..tail]);
        }
    }
}

/// The tiled multiply-add of `len` bytes (a multiple of `spec.step`).
/// SAFETY: the caller guarantees `spec` is supported by the CPU, every pointer addresses `len`
/// bytes, the outputs overlap nothing, and `coefs` has `outs.len() * srcs.len()` entries.
unsafe fn tiles<C>(spec: &Spec<C>, outs: &[*mut u8], srcs: &[*const u8], len: usize, coefs: &[C]) {
    let n = srcs.len();
    let tile_steps = TILE.div_ceil(spec.step);
    let per_src = tile_steps * spec.scratch;
    let mut buf = vec![Line([0; 64]); (SRC_BLOCK.min(n) * per_src).div_ceil(64)];
    let scratch = buf.as_mut_ptr().cast::<u8>();
    let mut ptrs = [std::ptr::null_mut(); OUT_BLOCK];
    for t in (0..len).step_by(tile_steps * spec.step) {
        let steps = (len - t).min(tile_steps * spec.step) / spec.step;
        for i0 in (0..n).step_by(SRC_BLOCK) {
            let ib = SRC_BLOCK.min(n - i0);
            for i in 0..ib {
                // SAFETY: the source has `steps` steps at t; the scratch has room for ib
                // sources of `steps <= tile_steps` steps, packed (source i at i * steps).
                unsafe {
                    let dst = scratch.add(i * steps * spec.scratch);
                    (spec.transform)(srcs[i0 + i].add(t), steps, dst);
                }
            }
            for o0 in (0..outs.len()).step_by(OUT_BLOCK) {
                let kb = OUT_BLOCK.min(outs.len() - o0);
                for (p, o) in ptrs.iter_mut().zip(&outs[o0..o0 + kb]) {
                    // SAFETY: t < len, inside the output.
                    *p = unsafe { o.add(t) };
                }
                let args = Args {
                    outs: &ptrs[..kb],
                    steps,
                    scratch,
                    coefs: coefs[o0 * n + i0..].as_ptr(),
                    stride: n,
                    ib,
                };
                // SAFETY: as for this function; the scratch holds ib transformed sources.
                unsafe { (spec.blocks[kb - 1])(&args) };
            }
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
            prep: gfni_prepared,
            transform: gfni_transform,
            blocks: [gfni_block::<1>, gfni_block::<2>, gfni_block::<3>, gfni_block::<4>],
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
            prep: nibble_tables,
            transform: nib_transform,
            blocks: [nib_block::<1>, nib_block::<2>, nib_block::<3>, nib_block::<4>],
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
