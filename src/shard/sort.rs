//! Sorting lines in bounded memory: lines gather in memory up to a budget, then go to a
//! sorted run file; the runs are merged at the end. For the merge's root digest over a
//! tree of any size.

use super::PlanError;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

pub(crate) struct LineSorter {
    lines: Vec<Vec<u8>>,
    held: usize,
    budget: usize,
    dir: PathBuf,
    runs: Vec<PathBuf>,
}

impl LineSorter {
    /// Sorts in memory up to `budget` bytes of lines, spilling runs into `dir` (made, with
    /// its parents, at the first spill).
    pub(crate) fn new(dir: &Path, budget: usize) -> LineSorter {
        LineSorter { lines: Vec::new(), held: 0, budget, dir: dir.to_path_buf(), runs: Vec::new() }
    }

    /// Adds one line (without its newline; it holds none).
    pub(crate) fn push(&mut self, line: Vec<u8>) -> Result<(), PlanError> {
        self.held += line.len() + 24;
        self.lines.push(line);
        if self.held >= self.budget { self.spill() } else { Ok(()) }
    }

    fn spill(&mut self) -> Result<(), PlanError> {
        self.lines.sort_unstable();
        // The directory is made at the first spill (private: the lines may be names), so
        // a sort that fits in memory leaves nothing behind, even if the process is killed.
        if self.runs.is_empty() {
            crate::sys::private_dirs(std::fs::DirBuilder::new().recursive(true))
                .create(&self.dir)
                .map_err(PlanError::io(&self.dir))?;
        }
        let path = self.dir.join(format!(".sort-{}", self.runs.len()));
        let f = std::fs::File::create(&path).map_err(PlanError::io(&path))?;
        let mut w = BufWriter::with_capacity(256 * 1024, f);
        for l in self.lines.drain(..) {
            w.write_all(&l).and_then(|()| w.write_all(b"\n")).map_err(PlanError::io(&path))?;
        }
        w.flush().map_err(PlanError::io(&path))?;
        self.held = 0;
        self.runs.push(path);
        Ok(())
    }

    /// Hands every line to `each` in sorted order, then removes the run files.
    pub(crate) fn finish(mut self, each: &mut dyn FnMut(&[u8])) -> Result<(), PlanError> {
        if self.runs.is_empty() {
            self.lines.sort_unstable();
            self.lines.iter().for_each(|l| each(l));
            return Ok(());
        }
        if !self.lines.is_empty() {
            self.spill()?;
        }
        let result = self.merge_runs(each);
        for r in &self.runs {
            let _ = std::fs::remove_file(r);
        }
        result
    }

    fn merge_runs(&self, each: &mut dyn FnMut(&[u8])) -> Result<(), PlanError> {
        let mut readers = Vec::with_capacity(self.runs.len());
        for r in &self.runs {
            let f = std::fs::File::open(r).map_err(PlanError::io(r))?;
            readers.push((BufReader::new(f), r));
        }
        let mut heap = BinaryHeap::new();
        let next = |i: usize, readers: &mut Vec<(BufReader<std::fs::File>, &PathBuf)>| {
            let (rd, path) = &mut readers[i];
            let mut l = Vec::new();
            match rd.read_until(b'\n', &mut l) {
                Ok(0) => Ok(None),
                Ok(_) => {
                    l.pop();
                    Ok(Some(l))
                }
                Err(e) => Err(PlanError::Io(path.to_path_buf(), e)),
            }
        };
        for i in 0..readers.len() {
            if let Some(l) = next(i, &mut readers)? {
                heap.push(Reverse((l, i)));
            }
        }
        while let Some(Reverse((l, i))) = heap.pop() {
            each(&l);
            if let Some(n) = next(i, &mut readers)? {
                heap.push(Reverse((n, i)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_runs_merge_into_one_sorted_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let mut want = Vec::new();
        let mut s = LineSorter::new(dir.path(), 200);
        let mut x = 7u32;
        for _ in 0..500 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let l = format!("{:08x} r", x >> 3).into_bytes();
            want.push(l.clone());
            s.push(l).unwrap();
        }
        assert!(s.runs.len() > 10, "the budget makes runs");
        want.sort();
        let mut got = Vec::new();
        s.finish(&mut |l| got.push(l.to_vec())).unwrap();
        assert_eq!(got, want);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "runs removed");
    }
}
