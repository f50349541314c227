//! Recovery slices from input slices, and the linear algebra of repair.
//!
//! PAR2's code: input slice `i` (numbered over the set's files in File-ID order) has the
//! constant `c_i` ([`gf16::input_constants`]); the recovery slice with exponent `e` is
//! `R_e = sum_i c_i^e * D_i`, word by word in GF(2^16). Encoding adds each input slice into
//! every recovery buffer ([`Encoder`]); repair subtracts the slices still intact from the
//! recovery slices it uses and multiplies by the inverse of the `c_i^e` matrix of the lost
//! ones ([`invert`]). Both are a [`gf16::Matrix`] run over byte ranges, one range per
//! thread.

use super::gf16;
use rayon::prelude::*;

/// The byte range one thread takes in a multiply-add: a multiple of 64 (whole vectors).
const COLUMN: usize = 64 << 10;

/// Bytes of input slices per batch of a multiply-add into `outputs` bytes of recovery or
/// lost slices: 16 MiB, or a quarter of the outputs up to 64 MiB. Every batch reads and
/// writes every output once: for a 2 GiB file (205 recovery slices of 1 MiB) batches of
/// 16 slices moved 26 bytes through memory per byte read and took 8.2 s, against 6.2 with
/// 64 (docs/benchmarks.md, issue 41, fifth pass). `protect` and `repair` hold two.
pub(crate) fn batch_bytes(outputs: u64) -> u64 {
    (outputs / 4).clamp(16 << 20, 64 << 20)
}

/// `outs[o] ^= sum_i coeffs[o * srcs.len() + i] * srcs[i]`, byte ranges in parallel (one
/// [`gf16::Matrix`] for every range).
pub(crate) fn mul_add_parallel(outs: &mut [Vec<u8>], srcs: &[&[u8]], coeffs: &[u16]) {
    let Some(len) = srcs.first().map(|s| s.len()) else { return };
    if outs.is_empty() || len == 0 {
        return;
    }
    assert_eq!(coeffs.len(), outs.len() * srcs.len(), "one coefficient per (output, source)");
    let threads = rayon::current_num_threads().max(1);
    let matrix = gf16::Matrix::new(coeffs, srcs.len());
    // Short slices (sets of small files): the outputs are shared out instead, each thread
    // taking whole rows of the matrix.
    if len < 2 * threads * 4096 && outs.len() >= 2 * threads {
        let rows = outs.len().div_ceil(threads * 4);
        outs.par_chunks_mut(rows).enumerate().for_each(|(c, chunk)| {
            let mut o: Vec<&mut [u8]> = chunk.iter_mut().map(|v| &mut v[..]).collect();
            matrix.mul_add(&mut o, srcs, c * rows);
        });
        return;
    }
    // Ranges small enough to share the work, large enough to keep the tiles of the kernel
    // long.
    let width = (len.div_ceil(threads * 2)).next_multiple_of(64).clamp(4096, COLUMN);
    if width >= len || threads == 1 {
        let mut o: Vec<&mut [u8]> = outs.iter_mut().map(|v| &mut v[..]).collect();
        matrix.mul_add(&mut o, srcs, 0);
        return;
    }
    let mut columns: Vec<Vec<&mut [u8]>> = (0..len.div_ceil(width)).map(|_| Vec::new()).collect();
    for out in outs.iter_mut() {
        for (c, chunk) in out.chunks_mut(width).enumerate() {
            columns[c].push(chunk);
        }
    }
    columns.into_par_iter().enumerate().for_each(|(c, mut outs)| {
        let lo = c * width;
        let hi = (lo + width).min(len);
        let s: Vec<&[u8]> = srcs.iter().map(|s| &s[lo..hi]).collect();
        matrix.mul_add(&mut outs, &s, 0);
    });
}

/// Recovery buffers being computed: one per exponent, each `slice` bytes.
pub(crate) struct Encoder {
    exponents: Vec<u32>,
    outs: Vec<Vec<u8>>,
    /// The exponent m of each input slice's constant 2^m.
    inputs: Vec<u32>,
}

impl Encoder {
    /// Buffers for `exponents` over a set of `inputs` input slices of `slice` bytes.
    pub(crate) fn new(slice: usize, exponents: Vec<u32>, inputs: usize) -> Encoder {
        let outs = exponents.iter().map(|_| vec![0u8; slice]).collect();
        Encoder { exponents, outs, inputs: gf16::input_exponents(inputs) }
    }

