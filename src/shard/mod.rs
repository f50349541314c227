//! A tree split for many machines: a plan freezes the file list into N parts balanced
//! by bytes; each part is hashed on its own (a Slurm array task, a Kubernetes Indexed
//! Job's pod, any process) into a part file; the merge writes the manifest one machine
//! would have written, byte for byte, and a root digest that does not depend on N.
//!
//! A plan directory holds `plan` (the header: id, parts, totals, where it was made),
//! `list-I` (the entries of part I, in output order) and, once part I has run,
//! `part-I` (its results). The id is a digest of the lists, so a part can tell which
//! plan it belongs to; each part records the digest of the list it hashed, so a merge
//! refuses a part of another plan or of another split.
//!
//! The walk happens once, at plan time; what it leaves out or cannot enter is kept in
//! the lists at its place, so the merge reports it where one run would. Memory stays
//! bounded: the walk is streamed to disk and split in a second pass; parts and the
//! merge stream their lists; the root digest sorts on disk past a memory budget.

pub(crate) mod codec;
mod join;
mod list;
pub mod merge;
pub mod part;
pub mod piece;
pub mod scope;
pub(crate) mod sort;

pub use join::CHANGED;
pub use list::{Entry, ListReader, Piece};

use crate::output::AtomicFile;
use crate::sources::Source;
use codec::{esc, hex, unesc, unhex};
use list::ListWriter;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// The first line of a plan file.
const PLAN_MAGIC: &str = "fixity-plan 1";

/// A plan's header, as read from (or written to) `DIR/plan`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The plan directory.
    pub dir: PathBuf,
    /// Digest of the parts' lists (hex).
    pub id: String,
    /// Files, and their bytes by the stat at plan time.
    pub files: u64,
    pub bytes: u64,
    /// When it was made (ms since the epoch), on which host, by which fixity.
    pub created: i64,
    pub host: String,
    pub version: String,
    /// The directory the names are relative to: parts run there.
    pub cwd: PathBuf,
    /// The tree the plan was made of, when it was made of one directory (absolute, as
    /// given, not resolved): the root of `scan|verify --plan`'s catalog.
    pub root: Option<PathBuf>,
    /// Each part's files, bytes and list digest (hex).
    pub parts: Vec<PartInfo>,
}

/// One part as the plan describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartInfo {
    pub files: u64,
    pub bytes: u64,
    pub list: String,
}

/// What went wrong with a plan directory or one of its files.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The file read or written, and the cause as the C library words it.
    #[error("{}: {}", .0.display(), crate::read::io_message(.1))]
    Io(PathBuf, io::Error),
    #[error("{0}: not a fixity plan file ({1})")]
    Format(PathBuf, String),
    #[error("{0}")]
    Usage(String),
}

impl PlanError {
    pub(crate) fn io(path: &Path) -> impl FnOnce(io::Error) -> PlanError + '_ {
        move |e| PlanError::Io(path.to_path_buf(), e)
    }
}

/// How to make a plan.
pub struct MakeOptions {
    /// Parts (at least 1).
    pub parts: usize,
    /// Most files in one part, as a multiple of the even share (`files / parts`); a part
    /// is cut when it reaches that many files even if its bytes are below its share.
    pub files_factor: u64,
    /// The host recorded (the machine's name unless the caller says otherwise).
    pub host: String,
    /// The one directory the plan is made of, if it is made of one (see [`Plan::root`]).
    pub root: Option<PathBuf>,
    /// The unit a file larger than its part's share is cut at, so that parts end inside
    /// it (a power of two, at least 1 KiB; see [`crate::algo::Combine`]). A file not
    /// larger than it never splits.
    pub piece_size: u64,
}

/// The default [`MakeOptions::piece_size`]: 1 GiB.
pub const PIECE_SIZE: u64 = 1 << 30;

/// Hands each source, in order, to the function it is given (which returns false to
/// stop): a walk of the operands, or of the entries of a list.
pub type Produce<'a> = dyn FnMut(&mut dyn FnMut(Source) -> bool) + 'a;

/// What making a plan found that one `fixity hash` would report too.
pub enum MakeEvent<'a> {
    Skipped { path: &'a Path, why: &'static str },
    WalkError { path: &'a Path, error: &'a io::Error },
}

impl Plan {
    /// The path of a file in the plan directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The path of part `i`'s list.
    pub fn list_path(&self, i: usize) -> PathBuf {
        self.file(&format!("list-{i}"))
    }

    /// The path of part `i`'s results.
    pub fn part_path(&self, i: usize) -> PathBuf {
        self.file(&format!("part-{i}"))
    }

