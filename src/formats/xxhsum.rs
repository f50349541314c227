//! The lines `xxhsum` (xxHash's tool, 0.8.1) prints: `hex  name` for XXH32, XXH64 and
//! XXH128, and the tagged `XXH3 (name) = hex` for XXH3, which 0.8.1 always prints tagged
//! (`--tag` tags the others too). Names are printed as they are, never escaped, and
//! standard input is called [`STDIN`]. `--little-endian` prints the digest's bytes
//! reversed and adds `_LE` to the tag. [`parse_check_line`] reads a line back as
//! `xxhsum -c` (0.8.1) does; since names are not escaped, a name holding a newline cannot
//! be read back from a checksum file, which xxhsum splits at every newline.

use super::writer::{
    FileEntry, ManifestWriter, OutputFormat, Refusal, Stdin, Unwritable, WriteOptions,
};
use crate::algo::{self, Algorithm};
use crate::digest::{Digest, hex_encode};

/// The name xxhsum prints for standard input (whether named `-` or not named at all).
pub const STDIN: &[u8] = b"stdin";

/// The algorithms xxhsum computes, in the order of its `-H` numbers (the registry rows
/// with [`Algorithm::xxhsum`]).
pub(crate) fn algorithms() -> &'static [&'static Algorithm] {
    static ROWS: std::sync::OnceLock<Vec<&'static Algorithm>> = std::sync::OnceLock::new();
    ROWS.get_or_init(|| {
        let mut rows: Vec<_> = algo::ALGORITHMS.iter().filter(|a| a.xxhsum.is_some()).collect();
        rows.sort_by_key(|a| a.xxhsum);
        rows
    })
}

/// Their names, `xxh32, xxh64, ...`, for messages.
pub(crate) fn names() -> String {
    algorithms().iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
}

/// The algorithm of xxhsum's own lines when none is asked for (what `xxhsum` computes).
pub(crate) fn default_algorithm() -> &'static Algorithm {
    algo::by_tool("xxhsum").expect("xxhsum's row is registered")
}

/// Whether xxhsum computes `algo`.
pub fn supports(algo: &Algorithm) -> bool {
    algo.xxhsum.is_some()
}

/// Whether xxhsum 0.8.1 prints `algo` in the tagged form even without `--tag` (XXH3).
pub(crate) fn always_tagged(algo: &Algorithm) -> bool {
    algo.name == "xxh3"
}

/// Appends one line for `digest` of `algo` (one xxhsum computes: [`supports`]; its tag is
/// xxhsum's) and `name`, tagged when `tag` or `always_tagged`.
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

/// One checksum line, as `xxhsum -c` reads it.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub struct CheckLine<'a> {
    /// The algorithm to check with (one xxhsum computes).
    pub algo: &'static Algorithm,
    /// The name, as written (xxhsum never escapes); `stdin` means standard input.
    pub name: &'a [u8],
    /// The expected digest in canonical (big-endian) byte order.
    pub digest: Digest,
}

/// Parses a checksum line (its newline already removed) the way xxhsum 0.8.1 does:
/// `HEX  NAME` (the character after the first space is skipped, whatever it is; the
/// length picks the algorithm, 8 hex digits XXH32, 32 XXH128, 16 XXH64; the bytes are
/// reversed when `little_endian`, xxhsum's `--little-endian`) or `TAG (NAME) = HEX` (the
/// tag's prefix picks the algorithm, XXH64 when it names none; `_LE` anywhere in it
/// reverses the bytes). The name of a tagged line runs from after `(` to the `) =`
/// before the last space. `None` for an improperly formatted line, including one whose
/// digest length does not fit its algorithm. xxhsum handles a line as a C string, so a NUL
/// ends it: what follows is ignored (the name stops there).
pub fn parse_check_line(line: &[u8], little_endian: bool) -> Option<CheckLine<'_>> {
    let line = &line[..line.iter().position(|&b| b == 0).unwrap_or(line.len())];
    let first = line.iter().position(|&b| b == b' ')?;
    let next = *line.get(first + 1)?;
    let (algo, hash, name, rev);
    if next == b'(' {
        let last = line.iter().rposition(|&b| b == b' ')?;
        if last < first + 5 || &line[last - 3..last] != b") =" {
            return None;
        }
        let tag = &line[..first];
        rev = tag.windows(3).any(|w| w == b"_LE");
        hash = &line[last + 1..];
        name = &line[first + 2..last - 3];
        // The longest tag that starts the line's (XXH32 before XXH3), xxh64 without one.
        algo = algorithms()
            .iter()
            .copied()
            .filter(|a| tag.starts_with(a.tag.as_bytes()))
            .max_by_key(|a| a.tag.len())
            .unwrap_or_else(default_algorithm);
    } else {
        hash = &line[..first];
        name = &line[first + 2..];
        rev = little_endian;
        // By length: the algorithm of that many hex digits (xxh64, the default, of the two
        // with 16).
        algo = algorithms()
            .iter()
            .copied()
            .filter(|a| a.hex_len() == hash.len())
            .min_by_key(|a| !std::ptr::eq(*a, default_algorithm()))
            .unwrap_or_else(default_algorithm);
    }
    if hash.len() != algo.hex_len() {
        return None;
    }
    let mut digest = Digest::from_hex(hash)?;
    if rev {
        let mut bytes = digest.as_bytes().to_vec();
        bytes.reverse();
        digest = Digest::new(&bytes);
    }
    Some(CheckLine { algo, name, digest })
}

