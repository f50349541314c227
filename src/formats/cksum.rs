//! The line shapes of POSIX `cksum` and of `sum`, as GNU coreutils prints them:
//!
//! - `cksum` (and `cksum -a crc`): `CRC SIZE NAME`, the CRC and the size in bytes both
//!   in decimal;
//! - BSD `sum` (`sum -r`, `cksum -a bsd`): `%05d %5d NAME`, the size in 1024-byte blocks;
//! - SysV `sum` (`sum -s`, `cksum -a sysv`): `%d %d NAME`, the size in 512-byte blocks.
//!
//! The name is written as given, never escaped, and left out (with its space) for
//! standard input read because no file was named. Each line ends with a newline, or NUL
//! under `-z`.
//!
//! The check side: coreutils cannot check these lines, but fixity can, since the CRC, the
//! size and the name are all there; [`parse_line`] reads one.

use super::writer::{
    FileEntry, ManifestWriter, OutputFormat, Refusal, Stdin, Unwritable, WriteOptions,
};
use crate::algo::Algorithm;
use crate::digest::Digest;

/// Which of the three shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `CRC SIZE NAME`.
    Crc,
    /// `%05d %5d NAME`, 1 KiB blocks.
    Bsd,
    /// `%d %d NAME`, 512-byte blocks.
    Sysv,
}

impl Shape {
    /// The shape an algorithm of the `cksum`/`sum` family prints, by registry name.
    pub fn of(algo_name: &str) -> Option<Shape> {
        match algo_name {
            "cksum" => Some(Shape::Crc),
            "sum" => Some(Shape::Bsd),
            "sysv" => Some(Shape::Sysv),
            _ => None,
        }
    }
}

/// Blocks of `block` bytes needed for `size` bytes, rounded up.
pub(crate) fn blocks(size: u64, block: u64) -> u64 {
    size.div_ceil(block)
}

/// The digest as an unsigned big-endian number (4 bytes for the CRC, 2 for the sums).
fn value(digest: &Digest) -> u64 {
    digest.as_bytes().iter().fold(0u64, |v, &b| (v << 8) | b as u64)
}

/// Appends one line: `digest` of `size` bytes, named `name` (`None`: standard input read
/// because no file was named), ended by `end`.
pub fn write(
    shape: Shape,
    digest: &Digest,
    size: u64,
    name: Option<&[u8]>,
    end: u8,
    out: &mut Vec<u8>,
) {
    let v = value(digest);
    let head = match shape {
        Shape::Crc => format!("{v} {size}"),
        Shape::Bsd => format!("{v:05} {:5}", blocks(size, 1024)),
        Shape::Sysv => format!("{v} {}", blocks(size, 512)),
    };
    out.extend_from_slice(head.as_bytes());
    if let Some(n) = name {
        out.push(b' ');
        out.extend_from_slice(n);
    }
    out.push(end);
}

/// One parsed `cksum`/`sum` line.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub struct Line {
    /// The checksum as a digest of the shape's length (4 bytes for the CRC, 2 for sums).
    pub digest: Digest,
    /// `SIZE` of a CRC line (bytes); the block count of a sum line.
    pub count: u64,
    /// The name; empty when the line had none (standard input).
    pub name: Vec<u8>,
}

/// Parses one line (without its end) of `shape`. The name is everything after the
/// single space following the second number. Returns `None` for anything else,
/// including a checksum too large for the shape.
pub fn parse_line(shape: Shape, line: &[u8]) -> Option<Line> {
    let (first, rest) = split_number(line)?;
    let rest = match shape {
        // `%5d` pads the block count with spaces.
        Shape::Bsd => {
            let r = rest.strip_prefix(b" ")?;
            let pad = r.iter().take_while(|&&b| b == b' ').count();
            &r[pad..]
        }
        _ => rest.strip_prefix(b" ")?,
    };
    let (count, rest) = split_number(rest)?;
    let name = match rest {
        [] => Vec::new(),
        [b' ', name @ ..] if !name.is_empty() => name.to_vec(),
        _ => return None,
    };
    let digest = match shape {
        Shape::Crc => Digest::new(&u32::try_from(first).ok()?.to_be_bytes()),
        Shape::Bsd | Shape::Sysv => Digest::new(&u16::try_from(first).ok()?.to_be_bytes()),
    };
    if shape == Shape::Bsd && line.len() < 5 {
        return None;
    }
    Some(Line { digest, count, name })
}

