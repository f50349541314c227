//! Sparse files: the holes hashed from a buffer of zeros, never read (issue 27). Reading
//! a hole costs the kernel a zeroed page of page cache for every 4 KiB of it, most of
//! the time of a cold read of a sparse file, and it fills the cache with zeros; a
//! file's data extents, found with `lseek(SEEK_DATA)` and `lseek(SEEK_HOLE)`, are read
//! and the holes between them are fed from [`zeros`].
//!
//! Only a file whose stat says it holds enough holes ([`worth_it`]: its allocated
//! blocks fall short of its size by [`MIN_HOLES`]) takes this path: an ordinary file
//! pays no `lseek`. The extents are asked one at a time, at the offset the read has
//! reached, so data written into a hole before the read gets there is read; a write
//! into a hole already fed as zeros moves the file's mtime, which the stat after the
//! read ([`super::settle`]) catches, as for any write behind the read. A file system
//! without `SEEK_DATA` (`EINVAL`, or any error but `ENXIO`) is read plainly from there
//! on; `ENXIO` means no data at or after the offset: the rest, up to the stat's size, is
//! a hole (a file that shrank meanwhile is caught by the stat after). Reads stop at the
//! stat's size; `EIO` in a data extent is the read's error.

use super::{Reader, Turn, feed};
use crate::algo::Hasher;
use crate::device::{cannot_nowait, past_last_data, pread_nowait, seek_extent};
use crate::sys::{FileExt, MetadataExt};
use std::fs::{File, Metadata};
use std::io::{self, Read};

/// Unallocated bytes (the size less the allocated blocks) from which a file's holes are
/// looked for: below it, the `lseek`s would cost more than the holes they skip.
pub(crate) const MIN_HOLES: u64 = 1024 * 1024;

/// Bytes of zeros fed to the sinks at once for a hole: large, so a sink that hashes a
/// large slice on several threads (BLAKE3) does so.
const ZEROS_LEN: usize = 4 * 1024 * 1024;

/// The zeros holes are hashed from: allocated zeroed on first use and never written, so
/// its pages are the kernel's shared zero page and cost no memory. (A `static` array of
/// zeros would be read-only data: 4 MiB of the executable, the package and the image.)
fn zeros() -> &'static [u8] {
    static ZEROS: std::sync::OnceLock<Box<[u8]>> = std::sync::OnceLock::new();
    ZEROS.get_or_init(|| vec![0u8; ZEROS_LEN].into_boxed_slice())
}

/// Whether the file of stat `meta` is worth reading by its extents: a regular file whose
/// allocated blocks (`st_blocks`, 512 bytes each) fall short of its size by at least
/// [`MIN_HOLES`].
pub(crate) fn worth_it(meta: &Metadata) -> bool {
    meta.is_file() && meta.len().saturating_sub(meta.blocks().saturating_mul(512)) >= MIN_HOLES
}

/// What lies at an offset of a file, up to where (exclusive, at most the stat's size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Span {
    /// Bytes to read, up to this offset.
    Data(u64),
    /// A hole (zeros) up to this offset.
    Hole(u64),
}

impl Span {
    fn end(self) -> u64 {
        match self {
            Span::Data(e) | Span::Hole(e) => e,
        }
    }
}

/// A walk over a file's extents, front to back, one `lseek` pair per extent: the span
/// last found, and whether the file system answers `SEEK_DATA`.
#[derive(Clone, Debug)]
pub(crate) struct Extents {
    /// The stat's size: spans end there.
    size: u64,
    /// The span last found and where it starts.
    known: Option<(u64, Span)>,
    /// `SEEK_DATA` failed: everything from here on is data.
    plain: bool,
}

impl Extents {
    /// A walk over `size` bytes (by the stat before the read).
    pub(crate) fn new(size: u64) -> Extents {
        Extents { size, known: None, plain: false }
    }

    /// The span at `off` (below the size) in `file`.
    pub(crate) fn at(&mut self, file: &File, off: u64) -> Span {
        if let Some((start, span)) = self.known
            && start <= off
            && off < span.end()
        {
            return span;
        }
        let span = self.ask(file, off);
        self.known = Some((off, span));
        span
    }

