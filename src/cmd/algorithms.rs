//! `fixity algorithms`: the registry as a table (or JSON).

use super::Status;
use crate::cli::AlgorithmsArgs;
use fixity::algo::ALGORITHMS;
use std::io::Write;

pub fn run(args: AlgorithmsArgs) -> anyhow::Result<Status> {
    let mut out = std::io::stdout().lock();
    if args.json {
        for a in ALGORITHMS {
            let v = serde_json::json!({
                "name": a.name,
                "bits": a.len * 8,
                "tag": a.tag,
                "aliases": a.aliases,
                "strength": a.strength.label(),
                "multithreaded": a.multithreaded,
            });
            writeln!(out, "{v}")?;
        }
        return Ok(Status::Ok);
    }
    let nw = ALGORITHMS.iter().map(|a| a.name.len()).max().unwrap_or(4);
    let tw = ALGORITHMS.iter().map(|a| a.tag.len()).max().unwrap_or(3);
    writeln!(out, "{:<nw$} {:>5}  {:<tw$}  {:<27} aliases", "name", "bits", "tag", "strength")?;
    for a in ALGORITHMS {
        writeln!(
            out,
            "{:<nw$} {:>5}  {:<tw$}  {:<27} {}",
            a.name,
            a.len * 8,
            a.tag,
            a.strength.label(),
            a.aliases.join(", ")
        )?;
    }
    Ok(Status::Ok)
}
