//! Hash algorithms: one small trait ([`Hasher`]) and one registry table
//! ([`ALGORITHMS`]). Everything the rest of the program knows about an algorithm
//! (names users type, the BSD tag, digest length, manifest file extensions, how to
//! make a hasher) is a field of its row here; adding an algorithm is one adapter in
//! `impls.rs` plus one row.

mod access;
mod aich;
mod block;
mod btih;
mod combine;
mod ed2k;
mod edonr;
mod has160;
mod imohash;
mod impls;
mod lookup;
#[allow(unsafe_code)] // the MD5 compression function is inline assembly
mod md5;
#[allow(unsafe_code)]
pub(crate) mod multibuf;
mod murmur3;
mod row;
mod s3etag;
mod s3parts;
mod snefru;
mod sum;
mod tth;

#[doc(hidden)]
pub use multibuf::harness as multibuf_harness;

use crate::digest::{Digest, Encoding};
pub(crate) use access::Access;
pub use combine::{Combine, JoinError, MIN_UNIT, Piece, valid_unit};
use lookup::BLAKE2B_PREFIX;
pub use lookup::{
    blake2b_bits, by_file_name, by_len, by_tag, by_tool, default_algorithm, lookup, normalize,
    parse_list,
};
pub(crate) use md5::Md5;
pub use s3etag::{part_of as s3etag_part_size, s3etag_part};
pub use s3parts::{parts_of as s3parts_of, s3parts};
use std::fmt;
use std::ops::Range;

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
    pub(crate) const STDIN_NAME: &'static [u8] = b"(stdin)";

    /// The input for the file at `path` (as given, in bytes) of `size` bytes.
    pub(crate) fn for_path(path: &'a [u8], size: Option<u64>) -> Input<'a> {
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
    /// How rhash names and prints it, when rhash computes it.
    pub rhash: Option<RhashFacts>,
    /// The tools whose name, as `argv[0]`, makes fixity their drop-in for this algorithm
    /// (`sha256sum`, `b3sum`); the first is the one its format's lines are named after.
    pub tools: &'static [&'static str],
    /// xxhsum's `-H` number, when xxhsum computes it.
    pub xxhsum: Option<u8>,
    /// The extended attribute cshatag (and the Python shatag) keep this digest in, for
    /// the xattr store to read and keep in step (`user.shatag.sha256`).
    pub shatag: Option<&'static str>,
    /// The NTFS alternate data stream RapidCRC-Unicode keeps this digest in, in hex
    /// (`CRC32`, `SHA256`); TeraCopy and MD5Stream keep MD5 in `MD5` with the file's
    /// write time. `fixity import --from streams` reads them.
    pub stream: Option<&'static str>,
    /// coreutils `cksum -a`: its place in cksum's list and the name `-a` takes.
    pub cksum: Option<(u8, &'static str)>,
    /// The multi-buffer kernel family that hashes many inputs of this algorithm at once
    /// (MD5, SHA-1, SHA-256; BLAKE3's small inputs; see [`multibuf`]), if any.
    pub(crate) lanes: Option<multibuf::Family>,
    /// How its digest of a whole input is joined from digests of byte ranges hashed
    /// apart (CRCs, BLAKE3's tree), if it can be: a plan's huge file then splits.
    pub combine: Option<Combine>,
    /// Makes a hasher; given the row, so one constructor can serve rows that differ only
    /// in a parameter (BLAKE2b's output length, see [`blake2b_bits`]).
    new: fn(&Algorithm) -> Box<dyn Hasher>,
}

/// How rhash 1.4.3 names and prints an algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RhashFacts {
    /// Its place in rhash's own table, the order rhash prints digests in whatever order
    /// they were asked for.
    pub rank: u8,
    /// rhash's name in `%{name}` printf directives (matched case-insensitively).
    pub name: &'static str,
    /// The URN name in magnet links (`xt=urn:NAME:digest`).
    pub urn: &'static str,
    /// Printed in base32 by default (TTH, AICH); all others in hex.
    pub base32: bool,
    /// The printf letter that stands for it (`%h` is SHA1), if one does.
    pub letter: Option<u8>,
}

impl Algorithm {
    /// Starts a new computation.
    pub fn hasher(&self) -> Box<dyn Hasher> {
        (self.new)(self)
    }

