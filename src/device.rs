//! What the device and the file system say about a file, without reading its content:
//! its [`Stamp`] (size and modification time), the kind of a special file, the type of
//! the file system holding it, whether its disk spins, where its data starts on the
//! device, how much of it the page cache holds, and how to drop it from there. The reader
//! asks these; so do the walk, the catalogs, the storage policy and the benchmarks. With
//! `unsafe` for `fstatfs`, `mincore`, `posix_fadvise`, `preadv2` and `ioctl(FIEMAP)`.

use crate::mapping::Mapping;
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// What identifies a version of a file without reading it: size and modification time,
/// and the inode's change time (ctime) where it is known.
///
/// A program can set a file's mtime back (`touch -r`, `cp -p`, `rsync -t`, `tar x`,
/// `exiftool -P`) but not its ctime: the kernel sets it to the current time on every
/// change of the content or the inode. So an edit that keeps its mtime still moves the
/// ctime, and bitrot moves neither: that is what tells the two apart
/// ([`crate::catalog::Record::ctime_moved`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Inode change time, nanoseconds since the epoch, when known (a stat gives it; a
    /// record made before fixity kept it has none).
    pub ctime_ns: Option<i128>,
}

impl Stamp {
    /// The stamp of a file's metadata.
    pub(crate) fn of(md: &Metadata) -> Stamp {
        Stamp { size: md.len(), mtime_ns: mtime_ns(md), ctime_ns: Some(ctime_ns(md)) }
    }

    /// A stamp of size and mtime alone (no ctime known).
    pub fn sized(size: u64, mtime_ns: i128) -> Stamp {
        Stamp { size, mtime_ns, ctime_ns: None }
    }
}

/// Modification time in nanoseconds since the epoch.
pub(crate) fn mtime_ns(md: &Metadata) -> i128 {
    md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128
}

/// Inode change time in nanoseconds since the epoch.
pub(crate) fn ctime_ns(md: &Metadata) -> i128 {
    md.ctime() as i128 * 1_000_000_000 + md.ctime_nsec() as i128
}

/// Who may read a file: its permission bits, owner and group, and whether it carries an
/// access control list (`system.posix_acl_access`) or other extended attributes than
/// fixity's own. A repair that writes a file where none stands gives it these back, so a
/// file rebuilt is never readable by more people than the one lost: an ACL is not
/// restored, so a file that had one is made 0600 instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// It had a POSIX access control list (known when a record was written: false
    /// otherwise, and in records from before).
    pub acl: bool,
    /// It had extended attributes other than fixity's own and its ACL.
    pub xattrs: bool,
}

/// The prefix of fixity's own extended attributes (the xattr store's records): not what
/// [`Access::with_attributes`] calls the file's other attributes.
pub(crate) const XATTR_PREFIX: &str = "user.fixity.";

/// The bit of a stored mode that says the file had an ACL: above every bit of `st_mode`.
const ACL_BIT: u32 = 1 << 16;
/// The bit of a stored mode that says the file had other extended attributes.
const XATTRS_BIT: u32 = 1 << 17;

impl Access {
    /// The access of a file's metadata (its attributes not looked at).
    pub(crate) fn of(md: &Metadata) -> Access {
        Access { mode: md.mode() & 0o7777, uid: md.uid(), gid: md.gid(), acl: false, xattrs: false }
    }

    /// This access with what the attributes of the file at `path` say: an ACL, other
    /// attributes. Asked only when a record is written (one `listxattr`), not on every
    /// read. A file system without attributes has none.
    pub(crate) fn with_attributes(self, path: &Path) -> Access {
        if std::env::var_os("FIXITY_PROBE_NO_XATTR").is_some() {
            return self;
        }
        let Ok(names) = xattr::list(path) else { return self };
        let (mut acl, mut xattrs) = (false, false);
        for name in names {
            let name = name.as_encoded_bytes();
            if name == b"system.posix_acl_access" {
                acl = true;
            } else if !name.starts_with(XATTR_PREFIX.as_bytes()) {
                xattrs = true;
            }
        }
        Access { acl, xattrs, ..self }
    }

