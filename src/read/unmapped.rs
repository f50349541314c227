//! [`Fetch::Mapped`](super::Fetch::Mapped) where files are not mapped (Windows): a page
//! of a mapped view that the disk cannot read raises an exception that would end the
//! process, where Unix's guarded mapping ([`crate::mapping`] there) turns it into the
//! file's error. So every file is read through a buffer here, which the stream fetch
//! does when this says `None`.

use super::ReadError;
use crate::algo::Hasher;
use std::fs::File;
use std::sync::atomic::AtomicU64;

/// Never maps: `None`, read the file through a buffer.
pub(super) fn read<H: Hasher + ?Sized>(
    _file: &File,
    _len: u64,
    _sinks: &mut [Box<H>],
    _parallel: bool,
    _only_if_cached: bool,
    _progress: Option<&AtomicU64>,
) -> Option<Result<u64, ReadError>> {
    None
}
