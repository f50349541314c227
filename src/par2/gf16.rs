//! GF(2^16) arithmetic for PAR2 2.0 recovery data.
//!
//! # The field
//! Elements are 16-bit words, read from data as little-endian `u16`s. Addition is xor;
//! multiplication is carry-less multiplication of polynomials over GF(2) reduced modulo the
//! PAR2 field polynomial x^16 + x^12 + x^3 + x + 1 (0x1100B). The element 2 (the polynomial x)
//! generates the multiplicative group (order 65535), so `mul`, `div`, `inv` and `pow` use log
//! and antilog tables built once. PAR2's input constants are 2^m for the exponents m coprime to
//! 65535 (then every constant generates the whole group), in increasing order of m.
//!
//! # The multiply-add kernels
//! Multiplying by a constant c is GF(2)-linear in the 16 bits of a word w = l + 256 h
//! (l, h its low and high bytes): c*w = c*l ^ c*(256 h). Every kernel uses this:
//! - `scalar`: two 256-entry tables per constant, c*l and c*(256 h), one lookup each.
//! - `ssse3`, `avx2`, `avx512bw` (x86-64), `neon` (aarch64): the bytes of each tile of input
//!   are de-interleaved once into low and high bytes, then split into four nibbles n0..n3
//!   (w = n0 + 16 n1 + 256 n2 + 4096 n3).
//!   `vpshufb` (`tbl` on aarch64) looks up 16-entry tables: the low and the high byte of
//!   c*(n << 4j), for j in 0..4; the product is the xor of the four lookups (eight per
//!   step of two input vectors).
//! - `avx2-gfni`, `avx512-gfni`: `vgf2p8affineqb` multiplies every byte by an 8x8 bit matrix.
//!   The map l -> c*l splits into the matrices A_ll (low byte of c*l from l) and A_lh (its high
//!   byte); h -> c*(256 h) into A_hl and A_hh. Row i of A_xy has bit j set when bit i of the
//!   y-byte of c * x^(j + 8 [x = h]) is set (see `gfni_matrices`). With the input
//!   de-interleaved into vectors L and H of low and high bytes, the product is
//!   (A_ll L ^ A_hl H, A_lh L ^ A_hh H): four affine instructions per 2 x 64 words.
//!
//! [`Matrix`] works in tiles of bytes: the tile of a block of sources is de-interleaved
//! into a scratch buffer (L1/L2 resident) once, then each block of outputs accumulates all the
//! sources of the block in registers and is re-interleaved and xored into memory once. The
//! per-coefficient tables or matrices are prepared by the driver from the linearity tables
//! below: once per matrix over long slices, block by block (into a buffer that stays in L1)
//! over short ones. Any even length works:
//! a tail shorter than one vector step goes through zero-padded copies. The tiling is shared
//! (`gf16/tile.rs`); the kernels are in `gf16/x86.rs` and `gf16/arm.rs`. Each runs only when
//! the CPU has its instructions and the SIMD cap allows its level (`FIXITY_SIMD`, `--simd`;
//! see [`crate::simd`]).

use std::sync::OnceLock;

#[cfg(target_arch = "aarch64")]
mod arm;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod tile;
#[cfg(target_arch = "x86_64")]
mod x86;

/// The low 16 bits of the PAR2 field polynomial x^16 + x^12 + x^3 + x + 1.
const POLY: u32 = 0x1100B;

struct Tables {
    /// `exp[k]` = 2^k for k in 0..2*65535 (doubled so that log sums need no reduction).
    exp: Vec<u16>,
    /// `log[a]` = k with 2^k = a, for a != 0.
    log: Vec<u32>,
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let mut exp = vec![0u16; 2 * 65535];
        let mut log = vec![0u32; 65536];
        let mut x: u32 = 1;
        for k in 0..65535 {
            exp[k] = x as u16;
            exp[k + 65535] = x as u16;
            log[x as usize] = k as u32;
            x <<= 1;
            if x & 0x10000 != 0 {
                x ^= POLY;
            }
        }
        Tables { exp, log }
    })
}

/// The product a * b.
pub(crate) fn mul(a: u16, b: u16) -> u16 {
    if a == 0 || b == 0 {
        return 0;
    }
    let t = tables();
    t.exp[(t.log[a as usize] + t.log[b as usize]) as usize]
}

/// The quotient a / b; panics if b == 0.
pub(crate) fn div(a: u16, b: u16) -> u16 {
    assert!(b != 0, "GF(2^16) division by zero");
    if a == 0 {
        return 0;
    }
    let t = tables();
    t.exp[(t.log[a as usize] + 65535 - t.log[b as usize]) as usize]
}

/// The multiplicative inverse of a; panics if a == 0.
pub(crate) fn inv(a: u16) -> u16 {
    div(1, a)
}

/// a^e, with a^0 == 1 for every a (also 0).
pub(crate) fn pow(a: u16, e: u32) -> u16 {
    if e == 0 {
        return 1;
    }
    if a == 0 {
        return 0;
    }
    let t = tables();
    t.exp[((u64::from(t.log[a as usize]) * u64::from(e)) % 65535) as usize]
}

