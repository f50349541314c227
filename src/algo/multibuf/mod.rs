//! Multi-buffer hashing: MD5, SHA-1 and SHA-256 of 8 or 16 independent messages at once,
//! one message per SIMD lane.
//!
//! **Why.** The three are serial within one message: each 64-byte block's compression
//! needs the previous block's result, so one stream cannot use more than one core's
//! scalar pipeline (SHA-NI helps SHA-1 and SHA-256, nothing helps MD5). A tree of files
//! has many messages, though, and the same compression applied to 16 of them in the 16
//! 32-bit lanes of an AVX-512 register (8 in a 256-bit one) costs about what one costs
//! in scalar code. The pipeline's lane engine keeps the lanes fed with blocks of
//! different files; this module is the arithmetic.
//!
//! **What.** A [`Kernel`] compresses `blocks` blocks of each of its lanes' messages into
//! per-lane chaining states ([`State`]); lanes whose data is too short are idle and keep
//! their state. [`initial`], [`compress_one`] (the single-stream scalar code, for when
//! few lanes are busy: [`Kernel::break_even`]) and [`finish`] (the tail and the padding)
//! complete a digest; or, to run the padding in the lanes too, [`final_blocks`] and
//! [`digest`]. The kernels are written from the specifications (RFC 1321, FIPS 180-4),
//! not ported, and checked against the RustCrypto crates (tests.rs, the `multibuf` fuzz
//! target), driven as an engine drives them (`harness.rs`).
//!
//! **Design.**
//! - The rounds are written once (`md5.rs`, `sha1.rs`, `sha256.rs`), generic over a small
//!   `vector::Vector` trait of lane-wise operations. `x86.rs` implements it three times:
//!   AVX2 (`__m256i`, rotations as two shifts, logic functions as two or three
//!   operations), AVX-512VL (`__m256i` with one-instruction rotations and three-input
//!   logic) and AVX-512F/BW (`__m512i`, likewise), and compiles each family's rounds for
//!   each inside a `#[target_feature]` entry point, where every helper inlines (no
//!   `array::from_fn` in the hot code: LLVM called it out of line, without the features).
//! - Message words are loaded one block per lane and transposed in registers (unpacks
//!   and 128-bit shuffles), byte-swapped for SHA's big-endian words. Gathers were
//!   measured too: half the speed (MD5 x16: 3.0 against 6.4 GB/s). An idle lane reads a
//!   static zero block, so every load is in bounds; its result is not written back.
//! - Round constants are added through an opaque reference (`black_box`): as constants,
//!   LLVM moves them to the end of each sum, onto the chain of dependent operations.
//! - The CPU is asked once. [`Kernel::best`] hands out the fastest kernel of a family with
//!   all lanes busy, and a kernel exists only for a CPU that runs it: each vector type's
//!   constructors take a token that only detection makes, which is the soundness
//!   argument of every `unsafe` block (see `x86.rs`).
//! - Everything here is safe to call with any slices: data are borrowed as
//!   `&[[u8; 64]]` chunks, never as raw pointers.
//!
//! **Speed** (`examples/multibuf_speed.rs`, one thread, CPU time, 1 MiB messages per
//! lane, 4 KiB in brackets; AMD EPYC Zen 4 VM, best of three runs on a busy machine):
//!
//! | GB/s    | scalar      | avx2x8      | avx512x8    | avx512x16   |
//! |---------|-------------|-------------|-------------|-------------|
//! | MD5     | 0.81 (0.77) | 4.57 (3.92) | 5.40 (4.53) | 6.90 (5.89) |
//! | SHA-1   | 1.93 (1.86) | 4.15 (3.62) | 6.75 (5.50) | 5.66 (5.04) |
//! | SHA-256 | 1.80 (1.75) | 1.83 (1.69) | 3.50 (3.07) | 3.21 (2.95) |
//!
//! Scalar is [`crate::algo::md5`] and SHA-NI. This CPU runs 512-bit operations as two 256-bit
//! halves: the 16-lane kernels do no more work per cycle than the 8-lane AVX-512VL ones,
//! and for SHA-1 and SHA-256 (throughput-bound) less, so dispatch takes the 8-lane ones
//! there; MD5 (bound by its chain of dependent steps) gains from the 16 lanes. Four
//! SHA-NI streams interleaved were measured too: no faster than one (the SHA unit is
//! the limit, not the chain), so SHA-NI stays the single-stream code.