/// The `xxhsum` format's writer: one of xxhsum's algorithms (xxh64 unless another is
/// asked for), names unescaped, standard input `stdin`; no `-z` or `-b`.
pub(crate) struct XxhsumWriter {
    algos: Vec<&'static Algorithm>,
    stdin: Stdin,
}

impl XxhsumWriter {
    pub(crate) fn new(
        algos: Vec<&'static Algorithm>,
        opts: &WriteOptions,
    ) -> Result<Self, Refusal> {
        if !matches!(algos.as_slice(), [a] if supports(a)) {
            return Err(Refusal::Xxhsum);
        }
        if opts.zero || opts.binary {
            return Err(Refusal::NoZeroOrBinary(OutputFormat::Xxhsum));
        }
        Ok(XxhsumWriter { algos, stdin: opts.stdin })
    }
}

impl ManifestWriter for XxhsumWriter {
    fn algorithms(&self) -> &[&'static Algorithm] {
        &self.algos
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        let stdin = self.stdin != Stdin::Never && file.name == b"-";
        let shown = if stdin { STDIN } else { file.name };
        write(self.algos[0], &file.digests[0], shown, false, false, out);
        Ok(())
    }
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
        for a in algorithms() {
            assert!(supports(a), "{a}");
        }
        assert!(!supports(lookup("blake3").unwrap()));
    }

    #[test]
    fn lines_parse_as_xxhsum_0_8_1_reads_them() {
        let p = parse_check_line;
        let algo = |line: &[u8]| p(line, false).unwrap().algo.name;
        let l = p(b"e56631e04077c052  a b", false).unwrap();
        assert_eq!((l.algo.name, l.name), ("xxh64", &b"a b"[..]));
        assert_eq!(l.digest.as_bytes(), [0xe5, 0x66, 0x31, 0xe0, 0x40, 0x77, 0xc0, 0x52]);
        let l = p(b"52c07740e03166e5 *a", true).unwrap();
        assert_eq!(l.digest.as_bytes()[0], 0xe5, "--little-endian reverses untagged digests");
        let l = p(b"XXH3_LE (x) y) = 1fc3ad8901aadd3b", false).unwrap();
        assert_eq!((l.algo.name, l.name, l.digest.as_bytes()[0]), ("xxh3", &b"x) y"[..], 0x3b));
        assert_eq!(algo(b"XXH32 (a) = 1668bcb8"), "xxh32");
        assert_eq!(algo(b"1668bcb8  a"), "xxh32");
        assert_eq!(algo(b"890c8a5c5ad2a8a2edba9e94785346a3  a"), "xxh128");
        // A foreign tag with a 16-digit digest is read as XXH64, as xxhsum does.
        assert_eq!(algo(b"MD5 (a) = e56631e04077c052"), "xxh64");
        // A NUL ends the line, as a C string.
        assert_eq!(p(b"e56631e04077c052  a\0b", false).unwrap().name, b"a");
        assert_eq!(p(b"XXH32 (a) = 1668bcb8\0x", false).unwrap().name, b"a");
        assert_eq!(p(b"e56631e04077c052 \0a", false), None);
        for bad in [
            &b"XXH64 (a)= e56631e04077c052"[..],
            b"XXH64 (a) =  e56631e04077c052",
            b"XXH3_3bddaa0189adc31f  a",
            b"\\e56631e04077c052  a",
            b"e56631e04077c05  a",
            b"e56631e04077c052",
            b"e56631e04077c052 ",
            b"XXH32 (a) = e56631e04077c052",
            b"g56631e04077c052  a",
        ] {
            assert_eq!(p(bad, false), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn written_lines_read_back() {
        // Every shape the writer has (plain, --tag, --little-endian, XXH3 always tagged)
        // for names with spaces, backslashes, parentheses and `) = `. xxhsum escapes
        // nothing, so these reach the file as they are; a newline would split the line.
        let names: [&[u8]; 7] = [b"a", b"a b", b" x ", b"b\\s", b"\\n", b"(p) = q", STDIN];
        for &a in algorithms() {
            let d = a.digest(b"alpha\n");
            for file in names {
                for (tag, le) in [(false, false), (true, false), (false, true), (true, true)] {
                    let mut out = Vec::new();
                    write(a, &d, file, tag, le, &mut out);
                    assert_eq!(out.pop(), Some(b'\n'));
                    let l = parse_check_line(&out, le);
                    let shown = String::from_utf8_lossy(&out);
                    assert_eq!(l, Some(CheckLine { algo: a, name: file, digest: d }), "{shown}");
                }
            }
        }
    }
}