/// A leading run of ASCII digits as a number, and the rest.
fn split_number(text: &[u8]) -> Option<(u64, &[u8])> {
    let n = text.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || n > 20 {
        return None;
    }
    let v = std::str::from_utf8(&text[..n]).ok()?.parse().ok()?;
    Some((v, &text[n..]))
}

/// The writer of `cksum`, `sum` and `sysv` lines: the format's own checksum only.
pub(crate) struct SumWriter {
    algos: Vec<&'static Algorithm>,
    shape: Shape,
    end: u8,
    stdin: Stdin,
}

impl SumWriter {
    pub(crate) fn new(
        format: OutputFormat,
        algos: Vec<&'static Algorithm>,
        opts: WriteOptions,
    ) -> Result<Self, Refusal> {
        let own = format.name();
        let shape = Shape::of(own).expect("cksum, sum and sysv have a shape");
        if !matches!(algos.as_slice(), [a] if a.name == own) {
            return Err(Refusal::Only(format, own));
        }
        let end = if opts.zero { 0 } else { b'\n' };
        Ok(SumWriter { algos, shape, end, stdin: opts.stdin })
    }
}

impl ManifestWriter for SumWriter {
    fn algorithms(&self) -> &[&'static Algorithm] {
        &self.algos
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        // As cksum and sum, no name for standard input read because no file was named.
        let unnamed = self.stdin == Stdin::Implicit && file.name == b"-";
        let name = (!unnamed).then_some(file.name);
        write(self.shape, &file.digests[0], file.size, name, self.end, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::lookup;

    fn line(shape: Shape, algo: &str, data: &[u8], name: Option<&[u8]>) -> String {
        let d = lookup(algo).unwrap().digest(data);
        let mut out = Vec::new();
        write(shape, &d, data.len() as u64, name, b'\n', &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_are_printed_as_coreutils_prints_them() {
        // Each expectation printed by coreutils 9.1 (`printf 'alpha\n' > a`).
        assert_eq!(line(Shape::Crc, "cksum", b"alpha\n", Some(b"a")), "3650393976 6 a\n");
        assert_eq!(line(Shape::Bsd, "sum", b"alpha\n", Some(b"a")), "18540     1 a\n");
        assert_eq!(line(Shape::Sysv, "sysv", b"alpha\n", Some(b"a")), "528 1 a\n");
        // `echo hi | sum`: standard input, no name.
        assert_eq!(line(Shape::Bsd, "sum", b"hi\n", None), "32856     1\n");
        assert_eq!(line(Shape::Crc, "cksum", b"", None), "4294967295 0\n");
        assert_eq!(line(Shape::Bsd, "sum", b"", Some(b"e")), "00000     0 e\n");
        // Names are not escaped.
        assert_eq!(line(Shape::Sysv, "sysv", b"", Some(b"new\nline")), "0 0 new\nline\n");
    }

    #[test]
    fn block_counts_round_up() {
        assert_eq!(blocks(0, 1024), 0);
        assert_eq!(blocks(1, 1024), 1);
        assert_eq!(blocks(1024, 1024), 1);
        assert_eq!(blocks(1025, 1024), 2);
        assert_eq!(blocks(20_000_000, 512), 39063);
    }

    #[test]
    fn parse_reads_back_what_write_writes() {
        for (shape, algo) in [(Shape::Crc, "cksum"), (Shape::Bsd, "sum"), (Shape::Sysv, "sysv")] {
            for name in [Some(&b"a b  c"[..]), None] {
                let text = line(shape, algo, b"some data", name);
                let got = parse_line(shape, text.trim_end_matches('\n').as_bytes()).unwrap();
                assert_eq!(got.digest, lookup(algo).unwrap().digest(b"some data"));
                assert_eq!(got.name, name.unwrap_or_default());
            }
        }
        let l = parse_line(Shape::Crc, b"3650393976 6 a").unwrap();
        assert_eq!((l.count, l.name.as_slice()), (6, &b"a"[..]));
        let l = parse_line(Shape::Bsd, b"18540     1 a").unwrap();
        assert_eq!(l.count, 1);
        for bad in [&b""[..], b"x 1 a", b"1", b"1 ", b"1 2 ", b"4294967296 1 a", b"1  2 a"] {
            assert_eq!(parse_line(Shape::Crc, bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse_line(Shape::Sysv, b"65536 1 a"), None);
    }
}