pub(crate) mod b3;
mod many;
#[cfg(target_arch = "x86_64")]
mod md5;
#[cfg(target_arch = "x86_64")]
mod sha1;
#[cfg(target_arch = "x86_64")]
mod sha256;
#[cfg(target_arch = "x86_64")]
mod vector;
#[cfg(target_arch = "x86_64")]
mod x86;

pub mod harness;

pub(crate) use many::digests;

use crate::digest::Digest;
use std::sync::OnceLock;

/// The algorithms with multi-buffer kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    Md5,
    Sha1,
    Sha256,
    /// BLAKE3: not a kernel of [`Kernel`]'s but of [`b3`], whose lanes hold chunks of
    /// many inputs; not in [`Family::ALL`] (the Merkle-Damgard families).
    Blake3,
}

impl Family {
    /// Every family, in this order.
    pub(crate) const ALL: [Family; 3] = [Family::Md5, Family::Sha1, Family::Sha256];

    /// The registry's name of the algorithm (`md5`, `sha1`, `sha256`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Family::Md5 => "md5",
            Family::Sha1 => "sha1",
            Family::Sha256 => "sha256",
            Family::Blake3 => "blake3",
        }
    }

    /// How many words of [`State`] the family uses (4, 5, 8).
    fn words(self) -> usize {
        match self {
            Family::Md5 => 4,
            Family::Sha1 => 5,
            Family::Sha256 | Family::Blake3 => 8,
        }
    }
}

/// The most lanes a kernel has.
pub(crate) const MAX_LANES: usize = 16;

/// One lane's chaining state: MD5 uses words 0..4, SHA-1 0..5, SHA-256 0..8.
pub(crate) type State = [u32; 8];

/// A kernel's code: compresses `blocks` blocks of each lane with blocks (`lanes[i]` is
/// either exactly `blocks` blocks long or empty, for an idle lane) into `states`.
type Run = fn(states: &mut [State], lanes: &[&[[u8; 64]]], blocks: usize);

/// The instruction sets kernels are written for, in the order dispatch prefers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // no kernels elsewhere
enum Isa {
    /// AVX-512F and BW on 512-bit registers: 16 lanes.
    Avx512,
    /// AVX-512F and VL on 256-bit registers: 8 lanes with AVX-512's rotations and
    /// three-input logic.
    Avx512Vl,
    /// AVX2: 8 lanes.
    Avx2,
}

impl Isa {
    /// The level of [`crate::simd`] a kernel of this instruction set needs.
    fn level(self) -> crate::simd::Level {
        match self {
            Isa::Avx512 | Isa::Avx512Vl => crate::simd::Level::Avx512,
            Isa::Avx2 => crate::simd::Level::Avx2,
        }
    }
}

/// A multi-buffer compression function for one family and one instruction set.
pub(crate) struct Kernel {
    family: Family,
    lanes: usize,
    name: &'static str,
    isa: Isa,
    run: Run,
}

