//! `fixity status`: what a tree's catalog knows, without touching the tree; with a
//! PostgreSQL catalog and no tree, the fleet: every tree of every host (or of one).

use super::Status;
use super::monitor;
use crate::cli::StatusArgs;
use anyhow::bail;
use fixity::catalog::postgres::{TreeState, mask};
use fixity::catalog::{OpenOptions, Store, StoreSpec, open_store};
use fixity::clock::{format_time, now_ms};
use fixity::monitor::Freshness;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::units::human_bytes;
use std::io::Write;
use std::path::PathBuf;

pub fn run(args: StatusArgs) -> anyhow::Result<Status> {
    let url = args.catalog.as_deref().and_then(super::pg_url);
    if args.health.nagios {
        let tree = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
        let judged = (|| {
            let t = monitor::thresholds(&args.health)?;
            if url.is_some() && args.path.is_none() {
                bail!(
                    "--nagios judges one tree: name it (fixity status --nagios TREE --catalog URL)"
                );
            }
            let (store, _, sub) = open(&args)?;
            let now = now_ms();
            let summary = summarize(store.as_ref(), &sub, now)?;
            if let Some(file) = &args.health.metrics {
                monitor::write_metrics(file, &tree, store.algorithm().name, &summary, now)?;
            }
            Ok((summary, t))
        })();
        return Ok(monitor::nagios_line(&tree, judged));
    }
    if let (Some(url), None) = (url, &args.path) {
        if args.health.metrics.is_some() || args.health.max_age.is_some() {
            bail!(
                "--metrics and --max-age look at one tree: name it (fixity status TREE --catalog URL)"
            );
        }
        return fleet(url, &args);
    }
    let max_age = monitor::age("--max-age", args.health.max_age.as_deref())?;
    let (store, spec, sub) = open(&args)?;
    let tree = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    // What the report calls the catalog: its file, or the URL (password masked), host
    // and tree.
    let (shown, place) = match &spec {
        StoreSpec::Postgres(t) => (
            mask(&t.url),
            Some(serde_json::json!({ "host": t.host, "tree": String::from_utf8_lossy(&t.tree) })),
        ),
        StoreSpec::Sqlite(p) | StoreSpec::Xattr(p) => (p.to_string_lossy().into_owned(), None),
    };
    let now = now_ms();
    let s = summarize(store.as_ref(), &sub, now)?;
    if let Some(file) = &args.health.metrics {
        monitor::write_metrics(file, &tree, store.algorithm().name, &s, now)?;
    }
    let fresh = Freshness::of(&s);
    let stale = max_age.zip(fresh.age_ms(now)).map(|(limit, age)| age > limit);
    let checks = store.remote_checks()?;
    let remotes = super::remote::status_lines(&checks, args.remote.as_deref())?;
    let mut out = Vec::new();
    if args.json {
        let mut v = serde_json::json!({
            "catalog": shown,
            "algorithm": store.algorithm().name,
            "files": s.files,
            "bytes": s.bytes,
            "missing": s.missing,
            "by_result": s.by_result.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(*v))).collect::<serde_json::Map<_, _>>(),
            "oldest_verified": s.oldest_verified.as_ref().map(|(p, t)| serde_json::json!({
                "path": String::from_utf8_lossy(p), "time": t })),
            "imported_unverified": s.imported,
            "verified_within_days": s.verified_within.iter().map(|(d, n)| (d.to_string(), serde_json::Value::from(*n))).collect::<serde_json::Map<_, _>>(),
            "problems": s.problems.iter().map(|(p, c)| serde_json::json!({
                "path": String::from_utf8_lossy(p), "class": c })).collect::<Vec<_>>(),
            "runs": s.runs.iter().map(run_json).collect::<Vec<_>>(),
            "pass": s.pass,
            "verification_age_seconds": fresh.age_ms(now).map(|a| a / 1000),
            "stale": stale,
            "remotes": super::remote::status_json(&checks, args.remote.as_deref())?,
        });
        if let (false, Some(obj)) = (sub.is_empty(), v.as_object_mut()) {
            obj.insert("subtree".into(), String::from_utf8_lossy(&sub).into());
        }
        if let (Some(place), Some(obj)) = (place, v.as_object_mut()) {
            obj.extend(
                place.as_object().into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())),
            );
        }
        serde_json::to_writer_pretty(&mut out, &v)?;
        out.push(b'\n');
    } else {
        let pct = |n: u64| if s.files == 0 { 100.0 } else { n as f64 * 100.0 / s.files as f64 };
        let location = match &spec {
            StoreSpec::Postgres(t) => format!("{shown} {}:{}", t.host, quote_env(&t.tree)),
            _ => quote_env(shown.as_bytes()),
        };
        writeln!(out, "catalog:   {location} ({})", store.algorithm().name)?;
        if !sub.is_empty() {
            writeln!(out, "subtree:   {} (runs and the pass: the tree's)", quote_env(&sub))?;
        }
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
        if s.imported > 0 {
            writeln!(
                out,
                "imported:  {} not yet verified by fixity (digests from another tool; \
                 `fixity verify` reads them first)",
                crate::ui::count(s.imported, "file")
            )?;
        }
        if let Some((p, 0)) = &s.oldest_verified {
            writeln!(out, "oldest:    never verified: {}", quote_env(p))?;
        } else if let Some((p, t)) = &s.oldest_verified {
            let age = (now - t) as f64 / 86_400_000.0;
            writeln!(
                out,
                "oldest:    {} UTC ({age:.1} days ago): {}",
                format_time(*t),
                quote_env(p)
            )?;
        }
        if let Some(p) = s.pass.under_way {
            writeln!(
                out,
                "pass:      in progress since {} UTC: {} ({}) left",
                format_time(p.since),
                crate::ui::count(p.files_left, "file"),
                human_bytes(p.bytes_left)
            )?;
        }
        writeln!(out, "fresh:     {}", fresh.describe(now))?;
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
        out.extend_from_slice(remotes.as_bytes());
    }
    std::io::stdout().lock().write_all(&out)?;
    if let (Some(limit), Some(age)) = (max_age, fresh.age_ms(now))
        && age > limit
    {
        crate::ui::error(&format!(
            "warning: {}: {}, more than --max-age {}",
            quote_env(path_bytes(&tree)),
            fresh.describe(now),
            args.health.max_age.as_deref().unwrap_or_default()
        ));
        return Ok(Status::Failed);
    }
    Ok(Status::Ok)
}

