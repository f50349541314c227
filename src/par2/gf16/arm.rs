//! The aarch64 kernel of `mul_add_matrix`: the nibble method of the parent module on
//! 128-bit Advanced SIMD (NEON) vectors, through the tiling driver of `tile.rs`.
//!
//! De-interleaving is one instruction each way: `ld2` (`vld2q_u8`) loads 16 words as the
//! vector L of their low bytes and the vector H of their high bytes, in word order, and `st2`
//! (`vst2q_u8`) stores such a pair back as words. The transform stores the four nibble
//! vectors of each step (n0 = L & 15, n1 = L >> 4, n2 = H & 15, n3 = H >> 4) in the scratch;
//! the block routine looks each of them up in the 16-entry tables of `nibble_tables` with
//! `tbl` (`vqtbl1q_u8`, which gives 0 for an index over 15: the nibbles never are), xors the
//! four low-byte lookups into the accumulator of the low bytes and the four high-byte ones
//! into that of the high bytes, for K outputs at once, and xors the accumulators into the
//! outputs with one `ld2`/`st2` per 16 words.

use std::arch::aarch64::*;

use super::tile::{Args, Rows, Spec, drive};

/// Bytes per vector.
const W: usize = 16;

/// The nibble kernel: a step is 16 words (2 W bytes), its scratch the 4 nibble vectors.
const NEON: Spec<[[u8; 16]; 8]> = Spec {
    step: 2 * W,
    scratch: 4 * W,
    transform,
    blocks: [block::<1>, block::<2>, block::<3>, block::<4>],
    prepare: super::nibble_prepare,
};

/// Whether the running CPU has NEON (every aarch64 Linux CPU does; asked anyway, as for
/// the x86 kernels).
pub(super) fn supported() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
}

/// Runs the NEON kernel (which `supported()` must allow) on validated, non-empty arguments:
/// the rows `range` of the matrix's coefficients `all`, with the matrix's cache of them.
pub(super) fn matrix(
    outs: &mut [&mut [u8]],
    srcs: &[&[u8]],
    (all, range): (&[u16], std::ops::Range<usize>),
    cache: &super::Prepared,
) {
    assert!(supported());
    let rows = Rows { all, range, prepared: &cache.nib };
    // SAFETY: the CPU has NEON, the only target feature of the kernel's routines (detected,
    // asserted above).
    unsafe { drive(&NEON, outs, srcs, rows) }
}

/// Stores the nibbles (n0, n1, n2, n3) of each step.
/// SAFETY: the caller guarantees NEON, `steps` steps of 2 W readable bytes at `src` and of
/// 4 W writable bytes at `dst`.
#[target_feature(enable = "neon")]
unsafe fn transform(src: *const u8, steps: usize, dst: *mut u8) {
    let m = vdupq_n_u8(0x0f);
    for s in 0..steps {
        // SAFETY: step s is inside both buffers (the caller's guarantee).
        unsafe {
            let x = vld2q_u8(src.add(s * 2 * W));
            let d = dst.add(s * 4 * W);
            vst1q_u8(d, vandq_u8(x.0, m));
            vst1q_u8(d.add(W), vshrq_n_u8::<4>(x.0));
            vst1q_u8(d.add(2 * W), vandq_u8(x.1, m));
            vst1q_u8(d.add(3 * W), vshrq_n_u8::<4>(x.1));
        }
    }
}

/// outs[k] ^= sum over the ib sources i of coefficient (k, i) times source i, for the
/// `steps` steps of the tile.
/// SAFETY: the caller guarantees NEON, K outputs of `steps` steps of 2 W bytes, overlapping
/// nothing, the scratch of `ib` transformed sources of `steps` steps, and K rows of `ib`
/// prepared coefficients at `coefs`, `stride` apart.
#[target_feature(enable = "neon")]
unsafe fn block<const K: usize>(a: &Args<'_, [[u8; 16]; 8]>) {
    for s in 0..a.steps {
        let (mut lo, mut hi) = ([vdupq_n_u8(0); K], [vdupq_n_u8(0); K]);
        for i in 0..a.ib {
            // SAFETY: the scratch holds `steps` steps of 4 nibble vectors per source.
            let n: [uint8x16_t; 4] = unsafe {
                let p = a.scratch.add((i * a.steps + s) * 4 * W);
                [vld1q_u8(p), vld1q_u8(p.add(W)), vld1q_u8(p.add(2 * W)), vld1q_u8(p.add(3 * W))]
            };
            for k in 0..K {
                // SAFETY: row k of the coefficients has ib entries from a.coefs.
                let t = unsafe { &*a.coefs.add(k * a.stride + i) };
                // SAFETY: each table is 16 bytes.
                let lk = |j: usize| vqtbl1q_u8(unsafe { vld1q_u8(t[j].as_ptr()) }, n[j % 4]);
                let l = veorq_u8(veorq_u8(lk(0), lk(1)), veorq_u8(lk(2), lk(3)));
                let h = veorq_u8(veorq_u8(lk(4), lk(5)), veorq_u8(lk(6), lk(7)));
                lo[k] = veorq_u8(lo[k], l);
                hi[k] = veorq_u8(hi[k], h);
            }
        }
        for k in 0..K {
            // SAFETY: every output has at least s + 1 steps of 2 W bytes.
            unsafe {
                let p = a.outs[k].add(s * 2 * W);
                let x = vld2q_u8(p);
                vst2q_u8(p, uint8x16x2_t(veorq_u8(x.0, lo[k]), veorq_u8(x.1, hi[k])));
            }
        }
    }
}