/// Every kernel, whatever the CPU, in the order of preference; [`Kernel::with_lanes`]
/// and [`Kernel::best`] hand out only those the CPU runs.
#[cfg(target_arch = "x86_64")]
static KERNELS: [Kernel; 9] = {
    const fn k(family: Family, isa: Isa, run: Run) -> Kernel {
        let (lanes, name) = match isa {
            Isa::Avx512 => (16, "avx512x16"),
            Isa::Avx512Vl => (8, "avx512x8"),
            Isa::Avx2 => (8, "avx2x8"),
        };
        Kernel { family, lanes, name, isa, run }
    }
    [
        k(Family::Md5, Isa::Avx512, x86::md5_x16),
        k(Family::Sha1, Isa::Avx512, x86::sha1_x16),
        k(Family::Sha256, Isa::Avx512, x86::sha256_x16),
        k(Family::Md5, Isa::Avx512Vl, x86::md5_x8vl),
        k(Family::Sha1, Isa::Avx512Vl, x86::sha1_x8vl),
        k(Family::Sha256, Isa::Avx512Vl, x86::sha256_x8vl),
        k(Family::Md5, Isa::Avx2, x86::md5_x8),
        k(Family::Sha1, Isa::Avx2, x86::sha1_x8),
        k(Family::Sha256, Isa::Avx2, x86::sha256_x8),
    ]
};
#[cfg(not(target_arch = "x86_64"))]
static KERNELS: [Kernel; 0] = [];

/// What dispatch knows of this CPU, asked once.
struct Cpu {
    /// The instruction sets it has, in the order of preference.
    isas: Vec<Isa>,
    /// Whether it runs 512-bit operations as two 256-bit halves (`x86::halves_512`).
    halves_512: bool,
    /// Whether it has the SHA extensions (which `compress_one` uses for SHA-1 and SHA-256).
    sha_ni: bool,
}

fn cpu() -> &'static Cpu {
    static CPU: OnceLock<Cpu> = OnceLock::new();
    CPU.get_or_init(|| {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut cpu = Cpu { isas: Vec::new(), halves_512: false, sha_ni: false };
        #[cfg(target_arch = "x86_64")]
        {
            if x86::Avx512Cpu::detect().is_some() {
                cpu.isas.push(Isa::Avx512);
            }
            if x86::Avx512VlCpu::detect().is_some() {
                cpu.isas.push(Isa::Avx512Vl);
            }
            if x86::Avx2Cpu::detect().is_some() {
                cpu.isas.push(Isa::Avx2);
            }
            cpu.halves_512 = x86::halves_512();
            cpu.sha_ni = is_x86_feature_detected!("sha");
        }
        cpu
    })
}

