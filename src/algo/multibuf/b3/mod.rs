//! BLAKE3 of many small inputs at once: their chunks side by side in the lanes of one
//! kernel call, written from the BLAKE3 specification (O'Connor, Aumasson, Neves,
//! Wilcox-O'Hearn, 2020; sections 2.1-2.6), not ported from the `blake3` crate.
//!
//! **Why.** The `blake3` crate is multi-lane *within* one input: it compresses up to 16
//! of an input's 1 KiB chunks at once. A 4 KiB file has four chunks, so a 16-lane kernel
//! runs a quarter full, and every file pays the crate's set-up and its parent nodes one
//! at a time. A tree of small files has many inputs, though: [`hash_many`] puts the
//! chunks of all of them side by side, 8 or 16 to a kernel call, then their parent nodes
//! likewise, level by level.
//!
//! **What.** A lane holds one [`Job`]: a chunk (up to 16 blocks; its chunk counter;
//! `CHUNK_START` on its first block, `CHUNK_END` on its last, `ROOT` too when it is the
//! whole input) or a parent node (one block, the two children's chaining values;
//! `PARENT`, and `ROOT` for the top one). Lanes run for as many blocks as the longest
//! job of the call; each lane's chaining value is taken after its own last block (the
//! blocks after it are idle work on zero blocks, dropped). Jobs are sorted by length so
//! that a call's lanes are mostly of one length. The 32-byte hash of an input is the
//! first 8 words of the root node's output, which is the chaining value formula of that
//! compression (section 2.6): one-chunk inputs end in their chunk job, others in their
//! top parent.
//!
//! **Design.** The rounds are generic over the lane-wise [`Vector`] of the MD5/SHA
//! kernels (add, xor, rotations), compiled for AVX2 x8, AVX-512VL x8 and AVX-512 x16 in
//! `x86.rs`; message words are loaded and transposed by the same code (`load_words`).
//! The portable code ([`compress`]) is the fallback and the reference of the tests.
//! Inputs above some size are left to the crate, which is as fast within one large input
//! (each kernel's `max_input`, measured in `examples/multibuf_speed.rs`).
//!
//! **Speed**: `cargo run --release --example multibuf_speed blake3` compares the kernels
//! with the crate per input size; on D3 (50,000 files of 4 KiB) `hash -a blake3` went
//! from 1.42x to 1.16x the plain-read ceiling, the hash from 30% of the samples to 11%
//! (docs/benchmarks.md, issue 27). In the cache, as the lane engine hashes the files it
//! has just read, the 16-lane kernel runs at the crate's speed within one large input
//! (7 GB/s a core here): a block whole in every lane takes the rounds only, its length
//! and flags made once per call, and the lanes' next blocks are prefetched.

use super::Isa;
#[cfg(target_arch = "x86_64")]
use super::vector::Vector;

/// The initial chaining value (the key of the plain hash): SHA-256's IV (section 2.2).
pub(crate) const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// Domain flags (section 2.1, table 3).
pub(crate) const CHUNK_START: u32 = 1;
pub(crate) const CHUNK_END: u32 = 2;
pub(crate) const PARENT: u32 = 4;
pub(crate) const ROOT: u32 = 8;

/// Bytes in a chunk and in a block.
pub(crate) const CHUNK: usize = 1024;
const BLOCK: usize = 64;

/// The message word permutation applied between rounds (section 2.2, table 2).
const PERMUTATION: [usize; 16] = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];

/// Which message word each of the 7 rounds reads in place `i`: the permutation applied
/// `r` times.
const SCHEDULE: [[usize; 16]; 7] = {
    let mut s = [[0; 16]; 7];
    let mut i = 0;
    while i < 16 {
        s[0][i] = i;
        i += 1;
    }
    let mut r = 1;
    while r < 7 {
        let mut i = 0;
        while i < 16 {
            s[r][i] = s[r - 1][PERMUTATION[i]];
            i += 1;
        }
        r += 1;
    }
    s
};

