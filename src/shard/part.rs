//! Hashing one part of a plan, and its part file.
//!
//! ```text
//! fixity-part 1
//! plan <id>
//! part <i>
//! list <digest of the list hashed>
//! host <host>
//! version <fixity version>
//! algorithms <name,name>
//! started <ms>
//! H <size> <mtime_ns or -> <hex digest,hex digest> <changed since the plan: 0|1> <name>
//! U <skipped: 0|1> <message> <name>       could not be hashed (or left out, if skipped)
//! R <piece> <size> <mtime_ns or -> <hex state,hex state or -> <changed: 0|1> <name>
//!                                         a piece read: each algorithm's state
//! X <piece> <skipped: 0|1> <message> <name>   a piece that could not be read
//! C <piece> <name>                        a piece the part holding the file's first piece
//!                                         covers, reading the whole file
//! S <why> <path>                          left out by the plan's walk
//! E <message> <path>                      the plan's walk could not go on below path
//! end <files> <bytes> <problems> <changed> <finished ms>
//! ```
//!
//! `<piece>` is `<start> <end> <unit> <planned size>`: the list's `P` entry. A piece read
//! (`R`) holds what [`crate::algo::Combine`] joins: a CRC of the range, or BLAKE3's
//! chaining values of its unit blocks; with `changed` (the file's stat was not the
//! plan's) it holds none (`-`). When an algorithm does not combine from ranges, the part
//! holding the first piece reads the whole file into an `H` (or `U`) record, and the
//! parts holding the others write `C`. Files and bytes in the trailer count pieces read.
//!
//! The file is written atomically when the part ends, so a part killed on the way
//! leaves none (or the one from an earlier run), and re-running a part replaces it.

use super::codec::{esc, hex, unesc, unhex};
use super::piece::{self, PieceResult};
use super::{Entry, ListReader, Piece, Plan, PlanError};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::hashing::{self, HashEvent, HashPlan, Inputs};
use crate::output::AtomicFile;
use crate::pipeline::Config;
use crate::sources::Source;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

const PART_MAGIC: &str = "fixity-part 1";

/// One record of a part, in output order.
#[derive(Clone, Debug)]
pub enum Record {
    /// Hashed: size and mtime read, one digest per algorithm; `changed` when the stat
    /// differs from the plan's.
    Hashed { name: Vec<u8>, size: u64, mtime_ns: Option<i128>, digests: Vec<Digest>, changed: bool },
    /// Could not be hashed (`skipped`: left out on purpose, not a failure).
    Unreadable { name: Vec<u8>, message: String, skipped: bool },
    /// Left out by the plan's walk.
    Skipped { path: Vec<u8>, why: String },
    /// The plan's walk could not go on below `path`.
    WalkError { path: Vec<u8>, message: String },
    /// A piece of a file split across parts, of `total` bytes at plan time.
    Piece { name: Vec<u8>, piece: Piece, total: u64, result: PieceResult },
}

impl Record {
    /// Whether one run would fail (exit 1) for this record.
    pub fn is_problem(&self) -> bool {
        match self {
            Record::Hashed { changed, .. } => *changed,
            Record::Unreadable { skipped, .. } => !skipped,
            Record::Skipped { .. } => false,
            Record::WalkError { .. } => true,
            Record::Piece { result, .. } => match result {
                PieceResult::Hashed { changed, .. } => *changed,
                PieceResult::Unreadable { skipped, .. } => !skipped,
                PieceResult::Covered => false,
            },
        }
    }

