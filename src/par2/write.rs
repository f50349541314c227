//! Writing a made set as files par2cmdline finds: `STEM.par2` (the critical packets: Main,
//! File Descriptions, IFSCs, Creator) and `STEM.volFIRST+COUNT.par2` volumes, each holding
//! its recovery slices and a copy of the critical packets, so any one file describes the
//! set. Each file is written atomically (`output::AtomicFile`): the volumes go to temporary
//! files as their passes end, and are put in place together once the set is complete, the
//! index last; then the volumes of an earlier version of the set are removed. A kill or a
//! failure at any moment leaves the old set or the new one usable (their packets carry
//! their set IDs), and a set not finished leaves nothing behind.
//!
//! How many volumes: the critical packets are repeated in each, so for sets of many small
//! files (where they weigh as much as the recovery data) there are few volumes; for big
//! files up to [`MAX_VOLUMES`], so a damaged file loses a small share.

use super::create::Described;
use super::packet::{CREATOR, FILE_DESC, IFSC, Id, MAIN, packets, recovery_heads};
use crate::output::AtomicFile;
use crate::sys::{OsStrExt, OsStringExt};
use rayon::prelude::*;
use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::ops::Range;
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

/// Bytes a volume is written in at least, but for its large slices.
const WRITE_BUFFER: usize = 256 << 10;

/// The critical packets, in the order par2cmdline writes them.
fn critical(d: &Described, creator: &str) -> (Id, Vec<u8>) {
    let id = d.main.set_id();
    let main = d.main.body();
    let descs: Vec<Vec<u8>> = d.descs.iter().map(|f| f.body()).collect();
    let ifscs: Vec<Vec<u8>> = d.ifscs.iter().map(|i| i.body()).collect();
    let creator = super::packet::creator_body(creator);
    let mut parts: Vec<(&[u8; 16], &[u8])> = vec![(MAIN, &main)];
    parts.extend(descs.iter().map(|b| (FILE_DESC, &b[..])));
    parts.extend(ifscs.iter().map(|b| (IFSC, &b[..])));
    parts.push((CREATOR, &creator));
    (id, packets(&id, &parts))
}

/// The bytes the critical packets of a set of files named `names` with `sizes` will take
/// (known before the files are read: the volumes are planned with it).
pub(crate) fn critical_len(names: &[&[u8]], sizes: &[u64], slice: u64, creator: &str) -> u64 {
    let main = 64 + 12 + 16 * names.len() as u64;
    let descs: u64 = names.iter().map(|n| 64 + 56 + (n.len() as u64).next_multiple_of(4)).sum();
    let ifscs: u64 = sizes.iter().map(|s| 64 + 16 + 20 * s.div_ceil(slice)).sum();
    main + descs + ifscs + 64 + (creator.len() as u64).next_multiple_of(4)
}

/// A set being written: its volumes planned, written as their recovery slices come (to
/// temporary files), put in place only by [`SetWriter::finish`].
pub(crate) struct SetWriter {
    dir: PathBuf,
    stem: OsString,
    slice: u64,
    /// (first exponent, count) of each volume.
    volumes: Vec<(u32, u32)>,
    width: usize,
    /// Volumes written, not yet in place.
    done: Vec<(PathBuf, AtomicFile)>,
    /// The index written, and everything synced ([`SetWriter::sync`]).
    index: Option<AtomicFile>,
    bytes: u64,
    recovery_bytes: u64,
    critical: Option<(Id, Vec<u8>)>,
    creator: String,
}

impl SetWriter {
    /// Plans `recovery` slices of `slice` bytes into volumes: few enough that the copies of
    /// the critical packets (`critical` bytes) stay a small share, enough that no volume
    /// holds more than `memory` bytes of recovery data.
    pub(crate) fn new(
        dir: &Path,
        stem: &OsStr,
        recovery: u32,
        slice: u64,
        critical: u64,
        memory: u64,
        creator: &str,
    ) -> io::Result<SetWriter> {
        std::fs::create_dir_all(dir)?;
        let r = recovery as usize;
        let by_memory = (r as u64 * slice).div_ceil(memory.max(1)) as usize;
        let v = volume_count(r, slice, critical).max(by_memory).min(r.max(1));
        let mut volumes = Vec::with_capacity(v);
        let mut at = 0u32;
        for k in 0..v {
            let count = (r / v + usize::from(k < r % v)) as u32;
            volumes.push((at, count));
            at += count;
        }
        let width = (recovery.max(1)).to_string().len();
        Ok(SetWriter {
            dir: dir.to_path_buf(),
            stem: stem.to_os_string(),
            slice,
            volumes,
            width,
            done: Vec::new(),
            index: None,
            bytes: 0,
            recovery_bytes: 0,
            critical: None,
            creator: creator.to_string(),
        })
    }

