//! The x86-64 vector types: [`Avx2`] (8 lanes of `__m256i`), [`Avx512Vl`] (8 lanes of
//! `__m256i` with AVX-512VL's rotations and three-input logic) and [`Avx512`] (16 lanes
//! of `__m512i`, with AVX-512F's rotations and three-input logic and AVX-512BW's byte
//! shuffle), their CPU tokens, and the nine kernel entry points, compiled with the
//! instructions enabled (`#[target_feature]`) so that the generic rounds inline into
//! straight vector code.
//!
//! Soundness: a vector value can only be made through a constructor that takes the CPU
//! token of its type, and a token only comes out of `detect`, which asks the CPU
//! (`is_x86_feature_detected!`). `Avx512Vl` borrows `Avx2`'s operations: its token holds
//! an `Avx2Cpu`, and it makes `Avx2` values only from its own. Every intrinsic below
//! therefore runs on a CPU that has it, which is what each `unsafe` block relies on.

use super::vector::{Vector, block_of};
use super::{State, b3, md5, sha1, sha256};
use std::arch::x86_64::*;

/// Proof that the CPU has AVX2.
#[derive(Clone, Copy)]
pub(super) struct Avx2Cpu(());

impl Avx2Cpu {
    /// The token, if this CPU has AVX2.
    pub(super) fn detect() -> Option<Avx2Cpu> {
        is_x86_feature_detected!("avx2").then_some(Avx2Cpu(()))
    }
}

/// Proof that the CPU has AVX-512F and AVX-512BW, and AVX2 (which every such CPU has;
/// the state transposes use it).
#[derive(Clone, Copy)]
pub(super) struct Avx512Cpu(Avx2Cpu);

impl Avx512Cpu {
    /// The token, if this CPU has AVX2, AVX-512F and AVX-512BW.
    pub(super) fn detect() -> Option<Avx512Cpu> {
        let bw = is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw");
        Avx2Cpu::detect().filter(|_| bw).map(Avx512Cpu)
    }
}

/// Proof that the CPU has AVX2, AVX-512F and AVX-512VL (the AVX-512 instructions on
/// 256-bit registers).
#[derive(Clone, Copy)]
pub(super) struct Avx512VlCpu(Avx2Cpu);

impl Avx512VlCpu {
    /// The token, if this CPU has AVX2, AVX-512F and AVX-512VL.
    pub(super) fn detect() -> Option<Avx512VlCpu> {
        let vl = is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vl");
        Avx2Cpu::detect().filter(|_| vl).map(Avx512VlCpu)
    }
}

/// Whether this CPU runs 512-bit operations as two 256-bit halves: AMD family 19h
/// (Zen 4; Zen 3, also 19h, has no AVX-512). There the 8-lane AVX-512VL kernels of
/// SHA-1 and SHA-256 outrun the 16-lane ones (MD5's 16 lanes still win: its chain of
/// dependent steps leaves room for the second half).
pub(super) fn halves_512() -> bool {
    let vendor = __cpuid(0);
    let amd = [vendor.ebx, vendor.edx, vendor.ecx] == [0x6874_7541, 0x6974_6e65, 0x444d_4163];
    let eax = __cpuid(1).eax;
    let family = ((eax >> 8) & 0xf) + ((eax >> 20) & 0xff);
    amd && family == 0x19
}

/// 8 lanes in an AVX2 register.
#[derive(Clone, Copy)]
pub(super) struct Avx2(__m256i);

/// 8 lanes in an AVX2 register, with AVX-512VL's one-instruction rotations and
/// three-input logic: on CPUs that split 512-bit operations in two (AMD Zen 4), about
/// the speed per lane of [`Avx512`] at half the lanes, for when fewer lanes are busy.
#[derive(Clone, Copy)]
pub(super) struct Avx512Vl(__m256i);

/// 16 lanes in an AVX-512 register.
#[derive(Clone, Copy)]
pub(super) struct Avx512(__m512i);

/// Runs AVX2 intrinsics.
macro_rules! avx2 {
    ($e:expr) => {
        // SAFETY: only reached through a value or token of this module's types, which
        // exist only when detection found AVX2 on this CPU (each token holds or implies
        // an `Avx2Cpu`; module doc).
        unsafe { $e }
    };
}

/// Runs AVX-512F/VL intrinsics on 256-bit registers.
macro_rules! avx512vl {
    ($e:expr) => {
        // SAFETY: only reached through a value of `Avx512Vl`, which exists only when
        // `Avx512VlCpu::detect` found AVX2, AVX-512F and AVX-512VL on this CPU.
        unsafe { $e }
    };
}

