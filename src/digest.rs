//! A digest value: the bytes an algorithm produced, with hex conversion and a
//! constant-time comparison (a check must not leak how much of a digest matched).

use std::fmt;

/// The largest digest any registered algorithm produces, in bytes (SHA-512, BLAKE2b).
pub(crate) const MAX_DIGEST_LEN: usize = 64;

/// The output of one hash computation. Small and `Copy`, so results can be passed
/// between threads without allocating.
#[derive(Clone, Copy)]
pub struct Digest {
    len: u8,
    bytes: [u8; MAX_DIGEST_LEN],
}

impl Digest {
    /// Wraps `bytes` (at most `MAX_DIGEST_LEN` of them).
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
    pub(crate) fn to_hex_upper(self) -> String {
        hex_encode(self.as_bytes(), true)
    }

    /// Parses a hex digest (either case). `None` on odd length, a non-hex character, or
    /// more than [`MAX_DIGEST_LEN`] bytes.
    pub(crate) fn from_hex(text: &[u8]) -> Option<Digest> {
        if text.is_empty() || !text.len().is_multiple_of(2) || text.len() / 2 > MAX_DIGEST_LEN {
            return None;
        }
        let mut out = [0u8; MAX_DIGEST_LEN];
        for (i, pair) in text.chunks_exact(2).enumerate() {
            out[i] = (hex_value(pair[0])? << 4) | hex_value(pair[1])?;
        }
        Some(Digest { len: (text.len() / 2) as u8, bytes: out })
    }

    /// RFC 4648 base32, uppercase, without padding: how rhash prints TTH and AICH.
    pub fn to_base32(&self) -> String {
        base32_encode(self.as_bytes())
    }

    /// RFC 4648 base64 with padding: how `cksum --base64` prints digests.
    pub fn to_base64(&self) -> String {
        base64_encode(self.as_bytes())
    }

    /// Writes the digest in `encoding`.
    pub(crate) fn encode(&self, encoding: Encoding) -> String {
        match encoding {
            Encoding::Hex => self.to_hex(),
            Encoding::HexUpper => self.to_hex_upper(),
            Encoding::Base32 => self.to_base32(),
            Encoding::Base64 => self.to_base64(),
            Encoding::S3Etag => etag_text(self),
        }
    }

    /// Parses base32 (either case, padding optional). `None` on a character outside the
    /// alphabet, bits left over that are not zero, or more than [`MAX_DIGEST_LEN`] bytes.
    pub(crate) fn from_base32(text: &[u8]) -> Option<Digest> {
        let text = trim_padding(text);
        if !matches!(text.len() % 8, 0 | 2 | 4 | 5 | 7) {
            return None;
        }
        decode_bits(text, 5, |c| match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a'),
            b'2'..=b'7' => Some(c - b'2' + 26),
            _ => None,
        })
    }

    /// Parses base64 (standard alphabet; padding optional). `None` on a character outside
    /// the alphabet, bits left over that are not zero, or more than [`MAX_DIGEST_LEN`] bytes.
    pub(crate) fn from_base64(text: &[u8]) -> Option<Digest> {
        let text = trim_padding(text);
        if text.len() % 4 == 1 {
            return None;
        }
        decode_bits(text, 6, |c| match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        })
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

/// Unit tests compare parsed records whole (`assert_eq!`); outside tests a `Digest` has no
/// `==`, so every comparison goes through [`Digest::ct_eq`] (see `check::digests_match`).
#[cfg(test)]
impl PartialEq for Digest {
    fn eq(&self, other: &Digest) -> bool {
        self.ct_eq(other)
    }
}

#[cfg(test)]
impl Eq for Digest {}

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

/// A digest as a manifest line writes it (hex, base32 or base64), kept as text until the
/// line's algorithm is known: `A` x 32 is 16 bytes in hex but 20 in base32.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct DigestText {
    len: u8,
    text: [u8; MAX_TEXT_LEN],
}

/// The longest digest text: 64 bytes in hex.
pub(crate) const MAX_TEXT_LEN: usize = MAX_DIGEST_LEN * 2;

