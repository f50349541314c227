//! Prometheus metrics in the text exposition format, for node_exporter's textfile
//! collector (`--collector.textfile.directory`): `scan|verify|status --metrics FILE.prom`.
//!
//! Every series carries a `tree` label (the tree's path; bytes that are not UTF-8 become
//! U+FFFD, as Prometheus labels are UTF-8), so several trees can share a collector
//! directory, one file each. Times are seconds since the epoch; a time that has not
//! happened yet (no complete pass, no successful run) is 0. The catalog remembers only
//! the last few runs, so the time of the last successful run is carried over from the
//! file being replaced when no run it remembers succeeded.

use super::{COMMANDS, Findings, RunFacts, last_run, last_success};
use crate::catalog::{Class, Summary};
use std::io::{self, Write};

/// Everything the metrics are made of.
pub struct Input<'a> {
    /// The tree's root, as given.
    pub tree: &'a [u8],
    /// The catalog's algorithm.
    pub algorithm: &'a str,
    pub summary: &'a Summary,
    /// When the metrics are written (ms).
    pub now_ms: i64,
    /// The text of the file being replaced, if there is one.
    pub previous: Option<&'a str>,
}

/// Several trees' metrics (each as [`write`] made it) as one exposition, each family's
/// `# HELP` and `# TYPE` once, its samples from every tree after them (Prometheus
/// refuses a family named twice): what `fixity serve`'s `/metrics` answers.
pub fn merge(texts: &[Vec<u8>]) -> Vec<u8> {
    let mut families: Vec<(String, Vec<u8>, Vec<u8>)> = Vec::new();
    for text in texts {
        let mut current: Option<usize> = None;
        for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let text = String::from_utf8_lossy(line);
            let head = text.strip_prefix("# HELP ").or_else(|| text.strip_prefix("# TYPE "));
            let name = match head {
                Some(h) => h.split(' ').next().unwrap_or_default().to_string(),
                None => text.split(['{', ' ']).next().unwrap_or_default().to_string(),
            };
            let i = match current.filter(|&i| families[i].0 == name) {
                Some(i) => i,
                None => match families.iter().position(|f| f.0 == name) {
                    Some(i) => i,
                    None => {
                        families.push((name, Vec::new(), Vec::new()));
                        families.len() - 1
                    }
                },
            };
            current = Some(i);
            let (_, heads, samples) = &mut families[i];
            if head.is_some() {
                if !heads.windows(line.len()).any(|w| w == line) {
                    heads.extend_from_slice(line);
                    heads.push(b'\n');
                }
            } else {
                samples.extend_from_slice(line);
                samples.push(b'\n');
            }
        }
    }
    families.into_iter().flat_map(|(_, h, s)| h.into_iter().chain(s)).collect()
}

/// The metric that holds the last successful run's end.
const LAST_SUCCESS: &str = "fixity_last_success_timestamp_seconds";

