//! The multi-buffer kernels (src/algo/multibuf) against the RustCrypto crates. The input
//! is cut into up to 16 messages, hashed through every kernel this CPU runs (AVX2 x8,
//! AVX-512VL x8, AVX-512 x16) the way a lane engine drives them (lanes finishing at different times
//! and refilled, steps of a few blocks, the padding in the lanes or not, idle lanes
//! checked unchanged), and every digest must be the crate's.
#![no_main]

use fixity::algo::multibuf_harness::{split_messages, Lanes, engine_digests, reference};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [head, count, rest @ ..] = data else { return };
    let family = ["md5", "sha1", "sha256"][*head as usize % 3];
    // The padding in the lanes, or finished by the single-stream code.
    let pad_in_lanes = head & 0x80 != 0;
    // Steps of at most 1..=8 blocks, or as many as the shortest busy lane has.
    let max_step = match (head & 0x7f) / 3 % 9 {
        0 => usize::MAX,
        n => n as usize,
    };
    let messages = split_messages(rest, 1 + *count as usize % 16);
    for k in Lanes::every(family) {
        let got = engine_digests(k, &messages, max_step, pad_in_lanes);
        for (m, d) in messages.iter().zip(&got) {
            assert_eq!(*d, reference(family, m), "{family} {} {} bytes", k.name(), m.len());
        }
    }
});
