//! imohash (github.com/kalafut/imohash, its README, algorithm.md and `imohash.go`): a
//! sampled change detector, not a content hash. A file smaller than the 128 KiB threshold
//! is hashed whole; from 128 KiB on, only three 16 KiB samples are: the start, the 16 KiB
//! at `size / 2` and the last 16 KiB. The samples (or the whole file) go through
//! MurmurHash3 x64-128 with seed 0, whose 16 bytes are written as the Go package
//! `spaolacci/murmur3` sums them (h1 then h2, each big-endian); the file size, encoded as
//! an unsigned LEB128 varint (Go's `binary.PutUvarint`), then overwrites the digest's
//! first bytes. A change that keeps the size and misses the samples goes unseen.
//!
//! The hasher needs the size first ([`Hasher::begin`]): it then keeps only the sample
//! windows of whatever it is fed, or the reader reads just those
//! ([`Hasher::sample_ranges`]). Without a size it keeps everything it is fed and decides
//! at the end, as the reference's `Sum(data)` does for an in-memory slice; the file
//! reader never lets it do that with a stream (standard input is refused, see read.rs).

use super::murmur3::Murmur3;
use super::{Hasher, Input};
use crate::digest::Digest;
use std::ops::Range;

pub(crate) const SAMPLE: u64 = 16 * 1024;
pub(crate) const THRESHOLD: u64 = 128 * 1024;

#[derive(Clone)]
enum State {
    /// No size given: everything fed so far.
    Buffer(Vec<u8>),
    /// A size below the threshold: the whole input, streamed.
    Whole(Murmur3),
    /// A size from the threshold on: the three sample windows, filled as data arrives.
    Sampled(Box<[u8]>),
}

#[derive(Clone)]
pub(super) struct Imohash {
    size: u64,
    state: State,
    /// Bytes fed through `update` (the offset of the next one).
    pos: u64,
}

/// The three sample windows of a file of `size` bytes (`size >= THRESHOLD`).
fn windows(size: u64) -> [Range<u64>; 3] {
    let mid = size / 2;
    [0..SAMPLE, mid..mid + SAMPLE, size - SAMPLE..size]
}

/// The reference's result from the murmur3 digest of the hashed bytes and the size.
fn finalize(murmur: &Murmur3, size: u64) -> Digest {
    let le = murmur.finish();
    let le = le.as_bytes();
    let mut out = [0u8; 16];
    // spaolacci/murmur3 appends h1 and h2 big-endian; ours are little-endian.
    for (o, i) in out.chunks_exact_mut(8).zip(le.chunks_exact(8)) {
        for (a, b) in o.iter_mut().zip(i.iter().rev()) {
            *a = *b;
        }
    }
    let mut v = size;
    let mut i = 0;
    while v >= 0x80 {
        out[i] = v as u8 | 0x80;
        v >>= 7;
        i += 1;
    }
    out[i] = v as u8;
    Digest::new(&out)
}

fn murmur_of(data: &[u8]) -> Murmur3 {
    let mut m = Murmur3::with_seed(0);
    m.update(data);
    m
}

impl Hasher for Imohash {
    fn begin(&mut self, input: &Input) {
        let Some(size) = input.size else { return };
        if self.pos > 0 {
            return;
        }
        self.size = size;
        self.state = if size < THRESHOLD {
            State::Whole(Murmur3::with_seed(0))
        } else {
            State::Sampled(vec![0u8; 3 * SAMPLE as usize].into_boxed_slice())
        };
    }

    fn sample_ranges(&self) -> Option<Vec<Range<u64>>> {
        match self.state {
            State::Buffer(_) => None,
            State::Whole(_) => Some(std::iter::once(0..self.size).collect()),
            State::Sampled(_) => Some(windows(self.size).to_vec()),
        }
    }

    fn update(&mut self, data: &[u8]) {
        let at = self.pos;
        self.update_at(at, data);
        self.pos += data.len() as u64;
    }

