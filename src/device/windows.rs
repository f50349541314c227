//! The storage-probe seam on Windows: the file system's name from the volume
//! (`GetVolumeInformationByHandleW`: NTFS, ReFS, FAT32, exFAT), whether the disk has a
//! seek penalty (`IOCTL_STORAGE_QUERY_PROPERTY`, the question Windows' own defragmenter
//! asks). What Windows does not offer without reading (which pages the cache holds, where
//! a file's data lies on the disk, read-ahead hints for a file already open) is `None` or
//! a hint not given: the storage policy then treats the device as flash, and a cold
//! benchmark run is not offered (docs/platforms.md).

use super::{Advice, Mount};
use std::fs::File;
use std::io;
use std::os::windows::ffi::OsStrExt as _;
use std::os::windows::fs::OpenOptionsExt as _;
use std::os::windows::io::AsRawHandle;
use std::path::Path;

/// The row of `KINDS` of a file type: Windows has directories, links and files.
pub(super) fn kind_of(ft: &std::fs::FileType) -> usize {
    if ft.is_dir() {
        0
    } else if ft.is_symlink() {
        5
    } else {
        6
    }
}

/// No POSIX ACLs nor extended attributes to look at (NTFS's security descriptors are
/// not what a repair restores).
pub(super) fn attribute_flags(_path: &Path) -> Option<(bool, bool)> {
    None
}

/// No pseudo file systems whose sizes lie.
pub(crate) fn sized_by_content(_file: &File) -> bool {
    false
}

/// The name of the file system holding `path`, as Windows gives it: `NTFS`, `ReFS`,
/// `FAT32`, `exFAT`, `FAT`; a share's, as its server reports it.
pub(crate) fn fs_type(path: &Path) -> Option<String> {
    use windows_sys::Win32::Storage::FileSystem::GetVolumeInformationByHandleW;
    let file = crate::sys::open_dir(path).ok()?;
    let mut name = [0u16; 64];
    // SAFETY: every out pointer but the name is null (not asked); the name buffer's
    // length is passed; the handle is open for the call.
    let ok = unsafe {
        GetVolumeInformationByHandleW(
            file.as_raw_handle() as _,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            name.as_mut_ptr(),
            name.len() as u32,
        )
    };
    let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    (ok != 0 && len > 0).then(|| String::from_utf16_lossy(&name[..len]))
}

/// Windows' metadata has no inode change time ([`crate::sys::MetadataExt::ctime`]):
/// the classes follow size and mtime, as on a FUSE file system.
pub(super) fn ctime_trusted_on(_fs_type: &str) -> bool {
    false
}

/// The probe's words for what Windows says ([`super::Says`]): the volume's seek-penalty
/// property, false also where the disk does not say.
pub(crate) const SAYS: super::Says = super::Says {
    uncached: "unbuffered",
    rotational: "the disk reports a seek penalty",
    not_rotational: "the disk reports no seek penalty, or none",
    unknown: "the disk reports no seek penalty, or none",
};

/// Whether the disk holding `path` incurs a seek penalty (a spinning disk), asked of the
/// volume (`\\.\C:`) with `IOCTL_STORAGE_QUERY_PROPERTY`. A share, a mount point inside a
/// folder, or a driver that does not say: not rotational.
pub fn is_rotational(path: &Path) -> bool {
    seek_penalty(path).unwrap_or(false)
}