    /// The record as a line of a part file (with its newline).
    pub fn to_line(&self) -> String {
        match self {
            Record::Hashed { name, size, mtime_ns, digests, changed } => {
                let m = mtime_ns.map_or("-".to_string(), |t| t.to_string());
                let d: Vec<String> = digests.iter().map(|d| hex(d.as_bytes())).collect();
                format!("H {size} {m} {} {} {}\n", d.join(","), u8::from(*changed), esc(name))
            }
            Record::Unreadable { name, message, skipped } => {
                format!("U {} {} {}\n", u8::from(*skipped), esc(message.as_bytes()), esc(name))
            }
            Record::Skipped { path, why } => format!("S {} {}\n", esc(why.as_bytes()), esc(path)),
            Record::WalkError { path, message } => {
                format!("E {} {}\n", esc(message.as_bytes()), esc(path))
            }
            Record::Piece { name, piece: p, total, result } => {
                let at = format!("{} {} {} {total}", p.start, p.end, p.unit);
                match result {
                    PieceResult::Hashed { size, mtime_ns, states, changed } => {
                        let m = mtime_ns.map_or("-".to_string(), |t| t.to_string());
                        let s: Vec<String> = states.iter().map(|s| hex(s)).collect();
                        let s = if s.is_empty() { "-".to_string() } else { s.join(",") };
                        format!("R {at} {size} {m} {s} {} {}\n", u8::from(*changed), esc(name))
                    }
                    PieceResult::Unreadable { message, skipped } => format!(
                        "X {at} {} {} {}\n",
                        u8::from(*skipped),
                        esc(message.as_bytes()),
                        esc(name)
                    ),
                    PieceResult::Covered => format!("C {at} {}\n", esc(name)),
                }
            }
        }
    }