/// PAR2's base constants for input slices 0..n: 2^m for the increasing exponents m >= 1 with
/// gcd(m, 65535) == 1 (65535 = 3 * 5 * 17 * 257; there are 32768 of them).
pub(crate) fn input_constants(n: usize) -> Vec<u16> {
    input_exponents(n).into_iter().map(|m| pow(2, m)).collect()
}

/// The exponents m of [`input_constants`] (the constant of input slice i is 2^m_i).
pub(crate) fn input_exponents(n: usize) -> Vec<u32> {
    assert!(n <= 32768, "PAR2 has 32768 input constants");
    (1u32..65535)
        .filter(|m| m % 3 != 0 && m % 5 != 0 && m % 17 != 0 && m % 257 != 0)
        .take(n)
        .collect()
}

/// The coefficients of PAR2's code for the recovery exponents `es` and the inputs whose
/// constants are 2^m (m of `ms`, from [`input_exponents`]): (2^m)^e = 2^(m e), a row per
/// exponent, one lookup each (encoding asks for one per recovery slice and input slice).
pub(crate) fn code_coefficients(es: &[u32], ms: &[u32]) -> Vec<u16> {
    let t = tables();
    let power = |m: u32, e: u32| t.exp[((u64::from(m) * u64::from(e)) % 65535) as usize];
    es.iter().flat_map(|&e| ms.iter().map(move |&m| power(m, e))).collect()
}

/// c * x^k for k in 0..16: the images of the 16 bits of a word (the columns of the 16x16
/// bit matrix of multiplying by c).
fn columns(c: u16) -> [u16; 16] {
    let mut p = [c; 16];
    for k in 1..16 {
        let x = u32::from(p[k - 1]) << 1;
        p[k] = (if x & 0x10000 != 0 { x ^ POLY } else { x }) as u16;
    }
    p
}

/// The four 8x8 bit matrices of `vgf2p8affineqb` for multiplying by c, as
/// [A_ll, A_hl, A_lh, A_hh] (input byte -> output byte; l low, h high). The instruction
/// computes output bit i of a byte as parity(row & input), the row being byte 7 - i of the
/// matrix's u64; so row i of A_xy holds, at bit j, bit i of the y-byte of c * x^(j + 8 [x = h]).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn gfni_matrices(c: u16) -> [u64; 4] {
    let p = columns(c);
    [(0, 0), (8, 0), (0, 8), (8, 8)].map(|(in_shift, out_shift)| {
        // Byte j of x holds the y-byte of column j + in_shift, so bit 8j + i of x is entry
        // (i, j) of the matrix; transposing the 8x8 bits (three delta swaps) moves it to bit
        // 8i + j, and reversing the bytes puts row i at byte 7 - i.
        let mut x = (0..8)
            .fold(0u64, |x, j| x | u64::from((p[j + in_shift] >> out_shift) as u8) << (8 * j));
        for (shift, mask) in
            [(7, 0x00AA_00AA_00AA_00AA), (14, 0x0000_CCCC_0000_CCCC), (28, 0xF0F0_F0F0)]
        {
            let t = (x ^ (x >> shift)) & mask;
            x ^= t ^ (t << shift);
        }
        x.swap_bytes()
    })
}

/// One coefficient's [`gfni_prepare`].
#[cfg(test)]
fn gfni_prepared(c: u16) -> [u64; 4] {
    let mut m = [[0; 4]];
    gfni_prepare(&[c], &mut m);
    m[0]
}

/// [`gfni_matrices`] of each of `cs`, into `out` (as long), through tables: the matrices are
/// linear in c (multiplying by `a ^ b` is multiplying by `a`, xor by `b`), so those of c
/// are those of its low byte's value xor those of its high byte's, from two 256-entry
/// tables built once. The tiling driver prepares one set of matrices per (recovery slice,
/// input slice) pair per matrix (per tile over short slices), so this is what small slices
/// pay per pair.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn gfni_prepare(cs: &[u16], out: &mut [[u64; 4]]) {
    static TABLES: OnceLock<Vec<[u64; 4]>> = OnceLock::new();
    let t = TABLES.get_or_init(|| {
        (0..512u32)
            .map(|i| gfni_matrices(if i < 256 { i as u16 } else { ((i - 256) as u16) << 8 }))
            .collect()
    });
    for (m, &c) in out.iter_mut().zip(cs) {
        let (lo, hi) = (t[usize::from(c & 0xff)], t[256 + usize::from(c >> 8)]);
        *m = [lo[0] ^ hi[0], lo[1] ^ hi[1], lo[2] ^ hi[2], lo[3] ^ hi[3]];
    }
}

