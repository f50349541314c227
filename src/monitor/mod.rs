//! A tree's health as monitoring sees it: standing findings, how old the last complete
//! verification pass is, and what the last runs did, read from a catalog's [`Summary`].
//! Two renderings live beside it: Prometheus textfile metrics (`prometheus.rs`, for
//! node_exporter's textfile collector) and a Nagios/Icinga plugin's verdict
//! (`nagios.rs`). Nothing here prints; the binary writes what these return.

pub mod nagios;
pub mod prometheus;

use crate::catalog::{Class, Summary};

/// The commands whose runs the catalog remembers, in the order metrics list them.
pub const COMMANDS: [&str; 2] = ["scan", "verify"];

/// Standing findings: present files whose last result is corrupt or unreadable, and
/// files recorded as missing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Findings {
    pub corrupt: u64,
    pub unreadable: u64,
    pub missing: u64,
}

impl Findings {
    /// The findings a summary counts.
    pub fn of(s: &Summary) -> Findings {
        let last =
            |c: Class| s.by_result.iter().find(|(k, _)| k == c.name()).map_or(0, |(_, n)| *n);
        Findings {
            corrupt: last(Class::Corrupt),
            unreadable: last(Class::Unreadable),
            missing: s.missing,
        }
    }

    /// All of them.
    pub fn total(&self) -> u64 {
        self.corrupt + self.unreadable + self.missing
    }
}

/// How fresh the tree's verification is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// The last complete verification pass ended then (ms).
    Pass(i64),
    /// No pass has completed yet; fixity has kept the tree since then (ms): the earliest
    /// of the oldest verification (the first scan, for a tree only scanned), the start of
    /// the pass under way, and the oldest run remembered (an import, whose files were
    /// never verified by fixity).
    NoPassSince(i64),
    /// The catalog records no file.
    Empty,
}

impl Freshness {
    /// The freshness a summary shows.
    pub fn of(s: &Summary) -> Freshness {
        if let Some(t) = s.pass.last_completed {
            return Freshness::Pass(t);
        }
        // A file never verified (imported) has the time 0: not a time to count from.
        let verified = s.oldest_verified.iter().map(|(_, t)| *t).filter(|t| *t > 0);
        let pass = s.pass.under_way.map(|p| p.since);
        let runs = s.runs.iter().map(|r| r.started);
        match verified.chain(pass).chain(runs).min() {
            Some(t) if s.files + s.missing > 0 => Freshness::NoPassSince(t),
            _ => Freshness::Empty,
        }
    }

    /// How long ago (ms) the time it stands on was; `None` for an empty catalog.
    pub fn age_ms(&self, now_ms: i64) -> Option<i64> {
        match *self {
            Freshness::Pass(t) | Freshness::NoPassSince(t) => Some((now_ms - t).max(0)),
            Freshness::Empty => None,
        }
    }

    /// In words: `last complete pass 2026-11-20 01:15:00 UTC (5.2 days ago)`.
    pub fn describe(&self, now_ms: i64) -> String {
        let ago =
            |t: i64| format!("{} UTC ({} ago)", crate::clock::format_time(t), age_text(now_ms - t));
        match *self {
            Freshness::Pass(t) => format!("last complete pass {}", ago(t)),
            Freshness::NoPassSince(t) => {
                format!("no complete verification pass yet, in the tree's catalog since {}", ago(t))
            }
            Freshness::Empty => "the catalog records no files".into(),
        }
    }
}

/// An age for people: `42 s`, `17 min`, `5.2 h`, `3.1 days`.
pub fn age_text(ms: i64) -> String {
    let s = ms.max(0) as f64 / 1000.0;
    if s < 60.0 {
        format!("{s:.0} s")
    } else if s < 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 86_400.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} days", s / 86_400.0)
    }
}

/// One run as the catalog remembers it, with the counts of its summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFacts {
    /// When it started (ms).
    pub started: i64,
    /// When it ended, if it ended normally (ms); an interrupted run has no end.
    pub finished: Option<i64>,
    /// Whether it covered everything it set out to (false for a slice stopped early; an
    /// interrupted run is told by `finished`).
    pub complete: bool,
    /// Files per class, in [`Class::ALL`] order.
    pub counts: [u64; Class::ALL.len()],
    pub files_read: u64,
    pub bytes_read: u64,
    pub seconds: f64,
}

impl RunFacts {
    /// The run's facts from what the store keeps of it (its summary as `scan --json`
    /// printed it; a summary of another shape, an import's, counts nothing).
    pub fn of(r: &crate::catalog::RunInfo) -> RunFacts {
        let report: serde_json::Value =
            r.summary.as_deref().and_then(|t| serde_json::from_str(t).ok()).unwrap_or_default();
        let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        let mut counts = [0; Class::ALL.len()];
        for c in Class::ALL {
            counts[c as usize] = n(&report["counts"][c.name()]);
        }
        RunFacts {
            started: r.started,
            finished: r.finished,
            complete: r.complete != Some(false),
            counts,
            files_read: n(&report["files_read"]),
            bytes_read: n(&report["bytes_read"]),
            seconds: report["seconds"].as_f64().unwrap_or(0.0),
        }
    }