/// Writes the metrics of one tree.
pub fn write(out: &mut dyn Write, input: &Input<'_>) -> io::Result<()> {
    let s = input.summary;
    let tree = format!("tree=\"{}\"", label(&String::from_utf8_lossy(input.tree)));
    let mut m = Metrics { out, tree: &tree };
    let f = Findings::of(s);

    m.head("fixity_catalog_files", "Files present in the tree's catalog.")?;
    m.line(
        "fixity_catalog_files",
        &format!("algorithm=\"{}\"", label(input.algorithm)),
        s.files as f64,
    )?;
    m.one(
        "fixity_catalog_bytes",
        "Total size of the files present in the catalog.",
        s.bytes as f64,
    )?;
    m.one(
        "fixity_imported_unverified_files",
        "Present files whose digest fixity import brought in and no verify has confirmed yet.",
        s.imported as f64,
    )?;
    m.head(
        "fixity_findings",
        "Standing findings: files last found corrupt or unreadable, and missing files.",
    )?;
    for (class, n) in [("corrupt", f.corrupt), ("unreadable", f.unreadable), ("missing", f.missing)]
    {
        m.line("fixity_findings", &format!("class=\"{class}\""), n as f64)?;
    }
    m.head(
        "fixity_verified_files",
        "Present files whose content was last verified within the period.",
    )?;
    for (days, n) in s.verified_within {
        m.line("fixity_verified_files", &format!("within=\"{days}d\""), n as f64)?;
    }
    let oldest = s.oldest_verified.as_ref().map_or(0.0, |(_, t)| secs(*t));
    m.one(
        "fixity_oldest_verification_timestamp_seconds",
        "When the least recently verified present file was last verified (0: no file).",
        oldest,
    )?;

    let pass = &s.pass;
    m.one(
        "fixity_pass_last_complete_timestamp_seconds",
        "When the last complete verification pass ended (0: none has).",
        pass.last_completed.map_or(0.0, secs),
    )?;
    let (under_way, left_files, left_bytes, started) = match pass.under_way {
        Some(p) => (1.0, p.files_left, p.bytes_left, secs(p.since)),
        None => (0.0, 0, 0, 0.0),
    };
    m.one(
        "fixity_pass_in_progress",
        "1 while slices work through a verification pass.",
        under_way,
    )?;
    m.one(
        "fixity_pass_started_timestamp_seconds",
        "When the pass under way began (0: none).",
        started,
    )?;
    m.one(
        "fixity_pass_files_left",
        "Files the pass under way has still to read.",
        left_files as f64,
    )?;
    m.one(
        "fixity_pass_bytes_left",
        "Bytes the pass under way has still to read.",
        left_bytes as f64,
    )?;
    let progress = if s.files == 0 || pass.under_way.is_none() {
        1.0
    } else {
        1.0 - left_files.min(s.files) as f64 / s.files as f64
    };
    m.one(
        "fixity_pass_progress_ratio",
        "Share of present files the pass under way has read (1 with no pass under way).",
        progress,
    )?;

    let runs: Vec<(&str, Option<RunFacts>)> =
        COMMANDS.iter().map(|c| (*c, last_run(s, c))).collect();
    type Field = fn(&RunFacts) -> f64;
    let per_run: [(&str, &str, Field); 6] = [
        ("fixity_last_run_start_timestamp_seconds", "When the last run started.", |r| {
            secs(r.started)
        }),
        (
            "fixity_last_run_end_timestamp_seconds",
            "When the last run ended (0: interrupted).",
            |r| r.finished.map_or(0.0, secs),
        ),
        (
            "fixity_last_run_complete",
            "1 if the last run covered all it set out to (0: a slice stopped early, or interrupted).",
            |r| f64::from(u8::from(r.complete && r.finished.is_some())),
        ),
        ("fixity_last_run_duration_seconds", "How long the last run took.", |r| r.seconds),
        ("fixity_last_run_files_read", "Files the last run read.", |r| r.files_read as f64),
        ("fixity_last_run_bytes_read", "Bytes the last run read.", |r| r.bytes_read as f64),
    ];
    // A family is written only with samples: a tree with no run has none of these.
    let any_run = runs.iter().any(|(_, r)| r.is_some());
    for (name, help, field) in per_run.into_iter().filter(|_| any_run) {
        m.head(name, help)?;
        for (command, run) in &runs {
            if let Some(r) = run {
                m.line(name, &format!("command=\"{command}\""), field(r))?;
            }
        }
    }
    if any_run {
        m.head("fixity_last_run_files", "Files the last run found, per class.")?;
    }
    for (command, run) in &runs {
        let Some(r) = run else { continue };
        for c in Class::ALL {
            let labels = format!("command=\"{command}\",class=\"{}\"", c.name());
            m.line("fixity_last_run_files", &labels, r.counts[c as usize] as f64)?;
        }
    }
    m.head(LAST_SUCCESS, "When the last run that found no corrupt, unreadable or missing file ended (0: none known).")?;
    for command in COMMANDS {
        let carried = input.previous.and_then(|p| previous_value(p, &tree, command));
        let known = last_success(s, command).map(secs);
        let value = match (known, carried) {
            (Some(a), Some(b)) => a.max(b),
            (a, b) => a.or(b).unwrap_or(0.0),
        };
        m.line(LAST_SUCCESS, &format!("command=\"{command}\""), value)?;
    }
    m.one("fixity_metrics_timestamp_seconds", "When fixity wrote this file.", secs(input.now_ms))
}

