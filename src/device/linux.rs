//! The storage-probe seam on Linux: what the kernel says of a file without reading it
//! (the parts every Unix shares are in `posix.rs`): the file system's type from /proc/self/mountinfo, whether a disk spins (sysfs), where a file's
//! data starts on the device (`FIEMAP`), what the page cache holds (`preadv2(RWF_NOWAIT)`,
//! `mincore`) and hints to it (`posix_fadvise`).

use super::{Advice, Mount};
use crate::sys::MetadataExt;
use std::fs::File;
use std::io;
use std::path::Path;

/// Whether `file` lives on a kernel pseudo file system (procfs, sysfs, ...), whose regular
/// files report a size (0, or one page) that has nothing to do with what a read returns:
/// there, the bytes read are the content, as `sha256sum /proc/cpuinfo` takes them. The
/// reader asks only when a read's length and the stat's size disagree, so it costs nothing
/// otherwise.
pub(crate) fn sized_by_content(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // Magic numbers from linux/magic.h.
    const PSEUDO: [i64; 9] = [
        0x9fa0,     // proc
        0x62656572, // sysfs
        0x64626720, // debugfs
        0x74726163, // tracefs
        0x73636673, // securityfs
        0x62656570, // configfs
        0x27e0eb,   // cgroup
        0x63677270, // cgroup2
        0xcafe4a11, // bpf
    ];
    // SAFETY: a zeroed statfs is a valid buffer for fstatfs to fill; the descriptor is open.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) };
    r == 0 && PSEUDO.contains(&(st.f_type as i64))
}

/// The type of the file system holding `path` (from /proc/self/mountinfo: the longest
/// mount point that contains it).
pub(crate) fn fs_type(path: &Path) -> Option<String> {
    let abs = std::fs::canonicalize(path).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, String)> = None;
    for line in info.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else { continue };
        let (Some(mount), Some(fstype)) = (fields.get(4), fields.get(sep + 1)) else { continue };
        let mount = mount.replace("\\040", " ");
        if abs.starts_with(&mount) && best.as_ref().is_none_or(|(len, _)| mount.len() >= *len) {
            best = Some((mount.len(), fstype.to_string()));
        }
    }
    best.map(|(_, t)| t)
}

/// [`super::Times::ctime_trusted`] by the file system's type, as /proc/self/mountinfo names it.
pub(super) fn ctime_trusted_on(fs_type: &str) -> bool {
    !(fs_type == "fuse" || fs_type == "fuseblk" || fs_type.starts_with("fuse."))
}

/// Whether the block device holding `path` is rotational (a spinning disk), from
/// /sys/dev/block/MAJ:MIN[/..]/queue/rotational. Unknown devices count as not rotational.
/// The probe's words for what Linux says ([`super::Says`]).
pub(crate) const SAYS: super::Says = super::Says {
    uncached: "O_DIRECT",
    rotational: "the kernel says rotational",
    not_rotational: "the kernel says not rotational",
    unknown: "the kernel has no rotational flag for it",
};

pub fn is_rotational(path: &Path) -> bool {
    std::fs::metadata(path).ok().and_then(|md| rotational(md.dev())).unwrap_or(false)
}

/// What the kernel says of the device `dev` (an `st_dev`): rotational or not, from
/// /sys/dev/block/MAJ:MIN[/..]/queue/rotational (a partition asks its disk); `None` when
/// it has no block device there (tmpfs, NFS, btrfs's anonymous devices, overlayfs).
pub(crate) fn rotational(dev: u64) -> Option<bool> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let base = format!("/sys/dev/block/{major}:{minor}");
    ["queue/rotational", "../queue/rotational"]
        .iter()
        .find_map(|rel| std::fs::read_to_string(format!("{base}/{rel}")).ok())
        .map(|s| s.trim() == "1")
}

/// The file system whose files have `st_dev` equal to `dev` (the first mount of it listed
/// in /proc/self/mountinfo; bind mounts of one file system share the device).
pub(crate) fn mount_of(dev: u64) -> Option<Mount> {
    use std::io::Read;
    // Room for a usual table at once: a /proc file has no size to go by.
    let mut info = String::with_capacity(16 << 10);
    File::open("/proc/self/mountinfo").ok()?.read_to_string(&mut info).ok()?;
    mount_in(&info, libc::major(dev), libc::minor(dev))
}