    /// The mode as a catalog stores it: the permission bits, and a bit each for an ACL
    /// and other attributes (above `st_mode`'s).
    pub fn stored_mode(&self) -> u32 {
        self.mode | if self.acl { ACL_BIT } else { 0 } | if self.xattrs { XATTRS_BIT } else { 0 }
    }

    /// The inverse of [`Access::stored_mode`], with the owner and group.
    pub fn from_stored(mode: u32, uid: u32, gid: u32) -> Access {
        let (acl, xattrs) = (mode & ACL_BIT != 0, mode & XATTRS_BIT != 0);
        Access { mode: mode & 0o7777, uid, gid, acl, xattrs }
    }

    /// `0640:1000:100`, with `+acl` and `+xattrs` after it when it had them: as the
    /// recovery sets' sidecars keep it (no space).
    pub fn text(&self) -> String {
        let mut t = format!("{:04o}:{}:{}", self.mode, self.uid, self.gid);
        if self.acl {
            t.push_str("+acl");
        }
        if self.xattrs {
            t.push_str("+xattrs");
        }
        t
    }

    /// The inverse of [`Access::text`].
    pub fn parse(text: &str) -> Option<Access> {
        let mut parts = text.split('+');
        let mut f = parts.next()?.split(':');
        let mode = u32::from_str_radix(f.next()?, 8).ok().filter(|m| *m <= 0o7777)?;
        let (uid, gid) = (f.next()?.parse().ok()?, f.next()?.parse().ok()?);
        if f.next().is_some() {
            return None;
        }
        let mut a = Access { mode, uid, gid, acl: false, xattrs: false };
        for flag in parts {
            match flag {
                "acl" if !a.acl => a.acl = true,
                "xattrs" if !a.xattrs => a.xattrs = true,
                _ => return None,
            }
        }
        Some(a)
    }
}

/// The kinds of file that are not regular, as messages name them: the kind alone, and
/// what a walk says when it leaves one out.
const KINDS: [(&str, &str); 7] = [
    ("directory", "skipping directory"),
    ("FIFO", "skipping FIFO"),
    ("socket", "skipping socket"),
    ("block device", "skipping block device"),
    ("character device", "skipping character device"),
    ("symbolic link", "skipping symbolic link"),
    ("special file", "skipping special file"),
];

fn kind_of(ft: &std::fs::FileType) -> usize {
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

/// Describes a non-regular file type for messages ("FIFO", "character device").
pub(crate) fn kind_name(ft: &std::fs::FileType) -> &'static str {
    KINDS[kind_of(ft)].0
}

/// What a walk says of a file of this type that it leaves out ("skipping FIFO").
pub(crate) fn skipping(ft: &std::fs::FileType) -> &'static str {
    KINDS[kind_of(ft)].1
}

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

/// Whether the file system holding `path` reports inode change times (ctimes) that
/// tell an edit whose mtime was put back from bitrot. Local file systems (ext4, XFS,
/// btrfs, ZFS, tmpfs) and network ones whose server keeps the ctime (NFS, SMB) do; a FUSE
/// file system reports whatever its server makes up (sshfs passes the remote's, others
/// give the mtime, the mount time or a constant), so there the classes follow size and
/// mtime alone, as before fixity kept ctimes (docs/catalog.md).
///
/// `FIXITY_CTIME` overrides the file system's type: `ignore` for a file system whose
/// ctimes move without an edit (a server that makes them up, a restore that sets every
/// file's anew), `trust` for a FUSE file system known to keep them (sshfs over a server
/// that does).
pub(crate) fn ctime_trusted(path: &Path) -> bool {
    match std::env::var("FIXITY_CTIME").as_deref() {
        Ok("ignore") => false,
        Ok("trust") => true,
        _ => fs_type(path).is_none_or(|t| ctime_trusted_on(&t)),
    }
}

