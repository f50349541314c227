//! The lane-wise operations the compression rounds are written with, once, for every
//! vector width: [`Vector`] is implemented by the AVX2 (8 lanes) and AVX-512 (16 lanes)
//! types of `x86.rs`; the rounds in `md5.rs`, `sha1.rs` and `sha256.rs` are generic over it.

use super::State;

/// A vector of `LANES` 32-bit words, one per message lane, and the few operations the
/// three algorithms need. Constructors take a `Cpu` token, which exists only once the CPU
/// was found to have the instructions the type uses: holding a vector value is the proof
/// that its operations may run.
pub(super) trait Vector: Copy {
    /// The token proving the CPU supports this type's instructions.
    type Cpu: Copy;
    /// How many lanes (8 or 16).
    const LANES: usize;

    /// Every lane `x`.
    fn splat(cpu: Self::Cpu, x: u32) -> Self;
    /// The states of every lane, transposed: word `k` of lane `i`'s state is lane `i` of
    /// the `k`-th vector; `states.len()` is `LANES`.
    fn load_states(cpu: Self::Cpu, states: &[State]) -> [Self; 8];
    /// The inverse of `load_states`, for the active lanes only (those with blocks in
    /// `lanes`): an idle lane's state is not written.
    fn store_states(v: [Self; 8], states: &mut [State], lanes: &[&[[u8; 64]]]);
    /// The 16 message words of block `b` of every lane, transposed: word `j` of lane `i`
    /// is lane `i` of the `j`-th vector. Words are read little-endian, or big-endian when
    /// `BE`. A lane with no block `b` (an idle lane) reads a block of zeros.
    fn load_words<const BE: bool>(cpu: Self::Cpu, lanes: &[&[[u8; 64]]], b: usize) -> [Self; 16];

    /// Lane `i` is `words[i]` (`words.len()` is at least `LANES`).
    fn load(cpu: Self::Cpu, words: &[u32]) -> Self;
    /// Writes lane `i` into `out[i]` (`out.len()` is at least `LANES`).
    fn store(self, out: &mut [u32]);

    /// Lane-wise wrapping addition.
    fn add(self, o: Self) -> Self;
    /// Lane-wise exclusive or.
    fn xor(self, o: Self) -> Self;
    /// Rotation left by `L` bits; `R` is `32 - L` (the right shift half of it).
    fn rol<const L: i32, const R: i32>(self) -> Self;
    /// Logical shift right by `N` bits.
    fn shr<const N: i32>(self) -> Self;
    /// `x ^ y ^ z`.
    fn xor3(x: Self, y: Self, z: Self) -> Self;
    /// Choose: `(x & y) | (!x & z)` (each bit of `x` picks `y` or `z`).
    fn ch(x: Self, y: Self, z: Self) -> Self;
    /// Majority: `(x & y) | (x & z) | (y & z)`.
    fn maj(x: Self, y: Self, z: Self) -> Self;
    /// MD5's I function: `y ^ (x | !z)`.
    fn md5_i(x: Self, y: Self, z: Self) -> Self;
}

/// The block an idle lane reads: it is compressed like the others, its result dropped.
pub(super) static ZERO_BLOCK: [u8; 64] = [0; 64];

/// Block `b` of a lane, or the zero block when the lane has none (idle).
#[inline(always)]
pub(super) fn block_of(lane: &[[u8; 64]], b: usize) -> &[u8; 64] {
    lane.get(b).unwrap_or(&ZERO_BLOCK)
}

/// Every lane's state transposed into vectors (`Vector::load_states`): the first `N`
/// words, which the family uses, and all 8, to write back unchanged.
#[inline(always)]
pub(super) fn load_state<V: Vector, const N: usize>(
    cpu: V::Cpu,
    states: &[State],
) -> ([V; N], [V; 8]) {
    assert_eq!(states.len(), V::LANES);
    let all = V::load_states(cpu, states);
    let mut used = [all[0]; N];
    used.copy_from_slice(&all[..N]);
    (used, all)
}

/// Writes the `N` words back into the states of the active lanes (those with blocks),
/// the other words as `load_state` read them; an idle lane's state is left as it was.
#[inline(always)]
pub(super) fn store_state<V: Vector, const N: usize>(
    used: [V; N],
    mut all: [V; 8],
    states: &mut [State],
    lanes: &[&[[u8; 64]]],
) {
    all[..N].copy_from_slice(&used);
    V::store_states(all, states, lanes);
}

/// `a + b` for every pair, lane-wise: the feed-forward that ends each block.
#[inline(always)]
pub(super) fn add_all<V: Vector, const N: usize>(a: &mut [V; N], b: [V; N]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = x.add(y);
    }
}
