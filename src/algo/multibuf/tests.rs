//! The kernels against the specifications' known answers and against the RustCrypto
//! crates (differential), at both widths, the way a lane engine drives them.

use super::harness::{reference, run_engine};
use super::*;
use proptest::prelude::*;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Whether a kernel this CPU cannot run must fail the run rather than be skipped:
/// `FIXITY_REQUIRE_KERNELS=1`, set where the CPU is known to have every level (an
/// AVX-512 machine). Not CI's rule for peers: a CPU's instructions cannot be installed,
/// so CI tests every level its CPU has and says which ones it could not.
pub(super) fn required() -> bool {
    std::env::var_os("FIXITY_REQUIRE_KERNELS").is_some_and(|v| v == "1")
}

/// Every kernel of `family`: those this CPU runs; one it lacks the instructions of is
/// said ("skipped: ..."), and fails the test under `FIXITY_REQUIRE_KERNELS=1`.
fn kernels(family: Family) -> Vec<&'static Kernel> {
    let runs: Vec<&Kernel> = Kernel::every(family).collect();
    for k in KERNELS.iter().filter(|k| k.family == family) {
        if runs.iter().any(|r| std::ptr::eq(*r, k)) {
            continue;
        }
        if required() {
            panic!(
                "this CPU cannot run the {family:?} {} kernel (FIXITY_REQUIRE_KERNELS=1)",
                k.name
            );
        }
        eprintln!("skipped: {family:?} {}: this CPU lacks its instructions", k.name);
    }
    runs
}

/// A deterministic pseudo-random byte source (xorshift64*), for reproducible messages
/// (the MD5 tests use it too).
pub(in crate::algo) struct Rng(pub(in crate::algo) u64);

impl Rng {
    pub(in crate::algo) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545f4914f6cdd1d)
    }
    pub(in crate::algo) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub(in crate::algo) fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next() >> 56) as u8).collect()
    }
}

const MSG_448: &str = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
const MSG_896: &str = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

