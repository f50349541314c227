//! The tiling driver of the SIMD kernels of `mul_add_matrix`, shared by every architecture
//! (`x86.rs`, `arm.rs`; see the parent module for the math).
//!
//! Each kernel supplies a [`Spec`]: a transform that de-interleaves a tile of a source into the scratch
//! buffer, and a block routine that multiplies-and-adds the scratch of a block of sources
//! into K outputs at once (K accumulators in registers). The driver cuts the length into
//! tiles, the sources into blocks of `SRC_BLOCK` and the outputs into blocks of at most
//! `OUT_BLOCK`, and sends a tail shorter than one step through zero-padded copies.

use std::sync::OnceLock;

/// Bytes of each slice per tile: the scratch of a block of sources holds `SRC_BLOCK` tiles.
const TILE: usize = 1024;
/// Sources de-interleaved together into the scratch buffer. The outputs' tiles are read
/// and written once per block of sources: 64 sources of 1 KiB rather than 16 of 2 KiB
/// (the same scratch per source and tile) took 6% less CPU in `protect` of a 256 MiB file
/// with the AVX-512 GFNI kernel (`/usr/bin/time`, 10 runs each), the same with the nibble
/// kernels and for D3's small slices (docs/benchmarks.md, issue 41, fifth pass).
const SRC_BLOCK: usize = 64;
/// Outputs accumulated together in registers (blocks of 1..=OUT_BLOCK).
pub(super) const OUT_BLOCK: usize = 4;

/// What a block routine works on: `outs` point at the tile of K outputs, `coefs` at the
/// prepared coefficients of the block (K rows of `stride` entries, `ib` of them used).
pub(super) struct Args<'a, C> {
    pub(super) outs: &'a [*mut u8],
    pub(super) steps: usize,
    pub(super) scratch: *const u8,
    pub(super) coefs: *const C,
    pub(super) stride: usize,
    pub(super) ib: usize,
}

pub(super) type Block<C> = unsafe fn(&Args<'_, C>);

/// A kernel for the driver.
pub(super) struct Spec<C> {
    /// Bytes of data per step (two vectors).
    pub(super) step: usize,
    /// Bytes of scratch per step.
    pub(super) scratch: usize,
    /// De-interleaves `steps` steps of a source at the pointer into the scratch at the other.
    pub(super) transform: unsafe fn(*const u8, usize, *mut u8),
    /// The block routines for 1..=OUT_BLOCK outputs.
    pub(super) blocks: [Block<C>; OUT_BLOCK],
    /// Coefficients in the form the block routines take, into a slice as long
    /// (`nibble_prepare`, `gfni_prepare`).
    pub(super) prepare: fn(&[u16], &mut [C]),
}

/// Scratch memory, aligned for vector loads.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Some rows of a matrix's coefficients (`all[range]`), and where the matrix keeps all of
/// them in a kernel's form: prepared ([`Spec::prepare`]) at the first call over many tiles,
/// and shared by every later call, whatever its thread.
pub(super) struct Rows<'a, C> {
    pub(super) all: &'a [u16],
    pub(super) range: std::ops::Range<usize>,
    pub(super) prepared: &'a OnceLock<Vec<C>>,
}

impl<C: Copy + Default> Rows<'_, C> {
    fn coefs(&self) -> &[u16] {
        &self.all[self.range.clone()]
    }

    /// The rows in `spec`'s form, the matrix's coefficients prepared if not yet.
    fn prepared(&self, spec: &Spec<C>) -> &[C] {
        let all = self.prepared.get_or_init(|| {
            let mut all = vec![C::default(); self.all.len()];
            (spec.prepare)(self.all, &mut all);
            all
        });
        &all[self.range.clone()]
    }
}

/// Runs `spec` on validated, non-empty arguments (`run` in the parent module checked them):
/// `rows`, `outs.len()` rows of `srcs.len()` coefficients.
/// SAFETY: the caller guarantees the CPU runs the instructions of `spec`'s routines (their
/// target features were detected).
pub(super) unsafe fn drive<C: Copy + Default>(
    spec: &Spec<C>,
    outs: &mut [&mut [u8]],
    srcs: &[&[u8]],
    rows: Rows<'_, C>,
) {
    let n = outs.len() * srcs.len();
    assert_eq!(rows.range.len(), n, "one coefficient per (output, source)");
    let len = srcs[0].len();
    let full = len - len % spec.step;
    if full > 0 {
        let o: Vec<*mut u8> = outs.iter_mut().map(|o| o.as_mut_ptr()).collect();
        let s: Vec<*const u8> = srcs.iter().map(|s| s.as_ptr()).collect();
        // SAFETY: the CPU runs `spec` (the caller's promise); every pointer addresses
        // `len >= full` bytes; outputs are distinct `&mut` slices, so they overlap neither
        // each other nor the sources.
        unsafe { tiles(spec, &o, &s, full, &rows) };
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
        // SAFETY: the CPU runs `spec`; every pointer addresses one step of its own padded
        // buffer.
        unsafe { tiles(spec, &o, &s, step, &rows) };
        for (pad, o) in o_pad.chunks_exact(step).zip(outs.iter_mut()) {
            o[full..].copy_from_slice(&pad[..tail]);
        }
    }
}

/// Tiles in a call from which the coefficients are the matrix's, prepared once, not
/// prepared block by block.
const PREPARE_WHOLE: usize = 4;

