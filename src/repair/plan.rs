//! Which files go in which recovery set, and each set's slice size.
//!
//! PAR2 limits a set to 32768 input slices and pads every file to whole slices, so a tree
//! is cut into sets: runs of files in path order (the catalog's order), each closed at a
//! boundary that depends on the paths themselves (a path whose hash ends in four zero
//! bits) once the run holds [`SET_MIN`] bytes or [`MIN_FILES`] files, or at [`SET_MAX`]
//! bytes or [`MAX_FILES`] files. Adding, editing or removing a file changes the set it falls in (and at most its
//! neighbour), never the sets further on: a change re-makes only the sets it touches. A
//! file of [`BIG`] bytes or more is a set of its own. Empty files are not in any set
//! (PAR2 clients leave them out; their recorded content is no content at all).
//!
//! A set's slice size is chosen for its files: the size that makes the least recovery
//! data plus checksums at the redundancy asked, with about 1024 slices or more so damage
//! in a few places costs a few slices, and at most [`MAX_SLICES`] slices.

use crate::catalog::Record;
use md5::{Digest as _, Md5};

/// A run closes at a path boundary once it holds this many bytes.
pub(crate) const SET_MIN: u64 = 8 << 20;
/// A run closes at this many bytes whatever the paths.
pub(crate) const SET_MAX: u64 = 128 << 20;
/// A run closes at a path boundary once it holds this many files: the work of a set grows
/// with the square of its slices, and each small file is a slice or more.
pub(crate) const MIN_FILES: usize = 512;
/// A run closes at this many files.
pub(crate) const MAX_FILES: usize = 2048;
/// A file this large is a set of its own.
pub(crate) const BIG: u64 = 64 << 20;
/// Input slices in a set at most (PAR2 allows 32768).
pub(crate) const MAX_SLICES: u64 = 16384;
/// Slices a set's data is cut into at least, where its size allows (granularity).
const MIN_SLICES: u64 = 1024;

/// A set as planned: its name and its files (in path order).
#[derive(Debug)]
pub(crate) struct Planned {
    pub(crate) stem: String,
    pub(crate) records: Vec<Record>,
}

/// The name of the set whose first file is `path`: stable while that file stays first.
pub(crate) fn stem_of(path: &[u8]) -> String {
    let h = Md5::digest(path);
    format!("set-{}", crate::digest::hex_encode(&h[..8], false))
}

/// Cuts records (given in path order) into sets.
#[derive(Default)]
pub(crate) struct Planner {
    run: Vec<Record>,
    bytes: u64,
}

impl Planner {
    /// Adds the next record; returns the sets it closes.
    pub(crate) fn push(&mut self, rec: Record) -> Vec<Planned> {
        let size = rec.size.unwrap_or(0);
        let mut out = Vec::new();
        if size >= BIG {
            out.extend(self.close());
            out.push(Planned { stem: stem_of(&rec.path), records: vec![rec] });
            return out;
        }
        let boundary = Md5::digest(&rec.path)[15] & 0x0f == 0;
        self.bytes += size;
        self.run.push(rec);
        if ((self.bytes >= SET_MIN || self.run.len() >= MIN_FILES) && boundary)
            || self.bytes >= SET_MAX
            || self.run.len() >= MAX_FILES
        {
            out.extend(self.close());
        }
        out
    }

    /// Closes the run: the last set, if any.
    pub(crate) fn close(&mut self) -> Option<Planned> {
        self.bytes = 0;
        let records = std::mem::take(&mut self.run);
        let first = records.first()?;
        Some(Planned { stem: stem_of(&first.path), records })
    }
}