/// Known answers: RFC 1321 appendix A.5 (MD5); FIPS 180-4's examples (the NIST
/// "abc", 448-bit, 896-bit and million-'a' messages) for SHA-1 and SHA-256, and the
/// same messages' MD5.
fn known_answers(family: Family) -> Vec<(Vec<u8>, &'static str)> {
    let million = vec![b'a'; 1_000_000];
    let m = |s: &str| s.as_bytes().to_vec();
    match family {
        Family::Md5 => vec![
            (m(""), "d41d8cd98f00b204e9800998ecf8427e"),
            (m("a"), "0cc175b9c0f1b6a831c399e269772661"),
            (m("abc"), "900150983cd24fb0d6963f7d28e17f72"),
            (m("message digest"), "f96b697d7cb7938d525a2f31aaf161d0"),
            (m("abcdefghijklmnopqrstuvwxyz"), "c3fcd3d76192e4007dfb496cca67e13b"),
            (
                m("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
                "d174ab98d277d9f5a5611c2c9f419d9f",
            ),
            (m(&"1234567890".repeat(8)), "57edf4a22be3c955ac49da2e2107b67a"),
            (m(MSG_448), "8215ef0796a20bcaaae116d3876c664a"),
            (m(MSG_896), "03dd8807a93175fb062dfb55dc7d359c"),
            (million, "7707d6ae4e027c70eea2a935c2296f21"),
        ],
        Family::Sha1 => vec![
            (m(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
            (m("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d"),
            (m(MSG_448), "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
            (m(MSG_896), "a49b2446a02c645bf419f995b67091253a04a259"),
            (million, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"),
        ],
        Family::Sha256 => vec![
            (m(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (m("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (m(MSG_448), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            (m(MSG_896), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
            (million, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
        ],
        // Its known answers are b3/tests.rs's (the official test vectors).
        Family::Blake3 => Vec::new(),
    }
}

#[test]
fn known_answers_through_every_kernel() {
    for family in Family::ALL {
        let vectors: Vec<_> =
            known_answers(family).into_iter().filter(|(m, _)| m.len() < 1000).collect();
        let messages: Vec<&[u8]> = vectors.iter().map(|(m, _)| m.as_slice()).collect();
        let want: Vec<&str> = vectors.iter().map(|(_, d)| *d).collect();
        for k in kernels(family) {
            // All at once (the vectors share the lanes), and one at a time in lane 0.
            let got: Vec<String> =
                run_engine(k, &messages, usize::MAX, false).iter().map(|d| hex(d)).collect();
            assert_eq!(got, want, "{family:?} {}", k.name());
            for (m, d) in &vectors {
                assert_eq!(hex(&run_engine(k, &[m], 1, true)[0]), *d, "{family:?} {}", k.name());
            }
        }
    }
}

/// The million 'a' in every lane of `k` at once: each lane must come out right.
fn assert_a_million_a(k: &Kernel) {
    let (million, want) = known_answers(k.family()).pop().expect("the million 'a' last");
    assert_eq!(million.len(), 1_000_000);
    let got = run_engine(k, &vec![million.as_slice(); k.lanes()], usize::MAX, true);
    for (lane, d) in got.iter().enumerate() {
        assert_eq!(hex(d), want, "{:?} {} lane {lane}", k.family(), k.name());
    }
}

// Through the kernel dispatch picks (seconds in a debug build); every kernel in
// `many_large_random_messages_match_the_crates`.
#[test]
fn a_million_a_in_every_lane_of_the_dispatched_kernel() {
    let _serial = crate::simd::tests::LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for family in Family::ALL {
        match Kernel::best(family) {
            Some(k) => assert_a_million_a(k),
            None => assert!(kernels(family).is_empty()),
        }
    }
}

#[test]
fn known_answers_through_the_single_stream_code() {
    for family in Family::ALL {
        for (m, d) in known_answers(family) {
            let whole = m.len() / 64 * 64;
            let mut state = initial(family);
            compress_one(family, &mut state, &m[..whole]);
            assert_eq!(hex(finish(family, state, &m[whole..], m.len() as u64).as_bytes()), d);
            // finish also takes whole blocks in its tail.
            assert_eq!(hex(finish(family, initial(family), &m, m.len() as u64).as_bytes()), d);
        }
    }
}

#[test]
fn finish_pads_every_length_around_the_block_boundaries() {
    let mut rng = Rng(7);
    let data = rng.bytes(300);
    for family in Family::ALL {
        for len in 0..=data.len() {
            let m = &data[..len];
            let full = len / 64 * 64;
            let mut state = initial(family);
            compress_one(family, &mut state, &m[..full]);
            let got = finish(family, state, &m[full..], len as u64);
            assert_eq!(got.as_bytes(), reference(family.name(), m), "{family:?} {len}");
        }
    }
}

/// `count` messages of random lengths below `max`, with the lengths next to block and
/// padding boundaries made frequent.
fn random_messages(rng: &mut Rng, count: usize, max: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|_| {
            let len = match rng.below(4) {
                0 => rng.below(max),
                1 => rng.below(max / 64 + 1) * 64,
                2 => (rng.below(max / 64 + 1) * 64 + 55 + rng.below(3)).min(max),
                _ => rng.below(200),
            };
            rng.bytes(len)
        })
        .collect()
}

fn assert_matches_crates(k: &Kernel, messages: &[Vec<u8>], max_step: usize, pad_in_lanes: bool) {
    let refs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
    let got = run_engine(k, &refs, max_step, pad_in_lanes);
    for (i, (m, d)) in messages.iter().zip(got).enumerate() {
        assert_eq!(
            hex(&d),
            hex(&reference(k.family().name(), m)),
            "{:?} {}: message {i} of {} bytes (step {max_step}, padding in lanes: {pad_in_lanes})",
            k.family(),
            k.name(),
            m.len()
        );
    }
}

#[test]
fn random_lengths_match_the_crates() {
    let mut rng = Rng(0x5eed);
    for family in Family::ALL {
        for k in kernels(family) {
            // Many small and mid-sized messages, lanes finishing at different times and
            // refilled, in steps of every size.
            for (max_step, pad_in_lanes) in [(1, true), (5, false), (usize::MAX, true)] {
                let messages = random_messages(&mut rng, 3 * k.lanes() + 5, 20_000);
                assert_matches_crates(k, &messages, max_step, pad_in_lanes);
            }
            // Messages of a hundred KiB beside small ones (megabytes: the ignored test).
            let mut messages = random_messages(&mut rng, k.lanes(), 20_000);
            let (at, extra) = (rng.below(k.lanes()), rng.below(64));
            messages[at] = rng.bytes(100_000 + extra);
            messages.push(rng.bytes((128 << 10) + 64));
            assert_matches_crates(k, &messages, usize::MAX, false);
        }
    }
}

#[test]
#[ignore = "minutes in a debug build: run with --ignored (or in release) after changing a kernel"]
fn many_large_random_messages_match_the_crates() {
    let mut rng = Rng(0xb16);
    for family in Family::ALL {
        for k in kernels(family) {
            assert_a_million_a(k);
            for (max_step, pad_in_lanes) in [(7, true), (usize::MAX, false)] {
                let messages = random_messages(&mut rng, 4 * k.lanes(), 6 << 20);
                assert_matches_crates(k, &messages, max_step, pad_in_lanes);
            }
        }
    }
}

#[test]
fn every_count_of_busy_lanes() {
    let mut rng = Rng(42);
    for family in Family::ALL {
        for k in kernels(family) {
            for busy in 1..=k.lanes() {
                let messages: Vec<Vec<u8>> = (0..busy)
                    .map(|_| {
                        let n = 64 * (1 + rng.below(12)) + rng.below(64);
                        rng.bytes(n)
                    })
                    .collect();
                assert_matches_crates(k, &messages, usize::MAX, busy % 2 == 0);
            }
        }
    }
}

#[test]
fn idle_lanes_keep_their_state_and_busy_lanes_match_the_single_stream_code() {
    let mut rng = Rng(3);
    for family in Family::ALL {
        for k in kernels(family) {
            let n = k.lanes();
            let blocks = 3;
            let data: Vec<Vec<u8>> = (0..n)
                .map(|i| match i % 4 {
                    0 => Vec::new(),
                    1 => {
                        let n = blocks * 64 - 1 - rng.below(100);
                        rng.bytes(n)
                    }
                    2 => rng.bytes(blocks * 64),
                    _ => {
                        let n = blocks * 64 + 1 + rng.below(100);
                        rng.bytes(n)
                    }
                })
                .collect();
            let states: Vec<State> =
                (0..n).map(|_| std::array::from_fn(|_| rng.next() as u32)).collect();
            let mut got = states.clone();
            let slices: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
            k.compress(&mut got, &slices, blocks);
            for i in 0..n {
                let mut want = states[i];
                if data[i].len() >= blocks * 64 {
                    compress_one(family, &mut want, &data[i][..blocks * 64]);
                    // The words the family does not use are left alone too.
                    assert_eq!(got[i][family.words()..], states[i][family.words()..]);
                }
                assert_eq!(
                    got[i][..family.words()],
                    want[..family.words()],
                    "{family:?} {} lane {i}",
                    k.name()
                );
            }
        }
    }
}

#[test]
fn zero_or_impossible_block_counts_change_nothing() {
    for family in Family::ALL {
        for k in kernels(family) {
            let data = vec![&[1u8; 256][..]; k.lanes()];
            let states: Vec<State> = (0..k.lanes()).map(|i| [i as u32; 8]).collect();
            for blocks in [0, 5, usize::MAX / 64 + 1, usize::MAX] {
                let mut s = states.clone();
                k.compress(&mut s, &data, blocks);
                assert_eq!(s, states, "{blocks} blocks");
            }
        }
    }
}

#[test]
fn a_kernel_wants_one_state_and_one_slice_per_lane() {
    for family in Family::ALL {
        for k in kernels(family) {
            let n = k.lanes();
            for (states, slices) in [(n - 1, n), (n, n + 1), (n + 1, n + 1)] {
                let r = std::panic::catch_unwind(|| {
                    let mut s = vec![initial(family); states];
                    k.compress(&mut s, &vec![&[][..]; slices], 1);
                });
                assert!(r.is_err(), "{states} states, {slices} slices");
            }
        }
    }
}

#[test]
fn dispatch_hands_out_what_the_cpu_runs() {
    let _serial = crate::simd::tests::LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for family in Family::ALL {
        let every = kernels(family);
        let names: Vec<&str> = every.iter().map(|k| k.name()).collect();
        // In the order of preference, each at most once.
        let order = ["avx512x16", "avx512x8", "avx2x8"];
        let expected: Vec<&str> = order.into_iter().filter(|n| names.contains(n)).collect();
        assert_eq!(names, expected, "{family:?}");
        // The widest, but the AVX-512VL one for SHA on a CPU that halves 512-bit work.
        let narrow = cpu().halves_512 && family != Family::Md5 && names.contains(&"avx512x8");
        let best = if narrow { Some("avx512x8") } else { names.first().copied() };
        assert_eq!(Kernel::best(family).map(Kernel::name), best);
        for k in &every {
            assert_eq!(k.family(), family);
            assert_eq!(k.lanes(), if k.name() == "avx512x16" { 16 } else { 8 });
        }
        let eight = every.iter().find(|k| k.lanes() == 8).map(|k| k.name());
        assert_eq!(Kernel::with_lanes(family, 8).map(Kernel::name), eight);
        assert!(Kernel::with_lanes(family, 4).is_none());
        assert!(Kernel::with_lanes(family, 32).is_none());
    }
}

#[test]
fn dispatch_at_every_simd_level_stays_within_it_and_matches_the_crates() {
    let mut rng = Rng(0x1e7e1);
    let messages = random_messages(&mut rng, 40, 700);
    crate::simd::tests::each_level("multi-buffer dispatch", |level| {
        for family in Family::ALL {
            match Kernel::best(family) {
                Some(k) => {
                    assert!(k.isa.level() <= level, "{} at the cap {level}", k.name());
                    assert_matches_crates(k, &messages, 3, true);
                }
                // Below AVX2 no kernel: the single-stream code hashes each file.
                None => assert!(
                    level < crate::simd::Level::Avx2 || kernels(family).is_empty(),
                    "{family:?} at {level}"
                ),
            }
        }
        let b3 = crate::algo::multibuf::b3::Kernel::best();
        let want = level >= crate::simd::Level::Avx2 && !kernels(Family::Md5).is_empty();
        assert_eq!(b3.is_some(), want, "BLAKE3 lanes at {level}");
        if let Some(k) = b3 {
            let refs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
            let got = crate::algo::multibuf::b3::hash_many(k, &refs);
            for (m, d) in messages.iter().zip(got) {
                assert_eq!(hex(&d), hex(::blake3::hash(m).as_bytes()), "{} at {level}", k.name());
            }
        }
    });
}

#[test]
fn break_even_is_a_lane_count_and_never_for_avx2_sha256_against_sha_ni() {
    for family in Family::ALL {
        for k in kernels(family) {
            match k.break_even() {
                Some(n) => assert!((1..=k.lanes()).contains(&n), "{family:?} {}", k.name()),
                None => assert!(family == Family::Sha256 && k.isa == Isa::Avx2 && cpu().sha_ni),
            }
        }
    }
}

#[test]
#[should_panic(expected = "whole 64-byte blocks")]
fn compress_one_refuses_a_partial_block() {
    compress_one(Family::Sha256, &mut initial(Family::Sha256), &[0; 65]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn compress_and_finish_give_the_crates_digest(
        family in 0..3usize,
        which in 0..3usize,
        lens in prop::collection::vec(0..3000usize, 1..24),
        max_step in 1..40usize,
        pad_in_lanes in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let family = Family::ALL[family];
        let every = kernels(family);
        let Some(&k) = every.get(which % every.len().max(1)) else { return Ok(()) };
        let mut rng = Rng(seed | 1);
        let messages: Vec<Vec<u8>> = lens.iter().map(|&n| rng.bytes(n)).collect();
        let refs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
        let got = run_engine(k, &refs, max_step, pad_in_lanes);
        for (m, d) in messages.iter().zip(got) {
            prop_assert_eq!(hex(&d), hex(&reference(family.name(), m)));
        }
    }
}
