//! The text of plan, list and part files: one record per line, fields separated by one
//! space, each field printable ASCII. Bytes that are not (and `%`) are written `%XX`, so
//! any file name (non-UTF-8, with spaces or newlines) survives a round trip.

use std::fmt::Write as _;

/// `bytes` as one field.
pub(crate) fn esc(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'%' {
            s.push(b as char);
        } else {
            let _ = write!(s, "%{b:02X}");
        }
    }
    s
}

/// The bytes of a field written by [`esc`]; `None` if it is not one.
pub(crate) fn unesc(field: &str) -> Option<Vec<u8>> {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = field.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else if b[i].is_ascii_graphic() {
            out.push(b[i]);
            i += 1;
        } else {
            return None;
        }
    }
    Some(out)
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The bytes of lowercase or uppercase hex.
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_with_spaces_newlines_and_invalid_utf8_survive() {
        let name = b"a b\n%c\xff\x00/\xc3\xa9";
        let e = esc(name);
        assert!(e.bytes().all(|b| b.is_ascii_graphic()), "{e}");
        assert_eq!(e, "a%20b%0A%25c%FF%00/%C3%A9");
        assert_eq!(unesc(&e).unwrap(), name);
        assert_eq!(unesc("bad%2"), None);
        assert_eq!(unesc("bad%zz"), None);
        assert_eq!(unesc("tab\there"), None);
    }

    proptest! {
        #[test]
        fn any_bytes_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(unesc(&esc(&bytes)).unwrap(), bytes.clone());
            prop_assert_eq!(unhex(&hex(&bytes)).unwrap(), bytes);
        }
    }
}
