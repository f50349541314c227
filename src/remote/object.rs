//! What an object in object storage can prove about its content, and the judgement of one
//! object against a file's record: pure functions of the facts the listing and a HEAD gave
//! and the local digests known, so every rule is tested without a server.

use crate::algo::{self, Algorithm};
use crate::digest::Digest;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Part sizes tried for a multipart ETag or composite checksum whose part size the server
/// did not say, most common first: the AWS CLI and boto3 (8 MiB), rclone and S3's minimum
/// (5 MiB), then sizes other clients and people pick.
pub const COMMON_PARTS: &[u64] = &[
    8 * MIB,
    5 * MIB,
    16 * MIB,
    64 * MIB,
    15 * MIB,
    10 * MIB,
    32 * MIB,
    100 * MIB,
    128 * MIB,
    256 * MIB,
    512 * MIB,
    GIB,
];

/// An object as the listing shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub key: String,
    pub size: u64,
    /// The ETag without its quotes.
    pub etag: Option<String>,
    /// The checksum algorithms the listing names (registry names: crc32, crc64nvme ...),
    /// whose values only a HEAD gives.
    pub checksums: Vec<String>,
}

/// A checksum S3 keeps of an object (`x-amz-checksum-*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checksum {
    /// The registry name of its algorithm: crc64nvme, crc32c, crc32, sha256, sha1.
    pub algo: &'static str,
    pub value: Vec<u8>,
    /// `Some(N)`: a composite checksum of an upload of N parts (0: the count is the
    /// ETag's); `None`: a checksum of the whole object.
    pub parts: Option<u32>,
    /// The server said which of the two it is (`-N`, or `x-amz-checksum-type`); when it
    /// did not, a multipart object's checksum may be either, and both are tried.
    pub stated: bool,
}

/// What a HEAD of the object (with checksum mode) told.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Head {
    pub etag: Option<String>,
    pub size: u64,
    /// `x-amz-server-side-encryption`: `aws:kms` (and SSE-C) objects have ETags that are
    /// not the MD5 of their content.
    pub encryption: Option<String>,
    /// SSE-C (`x-amz-server-side-encryption-customer-algorithm` present).
    pub customer_key: bool,
    pub checksums: Vec<Checksum>,
    /// The size of part 1 (a HEAD with `partNumber=1`), for a multipart object.
    pub part1: Option<u64>,
}

/// How an object was proven to hold the recorded content, or to differ from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Proof {
    /// A full-object SHA-256 (`x-amz-checksum-sha256`).
    Sha256,
    /// A composite SHA-256 or SHA-1 of the parts.
    CompositeSha,
    /// A full-object SHA-1.
    Sha1,
    /// The streamed content's digest in the catalog's algorithm (`--download`).
    Download,
    /// A single-part ETag: the MD5 of the content.
    Md5Etag,
    /// A multipart ETag, recomputed for its part size.
    MultipartEtag,
    /// A full-object CRC64NVME.
    Crc64nvme,
    /// A full-object CRC32C.
    Crc32c,
    /// A full-object CRC32.
    Crc32,
    /// A composite CRC of the parts.
    CompositeCrc,
    /// The sizes differ (a difference only).
    Size,
}

impl Proof {
    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            Proof::Sha256 => "sha256",
            Proof::Sha1 => "sha1",
            Proof::Download => "download",
            Proof::Md5Etag => "md5-etag",
            Proof::MultipartEtag => "multipart-etag",
            Proof::CompositeSha => "composite-sha",
            Proof::Crc64nvme => "crc64nvme",
            Proof::Crc32c => "crc32c",
            Proof::Crc32 => "crc32",
            Proof::CompositeCrc => "composite-crc",
            Proof::Size => "size",
        }
    }

    /// Every proof, strongest first (the order reports list them in).
    pub const ALL: [Proof; 11] = [
        Proof::Sha256,
        Proof::CompositeSha,
        Proof::Sha1,
        Proof::Download,
        Proof::Md5Etag,
        Proof::MultipartEtag,
        Proof::Crc64nvme,
        Proof::Crc32c,
        Proof::Crc32,
        Proof::CompositeCrc,
        Proof::Size,
    ];
}

/// One comparison an object offers: the local digest it needs (an algorithm row) and
/// what that digest must be.
#[derive(Clone, Debug)]
pub struct Offer {
    pub proof: Proof,
    /// The local digest needed: an algorithm row (`md5`, `s3etag-16mib`,
    /// `s3parts-sha256-8mib`).
    pub algo: &'static Algorithm,
    /// Apply the algorithm once more to the local digest before comparing (an upload
    /// of one part: its ETag is the MD5 of the MD5, its composite the checksum of the
    /// checksum).
    pub again: bool,
    pub expect: Vec<u8>,
    /// A mismatch proves a difference (false when the part size was guessed: another part
    /// size might match).
    pub exact: bool,
}

