//! `fixity scan` and `fixity verify`: run the scrub engine over a tree with its catalog
//! (or its extended attributes), then list every file that is not ok and a summary.

use super::{Status, engine_config};
use crate::cli::{ScrubArgs, Store, XattrName};
use crate::ui::{self, Progress};
use anyhow::{Context, bail};
use fixity::algo;
use fixity::catalog::sqlite::Catalog;
use fixity::catalog::{Class, OpenOptions, StoreSpec, open_store};
use fixity::clock::{format_rfc3339, format_time};
use fixity::formats::json;
use fixity::pathtext::{other_form_of, path_bytes, quote_env};
use fixity::scrub::{self, Bounds, Finding, Mode, Notice, Options, Report};
use fixity::shard::Plan;
use fixity::units::{human_bytes, parse_duration, parse_size};
use fixity::walk::Exclude;
use std::cell::RefCell;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub(super) use super::exclude::{catalog_patterns, ignore_file_patterns};

pub fn run(
    mode: Mode,
    args: ScrubArgs,
    max_bytes: Option<String>,
    max_duration: Option<String>,
    repair: bool,
) -> anyhow::Result<Status> {
    let (root, part) = match &args.plan {
        None => (args.path.clone().unwrap_or_else(|| ".".into()), None),
        Some(dir) => {
            let (root, plan, index) = plan_part(dir, args.part, args.path.as_deref())?;
            (root, Some((plan, index)))
        }
    };
    super::tree_dir(&root)?;
    // A part's scope, checked before anything is made: its list, and the records it owns
    // (the findings listed are those).
    let (scope, bounds) = match &part {
        Some((plan, index)) => {
            let base = plan.root.clone().map_or_else(|| fixity::sys::absolute(&root), Ok)?;
            let scope = fixity::shard::scope::part_scope(plan, *index, &base)?;
            let bounds = scope.bounds.clone();
            (Some(scope), bounds)
        }
        None => (None, Bounds::default()),
    };
    let max_bytes = match max_bytes {
        Some(t) => {
            Some(parse_size(&t).with_context(|| format!("bad --max-bytes {t:?} (try 500G)"))?)
        }
        None => None,
    };
    let max_duration = match max_duration {
        Some(t) => {
            Some(parse_duration(&t).with_context(|| format!("bad --max-duration {t:?} (try 2h)"))?)
        }
        None => None,
    };
    if args.modify_window.is_some_and(|w| !(w.is_finite() && w >= 0.0)) {
        bail!("bad --modify-window: give seconds, 0 or more");
    }
    let algo = match &args.algorithm {
        Some(name) => {
            Some(algo::lookup(name).with_context(|| format!("unknown algorithm {name:?}"))?)
        }
        None => None,
    };

    // The tree the directory named is in, its catalog found upward (not for a part of a
    // plan, whose plan names its tree, nor the xattr store, whose records are the files'
    // own: a directory is a tree of its own there), and the subtree the run covers.
    let found = match (&part, args.store) {
        (None, Store::Sqlite) => {
            let fresh = mode == Mode::Scan;
            Some(super::tree::locate(&root, args.catalog.as_deref(), None, args.find, fresh)?)
        }
        _ => None,
    };
    let found = found.filter(|f| f.found_above || f.is_subtree());
    if let Some(f) = &found {
        super::tree::say(f, args.quiet);
    }
    let subtree = found.as_ref().map(|f| f.subtree.clone()).unwrap_or_default();
    if repair && !subtree.is_empty() {
        bail!(
            "verify --repair repairs the whole tree's findings: verify the subtree, then \
             `fixity repair` it"
        );
    }
    let (root, catalog_path) = match &found {
        Some(f) => (f.root.clone(), f.catalog.clone()),
        None => {
            let catalog = args.catalog.clone().unwrap_or_else(|| Catalog::default_path(&root));
            (root, catalog)
        }
    };
    // A subtree's findings are the records below it.
    let bounds = match fixity::catalog::below(&subtree) {
        (Some(from), until) => Bounds { from: Some(from), until },
        _ => bounds,
    };
    let mut patterns = args.exclude.clone();
    patterns.extend(ignore_file_patterns(&root)?);
    let spec = match args.store {
        Store::Sqlite => {
            // The tree's own .fixity directory is never part of the tree's content.
            patterns.push("./.fixity".into());
            // A plan's parts, wherever they run, record the tree of the host that made it.
            let host = part.as_ref().map(|(p, _)| p.host.as_str());
            super::catalog_spec(Some(&catalog_path), &root, host)
        }
        Store::Xattr if repair => bail!(
            "--repair lists the findings from the catalog: the xattr store keeps no index of \
             its records (use a catalog; `fixity repair` works from it too)"
        ),
        Store::Xattr if args.metrics.is_some() => bail!(
            "--metrics reads the catalog's counts: the xattr store keeps none (use --log, or a \
             catalog)"
        ),
        Store::Xattr => StoreSpec::Xattr(root.clone()),
    };
    let xattr_names = fixity::catalog::xattr::XattrNames {
        checksum: args.xattr_names.contains(&XattrName::Checksum),
        shatag: args.xattr_names.contains(&XattrName::Shatag),
    };
    if !args.xattr_names.is_empty() && args.store != Store::Xattr {
        bail!("--xattr-names keeps other tools' attributes with --store xattr: add it");
    }
    if xattr_names.shatag && algo.is_none_or(|a| a.shatag.is_none()) {
        bail!("--xattr-names shatag writes cshatag's SHA-256 attributes: pass -a sha256");
    }
    // A bad pattern is refused before anything is made.
    Exclude::new(&patterns).context("bad exclude pattern")?;
    let how = OpenOptions {
        create: mode == Mode::Scan,
        algorithm: algo,
        wait: args.wait,
        shared: part.is_some(),
        compare_if_read_only: true,
        probe: true,
        xattr_names,
        ..OpenOptions::default()
    };
    let mut store = open_store(&spec, &how)?;
    if let Some(note) = store.upgrade_note() {
        ui::error(&note);
    }
    if matches!(spec, StoreSpec::Sqlite(_)) {
        patterns.extend(catalog_patterns(&root, &catalog_path));
    }
    let exclude = Exclude::new(&patterns).context("bad exclude pattern")?;

    let mut engine = engine_config(Some(&root), &args.read);
    let modify_window_ns = args.modify_window.map(|w| (w * 1e9) as i128);
    let progress = Progress::new(args.read.progress, !args.read.no_progress);
    engine.read.progress = progress.counter();
    let opts = Options {
        mode,
        follow: args.follow,
        exclude,
        max_bytes,
        max_duration,
        engine,
        modify_window_ns,
    };

    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    // Findings are rendered here and written out in pieces; a failed write (a full disk
    // under stdout) ends the run with an error: nothing counts as reported unwritten.
    let buf = RefCell::new(Vec::new());
    let quiet = args.quiet;
    // New files are counted in the summary, listed with -v (and always in JSON).
    let (verbose, json) = (args.read.verbose, args.json);
    let shown =
        |class: Class| (!quiet || class.is_failure()) && (class != Class::New || verbose || json);
    let paint = Paint::for_stdout(json);
    let algorithm = store.algorithm().name;
    // Entries skipped on purpose (symlinks not followed, FIFOs ...), per reason: listed with
    // -v, else told once per reason after the run.
    let skipped: RefCell<std::collections::BTreeMap<String, u64>> = RefCell::default();
    // A finding known only in memory (not read back from the catalog).
    let held = |f: &Finding, buf: &mut Vec<u8>| {
        if shown(f.class) {
            finding_line(
                &f.path,
                f.class,
                None,
                f.note.as_deref(),
                (args.json, paint, algorithm),
                buf,
            );
        }
    };
    let mut notice = |n: Notice| match n {
        Notice::Skipped(rel, why) if verbose => ui::error(&format!("{}: {why}", quote_env(&rel))),
        Notice::Skipped(_, why) if !quiet => {
            *skipped.borrow_mut().entry(why.to_string()).or_default() += 1
        }
        Notice::Skipped(..) => {}
        Notice::Unrecorded(f) | Notice::Found(f) => held(&f, &mut buf.borrow_mut()),
    };
    // The store's failure, told after every finding is out.
    let mut catalog_error: Option<String> = store.read_only_reason();

    let ran = match scope {
        Some(scope) => scrub::run_part(&root, store.as_mut(), &opts, scope, &mut notice),
        None if !subtree.is_empty() => {
            scrub::run_subtree(&root, store.as_mut(), &opts, &subtree, &mut notice)
        }
        None => scrub::run(&root, store.as_mut(), &opts, &mut notice),
    };
    let report = match ran {
        Ok(r) => r,
        Err(e) => {
            // What was found before the store failed is out first.
            progress.finish();
            out.write_all(&buf.borrow()).context("write error")?;
            out.flush().context("write error")?;
            return Err(e.into());
        }
    };
    progress.finish();
    if catalog_error.is_none() {
        catalog_error = report.catalog_error.clone();
    }
    // The store's findings, merged in path order with those only in memory.
    let mut extra = report.extra.clone();
    extra.sort_by(|a, b| a.path.cmp(&b.path));
    let mut extra = extra.into_iter().peekable();
    let mut write_err = None;
    let new = shown(Class::New);
    let listed = store.findings(report.started_ms, new, &mut |path, class, from, note| {
        // Another part that started in the same millisecond lists its own.
        if !bounds.holds(path) && !from.is_some_and(|f| bounds.holds(f)) {
            return;
        }
        let mut buf = buf.borrow_mut();
        while let Some(f) = extra.next_if(|f| f.path.as_slice() < path) {
            held(&f, &mut buf);
        }
        if shown(class) {
            finding_line(path, class, from, note, (args.json, paint, algorithm), &mut buf);
        }
        if buf.len() > 64 * 1024 && write_err.is_none() {
            write_err = out.write_all(&buf).err();
            buf.clear();
        }
    });
    for f in extra {
        held(&f, &mut buf.borrow_mut());
    }
    if let Some(e) = write_err {
        return Err(e).context("write error");
    }
    if let Err(e) = listed
        && catalog_error.is_none()
    {
        catalog_error = Some(format!("cannot list the findings: {e}"));
    }
    for (why, n) in skipped.into_inner() {
        let entries = if n == 1 { "entry" } else { "entries" };
        let why = why.strip_prefix("skipping ").unwrap_or(&why);
        ui::error(&format!("{n} {entries} skipped: {why}; -v lists them"));
    }
    for (dir, files) in &report.vanished {
        let place = if dir.is_empty() {
            quote_env(path_bytes(&root))
        } else {
            quote_env(path_bytes(&scrub::full_path(&root, dir)))
        };
        let (s, are) = if *files == 1 { ("", "is") } else { ("s", "are") };
        ui::error(&format!(
            "{place}: all {files} recorded file{s} under it {are} missing: is it \
             mounted? Their records are kept (`fixity forget` drops them for good)"
        ));
    }
    if report.vanished_more > 0 {
        ui::error(&format!(
            "... and {} more directories whose every recorded file is missing",
            report.vanished_more
        ));
    }

    let mut buf = buf.into_inner();
    let problems = report.failed();
    if args.json {
        let summary = serde_json::json!({ "summary": &report, "root": String::from_utf8_lossy(path_bytes(&root)) });
        serde_json::to_writer(&mut buf, &summary)?;
        buf.push(b'\n');
    } else if !quiet || problems {
        summary_text(&root, &report, &mut buf);
    }
    out.write_all(&buf).context("write error")?;
    out.flush().context("write error")?;
    if let Some(log) = &args.log {
        append_log(log, &root, &report)
            .with_context(|| format!("cannot append to {}", quote_env(path_bytes(log))))?;
    }
    if let Some(file) = args.metrics.as_deref().filter(|_| catalog_error.is_none()) {
        super::monitor::write_store_metrics(file, &root, store.as_ref())?;
    }
    if let Some(e) = catalog_error {
        // Every finding is out; the run still failed to record them.
        bail!("{e}; the findings above were not recorded");
    }
    // Repair and the recovery sets, on the whole tree only (not a part of a plan).
    let mut problems = report.failed();
    if part.is_none() && subtree.is_empty() {
        let par2_dir =
            args.par2_dir.clone().unwrap_or_else(|| fixity::repair::default_par2_dir(&root));
        let whole = mode == Mode::Verify && max_bytes.is_none() && max_duration.is_none();
        let after = super::repair::After { repair: repair && report.failed(), check: whole };
        problems |= after.run(&root, store.as_mut(), &par2_dir, (json, quiet, verbose))?;
    }
    Ok(if problems { Status::Failed } else { Status::Ok })
}