    /// The row this one is a variant of: `blake2b` for the shortened BLAKE2b rows of
    /// [`blake2b_bits`], the row itself otherwise. coreutils names them all `BLAKE2b` in
    /// its messages, and `b2sum -c` takes them all.
    pub(crate) fn family(&'static self) -> &'static Algorithm {
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
            aliases: &[$($alias),*],
            extensions: &[$($ext),*],
            multithreaded: $mt,
            ..Algorithm::base($name, $tag, $len, Strength::$strength, Encoding::$enc, $new)
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
    )
    .with_cksum(2, "crc")
    .with_tools(&["cksum"]),
    algo!("sum", "SUM", 2, Checksum, ["bsd", "sumbsd", "bsdsum"], [], sum::bsd_sum)
        .with_cksum(0, "bsd")
        .with_tools(&["sum"]),
    algo!("sysv", "SYSV", 2, Checksum, ["sumsysv", "sysvsum"], [], sum::sysv_sum)
        .with_cksum(1, "sysv"),
    algo!("crc32", "CRC32", 4, Checksum, ["crc32b", "crcieee"], ["sfv", "crc32"], impls::crc32)
        .with_cksum(3, "crc32b")
        .with_rhash(0, "crc32", "crc32", false, Some(b'c'))
        .with_stream("CRC32")
        .with_combine(Combine::Crc32),
    algo!(
        "crc32c",
        "CRC32C",
        4,
        Checksum,
        ["crc32castagnoli", "crc32iscsi"],
        ["crc32c"],
        impls::crc32c
    )
    .with_rhash(26, "crc32c", "crc32c", false, None)
    .with_stream("CRC32C")
    .with_combine(Combine::Crc32c),
    // CRC-64/NVME, the S3 default checksum (`x-amz-checksum-crc64nvme`).
    algo!("crc64nvme", "CRC64NVME", 8, Checksum, ["crc64/nvme"], ["crc64nvme"], impls::crc64nvme)
        .with_combine(Combine::Crc64Nvme),
    algo!("md4", "MD4", 16, Broken, ["md4sum"], ["md4"], impls::md4)
        .with_rhash(1, "md4", "md4", false, None),
    algo!("md5", "MD5", 16, Broken, ["md5sum"], ["md5", "md5sum", "md5sums"], impls::md5)
        .with_cksum(4, "md5")
        .with_rhash(2, "md5", "md5", false, Some(b'm'))
        .with_tools(&["md5sum"])
        .with_stream("MD5")
        .with_lanes(multibuf::Family::Md5),
    // The ETag S3 gives a file the AWS CLI uploaded (8 MiB parts; `s3etag-16MiB` and so
    // on are made on first use): see s3etag.rs.
    s3etag::registered(),
    algo!(
        "sha1",
        "SHA1",
        20,
        Broken,
        ["sha", "sha1sum"],
        ["sha1", "sha1sum", "sha1sums"],
        impls::sha1
    )
    .with_cksum(5, "sha1")
    .with_rhash(3, "sha1", "sha1", false, Some(b'h'))
    .with_tools(&["sha1sum"])
    .with_stream("SHA1")
    .with_lanes(multibuf::Family::Sha1),
    algo!(
        "sha224",
        "SHA224",
        28,
        Cryptographic,
        ["sha2224", "sha224sum"],
        ["sha224", "sha224sum", "sha224sums"],
        impls::sha224
    )
    .with_cksum(6, "sha224")
    .with_rhash(16, "sha-224", "sha224", false, None)
    .with_tools(&["sha224sum"]),
    algo!(
        "sha256",
        "SHA256",
        32,
        Cryptographic,
        ["sha2256", "sha256sum", "sha2"],
        ["sha256", "sha256sum", "sha256sums"],
        impls::sha256
    )
    .with_cksum(7, "sha256")
    .with_rhash(17, "sha-256", "sha256", false, None)
    .with_tools(&["sha256sum"])
    .with_shatag("user.shatag.sha256")
    .with_stream("SHA256")
    .with_lanes(multibuf::Family::Sha256),
    algo!(
        "sha384",
        "SHA384",
        48,
        Cryptographic,
        ["sha2384", "sha384sum"],
        ["sha384", "sha384sum", "sha384sums"],
        impls::sha384
    )
    .with_cksum(8, "sha384")
    .with_rhash(18, "sha-384", "sha384", false, None)
    .with_tools(&["sha384sum"]),
    algo!(
        "sha512",
        "SHA512",
        64,
        Cryptographic,
        ["sha2512", "sha512sum"],
        ["sha512", "sha512sum", "sha512sums"],
        impls::sha512
    )
    .with_cksum(9, "sha512")
    .with_rhash(19, "sha-512", "sha512", false, None)
    .with_tools(&["sha512sum"])
    .with_stream("SHA512"),
    algo!("sha3-224", "SHA3-224", 28, Cryptographic, ["sha3224"], ["sha3-224"], impls::sha3_224)
        .with_rhash(22, "sha3-224", "sha3-224", false, None)
        .with_stream("SHA3-224"),
    algo!(
        "sha3-256",
        "SHA3-256",
        32,
        Cryptographic,
        ["sha3256", "sha3"],
        ["sha3-256", "sha3"],
        impls::sha3_256
    )
    .with_rhash(23, "sha3-256", "sha3-256", false, None)
    .with_stream("SHA3-256"),
    algo!("sha3-384", "SHA3-384", 48, Cryptographic, ["sha3384"], ["sha3-384"], impls::sha3_384)
        .with_rhash(24, "sha3-384", "sha3-384", false, None),
    algo!("sha3-512", "SHA3-512", 64, Cryptographic, ["sha3512"], ["sha3-512"], impls::sha3_512)
        .with_rhash(25, "sha3-512", "sha3-512", false, None)
        .with_stream("SHA3-512"),
    // SM3 (GB/T 32905-2016), `cksum -a sm3` in coreutils 9.1 and later.
    algo!("sm3", "SM3", 32, Cryptographic, ["sm3sum"], ["sm3"], impls::sm3).with_cksum(11, "sm3"),
    algo!(
        "ripemd160",
        "RMD160",
        20,
        Cryptographic,
        ["rmd160", "ripemd", "rmd"],
        ["rmd160", "ripemd160", "rmd"],
        impls::ripemd160
    )
    .with_rhash(10, "ripemd160", "ripemd160", false, Some(b'r')),
    algo!(
        "whirlpool",
        "WHIRLPOOL",
        64,
        Cryptographic,
        ["whirl"],
        ["whirlpool", "wrpl"],
        impls::whirlpool
    )
    .with_rhash(9, "whirlpool", "whirlpool", false, Some(b'w')),
    algo!("tiger", "TIGER", 24, Cryptographic, ["tiger192"], ["tiger"], impls::tiger)
        .with_rhash(4, "tiger", "tiger", false, None),
    algo!(
        "gost94",
        "GOST94",
        32,
        Cryptographic,
        ["gost", "gostr341194", "gost94test"],
        ["gost94", "gost"],
        impls::gost94
    )
    .with_rhash(11, "gost94", "gost94", false, None),
    algo!(
        "gost94-cryptopro",
        "GOST94-CRYPTOPRO",
        32,
        Cryptographic,
        ["gostcryptopro", "gost94cp"],
        ["gost94-cryptopro"],
        impls::gost94_cryptopro
    )
    .with_rhash(12, "gost94-cryptopro", "gost94-cryptopro", false, None),
    algo!(
        "gost12-256",
        "GOST12-256",
        32,
        Cryptographic,
        ["streebog256", "stribog256", "gostr34112012256"],
        ["gost12-256"],
        impls::gost12_256
    )
    .with_rhash(14, "gost12-256", "gost12-256", false, Some(b'g')),
    algo!(
        "gost12-512",
        "GOST12-512",
        64,
        Cryptographic,
        ["streebog512", "stribog512", "streebog", "gostr34112012512"],
        ["gost12-512"],
        impls::gost12_512
    )
    .with_rhash(15, "gost12-512", "gost12-512", false, None),
    // 80 steps; the best published collisions reach 59 of them (Mendel, Nad and
    // Schläffer, ICISC 2011), the full function has none, as for RIPEMD-160.
    algo!("has160", "HAS-160", 20, Cryptographic, ["has"], ["has160", "has-160"], has160::has160)
        .with_rhash(13, "has160", "has160", false, None),
    // Round-1 SHA-3 candidate, not advanced: practical free-start collisions and
    // preimages below the generic bound (Khovratovich, Nikolic, Weinmann 2009).
    algo!("edonr256", "EDON-R256", 32, Broken, [], ["edonr256", "edon-r256"], edonr::edonr256)
        .with_rhash(20, "edon-r256", "edon-r256", false, None),
    // As EDON-R 256: the same structure and the same published attacks.
    algo!("edonr512", "EDON-R512", 64, Broken, [], ["edonr512", "edon-r512"], edonr::edonr512)
        .with_rhash(21, "edon-r512", "edon-r512", false, None),
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
    )
    .with_rhash(27, "snefru128", "snefru128", false, None),
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
    )
    .with_rhash(28, "snefru256", "snefru256", false, None),
    algo!(
        "blake2b",
        "BLAKE2b",
        64,
        Cryptographic,
        ["blake2b512", "b2", "blake2", "b2sum"],
        ["b2", "blake2b", "b2sum", "b2sums"],
        row = impls::blake2b
    )
    .with_cksum(10, "blake2b")
    .with_rhash(30, "blake2b", "blake2b", false, None)
    .with_tools(&["b2sum"]),
    algo!(
        "blake2s",
        "BLAKE2s",
        32,
        Cryptographic,
        ["blake2s256", "b2s"],
        ["blake2s", "b2s"],
        impls::blake2s
    )
    .with_rhash(29, "blake2s", "blake2s", false, None),
    algo!(
        "blake3",
        "BLAKE3",
        32,
        Cryptographic,
        ["b3", "blake3256", "b3sum"],
        ["b3", "blake3", "b3sum", "b3sums"],
        impls::blake3,
        true
    )
    .with_tools(&["b3sum"])
    .with_stream("BLAKE3")
    .with_combine(Combine::Blake3Tree)
    .with_lanes(multibuf::Family::Blake3),
    algo!(
        "murmur3",
        "MURMUR3",
        16,
        Checksum,
        ["murmur3x64128", "mmh3", "murmurhash3"],
        ["mmh3"],
        murmur3::murmur3
    ),
    algo!("xxh32", "XXH32", 4, Checksum, ["xxhash32"], ["xxh32"], impls::xxh32)
        .with_tools(&["xxh32sum"])
        .with_xxhsum(0),
    algo!("xxh64", "XXH64", 8, Checksum, ["xxhash64", "xxh"], ["xxh64", "xxh"], impls::xxh64)
        .with_tools(&["xxhsum", "xxh64sum"])
        .with_xxhsum(1),
    algo!(
        "xxh3",
        "XXH3",
        8,
        Checksum,
        ["xxh364", "xxh3", "xxhash3"],
        ["xxh3", "xxh3_64"],
        impls::xxh3
    )
    .with_xxhsum(3),
    algo!(
        "xxh128",
        "XXH128",
        16,
        Checksum,
        ["xxh3128", "xxhash128"],
        ["xxh128", "xxh3_128"],
        impls::xxh128
    )
    .with_tools(&["xxh128sum"])
    .with_xxhsum(2),
    algo!(
        "tth",
        "TTH",
        24,
        Cryptographic,
        ["tigertree", "tigertreehash"],
        ["tth"],
        tth::tth,
        encoding = Base32
    )
    .with_rhash(5, "tth", "tree:tiger", true, Some(b't')),
    algo!("btih", "BTIH", 20, Broken, ["bittorrent", "infohash"], ["btih"], btih::btih)
        .with_rhash(6, "btih", "btih", false, None),
    algo!("aich", "AICH", 20, Broken, ["emuleaich"], ["aich"], aich::aich, encoding = Base32)
        .with_rhash(8, "aich", "aich", true, Some(b'a')),
    algo!("ed2k", "ED2K", 16, Broken, ["edonkey", "emule", "ed2khash"], ["ed2k"], ed2k::ed2k)
        .with_rhash(7, "ed2k", "ed2k", false, Some(b'e'))
        .with_stream("ED2K"),
    algo!("imohash", "IMOHASH", 16, Sampled, ["imo", "imosum"], ["imo"], imohash::imohash),
];

#[cfg(test)]
mod tests;