/// The value of the last-success metric for `command` in a file written before, if it
/// holds one for this tree.
fn previous_value(text: &str, tree: &str, command: &str) -> Option<f64> {
    let key = format!("{LAST_SUCCESS}{{{tree},command=\"{command}\"}} ");
    text.lines().find_map(|l| l.strip_prefix(&key)?.trim().parse::<f64>().ok()).filter(|v| *v > 0.0)
}

struct Metrics<'a> {
    out: &'a mut dyn Write,
    tree: &'a str,
}

impl Metrics<'_> {
    fn head(&mut self, name: &str, help: &str) -> io::Result<()> {
        writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} gauge")
    }

    fn line(&mut self, name: &str, labels: &str, value: f64) -> io::Result<()> {
        writeln!(self.out, "{name}{{{},{labels}}} {}", self.tree, number(value))
    }

    fn one(&mut self, name: &str, help: &str, value: f64) -> io::Result<()> {
        self.head(name, help)?;
        writeln!(self.out, "{name}{{{}}} {}", self.tree, number(value))
    }
}

fn secs(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

/// A sample value: integers without a fraction, others as Rust prints them (which the
/// exposition format's float syntax accepts).
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v}") }
}

/// A label value escaped as the exposition format says: backslash, double quote and
/// line feed.
fn label(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, summary};
    use super::*;
    use crate::catalog::PassUnderWay;

    fn text(input: &Input<'_>) -> String {
        let mut out = Vec::new();
        write(&mut out, input).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn value(text: &str, series: &str) -> f64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(series))
            .unwrap_or_else(|| panic!("{series} in\n{text}"));
        line[series.len()..].trim().parse().unwrap()
    }

    #[test]
    fn every_series_has_its_help_and_type_and_the_tree() {
        let mut s = summary(
            &[("ok", 8), ("corrupt", 2)],
            1,
            vec![run("verify", 10_000, 2), run("scan", 4_000, 0)],
        );
        s.pass.under_way = Some(PassUnderWay { since: 9_000, files_left: 5, bytes_left: 500 });
        s.pass.last_completed = Some(8_000);
        let t = text(&Input {
            tree: b"/srv/a \"b\"\\c\nd",
            algorithm: "blake3",
            summary: &s,
            now_ms: 20_000,
            previous: None,
        });
        let tree = r#"tree="/srv/a \"b\"\\c\nd""#;
        for l in t.lines().filter(|l| !l.starts_with('#')) {
            assert!(l.contains(tree), "{l}");
            let name = &l[..l.find('{').unwrap()];
            assert!(t.contains(&format!("# TYPE {name} gauge")), "{name}");
            assert!(t.contains(&format!("# HELP {name} ")), "{name}");
        }
        assert_eq!(value(&t, &format!("fixity_findings{{{tree},class=\"corrupt\"}}")), 2.0);
        assert_eq!(value(&t, &format!("fixity_findings{{{tree},class=\"missing\"}}")), 1.0);
        assert_eq!(
            value(&t, &format!("fixity_catalog_files{{{tree},algorithm=\"blake3\"}}")),
            10.0
        );
        assert_eq!(value(&t, &format!("fixity_pass_progress_ratio{{{tree}}}")), 0.5);
        assert_eq!(
            value(&t, &format!("fixity_pass_last_complete_timestamp_seconds{{{tree}}}")),
            8.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fixity_last_run_files{{{tree},command=\"verify\",class=\"corrupt\"}}")
            ),
            2.0
        );
        assert_eq!(
            value(&t, &format!("fixity_last_run_duration_seconds{{{tree},command=\"scan\"}}")),
            2.5
        );
        assert_eq!(
            value(
                &t,
                &format!("fixity_last_run_end_timestamp_seconds{{{tree},command=\"verify\"}}")
            ),
            12.5
        );
        // The verify found corruption: no success known for it; the scan succeeded.
        assert_eq!(value(&t, &format!("{LAST_SUCCESS}{{{tree},command=\"verify\"}}")), 0.0);
        assert_eq!(value(&t, &format!("{LAST_SUCCESS}{{{tree},command=\"scan\"}}")), 6.5);
        assert_eq!(value(&t, &format!("fixity_metrics_timestamp_seconds{{{tree}}}")), 20.0);
    }

    #[test]
    fn the_last_success_is_carried_over_from_the_file_replaced() {
        let s = summary(&[("ok", 1), ("corrupt", 1)], 0, vec![run("verify", 100_000, 1)]);
        let before = text(&Input {
            tree: b"/t",
            algorithm: "sha256",
            summary: &summary(&[("ok", 2)], 0, vec![run("verify", 50_000, 0)]),
            now_ms: 60_000,
            previous: None,
        });
        let key = format!("{LAST_SUCCESS}{{tree=\"/t\",command=\"verify\"}}");
        assert_eq!(value(&before, &key), 52.5);
        let after = text(&Input {
            tree: b"/t",
            algorithm: "sha256",
            summary: &s,
            now_ms: 200_000,
            previous: Some(&before),
        });
        assert_eq!(value(&after, &key), 52.5);
        // Another tree's value is not taken.
        let other = text(&Input {
            tree: b"/u",
            algorithm: "sha256",
            summary: &s,
            now_ms: 200_000,
            previous: Some(&before),
        });
        assert_eq!(
            value(&other, &format!("{LAST_SUCCESS}{{tree=\"/u\",command=\"verify\"}}")),
            0.0
        );
    }

    #[test]
    fn a_tree_with_no_runs_and_no_pass_reads_zero() {
        let mut s = summary(&[], 0, vec![]);
        s.oldest_verified = None;
        let t = text(&Input {
            tree: b"/t",
            algorithm: "blake3",
            summary: &s,
            now_ms: 1,
            previous: None,
        });
        assert_eq!(value(&t, "fixity_pass_last_complete_timestamp_seconds{tree=\"/t\"}"), 0.0);
        assert_eq!(value(&t, "fixity_pass_progress_ratio{tree=\"/t\"}"), 1.0);
        assert!(!t.contains("fixity_last_run_"), "{t}");
        assert_eq!(
            value(&t, "fixity_last_success_timestamp_seconds{tree=\"/t\",command=\"scan\"}"),
            0.0
        );
    }

    #[test]
    fn trees_merge_into_one_exposition_with_each_family_once() {
        let s1 = summary(&[("ok", 3)], 0, Vec::new());
        let s2 = summary(&[("ok", 5), ("corrupt", 1)], 2, Vec::new());
        let one = |tree: &'static [u8], s| {
            let mut out = Vec::new();
            write(
                &mut out,
                &Input { tree, algorithm: "sha256", summary: s, now_ms: 0, previous: None },
            )
            .unwrap();
            out
        };
        let merged = String::from_utf8(merge(&[one(b"/a", &s1), one(b"/b", &s2)])).unwrap();
        let helps = merged.lines().filter(|l| l.starts_with("# HELP fixity_findings ")).count();
        assert_eq!(helps, 1, "{merged}");
        let heads: Vec<&str> = merged.lines().filter(|l| l.starts_with("# TYPE")).collect();
        let mut unique = heads.clone();
        unique.dedup();
        assert_eq!(heads.len(), unique.len(), "{merged}");
        assert!(merged.contains("fixity_findings{tree=\"/b\",class=\"missing\"} 2"), "{merged}");
        assert!(merged.contains("fixity_findings{tree=\"/a\",class=\"missing\"} 0"), "{merged}");
        // Each family's samples come right after its heads, both trees' together.
        let family = merged.split("# HELP fixity_findings ").nth(1).unwrap();
        let family = family.split("# HELP").next().unwrap();
        assert!(family.contains("tree=\"/a\"") && family.contains("tree=\"/b\""), "{family}");
    }

    #[test]
    fn numbers_are_plain() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(1.5), "1.5");
        assert_eq!(number(1_764_000_000.123), "1764000000.123");
    }
}