/// The eight 16-entry `vpshufb` (aarch64: `tbl`) tables for multiplying by c: entry v of
/// table j (j in 0..4) is the low byte of c * (v << 4j), of table 4 + j its high byte.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(super) fn nibble_tables(c: u16) -> [[u8; 16]; 8] {
    let p = columns(c);
    let mut t = [[0u8; 16]; 8];
    for j in 0..4 {
        for v in 1..16usize {
            // Linearity: the product for v is that for v without its lowest set bit, xor
            // the column of that bit.
            let b = v.trailing_zeros() as usize;
            let q = p[4 * j + b] ^ u16::from_le_bytes([t[j][v & (v - 1)], t[4 + j][v & (v - 1)]]);
            [t[j][v], t[4 + j][v]] = q.to_le_bytes();
        }
    }
    t
}

/// One coefficient's [`nibble_prepare`].
#[cfg(test)]
fn nibble_prepared(c: u16) -> [[u8; 16]; 8] {
    let mut t = [[[0; 16]; 8]];
    nibble_prepare(&[c], &mut t);
    t[0]
}

/// [`nibble_tables`] of each of `cs`, into `out` (as long), through tables as
/// [`gfni_prepare`]: the tables are linear in c, so those of c are those of its low byte's
/// value xor those of its high byte's (two 256-entry tables built once, 64 KiB). The tiling
/// driver prepares one per coefficient per matrix (per tile over short slices): with small
/// slices (sets of small files) building them bit by bit cost as much as the multiply-adds.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(super) fn nibble_prepare(cs: &[u16], out: &mut [[[u8; 16]; 8]]) {
    static TABLES: OnceLock<Vec<[u128; 8]>> = OnceLock::new();
    let t = TABLES.get_or_init(|| {
        (0..512u32)
            .map(|i| {
                let c = if i < 256 { i as u16 } else { ((i - 256) as u16) << 8 };
                nibble_tables(c).map(u128::from_le_bytes)
            })
            .collect()
    });
    for (d, &c) in out.iter_mut().zip(cs) {
        let (lo, hi) = (&t[usize::from(c & 0xff)], &t[256 + usize::from(c >> 8)]);
        *d = std::array::from_fn(|j| (lo[j] ^ hi[j]).to_le_bytes());
    }
}

/// The scalar kernel's tables for c: `lo[b]` = c * b, `hi[b]` = c * (b << 8).
fn scalar_tables(c: u16) -> ([u16; 256], [u16; 256]) {
    let p = columns(c);
    let (mut lo, mut hi) = ([0u16; 256], [0u16; 256]);
    // Linearity, as in `nibble_tables`.
    for b in 1..256usize {
        let k = b.trailing_zeros() as usize;
        lo[b] = lo[b & (b - 1)] ^ p[k];
        hi[b] = hi[b & (b - 1)] ^ p[8 + k];
    }
    (lo, hi)
}

fn scalar_mul_add(dst: &mut [u8], src: &[u8], lo: &[u16; 256], hi: &[u16; 256]) {
    for (d, s) in dst.chunks_exact_mut(2).zip(src.chunks_exact(2)) {
        let p = lo[s[0] as usize] ^ hi[s[1] as usize];
        let w = u16::from_le_bytes([d[0], d[1]]) ^ p;
        d.copy_from_slice(&w.to_le_bytes());
    }
}

/// Scalar multiply-add of the whole matrix: one (output, source) pair at a time over the whole
/// length, the 1 KiB of tables of a pair built once (the fallback kernel; not tiled).
fn scalar_matrix(outs: &mut [&mut [u8]], srcs: &[&[u8]], coeffs: &[u16]) {
    for (o, out) in outs.iter_mut().enumerate() {
        for (i, src) in srcs.iter().enumerate() {
            let c = coeffs[o * srcs.len() + i];
            if c != 0 {
                let (lo, hi) = scalar_tables(c);
                scalar_mul_add(out, src, &lo, &hi);
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kernel {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Simd(x86::Kind),
    /// aarch64's nibble kernel (`gf16/arm.rs`).
    #[cfg(target_arch = "aarch64")]
    Neon,
}

impl Kernel {
    fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            #[cfg(target_arch = "x86_64")]
            Kernel::Simd(k) => k.name(),
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => "neon",
        }
    }

    /// The level of [`crate::simd`] it needs.
    fn level(self) -> crate::simd::Level {
        match self {
            Kernel::Scalar => crate::simd::Level::Scalar,
            #[cfg(target_arch = "x86_64")]
            Kernel::Simd(k) => k.level(),
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => crate::simd::Level::Neon,
        }
    }
}

/// The kernels this CPU supports, fastest first (asked once).
fn supported() -> &'static [Kernel] {
    static ALL: OnceLock<Vec<Kernel>> = OnceLock::new();
    ALL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        let simd = x86::supported().into_iter().map(Kernel::Simd);
        #[cfg(target_arch = "aarch64")]
        let simd = arm::supported().then_some(Kernel::Neon).into_iter();
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        let simd = std::iter::empty();
        simd.chain([Kernel::Scalar]).collect()
    })
}

/// The fastest supported kernel within the SIMD cap ([`crate::simd::cap`]).
fn chosen() -> Kernel {
    let all = supported();
    all.iter().copied().find(|k| crate::simd::allows(k.level())).unwrap_or(Kernel::Scalar)
}

