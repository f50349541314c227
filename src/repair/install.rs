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

/// The blocks a rebuilt sparse file's holes are made of: a block of zeros at a multiple
/// of it is skipped, not written.
const HOLE_BLOCK: usize = 4096;

/// Writes through to the file and the catalog's hasher.
struct Tee<'a> {
    file: &'a mut AtomicFile,
    hasher: &'a mut dyn Hasher,
    /// Leave whole blocks of zeros as holes (the file replaced is sparse, as `cp
    /// --sparse=auto` decides): a VM image is rebuilt at the size of its data, not of its
    /// length. A file that was not sparse is written whole (space an application set
    /// aside stays set aside).
    holes: bool,
    /// Bytes given so far.
    pos: u64,
}

impl Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = if self.holes { self.write_holes(buf)? } else { self.file.write(buf)? };
        self.hasher.update(&buf[..n]);
        self.pos += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Tee<'_> {
    /// Takes the first bytes of `buf`: up to the next block boundary, written; or a run of
    /// whole blocks of zeros, skipped; or a run of whole blocks that are not, written.
    fn write_holes(&mut self, buf: &[u8]) -> io::Result<usize> {
        let head = (HOLE_BLOCK - (self.pos % HOLE_BLOCK as u64) as usize) % HOLE_BLOCK;
        if head > 0 {
            return self.file.write(&buf[..head.min(buf.len())]);
        }
        if buf.len() < HOLE_BLOCK {
            return self.file.write(buf);
        }
        let zero = |b: &[u8]| b.iter().all(|&x| x == 0);
        let blocks = buf.as_chunks::<HOLE_BLOCK>().0;
        let hole = zero(&blocks[0]);
        let run = blocks.iter().take_while(|b| zero(&b[..]) == hole).count() * HOLE_BLOCK;
        if hole {
            self.file.skip(run as u64)?;
            Ok(run)
        } else {
            self.file.write(&buf[..run])
        }
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

/// Gives a file rebuilt where none stood the owner, group and mode its record has: all
/// of them, or none and 0600 (never wider than the file lost), with a note saying why.
fn give_access(file: &AtomicFile, rec: &Record) -> Result<Option<String>, String> {
    let Some(a) = rec.access else {
        return Ok(Some(
            "made 0600: the catalog does not record its mode and owner (a record from before \
             fixity kept them)"
                .into(),
        ));
    };
    // An ACL is not restored: without it the mode's group bits (its mask) could let in
    // more than the list did.
    let mode = if a.acl { 0o600 } else { a.mode };
    let unrestored = match (a.acl, a.xattrs) {
        (true, _) => Some(format!(
            "made 0600, not {:04o}: it had an access control list, which is not restored",
            a.mode
        )),
        (false, true) => Some("its extended attributes are not restored".to_string()),
        (false, false) => None,
    };
    match file.give(a.uid, a.gid, mode) {
        Ok(true) => Ok(unrestored),
        Ok(false) => Ok(Some(format!(
            "made 0600, not {:04o}: it cannot be given to its recorded owner {}:{} by this user",
            a.mode, a.uid, a.gid
        ))),
        Err(e) => Err(crate::read::io_message(&e)),
    }
}

/// Replaces the file of `rec` beneath `root` with what `fill` writes, if that has the
/// recorded digest. A file in place keeps its owner, group and mode; one rebuilt where
/// none stands is made 0600 and given those the catalog recorded ([`give_access`]: the
/// note when it could not be). Blocks of zeros are left as holes when the file in place is sparse,
/// or `sparse_source` (what `fill` copies is, or the file was when its recovery set was
/// made). `keep` names the run (ms) under which the damaged copy is kept aside, in
/// `TREE/.fixity/damaged/`.
pub(crate) fn install(
    root: &Path,
    rec: &Record,
    keep: Option<i64>,
    sparse_source: bool,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<Option<String>, String> {
    let target = place(root, &rec.path)?;
    let fresh = std::fs::symlink_metadata(&target).is_err();
    let mut file =
        AtomicFile::create_mode(&target, 0o600).map_err(|e| crate::read::io_message(&e))?;
    let mut hasher = rec.algo.hasher();
    let holes =
        sparse_source || std::fs::metadata(&target).is_ok_and(|m| crate::read::is_sparse(&m));
    let mut tee = Tee { file: &mut file, hasher: hasher.as_mut(), holes, pos: 0 };
    fill(&mut tee).map_err(|e| crate::read::io_message(&e))?;
    let len = tee.pos;
    if holes {
        file.set_len(len).map_err(|e| crate::read::io_message(&e))?;
    }
    if !hasher.finish().ct_eq(&rec.digest) {
        // Dropped uncommitted: the temporary file goes, the damaged file stays.
        return Err("the rebuilt content does not have the recorded digest".into());
    }
    let note = if fresh { give_access(&file, rec)? } else { None };
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
    file.commit().map_err(|e| crate::read::io_message(&e))?;
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::MetadataExt;

    /// Whatever the pieces it is given in, a sparse file's rebuild holds exactly its bytes,
    /// and its blocks of zeros (not a zero byte more) are holes, a trailing one too.
    #[test]
    fn a_sparse_rebuild_has_its_bytes_and_leaves_blocks_of_zeros_as_holes() {
        let d = tempfile::tempdir().unwrap();
        let mut want = vec![0u8; 3 << 20];
        want[..5000].fill(7); // data over the first block boundary
        want[1 << 20] = 1; // one byte in a block of zeros
        want[(2 << 20) + 4095..(2 << 20) + 4097].fill(9); // across a boundary
        for (k, piece) in [1usize, 1000, 4096, 4097, 65536, 1 << 22].into_iter().enumerate() {
            let target = d.path().join(format!("f{k}"));
            let mut file = AtomicFile::create(&target).unwrap();
            let mut hasher = crate::algo::lookup("md5").unwrap().hasher();
            let mut tee = Tee { file: &mut file, hasher: hasher.as_mut(), holes: true, pos: 0 };
            for chunk in want.chunks(piece) {
                tee.write_all(chunk).unwrap();
            }
            assert_eq!(tee.pos, want.len() as u64);
            file.set_len(want.len() as u64).unwrap();
            file.commit().unwrap();
            assert!(std::fs::read(&target).unwrap() == want, "pieces of {piece}");
            let m = std::fs::metadata(&target).unwrap();
            // Data in 5 blocks (2 + 1 + 2): at most those, if the file system makes holes.
            let holes_made = m.blocks() * 512 < m.len();
            assert!(!holes_made || m.blocks() * 512 <= 5 * 4096 + 4096, "{} blocks", m.blocks());
            assert!(hasher.finish() == crate::algo::lookup("md5").unwrap().digest(&want));
        }
    }
}
