//! Putting a rebuilt file in place: only beneath the tree (no name that leaves it, no
//! symbolic link on the way or at the file), only when what was written has the catalog's
//! recorded digest, atomically (a temporary file beside it, fsync, rename: a kill at any
//! moment leaves the damaged file or the repaired one), with the recorded mtime, and
//! the damaged copy kept aside on request.

use crate::algo::Hasher;
use crate::catalog::Record;
use crate::output::AtomicFile;
use crate::par2::safe_name;
use crate::pathtext::{STATE_DIR, bytes_path};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Writes through to the file and the catalog's hasher.
struct Tee<'a> {
    file: &'a mut AtomicFile,
    hasher: &'a mut dyn Hasher,
}

impl Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// The mtime a record describes.
fn mtime_of(rec: &Record) -> SystemTime {
    let ns = rec.mtime_ns;
    if ns >= 0 {
        UNIX_EPOCH + Duration::from_nanos(ns as u64)
    } else {
        UNIX_EPOCH - Duration::from_nanos(ns.unsigned_abs() as u64)
    }
}

/// Where `rel` goes beneath `root`, its missing directories made: refused (why) when the
/// name or a directory on the way would lead out of the tree.
fn place(root: &Path, rel: &[u8]) -> Result<PathBuf, String> {
    if !safe_name(rel) {
        return Err("its name leads out of the tree".into());
    }
    let mut dir = root.to_path_buf();
    let parts: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
    for part in &parts[..parts.len() - 1] {
        dir.push(bytes_path(part));
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(format!("{} is not a directory", dir.display())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir).map_err(|e| crate::read::io_message(&e))?
            }
            Err(e) => return Err(crate::read::io_message(&e)),
        }
    }
    let target = dir.join(bytes_path(parts[parts.len() - 1]));
    match std::fs::symlink_metadata(&target) {
        Ok(m) if m.is_file() => Ok(target),
        Ok(_) => Err("not a regular file: left as it is".into()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(target),
        Err(e) => Err(crate::read::io_message(&e)),
    }
}

/// Replaces the file of `rec` beneath `root` with what `fill` writes, if that has the
/// recorded digest. `keep` names the run (ms) under which the damaged copy is kept
/// aside, in `TREE/.fixity/damaged/`.
pub(crate) fn install(
    root: &Path,
    rec: &Record,
    keep: Option<i64>,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<(), String> {
    let target = place(root, &rec.path)?;
    let mut file = AtomicFile::create(&target).map_err(|e| crate::read::io_message(&e))?;
    let mut hasher = rec.algo.hasher();
    fill(&mut Tee { file: &mut file, hasher: hasher.as_mut() })
        .map_err(|e| crate::read::io_message(&e))?;
    if !hasher.finish().ct_eq(&rec.digest) {
        // Dropped uncommitted: the temporary file goes, the damaged file stays.
        return Err("the rebuilt content does not have the recorded digest".into());
    }
    file.set_modified(mtime_of(rec)).map_err(|e| crate::read::io_message(&e))?;
    if let Some(run) = keep.filter(|_| target.exists()) {
        let aside = root.join(STATE_DIR).join("damaged").join(run.to_string());
        let to = aside.join(bytes_path(&rec.path));
        let made = to.parent().map_or(Ok(()), std::fs::create_dir_all);
        made.and_then(|()| {
            std::fs::hard_link(&target, &to).or_else(|_| std::fs::copy(&target, &to).map(drop))
        })
        .map_err(|e| format!("cannot keep the damaged copy: {}", crate::read::io_message(&e)))?;
    }
    file.commit().map_err(|e| crate::read::io_message(&e))
}