/// Runs AVX-512F/BW intrinsics.
macro_rules! avx512 {
    ($e:expr) => {
        // SAFETY: only reached through a value or token of this module's AVX-512 types,
        // which exist only when `Avx512Cpu::detect` found AVX-512F and BW on this CPU.
        unsafe { $e }
    };
}

impl Vector for Avx2 {
    type Cpu = Avx2Cpu;
    const LANES: usize = 8;

    #[inline(always)]
    fn splat(_: Avx2Cpu, x: u32) -> Avx2 {
        Avx2(avx2!(_mm256_set1_epi32(x as i32)))
    }
    #[inline(always)]
    fn load_states(_: Avx2Cpu, states: &[State]) -> [Avx2; 8] {
        let states: &[State; 8] = states.try_into().expect("8 lanes");
        transpose8(load_rows(states)).map(Avx2)
    }
    #[inline(always)]
    fn store_states(v: [Avx2; 8], states: &mut [State], lanes: &[&[[u8; 64]]]) {
        store_rows(transpose8(v.map(|x| x.0)), states, lanes);
    }
    #[inline(always)]
    fn load_words<const BE: bool>(_: Avx2Cpu, lanes: &[&[[u8; 64]]], b: usize) -> [Avx2; 16] {
        let lanes: &[&[[u8; 64]]; 8] = lanes.try_into().expect("8 lanes");
        let swap = avx2!(_mm256_setr_epi8(
            3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10,
            9, 8, 15, 14, 13, 12
        ));
        let mut lo = [avx2!(_mm256_setzero_si256()); 8];
        let mut hi = lo;
        for i in 0..8 {
            let p = block_of(lanes[i], b).as_ptr();
            // `p` points to a 64-byte block: both 32-byte loads are inside it.
            let (mut l, mut h) =
                avx2!((_mm256_loadu_si256(p.cast()), _mm256_loadu_si256(p.add(32).cast())));
            if BE {
                (l, h) = avx2!((_mm256_shuffle_epi8(l, swap), _mm256_shuffle_epi8(h, swap)));
            }
            (lo[i], hi[i]) = (l, h);
        }
        let (lo, hi) = (transpose8(lo), transpose8(hi));
        let mut out = [Avx2(lo[0]); 16];
        for j in 0..8 {
            (out[j], out[8 + j]) = (Avx2(lo[j]), Avx2(hi[j]));
        }
        out
    }
    #[inline(always)]
    fn load(_: Avx2Cpu, words: &[u32]) -> Avx2 {
        let words: &[u32; 8] = words[..8].try_into().expect("8 lanes");
        // The pointer is that of 8 words.
        Avx2(avx2!(_mm256_loadu_si256(words.as_ptr().cast())))
    }
    #[inline(always)]
    fn store(self, out: &mut [u32]) {
        let out: &mut [u32; 8] = (&mut out[..8]).try_into().expect("8 lanes");
        // The pointer is that of 8 words.
        avx2!(_mm256_storeu_si256(out.as_mut_ptr().cast(), self.0))
    }
    #[inline(always)]
    fn add(self, o: Avx2) -> Avx2 {
        Avx2(avx2!(_mm256_add_epi32(self.0, o.0)))
    }
    #[inline(always)]
    fn xor(self, o: Avx2) -> Avx2 {
        Avx2(avx2!(_mm256_xor_si256(self.0, o.0)))
    }
    #[inline(always)]
    fn rol<const L: i32, const R: i32>(self) -> Avx2 {
        const { assert!(L + R == 32 && L > 0 && R > 0) };
        Avx2(avx2!(_mm256_or_si256(_mm256_slli_epi32::<L>(self.0), _mm256_srli_epi32::<R>(self.0))))
    }
    #[inline(always)]
    fn shr<const N: i32>(self) -> Avx2 {
        Avx2(avx2!(_mm256_srli_epi32::<N>(self.0)))
    }
    #[inline(always)]
    fn xor3(x: Avx2, y: Avx2, z: Avx2) -> Avx2 {
        x.xor(y).xor(z)
    }
    #[inline(always)]
    fn ch(x: Avx2, y: Avx2, z: Avx2) -> Avx2 {
        // z ^ (x & (y ^ z)): where x is set, y; elsewhere z.
        Avx2(avx2!(_mm256_xor_si256(z.0, _mm256_and_si256(x.0, _mm256_xor_si256(y.0, z.0)))))
    }
    #[inline(always)]
    fn maj(x: Avx2, y: Avx2, z: Avx2) -> Avx2 {
        // (x & y) | (z & (x | y))
        Avx2(avx2!(_mm256_or_si256(
            _mm256_and_si256(x.0, y.0),
            _mm256_and_si256(z.0, _mm256_or_si256(x.0, y.0))
        )))
    }
    #[inline(always)]
    fn md5_i(x: Avx2, y: Avx2, z: Avx2) -> Avx2 {
        Avx2(avx2!(_mm256_xor_si256(
            y.0,
            _mm256_or_si256(x.0, _mm256_xor_si256(z.0, _mm256_set1_epi32(-1)))
        )))
    }
}