/// One compression a lane carries out: `data` (at most a chunk; empty only for the
/// empty input) as blocks, the last one zero-padded, with `counter`, and the flags:
/// `flags` on every block, `start` added on the first, `end` on the last.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Job<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) counter: u64,
    pub(crate) flags: u32,
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl Job<'_> {
    /// Blocks compressed: at least one (the empty input's zero block).
    fn blocks(&self) -> usize {
        self.data.len().div_ceil(BLOCK).max(1)
    }

    /// Block `b` (< `blocks()`), zero-padded, and its length.
    fn block(&self, b: usize) -> ([u8; 64], u32) {
        let from = (b * BLOCK).min(self.data.len());
        let bytes = &self.data[from..self.data.len().min(from + BLOCK)];
        let mut block = [0; 64];
        block[..bytes.len()].copy_from_slice(bytes);
        (block, bytes.len() as u32)
    }

    /// The flags of block `b`.
    fn flags_of(&self, b: usize) -> u32 {
        let mut f = self.flags;
        if b == 0 {
            f |= self.start;
        }
        if b + 1 == self.blocks() {
            f |= self.end;
        }
        f
    }
}

/// The quarter-round G (section 2.2) on four words of a state.
#[inline(always)]
fn g(v: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize, x: u32, y: u32) {
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(12);
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
    v[d] = (v[d] ^ v[a]).rotate_right(8);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(7);
}