/// [`ctime_trusted`] by the file system's type, as /proc/self/mountinfo names it.
fn ctime_trusted_on(fs_type: &str) -> bool {
    !(fs_type == "fuse" || fs_type == "fuseblk" || fs_type.starts_with("fuse."))
}

/// Whether the block device holding `path` is rotational (a spinning disk), from
/// /sys/dev/block/MAJ:MIN[/..]/queue/rotational. Unknown devices count as not rotational.
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

/// A mounted file system, as /proc/self/mountinfo lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mount {
    /// What is mounted: `/dev/vda1`, `server:/export`, `tmpfs`.
    pub source: String,
    /// The file system type: `ext4`, `nfs4`, `fuse.sshfs`.
    pub fs_type: String,
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
pub(crate) fn advise(file: &File, offset: u64, len: u64, advice: libc::c_int) -> libc::c_int {
    use std::os::fd::AsRawFd;
    // SAFETY: plain syscall on a descriptor the caller keeps open.
    unsafe {
        libc::posix_fadvise(file.as_raw_fd(), offset as libc::off_t, len as libc::off_t, advice)
    }
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
        let r = unsafe { libc::mincore(ptr, len, v.as_mut_ptr()) };
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
        let r = unsafe { libc::mincore((ptr as *mut u8).add(p * page).cast(), 1, &mut v) };
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

/// Asks the kernel to drop `path`'s pages from the page cache
/// (`posix_fadvise(POSIX_FADV_DONTNEED)`; works without root, for clean pages only).
pub(crate) fn evict(path: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let file = File::open(path)?;
    // SAFETY: plain syscall on a descriptor we own.
    unsafe {
        libc::fdatasync(file.as_raw_fd());
    }
    let r = advise(&file, 0, 0, libc::POSIX_FADV_DONTNEED);
    if r != 0 { Err(io::Error::from_raw_os_error(r)) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctimes_are_trusted_but_on_fuse() {
        for t in ["ext4", "xfs", "btrfs", "zfs", "tmpfs", "nfs4", "cifs", "smb3"] {
            assert!(ctime_trusted_on(t), "{t}");
        }
        for t in ["fuse", "fuseblk", "fuse.sshfs", "fuse.faultfs"] {
            assert!(!ctime_trusted_on(t), "{t}");
        }
        let a = |mode, acl, xattrs| Access { mode, uid: 1000, gid: 27, acl, xattrs };
        assert_eq!(Access::parse("0600:1000:27"), Some(a(0o600, false, false)));
        assert_eq!(Access::parse("4750:1000:27+acl+xattrs"), Some(a(0o4750, true, true)));
        for x in [a(0o644, false, false), a(0o600, true, false), a(0o7777, false, true)] {
            assert_eq!(Access::parse(&x.text()), Some(x));
            assert_eq!(Access::from_stored(x.stored_mode(), 1000, 27), x);
        }
        for bad in
            ["10000:0:0", "0644", "0644:1", "644:0:0:0", "rw:0:0", "0644:0:0+acl+acl", "0644:0:0+x"]
        {
            assert_eq!(Access::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_stamp_is_the_size_and_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"12345").unwrap();
        let md = std::fs::metadata(&p).unwrap();
        assert_eq!(
            Stamp::of(&md),
            Stamp { size: 5, mtime_ns: mtime_ns(&md), ctime_ns: Some(ctime_ns(&md)) }
        );
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
        assert_eq!(advise(&file, 2 << 20, 2 << 20, libc::POSIX_FADV_DONTNEED), 0);
        let half = resident_fraction(&big).unwrap();
        // tmpfs keeps every page whatever it is told.
        assert!(half == 0.5 || half == 1.0, "{half}");
        assert!(!is_rotational(Path::new("/proc/self")));
    }
}
