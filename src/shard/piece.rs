//! One piece of a file split across parts (a list's `P` entry): its byte range read with
//! `pread` (a sparse file's holes given as zeros, not read: [`Zeroed`]) and fed to each algorithm's piece hasher ([`crate::algo::Combine`]), with the
//! stat before the read compared with the plan's and the stat after with the one before,
//! as a whole file's read is. The merge joins the pieces' states into the file's digest.

use super::Piece;
use crate::algo::Algorithm;
use crate::read::{Admitted, OnChange, OpenMode, ReadError, ReadOptions, Zeroed};
use std::io::Read;

/// What reading one piece gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PieceResult {
    /// Read: the file's stat (size, mtime) and each algorithm's state. `changed`: the stat
    /// was not the plan's, so the range was not read (no states): the merge reports the
    /// file as changed since the plan.
    Hashed { size: u64, mtime_ns: Option<i128>, states: Vec<Vec<u8>>, changed: bool },
    /// Could not be read (`skipped`: left out on purpose, as a walked file that is no
    /// longer a regular file is).
    Unreadable { message: String, skipped: bool },
    /// Not read here: an algorithm does not combine from ranges, so the part holding the
    /// file's first piece reads the whole file.
    Covered,
}

/// Bytes read at once: enough for BLAKE3 to hash a read on several threads.
const READ: u64 = 4 << 20;

/// Whether every one of `algos` joins from pieces, so a piece is read on its own.
pub fn all_combine(algos: &[&'static Algorithm]) -> bool {
    algos.iter().all(|a| a.combine.is_some())
}

/// Reads `piece` of the file `name` (opened as `mode`), planned at `size` bytes and
/// `mtime_ns`, into one state per algorithm of `algos` (each of which combines).
pub(crate) fn hash(
    name: &[u8],
    mode: OpenMode,
    (size, mtime_ns): (u64, i128),
    piece: Piece,
    algos: &[&'static Algorithm],
    opts: &ReadOptions,
) -> PieceResult {
    let unreadable =
        |e: ReadError| PieceResult::Unreadable { message: e.message(), skipped: e.is_skip() };
    let path = crate::pathtext::bytes_path(name);
    let file = match crate::read::open(&path, mode) {
        Ok(f) => f,
        Err(e) => return unreadable(e),
    };
    let before = match crate::read::admit(&file, mode, None, opts) {
        Ok(Admitted::Regular(md)) => md,
        // A FIFO or device where the plan saw a file of `size` bytes.
        Ok(Admitted::Stream) => {
            return PieceResult::Hashed { size: 0, mtime_ns: None, states: vec![], changed: true };
        }
        Err(e) => return unreadable(e),
    };
    let now = (before.len(), crate::device::mtime_ns(&before));
    if now != (size, mtime_ns) {
        return PieceResult::Hashed {
            size: now.0,
            mtime_ns: Some(now.1),
            states: vec![],
            changed: true,
        };
    }
    if opts.advise {
        crate::read::advise_sequential(&file, piece.len());
    }
    let mut hashers: Vec<crate::algo::Piece> = algos
        .iter()
        .map(|a| a.combine.expect("only combining algorithms read pieces"))
        .map(|c| c.piece(piece.unit, piece.start))
        .collect();
    let mut buf = vec![0u8; READ.min(piece.len()) as usize];
    // A sparse file's holes (a VM image's) as zeros, not read into the page cache.
    let mut src = Zeroed::new(&file, &before, piece.start);
    let mut at = piece.start;
    while at < piece.end {
        let n = (piece.end - at).min(READ) as usize;
        match src.read_exact(&mut buf[..n]) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return unreadable(ReadError::Changed);
            }
            Err(e) => return unreadable(ReadError::Io(e)),
        }
        if let Some(p) = opts.progress {
            p.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        }
        if hashers.len() > 1 {
            use rayon::prelude::*;
            hashers.par_iter_mut().for_each(|h| h.update(&buf[..n]));
        } else {
            hashers.iter_mut().for_each(|h| h.update(&buf[..n]));
        }
        at += n as u64;
    }
    if let Err(e) = crate::read::settle(&file, &before, now.0, OnChange::Refuse) {
        return unreadable(e);
    }
    PieceResult::Hashed {
        size: now.0,
        mtime_ns: Some(now.1),
        states: hashers.into_iter().map(crate::algo::Piece::finish).collect(),
        changed: false,
    }
}
