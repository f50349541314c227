//! A Nagios/Icinga plugin's verdict on a tree (`fixity status --nagios`): one status line
//! `FIXITY STATE - text | perfdata` and the plugin exit status (0 OK, 1 WARNING,
//! 2 CRITICAL, 3 UNKNOWN), as the Monitoring Plugins guidelines lay them down.
//!
//! Thresholds follow the plugins' convention for a plain number: the greatest value that
//! is still fine, so `0` alerts on any finding. By default any corrupt file is CRITICAL,
//! any other finding (unreadable, missing) is WARNING, and the last complete verification
//! pass is WARNING past 7 days and CRITICAL past 30. With no complete pass yet, the age
//! counts from when fixity took the tree on (its first scan or import, or the oldest
//! verification).

use super::{Findings, Freshness, age_text};
use crate::catalog::Summary;

/// A plugin state, in order of gravity but for UNKNOWN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    Ok = 0,
    Warning = 1,
    Critical = 2,
    Unknown = 3,
}

impl State {
    /// The word of the status line.
    pub fn word(self) -> &'static str {
        match self {
            State::Ok => "OK",
            State::Warning => "WARNING",
            State::Critical => "CRITICAL",
            State::Unknown => "UNKNOWN",
        }
    }
}

/// When the plugin alerts; `None` turns a threshold off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// WARNING when the last complete pass is older than this (ms).
    pub warning_age_ms: Option<i64>,
    /// CRITICAL when it is older than this (ms).
    pub critical_age_ms: Option<i64>,
    /// WARNING when there are more findings (corrupt + unreadable + missing) than this.
    pub warning_findings: Option<u64>,
    /// CRITICAL when there are more findings than this.
    pub critical_findings: Option<u64>,
    /// CRITICAL when there are more corrupt files than this.
    pub critical_corrupt: Option<u64>,
}

impl Default for Thresholds {
    fn default() -> Self {
        const DAY: i64 = 86_400_000;
        Thresholds {
            warning_age_ms: Some(7 * DAY),
            critical_age_ms: Some(30 * DAY),
            warning_findings: Some(0),
            critical_findings: None,
            critical_corrupt: Some(0),
        }
    }
}

/// The plugin's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub state: State,
    /// The one line to print, perfdata included.
    pub line: String,
}

/// The verdict on a tree (`shown` is its name as the line gives it) from its catalog's
/// summary at `now_ms`.
pub fn judge(shown: &str, s: &Summary, now_ms: i64, t: &Thresholds) -> Verdict {
    let f = Findings::of(s);
    let fresh = Freshness::of(s);
    let age = fresh.age_ms(now_ms);
    let over = |v: u64, limit: Option<u64>| limit.is_some_and(|l| v > l);
    let older = |limit: Option<i64>| matches!((age, limit), (Some(a), Some(l)) if a > l);

    let mut state = State::Ok;
    let mut why = Vec::new();
    let mut raise = |to: State, reason: String| {
        state = state.max(to);
        why.push(reason);
    };
    if over(f.corrupt, t.critical_corrupt) {
        raise(State::Critical, format!("{} corrupt", f.corrupt));
    }
    let findings = match f.total() {
        1 => "1 finding".to_string(),
        n => format!("{n} findings"),
    };
    if over(f.total(), t.critical_findings) {
        raise(State::Critical, findings);
    } else if over(f.total(), t.warning_findings) {
        raise(State::Warning, findings);
    }
    if older(t.critical_age_ms) {
        raise(
            State::Critical,
            format!("verification older than {}", age_text(t.critical_age_ms.unwrap_or(0))),
        );
    } else if older(t.warning_age_ms) {
        raise(
            State::Warning,
            format!("verification older than {}", age_text(t.warning_age_ms.unwrap_or(0))),
        );
    }

    let mut text = format!(
        "{}: {} files, {} corrupt, {} unreadable, {} missing; {}",
        shown.replace('|', "\u{2223}"),
        s.files,
        f.corrupt,
        f.unreadable,
        f.missing,
        fresh.describe(now_ms)
    );
    if let Some(p) = s.pass.under_way {
        text.push_str(&format!("; pass under way, {} files left", p.files_left));
    }
    if s.imported > 0 {
        text.push_str(&format!("; {} imported, not yet verified", s.imported));
    }
    if !why.is_empty() {
        text = format!("{}: {text}", why.join(", "));
    }
    let limit = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    let secs = |v: Option<i64>| v.map_or(String::new(), |v| (v / 1000).to_string());
    let mut perf = vec![
        format!("files={};;;0", s.files),
        format!("bytes={}B;;;0", s.bytes),
        format!("corrupt={};;{};0", f.corrupt, limit(t.critical_corrupt)),
        format!("unreadable={};;;0", f.unreadable),
        format!("missing={};;;0", f.missing),
        format!(
            "findings={};{};{};0",
            f.total(),
            limit(t.warning_findings),
            limit(t.critical_findings)
        ),
    ];
    if let Some(a) = age {
        perf.push(format!(
            "verification_age={}s;{};{};0",
            a / 1000,
            secs(t.warning_age_ms),
            secs(t.critical_age_ms)
        ));
    }
    if let Some(p) = s.pass.under_way {
        perf.push(format!("pass_files_left={};;;0", p.files_left));
    }
    if s.imported > 0 {
        perf.push(format!("imported_unverified={};;;0", s.imported));
    }
    Verdict { state, line: format!("FIXITY {} - {text} | {}", state.word(), perf.join(" ")) }
}