fn label(class: Class) -> &'static str {
    match class {
        Class::Ok => "ok",
        Class::Modified => "modified",
        Class::Corrupt => "CORRUPT",
        Class::Missing => "missing",
        Class::New => "new",
        Class::Moved => "moved",
        Class::Unreadable => "unreadable",
        Class::Changed => "CHANGED",
    }
}

/// Colour for the findings' labels: on a terminal, unless NO_COLOR is set.
#[derive(Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn for_stdout(json: bool) -> Paint {
        use std::io::IsTerminal;
        Paint(
            !json
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && io::stdout().is_terminal(),
        )
    }

    /// The label, padded, in red (corrupt) or yellow (unreadable, missing) when painting.
    fn label(self, class: Class) -> String {
        let padded = format!("{:<11} ", label(class));
        match (self.0, class) {
            (true, Class::Corrupt) => format!("\x1b[1;31m{padded}\x1b[0m"),
            (true, Class::Changed) => format!("\x1b[1;33m{padded}\x1b[0m"),
            (true, Class::Unreadable | Class::Missing) => format!("\x1b[33m{padded}\x1b[0m"),
            _ => padded,
        }
    }
}

/// One line per file that is not ok: `CORRUPT     path (recorded ..., now ...)`.
fn finding_line(
    path: &[u8],
    class: Class,
    from: Option<&[u8]>,
    note: Option<&str>,
    (as_json, paint, algorithm): (bool, Paint, &str),
    out: &mut Vec<u8>,
) {
    if as_json {
        let digests = note
            .filter(|_| class.keeps_found())
            .and_then(scrub::corrupt_digests)
            .map(|(recorded, current)| (algorithm, recorded, current));
        json::write_finding(path, class.name(), from, note, digests, out);
        return;
    }
    let mut line = paint.label(class);
    if let Some(from) = from {
        line.push_str(&quote_env(from));
        line.push_str(" -> ");
    }
    line.push_str(&quote_env(path));
    if from.is_some_and(|f| other_form_of(f, path)) {
        line.push_str(" (the same name in another Unicode form)");
    }
    match (class, note) {
        (Class::Unreadable, Some(n)) => {
            line.push_str(": ");
            line.push_str(n);
        }
        (_, Some(n)) => {
            line.push_str(" (");
            line.push_str(n);
            line.push(')');
        }
        _ => {}
    }
    line.push('\n');
    out.extend_from_slice(line.as_bytes());
}

