//! From candidate names to ranked groups, in bounded memory, for both sources.
//!
//! Stage 1 sorts every candidate by (size, content key, device, inode, path): a group is
//! a run of equal (size, key), and within it each file's names are adjacent, its first
//! (smallest) name first. Streaming that, the stage counts a group's distinct files and
//! finds its first path; with two files or more it hands each name to stage 2 under the
//! key (waste descending, first path, file's first name, name), and a header line ahead
//! of them. Stage 2's order is the output's. Both stages are [`LineSorter`]s: in memory
//! up to the budget, sorted runs on disk beyond it. A group's names wait in a [`Spool`]
//! until its waste is known: in memory up to [`SPOOL_MEMORY`], on disk beyond.
//!
//! Fields are hex (paths too: hex keeps byte order, and no byte of it is a separator), so
//! a line sorts as its fields compare, one after the other.

use super::{DupsError, Event, Group};
use crate::shard::sort::LineSorter;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Most bytes of one group's names held in memory (a quarter of the sort budget, at most
/// this); a larger group goes through a file.
const SPOOL_MEMORY: usize = 8 << 20;

/// A directory for this run's temporary files, made only when a sort or a group spills
/// (private, mode 0700), and removed with everything in it when dropped.
pub(super) struct TempDir(PathBuf);

impl TempDir {
    /// A new name in `parent`, unique to this process and this moment.
    pub(super) fn new(parent: &Path) -> TempDir {
        static MADE: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        TempDir(parent.join(format!("fixity-dups.{}.{nanos:x}.{n}", std::process::id())))
    }