/// The compression function (section 2.2), portable: the first 8 words of its output,
/// the new chaining value (and the first 32 bytes of a root output).
pub(crate) fn compress(
    cv: &[u32; 8],
    block: &[u8; 64],
    counter: u64,
    len: u32,
    flags: u32,
) -> [u32; 8] {
    let m: [u32; 16] = std::array::from_fn(|i| {
        u32::from_le_bytes(block[4 * i..4 * i + 4].try_into().expect("4 bytes"))
    });
    let mut v = [
        cv[0],
        cv[1],
        cv[2],
        cv[3],
        cv[4],
        cv[5],
        cv[6],
        cv[7],
        IV[0],
        IV[1],
        IV[2],
        IV[3],
        counter as u32,
        (counter >> 32) as u32,
        len,
        flags,
    ];
    for s in &SCHEDULE {
        g(&mut v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        g(&mut v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        g(&mut v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        g(&mut v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        g(&mut v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        g(&mut v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        g(&mut v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        g(&mut v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    std::array::from_fn(|i| v[i] ^ v[i + 8])
}

/// A job's chaining value with the portable code.
fn run_job(job: &Job) -> [u32; 8] {
    let mut cv = IV;
    for b in 0..job.blocks() {
        let (block, len) = job.block(b);
        cv = compress(&cv, &block, job.counter, len, job.flags_of(b));
    }
    cv
}

/// A kernel's code: the chaining value of each of `jobs` (at most its lanes) into `out`.
type Run = fn(jobs: &[Job], out: &mut [[u32; 8]]);

/// A BLAKE3 lane kernel for one instruction set, or the portable code (one lane).
pub(crate) struct Kernel {
    lanes: usize,
    name: &'static str,
    isa: Option<Isa>,
    run: Run,
    /// The largest input the lane engine gives it: above it the crate, multi-lane within
    /// one input, is faster (`examples/multibuf_speed.rs blake3`, `fixity bench algorithms
    /// -a blake3`: the 16-lane AVX-512 kernel on Zen 4 up to 64 KiB; AVX2 x8 on a Zen 3
    /// class EPYC 2.8 GB/s at every size against the crate's 2.6 at 4 KiB, 2.1 at 6 KiB,
    /// 3.8 at 8 KiB and 4.0 at 16 KiB, so below 8 KiB).
    max_input: u64,
}

fn portable(jobs: &[Job], out: &mut [[u32; 8]]) {
    for (job, o) in jobs.iter().zip(out) {
        *o = run_job(job);
    }
}

static PORTABLE: Kernel =
    Kernel { lanes: 1, name: "portable", isa: None, run: portable, max_input: 0 };

#[cfg(target_arch = "x86_64")]
static KERNELS: [Kernel; 3] = [
    Kernel {
        lanes: 16,
        name: "avx512x16",
        isa: Some(Isa::Avx512),
        run: super::x86::b3_x16,
        max_input: 64 << 10,
    },
    Kernel {
        lanes: 8,
        name: "avx512x8",
        isa: Some(Isa::Avx512Vl),
        run: super::x86::b3_x8vl,
        max_input: 64 << 10,
    },
    Kernel {
        lanes: 8,
        name: "avx2x8",
        isa: Some(Isa::Avx2),
        run: super::x86::b3_x8,
        max_input: (8 << 10) - 1,
    },
];
#[cfg(not(target_arch = "x86_64"))]
static KERNELS: [Kernel; 0] = [];

impl Kernel {
    /// Every kernel this CPU runs, the preferred first, then the portable code.
    pub(crate) fn every() -> impl Iterator<Item = &'static Kernel> {
        let cpu = super::cpu();
        KERNELS
            .iter()
            .filter(|k| k.isa.is_some_and(|i| cpu.isas.contains(&i)))
            .chain(std::iter::once(&PORTABLE))
    }

    /// Every kernel, whether this CPU runs it or not (tests say which they skip).
    #[cfg(test)]
    pub(crate) fn all() -> impl Iterator<Item = &'static Kernel> {
        KERNELS.iter().chain(std::iter::once(&PORTABLE))
    }

    /// The kernel the lane engine hashes small inputs with on this CPU, if any beats the
    /// crate: the first of [`Kernel::every`] with SIMD lanes within the SIMD cap
    /// ([`crate::simd::cap`]; below AVX2, none: the crate hashes every input).
    pub(crate) fn best() -> Option<&'static Kernel> {
        Kernel::every()
            .find(|k| k.lanes > 1 && k.isa.is_some_and(|i| crate::simd::allows(i.level())))
    }

    pub(crate) fn lanes(&self) -> usize {
        self.lanes
    }

    /// The largest input the lane engine hands this kernel (larger ones go to the crate).
    #[cfg(test)]
    pub(crate) fn max_input(&self) -> u64 {
        self.max_input
    }

    /// Whether the lane engine hands this kernel an input of `len` bytes (an empty one, or
    /// one above [`Kernel::max_input`], the crate hashes).
    pub(crate) fn takes(&self, len: u64) -> bool {
        (1..=self.max_input).contains(&len)
    }

    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// The chaining values of `jobs` (any number), a kernel call per `lanes()` of them.
    fn run_all(&self, jobs: &[Job], out: &mut [[u32; 8]]) {
        for (jobs, out) in jobs.chunks(self.lanes).zip(out.chunks_mut(self.lanes)) {
            if jobs.len() == 1 {
                out[0] = run_job(&jobs[0]);
            } else {
                (self.run)(jobs, out);
            }
        }
    }
}

/// The BLAKE3 hash (32 bytes) of every input, through `kernel`'s lanes: the chunks of
/// all inputs side by side, then their parent nodes level by level (section 2.4: the
/// tree is left-balanced, which pairing neighbours level by level and carrying an odd
/// last node up gives).
pub(crate) fn hash_many(kernel: &Kernel, inputs: &[&[u8]]) -> Vec<[u8; 32]> {
    // The chunk jobs, and where each input's chaining values start among them.
    let mut jobs = Vec::new();
    let mut first = Vec::with_capacity(inputs.len() + 1);
    for input in inputs {
        first.push(jobs.len());
        let n = input.len().div_ceil(CHUNK).max(1);
        let root = if n == 1 { ROOT } else { 0 };
        for c in 0..n {
            let data = &input[c * CHUNK..input.len().min((c + 1) * CHUNK)];
            let end = CHUNK_END | root;
            jobs.push(Job { data, counter: c as u64, flags: 0, start: CHUNK_START, end });
        }
    }
    first.push(jobs.len());
    // Longest first, so that a call's lanes are mostly of one length.
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&j| std::cmp::Reverse(jobs[j].blocks()));
    let sorted: Vec<Job> = order.iter().map(|&j| jobs[j]).collect();
    let mut cvs_sorted = vec![[0u32; 8]; jobs.len()];
    kernel.run_all(&sorted, &mut cvs_sorted);
    let mut cvs = vec![[0u32; 8]; jobs.len()];
    for (&j, cv) in order.iter().zip(cvs_sorted) {
        cvs[j] = cv;
    }
    // Each input's nodes of the current level.
    let mut levels: Vec<Vec<[u32; 8]>> =
        first.windows(2).map(|w| cvs[w[0]..w[1]].to_vec()).collect();
    loop {
        let mut blocks: Vec<[u8; 64]> = Vec::new();
        let mut roots = Vec::new();
        for level in levels.iter().filter(|l| l.len() > 1) {
            for pair in level.chunks_exact(2) {
                let mut block = [0u8; 64];
                for (k, w) in pair[0].iter().chain(&pair[1]).enumerate() {
                    block[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
                }
                blocks.push(block);
                roots.push(level.len() == 2);
            }
        }
        if blocks.is_empty() {
            break;
        }
        let parents: Vec<Job> = blocks
            .iter()
            .zip(&roots)
            .map(|(b, &root)| Job {
                data: b,
                counter: 0,
                flags: PARENT,
                start: 0,
                end: if root { ROOT } else { 0 },
            })
            .collect();
        let mut out = vec![[0u32; 8]; parents.len()];
        kernel.run_all(&parents, &mut out);
        let mut out = out.into_iter();
        for level in levels.iter_mut().filter(|l| l.len() > 1) {
            let odd = (level.len() % 2 == 1).then(|| level[level.len() - 1]);
            let n = level.len() / 2;
            level.clear();
            level.extend(out.by_ref().take(n));
            level.extend(odd);
        }
    }
    levels
        .iter()
        .map(|l| {
            let mut h = [0u8; 32];
            for (k, w) in l[0].iter().enumerate() {
                h[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
            }
            h
        })
        .collect()
}

/// The lane kernel, generic over the vector type: the chaining value of each of `jobs`
/// (at most `V::LANES`) into `out`. Lanes without a job, and lanes past their job's last
/// block, compress zero blocks whose result is dropped.
///
/// What each lane reads is settled once, before the blocks: its whole blocks in place,
/// and a zero-padded copy of a short last one. A block that is whole in every lane and
/// neither first nor last in any (14 of a full chunk's 16) then costs the rounds and the
/// message transposition only, its length and flags vectors made once per call.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn compress_lanes<V: Vector>(cpu: V::Cpu, jobs: &[Job], out: &mut [[u32; 8]]) {
    const L: usize = super::MAX_LANES;
    assert!(jobs.len() <= V::LANES && out.len() >= jobs.len());
    let mut lens = [0usize; L];
    let mut counter_lo = [0u32; L];
    let mut counter_hi = [0u32; L];
    let mut flags = [0u32; L];
    // Each lane's whole blocks, and its last block zero-padded when it is short (or the
    // empty input's zero block).
    let mut whole: [&[[u8; 64]]; L] = [&[]; L];
    let mut pads = [[0u8; 64]; L];
    let mut pad_lens = [0u32; L];
    let mut most = 0;
    // Blocks below `plain` are whole in every lane and no lane's last.
    let mut plain = usize::MAX;
    for (i, j) in jobs.iter().enumerate() {
        lens[i] = j.blocks();
        counter_lo[i] = j.counter as u32;
        counter_hi[i] = (j.counter >> 32) as u32;
        flags[i] = j.flags;
        whole[i] = j.data.as_chunks::<64>().0;
        if whole[i].len() < lens[i] {
            (pads[i], pad_lens[i]) = j.block(lens[i] - 1);
        }
        most = most.max(lens[i]);
        plain = plain.min(lens[i] - 1);
    }
    let (lo, hi) = (V::load(cpu, &counter_lo), V::load(cpu, &counter_hi));
    let plain_len = V::splat(cpu, BLOCK as u32);
    let plain_flags = V::load(cpu, &flags);
    let iv: [V; 4] =
        [V::splat(cpu, IV[0]), V::splat(cpu, IV[1]), V::splat(cpu, IV[2]), V::splat(cpu, IV[3])];
    let mut cv = [
        iv[0],
        iv[1],
        iv[2],
        iv[3],
        V::splat(cpu, IV[4]),
        V::splat(cpu, IV[5]),
        V::splat(cpu, IV[6]),
        V::splat(cpu, IV[7]),
    ];
    for b in 0..most {
        let (m, len, fl) = if b > 0 && b < plain {
            for lane in &whole[..jobs.len()] {
                if let Some(ahead) = lane.get(b + 4) {
                    // SAFETY: a prefetch only hints at an address, here a valid one.
                    unsafe {
                        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                            ahead.as_ptr().cast(),
                        )
                    };
                }
            }
            (V::load_words::<false>(cpu, &whole[..V::LANES], b), plain_len, plain_flags)
        } else {
            let mut len = [0u32; L];
            let mut fl = [0u32; L];
            let mut blocks: [&[[u8; 64]]; L] = [&[]; L];
            for (i, j) in jobs.iter().enumerate() {
                if b < whole[i].len() {
                    blocks[i] = std::slice::from_ref(&whole[i][b]);
                    len[i] = BLOCK as u32;
                } else if b < lens[i] {
                    blocks[i] = std::slice::from_ref(&pads[i]);
                    len[i] = pad_lens[i];
                }
                if b < lens[i] {
                    fl[i] = j.flags_of(b);
                }
            }
            let m = V::load_words::<false>(cpu, &blocks[..V::LANES], 0);
            (m, V::load(cpu, &len), V::load(cpu, &fl))
        };
        let mut v = [
            cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6], cv[7], iv[0], iv[1], iv[2], iv[3], lo,
            hi, len, fl,
        ];
        for s in &SCHEDULE {
            gv(&mut v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
            gv(&mut v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
            gv(&mut v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
            gv(&mut v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
            gv(&mut v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
            gv(&mut v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
            gv(&mut v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
            gv(&mut v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
        }
        for k in 0..8 {
            cv[k] = v[k].xor(v[k + 8]);
        }
        if b >= plain && lens[..jobs.len()].contains(&(b + 1)) {
            let mut words = [[0u32; L]; 8];
            for k in 0..8 {
                cv[k].store(&mut words[k]);
            }
            for (i, o) in out[..jobs.len()].iter_mut().enumerate() {
                if lens[i] == b + 1 {
                    *o = std::array::from_fn(|k| words[k][i]);
                }
            }
        }
    }
}

/// G over vectors of lanes (the rotations right by 16, 12, 8 and 7 as rotations left).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn gv<V: Vector>(v: &mut [V; 16], a: usize, b: usize, c: usize, d: usize, x: V, y: V) {
    v[a] = v[a].add(v[b]).add(x);
    v[d] = v[d].xor(v[a]).rol::<16, 16>();
    v[c] = v[c].add(v[d]);
    v[b] = v[b].xor(v[c]).rol::<20, 12>();
    v[a] = v[a].add(v[b]).add(y);
    v[d] = v[d].xor(v[a]).rol::<24, 8>();
    v[c] = v[c].add(v[d]);
    v[b] = v[b].xor(v[c]).rol::<25, 7>();
}

#[cfg(test)]
mod tests;