    /// Asks the file system what lies at `off`.
    fn ask(&mut self, file: &File, off: u64) -> Span {
        if self.plain {
            return Span::Data(self.size);
        }
        match seek_extent(file, off, false) {
            Ok(d) if d > off => Span::Hole(d.min(self.size)),
            Ok(_) => match seek_extent(file, off, true) {
                Ok(h) if h > off => Span::Data(h.min(self.size)),
                // A hole punched at `off` meanwhile, or the file shrank: read plainly,
                // the stat after the read judges.
                _ => Span::Data(self.size),
            },
            // No data at or after `off`: a hole to the size.
            Err(e) if past_last_data(&e) => Span::Hole(self.size),
            // No SEEK_DATA here (EINVAL), or it failed: plain reads from now on.
            Err(_) => {
                self.plain = true;
                Span::Data(self.size)
            }
        }
    }

    /// Reads the bytes at `off` into `buf`, a hole as zeros without reading it, at most
    /// to the end of the span at `off`: the bytes given (0 at the size, or when the file
    /// ended early).
    pub(crate) fn read_at(&mut self, file: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
        if off >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let span = self.at(file, off);
        let n = clamp(buf.len(), span.end() - off);
        match span {
            Span::Hole(_) => {
                buf[..n].fill(0);
                Ok(n)
            }
            Span::Data(_) => file.read_at(&mut buf[..n], off),
        }
    }
}

/// `want` bytes, at most `left`.
fn clamp(want: usize, left: u64) -> usize {
    usize::try_from(left).map_or(want, |l| l.min(want))
}

/// A reader of a regular file from an offset on, with `pread`, its holes given as zeros
/// without reading them when the file is [`worth_it`] (plainly otherwise); it stops at
/// the size of the stat it was made with. For the readers outside the hashing engine
/// (the PAR2 recovery data of `protect`, and its check).
pub(crate) struct Zeroed<'f> {
    file: &'f File,
    extents: Option<Extents>,
    size: u64,
    pos: u64,
}

impl<'f> Zeroed<'f> {
    /// Reads `file`, of stat `meta`, from `pos`.
    pub(crate) fn new(file: &'f File, meta: &Metadata, pos: u64) -> Zeroed<'f> {
        let extents = worth_it(meta).then(|| Extents::new(meta.len()));
        Zeroed { file, extents, size: meta.len(), pos }
    }
}

impl Read for Zeroed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = match &mut self.extents {
            Some(x) => x.read_at(self.file, buf, self.pos)?,
            None if self.pos >= self.size => 0,
            None => {
                let n = clamp(buf.len(), self.size - self.pos);
                self.file.read_at(&mut buf[..n], self.pos)?
            }
        };
        self.pos += n as u64;
        Ok(n)
    }
}

/// Feeds the `len` bytes (by its stat) of the regular `file` to every sink, its data
/// extents read through the reader's buffer and its holes fed from [`zeros`]; returns
/// the bytes fed, fewer than `len` when the file ended early. On a seeking disk
/// (`turn`) the data is read as [`super::stream`] reads it: from the page cache without
/// waiting, else under the device's lock, which is let go for a hole (hashing zeros
/// needs no disk).
pub(super) fn whole<H: Hasher + ?Sized>(
    file: &File,
    len: u64,
    sinks: &mut [Box<H>],
    reader: &mut Reader<'_>,
    turn: Option<Turn<'_>>,
) -> io::Result<u64> {
    if reader.buf.len() < reader.opts.buffer_size {
        *reader.buf = vec![0; reader.opts.buffer_size];
    }
    let buf = &mut reader.buf[..reader.opts.buffer_size.max(4096)];
    let progress = reader.opts.progress;
    let mut extents = Extents::new(len);
    let mut guard = None;
    let mut waiting = false;
    let mut off = 0u64;
    while off < len {
        let end = match extents.at(file, off) {
            Span::Hole(end) => {
                guard = None;
                waiting = false;
                while off < end {
                    let n = clamp(ZEROS_LEN, end - off);
                    feed(sinks, &zeros()[..n], progress);
                    off += n as u64;
                }
                continue;
            }
            Span::Data(end) => end,
        };
        let want = clamp(buf.len(), end - off);
        let r = match turn {
            Some(_) if !waiting => pread_nowait(file, &mut buf[..want], off),
            _ => file.read_at(&mut buf[..want], off),
        };
        let n = match r {
            Ok(0) => return Ok(off),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if turn.is_some()
                    && !waiting
                    && (e.kind() == io::ErrorKind::WouldBlock || cannot_nowait(&e)) =>
            {
                waiting = true;
                if let Some(t) = turn {
                    guard = t.lock().map(|l| l.lock().unwrap_or_else(|e| e.into_inner()));
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        off += n as u64;
        if off == len {
            guard = None;
        }
        feed(sinks, &buf[..n], progress);
    }
    drop(guard);
    Ok(off)
}

#[cfg(test)]
mod tests;
