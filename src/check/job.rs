//! The check job: manifests in, one [`Event`] per line out, in manifest order. Lines of
//! every manifest are hashed in parallel ([`crate::pipeline`]); the job keeps coreutils'
//! counters per manifest and decides each manifest's [`Verdict`].

use super::{AlgoHints, Outcome, Resolved, classify, reaches_outside, resolve};
use crate::algo::{self, Algorithm};
use crate::digest::Digest;
use crate::formats::coreutils::{self, Tool};
use crate::formats::{LineKind, Manifest, gnu};
use crate::pathtext::bytes_path;
use crate::pipeline::{self, Config, Task, Work};
use crate::read::OpenMode;
use crate::sys::OsStrExt;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read};

/// A validated check: what to read and how to judge it. The CLI and every drop-in's option
/// parser build one; [`run`] carries it out.
#[derive(Clone, Debug, Default)]
pub struct CheckPlan {
    /// The manifests, in order; `-` is standard input.
    pub manifests: Vec<OsString>,
    /// `-a NAME`: the algorithm of every line.
    pub forced: Option<&'static Algorithm>,
    /// `-a md5,sha1`: the algorithms of the digests of lines with several, in order.
    pub columns: Option<&'static [&'static Algorithm]>,
    /// Lines end in NUL, not LF.
    pub zero: bool,
    /// Refuse paths that leave the manifest's directory, by name or through a symlink.
    pub confine: bool,
    /// A missing file is neither checked nor counted as unreadable.
    pub ignore_missing: bool,
    /// An improperly formatted line fails the manifest.
    pub strict: bool,
    /// Read lines exactly as coreutils 9.1 does (the drop-ins), with no notes of fixity's
    /// own.
    pub coreutils: bool,
    /// Drop-in `cksum`: without `-a`, tagged lines only; warnings name the last tag.
    pub cksum_tags: bool,
}

/// Per-manifest counters, as coreutils keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Lines in no known format.
    pub malformed: u64,
    /// Well-formed lines.
    pub properly_formatted: u64,
    /// Files whose digest matched.
    pub ok: u64,
    /// Files whose digest did not match.
    pub mismatched: u64,
    /// Files that could not be opened or read (or changed while read).
    pub unreadable: u64,
    /// Files skipped by `--ignore-missing`.
    pub ignored_missing: u64,
    /// Lines whose algorithm could not be decided.
    pub ambiguous: u64,
    /// Lines refused by `--confine` (their path leaves the manifest's directory).
    pub refused: u64,
}

/// What a manifest's lines add up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every listed file checked out.
    Clean,
    /// A finding: a mismatch, an unreadable file, a refused line, no line at all, an
    /// improperly formatted line under `--strict`, nothing verified under
    /// `--ignore-missing`.
    Failed,
    /// A line's algorithm could not be decided: the check could not be carried out.
    Ambiguous,
}

impl Counts {
    /// Files actually compared (matched or not).
    pub(crate) fn verified(&self) -> u64 {
        self.ok + self.mismatched
    }

    /// The manifest's verdict under the plan's `--strict` and `--ignore-missing`.
    pub(crate) fn verdict(&self, strict: bool, ignore_missing: bool) -> Verdict {
        if self.ambiguous > 0 {
            return Verdict::Ambiguous;
        }
        let bad = self.properly_formatted == 0
            || self.refused > 0
            || self.mismatched > 0
            || self.unreadable > 0
            || (strict && self.malformed > 0)
            || (ignore_missing && self.verified() == 0);
        if bad { Verdict::Failed } else { Verdict::Clean }
    }

    fn count(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Ok => self.ok += 1,
            Outcome::Failed => self.mismatched += 1,
            Outcome::IgnoredMissing => self.ignored_missing += 1,
            Outcome::Escapes => self.refused += 1,
            Outcome::Missing(_) | Outcome::Changed(_) | Outcome::Unreadable(_) => {
                self.unreadable += 1
            }
        }
    }
}

