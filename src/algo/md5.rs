//! MD5 (RFC 1321) with a compression function written for the x86-64 critical path.
//!
//! MD5 is serial: each of the 64 steps of a block needs the result of the one before,
//! so a block costs the sum of its steps' latencies, and only shortening the chain
//! that runs through the newest word `b` makes it faster. Each step computes
//! `a = b + rol(a + f(b, c, d) + M[k] + K[i], s)`. The words `a`, `c` and `d` are older
//! than `b`, so everything that needs only them (`a + M[k] + K[i]`, `c ^ d`, `!d & c`,
//! `!d`) runs beside the chain on the other ALUs; on the chain stay:
//!
//! | round | f (RFC 1321 3.4) | written as | ops on the chain after `b` |
//! |---|---|---|---|
//! | 1 | `(b & c) \| (!b & d)` | `d ^ (b & (c ^ d))` | and, xor, add, rol, add: 5 |
//! | 2 | `(b & d) \| (c & !d)` | `(b & d) + (c & !d)`, the second term added to `a` first | and, add, rol, add: 4 |
//! | 3 | `b ^ c ^ d` | `b ^ (c ^ d)` | xor, add, rol, add: 4 |
//! | 4 | `c ^ (b \| !d)` | `c ^ (b \| !d)`, `!d` first | or, xor, add, rol, add: 5 |
//!
//! (Round 2's `or` may be an `add` because its two terms share no bit.) That is 288
//! cycles of latency per 64-byte block. A compiler does not keep this split (it folds
//! the disjoint `add` back into an `or` and reassociates the sums), hence the assembly.
//! It uses only base x86-64 instructions, so no CPU-feature dispatch is needed. On the
//! development VM (AMD EPYC) it hashes 0.80 GB/s in memory, against 0.62 for the
//! `md5-asm` crate, 0.64 for `md-5` and 0.73 for OpenSSL's `openssl speed md5`; see
//! docs/benchmarks.md. Other targets use the `md-5` crate's compression function.
//!
//! The tests hold RFC 1321's test suite (A.5) and a differential test against the
//! `md-5` crate over every length to 300 bytes and random lengths to 3 MiB, fed in
//! random pieces.

use super::Hasher;
use crate::digest::Digest;

/// One step as assembly text: `$a = $b + rol($a + f($b, $c, $d) + M[$m] + $k, $s)`,
/// with `rsi` pointing at the block, and `eax`, `ecx` as scratch.
#[cfg(target_arch = "x86_64")]
macro_rules! step {
    (F, $a:literal, $b:literal, $c:literal, $d:literal, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add ",
            $a,
            ", dword ptr [rsi + 4*",
            $m,
            "]\n",
            "mov eax, ",
            $c,
            "\n",
            "add ",
            $a,
            ", ",
            $k,
            "\n",
            "xor eax, ",
            $d,
            "\n",
            "and eax, ",
            $b,
            "\n",
            "xor eax, ",
            $d,
            "\n",
            "add ",
            $a,
            ", eax\n",
            "rol ",
            $a,
            ", ",
            $s,
            "\n",
            "add ",
            $a,
            ", ",
            $b,
            "\n",
        )
    };
    (G, $a:literal, $b:literal, $c:literal, $d:literal, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add ",
            $a,
            ", dword ptr [rsi + 4*",
            $m,
            "]\n",
            "mov eax, ",
            $d,
            "\n",
            "add ",
            $a,
            ", ",
            $k,
            "\n",
            "not eax\n",
            "and eax, ",
            $c,
            "\n",
            "mov ecx, ",
            $d,
            "\n",
            "add ",
            $a,
            ", eax\n",
            "and ecx, ",
            $b,
            "\n",
            "add ",
            $a,
            ", ecx\n",
            "rol ",
            $a,
            ", ",
            $s,
            "\n",
            "add ",
            $a,
            ", ",
            $b,
            "\n",
        )
    };
    (H, $a:literal, $b:literal, $c:literal, $d:literal, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add ",
            $a,
            ", dword ptr [rsi + 4*",
            $m,
            "]\n",
            "mov eax, ",
            $c,
            "\n",
            "add ",
            $a,
            ", ",
            $k,
            "\n",
            "xor eax, ",
            $d,
            "\n",
            "xor eax, ",
            $b,
            "\n",
            "add ",
            $a,
            ", eax\n",
            "rol ",
            $a,
            ", ",
            $s,
            "\n",
            "add ",
            $a,
            ", ",
            $b,
            "\n",
        )
    };
    (I, $a:literal, $b:literal, $c:literal, $d:literal, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add ",
            $a,
            ", dword ptr [rsi + 4*",
            $m,
            "]\n",
            "mov eax, ",
            $d,
            "\n",
            "add ",
            $a,
            ", ",
            $k,
            "\n",
            "not eax\n",
            "or eax, ",
            $b,
            "\n",
            "xor eax, ",
            $c,
            "\n",
            "add ",
            $a,
            ", eax\n",
            "rol ",
            $a,
            ", ",
            $s,
            "\n",
            "add ",
            $a,
            ", ",
            $b,
            "\n",
        )
    };
}

