//! [`Fetch::Samples`](super::Fetch::Samples): only the byte ranges sampled sinks (imohash)
//! ask for, read with `pread`.

use super::{ReadError, Reader};
use crate::algo::Hasher;
use std::fs::File;
use std::io;
use std::sync::atomic::Ordering;

/// Reads only the byte ranges the sinks ask for ([`Hasher::sample_ranges`]; a sink that
/// asks for none gets the whole file) and hands each to them at its offset. Returns the
/// file's size as the sinks were told it: the bytes between the samples are never read
/// (the stat before and after the read still catch a change of size or mtime). A range
/// past the end (the file shrank) is a changed file.
pub(super) fn read<H: Hasher + ?Sized>(
    file: &File,
    size: u64,
    sinks: &mut [Box<H>],
    reader: &mut Reader<'_>,
) -> Result<u64, ReadError> {
    use crate::sys::FileExt;
    let buf = &mut *reader.buf;
    for h in sinks.iter_mut() {
        let ranges = h.sample_ranges().unwrap_or_else(|| std::iter::once(0..size).collect());
        for r in ranges {
            let len = (r.end - r.start) as usize;
            if buf.len() < len {
                buf.resize(len, 0);
            }
            match file.read_exact_at(&mut buf[..len], r.start) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Err(ReadError::Changed);
                }
                Err(e) => return Err(ReadError::Io(e)),
            }
            if let Some(p) = reader.opts.progress {
                p.fetch_add(len as u64, Ordering::Relaxed);
            }
            h.update_at(r.start, &buf[..len]);
        }
    }
    Ok(size)
}
