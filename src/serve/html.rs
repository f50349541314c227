//! The pieces every page is made of: escaping, paths in URLs (raw bytes, so names that
//! are not UTF-8 survive), the frame of a page, numbers and times for people, and charts
//! drawn as SVG on the server (no script needed to read them).

use super::session::Who;
use std::fmt::Write as _;

/// Text made safe inside HTML (element content and quoted attribute values).
pub use fixity::report::html::escape as esc;

/// A path's raw bytes percent-encoded for a URL's query (unreserved bytes and `/` kept).
pub fn enc(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The raw bytes of a percent-encoded query value (`+` a space, as forms send it).
pub fn dec(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// The value of `key` in a raw query string, decoded to bytes.
pub fn query_bytes(query: Option<&str>, key: &str) -> Option<Vec<u8>> {
    query?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == key).then(|| dec(v))
    })
}

/// A time (ms since the epoch) as `2026-11-29 05:28:15 UTC`, or `never` for none or 0.
pub fn when(ms: Option<i64>) -> String {
    match ms {
        Some(t) if t > 0 => format!("{} UTC", fixity::clock::format_time(t)),
        _ => "never".into(),
    }
}

/// A time and how long ago it was: `2026-11-29 05:28 UTC (3.1 days ago)`.
pub fn when_ago(ms: Option<i64>, now: i64) -> String {
    match ms {
        Some(t) if t > 0 => {
            format!("{} ({} ago)", when(Some(t)), fixity::monitor::age_text(now - t))
        }
        _ => "never".into(),
    }
}

/// A share as a percentage with one decimal.
pub fn pct(n: u64, of: u64) -> String {
    if of == 0 { "100.0%".into() } else { format!("{:.1}%", n as f64 * 100.0 / of as f64) }
}

/// The CSS class of a Nagios state word.
pub fn state_class(word: &str) -> &'static str {
    match word {
        "OK" => "ok",
        "WARNING" => "warn",
        "CRITICAL" => "crit",
        _ => "unknown",
    }
}

/// A whole page: `title`, the user's bar, `body`; `live` subscribes the page to the
/// server's events (the page's script reloads its main part when the data changes).
pub fn page(title: &str, who: Option<&Who>, read_only: bool, body: &str) -> String {
    let mut bar = String::from(r#"<a href="/">Fleet</a> <a href="/actions">Actions</a>"#);
    if let Some(w) = who {
        let name = w.user.as_deref().unwrap_or("local");
        let _ = write!(
            bar,
            r#" <span class="who">{} ({}{})</span>"#,
            esc(name),
            w.role.word(),
            if read_only { ", read-only server" } else { "" }
        );
        if w.user.is_some() {
            let _ = write!(
                bar,
                r#" <form class="inline" method="post" action="/logout"><input type="hidden" name="csrf" value="{}"><button>Log out</button></form>"#,
                esc(&w.csrf)
            );
        }
    }
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} - fixity</title><link rel="stylesheet" href="/assets/fixity.css"><script src="/assets/fixity.js" defer></script></head>
<body><header><b>fixity</b> {bar}<span id="live" class="live"></span></header>
<main id="main">
{body}
</main></body></html>
"#,
        title = esc(title)
    )
}

/// A hidden CSRF field for a form.
pub fn csrf_field(who: &Who) -> String {
    format!(r#"<input type="hidden" name="csrf" value="{}">"#, esc(&who.csrf))
}

/// A bar chart of `points` (x: time in ms, y: value) as SVG, with its y axis labelled by
/// `label` (the largest value in its unit).
pub fn bars(title: &str, points: &[(i64, f64)], label: impl Fn(f64) -> String) -> String {
    let (w, h, pad) = (640.0, 160.0, 30.0);
    let mut svg = format!(
        r#"<figure><figcaption>{}</figcaption><svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{}">"#,
        esc(title),
        esc(title)
    );
    if points.is_empty() {
        svg.push_str(r#"<text x="10" y="80">no runs yet</text></svg></figure>"#);
        return svg;
    }
    let top = points.iter().map(|p| p.1).fold(0.0f64, f64::max).max(f64::MIN_POSITIVE);
    let (t0, t1) = (points[0].0, points[points.len() - 1].0.max(points[0].0 + 1));
    let slot = (w - 2.0 * pad) / points.len() as f64;
    for (i, (t, v)) in points.iter().enumerate() {
        let bh = (v / top) * (h - 2.0 * pad);
        let x = pad + i as f64 * slot;
        let _ = write!(
            svg,
            r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{bh:.1}"><title>{}: {}</title></rect>"#,
            h - pad - bh,
            (slot * 0.8).max(1.0),
            esc(&when(Some(*t))),
            esc(&label(*v))
        );
    }
    let _ = write!(
        svg,
        r#"<text x="{pad}" y="14">{}</text><text x="{pad}" y="{:.0}">{}</text><text x="{:.0}" y="{:.0}" text-anchor="end">{}</text></svg></figure>"#,
        esc(&label(top)),
        h - 8.0,
        esc(&when(Some(t0))),
        w - pad,
        h - 8.0,
        esc(&when(Some(t1)))
    );
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn raw_paths_round_trip_through_urls() {
        for p in [&b"a/b c.jpg"[..], b"caf\xc3\xa9/x", b"\xff\xfe%+&=#?", b"new\nline", b""] {
            let e = enc(p);
            assert!(e.bytes().all(|b| b.is_ascii_graphic() && !b"&=#?+ ".contains(&b)), "{e}");
            assert_eq!(dec(&e), p);
            assert_eq!(query_bytes(Some(&format!("x=1&p={e}")), "p").unwrap(), p);
        }
        assert_eq!(dec("a+b%2"), b"a b%2");
        assert_eq!(dec("%zz"), b"%zz");
    }

    #[test]
    fn a_chart_draws_a_bar_per_point() {
        let svg = bars("read", &[(1_000, 5.0), (2_000, 10.0)], |v| format!("{v} B"));
        assert_eq!(svg.matches("<rect").count(), 2);
        assert!(svg.contains("10 B"));
        assert!(bars("read", &[], |v| v.to_string()).contains("no runs yet"));
    }
}