    /// `complete`, `stopped early` (a slice) or `interrupted`.
    pub fn state(&self) -> &'static str {
        match (self.finished, self.complete) {
            (None, _) => "interrupted",
            (Some(_), false) => "stopped early",
            (Some(_), true) => "complete",
        }
    }

    /// Files it found corrupt, unreadable or missing.
    pub fn findings(&self) -> u64 {
        Class::ALL.iter().filter(|c| c.is_failure()).map(|c| self.counts[*c as usize]).sum()
    }

    /// Whether the run ended and found nothing that means data may be lost: a run that
    /// would have exited 0.
    pub fn succeeded(&self) -> bool {
        self.finished.is_some() && self.findings() == 0
    }
}

/// The latest run of `command` among those a summary holds (newest first), if any.
pub fn last_run(s: &Summary, command: &str) -> Option<RunFacts> {
    s.runs.iter().find(|r| r.command == command).map(RunFacts::of)
}

/// The end (ms) of the latest run of `command` that succeeded, among those a summary holds.
pub fn last_success(s: &Summary, command: &str) -> Option<i64> {
    s.runs
        .iter()
        .filter(|r| r.command == command)
        .map(RunFacts::of)
        .find(RunFacts::succeeded)?
        .finished
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog::{PassState, RunInfo};

    /// A summary of `files` files with the given last results and runs.
    pub(crate) fn summary(by_result: &[(&str, u64)], missing: u64, runs: Vec<RunInfo>) -> Summary {
        Summary {
            files: by_result.iter().map(|(_, n)| n).sum(),
            bytes: 1 << 30,
            missing,
            by_result: by_result.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            oldest_verified: Some((b"a".to_vec(), 1_000_000)),
            verified_within: [(1, 1), (7, 2), (30, 3)],
            problems: Vec::new(),
            runs,
            pass: PassState::default(),
            imported: 0,
        }
    }

    /// A finished run of `command` that found `corrupt` corrupt files.
    pub(crate) fn run(command: &str, started: i64, corrupt: u64) -> RunInfo {
        RunInfo {
            command: command.into(),
            started,
            finished: Some(started + 2500),
            complete: Some(true),
            summary: Some(format!(
                r#"{{"command":"{command}","counts":{{"ok":5,"modified":0,"corrupt":{corrupt},"missing":0,"new":1,"moved":0,"unreadable":0}},"files_read":6,"bytes_read":600,"seconds":2.5,"complete":true}}"#
            )),
        }
    }

    #[test]
    fn findings_count_the_standing_classes() {
        let s =
            summary(&[("ok", 7), ("corrupt", 2), ("unreadable", 1), ("modified", 3)], 4, vec![]);
        let f = Findings::of(&s);
        assert_eq!(f, Findings { corrupt: 2, unreadable: 1, missing: 4 });
        assert_eq!(f.total(), 7);
    }

    #[test]
    fn freshness_prefers_the_last_complete_pass() {
        let mut s = summary(&[("ok", 1)], 0, vec![]);
        assert_eq!(Freshness::of(&s), Freshness::NoPassSince(1_000_000));
        s.pass.last_completed = Some(5_000_000);
        assert_eq!(Freshness::of(&s), Freshness::Pass(5_000_000));
        assert_eq!(Freshness::of(&s).age_ms(5_000_000 + 86_400_000), Some(86_400_000));
        s.pass.last_completed = None;
        // Imported files never verified (time 0): the import's run starts the clock.
        s.oldest_verified = Some((b"a".to_vec(), 0));
        s.runs = vec![run("import", 3_000_000, 0), run("scan", 2_000_000, 0)];
        assert_eq!(Freshness::of(&s), Freshness::NoPassSince(2_000_000));
        s.pass.under_way =
            Some(crate::catalog::PassUnderWay { since: 1_500_000, files_left: 1, bytes_left: 1 });
        assert_eq!(Freshness::of(&s), Freshness::NoPassSince(1_500_000));
        s.runs.clear();
        s.pass.under_way = None;
        s.oldest_verified = None;
        assert_eq!(Freshness::of(&s), Freshness::Empty);
        assert_eq!(Freshness::Empty.age_ms(1), None);
    }

    #[test]
    fn ages_read_as_people_say_them() {
        assert_eq!(age_text(42_000), "42 s");
        assert_eq!(age_text(17 * 60_000), "17 min");
        assert_eq!(age_text(5 * 3_600_000 + 720_000), "5.2 h");
        assert_eq!(age_text(3 * 86_400_000 + 8_640_000), "3.1 days");
    }

    #[test]
    fn the_last_success_skips_runs_with_findings_and_interrupted_ones() {
        let mut interrupted = run("verify", 9000, 0);
        interrupted.finished = None;
        // Newest first, as the stores list them.
        let runs =
            vec![interrupted, run("verify", 7000, 1), run("scan", 6000, 0), run("verify", 5000, 0)];
        let s = summary(&[("ok", 1)], 0, runs);
        assert_eq!(last_success(&s, "verify"), Some(7500));
        assert_eq!(last_success(&s, "scan"), Some(8500));
        let last = last_run(&s, "verify").unwrap();
        assert_eq!((last.started, last.finished, last.succeeded()), (9000, None, false));
        let scan = last_run(&s, "scan").unwrap();
        assert_eq!((scan.files_read, scan.bytes_read, scan.seconds), (6, 600, 2.5));
        assert_eq!(scan.counts[Class::New as usize], 1);
    }
}
