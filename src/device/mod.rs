//! What the device and the file system say about a file, without reading its content:
//! its [`Stamp`] (size and modification time), the kind of a special file, the type of
//! the file system holding it, whether its disk spins, where its data starts on the
//! device, how much of it the page cache holds, and how to drop it from there. The reader
//! asks these; so do the walk, the catalogs, the storage policy and the benchmarks. With
//! `unsafe` for `fstatfs`, `mincore`, `posix_fadvise`, `preadv2` and `ioctl(FIEMAP)`.

use crate::sys::MetadataExt;
use std::fs::Metadata;
use std::path::Path;

#[cfg(unix)]
mod posix;
#[cfg(unix)]
pub(crate) use posix::*;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::*;
#[cfg(target_os = "linux")]
pub use linux::{first_extent, is_rotational};

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub(crate) use macos::*;
#[cfg(target_os = "macos")]
pub use macos::{first_extent, is_rotational};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;
#[cfg(windows)]
pub use windows::{first_extent, is_rotational};

/// How the storage probe's evidence words what this system says of a disk
/// ([`crate::storage`]): the reads that bypass the cache, and the disk's own flag.
pub(crate) struct Says {
    /// Reads past the cache (`O_DIRECT`).
    pub(crate) uncached: &'static str,
    /// The disk says it spins, says it does not, or says nothing.
    pub(crate) rotational: &'static str,
    pub(crate) not_rotational: &'static str,
    pub(crate) unknown: &'static str,
}

/// How a range of a file will be used: a hint to the kernel ([`advise`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Advice {
    /// Read front to back: a wider read-ahead.
    Sequential,
    /// Read soon: start reading it now, without waiting.
    WillNeed,
    /// Not needed again: drop its clean pages from the cache.
    DontNeed,
}

/// A mounted file system, as the system lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mount {
    /// What is mounted: `/dev/vda1`, `server:/export`, `tmpfs`.
    pub source: String,
    /// The file system type: `ext4`, `nfs4`, `fuse.sshfs`, `NTFS`.
    pub fs_type: String,
}

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
        match attribute_flags(path) {
            Some((acl, xattrs)) => Access { acl, xattrs, ..self },
            None => self,
        }
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

/// Describes a non-regular file type for messages ("FIFO", "character device").
pub(crate) fn kind_name(ft: &std::fs::FileType) -> &'static str {
    KINDS[kind_of(ft)].0
}

/// What a walk says of a file of this type that it leaves out ("skipping FIFO").
pub(crate) fn skipping(ft: &std::fs::FileType) -> &'static str {
    KINDS[kind_of(ft)].1
}

/// What the file system of a tree says of its files' times, from one look at its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Times {
    /// How far apart two mtimes of a file may be and still be one: as coarse as the file
    /// system keeps them, 2 s on FAT (FAT12/16/32, `vfat`, `msdos`), 10 ms on exFAT, 0
    /// elsewhere (ext4, XFS, btrfs, APFS, NTFS keep ns or 100 ns). A copy to or from such
    /// a file system rounds the mtime: within the window it is not an edit.
    pub window_ns: i128,
    /// Whether its ctimes tell an edit that put its mtime back from bitrot. Local file
    /// systems (ext4, XFS, btrfs, ZFS, tmpfs) and network ones whose server keeps the
    /// ctime (NFS, SMB) do; a FUSE file system reports whatever its server makes up
    /// (sshfs passes the remote's, others give the mtime, the mount time or a constant),
    /// so there the classes follow size and mtime alone (docs/catalog.md); Windows keeps
    /// none. `FIXITY_CTIME` overrides the type: `ignore` for a file system whose ctimes
    /// move without an edit (a server that makes them up, a restore that sets every
    /// file's anew), `trust` for a FUSE file system known to keep them.
    pub ctime_trusted: bool,
}

impl Times {
    /// The ctime rule of a run whose store writes ctimes `slack_ns` apart from the file's
    /// own (`Store::ctime_slack_ns`): that slack where ctimes are trusted, else `None`
    /// (classes by size and mtime alone).
    pub(crate) fn ctime_within(self, slack_ns: i128) -> Option<i128> {
        self.ctime_trusted.then_some(slack_ns)
    }
}

/// The [`Times`] of the tree at `root`.
pub(crate) fn times(root: &Path) -> Times {
    let fs = fs_type(root);
    let ctime_trusted = match std::env::var("FIXITY_CTIME").as_deref() {
        Ok("ignore") => false,
        Ok("trust") => true,
        _ => fs.as_deref().is_none_or(ctime_trusted_on),
    };
    Times { window_ns: fs.as_deref().map_or(0, window_of), ctime_trusted }
}

/// [`Times::window_ns`] by the file system's name, as Linux, macOS or Windows give it.
fn window_of(fs_type: &str) -> i128 {
    match fs_type.to_ascii_lowercase().as_str() {
        "vfat" | "msdos" | "fat" | "fat12" | "fat16" | "fat32" => 2_000_000_000,
        "exfat" => 10_000_000,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fat_and_exfat_keep_coarse_mtimes() {
        for (t, w) in [("vfat", 2_000_000_000), ("FAT32", 2_000_000_000), ("msdos", 2_000_000_000)]
        {
            assert_eq!(window_of(t), w, "{t}");
        }
        assert_eq!(window_of("exfat"), 10_000_000);
        assert_eq!(window_of("exFAT"), 10_000_000);
        for t in ["ext4", "NTFS", "apfs", "tmpfs", "cifs"] {
            assert_eq!(window_of(t), 0, "{t}");
        }
    }

    #[test]
    fn access_is_kept_as_text_and_as_a_stored_mode() {
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
}