/// A checksum header's value: base64, with `-N` for a composite of N parts.
/// `composite`: what `x-amz-checksum-type` said (COMPOSITE, FULL_OBJECT), if anything.
pub fn checksum_header(
    algo: &'static str,
    text: Option<&str>,
    composite: Option<bool>,
) -> Option<Checksum> {
    let text = text?;
    let (b64, parts) = match text.rsplit_once('-') {
        Some((b64, n)) => (b64, Some(n.parse::<u32>().ok()?)),
        None => (text, None),
    };
    let value = Digest::from_base64(b64.as_bytes())?.as_bytes().to_vec();
    // A composite whose part count the value does not carry: the count is the ETag's.
    let stated = parts.is_some() || composite.is_some();
    let parts = parts.or(if composite == Some(true) { Some(0) } else { None });
    Some(Checksum { algo, value, parts, stated })
}

/// What the ETag is: `None` when it is not an MD5-based ETag at all.
fn etag_parts(etag: &str) -> Option<(Digest, Option<u32>)> {
    let (hex, n) = match etag.split_once('-') {
        Some((hex, n)) => (hex, Some(n.parse::<u32>().ok().filter(|n| (1..=10_000).contains(n))?)),
        None => (etag, None),
    };
    if hex.len() != 32 {
        return None;
    }
    Some((Digest::from_hex(hex.as_bytes())?, n))
}

/// The part sizes a multipart upload of `n` parts of a `size`-byte object could have
/// used: the size `part1` says, else the common sizes that give `n` parts (with the
/// doubling s3transfer applies past 10,000 parts). The bool: the size is known, not guessed.
fn part_sizes(size: u64, n: u32, part1: Option<u64>) -> (Vec<u64>, bool) {
    if let Some(p) = part1.filter(|&p| p > 0) {
        return (vec![p], true);
    }
    let fits = |p: u64| size.div_ceil(p).max(1) == n as u64;
    let mut out: Vec<u64> = COMMON_PARTS.iter().copied().filter(|&p| fits(p)).collect();
    if n == 10_000 || out.is_empty() {
        // An object of more than 10,000 parts of a common size: s3transfer doubled it.
        for &p in COMMON_PARTS {
            let mut q = p;
            while size.div_ceil(q) > 10_000 {
                q *= 2;
            }
            if q != p && fits(q) && !out.contains(&q) {
                out.push(q);
            }
        }
    }
    (out, false)
}

/// Why an object's ETag proves nothing, when it does not.
pub fn etag_unusable(head: Option<&Head>) -> Option<&'static str> {
    let head = head?;
    if head.customer_key {
        return Some("SSE-C: the ETag is not an MD5 of the content");
    }
    match head.encryption.as_deref() {
        Some(e) if e.starts_with("aws:kms") => {
            Some("SSE-KMS: the ETag is not an MD5 of the content")
        }
        _ => None,
    }
}

