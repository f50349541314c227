//! SHA-256's compression function (FIPS 180-4, sections 6.2.2 and 4.1.2) over vectors of
//! lanes.

use super::State;
use super::vector::{Vector, add_all, load_state, store_state};

/// The round constants, section 4.2.2: the first 32 bits of the fractional parts of the
/// cube roots of the first 64 primes.
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// Σ0(x) = ROTR2(x) ^ ROTR13(x) ^ ROTR22(x).
#[inline(always)]
fn big_sigma0<V: Vector>(x: V) -> V {
    V::xor3(x.rol::<30, 2>(), x.rol::<19, 13>(), x.rol::<10, 22>())
}

/// Σ1(x) = ROTR6(x) ^ ROTR11(x) ^ ROTR25(x).
#[inline(always)]
fn big_sigma1<V: Vector>(x: V) -> V {
    V::xor3(x.rol::<26, 6>(), x.rol::<21, 11>(), x.rol::<7, 25>())
}

/// σ0(x) = ROTR7(x) ^ ROTR18(x) ^ SHR3(x).
#[inline(always)]
fn small_sigma0<V: Vector>(x: V) -> V {
    V::xor3(x.rol::<25, 7>(), x.rol::<14, 18>(), x.shr::<3>())
}

/// σ1(x) = ROTR17(x) ^ ROTR19(x) ^ SHR10(x).
#[inline(always)]
fn small_sigma1<V: Vector>(x: V) -> V {
    V::xor3(x.rol::<15, 17>(), x.rol::<13, 19>(), x.shr::<10>())
}

/// `W[t]` of the message schedule, kept in a ring of the last 16 words: for t >= 16,
/// `W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]` replaces `W[t-16]`.
#[inline(always)]
fn word<V: Vector>(w: &mut [V; 16], t: usize) -> V {
    if t >= 16 {
        w[t % 16] = small_sigma1(w[(t - 2) % 16])
            .add(w[(t - 7) % 16])
            .add(small_sigma0(w[(t - 15) % 16]))
            .add(w[t % 16]);
    }
    w[t % 16]
}

/// Eight rounds from `t`. One round is `T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]`,
/// `T2 = Σ0(a) + Maj(a, b, c)`; `h = g; g = f; f = e; e = d + T1; d = c; c = b; b = a;
/// a = T1 + T2`: here d and h are written in place and the names rotate, so eight rounds
/// bring them back to where they started.
macro_rules! eight {
    ($cpu:ident, $k:ident, $w:ident, $t:expr, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident) => {
        round!($cpu, $k, $w, $t, $a, $b, $c, $d, $e, $f, $g, $h);
        round!($cpu, $k, $w, $t + 1, $h, $a, $b, $c, $d, $e, $f, $g);
        round!($cpu, $k, $w, $t + 2, $g, $h, $a, $b, $c, $d, $e, $f);
        round!($cpu, $k, $w, $t + 3, $f, $g, $h, $a, $b, $c, $d, $e);
        round!($cpu, $k, $w, $t + 4, $e, $f, $g, $h, $a, $b, $c, $d);
        round!($cpu, $k, $w, $t + 5, $d, $e, $f, $g, $h, $a, $b, $c);
        round!($cpu, $k, $w, $t + 6, $c, $d, $e, $f, $g, $h, $a, $b);
        round!($cpu, $k, $w, $t + 7, $b, $c, $d, $e, $f, $g, $h, $a);
    };
}

macro_rules! round {
    ($cpu:ident, $k:ident, $w:ident, $t:expr, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident) => {
        let kw = V::splat($cpu, $k[$t]).add(word(&mut $w, $t));
        // h + K + W does not wait for e: it comes first.
        let t1 = $h.add(kw).add(V::ch($e, $f, $g)).add(big_sigma1($e));
        let t2 = big_sigma0($a).add(V::maj($a, $b, $c));
        $d = $d.add(t1);
        $h = t1.add(t2);
    };
}

/// Compresses `blocks` blocks of every active lane into `states` (see `Kernel::compress`).
#[inline(always)]
pub(super) fn compress<V: Vector>(
    cpu: V::Cpu,
    states: &mut [State],
    lanes: &[&[[u8; 64]]],
    blocks: usize,
) {
    // The constants through an opaque reference: as constants, LLVM would add them last
    // (it moves constants to the end of a sum), on the chain that waits for e.
    let k = std::hint::black_box(&K);
    let (mut s, all) = load_state::<V, 8>(cpu, states);
    for blk in 0..blocks {
        let mut w = V::load_words::<true>(cpu, lanes, blk);
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = s;
        eight!(cpu, k, w, 0, a, b, c, d, e, f, g, h);
        eight!(cpu, k, w, 8, a, b, c, d, e, f, g, h);
        eight!(cpu, k, w, 16, a, b, c, d, e, f, g, h);
        eight!(cpu, k, w, 24, a, b, c, d, e, f, g, h);
        eight!(cpu, k, w, 32, a, b, c, d, e, f, g, h);
        eight!(cpu, k, w, 40, a, b, c, d, e, f, g, h);
        eight!(cpu, k, w, 48, a, b, c, d, e, f, g, h);
        eight!(cpu, k, w, 56, a, b, c, d, e, f, g, h);
        add_all(&mut s, [a, b, c, d, e, f, g, h]);
    }
    store_state(s, all, states, lanes);
}
