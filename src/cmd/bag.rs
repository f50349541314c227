//! `fixity bag create|check`: BagIt bags (see `fixity::bagit`). Problems go to stderr, one
//! a line naming the file (and line) they concern; the verdict goes to stdout.

use super::{Status, engine_config};
use crate::cli::{BagCheckArgs, BagCommand, BagCreateArgs};
use crate::ui;
use anyhow::Context;
use fixity::algo;
use fixity::bagit::{self, BagError, Problem};
use fixity::pathtext::{path_bytes, quote_env};
use serde_json::json;
use std::io::Write;

pub fn run(cmd: BagCommand) -> anyhow::Result<Status> {
    match cmd {
        BagCommand::Create(a) => create(a),
        BagCommand::Check(a) => check(a),
    }
}

fn usage_or_fail(e: BagError) -> anyhow::Result<Status> {
    ui::error(&e.to_string());
    Ok(match e {
        BagError::Usage(_) => Status::Usage,
        BagError::Io(_) => Status::Failed,
    })
}

fn create(args: BagCreateArgs) -> anyhow::Result<Status> {
    let list = args.algorithm.clone().unwrap_or_else(|| bagit::DEFAULT_ALGORITHMS.join(","));
    let algos = algo::parse_list(&list).map_err(anyhow::Error::msg)?;
    let mut info = Vec::new();
    for i in &args.info {
        let (k, v) =
            i.split_once('=').with_context(|| format!("--info '{i}': expected LABEL=VALUE"))?;
        info.push((k.to_string(), v.to_string()));
    }
    let cfg = engine_config(Some(&args.dir), &args.read);
    match bagit::create(&args.dir, &algos, &info, args.follow, &cfg) {
        Ok(r) => {
            for (staging, entries) in &r.recovered {
                ui::error(&format!(
                    "{}: recovered {entries} entries from the staging directory of an \
                     interrupted run",
                    quote_env(path_bytes(staging))
                ));
            }
            let names: Vec<&str> = algos.iter().map(|a| a.name).collect();
            println!(
                "{}: bagged {} files, {} bytes ({})",
                quote_env(path_bytes(&args.dir)),
                r.files,
                r.bytes,
                names.join(", ")
            );
            Ok(Status::Ok)
        }
        Err(e) => usage_or_fail(e),
    }
}

fn where_(bag: &std::path::Path, p: &Problem) -> String {
    let file = bag.join(fixity::pathtext::bytes_path(&p.file));
    match p.line {
        Some(l) => format!("{}: {l}", quote_env(path_bytes(&file))),
        None => quote_env(path_bytes(&file)),
    }
}

fn check(args: BagCheckArgs) -> anyhow::Result<Status> {
    let cfg = engine_config(Some(&args.dir), &args.read);
    let report = match bagit::check(&args.dir, args.fast, args.follow, &cfg) {
        Ok(r) => r,
        Err(e) => return usage_or_fail(e),
    };
    let bag = quote_env(path_bytes(&args.dir));
    let mut out = std::io::stdout().lock();
    let found = report
        .problems
        .iter()
        .map(|p| (p, "problem"))
        .chain(report.warnings.iter().map(|p| (p, "warning")));
    for (p, severity) in found {
        if args.json {
            let obj = json!({
                "file": String::from_utf8_lossy(&p.file),
                "line": p.line,
                "severity": severity,
                "message": p.message,
            });
            writeln!(out, "{obj}")?;
        } else if severity == "warning" {
            ui::error(&format!("{}: warning: {}", where_(&args.dir, p), p.message));
        } else {
            ui::error(&format!("{}: {}", where_(&args.dir, p), p.message));
        }
    }
    let warned = report.warnings.len();
    let valid = report.valid() && !(args.strict && warned > 0);
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    if args.json {
        let names: Vec<&str> = report.algorithms.iter().map(|a| a.name).collect();
        let to_fetch: Vec<serde_json::Value> = report
            .to_fetch
            .iter()
            .map(|(path, url)| json!({"path": String::from_utf8_lossy(path), "url": url}))
            .collect();
        let obj = json!({
            "bag": String::from_utf8_lossy(path_bytes(&args.dir)),
            "valid": valid,
            "fast": args.fast,
            "strict": args.strict,
            "payload_files": report.payload_files,
            "payload_bytes": report.payload_bytes,
            "verified": report.verified,
            "algorithms": names,
            "problems": report.problems.len(),
            "warnings": warned,
            "to_fetch": to_fetch,
        });
        writeln!(out, "{obj}")?;
    } else if !valid {
        let mut why = vec![plural(report.problems.len(), "problem")];
        if warned > 0 {
            let strict = if args.strict { " (--strict)" } else { "" };
            why.push(format!("{}{strict}", plural(warned, "warning")));
        }
        if !report.to_fetch.is_empty() {
            why.push(format!("{} to fetch", plural(report.to_fetch.len(), "file")));
        }
        writeln!(out, "{bag}: invalid ({})", why.join(", "))?;
    } else if args.fast {
        writeln!(
            out,
            "{bag}: valid (fast: Payload-Oxum {}.{} matches; no file was read{})",
            report.payload_bytes,
            report.payload_files,
            if warned > 0 { format!("; {}", plural(warned, "warning")) } else { String::new() }
        )?;
    } else {
        let names: Vec<&str> = report.algorithms.iter().map(|a| a.name).collect();
        writeln!(
            out,
            "{bag}: valid ({} payload files, {} bytes, {} files verified with {}{})",
            report.payload_files,
            report.payload_bytes,
            report.verified,
            names.join(", "),
            if warned > 0 { format!("; {}", plural(warned, "warning")) } else { String::new() }
        )?;
    }
    out.flush()?;
    Ok(if valid { Status::Ok } else { Status::Failed })
}
