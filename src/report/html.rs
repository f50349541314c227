//! The report as one self-contained HTML page: inline CSS, the runs chart as inline SVG,
//! no script, and a Content-Security-Policy that lets the page load nothing at all. Every
//! text that comes from the catalog (paths, notes, the catalog's name) is escaped.

use super::{Finding, Report, Run};
use crate::clock::format_time;
use crate::units::human_bytes;
use std::io::{self, Write};

/// Escapes `&`, `<`, `>`, `"` and `'` for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto;
  max-width: 1100px; padding: 0 1em; color: #1b1f24; background: #fff; }
h1 { font-size: 1.5em; margin-bottom: .2em; word-break: break-all; }
h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #d0d7de; padding-bottom: .2em; }
.sub { color: #57606a; margin-top: 0; }
table { border-collapse: collapse; width: 100%; font-size: .9em; }
th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid #eaeef2; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
table.facts th { width: 14em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.path { font-family: ui-monospace, monospace; word-break: break-all; }
.digest { font-family: ui-monospace, monospace; font-size: .8em; word-break: break-all; max-width: 12em; }
table.findings td.path { min-width: 14em; }
td.when { white-space: nowrap; font-size: .9em; }
.enc { font-size: .75em; color: #57606a; }
.badge { display: inline-block; padding: .1em .6em; border-radius: 1em; font-weight: 600;
  font-size: .85em; color: #fff; }
.corrupt { background: #cf222e; } .unreadable { background: #bc4c00; } .missing { background: #8250df; }
.clean { background: #1a7f37; }
.cards { display: flex; gap: 1em; flex-wrap: wrap; margin: 1em 0; }
.card { border: 1px solid #d0d7de; border-radius: 8px; padding: .8em 1.2em; min-width: 9em; }
.card .n { font-size: 1.6em; font-weight: 600; }
.card .l { color: #57606a; font-size: .85em; }
.bar { background: #eaeef2; border-radius: 4px; height: .9em; width: 100%; min-width: 12em; }
.bar div { background: #0969da; height: 100%; border-radius: 4px; }
svg text { font-family: system-ui, sans-serif; font-size: 11px; fill: #57606a; }
svg .bytes { fill: #0969da; } svg .findings { fill: #cf222e; stroke: #fff; stroke-width: 1; }
svg .findings-line { fill: none; stroke: #cf222e; stroke-width: 1.5; }
svg .axis { stroke: #8c959f; stroke-width: 1; } svg .grid { stroke: #eaeef2; stroke-width: 1; }
.legend span { display: inline-block; width: .8em; height: .8em; margin: 0 .3em 0 1em; }
footer { margin-top: 3em; color: #57606a; font-size: .8em; }
";

fn time(ms: i64) -> String {
    format!("{} UTC", format_time(ms))
}

fn opt_time(ms: Option<i64>) -> String {
    ms.map_or_else(|| "unknown".to_string(), time)
}

fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// Writes the report as an HTML page.
pub fn write_html(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let tree = escape(&r.tree.text);
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>fixity report: {tree}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>fixity report: <span class=\"path\">{tree}</span>{}</h1>\n\
         <p class=\"sub\">Made {} from the catalog; the tree itself was not read.</p>\n",
        encoding_note(r.tree.encoding),
        time(r.generated)
    )?;
    state(r, out)?;
    coverage(r, out)?;
    findings(r, out)?;
    runs(r, out)?;
    writeln!(
        out,
        "<footer>fixity {}: what the catalog recorded at each run. Times in UTC.</footer>\n\
         </body>\n</html>",
        env!("CARGO_PKG_VERSION")
    )
}

fn encoding_note(encoding: &str) -> &'static str {
    if encoding == "percent" { " <span class=\"enc\">(percent-encoded)</span>" } else { "" }
}

fn state(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let s = &r.standing;
    let badge = |class: &str, n: u64| {
        let class = if n == 0 { "clean" } else { class };
        format!("<span class=\"badge {class}\">{n}</span>")
    };
    writeln!(out, "<h2>State</h2>\n<div class=\"cards\">")?;
    let card = |n: String, label: &str| {
        format!(
            "<div class=\"card\"><div class=\"n\">{n}</div><div class=\"l\">{label}</div></div>"
        )
    };
    writeln!(out, "{}", card(r.files.to_string(), "files"))?;
    writeln!(out, "{}", card(escape(&human_bytes(r.bytes)), "recorded size"))?;
    writeln!(out, "{}", card(s.total().to_string(), "standing findings"))?;
    let age = r.last_complete_pass_age_days.map_or("never".to_string(), |d| format!("{d:.1} days"));
    writeln!(out, "{}", card(age, "since the last complete pass"))?;
    writeln!(out, "</div>\n<table class=\"facts\">")?;
    let mut row = |k: &str, v: String| writeln!(out, "<tr><th>{k}</th><td>{v}</td></tr>");
    row("Tree", format!("<span class=\"path\">{}</span>", escape(&r.tree.text)))?;
    if let Some(h) = &r.host {
        row("Host", escape(h))?;
    }
    row("Catalog", format!("<span class=\"path\">{}</span>", escape(&r.catalog)))?;
    row("Algorithm", escape(r.algorithm))?;
    row("Files", format!("{} present ({}), {} missing", r.files, human_bytes(r.bytes), r.missing))?;
    row(
        "Last complete pass",
        match (r.last_complete_pass, r.last_complete_pass_age_days) {
            (Some(t), Some(d)) => format!("{} ({d:.1} days ago)", time(t)),
            _ => "none yet".to_string(),
        },
    )?;
    row(
        "Standing findings",
        format!(
            "corrupt {}, unreadable {}, missing {}",
            badge("corrupt", s.corrupt),
            badge("unreadable", s.unreadable),
            badge("missing", s.missing)
        ),
    )?;
    writeln!(out, "</table>")
}

fn bar(share: f64) -> String {
    format!(
        "<div class=\"bar\"><div style=\"width:{:.1}%\"></div></div>",
        share.clamp(0.0, 1.0) * 100.0
    )
}

fn coverage(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.coverage;
    writeln!(out, "<h2>Coverage</h2>\n<table class=\"coverage\">")?;
    writeln!(
        out,
        "<tr><th>Verified</th><th class=\"num\">files</th><th class=\"num\">share</th><th></th></tr>"
    )?;
    let pass = match c.pass {
        "in progress" => format!(
            "in the pass under way (since {}; {} files ({}) left)",
            opt_time(c.pass_started),
            c.pass_files_left,
            human_bytes(c.pass_bytes_left)
        ),
        "completed" => "in the last pass (complete; none under way)".to_string(),
        _ => "in a verification pass (none yet)".to_string(),
    };
    writeln!(
        out,
        "<tr class=\"pass\"><td>{pass}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
        c.pass_files_done,
        percent(c.pass_share),
        bar(c.pass_share)
    )?;
    for w in &c.verified_within {
        let days = if w.days == 1 { "day".to_string() } else { format!("{} days", w.days) };
        writeln!(
            out,
            "<tr class=\"within\"><td>in the last {days}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            w.files,
            percent(w.share),
            bar(w.share)
        )?;
    }
    writeln!(out, "</table>")
}

fn findings(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<h2>Findings</h2>")?;
    if r.findings.is_empty() {
        return writeln!(
            out,
            "<p>No standing findings: every recorded file was as recorded when last looked at.</p>"
        );
    }
    writeln!(
        out,
        "<table class=\"findings\" id=\"findings\">\n<tr><th>Class</th><th>Path</th><th>First found</th>\
         <th>Last seen</th><th>Last good</th><th>Recorded digest</th><th>Current digest</th><th>Note</th></tr>"
    )?;
    for f in &r.findings {
        finding(f, out)?;
    }
    writeln!(out, "</table>")?;
    if r.findings_not_listed > 0 {
        writeln!(
            out,
            "<p>{} more findings are not listed here (see --max-findings).</p>",
            r.findings_not_listed
        )?;
    }
    Ok(())
}

fn finding(f: &Finding, out: &mut dyn Write) -> io::Result<()> {
    let digest = |d: &Option<String>| d.as_deref().map_or("-".to_string(), escape);
    writeln!(
        out,
        "<tr class=\"finding\"><td><span class=\"badge {c}\">{c}</span></td>\
         <td class=\"path\">{}{}</td><td class=\"when\">{}</td><td class=\"when\">{}</td><td class=\"when\">{}</td>\
         <td class=\"digest\">{}</td><td class=\"digest\">{}</td><td>{}</td></tr>",
        escape(&f.path.text),
        encoding_note(f.path.encoding),
        opt_time(f.first_found),
        time(f.last_seen),
        f.last_good.map_or("never".to_string(), time),
        escape(&f.recorded_digest),
        digest(&f.current_digest),
        f.note.as_deref().map_or(String::new(), escape),
        c = f.class,
    )
}

fn runs(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<h2>Runs</h2>")?;
    if r.runs.is_empty() {
        return writeln!(out, "<p>No runs recorded.</p>");
    }
    writeln!(
        out,
        "<p class=\"legend\"><span class=\"bytes\" style=\"background:#0969da\"></span>bytes read and hashed \
         (left axis)<span style=\"background:#cf222e\"></span>findings reported (right axis)</p>"
    )?;
    chart(&r.runs, out)?;
    writeln!(
        out,
        "<table class=\"runs\">\n<tr><th>Started</th><th>Command</th><th>State</th>\
         <th class=\"num\">Files read</th><th class=\"num\">Bytes read</th><th class=\"num\">Findings</th></tr>"
    )?;
    for run in r.runs.iter().rev() {
        writeln!(
            out,
            "<tr class=\"run\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            time(run.started),
            escape(&run.command),
            run.state,
            run.files_read,
            human_bytes(run.bytes_read),
            run.findings
        )?;
    }
    writeln!(out, "</table>")
}

/// The runs chart: one bar (bytes read) and one point (findings) per run, oldest left
/// (the report's page, and the tree page of `fixity serve`).
pub fn chart(runs: &[Run], out: &mut dyn Write) -> io::Result<()> {
    let (w, h) = (1000.0, 280.0);
    let (left, right, top, bottom) = (80.0, 50.0, 15.0, 45.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    // A multiple of 4, so that each quarter line is a whole number of bytes.
    let max_bytes = runs.iter().map(|r| r.bytes_read).max().unwrap_or(0).max(1).div_ceil(4) * 4;
    let max_bytes = max_bytes as f64;
    let max_found = runs.iter().map(|r| r.findings).max().unwrap_or(0).max(1) as f64;
    let slot = pw / runs.len() as f64;
    let x = |i: usize| left + slot * (i as f64 + 0.5);
    let base = top + ph;
    writeln!(
        out,
        "<svg class=\"chart\" role=\"img\" aria-label=\"bytes read and findings per run\" \
         width=\"100%\" viewBox=\"0 0 {w} {h}\" preserveAspectRatio=\"xMidYMid meet\">"
    )?;
    for k in 0..=4 {
        let y = base - ph * k as f64 / 4.0;
        writeln!(
            out,
            "<line class=\"grid\" x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>",
            left + pw
        )?;
        let bytes = human_bytes((max_bytes * k as f64 / 4.0) as u64);
        writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + 4.0,
            escape(&bytes)
        )?;
        let found = max_found * k as f64 / 4.0;
        let found = if max_found < 4.0 && found.fract() != 0.0 {
            String::new()
        } else {
            format!("{found:.0}")
        };
        writeln!(out, "<text x=\"{:.1}\" y=\"{:.1}\">{found}</text>", left + pw + 6.0, y + 4.0)?;
    }
    writeln!(
        out,
        "<line class=\"axis\" x1=\"{left}\" y1=\"{base:.1}\" x2=\"{:.1}\" y2=\"{base:.1}\"/>",
        left + pw
    )?;
    let bar_w = (slot * 0.6).max(1.0);
    for (i, r) in runs.iter().enumerate() {
        let bh = ph * r.bytes_read as f64 / max_bytes;
        writeln!(
            out,
            "<rect class=\"bytes\" x=\"{:.1}\" y=\"{:.1}\" width=\"{bar_w:.1}\" height=\"{bh:.1}\">\
             <title>{} {}: {} read, {} files, {} findings ({})</title></rect>",
            x(i) - bar_w / 2.0,
            base - bh,
            escape(&r.command),
            time(r.started),
            human_bytes(r.bytes_read),
            r.files_read,
            r.findings,
            r.state
        )?;
    }
    let fy = |r: &Run| base - ph * r.findings as f64 / max_found;
    let points: Vec<String> =
        runs.iter().enumerate().map(|(i, r)| format!("{:.1},{:.1}", x(i), fy(r))).collect();
    writeln!(out, "<polyline class=\"findings-line\" points=\"{}\"/>", points.join(" "))?;
    for (i, r) in runs.iter().enumerate() {
        writeln!(
            out,
            "<circle class=\"findings\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\"><title>{} {}: {} findings</title></circle>",
            x(i),
            fy(r),
            escape(&r.command),
            time(r.started),
            r.findings
        )?;
    }
    // Dates under the axis: the first and last run, and a few between.
    let every = runs.len().div_ceil(6).max(1);
    for (i, r) in runs.iter().enumerate() {
        if i % every == 0 || i + 1 == runs.len() {
            let day = format_time(r.started);
            writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                x(i),
                base + 16.0,
                escape(&day[..16.min(day.len())])
            )?;
        }
    }
    writeln!(out, "</svg>")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(i: u64) -> Run {
        Run {
            command: "verify".into(),
            started: 1_700_000_000_000 + i as i64 * 86_400_000,
            finished: None,
            state: "interrupted",
            files_read: i,
            bytes_read: i * 1000,
            seconds: 1.0,
            findings: i % 3,
            counts: Default::default(),
            by: None,
        }
    }

    #[test]
    fn the_chart_has_a_bar_and_a_point_per_run_and_labels_that_fit() {
        for n in [1u64, 2, 50] {
            let runs: Vec<Run> = (0..n).map(run).collect();
            let mut out = Vec::new();
            chart(&runs, &mut out).unwrap();
            let svg = String::from_utf8(out).unwrap();
            assert_eq!(svg.matches("<rect class=\"bytes\"").count(), n as usize);
            assert_eq!(svg.matches("<circle class=\"findings\"").count(), n as usize);
            assert!(svg.matches("text-anchor=\"middle\"").count() <= 7, "dates thinned");
            assert!(!svg.contains("NaN") && !svg.contains("inf"));
        }
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<script>alert('x' & \"y\")</script>"),
            "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;"
        );
    }
}