/// Eight lanes' states, one per register.
#[inline(always)]
fn load_rows(states: &[State; 8]) -> [__m256i; 8] {
    // Each pointer is that of a 32-byte state; loadu allows any alignment.
    states.map(|s| avx2!(_mm256_loadu_si256(s.as_ptr().cast())))
}

/// Writes row `i` into `states[i]` where lane `i` is active (has blocks).
#[inline(always)]
fn store_rows(rows: [__m256i; 8], states: &mut [State], lanes: &[&[[u8; 64]]]) {
    for ((row, s), lane) in rows.into_iter().zip(states).zip(lanes) {
        if !lane.is_empty() {
            // The pointer is that of a 32-byte state; storeu allows any alignment.
            avx2!(_mm256_storeu_si256(s.as_mut_ptr().cast(), row));
        }
    }
}

/// Transposes an 8x8 matrix of 32-bit words: lane `i` of result `j` is lane `j` of row `i`.
#[inline(always)]
fn transpose8(r: [__m256i; 8]) -> [__m256i; 8] {
    // (Plain loops: `array::from_fn` is not always inlined, and a call loses the
    // target features.) Within each 128-bit half: pairs of rows interleaved by word, then
    // by word pair, so that half `c` of `q[g][m]` holds word 4c+m of rows 4g..4g+4.
    let mut t = r;
    for k in 0..4 {
        let (a, b) = (r[2 * k], r[2 * k + 1]);
        t[2 * k] = avx2!(_mm256_unpacklo_epi32(a, b));
        t[2 * k + 1] = avx2!(_mm256_unpackhi_epi32(a, b));
    }
    let mut q = [[r[0]; 4]; 2];
    for (g, q) in q.iter_mut().enumerate() {
        let t = &t[4 * g..4 * g + 4];
        *q = avx2!([
            _mm256_unpacklo_epi64(t[0], t[2]),
            _mm256_unpackhi_epi64(t[0], t[2]),
            _mm256_unpacklo_epi64(t[1], t[3]),
            _mm256_unpackhi_epi64(t[1], t[3]),
        ]);
    }
    // Word 4c+m: half c of q[0][m] then half c of q[1][m].
    let mut out = r;
    for m in 0..4 {
        out[m] = avx2!(_mm256_permute2x128_si256::<0x20>(q[0][m], q[1][m]));
        out[4 + m] = avx2!(_mm256_permute2x128_si256::<0x31>(q[0][m], q[1][m]));
    }
    out
}

impl Vector for Avx512Vl {
    type Cpu = Avx512VlCpu;
    const LANES: usize = 8;

