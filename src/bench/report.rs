//! Writing benchmark results: an aligned text table, markdown, JSON, CSV, and an SVG bar
//! chart (throughput per tool and algorithm, with the read ceiling drawn as a line).

use super::algos::AlgoRow;
use super::tree::{Report, Row};
use crate::algo::Strength;
// The chart's text is escaped as the report page's (SVG is XML).
use crate::report::html::escape;
use std::fmt::Write as _;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// A markdown table with the header as a list.
    Markdown,
    /// One JSON document.
    Json,
    /// Comma-separated values, one row per measurement.
    Csv,
}

impl Format {
    /// Parses `table`, `markdown`, `json`, `csv`.
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "table" => Some(Format::Table),
            "markdown" | "md" => Some(Format::Markdown),
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }
}

const HEADERS: [&str; 10] = [
    "tool",
    "algorithm",
    "min s",
    "median s",
    "max s",
    "MB/s",
    "files/s",
    "manifest B",
    "bound",
    "digests",
];

fn cells(r: &Row) -> [String; 10] {
    [
        r.tool.clone(),
        if r.algorithm.is_empty() { "-".into() } else { r.algorithm.clone() },
        format!("{:.3}", r.seconds.min),
        format!("{:.3}", r.seconds.median),
        format!("{:.3}", r.seconds.max),
        format!("{:.0}", r.mbps),
        if r.files_per_s < 10.0 {
            format!("{:.2}", r.files_per_s)
        } else {
            format!("{:.0}", r.files_per_s)
        },
        r.manifest_bytes.map_or("-".into(), |b| b.to_string()),
        r.bound.map_or("-".into(), |b| b.label().to_string()),
        match (&r.agreement, r.tool.as_str()) {
            (Some(a), _) => a.verdict(),
            (None, "fixity") => "reference".into(),
            _ => "-".into(),
        },
    ]
}

/// The facts above the table, one per line.
fn header_lines(r: &Report) -> Vec<String> {
    let m = &r.machine;
    let mut v = vec![format!(
        "data: {} ({} files, {:.1} MB, file system {})",
        r.path,
        r.files,
        r.bytes as f64 / 1e6,
        r.fs_type.as_deref().unwrap_or("unknown")
    )];
    v.extend(r.storage.iter().map(|s| format!("storage: {s}")));
    v.extend([
        format!(
            "cpu: {} ({} cores; features: {})",
            m.cpu,
            m.cores,
            if m.features.is_empty() { "-".into() } else { m.features.join(" ") }
        ),
        format!(
            "load average: {} at start, {} at end; CPUs {} busy just before the start; kernel {}",
            m.load_start.map_or("?".into(), |l| format!("{l:.2}")),
            m.load_end.map_or("?".into(), |l| format!("{l:.2}")),
            m.busy_before.map_or("?".into(), |b| format!("{:.0}%", b * 100.0)),
            m.kernel
        ),
    ]);
    let runs = r.ceiling.seconds.runs;
    v.push(match (r.cache, r.eviction, r.eviction_verified) {
        ("cold", Some(how), Some(true)) => {
            format!("cache: cold ({how}; verified with mincore); {runs} runs per row")
        }
        ("cold", Some(how), _) => {
            format!("cache: cold requested ({how}) but NOT verified; {runs} runs per row")
        }
        _ => format!("cache: warm (one warm-up run, then {runs} timed runs per row)"),
    });
    v.push(format!(
        "read ceiling: {:.0} MB/s (median {:.3} s): every byte read with read(2), nothing hashed",
        r.ceiling.mbps, r.ceiling.seconds.median
    ));
    if !r.not_installed.is_empty() {
        v.push(format!("not installed: {}", r.not_installed.join(", ")));
    }
    for w in &r.warnings {
        v.push(format!("WARNING: {w}"));
    }
    v
}

