//! [`Fetch::Whole`](super::Fetch::Whole) and streams: every byte, front to back, through
//! the reader's reused buffer. On a seeking disk, one reader at a time (see [`serial`]).

use super::{Reader, Turn, feed};
use crate::algo::Hasher;
use crate::device::{self, pread_nowait};
use std::fs::File;
use std::io::{self, Read};

/// Reads the regular `file` (`len` bytes by its stat) to the end, or up to `expect`
/// bytes, feeding every sink; serialized when the storage policy may want it (`turn`).
pub(super) fn whole<H: Hasher + ?Sized>(
    file: &File,
    len: u64,
    expect: Option<u64>,
    sinks: &mut [Box<H>],
    reader: &mut Reader<'_>,
    turn: Option<Turn<'_>>,
) -> io::Result<u64> {
    if reader.opts.advise {
        advise_sequential(file, len);
    }
    match turn {
        Some(turn) => serial(file, expect, sinks, reader, turn),
        None => to_end(&mut &*file, sinks, reader, expect),
    }
}

/// Reads `r` to the end, feeding every sink.
///
/// `expect` is a regular file's size from `fstat`: reading stops once that many bytes have
/// come, saving the extra `read` that would return 0. Growth is then the caller's to catch
/// (it compares the size after the read).
pub(super) fn to_end<H: Hasher + ?Sized>(
    r: &mut impl Read,
    sinks: &mut [Box<H>],
    reader: &mut Reader<'_>,
    expect: Option<u64>,
) -> io::Result<u64> {
    let buf = buffer(reader.buf, reader.opts.buffer_size, expect);
    let mut total = 0u64;
    loop {
        if expect == Some(total) && total > 0 {
            return Ok(total);
        }
        let n = match r.read(buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        total += n as u64;
        feed(sinks, &buf[..n], reader.opts.progress);
    }
}

/// The smallest buffer a read uses.
const MIN_BUFFER: usize = 16 * 1024;

/// A read buffer of `size` bytes, or, for a file of `expect` bytes, only as much of that
/// as the file needs (whole pages, at least 16 KiB): a run over small files neither
/// allocates nor faults in the large buffer a large file reads through. `buf` grows when
/// a larger file needs more, with a fresh zeroed allocation (calloc: pages zeroed lazily
/// by the kernel, not a byte-by-byte fill); its old contents are scratch.
fn buffer(buf: &mut Vec<u8>, size: usize, expect: Option<u64>) -> &mut [u8] {
    let want = match expect {
        Some(len) => {
            let pages = usize::try_from(len).unwrap_or(usize::MAX).div_ceil(4096);
            pages.saturating_mul(4096).clamp(MIN_BUFFER, size.max(MIN_BUFFER))
        }
        None => size,
    };
    if buf.len() < want {
        *buf = vec![0; want];
    }
    let n = buf.len().min(size.max(want));
    &mut buf[..n]
}

/// Reads a regular file that may be on a seeking disk. Data already in the page cache is
/// read without waiting (`preadv2(RWF_NOWAIT)`) and without the lock, so a warm tree
/// hashes on every core; at the first read that would wait for the disk the policy is
/// asked ([`Turn`]): on a seeking disk its lock is taken and the rest of the file is read
/// under it, so the disk serves one file at a time, front to back. Under the lock, the
/// next chunk is asked of the disk (`POSIX_FADV_WILLNEED`) before the current one is
/// hashed, and the lock is let go before the last chunk is hashed: the disk keeps reading
/// while the CPU hashes.
fn serial<H: Hasher + ?Sized>(
    file: &File,
    expect: Option<u64>,
    sinks: &mut [Box<H>],
    reader: &mut Reader<'_>,
    turn: Turn<'_>,
) -> io::Result<u64> {
    use crate::sys::FileExt;
    let buf = buffer(reader.buf, reader.opts.buffer_size, expect);
    let mut guard = None;
    let mut waiting = false;
    let mut off = 0u64;
    loop {
        if expect == Some(off) && off > 0 {
            return Ok(off);
        }
        let r = if waiting { file.read_at(buf, off) } else { pread_nowait(file, buf, off) };
        let n = match r {
            Ok(0) => return Ok(off),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if !waiting
                    && (e.kind() == io::ErrorKind::WouldBlock || device::cannot_nowait(&e)) =>
            {
                waiting = true;
                guard = turn.lock().map(|l| l.lock().unwrap_or_else(|e| e.into_inner()));
                continue;
            }
            Err(e) => return Err(e),
        };
        off += n as u64;
        if expect == Some(off) {
            // The last chunk: the next file may have the disk while this one is hashed.
            guard = None;
        } else if guard.is_some() {
            advise_willneed(file, off, buf.len() as u64);
        }
        feed(sinks, &buf[..n], reader.opts.progress);
    }
}

/// Asks the kernel to read `len` bytes of `file` from `off` into the page cache, without
/// waiting for them (`POSIX_FADV_WILLNEED`).
pub(crate) fn advise_willneed(file: &File, off: u64, len: u64) {
    device::advise(file, off, len, device::Advice::WillNeed);
}

/// Tells the kernel a file larger than 256 KiB is read front to back (more read-ahead).
pub(crate) fn advise_sequential(file: &File, len: u64) {
    if len > 256 * 1024 {
        device::advise(file, 0, 0, device::Advice::Sequential);
    }
}