impl DigestText {
    /// Wraps `text` if it could be a digest in some encoding: 1 to [`MAX_TEXT_LEN`]
    /// characters of the hex, base32 and base64 alphabets (padding `=` only at the end).
    pub(crate) fn new(text: &[u8]) -> Option<DigestText> {
        if text.is_empty() || text.len() > MAX_TEXT_LEN {
            return None;
        }
        let body = trim_padding(text);
        let alphabet = body.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/');
        if body.is_empty() || !(alphabet || etag_parts(text).is_some()) {
            return None;
        }
        let mut buf = [0u8; MAX_TEXT_LEN];
        buf[..text.len()].copy_from_slice(text);
        Some(DigestText { len: text.len() as u8, text: buf })
    }

    /// The text as written.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.text[..self.len as usize]
    }

    /// The digest of a `len`-byte algorithm whose own encoding is `native`: the text's
    /// length says which encoding it is in (hex, base32, base64); `None` if it fits none.
    /// When hex and base64 have the same length (4 and 48 bytes), hex is tried first.
    pub(crate) fn decode(&self, len: usize, native: Encoding) -> Option<Digest> {
        let t = self.as_bytes();
        // An ETag is written in its own form only.
        if native == Encoding::S3Etag {
            return native.decode(t).filter(|d| d.as_bytes().len() == len);
        }
        let order = [native, Encoding::Hex, Encoding::Base32, Encoding::Base64];
        order.iter().find_map(|&e| {
            (e.text_len(len) == t.len())
                .then(|| e.decode(t))
                .flatten()
                .filter(|d| d.as_bytes().len() == len)
        })
    }

    /// The digest in `encoding` alone, whatever its length.
    pub fn decode_as(&self, encoding: Encoding) -> Option<Digest> {
        encoding.decode(self.as_bytes())
    }
}

impl fmt::Debug for DigestText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DigestText({})", String::from_utf8_lossy(self.as_bytes()))
    }
}

/// How a digest is written as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Encoding {
    /// Lowercase hex (every `*sum` tool).
    #[default]
    Hex,
    /// Uppercase hex (SFV's CRC32).
    HexUpper,
    /// RFC 4648 base32, uppercase, unpadded (rhash's TTH, AICH, `--base32`).
    Base32,
    /// RFC 4648 base64, padded (`cksum --base64`, `rhash --base64`).
    Base64,
    /// An S3 ETag (the `s3etag` rows): the 16 bytes of an MD5 in hex, then `-N` when the
    /// 4 big-endian bytes after them hold a part count N (a multipart upload); a count of
    /// 0 (a single upload) prints the MD5 alone.
    S3Etag,
}

impl Encoding {
    /// Decodes `text` in this encoding.
    pub(crate) fn decode(self, text: &[u8]) -> Option<Digest> {
        match self {
            Encoding::Hex | Encoding::HexUpper => Digest::from_hex(text),
            Encoding::Base32 => Digest::from_base32(text),
            // Padded, as coreutils (`cksum --base64`) writes and requires it.
            Encoding::Base64 if text.len().is_multiple_of(4) => Digest::from_base64(text),
            Encoding::Base64 => None,
            Encoding::S3Etag => {
                let (md5, parts) = etag_parts(text)?;
                let mut bytes = [0u8; ETAG_LEN];
                bytes[..16].copy_from_slice(Digest::from_hex(md5)?.as_bytes());
                bytes[16..].copy_from_slice(&parts.to_be_bytes());
                Some(Digest::new(&bytes))
            }
        }
    }

    /// The length of a `bytes`-long digest in this encoding (with padding for base64).
    pub(crate) fn text_len(self, bytes: usize) -> usize {
        match self {
            Encoding::Hex | Encoding::HexUpper => bytes * 2,
            Encoding::Base32 => (bytes * 8).div_ceil(5),
            Encoding::Base64 => bytes.div_ceil(3) * 4,
            // The shortest form: the MD5 alone.
            Encoding::S3Etag => 32,
        }
    }
}

/// The length of an S3 ETag digest: an MD5 and a 4-byte part count.
pub(crate) const ETAG_LEN: usize = 20;