    /// The record a line of a part file hashed with `algos` holds, if it is one.
    pub fn parse(line: &str, algos: &[&'static Algorithm]) -> Option<Record> {
        let f: Vec<&str> = line.split(' ').collect();
        let text = |s: &str| unesc(s).map(|b| String::from_utf8_lossy(&b).into_owned());
        let flag = |s: &str| match s {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        };
        Some(match f[..] {
            ["H", size, mtime, digests, changed, name] => {
                let digests: Vec<Digest> = digests
                    .split(',')
                    .zip(algos)
                    .map(|(d, a)| unhex(d).filter(|b| b.len() == a.len).map(|b| Digest::new(&b)))
                    .collect::<Option<_>>()?;
                if digests.len() != algos.len() {
                    return None;
                }
                Record::Hashed {
                    name: unesc(name)?,
                    size: size.parse().ok()?,
                    mtime_ns: if mtime == "-" { None } else { Some(mtime.parse().ok()?) },
                    digests,
                    changed: flag(changed)?,
                }
            }
            ["U", skipped, msg, name] => Record::Unreadable {
                name: unesc(name)?,
                message: text(msg)?,
                skipped: flag(skipped)?,
            },
            ["S", why, path] => Record::Skipped { path: unesc(path)?, why: text(why)? },
            ["E", msg, path] => Record::WalkError { path: unesc(path)?, message: text(msg)? },
            ["R", a, b, c, d, size, mtime, states, changed, name] => {
                let states: Vec<Vec<u8>> = match states {
                    "-" => Vec::new(),
                    s => s.split(',').map(unhex).collect::<Option<_>>()?,
                };
                if !states.is_empty() && states.len() != algos.len() {
                    return None;
                }
                let result = PieceResult::Hashed {
                    size: size.parse().ok()?,
                    mtime_ns: if mtime == "-" { None } else { Some(mtime.parse().ok()?) },
                    states,
                    changed: flag(changed)?,
                };
                piece_record(name, [a, b, c, d], result)?
            }
            ["X", a, b, c, d, skipped, msg, name] => {
                let result =
                    PieceResult::Unreadable { message: text(msg)?, skipped: flag(skipped)? };
                piece_record(name, [a, b, c, d], result)?
            }
            ["C", a, b, c, d, name] => piece_record(name, [a, b, c, d], PieceResult::Covered)?,
            _ => return None,
        })
    }
}

/// A piece's record from the fields of its line, if they make a piece of the list's.
fn piece_record(name: &str, at: [&str; 4], result: PieceResult) -> Option<Record> {
    let [start, end, unit, total] = at.map(|f| f.parse::<u64>().ok());
    let (piece, total) = (Piece { start: start?, end: end?, unit: unit? }, total?);
    let line = format!("P N {total} 0 {} {} {} x", piece.start, piece.end, piece.unit);
    Entry::parse(&line)?;
    Some(Record::Piece { name: unesc(name)?, piece, total, result })
}

/// A part file's header and trailer.
#[derive(Clone, Debug)]
pub struct PartHeader {
    pub plan: String,
    pub index: usize,
    pub list: String,
    pub host: String,
    pub version: String,
    pub algorithms: Vec<&'static Algorithm>,
    pub started: i64,
    /// From the trailer: files hashed, their bytes, problems, files changed since the
    /// plan, when the part ended.
    pub files: u64,
    pub bytes: u64,
    pub problems: u64,
    pub changed: u64,
    pub finished: i64,
}

/// What a part run hands its caller as it goes.
pub enum PartEvent<'a> {
    /// One record, in order (already written to the part file).
    Record(&'a Record),
    /// A file split across parts that this part reads whole (it holds the file's first
    /// piece), because the algorithms `whole` do not combine from ranges (`split` do).
    ReadWhole { name: &'a [u8], whole: &'a [&'static Algorithm], split: &'a [&'static Algorithm] },
}

/// Hashes part `index` of `plan` with `algos` and writes its part file. Names are
/// opened as they are written in the list: the caller runs this in the plan's `cwd`.
///
/// Whole files stream through the engine; at a piece (a list's `P` entry) the stream
/// stops, the piece is read (or covered, or its file read whole), and a new stream
/// goes on from the entry after it.
pub fn run(
    plan: &Plan,
    index: usize,
    algos: &[&'static Algorithm],
    config: Config,
    host: &str,
    on_event: impl FnMut(PartEvent),
) -> Result<PartHeader, PlanError> {
    let path = plan.part_path(index);
    let list = plan.list(index)?;
    let head = PartHeader {
        plan: plan.id.clone(),
        index,
        list: plan.parts[index].list.clone(),
        host: host.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        algorithms: algos.to_vec(),
        started: crate::clock::now_ms(),
        files: 0,
        bytes: 0,
        problems: 0,
        changed: 0,
        finished: 0,
    };
    let out = BufWriter::new(AtomicFile::create(&path).map_err(PlanError::io(&path))?);
    let names: Vec<&str> = algos.iter().map(|a| a.name).collect();
    let start = format!(
        "{PART_MAGIC}\nplan {}\npart {index}\nlist {}\nhost {}\nversion {}\nalgorithms {}\n\
         started {}\n",
        head.plan,
        head.list,
        esc(host.as_bytes()),
        esc(head.version.as_bytes()),
        names.join(","),
        head.started
    );
    let mut sink = Sink { out, path, head, failure: None, on_event };
    sink.write(&start)?;
    let stream = Stream {
        list: Rc::new(RefCell::new(list)),
        planned: Rc::default(),
        error: Rc::default(),
        held: Rc::default(),
    };
    let combine = piece::all_combine(algos);
    let (whole, split): (Vec<_>, Vec<_>) = algos.iter().partition(|a| a.combine.is_none());
    let hash = |inputs, sink: &mut Sink<_>| {
        let job = HashPlan { inputs, algos: algos.to_vec(), config: config.clone() };
        hashing::run(job, |event| sink.event(event, &stream.planned));
    };
    loop {
        hash(Inputs::Stream(Box::new(stream.segment())), &mut sink);
        if sink.failure.is_some() || stream.error.borrow().is_some() {
            break;
        }
        let Some(Entry::File { name, mode, size, mtime_ns, piece: Some(p) }) =
            stream.held.borrow_mut().take()
        else {
            break;
        };
        let result = if combine {
            piece::hash(&name, mode, (size, mtime_ns), p, algos, &config.read)
        } else if p.is_first() {
            (sink.on_event)(PartEvent::ReadWhole { name: &name, whole: &whole, split: &split });
            stream.planned.borrow_mut().push_back((size, mtime_ns));
            let path = crate::pathtext::bytes_path(&name);
            hash(Inputs::Listed(vec![Source::File { name, path, mode }]), &mut sink);
            continue;
        } else {
            PieceResult::Covered
        };
        if !sink.emit(Record::Piece { name, piece: p, total: size, result }) {
            break;
        }
    }
    let error = stream.error.borrow_mut().take();
    if let Some(e) = sink.failure.take().or(error) {
        return Err(e);
    }
    let h = &mut sink.head;
    h.finished = crate::clock::now_ms().max(h.started);
    let end = format!("end {} {} {} {} {}\n", h.files, h.bytes, h.problems, h.changed, h.finished);
    sink.write(&end)?;
    let Sink { out, path, head, .. } = sink;
    let file = out.into_inner().map_err(|e| PlanError::Io(path.clone(), e.into_error()))?;
    file.commit().map_err(PlanError::io(&path))?;
    Ok(head)
}

/// A part's list, handed to the engine up to the next piece.
struct Stream {
    list: Rc<RefCell<ListReader>>,
    /// The plan's stat of each file handed over and not yet hashed, in order.
    planned: Rc<RefCell<VecDeque<(u64, i128)>>>,
    /// The list could not be read on.
    error: Rc<RefCell<Option<PlanError>>>,
    /// The piece the last segment stopped at.
    held: Rc<RefCell<Option<Entry>>>,
}

impl Stream {
    /// The sources from here up to the next piece (held) or the list's end.
    fn segment(&self) -> impl Iterator<Item = Source> + 'static {
        let (list, planned) = (self.list.clone(), self.planned.clone());
        let (error, held) = (self.error.clone(), self.held.clone());
        let mut done = false;
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            let entry = match list.borrow_mut().next_entry() {
                Ok(Some(e)) => e,
                Ok(None) => None?,
                Err(e) => {
                    *error.borrow_mut() = Some(e);
                    None?
                }
            };
            Some(match entry {
                Entry::File { piece: Some(_), .. } => {
                    done = true;
                    *held.borrow_mut() = Some(entry);
                    return None;
                }
                Entry::File { name, mode, size, mtime_ns, piece: None } => {
                    planned.borrow_mut().push_back((size, mtime_ns));
                    let path = crate::pathtext::bytes_path(&name);
                    Source::File { name, path, mode }
                }
                Entry::Skipped { path, why } => {
                    Source::Skipped { path: crate::pathtext::bytes_path(&path), why: intern(why) }
                }
                Entry::WalkError { path, message } => Source::Error {
                    path: crate::pathtext::bytes_path(&path),
                    error: std::io::Error::other(message),
                },
            })
        })
        .fuse()
    }
}

/// Where a part's records go: its file, its counts, and the caller.
struct Sink<F> {
    out: BufWriter<AtomicFile>,
    path: PathBuf,
    head: PartHeader,
    failure: Option<PlanError>,
    on_event: F,
}

impl<F: FnMut(PartEvent)> Sink<F> {
    fn write(&mut self, text: &str) -> Result<(), PlanError> {
        self.out.write_all(text.as_bytes()).map_err(PlanError::io(&self.path))
    }

    /// Counts, writes and hands over one record; false once the part file cannot be
    /// written.
    fn emit(&mut self, record: Record) -> bool {
        let h = &mut self.head;
        match &record {
            Record::Hashed { size, changed, .. } => {
                h.files += 1;
                h.bytes += size;
                h.changed += u64::from(*changed);
            }
            Record::Piece { piece, result: PieceResult::Hashed { changed, .. }, .. } => {
                if *changed {
                    h.changed += 1;
                } else {
                    h.files += 1;
                    h.bytes += piece.len();
                }
            }
            r => h.problems += u64::from(r.is_problem()),
        }
        if let Err(e) = self.write(&record.to_line()) {
            self.failure = Some(e);
            return false;
        }
        (self.on_event)(PartEvent::Record(&record));
        true
    }

    /// The record of one of the engine's events, emitted.
    fn event(&mut self, event: HashEvent, planned: &RefCell<VecDeque<(u64, i128)>>) -> bool {
        let record = match event {
            HashEvent::Hashed { name, hashed } => {
                let (size, mtime) = planned.borrow_mut().pop_front().unwrap_or((0, 0));
                let changed = hashed.size != size || hashed.mtime_ns.is_some_and(|t| t != mtime);
                Record::Hashed {
                    name: name.to_vec(),
                    size: hashed.size,
                    mtime_ns: hashed.mtime_ns,
                    digests: hashed.digests.clone(),
                    changed,
                }
            }
            HashEvent::Unreadable { name, error } => {
                planned.borrow_mut().pop_front();
                Record::Unreadable {
                    name: name.to_vec(),
                    message: error.message(),
                    skipped: error.is_skip(),
                }
            }
            HashEvent::Skipped { path, why } => Record::Skipped {
                path: crate::pathtext::path_bytes(path).to_vec(),
                why: why.to_string(),
            },
            HashEvent::WalkError { path, error } => Record::WalkError {
                path: crate::pathtext::path_bytes(path).to_vec(),
                message: crate::read::io_message(error),
            },
        };
        self.emit(record)
    }
}

/// The walk's reasons are a few constants; a plan's are read back as text. Each distinct
/// text is kept once for the run.
fn intern(why: String) -> &'static str {
    static SEEN: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = seen.iter().find(|s| **s == why) {
        return s;
    }
    let s: &'static str = Box::leak(why.into_boxed_str());
    seen.push(s);
    s
}

/// The last line of the file at `path`, read from its end (the trailer is short, the
/// records before it may be millions).
fn last_line(path: &Path) -> Result<Option<String>, PlanError> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).map_err(PlanError::io(path))?;
    let len = f.metadata().map_err(PlanError::io(path))?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(4096))).map_err(PlanError::io(path))?;
    let mut tail = Vec::with_capacity(4096);
    f.read_to_end(&mut tail).map_err(PlanError::io(path))?;
    let Some(body) = tail.strip_suffix(b"\n") else { return Ok(None) };
    let start = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    Ok(Some(String::from_utf8_lossy(&body[start..]).into_owned()))
}