fn summary_text(root: &Path, r: &Report, out: &mut Vec<u8>) {
    let rate = if r.seconds > 0.0 { r.bytes_read as f64 / r.seconds } else { 0.0 };
    let part = r
        .part
        .as_ref()
        .map_or(String::new(), |p| format!(" part {} of {} (plan {})", p.part, p.parts, p.plan))
        + &r.subtree
            .as_ref()
            .map_or(String::new(), |s| format!(" subtree {}", quote_env(s.as_bytes())));
    let mut s = format!(
        "{} {}{part}: {} read ({}) in {:.1} s, {}/s\n",
        r.command,
        quote_env(path_bytes(root)),
        ui::count(r.files_read, "file"),
        human_bytes(r.bytes_read),
        r.seconds,
        human_bytes(rate as u64)
    );
    // CHANGED (an edit that kept its mtime) is counted only when a run finds one: the
    // line stays as scripts know it otherwise.
    let counts: Vec<String> = Class::ALL
        .iter()
        .filter(|c| **c != Class::Changed || r.count(**c) > 0)
        .map(|c| format!("{} {}", label(*c), r.count(*c)))
        .collect();
    s.push_str(&counts.join(", "));
    if r.skipped > 0 {
        s.push_str(&format!(", skipped {}", r.skipped));
    }
    s.push('\n');
    if let Some(why) = r.stopped_by {
        s.push_str(&format!(
            "slice stopped at --{why}; {} ({}) wait for the next run\n",
            ui::count(r.remaining_files, "file"),
            human_bytes(r.remaining_bytes)
        ));
    }
    if r.command == "verify"
        && r.complete
        && r.pass_started_ms > 0
        && r.pass_started_ms < r.started_ms
    {
        s.push_str(&format!(
            "verification pass complete: every file looked at since {} UTC\n",
            format_time(r.pass_started_ms)
        ));
    }
    if r.count(Class::Corrupt) > 0 {
        s.push_str(
            "CORRUPT files changed content without a change of size or mtime: `fixity repair \
             TREE` rebuilds them as recorded (from recovery data `fixity protect` made, or \
             --from a replica; the catalog keeps the good digest), or `fixity accept FILE` if \
             the change is wanted\n",
        );
    }
    if r.count(Class::Changed) > 0 {
        s.push_str(
            "CHANGED files have other content at the recorded size and mtime, and a ctime that \
             moved since: edits whose mtime was put back (touch -r, cp -p, rsync -t, tar, \
             exiftool -P), not bitrot. `fixity repair` never writes over them; `fixity accept \
             FILE` records the change, `fixity repair --force FILE` puts the recorded content \
             back\n",
        );
    }
    if r.count(Class::Missing) > 0 {
        s.push_str(
            "missing files stay on record until they are back, or `fixity forget PATH` once \
             they are gone for good\n",
        );
    }
    out.extend_from_slice(s.as_bytes());
}