    // Loads, stores, additions and shifts are AVX2's (the token carries AVX2's).
    #[inline(always)]
    fn splat(cpu: Avx512VlCpu, x: u32) -> Avx512Vl {
        Avx512Vl(Avx2::splat(cpu.0, x).0)
    }
    #[inline(always)]
    fn load_states(cpu: Avx512VlCpu, states: &[State]) -> [Avx512Vl; 8] {
        Avx2::load_states(cpu.0, states).map(|x| Avx512Vl(x.0))
    }
    #[inline(always)]
    fn store_states(v: [Avx512Vl; 8], states: &mut [State], lanes: &[&[[u8; 64]]]) {
        Avx2::store_states(v.map(|x| Avx2(x.0)), states, lanes)
    }
    #[inline(always)]
    fn load_words<const BE: bool>(
        cpu: Avx512VlCpu,
        lanes: &[&[[u8; 64]]],
        b: usize,
    ) -> [Avx512Vl; 16] {
        let words = Avx2::load_words::<BE>(cpu.0, lanes, b);
        let mut out = [Avx512Vl(words[0].0); 16];
        for (o, w) in out.iter_mut().zip(words) {
            *o = Avx512Vl(w.0);
        }
        out
    }
    #[inline(always)]
    fn load(cpu: Avx512VlCpu, words: &[u32]) -> Avx512Vl {
        Avx512Vl(Avx2::load(cpu.0, words).0)
    }
    #[inline(always)]
    fn store(self, out: &mut [u32]) {
        Avx2(self.0).store(out)
    }
    #[inline(always)]
    fn add(self, o: Avx512Vl) -> Avx512Vl {
        Avx512Vl(Avx2(self.0).add(Avx2(o.0)).0)
    }
    #[inline(always)]
    fn xor(self, o: Avx512Vl) -> Avx512Vl {
        Avx512Vl(Avx2(self.0).xor(Avx2(o.0)).0)
    }
    #[inline(always)]
    fn rol<const L: i32, const R: i32>(self) -> Avx512Vl {
        const { assert!(L + R == 32 && L > 0 && R > 0) };
        Avx512Vl(avx512vl!(_mm256_rol_epi32::<L>(self.0)))
    }
    #[inline(always)]
    fn shr<const N: i32>(self) -> Avx512Vl {
        Avx512Vl(Avx2(self.0).shr::<N>().0)
    }
    // The truth tables of `Avx512`'s.
    #[inline(always)]
    fn xor3(x: Avx512Vl, y: Avx512Vl, z: Avx512Vl) -> Avx512Vl {
        Avx512Vl(avx512vl!(_mm256_ternarylogic_epi32::<0x96>(x.0, y.0, z.0)))
    }
    #[inline(always)]
    fn ch(x: Avx512Vl, y: Avx512Vl, z: Avx512Vl) -> Avx512Vl {
        Avx512Vl(avx512vl!(_mm256_ternarylogic_epi32::<0xCA>(x.0, y.0, z.0)))
    }
    #[inline(always)]
    fn maj(x: Avx512Vl, y: Avx512Vl, z: Avx512Vl) -> Avx512Vl {
        Avx512Vl(avx512vl!(_mm256_ternarylogic_epi32::<0xE8>(x.0, y.0, z.0)))
    }
    #[inline(always)]
    fn md5_i(x: Avx512Vl, y: Avx512Vl, z: Avx512Vl) -> Avx512Vl {
        Avx512Vl(avx512vl!(_mm256_ternarylogic_epi32::<0x39>(x.0, y.0, z.0)))
    }
}

impl Vector for Avx512 {
    type Cpu = Avx512Cpu;
    const LANES: usize = 16;

