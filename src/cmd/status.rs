//! `fixity status`: what a tree's catalog knows, without touching the tree.

use super::Status;
use crate::cli::StatusArgs;
use fixity::catalog::sqlite::Catalog;
use fixity::catalog::{OpenOptions, PassState, StoreSpec, open_store};
use fixity::clock::{format_time, now_ms};
use fixity::pathtext::quote_env;
use fixity::units::human_bytes;
use std::io::Write;

pub fn run(args: StatusArgs) -> anyhow::Result<Status> {
    let path = args.catalog.clone().unwrap_or_else(|| Catalog::default_path(&args.path));
    let how = OpenOptions { read_only: true, ..OpenOptions::default() };
    let store = open_store(&StoreSpec::Sqlite(path.clone()), &how)?;
    let now = now_ms();
    let s = store.summary(now)?;
    let mut out = Vec::new();
    if args.json {
        let v = serde_json::json!({
            "catalog": path.to_string_lossy(),
            "algorithm": store.algorithm().name,
            "files": s.files,
            "bytes": s.bytes,
            "missing": s.missing,
            "by_result": s.by_result.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(*v))).collect::<serde_json::Map<_, _>>(),
            "oldest_verified": s.oldest_verified.as_ref().map(|(p, t)| serde_json::json!({
                "path": String::from_utf8_lossy(p), "time": t })),
            "verified_within_days": s.verified_within.iter().map(|(d, n)| (d.to_string(), serde_json::Value::from(*n))).collect::<serde_json::Map<_, _>>(),
            "problems": s.problems.iter().map(|(p, c)| serde_json::json!({
                "path": String::from_utf8_lossy(p), "class": c })).collect::<Vec<_>>(),
            "runs": s.runs,
        });
        serde_json::to_writer_pretty(&mut out, &v)?;
        out.push(b'\n');
    } else {
        let pct = |n: u64| if s.files == 0 { 100.0 } else { n as f64 * 100.0 / s.files as f64 };
        writeln!(
            out,
            "catalog:   {} ({})",
            quote_env(path.as_os_str().as_encoded_bytes()),
            store.algorithm().name
        )?;
        writeln!(out, "files:     {} ({}), {} missing", s.files, human_bytes(s.bytes), s.missing)?;
        let results: Vec<String> = s.by_result.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(
            out,
            "last seen: {}",
            if results.is_empty() { "-".into() } else { results.join(", ") }
        )?;
        let within: Vec<String> = s
            .verified_within
            .iter()
            .map(|(d, n)| {
                format!("{n} ({:.0}%) in {d} day{}", pct(*n), if *d == 1 { "" } else { "s" })
            })
            .collect();
        writeln!(out, "verified:  {}", within.join(", "))?;
        if let Some((p, t)) = &s.oldest_verified {
            let age = (now - t) as f64 / 86_400_000.0;
            writeln!(
                out,
                "oldest:    {} UTC ({age:.1} days ago): {}",
                format_time(*t),
                quote_env(p)
            )?;
        }
        match s.pass {
            PassState::InProgress(p, files, bytes) => writeln!(
                out,
                "pass:      in progress since {} UTC: {files} files ({}) left",
                format_time(p),
                human_bytes(bytes)
            )?,
            PassState::Completed(t) => {
                writeln!(out, "pass:      last completed {} UTC", format_time(t))?
            }
            PassState::None => {}
        }
        for run in &s.runs {
            let state = match (run.finished, run.complete) {
                (None, _) => "interrupted".to_string(),
                (Some(_), Some(false)) => "slice, stopped early".to_string(),
                (Some(f), _) => format!("complete in {:.1} s", (f - run.started) as f64 / 1000.0),
            };
            writeln!(out, "run:       {} {} UTC, {state}", run.command, format_time(run.started))?;
        }
        for (p, c) in &s.problems {
            writeln!(out, "{:<11}{}", if c == "corrupt" { "CORRUPT" } else { c }, quote_env(p))?;
        }
    }
    std::io::stdout().lock().write_all(&out)?;
    Ok(Status::Ok)
}
