//! How coreutils 9.1's checksum tools (`md5sum -c` ... `sha512sum -c`, `b2sum -c`,
//! `cksum -c`) read a checksum file, line by line, for the drop-ins: which lines are
//! skipped, which are improperly formatted, and what digest and name a good line holds.
//!
//! fixity's own reader ([`super::Manifest`]) takes every format it knows and is lenient
//! where that cannot change a verdict; a drop-in must instead count and verify exactly the
//! lines the real tool does. The rules, observed with coreutils 9.1:
//!
//! - A line starting with `#` is skipped (only in the first column); one trailing LF and
//!   then one CR are removed; a line left empty is skipped. Anything else is parsed.
//! - Leading blanks (space, tab) are skipped, then an optional `\` says the name is
//!   escaped (`\\`, `\n`, `\r`; anything else after a `\`, a lone trailing `\` or a NUL
//!   makes the line improperly formatted).
//! - A tagged line starts with the tool's tag (`SHA256`; `cksum` without `-a` takes any
//!   of its tags and switches to that algorithm, and refuses untagged lines; its `BSD`,
//!   `SYSV` and `CRC` tags are refused). BLAKE2b (b2sum, cksum) reads `BLAKE2b-BITS`; after
//!   the tag come an optional space and `(`, the name up to the last `)` of the line,
//!   blanks, `=`, blanks and the digest.
//! - An untagged line is long enough (the digest's length plus 2; 3 for BLAKE2b, whose
//!   length is that of the run of hex digits), holds exactly the digest's hex digits then
//!   a blank, then either a ` ` or `*` and the name (GNU), or directly the name (BSD
//!   `md5 -r`). The first untagged line of the run decides which of the two forms every
//!   later line must use (this memory spans all the checksum files of one run): in the
//!   one-space form a name may begin with a space or `*`.
//! - A name is a C string: an unescaped name ends at its first NUL, and so does a
//!   tagged line's digest.

use crate::algo::{self, Algorithm};
use crate::digest::Digest;

