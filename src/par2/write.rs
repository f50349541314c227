//! Writing a made set as files par2cmdline finds: `STEM.par2` (the critical packets: Main,
//! File Descriptions, IFSCs, Creator) and `STEM.volFIRST+COUNT.par2` volumes, each holding
//! its recovery slices and a copy of the critical packets, so any one file describes the
//! set. Each file is written atomically (`output::AtomicFile`); the volumes first, the index
//! last, then the volumes of an earlier version of the set are removed: a kill at any
//! moment leaves the old set or the new one usable (their packets carry their set IDs).
//!
//! How many volumes: the critical packets are repeated in each, so for sets of many small
//! files (where they weigh as much as the recovery data) there are few volumes; for big
//! files up to [`MAX_VOLUMES`], so a damaged file loses a small share.

use super::create::Made;
use super::packet::{CREATOR, FILE_DESC, IFSC, Id, MAIN, packet, recovery_head};
use crate::output::AtomicFile;
use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Most volume files a set gets.
const MAX_VOLUMES: usize = 8;

/// What was written.
#[derive(Clone, Debug)]
pub(crate) struct Written {
    pub(crate) set_id: Id,
    /// Bytes of all the files.
    pub(crate) bytes: u64,
    /// Bytes of recovery slice data in them.
    pub(crate) recovery_bytes: u64,
}

/// The critical packets, in the order par2cmdline writes them.
fn critical(made: &Made, creator: &str) -> (Id, Vec<u8>) {
    let id = made.main.set_id();
    let mut c = packet(&id, MAIN, &made.main.body());
    for d in &made.descs {
        c.extend(packet(&id, FILE_DESC, &d.body()));
    }
    for i in &made.ifscs {
        c.extend(packet(&id, IFSC, &i.body()));
    }
    c.extend(packet(&id, CREATOR, &super::packet::creator_body(creator)));
    (id, c)
}

/// How many volumes for `recovery` slices of `slice` bytes and critical packets of
/// `critical` bytes: the copies of the critical packets kept under an eighth of the
/// recovery data where the counts allow (an eighth).
pub(crate) fn volume_count(recovery: usize, slice: u64, critical: u64) -> usize {
    if recovery == 0 {
        return 0;
    }
    let data = recovery as u64 * (slice + 68);
    let affordable = (data / (8 * critical.max(1))) as usize;
    affordable.clamp(1, MAX_VOLUMES.min(recovery))
}

/// The name of a volume: `STEM.volFIRST+COUNT.par2`, numbers zero-padded alike.
pub(crate) fn volume_name(stem: &OsStr, first: u32, count: u32, width: usize) -> OsString {
    let mut n = stem.as_bytes().to_vec();
    n.extend_from_slice(format!(".vol{first:0width$}+{count:0width$}.par2").as_bytes());
    OsString::from_vec(n)
}

/// The index file's name: `STEM.par2`.
pub(crate) fn index_name(stem: &OsStr) -> OsString {
    let mut n = stem.as_bytes().to_vec();
    n.extend_from_slice(b".par2");
    OsString::from_vec(n)
}

/// Writes `made` as `dir/STEM.par2` and its volumes; removes volumes of `STEM` that are not
/// part of it.
pub(crate) fn write(dir: &Path, stem: &OsStr, made: &Made, creator: &str) -> io::Result<Written> {
    std::fs::create_dir_all(dir)?;
    let (id, crit) = critical(made, creator);
    let slice = made.main.slice_size;
    let r = made.recovery.len();
    let v = volume_count(r, slice, crit.len() as u64);
    let width = made.recovery.iter().map(|x| x.0 + 1).max().unwrap_or(1).to_string().len();
    let mut files = Vec::new();
    let mut bytes = 0u64;
    let mut recovery_bytes = 0u64;
    let mut at = 0usize;
    for k in 0..v {
        let count = r / v + usize::from(k < r % v);
        let part = &made.recovery[at..at + count];
        at += count;
        let name = volume_name(stem, part[0].0, count as u32, width);
        let path = dir.join(&name);
        let mut out = AtomicFile::create(&path)?;
        for (e, data) in part {
            out.write_all(&recovery_head(&id, *e, data))?;
            out.write_all(data)?;
            bytes += 68 + data.len() as u64;
            recovery_bytes += data.len() as u64;
        }
        out.write_all(&crit)?;
        bytes += crit.len() as u64;
        out.commit()?;
        files.push(path);
    }
    let index = dir.join(index_name(stem));
    let mut out = AtomicFile::create(&index)?;
    out.write_all(&crit)?;
    out.commit()?;
    bytes += crit.len() as u64;
    files.insert(0, index);
    for old in volumes_of(dir, stem)? {
        if !files.contains(&old) {
            std::fs::remove_file(&old)?;
        }
    }
    Ok(Written { set_id: id, bytes, recovery_bytes })
}

/// The set's files in `dir`: `STEM.par2` and every `STEM.vol*.par2` there, sorted.
pub(crate) fn set_files(dir: &Path, stem: &OsStr) -> io::Result<Vec<PathBuf>> {
    let mut out = volumes_of(dir, stem)?;
    let index = dir.join(index_name(stem));
    if index.exists() {
        out.insert(0, index);
    }
    Ok(out)
}

/// `STEM.vol*.par2` files in `dir`, sorted.
fn volumes_of(dir: &Path, stem: &OsStr) -> io::Result<Vec<PathBuf>> {
    let prefix = [stem.as_bytes(), b".vol"].concat();
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    for e in entries {
        let name = e?.file_name();
        let b = name.as_bytes();
        if b.starts_with(&prefix) && b.ends_with(b".par2") {
            out.push(dir.join(&name));
        }
    }
    out.sort();
    Ok(out)
}

/// Removes every file of set `stem` in `dir` (a set no longer needed).
pub(crate) fn remove(dir: &Path, stem: &OsStr) -> io::Result<()> {
    for f in set_files(dir, stem)? {
        std::fs::remove_file(f)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volumes_are_few_when_the_critical_packets_weigh() {
        assert_eq!(volume_count(0, 4096, 100), 0);
        assert_eq!(volume_count(10, 4096, 30_000), 1);
        assert_eq!(volume_count(200, 1 << 20, 50_000), 8);
        assert_eq!(volume_count(3, 1 << 20, 50), 3);
    }

    #[test]
    fn names_are_what_par2cmdline_looks_for() {
        let s = OsStr::new("set-1");
        assert_eq!(volume_name(s, 0, 7, 2), "set-1.vol00+07.par2");
        assert_eq!(index_name(s), "set-1.par2");
    }
}
