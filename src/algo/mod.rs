//! Hash algorithms: one small trait ([`Hasher`]) and one registry table
//! ([`ALGORITHMS`]). Everything the rest of the program knows about an algorithm
//! (names users type, the BSD tag, digest length, manifest file extensions, how to
//! make a hasher) is a field of its row here; adding an algorithm is one adapter in
//! `impls.rs` plus one row.

mod access;
mod aich;
mod block;
mod btih;
mod ed2k;
mod edonr;
mod has160;
mod imohash;
mod impls;
mod murmur3;
mod snefru;
mod sum;
mod tth;

use crate::digest::{Digest, Encoding};
pub use access::Access;
use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

/// What is known about an input before it is read, for the algorithms whose result
/// depends on it (BTIH hashes the file's name and size into its info dictionary; imohash
/// picks its samples by the size). See [`Hasher::begin`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input<'a> {
    /// The size in bytes, when known before reading (a regular file's `fstat`); `None`
    /// for standard input and pipes.
    pub size: Option<u64>,
    /// The base name, as rhash takes it from the path: the bytes after the last `/` or
    /// `\`; `(stdin)` for standard input.
    pub name: &'a [u8],
}

impl<'a> Input<'a> {
    /// The name rhash gives standard input.
    pub const STDIN_NAME: &'static [u8] = b"(stdin)";

    /// The input for the file at `path` (as given, in bytes) of `size` bytes.
    pub fn for_path(path: &'a [u8], size: Option<u64>) -> Input<'a> {
        let start = path.iter().rposition(|&b| b == b'/' || b == b'\\').map_or(0, |i| i + 1);
        Input { size, name: &path[start..] }
    }
}

/// A running hash computation.
pub trait Hasher: Send {
    /// Tells the hasher about the input before its first byte. Most algorithms ignore it
    /// (the default); BTIH and imohash need it. Without it, BTIH hashes as librhash does
    /// for a message with no file entry, and imohash keeps everything it is fed (the
    /// reference's hash of an in-memory slice).
    fn begin(&mut self, _input: &Input) {}

    /// For a sampled algorithm told the size by [`Hasher::begin`]: the byte ranges of the
    /// input it looks at, in order; a reader may read just those and hand them over with
    /// [`Hasher::update_at`]. `None` (the default): every byte, in order, through
    /// [`Hasher::update`].
    fn sample_ranges(&self) -> Option<Vec<Range<u64>>> {
        None
    }

    /// Feeds `data` found at byte `offset` of the input (for sampled algorithms, which
    /// skip what lies between their ranges). The default, for algorithms that read every
    /// byte, is [`Hasher::update`]: the caller feeds contiguous data.
    fn update_at(&mut self, offset: u64, data: &[u8]) {
        let _ = offset;
        self.update(data);
    }

    /// Feeds more input.
    fn update(&mut self, data: &[u8]);

    /// Feeds a large in-memory input, using several threads where the algorithm can
    /// (BLAKE3's tree). The default is [`Hasher::update`].
    fn update_parallel(&mut self, data: &[u8]) {
        self.update(data);
    }

    /// Returns the digest of everything fed so far.
    fn finish(&self) -> Digest;
}

/// What an algorithm is good for; shown by `fixity algorithms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strength {
    /// A cryptographic hash with no known practical collision attack.
    Cryptographic,
    /// Cryptographic by design, but collisions can be made (md5, sha1): fine against
    /// accidents, not against tampering.
    Broken,
    /// A fast checksum for accidental corruption only (CRCs, xxHash).
    Checksum,
    /// Reads only samples of a large file (imohash): a quick change detector, not a
    /// content hash; a change outside the samples that keeps the size goes unseen.
    Sampled,
}

impl Strength {
    /// A short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            Strength::Cryptographic => "cryptographic",
            Strength::Broken => "broken-for-tamper",
            Strength::Checksum => "non-cryptographic checksum",
            Strength::Sampled => "sampled, not a content hash",
        }
    }
}

/// One row of the registry.
pub struct Algorithm {
    /// Canonical name, lowercase: what fixity prints and what `-a` documents.
    pub name: &'static str,
    /// Other spellings users type, already normalized (see [`normalize`]).
    pub aliases: &'static [&'static str],
    /// The tag of BSD-style lines, `TAG (name) = digest`, as the reference tool writes it.
    pub tag: &'static str,
    /// Digest length in bytes.
    pub len: usize,
    /// Manifest file name endings that imply this algorithm (`.sha256`, `SHA256SUMS`),
    /// lowercase, without the dot.
    pub extensions: &'static [&'static str],
    /// Strength class.
    pub strength: Strength,
    /// Whether the algorithm can use several threads on one input.
    pub multithreaded: bool,
    /// How the reference tool prints the digest (hex for most; base32 for rhash's TTH
    /// and AICH).
    pub encoding: Encoding,
    /// Makes a hasher; given the row, so one constructor can serve rows that differ only
    /// in a parameter (BLAKE2b's output length, see [`blake2b_bits`]).
    new: fn(&Algorithm) -> Box<dyn Hasher>,
}