/// A part file opened for reading: its header and trailer, then its records.
pub struct PartFile {
    pub header: PartHeader,
    lines: std::io::Lines<BufReader<std::fs::File>>,
    path: std::path::PathBuf,
}

impl PartFile {
    /// Opens the part file at `path` and reads its header and (by reading to its end
    /// once) its trailer; [`PartFile::records`] then reads the records.
    pub fn open(path: &Path) -> Result<PartFile, PlanError> {
        let bad = |why: &str| PlanError::Format(path.to_path_buf(), why.to_string());
        let open = || -> Result<_, PlanError> {
            let f = std::fs::File::open(path).map_err(PlanError::io(path))?;
            Ok(BufReader::with_capacity(256 * 1024, f).lines())
        };
        let mut lines = open()?;
        let mut line = || -> Result<String, PlanError> {
            lines.next().ok_or_else(|| bad("cut short"))?.map_err(PlanError::io(path))
        };
        if line()? != PART_MAGIC {
            return Err(bad("no fixity-part line"));
        }
        let mut field = |key: &str| -> Result<String, PlanError> {
            line()?
                .strip_prefix(key)
                .and_then(|r| r.strip_prefix(' '))
                .map(str::to_string)
                .ok_or_else(|| bad(&format!("expected {key}")))
        };
        let text = |s: String| {
            unesc(&s)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .ok_or_else(|| bad("bad text"))
        };
        let plan = field("plan")?;
        let index = field("part")?.parse().map_err(|_| bad("bad part number"))?;
        let list = field("list")?;
        let host = text(field("host")?)?;
        let version = text(field("version")?)?;
        let algorithms = crate::algo::parse_list(&field("algorithms")?).map_err(|e| bad(&e))?;
        let started = field("started")?.parse().map_err(|_| bad("bad time"))?;
        let mut header = PartHeader {
            plan,
            index,
            list,
            host,
            version,
            algorithms,
            started,
            files: 0,
            bytes: 0,
            problems: 0,
            changed: 0,
            finished: 0,
        };
        drop(lines);
        let end = last_line(path)?.ok_or_else(|| bad("cut short"))?;
        let n: Vec<i64> = end
            .strip_prefix("end ")
            .ok_or_else(|| bad("no end line: cut short"))?
            .split(' ')
            .map(|x| x.parse().map_err(|_| bad("bad end line")))
            .collect::<Result<_, _>>()?;
        let [files, bytes, problems, changed, finished] = n[..] else {
            return Err(bad("bad end line"));
        };
        (header.files, header.bytes, header.problems, header.changed, header.finished) =
            (files as u64, bytes as u64, problems as u64, changed as u64, finished);
        let mut lines = open()?;
        for _ in 0..8 {
            lines.next();
        }
        Ok(PartFile { header, lines, path: path.to_path_buf() })
    }

    /// The next record; `None` at the trailer.
    pub fn next_record(&mut self) -> Result<Option<Record>, PlanError> {
        let l = match self.lines.next() {
            None => return Err(PlanError::Format(self.path.clone(), "cut short".into())),
            Some(l) => l.map_err(PlanError::io(&self.path))?,
        };
        if l.starts_with("end ") {
            return Ok(None);
        }
        Record::parse(&l, &self.header.algorithms)
            .map(Some)
            .ok_or_else(|| PlanError::Format(self.path.clone(), format!("bad record {l:?}")))
    }
}
