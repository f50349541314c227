//! What a catalog says about a tree, for the people who answer for it (archivists,
//! managers) and for preservation systems: `fixity report` and `export --format premis`.
//!
//! [`gather`] builds the typed [`Report`] from a [`Store`] (its summary, its standing
//! findings with their history, its runs); the writers turn it into text and write it to
//! a `Write`, printing nothing: [`write_json`] (the field names are stable, documented in
//! docs/catalog.md "Reports"), [`html::write_html`] (one self-contained page: inline CSS
//! and SVG, nothing loaded from anywhere) and [`premis::write_premis`] (PREMIS 3 XML,
//! read straight from the store page by page).

pub mod html;
pub mod premis;

use crate::catalog::{Class, History, RunInfo, Store, StoreError};
use crate::pathtext::text_or_percent;
use serde::Serialize;

/// What to gather.
#[derive(Clone, Debug)]
pub struct Options {
    /// Findings listed at most (the counts are always whole).
    pub max_findings: usize,
    /// The last runs shown, at most.
    pub max_runs: usize,
    /// Only the files below this directory (its path below the tree's root; empty: the
    /// whole tree): a subtree's counts and findings (the runs and the pass: the tree's).
    pub within: Vec<u8>,
}

impl Default for Options {
    fn default() -> Options {
        Options { max_findings: 10_000, max_runs: 200, within: Vec::new() }
    }
}

/// Where the catalog is, as the report names it.
#[derive(Clone, Debug)]
pub struct Place {
    /// The catalog: its file, or its URL with the password masked.
    pub catalog: String,
    /// The host of the tree (a PostgreSQL catalog).
    pub host: Option<String>,
    /// The tree as named on the command line (or the PostgreSQL catalog's root).
    pub tree: Vec<u8>,
}

/// A tree's state, findings, runs and coverage, as the catalog knows them.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The catalog: a file, or a URL (password masked).
    pub catalog: String,
    /// The tree's host (PostgreSQL catalogs), else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The tree (see [`PathText`]).
    pub tree: PathText,
    /// The algorithm of every digest.
    pub algorithm: &'static str,
    /// When the report was made (ms since the epoch).
    pub generated: i64,
    /// Files present, their total size, and files recorded missing.
    pub files: u64,
    pub bytes: u64,
    pub missing: u64,
    /// Standing findings per class.
    pub standing: Standing,
    /// When the last complete verification pass ended (ms), and how long ago (days).
    pub last_complete_pass: Option<i64>,
    pub last_complete_pass_age_days: Option<f64>,
    /// The verification pass and how much of the tree recent runs verified.
    pub coverage: Coverage,
    /// The standing findings with their history, by path (at most
    /// [`Options::max_findings`]; `findings_not_listed` more).
    pub findings: Vec<Finding>,
    pub findings_not_listed: u64,
    /// The last runs, oldest first.
    pub runs: Vec<Run>,
}

/// A path as text: itself, or percent-encoded when it is not UTF-8 or holds control
/// characters (`encoding` says which: `"utf-8"` or `"percent"`; see
/// [`crate::pathtext::text_or_percent`]).
#[derive(Clone, Debug, Serialize)]
pub struct PathText {
    pub text: String,
    pub encoding: &'static str,
}

impl PathText {
    /// The text of the raw name `name`.
    pub fn of(name: &[u8]) -> PathText {
        let (text, encoded) = text_or_percent(name);
        PathText { text, encoding: if encoded { "percent" } else { "utf-8" } }
    }
}

/// Standing findings per class: files that stay reported until resolved (what the
/// health checks count too).
pub use crate::monitor::Findings as Standing;
use crate::monitor::RunFacts;

/// How much of the tree has been verified.
#[derive(Clone, Debug, Serialize)]
pub struct Coverage {
    /// The verification pass: `"in progress"`, `"completed"` (none under way) or `"none"`.
    pub pass: &'static str,
    /// When the pass under way began (ms).
    pub pass_started: Option<i64>,
    /// Present files looked at in the pass under way (all of them once it completed),
    /// those left, and the share looked at (0 to 1).
    pub pass_files_done: u64,
    pub pass_files_left: u64,
    pub pass_bytes_left: u64,
    pub pass_share: f64,
    /// Present files whose content matched within the last 1, 7 and 30 days.
    pub verified_within: Vec<Within>,
}

/// Files verified within some days.
#[derive(Clone, Debug, Serialize)]
pub struct Within {
    pub days: u32,
    pub files: u64,
    /// Of the present files (0 to 1).
    pub share: f64,
}

/// A standing finding and its history.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub path: PathText,
    /// `corrupt`, `unreadable` or `missing`.
    pub class: &'static str,
    /// When it was first found (ms): a missing file's loss, or the first run that found
    /// it corrupt or unreadable; `null` for a finding older than the catalog's record of
    /// it (a catalog of schema 1).
    pub first_found: Option<i64>,
    /// When a run last looked at it and found it so (ms).
    pub last_seen: i64,
    /// When its content last matched the record, or was hashed (ms; `null` if never).
    pub last_good: Option<i64>,
    /// When it was first recorded (ms).
    pub first_recorded: i64,
    /// The recorded size.
    pub size: u64,
    /// The recorded digest (the good content's, in hex) and, for a corrupt file, the
    /// digest its content had when last read (`null` when not known).
    pub recorded_digest: String,
    pub current_digest: Option<String>,
    /// The read error of an unreadable file.
    pub note: Option<String>,
}

