//! The lines `b3sum` (the BLAKE3 team's tool, 1.2.0) prints: `hex  name`, GNU's shape
//! with b3sum's own escaping. The name is shown as text (bytes that are not UTF-8 become
//! U+FFFD, as Rust's `to_string_lossy` makes them); a name holding `\` or a newline is
//! escaped (`\\`, `\n`, and nothing else: a carriage return stays as it is) and the line
//! starts with `\`. Standard input is `-`.

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
}