    #[inline(always)]
    fn splat(_: Avx512Cpu, x: u32) -> Avx512 {
        Avx512(avx512!(_mm512_set1_epi32(x as i32)))
    }
    #[inline(always)]
    fn load_states(_: Avx512Cpu, states: &[State]) -> [Avx512; 8] {
        // Lanes 0-7 in the low halves, 8-15 in the high ones, each half as AVX2's.
        let states: &[State; 16] = states.try_into().expect("16 lanes");
        let (lo, hi) = states.split_at(8);
        let lo = transpose8(load_rows(lo.try_into().expect("8 lanes")));
        let hi = transpose8(load_rows(hi.try_into().expect("8 lanes")));
        let mut out = [Avx512(avx512!(_mm512_castsi256_si512(lo[0]))); 8];
        for (o, (l, h)) in out.iter_mut().zip(lo.into_iter().zip(hi)) {
            *o = Avx512(avx512!(_mm512_inserti64x4::<1>(_mm512_castsi256_si512(l), h)));
        }
        out
    }
    #[inline(always)]
    fn store_states(v: [Avx512; 8], states: &mut [State], lanes: &[&[[u8; 64]]]) {
        assert_eq!((states.len(), lanes.len()), (16, 16), "16 lanes");
        let lo = v.map(|x| avx512!(_mm512_castsi512_si256(x.0)));
        let hi = v.map(|x| avx512!(_mm512_extracti64x4_epi64::<1>(x.0)));
        let (s_lo, s_hi) = states.split_at_mut(8);
        store_rows(transpose8(lo), s_lo, &lanes[..8]);
        store_rows(transpose8(hi), s_hi, &lanes[8..]);
    }
    #[inline(always)]
    fn load_words<const BE: bool>(_: Avx512Cpu, lanes: &[&[[u8; 64]]], b: usize) -> [Avx512; 16] {
        let lanes: &[&[[u8; 64]]; 16] = lanes.try_into().expect("16 lanes");
        let swap = avx512!(_mm512_broadcast_i32x4(_mm_setr_epi8(
            3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12
        )));
        let mut rows = [swap; 16];
        for (row, lane) in rows.iter_mut().zip(lanes) {
            // The pointer is that of a 64-byte block.
            *row = avx512!(_mm512_loadu_si512(block_of(lane, b).as_ptr().cast()));
            if BE {
                *row = avx512!(_mm512_shuffle_epi8(*row, swap));
            }
        }
        let t = transpose16(rows);
        let mut out = [Avx512(swap); 16];
        for (o, t) in out.iter_mut().zip(t) {
            *o = Avx512(t);
        }
        out
    }
    #[inline(always)]
    fn load(_: Avx512Cpu, words: &[u32]) -> Avx512 {
        let words: &[u32; 16] = words[..16].try_into().expect("16 lanes");
        // The pointer is that of 16 words.
        Avx512(avx512!(_mm512_loadu_si512(words.as_ptr().cast())))
    }
    #[inline(always)]
    fn store(self, out: &mut [u32]) {
        let out: &mut [u32; 16] = (&mut out[..16]).try_into().expect("16 lanes");
        // The pointer is that of 16 words.
        avx512!(_mm512_storeu_si512(out.as_mut_ptr().cast(), self.0))
    }
    #[inline(always)]
    fn add(self, o: Avx512) -> Avx512 {
        Avx512(avx512!(_mm512_add_epi32(self.0, o.0)))
    }
    #[inline(always)]
    fn xor(self, o: Avx512) -> Avx512 {
        Avx512(avx512!(_mm512_xor_si512(self.0, o.0)))
    }
    #[inline(always)]
    fn rol<const L: i32, const R: i32>(self) -> Avx512 {
        const { assert!(L + R == 32 && L > 0 && R > 0) };
        Avx512(avx512!(_mm512_rol_epi32::<L>(self.0)))
    }
    #[inline(always)]
    fn shr<const N: i32>(self) -> Avx512 {
        // A shift by a constant splat: the immediate form once compiled.
        Avx512(avx512!(_mm512_srlv_epi32(self.0, _mm512_set1_epi32(N))))
    }
    // Three-input logic in one instruction: the immediate is the function's truth table
    // over x = 0xF0, y = 0xCC, z = 0xAA.
    #[inline(always)]
    fn xor3(x: Avx512, y: Avx512, z: Avx512) -> Avx512 {
        Avx512(avx512!(_mm512_ternarylogic_epi32::<0x96>(x.0, y.0, z.0)))
    }
    #[inline(always)]
    fn ch(x: Avx512, y: Avx512, z: Avx512) -> Avx512 {
        Avx512(avx512!(_mm512_ternarylogic_epi32::<0xCA>(x.0, y.0, z.0)))
    }
    #[inline(always)]
    fn maj(x: Avx512, y: Avx512, z: Avx512) -> Avx512 {
        Avx512(avx512!(_mm512_ternarylogic_epi32::<0xE8>(x.0, y.0, z.0)))
    }
    #[inline(always)]
    fn md5_i(x: Avx512, y: Avx512, z: Avx512) -> Avx512 {
        Avx512(avx512!(_mm512_ternarylogic_epi32::<0x39>(x.0, y.0, z.0)))
    }
}

