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
use std::collections::HashMap;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo;

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
