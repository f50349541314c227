//! Where a plan's parts stand, and merging them into one run's records.

use super::codec::{esc, hex};
use super::join::Joiner;
use super::part::{PartFile, PartHeader, Record};
use super::sort::LineSorter;
use super::{Plan, PlanError};
use crate::algo::Algorithm;
use std::collections::BTreeMap;

/// The state of one part.
#[derive(Debug)]
pub enum PartState {
    /// Hashed, every file read as planned.
    Done(PartHeader),
    /// Hashed, with files that could not be read or changed since the plan: merged as
    /// one run would report them.
    Failed(PartHeader),
    /// No part file (not run yet, running, or killed).
    Missing,
    /// A part file of another plan (made earlier in this directory, or copied in).
    Stale { plan: String },
    /// A part file of this plan that hashed another list than the plan's part.
    Overlapping { index: usize },
    /// A part file that cannot be read.
    Broken(String),
}

impl PartState {
    /// The word `--status` shows.
    pub fn word(&self) -> &'static str {
        match self {
            PartState::Done(_) => "done",
            PartState::Failed(_) => "failed",
            PartState::Missing => "missing",
            PartState::Stale { .. } => "stale",
            PartState::Overlapping { .. } => "overlapping",
            PartState::Broken(_) => "broken",
        }
    }

    /// Whether the merge can take it.
    pub fn mergeable(&self) -> bool {
        matches!(self, PartState::Done(_) | PartState::Failed(_))
    }
}

/// Every part's state, and the files in the directory that look like parts but are
/// none of the plan's (`part-9` in a plan of 8, `part-03` beside `part-3`).
pub struct Status {
    pub parts: Vec<PartState>,
    pub strays: Vec<(String, String)>,
    /// Parts hashed with other algorithms than part 0's, named.
    pub mixed: Option<String>,
}

impl Status {
    /// Whether every part can be merged and nothing stray is there.
    pub fn complete(&self) -> bool {
        self.strays.is_empty()
            && self.mixed.is_none()
            && self.parts.iter().all(PartState::mergeable)
    }

    /// The algorithms of the first part hashed.
    pub fn algorithms(&self) -> Option<&[&'static Algorithm]> {
        self.parts.iter().find_map(|p| match p {
            PartState::Done(h) | PartState::Failed(h) => Some(&h.algorithms[..]),
            _ => None,
        })
    }
}

fn names(a: &[&Algorithm]) -> String {
    a.iter().map(|a| a.name).collect::<Vec<_>>().join(",")
}

/// Reads the state of every part of `plan`.
pub fn status(plan: &Plan) -> Result<Status, PlanError> {
    let n = plan.parts.len();
    let mut strays = Vec::new();
    let mut found: BTreeMap<usize, String> = BTreeMap::new();
    for e in std::fs::read_dir(&plan.dir).map_err(PlanError::io(&plan.dir))? {
        let name = e.map_err(PlanError::io(&plan.dir))?.file_name().to_string_lossy().into_owned();
        let Some(num) = name.strip_prefix("part-") else { continue };
        match num.parse::<usize>() {
            Ok(i) if i < n && num == i.to_string() => {
                found.insert(i, name);
            }
            Ok(i) if i < n => {
                strays.push((name, format!("a second file for part {i} (part-{i} is its name)")))
            }
            Ok(i) => strays.push((name, format!("part {i} is not in a plan of {n} parts"))),
            Err(_) => {}
        }
    }
    let mut parts = Vec::with_capacity(n);
    for i in 0..n {
        if !found.contains_key(&i) {
            parts.push(PartState::Missing);
            continue;
        }
        parts.push(match PartFile::open(&plan.part_path(i)) {
            Err(e) => PartState::Broken(e.to_string()),
            Ok(p) => {
                let h = p.header;
                if h.plan != plan.id {
                    PartState::Stale { plan: h.plan }
                } else if h.index != i || h.list != plan.parts[i].list {
                    PartState::Overlapping { index: h.index }
                } else if h.problems > 0 || h.changed > 0 {
                    PartState::Failed(h)
                } else {
                    PartState::Done(h)
                }
            }
        });
    }
    let mut st = Status { parts, strays, mixed: None };
    if let Some(first) = st.algorithms() {
        let first = names(first);
        let (i0, _) = st.parts.iter().enumerate().find(|(_, p)| p.mergeable()).expect("one is");
        let other = st.parts.iter().enumerate().find_map(|(i, p)| match p {
            PartState::Done(h) | PartState::Failed(h) if names(&h.algorithms) != first => {
                Some(format!(
                    "part-{i} was hashed with {}, part-{i0} with {first}",
                    names(&h.algorithms)
                ))
            }
            _ => None,
        });
        st.mixed = other;
    }
    Ok(st)
}

