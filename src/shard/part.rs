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
//! S <why> <path>                          left out by the plan's walk
//! E <message> <path>                      the plan's walk could not go on below path
//! end <files> <bytes> <problems> <changed> <finished ms>
//! ```
//!
//! The file is written atomically when the part ends, so a part killed on the way
//! leaves none (or the one from an earlier run), and re-running a part replaces it.

use super::codec::{esc, hex, unesc, unhex};
use super::{Entry, Plan, PlanError};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::hashing::{self, HashEvent, HashPlan, Inputs};
use crate::output::AtomicFile;
use crate::pipeline::Config;
use crate::sources::Source;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
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
}

impl Record {
    /// Whether one run would fail (exit 1) for this record.
    pub fn is_problem(&self) -> bool {
        match self {
            Record::Hashed { changed, .. } => *changed,
            Record::Unreadable { skipped, .. } => !skipped,
            Record::Skipped { .. } => false,
            Record::WalkError { .. } => true,
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
            _ => return None,
        })
    }
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
}

/// Hashes part `index` of `plan` with `algos` and writes its part file. Names are
/// opened as they are written in the list: the caller runs this in the plan's `cwd`.
pub fn run(
    plan: &Plan,
    index: usize,
    algos: &[&'static Algorithm],
    config: Config,
    host: &str,
    mut on_event: impl FnMut(PartEvent),
) -> Result<PartHeader, PlanError> {
    let path = plan.part_path(index);
    let list = plan.list(index)?;
    let mut head = PartHeader {
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
    let mut out = BufWriter::new(AtomicFile::create(&path).map_err(PlanError::io(&path))?);
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
    let mut failure: Option<PlanError> = None;
    let write = |out: &mut BufWriter<AtomicFile>, text: &str| {
        out.write_all(text.as_bytes()).map_err(PlanError::io(&path))
    };
    write(&mut out, &start)?;
    // The plan's stat of each file, in order, for the sink to compare with.
    let planned: Rc<RefCell<VecDeque<(u64, i128)>>> = Rc::default();
    let list_error: Rc<RefCell<Option<PlanError>>> = Rc::default();
    let files = {
        let planned = planned.clone();
        let list_error = list_error.clone();
        list.map_while(move |e| match e {
            Ok(e) => Some(e),
            Err(err) => {
                *list_error.borrow_mut() = Some(err);
                None
            }
        })
        .map(move |e| match e {
            Entry::File { name, mode, size, mtime_ns } => {
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
    };
    let job = HashPlan { inputs: Inputs::Stream(Box::new(files)), algos: algos.to_vec(), config };
    hashing::run(job, |event| {
        let record = match event {
            HashEvent::Hashed { name, hashed } => {
                let (size, mtime) = planned.borrow_mut().pop_front().unwrap_or((0, 0));
                let changed = hashed.size != size || hashed.mtime_ns.is_some_and(|t| t != mtime);
                head.files += 1;
                head.bytes += hashed.size;
                head.changed += u64::from(changed);
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
        head.problems += u64::from(record.is_problem() && !matches!(record, Record::Hashed { .. }));
        if let Err(e) = write(&mut out, &record.to_line()) {
            failure = Some(e);
            return false;
        }
        on_event(PartEvent::Record(&record));
        true
    });
    if let Some(e) = failure.or_else(|| list_error.borrow_mut().take()) {
        return Err(e);
    }
    head.finished = crate::clock::now_ms().max(head.started);
    write(
        &mut out,
        &format!(
            "end {} {} {} {} {}\n",
            head.files, head.bytes, head.problems, head.changed, head.finished
        ),
    )?;
    let file = out.into_inner().map_err(|e| PlanError::Io(path.clone(), e.into_error()))?;
    file.commit().map_err(PlanError::io(&path))?;
    Ok(head)
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
