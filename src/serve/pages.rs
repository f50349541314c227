//! The pages, rendered on the server from the same data the API gives: readable without
//! a script (forms post, links link); the page's script only reloads the main part when
//! the server says the data changed.

use super::actions::Action;
use super::data::{FilePage, Fleet, Row, TreePage};
use super::html::{bars, csrf_field, enc, esc, pct, state_class, when, when_ago};
use super::session::Who;
use fixity::report::PathText;
use fixity::units::human_bytes;
use std::fmt::Write as _;

/// What decides which buttons a page shows.
pub struct Can<'a> {
    pub who: &'a Who,
    /// The user may act (operator, and the server is not read-only).
    pub act: bool,
}

fn path(p: &PathText) -> String {
    if p.encoding == "utf-8" {
        esc(&p.text)
    } else {
        format!("{} <small>(not UTF-8)</small>", esc(&p.text))
    }
}

fn badge(state: &str) -> String {
    format!(r#"<span class="badge {}">{}</span>"#, state_class(state), esc(state))
}

fn findings_cells(r: &Row) -> String {
    let cell = |n: u64, class: &str| {
        if n == 0 {
            "<td class=\"num\">0</td>".to_string()
        } else {
            format!(r#"<td class="num {class}">{n}</td>"#)
        }
    };
    cell(r.findings.corrupt, "crit")
        + &cell(r.findings.unreadable, "warn")
        + &cell(r.findings.missing, "warn")
}

fn now_cell(r: &Row) -> String {
    let mut out = String::new();
    if let Some(run) = &r.running {
        let _ = write!(out, r#"<span class="running">{}</span>"#, esc(run));
    }
    if let Some(p) = &r.pass {
        let done = r.files.saturating_sub(p.files_left);
        let _ = write!(
            out,
            r#" <progress max="{}" value="{done}"></progress> pass {} done, {} files ({}) left"#,
            r.files.max(1),
            pct(done, r.files),
            p.files_left,
            human_bytes(p.bytes_left)
        );
    }
    if let Some(t) = &r.trouble {
        let _ = write!(out, r#" <span class="trouble">{}</span>"#, esc(t));
    }
    out
}

/// The fleet page.
pub fn fleet(f: &Fleet, now: i64) -> String {
    let mut b = String::new();
    let hosts: std::collections::BTreeSet<&str> = f.trees.iter().map(|r| r.host.as_str()).collect();
    let _ = write!(
        b,
        "<h1>Fleet</h1><p>{} tree{} on {} host{}; coverage: files verified within {} day{}. Looked at {}.</p>",
        f.trees.len(),
        if f.trees.len() == 1 { "" } else { "s" },
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" },
        f.window_days,
        if f.window_days == 1 { "" } else { "s" },
        esc(&when(Some(f.looked_at)))
    );
    if let Some(t) = &f.trouble {
        let _ = write!(b, r#"<p class="trouble">{}</p>"#, esc(t));
    }
    b.push_str(
        r#"<table class="fleet"><thead><tr><th>Host</th><th>Tree</th><th>State</th><th>Files</th><th>Bytes</th><th>Last scan</th><th>Last full verify</th><th>Coverage</th><th>Oldest verification</th><th>Corrupt</th><th>Unreadable</th><th>Missing</th><th>Now</th></tr></thead><tbody>"#,
    );
    for r in &f.trees {
        let _ = write!(
            b,
            r#"<tr id="tree-{id}"><td>{host}</td><td><a href="/tree/{id}">{tree}</a></td><td title="{judge}">{badge}</td><td class="num">{files}</td><td class="num">{bytes}</td><td>{scan}</td><td>{pass}</td><td class="num" title="{cf} files within {cd} days">{cov}</td><td>{oldest}</td>{findings}<td>{now_cell}</td></tr>"#,
            id = r.id,
            host = esc(&r.host),
            tree = path(&r.tree),
            judge = esc(&r.judgement),
            badge = badge(r.state),
            files = r.files,
            bytes = human_bytes(r.bytes),
            scan = esc(&when_ago(r.last_scan, now)),
            pass = esc(&when_ago(r.last_complete_pass, now)),
            cf = r.coverage.files,
            cd = r.coverage.days,
            cov = pct_of(r.coverage.share),
            oldest = r
                .oldest_verified
                .as_ref()
                .map_or("-".into(), |o| esc(&when_ago(Some(o.time), now))),
            findings = findings_cells(r),
            now_cell = now_cell(r),
        );
    }
    b.push_str("</tbody></table>");
    b
}

fn pct_of(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// A form that starts an action.
fn action_form(
    who: &Who,
    tree: usize,
    kind: &str,
    file: Option<&[u8]>,
    label: &str,
    extra: &str,
) -> String {
    format!(
        r#"<form class="action" method="post" action="/tree/{tree}/action">{}<input type="hidden" name="kind" value="{kind}">{}{extra}<button name="go" value="{kind}">{}</button></form>"#,
        csrf_field(who),
        file.map_or(String::new(), |p| format!(
            r#"<input type="hidden" name="p" value="{}">"#,
            esc(&enc(p))
        )),
        esc(label)
    )
}

/// A tree's page.
pub fn tree(t: &TreePage, can: &Can<'_>, now: i64) -> String {
    let r = &t.row;
    let mut b = String::new();
    let _ = write!(
        b,
        r#"<h1>{} <small>{}</small></h1><p>{} <code>{}</code></p>"#,
        path(&r.tree),
        esc(&r.host),
        badge(r.state),
        esc(&r.judgement)
    );
    let now_text = now_cell(r);
    if !now_text.is_empty() {
        let _ = write!(b, r#"<p class="now">{now_text}</p>"#);
    }
    let _ = write!(
        b,
        "<dl><dt>Files</dt><dd>{} ({}), {} missing; {} algorithm</dd><dt>Last scan</dt><dd>{}</dd><dt>Last full verify</dt><dd>{}</dd><dt>Oldest verification</dt><dd>{}</dd>",
        r.files,
        human_bytes(r.bytes),
        r.findings.missing,
        esc(&r.algorithm),
        esc(&when_ago(r.last_scan, now)),
        esc(&when_ago(r.last_complete_pass, now)),
        r.oldest_verified.as_ref().map_or("-".into(), |o| format!(
            "{}: {}",
            esc(&when_ago(Some(o.time), now)),
            path(&o.path)
        )),
    );
    if r.imported_unverified > 0 {
        let _ = write!(
            b,
            "<dt>Imported</dt><dd>{} files not yet verified by fixity</dd>",
            r.imported_unverified
        );
    }
    b.push_str("</dl><h2>Coverage</h2><table><tr><th>Verified within</th><th>Files</th><th>Share</th></tr>");
    for c in &t.verified_within {
        let _ = write!(
            b,
            r#"<tr><td>{} day{}</td><td class="num">{}</td><td><meter min="0" max="1" value="{:.4}"></meter> {:.1}%</td></tr>"#,
            c.days,
            if c.days == 1 { "" } else { "s" },
            c.files,
            c.share,
            c.share * 100.0
        );
    }
    b.push_str("</table>");
    // Charts, oldest run first.
    b.push_str(&charts(t));
    if can.act && r.local {
        b.push_str("<h2>Act on the tree</h2><div class=\"actions\">");
        b.push_str(&action_form(can.who, r.id, "verify", None, "Verify the whole tree now", ""));
        b.push_str(&action_form(
            can.who,
            r.id,
            "repair",
            None,
            "Repair every finding",
            r#" <label>from a replica (optional) <input name="from" size="30" placeholder="/mnt/backup/tree"></label> "#,
        ));
        b.push_str("</div>");
    }
    // Findings.
    let _ = write!(
        b,
        "<h2>Findings</h2><p>{} corrupt, {} unreadable, {} missing.</p>",
        r.findings.corrupt, r.findings.unreadable, r.findings.missing
    );
    if let Some(tr) = &t.findings.trouble {
        let _ = write!(b, r#"<p class="trouble">cannot read the findings: {}</p>"#, esc(tr));
    }
    if !t.findings.items.is_empty() {
        b.push_str("<table class=\"findings\"><tr><th>File</th><th>Finding</th><th>Since</th><th>Last good</th><th>Last seen</th><th>Size</th></tr>");
        for item in &t.findings.items {
            let (f, raw) = (&item.finding, &item.raw);
            let _ = write!(
                b,
                r#"<tr><td><a href="/tree/{}/file?p={}">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class="num">{}</td></tr>"#,
                r.id,
                esc(&enc(raw)),
                path(&f.path),
                badge_class(f.class),
                esc(&when(f.first_found)),
                esc(&when(f.last_good)),
                esc(&when(Some(f.last_seen))),
                f.size
            );
        }
        b.push_str("</table>");
    }
    if let Some(next) = &t.findings.next {
        let _ =
            write!(b, r#"<p><a href="/tree/{}?after={}">Next findings</a></p>"#, r.id, esc(next));
    }
    // Runs.
    b.push_str("<h2>Runs</h2><table class=\"runs\"><tr><th>Command</th><th>Started</th><th>Duration</th><th>Files read</th><th>Bytes read</th><th>Speed</th><th>State</th><th>Findings</th><th>By</th></tr>");
    for run in &t.runs {
        let secs = run.finished.map(|f| (f - run.started) as f64 / 1000.0);
        let _ = write!(
            b,
            r#"<tr><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td><td class="num">{}</td><td>{}</td></tr>"#,
            esc(&run.command),
            esc(&when(Some(run.started))),
            secs.map_or("-".into(), |s| format!("{s:.1} s")),
            run.files_read,
            human_bytes(run.bytes_read),
            run.speed().map_or("-".into(), |s| format!("{}/s", human_bytes(s as u64))),
            esc(run.state),
            run.findings,
            esc(run.by.as_deref().unwrap_or("")),
        );
    }
    b.push_str("</table>");
    // Remote copies, recovery data, tamper evidence.
    b.push_str("<h2>Remote copies</h2>");
    if t.remotes.is_empty() {
        b.push_str(
            "<p>No comparison with a remote copy yet (<code>fixity verify --remote</code>).</p>",
        );
    } else {
        b.push_str(
            "<table><tr><th>Remote</th><th>Compared</th><th>Complete</th><th>Counts</th></tr>",
        );
        for x in &t.remotes {
            let _ = write!(
                b,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                esc(x["remote"].as_str().unwrap_or("")),
                esc(&when(x["finished"].as_i64())),
                if x["complete"].as_bool() == Some(true) { "yes" } else { "no" },
                esc(&x["summary"]["counts"].to_string())
            );
        }
        b.push_str("</table>");
    }
    b.push_str("<h2>Recovery data</h2>");
    match &t.recovery {
        Some(rc) => {
            let _ = write!(
                b,
                "<p>{} PAR2 files ({}) in <code>{}</code>, newest {}.</p>",
                rc.files,
                human_bytes(rc.bytes),
                esc(&rc.dir),
                esc(&when(rc.newest))
            );
        }
        None => b.push_str("<p>No recovery sets in the tree's default place (<code>fixity protect</code> makes them).</p>"),
    }
    b.push_str("<h2>Tamper evidence</h2>");
    match &t.proof {
        Some(p) => {
            let _ = write!(
                b,
                "<p>Chain entry {} of {}: head <code>{}</code></p>",
                p.seq,
                esc(&when(Some(p.at))),
                esc(&p.head)
            );
        }
        None => b.push_str("<p>No entry in the chain of proofs yet.</p>"),
    }
    b
}

/// The tree page's charts: bytes read and findings per run (the report's chart), the
/// speed of each verify, and coverage over time: the files the verify runs of the
/// window before each run read, as a share of the files now (at most all of them).
fn charts(t: &TreePage) -> String {
    let mut b = String::from(
        r#"<div class="charts"><figure><figcaption>Bytes read (bars) and findings (points) per run</figcaption>"#,
    );
    let oldest_first: Vec<fixity::report::Run> = t.runs.iter().rev().cloned().collect();
    if oldest_first.is_empty() {
        b.push_str("<p>No runs yet.</p>");
    } else {
        let mut svg = Vec::new();
        let _ = fixity::report::html::chart(&oldest_first, &mut svg);
        b.push_str(&String::from_utf8_lossy(&svg));
    }
    b.push_str("</figure>");
    let verifies: Vec<_> =
        oldest_first.iter().filter(|x| x.command == "verify" && x.finished.is_some()).collect();
    let speed: Vec<(i64, f64)> =
        verifies.iter().filter_map(|x| x.speed().map(|s| (x.started, s))).collect();
    b.push_str(&bars("Speed of each verify run", &speed, |v| {
        format!("{}/s", human_bytes(v as u64))
    }));
    let window = t.row.coverage.days as i64 * 86_400_000;
    let files = t.row.files.max(1) as f64;
    let coverage: Vec<(i64, f64)> = verifies
        .iter()
        .map(|x| {
            let within = verifies
                .iter()
                .filter(|y| y.started > x.started - window && y.started <= x.started);
            (x.started, (within.map(|y| y.files_read as f64).sum::<f64>() / files).min(1.0) * 100.0)
        })
        .collect();
    b.push_str(&bars(
        &format!(
            "Coverage over time: files read by the verify runs of the {} days before each run",
            t.row.coverage.days
        ),
        &coverage,
        |v| format!("{v:.0}%"),
    ));
    b.push_str("</div>");
    b
}

fn badge_class(class: &str) -> String {
    let css = match class {
        "corrupt" => "crit",
        "unreadable" | "missing" => "warn",
        _ => "ok",
    };
    format!(r#"<span class="badge {css}">{}</span>"#, esc(&class.to_uppercase()))
}

/// One file's page.
pub fn file(f: &FilePage, tree: &Row, can: &Can<'_>, actions: &[Action], raw: &[u8]) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        r#"<p><a href="/tree/{}">{}</a></p><h1>{}</h1>"#,
        tree.id,
        path(&tree.tree),
        path(&f.path)
    );
    if let Some(t) = &f.trouble {
        let _ = write!(b, r#"<p class="trouble">cannot read the catalog: {}</p>"#, esc(t));
    }
    match &f.record {
        None => b.push_str("<p>Not in the catalog (a scan records new files).</p>"),
        Some(rec) => {
            let r = &rec.history;
            let _ = write!(
                b,
                "<h2>What the catalog recorded</h2><dl><dt>State</dt><dd>{}</dd><dt>Size</dt><dd>{} bytes</dd><dt>Recorded digest</dt><dd><code>{}</code></dd>",
                badge_class(r.class),
                r.size,
                esc(&r.recorded_digest)
            );
            if let Some(d) = &r.current_digest {
                let _ = write!(b, "<dt>Digest found</dt><dd><code>{}</code></dd>", esc(d));
            }
            let _ = write!(
                b,
                "<dt>First recorded</dt><dd>{}</dd><dt>Last good</dt><dd>{}</dd><dt>Last looked at</dt><dd>{}</dd>",
                esc(&when(Some(r.first_recorded))),
                esc(&when(r.last_good)),
                esc(&when(Some(r.last_seen)))
            );
            if let Some(t) = r.first_found {
                let since = if r.class == "missing" { "Missing since" } else { "Finding since" };
                let _ = write!(b, "<dt>{since}</dt><dd>{}</dd>", esc(&when(Some(t))));
            }
            if let Some(m) = &rec.moved_from {
                let _ = write!(b, "<dt>Moved from</dt><dd>{}</dd>", path(m));
            }
            if let Some(n) = &r.note {
                let _ = write!(b, "<dt>Note</dt><dd>{}</dd>", esc(n));
            }
            b.push_str("</dl>");
        }
    }
    if let Some(now) = &f.now {
        b.push_str("<h2>What is there now</h2><p>");
        match (now.exists, &now.error) {
            (_, Some(e)) => {
                let _ = write!(b, "cannot look: {}", esc(e));
            }
            (false, None) => b.push_str("nothing: the file is not there"),
            (true, None) => {
                let _ = write!(
                    b,
                    "{} bytes, modified {}",
                    now.size.unwrap_or(0),
                    esc(&when(now.mtime))
                );
            }
        }
        b.push_str("</p>");
    }
    if can.act && tree.local {
        b.push_str("<h2>Act</h2><div class=\"actions\">");
        b.push_str(&action_form(
            can.who,
            tree.id,
            "verify",
            Some(raw),
            "Verify again (the file's directory)",
            "",
        ));
        let class = f.record.as_ref().map(|r| r.history.class);
        if matches!(class, Some("corrupt" | "missing" | "unreadable")) {
            b.push_str(&action_form(
                can.who,
                tree.id,
                "repair",
                Some(raw),
                "Repair",
                r#" <label>from a replica (optional) <input name="from" size="30" placeholder="/mnt/backup/tree"></label> "#,
            ));
        }
        if matches!(class, Some("corrupt" | "unreadable" | "modified" | "changed")) {
            b.push_str(&action_form(
                can.who,
                tree.id,
                "accept",
                Some(raw),
                "Accept the current content as good",
                "",
            ));
        }
        if class == Some("missing") {
            b.push_str(&action_form(
                can.who,
                tree.id,
                "forget",
                Some(raw),
                "Forget (gone for good)",
                "",
            ));
        }
        b.push_str("</div>");
    }
    let mine: Vec<&Action> = actions.iter().collect();
    if !mine.is_empty() {
        b.push_str("<h2>Actions on this file</h2>");
        b.push_str(&action_table(&mine));
    }
    b
}

/// A table of actions.
pub fn action_table(list: &[&Action]) -> String {
    let mut b = String::from(
        "<table class=\"actions\"><tr><th>#</th><th>Action</th><th>File</th><th>By</th><th>Started</th><th>Exit</th></tr>",
    );
    for a in list {
        let _ = write!(
            b,
            r#"<tr><td><a href="/actions/{id}">{id}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            a.kind.word(),
            esc(&a.path),
            esc(&a.by),
            esc(&when(Some(a.started))),
            exit_text(a),
            id = a.id
        );
    }
    b.push_str("</table>");
    b
}

fn exit_text(a: &Action) -> String {
    match (a.finished, a.exit) {
        (None, _) => r#"<span class="running">running</span>"#.into(),
        (Some(_), Some(0)) => r#"<span class="badge ok">0</span>"#.into(),
        (Some(_), Some(1)) => r#"<span class="badge warn">1</span>"#.into(),
        (Some(_), Some(n)) => format!(r#"<span class="badge crit">{n}</span>"#),
        (Some(_), None) => r#"<span class="badge crit">killed</span>"#.into(),
    }
}

/// One action's page: its command and output.
pub fn action(a: &Action, tree: Option<&Row>) -> String {
    let mut b = String::new();
    let _ = write!(b, "<h1>Action {}: {}</h1>", a.id, a.kind.word());
    if let Some(t) = tree {
        let _ = write!(b, r#"<p>Tree <a href="/tree/{}">{}</a>"#, t.id, path(&t.tree));
        if !a.path.is_empty() {
            let _ = write!(
                b,
                r#", file <a href="/tree/{}/file?p={}">{}</a>"#,
                t.id,
                esc(&enc(&a.raw)),
                esc(&a.path)
            );
        }
        b.push_str("</p>");
    }
    let _ = write!(
        b,
        "<dl><dt>By</dt><dd>{}</dd><dt>Command</dt><dd><code>fixity {}</code></dd><dt>Started</dt><dd>{}</dd><dt>Ended</dt><dd>{}</dd><dt>Exit status</dt><dd id=\"exit\">{}</dd></dl><h2>Output</h2><pre id=\"output\">{}</pre>",
        esc(&a.by),
        esc(&a.command.join(" ")),
        esc(&when(Some(a.started))),
        esc(&a.finished.map_or("running".into(), |f| when(Some(f)))),
        exit_text(a),
        esc(&a.output)
    );
    b
}

/// The login page.
pub fn login(message: Option<&str>, next: &str) -> String {
    format!(
        r#"<h1>Log in</h1>{}<form method="post" action="/login" class="login"><input type="hidden" name="next" value="{}"><label>User <input name="user" autocomplete="username" required autofocus></label><label>Password <input name="password" type="password" autocomplete="current-password" required></label><button>Log in</button></form>"#,
        message.map_or(String::new(), |m| format!(r#"<p class="trouble">{}</p>"#, esc(m))),
        esc(next)
    )
}

/// A page that says what went wrong.
pub fn problem(text: &str) -> String {
    format!(
        r#"<h1>Not done</h1><p class="trouble">{}</p><p><a href="/">Back to the fleet</a></p>"#,
        esc(text)
    )
}
