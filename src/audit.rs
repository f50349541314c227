//! Audit a tree against known hashes, as `hashdeep -a -k KNOWN` does: every file is looked
//! up by its digests (not its name), and falls in one of hashdeep's categories:
//!
//! - matched: a known record with the same size and every digest, under the same name;
//! - moved: such a record under another name;
//! - partially matched: a known record sharing some digests but not all, or the size
//!   (hashdeep's "Hash collision");
//! - new: no known record shares a digest ("No match").
//!
//! Known records no file matched (fully or partly) are "known files not found". The known
//! set is held in memory (one entry per record, indexed by each digest); the tree is not.

use crate::algo::Algorithm;
use crate::check::agreeing;
use crate::digest::Digest;
use crate::formats::hashdeep::FileRecord;
use crate::hashing::{self, HashEvent, HashPlan, Inputs};
use crate::pipeline::Config;
use crate::read::ReadError;
use crate::sources::Sources;
use std::collections::HashMap;
use std::io;
use std::path::Path;

/// What an audited file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// Same size and digests under the same name.
    Matched,
    /// Same size and digests, known under another name.
    Moved { from: Vec<u8> },
    /// Some digests (or the size) of a known record match, others do not.
    Partial { with: Vec<u8> },
    /// No known record shares a digest.
    New,
}

impl Class {
    /// The category's name in `--json` output.
    pub fn key(&self) -> &'static str {
        match self {
            Class::Matched => "matched",
            Class::Moved { .. } => "moved",
            Class::Partial { .. } => "partial",
            Class::New => "new",
        }
    }
}

/// The counters hashdeep's audit summary prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Files hashed.
    pub examined: u64,
    /// Records in the known files.
    pub expecting: u64,
    pub matched: u64,
    pub partial: u64,
    pub moved: u64,
    pub new: u64,
    /// Known records no file matched.
    pub not_found: u64,
}

impl Summary {
    /// Counts one examined file of class `class`.
    pub(crate) fn count(&mut self, class: &Class) {
        self.examined += 1;
        match class {
            Class::Matched => self.matched += 1,
            Class::Moved { .. } => self.moved += 1,
            Class::Partial { .. } => self.partial += 1,
            Class::New => self.new += 1,
        }
    }

    /// Whether the audit passes: every file matched and every known file was found.
    /// (hashdeep 4.4 passes an audit with partial matches; fixity does not: a partial
    /// match is a digest that differs.)
    pub fn passed(&self) -> bool {
        self.partial == 0 && self.moved == 0 && self.new == 0 && self.not_found == 0
    }

    /// hashdeep's summary lines, right-aligned labels.
    pub fn lines(&self) -> Vec<String> {
        [
            ("Input files examined", self.examined),
            ("Known files expecting", self.expecting),
            ("Files matched", self.matched),
            ("Files partially matched", self.partial),
            ("Files moved", self.moved),
            ("New files found", self.new),
            ("Known files not found", self.not_found),
        ]
        .iter()
        .map(|(label, n)| format!("{label:>23}: {n}"))
        .collect()
    }
}

struct Entry {
    record: FileRecord,
    used: bool,
}

/// The known records, indexed by every digest.
#[derive(Default)]
pub struct Known {
    entries: Vec<Entry>,
    algos: Vec<&'static Algorithm>,
    /// (index in `algos`, first 8 digest bytes) -> entries with that digest.
    index: HashMap<(usize, u64), Vec<u32>>,
}

