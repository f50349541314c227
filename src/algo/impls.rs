//! Adapters from the hash crates to [`Hasher`]. The crate chosen for each algorithm is
//! the fastest measured on our machines (see ../shared/design/crates.md), each with
//! runtime CPU-feature dispatch (SHA-NI, AVX2, AVX-512, PCLMULQDQ).

use super::{Algorithm, Hasher};
use crate::digest::Digest;
use blake2::digest::block_api::{Buffer, UpdateCore, VariableOutputCore};

/// Adapts any RustCrypto `Digest` type.
struct RustCrypto<D>(D);

impl<D> Hasher for RustCrypto<D>
where
    D: sha2::Digest + Clone + Send,
{
    fn update(&mut self, data: &[u8]) {
        sha2::Digest::update(&mut self.0, data);
    }
    fn finish(&self) -> Digest {
        Digest::new(&sha2::Digest::finalize(self.0.clone()))
    }
}

fn rust_crypto<D: sha2::Digest + Clone + Send + 'static>() -> Box<dyn Hasher> {
    Box::new(RustCrypto(D::new()))
}

pub(super) fn md5() -> Box<dyn Hasher> {
    Box::new(super::md5::Md5::new())
}
pub(super) fn sha1() -> Box<dyn Hasher> {
    rust_crypto::<sha1::Sha1>()
}
pub(super) fn sha224() -> Box<dyn Hasher> {
    rust_crypto::<sha2::Sha224>()
}
pub(super) fn sha256() -> Box<dyn Hasher> {
    rust_crypto::<sha2::Sha256>()
}
pub(super) fn sha384() -> Box<dyn Hasher> {
    rust_crypto::<sha2::Sha384>()
}
pub(super) fn sha512() -> Box<dyn Hasher> {
    rust_crypto::<sha2::Sha512>()
}
pub(super) fn sha3_256() -> Box<dyn Hasher> {
    rust_crypto::<sha3::Sha3_256>()
}
pub(super) fn sha3_512() -> Box<dyn Hasher> {
    rust_crypto::<sha3::Sha3_512>()
}
pub(super) fn sha3_224() -> Box<dyn Hasher> {
    rust_crypto::<sha3::Sha3_224>()
}
pub(super) fn sha3_384() -> Box<dyn Hasher> {
    rust_crypto::<sha3::Sha3_384>()
}
pub(super) fn sm3() -> Box<dyn Hasher> {
    rust_crypto::<sm3::Sm3>()
}
pub(super) fn md4() -> Box<dyn Hasher> {
    rust_crypto::<md4::Md4>()
}
pub(super) fn ripemd160() -> Box<dyn Hasher> {
    rust_crypto::<ripemd::Ripemd160>()
}
pub(super) fn whirlpool() -> Box<dyn Hasher> {
    rust_crypto::<whirlpool::Whirlpool>()
}
pub(super) fn tiger() -> Box<dyn Hasher> {
    rust_crypto::<tiger::Tiger>()
}
pub(super) fn gost94() -> Box<dyn Hasher> {
    rust_crypto::<gost94::Gost94Test>()
}
pub(super) fn gost94_cryptopro() -> Box<dyn Hasher> {
    rust_crypto::<gost94::Gost94CryptoPro>()
}
pub(super) fn gost12_256() -> Box<dyn Hasher> {
    rust_crypto::<streebog::Streebog256>()
}
pub(super) fn gost12_512() -> Box<dyn Hasher> {
    rust_crypto::<streebog::Streebog512>()
}
/// BLAKE2b with the output length of `row` (64 bytes for `blake2b`, fewer for the rows of
/// [`super::blake2b_bits`]). The length goes into the parameter block (RFC 7693 section
/// 2.5): a shorter BLAKE2b is a different function, not a prefix of BLAKE2b-512.
pub(super) fn blake2b(row: &Algorithm) -> Box<dyn Hasher> {
    if row.len == 64 {
        return rust_crypto::<blake2::Blake2b512>();
    }
    let core = blake2::Blake2bVarCore::new(row.len).expect("BLAKE2b rows are 1 to 64 bytes");
    Box::new(Blake2bVar { core, buffer: Default::default(), len: row.len })
}

/// BLAKE2b of a length chosen at run time: the crate's block-level core and its lazy
/// block buffer (BLAKE2 must keep the last block for the finalization flag).
#[derive(Clone)]
struct Blake2bVar {
    core: blake2::Blake2bVarCore,
    buffer: Buffer<blake2::Blake2bVarCore>,
    len: usize,
}