/// [`mount_of`] over the text of a mountinfo file.
fn mount_in(info: &str, major: u32, minor: u32) -> Option<Mount> {
    let want = format!("{major}:{minor}");
    info.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        let sep = fields.iter().position(|f| *f == "-")?;
        (fields.get(2) == Some(&want.as_str())).then(|| Mount {
            source: fields.get(sep + 2).unwrap_or(&"").replace("\\040", " "),
            fs_type: fields.get(sep + 1).unwrap_or(&"").to_string(),
        })
    })
}

/// Where the data of `file` starts on its device: the physical byte offset of its first
/// extent (`ioctl(FS_IOC_FIEMAP)`). `None` when the file system does not say (tmpfs,
/// FUSE, NFS), the file has no data on disk (empty, inline in its inode), or its
/// blocks are not allocated yet (delayed allocation of data still being written).
pub fn first_extent(file: &File) -> Option<u64> {
    use std::os::fd::AsRawFd;
    // struct fiemap and struct fiemap_extent, from linux/fiemap.h.
    #[repr(C)]
    #[derive(Default)]
    struct Extent {
        logical: u64,
        physical: u64,
        length: u64,
        reserved64: [u64; 2],
        flags: u32,
        reserved: [u32; 3],
    }
    #[repr(C)]
    #[derive(Default)]
    struct Fiemap {
        start: u64,
        length: u64,
        flags: u32,
        mapped_extents: u32,
        extent_count: u32,
        reserved: u32,
        extents: [Extent; 1],
    }
    // _IOWR('f', 11, struct fiemap): the size field is the 32-byte header's.
    const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
    // An extent whose place is not known yet, or not a place on the device.
    const NOT_PLACED: u32 = 0x2 /* UNKNOWN */ | 0x4 /* DELALLOC */ | 0x8 /* ENCODED */
        | 0x100 /* DATA_INLINE */ | 0x200 /* DATA_TAIL */;
    let mut map = Fiemap { length: u64::MAX, extent_count: 1, ..Fiemap::default() };
    // SAFETY: `map` is a struct fiemap followed by room for the one extent it asks for
    // (extent_count = 1); the descriptor is open for the duration of the call.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP as _, &mut map as *mut Fiemap) };
    let e = &map.extents[0];
    (r == 0 && map.mapped_extents >= 1 && e.flags & NOT_PLACED == 0).then_some(e.physical)
}

/// One `preadv2(..., RWF_NOWAIT)` at `off`: the bytes the page cache holds there, or
/// `WouldBlock` if getting them would wait for the device (`EOPNOTSUPP` or `EINVAL` where
/// the file system or the kernel cannot say).
pub(crate) fn pread_nowait(file: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // SAFETY: one iovec describing `buf`, which is valid and writable for its length; the
    // file descriptor is open for the duration of the call.
    let n =
        unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, off as libc::off_t, libc::RWF_NOWAIT) };
    if n < 0 { Err(nowait_error(io::Error::last_os_error())) } else { Ok(n as usize) }
}

/// A failed `preadv2` as the callers expect it: a kernel without the call (Linux before
/// 4.6, qemu-user) says `ENOSYS`, which glibc's wrapper turns into `EOPNOTSUPP` for a call
/// with flags but musl's (the static build) passes on; both mean "read plainly".
fn nowait_error(e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(libc::ENOSYS) {
        io::Error::from_raw_os_error(libc::EOPNOTSUPP)
    } else {
        e
    }
}

/// Whether the page at `offset` of `file` is in the page cache, by a one-byte
/// [`pread_nowait`]; `None` when the file system cannot say or the offset is past the end.
pub(crate) fn cached_at(file: &File, offset: u64) -> Option<bool> {
    match pread_nowait(file, &mut [0u8], offset) {
        Ok(1) => Some(true),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Some(false),
        _ => None,
    }
}

/// Tells the kernel how `len` bytes of `file` from `offset` will be used
/// (`posix_fadvise`; `len` 0: to the end): `POSIX_FADV_SEQUENTIAL`, `WILLNEED` (read them
/// ahead now, without waiting) or `DONTNEED` (drop their clean pages from the cache; a
/// memory file system keeps them). Returns the call's error number, 0 on success; a
/// failed hint is harmless to every caller but `evict`.
pub(crate) fn advise(file: &File, offset: u64, len: u64, advice: Advice) -> libc::c_int {
    use std::os::fd::AsRawFd;
    let advice = match advice {
        Advice::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        Advice::WillNeed => libc::POSIX_FADV_WILLNEED,
        Advice::DontNeed => libc::POSIX_FADV_DONTNEED,
    };
    // SAFETY: plain syscall on a descriptor the caller keeps open.
    unsafe {
        libc::posix_fadvise(file.as_raw_fd(), offset as libc::off_t, len as libc::off_t, advice)
    }
}