    fn update_at(&mut self, offset: u64, data: &[u8]) {
        match &mut self.state {
            State::Buffer(b) => b.extend_from_slice(data),
            State::Whole(m) => m.update(data),
            State::Sampled(buf) => {
                let end = offset + data.len() as u64;
                for (i, w) in windows(self.size).iter().enumerate() {
                    let (s, e) = (w.start.max(offset), w.end.min(end));
                    if s < e {
                        let dst = i * SAMPLE as usize + (s - w.start) as usize;
                        let src = &data[(s - offset) as usize..(e - offset) as usize];
                        buf[dst..dst + src.len()].copy_from_slice(src);
                    }
                }
            }
        }
    }

    fn finish(&self) -> Digest {
        match &self.state {
            State::Buffer(b) => {
                let size = b.len() as u64;
                if size < THRESHOLD {
                    finalize(&murmur_of(b), size)
                } else {
                    let mut m = Murmur3::with_seed(0);
                    for w in windows(size) {
                        m.update(&b[w.start as usize..w.end as usize]);
                    }
                    finalize(&m, size)
                }
            }
            State::Whole(m) => finalize(m, self.size),
            State::Sampled(buf) => finalize(&murmur_of(buf), self.size),
        }
    }
}

pub(super) fn imohash() -> Box<dyn Hasher> {
    Box::new(Imohash { size: 0, state: State::Buffer(Vec::new()), pos: 0 })
}

/// algorithm.md's test message M(n): murmur3-128 of "A", "AA", ... (one hasher fed one
/// 'A' at a time), each sum appended as spaolacci/murmur3 writes it, cut to n bytes.
#[cfg(test)]
pub(super) fn spec_message(n: usize) -> Vec<u8> {
    let mut m = Murmur3::with_seed(0);
    let mut out = Vec::with_capacity(n + 16);
    while out.len() < n {
        m.update(b"A");
        let le = m.finish();
        for half in le.as_bytes().chunks_exact(8) {
            out.extend(half.iter().rev());
        }
    }
    out.truncate(n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_message_matches_algorithm_md() {
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(hex(&spec_message(16)), "035fc2b79a29b17a387df29c46dd9937");
        assert_eq!(
            hex(&spec_message(1_000_000)[1_000_000 - 16..]),
            "7b7cd46489e93605eb7894c5d338463f"
        );
    }

    /// algorithm.md / spec_test.go vectors with the default parameters (s = 16384,
    /// t = 131072), through the three ways in: no size, a size and a full stream, a size
    /// and only the sample ranges.
    #[test]
    fn spec_vectors() {
        let cases = [
            (0, "00000000000000000000000000000000"),
            (1, "016ac6dd306a3e594e711127c5b5a8e4"),
            (127, "7f0e0eaa0a415e2878303214a087fbab"),
            (128, "80017902d85ab752459758292a217ed8"),
            (4095, "ff1fc7e3b9890469ee676df99f6ac7b7"),
            (4096, "80203d4ea589349dcdf63511a8d49d4a"),
            (131072, "808008ed886018d5cd37a9b35bbae286"),
            (500000, "a0c21ea46738cf366d496962000a45f7"),
        ];
        for (n, want) in cases {
            let data = spec_message(n);
            let mut h = imohash();
            h.update(&data);
            assert_eq!(h.finish().to_hex(), want, "M({n}), no size");
            let input = Input { size: Some(n as u64), name: b"m" };
            let mut h = imohash();
            h.begin(&input);
            for c in data.chunks(7919) {
                h.update(c);
            }
            assert_eq!(h.finish().to_hex(), want, "M({n}), streamed with the size");
            let mut h = imohash();
            h.begin(&input);
            for r in h.sample_ranges().expect("sampled once the size is known") {
                h.update_at(r.start, &data[r.start as usize..r.end as usize]);
            }
            assert_eq!(h.finish().to_hex(), want, "M({n}), samples only");
        }
    }
}