/// coreutils' plural rule for the summary warnings.
pub fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// What the job found, in manifest order. `manifest` indexes [`CheckPlan::manifests`];
/// `lineno` is 1-based.
#[derive(Debug)]
pub enum Event {
    /// A listed file was checked (or could not be).
    Checked {
        manifest: usize,
        lineno: u64,
        name: Vec<u8>,
        /// The line's algorithms and expected digests.
        sums: Vec<(&'static Algorithm, Digest)>,
        /// Bytes read, when the file was read.
        bytes: Option<u64>,
        outcome: Outcome,
    },
    /// An improperly formatted line. `cksum_tag`: in drop-in `cksum`, the tag its warning
    /// names; `why`: what a format that recognized the line found wrong with it.
    Malformed { manifest: usize, lineno: u64, cksum_tag: Option<&'static str>, why: Option<String> },
    /// A line whose digest length fits several algorithms.
    Ambiguous { manifest: usize, lineno: u64, fits: Vec<&'static Algorithm> },
    /// The first line of a manifest that names a file outside its directory (once per
    /// manifest; never in coreutils mode; a renderer under `--status` shows nothing of it).
    Outside { manifest: usize, lineno: u64 },
    /// A line refused by `--confine`: its path leaves the manifest's directory.
    Refused { manifest: usize, lineno: u64, name: Vec<u8> },
    /// The manifest could not be opened or read, with the reason (no totals follow). In
    /// drop-in mode a read failure has no reason: coreutils says only "read error" then.
    ManifestUnreadable { manifest: usize, error: Option<io::Error> },
    /// The end of a manifest: its totals and verdict.
    ManifestDone { manifest: usize, counts: Counts, verdict: Verdict },
}

/// What the producer hands the consumer, in manifest order.
enum Item {
    Line { lineno: u64, name: Vec<u8>, sums: Vec<(&'static Algorithm, Digest)>, size: Option<u64> },
    Malformed { lineno: u64, cksum_tag: Option<&'static str>, why: Option<String> },
    Ambiguous { lineno: u64, fits: Vec<&'static Algorithm> },
    Outside { lineno: u64 },
    Refused { lineno: u64, name: Vec<u8> },
    ManifestError(Option<io::Error>),
    End,
}

/// Runs `plan` with the engine settings `config`, handing each event to `on` in manifest
/// order; `on` returns false to stop (a write error).
pub fn run(plan: &CheckPlan, config: &Config, on: &mut dyn FnMut(Event) -> bool) {
    let mut counts = Counts::default();
    let mut current = 0usize;
    pipeline::run(
        config,
        |push| produce(plan, push),
        |item, outcome| {
            let manifest = current;
            let event = match item {
                Item::Line { lineno, name, sums, size } => {
                    counts.properly_formatted += 1;
                    let expected = sums.iter().map(|(_, d)| d);
                    let ignore = plan.ignore_missing;
                    let read = outcome.expect("lines carry work");
                    let bytes = read.as_ref().ok().map(|h| h.size);
                    let outcome = classify(expected, size, read, ignore);
                    counts.count(&outcome);
                    Event::Checked { manifest, lineno, name, sums, bytes, outcome }
                }
                Item::Malformed { lineno, cksum_tag, why } => {
                    counts.malformed += 1;
                    Event::Malformed { manifest, lineno, cksum_tag, why }
                }
                Item::Ambiguous { lineno, fits } => {
                    counts.ambiguous += 1;
                    Event::Ambiguous { manifest, lineno, fits }
                }
                Item::Outside { lineno } => Event::Outside { manifest, lineno },
                Item::Refused { lineno, name } => {
                    counts.refused += 1;
                    counts.properly_formatted += 1;
                    Event::Refused { manifest, lineno, name }
                }
                Item::ManifestError(error) => {
                    counts = Counts::default();
                    current += 1;
                    Event::ManifestUnreadable { manifest, error }
                }
                Item::End => {
                    let done = std::mem::take(&mut counts);
                    current += 1;
                    let verdict = done.verdict(plan.strict, plan.ignore_missing);
                    Event::ManifestDone { manifest, counts: done, verdict }
                }
            };
            on(event)
        },
    );
}

fn trim_blanks(line: &[u8]) -> &[u8] {
    &line[line.iter().take_while(|&&b| b == b' ' || b == b'\t').count()..]
}

/// Reads the plan's manifests and pushes one task per line that counts.
fn produce(plan: &CheckPlan, push: &mut dyn FnMut(Task<Item>) -> bool) {
    let delim = if plan.zero { 0u8 } else { b'\n' };
    let forced = plan.forced;
    // Drop-in mode reads lines exactly as the real tool does (its state spans manifests).
    let mut emulate = plan.coreutils.then(|| {
        coreutils::Reader::new(if plan.cksum_tags {
            Tool::Cksum(forced)
        } else if forced.is_some_and(|a| a.name == "blake2b") {
            Tool::B2sum
        } else {
            Tool::Fixed(forced.expect("a coreutils drop-in names its algorithm"))
        })
    });
    // Drop-in cksum: the tag its warnings name (the last tagged line's, or -a's).
    let mut cksum_tag: &'static str = forced.map_or("CRC", |a| a.tag);
    // The one- or two-space form the first untagged line chose holds for the later
    // manifests of the run too, as in coreutils.
    let mut form = None;
    for m in &plan.manifests {
        let hints = AlgoHints {
            forced,
            columns: plan.columns,
            // A `.cksum` list is named for the tool, whose `-a ALG` writes tagged lines of
            // any algorithm beside its own `CRC SIZE NAME` lines.
            from_name: if m == "-" {
                None
            } else {
                algo::by_file_name(m.as_bytes()).filter(|a| a.name != "cksum")
            },
        };
        let reader: io::Result<Box<dyn Read + Send>> = if m == "-" {
            Ok(Box::new(io::stdin()))
        } else {
            std::fs::File::open(m).map(|f| Box::new(f) as Box<dyn Read + Send>)
        };
        let reader = match reader {
            Ok(r) => r,
            Err(e) => {
                if !push(Task { payload: Item::ManifestError(Some(e)), work: None }) {
                    return;
                }
                continue;
            }
        };
        let mut reader = BufReader::with_capacity(256 * 1024, reader);
        let mut parser = Manifest::for_name(m.as_bytes()).with_form(form);
        let mut buf = Vec::new();
        let mut lineno = 0u64;
        let mut read_failed: Option<io::Error> = None;
        let mut outside_said = false;
        loop {
            buf.clear();
            match reader.read_until(delim, &mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    read_failed = Some(e);
                    break;
                }
            }
            lineno += 1;
            if let Some(reader) = emulate.as_mut() {
                let task = emulated(reader, &buf, m == "-", lineno);
                if let Some(task) = task
                    && !push(task)
                {
                    return;
                }
                continue;
            }
            if buf.last() == Some(&delim) {
                buf.pop();
            }
            let before = parser.form();
            let parsed = parser.parse_line(&buf);
            if let LineKind::Record(r) = &parsed
                && reaches_outside(&r.name)
            {
                if plan.confine {
                    let name = r.name.clone();
                    if !push(Task { payload: Item::Refused { lineno, name }, work: None }) {
                        return;
                    }
                    continue;
                }
                if !outside_said && !plan.coreutils {
                    outside_said = true;
                    if !push(Task { payload: Item::Outside { lineno }, work: None }) {
                        return;
                    }
                }
            }
            let ck_tag = plan.cksum_tags.then_some(cksum_tag);
            let why = parser.problem().map(str::to_string);
            let malformed = Item::Malformed { lineno, cksum_tag: ck_tag, why };
            let task = match parsed {
                LineKind::Ignored => continue,
                LineKind::Malformed => {
                    // A line refused after it chose the form (a bad escape) keeps the
                    // choice only if its digest has the algorithm's length, as in coreutils.
                    let algo = hints.forced.or(hints.from_name);
                    if parser.form() != before
                        && algo.is_some_and(|a| !gnu::digest_fits(trim_blanks(&buf), a))
                    {
                        parser.set_form(before);
                    }
                    Task { payload: malformed, work: None }
                }
                // cksum 9.1 without -a reads tagged lines only.
                LineKind::Record(r) if plan.cksum_tags && forced.is_none() && r.algo.is_none() => {
                    Task { payload: malformed, work: None }
                }
                LineKind::Record(r) => match resolve(&r, &hints) {
                    Resolved::Malformed => {
                        // coreutils refuses a digest of the wrong length before it looks at
                        // the form: such a line chooses none.
                        parser.set_form(before);
                        Task { payload: malformed, work: None }
                    }
                    Resolved::Ambiguous(fits) => {
                        Task { payload: Item::Ambiguous { lineno, fits }, work: None }
                    }
                    Resolved::Sums(sums) => {
                        if plan.cksum_tags && forced.is_none() {
                            // `BLAKE2b` for BLAKE2b-256 too, as coreutils names it.
                            cksum_tag = sums[0].0.family().tag;
                        }
                        Task {
                            work: Some(Work {
                                path: super::names::on_disk(&r.name),
                                // --confine: no symlink may lead out either.
                                mode: if plan.confine {
                                    OpenMode::Beneath
                                } else {
                                    OpenMode::Named
                                },
                                algos: sums.iter().map(|s| s.0).collect(),
                            }),
                            payload: Item::Line { lineno, name: r.name, sums, size: r.size },
                        }
                    }
                },
            };
            if !push(task) {
                return;
            }
        }
        form = parser.form();
        // Drop-in mode says only "read error", as coreutils does; native mode gives the
        // cause ("Is a directory" for a directory named as the manifest).
        let end = match read_failed {
            Some(e) if !plan.coreutils => Item::ManifestError(Some(e)),
            Some(_) => Item::ManifestError(None),
            None => Item::End,
        };
        if !push(Task { payload: end, work: None }) {
            return;
        }
    }
}

/// The task for one line of a drop-in's manifest, read as the real tool reads it (`None`
/// for a line it skips); `raw` still has its newline.
fn emulated(
    reader: &mut coreutils::Reader,
    raw: &[u8],
    from_stdin: bool,
    lineno: u64,
) -> Option<Task<Item>> {
    Some(match reader.parse(raw, from_stdin) {
        coreutils::Line::Skipped => return None,
        coreutils::Line::Malformed => Task {
            payload: Item::Malformed { lineno, cksum_tag: Some(reader.tag()), why: None },
            work: None,
        },
        coreutils::Line::Check { algo, digest, name } => Task {
            work: Some(Work {
                path: bytes_path(&name),
                // A line naming `-` reads standard input, as coreutils does.
                mode: if name == b"-" { OpenMode::Stdin } else { OpenMode::Named },
                algos: vec![algo].into(),
            }),
            payload: Item::Line { lineno, name, sums: vec![(algo, digest)], size: None },
        },
    })
}