/// The verdict when the catalog could not be read: UNKNOWN, with the reason.
pub fn unknown(why: &str) -> Verdict {
    let one_line = why.replace(['\n', '|'], " ");
    Verdict { state: State::Unknown, line: format!("FIXITY UNKNOWN - {one_line}") }
}

#[cfg(test)]
mod tests {
    use super::super::tests::summary;
    use super::*;
    use crate::catalog::PassUnderWay;

    const DAY: i64 = 86_400_000;

    fn fresh(by_result: &[(&str, u64)], missing: u64) -> Summary {
        let mut s = summary(by_result, missing, vec![]);
        s.pass.last_completed = Some(10 * DAY);
        s
    }

    #[test]
    fn a_clean_fresh_tree_is_ok_with_perfdata() {
        let v = judge("/srv/a", &fresh(&[("ok", 5)], 0), 11 * DAY, &Thresholds::default());
        assert_eq!(v.state, State::Ok);
        assert!(v.line.starts_with("FIXITY OK - /srv/a: 5 files, 0 corrupt, 0 unreadable, 0 missing; last complete pass 1970-01-11 00:00:00 UTC (1.0 days ago) | "), "{}", v.line);
        assert!(v.line.ends_with(
            "| files=5;;;0 bytes=1073741824B;;;0 corrupt=0;;0;0 unreadable=0;;;0 missing=0;;;0 findings=0;0;;0 verification_age=86400s;604800;2592000;0"
        ), "{}", v.line);
    }

    #[test]
    fn corruption_is_critical_and_other_findings_warn() {
        let t = Thresholds::default();
        let v = judge("/t", &fresh(&[("ok", 5), ("corrupt", 1)], 0), 11 * DAY, &t);
        assert_eq!(v.state, State::Critical);
        assert!(v.line.starts_with("FIXITY CRITICAL - 1 corrupt, 1 finding: /t: "), "{}", v.line);
        let v = judge("/t", &fresh(&[("ok", 5), ("unreadable", 1)], 2), 11 * DAY, &t);
        assert_eq!(v.state, State::Warning);
        assert!(v.line.starts_with("FIXITY WARNING - 3 findings: /t: 6 files"), "{}", v.line);
        // Thresholds off, or higher.
        let lax = Thresholds { warning_findings: Some(3), critical_corrupt: None, ..t };
        assert_eq!(
            judge("/t", &fresh(&[("ok", 5), ("corrupt", 1)], 2), 11 * DAY, &lax).state,
            State::Ok
        );
        let strict = Thresholds { critical_findings: Some(1), ..t };
        assert_eq!(judge("/t", &fresh(&[("ok", 5)], 2), 11 * DAY, &strict).state, State::Critical);
    }

    #[test]
    fn an_old_pass_warns_then_goes_critical() {
        let t = Thresholds::default();
        let s = fresh(&[("ok", 5)], 0);
        assert_eq!(judge("/t", &s, 17 * DAY, &t).state, State::Ok);
        let v = judge("/t", &s, 17 * DAY + 1000, &t);
        assert_eq!(v.state, State::Warning);
        assert!(v.line.contains("verification older than 7.0 days"), "{}", v.line);
        assert_eq!(judge("/t", &s, 41 * DAY, &t).state, State::Critical);
        let off = Thresholds { warning_age_ms: None, critical_age_ms: None, ..t };
        assert_eq!(judge("/t", &s, 400 * DAY, &off).state, State::Ok);
    }

    #[test]
    fn a_tree_never_verified_ages_from_its_oldest_verification() {
        let mut s = summary(&[("ok", 5)], 0, vec![]);
        s.oldest_verified = Some((b"x".to_vec(), DAY));
        s.pass.under_way = Some(PassUnderWay { since: 2 * DAY, files_left: 3, bytes_left: 30 });
        let v = judge("/t", &s, 9 * DAY, &Thresholds::default());
        assert_eq!(v.state, State::Warning);
        assert!(
            v.line.contains(
                "no complete verification pass yet, in the tree's catalog since 1970-01-02"
            ),
            "{}",
            v.line
        );
        assert!(v.line.contains("pass under way, 3 files left"), "{}", v.line);
        assert!(v.line.contains(" pass_files_left=3;;;0"), "{}", v.line);
        s.imported = 2;
        let v = judge("/t", &s, 9 * DAY, &Thresholds::default());
        assert!(v.line.contains("; 2 imported, not yet verified |"), "{}", v.line);
        assert!(v.line.ends_with(" imported_unverified=2;;;0"), "{}", v.line);
    }

    #[test]
    fn a_pipe_in_the_name_cannot_start_the_perfdata() {
        let v = judge("/a|b", &fresh(&[("ok", 1)], 0), 11 * DAY, &Thresholds::default());
        assert_eq!(v.line.matches('|').count(), 1);
        let u = unknown("cannot open x|y\nbecause");
        assert_eq!(
            (u.state, u.line.as_str()),
            (State::Unknown, "FIXITY UNKNOWN - cannot open x y because")
        );
    }
}
