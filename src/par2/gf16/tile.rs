//! The tiling driver of the SIMD kernels of `mul_add_matrix`, shared by every architecture
//! (`x86.rs`, `arm.rs`; see the parent module for the math).
//!
//! Each kernel supplies a [`Spec`]: a transform that de-interleaves a tile of a source into the scratch
//! buffer, and a block routine that multiplies-and-adds the scratch of a block of sources
//! into K outputs at once (K accumulators in registers). The driver cuts the length into
//! tiles, the sources into blocks of `SRC_BLOCK` and the outputs into blocks of at most
//! `OUT_BLOCK`, and sends a tail shorter than one step through zero-padded copies.

/// Bytes of each slice per tile: the scratch of a block of sources holds `SRC_BLOCK` tiles.
const TILE: usize = 2048;
/// Sources de-interleaved together into the scratch buffer.
const SRC_BLOCK: usize = 16;
/// Outputs accumulated together in registers (blocks of 1..=OUT_BLOCK).
pub(super) const OUT_BLOCK: usize = 4;

/// What a block routine works on: `outs` point at the tile of K outputs, `coefs` at the
/// prepared coefficient (o0, i0) of a row-major matrix with rows of `stride` entries.
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
}

/// Scratch memory, aligned for vector loads.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Runs `spec` on validated, non-empty arguments (`run` in the parent module checked them):
/// `coefs` are the prepared coefficients, `outs.len()` rows of `srcs.len()`.
/// SAFETY: the caller guarantees the CPU runs the instructions of `spec`'s routines (their
/// target features were detected).
pub(super) unsafe fn drive<C>(spec: &Spec<C>, outs: &mut [&mut [u8]], srcs: &[&[u8]], coefs: &[C]) {
    assert_eq!(coefs.len(), outs.len() * srcs.len(), "one coefficient per (output, source)");
    let len = srcs[0].len();
    let full = len - len % spec.step;
    if full > 0 {
        let o: Vec<*mut u8> = outs.iter_mut().map(|o| o.as_mut_ptr()).collect();
        let s: Vec<*const u8> = srcs.iter().map(|s| s.as_ptr()).collect();
        // SAFETY: the CPU runs `spec` (the caller's promise); every pointer addresses
        // `len >= full` bytes; outputs are distinct `&mut` slices, so they overlap neither
        // each other nor the sources.
        unsafe { tiles(spec, &o, &s, full, coefs) };
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
        unsafe { tiles(spec, &o, &s, step, coefs) };
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
