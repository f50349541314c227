//! Writing a manifest atomically: into a temporary file beside the target, then fsync,
//! rename over the target, and fsync the directory. A kill at any moment leaves either the
//! old manifest or the complete new one, never a torn file.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file being written that appears under its name only when [`AtomicFile::commit`]ted.
pub struct AtomicFile {
    file: Option<File>,
    tmp: PathBuf,
    target: PathBuf,
}

impl AtomicFile {
    /// Creates the temporary file in `target`'s directory.
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
        for attempt in 0..100u32 {
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(".fixity-tmp.{}.{attempt}", std::process::id()));
            let tmp = dir.join(tmp_name);
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(file) => {
                    return Ok(AtomicFile { file: Some(file), tmp, target: target.to_path_buf() });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name"))
    }

    /// Device and inode of the temporary file (so a walk can leave it out).
    pub fn inode(&self) -> Option<(u64, u64)> {
        let md = self.file.as_ref()?.metadata().ok()?;
        Some((md.dev(), md.ino()))
    }

    /// Flushes, syncs and renames the file into place, then syncs the directory.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("not committed twice");
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.tmp, &self.target)?;
        let dir = match self.target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
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

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
