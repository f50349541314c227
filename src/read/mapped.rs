//! [`Fetch::Mapped`](super::Fetch::Mapped): a large file mapped and fed to the sinks in
//! windows, instead of copied through a buffer.

use super::{ReadError, feed};
use crate::algo::Hasher;
use crate::device::resident_share;
use crate::mapping::{self, FaultKind, Mapping};
use std::fs::File;
use std::sync::atomic::AtomicU64;

/// Bytes handed to the sinks at once; each window's pages are dropped from this process
/// after use, so resident memory stays bounded however large the file.
const WINDOW: usize = 64 * 1024 * 1024;

/// Maps the regular `file` of `len` bytes and feeds it to the sinks in windows. `None`
/// when mapping is not possible, or when `only_if_cached` and most of the file is not in
/// the page cache (a rotational disk: random page faults from many threads would make the
/// head seek; the caller then reads sequentially). `parallel`: one sink hashes each window
/// on several threads, so the kernel is not told the access is sequential.
///
/// The mapping is guarded ([`crate::mapping`]): a page that cannot be read (EIO, or the
/// file shrank) reads as zeros instead of killing the process, and the file is then
/// reported as unreadable or changed, never given the digest of those zeros.
pub(super) fn read<H: Hasher + ?Sized>(
    file: &File,
    len: u64,
    sinks: &mut [Box<H>],
    parallel: bool,
    only_if_cached: bool,
    progress: Option<&AtomicU64>,
) -> Option<Result<u64, ReadError>> {
    let len_usize = usize::try_from(len).ok()?;
    let map = Mapping::new(file, len_usize)?;
    let ptr = map.as_ptr();
    // Mostly cached: at least 90% of the pages sampled are resident.
    if only_if_cached && resident_share(&map) < 0.9 {
        return None;
    }
    if !parallel {
        // One thread walks the mapping front to back: let the kernel read ahead.
        // SAFETY: advice on the live mapping.
        unsafe {
            libc::madvise(ptr, len_usize, libc::MADV_SEQUENTIAL);
        }
    }
    let bytes = map.bytes();
    let mut off = 0usize;
    while off < len_usize {
        let n = WINDOW.min(len_usize - off);
        feed(sinks, &bytes[off..off + n], progress);
        // SAFETY: a range inside the live mapping; DONTNEED on a private read-only file
        // mapping only drops our page-table entries (the page cache keeps the data).
        unsafe {
            libc::madvise((ptr as *mut u8).add(off) as *mut libc::c_void, n, libc::MADV_DONTNEED);
        }
        if map.fault().is_some() {
            break;
        }
        off += n;
    }
    Some(match map.fault() {
        None => Ok(len),
        Some(at) => Err(match mapping::fault_error(file, len, at) {
            FaultKind::Shrunk => ReadError::Changed,
            FaultKind::Io(e) => ReadError::Io(e),
        }),
    })
}
