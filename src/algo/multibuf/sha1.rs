//! SHA-1's compression function (FIPS 180-4, sections 6.1.2 and 4.1.1) over vectors of
//! lanes.

use super::State;
use super::vector::{Vector, add_all, load_state, store_state};

/// The constants of rounds 0-19, 20-39, 40-59 and 60-79, section 4.2.1.
const K: [u32; 4] = [0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6];

/// `W[t]` of the message schedule, kept in a ring of the last 16 words: for t >= 16,
/// `W[t] = ROTL1(W[t-3] ^ W[t-8] ^ W[t-14] ^ W[t-16])` replaces `W[t-16]`.
#[inline(always)]
fn word<V: Vector>(w: &mut [V; 16], t: usize) -> V {
    if t >= 16 {
        w[t % 16] = V::xor3(w[(t - 3) % 16], w[(t - 8) % 16], w[(t - 14) % 16])
            .xor(w[t % 16])
            .rol::<1, 31>();
    }
    w[t % 16]
}

#[inline(always)]
fn parity<V: Vector>(x: V, y: V, z: V) -> V {
    V::xor3(x, y, z)
}

/// Five rounds from `t` with the function `$f` and constant `$k`. One round is
/// `T = ROTL5(a) + f(b, c, d) + e + K + W[t]; e = d; d = c; c = ROTL30(b); b = a; a = T`:
/// here the new value is written over `e` and the names rotate, so five rounds bring them
/// back to where they started.
macro_rules! five {
    ($cpu:ident, $f:path, $k:expr, $w:ident, $t:expr, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident) => {
        round!($cpu, $f, $k, $w, $t, $a, $b, $c, $d, $e);
        round!($cpu, $f, $k, $w, $t + 1, $e, $a, $b, $c, $d);
        round!($cpu, $f, $k, $w, $t + 2, $d, $e, $a, $b, $c);
        round!($cpu, $f, $k, $w, $t + 3, $c, $d, $e, $a, $b);
        round!($cpu, $f, $k, $w, $t + 4, $b, $c, $d, $e, $a);
    };
}

macro_rules! round {
    ($cpu:ident, $f:path, $k:expr, $w:ident, $t:expr, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident) => {
        // The newest word, a, comes last: the rest of the sum does not wait for it.
        let kw = V::splat($cpu, $k).add(word(&mut $w, $t));
        $e = $e.add(kw).add($f($b, $c, $d)).add($a.rol::<5, 27>());
        $b = $b.rol::<30, 2>();
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
    // (it moves constants to the end of a sum), on the chain that waits for a.
    let k = std::hint::black_box(&K);
    let (mut s, all) = load_state::<V, 5>(cpu, states);
    for blk in 0..blocks {
        let mut w = V::load_words::<true>(cpu, lanes, blk);
        let [mut a, mut b, mut c, mut d, mut e] = s;
        five!(cpu, V::ch, k[0], w, 0, a, b, c, d, e);
        five!(cpu, V::ch, k[0], w, 5, a, b, c, d, e);
        five!(cpu, V::ch, k[0], w, 10, a, b, c, d, e);
        five!(cpu, V::ch, k[0], w, 15, a, b, c, d, e);
        five!(cpu, parity, k[1], w, 20, a, b, c, d, e);
        five!(cpu, parity, k[1], w, 25, a, b, c, d, e);
        five!(cpu, parity, k[1], w, 30, a, b, c, d, e);
        five!(cpu, parity, k[1], w, 35, a, b, c, d, e);
        five!(cpu, V::maj, k[2], w, 40, a, b, c, d, e);
        five!(cpu, V::maj, k[2], w, 45, a, b, c, d, e);
        five!(cpu, V::maj, k[2], w, 50, a, b, c, d, e);
        five!(cpu, V::maj, k[2], w, 55, a, b, c, d, e);
        five!(cpu, parity, k[3], w, 60, a, b, c, d, e);
        five!(cpu, parity, k[3], w, 65, a, b, c, d, e);
        five!(cpu, parity, k[3], w, 70, a, b, c, d, e);
        five!(cpu, parity, k[3], w, 75, a, b, c, d, e);
        add_all(&mut s, [a, b, c, d, e]);
    }
    store_state(s, all, states, lanes);
}
