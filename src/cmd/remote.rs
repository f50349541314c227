//! `fixity verify TREE --remote s3://BUCKET/PREFIX`: the remote copy compared with the
//! catalog (src/remote/), each object that is not ok listed, then the summary; and the
//! last comparisons, for `fixity status`.

use super::Status;
use crate::cli::{RemoteArgs, ScrubArgs, Store};
use crate::ui::Progress;
use anyhow::{Context, bail};
use fixity::catalog::sqlite::Catalog;
use fixity::catalog::{OpenOptions, RemoteCheck, open_store};
use fixity::clock::{format_time, now_ms};
use fixity::formats::json::path_fields;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::remote::{self, Class, Event, Proof, RemoteUrl, Summary};
use fixity::units::human_bytes;
use serde_json::{Map, Value, json};
use std::io::{self, BufWriter, Write};

pub fn run(args: ScrubArgs, r: RemoteArgs) -> anyhow::Result<Status> {
    let url =
        RemoteUrl::parse(r.remote.as_deref().unwrap_or_default()).map_err(anyhow::Error::msg)?;
    if args.store == Store::Xattr {
        bail!(
            "--remote compares the copy with the catalog's records, in path order: the xattr \
             store keeps no index of them (use a catalog)"
        );
    }
    if args.plan.is_some() || args.metrics.is_some() {
        bail!("--remote compares the whole tree's records: --plan and --metrics do not apply");
    }
    if r.requests == 0 || r.attempts == 0 {
        bail!("--requests and --attempts take 1 or more");
    }
    let root = args.path.clone().unwrap_or_else(|| ".".into());
    super::tree_dir(&root)?;
    // The tree the directory is in (its catalog found upward): a subtree is compared with
    // the objects under its own keys, and recorded as a comparison with that prefix.
    let found = super::tree::locate(&root, args.catalog.as_deref(), None, args.find, false)?;
    let found = Some(found).filter(|f| f.found_above || f.is_subtree());
    if let Some(f) = &found {
        super::tree::say(f, args.quiet);
    }
    let within = found.as_ref().map(|f| f.subtree.clone()).unwrap_or_default();
    let prefix = url.prefix().to_string();
    let url = match (&url, std::str::from_utf8(&within)) {
        (_, Ok("")) => url,
        (RemoteUrl::S3 { bucket, prefix }, Ok(sub)) => {
            RemoteUrl::S3 { bucket: bucket.clone(), prefix: format!("{prefix}{sub}/") }
        }
        (_, Err(_)) => bail!("the subtree's name is not UTF-8: no S3 key can hold it"),
    };
    let (root, catalog) = match found {
        Some(f) => (f.root, f.catalog),
        None => {
            let catalog = args.catalog.clone().unwrap_or_else(|| Catalog::default_path(&root));
            (root, catalog)
        }
    };
    let spec = super::catalog_spec(Some(&catalog), &root, None);
    let how = OpenOptions { wait: args.wait, ..OpenOptions::default() };
    let mut store = open_store(&spec, &how)?;
    let opts = remote::Options {
        endpoint: r.endpoint.clone(),
        profile: r.profile.clone(),
        path_style: r.path_style || (r.endpoint.is_some() && !r.virtual_hosted),
        requests: r.requests,
        attempts: r.attempts,
        download: r.download,
    };
    let mut client = remote::open(&url, &opts)?;
    let progress = Progress::new(args.read.progress, !args.read.no_progress);
    let bar = progress.handle();
    let out = io::stdout();
    let mut out = BufWriter::new(out.lock());
    let mut write_error: Option<io::Error> = None;
    let mut seen = 0u64;
    let started = now_ms();
    let result = remote::compare_under(
        store.as_mut(),
        &root,
        client.as_mut(),
        (&prefix, &within),
        &opts,
        &mut |e| {
            seen += 1;
            if let Some(bar) = bar.as_ref().filter(|_| seen.is_multiple_of(256)) {
                bar.set_message(format!("{seen} objects compared"));
            }
            let show = e.class != Class::Ok && !(args.quiet && e.class == Class::Extra);
            if show && write_error.is_none() {
                let line = if args.json { event_json(e) } else { event_line(e) };
                if let Err(err) = out.write_all(line.as_bytes()) {
                    write_error = Some(err);
                }
            }
        },
    );
    progress.finish();
    if let Some(e) = write_error {
        return Err(e).context("cannot write the report to standard output");
    }
    let (summary, failed) = match result {
        Ok(s) => (s, None),
        Err(f) => {
            let f = *f;
            (f.summary, Some(f.error))
        }
    };
    let check = RemoteCheck {
        remote: url.to_string(),
        started,
        finished: now_ms(),
        complete: summary.complete,
        summary: serde_json::to_string(&summary).expect("a summary serializes"),
    };
    let findings = summary.findings();
    if let Some(e) = failed {
        // What was compared is reported; the comparison is recorded as incomplete.
        out.flush().context("cannot write the report to standard output")?;
        let recorded = store.record_remote_check(&check);
        if let Err(r) = recorded {
            crate::ui::error(&format!("cannot record the comparison in the catalog: {r}"));
        }
        return Err(anyhow::anyhow!("{url}: {e}"));
    }
    if args.json {
        let mut v = serde_json::to_value(&summary).expect("a summary serializes");
        v["type"] = json!("summary");
        v["tree"] = json!(String::from_utf8_lossy(path_bytes(&root)));
        writeln!(out, "{v}").context("cannot write the report to standard output")?;
    } else if !args.quiet || findings > 0 {
        out.write_all(summary_text(&root, &summary).as_bytes())
            .context("cannot write the report to standard output")?;
    }
    out.flush().context("cannot write the report to standard output")?;
    // Reported first, then recorded.
    store.record_remote_check(&check).context("cannot record the comparison in the catalog")?;
    Ok(if findings > 0 { Status::Failed } else { Status::Ok })
}