/// The store of the tree the directory named is in (found upward), opened to be read,
/// its spec, and the subtree the directory is (empty: the whole tree).
fn open(args: &StatusArgs) -> anyhow::Result<(Box<dyn Store>, StoreSpec, Vec<u8>)> {
    if args.catalog.as_deref().and_then(super::pg_url).is_none() && args.host.is_some() {
        bail!("--host names trees in a PostgreSQL catalog: pass --catalog postgresql://...");
    }
    let mut tree = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let mut catalog = args.catalog.clone();
    let mut sub = Vec::new();
    let (host, quiet) = (args.host.as_deref(), args.health.nagios);
    let found = super::tree::locate(&tree, catalog.as_deref(), host, args.find, false)?;
    if found.found_above || found.is_subtree() {
        super::tree::say(&found, quiet);
        (tree, sub) = (found.root, found.subtree);
        catalog = catalog.or(Some(found.catalog));
    }
    let spec = super::catalog_spec(catalog.as_deref(), &tree, host);
    let how = OpenOptions { read_only: true, ..OpenOptions::default() };
    Ok((open_store(&spec, &how)?, spec, sub))
}

/// What the store knows of the subtree `sub` (the whole tree when empty).
fn summarize(store: &dyn Store, sub: &[u8], now: i64) -> anyhow::Result<fixity::catalog::Summary> {
    let tree = store.summary(now)?;
    Ok(fixity::catalog::under::summary_under(store, sub, now, tree)?)
}

/// The fleet view: each host's trees with their files, findings, last complete pass and
/// last run.
fn fleet(url: &str, args: &StatusArgs) -> anyhow::Result<Status> {
    let trees = fixity::catalog::postgres::fleet(url, args.host.as_deref())?;
    let mut out = Vec::new();
    if args.json {
        let mut hosts: Vec<(String, Vec<serde_json::Value>)> = Vec::new();
        for t in &trees {
            let entry = tree_json(t);
            match hosts.last_mut() {
                Some((h, list)) if *h == t.host => list.push(entry),
                _ => hosts.push((t.host.clone(), vec![entry])),
            }
        }
        let hosts: Vec<_> = hosts
            .into_iter()
            .map(|(host, trees)| serde_json::json!({ "host": host, "trees": trees }))
            .collect();
        let v = serde_json::json!({ "catalog": mask(url), "hosts": hosts });
        serde_json::to_writer_pretty(&mut out, &v)?;
        out.push(b'\n');
    } else {
        writeln!(out, "catalog:   {} ({} trees)", mask(url), trees.len())?;
        let mut host: Option<&str> = None;
        for t in &trees {
            if host != Some(t.host.as_str()) {
                writeln!(out, "host {}", t.host)?;
                host = Some(&t.host);
            }
            let imported = match t.imported {
                0 => String::new(),
                n => format!(", imported and not yet verified {n}"),
            };
            writeln!(
                out,
                "  {}: {} ({}), corrupt {}, unreadable {}, missing {}{imported} ({})",
                quote_env(&t.root),
                crate::ui::count(t.files, "file"),
                human_bytes(t.bytes),
                t.corrupt,
                t.unreadable,
                t.missing,
                t.algorithm
            )?;
            let pass =
                t.last_complete_pass.map_or("none".into(), |p| format!("{} UTC", format_time(p)));
            let run = match &t.last_run {
                Some(r) => {
                    let state = match (r.finished, r.complete) {
                        (None, _) => "interrupted",
                        (Some(_), Some(false)) => "stopped early",
                        _ => "complete",
                    };
                    format!("{} {} UTC, {state}", r.command, format_time(r.started))
                }
                None => "none".into(),
            };
            writeln!(out, "    last complete pass: {pass}; last run: {run}")?;
        }
    }
    std::io::stdout().lock().write_all(&out)?;
    Ok(Status::Ok)
}

fn tree_json(t: &TreeState) -> serde_json::Value {
    serde_json::json!({
        "tree": String::from_utf8_lossy(&t.root),
        "algorithm": t.algorithm,
        "files": t.files,
        "bytes": t.bytes,
        "findings": { "corrupt": t.corrupt, "unreadable": t.unreadable, "missing": t.missing },
        "imported_unverified": t.imported,
        "last_complete_pass": t.last_complete_pass,
        "last_run": t.last_run.as_ref().map(run_json),
    })
}

/// A run as `status --json` shows it: its summary an object, as `scan --json` printed it.
fn run_json(r: &fixity::catalog::RunInfo) -> serde_json::Value {
    serde_json::json!({
        "command": r.command,
        "started": r.started,
        "finished": r.finished,
        "complete": r.complete,
        "summary": r.summary.as_deref().and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok()),
    })
}
