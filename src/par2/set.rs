//! A recovery set read back from its files (any PAR2 2.0 client's: fixity's, par2cmdline's,
//! par2cmdline-turbo's), checked against the files it protects.
//!
//! Loading scans every given PAR2 file for intact packets and groups them by recovery set
//! ID; a file with bytes no intact packet covers is damaged (its intact packets still
//! count). Checking reads each protected file in slices at their places, comparing each
//! slice's MD5 and CRC-32 with the IFSC packet: a slice that matches is usable, any other
//! is lost. Names that would leave the base directory (absolute, `..`, through a symbolic
//! link) are refused, never opened.

use super::packet::{DataMd5, FileDesc, Id, Ifsc, Main, SliceCheck};
use super::scan::{Body, Found, Source, scan};
use crate::confine::{Refused, open_under};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// One PAR2 file as read.
#[derive(Clone, Debug)]
pub(crate) struct Volume {
    pub(crate) path: PathBuf,
    /// Bytes of it that are not intact packets (damage), or `None` when it could not be
    /// read at all (the error).
    pub(crate) damage: Result<u64, String>,
}

/// A file of a set as laid out: its File ID, its description and checksums (`None` when
/// lost), and the number of its first slice.
pub(crate) type Laid<'a> = (Id, Option<(&'a FileDesc, &'a Ifsc)>, usize);

/// A recovery set: what its intact packets say.
#[derive(Clone, Debug)]
pub(crate) struct Set {
    pub(crate) id: Id,
    pub(crate) main: Main,
    pub(crate) descs: HashMap<Id, FileDesc>,
    pub(crate) ifscs: HashMap<Id, Ifsc>,
    /// Recovery slices by exponent: the file and where the data starts.
    pub(crate) recovery: BTreeMap<u32, (PathBuf, u64)>,
    /// Every PAR2 file that held a packet of this set.
    pub(crate) volumes: Vec<PathBuf>,
    /// The creator's text, when found.
    pub(crate) creator: Option<String>,
}

impl Set {
    /// The set's files in slice order (the Main packet's), with their first slice's number;
    /// `None` for a file whose description or checksums were lost.
    pub(crate) fn layout(&self) -> Vec<Laid<'_>> {
        let s = self.main.slice_size;
        let mut first = 0usize;
        let mut out = Vec::with_capacity(self.main.files.len());
        for id in &self.main.files {
            let found = self.descs.get(id).zip(self.ifscs.get(id));
            out.push((*id, found, first));
            // A file without its description: its slice count is unknown, and so are
            // the numbers of the files after it (`complete` says so).
            first += found.map_or(0, |(d, _)| d.length.div_ceil(s) as usize);
        }
        out
    }

    /// Whether every file of the set is described (descriptions and checksums intact).
    pub(crate) fn complete(&self) -> bool {
        self.main.files.iter().all(|id| self.descs.contains_key(id) && self.ifscs.contains_key(id))
    }

    /// Input slices in the set.
    pub(crate) fn input_slices(&self) -> usize {
        let s = self.main.slice_size;
        self.main
            .files
            .iter()
            .filter_map(|id| self.descs.get(id))
            .map(|d| d.length.div_ceil(s) as usize)
            .sum()
    }

    /// The data of the recovery slice with exponent `e`.
    pub(crate) fn recovery_data(&self, e: u32) -> io::Result<Vec<u8>> {
        let (path, offset) =
            self.recovery.get(&e).ok_or_else(|| io::Error::other("no such slice"))?;
        let f = File::open(path)?;
        let mut buf = vec![0u8; self.main.slice_size as usize];
        if Source::read_at(&f, *offset, &mut buf)? < buf.len() {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
        }
        Ok(buf)
    }
}

/// A set of no files (what holds empty files: PAR2 clients leave them out).
pub(crate) fn empty_set() -> Set {
    Set {
        id: [0; 16],
        main: Main { slice_size: 4, files: vec![], others: vec![] },
        descs: HashMap::new(),
        ifscs: HashMap::new(),
        recovery: BTreeMap::new(),
        volumes: Vec::new(),
        creator: None,
    }
}

