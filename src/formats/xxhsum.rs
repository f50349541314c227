//! The lines `xxhsum` (xxHash's tool, 0.8.1) prints: `hex  name` for XXH32, XXH64 and
//! XXH128, and the tagged `XXH3 (name) = hex` for XXH3, which 0.8.1 always prints tagged
//! (`--tag` tags the others too). Names are printed as they are, never escaped, and
//! standard input is called [`STDIN`]. `--little-endian` prints the digest's bytes
//! reversed and adds `_LE` to the tag.

use crate::algo::Algorithm;
use crate::digest::{Digest, hex_encode};

/// The name xxhsum prints for standard input (whether named `-` or not named at all).
pub const STDIN: &[u8] = b"stdin";

/// The registry names of the algorithms xxhsum computes (`-H0`, `-H1`, `-H2`, `-H3`).
pub const ALGORITHMS: &[&str] = &["xxh32", "xxh64", "xxh128", "xxh3"];

/// Whether xxhsum computes `algo`.
pub fn supports(algo: &Algorithm) -> bool {
    ALGORITHMS.contains(&algo.name)
}

/// Whether xxhsum 0.8.1 prints `algo` in the tagged form even without `--tag` (XXH3).
pub fn always_tagged(algo: &Algorithm) -> bool {
    algo.name == "xxh3"
}

/// Appends one line for `digest` of `algo` (one of [`ALGORITHMS`]; its registry tag is
/// xxhsum's) and `name`, tagged when `tag` or [`always_tagged`].
pub fn write(
    algo: &Algorithm,
    digest: &Digest,
    name: &[u8],
    tag: bool,
    little_endian: bool,
    out: &mut Vec<u8>,
) {
    let mut bytes = digest.as_bytes().to_vec();
    if little_endian {
        bytes.reverse();
    }
    let hex = hex_encode(&bytes, false);
    if tag || always_tagged(algo) {
        out.extend_from_slice(algo.tag.as_bytes());
        if little_endian {
            out.extend_from_slice(b"_LE");
        }
        out.extend_from_slice(b" (");
        out.extend_from_slice(name);
        out.extend_from_slice(b") = ");
        out.extend_from_slice(hex.as_bytes());
    } else {
        out.extend_from_slice(hex.as_bytes());
        out.extend_from_slice(b"  ");
        out.extend_from_slice(name);
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::lookup;

    fn line(algo: &str, name: &[u8], tag: bool, le: bool) -> String {
        let a = lookup(algo).unwrap();
        let mut out = Vec::new();
        write(a, &a.digest(b"alpha\n"), name, tag, le, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_are_printed_as_xxhsum_0_8_1_prints_them() {
        // Each expectation printed by xxhsum 0.8.1 (`printf 'alpha\n' > a`).
        assert_eq!(line("xxh32", b"a", false, false), "1668bcb8  a\n");
        assert_eq!(line("xxh64", b"a", false, false), "e56631e04077c052  a\n");
        assert_eq!(line("xxh128", b"a", false, false), "890c8a5c5ad2a8a2edba9e94785346a3  a\n");
        assert_eq!(line("xxh3", b"a", false, false), "XXH3 (a) = 3bddaa0189adc31f\n");
        assert_eq!(line("xxh64", b"a", true, false), "XXH64 (a) = e56631e04077c052\n");
        assert_eq!(line("xxh64", b"a", false, true), "52c07740e03166e5  a\n");
        assert_eq!(
            line("xxh128", b"a", true, true),
            "XXH128_LE (a) = a3465378949ebaeda2a8d25a5c8a0c89\n"
        );
        assert_eq!(line("xxh3", b"a", false, true), "XXH3_LE (a) = 1fc3ad8901aadd3b\n");
        assert_eq!(line("xxh3", STDIN, false, false), "XXH3 (stdin) = 3bddaa0189adc31f\n");
        // Names are never escaped.
        assert_eq!(line("xxh32", b"b\\s\nl", false, false), "1668bcb8  b\\s\nl\n");
    }

    #[test]
    fn only_the_xxhash_family_is_supported() {
        for name in ALGORITHMS {
            assert!(supports(lookup(name).unwrap()), "{name}");
        }
        assert!(!supports(lookup("blake3").unwrap()));
    }
}