    /// Walks `sources` once (or takes the entries the caller lists, for `--from-list`)
    /// and writes a plan of `opts.parts` parts into `dir` (made if needed). Refuses a
    /// directory that holds results of a plan already.
    pub fn make(
        dir: &Path,
        sources: &mut Produce<'_>,
        opts: &MakeOptions,
        on_event: &mut dyn FnMut(MakeEvent),
    ) -> Result<Plan, PlanError> {
        if opts.parts == 0 {
            return Err(PlanError::Usage("--parts must be at least 1".into()));
        }
        if !crate::algo::valid_unit(opts.piece_size) {
            return Err(PlanError::Usage(format!(
                "--piece-size {} is not a power of two of at least 1024 bytes",
                opts.piece_size
            )));
        }
        std::fs::create_dir_all(dir).map_err(PlanError::io(dir))?;
        for e in std::fs::read_dir(dir).map_err(PlanError::io(dir))? {
            let name = e.map_err(PlanError::io(dir))?.file_name();
            if name.to_string_lossy().starts_with("part-") {
                return Err(PlanError::Usage(format!(
                    "{} holds results of a plan already ({}); remove them or use another \
                     directory",
                    dir.display(),
                    name.to_string_lossy()
                )));
            }
        }
        // Pass 1: every entry, in order, to a scratch list; the totals.
        let scratch = dir.join(".entries");
        let (files, bytes) = {
            let mut w = ListWriter::create(&scratch)?;
            let mut failed = None;
            sources(&mut |source| {
                let entry = match source {
                    Source::File { name, mode, .. } => Entry::file(name, mode),
                    Source::Skipped { path, why } => {
                        on_event(MakeEvent::Skipped { path: &path, why });
                        Entry::Skipped {
                            path: crate::pathtext::path_bytes(&path).to_vec(),
                            why: why.into(),
                        }
                    }
                    Source::Error { path, error } => {
                        on_event(MakeEvent::WalkError { path: &path, error: &error });
                        Entry::WalkError {
                            path: crate::pathtext::path_bytes(&path).to_vec(),
                            message: crate::read::io_message(&error),
                        }
                    }
                };
                match w.push(&entry) {
                    Ok(()) => true,
                    Err(e) => {
                        failed = Some(e);
                        false
                    }
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
            let totals = (w.files, w.bytes);
            w.finish()?;
            totals
        };
        // Pass 2: cut the scratch list into parts.
        let mut infos = Vec::with_capacity(opts.parts);
        {
            let mut reader = ListReader::open(&scratch)?;
            let (mut left_files, mut left_bytes) = (files, bytes);
            let mut next = reader.next_entry()?;
            // At most `cap` files in a part, and at least what the parts after it leave
            // over at `cap` each.
            let cap = (files.div_ceil(opts.parts as u64) * opts.files_factor.max(1)).max(1);
            for i in 0..opts.parts {
                let left_parts = (opts.parts - i) as u64;
                let share = left_bytes.div_ceil(left_parts);
                let at_least = left_files.saturating_sub((left_parts - 1) * cap);
                let path = dir.join(format!("list-{i}"));
                let mut w = ListWriter::create(&path)?;
                while let Some(entry) = next.take() {
                    let last = i + 1 == opts.parts;
                    if let Entry::File { .. } = &entry
                        && !last
                        && w.files >= at_least
                    {
                        let over = w.bytes + entry.bytes() > share;
                        // A file larger than the room left is cut so that the part ends
                        // inside it; the rest starts the next part.
                        if over
                            && w.files < cap
                            && let Some((head, rest)) =
                                cut(&entry, share.saturating_sub(w.bytes), w.files == 0, opts)
                        {
                            w.push(&head)?;
                            left_files += 1;
                            next = Some(rest);
                            break;
                        }
                        if w.files > 0 && (over || w.files >= cap) {
                            next = Some(entry);
                            break;
                        }
                    }
                    w.push(&entry)?;
                    next = reader.next_entry()?;
                }
                left_files -= w.files;
                left_bytes -= w.bytes;
                infos.push(PartInfo { files: w.files, bytes: w.bytes, list: String::new() });
                infos[i].list = w.finish()?;
            }
        }
        std::fs::remove_file(&scratch).map_err(PlanError::io(&scratch))?;
        for stale in opts.parts.. {
            let p = dir.join(format!("list-{stale}"));
            if !p.exists() {
                break;
            }
            std::fs::remove_file(&p).map_err(PlanError::io(&p))?;
        }
        let cwd = std::env::current_dir().map_err(PlanError::io(Path::new(".")))?;
        let plan = Plan {
            dir: dir.to_path_buf(),
            id: plan_id(&infos),
            files,
            bytes,
            created: crate::clock::now_ms(),
            host: opts.host.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            cwd,
            root: opts.root.clone(),
            parts: infos,
        };
        plan.write()?;
        Ok(plan)
    }

    fn write(&self) -> Result<(), PlanError> {
        let path = self.file("plan");
        let mut text = format!(
            "{PLAN_MAGIC}\nid {}\nparts {}\nfiles {}\nbytes {}\ncreated {}\nhost {}\n\
             version {}\ncwd {}\nroot {}\n",
            self.id,
            self.parts.len(),
            self.files,
            self.bytes,
            self.created,
            esc(self.host.as_bytes()),
            esc(self.version.as_bytes()),
            esc(crate::pathtext::path_bytes(&self.cwd)),
            self.root.as_deref().map_or("-".to_string(), |r| esc(crate::pathtext::path_bytes(r))),
        );
        for (i, p) in self.parts.iter().enumerate() {
            text.push_str(&format!("part {i} {} {} {}\n", p.files, p.bytes, p.list));
        }
        let mut f = AtomicFile::create(&path).map_err(PlanError::io(&path))?;
        f.write_all(text.as_bytes()).map_err(PlanError::io(&path))?;
        f.commit().map_err(PlanError::io(&path))
    }

    /// Reads the plan in `dir`.
    pub fn read(dir: &Path) -> Result<Plan, PlanError> {
        let path = dir.join("plan");
        let f = std::fs::File::open(&path).map_err(PlanError::io(&path))?;
        let bad = |why: &str| PlanError::Format(path.clone(), why.to_string());
        let mut lines = BufReader::new(f).lines();
        let mut line = || -> Result<String, PlanError> {
            lines.next().ok_or_else(|| bad("cut short"))?.map_err(PlanError::io(&path))
        };
        if line()? != PLAN_MAGIC {
            return Err(bad("no fixity-plan line"));
        }
        let mut field = |key: &str| -> Result<String, PlanError> {
            let l = line()?;
            l.strip_prefix(key)
                .and_then(|r| r.strip_prefix(' '))
                .map(str::to_string)
                .ok_or_else(|| bad(&format!("expected {key}")))
        };
        let num = |s: String| s.parse::<u64>().map_err(|_| bad("a count is not a number"));
        let text = |s: String| {
            unesc(&s)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .ok_or_else(|| bad("bad text"))
        };
        let id = field("id")?;
        let n = num(field("parts")?)? as usize;
        let files = num(field("files")?)?;
        let bytes = num(field("bytes")?)?;
        let created = field("created")?.parse().map_err(|_| bad("bad time"))?;
        let host = text(field("host")?)?;
        let version = text(field("version")?)?;
        let cwd =
            crate::pathtext::bytes_path(&unesc(&field("cwd")?).ok_or_else(|| bad("bad cwd"))?);
        let root = match field("root")?.as_str() {
            "-" => None,
            r => Some(crate::pathtext::bytes_path(&unesc(r).ok_or_else(|| bad("bad root"))?)),
        };
        let mut parts = Vec::with_capacity(n.min(1 << 16));
        for i in 0..n {
            let l = field("part")?;
            let f: Vec<&str> = l.split(' ').collect();
            match f[..] {
                [idx, files, bytes, list] if idx == i.to_string() && unhex(list).is_some() => parts
                    .push(PartInfo {
                        files: num(files.into())?,
                        bytes: num(bytes.into())?,
                        list: list.to_string(),
                    }),
                _ => return Err(bad(&format!("bad line for part {i}"))),
            }
        }
        let plan = Plan {
            dir: dir.to_path_buf(),
            id,
            files,
            bytes,
            created,
            host,
            version,
            cwd,
            root,
            parts,
        };
        if plan.id != plan_id(&plan.parts) {
            return Err(bad("its id is not the digest of its parts"));
        }
        Ok(plan)
    }

    /// Opens part `i`'s list, checking it is the one the plan describes.
    pub fn list(&self, i: usize) -> Result<ListReader, PlanError> {
        let path = self.list_path(i);
        let want = &self.parts[i].list;
        let got = list::digest_file(&path)?;
        if &got != want {
            return Err(PlanError::Format(
                path,
                format!("its digest {got} is not the plan's {want}: the list was changed"),
            ));
        }
        ListReader::open(&path)
    }
}

/// Cuts a file (or the rest of one) larger than its unit at the multiple of the unit
/// nearest `room` bytes in: the piece that fills the part, and the rest. `None` when it
/// cannot be cut, or when the cut would fall at its end or (unless `must`: the part holds
/// nothing yet, so it takes one unit at least) at its start.
fn cut(entry: &Entry, room: u64, must: bool, opts: &MakeOptions) -> Option<(Entry, Entry)> {
    let Entry::File { name, mode, size, mtime_ns, piece } = entry else { return None };
    let (start, end, unit) =
        piece.map_or((0, *size, opts.piece_size), |p| (p.start, p.end, p.unit));
    if *size <= unit {
        return None;
    }
    let mut at = start.saturating_add(room).saturating_add(unit / 2) / unit * unit;
    if at <= start {
        if !must {
            return None;
        }
        at = start + unit;
    }
    if at >= end {
        return None;
    }
    let with = |start, end| Entry::File {
        name: name.clone(),
        mode: *mode,
        size: *size,
        mtime_ns: *mtime_ns,
        piece: Some(Piece { start, end, unit }),
    };
    Some((with(start, at), with(at, end)))
}

/// The plan's id: a digest over its parts' list digests, in order.
fn plan_id(parts: &[PartInfo]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(PLAN_MAGIC.as_bytes());
    h.update(&(parts.len() as u64).to_le_bytes());
    for p in parts {
        h.update(p.list.as_bytes());
    }
    hex(&h.finalize().as_bytes()[..16])
}

/// This machine's name, for plans and parts (`FIXITY_HOST` overrides it): the name the
/// catalog records hosts by.
pub fn host_name() -> String {
    crate::catalog::postgres::this_host()
}