/// Reads `paths` (a set's PAR2 files): every set found, and how each file read.
pub(crate) fn load(paths: &[PathBuf]) -> (Vec<Set>, Vec<Volume>) {
    let mut by_set: BTreeMap<Id, Vec<(usize, Found)>> = BTreeMap::new();
    let mut volumes = Vec::new();
    for (v, path) in paths.iter().enumerate() {
        let read = File::open(path).and_then(|f| {
            let total = Source::len(&f);
            let (found, err) = scan(&f);
            if let Some(e) = err {
                return Err(e);
            }
            let covered: u64 = found.iter().map(|p| p.len).sum();
            Ok((found, total.saturating_sub(covered)))
        });
        match read {
            Ok((found, damage)) => {
                for f in found {
                    by_set.entry(f.set_id).or_default().push((v, f));
                }
                volumes.push(Volume { path: path.clone(), damage: Ok(damage) });
            }
            Err(e) => volumes.push(Volume { path: path.clone(), damage: Err(e.to_string()) }),
        }
    }
    let sets =
        by_set.into_iter().filter_map(|(id, packets)| assemble(id, packets, paths)).collect();
    (sets, volumes)
}

fn assemble(id: Id, packets: Vec<(usize, Found)>, paths: &[PathBuf]) -> Option<Set> {
    let mut main = None;
    let mut set = Set {
        id,
        main: Main { slice_size: 0, files: vec![], others: vec![] },
        descs: HashMap::new(),
        ifscs: HashMap::new(),
        recovery: BTreeMap::new(),
        volumes: Vec::new(),
        creator: None,
    };
    for (v, f) in packets {
        if !set.volumes.contains(&paths[v]) {
            set.volumes.push(paths[v].clone());
        }
        match f.body {
            // A Main packet belongs to its set only when its MD5 is the set's ID.
            Body::Main(m) if m.set_id() == id => main = Some(m),
            Body::Main(_) | Body::Other => {}
            Body::FileDesc(d) => {
                set.descs.insert(d.id, d);
            }
            Body::Ifsc(i) => {
                set.ifscs.insert(i.id, i);
            }
            Body::Recovery { exponent, offset, .. } => {
                set.recovery.entry(exponent).or_insert((paths[v].clone(), offset));
            }
            Body::Creator(c) => {
                let end = c.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
                set.creator = Some(String::from_utf8_lossy(&c[..end]).into_owned());
            }
        }
    }
    set.main = main?;
    let s = set.main.slice_size;
    // Keep only descriptions that agree with their File ID, and checksums of the right count.
    set.descs.retain(|id, d| FileDesc::file_id(&d.md5_16k, d.length, &d.name) == *id);
    let descs = &set.descs;
    set.ifscs.retain(|id, i| {
        descs.get(id).is_some_and(|d| d.length.div_ceil(s) as usize == i.checks.len())
    });
    Some(set)
}

/// Whether a name from a PAR2 file stays beneath its base directory lexically: relative,
/// no `.` or `..` component, no empty component, no NUL.
pub(crate) fn safe_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name[0] != b'/'
        && !name.contains(&0)
        && name.split(|&b| b == b'/').all(|c| !c.is_empty() && c != b"." && c != b"..")
}

/// What checking found of one protected file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Every slice as recorded, and the whole file's MD5.
    Intact,
    /// Some slices lost (the flags: usable or not, one per slice); `size` now.
    Damaged { usable: Vec<bool>, size: u64 },
    /// Not there.
    Missing,
    /// Its name leaves the base directory: refused, not opened.
    Refused,
    /// Could not be read (the error); its slices count as lost.
    Unreadable(String),
}

impl State {
    /// Which of the file's `n` slices can be used as they are.
    pub(crate) fn usable(&self, n: usize) -> Vec<bool> {
        match self {
            State::Intact => vec![true; n],
            State::Damaged { usable, .. } => usable.clone(),
            _ => vec![false; n],
        }
    }
}

/// Opens a set's file beneath `base`: refused names and symbolic links out of it are
/// errors of their own.
pub(crate) fn open_member(base: &File, name: &[u8]) -> Result<File, State> {
    use crate::sys::OsStrExt;
    if !safe_name(name) {
        return Err(State::Refused);
    }
    match open_under(base, Path::new(std::ffi::OsStr::from_bytes(name))) {
        Ok(f) => Ok(f),
        Err(Refused::Escapes | Refused::Swapped) => Err(State::Refused),
        Err(Refused::Io(e)) if e.kind() == io::ErrorKind::NotFound => Err(State::Missing),
        Err(Refused::Io(e)) => Err(State::Unreadable(e.to_string())),
    }
}