impl Algorithm {
    /// Starts a new computation.
    pub fn hasher(&self) -> Box<dyn Hasher> {
        (self.new)(self)
    }

    /// The row this one is a variant of: `blake2b` for the shortened BLAKE2b rows of
    /// [`blake2b_bits`], the row itself otherwise. coreutils names them all `BLAKE2b` in
    /// its messages, and `b2sum -c` takes them all.
    pub fn family(&'static self) -> &'static Algorithm {
        if self.name.starts_with(BLAKE2B_PREFIX) { blake2b_bits(512).unwrap_or(self) } else { self }
    }

    /// Hashes `data` in one call, without [`Hasher::begin`] (so BTIH has no file entry and
    /// imohash takes the size from `data`, as its reference hashes a slice).
    pub fn digest(&self, data: &[u8]) -> Digest {
        let mut h = self.hasher();
        h.update(data);
        h.finish()
    }

    /// Digest length in hex characters.
    pub fn hex_len(&self) -> usize {
        self.len * 2
    }
}

impl PartialEq for Algorithm {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.name, other.name)
    }
}

impl Eq for Algorithm {}

impl fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

macro_rules! algo {
    // A constructor that reads its row: `row = f`, `f: fn(&Algorithm) -> Box<dyn Hasher>`.
    // First, so that `row = f` is not taken for an assignment expression. The other
    // forms take a `fn() -> Box<dyn Hasher>`.
    ($name:literal, $tag:literal, $len:expr, $strength:ident, [$($alias:literal),*], [$($ext:literal),*], row = $new:expr) => {
        algo!(@row $name, $tag, $len, $strength, [$($alias),*], [$($ext),*], $new, false, Hex)
    };
    ($name:literal, $tag:literal, $len:expr, $strength:ident, [$($alias:literal),*], [$($ext:literal),*], $new:expr) => {
        algo!($name, $tag, $len, $strength, [$($alias),*], [$($ext),*], $new, false)
    };
    ($name:literal, $tag:literal, $len:expr, $strength:ident, [$($alias:literal),*], [$($ext:literal),*], $new:expr, encoding = $enc:ident) => {
        algo!($name, $tag, $len, $strength, [$($alias),*], [$($ext),*], $new, false, $enc)
    };
    ($name:literal, $tag:literal, $len:expr, $strength:ident, [$($alias:literal),*], [$($ext:literal),*], $new:expr, $mt:expr) => {
        algo!($name, $tag, $len, $strength, [$($alias),*], [$($ext),*], $new, $mt, Hex)
    };
    ($name:literal, $tag:literal, $len:expr, $strength:ident, [$($alias:literal),*], [$($ext:literal),*], $new:expr, $mt:expr, $enc:ident) => {
        algo!(@row $name, $tag, $len, $strength, [$($alias),*], [$($ext),*], |_| $new(), $mt, $enc)
    };
    (@row $name:literal, $tag:literal, $len:expr, $strength:ident, [$($alias:literal),*], [$($ext:literal),*], $new:expr, $mt:expr, $enc:ident) => {
        Algorithm {
            name: $name,
            aliases: &[$($alias),*],
            tag: $tag,
            len: $len,
            extensions: &[$($ext),*],
            strength: Strength::$strength,
            multithreaded: $mt,
            encoding: Encoding::$enc,
            new: $new,
        }
    };
}