/// One run: what it read and what it found, from the summary the run recorded.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// `scan` or `verify`.
    pub command: String,
    pub started: i64,
    pub finished: Option<i64>,
    /// `"complete"`, `"stopped early"` (a slice that spent its budget) or `"interrupted"`.
    pub state: &'static str,
    pub files_read: u64,
    /// Bytes read and hashed.
    pub bytes_read: u64,
    /// How long its reading took (the engine's `seconds`; 0 when its summary has none).
    pub seconds: f64,
    /// Corrupt, missing and unreadable files the run reported.
    pub findings: u64,
    /// Files per class (every class the run counted).
    pub counts: serde_json::Map<String, serde_json::Value>,
    /// Who started it, when the catalog names someone (an action of `fixity serve`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

impl Run {
    /// A run as the report shows it.
    pub fn of(r: &RunInfo) -> Run {
        let f = RunFacts::of(r);
        Run {
            command: r.command.clone(),
            started: r.started,
            finished: r.finished,
            state: f.state(),
            files_read: f.files_read,
            bytes_read: f.bytes_read,
            seconds: f.seconds,
            findings: f.findings(),
            counts: Class::ALL
                .into_iter()
                .map(|c| (c.name().to_string(), f.counts[c as usize].into()))
                .collect(),
            by: r
                .summary
                .as_deref()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
                .and_then(|v| v["by"].as_str().map(str::to_string)),
        }
    }
}

impl Run {
    /// Its speed (bytes read a second), when it says how long it took.
    pub fn speed(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.bytes_read as f64 / self.seconds)
    }
}

impl Finding {
    /// A standing finding as the report shows it.
    pub fn of(h: &History, class: Class) -> Finding {
        Finding {
            path: PathText::of(&h.path),
            class: class.name(),
            first_found: if class == Class::Missing { h.missing_since } else { h.finding_since },
            last_seen: h.last_checked,
            last_good: (h.last_verified > 0).then_some(h.last_verified),
            first_recorded: h.first_seen,
            size: h.size,
            recorded_digest: h.digest.to_hex(),
            current_digest: h.found_digest.filter(|_| class == Class::Corrupt).map(|d| d.to_hex()),
            // A corrupt file's note is its two digests, given above.
            note: h.note.clone().filter(|_| class == Class::Unreadable),
        }
    }
}

/// Builds the report of the tree `place` names from its store, at `now` (ms).
pub fn gather(
    store: &dyn Store,
    place: &Place,
    now: i64,
    opts: Options,
) -> Result<Report, StoreError> {
    let s = crate::catalog::under::summary_under(store, &opts.within, now, store.summary(now)?)?;
    let standing = Standing::of(&s);
    let share = |n: u64| if s.files == 0 { 1.0 } else { n as f64 / s.files as f64 };
    let (pass, pass_started, left, bytes_left) = match (s.pass.under_way, s.pass.last_completed) {
        (Some(p), _) => ("in progress", Some(p.since), p.files_left, p.bytes_left),
        (None, Some(_)) => ("completed", None, 0, 0),
        (None, None) => ("none", None, s.files, s.bytes),
    };
    let done = s.files.saturating_sub(left);
    let coverage = Coverage {
        pass,
        pass_started,
        pass_files_done: done,
        pass_files_left: left,
        pass_bytes_left: bytes_left,
        pass_share: if pass == "none" { 0.0 } else { share(done) },
        verified_within: s
            .verified_within
            .iter()
            .map(|&(days, files)| Within { days, files, share: share(files) })
            .collect(),
    };
    let mut findings = Vec::new();
    let (mut after, _) = crate::catalog::below(&opts.within);
    let from = after.clone().unwrap_or_default();
    'pages: loop {
        let page = store.history_page(after.as_deref(), 1024, true)?;
        let Some(last) = page.last() else { break };
        after = Some(last.path.clone());
        for h in &page {
            if findings.len() >= opts.max_findings || !h.path.starts_with(&from) {
                break 'pages;
            }
            if let Some(class) = h.finding() {
                findings.push(Finding::of(h, class));
            }
        }
    }
    let runs = store.run_history(opts.max_runs)?.iter().map(Run::of).collect();
    let last = s.pass.last_completed;
    Ok(Report {
        catalog: place.catalog.clone(),
        host: place.host.clone(),
        tree: PathText::of(&place.tree),
        algorithm: store.algorithm().name,
        generated: now,
        files: s.files,
        bytes: s.bytes,
        missing: s.missing,
        standing,
        last_complete_pass: last,
        last_complete_pass_age_days: last.map(|t| (now - t).max(0) as f64 / 86_400_000.0),
        coverage,
        findings_not_listed: standing.total().saturating_sub(findings.len() as u64),
        findings,
        runs,
    })
}

/// Writes the report as one JSON document (pretty, with a final newline).
pub fn write_json(report: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")
}
