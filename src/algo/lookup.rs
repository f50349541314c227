//! Finding a registry row: by a name users type, a BSD tag, a tool's name, a digest
//! length or a manifest's file name; BLAKE2b's shortened rows.

use super::{ALGORITHMS, Algorithm, Encoding, Strength, impls, s3etag, s3parts};
use std::sync::OnceLock;

/// Folds a user-typed algorithm name to the registry's spelling: lowercase, with `-`,
/// `_` and spaces removed (`SHA-256`, `sha_256` and `sha256` are one name).
pub fn normalize(name: &str) -> String {
    name.chars().filter(|c| !matches!(c, '-' | '_' | ' ')).flat_map(char::to_lowercase).collect()
}

/// The algorithm a drop-in tool computes, by the tool's name (`sha256sum`, `xxh128sum`).
pub fn by_tool(tool: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.tools.contains(&tool))
}

/// Looks an algorithm up by any of its names, case-insensitively; `blake2b-BITS` (any
/// spelling, `BLAKE2b_256`) is BLAKE2b with that output length (see [`blake2b_bits`]),
/// `s3etag-SIZE` (`s3etag-16MiB`) the S3 ETag of parts of that size
/// (see [`super::s3etag_part`]), `s3parts-INNER-SIZE` S3's composite checksum of parts of
/// that size (see [`super::s3parts`]).
pub fn lookup(name: &str) -> Option<&'static Algorithm> {
    let want = normalize(name);
    ALGORITHMS
        .iter()
        .find(|a| normalize(a.name) == want || a.aliases.contains(&want.as_str()))
        .or_else(|| blake2b_bits(bits_after(&want, "blake2b")?))
        .or_else(|| s3etag::s3etag_part(s3etag::part_in_name(&want)?))
        .or_else(|| {
            let (inner, part) = s3parts::in_name(&want)?;
            s3parts::s3parts(inner, part)
        })
}

/// Looks an algorithm up by the tag of a BSD-style line (`SHA256`, `BLAKE2b`, ...).
/// Exact tags win; then any name or alias, case-insensitively. `BLAKE2b-256`, as
/// `b2sum -l 256 --tag` writes it, is the 256-bit BLAKE2b row.
pub fn by_tag(tag: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.tag == tag).or_else(|| lookup(tag))
}

/// The decimal number `text` holds after `prefix`, with no sign and no leading zero.
fn bits_after(text: &str, prefix: &str) -> Option<u32> {
    let digits = text.strip_prefix(prefix)?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// How the rows of shortened BLAKE2b are named: `blake2b-256`.
pub(super) const BLAKE2B_PREFIX: &str = "blake2b-";

/// BLAKE2b with an output of `bits` bits (`b2sum -l BITS`, `cksum -a blake2b -l BITS`):
/// a multiple of 8 from 8 to 512. The output length is a parameter of BLAKE2b itself
/// (RFC 7693 section 2.5), so BLAKE2b-256 is not a truncation of BLAKE2b-512. 512 is the
/// registered `blake2b` row; any other length has a row of its own, named `blake2b-BITS`
/// and tagged `BLAKE2b-BITS` as coreutils tags it, made on first use and kept for the
/// life of the process. These rows are not in [`ALGORITHMS`] (`fixity algorithms` does not
/// list 63 variants of one function), but [`lookup`] and [`by_tag`] find them.
pub fn blake2b_bits(bits: u32) -> Option<&'static Algorithm> {
    static SHORT: [OnceLock<Algorithm>; 63] = [const { OnceLock::new() }; 63];
    if bits == 0 || !bits.is_multiple_of(8) || bits > 512 {
        return None;
    }
    if bits == 512 {
        return ALGORITHMS.iter().find(|a| a.name == "blake2b");
    }
    Some(SHORT[bits as usize / 8 - 1].get_or_init(|| {
        // Leaked once per length (at most 63 pairs of short strings).
        let name: &'static str = String::leak(format!("{BLAKE2B_PREFIX}{bits}"));
        let tag: &'static str = String::leak(format!("BLAKE2b-{bits}"));
        let len = bits as usize / 8;
        Algorithm::base(name, tag, len, Strength::Cryptographic, Encoding::Hex, impls::blake2b)
    }))
}

/// Every algorithm whose digest is `len` bytes long.
pub fn by_len(len: usize) -> impl Iterator<Item = &'static Algorithm> {
    ALGORITHMS.iter().filter(move |a| a.len == len)
}

/// Guesses the algorithm from a manifest's file name: `x.sha256`, `SHA256SUMS`,
/// `md5sums.txt`, `files.b3`. Returns `None` when the name says nothing.
pub fn by_file_name(name: &[u8]) -> Option<&'static Algorithm> {
    let lower: Vec<u8> = name.to_ascii_lowercase();
    let base = match lower.iter().rposition(|&b| b == b'/') {
        Some(i) => &lower[i + 1..],
        None => &lower[..],
    };
    // Take the last extension, and the one before it when the last is a generic text one
    // (`sha256sums.txt`), and the whole base name (`SHA256SUMS`).
    let mut candidates: Vec<&[u8]> = Vec::new();
    let parts: Vec<&[u8]> = base.split(|&b| b == b'.').collect();
    if let Some(last) = parts.last() {
        candidates.push(last);
        if matches!(*last, b"txt" | b"asc" | b"lst" | b"list") && parts.len() >= 2 {
            candidates.push(parts[parts.len() - 2]);
        }
    }
    candidates.push(base);
    for cand in candidates {
        let cand = std::str::from_utf8(cand).ok()?;
        if let Some(a) = ALGORITHMS.iter().find(|a| a.extensions.contains(&cand)) {
            return Some(a);
        }
    }
    None
}

/// Parses a comma-separated list (`md5,sha1,b3`), rejecting unknown names and repeats.
pub fn parse_list(list: &str) -> Result<Vec<&'static Algorithm>, String> {
    let mut out: Vec<&'static Algorithm> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let algo = lookup(name).ok_or_else(|| {
            format!("unknown algorithm '{name}' (`fixity algorithms` lists them)")
        })?;
        if !out.contains(&algo) {
            out.push(algo);
        }
    }
    if out.is_empty() {
        return Err("no algorithm given".into());
    }
    Ok(out)
}

/// The algorithm used when none is asked for.
pub fn default_algorithm() -> &'static Algorithm {
    lookup("blake3").expect("blake3 is registered")
}