/// The names of the kernels this CPU supports, fastest first (the last is "scalar").
#[cfg(test)]
pub(crate) fn kernels() -> Vec<&'static str> {
    supported().iter().map(|k| k.name()).collect()
}

/// The kernel a [`Matrix`] uses now: the fastest supported within the SIMD cap
/// (`FIXITY_SIMD`, `--simd`; see [`crate::simd`]).
pub(crate) fn kernel_name() -> &'static str {
    chosen().name()
}

/// dst ^= c * src, word by word (little-endian u16s); equal, even lengths.
#[cfg(test)]
pub(crate) fn mul_add(dst: &mut [u8], src: &[u8], c: u16) {
    mul_add_matrix(&mut [dst], &[src], &[c]);
}

/// For every output o: outs[o] ^= sum over i of coeffs[o * srcs.len() + i] * srcs[i], every
/// slice the same even length (no alignment needed). Single-threaded; the coefficients
/// prepared for this call only ([`Matrix`] keeps them for many).
#[cfg(test)]
pub(crate) fn mul_add_matrix(outs: &mut [&mut [u8]], srcs: &[&[u8]], coeffs: &[u16]) {
    assert_eq!(coeffs.len(), outs.len() * srcs.len(), "one coefficient per (output, source)");
    Matrix::new(coeffs, srcs.len()).mul_add(outs, srcs, 0);
}

/// `mul_add_matrix` with the kernel named (one of `kernels()`); panics on any other name.
#[cfg(test)]
pub(crate) fn mul_add_matrix_with(
    kernel: &str,
    outs: &mut [&mut [u8]],
    srcs: &[&[u8]],
    coeffs: &[u16],
) {
    let k = supported().iter().copied().find(|k| k.name() == kernel);
    let k = k.unwrap_or_else(|| panic!("GF(2^16) kernel {kernel:?} not supported"));
    assert_eq!(coeffs.len(), outs.len() * srcs.len(), "one coefficient per (output, source)");
    Matrix::with(k, coeffs, srcs.len()).mul_add(outs, srcs, 0);
}

/// A matrix of coefficients for the chosen kernel, for multiply-adds over many byte
/// ranges (each thread's column of the slices). The SIMD kernels take the coefficients
/// prepared in their form: once for the matrix (for calls over many tiles) or block by
/// block (`gf16/tile.rs`); the scalar kernel builds its tables per (output, source) pair.
pub(crate) struct Matrix {
    kernel: Kernel,
    cols: usize,
    coeffs: Vec<u16>,
    prepared: Prepared,
}

/// A matrix's coefficients in a SIMD kernel's form, made by the tiling driver at the
/// matrix's first call over many tiles and shared by every later call, whatever its thread
/// (`gf16/tile.rs`, `Rows`).
#[derive(Default)]
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
struct Prepared {
    nib: OnceLock<Vec<[[u8; 16]; 8]>>,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    gfni: OnceLock<Vec<[u64; 4]>>,
}

impl Matrix {
    /// `coeffs`: rows of `cols` coefficients (one row per output, one column per source).
    pub(crate) fn new(coeffs: &[u16], cols: usize) -> Matrix {
        Matrix::with(chosen(), coeffs, cols)
    }

    fn with(kernel: Kernel, coeffs: &[u16], cols: usize) -> Matrix {
        let whole = if cols == 0 { coeffs.is_empty() } else { coeffs.len().is_multiple_of(cols) };
        assert!(whole, "whole rows of coefficients");
        Matrix { kernel, cols, coeffs: coeffs.to_vec(), prepared: Prepared::default() }
    }