impl Hasher for Blake2bVar {
    fn update(&mut self, data: &[u8]) {
        let core = &mut self.core;
        self.buffer.digest_blocks(data, |blocks| core.update_blocks(blocks));
    }
    fn finish(&self) -> Digest {
        let mut done = self.clone();
        let mut out = Default::default();
        done.core.finalize_variable_core(&mut done.buffer, &mut out);
        Digest::new(&out[..self.len])
    }
}
pub(super) fn blake2s() -> Box<dyn Hasher> {
    rust_crypto::<blake2::Blake2s256>()
}

struct Blake3(blake3::Hasher);

impl Hasher for Blake3 {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    fn update_parallel(&mut self, data: &[u8]) {
        // Splitting pays only above a few hundred KiB; below that rayon's overhead wins.
        if data.len() >= 256 * 1024 {
            self.0.update_rayon(data);
        } else {
            self.0.update(data);
        }
    }
    fn finish(&self) -> Digest {
        Digest::new(self.0.finalize().as_bytes())
    }
}

pub(super) fn blake3() -> Box<dyn Hasher> {
    Box::new(Blake3(blake3::Hasher::new()))
}

/// CRC-32 (IEEE 802.3, the one zip, PNG and SFV use), printed big-endian.
struct Crc32(crc32fast::Hasher);

impl Hasher for Crc32 {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    fn finish(&self) -> Digest {
        Digest::new(&self.0.clone().finalize().to_be_bytes())
    }
}

pub(super) fn crc32() -> Box<dyn Hasher> {
    Box::new(Crc32(crc32fast::Hasher::new()))
}

/// CRC-32C (Castagnoli, iSCSI), printed big-endian as rhash prints it.
struct Crc32c(crc_fast::Digest);

impl Hasher for Crc32c {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    fn finish(&self) -> Digest {
        Digest::new(&(self.0.finalize() as u32).to_be_bytes())
    }
}

pub(super) fn crc32c() -> Box<dyn Hasher> {
    Box::new(Crc32c(crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Iscsi)))
}

/// CRC-64/NVME (the S3 default checksum), printed big-endian as the CRCs here are.
struct Crc64Nvme(crc_fast::Digest);

impl Hasher for Crc64Nvme {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    fn finish(&self) -> Digest {
        Digest::new(&self.0.finalize().to_be_bytes())
    }
}

pub(super) fn crc64nvme() -> Box<dyn Hasher> {
    Box::new(Crc64Nvme(crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc64Nvme)))
}

/// XXH64, seed 0, in xxhsum's canonical (big-endian) form.
struct Xxh32(xxhash_rust::xxh32::Xxh32);

impl Hasher for Xxh32 {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    fn finish(&self) -> Digest {
        Digest::new(&self.0.digest().to_be_bytes())
    }
}

pub(super) fn xxh32() -> Box<dyn Hasher> {
    Box::new(Xxh32(xxhash_rust::xxh32::Xxh32::new(0)))
}

struct Xxh64(xxhash_rust::xxh64::Xxh64);

impl Hasher for Xxh64 {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    fn finish(&self) -> Digest {
        Digest::new(&self.0.digest().to_be_bytes())
    }
}

pub(super) fn xxh64() -> Box<dyn Hasher> {
    Box::new(Xxh64(xxhash_rust::xxh64::Xxh64::new(0)))
}

/// XXH3-64, seed 0, canonical form.
use std::hash::Hasher as _;

struct Xxh3(twox_hash::XxHash3_64);

impl Hasher for Xxh3 {
    fn update(&mut self, data: &[u8]) {
        self.0.write(data);
    }
    fn finish(&self) -> Digest {
        Digest::new(&self.0.finish().to_be_bytes())
    }
}

pub(super) fn xxh3() -> Box<dyn Hasher> {
    Box::new(Xxh3(twox_hash::XxHash3_64::new()))
}

/// XXH3-128, seed 0, canonical form (high half first, as xxhsum prints it).
struct Xxh128(twox_hash::XxHash3_128);

impl Hasher for Xxh128 {
    fn update(&mut self, data: &[u8]) {
        self.0.write(data);
    }
    fn finish(&self) -> Digest {
        Digest::new(&self.0.finish_128().to_be_bytes())
    }
}

pub(super) fn xxh128() -> Box<dyn Hasher> {
    Box::new(Xxh128(twox_hash::XxHash3_128::new()))
}
