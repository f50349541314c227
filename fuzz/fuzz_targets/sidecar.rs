//! The recovery sets' sidecars (`TREE/.fixity/par2/*.fixity`, both versions) on arbitrary
//! text: parsed or refused, never a panic, and what parses writes a text that parses back
//! and writes the same (names of any bytes, escaped; numbers at their limits).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // As often a sidecar's head as not, so that entry lines are reached.
    let heads = ["", "fixity-par2-set 2\nset a\nalgorithm b\nredundancy 0.1\nrecovery 1\n"];
    let head = heads[data.first().map_or(0, |b| usize::from(b & 1))];
    for whole in [text.to_string(), format!("{head}{text}")] {
        if let Some((first, again)) = fixity::repair::fuzz_sidecar(&whole) {
            assert_eq!(again.as_deref(), Some(first.as_str()), "{whole:?}");
        }
    }
});
