//! BTIH, the BitTorrent v1 info-hash of a single-file torrent, as `rhash --btih FILE`
//! computes it: SHA-1 of the bencoded info dictionary
//! `d 6:length i<size>e 4:name <n>:<base name> 12:piece length i<p>e 6:pieces <20k>:<SHA-1 of each piece> e`
//! (keys in bencode's sorted order, as BEP 3 defines the dictionary). rhash picks the
//! piece length from the size, uTorrent's rule: 16 KiB below 16 MiB, 8 MiB from 4 GiB,
//! and in between the size's highest set bit above 16 MiB divided by 1024 (so 32 KiB for
//! 16 MiB up to 32 MiB). Standard input is named `(stdin)` with length 0 (rhash's own
//! result for it). Without [`Hasher::begin`] there is no file entry: the dictionary holds
//! only the piece length (16 KiB) and pieces, as librhash hashes a bare message.
//! Memory: 20 bytes per piece (about 2.4 KiB per GiB above 4 GiB).

use super::{Hasher, Input};
use crate::digest::Digest;
use sha1::{Digest as _, Sha1};

const MIN_PIECE: u64 = 16 * 1024;

/// rhash's piece length for a file of `size` bytes.
pub(crate) fn piece_length(size: u64) -> u64 {
    const MIB16: u64 = 16 << 20;
    if size < MIB16 {
        return MIN_PIECE;
    }
    if size >= 4 << 30 {
        return 8 << 20;
    }
    let mut hi = MIB16 << 1;
    while hi <= size {
        hi <<= 1;
    }
    hi >> 10
}

#[derive(Clone)]
pub(super) struct Btih {
    /// (length, base name) of the file entry, when told by `begin`.
    file: Option<(u64, Vec<u8>)>,
    piece_len: u64,
    /// SHA-1 of the current piece so far.
    piece: Sha1,
    in_piece: u64,
    /// The SHA-1s of the finished pieces, concatenated.
    pieces: Vec<u8>,
    /// Whether any byte was fed (the piece length is fixed from then on).
    started: bool,
}

fn bencode_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(b.len().to_string().as_bytes());
    out.push(b':');
    out.extend_from_slice(b);
}

fn bencode_int(out: &mut Vec<u8>, n: u64) {
    out.push(b'i');
    out.extend_from_slice(n.to_string().as_bytes());
    out.push(b'e');
}

impl Hasher for Btih {
    fn begin(&mut self, input: &Input) {
        let size = input.size.unwrap_or(0);
        self.file = Some((size, input.name.to_vec()));
        if !self.started {
            self.piece_len = piece_length(size);
        }
    }

    fn update(&mut self, mut data: &[u8]) {
        if !data.is_empty() {
            self.started = true;
        }
        while !data.is_empty() {
            let take = ((self.piece_len - self.in_piece) as usize).min(data.len());
            self.piece.update(&data[..take]);
            self.in_piece += take as u64;
            data = &data[take..];
            if self.in_piece == self.piece_len {
                self.pieces.extend_from_slice(&self.piece.finalize_reset());
                self.in_piece = 0;
            }
        }
    }

    fn finish(&self) -> Digest {
        let mut info = Vec::with_capacity(self.pieces.len() + 128);
        info.push(b'd');
        if let Some((size, name)) = &self.file {
            bencode_bytes(&mut info, b"length");
            bencode_int(&mut info, *size);
            bencode_bytes(&mut info, b"name");
            bencode_bytes(&mut info, name);
        }
        bencode_bytes(&mut info, b"piece length");
        bencode_int(&mut info, self.piece_len);
        bencode_bytes(&mut info, b"pieces");
        let last = (self.in_piece > 0).then(|| self.piece.clone().finalize());
        let n = self.pieces.len() + if last.is_some() { 20 } else { 0 };
        info.extend_from_slice(n.to_string().as_bytes());
        info.push(b':');
        info.extend_from_slice(&self.pieces);
        if let Some(last) = last {
            info.extend_from_slice(&last);
        }
        info.push(b'e');
        Digest::new(&Sha1::digest(&info))
    }
}

pub(super) fn btih() -> Box<dyn Hasher> {
    Box::new(Btih {
        file: None,
        piece_len: MIN_PIECE,
        piece: Sha1::new(),
        in_piece: 0,
        pieces: Vec::new(),
        started: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rhash's `bt_default_piece_length` at its boundaries.
    #[test]
    fn piece_length_follows_rhash() {
        assert_eq!(piece_length(0), 16384);
        assert_eq!(piece_length((16 << 20) - 1), 16384);
        assert_eq!(piece_length(16 << 20), 32768);
        assert_eq!(piece_length((32 << 20) - 1), 32768);
        assert_eq!(piece_length(32 << 20), 65536);
        assert_eq!(piece_length((2 << 30) - 1), 2 << 20);
        assert_eq!(piece_length(2 << 30), 4 << 20);
        assert_eq!(piece_length((4 << 30) - 1), 4 << 20);
        assert_eq!(piece_length(4 << 30), 8 << 20);
        assert_eq!(piece_length(1 << 40), 8 << 20);
    }

    #[test]
    fn base_name_as_rhash_takes_it() {
        assert_eq!(Input::for_path(b"a/b/c.txt", None).name, b"c.txt");
        assert_eq!(Input::for_path(b"c.txt", None).name, b"c.txt");
        assert_eq!(Input::for_path(b"dir\\win.txt", None).name, b"win.txt");
    }
}