/// An ETag digest as text: `hex(md5)`, or `hex(md5)-N` for N parts.
fn etag_text(d: &Digest) -> String {
    let b = d.as_bytes();
    if b.len() != ETAG_LEN {
        // Not an ETag digest: the bytes in hex, never a made-up ETag.
        return d.to_hex();
    }
    let md5 = hex_encode(&b[..16], false);
    match u32::from_be_bytes([b[16], b[17], b[18], b[19]]) {
        0 => md5,
        n => format!("{md5}-{n}"),
    }
}

/// The hex MD5 and the part count of an ETag text: 32 hex digits, optionally followed by
/// `-N` (N a decimal from 1, without a leading zero); a count of 0 for no suffix.
fn etag_parts(text: &[u8]) -> Option<(&[u8], u32)> {
    let (md5, count) = match text.iter().position(|&c| c == b'-') {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    if md5.len() != 32 || !md5.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let parts = match count {
        None => 0,
        Some(n) => {
            if n.is_empty() || n[0] == b'0' || n.len() > 10 || !n.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let v: u64 = std::str::from_utf8(n).ok()?.parse().ok()?;
            u32::try_from(v).ok()?
        }
    };
    Some((md5, parts))
}

/// Decodes `text`, each character worth `bits` bits (`value` maps it, `None` outside the
/// alphabet); the bits left over at the end must be zero.
fn decode_bits(text: &[u8], bits: u32, value: impl Fn(u8) -> Option<u8>) -> Option<Digest> {
    if text.is_empty() || text.len() * bits as usize / 8 > MAX_DIGEST_LEN {
        return None;
    }
    let mut out = [0u8; MAX_DIGEST_LEN];
    let (mut acc, mut held, mut n) = (0u32, 0u32, 0usize);
    for &c in text {
        acc = (acc << bits) | value(c)? as u32;
        held += bits;
        if held >= 8 {
            held -= 8;
            out[n] = (acc >> held) as u8;
            n += 1;
            acc &= (1 << held) - 1;
        }
    }
    (acc == 0).then_some(Digest { len: n as u8, bytes: out })
}

fn trim_padding(text: &[u8]) -> &[u8] {
    let n = text.iter().rev().take_while(|&&c| c == b'=').count();
    &text[..text.len() - n]
}

fn base32_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut s = String::with_capacity((bytes.len() * 8).div_ceil(5));
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in bytes {
        acc = (acc << 8) | b as u32;
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            s.push(ALPHABET[((acc >> bits) & 31) as usize] as char);
        }
        acc &= (1 << bits) - 1;
    }
    if bits > 0 {
        s.push(ALPHABET[((acc << (5 - bits)) & 31) as usize] as char);
    }
    s
}

fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                s.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
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

    /// RFC 4648 section 10 test vectors.
    #[test]
    fn base32_and_base64_rfc4648_vectors() {
        let cases: &[(&str, &str, &str)] = &[
            ("f", "MY", "Zg=="),
            ("fo", "MZXQ", "Zm8="),
            ("foo", "MZXW6", "Zm9v"),
            ("foob", "MZXW6YQ", "Zm9vYg=="),
            ("fooba", "MZXW6YTB", "Zm9vYmE="),
            ("foobar", "MZXW6YTBOI", "Zm9vYmFy"),
        ];
        for &(raw, b32, b64) in cases {
            let d = Digest::new(raw.as_bytes());
            assert_eq!(d.to_base32(), b32, "{raw}");
            assert_eq!(d.to_base64(), b64, "{raw}");
            assert_eq!(Digest::from_base32(b32.as_bytes()), Some(d), "{raw}");
            assert_eq!(Digest::from_base32(b32.to_lowercase().as_bytes()), Some(d), "{raw}");
            assert_eq!(Digest::from_base64(b64.as_bytes()), Some(d), "{raw}");
            assert_eq!(Encoding::Base32.text_len(raw.len()), b32.len());
            assert_eq!(Encoding::Base64.text_len(raw.len()), b64.len());
        }
        // rhash's TTH of the empty input, base32.
        let tth = Digest::from_base32(b"LWPNACQDBZRYXW3VHJVCJ64QBZNGHOHHHZWCLNQ").unwrap();
        assert_eq!(tth.to_hex(), "5d9ed00a030e638bdb753a6a24fb900e5a63b8e73e6c25b6");
    }

    #[test]
    fn base_decoders_reject_bad_input() {
        assert_eq!(Digest::from_base32(b""), None);
        assert_eq!(Digest::from_base32(b"M1"), None); // '1' is not base32
        assert_eq!(Digest::from_base32(b"MZ"), None); // leftover bits not zero
        assert_eq!(Digest::from_base32(b"MZX"), None); // impossible length
        assert_eq!(Digest::from_base64(b"Zh=="), None); // leftover bits not zero
        assert_eq!(Digest::from_base64(b"Z"), None);
        assert_eq!(Digest::from_base64(b"Zm-v"), None);
        assert_eq!(Digest::from_base64(&[b'A'; 100]), None);
    }

    #[test]
    fn digest_text_decodes_by_length_and_encoding() {
        let raw: Vec<u8> = (0u8..20).collect();
        let d = Digest::new(&raw);
        for text in [d.to_hex(), d.to_hex_upper(), d.to_base32(), d.to_base64()] {
            let t = DigestText::new(text.as_bytes()).unwrap();
            assert_eq!(t.decode(20, Encoding::Hex), Some(d), "{text}");
            assert_eq!(t.decode(16, Encoding::Hex), None, "{text}");
        }
        // 32 characters: 16 bytes of hex, or 20 of base32.
        let b32 = DigestText::new(d.to_base32().as_bytes()).unwrap();
        assert_eq!(b32.as_bytes().len(), 32);
        assert_eq!(b32.decode(16, Encoding::Hex), None); // not hex
        let hexish = DigestText::new(b"abababababababababababababababab").unwrap();
        assert_eq!(hexish.decode(16, Encoding::Hex).unwrap().as_bytes()[0], 0xab);
        assert!(hexish.decode(20, Encoding::Base32).is_some());
        // Unpadded base64 is refused, as coreutils (`cksum -c`) refuses it.
        let b64 = d.to_base64();
        let t = DigestText::new(b64.trim_end_matches('=').as_bytes()).unwrap();
        assert_eq!(t.decode(20, Encoding::Hex), None);
        assert_eq!(t.decode_as(Encoding::Base64), None);
        assert_eq!(DigestText::new(b""), None);
        assert_eq!(DigestText::new(b"ab-cd"), None);
        assert_eq!(DigestText::new(b"=abc"), None);
        assert_eq!(DigestText::new(&[b'a'; 129]), None);
    }

    #[test]
    fn s3_etags_print_and_parse() {
        let md5 = "f77dc0eecdebcd774a2a22cb393ad2ff";
        for (text, parts) in
            [(format!("{md5}-2"), 2u32), (md5.to_string(), 0), (format!("{md5}-10000"), 10_000)]
        {
            let d = Encoding::S3Etag.decode(text.as_bytes()).unwrap();
            assert_eq!(d.as_bytes().len(), ETAG_LEN);
            assert_eq!(&d.as_bytes()[16..], parts.to_be_bytes());
            assert_eq!(d.encode(Encoding::S3Etag), text);
            let t = DigestText::new(text.as_bytes()).unwrap();
            assert_eq!(t.decode(ETAG_LEN, Encoding::S3Etag), Some(d));
            // Only the ETag form: not hex of 20 bytes.
            assert_eq!(t.decode(ETAG_LEN, Encoding::Hex), None);
        }
        for bad in [
            format!("{md5}-"),
            format!("{md5}-0"),
            format!("{md5}-02"),
            format!("{md5}-x"),
            format!("{md5}-4294967296"),
            format!("{md5}--2"),
            format!("{}-2", &md5[1..]),
            "-2".to_string(),
        ] {
            assert_eq!(Encoding::S3Etag.decode(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(DigestText::new(format!("{md5}-1-1").as_bytes()), None);
    }

    #[test]
    fn ct_eq_compares_length_and_bytes() {
        let a = Digest::new(&[1, 2, 3]);
        assert!(a.ct_eq(&Digest::new(&[1, 2, 3])));
        assert!(!a.ct_eq(&Digest::new(&[1, 2, 4])));
        assert!(!a.ct_eq(&Digest::new(&[1, 2])));
    }
}
