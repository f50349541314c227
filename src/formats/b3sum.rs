//! The lines `b3sum` (the BLAKE3 team's tool, 1.2.0) prints: `hex  name`, GNU's shape
//! with b3sum's own escaping. The name is shown as text (bytes that are not UTF-8 become
//! U+FFFD, as Rust's `to_string_lossy` makes them); a name holding `\` or a newline is
//! escaped (`\\`, `\n`, and nothing else: a carriage return stays as it is) and the line
//! starts with `\`. Standard input is `-`. [`parse_check_line`] reads a line back as
//! `b3sum -c` (1.2.0) does.

use super::writer::{FileEntry, ManifestWriter, OutputFormat, Refusal, Unwritable, WriteOptions};
use crate::algo::Algorithm;

/// Whether b3sum escapes `name` (and starts its line with `\`).
pub fn needs_escape(name: &str) -> bool {
    name.contains('\\') || name.contains('\n')
}

/// Appends one line: `digest` (any length, in lowercase hex) and `name`, or the digest
/// alone for `None` (`--no-names`, which never escapes).
pub fn write(digest: &[u8], name: Option<&[u8]>, out: &mut Vec<u8>) {
    let name = name.map(String::from_utf8_lossy);
    let escape = name.as_deref().is_some_and(needs_escape);
    if escape {
        out.push(b'\\');
    }
    out.extend_from_slice(crate::digest::hex_encode(digest, false).as_bytes());
    if let Some(name) = name {
        out.extend_from_slice(b"  ");
        if escape {
            for c in name.bytes() {
                match c {
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    c => out.push(c),
                }
            }
        } else {
            out.extend_from_slice(name.as_bytes());
        }
    }
    out.push(b'\n');
}

/// One line of a checkfile, as `b3sum -c` reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckLine {
    /// The name as written in the line (still escaped), which b3sum prints results with.
    pub shown: String,
    /// Whether the line started with `\` (its name is escaped, and results are printed
    /// with a leading `\` too).
    pub escaped: bool,
    /// The name, unescaped: the file to hash.
    pub path: String,
    /// The expected digest (b3sum checks only the default 32-byte length).
    pub expected: [u8; 32],
}

/// Parses a checkfile line (its trailing newlines already removed) the way b3sum 1.2.0's
/// `-c` does: an optional `\`, 64 lowercase hex digits, two spaces, a name of at least one
/// character, unescaped (`\\` and `\n` only) when the line started with `\`. The path to
/// check may hold neither a NUL (it would cut the path short) nor U+FFFD (the character
/// that stands for bytes that are not UTF-8, so two different names could read the same).
/// The error is b3sum's own message for the line (`Invalid hex`), which it prints after
/// `b3sum: `.
pub fn parse_check_line(mut line: &str) -> Result<CheckLine, &'static str> {
    let first = line.chars().next().ok_or("Empty line")?;
    let escaped = first == '\\';
    if escaped {
        line = &line[1..];
    }
    const PREFIX: usize = 64 + 2;
    if line.len() <= PREFIX {
        return Err("Short line");
    }
    if !line.as_bytes()[..PREFIX].is_ascii() {
        return Err("Non-ASCII prefix");
    }
    if &line[64..PREFIX] != "  " {
        return Err("Invalid space");
    }
    let mut expected = [0u8; 32];
    let hex = line.as_bytes();
    let half = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        _ => Err("Invalid hex"),
    };
    for (i, byte) in expected.iter_mut().enumerate() {
        *byte = half(hex[2 * i])? * 16 + half(hex[2 * i + 1])?;
    }
    let shown = line[PREFIX..].to_string();
    let path = if escaped { unescape(&shown)? } else { shown.clone() };
    if path.contains('\0') {
        return Err("Null character in path");
    }
    if path.contains('\u{fffd}') {
        return Err("Unicode replacement character in path");
    }
    Ok(CheckLine { shown, escaped, path, expected })
}

/// Undoes b3sum's escaping: `\\` and `\n` only.
fn unescape(s: &str) -> Result<String, &'static str> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            _ => return Err("Invalid backslash escape"),
        }
    }
    Ok(out)
}

/// The `b3sum` format's writer: one digest (blake3 unless another is asked for), b3sum's
/// escaping; no `-z` or `-b`.
pub(crate) struct B3sumWriter {
    algos: Vec<&'static Algorithm>,
}