/// The tree, plan and part of `--plan DIR`: the tree is PATH if given (it must be the
/// plan's, when the plan was made of one directory), else the plan's.
fn plan_part(
    dir: &Path,
    part: Option<usize>,
    path: Option<&Path>,
) -> anyhow::Result<(std::path::PathBuf, Plan, usize)> {
    let plan = Plan::read(&fixity::sys::absolute(dir).context("cannot find the plan")?)?;
    let index = super::shard::part_in(&plan, part)?;
    let root = match (path, &plan.root) {
        (Some(p), Some(r)) => {
            let id = |p: &Path| fixity::sys::path_id(p).ok();
            if id(p).is_none() || id(p) != id(r) {
                bail!(
                    "{} is not the tree the plan in {} was made of ({})",
                    quote_env(path_bytes(p)),
                    plan.dir.display(),
                    quote_env(path_bytes(r))
                );
            }
            p.to_path_buf()
        }
        (Some(p), None) => p.to_path_buf(),
        (None, Some(r)) => r.clone(),
        (None, None) => bail!(
            "the plan in {} was not made of one directory: name the tree (`fixity scan TREE \
             --plan DIR`)",
            plan.dir.display()
        ),
    };
    Ok((root, plan, index))
}

/// Appends `TIME COMMAND ROOT key=value ...` to the log.
fn append_log(log: &Path, root: &Path, r: &Report) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(log)?;
    let counts: Vec<String> =
        Class::ALL.iter().map(|c| format!("{}={}", c.name(), r.count(*c))).collect();
    let line = format!(
        "{} {} {} files_read={} bytes_read={} seconds={:.3} {} skipped={} complete={}\n",
        format_rfc3339(r.started_ms),
        r.command,
        quote_env(path_bytes(root)),
        r.files_read,
        r.bytes_read,
        r.seconds,
        counts.join(" "),
        r.skipped,
        if r.complete { "yes" } else { "no" }
    );
    f.write_all(line.as_bytes())?;
    f.sync_data()
}
