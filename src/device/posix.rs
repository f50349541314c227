//! The storage-probe seam's part that every Unix shares (Linux, macOS): the kinds of
//! special files, extended attributes' names, and where a sparse file's data lies
//! (`lseek(SEEK_DATA / SEEK_HOLE)`, on Linux and on macOS's APFS), and which pages of a
//! mapping the page cache holds (`mincore`).

use super::XATTR_PREFIX;
use crate::mapping::Mapping;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// The row of `KINDS` of a file type.
pub(super) fn kind_of(ft: &std::fs::FileType) -> usize {
    if ft.is_dir() {
        0
    } else if ft.is_fifo() {
        1
    } else if ft.is_socket() {
        2
    } else if ft.is_block_device() {
        3
    } else if ft.is_char_device() {
        4
    } else if ft.is_symlink() {
        5
    } else {
        6
    }
}

/// Whether the file at `path` has a POSIX ACL, and other extended attributes than
/// fixity's own (one `listxattr`); `None` where the file system has no attributes.
pub(super) fn attribute_flags(path: &Path) -> Option<(bool, bool)> {
    let names = xattr::list(path).ok()?;
    let (mut acl, mut xattrs) = (false, false);
    for name in names {
        let name = name.as_encoded_bytes();
        if name == b"system.posix_acl_access" {
            acl = true;
        } else if !name.starts_with(XATTR_PREFIX.as_bytes()) {
            xattrs = true;
        }
    }
    Some((acl, xattrs))
}

/// Where the data of a sparse file lies: the offset of the first data (`hole` false) or
/// hole (`hole` true) at or after `off` (`lseek(SEEK_DATA / SEEK_HOLE)`); `ENXIO` past
/// the last data.
#[allow(unsafe_code)]
pub(crate) fn seek_extent(file: &File, off: u64, hole: bool) -> io::Result<u64> {
    use std::os::fd::AsRawFd;
    let whence = if hole { libc::SEEK_HOLE } else { libc::SEEK_DATA };
    let off = libc::off_t::try_from(off).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: lseek on a descriptor the caller keeps open.
    let r = unsafe { libc::lseek(file.as_raw_fd(), off, whence) };
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r as u64) }
}

/// Whether a [`seek_extent`] says there is no data past the offset (`ENXIO`).
pub(crate) fn past_last_data(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENXIO)
}

/// The share of a mapping's pages in the page cache, from `SAMPLES` pages spread evenly
/// over it (each asked of `mincore` on its own), or from every page of a mapping that
/// small. A `mincore` of a whole file looks up each of its pages in the page cache: for
/// a tree of large cached files that was 6% of a hash's CPU time (issue 27).
pub(crate) fn resident_share(map: &Mapping) -> f64 {
    const SAMPLES: usize = 64;
    let (ptr, len) = (map.as_ptr(), map.bytes().len());
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let pages = len.div_ceil(page);
    if pages == 0 {
        return 0.0;
    }
    if pages <= SAMPLES {
        let mut v = [0u8; SAMPLES];
        // SAFETY: the range is exactly the live mapping; `v` has a byte for each page.
        let r = unsafe { libc::mincore(ptr, len, v.as_mut_ptr().cast()) };
        if r != 0 {
            return 0.0;
        }
        return v[..pages].iter().filter(|&&b| b & 1 == 1).count() as f64 / pages as f64;
    }
    let mut resident = 0;
    for i in 0..SAMPLES {
        let p = i * pages / SAMPLES;
        let mut v = 0u8;
        // SAFETY: page `p` lies inside the live mapping of `len` bytes; `v` receives the
        // one status byte for the one page asked about.
        let r = unsafe {
            libc::mincore((ptr as *mut u8).add(p * page).cast(), 1, (&mut v as *mut u8).cast())
        };
        if r == 0 && v & 1 == 1 {
            resident += 1;
        }
    }
    resident as f64 / SAMPLES as f64
}

/// The fraction of `path`'s pages in the page cache (see [`resident_share`]): how cold a
/// "cold" run really is. 0 for an empty file.
pub(crate) fn resident_fraction(path: &Path) -> io::Result<f64> {
    let file = File::open(path)?;
    let len = usize::try_from(file.metadata()?.len())
        .map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    if len == 0 {
        return Ok(0.0);
    }
    // Mapped only for mincore, which reads page-table state, never the data.
    let map = Mapping::new(&file, len).ok_or_else(io::Error::last_os_error)?;
    Ok(resident_share(&map))
}