impl B3sumWriter {
    pub(crate) fn new(
        algos: Vec<&'static Algorithm>,
        opts: &WriteOptions,
    ) -> Result<Self, Refusal> {
        if algos.len() != 1 {
            return Err(Refusal::OneDigest);
        }
        if opts.zero || opts.binary {
            return Err(Refusal::NoZeroOrBinary(OutputFormat::B3sum));
        }
        Ok(B3sumWriter { algos })
    }
}

impl ManifestWriter for B3sumWriter {
    fn algorithms(&self) -> &[&'static Algorithm] {
        &self.algos
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        write(file.digests[0].as_bytes(), Some(file.name), out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(data: &[u8], name: Option<&[u8]>) -> Vec<u8> {
        let mut out = Vec::new();
        write(blake3::hash(data).as_bytes(), name, &mut out);
        out
    }

    #[test]
    fn lines_are_printed_as_b3sum_prints_them() {
        // Each expectation printed by b3sum 1.2.0 (`printf 'alpha\n' > NAME; b3sum NAME`).
        let alpha = "ac678d92b3d739773d18cd952cfcea443fa4a5a98ffc9554b66795bb22d5532d";
        assert_eq!(line(b"alpha\n", Some(b"a")), format!("{alpha}  a\n").as_bytes());
        assert_eq!(line(b"alpha\n", Some(b"a b")), format!("{alpha}  a b\n").as_bytes());
        assert_eq!(line(b"alpha\n", Some(b"b\\s")), format!("\\{alpha}  b\\\\s\n").as_bytes());
        assert_eq!(line(b"alpha\n", Some(b"n\nl")), format!("\\{alpha}  n\\nl\n").as_bytes());
        // A carriage return is not escaped; bytes that are not UTF-8 print as U+FFFD.
        assert_eq!(line(b"alpha\n", Some(b"c\rr")), format!("{alpha}  c\rr\n").as_bytes());
        assert_eq!(line(b"alpha\n", Some(b"x\xff")), format!("{alpha}  x\u{fffd}\n").as_bytes());
        assert_eq!(line(b"alpha\n", None), format!("{alpha}\n").as_bytes());
        // Other lengths (`b3sum -l 4`).
        let mut out = Vec::new();
        write(&[0xac, 0x67, 0x8d, 0x92], Some(b"a"), &mut out);
        assert_eq!(out, b"ac678d92  a\n");
    }

    #[test]
    fn check_lines_parse_as_b3sum_reads_them() {
        let hex = "ac678d92b3d739773d18cd952cfcea443fa4a5a98ffc9554b66795bb22d5532d";
        let l = parse_check_line(&format!("{hex}  a b")).unwrap();
        assert_eq!((l.path.as_str(), l.escaped, l.expected[0]), ("a b", false, 0xac));
        let l = parse_check_line(&format!("\\{hex}  x\\\\y\\nz")).unwrap();
        assert_eq!((l.shown.as_str(), l.path.as_str()), ("x\\\\y\\nz", "x\\y\nz"));
        assert_eq!(parse_check_line(""), Err("Empty line"));
        assert_eq!(parse_check_line(&format!("{hex}  ")), Err("Short line"));
        assert_eq!(parse_check_line(&format!("{hex} *a")), Err("Invalid space"));
        assert_eq!(parse_check_line(&format!("{}  a", hex.to_uppercase())), Err("Invalid hex"));
        assert_eq!(parse_check_line(&format!("\\{hex}  a\\t")), Err("Invalid backslash escape"));
        assert_eq!(parse_check_line(&format!("é{hex}  a")), Err("Non-ASCII prefix"));
        // Checked after unescaping, so `\\` before a NUL does not hide it.
        assert_eq!(parse_check_line(&format!("{hex}  a\0b")), Err("Null character in path"));
        assert_eq!(parse_check_line(&format!("\\{hex}  \\\\\0")), Err("Null character in path"));
        assert_eq!(
            parse_check_line(&format!("{hex}  a\u{fffd}")),
            Err("Unicode replacement character in path")
        );
    }

    #[test]
    fn written_lines_read_back() {
        let digest = *blake3::hash(b"alpha\n").as_bytes();
        for name in ["a", "a b", " lead and trail ", "b\\s", "n\nl", "\\\n\\n", "c\rr", "ü \\ ü"]
        {
            let mut out = Vec::new();
            write(&digest, Some(name.as_bytes()), &mut out);
            assert_eq!(out.pop(), Some(b'\n'));
            let text = String::from_utf8(out).unwrap();
            let l = parse_check_line(&text).unwrap_or_else(|e| panic!("{name:?}: {e}"));
            assert_eq!((l.path.as_str(), l.expected), (name, digest), "{text:?}");
            assert_eq!(l.escaped, needs_escape(name), "{text:?}");
        }
    }
}
