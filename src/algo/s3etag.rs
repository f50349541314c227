//! The ETag Amazon S3 gives an object uploaded by the AWS CLI (and boto3, s3transfer):
//! a file smaller than the part size goes up in one `PutObject` and its ETag is the MD5 of
//! its bytes; a larger one (or one of exactly the part size) goes up in parts of that
//! size (the last one shorter) and its ETag is the MD5 of the concatenated binary MD5s
//! of the parts, followed by `-N`, N the number of parts. The part size is a parameter:
//! `s3etag` is the AWS CLI's default (`multipart_chunksize` 8 MiB, with
//! `multipart_threshold` 8 MiB), `s3etag-16MiB` another. As s3transfer does, when the
//! size is known and would need more than 10,000 parts, the part size is doubled until
//! it fits. The digest is 20 bytes, the MD5 and the part count (0 for a single upload),
//! printed by [`Encoding::S3Etag`].
//!
//! The rows of sizes other than 8 MiB are made on first use, as BLAKE2b's shorter rows
//! are (see [`s3etag_part`]); their part size is read back from the row's name.

use super::md5::Md5;
use super::{ALGORITHMS, Algorithm, Hasher, Input, Strength};
use crate::digest::{Digest, ETAG_LEN, Encoding};
use std::sync::Mutex;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The AWS CLI's default part size and multipart threshold (8 MiB).
pub const DEFAULT_PART: u64 = 8 * MIB;
/// S3's smallest part (all but the last): 5 MiB.
pub const MIN_PART: u64 = 5 * MIB;
/// S3's largest part: 5 GiB.
pub const MAX_PART: u64 = 5 * GIB;
/// S3's most parts in one upload.
const MAX_PARTS: u64 = 10_000;

/// How the rows are named: `s3etag`, `s3etag-16mib`.
pub(super) const PREFIX: &str = "s3etag";

/// The part size a normalized name (`s3etag16mib`, see [`super::normalize`]) asks for:
/// a decimal number with no leading zero, then a unit (`k`, `kb`, `kib`, `m`, `mb`,
/// `mib`, `g`, `gb`, `gib`, all powers of 1024 as the AWS CLI and s3cmd read them) or
/// none (bytes). `None` for any other text.
pub(super) fn part_in_name(normalized: &str) -> Option<u64> {
    size_in(normalized.strip_prefix(PREFIX)?)
}

/// A part size as names spell it: a decimal number with no leading zero, then a unit or
/// none (see [`part_in_name`]).
pub(super) fn size_in(text: &str) -> Option<u64> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || text.starts_with('0') || digits > 12 {
        return None;
    }
    let n: u64 = text[..digits].parse().ok()?;
    let unit = match &text[digits..] {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        _ => return None,
    };
    n.checked_mul(unit)
}

/// The row for parts of `part` bytes: the registered `s3etag` for 8 MiB, otherwise a row
/// named `s3etag-SIZE` (`s3etag-16mib`, tagged `S3ETAG-16MiB`), made once and kept for the
/// life of the process. `None` outside S3's part sizes (5 MiB to 5 GiB).
pub fn s3etag_part(part: u64) -> Option<&'static Algorithm> {
    static MADE: Mutex<Vec<&'static Algorithm>> = Mutex::new(Vec::new());
    if !(MIN_PART..=MAX_PART).contains(&part) {
        return None;
    }
    if part == DEFAULT_PART {
        return ALGORITHMS.iter().find(|a| a.name == PREFIX);
    }
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(row) = made.iter().find(|a| part_of(a) == part) {
        return Some(row);
    }
    let (n, unit) = size_words(part);
    // Leaked once per part size asked for in this process.
    let name: &'static str = String::leak(format!("{PREFIX}-{n}{}", unit.to_ascii_lowercase()));
    let tag: &'static str = String::leak(format!("S3ETAG-{n}{unit}"));
    let row: &'static Algorithm = Box::leak(Box::new(Algorithm { tag, ..row(name) }));
    made.push(row);
    Some(row)
}

/// The fields every `s3etag` row shares.
const fn row(name: &'static str) -> Algorithm {
    Algorithm::base(name, "S3ETAG", ETAG_LEN, Strength::Broken, Encoding::S3Etag, hasher)
}