/// Which tool's rules apply.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Tool {
    /// `md5sum` ... `sha512sum`: one algorithm, one digest length.
    Fixed(&'static Algorithm),
    /// `b2sum`: BLAKE2b of the length the line says.
    B2sum,
    /// `cksum -c`: with `-a` that algorithm (read like the tool of that name); without,
    /// tagged lines only, each naming its algorithm.
    Cksum(Option<&'static Algorithm>),
}

/// A line as the tool reads it.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub(crate) enum Line {
    /// A comment or an empty line.
    Skipped,
    /// An improperly formatted line.
    Malformed,
    /// A line to verify: the algorithm, the expected digest and the file name.
    Check { algo: &'static Algorithm, digest: Digest, name: Vec<u8> },
}

/// `name: RESULT` as coreutils 9 prints a check result, the name escaped (with a leading
/// `\`) only when it holds a newline.
pub fn result_line(name: &[u8], result: &str, out: &mut Vec<u8>) {
    if name.contains(&b'\n') {
        out.push(b'\\');
        crate::pathtext::escape_into(name, out);
    } else {
        out.extend_from_slice(name);
    }
    out.extend_from_slice(b": ");
    out.extend_from_slice(result.as_bytes());
    out.push(b'\n');
}

/// `cksum`'s tags in its order; the first three are the legacy sums it cannot check.
const CKSUM_TAGS: &[(&str, &str)] = &[
    ("BSD", "sum"),
    ("SYSV", "sysv"),
    ("CRC", "cksum"),
    ("MD5", "md5"),
    ("SHA1", "sha1"),
    ("SHA224", "sha224"),
    ("SHA256", "sha256"),
    ("SHA384", "sha384"),
    ("SHA512", "sha512"),
    ("BLAKE2b", "blake2b"),
    ("SM3", "sm3"),
];

/// The state one run of the tool keeps while reading its checksum files.
#[derive(Clone, Debug)]
pub struct Reader {
    tool: Tool,
    /// Whether untagged lines use the one-space form; unknown until the first one.
    reversed: Option<bool>,
    /// `cksum` without `-a`: the index in [`CKSUM_TAGS`] of the last tag read.
    cksum_current: usize,
}

impl Reader {
    /// A reader for one run of `tool`.
    pub(crate) fn new(tool: Tool) -> Reader {
        Reader { tool, reversed: None, cksum_current: 2 }
    }

    /// The tag the tool names in its "improperly formatted TAG checksum line" warning:
    /// for `cksum` without `-a`, that of the last tagged line read (`CRC` before any).
    pub(crate) fn tag(&self) -> &'static str {
        match self.tool {
            Tool::Fixed(a) => a.tag,
            Tool::B2sum => "BLAKE2b",
            Tool::Cksum(Some(a)) => cksum_tag(a),
            Tool::Cksum(None) => CKSUM_TAGS[self.cksum_current].0,
        }
    }

    /// Reads one line as returned by `getline` (with its LF, if it has one). `from_stdin`:
    /// the checksum file is standard input, where a line naming `-` is refused.
    pub(crate) fn parse(&mut self, raw: &[u8], from_stdin: bool) -> Line {
        if raw.first() == Some(&b'#') {
            return Line::Skipped;
        }
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return Line::Skipped;
        }
        match self.split(line) {
            Some((_, _, name)) if from_stdin && name == b"-" => Line::Malformed,
            Some((algo, digest, name)) => Line::Check { algo, digest, name },
            None => Line::Malformed,
        }
    }

    /// The tool's algorithm (with its full length, for BLAKE2b).
    fn algorithm(&self) -> &'static Algorithm {
        match self.tool {
            Tool::Fixed(a) | Tool::Cksum(Some(a)) => a,
            Tool::B2sum => algo::lookup("blake2b").expect("registered"),
            Tool::Cksum(None) => {
                algo::lookup(CKSUM_TAGS[self.cksum_current].1).expect("registered")
            }
        }
    }

    fn split(&mut self, s: &[u8]) -> Option<(&'static Algorithm, Digest, Vec<u8>)> {
        let at = |i: usize| s.get(i).copied().unwrap_or(0);
        let mut i = 0;
        while is_blank(at(i)) {
            i += 1;
        }
        let escaped = at(i) == b'\\';
        if escaped {
            i += 1;
        }
        if let Tool::Cksum(None) = self.tool {
            let tag = cksum_tag_at(&s[i..])?;
            if tag <= 2 {
                return None;
            }
            self.cksum_current = tag;
        }
        let algo = self.algorithm();
        let blake2b = algo.family().name == "blake2b";
        let tag = self.tag();
        if s[i..].starts_with(tag.as_bytes()) {
            i += tag.len();
            let mut bits = algo.len * 8;
            if blake2b || matches!(self.tool, Tool::Cksum(_)) {
                // The byte after the tag is consumed unless it is the `(`.
                let with_length = at(i) == b'-';
                if at(i) != b'(' {
                    i += 1;
                }
                if with_length {
                    let (n, end) = strtoumax(s, i)?;
                    if n == 0 || n > bits as u64 || n % 8 != 0 {
                        return None;
                    }
                    bits = n as usize;
                    i = end;
                }
            }
            if at(i) == b' ' {
                i += 1;
            }
            if at(i) != b'(' {
                return None;
            }
            let (name, text) = split_tagged(&s[i + 1..], escaped)?;
            let algo = if blake2b { algo::blake2b_bits(bits as u32)? } else { algo };
            let digest = match self.base64(text, bits / 8) {
                Some(d) => d,
                None => hex_digest(text, bits / 4)?,
            };
            return Some((algo, digest, name));
        }
        // b2sum and cksum (whatever its algorithm) ask for 3 bytes, the others for the
        // digest, a blank and a one-byte name.
        let min = match self.tool {
            Tool::Fixed(a) => a.len * 2 + 2,
            Tool::B2sum | Tool::Cksum(_) => 3,
        };
        if s.len() - i < min + usize::from(at(i) == b'\\') {
            return None;
        }
        let start = i;
        let token = s[i..].iter().position(|&b| b == 0 || is_blank(b)).map_or(s.len(), |n| i + n);
        if !blake2b && let Some(digest) = self.base64(&s[i..token], algo.len) {
            return self.name(s, token + 1, escaped, algo, digest);
        }
        let hex_len = if blake2b {
            let n = s[i..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
            if n < 2 || n % 2 != 0 || n > 128 {
                return None;
            }
            n
        } else {
            algo.len * 2
        };
        i += hex_len;
        if !is_blank(at(i)) {
            return None;
        }
        let digest = hex_digest(&s[start..i], hex_len)?;
        let algo = if blake2b { algo::blake2b_bits(hex_len as u32 * 4)? } else { algo };
        self.name(s, i + 1, escaped, algo, digest)
    }

    /// The rest of an untagged line from `i`, just after the blank that ends the digest:
    /// the GNU ` ` or `*` then the name, or (BSD `md5 -r`) the name.
    fn name(
        &mut self,
        s: &[u8],
        mut i: usize,
        escaped: bool,
        algo: &'static Algorithm,
        digest: Digest,
    ) -> Option<(&'static Algorithm, Digest, Vec<u8>)> {
        let at = |i: usize| s.get(i).copied().unwrap_or(0);
        if s.len() - i == 1 || (at(i) != b' ' && at(i) != b'*') {
            if self.reversed == Some(false) {
                return None;
            }
            self.reversed = Some(true);
        } else if self.reversed != Some(true) {
            self.reversed = Some(false);
            i += 1;
        }
        let rest = s.get(i..).unwrap_or_default();
        let name = if escaped { unescape(rest)? } else { c_string(rest).to_vec() };
        Some((algo, digest, name))
    }

    /// `cksum` (coreutils 9.2, which writes them with `--base64`; 9.1 refuses them): a
    /// digest of `len` bytes in base64, padded to a multiple of 4 with `=`.
    fn base64(&self, text: &[u8], len: usize) -> Option<Digest> {
        if !matches!(self.tool, Tool::Cksum(_)) || text.len() != len.div_ceil(3) * 4 {
            return None;
        }
        let pad = (3 - len % 3) % 3;
        let (body, tail) = text.split_at(text.len() - pad);
        let b64 = |b: &u8| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/';
        if !body.iter().all(b64) || !tail.iter().all(|&b| b == b'=') {
            return None;
        }
        Digest::from_base64(text).filter(|d| d.as_bytes().len() == len)
    }
}