/// The MD5 compression function over whole 64-byte blocks.
///
/// The 64 rows follow RFC 1321 3.4: the round's function, the words `a b c d` (held in
/// `r8d r9d r10d r11d`) rotated one place per step, the message word `k`
/// (`i`, `5i + 1`, `3i + 5`, `7i` mod 16 in rounds 1 to 4), `T[i] = floor(2^32
/// |sin(i + 1)|)` and the shift.
#[cfg(target_arch = "x86_64")]
pub(crate) fn compress(state: &mut [u32; 4], blocks: &[[u8; 64]]) {
    if blocks.is_empty() {
        return;
    }
    let [mut a, mut b, mut c, mut d] = *state;
    // SAFETY: the assembly reads `blocks.len()` whole blocks from `blocks.as_ptr()`, which
    // is that many valid 64-byte arrays; it writes only the registers named below, and
    // touches neither the stack nor the flags Rust relies on.
    unsafe {
        core::arch::asm!(
            "2:",
            "mov r12d, r8d",
            "mov r13d, r9d",
            "mov r14d, r10d",
            "mov r15d, r11d",
        step!(F, "r8d", "r9d", "r10d", "r11d", "0", "0xd76aa478", "7"),
        step!(F, "r11d", "r8d", "r9d", "r10d", "1", "0xe8c7b756", "12"),
        step!(F, "r10d", "r11d", "r8d", "r9d", "2", "0x242070db", "17"),
        step!(F, "r9d", "r10d", "r11d", "r8d", "3", "0xc1bdceee", "22"),
        step!(F, "r8d", "r9d", "r10d", "r11d", "4", "0xf57c0faf", "7"),
        step!(F, "r11d", "r8d", "r9d", "r10d", "5", "0x4787c62a", "12"),
        step!(F, "r10d", "r11d", "r8d", "r9d", "6", "0xa8304613", "17"),
        step!(F, "r9d", "r10d", "r11d", "r8d", "7", "0xfd469501", "22"),
        step!(F, "r8d", "r9d", "r10d", "r11d", "8", "0x698098d8", "7"),
        step!(F, "r11d", "r8d", "r9d", "r10d", "9", "0x8b44f7af", "12"),
        step!(F, "r10d", "r11d", "r8d", "r9d", "10", "0xffff5bb1", "17"),
        step!(F, "r9d", "r10d", "r11d", "r8d", "11", "0x895cd7be", "22"),
        step!(F, "r8d", "r9d", "r10d", "r11d", "12", "0x6b901122", "7"),
        step!(F, "r11d", "r8d", "r9d", "r10d", "13", "0xfd987193", "12"),
        step!(F, "r10d", "r11d", "r8d", "r9d", "14", "0xa679438e", "17"),
        step!(F, "r9d", "r10d", "r11d", "r8d", "15", "0x49b40821", "22"),
        step!(G, "r8d", "r9d", "r10d", "r11d", "1", "0xf61e2562", "5"),
        step!(G, "r11d", "r8d", "r9d", "r10d", "6", "0xc040b340", "9"),
        step!(G, "r10d", "r11d", "r8d", "r9d", "11", "0x265e5a51", "14"),
        step!(G, "r9d", "r10d", "r11d", "r8d", "0", "0xe9b6c7aa", "20"),
        step!(G, "r8d", "r9d", "r10d", "r11d", "5", "0xd62f105d", "5"),
        step!(G, "r11d", "r8d", "r9d", "r10d", "10", "0x02441453", "9"),
        step!(G, "r10d", "r11d", "r8d", "r9d", "15", "0xd8a1e681", "14"),
        step!(G, "r9d", "r10d", "r11d", "r8d", "4", "0xe7d3fbc8", "20"),
        step!(G, "r8d", "r9d", "r10d", "r11d", "9", "0x21e1cde6", "5"),
        step!(G, "r11d", "r8d", "r9d", "r10d", "14", "0xc33707d6", "9"),
        step!(G, "r10d", "r11d", "r8d", "r9d", "3", "0xf4d50d87", "14"),
        step!(G, "r9d", "r10d", "r11d", "r8d", "8", "0x455a14ed", "20"),
        step!(G, "r8d", "r9d", "r10d", "r11d", "13", "0xa9e3e905", "5"),
        step!(G, "r11d", "r8d", "r9d", "r10d", "2", "0xfcefa3f8", "9"),
        step!(G, "r10d", "r11d", "r8d", "r9d", "7", "0x676f02d9", "14"),
        step!(G, "r9d", "r10d", "r11d", "r8d", "12", "0x8d2a4c8a", "20"),
        step!(H, "r8d", "r9d", "r10d", "r11d", "5", "0xfffa3942", "4"),
        step!(H, "r11d", "r8d", "r9d", "r10d", "8", "0x8771f681", "11"),
        step!(H, "r10d", "r11d", "r8d", "r9d", "11", "0x6d9d6122", "16"),
        step!(H, "r9d", "r10d", "r11d", "r8d", "14", "0xfde5380c", "23"),
        step!(H, "r8d", "r9d", "r10d", "r11d", "1", "0xa4beea44", "4"),
        step!(H, "r11d", "r8d", "r9d", "r10d", "4", "0x4bdecfa9", "11"),
        step!(H, "r10d", "r11d", "r8d", "r9d", "7", "0xf6bb4b60", "16"),
        step!(H, "r9d", "r10d", "r11d", "r8d", "10", "0xbebfbc70", "23"),
        step!(H, "r8d", "r9d", "r10d", "r11d", "13", "0x289b7ec6", "4"),
        step!(H, "r11d", "r8d", "r9d", "r10d", "0", "0xeaa127fa", "11"),
        step!(H, "r10d", "r11d", "r8d", "r9d", "3", "0xd4ef3085", "16"),
        step!(H, "r9d", "r10d", "r11d", "r8d", "6", "0x04881d05", "23"),
        step!(H, "r8d", "r9d", "r10d", "r11d", "9", "0xd9d4d039", "4"),
        step!(H, "r11d", "r8d", "r9d", "r10d", "12", "0xe6db99e5", "11"),
        step!(H, "r10d", "r11d", "r8d", "r9d", "15", "0x1fa27cf8", "16"),
        step!(H, "r9d", "r10d", "r11d", "r8d", "2", "0xc4ac5665", "23"),
        step!(I, "r8d", "r9d", "r10d", "r11d", "0", "0xf4292244", "6"),
        step!(I, "r11d", "r8d", "r9d", "r10d", "7", "0x432aff97", "10"),
        step!(I, "r10d", "r11d", "r8d", "r9d", "14", "0xab9423a7", "15"),
        step!(I, "r9d", "r10d", "r11d", "r8d", "5", "0xfc93a039", "21"),
        step!(I, "r8d", "r9d", "r10d", "r11d", "12", "0x655b59c3", "6"),
        step!(I, "r11d", "r8d", "r9d", "r10d", "3", "0x8f0ccc92", "10"),
        step!(I, "r10d", "r11d", "r8d", "r9d", "10", "0xffeff47d", "15"),
        step!(I, "r9d", "r10d", "r11d", "r8d", "1", "0x85845dd1", "21"),
        step!(I, "r8d", "r9d", "r10d", "r11d", "8", "0x6fa87e4f", "6"),
        step!(I, "r11d", "r8d", "r9d", "r10d", "15", "0xfe2ce6e0", "10"),
        step!(I, "r10d", "r11d", "r8d", "r9d", "6", "0xa3014314", "15"),
        step!(I, "r9d", "r10d", "r11d", "r8d", "13", "0x4e0811a1", "21"),
        step!(I, "r8d", "r9d", "r10d", "r11d", "4", "0xf7537e82", "6"),
        step!(I, "r11d", "r8d", "r9d", "r10d", "11", "0xbd3af235", "10"),
        step!(I, "r10d", "r11d", "r8d", "r9d", "2", "0x2ad7d2bb", "15"),
        step!(I, "r9d", "r10d", "r11d", "r8d", "9", "0xeb86d391", "21"),
            "add r8d, r12d",
            "add r9d, r13d",
            "add r10d, r14d",
            "add r11d, r15d",
            "add rsi, 64",
            "dec rdx",
            "jnz 2b",
            inout("r8d") a,
            inout("r9d") b,
            inout("r10d") c,
            inout("r11d") d,
            inout("rsi") blocks.as_ptr() => _,
            inout("rdx") blocks.len() => _,
            out("eax") _,
            out("ecx") _,
            out("r12d") _,
            out("r13d") _,
            out("r14d") _,
            out("r15d") _,
            options(nostack, readonly, pure),
        );
    }
    *state = [a, b, c, d];
}