/// Why a merge cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// Named parts are not ready or not this plan's.
    #[error("{0}")]
    Refused(String),
}

/// What a merge found.
pub struct Merged {
    pub algorithms: Vec<&'static Algorithm>,
    pub files: u64,
    pub bytes: u64,
    /// Records that one run would fail for (exit 1).
    pub problems: u64,
    /// The root digest (BLAKE3, hex) over the hashed records sorted by name.
    pub root: String,
}

/// What a merge hands its caller, in order.
pub enum Step<'a> {
    /// The parts' algorithms, before any record (the caller may refuse them: a format
    /// that cannot hold them).
    Start(&'a [&'static Algorithm]),
    /// One record, in output order (never a piece: a split file's pieces come joined,
    /// as one record at the file's place).
    Record(&'a Record),
}

/// Refuses unless every part is done (or failed) and of this plan, naming the others;
/// then hands `each` the algorithms and every record, and computes the root digest.
pub fn merge(
    plan: &Plan,
    each: &mut dyn FnMut(Step) -> Result<(), String>,
) -> Result<Merged, MergeError> {
    let st = status(plan)?;
    if !st.complete() {
        let mut why = Vec::new();
        for (i, p) in st.parts.iter().enumerate() {
            let what = match p {
                PartState::Done(_) | PartState::Failed(_) => continue,
                PartState::Missing => "missing".to_string(),
                PartState::Stale { plan: other } => {
                    format!("of another plan ({other}, not {})", plan.id)
                }
                PartState::Overlapping { index } => {
                    format!("hashed other files than the plan's part {i} (it says part {index})")
                }
                PartState::Broken(e) => format!("unreadable: {e}"),
            };
            why.push(format!("part-{i} {what}"));
        }
        for (name, reason) in &st.strays {
            why.push(format!("{name}: {reason}"));
        }
        why.extend(st.mixed.clone());
        return Err(MergeError::Refused(format!(
            "cannot merge {}: {}",
            plan.dir.display(),
            why.join("; ")
        )));
    }
    let algorithms = st.algorithms().expect("complete").to_vec();
    each(Step::Start(&algorithms)).map_err(MergeError::Refused)?;
    let mut sorter = LineSorter::new(&plan.dir, 64 << 20);
    let mut merged = Merged { algorithms, files: 0, bytes: 0, problems: 0, root: String::new() };
    let mut hand_on = |r: Record, merged: &mut Merged| -> Result<(), MergeError> {
        if let Record::Hashed { name, size, digests, .. } = &r {
            merged.files += 1;
            merged.bytes += size;
            let mut line = esc(name).into_bytes();
            for (a, d) in merged.algorithms.iter().zip(digests) {
                line.extend_from_slice(format!(" {}:{}", a.name, hex(d.as_bytes())).as_bytes());
            }
            sorter.push(line)?;
        }
        merged.problems += u64::from(r.is_problem());
        each(Step::Record(&r)).map_err(MergeError::Refused)
    };
    // A file split across parts is handed on once, joined from its pieces.
    let mut joiner = Joiner::default();
    let algos = merged.algorithms.clone();
    for i in 0..plan.parts.len() {
        let mut part = PartFile::open(&plan.part_path(i))?;
        while let Some(r) = part.next_record()? {
            for r in joiner.take(r, &algos) {
                hand_on(r, &mut merged)?;
            }
        }
    }
    if let Some(r) = joiner.finish() {
        hand_on(r, &mut merged)?;
    }
    let mut h = blake3::Hasher::new();
    sorter.finish(&mut |l| {
        h.update(l);
        h.update(b"\n");
    })?;
    merged.root = hex(h.finalize().as_bytes());
    Ok(merged)
}