    /// The passes over the data: consecutive volumes whose recovery data fits in `memory`
    /// (at least one volume each).
    pub(crate) fn passes(&self, memory: u64) -> Vec<Range<u32>> {
        let mut out: Vec<Range<u32>> = Vec::new();
        for &(first, count) in &self.volumes {
            match out.last_mut() {
                Some(p) if (p.end - p.start + count) as u64 * self.slice <= memory => {
                    p.end = first + count
                }
                _ => out.push(first..first + count),
            }
        }
        if out.is_empty() {
            out.push(0..0);
        }
        out
    }

    /// Writes the volumes whose recovery slices these are (a pass's: whole volumes).
    pub(crate) fn take(&mut self, d: &Described, slices: Vec<(u32, Vec<u8>)>) -> io::Result<()> {
        // Borrowed, not copied for each pass (a set's critical packets: 150 KB in D3's).
        let (id, crit) = &*self.critical.get_or_insert_with(|| critical(d, &self.creator));
        // The packets' MD5s first, in the lanes and over the cores.
        let per = slices.len().div_ceil(rayon::current_num_threads().max(1)).max(16);
        let parts: Vec<(u32, &[u8])> = slices.iter().map(|(e, d)| (*e, &d[..])).collect();
        let heads: Vec<[u8; 68]> =
            parts.par_chunks(per).flat_map_iter(|c| recovery_heads(id, c)).collect();
        let mut slices = slices.iter().zip(heads).peekable();
        for &(first, count) in &self.volumes {
            if slices.peek().is_none_or(|s| s.0.0 != first) {
                continue;
            }
            let name = volume_name(&self.stem, first, count, self.width);
            let path = self.dir.join(&name);
            let mut out = AtomicFile::create(&path)?;
            // A packet's 68-byte head and its slice in one write, small slices many to a
            // write (a write each: 26,000 system calls in a `protect` of D3); a slice of
            // the buffer's size or more goes straight to the file.
            let mut w = io::BufWriter::with_capacity(WRITE_BUFFER, &mut out);
            for _ in 0..count {
                let ((_, data), head) = slices.next().expect("a pass holds whole volumes");
                w.write_all(&head)?;
                w.write_all(data)?;
                self.bytes += 68 + data.len() as u64;
                self.recovery_bytes += data.len() as u64;
            }
            w.write_all(crit)?;
            w.flush()?;
            drop(w);
            self.bytes += crit.len() as u64;
            self.done.push((path, out));
        }
        Ok(())
    }

    /// Writes the index and syncs every file of the set, nothing in place yet: done where
    /// the set is made (its own thread, beside the others'), so that putting it in place
    /// ([`SetWriter::finish`], on the thread that settles the sets in order) waits for one
    /// sync of the directory, not two for each file.
    pub(crate) fn sync(&mut self, d: &Described) -> io::Result<()> {
        if self.index.is_some() {
            return Ok(());
        }
        let (_, crit) = self.critical.get_or_insert_with(|| critical(d, &self.creator));
        let mut index = AtomicFile::create(&self.dir.join(index_name(&self.stem)))?;
        index.write_all(crit)?;
        for (_, out) in &mut self.done {
            out.sync()?;
        }
        index.sync()?;
        self.index = Some(index);
        Ok(())
    }

    /// Puts the volumes in place, then the index, syncs the directory, then removes volumes
    /// of `STEM` that are not part of this set (`old`: those there before, from the run's
    /// [`Listing`]). A kill or a crash leaves the old set or the new one: old volumes go
    /// only once the new files' names are synced.
    pub(crate) fn finish(mut self, d: &Described, old: &Listing) -> io::Result<Written> {
        self.sync(d)?;
        let (id, crit) = self.critical.take().expect("synced: the critical packets made");
        let mut files = Vec::new();
        for (path, out) in self.done {
            out.put()?;
            files.push(path);
        }
        self.index.take().expect("synced: the index written").put()?;
        files.push(self.dir.join(index_name(&self.stem)));
        crate::output::sync_dir(&self.dir);
        for old in old.volumes(&self.stem) {
            if !files.contains(&old) {
                remove_gone(&old)?;
            }
        }
        Ok(Written {
            set_id: id,
            bytes: self.bytes + crit.len() as u64,
            recovery_bytes: self.recovery_bytes,
        })
    }
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

/// The names in a directory of sets, read once: any set's files are found in it without
/// reading the directory again. Read once per set, `verify`'s check of S sets and
/// `protect`'s putting S sets in place each read the directory S times, work that grew
/// with the square of the tree's files. A run takes one at its start: each set is made,
/// removed or checked once in a run, so the files of a set at the start are the ones that
/// run deals with.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    dir: PathBuf,
    /// Every name in the directory, by its bytes (a name's prefix is a range).
    names: std::collections::BTreeSet<Vec<u8>>,
}