impl Kernel {
    /// The kernel this CPU computes `family` fastest with, every lane busy, within the
    /// SIMD cap ([`crate::simd::cap`]), or `None` (no AVX2, not x86-64, or capped below
    /// AVX2): AVX-512 x16 (AVX-512F and BW), else x8 with AVX-512VL, else AVX2 x8; but x8
    /// with AVX-512VL for SHA-1 and SHA-256 on a CPU that splits 512-bit operations in two
    /// (AMD Zen 4), where it is the faster (see the module doc).
    pub(crate) fn best(family: Family) -> Option<&'static Kernel> {
        let allowed = || Kernel::every(family).filter(|k| crate::simd::allows(k.isa.level()));
        let narrow = cpu().halves_512 && family != Family::Md5;
        let vl = || allowed().find(|k| k.isa == Isa::Avx512Vl);
        narrow.then(vl).flatten().or_else(|| allowed().next())
    }

    /// The kernel the lane engine hashes `family` with: [`Kernel::best`] where it beats
    /// the single-stream code with enough lanes busy ([`Kernel::break_even`]; SHA-256 on
    /// AVX2 never beats SHA-NI).
    pub(crate) fn for_engine(family: Family) -> Option<&'static Kernel> {
        Kernel::best(family).filter(|k| k.break_even().is_some())
    }

    /// The kernel of exactly `lanes` lanes (8 or 16) for `family`, if this CPU runs one
    /// (of 8 lanes, the AVX-512VL one where the CPU has it: it is the faster).
    pub(crate) fn with_lanes(family: Family, lanes: usize) -> Option<&'static Kernel> {
        Kernel::every(family).find(|k| k.lanes == lanes)
    }

    /// Every kernel this CPU runs for `family`, the preferred first (tests, benchmarks).
    pub(crate) fn every(family: Family) -> impl Iterator<Item = &'static Kernel> {
        KERNELS.iter().filter(move |k| k.family == family && cpu().isas.contains(&k.isa))
    }

    /// From how many busy lanes this kernel hashes faster than [`compress_one`] on each
    /// of them in turn, or `None` if never: a kernel costs the same whatever the number
    /// of busy lanes, so with `b` of `n` lanes busy it runs at `b / n` of its speed, and
    /// it wins from the least `b` with `b / n * kernel > scalar`. Estimated from the
    /// speeds `examples/multibuf_speed.rs` measured on an AMD EPYC (Zen 4; see the module
    /// doc; the example prints these estimates beside its own measure) and, without
    /// SHA-NI, from the portable code's speed (about half SHA-NI's for SHA-1, a quarter
    /// for SHA-256).
    pub(crate) fn break_even(&self) -> Option<usize> {
        let sha_ni = cpu().sha_ni;
        let lanes = match (self.family, self.isa, sha_ni) {
            (Family::Blake3, _, _) => return None,
            (Family::Md5, _, _) => 2,
            (Family::Sha1, Isa::Avx512Vl, true) => 3,
            (Family::Sha1, Isa::Avx2, true) => 5,
            (Family::Sha1, Isa::Avx512, true) => 6,
            (Family::Sha256, Isa::Avx512Vl, true) => 5,
            (Family::Sha256, Isa::Avx512, true) => 10,
            (Family::Sha256, Isa::Avx2, true) => return None,
            (Family::Sha256, Isa::Avx2, false) | (_, Isa::Avx512, false) => 3,
            (_, _, false) => 2,
        };
        Some(lanes)
    }

    /// How many messages it compresses at once.
    pub(crate) fn lanes(&self) -> usize {
        self.lanes
    }

    /// The algorithm it computes.
    pub(crate) fn family(&self) -> Family {
        self.family
    }

    /// `avx512x16`, `avx512x8` (AVX-512VL) or `avx2x8`, for `--verbose` and benchmarks.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Compresses `blocks` 64-byte blocks of every active lane. `states.len()` and
    /// `data.len()` are both [`Kernel::lanes`]. Lane `i` is active when
    /// `data[i].len() >= blocks * 64`: its first `blocks * 64` bytes are compressed into
    /// `states[i]`. A lane with a shorter slice (typically empty) is idle: its state is
    /// left exactly as it was. The cost is that of all lanes busy, whatever the number
    /// active. Panics only when `states` or `data` do not have one entry per lane.
    pub(crate) fn compress(&self, states: &mut [State], data: &[&[u8]], blocks: usize) {
        assert_eq!(states.len(), self.lanes, "one state per lane");
        assert_eq!(data.len(), self.lanes, "one slice per lane");
        // No slice is longer than isize::MAX bytes: with an overflowing length, all idle.
        let Some(bytes) = blocks.checked_mul(64) else { return };
        if blocks == 0 {
            return;
        }
        let mut lanes: [&[[u8; 64]]; MAX_LANES] = [&[]; MAX_LANES];
        let mut active = false;
        for (lane, d) in lanes.iter_mut().zip(data) {
            if d.len() >= bytes {
                *lane = d[..bytes].as_chunks::<64>().0;
                active = true;
            }
        }
        if active {
            (self.run)(states, &lanes[..self.lanes], blocks);
        }
    }
}

/// The initial chaining value of `family` (unused words zero): RFC 1321 section 3.3,
/// FIPS 180-4 sections 5.3.1 and 5.3.3.
pub(crate) fn initial(family: Family) -> State {
    let mut s = [0; 8];
    let h: &[u32] = match family {
        Family::Md5 => &[0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476],
        Family::Sha1 => &[0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0],
        Family::Blake3 => &b3::IV,
        Family::Sha256 => &[
            0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
            0x5be0cd19,
        ],
    };
    s[..h.len()].copy_from_slice(h);
    s
}

/// Whether the CPU has the SHA extensions, which the `sha1` and `sha2` crates (the
/// single-stream code of SHA-1 and SHA-256) use.
pub(crate) fn sha_ni() -> bool {
    cpu().sha_ni
}