    /// For each output o (row `row0 + o` of the matrix): outs[o] ^= sum over i of the row's
    /// coefficient i times srcs[i]; `srcs.len()` is the matrix's column count, every slice
    /// the same even length. Single-threaded.
    pub(crate) fn mul_add(&self, outs: &mut [&mut [u8]], srcs: &[&[u8]], row0: usize) {
        assert_eq!(srcs.len(), self.cols, "one source per column");
        let len = outs.first().map(|o| o.len()).or(srcs.first().map(|s| s.len())).unwrap_or(0);
        assert!(len.is_multiple_of(2), "GF(2^16) data must have an even length");
        assert!(
            outs.iter().all(|o| o.len() == len) && srcs.iter().all(|s| s.len() == len),
            "all slices must have the same length"
        );
        let range = row0 * self.cols..(row0 + outs.len()) * self.cols;
        let total = self.coeffs.len();
        assert!(range.end <= total, "rows {row0}.. of {} rows", total / self.cols.max(1));
        if len == 0 || outs.is_empty() || srcs.is_empty() {
            return;
        }
        match self.kernel {
            Kernel::Scalar => scalar_matrix(outs, srcs, &self.coeffs[range]),
            #[cfg(target_arch = "x86_64")]
            Kernel::Simd(k) => x86::matrix(k, outs, srcs, (&self.coeffs, range), &self.prepared),
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => arm::matrix(outs, srcs, (&self.coeffs, range), &self.prepared),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift64 generator: deterministic test data without dependencies.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn word(&mut self) -> u16 {
            self.next() as u16
        }
        fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.next() as u8).collect()
        }
    }

    // Known answers computed independently with Python: shift-and-xor carry-less
    // multiplication reduced by 0x1100B, inverses as a^65534, powers by square-and-multiply,
    // and the input exponents as [m for m in range(1, 65535) if m%3 and m%5 and m%17 and m%257].
    #[test]
    fn known_answers() {
        let muls = [
            (2, 0x8000, 4107),
            (0x8000, 0x8000, 36602),
            (0x1234, 0x5678, 25380),
            (0xffff, 0xffff, 1843),
            (0xabcd, 3, 60508),
            (0x0100, 0x0100, 4107),
            (0xdead, 0xbeef, 43063),
            (3, 7, 9),
        ];
        for (a, b, p) in muls {
            assert_eq!(mul(a, b), p, "{a} * {b}");
            assert_eq!(mul(b, a), p);
            assert_eq!(div(p, b), a);
        }
        let invs = [(1, 1), (2, 34821), (3, 61446), (0x8000, 13405), (0x1234, 11497)];
        for (a, i) in invs.into_iter().chain([(0xffff, 2196), (4107, 37419)]) {
            assert_eq!(inv(a), i, "1 / {a}");
        }
        let pows = [(2, 16, 4107), (2, 100, 16313), (3, 65535, 1), (0x1234, 7, 2033)];
        for (a, e, p) in pows.into_iter().chain([(2, 65534, 34821), (7, 1000, 37417)]) {
            assert_eq!(pow(a, e), p, "{a} ^ {e}");
        }
        assert_eq!((pow(0, 0), pow(5, 0), pow(0, 3), mul(0, 7), div(0, 9)), (1, 1, 0, 0, 0));
    }

    #[test]
    fn group_structure() {
        // 2 has order 65535: its powers 2^1 .. 2^65534 are never 1.
        let mut x = 1u16;
        for k in 1..65535u32 {
            x = mul(x, 2);
            assert!(x != 1, "2^{k} == 1");
        }
        assert_eq!(mul(x, 2), 1);
        for a in 1..=65535u16 {
            assert_eq!(mul(a, inv(a)), 1, "{a}");
        }
        let mut r = Rng(7);
        for _ in 0..2000 {
            let (a, b, c) = (r.word(), r.word(), r.word());
            assert_eq!(mul(a, b ^ c), mul(a, b) ^ mul(a, c));
            assert_eq!(mul(mul(a, b), c), mul(a, mul(b, c)));
        }
    }

    #[test]
    fn prepared_nibble_tables_are_the_direct_ones_for_every_constant() {
        for c in 0..=u16::MAX {
            assert_eq!(nibble_prepared(c), nibble_tables(c), "{c}");
        }
    }

    #[test]
    fn a_prepared_matrix_run_by_rows_equals_the_whole() {
        let mut r = Rng(0x5eed);
        // Over a few tiles (coefficients prepared block by block) and over many (prepared
        // once for the matrix, at the first call, which takes only some rows).
        for len in [4096 + 38, 4 * 4096 + 38] {
            let n_out = 7;
            let srcs: Vec<Vec<u8>> = (0..5).map(|_| r.bytes(len)).collect();
            let s: Vec<&[u8]> = srcs.iter().map(|v| &v[..]).collect();
            let coeffs: Vec<u16> = (0..n_out * s.len()).map(|_| r.word()).collect();
            for kernel in kernels() {
                let k = supported().iter().copied().find(|k| k.name() == kernel).unwrap();
                let m = Matrix::with(k, &coeffs, s.len());
                let mut parts = vec![vec![0u8; len]; n_out];
                let (a, b) = parts.split_at_mut(3);
                m.mul_add(&mut b.iter_mut().map(|v| &mut v[..]).collect::<Vec<_>>(), &s, 3);
                m.mul_add(&mut a.iter_mut().map(|v| &mut v[..]).collect::<Vec<_>>(), &s, 0);
                let mut whole = vec![vec![0u8; len]; n_out];
                m.mul_add(&mut whole.iter_mut().map(|v| &mut v[..]).collect::<Vec<_>>(), &s, 0);
                assert_eq!(parts, whole, "{kernel}, {len} bytes");
                let mut reference_out = vec![vec![0u8; len]; n_out];
                reference(&mut reference_out, &s, &coeffs);
                assert_eq!(whole, reference_out, "{kernel}, {len} bytes");
            }
        }
    }

    #[test]
    #[should_panic(expected = "division by zero")]
    fn inverse_of_zero_panics() {
        inv(0);
    }

    #[test]
    fn code_coefficients_are_the_constants_powers() {
        let ms = input_exponents(32768);
        let cs = input_constants(32768);
        let es = [0, 1, 2, 3, 100, 199, 32767, 65534, 65535, 70000];
        let picked: Vec<usize> = (0..32768).step_by(97).chain([32767]).collect();
        let got = code_coefficients(&es, &picked.iter().map(|&i| ms[i]).collect::<Vec<_>>());
        for (o, &e) in es.iter().enumerate() {
            for (j, &i) in picked.iter().enumerate() {
                assert_eq!(got[o * picked.len() + j], pow(cs[i], e), "input {i}, exponent {e}");
            }
        }
    }

    #[test]
    fn input_constants_of_par2() {
        assert_eq!(input_constants(8), [2, 4, 16, 128, 256, 2048, 8192, 16384]);
        let all = input_constants(32768);
        let mut seen = vec![false; 65536];
        for &c in &all {
            assert!(!std::mem::replace(&mut seen[c as usize], true), "{c} repeated");
        }
        // The last exponent is 65534 and 2^65534 = 1/2 = 34821.
        assert_eq!(all[32767], 34821);
    }

    #[test]
    fn tables_and_matrices() {
        for c in [0, 1, 2, 0x8000, 0x1234, 0xffff] {
            let t = nibble_tables(c);
            let (lo, hi) = scalar_tables(c);
            for w in [0u16, 1, 0x00ff, 0x0100, 0xabcd, 0xffff] {
                let n = [w & 15, (w >> 4) & 15, (w >> 8) & 15, w >> 12].map(usize::from);
                let tl = (0..4).fold(0, |a, j| a ^ u16::from(t[j][n[j]]));
                let th = (0..4).fold(0, |a, j| a ^ u16::from(t[4 + j][n[j]]));
                assert_eq!(tl | th << 8, mul(c, w));
                assert_eq!(lo[usize::from(w & 255)] ^ hi[usize::from(w >> 8)], mul(c, w));
            }
            // The matrices entry by entry: row i (byte 7 - i), bit j; the tables' too.
            let m = gfni_matrices(c);
            assert_eq!(gfni_prepared(c), m);
            for (slot, (ins, outs)) in [(0, 0), (8, 0), (0, 8), (8, 8)].into_iter().enumerate() {
                for (i, j) in (0..8).flat_map(|i| (0..8).map(move |j| (i, j))) {
                    let want = (mul(c, 1 << (j + ins)) >> (i + outs)) & 1;
                    assert_eq!((m[slot] >> (8 * (7 - i) + j)) & 1, u64::from(want));
                }
            }
        }
    }

    #[test]
    fn prepared_matrices_are_the_direct_ones_for_every_constant() {
        assert!((0..=u16::MAX).all(|c| gfni_prepared(c) == gfni_matrices(c)));
    }

    /// outs[o] ^= sum coeffs * srcs, word by word with `mul`.
    fn reference(outs: &mut [Vec<u8>], srcs: &[&[u8]], coeffs: &[u16]) {
        for (o, out) in outs.iter_mut().enumerate() {
            for (i, src) in srcs.iter().enumerate() {
                let c = coeffs[o * srcs.len() + i];
                for (d, s) in out.chunks_exact_mut(2).zip(src.chunks_exact(2)) {
                    let w = u16::from_le_bytes([d[0], d[1]]);
                    let p = mul(c, u16::from_le_bytes([s[0], s[1]]));
                    d.copy_from_slice(&(w ^ p).to_le_bytes());
                }
            }
        }
    }

    fn check(kernel: &str, r: &mut Rng, outs: usize, srcs: usize, len: usize) {
        // Sub-slices at odd offsets into the buffers, so nothing is aligned.
        let off = 1 + (r.next() % 7) as usize;
        let src_bufs: Vec<Vec<u8>> = (0..srcs).map(|_| r.bytes(len + off)).collect();
        let src: Vec<&[u8]> = src_bufs.iter().map(|b| &b[off..]).collect();
        let coeffs: Vec<u16> = (0..outs * srcs)
            .map(|_| match r.next() % 5 {
                0 => 0,
                1 => 1,
                _ => r.word(),
            })
            .collect();
        let mut want: Vec<Vec<u8>> = (0..outs).map(|_| r.bytes(len + off)).collect();
        let mut got = want.clone();
        let mut got_refs: Vec<&mut [u8]> = got.iter_mut().map(|b| &mut b[off..]).collect();
        mul_add_matrix_with(kernel, &mut got_refs, &src, &coeffs);
        let mut want_tails: Vec<Vec<u8>> = want.iter().map(|b| b[off..].to_vec()).collect();
        reference(&mut want_tails, &src, &coeffs);
        for (w, t) in want.iter_mut().zip(&want_tails) {
            w[off..].copy_from_slice(t);
        }
        assert!(got == want, "kernel {kernel}: {outs} x {srcs}, {len} bytes, offset {off}");
    }

    #[test]
    fn every_kernel_matches_the_reference() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let names = kernels();
        assert_eq!(names.last(), Some(&"scalar"));
        assert!(names.contains(&kernel_name()));
        for k in names {
            for len in [0, 2, 30, 62, 64, 66, 126, 128, 130, 190, 254, 258, 1000] {
                check(k, &mut r, 2, 3, len);
            }
            // Coefficients prepared block by block (a few tiles) and once for the matrix.
            for (outs, srcs) in [(1, 1), (5, 17), (9, 2), (4, 33), (3, 4)] {
                check(k, &mut r, outs, srcs, 2 * 2048 + 66);
                check(k, &mut r, outs, srcs, 4 * 2048 + 66);
            }
            check(k, &mut r, 1, 1, (1 << 20) + 2);
            check(k, &mut r, 0, 3, 64);
            check(k, &mut r, 3, 0, 64);
        }
    }

    #[test]
    fn zero_tiles_of_sources_add_nothing_in_every_kernel() {
        // Sources with all-zero tiles (the driver skips them): none, all, from each tile
        // on, one tile in the middle, the last partial step; over a few tiles (coefficients
        // prepared block by block) and many (prepared once, gathered for the sources left).
        let mut r = Rng(0x2e40);
        for k in kernels() {
            for len in [2 * 1024 + 66, 5 * 1024 + 66, 70 * 1024] {
                let n = 70;
                let mut bufs: Vec<Vec<u8>> = (0..n).map(|_| r.bytes(len)).collect();
                for (i, b) in bufs.iter_mut().enumerate() {
                    let zero = match i % 6 {
                        0 => 0..0,
                        1 => 0..len,
                        2 => 1024..len,
                        3 => 1024..2048,
                        4 => len - 66..len,
                        _ => (i * 512).min(len)..len,
                    };
                    b[zero].fill(0);
                }
                let srcs: Vec<&[u8]> = bufs.iter().map(Vec::as_slice).collect();
                let coeffs: Vec<u16> = (0..5 * n).map(|_| r.word()).collect();
                let mut got: Vec<Vec<u8>> = (0..5).map(|_| r.bytes(len)).collect();
                let mut want = got.clone();
                let mut refs: Vec<&mut [u8]> = got.iter_mut().map(|b| b.as_mut_slice()).collect();
                mul_add_matrix_with(k, &mut refs, &srcs, &coeffs);
                reference(&mut want, &srcs, &coeffs);
                assert!(got == want, "kernel {k}, {len} bytes");
            }
        }
    }

    #[test]
    fn dispatch_at_every_level_takes_a_kernel_of_that_level_and_matches_the_reference() {
        let mut r = Rng(0x51d);
        crate::simd::tests::each_level("GF(2^16) dispatch", |level| {
            let k = chosen();
            assert!(k.level() <= level, "{} at the cap {level}", k.name());
            let better = supported().iter().find(|k| crate::simd::allows(k.level()));
            assert_eq!(better.copied(), Some(k), "the fastest within the cap");
            let len = 2 * 2048 + 66;
            let src_bufs: Vec<Vec<u8>> = (0..5).map(|_| r.bytes(len)).collect();
            let srcs: Vec<&[u8]> = src_bufs.iter().map(|b| b.as_slice()).collect();
            let coeffs: Vec<u16> = (0..15).map(|_| r.word()).collect();
            let mut got: Vec<Vec<u8>> = (0..3).map(|_| r.bytes(len)).collect();
            let mut want = got.clone();
            let mut refs: Vec<&mut [u8]> = got.iter_mut().map(|b| b.as_mut_slice()).collect();
            mul_add_matrix(&mut refs, &srcs, &coeffs);
            reference(&mut want, &srcs, &coeffs);
            assert!(got == want, "{} at the cap {level}", k.name());
        });
    }

    /// Known products c * w, computed apart from this module (in Python: shift-and-xor
    /// carry-less multiplication reduced by 0x1100B, and the same from log and antilog tables
    /// of the generator 2): `KAT_PRODUCTS[r][i]` = `KAT_COEFFS[r]` * `KAT_WORDS[i]`.
    const KAT_COEFFS: [u16; 5] = [0x0002, 0x0100, 0x8000, 0x1234, 0xffff];
    const KAT_WORDS: [u16; 17] = [
        0x0000, 0x0001, 0x8000, 0xffff, 0x00ff, 0xff00, 0x1234, 0xabcd, 0xdead, 0xbeef, 0x0f0f,
        0xf0f0, 0x5555, 0xaaaa, 0x0100, 0x7fff, 0x8001,
    ];
    const KAT_PRODUCTS: [[u16; 17]; 5] = [
        [
            0x0000, 0x0002, 0x100b, 0xeff5, 0x01fe, 0xee0b, 0x2468, 0x4791, 0xad51, 0x6dd5, 0x1e1e,
            0xf1eb, 0xaaaa, 0x455f, 0x0200, 0xfffe, 0x1009,
        ],
        [
            0x0000, 0x0100, 0x85d8, 0xf990, 0xff00, 0x0690, 0x04ad, 0xd9eb, 0x9aed, 0xbb77, 0xff69,
            0x06f9, 0x5770, 0xaee0, 0x100b, 0x7c48, 0x84d8,
        ],
        [
            0x0000, 0x8000, 0x8efa, 0x7b55, 0x0348, 0x781d, 0x7696, 0x566e, 0xe413, 0x39a8, 0x37c8,
            0x4c9d, 0x2933, 0x5266, 0x85d8, 0xf5af, 0x0efa,
        ],
        [
            0x0000, 0x1234, 0x7696, 0x5508, 0xfd8e, 0xa886, 0x5e87, 0x4792, 0x1e0a, 0x59a5, 0xd507,
            0x800f, 0xc301, 0x9609, 0x04ad, 0x239e, 0x64a2,
        ],
        [
            0x0000, 0xffff, 0x7b55, 0x0733, 0x0225, 0x0516, 0x5508, 0xf2f6, 0xf279, 0x4495, 0x2075,
            0x2746, 0xf2e8, 0xf5db, 0xf990, 0x7c66, 0x84aa,
        ],
    ];

    fn to_bytes(words: impl IntoIterator<Item = u16>) -> Vec<u8> {
        words.into_iter().flat_map(u16::to_le_bytes).collect()
    }

    fn to_words(bytes: &[u8]) -> Vec<u16> {
        bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()
    }

    /// Every kernel (under qemu, the aarch64 one) against the literal products above, not
    /// only against the scalar code.
    #[test]
    fn every_kernel_gives_the_known_products() {
        for (&c, row) in KAT_COEFFS.iter().zip(&KAT_PRODUCTS) {
            for (&w, &p) in KAT_WORDS.iter().zip(row) {
                assert_eq!(mul(c, w), p, "{c:#06x} * {w:#06x}");
            }
        }
        // Each SIMD level this CPU has has its kernel among those tested (under qemu: neon).
        for level in crate::simd::available() {
            let k = supported().iter().find(|k| k.level() == level);
            assert!(k.is_some(), "no GF(2^16) kernel of the level {level}: {:?}", kernels());
        }
        // 71 words, the 17 repeated (17 is no multiple of a vector's words: a lane sees
        // another word at each step), so that every kernel has whole steps and a tail
        // (NEON: 4 steps of 16 words and 7 more).
        let n = 4 * 17 + 3;
        let word = |rot: usize| move |i: usize| KAT_WORDS[(i + rot) % 17];
        let product = |r: usize, rot: usize| move |i: usize| KAT_PRODUCTS[r][(i + rot) % 17];
        for kernel in kernels() {
            for (r, &c) in KAT_COEFFS.iter().enumerate() {
                let src = to_bytes((0..n).map(word(0)));
                // Into zeros: the products; into the words: the words xor the products;
                // the products added twice: zeros again.
                let mut dst = vec![0u8; 2 * n];
                mul_add_matrix_with(kernel, &mut [&mut dst], &[&src], &[c]);
                let want: Vec<u16> = (0..n).map(product(r, 0)).collect();
                assert_eq!(to_words(&dst), want, "{kernel}: {c:#06x} times the words");
                mul_add_matrix_with(kernel, &mut [&mut dst], &[&src], &[c]);
                assert!(dst.iter().all(|&b| b == 0), "{kernel}: {c:#06x} added twice");
                let mut dst = src.clone();
                mul_add_matrix_with(kernel, &mut [&mut dst], &[&src], &[c]);
                let want: Vec<u16> = (0..n).map(|i| word(0)(i) ^ product(r, 0)(i)).collect();
                assert_eq!(to_words(&dst), want, "{kernel}: {c:#06x} times the words, added");
            }
            // A matrix: 5 outputs (a block of 4 and one of 1) x 3 sources, source s the
            // words rotated by 5 s, coefficient (o, s) the constant 3 o + s (mod 5), output
            // o starting as the words rotated by 2 o + 1.
            let srcs: Vec<Vec<u8>> = (0..3).map(|s| to_bytes((0..n).map(word(5 * s)))).collect();
            let srcs: Vec<&[u8]> = srcs.iter().map(Vec::as_slice).collect();
            let at = |o: usize, s: usize| (3 * o + s) % 5;
            let coeffs: Vec<u16> =
                (0..5).flat_map(|o| (0..3).map(move |s| KAT_COEFFS[at(o, s)])).collect();
            let mut outs: Vec<Vec<u8>> =
                (0..5).map(|o| to_bytes((0..n).map(word(2 * o + 1)))).collect();
            let mut refs: Vec<&mut [u8]> = outs.iter_mut().map(Vec::as_mut_slice).collect();
            mul_add_matrix_with(kernel, &mut refs, &srcs, &coeffs);
            for (o, out) in outs.iter().enumerate() {
                let want: Vec<u16> = (0..n)
                    .map(|i| {
                        (0..3).fold(word(2 * o + 1)(i), |a, s| a ^ product(at(o, s), 5 * s)(i))
                    })
                    .collect();
                assert_eq!(to_words(out), want, "{kernel}: output {o} of the matrix");
            }
        }
    }

    #[test]
    fn mul_add_one_source() {
        let mut r = Rng(99);
        let src = r.bytes(4098);
        let mut dst = r.bytes(4098);
        let mut want = vec![dst.clone()];
        mul_add(&mut dst, &src, 0x4321);
        reference(&mut want, &[&src], &[0x4321]);
        assert_eq!(dst, want[0]);
    }
}