    /// A place inside it (nothing is made).
    fn sub(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

/// Makes `dir` and its parents, private.
fn make_dir(dir: &Path) -> std::io::Result<()> {
    crate::sys::private_dirs(std::fs::DirBuilder::new().recursive(true)).create(dir)
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One name handed to the ranking.
pub(super) struct Candidate<'a> {
    /// The file's size.
    pub size: u64,
    /// Its content's digest (all of one algorithm).
    pub key: &'a [u8],
    /// Its (device, inode).
    pub id: (u64, u64),
    /// The name, as printed.
    pub path: &'a [u8],
}

/// Collects candidates, then hands out the groups (see the module's description).
pub(super) struct Ranker {
    dir: TempDir,
    first: LineSorter,
    budget: usize,
}

impl Ranker {
    /// A ranking whose sorts hold `budget` bytes each in memory, spilling under `parent`.
    pub(super) fn new(parent: &Path, budget: usize) -> Ranker {
        let dir = TempDir::new(parent);
        let first = LineSorter::new(&dir.sub("1"), budget);
        Ranker { dir, first, budget }
    }

    /// Adds one name.
    pub(super) fn push(&mut self, c: &Candidate<'_>) -> Result<(), DupsError> {
        let mut line = String::with_capacity(60 + 2 * (c.key.len() + c.path.len()));
        let _ = write!(line, "{:016x} ", c.size);
        hex_into(c.key, &mut line);
        let _ = write!(line, " {:016x}{:016x} ", c.id.0, c.id.1);
        hex_into(c.path, &mut line);
        Ok(self.first.push(line.into_bytes())?)
    }

    /// Sorts, folds and ranks, handing each group to `emit` (`Group`, its `Name`s,
    /// `GroupEnd`), groups of `algorithm` digests. Returns (groups, files, links, wasted).
    pub(super) fn finish(
        self,
        algorithm: &'static str,
        emit: &mut dyn FnMut(Event<'_>),
    ) -> Result<[u64; 4], DupsError> {
        let Ranker { dir, first, budget } = self;
        let mut second = LineSorter::new(&dir.sub("2"), budget);
        let spool = Spool::new(dir.0.join("spool"), (budget / 4).min(SPOOL_MEMORY));
        let mut fold = Fold { spool, ..Fold::default() };
        let mut failed: Option<DupsError> = None;
        first.finish(&mut |line| {
            if failed.is_none()
                && let Err(e) = fold.line(line, &mut second)
            {
                failed = Some(e);
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        fold.close(&mut second)?;
        let mut totals = [0u64; 4];
        let mut open = false;
        let mut path = Vec::new();
        second.finish(&mut |line| {
            let f: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
            if f.len() < 4 {
                return;
            }
            if f[2] == b"0" {
                // Header: waste, first path, 0, size, files, links, key.
                if open {
                    emit(Event::GroupEnd);
                }
                let num = |i: usize| f.get(i).map_or(0, |x| unhex_u64(x));
                let group = Group {
                    size: num(3),
                    files: num(4),
                    links: num(5),
                    algorithm,
                    digest: f.get(6).map_or(Vec::new(), |k| unhex(k)),
                };
                totals[0] += 1;
                totals[1] += group.files;
                totals[2] += group.links;
                totals[3] += group.wasted();
                emit(Event::Group(&group));
                open = true;
            } else {
                // A name: waste, first path, 1, its file's first name, name.
                path.clear();
                path.extend(unhex(f.get(4).copied().unwrap_or_default()));
                emit(Event::Name {
                    path: &path,
                    link: f[3] != f.get(4).copied().unwrap_or_default(),
                });
            }
        })?;
        if open {
            emit(Event::GroupEnd);
        }
        drop(dir);
        Ok(totals)
    }
}

/// Stage 1's stream, folded into groups.
#[derive(Default)]
struct Fold {
    /// The current group's (size, key) fields, as they are in the line.
    group: Vec<u8>,
    /// The current file's (device, inode) field and its first name (hex).
    file: Vec<u8>,
    file_first: Vec<u8>,
    /// The group's distinct files and names, and its smallest first name (hex).
    files: u64,
    names: u64,
    least: Vec<u8>,
    spool: Spool,
}

impl Fold {
    /// Takes one stage-1 line: size key id path.
    fn line(&mut self, line: &[u8], second: &mut LineSorter) -> Result<(), DupsError> {
        let mut f = line.splitn(4, |&b| b == b' ');
        let (Some(size), Some(key), Some(id), Some(path)) =
            (f.next(), f.next(), f.next(), f.next())
        else {
            return Ok(());
        };
        let group_len = size.len() + 1 + key.len();
        if line[..group_len] != self.group[..] {
            self.close(second)?;
            self.group.clear();
            self.group.extend_from_slice(&line[..group_len]);
        }
        if id != self.file.as_slice() {
            self.file.clear();
            self.file.extend_from_slice(id);
            self.file_first.clear();
            self.file_first.extend_from_slice(path);
            self.files += 1;
            if self.least.is_empty() || path < self.least.as_slice() {
                self.least.clear();
                self.least.extend_from_slice(path);
            }
        }
        self.names += 1;
        let mut member = Vec::with_capacity(self.file_first.len() + 1 + path.len());
        member.extend_from_slice(&self.file_first);
        member.push(b' ');
        member.extend_from_slice(path);
        self.spool.push(&member)
    }

    /// Ends the current group: with two files or more, its header and names go to stage 2.
    fn close(&mut self, second: &mut LineSorter) -> Result<(), DupsError> {
        if self.files >= 2 {
            // The group's field: size (16 hex digits), a space, the key.
            let (size_hex, key_hex) = (&self.group[..16], &self.group[17..]);
            let size = unhex_u64(size_hex);
            let group = Group {
                size,
                files: self.files,
                links: self.names - self.files,
                algorithm: "",
                digest: Vec::new(),
            };
            let mut prefix = format!("{:016x} ", u64::MAX - group.wasted()).into_bytes();
            prefix.extend_from_slice(&self.least);
            let mut header = prefix.clone();
            let _ = write!(header, " 0 {size:016x} {:016x} {:016x} ", group.files, group.links);
            header.extend_from_slice(key_hex);
            second.push(header)?;
            self.spool.replay(&mut |member| {
                let mut l = Vec::with_capacity(prefix.len() + 3 + member.len());
                l.extend_from_slice(&prefix);
                l.extend_from_slice(b" 1 ");
                l.extend_from_slice(member);
                second.push(l).map_err(DupsError::from)
            })?;
        }
        self.spool.clear();
        self.file.clear();
        self.files = 0;
        self.names = 0;
        self.least.clear();
        Ok(())
    }
}

/// One group's names until its waste is known: in memory, then (past [`SPOOL_MEMORY`])
/// in a file.
#[derive(Default)]
struct Spool {
    path: PathBuf,
    limit: usize,
    lines: Vec<Vec<u8>>,
    held: usize,
    file: Option<BufWriter<std::fs::File>>,
}

impl Spool {
    fn new(path: PathBuf, limit: usize) -> Spool {
        Spool { path, limit, ..Spool::default() }
    }

    fn push(&mut self, line: &[u8]) -> Result<(), DupsError> {
        let io = |e| DupsError::Temp(self.path.clone(), e);
        if self.file.is_none() && self.held + line.len() > self.limit {
            make_dir(self.path.parent().unwrap_or(Path::new("."))).map_err(io)?;
            let mut w = BufWriter::new(std::fs::File::create(&self.path).map_err(io)?);
            for l in self.lines.drain(..) {
                w.write_all(&l).and_then(|()| w.write_all(b"\n")).map_err(io)?;
            }
            self.file = Some(w);
        }
        match &mut self.file {
            Some(w) => w.write_all(line).and_then(|()| w.write_all(b"\n")).map_err(io),
            None => {
                self.held += line.len() + 24;
                self.lines.push(line.to_vec());
                Ok(())
            }
        }
    }

    fn replay(
        &mut self,
        each: &mut dyn FnMut(&[u8]) -> Result<(), DupsError>,
    ) -> Result<(), DupsError> {
        let Some(mut w) = self.file.take() else {
            return self.lines.iter().try_for_each(|l| each(l));
        };
        let io = |e| DupsError::Temp(self.path.clone(), e);
        w.flush().map_err(io)?;
        drop(w);
        let mut r = BufReader::new(std::fs::File::open(&self.path).map_err(io)?);
        let mut l = Vec::new();
        loop {
            l.clear();
            if r.read_until(b'\n', &mut l).map_err(io)? == 0 {
                break;
            }
            l.pop();
            each(&l)?;
        }
        let _ = std::fs::remove_file(&self.path);
        Ok(())
    }

    fn clear(&mut self) {
        self.lines.clear();
        self.held = 0;
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Appends lowercase hex of `bytes`.
fn hex_into(bytes: &[u8], out: &mut String) {
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
}

/// The bytes of hex text (invalid digits read as 0: the text is this module's own).
fn unhex(hex: &[u8]) -> Vec<u8> {
    let d = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
    hex.chunks(2).map(|p| d(p[0]) << 4 | p.get(1).map_or(0, |&c| d(c))).collect()
}

fn unhex_u64(hex: &[u8]) -> u64 {
    hex.iter().fold(0, |n, &c| n << 4 | u64::from((c as char).to_digit(16).unwrap_or(0)))
}