    /// Adds input slices: (index in the set, its `slice` bytes, zero-padded).
    pub(crate) fn add(&mut self, batch: &[(usize, &[u8])]) {
        if batch.is_empty() || self.outs.is_empty() {
            return;
        }
        let ms: Vec<u32> = batch.iter().map(|&(index, _)| self.inputs[index]).collect();
        let coeffs = gf16::code_coefficients(&self.exponents, &ms);
        let srcs: Vec<&[u8]> = batch.iter().map(|&(_, d)| d).collect();
        mul_add_parallel(&mut self.outs, &srcs, &coeffs);
    }

    /// Bytes of the recovery buffers.
    pub(crate) fn bytes(&self) -> u64 {
        self.outs.iter().map(|o| o.len() as u64).sum()
    }

    /// The recovery slices: (exponent, data).
    pub(crate) fn finish(self) -> Vec<(u32, Vec<u8>)> {
        self.exponents.into_iter().zip(self.outs).collect()
    }
}

/// The inverse of the `n` x `n` matrix `m` (row-major) in GF(2^16), or `None` when it is
/// singular (PAR2's code is not MDS: some choices of recovery slices do not invert).
pub(crate) fn invert(mut m: Vec<u16>, n: usize) -> Option<Vec<u16>> {
    assert_eq!(m.len(), n * n);
    let mut inv = vec![0u16; n * n];
    for i in 0..n {
        inv[i * n + i] = 1;
    }
    for col in 0..n {
        let pivot = (col..n).find(|&r| m[r * n + col] != 0)?;
        if pivot != col {
            for j in 0..n {
                m.swap(pivot * n + j, col * n + j);
                inv.swap(pivot * n + j, col * n + j);
            }
        }
        let scale = gf16::inv(m[col * n + col]);
        for j in 0..n {
            m[col * n + j] = gf16::mul(m[col * n + j], scale);
            inv[col * n + j] = gf16::mul(inv[col * n + j], scale);
        }
        for r in 0..n {
            let f = m[r * n + col];
            if r == col || f == 0 {
                continue;
            }
            for j in 0..n {
                m[r * n + j] ^= gf16::mul(f, m[col * n + j]);
                inv[r * n + j] ^= gf16::mul(f, inv[col * n + j]);
            }
        }
    }
    Some(inv)
}

/// The matrix of the lost input slices (`lost`, indices) in the recovery slices
/// `exponents`: row j, column k is `c_lost[k] ^ exponents[j]`.
pub(crate) fn lost_matrix(constants: &[u16], lost: &[usize], exponents: &[u32]) -> Vec<u16> {
    let n = lost.len();
    let mut m = vec![0u16; n * exponents.len()];
    for (j, &e) in exponents.iter().enumerate() {
        for (k, &i) in lost.iter().enumerate() {
            m[j * n + k] = gf16::pow(constants[i], e);
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(len: usize, seed: &mut u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                *seed as u8
            })
            .collect()
    }

    #[test]
    fn lost_slices_come_back_from_recovery_slices() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        let (slice, n) = (256, 12);
        let data: Vec<Vec<u8>> = (0..n).map(|_| random(slice, &mut seed)).collect();
        let exps = vec![0, 1, 2, 3, 4];
        let mut enc = Encoder::new(slice, exps.clone(), n);
        let batch: Vec<(usize, &[u8])> =
            data.iter().enumerate().map(|(i, d)| (i, &d[..])).collect();
        enc.add(&batch[..5]);
        enc.add(&batch[5..]);
        let rec = enc.finish();
        // Lose slices 1, 4 and 11; use recovery slices 0, 2 and 4.
        let lost = [1usize, 4, 11];
        let use_exps = [0u32, 2, 4];
        let constants = gf16::input_constants(n);
        let mut rhs: Vec<Vec<u8>> =
            use_exps.iter().map(|&e| rec.iter().find(|r| r.0 == e).unwrap().1.clone()).collect();
        let present: Vec<usize> = (0..n).filter(|i| !lost.contains(i)).collect();
        let coeffs = lost_matrix(&constants, &present, &use_exps);
        let srcs: Vec<&[u8]> = present.iter().map(|&i| &data[i][..]).collect();
        mul_add_parallel(&mut rhs, &srcs, &coeffs);
        let inv = invert(lost_matrix(&constants, &lost, &use_exps), 3).unwrap();
        let mut out = vec![vec![0u8; slice]; 3];
        let r: Vec<&[u8]> = rhs.iter().map(|v| &v[..]).collect();
        mul_add_parallel(&mut out, &r, &inv);
        for (k, &i) in lost.iter().enumerate() {
            assert_eq!(out[k], data[i], "slice {i}");
        }
    }

    #[test]
    fn a_singular_matrix_is_said_to_be() {
        assert!(invert(vec![1, 2, 1, 2], 2).is_none());
        assert_eq!(invert(vec![5], 1), Some(vec![gf16::inv(5)]));
    }
}