fn label(class: Class) -> &'static str {
    match class {
        Class::Ok => "ok",
        Class::Differs => "DIFFERS",
        Class::Missing => "missing",
        Class::Extra => "extra",
        Class::Unprovable => "unprovable",
        Class::Error => "error",
    }
}

/// `DIFFERS     path (sha256: remote ..., recorded content ...)`.
fn event_line(e: &Event) -> String {
    let mut line = format!("{:<11} {}", label(e.class), quote_env(&e.path));
    if let Some(n) = &e.note {
        line.push_str(&format!(" ({n})"));
    }
    line.push('\n');
    line
}

fn event_json(e: &Event) -> String {
    let mut obj: Map<String, Value> = path_fields(&e.path);
    obj.insert("class".into(), json!(e.class.name()));
    if let Some(p) = e.proof {
        obj.insert("proof".into(), json!(p.name()));
    }
    if let Some(n) = &e.note {
        obj.insert("note".into(), json!(n));
    }
    format!("{}\n", Value::Object(obj))
}

/// The summary: counts per class, proofs, what was read and asked.
fn summary_text(root: &std::path::Path, s: &Summary) -> String {
    let count = |c: Class| s.counts.get(c.name()).copied().unwrap_or(0);
    let mut t = format!(
        "verify {} against {}: {} objects compared in {:.1} s ({} requests)\n",
        quote_env(path_bytes(root)),
        s.remote,
        s.objects,
        s.seconds,
        s.requests
    );
    let classes: Vec<String> =
        Class::ALL.iter().map(|c| format!("{} {}", label(*c), count(*c))).collect();
    t.push_str(&classes.join(", "));
    t.push('\n');
    let proofs: Vec<String> = Proof::ALL
        .iter()
        .filter_map(|p| s.proofs.get(p.name()).map(|n| format!("{} {n}", p.name())))
        .collect();
    if !proofs.is_empty() {
        t.push_str(&format!("proven by: {}\n", proofs.join(", ")));
    }
    t.push_str(&format!(
        "local files read: {} ({}); downloaded: {} ({})\n",
        s.files_read,
        human_bytes(s.bytes_read),
        s.downloaded,
        human_bytes(s.bytes_downloaded)
    ));
    if count(Class::Unprovable) > 0 {
        t.push_str(
            "unprovable objects offer no ETag or checksum fixity can compare (the note says why): \
             --download hashes them while streaming\n",
        );
    }
    t
}

/// The last comparison with `remote` (all remotes when `None`), as `status` shows it.
pub fn status_lines(checks: &[RemoteCheck], remote: Option<&str>) -> anyhow::Result<String> {
    let (wanted, chosen) = choose(checks, remote)?;
    let mut t = String::new();
    let found = !chosen.is_empty();
    for c in chosen {
        let s: Value = serde_json::from_str(&c.summary).unwrap_or(Value::Null);
        let counts = &s["counts"];
        let classes: Vec<String> = Class::ALL
            .iter()
            .map(|k| format!("{} {}", label(*k), counts[k.name()].as_u64().unwrap_or(0)))
            .collect();
        t.push_str(&format!(
            "remote {}: compared {} UTC{}: {}\n",
            c.remote,
            format_time(c.finished),
            if c.complete { "" } else { " (incomplete)" },
            classes.join(", ")
        ));
        if let (Some(_), Some(problems)) = (remote, s["problems"].as_array()) {
            for p in problems {
                let path = p["path"].as_str().unwrap_or_default();
                let note = p["note"].as_str().map(|n| format!(" ({n})")).unwrap_or_default();
                let class = p["class"].as_str().unwrap_or_default();
                t.push_str(&format!("  {class:<11} {path}{note}\n"));
            }
        }
    }
    if let (false, Some(w)) = (found, wanted) {
        bail!("no comparison with {w} on record: run fixity verify TREE --remote URL");
    }
    Ok(t)
}

/// The last comparison with `remote` (all remotes when `None`) for `status --json`.
pub fn status_json(checks: &[RemoteCheck], remote: Option<&str>) -> anyhow::Result<Value> {
    Ok(Value::Array(
        choose(checks, remote)?
            .1
            .into_iter()
            .map(|c| {
                json!({
                    "remote": c.remote,
                    "started": c.started,
                    "finished": c.finished,
                    "complete": c.complete,
                    "summary": serde_json::from_str::<Value>(&c.summary).unwrap_or(Value::Null),
                })
            })
            .collect(),
    ))
}

/// The remote `--remote` names, as recorded (`s3://b/p`), and the comparisons to show:
/// that remote's, or every remote's.
fn choose<'a>(
    checks: &'a [RemoteCheck],
    remote: Option<&str>,
) -> anyhow::Result<(Option<String>, Vec<&'a RemoteCheck>)> {
    let wanted = match remote {
        Some(r) => Some(RemoteUrl::parse(r).map_err(anyhow::Error::msg)?.to_string()),
        None => None,
    };
    let chosen = checks.iter().filter(|c| wanted.as_ref().is_none_or(|w| *w == c.remote)).collect();
    Ok((wanted, chosen))
}