/// The tiled multiply-add of `len` bytes (a multiple of `spec.step`).
///
/// The coefficients are prepared in one of two ways. Over a few tiles (short slices: sets
/// of small files), each block's (K outputs by up to `SRC_BLOCK` sources) just before its
/// routine runs, into a buffer that stays in L1: prepared for the whole call, the tables
/// (128 bytes a coefficient, 21 MB for a set of 1,300 slices of 2 KiB and 130 recovery
/// slices) went out to memory and came back once each, and cost as much as the
/// multiply-adds they served. Over many tiles, once for the matrix ([`Rows::prepared`],
/// shared by the threads' calls): block by block they would be made again for every tile
/// (8% of a 256 MiB file's run), while the matrix's tables (3.3 MB for a batch of 128
/// slices and 205 recovery slices) stay in the caches.
/// SAFETY: the caller guarantees `spec` is supported by the CPU, every pointer addresses `len`
/// bytes, the outputs overlap nothing, and `rows` has `outs.len() * srcs.len()` entries.
unsafe fn tiles<C: Copy + Default>(
    spec: &Spec<C>,
    outs: &[*mut u8],
    srcs: &[*const u8],
    len: usize,
    rows: &Rows<'_, C>,
) {
    let n = srcs.len();
    let coefs = rows.coefs();
    let whole: &[C] = if len.div_ceil(TILE) >= PREPARE_WHOLE { rows.prepared(spec) } else { &[] };
    let mut block = [C::default(); OUT_BLOCK * SRC_BLOCK];
    let tile_steps = TILE.div_ceil(spec.step);
    let per_src = tile_steps * spec.scratch;
    let mut buf = vec![Line([0; 64]); (SRC_BLOCK.min(n) * per_src).div_ceil(64)];
    let scratch = buf.as_mut_ptr().cast::<u8>();
    let mut ptrs = [std::ptr::null_mut(); OUT_BLOCK];
    let mut active = Vec::with_capacity(n);
    let mut gathered = [0u16; SRC_BLOCK];
    for t in (0..len).step_by(tile_steps * spec.step) {
        let steps = (len - t).min(tile_steps * spec.step) / spec.step;
        // The sources with data in this tile: one whose tile is all zeros adds nothing (the
        // padding of a file's last slice: 9% of the tiles of files of 0.5-8 KiB in slices
        // of 2 KiB, as D3's sets are; a sparse file's holes).
        active.clear();
        // SAFETY: every source has `steps` steps at t.
        active.extend((0..n).filter(|&i| unsafe { !zeros(srcs[i].add(t), steps * spec.step) }));
        for block_srcs in active.chunks(SRC_BLOCK) {
            let ib = block_srcs.len();
            for (i, &src) in block_srcs.iter().enumerate() {
                // SAFETY: the source has `steps` steps at t; the scratch has room for ib
                // sources of `steps <= tile_steps` steps, packed (source i at i * steps).
                unsafe {
                    let dst = scratch.add(i * steps * spec.scratch);
                    (spec.transform)(srcs[src].add(t), steps, dst);
                }
            }
            // Whether the block's sources are consecutive (all of them active).
            let i0 = block_srcs[0];
            let run = block_srcs[ib - 1] - i0 + 1 == ib;
            for o0 in (0..outs.len()).step_by(OUT_BLOCK) {
                let kb = OUT_BLOCK.min(outs.len() - o0);
                for (p, o) in ptrs.iter_mut().zip(&outs[o0..o0 + kb]) {
                    // SAFETY: t < len, inside the output.
                    *p = unsafe { o.add(t) };
                }
                let (coefs, stride) = if whole.is_empty() {
                    for k in 0..kb {
                        let all = &coefs[(o0 + k) * n..][..n];
                        let row = if run {
                            &all[i0..i0 + ib]
                        } else {
                            for (c, &i) in gathered.iter_mut().zip(block_srcs) {
                                *c = all[i];
                            }
                            &gathered[..ib]
                        };
                        (spec.prepare)(row, &mut block[k * SRC_BLOCK..][..ib]);
                    }
                    (block.as_ptr(), SRC_BLOCK)
                } else if run {
                    (whole[o0 * n + i0..].as_ptr(), n)
                } else {
                    for k in 0..kb {
                        let all = &whole[(o0 + k) * n..][..n];
                        for (c, &i) in block[k * SRC_BLOCK..].iter_mut().zip(block_srcs) {
                            *c = all[i];
                        }
                    }
                    (block.as_ptr(), SRC_BLOCK)
                };
                let args = Args { outs: &ptrs[..kb], steps, scratch, coefs, stride, ib };
                // SAFETY: as for this function; the scratch holds ib transformed sources.
                unsafe { (spec.blocks[kb - 1])(&args) };
            }
        }
    }
}

/// Whether the `len` bytes at `p` are all zeros.
/// SAFETY: `p` addresses `len` readable bytes.
unsafe fn zeros(p: *const u8, len: usize) -> bool {
    // SAFETY: the caller's promise.
    let bytes = unsafe { std::slice::from_raw_parts(p, len) };
    let (words, rest) = bytes.as_chunks::<8>();
    // OR-folded 64 bytes at a time (vectorized), stopping at the first with a one: data
    // that is not zeros stops at its first bytes.
    let zero = |c: &[[u8; 8]]| c.iter().fold(0u64, |a, w| a | u64::from_ne_bytes(*w)) == 0;
    words.chunks(8).all(zero) && rest.iter().all(|&b| b == 0)
}
