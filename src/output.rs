//! Writing a manifest atomically: into a temporary file beside the target, then fsync,
//! rename over the target, and fsync the directory. A kill at any moment leaves either the
//! old manifest or the complete new one, never a torn file.
//!
//! The file replaced keeps what made it what it was: its permission bits, and its owner
//! and group where this process may set them (a 0600 manifest stays 0600). A symlink is
//! kept too: the file it points to is replaced (the temporary file is written beside that
//! file, not beside the link), and a dangling symlink gets its target created, as the
//! shell's `>` would. A target that exists and is neither a regular file nor a directory
//! (`/dev/null`, `/dev/stdout`, a FIFO) is written directly: there is nothing to replace
//! atomically, and renaming over it would replace the device node itself.

use crate::sys::MetadataExt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How many symlinks a target may pass through.
const MAX_LINKS: u32 = 40;

/// The infix of [`AtomicFile`]'s temporary names: `.NAME.fixity-tmp.PID.N`.
const TMP_INFIX: &str = ".fixity-tmp.";
/// The infix of `update`'s temporary names: `.NAME.fixity-update.PID`.
const UPDATE_INFIX: &str = ".fixity-update.";

/// Whether `name` is a temporary file of fixity's writers that belongs to another process
/// (one writing it now, or one killed before it could rename or remove it). Walks leave
/// such files out: they are fixity's state, not the tree's content. This process's own
/// temporary file is left to the reader, which knows it by inode.
pub(crate) fn foreign_temp_name(name: &[u8]) -> bool {
    let digits = |s: &[u8]| !s.is_empty() && s.len() <= 10 && s.iter().all(u8::is_ascii_digit);
    // `.` + NAME (not empty) + infix + the rest.
    let after = |infix: &str| -> Option<&[u8]> {
        let i = name.windows(infix.len()).rposition(|w| w == infix.as_bytes())?;
        (name[0] == b'.' && i > 1).then(|| &name[i + infix.len()..])
    };
    let pid = if let Some(rest) = after(TMP_INFIX) {
        match rest.iter().position(|&b| b == b'.') {
            Some(j) if digits(&rest[..j]) && digits(&rest[j + 1..]) => &rest[..j],
            _ => return false,
        }
    } else if let Some(rest) = after(UPDATE_INFIX) {
        if !digits(rest) {
            return false;
        }
        rest
    } else {
        return false;
    };
    pid != std::process::id().to_string().as_bytes()
}

/// A file being written that appears under its name only when [`AtomicFile::commit`]ted.
pub struct AtomicFile {
    file: Option<File>,
    tmp: PathBuf,
    target: PathBuf,
    /// Written in place (a device or FIFO): no temporary file, nothing to rename.
    direct: bool,
}

