//! S3's composite checksums of a multipart upload: the checksum (CRC32, CRC32C, SHA-1 or
//! SHA-256) of the concatenated binary checksums of the parts, which S3 shows as
//! `VALUE-N` (N the part count) with `x-amz-checksum-type: COMPOSITE`. As for the ETag
//! ([`super::s3etag`]), the part size is a parameter: `s3parts-sha256-8MiB` is the
//! composite SHA-256 of 8 MiB parts (the last one shorter). An input of no more than one
//! part is one part (a multipart upload of one part, as S3 shows it: `VALUE-1`), the
//! checksum of the checksum of the whole input.
//!
//! The rows are made on first use and kept for the life of the process, their inner
//! algorithm and part size read back from their names.

use super::s3etag::{MAX_PART, in_parts, size_in, size_words};
use super::{ALGORITHMS, Algorithm, Hasher, Input};
use std::sync::Mutex;

/// How the rows are named: `s3parts-INNER-SIZE`.
pub(super) const PREFIX: &str = "s3parts";

/// The algorithms S3 keeps composite checksums of, as the registry names them.
const INNER: &[&str] = &["crc32c", "crc32", "crc64nvme", "sha256", "sha1"];

/// The inner algorithm's name and the part size a normalized name
/// (`s3partssha2568mib`, see [`super::normalize`]) asks for: `None` for any other text.
pub(super) fn in_name(normalized: &str) -> Option<(&'static str, u64)> {
    let rest = normalized.strip_prefix(PREFIX)?;
    INNER.iter().find_map(|inner| {
        let size = rest.strip_prefix(inner)?;
        Some((*inner, size_in(size).filter(|&p| p > 0)?))
    })
}

/// The row of the composite `inner` checksum of parts of `part` bytes, or `None` when S3
/// keeps no composite checksum of that algorithm or the part size is 0 or past S3's largest
/// part (5 GiB; smaller parts than S3's 5 MiB are taken, as other stores allow them).
pub fn s3parts(inner: &str, part: u64) -> Option<&'static Algorithm> {
    static MADE: Mutex<Vec<&'static Algorithm>> = Mutex::new(Vec::new());
    let inner = *INNER.iter().find(|i| **i == inner)?;
    // Past S3's largest part a name could not say the size (and no upload has such parts).
    if part == 0 || part > MAX_PART {
        return None;
    }
    let base = ALGORITHMS.iter().find(|a| a.name == inner)?;
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(row) = made.iter().find(|a| parts_of(a) == Some((inner, part))) {
        return Some(row);
    }
    let (n, unit) = size_words(part);
    // Leaked once per (algorithm, part size) asked for in this process.
    let name: &'static str =
        String::leak(format!("{PREFIX}-{inner}-{n}{}", unit.to_ascii_lowercase()));
    let tag: &'static str = String::leak(format!("S3PARTS-{}-{n}{unit}", base.tag));
    let row: &'static Algorithm = Box::leak(Box::new(Algorithm::base(
        name,
        tag,
        base.len,
        base.strength,
        base.encoding,
        hasher,
    )));
    made.push(row);
    Some(row)
}

/// The inner algorithm and part size of an `s3parts` row, from its name.
pub fn parts_of(row: &Algorithm) -> Option<(&'static str, u64)> {
    in_name(&super::normalize(row.name))
}

fn hasher(row: &Algorithm) -> Box<dyn Hasher> {
    let (inner, part) = parts_of(row).expect("an s3parts row is named by s3parts()");
    let inner = ALGORITHMS.iter().find(|a| a.name == inner).expect("a registered algorithm");
    Box::new(Composite { inner, part, current: inner.hasher(), in_part: 0, list: Vec::new() })
}

/// The running composite: the current part's state and the finished parts' checksums.
struct Composite {
    inner: &'static Algorithm,
    part: u64,
    current: Box<dyn Hasher>,
    in_part: u64,
    /// The concatenated binary checksums of the finished parts (at most 10,000 parts in
    /// S3, so at most 320 KB).
    list: Vec<u8>,
}

