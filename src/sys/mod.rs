//! The platform seam: the few facts about files and names that each operating system
//! gives its own way, behind one interface the rest of fixity uses on every system.
//!
//! - Names as bytes ([`OsStrExt`], [`OsStringExt`]): on Unix a name's own bytes; on
//!   Windows its UTF-8 (WTF-8 for a name that is not valid Unicode, as the standard
//!   library encodes it), so manifests and catalogs hold UTF-8 on every system.
//! - A file's metadata ([`MetadataExt`]): permission bits, owner, times in seconds and
//!   nanoseconds, blocks; on Windows what NTFS keeps in their place (the read-only flag
//!   as the mode, no owner, the last-write time, blocks from the size).
//! - Reads and writes at an offset ([`FileExt`]).
//! - A file's identity ([`id`], [`path_id`]): (device, inode) on Unix, (volume serial
//!   number, file index) on Windows, which has them only from an open handle.
//! - Separators ([`SEPARATORS`], [`portable_arg`]): fixity writes `/` in every name it
//!   keeps; Windows accepts `/` as well as `\`.
//! - An exclusive hold of a directory ([`hold_dir`]): an `flock` on Unix, a named mutex
//!   of the directory's identity on Windows (which locks no byte of a directory).
//!
//! What a device or file system says (spinning or not, cache residency, extents, the file
//! system's type) is [`crate::device`]'s, the other half of this seam.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

#[cfg(test)]
mod tests {
    #[test]
    fn a_directory_is_held_by_one_at_a_time_until_let_go() {
        let d = tempfile::tempdir().unwrap();
        let first = super::hold_dir(d.path()).unwrap();
        assert!(first.is_some());
        assert!(super::hold_dir(d.path()).unwrap().is_none(), "a second hold waits");
        let other = tempfile::tempdir().unwrap();
        assert!(super::hold_dir(other.path()).unwrap().is_some(), "another directory is free");
        drop(first);
        assert!(super::hold_dir(d.path()).unwrap().is_some(), "free once let go");
    }
}
