//! `fixity bench algorithms` and `fixity bench tree`: run the library's benchmarks, show
//! progress on a terminal, write the report (and the chart).

use super::{Status, engine_config};
use crate::cli::{BenchAlgorithmsArgs, BenchCommand, BenchTreeArgs};
use anyhow::{Context, bail};
use fixity::algo::{self, ALGORITHMS, Algorithm, Strength};
use fixity::bench::report::{self, Format};
use fixity::bench::{Machine, algos, lanes, tree};
use fixity::output::AtomicFile;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::simd;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::time::Duration;

pub fn run(cmd: BenchCommand) -> anyhow::Result<Status> {
    match cmd {
        BenchCommand::Algorithms(a) => run_algorithms(a),
        BenchCommand::Tree(a) => run_tree(a),
    }
}

fn format_of(s: &str) -> anyhow::Result<Format> {
    Format::parse(s).with_context(|| format!("unknown format {s:?} (table, markdown, json, csv)"))
}

/// A spinner with a message on a terminal; nothing otherwise.
fn spinner() -> Option<ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(8));
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("valid template"),
        );
        bar.enable_steady_tick(Duration::from_millis(125));
        bar
    })
}

fn run_algorithms(args: BenchAlgorithmsArgs) -> anyhow::Result<Status> {
    let format = format_of(&args.format)?;
    // `par2` in the list (or no list): also the row of making recovery data.
    let par2 = args
        .algorithm
        .as_deref()
        .is_none_or(|l| l.split(',').any(|a| a.trim().eq_ignore_ascii_case("par2")));
    let others = args.algorithm.as_deref().map(|l| {
        l.split(',')
            .filter(|a| !a.trim().eq_ignore_ascii_case("par2"))
            .collect::<Vec<_>>()
            .join(",")
    });
    let list: Vec<&'static Algorithm> = match &others {
        Some(l) if l.is_empty() => Vec::new(),
        Some(l) => algo::parse_list(l).map_err(anyhow::Error::msg)?,
        // A sampling change detector reads a few KiB whatever the size: its figure is not
        // a reading speed, so it is measured only when asked for.
        None => ALGORITHMS.iter().filter(|a| a.strength != Strength::Sampled).collect(),
    };
    let sizes = algos::parse_sizes(&args.sizes).map_err(anyhow::Error::msg)?;
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let mut machine = Machine::probe();
    let bar = spinner();
    let mut show = |r: &algos::AlgoRow| {
        if let Some(b) = &bar {
            b.set_message(format!(
                "{} {} B x{} thread(s): {:.0} MB/s",
                r.algorithm, r.size, r.threads, r.median_mbps
            ));
        }
    };
    let levels: Vec<Option<simd::Level>> = match args.levels.as_deref() {
        None => vec![None],
        Some("all") => simd::available().into_iter().map(Some).collect(),
        Some(list) => list
            .split(',')
            .map(|l| simd::checked(l).map(Some))
            .collect::<Result<_, _>>()
            .map_err(|e| anyhow::anyhow!("--levels: {e}"))?,
    };
    let mut rows = algos::run(&list, &sizes, args.threads, args.runs, &mut show);
    for level in levels {
        let mut at_level = || {
            let mut r = lanes::rows(&list, &sizes, args.runs, level, &mut show);
            if par2 {
                r.extend(algos::par2_rows(&sizes, args.runs, level, &mut show));
            }
            r
        };
        rows.extend(match level {
            Some(l) => simd::with_cap(l, at_level).map_err(anyhow::Error::msg)?,
            None => at_level(),
        });
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    machine.finish();
    std::io::stdout().lock().write_all(report::write_algos(&rows, &machine, format).as_bytes())?;
    if let Some(w) = machine.load_warning() {
        crate::ui::error(&format!("warning: {w}"));
    }
    Ok(Status::Ok)
}

fn run_tree(args: BenchTreeArgs) -> anyhow::Result<Status> {
    let format = format_of(&args.format)?;
    let list: Vec<&'static Algorithm> = algo::parse_list(
        args.algorithm.as_deref().unwrap_or("md5,sha1,sha256,blake2b,blake3,xxh3,crc32"),
    )
    .map_err(anyhow::Error::msg)?;
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    if !args.path.exists() {
        bail!("{}: No such file or directory", quote_env(path_bytes(&args.path)));
    }
    let engine = engine_config(Some(&args.path), &args.read);
    let opts = tree::Options {
        algos: list,
        runs: args.runs,
        cold: args.cold,
        compare: args.compare,
        engine,
    };
    let bar = spinner();
    let report = tree::run(&args.path, &opts, &mut |ev| {
        let Some(b) = &bar else { return };
        b.set_message(match ev {
            tree::Event::Start(tool, algo) => format!("first run: {tool} {algo}"),
            tree::Event::Timing(tool, algo, round, rounds) => {
                format!("round {round}/{rounds}: {tool} {algo}")
            }
        });
    })
    .with_context(|| format!("benchmark of {} failed", quote_env(path_bytes(&args.path))))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    std::io::stdout().lock().write_all(report::write_tree(&report, format).as_bytes())?;
    if let Some(chart) = &args.chart {
        let failed = || super::write_failed(Some(chart));
        let mut f = AtomicFile::create(chart).with_context(failed)?;
        f.write_all(report::chart_svg(&report).as_bytes()).with_context(failed)?;
        f.commit().with_context(failed)?;
    }
    for w in &report.warnings {
        crate::ui::error(&format!("warning: {w}"));
    }
    let disagree = report.rows.iter().any(|r| r.agreement.as_ref().is_some_and(|a| a.disagrees()));
    Ok(if disagree { Status::Failed } else { Status::Ok })
}