/// The tag `cksum -a` names `a` by in its warnings.
fn cksum_tag(a: &'static Algorithm) -> &'static str {
    CKSUM_TAGS.iter().find(|(_, n)| *n == a.family().name).map_or(a.tag, |(t, _)| t)
}

/// `cksum` without `-a`: the index of the tag the line starts with: a run of at most 7
/// bytes (the longest tag) ended by a blank, `-`, `(` or the end, equal to a tag.
fn cksum_tag_at(s: &[u8]) -> Option<usize> {
    let end = s.iter().position(|&b| b == 0 || is_blank(b) || b == b'-' || b == b'(');
    let end = end.unwrap_or(s.len());
    if end > 7 {
        return None;
    }
    CKSUM_TAGS.iter().position(|(t, _)| t.as_bytes() == &s[..end])
}

/// After a tag's `(`: the name (to the last `)` of the line) and the digest text (after
/// blanks, `=` and blanks, to the end or a NUL).
fn split_tagged(s: &[u8], escaped: bool) -> Option<(Vec<u8>, &[u8])> {
    if s.is_empty() {
        return None;
    }
    // The last `)`, or the first byte when there is none (then refused below).
    let close = (1..s.len()).rev().find(|&j| s[j] == b')').unwrap_or(0);
    if s[close] != b')' {
        return None;
    }
    let name = if escaped { unescape(&s[..close])? } else { c_string(&s[..close]).to_vec() };
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = close + 1;
    while is_blank(at(i)) {
        i += 1;
    }
    if at(i) != b'=' {
        return None;
    }
    i += 1;
    while is_blank(at(i)) {
        i += 1;
    }
    Some((name, c_string(s.get(i..).unwrap_or_default())))
}

/// Exactly `len` hex digits (either case) and nothing after them.
fn hex_digest(text: &[u8], len: usize) -> Option<Digest> {
    if text.len() != len || !text.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    Digest::from_hex(text)
}

/// `strtoumax(s + i, &end, 0)` as gnulib's `xstrtoumax` accepts it: optional white
/// space, an optional `+` (a `-` is refused), then a decimal, octal (`0`) or hex (`0x`)
/// number. Returns the value and where it ends.
fn strtoumax(s: &[u8], mut i: usize) -> Option<(u64, usize)> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    while matches!(at(i), b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    match at(i) {
        b'-' => return None,
        b'+' => i += 1,
        _ => {}
    }
    let (radix, start) = if at(i) == b'0' && matches!(at(i + 1), b'x' | b'X') {
        if at(i + 2).is_ascii_hexdigit() { (16, i + 2) } else { (8, i) }
    } else if at(i) == b'0' {
        (8, i)
    } else {
        (10, i)
    };
    let digits =
        s[start.min(s.len())..].iter().take_while(|b| (**b as char).is_digit(radix)).count();
    if digits == 0 {
        return None;
    }
    let mut n: u64 = 0;
    for &b in &s[start..start + digits] {
        let d = (b as char).to_digit(radix).expect("a digit") as u64;
        n = n.checked_mul(radix as u64)?.checked_add(d)?;
    }
    Some((n, start + digits))
}

/// The bytes before the first NUL.
fn c_string(s: &[u8]) -> &[u8] {
    s.iter().position(|&b| b == 0).map_or(s, |n| &s[..n])
}

/// coreutils' unescaping: `\\`, `\n`, `\r`; any other escape, a trailing `\` or a NUL is
/// refused.
fn unescape(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut it = s.iter();
    while let Some(&b) = it.next() {
        match b {
            b'\\' => match it.next()? {
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b'\\' => out.push(b'\\'),
                _ => return None,
            },
            0 => return None,
            b => out.push(b),
        }
    }
    Some(out)
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_escape_only_names_with_a_newline() {
        let line = |name: &[u8]| {
            let mut out = Vec::new();
            result_line(name, "OK", &mut out);
            out
        };
        assert_eq!(line(b"a b\\c"), b"a b\\c: OK\n");
        assert_eq!(line(b"a\nb\\c"), b"\\a\\nb\\\\c: OK\n");
    }

    fn md5sum() -> Reader {
        Reader::new(Tool::Fixed(algo::lookup("md5").unwrap()))
    }

    const D: &str = "d41d8cd98f00b204e9800998ecf8427e";

    fn name(l: Line) -> Option<Vec<u8>> {
        match l {
            Line::Check { name, .. } => Some(name),
            _ => None,
        }
    }

    #[test]
    fn names_end_at_a_nul() {
        let mut r = md5sum();
        let line = format!("{D}  na\0me\n");
        assert_eq!(name(r.parse(line.as_bytes(), false)), Some(b"na".to_vec()));
        let tagged = format!("MD5 (x\0y) = {D}\n");
        assert_eq!(name(r.parse(tagged.as_bytes(), false)), Some(b"x".to_vec()));
        // An escaped name may not hold a NUL.
        let escaped = format!("\\{D}  a\\\\\0b\n");
        assert_eq!(r.parse(escaped.as_bytes(), false), Line::Malformed);
    }

    #[test]
    fn the_one_space_form_keeps_leading_spaces_and_stars() {
        let mut r = md5sum();
        for (line, want) in [("a", "a"), ("  sp", " sp"), (" *st", "*st")] {
            let l = format!("{D} {line}\n").replacen("  ", " ", 1);
            let l = if line == "a" { format!("{D} a\n") } else { l };
            assert_eq!(name(r.parse(l.as_bytes(), false)), Some(want.as_bytes().to_vec()), "{l}");
        }
        // Once one-space, a two-space line is read as one-space too.
        let mut r = md5sum();
        assert!(name(r.parse(format!("{D} a\n").as_bytes(), false)).is_some());
        assert_eq!(name(r.parse(format!("{D}  b\n").as_bytes(), false)), Some(b" b".to_vec()));
        // Once two-space, a one-space line is refused.
        let mut r = md5sum();
        assert!(name(r.parse(format!("{D}  a\n").as_bytes(), false)).is_some());
        assert_eq!(r.parse(format!("{D} b\n").as_bytes(), false), Line::Malformed);
    }

    #[test]
    fn lines_that_are_skipped_or_too_short() {
        let mut r = md5sum();
        assert_eq!(r.parse(b"# c\n", false), Line::Skipped);
        assert_eq!(r.parse(b"\r\n", false), Line::Skipped);
        assert_eq!(r.parse(b" # c\n", false), Line::Malformed);
        assert_eq!(r.parse(b"  \n", false), Line::Malformed);
        assert_eq!(r.parse(format!("{D} \n").as_bytes(), false), Line::Malformed);
        assert_eq!(r.parse(format!("{D}  -\n").as_bytes(), true), Line::Malformed);
        assert!(name(r.parse(format!("{D}  -\n").as_bytes(), false)).is_some());
    }

    #[test]
    fn cksum_follows_its_tags() {
        let mut r = Reader::new(Tool::Cksum(None));
        assert_eq!(r.tag(), "CRC");
        assert_eq!(r.parse(format!("{D}  a\n").as_bytes(), false), Line::Malformed);
        // A recognized tag switches the algorithm even when the rest of the line is bad.
        assert_eq!(r.parse(b"SHA1 (a) = 12\n", false), Line::Malformed);
        assert_eq!(r.tag(), "SHA1");
        let l = format!("BLAKE2b-128 (a) = {D}\n");
        let Line::Check { algo, .. } = r.parse(l.as_bytes(), false) else { panic!() };
        assert_eq!(algo.name, "blake2b-128");
        assert_eq!(r.parse(b"CRC (a) = 12345678\n", false), Line::Malformed);
        assert_eq!(r.tag(), "BLAKE2b");
        let sm3 = format!("SM3 (a) = {D}{D}\n");
        assert!(name(r.parse(sm3.as_bytes(), false)).is_some());
    }

    #[test]
    fn b2sum_takes_the_length_of_the_hex_run() {
        let mut r = Reader::new(Tool::B2sum);
        let Line::Check { algo, .. } = r.parse(b"ff  a\n", false) else { panic!() };
        assert_eq!(algo.name, "blake2b-8");
        assert_eq!(r.parse(b"00f  a\n", false), Line::Malformed);
        assert_eq!(strtoumax(b"0x100", 0), Some((256, 5)));
        assert_eq!(strtoumax(b"010)", 0), Some((8, 3)));
        assert_eq!(strtoumax(b"-8", 0), None);
    }
}