/// The MD5 compression function over whole 64-byte blocks (the `md-5` crate's here).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn compress(state: &mut [u32; 4], blocks: &[[u8; 64]]) {
    ::md5::block_api::compress(state, blocks);
}

/// MD5 over a stream: [`compress`] and RFC 1321's padding (section 3.1, 3.2).
#[derive(Clone)]
pub(crate) struct Md5 {
    state: [u32; 4],
    block: [u8; 64],
    filled: usize,
    total: u64,
}

impl Md5 {
    pub(crate) fn new() -> Md5 {
        Md5 {
            state: [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476],
            block: [0; 64],
            filled: 0,
            total: 0,
        }
    }
}

impl Hasher for Md5 {
    fn update(&mut self, mut data: &[u8]) {
        self.total = self.total.wrapping_add(data.len() as u64);
        if self.filled > 0 {
            let take = (64 - self.filled).min(data.len());
            self.block[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled < 64 {
                return;
            }
            compress(&mut self.state, std::slice::from_ref(&self.block));
            self.filled = 0;
        }
        let (blocks, rest) = data.as_chunks::<64>();
        compress(&mut self.state, blocks);
        self.block[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
    }

    fn finish(&self) -> Digest {
        let mut st = self.state;
        let mut tail = [0u8; 128];
        tail[..self.filled].copy_from_slice(&self.block[..self.filled]);
        tail[self.filled] = 0x80;
        let n = if self.filled < 56 { 64 } else { 128 };
        tail[n - 8..n].copy_from_slice(&self.total.wrapping_mul(8).to_le_bytes());
        let (blocks, _) = tail[..n].as_chunks::<64>();
        compress(&mut st, blocks);
        let mut out = [0u8; 16];
        for (o, w) in out.chunks_exact_mut(4).zip(st) {
            o.copy_from_slice(&w.to_le_bytes());
        }
        Digest::new(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::multibuf::tests::Rng;
    use super::*;
    use ::md5::Digest as _;

    fn hex(h: &Md5) -> String {
        h.finish().as_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn of(data: &[u8]) -> String {
        let mut h = Md5::new();
        h.update(data);
        hex(&h)
    }

    /// RFC 1321, appendix A.5 (the test suite).
    #[test]
    fn rfc1321_suite() {
        let suite: [(&[u8], &str); 7] = [
            (b"", "d41d8cd98f00b204e9800998ecf8427e"),
            (b"a", "0cc175b9c0f1b6a831c399e269772661"),
            (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            (b"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            (
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                "d174ab98d277d9f5a5611c2c9f419d9f",
            ),
            (
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ];
        for (input, want) in suite {
            assert_eq!(of(input), want, "{:?}", String::from_utf8_lossy(input));
        }
    }

    fn reference(data: &[u8]) -> String {
        ::md5::Md5::digest(data).iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn same_as_md5_crate_at_every_short_length() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let data = rng.bytes(300);
        for n in 0..=data.len() {
            assert_eq!(of(&data[..n]), reference(&data[..n]), "length {n}");
        }
    }

    #[test]
    fn same_as_md5_crate_at_random_lengths_fed_in_random_pieces() {
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        let data = rng.bytes(3 << 20);
        for _ in 0..24 {
            let n = rng.below(data.len() + 1);
            let start = rng.below(data.len() - n + 1);
            let input = &data[start..start + n];
            let mut h = Md5::new();
            let mut at = 0;
            while at < n {
                let piece = (1 + rng.below(200_000)).min(n - at);
                h.update(&input[at..at + piece]);
                at += piece;
            }
            assert_eq!(hex(&h), reference(input), "length {n} from {start}");
        }
    }

    #[test]
    fn compress_matches_the_crate_block_by_block() {
        let mut rng = Rng(42);
        let data = rng.bytes(64 * 37);
        let (blocks, _) = data.as_chunks::<64>();
        for n in [0, 1, 2, 3, 36, 37] {
            let mut ours =
                [rng.next() as u32, rng.next() as u32, rng.next() as u32, rng.next() as u32];
            let mut theirs = ours;
            compress(&mut ours, &blocks[..n]);
            ::md5::block_api::compress(&mut theirs, &blocks[..n]);
            assert_eq!(ours, theirs, "{n} blocks");
        }
    }
}