fn key(d: &Digest) -> u64 {
    let b = d.as_bytes();
    let mut k = [0u8; 8];
    let n = b.len().min(8);
    k[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(k)
}

/// `./a/b` and `a/b` name the same file.
fn normalize(name: &[u8]) -> &[u8] {
    let mut n = name;
    while let Some(rest) = n.strip_prefix(b"./") {
        n = rest;
    }
    n
}

impl Known {
    /// An empty known set.
    pub fn new() -> Known {
        Known::default()
    }

    /// Adds one record.
    pub fn add(&mut self, record: FileRecord) {
        let id = u32::try_from(self.entries.len()).expect("fewer than 4 billion known files");
        for (a, d) in &record.digests {
            let i = match self.algos.iter().position(|x| x == a) {
                Some(i) => i,
                None => {
                    self.algos.push(a);
                    self.algos.len() - 1
                }
            };
            let ids = self.index.entry((i, key(d))).or_default();
            if ids.last() != Some(&id) {
                ids.push(id);
            }
        }
        self.entries.push(Entry { record, used: false });
    }

    /// Every algorithm some known record uses: what each audited file is hashed with.
    pub fn algorithms(&self) -> &[&'static Algorithm] {
        &self.algos
    }

    /// The number of known records.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no known file was loaded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Classifies the file `name` of `size` bytes with `digests` (one per algorithm of
    /// [`Known::algorithms`], in that order), and marks the record it matched as found.
    pub fn classify(&mut self, name: &[u8], size: u64, digests: &[Digest]) -> Class {
        let mut candidates: Vec<u32> = Vec::new();
        for (i, d) in digests.iter().enumerate().take(self.algos.len()) {
            if let Some(ids) = self.index.get(&(i, key(d))) {
                candidates.extend_from_slice(ids);
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        let name = normalize(name);
        // (full match, same name, not yet used) ranks a candidate.
        let mut best: Option<((bool, bool, bool), u32)> = None;
        for id in candidates {
            let e = &self.entries[id as usize];
            let algos = &self.algos;
            let agree = agreeing(e.record.digests.iter().map(|(a, want)| {
                (want, &digests[algos.iter().position(|x| x == a).expect("indexed")])
            }));
            if agree == 0 {
                continue; // the first 8 bytes alone collided
            }
            let full = agree == e.record.digests.len() && e.record.size == size;
            let rank = (full, normalize(&e.record.name) == name, !e.used);
            if best.is_none_or(|(r, _)| rank > r) {
                best = Some((rank, id));
            }
        }
        let Some(((full, same_name, _), id)) = best else { return Class::New };
        let e = &mut self.entries[id as usize];
        e.used = true;
        match (full, same_name) {
            (true, true) => Class::Matched,
            (true, false) => Class::Moved { from: e.record.name.clone() },
            (false, _) => Class::Partial { with: e.record.name.clone() },
        }
    }

    /// The names of known records no file matched, in the known files' order.
    pub fn not_found(&self) -> impl Iterator<Item = &[u8]> {
        self.entries.iter().filter(|e| !e.used).map(|e| e.record.name.as_slice())
    }
}

/// What the audit found, in the order of the walk; then the known files no file matched.
#[derive(Debug)]
pub enum Event<'a> {
    /// A file was hashed and classified.
    Examined { name: &'a [u8], size: u64, class: &'a Class },
    /// A file could not be read, changed while read, or is not a regular file
    /// ([`ReadError::is_skip`] tells what is left out on purpose).
    Unreadable { name: &'a [u8], error: &'a ReadError },
    /// The walk left a path out (not an error).
    Skipped { path: &'a Path, why: &'static str },
    /// The walk could not go on below a path (an error).
    WalkError { path: &'a Path, error: &'a io::Error },
    /// A known record no file matched, fully or in part.
    NotFound { name: &'a [u8] },
}

/// The end of an audit.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    /// hashdeep's counters.
    pub summary: Summary,
    /// Files that could not be read and walk errors (not files skipped on purpose).
    pub errors: u64,
}

impl Outcome {
    /// Whether the audit passes: every file matched, every known file was found, and
    /// nothing failed to be read.
    pub fn passed(&self) -> bool {
        self.summary.passed() && self.errors == 0
    }
}

/// Audits the files `sources` yields against `known` (each hashed once with every
/// algorithm the known records use), handing each finding to `on` in walk order, then
/// the known files not found. `on` returns false to stop (a closed output).
pub fn run(
    known: &mut Known,
    sources: Sources,
    config: Config,
    on: &mut dyn FnMut(Event) -> bool,
) -> Outcome {
    let mut out = Outcome {
        summary: Summary { expecting: known.len() as u64, ..Summary::default() },
        errors: 0,
    };
    let plan =
        HashPlan { inputs: Inputs::Sources(sources), algos: known.algorithms().to_vec(), config };
    let mut go_on = true;
    hashing::run(plan, |event| {
        go_on = match event {
            HashEvent::Hashed { name, hashed } => {
                let class = known.classify(name, hashed.size, &hashed.digests);
                out.summary.count(&class);
                on(Event::Examined { name, size: hashed.size, class: &class })
            }
            HashEvent::Unreadable { name, error } => {
                out.errors += u64::from(!error.is_skip());
                on(Event::Unreadable { name, error })
            }
            HashEvent::Skipped { path, why } => on(Event::Skipped { path, why }),
            HashEvent::WalkError { path, error } => {
                out.errors += 1;
                on(Event::WalkError { path, error })
            }
        };
        go_on
    });
    if go_on {
        for name in known.not_found() {
            out.summary.not_found += 1;
            if !on(Event::NotFound { name }) {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo;
    #[cfg(unix)]
    use crate::pathtext::path_bytes;

    fn rec(name: &str, content: &[u8], algos: &[&str]) -> FileRecord {
        FileRecord {
            size: content.len() as u64,
            digests: algos
                .iter()
                .map(|n| {
                    let a = algo::lookup(n).unwrap();
                    (a, a.digest(content))
                })
                .collect(),
            name: name.as_bytes().to_vec(),
        }
    }

    fn digests(k: &Known, content: &[u8]) -> Vec<Digest> {
        k.algorithms().iter().map(|a| a.digest(content)).collect()
    }

    #[cfg(unix)]
    #[test]
    fn the_audit_job_classifies_the_walk_then_lists_what_was_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("same"), b"same").unwrap();
        std::fs::write(root.join("renamed"), b"moved").unwrap();
        std::fs::write(root.join("fresh"), b"fresh").unwrap();
        std::os::unix::fs::symlink("same", root.join("link")).unwrap();
        let name = |n: &str| root.join(n).to_string_lossy().into_owned();
        let mut k = Known::new();
        k.add(rec(&name("same"), b"same", &["md5", "sha256"]));
        k.add(rec(&name("old"), b"moved", &["md5", "sha256"]));
        k.add(rec(&name("gone"), b"gone", &["md5", "sha256"]));
        let sources = Sources::new(vec![root.into()]);
        let mut seen = Vec::new();
        let outcome = run(&mut k, sources, Config::for_storage(false), &mut |e| {
            let short =
                |n: &[u8]| String::from_utf8_lossy(n).rsplit('/').next().unwrap().to_string();
            seen.push(match e {
                Event::Examined { name, class, .. } => format!("{} {}", short(name), class.key()),
                Event::Skipped { path, .. } => format!("{} skipped", short(path_bytes(path))),
                Event::NotFound { name } => format!("{} not found", short(name)),
                other => format!("{other:?}"),
            });
            true
        });
        assert_eq!(
            seen,
            ["fresh new", "link skipped", "renamed moved", "same matched", "gone not found"]
        );
        let s = outcome.summary;
        assert_eq!((s.examined, s.matched, s.moved, s.new, s.not_found), (3, 1, 1, 1, 1));
        assert_eq!((s.expecting, outcome.errors), (3, 0));
        assert!(!outcome.passed());
    }

    #[test]
    fn every_category() {
        let mut k = Known::new();
        k.add(rec("d/same", b"same", &["md5", "sha256"]));
        k.add(rec("d/old", b"moved", &["md5", "sha256"]));
        k.add(rec("d/gone", b"gone", &["md5", "sha256"]));
        let mut half = rec("d/half", b"half", &["md5", "sha256"]);
        half.digests[1].1 = Digest::new(&[0; 32]);
        k.add(half);
        let mut sized = rec("d/sized", b"sized", &["md5", "sha256"]);
        sized.size += 1;
        k.add(sized);
        assert_eq!(k.len(), 5);

        let algos = k.algorithms().to_vec();
        let d = |c: &[u8]| -> Vec<Digest> { algos.iter().map(|a| a.digest(c)).collect() };
        assert_eq!(k.classify(b"./d/same", 4, &d(b"same")), Class::Matched);
        assert_eq!(k.classify(b"d/new", 5, &d(b"moved")), Class::Moved { from: b"d/old".to_vec() });
        assert_eq!(
            k.classify(b"d/half", 4, &d(b"half")),
            Class::Partial { with: b"d/half".to_vec() }
        );
        assert_eq!(
            k.classify(b"d/sized", 5, &d(b"sized")),
            Class::Partial { with: b"d/sized".to_vec() }
        );
        assert_eq!(k.classify(b"d/other", 5, &d(b"other")), Class::New);
        assert_eq!(k.not_found().collect::<Vec<_>>(), vec![b"d/gone".as_slice()]);
    }

    #[test]
    fn duplicates_match_their_own_names() {
        let mut k = Known::new();
        k.add(rec("a", b"x", &["sha1"]));
        k.add(rec("b", b"x", &["sha1"]));
        let d = digests(&k, b"x");
        assert_eq!(k.classify(b"b", 1, &d), Class::Matched);
        assert_eq!(k.classify(b"a", 1, &d), Class::Matched);
        assert_eq!(k.classify(b"c", 1, &d), Class::Moved { from: b"a".to_vec() });
        assert_eq!(k.not_found().count(), 0);
    }

    #[test]
    fn records_with_other_columns() {
        let mut k = Known::new();
        k.add(rec("a", b"a", &["md5"]));
        k.add(rec("b", b"b", &["sha1", "tiger"]));
        assert_eq!(k.algorithms().len(), 3);
        let d = digests(&k, b"b");
        assert_eq!(k.classify(b"b", 1, &d), Class::Matched);
        let d = digests(&k, b"a");
        assert_eq!(k.classify(b"a", 1, &d), Class::Matched);
    }

    #[test]
    fn summary_lines_and_verdict() {
        let s = Summary { examined: 3, expecting: 3, matched: 3, ..Summary::default() };
        assert!(s.passed());
        assert_eq!(s.lines()[0], "   Input files examined: 3");
        assert_eq!(s.lines()[3], "Files partially matched: 0");
        assert!(!Summary { partial: 1, ..s }.passed());
        assert!(!Summary { not_found: 1, ..s }.passed());
    }
}
