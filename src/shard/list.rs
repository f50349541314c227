//! A part's list: one entry per line, in output order.
//!
//! ```text
//! F <mode> <size> <mtime_ns> <name>     a file (mode N: named, W: walked, L: walked following links)
//! P <mode> <size> <mtime_ns> <start> <end> <unit> <name>
//!                                       bytes [start, end) of a file split across parts,
//!                                       cut at multiples of unit (a power of two)
//! S <path> <why>                        left out by the walk
//! E <path> <message>                    the walk could not go on below path
//! ```
//!
//! A file's pieces follow each other, across the ends of consecutive lists; its first
//! piece is where one run would hash the file.

use super::PlanError;
use super::codec::{esc, hex, unesc};
use crate::read::OpenMode;
use crate::sys::MetadataExt;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// One entry of a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A file to hash, with its stat at plan time (0, 0 when it could not be taken: the
    /// part then reports the file as one run would); `piece`: only that byte range of it.
    File { name: Vec<u8>, mode: OpenMode, size: u64, mtime_ns: i128, piece: Option<Piece> },
    /// What the walk left out, and why.
    Skipped { path: Vec<u8>, why: String },
    /// Where the walk could not go on, and why.
    WalkError { path: Vec<u8>, message: String },
}

/// A byte range of a file split across parts (see [`crate::algo::Combine`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// First byte, a multiple of `unit`.
    pub start: u64,
    /// One past the last byte: a multiple of `unit`, or the file's size for its last piece.
    pub end: u64,
    /// The unit the file is cut at (a power of two, at least 1 KiB).
    pub unit: u64,
}

impl Piece {
    /// Bytes in the piece (never none).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    /// Whether it is a file's first piece (where one run would hash the file).
    pub fn is_first(&self) -> bool {
        self.start == 0
    }
}

impl Entry {
    /// A file found by the walk or named, with its stat now.
    pub(crate) fn file(name: Vec<u8>, mode: OpenMode) -> Entry {
        let path = crate::pathtext::bytes_path(&name);
        let md = match mode {
            OpenMode::Walked { follow: false } => std::fs::symlink_metadata(&path),
            _ => std::fs::metadata(&path),
        };
        let (size, mtime_ns) = md.map_or((0, 0), |m| {
            (m.len(), m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128)
        });
        Entry::File { name, mode, size, mtime_ns, piece: None }
    }

    /// The bytes of the file this entry has a part read: its piece's, or its size.
    pub fn bytes(&self) -> u64 {
        match self {
            Entry::File { piece: Some(p), .. } => p.len(),
            Entry::File { size, .. } => *size,
            _ => 0,
        }
    }

    /// The entry as a line of a list (with its newline).
    pub fn to_line(&self) -> String {
        match self {
            Entry::File { name, mode, size, mtime_ns, piece } => {
                let m = match mode {
                    OpenMode::Walked { follow: false } => 'W',
                    OpenMode::Walked { follow: true } => 'L',
                    _ => 'N',
                };
                match piece {
                    None => format!("F {m} {size} {mtime_ns} {}\n", esc(name)),
                    Some(Piece { start, end, unit }) => {
                        format!("P {m} {size} {mtime_ns} {start} {end} {unit} {}\n", esc(name))
                    }
                }
            }
            Entry::Skipped { path, why } => format!("S {} {}\n", esc(path), esc(why.as_bytes())),
            Entry::WalkError { path, message } => {
                format!("E {} {}\n", esc(path), esc(message.as_bytes()))
            }
        }
    }