/// Writes a tree report in `format`.
pub fn write_tree(r: &Report, format: Format) -> String {
    let mut rows: Vec<&Row> = vec![&r.ceiling];
    rows.extend(&r.rows);
    let mut out = String::new();
    match format {
        Format::Json => {
            out = serde_json::to_string_pretty(r).expect("serializable");
            out.push('\n');
        }
        Format::Csv => {
            out.push_str("tool,algorithm,min_s,median_s,max_s,runs,mb_per_s,files_per_s,manifest_bytes,bound,digests,command\n");
            for row in rows {
                let c = cells(row);
                let fields = [
                    c[0].clone(),
                    c[1].clone(),
                    format!("{}", row.seconds.min),
                    format!("{}", row.seconds.median),
                    format!("{}", row.seconds.max),
                    row.seconds.runs.to_string(),
                    format!("{:.1}", row.mbps),
                    format!("{:.1}", row.files_per_s),
                    c[7].clone(),
                    c[8].clone(),
                    c[9].clone(),
                    row.command.clone().unwrap_or_default(),
                ];
                let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
                out.push_str(&line.join(","));
                out.push('\n');
            }
        }
        Format::Markdown => {
            for l in header_lines(r) {
                let _ = writeln!(out, "- {l}");
            }
            out.push('\n');
            let _ = writeln!(out, "| {} |", HEADERS.join(" | "));
            let _ = writeln!(out, "|{}", "---|".repeat(HEADERS.len()));
            for row in rows {
                let c = cells(row);
                let c: Vec<String> = c.iter().map(|s| s.replace('|', "\\|")).collect();
                let _ = writeln!(out, "| {} |", c.join(" | "));
            }
        }
        Format::Table => {
            for l in header_lines(r) {
                let _ = writeln!(out, "{l}");
            }
            out.push('\n');
            let all: Vec<[String; 10]> = rows.iter().map(|r| cells(r)).collect();
            let mut width = HEADERS.map(str::len);
            for c in &all {
                for (w, s) in width.iter_mut().zip(c) {
                    *w = (*w).max(s.chars().count());
                }
            }
            let line = |c: &[String]| -> String {
                let parts: Vec<String> =
                    c.iter()
                        .zip(width)
                        .enumerate()
                        .map(|(i, (s, w))| {
                            if (2..8).contains(&i) {
                                format!("{s:>w$}")
                            } else {
                                format!("{s:<w$}")
                            }
                        })
                        .collect();
                parts.join("  ").trim_end().to_string()
            };
            let head: Vec<String> = HEADERS.iter().map(|s| s.to_string()).collect();
            let _ = writeln!(out, "{}", line(&head));
            for c in &all {
                let _ = writeln!(out, "{}", line(c));
            }
        }
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes the in-memory algorithm results in `format`.
pub fn write_algos(rows: &[AlgoRow], machine: &super::Machine, format: Format) -> String {
    let mut out = String::new();
    let size = |n: usize| -> String {
        match n {
            n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
            n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{}Mi", n >> 20),
            n if n >= 1000 && n % 1000 == 0 => format!("{}K", n / 1000),
            n if n >= 1024 && n % 1024 == 0 => format!("{}Ki", n >> 10),
            n => n.to_string(),
        }
    };
    match format {
        Format::Json => {
            let v = serde_json::json!({ "machine": machine, "rows": rows });
            out = serde_json::to_string_pretty(&v).expect("serializable");
            out.push('\n');
        }
        Format::Csv => {
            out.push_str("algorithm,size,threads,best_mb_per_s,median_mb_per_s,ns_per_call_min,ns_per_call_median,runs,kernel,simd\n");
            for r in rows {
                let _ = writeln!(
                    out,
                    "{},{},{},{:.1},{:.1},{:.0},{:.0},{},{},{}",
                    r.algorithm,
                    r.size,
                    r.threads,
                    r.best_mbps,
                    r.median_mbps,
                    r.per_call.min * 1e9,
                    r.per_call.median * 1e9,
                    r.per_call.runs,
                    csv_field(&r.kernel),
                    r.simd.unwrap_or("")
                );
            }
        }
        Format::Markdown | Format::Table => {
            let md = format == Format::Markdown;
            let _ = writeln!(
                out,
                "{}cpu: {} ({} cores)",
                if md { "- " } else { "" },
                machine.cpu,
                machine.cores
            );
            let _ = writeln!(
                out,
                "{}features dispatched at run time: {}",
                if md { "- " } else { "" },
                if machine.features.is_empty() { "-".into() } else { machine.features.join(" ") }
            );
            let _ = writeln!(
                out,
                "{}SIMD levels (fixity's kernels): {}; cap {}",
                if md { "- " } else { "" },
                machine.simd_levels.join(" "),
                machine.simd_cap
            );
            out.push('\n');
            let head = [
                "algorithm",
                "size",
                "threads",
                "best MB/s",
                "median MB/s",
                "ns/call (median)",
                "kernel",
            ];
            if md {
                let _ = writeln!(out, "| {} |\n|{}", head.join(" | "), "---|".repeat(head.len()));
            } else {
                let _ = writeln!(
                    out,
                    "{:<11} {:>6} {:>7} {:>10} {:>12} {:>16}  {}",
                    head[0], head[1], head[2], head[3], head[4], head[5], head[6]
                );
            }
            for r in rows {
                let kernel = match r.simd {
                    Some(level) => format!("{} (cap {level})", r.kernel),
                    None => r.kernel.clone(),
                };
                let c = [
                    r.algorithm.to_string(),
                    size(r.size),
                    r.threads.to_string(),
                    format!("{:.0}", r.best_mbps),
                    format!("{:.0}", r.median_mbps),
                    format!("{:.0}", r.per_call.median * 1e9),
                    kernel,
                ];
                if md {
                    let _ = writeln!(out, "| {} |", c.join(" | "));
                } else {
                    let _ = writeln!(
                        out,
                        "{:<11} {:>6} {:>7} {:>10} {:>12} {:>16}  {}",
                        c[0], c[1], c[2], c[3], c[4], c[5], c[6]
                    );
                }
            }
            let mut sampled: Vec<&str> = rows
                .iter()
                .filter(|r| {
                    crate::algo::lookup(r.algorithm)
                        .is_some_and(|a| a.strength == Strength::Sampled)
                })
                .map(|r| r.algorithm)
                .collect();
            sampled.dedup();
            for name in sampled {
                let _ = writeln!(
                    out,
                    "\n{}note: {name} samples a few KiB of each message (and its size) instead of \
                     reading it: its MB/s is the message size over the time taken, not a reading \
                     speed, and it is not a content hash",
                    if md { "- " } else { "" }
                );
            }
        }
    }
    out
}

/// An SVG bar chart of throughput (MB/s) per tool and algorithm, fixity's bars in one
/// colour and the peers' in another, with the read ceiling as a dashed vertical line.
pub fn chart_svg(r: &Report) -> String {
    let rows = &r.rows;
    let label_w = 260.0;
    let bar_w = 560.0;
    let row_h = 22.0;
    let top = 56.0;
    let height = top + row_h * rows.len().max(1) as f64 + 40.0;
    let width = label_w + bar_w + 90.0;
    let max = rows.iter().map(|r| r.mbps).fold(r.ceiling.mbps, f64::max).max(1.0);
    let x = |mbps: f64| label_w + bar_w * mbps / max;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12">"##
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="white"/>"##);
    let title = format!(
        "{} ({} files, {:.0} MB, {} cache): throughput, MB/s (median of {} runs)",
        r.path,
        r.files,
        r.bytes as f64 / 1e6,
        r.cache,
        r.ceiling.seconds.runs
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"##,
        escape(&title)
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="38" fill="#555">{}</text>"##,
        escape(&format!("{}, {} cores", r.machine.cpu, r.machine.cores))
    );
    for (i, row) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let label = format!("{} · {}", row.tool, row.algorithm);
        let fill = if row.tool == "fixity" { "#2b7bb9" } else { "#b0b0b0" };
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            label_w - 8.0,
            y + 15.0,
            escape(&label)
        );
        let _ = writeln!(
            s,
            r##"<rect x="{label_w:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{fill}"><title>{}</title></rect>"##,
            y + 3.0,
            (x(row.mbps) - label_w).max(0.5),
            row_h - 6.0,
            escape(&format!("{:.0} MB/s, median {:.3} s", row.mbps, row.seconds.median))
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}">{:.0}</text>"##,
            x(row.mbps) + 4.0,
            y + 15.0,
            row.mbps
        );
    }
    let cx = x(r.ceiling.mbps);
    let bottom = top + row_h * rows.len().max(1) as f64;
    let _ = writeln!(
        s,
        r##"<line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}" stroke="#d9342b" stroke-width="2" stroke-dasharray="6 4"/>"##,
        top - 4.0,
        bottom + 4.0
    );
    let _ = writeln!(
        s,
        r##"<text x="{cx:.1}" y="{:.1}" fill="#d9342b" text-anchor="middle">read ceiling {:.0} MB/s</text>"##,
        bottom + 20.0,
        r.ceiling.mbps
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::peers::Agreement;
    use crate::bench::{Bound, Machine, Stats};

    fn report() -> Report {
        let stats = |m: f64| Stats { min: m * 0.9, median: m, max: m * 1.2, runs: 3 };
        let row = |tool: &str, algo: &str, m: f64| Row {
            tool: tool.into(),
            algorithm: algo.into(),
            command: (tool != "fixity").then(|| format!("{tool} x, y")),
            seconds: stats(m),
            mbps: 100.0 / m,
            files_per_s: 10.0 / m,
            manifest_bytes: Some(77),
            bound: Some(Bound::classify(m, 0.5)),
            agreement: (tool != "fixity").then(|| Agreement {
                matched: 10,
                mismatched: vec![],
                missing: 0,
            }),
        };
        let mut machine = Machine::probe();
        machine.cpu = "Test CPU <x>".into();
        Report {
            path: "D1".into(),
            fs_type: Some("ext4".into()),
            storage: vec!["/dev/vda: flash-like: many reads in flight (--storage ssd)".into()],
            files: 10,
            bytes: 100_000_000,
            cache: "warm",
            eviction: None,
            eviction_verified: None,
            machine,
            ceiling: Row {
                bound: None,
                agreement: None,
                manifest_bytes: None,
                ..row("read (ceiling)", "", 0.5)
            },
            rows: vec![row("fixity", "sha256", 1.0), row("sha256sum (xargs)", "sha256", 2.0)],
            not_installed: vec!["b3sum (xargs) (b3sum)".into()],
            warnings: vec![],
        }
    }

    #[test]
    fn table_and_markdown_hold_every_row_and_the_header() {
        let r = report();
        let t = write_tree(&r, Format::Table);
        assert!(t.contains("read ceiling: 200 MB/s"), "{t}");
        assert!(t.contains("not installed: b3sum (xargs) (b3sum)"));
        assert!(t.contains("cache: warm"));
        assert!(
            t.contains("\nstorage: /dev/vda: flash-like: many reads in flight (--storage ssd)\n")
        );
        let lines: Vec<&str> =
            t.lines().filter(|l| l.starts_with("fixity") || l.starts_with("sha256sum")).collect();
        assert_eq!(lines.len(), 2, "{t}");
        assert!(lines[0].contains("CPU-bound") && lines[0].contains("reference"));
        assert!(lines[1].contains("agrees"));
        let md = write_tree(&r, Format::Markdown);
        assert!(md.contains("| tool | algorithm | min s | median s | max s |"));
        assert!(md.contains("| fixity | sha256 | 0.900 | 1.000 | 1.200 | 100 | 10 | 77 | CPU-bound | reference |"), "{md}");
    }

    #[test]
    fn json_and_csv_round_trip_the_numbers() {
        let r = report();
        let v: serde_json::Value = serde_json::from_str(&write_tree(&r, Format::Json)).unwrap();
        assert_eq!(v["rows"][0]["seconds"]["median"], 1.0);
        assert_eq!(v["rows"][0]["bound"], "cpu");
        assert_eq!(v["ceiling"]["seconds"]["runs"], 3);
        let csv = write_tree(&r, Format::Csv);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 4, "header, ceiling, two rows");
        assert!(
            lines[3]
                .starts_with("sha256sum (xargs),sha256,1.8,2,2.4,3,50.0,5.0,77,CPU-bound,agrees,"),
            "{}",
            lines[3]
        );
        assert!(lines[3].ends_with("\"sha256sum (xargs) x, y\""), "quoted: {}", lines[3]);
    }

    #[test]
    fn chart_is_well_formed_svg_with_a_ceiling_line() {
        let svg = chart_svg(&report());
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("Test CPU &lt;x&gt;"), "escaped");
        assert!(svg.contains("read ceiling 200 MB/s"));
        assert_eq!(svg.matches("<rect ").count(), 3, "background and two bars");
        // Every element opened is closed: a small well-formedness check.
        let opens = svg.matches("<text").count()
            + svg.matches("<rect").count()
            + svg.matches("<svg").count();
        let closes = svg.matches("</text>").count()
            + svg.matches("</rect>").count()
            + svg.matches("/>").count()
            + svg.matches("</svg>").count();
        assert!(closes >= opens, "{opens} opened, {closes} closed");
    }
}
