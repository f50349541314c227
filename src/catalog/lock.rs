//! The run lock: one run at a time on a catalog.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// A hold on a catalog for one run (`flock` on a `.lock` file beside it): exclusive for a
/// run over the whole tree, shared by the parts of a plan (each on its own files); a run
/// that conflicts waits for it or is told the catalog is busy. The lock goes away with
/// the process, however it ends.
pub struct RunLock {
    /// The locked file; `None` on read-only media with no lock file, where no run can
    /// write the catalog and there is nothing to keep apart.
    _file: Option<File>,
}

impl RunLock {
    /// Takes the lock at `path` (`shared` or exclusive), waiting for it when `wait`;
    /// `Ok(None)` when another run holds it and `wait` is false.
    ///
    /// Where the lock file cannot be opened for writing (read-only media, a directory this
    /// user may not write), an existing one is locked through a read-only descriptor
    /// (flock needs no write access); with none, the run goes on unlocked: it cannot write
    /// the catalog either, and SQLite keeps its reads consistent.
    pub fn acquire(path: &Path, wait: bool, shared: bool) -> io::Result<Option<RunLock>> {
        let file =
            match std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path) {
                Ok(f) => f,
                Err(e) if crate::sys::write_refused(&e) => match File::open(path) {
                    Ok(f) => f,
                    Err(_) => return Ok(Some(RunLock { _file: None })),
                },
                Err(e) => return Err(e),
            };
        // flock(2) on Unix, LockFileEx on Windows: released when the file is closed.
        let taken = match (shared, wait) {
            (true, true) => file.lock_shared(),
            (false, true) => file.lock(),
            (true, false) => file.try_lock_shared().map_err(io::Error::from),
            (false, false) => file.try_lock().map_err(io::Error::from),
        };
        match taken {
            Ok(()) => Ok(Some(RunLock { _file: Some(file) })),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Whether a run holds the catalog at `catalog` now (its lock taken exclusively: a
/// scan, verify, repair ...), for a view that shows runs going on. The look is a shared
/// lock tried and let go at once; a lock file that cannot be opened says no.
pub fn held(catalog: &Path) -> bool {
    let Ok(file) = File::open(lock_path(catalog)) else { return false };
    match file.try_lock_shared() {
        Ok(()) => false,
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(_) => false,
    }
}

/// The lock file beside a catalog: `CATALOG.lock`.
pub(crate) fn lock_path(catalog: &Path) -> PathBuf {
    let mut name = catalog.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_is_refused_while_the_first_is_held() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.lock");
        let first = RunLock::acquire(&p, false, false).unwrap();
        assert!(first.is_some());
        // flock locks belong to the open file description: a second open conflicts.
        assert!(RunLock::acquire(&p, false, false).unwrap().is_none());
        assert!(RunLock::acquire(&p, false, true).unwrap().is_none());
        assert!(held(&d.path().join("c")));
        drop(first);
        assert!(!held(&d.path().join("c")));
        assert!(RunLock::acquire(&p, false, false).unwrap().is_some());
    }

    #[test]
    fn shared_locks_exclude_only_an_exclusive_one() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.lock");
        let a = RunLock::acquire(&p, false, true).unwrap();
        let b = RunLock::acquire(&p, false, true).unwrap();
        assert!(a.is_some() && b.is_some(), "two parts share it");
        assert!(RunLock::acquire(&p, false, false).unwrap().is_none(), "a whole run waits");
        drop((a, b));
        assert!(RunLock::acquire(&p, false, false).unwrap().is_some());
    }
}
