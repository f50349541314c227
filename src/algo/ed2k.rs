//! eD2k (eDonkey2000 / eMule file hash), as rhash computes it: the file is cut into
//! 9,728,000-byte (9500 KiB) chunks; a file of less than one chunk hashes to the MD4 of
//! its bytes, a longer one to the MD4 of the concatenated MD4s of its chunks. rhash
//! follows eMule's original convention for a size that is an exact multiple of the chunk
//! size: the list ends with the MD4 of an empty chunk (so 9,728,000 bytes hash to
//! MD4(MD4(chunk) || MD4(""))), checked against `rhash --ed2k` at the boundaries in
//! tests/crosscheck.rs. Memory is two MD4 states.

use super::Hasher;
use crate::digest::Digest;
use md4::{Digest as _, Md4};

/// eD2k chunk size in bytes.
pub(crate) const CHUNK: u64 = 9_728_000;

#[derive(Clone)]
pub(super) struct Ed2k {
    /// MD4 of the current chunk so far.
    chunk: Md4,
    /// Bytes in the current chunk.
    in_chunk: u64,
    /// MD4 over the digests of the finished chunks.
    list: Md4,
    /// Finished chunks.
    chunks: u64,
}

impl Hasher for Ed2k {
    fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let take = ((CHUNK - self.in_chunk) as usize).min(data.len());
            self.chunk.update(&data[..take]);
            self.in_chunk += take as u64;
            data = &data[take..];
            if self.in_chunk == CHUNK {
                let d = self.chunk.finalize_reset();
                self.list.update(d);
                self.chunks += 1;
                self.in_chunk = 0;
            }
        }
    }

    fn finish(&self) -> Digest {
        let last = self.chunk.clone().finalize();
        if self.chunks == 0 {
            return Digest::new(&last);
        }
        // The current (possibly empty) chunk closes the list.
        let mut list = self.list.clone();
        list.update(last);
        Digest::new(&list.finalize())
    }
}

pub(super) fn ed2k() -> Box<dyn Hasher> {
    Box::new(Ed2k { chunk: Md4::new(), in_chunk: 0, list: Md4::new(), chunks: 0 })
}
