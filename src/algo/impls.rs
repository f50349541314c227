//! Adapters from the hash crates to [`Hasher`]. The crate chosen for each algorithm is
//! the fastest measured on our machines (see ../shared/design/crates.md), each with
//! runtime CPU-feature dispatch (SHA-NI, AVX2, AVX-512, PCLMULQDQ).

use super::Hasher;
use crate::digest::Digest;

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
    rust_crypto::<md5::Md5>()
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
pub(super) fn blake2b() -> Box<dyn Hasher> {
    rust_crypto::<blake2::Blake2b512>()
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

/// XXH64, seed 0, in xxhsum's canonical (big-endian) form.
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
