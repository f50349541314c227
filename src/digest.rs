//! A digest value: the bytes an algorithm produced, with hex conversion and a
//! constant-time comparison (a check must not leak how much of a digest matched).

use std::fmt;

/// The largest digest any registered algorithm produces, in bytes (SHA-512, BLAKE2b).
pub const MAX_DIGEST_LEN: usize = 64;

/// The output of one hash computation. Small and `Copy`, so results can be passed
/// between threads without allocating.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    len: u8,
    bytes: [u8; MAX_DIGEST_LEN],
}

impl Digest {
    /// Wraps `bytes` (at most [`MAX_DIGEST_LEN`] of them).
    pub fn new(bytes: &[u8]) -> Digest {
        assert!(bytes.len() <= MAX_DIGEST_LEN, "digest longer than {MAX_DIGEST_LEN} bytes");
        let mut out = [0u8; MAX_DIGEST_LEN];
        out[..bytes.len()].copy_from_slice(bytes);
        Digest { len: bytes.len() as u8, bytes: out }
    }

    /// The digest's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Lowercase hex, as every `*sum` tool prints it.
    pub fn to_hex(&self) -> String {
        hex_encode(self.as_bytes(), false)
    }

    /// Uppercase hex, as SFV files carry CRC32 values.
    pub fn to_hex_upper(&self) -> String {
        hex_encode(self.as_bytes(), true)
    }

    /// Parses a hex digest (either case). `None` on odd length, a non-hex character, or
    /// more than [`MAX_DIGEST_LEN`] bytes.
    pub fn from_hex(text: &[u8]) -> Option<Digest> {
        if text.is_empty() || !text.len().is_multiple_of(2) || text.len() / 2 > MAX_DIGEST_LEN {
            return None;
        }
        let mut out = [0u8; MAX_DIGEST_LEN];
        for (i, pair) in text.chunks_exact(2).enumerate() {
            out[i] = (hex_value(pair[0])? << 4) | hex_value(pair[1])?;
        }
        Some(Digest { len: (text.len() / 2) as u8, bytes: out })
    }

    /// Compares in time that depends only on the lengths, never on where the first
    /// differing byte is.
    pub fn ct_eq(&self, other: &Digest) -> bool {
        if self.len != other.len {
            return false;
        }
        let diff =
            self.as_bytes().iter().zip(other.as_bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        diff == 0
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Hex-encodes `bytes`.
pub fn hex_encode(bytes: &[u8], upper: bool) -> String {
    let table = if upper { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(table[(b >> 4) as usize] as char);
        s.push(table[(b & 15) as usize] as char);
    }
    s
}

/// Whether every byte of `text` is a hex digit.
pub fn is_hex(text: &[u8]) -> bool {
    !text.is_empty() && text.iter().all(u8::is_ascii_hexdigit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let d = Digest::new(&[0x00, 0xab, 0xff, 0x10]);
        assert_eq!(d.to_hex(), "00abff10");
        assert_eq!(d.to_hex_upper(), "00ABFF10");
        assert_eq!(Digest::from_hex(b"00ABff10"), Some(d));
    }

    #[test]
    fn from_hex_rejects_bad_input() {
        assert_eq!(Digest::from_hex(b""), None);
        assert_eq!(Digest::from_hex(b"abc"), None);
        assert_eq!(Digest::from_hex(b"zz"), None);
        assert_eq!(Digest::from_hex(&[b'a'; 130]), None);
    }

    #[test]
    fn ct_eq_compares_length_and_bytes() {
        let a = Digest::new(&[1, 2, 3]);
        assert!(a.ct_eq(&Digest::new(&[1, 2, 3])));
        assert!(!a.ct_eq(&Digest::new(&[1, 2, 4])));
        assert!(!a.ct_eq(&Digest::new(&[1, 2])));
    }
}