/// Every algorithm fixity computes, in the order `fixity algorithms` lists them.
pub static ALGORITHMS: &[Algorithm] = &[
    algo!(
        "cksum",
        "CKSUM",
        4,
        Checksum,
        ["crc", "posix", "posixcksum", "crc32cksum", "crc32posix"],
        ["cksum"],
        sum::cksum
    ),
    algo!("sum", "SUM", 2, Checksum, ["bsd", "sumbsd", "bsdsum"], [], sum::bsd_sum),
    algo!("sysv", "SYSV", 2, Checksum, ["sumsysv", "sysvsum"], [], sum::sysv_sum),
    algo!("crc32", "CRC32", 4, Checksum, ["crc32b", "crcieee"], ["sfv", "crc32"], impls::crc32),
    algo!(
        "crc32c",
        "CRC32C",
        4,
        Checksum,
        ["crc32castagnoli", "crc32iscsi"],
        ["crc32c"],
        impls::crc32c
    ),
    algo!("md4", "MD4", 16, Broken, ["md4sum"], ["md4"], impls::md4),
    algo!("md5", "MD5", 16, Broken, ["md5sum"], ["md5", "md5sum", "md5sums"], impls::md5),
    algo!(
        "sha1",
        "SHA1",
        20,
        Broken,
        ["sha", "sha1sum"],
        ["sha1", "sha1sum", "sha1sums"],
        impls::sha1
    ),
    algo!(
        "sha224",
        "SHA224",
        28,
        Cryptographic,
        ["sha2224", "sha224sum"],
        ["sha224", "sha224sum", "sha224sums"],
        impls::sha224
    ),
    algo!(
        "sha256",
        "SHA256",
        32,
        Cryptographic,
        ["sha2256", "sha256sum", "sha2"],
        ["sha256", "sha256sum", "sha256sums"],
        impls::sha256
    ),
    algo!(
        "sha384",
        "SHA384",
        48,
        Cryptographic,
        ["sha2384", "sha384sum"],
        ["sha384", "sha384sum", "sha384sums"],
        impls::sha384
    ),
    algo!(
        "sha512",
        "SHA512",
        64,
        Cryptographic,
        ["sha2512", "sha512sum"],
        ["sha512", "sha512sum", "sha512sums"],
        impls::sha512
    ),
    algo!("sha3-224", "SHA3-224", 28, Cryptographic, ["sha3224"], ["sha3-224"], impls::sha3_224),
    algo!(
        "sha3-256",
        "SHA3-256",
        32,
        Cryptographic,
        ["sha3256", "sha3"],
        ["sha3-256", "sha3"],
        impls::sha3_256
    ),
    algo!("sha3-384", "SHA3-384", 48, Cryptographic, ["sha3384"], ["sha3-384"], impls::sha3_384),
    algo!("sha3-512", "SHA3-512", 64, Cryptographic, ["sha3512"], ["sha3-512"], impls::sha3_512),
    // SM3 (GB/T 32905-2016), `cksum -a sm3` in coreutils 9.1 and later.
    algo!("sm3", "SM3", 32, Cryptographic, ["sm3sum"], ["sm3"], impls::sm3),
    algo!(
        "ripemd160",
        "RMD160",
        20,
        Cryptographic,
        ["rmd160", "ripemd", "rmd"],
        ["rmd160", "ripemd160", "rmd"],
        impls::ripemd160
    ),
    algo!(
        "whirlpool",
        "WHIRLPOOL",
        64,
        Cryptographic,
        ["whirl"],
        ["whirlpool", "wrpl"],
        impls::whirlpool
    ),
    algo!("tiger", "TIGER", 24, Cryptographic, ["tiger192"], ["tiger"], impls::tiger),
    algo!(
        "gost94",
        "GOST94",
        32,
        Cryptographic,
        ["gost", "gostr341194", "gost94test"],
        ["gost94", "gost"],
        impls::gost94
    ),
    algo!(
        "gost94-cryptopro",
        "GOST94-CRYPTOPRO",
        32,
        Cryptographic,
        ["gostcryptopro", "gost94cp"],
        ["gost94-cryptopro"],
        impls::gost94_cryptopro
    ),
    algo!(
        "gost12-256",
        "GOST12-256",
        32,
        Cryptographic,
        ["streebog256", "stribog256", "gostr34112012256"],
        ["gost12-256"],
        impls::gost12_256
    ),
    algo!(
        "gost12-512",
        "GOST12-512",
        64,
        Cryptographic,
        ["streebog512", "stribog512", "streebog", "gostr34112012512"],
        ["gost12-512"],
        impls::gost12_512
    ),
    // 80 steps; the best published collisions reach 59 of them (Mendel, Nad and
    // Schläffer, ICISC 2011), the full function has none, as for RIPEMD-160.
    algo!("has160", "HAS-160", 20, Cryptographic, ["has"], ["has160", "has-160"], has160::has160),
    // Round-1 SHA-3 candidate, not advanced: practical free-start collisions and
    // preimages below the generic bound (Khovratovich, Nikolic, Weinmann 2009).
    algo!("edonr256", "EDON-R256", 32, Broken, [], ["edonr256", "edon-r256"], edonr::edonr256),
    // As EDON-R 256: the same structure and the same published attacks.
    algo!("edonr512", "EDON-R512", 64, Broken, [], ["edonr512", "edon-r512"], edonr::edonr512),
    // Biham and Shamir's differential attacks find collisions for up to 4 passes, and a
    // 128-bit digest only resists generic collision search up to 2^64, as MD5 would.
    algo!(
        "snefru128",
        "SNEFRU-128",
        16,
        Broken,
        [],
        ["snefru128", "snefru-128"],
        snefru::snefru128
    ),
    // 8 passes: collisions are published for up to 4, the 8-pass attack (2^88.5) is
    // certificational; "snefru" is this one, as in PHP's hash().
    algo!(
        "snefru256",
        "SNEFRU-256",
        32,
        Cryptographic,
        ["snefru"],
        ["snefru256", "snefru-256"],
        snefru::snefru256
    ),
    algo!(
        "blake2b",
        "BLAKE2b",
        64,
        Cryptographic,
        ["blake2b512", "b2", "blake2", "b2sum"],
        ["b2", "blake2b", "b2sum", "b2sums"],
        row = impls::blake2b
    ),
    algo!(
        "blake2s",
        "BLAKE2s",
        32,
        Cryptographic,
        ["blake2s256", "b2s"],
        ["blake2s", "b2s"],
        impls::blake2s
    ),
    algo!(
        "blake3",
        "BLAKE3",
        32,
        Cryptographic,
        ["b3", "blake3256", "b3sum"],
        ["b3", "blake3", "b3sum", "b3sums"],
        impls::blake3,
        true
    ),
    algo!(
        "murmur3",
        "MURMUR3",
        16,
        Checksum,
        ["murmur3x64128", "mmh3", "murmurhash3"],
        ["mmh3"],
        murmur3::murmur3
    ),
    algo!("xxh32", "XXH32", 4, Checksum, ["xxhash32"], ["xxh32"], impls::xxh32),
    algo!("xxh64", "XXH64", 8, Checksum, ["xxhash64", "xxh"], ["xxh64", "xxh"], impls::xxh64),
    algo!(
        "xxh3",
        "XXH3",
        8,
        Checksum,
        ["xxh364", "xxh3", "xxhash3"],
        ["xxh3", "xxh3_64"],
        impls::xxh3
    ),
    algo!(
        "xxh128",
        "XXH128",
        16,
        Checksum,
        ["xxh3128", "xxhash128"],
        ["xxh128", "xxh3_128"],
        impls::xxh128
    ),
    algo!(
        "tth",
        "TTH",
        24,
        Cryptographic,
        ["tigertree", "tigertreehash"],
        ["tth"],
        tth::tth,
        encoding = Base32
    ),
    algo!("btih", "BTIH", 20, Broken, ["bittorrent", "infohash"], ["btih"], btih::btih),
    algo!("aich", "AICH", 20, Broken, ["emuleaich"], ["aich"], aich::aich, encoding = Base32),
    algo!("ed2k", "ED2K", 16, Broken, ["edonkey", "emule", "ed2khash"], ["ed2k"], ed2k::ed2k),
    algo!("imohash", "IMOHASH", 16, Sampled, ["imo", "imosum"], ["imo"], imohash::imohash),
];

/// Folds a user-typed algorithm name to the registry's spelling: lowercase, with `-`,
/// `_` and spaces removed (`SHA-256`, `sha_256` and `sha256` are one name).
pub fn normalize(name: &str) -> String {
    name.chars().filter(|c| !matches!(c, '-' | '_' | ' ')).flat_map(char::to_lowercase).collect()
}

/// Looks an algorithm up by any of its names, case-insensitively; `blake2b-BITS` (any
/// spelling, `BLAKE2b_256`) is BLAKE2b with that output length (see [`blake2b_bits`]).
pub fn lookup(name: &str) -> Option<&'static Algorithm> {
    let want = normalize(name);
    ALGORITHMS
        .iter()
        .find(|a| normalize(a.name) == want || a.aliases.contains(&want.as_str()))
        .or_else(|| blake2b_bits(bits_after(&want, "blake2b")?))
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
const BLAKE2B_PREFIX: &str = "blake2b-";

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
        Algorithm {
            name,
            aliases: &[],
            tag,
            len: bits as usize / 8,
            extensions: &[],
            strength: Strength::Cryptographic,
            multithreaded: false,
            encoding: Encoding::Hex,
            new: impls::blake2b,
        }
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

#[cfg(test)]
mod tests;