    /// The entry a line of a list (without its newline) holds, if it is one.
    pub fn parse(line: &str) -> Option<Entry> {
        let f: Vec<&str> = line.split(' ').collect();
        let text = |s: &str| unesc(s).map(|b| String::from_utf8_lossy(&b).into_owned());
        let mode = |m: &str| match m {
            "W" => Some(OpenMode::Walked { follow: false }),
            "L" => Some(OpenMode::Walked { follow: true }),
            "N" => Some(OpenMode::Named),
            _ => None,
        };
        Some(match f[..] {
            ["F", m, size, mtime, name] => Entry::File {
                name: unesc(name)?,
                mode: mode(m)?,
                size: size.parse().ok()?,
                mtime_ns: mtime.parse().ok()?,
                piece: None,
            },
            ["P", m, size, mtime, start, end, unit, name] => {
                let size: u64 = size.parse().ok()?;
                let p = Piece {
                    start: start.parse().ok()?,
                    end: end.parse().ok()?,
                    unit: unit.parse().ok()?,
                };
                let cut = |at: u64| at.is_multiple_of(p.unit);
                let fits = crate::algo::valid_unit(p.unit)
                    && p.start < p.end
                    && p.end <= size
                    && size > p.unit
                    && cut(p.start)
                    && (cut(p.end) || p.end == size);
                if !fits {
                    return None;
                }
                Entry::File {
                    name: unesc(name)?,
                    mode: mode(m)?,
                    size,
                    mtime_ns: mtime.parse().ok()?,
                    piece: Some(p),
                }
            }
            ["S", path, why] => Entry::Skipped { path: unesc(path)?, why: text(why)? },
            ["E", path, msg] => Entry::WalkError { path: unesc(path)?, message: text(msg)? },
            _ => return None,
        })
    }
}

/// Writes a list, counting its files and bytes and digesting its text.
pub(crate) struct ListWriter {
    out: BufWriter<std::fs::File>,
    path: PathBuf,
    hash: blake3::Hasher,
    /// Files and pieces (each a file's worth of work for the part), and their bytes.
    pub files: u64,
    pub bytes: u64,
}

impl ListWriter {
    pub(crate) fn create(path: &Path) -> Result<ListWriter, PlanError> {
        let f = std::fs::File::create(path).map_err(PlanError::io(path))?;
        Ok(ListWriter {
            out: BufWriter::with_capacity(256 * 1024, f),
            path: path.to_path_buf(),
            hash: blake3::Hasher::new(),
            files: 0,
            bytes: 0,
        })
    }

    pub(crate) fn push(&mut self, e: &Entry) -> Result<(), PlanError> {
        if let Entry::File { .. } = e {
            self.files += 1;
            self.bytes += e.bytes();
        }
        let line = e.to_line();
        self.hash.update(line.as_bytes());
        self.out.write_all(line.as_bytes()).map_err(PlanError::io(&self.path))
    }

    /// Flushes and syncs the list; returns its digest (hex).
    pub(crate) fn finish(self) -> Result<String, PlanError> {
        let path = self.path;
        let f = self.out.into_inner().map_err(|e| PlanError::Io(path.clone(), e.into_error()))?;
        f.sync_all().map_err(PlanError::io(&path))?;
        Ok(hex(self.hash.finalize().as_bytes()))
    }
}

/// Reads a list's entries in order.
pub struct ListReader {
    lines: std::io::Lines<BufReader<std::fs::File>>,
    path: PathBuf,
}

impl ListReader {
    pub(crate) fn open(path: &Path) -> Result<ListReader, PlanError> {
        let f = std::fs::File::open(path).map_err(PlanError::io(path))?;
        Ok(ListReader { lines: BufReader::with_capacity(256 * 1024, f).lines(), path: path.into() })
    }

    /// The next entry; `None` at the end.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, PlanError> {
        match self.lines.next() {
            None => Ok(None),
            Some(Err(e)) => Err(PlanError::Io(self.path.clone(), e)),
            Some(Ok(l)) => Entry::parse(&l)
                .map(Some)
                .ok_or_else(|| PlanError::Format(self.path.clone(), format!("bad entry {l:?}"))),
        }
    }
}

impl Iterator for ListReader {
    type Item = Result<Entry, PlanError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}

/// The digest (hex) of a list file's text, as [`ListWriter::finish`] gives it.
pub(crate) fn digest_file(path: &Path) -> Result<String, PlanError> {
    let mut f = std::fs::File::open(path).map_err(PlanError::io(path))?;
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = f.read(&mut buf).map_err(PlanError::io(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(h.finalize().as_bytes()))
}