impl AtomicFile {
    /// Creates the temporary file in the directory of `target` (of the file it points to,
    /// when it is a symlink).
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        AtomicFile::create_mode(target, 0o666)
    }

    /// [`AtomicFile::create`], a new file (none in place) made with `new_mode` (before
    /// the umask): a repair makes one 0600 until it has its recorded owner and mode.
    pub fn create_mode(target: &Path, new_mode: u32) -> io::Result<AtomicFile> {
        let existing = match std::fs::metadata(target) {
            Ok(md) => Some(md),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if let Some(md) = &existing {
            if md.is_dir() {
                return Err(crate::sys::is_a_directory());
            }
            if !md.is_file() {
                let file = OpenOptions::new().write(true).open(target)?;
                let target = target.to_path_buf();
                return Ok(AtomicFile {
                    file: Some(file),
                    tmp: PathBuf::new(),
                    target,
                    direct: true,
                });
            }
        }
        let target = resolve_links(target, existing.as_ref())?;
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
        // Never wider than the file replaced, not even while empty.
        let mode = existing.as_ref().map_or(new_mode & 0o777, |md| md.mode() & 0o777);
        for attempt in 0..100u32 {
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(".fixity-tmp.{}.{attempt}", std::process::id()));
            let tmp = dir.join(tmp_name);
            match crate::sys::new_file_mode(OpenOptions::new().write(true).create_new(true), mode)
                .open(&tmp)
            {
                Ok(file) => {
                    let f = AtomicFile { file: Some(file), tmp, target, direct: false };
                    if let Some(md) = &existing {
                        f.take_over(md)?;
                    }
                    return Ok(f);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name"))
    }

    /// Gives the temporary file the owner, group and mode of the file it will replace.
    /// The owner and group are set where permitted (root; or a group the user is in) and
    /// silently kept otherwise, as `cp -p` does for a user; the mode always, after them
    /// (changing the owner clears set-id bits).
    fn take_over(&self, old: &Metadata) -> io::Result<()> {
        crate::sys::take_access(self.file.as_ref().expect("live file"), old)
    }

    /// Gives the temporary file `uid`, `gid` and `mode`, all or none: false (and the file
    /// left as it is) when the owner and group cannot be set (another user's file, for a
    /// user who is not root). The mode goes last (changing the owner clears set-id bits).
    pub fn give(&self, uid: u32, gid: u32, mode: u32) -> io::Result<bool> {
        crate::sys::give_access(self.file.as_ref().expect("live file"), uid, gid, mode)
    }

    /// Device and inode of the temporary file (so a walk can leave it out).
    pub fn inode(&self) -> Option<(u64, u64)> {
        let file = self.file.as_ref()?;
        Some(crate::sys::id(file, &file.metadata().ok()?))
    }

    /// Sets the modification time the file will have in place (a repaired file keeps the
    /// time its catalog record describes).
    pub fn set_modified(&self, time: std::time::SystemTime) -> io::Result<()> {
        match &self.file {
            Some(f) => f.set_times(std::fs::FileTimes::new().set_modified(time)),
            None => Ok(()),
        }
    }

    /// Moves the write position `n` bytes on without writing: a hole of zeros in the
    /// file (its length set by [`AtomicFile::set_len`] when nothing is written after it).
    pub(crate) fn skip(&mut self, n: u64) -> io::Result<()> {
        use std::io::Seek;
        let n = i64::try_from(n).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let file = self.file.as_mut().expect("live file");
        file.seek(io::SeekFrom::Current(n)).map(drop)
    }

    /// Sets the file's length (a hole at its end is not written).
    pub(crate) fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.as_ref().expect("live file").set_len(len)
    }

    /// Flushes, syncs and renames the file into place, then syncs the directory.
    pub fn commit(mut self) -> io::Result<()> {
        let dir = match self.target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        self.sync()?;
        let direct = self.direct;
        self.put()?;
        if !direct {
            sync_dir(&dir);
        }
        Ok(())
    }

    /// Flushes and syncs the file, nothing put in place: a set of recovery files is synced
    /// where it is made, on its own thread, and put in place later ([`AtomicFile::put`]).
    pub(crate) fn sync(&mut self) -> io::Result<()> {
        let file = self.file.as_mut().expect("live file");
        file.flush()?;
        match file.sync_all() {
            // A pipe or terminal cannot be synced.
            Err(_) if self.direct => Ok(()),
            r => r,
        }
    }

    /// Renames the file, which the caller synced after its last change
    /// ([`AtomicFile::sync`]), into place; the directory is not synced: the caller syncs it
    /// once for the files it put ([`sync_dir`]).
    pub(crate) fn put(mut self) -> io::Result<()> {
        drop(self.file.take().expect("not put twice"));
        if self.direct {
            // A device or FIFO has nothing to rename.
            return Ok(());
        }
        std::fs::rename(&self.tmp, &self.target)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.as_mut().expect("live file").write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("live file").flush()
    }
}

/// Syncs the directory `dir` (the renames into it), where it can be opened and synced.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.is_some() && !self.direct {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// The path to write for `target`: itself, or, when it is a symlink, the path it leads to
/// (followed link by link; a dangling one leads to the path to create). `existing`: what
/// `target` leads to, if anything (the resolved path must be that very file).
fn resolve_links(target: &Path, existing: Option<&Metadata>) -> io::Result<PathBuf> {
    let mut path = target.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(md) if md.file_type().is_symlink() => {
                let to = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(md) => {
                // A link the kernel resolves differently (a /proc "magic" link) is refused
                // rather than guessed at.
                if existing.is_some_and(|e| {
                    crate::sys::meta_id(target, e) != crate::sys::meta_id(&path, &md)
                }) {
                    break;
                }
                return Ok(path);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound && existing.is_none() => {
                return Ok(path);
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("cannot resolve the symbolic link {} to a file to replace", target.display()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};

    #[test]
    fn commit_replaces_and_drop_discards() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("m.sha256");
        std::fs::write(&target, b"old").unwrap();
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"new").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"partial").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    fn write_via(target: &Path, data: &[u8]) {
        let mut f = AtomicFile::create(target).unwrap();
        f.write_all(data).unwrap();
        f.commit().unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_replaced_files_mode_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("m.sha256");
        std::fs::write(&target, b"old").unwrap();
        for mode in [0o600, 0o640, 0o604] {
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).unwrap();
            write_via(&target, b"new");
            let md = std::fs::metadata(&target).unwrap();
            assert_eq!(md.mode() & 0o7777, mode);
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_kept_and_their_targets_written() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("real")).unwrap();
        let real = d.path().join("real/m.sha256");
        std::fs::write(&real, b"old").unwrap();
        let link = d.path().join("link");
        let chain = d.path().join("chain");
        std::os::unix::fs::symlink("real/m.sha256", &link).unwrap();
        std::os::unix::fs::symlink("link", &chain).unwrap();
        write_via(&chain, b"new");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(std::fs::symlink_metadata(&chain).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // Dangling: the target is created (the directory it is in must exist).
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink("real/new.sha256", &dangling).unwrap();
        write_via(&dangling, b"created");
        assert_eq!(std::fs::read(d.path().join("real/new.sha256")).unwrap(), b"created");
        assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
        // Nothing left behind, beside the link or the target.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 4);
        assert_eq!(std::fs::read_dir(d.path().join("real")).unwrap().count(), 2);
    }

    #[test]
    fn temporary_names_of_other_processes() {
        let own = std::process::id();
        let other = if own == 1 { 2 } else { own - 1 };
        for n in [format!(".m.sha256.fixity-tmp.{other}.0"), format!(".m.fixity-update.{other}")] {
            assert!(foreign_temp_name(n.as_bytes()), "{n}");
        }
        for n in [
            format!(".m.sha256.fixity-tmp.{own}.3"),
            format!(".m.fixity-update.{own}"),
            format!("m.fixity-tmp.{other}.0"),
            format!("..fixity-tmp.{other}.0"),
            format!(".m.fixity-tmp.{other}"),
            format!(".m.fixity-tmp.{other}.x"),
            format!(".m.fixity-update.{other}.0"),
            ".fixity-bag-12.0".to_string(),
        ] {
            assert!(!foreign_temp_name(n.as_bytes()), "{n}");
        }
        // The name AtomicFile really makes.
        let d = tempfile::tempdir().unwrap();
        let f = AtomicFile::create(&d.path().join("m")).unwrap();
        let tmp = f.tmp.file_name().unwrap().as_encoded_bytes().to_vec();
        let theirs = String::from_utf8(tmp).unwrap().replace(&own.to_string(), &other.to_string());
        assert!(foreign_temp_name(theirs.as_bytes()), "{theirs}");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_not_replaced() {
        write_via(Path::new("/dev/null"), b"x");
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }
}
