//! MD5's compression function (RFC 1321, section 3.4) over vectors of lanes.

use super::State;
use super::vector::{Vector, add_all, load_state, store_state};

/// T[i] = floor(2^32 * |sin(i + 1)|), RFC 1321 section 3.4.
const T: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

/// F(x, y, z) = (x & y) | (!x & z), section 3.4.
#[inline(always)]
fn f<V: Vector>(x: V, y: V, z: V) -> V {
    V::ch(x, y, z)
}

/// G(x, y, z) = (x & z) | (y & !z): z chooses between x and y.
#[inline(always)]
fn g<V: Vector>(x: V, y: V, z: V) -> V {
    V::ch(z, x, y)
}

/// H(x, y, z) = x ^ y ^ z.
#[inline(always)]
fn h<V: Vector>(x: V, y: V, z: V) -> V {
    V::xor3(x, y, z)
}

/// I(x, y, z) = y ^ (x | !z).
#[inline(always)]
fn i<V: Vector>(x: V, y: V, z: V) -> V {
    V::md5_i(x, y, z)
}

/// Four operations of one round, `[abcd k s i]` in the RFC's notation:
/// `a = b + ((a + FN(b, c, d) + X[k] + T[i]) <<< s)`, each with the next k, and the roles
/// of a, b, c, d rotating.
macro_rules! four {
    ($cpu:ident, $tab:ident, $fn:ident, $a:ident, $b:ident, $c:ident, $d:ident, $x:ident, $i:expr,
     [$k0:expr, $k1:expr, $k2:expr, $k3:expr], [$s0:literal, $s1:literal, $s2:literal, $s3:literal]) => {
        $a = step!($cpu, $tab, $fn, $a, $b, $c, $d, $x[$k0], $i, $s0);
        $d = step!($cpu, $tab, $fn, $d, $a, $b, $c, $x[$k1], $i + 1, $s1);
        $c = step!($cpu, $tab, $fn, $c, $d, $a, $b, $x[$k2], $i + 2, $s2);
        $b = step!($cpu, $tab, $fn, $b, $c, $d, $a, $x[$k3], $i + 3, $s3);
    };
}

macro_rules! step {
    ($cpu:ident, $tab:ident, $fn:ident, $a:ident, $b:ident, $c:ident, $d:ident, $xk:expr, $i:expr, $s:literal) => {
        // a + X[k] + T[i] does not wait for b, c, d: it comes first, off the chain.
        $b.add(
            $a.add($xk.add(V::splat($cpu, $tab[$i]))).add($fn($b, $c, $d)).rol::<$s, { 32 - $s }>(),
        )
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
    // (it moves constants to the end of a sum), on the chain that waits for b, c, d.
    let t = std::hint::black_box(&T);
    let (mut s, all) = load_state::<V, 4>(cpu, states);
    for blk in 0..blocks {
        let x = V::load_words::<false>(cpu, lanes, blk);
        let [mut a, mut b, mut c, mut d] = s;
        // Round 1: k = i.
        four!(cpu, t, f, a, b, c, d, x, 0, [0, 1, 2, 3], [7, 12, 17, 22]);
        four!(cpu, t, f, a, b, c, d, x, 4, [4, 5, 6, 7], [7, 12, 17, 22]);
        four!(cpu, t, f, a, b, c, d, x, 8, [8, 9, 10, 11], [7, 12, 17, 22]);
        four!(cpu, t, f, a, b, c, d, x, 12, [12, 13, 14, 15], [7, 12, 17, 22]);
        // Round 2: k = (1 + 5i) mod 16.
        four!(cpu, t, g, a, b, c, d, x, 16, [1, 6, 11, 0], [5, 9, 14, 20]);
        four!(cpu, t, g, a, b, c, d, x, 20, [5, 10, 15, 4], [5, 9, 14, 20]);
        four!(cpu, t, g, a, b, c, d, x, 24, [9, 14, 3, 8], [5, 9, 14, 20]);
        four!(cpu, t, g, a, b, c, d, x, 28, [13, 2, 7, 12], [5, 9, 14, 20]);
        // Round 3: k = (5 + 3i) mod 16.
        four!(cpu, t, h, a, b, c, d, x, 32, [5, 8, 11, 14], [4, 11, 16, 23]);
        four!(cpu, t, h, a, b, c, d, x, 36, [1, 4, 7, 10], [4, 11, 16, 23]);
        four!(cpu, t, h, a, b, c, d, x, 40, [13, 0, 3, 6], [4, 11, 16, 23]);
        four!(cpu, t, h, a, b, c, d, x, 44, [9, 12, 15, 2], [4, 11, 16, 23]);
        // Round 4: k = 7i mod 16.
        four!(cpu, t, i, a, b, c, d, x, 48, [0, 7, 14, 5], [6, 10, 15, 21]);
        four!(cpu, t, i, a, b, c, d, x, 52, [12, 3, 10, 1], [6, 10, 15, 21]);
        four!(cpu, t, i, a, b, c, d, x, 56, [8, 15, 6, 13], [6, 10, 15, 21]);
        four!(cpu, t, i, a, b, c, d, x, 60, [4, 11, 2, 9], [6, 10, 15, 21]);
        add_all(&mut s, [a, b, c, d]);
    }
    store_state(s, all, states, lanes);
}