/// Checks one described file beneath `base` against its description and checksums.
pub(crate) fn check_file(base: &File, desc: &FileDesc, ifsc: &Ifsc, slice: u64) -> State {
    let f = match open_member(base, &desc.name) {
        Ok(f) => f,
        Err(state) => return state,
    };
    let meta = match f.metadata() {
        Ok(m) if m.is_file() => m,
        Ok(_) => return State::Unreadable("not a regular file".into()),
        Err(e) => return State::Unreadable(e.to_string()),
    };
    let mut usable = vec![false; ifsc.checks.len()];
    let mut whole = DataMd5::new();
    let s = slice as usize;
    // Batches of slices: the whole file's MD5 (serial) beside the slices' checksums (in
    // the MD5 lanes, over the cores).
    let per = (CHECK_BATCH / s).max(1);
    let mut buf = vec![0u8; per * s];
    let size = meta.len();
    // A sparse file's holes as zeros, not read; up to the size of the stat (a file
    // longer than described is damaged by its size).
    let mut reader =
        io::BufReader::with_capacity(256 << 10, crate::read::Zeroed::new(&f, &meta, 0));
    let mut j0 = 0;
    'read: while j0 < ifsc.checks.len() {
        let k = per.min(ifsc.checks.len() - j0);
        let mut lens = Vec::with_capacity(k);
        for (i, slot) in buf.chunks_mut(s).take(k).enumerate() {
            let start = (j0 + i) as u64 * slice;
            let n = desc.length.min(start + slice).saturating_sub(start) as usize;
            let got = match read_full(&mut reader, &mut slot[..n]) {
                Ok(got) => got,
                Err(e) => return State::Unreadable(e.to_string()),
            };
            slot[got..].fill(0);
            lens.push(got);
            if got < n {
                // Short: this slice and the rest are lost; the bytes read still count.
                rayon::join(
                    || whole.update(&buf[..i * s + got]),
                    || check_batch(&buf[..i * s], s, &ifsc.checks[j0..], &mut usable[j0..]),
                );
                break 'read;
            }
        }
        let batch = &buf[..k * s];
        rayon::join(
            || {
                for (slot, &n) in batch.chunks(s).zip(&lens) {
                    whole.update(&slot[..n]);
                }
            },
            || check_batch(batch, s, &ifsc.checks[j0..j0 + k], &mut usable[j0..j0 + k]),
        );
        j0 += k;
    }
    let md5: Id = whole.finish();
    if size == desc.length && md5 == desc.md5 && usable.iter().all(|&u| u) {
        State::Intact
    } else {
        State::Damaged { usable, size }
    }
}

/// Bytes of slices checked together.
const CHECK_BATCH: usize = 8 << 20;

/// Compares the checksums of the padded slices in `batch` with `want`, setting `usable`.
fn check_batch(batch: &[u8], s: usize, want: &[SliceCheck], usable: &mut [bool]) {
    use rayon::prelude::*;
    let slices: Vec<&[u8]> = batch.chunks(s).collect();
    let per = slices.len().div_ceil(rayon::current_num_threads()).max(16);
    let sums: Vec<SliceCheck> =
        slices.par_chunks(per).flat_map_iter(super::packet::slice_checks).collect();
    for ((u, got), w) in usable.iter_mut().zip(&sums).zip(want) {
        *u = got == w;
    }
}

/// Reads until `buf` is full or the end: the bytes read.
pub(crate) fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match r.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_leave_the_base_are_not_safe() {
        for bad in
            [&b""[..], b"/etc/passwd", b"../x", b"a/../../x", b"a//b", b"./a", b"a/", b"a\0b"]
        {
            assert!(!safe_name(bad), "{:?}", String::from_utf8_lossy(bad));
        }
        for good in [&b"a"[..], b"a/b.c", b"..a", b"a/.b", b"\xff\xfe"] {
            assert!(safe_name(good));
        }
    }
}