/// The registered row, `s3etag` (8 MiB parts).
pub(super) const fn registered() -> Algorithm {
    Algorithm { aliases: &["awsetag"], extensions: &["s3etag"], ..row(PREFIX) }
}

/// `part` as a number and a unit: the largest of GiB, MiB, KiB that divides it, else bytes.
pub(super) fn size_words(part: u64) -> (u64, &'static str) {
    for (unit, word) in [(GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")] {
        if part.is_multiple_of(unit) {
            return (part / unit, word);
        }
    }
    (part, "")
}

/// The part size of an `s3etag` row, from its name.
pub fn part_of(row: &Algorithm) -> u64 {
    part_in_name(&super::normalize(row.name)).unwrap_or(DEFAULT_PART)
}

fn hasher(row: &Algorithm) -> Box<dyn Hasher> {
    Box::new(S3Etag::new(part_of(row)))
}

/// Cuts `data` at the ends of parts of `part` bytes (`in_part` of the current one fed
/// already, kept up to date): `on(chunk, ends)` for each piece, `ends` when it completes
/// its part. The ETag and the composite checksums ([`super::s3parts`]) share it.
pub(super) fn in_parts(
    part: u64,
    in_part: &mut u64,
    mut data: &[u8],
    mut on: impl FnMut(&[u8], bool),
) {
    while !data.is_empty() {
        let take = ((part - *in_part) as usize).min(data.len());
        *in_part += take as u64;
        let ends = *in_part == part;
        if ends {
            *in_part = 0;
        }
        on(&data[..take], ends);
        data = &data[take..];
    }
}

/// The running ETag: an MD5 of the current part and one of the finished parts' MD5s.
#[derive(Clone)]
pub(super) struct S3Etag {
    /// Files of at least this many bytes are uploaded in parts (the AWS CLI's
    /// `multipart_threshold`, here the part size asked for).
    threshold: u64,
    /// The part size, doubled by [`Hasher::begin`] for a file of more than 10,000 parts.
    part: u64,
    current: Md5,
    in_part: u64,
    list: Md5,
    parts: u32,
}

impl S3Etag {
    /// An ETag of parts of `part` bytes (no bounds: the tests use small parts).
    pub(super) fn new(part: u64) -> S3Etag {
        S3Etag {
            threshold: part,
            part,
            current: Md5::new(),
            in_part: 0,
            list: Md5::new(),
            parts: 0,
        }
    }
}

impl Hasher for S3Etag {
    fn begin(&mut self, input: &Input) {
        if let Some(size) = input.size {
            while size.div_ceil(self.part) > MAX_PARTS {
                self.part *= 2;
            }
        }
    }

    fn update(&mut self, data: &[u8]) {
        in_parts(self.part, &mut self.in_part, data, |chunk, ends| {
            self.current.update(chunk);
            if ends {
                self.list.update(self.current.finish().as_bytes());
                self.current = Md5::new();
                self.parts += 1;
            }
        });
    }

    fn finish(&self) -> Digest {
        let total = self.parts as u64 * self.part + self.in_part;
        let mut out = [0u8; ETAG_LEN];
        if total < self.threshold {
            // One PutObject: the MD5 of the bytes, no part count.
            out[..16].copy_from_slice(self.current.finish().as_bytes());
            return Digest::new(&out);
        }
        let mut list = self.list.clone();
        let mut parts = self.parts;
        if self.in_part > 0 || parts == 0 {
            list.update(self.current.finish().as_bytes());
            parts += 1;
        }
        out[..16].copy_from_slice(list.finish().as_bytes());
        out[16..].copy_from_slice(&parts.to_be_bytes());
        Digest::new(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::{by_tag, lookup};

    fn etag(part: u64, data: &[u8]) -> String {
        let mut h = S3Etag::new(part);
        h.update(data);
        h.finish().encode(Encoding::S3Etag)
    }

    fn md5_hex(data: &[u8]) -> String {
        let mut h = Md5::new();
        h.update(data);
        h.finish().to_hex()
    }

    /// The multipart rule written out plainly: MD5 over the parts' binary MD5s, `-N`.
    fn by_hand(part: usize, data: &[u8]) -> String {
        if data.len() < part {
            return md5_hex(data);
        }
        let mut list = Vec::new();
        for p in data.chunks(part) {
            let mut h = Md5::new();
            h.update(p);
            list.extend_from_slice(h.finish().as_bytes());
        }
        format!("{}-{}", md5_hex(&list), data.len().div_ceil(part))
    }

    #[test]
    fn parts_and_boundaries() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        for part in [1usize, 64, 100, 1000] {
            for len in [0, 1, part - 1, part, part + 1, 3 * part - 1, 3 * part, 3 * part + 1] {
                let d = &data[..len.min(data.len())];
                assert_eq!(etag(part as u64, d), by_hand(part, d), "part {part}, {len} bytes");
            }
        }
        // Below the part size: the plain MD5; exactly one part: `-1`.
        assert_eq!(etag(100, b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(etag(100, b"abc"), "900150983cd24fb0d6963f7d28e17f72");
        let one = etag(3, b"abc");
        assert!(one.ends_with("-1") && one != md5_hex(b"abc"), "{one}");
        // Fed in pieces that straddle the parts.
        let mut h = S3Etag::new(64);
        for piece in data[..1000].chunks(37) {
            h.update(piece);
        }
        assert_eq!(h.finish().encode(Encoding::S3Etag), by_hand(64, &data[..1000]));
    }

    /// Cloudflare R2's documentation (multipart objects): parts whose ETags are
    /// bce6bf66aeb76c7040fdd5f4eccb78e6 and 8165449fc15bbf43d3b674595cbcc406 make the
    /// object's ETag f77dc0eecdebcd774a2a22cb393ad2ff-2, the S3 rule.
    #[test]
    fn the_combination_of_part_md5s_matches_a_published_example() {
        let mut list = Md5::new();
        for part in ["bce6bf66aeb76c7040fdd5f4eccb78e6", "8165449fc15bbf43d3b674595cbcc406"] {
            list.update(Digest::from_hex(part.as_bytes()).unwrap().as_bytes());
        }
        assert_eq!(list.finish().to_hex(), "f77dc0eecdebcd774a2a22cb393ad2ff");
    }

    #[test]
    fn more_than_ten_thousand_parts_double_the_part_size() {
        // 10,000 parts of 1 byte fit; 10,001 bytes take parts of 2 (5,001 of them).
        let data = vec![7u8; 10_001];
        let mut h = S3Etag::new(1);
        h.begin(&Input { size: Some(10_000), name: b"f" });
        h.update(&data[..10_000]);
        assert!(h.finish().encode(Encoding::S3Etag).ends_with("-10000"));
        let mut h = S3Etag::new(1);
        h.begin(&Input { size: Some(10_001), name: b"f" });
        h.update(&data);
        assert_eq!(h.finish().encode(Encoding::S3Etag), by_hand(2, &data));
    }

    #[test]
    fn rows_by_part_size() {
        let default = lookup("s3etag").unwrap();
        assert_eq!(part_of(default), DEFAULT_PART);
        assert_eq!(lookup("S3ETAG-8MiB"), Some(default));
        assert_eq!(lookup("s3etag-8mb"), Some(default));
        assert_eq!(lookup("s3etag-8388608"), Some(default));
        let r16 = lookup("s3etag-16MiB").unwrap();
        assert_eq!((r16.name, r16.tag, part_of(r16)), ("s3etag-16mib", "S3ETAG-16MiB", 16 * MIB));
        assert!(std::ptr::eq(r16, lookup("s3etag_16m").unwrap()), "made once");
        assert_eq!(by_tag("S3ETAG-16MiB"), Some(r16));
        assert_eq!(lookup("s3etag-1GiB").unwrap().name, "s3etag-1gib");
        assert_eq!(lookup("s3etag-5242881").unwrap().tag, "S3ETAG-5242881");
        assert_eq!(lookup("s3etag-5120k").unwrap().name, "s3etag-5mib");
        assert!(!ALGORITHMS.contains(r16), "not listed");
        for bad in ["s3etag-4mib", "s3etag-6gib", "s3etag-016mib", "s3etag-16tb", "s3etag-mib"] {
            assert_eq!(lookup(bad), None, "{bad}");
        }
        // The part size is the row's: 16 MiB parts give one part for 9 MiB.
        let data = vec![1u8; 9 * MIB as usize];
        assert!(default.digest(&data).encode(Encoding::S3Etag).ends_with("-2"));
        assert_eq!(r16.digest(&data).encode(Encoding::S3Etag), md5_hex(&data));
    }
}