/// The single-stream code for one lane: compresses `data`, a whole number of 64-byte
/// blocks (panics otherwise), into `state`, with the scalar code the registry uses:
/// [`crate::algo::md5::compress`] for MD5, the `sha1` and `sha2` crates' compression
/// functions (which pick SHA-NI at run time).
pub(crate) fn compress_one(family: Family, state: &mut State, data: &[u8]) {
    let (blocks, rest) = data.as_chunks::<64>();
    assert!(rest.is_empty(), "compress_one takes whole 64-byte blocks");
    compress_blocks(family, state, blocks);
}

fn compress_blocks(family: Family, state: &mut State, blocks: &[[u8; 64]]) {
    match family {
        Family::Md5 => {
            let st: &mut [u32; 4] = (&mut state[..4]).try_into().expect("4 words");
            crate::algo::md5::compress(st, blocks);
        }
        Family::Sha1 => {
            let st: &mut [u32; 5] = (&mut state[..5]).try_into().expect("5 words");
            ::sha1::block_api::compress(st, blocks);
        }
        Family::Sha256 => ::sha2::block_api::compress256(state, blocks),
        // No kernel of this module is handed out for BLAKE3 (`b3` hashes it).
        Family::Blake3 => unreachable!("BLAKE3 is hashed by multibuf::b3"),
    }
}

/// Finishes a message of `total` bytes whose first `total - tail.len()` bytes (a
/// multiple of 64) are already compressed into `state`: compresses `tail` (any length,
/// whole blocks first) and the padding ([`final_blocks`]) with the single-stream code,
/// and returns the digest as the RustCrypto crates give it ([`digest`]).
pub(crate) fn finish(family: Family, mut state: State, tail: &[u8], total: u64) -> Digest {
    debug_assert!(
        (tail.len() as u64) <= total && (total - tail.len() as u64).is_multiple_of(64),
        "the bytes before the tail are whole blocks"
    );
    let (blocks, rest) = tail.as_chunks::<64>();
    compress_blocks(family, &mut state, blocks);
    let (last, n) = final_blocks(family, rest, total);
    compress_blocks(family, &mut state, last[..n].as_chunks::<64>().0);
    digest(family, &state)
}

/// The last block or two of a message of `total` bytes whose bytes before `rest` are
/// whole blocks: `rest` (fewer than 64 bytes; panics otherwise) and the padding (RFC 1321
/// sections 3.1-3.2, FIPS 180-4 section 5.1.1: a 1 bit, zeros, the length in bits in 64
/// bits, little-endian for MD5 and big-endian for SHA). Returns the buffer and how many
/// of its bytes are the blocks (64 or 128). A lane engine can compress them in the
/// lanes (a kernel reads any slice), then take the [`digest`] of the state.
pub(crate) fn final_blocks(family: Family, rest: &[u8], total: u64) -> ([u8; 128], usize) {
    assert!(rest.len() < 64, "the tail after the whole blocks is under 64 bytes");
    let mut last = [0u8; 128];
    last[..rest.len()].copy_from_slice(rest);
    last[rest.len()] = 0x80;
    let n = if rest.len() < 56 { 64 } else { 128 };
    let bits = total.wrapping_mul(8);
    let len = if family == Family::Md5 { bits.to_le_bytes() } else { bits.to_be_bytes() };
    last[n - 8..n].copy_from_slice(&len);
    (last, n)
}

/// The digest bytes (16, 20 or 32) of a state that has compressed a whole message and
/// its padding: the state words, little-endian for MD5, big-endian for SHA.
pub(crate) fn digest(family: Family, state: &State) -> Digest {
    let words = &state[..family.words()];
    let mut bytes = [0u8; 32];
    for (b, w) in bytes.chunks_exact_mut(4).zip(words) {
        let w = if family == Family::Md5 { w.to_le_bytes() } else { w.to_be_bytes() };
        b.copy_from_slice(&w);
    }
    Digest::new(&bytes[..4 * words.len()])
}

#[cfg(test)]
pub(super) mod tests;
