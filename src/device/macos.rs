//! The storage-probe seam on macOS (the parts every Unix shares are in `posix.rs`): the
//! file system's type from `statfs` (`apfs`, `hfs`, `smbfs`, `exfat`, `msdos`,
//! `macfuse`), read-ahead hints (`F_RDAHEAD`, `F_RDADVISE`) and reads past the cache
//! (`F_NOCACHE`). macOS does not say which device spins without IOKit, where a file's
//! data lies (`F_LOG2PHYS` gives one block, not what the storage order needs), nor
//! whether a read would wait: those are `None` or "read plainly", and the storage policy
//! treats the device as flash (docs/platforms.md).

use super::{Advice, Mount};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// No pseudo file systems whose sizes lie (macOS has no procfs).
pub(crate) fn sized_by_content(_file: &File) -> bool {
    false
}

/// The type of the file system holding `path`, as `statfs` names it.
#[allow(unsafe_code)]
pub(crate) fn fs_type(path: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statfs is a valid buffer for statfs to fill; `c` is NUL-terminated.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    let name: Vec<u8> = st.f_fstypename.iter().take_while(|&&b| b != 0).map(|&b| b as u8).collect();
    (!name.is_empty()).then(|| String::from_utf8_lossy(&name).into_owned())
}

/// Ctimes are trusted but on FUSE (macFUSE, FUSE-T), whose servers make them up.
pub(super) fn ctime_trusted_on(fs_type: &str) -> bool {
    !(fs_type.contains("fuse") || fs_type == "fusefs")
}

/// The probe's words for what macOS says ([`super::Says`]): whether a disk spins is not
/// asked (IOKit), so the timed reads decide alone.
pub(crate) const SAYS: super::Says = super::Says {
    uncached: "F_NOCACHE",
    rotational: "macOS was not asked whether the disk spins",
    not_rotational: "macOS was not asked whether the disk spins",
    unknown: "macOS was not asked whether the disk spins",
};

/// Without IOKit: not rotational.
pub fn is_rotational(_path: &Path) -> bool {
    false
}

/// Without IOKit: unknown.
pub(crate) fn rotational(_dev: u64) -> Option<bool> {
    None
}

/// Not looked up by device number on macOS.
pub(crate) fn mount_of(_dev: u64) -> Option<Mount> {
    None
}

/// A device by its number, for messages: `device MAJOR:MINOR` (macOS's `dev_t` keeps the
/// major number in its top byte).
pub(crate) fn device_name(dev: u64) -> String {
    format!("device {}:{}", (dev >> 24) & 0xff, dev & 0xff_ffff)
}

/// Not asked on macOS: the order of reads is the names'.
pub fn first_extent(_file: &File) -> Option<u64> {
    None
}

/// No read that only takes what the cache holds: "read plainly".
pub(crate) fn pread_nowait(_file: &File, _buf: &mut [u8], _off: u64) -> io::Result<usize> {
    Err(io::ErrorKind::Unsupported.into())
}

/// [`pread_nowait`] is not offered on macOS.
pub(crate) fn cannot_nowait(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
}

/// Whether a page is cached: not asked without a mapping.
pub(crate) fn cached_at(_file: &File, _offset: u64) -> Option<bool> {
    None
}

/// Hints: `F_RDAHEAD` for a file read front to back, `F_RDADVISE` to read a range ahead;
/// macOS has no way to drop a file's clean pages (`DontNeed` is not taken: `EINVAL`).
/// Returns the error number, 0 when the hint was taken.
#[allow(unsafe_code)]
pub(crate) fn advise(file: &File, offset: u64, len: u64, advice: Advice) -> libc::c_int {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor the caller keeps open; `ra` lives through the call.
    let r = match advice {
        Advice::Sequential => unsafe { libc::fcntl(fd, libc::F_RDAHEAD, 1) },
        Advice::WillNeed => {
            let count = if len == 0 { i32::MAX } else { len.min(i32::MAX as u64) as i32 };
            let ra = libc::radvisory { ra_offset: offset as libc::off_t, ra_count: count };
            unsafe { libc::fcntl(fd, libc::F_RDADVISE, &ra) }
        }
        Advice::DontNeed => return libc::EINVAL,
    };
    if r == -1 { io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL) } else { 0 }
}

/// Dropping a file's pages from the cache: not offered on macOS (`purge` empties all of
/// it, as root).
pub(crate) fn evict(_path: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Opens a file for the storage probe: never following a symlink, never blocking on a
/// FIFO that replaced it, its reads past the cache (`F_NOCACHE`) when `direct`.
#[allow(unsafe_code)]
pub(crate) fn open_sample(path: &Path, direct: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    // SAFETY: fcntl on the descriptor just opened.
    if direct && unsafe { libc::fcntl(f.as_raw_fd(), libc::F_NOCACHE, 1) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}

/// Whether an [`open_sample`] past the cache failed because the file system cannot read
/// so: `F_NOCACHE` refused.
pub(crate) fn direct_refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINVAL) || e.raw_os_error() == Some(libc::ENOTSUP)
}