/// The comparisons the object offers (from the listing's ETag, and from the HEAD's
/// checksums when there was one), and notes on what it cannot prove.
pub fn offers(listed: &Listed, head: Option<&Head>, notes: &mut Vec<String>) -> Vec<Offer> {
    let mut out = Vec::new();
    let etag = head.and_then(|h| h.etag.as_deref()).or(listed.etag.as_deref());
    let part1 = head.and_then(|h| h.part1);
    if let Some(reason) = etag_unusable(head) {
        notes.push(reason.into());
    } else if let Some(etag) = etag {
        match etag_parts(etag) {
            None => notes.push(format!("the ETag {etag:?} is not an MD5-based ETag")),
            Some((d, None)) => out.push(offer(Proof::Md5Etag, "md5", false, d.as_bytes(), true)),
            Some((d, Some(1))) => {
                out.push(offer(Proof::MultipartEtag, "md5", true, d.as_bytes(), true))
            }
            Some((d, Some(n))) => {
                let (sizes, exact) = part_sizes(listed.size, n, part1);
                if sizes.is_empty() {
                    notes.push(format!("a multipart ETag of {n} parts of unknown size"));
                }
                for p in sizes {
                    if let Some(row) = algo::s3etag_part(p) {
                        let mut expect = d.as_bytes().to_vec();
                        expect.extend_from_slice(&n.to_be_bytes());
                        out.push(Offer {
                            proof: Proof::MultipartEtag,
                            algo: row,
                            again: false,
                            expect,
                            exact,
                        });
                    }
                }
            }
        }
    }
    let etag_n = etag.and_then(etag_parts).and_then(|(_, n)| n);
    for c in head.map(|h| h.checksums.as_slice()).unwrap_or_default() {
        let want = algo::lookup(c.algo).map_or(0, |a| a.len);
        if c.value.len() != want {
            notes.push(format!(
                "the server's {} is {} bytes, not {want}: not comparable",
                c.algo,
                c.value.len()
            ));
            continue;
        }
        let sha = matches!(c.algo, "sha256" | "sha1");
        let full = match c.algo {
            "sha256" => Proof::Sha256,
            "sha1" => Proof::Sha1,
            "crc64nvme" => Proof::Crc64nvme,
            "crc32c" => Proof::Crc32c,
            _ => Proof::Crc32,
        };
        let composite = if sha { Proof::CompositeSha } else { Proof::CompositeCrc };
        // CRC64NVME is always of the whole object; a checksum whose kind the server did not
        // state is, on a multipart object, either.
        let (as_full, as_composite, exact) = match (c.parts, c.stated) {
            _ if c.algo == "crc64nvme" => (true, None, true),
            (None, true) => (true, None, true),
            (Some(n), _) => (false, Some(if n == 0 { etag_n.unwrap_or(1) } else { n }), true),
            (None, false) => match etag_n {
                Some(n) if n > 1 => (true, Some(n), false),
                _ => (true, None, true),
            },
        };
        if as_full {
            out.push(offer(full, c.algo, false, &c.value, exact));
        }
        let Some(n) = as_composite else { continue };
        if n == 1 {
            out.push(offer(composite, c.algo, true, &c.value, exact));
            continue;
        }
        let (sizes, known) = part_sizes(listed.size, n, part1);
        if sizes.is_empty() {
            notes.push(format!("a composite {} of {n} parts of unknown size", c.algo));
        }
        for p in sizes {
            if let Some(row) = algo::s3parts(c.algo, p) {
                let exact = exact && known;
                out.push(Offer {
                    proof: composite,
                    algo: row,
                    again: false,
                    expect: c.value.clone(),
                    exact,
                });
            }
        }
    }
    out
}

fn offer(proof: Proof, name: &str, again: bool, expect: &[u8], exact: bool) -> Offer {
    let algo = algo::lookup(name).expect("a registered algorithm");
    Offer { proof, algo, again, expect: expect.to_vec(), exact }
}

/// The verdict on one object once the local digests it needs are known (or not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Same(Proof),
    /// The proof, and what differs.
    Differs(Proof, String),
    /// No offer could be compared: the local digests it needs.
    Unknown(Vec<&'static Algorithm>),
}

/// Judges `offers` with the local digests `known` (by algorithm row): the strongest match
/// proves the object; any exact mismatch proves a difference (and wins: two proofs that
/// disagree are a finding).
pub fn judge(offers: &[Offer], known: &dyn Fn(&'static Algorithm) -> Option<Vec<u8>>) -> Verdict {
    let mut same: Option<Proof> = None;
    let mut missing: Vec<&'static Algorithm> = Vec::new();
    for o in offers {
        let Some(local) = known(o.algo) else {
            if !missing.iter().any(|a| std::ptr::eq(*a, o.algo)) {
                missing.push(o.algo);
            }
            continue;
        };
        let local = if o.again {
            let mut h = o.algo.hasher();
            h.update(&local);
            h.finish().as_bytes().to_vec()
        } else {
            local
        };
        if Digest::new(&local).ct_eq(&Digest::new(&o.expect)) {
            same = Some(same.map_or(o.proof, |p| p.min(o.proof)));
        } else if o.exact {
            return Verdict::Differs(
                o.proof,
                format!(
                    "{}: remote {}, recorded content {}",
                    o.proof.name(),
                    show(o, &o.expect),
                    show(o, &local)
                ),
            );
        }
    }
    match same {
        Some(p) => Verdict::Same(p),
        None => Verdict::Unknown(missing),
    }
}

/// A digest as S3 shows it: hex for ETags, base64 for checksums.
fn show(o: &Offer, bytes: &[u8]) -> String {
    let d = Digest::new(bytes);
    match o.proof {
        Proof::Md5Etag | Proof::MultipartEtag => {
            let hex = d.to_hex();
            match bytes.len() {
                20 => format!(
                    "{}-{}",
                    &hex[..32],
                    u32::from_be_bytes(bytes[16..20].try_into().unwrap())
                ),
                _ => hex,
            }
        }
        _ => d.to_base64(),
    }
}

#[cfg(test)]
mod tests;