fn seek_penalty(path: &Path) -> Option<bool> {
    use windows_sys::Win32::Storage::FileSystem::GetVolumePathNameW;
    use windows_sys::Win32::System::IO::DeviceIoControl;
    use windows_sys::Win32::System::Ioctl::{
        DEVICE_SEEK_PENALTY_DESCRIPTOR, IOCTL_STORAGE_QUERY_PROPERTY, PropertyStandardQuery,
        STORAGE_PROPERTY_QUERY, StorageDeviceSeekPenaltyProperty,
    };
    let abs = std::fs::canonicalize(path).ok()?;
    let wide: Vec<u16> = abs.as_os_str().encode_wide().chain([0]).collect();
    let mut volume = [0u16; 300];
    // SAFETY: `wide` is NUL-terminated; the buffer's length is passed.
    if unsafe { GetVolumePathNameW(wide.as_ptr(), volume.as_mut_ptr(), volume.len() as u32) } == 0 {
        return None;
    }
    let len = volume.iter().position(|&c| c == 0)?;
    let volume = String::from_utf16_lossy(&volume[..len]);
    // `\\?\C:\` or `C:\`: the drive letter's device, `\\.\C:`.
    let letter = volume.trim_start_matches(r"\\?\").trim_end_matches('\\');
    if letter.len() != 2 || !letter.ends_with(':') {
        return None;
    }
    let device = std::fs::OpenOptions::new()
        .access_mode(0)
        .share_mode(3)
        .open(format!(r"\\.\{letter}"))
        .ok()?;
    let query = STORAGE_PROPERTY_QUERY {
        PropertyId: StorageDeviceSeekPenaltyProperty,
        QueryType: PropertyStandardQuery,
        AdditionalParameters: [0],
    };
    // SAFETY: a zeroed descriptor is a valid buffer for the call to fill.
    let mut out: DEVICE_SEEK_PENALTY_DESCRIPTOR = unsafe { std::mem::zeroed() };
    let mut got = 0u32;
    // SAFETY: in and out buffers with their sizes; the device handle is open.
    let ok = unsafe {
        DeviceIoControl(
            device.as_raw_handle() as _,
            IOCTL_STORAGE_QUERY_PROPERTY,
            (&query as *const STORAGE_PROPERTY_QUERY).cast(),
            size_of::<STORAGE_PROPERTY_QUERY>() as u32,
            (&mut out as *mut DEVICE_SEEK_PENALTY_DESCRIPTOR).cast(),
            size_of::<DEVICE_SEEK_PENALTY_DESCRIPTOR>() as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    (ok != 0 && got as usize >= size_of::<DEVICE_SEEK_PENALTY_DESCRIPTOR>())
        .then_some(out.IncursSeekPenalty)
}

/// The device of an `st_dev`: Windows' metadata has none (0), so no device to ask.
pub(crate) fn rotational(_dev: u64) -> Option<bool> {
    None
}

/// No mount table by device number on Windows.
pub(crate) fn mount_of(_dev: u64) -> Option<Mount> {
    None
}

/// Where a file's data lies on the disk is not asked on Windows: the order of reads is
/// the names'.
pub fn first_extent(_file: &File) -> Option<u64> {
    None
}

/// No read that only takes what the cache holds: "read plainly".
pub(crate) fn pread_nowait(_file: &File, _buf: &mut [u8], _off: u64) -> io::Result<usize> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Whether a page is cached: Windows does not say.
pub(crate) fn cached_at(_file: &File, _offset: u64) -> Option<bool> {
    None
}

/// Hints about an open file are not given on Windows (its cache manager reads ahead for
/// a file read in order on its own); 0, as a hint taken.
pub(crate) fn advise(_file: &File, _offset: u64, _len: u64, _advice: Advice) -> i32 {
    0
}

/// Which pages are cached: Windows does not say.
pub(crate) fn resident_fraction(_path: &Path) -> io::Result<f64> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Dropping a file's pages from the cache: not offered on Windows (a cold run there is
/// one after a restart).
pub(crate) fn evict(_path: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// A volume by its number, for messages (Windows' metadata has none).
pub(crate) fn device_name(_dev: u64) -> String {
    "the volume".to_string()
}

/// Opens a file for the storage probe: shared with every program, past the cache
/// (`FILE_FLAG_NO_BUFFERING`: reads of whole sectors at sector offsets) when `direct`.
pub(crate) fn open_sample(path: &Path, direct: bool) -> io::Result<File> {
    const FILE_FLAG_NO_BUFFERING: u32 = 0x2000_0000;
    const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
    let mut flags = FILE_FLAG_OPEN_REPARSE_POINT;
    if direct {
        flags |= FILE_FLAG_NO_BUFFERING;
    }
    std::fs::OpenOptions::new().read(true).share_mode(7).custom_flags(flags).open(path)
}

/// Whether an [`open_sample`] past the cache failed because the file system cannot
/// read so.
pub(crate) fn direct_refused(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::InvalidInput
}

/// Sparse files are read whole on Windows ([`crate::sys::MetadataExt::blocks`] says
/// none is sparse), so their extents are never asked.
pub(crate) fn seek_extent(_file: &File, _off: u64, _hole: bool) -> io::Result<u64> {
    Err(io::ErrorKind::Unsupported.into())
}

/// See [`seek_extent`].
pub(crate) fn past_last_data(_e: &io::Error) -> bool {
    false
}

/// [`pread_nowait`] is not offered on Windows.
pub(crate) fn cannot_nowait(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
}