/// The slice size for files of `sizes` (none empty) at `redundancy` (a fraction): with
/// at most [`MAX_SLICES`] slices, at least about [`MIN_SLICES`] where the data allows,
/// the least recovery data plus checksum bytes.
pub(crate) fn slice_size(sizes: &[u64], redundancy: f64) -> u64 {
    let total: u64 = sizes.iter().sum();
    let count = |s: u64| sizes.iter().map(|&f| f.div_ceil(s)).sum::<u64>();
    let coarsest = (total / MIN_SLICES).max(64).next_multiple_of(4);
    let mut best: Option<(f64, u64)> = None;
    let mut candidates: Vec<u64> = (6..40).flat_map(|k| [1u64 << k, 3u64 << (k - 1)]).collect();
    candidates.push(coarsest);
    for s in candidates {
        if s > coarsest {
            continue;
        }
        let n = count(s);
        if n > MAX_SLICES {
            continue;
        }
        let recovery = recovery_count(n, redundancy) as f64 * (s + 68) as f64;
        // The checksums are kept twice (the index and a volume).
        let cost = recovery + 2.0 * 20.0 * n as f64;
        if best.is_none_or(|(c, _)| cost < c) {
            best = Some((cost, s));
        }
    }
    match best {
        Some((_, s)) => s,
        // Too many slices at every size up to the coarsest: as fine as the limit allows.
        None => {
            let mut s = coarsest;
            while count(s) > MAX_SLICES {
                s = (s * 2).next_multiple_of(4);
            }
            s
        }
    }
}

/// Recovery slices for `n` input slices at `redundancy`: at least one.
pub(crate) fn recovery_count(n: u64, redundancy: f64) -> u32 {
    ((n as f64 * redundancy).ceil() as u64).clamp(1, 32768) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(path: &str, size: u64) -> Record {
        Record::sample(path.as_bytes(), "blake3", Some(size))
    }

    fn plan(files: &[(String, u64)]) -> Vec<Vec<String>> {
        let mut p = Planner::default();
        let mut sets = Vec::new();
        for (path, size) in files {
            sets.extend(p.push(rec(path, *size)));
        }
        sets.extend(p.close());
        sets.iter()
            .map(|s| s.records.iter().map(|r| String::from_utf8(r.path.clone()).unwrap()).collect())
            .collect()
    }

    #[test]
    fn a_change_moves_no_boundary_but_its_own_sets() {
        let files: Vec<(String, u64)> = (0..5000).map(|i| (format!("d/{i:05}"), 40_000)).collect();
        let before = plan(&files);
        assert!(before.len() > 10, "{}", before.len());
        assert!(before.iter().all(|s| s.len() <= MAX_FILES));
        // One file more in the middle: at most two sets differ.
        let mut grown = files.clone();
        grown.insert(2500, ("d/02499x".into(), 40_000));
        let after = plan(&grown);
        let kept = after.iter().filter(|s| before.contains(s)).count();
        assert!(kept + 2 >= before.len(), "kept {kept} of {}", before.len());
    }

    #[test]
    fn big_files_are_sets_of_their_own() {
        let files = vec![("a".into(), 10), ("b".into(), BIG), ("c".into(), 10)];
        assert_eq!(plan(&files), vec![vec!["a"], vec!["b"], vec!["c"]]);
    }

    #[test]
    fn slice_sizes_fit_the_files() {
        // One big file: about a thousand slices.
        let s = slice_size(&[2 << 30], 0.1);
        assert!((1u64 << 30) / s >= 500 && (2u64 << 30).div_ceil(s) <= MAX_SLICES, "{s}");
        // Many small files: small slices, little padding.
        let small: Vec<u64> = (0..2000).map(|i| 512 + (i * 37) % 7680).collect();
        let s = slice_size(&small, 0.1);
        assert!((512..=4096).contains(&s), "{s}");
        // More files than slices allowed at any size is impossible by the plan's bounds;
        // every choice is a multiple of 4.
        assert_eq!(slice_size(&[1, 2, 3], 0.1) % 4, 0);
        assert_eq!(recovery_count(13, 0.1), 2);
        assert_eq!(recovery_count(1, 0.01), 1);
    }
}
