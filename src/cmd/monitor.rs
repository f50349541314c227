//! Monitoring output shared by `status`, `scan` and `verify`: the Prometheus textfile
//! (`--metrics FILE.prom`) and the Nagios/Icinga plugin line (`status --nagios`).

use super::Status;
use crate::cli::HealthArgs;
use anyhow::Context;
use fixity::catalog::{Store, Summary};
use fixity::clock::now_ms;
use fixity::monitor::nagios::{self, State, Thresholds};
use fixity::monitor::prometheus;
use fixity::output::AtomicFile;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::units::parse_duration;
use std::io::Write;
use std::path::Path;

/// Writes the tree's metrics, from its store's `summary` taken at `now` (ms), to `file`,
/// atomically: node_exporter never reads half a file. The last success carried by the
/// file replaced is kept (see `fixity::monitor::prometheus`).
pub fn write_metrics(
    file: &Path,
    tree: &Path,
    algorithm: &str,
    summary: &Summary,
    now: i64,
) -> anyhow::Result<()> {
    let shown = quote_env(path_bytes(file));
    // Only a regular file carries a previous run: `/dev/full` or a FIFO is not read (the
    // one never ends).
    let previous = std::fs::metadata(file)
        .is_ok_and(|md| md.is_file())
        .then(|| std::fs::read_to_string(file).ok())
        .flatten();
    let tree = fixity::sys::absolute(tree).unwrap_or_else(|_| tree.to_path_buf());
    let input = prometheus::Input {
        tree: path_bytes(&tree),
        algorithm,
        summary,
        now_ms: now,
        previous: previous.as_deref(),
    };
    let mut out = AtomicFile::create(file).with_context(|| format!("cannot write {shown}"))?;
    prometheus::write(&mut out, &input).with_context(|| format!("cannot write {shown}"))?;
    out.commit().with_context(|| format!("cannot write {shown}"))
}

/// [`write_metrics`] for a store just used by a run: its summary read now.
pub fn write_store_metrics(file: &Path, tree: &Path, store: &dyn Store) -> anyhow::Result<()> {
    let now = now_ms();
    let summary = store.summary(now).context("cannot read the catalog for --metrics")?;
    write_metrics(file, tree, store.algorithm().name, &summary, now)
}

/// An age option (`--max-age 7d`) in ms.
pub fn age(option: &str, text: Option<&str>) -> anyhow::Result<Option<i64>> {
    text.map(|t| {
        parse_duration(t)
            .map(|d| d.as_millis().min(i64::MAX as u128) as i64)
            .with_context(|| format!("bad {option} {t:?} (try 7d, 36h or 2w)"))
    })
    .transpose()
}

/// The plugin's thresholds from the arguments, the defaults filling the rest.
pub fn thresholds(h: &HealthArgs) -> anyhow::Result<Thresholds> {
    let d = Thresholds::default();
    Ok(Thresholds {
        warning_age_ms: age("--max-age", h.max_age.as_deref())?.or(d.warning_age_ms),
        critical_age_ms: age("--critical-age", h.critical_age.as_deref())?.or(d.critical_age_ms),
        warning_findings: h.warning_findings.or(d.warning_findings),
        critical_findings: h.critical_findings.or(d.critical_findings),
        critical_corrupt: h.critical_corrupt.or(d.critical_corrupt),
    })
}

/// Prints the plugin's line for a tree and returns its exit status; `judged` is the
/// summary, or why there is none (UNKNOWN).
pub fn nagios_line(tree: &Path, judged: anyhow::Result<(Summary, Thresholds)>) -> Status {
    let verdict = match judged {
        Ok((summary, t)) => nagios::judge(&quote_env(path_bytes(tree)), &summary, now_ms(), &t),
        Err(e) => nagios::unknown(&crate::ui::describe(&e)),
    };
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{}", verdict.line).and_then(|()| out.flush()).is_err() {
        return Status::Unknown;
    }
    match verdict.state {
        State::Ok => Status::Ok,
        State::Warning => Status::Failed,
        State::Critical => Status::Usage,
        State::Unknown => Status::Unknown,
    }
}