impl Hasher for Composite {
    fn begin(&mut self, input: &Input) {
        self.current.begin(input);
    }

    fn update(&mut self, data: &[u8]) {
        in_parts(self.part, &mut self.in_part, data, |chunk, ends| {
            self.current.update(chunk);
            if ends {
                self.list.extend_from_slice(self.current.finish().as_bytes());
                self.current = self.inner.hasher();
            }
        });
    }

    fn finish(&self) -> crate::digest::Digest {
        let mut list = self.list.clone();
        if self.in_part > 0 || list.is_empty() {
            list.extend_from_slice(self.current.finish().as_bytes());
        }
        let mut outer = self.inner.hasher();
        outer.update(&list);
        outer.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::lookup;

    const MIB: u64 = 1 << 20;

    fn one(name: &str, data: &[u8]) -> Vec<u8> {
        let mut h = lookup(name).unwrap().hasher();
        h.update(data);
        h.finish().as_bytes().to_vec()
    }

    /// The rule written out plainly: the checksum over the parts' binary checksums.
    fn by_hand(inner: &str, part: usize, data: &[u8]) -> Vec<u8> {
        let mut list = Vec::new();
        for chunk in data.chunks(part) {
            list.extend(one(inner, chunk));
        }
        if data.is_empty() {
            list.extend(one(inner, b""));
        }
        one(inner, &list)
    }

    #[test]
    fn names_round_trip() {
        let row = s3parts("sha256", 8 * MIB).unwrap();
        assert_eq!(row.name, "s3parts-sha256-8mib");
        assert_eq!(row.tag, "S3PARTS-SHA256-8MiB");
        assert_eq!(parts_of(row), Some(("sha256", 8 * MIB)));
        assert!(std::ptr::eq(lookup("S3PARTS-SHA256-8MiB").unwrap(), row));
        assert_eq!(parts_of(s3parts("crc32", 5 * MIB).unwrap()), Some(("crc32", 5 * MIB)));
        assert_eq!(parts_of(s3parts("crc32c", 1000).unwrap()), Some(("crc32c", 1000)));
        assert!(s3parts("md5", MIB).is_none());
        assert!(s3parts("sha256", 0).is_none());
        // Every part size up to S3's largest reads back from its row's name (the fuzz
        // target found a size too long to name).
        assert!(s3parts("sha256", MAX_PART + 1).is_none() && s3parts("crc32", u64::MAX).is_none());
        for part in [1, 1023, 1025, 5 * MIB + 1, MAX_PART - 1, MAX_PART, 999_999_999_999 % MAX_PART]
        {
            let row = s3parts("crc32c", part).unwrap();
            assert_eq!(parts_of(row), Some(("crc32c", part)), "{part}");
        }
        assert!(lookup("s3parts-sha256-08mib").is_none());
        assert!(lookup("s3parts-blake3-8mib").is_none());
    }

    #[test]
    fn composite_matches_the_rule_at_every_boundary() {
        let data: Vec<u8> =
            (0..10_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for inner in INNER {
            for part in [1000usize, 999, 4096] {
                let row = s3parts(inner, part as u64).unwrap();
                for len in [0, 1, 999, 1000, 1001, 2000, 4096, 9999, 10_000] {
                    let d = &data[..len];
                    // Fed in odd-sized pieces, across the part boundaries.
                    let mut h = row.hasher();
                    for piece in d.chunks(333) {
                        h.update(piece);
                    }
                    assert_eq!(
                        h.finish().as_bytes(),
                        by_hand(inner, part, d),
                        "{inner} {part} {len}"
                    );
                }
            }
        }
    }

    /// An upload of one part: the checksum of the whole input's checksum.
    #[test]
    fn one_part_is_the_checksum_of_the_checksum() {
        let whole = one("sha256", b"hello");
        assert_eq!(one("s3parts-sha256-5mib", b"hello"), one("sha256", &whole));
    }
}