/// Asks the kernel to drop `path`'s pages from the page cache
/// (`posix_fadvise(POSIX_FADV_DONTNEED)`; works without root, for clean pages only).
pub(crate) fn evict(path: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let file = File::open(path)?;
    // SAFETY: plain syscall on a descriptor we own.
    unsafe {
        libc::fdatasync(file.as_raw_fd());
    }
    let r = advise(&file, 0, 0, Advice::DontNeed);
    if r != 0 { Err(io::Error::from_raw_os_error(r)) } else { Ok(()) }
}

/// A device by its number, for messages: `device MAJOR:MINOR`.
pub(crate) fn device_name(dev: u64) -> String {
    format!("device {}:{}", libc::major(dev), libc::minor(dev))
}

/// Opens a file for the storage probe: never following a symlink, never blocking on a
/// FIFO that replaced it, past the page cache (`O_DIRECT`) when `direct`.
pub(crate) fn open_sample(path: &Path, direct: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
    if direct {
        flags |= libc::O_DIRECT;
    }
    std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path)
}

/// Whether an [`open_sample`] past the cache failed because the file system cannot
/// read so (tmpfs, some FUSE): `EINVAL`.
pub(crate) fn direct_refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINVAL)
}

/// Whether a [`pread_nowait`] failed because the file system or the kernel cannot
/// tell what is cached (`EOPNOTSUPP`, `EINVAL`): read plainly.
pub(crate) fn cannot_nowait(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EINVAL))
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    #[test]
    fn ctimes_are_trusted_but_on_fuse() {
        for t in ["ext4", "xfs", "btrfs", "zfs", "tmpfs", "nfs4", "cifs", "smb3"] {
            assert!(ctime_trusted_on(t), "{t}");
        }
        for t in ["fuse", "fuseblk", "fuse.sshfs", "fuse.faultfs"] {
            assert!(!ctime_trusted_on(t), "{t}");
        }
    }

    #[test]
    fn a_kernel_without_preadv2_means_read_plainly() {
        let e = nowait_error(io::Error::from_raw_os_error(libc::ENOSYS));
        assert_eq!(e.raw_os_error(), Some(libc::EOPNOTSUPP));
        let e = nowait_error(io::Error::from_raw_os_error(libc::EAGAIN));
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn probes_name_what_they_find() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(kind_name(&std::fs::metadata(dir.path()).unwrap().file_type()), "directory");
        let null = std::fs::metadata("/dev/null").unwrap().file_type();
        assert_eq!(kind_name(&null), "character device");
        assert!(fs_type(dir.path()).is_some_and(|t| !t.is_empty()));
        assert_eq!(fs_type(Path::new("/proc/self")).as_deref(), Some("proc"));
        assert!(sized_by_content(&File::open("/proc/self/stat").unwrap()));
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        assert!(!sized_by_content(&File::open(&f).unwrap()));
        // A just-written file is in the page cache (all of its one page).
        assert_eq!(resident_fraction(&f).unwrap(), 1.0);
        std::fs::write(dir.path().join("empty"), b"").unwrap();
        assert_eq!(resident_fraction(&dir.path().join("empty")).unwrap(), 0.0);
        // A larger file is sampled: its second half dropped from the cache reads as half.
        let big = dir.path().join("big");
        std::fs::write(&big, vec![7u8; 4 << 20]).unwrap();
        let file = File::open(&big).unwrap();
        file.sync_all().unwrap();
        assert_eq!(resident_fraction(&big).unwrap(), 1.0);
        assert_eq!(advise(&file, 2 << 20, 2 << 20, Advice::DontNeed), 0);
        let half = resident_fraction(&big).unwrap();
        // tmpfs keeps every page whatever it is told.
        assert!(half == 0.5 || half == 1.0, "{half}");
        assert!(!is_rotational(Path::new("/proc/self")));
    }
}
