//! The BLAKE3 lane kernels (src/algo/multibuf/b3) against the `blake3` crate. The input
//! is cut into up to 48 messages of mixed lengths (many inputs at once, their chunks and
//! parent nodes side by side), hashed through every kernel this CPU runs (AVX2 x8,
//! AVX-512VL x8, AVX-512 x16) and the portable code; every hash must be the crate's.
#![no_main]

use fixity::algo::multibuf_harness::{split_messages, Blake3Lanes, blake3_reference};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [count, rest @ ..] = data else { return };
    let messages = split_messages(rest, 1 + *count as usize % 48);
    for k in Blake3Lanes::every() {
        let got = k.hash_many(&messages);
        assert_eq!(got.len(), messages.len());
        for (m, h) in messages.iter().zip(&got) {
            assert_eq!(*h, blake3_reference(m), "{} {} bytes", k.name(), m.len());
        }
    }
});