impl Listing {
    /// The names in `dir` (none when it does not exist).
    pub(crate) fn read(dir: &Path) -> io::Result<Listing> {
        let mut names = std::collections::BTreeSet::new();
        match std::fs::read_dir(dir) {
            Ok(entries) => {
                for e in entries {
                    names.insert(e?.file_name().as_bytes().to_vec());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        Ok(Listing { dir: dir.to_path_buf(), names })
    }

    /// The directory listed.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every name that was there, as bytes, sorted.
    pub(crate) fn names(&self) -> impl Iterator<Item = &[u8]> {
        self.names.iter().map(|n| &n[..])
    }

    /// Whether `STEM.par2` was there.
    pub(crate) fn has_index(&self, stem: &OsStr) -> bool {
        self.names.contains(index_name(stem).as_bytes())
    }

    /// `STEM.vol*.par2`, sorted.
    pub(crate) fn volumes(&self, stem: &OsStr) -> Vec<PathBuf> {
        let prefix = [stem.as_bytes(), b".vol"].concat();
        self.names
            .range(prefix.clone()..)
            .take_while(|n| n.starts_with(&prefix))
            .filter(|n| n.ends_with(b".par2"))
            .map(|n| self.dir.join(OsStr::from_bytes(n)))
            .collect()
    }

    /// The set's files: `STEM.par2` first, then its volumes.
    pub(crate) fn files(&self, stem: &OsStr) -> Vec<PathBuf> {
        let mut out = self.volumes(stem);
        if self.has_index(stem) {
            out.insert(0, self.dir.join(index_name(stem)));
        }
        out
    }

    /// Removes every file of set `stem` (a set no longer needed); one gone already is
    /// what was wanted.
    pub(crate) fn remove(&self, stem: &OsStr) -> io::Result<()> {
        self.files(stem).iter().try_for_each(|f| remove_gone(f))
    }
}

/// Removes `path`; one not there is not an error.
fn remove_gone(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
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

    #[test]
    fn a_listing_finds_each_sets_files_as_a_read_of_the_directory_would() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        // A stem that is not UTF-8 (Unix), or not ASCII (Windows, whose names are UTF-16).
        let odd_bytes: &[u8] = if cfg!(unix) { b"set-\xff" } else { "set-\u{e9}".as_bytes() };
        let odd = OsString::from_vec(odd_bytes.to_vec());
        let mut names: Vec<OsString> = [
            "set-1.par2",
            "set-1.vol0+1.par2",
            "set-1.vol1+2.par2",
            "set-1.vol1+2.par2.bak",
            "set-10.par2",
            "set-10.vol0+1.par2",
            ".set-1.vol0+1.par2.fixity-tmp.1.0",
            "set-2.vol0+1.par2",
            "set-1.fixity",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        names.push(OsString::from_vec([odd_bytes, b".par2"].concat()));
        names.push(OsString::from_vec([odd_bytes, b".vol0+3.par2"].concat()));
        for n in &names {
            std::fs::write(d.join(n), b"x").unwrap();
        }
        let l = Listing::read(d).unwrap();
        let s1 = OsStr::new("set-1");
        assert_eq!(
            l.files(s1),
            [d.join("set-1.par2"), d.join("set-1.vol0+1.par2"), d.join("set-1.vol1+2.par2")]
        );
        assert_eq!(l.files(OsStr::new("set-10")).len(), 2);
        // No index: its volumes alone.
        let s2 = OsStr::new("set-2");
        assert!(!l.has_index(s2));
        assert_eq!(l.files(s2), [d.join("set-2.vol0+1.par2")]);
        assert_eq!(l.files(&odd).len(), 2);
        assert!(l.files(OsStr::new("set-3")).is_empty());
        // Removing a set removes its files only, and a file gone already is no error.
        std::fs::remove_file(d.join("set-1.vol0+1.par2")).unwrap();
        l.remove(s1).unwrap();
        let mut left: Vec<OsString> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
        left.sort();
        let mut want: Vec<OsString> = names
            .into_iter()
            .filter(|n| {
                !["set-1.par2", "set-1.vol0+1.par2", "set-1.vol1+2.par2"]
                    .contains(&n.to_str().unwrap_or(""))
            })
            .collect();
        want.sort();
        assert_eq!(left, want);
        // A directory not there lists nothing.
        assert!(Listing::read(&d.join("none")).unwrap().files(s1).is_empty());
    }
}