/// Transposes a 16x16 matrix of 32-bit words: lane `i` of result `j` is lane `j` of row `i`.
#[inline(always)]
fn transpose16(r: [__m512i; 16]) -> [__m512i; 16] {
    // (Plain loops, as in `transpose8`.) Within each 128-bit quarter: pairs of rows
    // interleaved by word, then by word pair, so that quarter `c` of `q[g][m]` holds word
    // 4c+m of rows 4g..4g+4.
    let mut t = r;
    for k in 0..8 {
        let (a, b) = (r[2 * k], r[2 * k + 1]);
        t[2 * k] = avx512!(_mm512_unpacklo_epi32(a, b));
        t[2 * k + 1] = avx512!(_mm512_unpackhi_epi32(a, b));
    }
    let mut q = [[r[0]; 4]; 4];
    for (g, q) in q.iter_mut().enumerate() {
        let t = &t[4 * g..4 * g + 4];
        *q = avx512!([
            _mm512_unpacklo_epi64(t[0], t[2]),
            _mm512_unpackhi_epi64(t[0], t[2]),
            _mm512_unpacklo_epi64(t[1], t[3]),
            _mm512_unpackhi_epi64(t[1], t[3]),
        ]);
    }
    // Word 4c+m gathers quarter c of q[0..4][m]: first the even and odd quarters of two
    // groups side by side, then those halves paired again.
    let mut out = r;
    for m in 0..4 {
        let [g0, g1, g2, g3] = [q[0][m], q[1][m], q[2][m], q[3][m]];
        let (even01, odd01, even23, odd23) = avx512!((
            _mm512_shuffle_i32x4::<0x88>(g0, g1),
            _mm512_shuffle_i32x4::<0xDD>(g0, g1),
            _mm512_shuffle_i32x4::<0x88>(g2, g3),
            _mm512_shuffle_i32x4::<0xDD>(g2, g3)
        ));
        out[m] = avx512!(_mm512_shuffle_i32x4::<0x88>(even01, even23));
        out[8 + m] = avx512!(_mm512_shuffle_i32x4::<0xDD>(even01, even23));
        out[4 + m] = avx512!(_mm512_shuffle_i32x4::<0x88>(odd01, odd23));
        out[12 + m] = avx512!(_mm512_shuffle_i32x4::<0xDD>(odd01, odd23));
    }
    out
}

/// A kernel entry point: compiles the generic rounds of module `$m` for `$v` with `$features`
/// enabled, behind a plain `fn` that takes the token from the (cached) CPU detection.
macro_rules! entry {
    ($name:ident, $inner:ident, $features:literal, $v:ty, $cpu:ty, $m:ident) => {
        #[target_feature(enable = $features)]
        fn $inner(cpu: $cpu, states: &mut [State], lanes: &[&[[u8; 64]]], blocks: usize) {
            $m::compress::<$v>(cpu, states, lanes, blocks)
        }
        pub(super) fn $name(states: &mut [State], lanes: &[&[[u8; 64]]], blocks: usize) {
            let cpu = <$cpu>::detect().expect("a kernel is only handed out for a CPU that runs it");
            // SAFETY: `cpu` exists, so this CPU has the features `$inner` is compiled for.
            unsafe { $inner(cpu, states, lanes, blocks) }
        }
    };
}

entry!(md5_x8, md5_avx2, "avx2", Avx2, Avx2Cpu, md5);
entry!(sha1_x8, sha1_avx2, "avx2", Avx2, Avx2Cpu, sha1);
entry!(sha256_x8, sha256_avx2, "avx2", Avx2, Avx2Cpu, sha256);
entry!(md5_x8vl, md5_avx512vl, "avx2,avx512f,avx512vl", Avx512Vl, Avx512VlCpu, md5);
entry!(sha1_x8vl, sha1_avx512vl, "avx2,avx512f,avx512vl", Avx512Vl, Avx512VlCpu, sha1);
entry!(sha256_x8vl, sha256_avx512vl, "avx2,avx512f,avx512vl", Avx512Vl, Avx512VlCpu, sha256);
entry!(md5_x16, md5_avx512, "avx512f,avx512bw", Avx512, Avx512Cpu, md5);
entry!(sha1_x16, sha1_avx512, "avx512f,avx512bw", Avx512, Avx512Cpu, sha1);
entry!(sha256_x16, sha256_avx512, "avx512f,avx512bw", Avx512, Avx512Cpu, sha256);

/// A BLAKE3 lane kernel entry point (see `b3::compress_lanes`), as `entry!` for the others.
macro_rules! b3_entry {
    ($name:ident, $inner:ident, $features:literal, $v:ty, $cpu:ty) => {
        #[target_feature(enable = $features)]
        fn $inner(cpu: $cpu, jobs: &[b3::Job], out: &mut [[u32; 8]]) {
            b3::compress_lanes::<$v>(cpu, jobs, out)
        }
        pub(super) fn $name(jobs: &[b3::Job], out: &mut [[u32; 8]]) {
            let cpu = <$cpu>::detect().expect("a kernel is only handed out for a CPU that runs it");
            // SAFETY: `cpu` exists, so this CPU has the features `$inner` is compiled for.
            unsafe { $inner(cpu, jobs, out) }
        }
    };
}

b3_entry!(b3_x8, b3_avx2, "avx2", Avx2, Avx2Cpu);
b3_entry!(b3_x8vl, b3_avx512vl, "avx2,avx512f,avx512vl", Avx512Vl, Avx512VlCpu);
b3_entry!(b3_x16, b3_avx512, "avx512f,avx512bw", Avx512, Avx512Cpu);
