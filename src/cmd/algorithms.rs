//! `fixity algorithms`: the registry as a table (or JSON).

use super::Status;
use crate::cli::AlgorithmsArgs;
use fixity::algo::{ALGORITHMS, Algorithm};
use std::io::Write;
use std::time::Instant;

/// Single-thread in-memory throughput of `a` on 1 MiB (best of two), MB/s.
fn speed(a: &Algorithm, data: &[u8]) -> f64 {
    (0..2)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(a.digest(data));
            data.len() as f64 / t.elapsed().as_secs_f64().max(1e-9) / 1e6
        })
        .fold(0.0, f64::max)
}

/// A coarse class for the measured speed.
fn speed_class(mbps: f64) -> &'static str {
    match mbps {
        s if s >= 5000.0 => "very fast",
        s if s >= 1000.0 => "fast",
        s if s >= 300.0 => "moderate",
        _ => "slow",
    }
}

/// The digest's bits: an S3 ETag's are its MD5's (its other 4 bytes hold the part count).
fn bits(a: &fixity::algo::Algorithm) -> usize {
    if a.encoding == fixity::digest::Encoding::S3Etag { 128 } else { a.len * 8 }
}

pub fn run(args: AlgorithmsArgs) -> anyhow::Result<Status> {
    let mut out = std::io::stdout().lock();
    let data: Vec<u8> =
        (0..1u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let speeds: Vec<Option<f64>> =
        ALGORITHMS.iter().map(|a| (!args.no_speed).then(|| speed(a, &data))).collect();
    if args.json {
        for (a, s) in ALGORITHMS.iter().zip(&speeds) {
            let v = serde_json::json!({
                "name": a.name,
                "bits": bits(a),
                "tag": a.tag,
                "aliases": a.aliases,
                "strength": a.strength.label(),
                "multithreaded": a.multithreaded,
                "splits_into_ranges": a.combine.is_some(),
                "mb_per_s_one_thread": s.map(|s| s.round()),
                "speed_class": s.map(speed_class),
            });
            writeln!(out, "{v}")?;
        }
        return Ok(Status::Ok);
    }
    let nw = ALGORITHMS.iter().map(|a| a.name.len()).max().unwrap_or(4);
    let tw = ALGORITHMS.iter().map(|a| a.tag.len()).max().unwrap_or(3);
    let speed_head =
        if args.no_speed { String::new() } else { format!("{:<24}", "speed (1 thread)") };
    writeln!(
        out,
        "{:<nw$} {:>5}  {:<tw$}  {:<28} {:<7}{speed_head}aliases",
        "name", "bits", "tag", "strength", "splits"
    )?;
    for (a, s) in ALGORITHMS.iter().zip(&speeds) {
        let speed = match s {
            Some(s) => format!("{:<24}", format!("{} ({:.0} MB/s)", speed_class(*s), s)),
            None => String::new(),
        };
        writeln!(
            out,
            "{:<nw$} {:>5}  {:<tw$}  {:<28} {:<7}{speed}{}",
            a.name,
            bits(a),
            a.tag,
            a.strength.label(),
            if a.combine.is_some() { "yes" } else { "-" },
            a.aliases.join(", ")
        )?;
    }
    Ok(Status::Ok)
}
