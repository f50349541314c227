//! `fixity protect` and `fixity repair`: open the tree's catalog, run the library's job,
//! render its events (text or JSON), then the summary and the exit status.

use super::Status;
use crate::cli::{ProtectArgs, RepairArgs};
use crate::ui;
use anyhow::{Context, bail};
use fixity::catalog::sqlite::Catalog;
use fixity::catalog::{Class, OpenOptions, Store, StoreSpec, open_store};
use fixity::pathtext::{path_bytes, quote_env};
use fixity::repair::{self, Event, Left, Source};
use fixity::scrub;
use fixity::sys::OsStrExt;
use fixity::units::{human_bytes, parse_size};
use fixity::walk::Exclude;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `--redundancy`: `10%` or `0.1`.
fn share(text: &str) -> anyhow::Result<f64> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => bail!("--redundancy {text:?}: give a share above 0 and up to 100%, as 10% or 0.1"),
    }
}

fn memory(text: &str) -> anyhow::Result<u64> {
    match parse_size(text) {
        Some(n) if n >= 1 << 20 => Ok(n),
        _ => bail!("--memory {text:?}: give a size of at least 1M, as 512M or 2G"),
    }
}

fn open(root: &Path, catalog: Option<&Path>, wait: bool) -> anyhow::Result<Box<dyn Store>> {
    super::tree_dir(root)?;
    let path = catalog.map_or_else(|| Catalog::default_path(root), Path::to_path_buf);
    let spec = super::catalog_spec(Some(&path), root, None);
    open_store(&spec, &OpenOptions { wait, ..OpenOptions::default() }).with_context(|| {
        format!("{}: no catalog to work from (`fixity scan` makes it)", quote_env(path_bytes(root)))
    })
}

/// A name's JSON fields under `key`: `key`, and `key_hex` when it is not UTF-8.
fn json_path(key: &str, path: &[u8]) -> serde_json::Map<String, serde_json::Value> {
    fixity::formats::json::path_fields(path)
        .into_iter()
        .map(|(k, v)| (k.replacen("path", key, 1), v))
        .collect()
}

/// A JSON object for one event.
fn event_json(e: &Event<'_>) -> serde_json::Value {
    use serde_json::json;
    let mut v = match e {
        Event::SetMade { stem, files, bytes, par2_bytes, slice, recovery_slices } => json!({
            "event": "set_made", "set": stem, "files": files, "bytes": bytes,
            "par2_bytes": par2_bytes, "slice_size": slice, "recovery_slices": recovery_slices,
        }),
        Event::SetCurrent { stem, files } => {
            json!({"event": "set_current", "set": stem, "files": files})
        }
        Event::SetKept { stem, why } => json!({"event": "set_kept", "set": stem, "why": why}),
        Event::SetRemoved { stem } => json!({"event": "set_removed", "set": stem}),
        Event::SetDamaged { stem, why } => json!({"event": "set_damaged", "set": stem, "why": why}),
        Event::Left { why, .. } => json!({"event": "left_out", "why": left_text(why)}),
        Event::Repaired { from, note, .. } => {
            let mut v = match from {
                Source::Par2 { set } => json!({"event": "repaired", "from": "par2", "set": set}),
                Source::Replica { path } => {
                    let mut v = json!({"event": "repaired", "from": "replica"});
                    if let Some(obj) = v.as_object_mut() {
                        obj.extend(json_path("replica", path_bytes(path)));
                    }
                    v
                }
            };
            if let (Some(n), Some(obj)) = (note, v.as_object_mut()) {
                obj.insert("note".into(), json!(n));
            }
            v
        }
        Event::Intact { .. } => json!({"event": "intact"}),
        Event::Unrepaired { why, .. } => json!({"event": "unrepaired", "why": why}),
    };
    let path = match e {
        Event::Left { path, .. }
        | Event::Repaired { path, .. }
        | Event::Intact { path }
        | Event::Unrepaired { path, .. } => Some(*path),
        _ => None,
    };
    if let (Some(p), Some(obj)) = (path, v.as_object_mut()) {
        obj.extend(json_path("path", p));
    }
    v
}

fn left_text(why: &Left) -> String {
    match why {
        Left::Corrupt => "CORRUPT: its content is not the catalog's, with the recorded size and \
                          mtime; not protected (recorded as a finding)"
            .into(),
        Left::Changed => {
            "changed since the catalog recorded it: `fixity scan` records it, then protect".into()
        }
        Left::MtimeKept => "CHANGED: its content is not the catalog's at the recorded size and \
                            mtime, and its ctime moved: an edit that put its mtime back, not \
                            rot; not protected, its set kept (recorded as a finding; `fixity \
                            accept` takes the change)"
            .into(),
        Left::Unreadable(e) => format!("unreadable: {e}"),
        Left::Finding(c) => format!("has a standing finding ({}): not protected", c.name()),
    }
}

/// The text line of an event, if it is shown (`verbose`: every set; `quiet`: only files
/// left out or not repaired, and damaged sets).
fn event_text(e: &Event<'_>, verbose: bool, quiet: bool) -> Option<String> {
    match e {
        Event::SetMade { stem, files, bytes, par2_bytes, slice, recovery_slices } => {
            (!quiet).then(|| {
                format!(
                    "made        {stem}: {}, {} -> {} of PAR2 ({recovery_slices} recovery slices \
                     of {})",
                    ui::count(*files as u64, "file"),
                    human_bytes(*bytes),
                    human_bytes(*par2_bytes),
                    human_bytes(*slice)
                )
            })
        }
        Event::SetCurrent { stem, files } => {
            verbose.then(|| format!("current     {stem}: {}", ui::count(*files as u64, "file")))
        }
        Event::SetKept { stem, why } => (!quiet).then(|| format!("kept        {stem}: {why}")),
        Event::SetRemoved { stem } => verbose.then(|| format!("removed     {stem}")),
        Event::SetDamaged { stem, why } => Some(format!("DAMAGED     recovery set {stem}: {why}")),
        Event::Left { path, why } => {
            let label = match why {
                Left::Corrupt => "CORRUPT",
                Left::MtimeKept => "CHANGED",
                _ => "left out",
            };
            Some(format!("{label:<11} {}: {}", quote_env(path), left_text(why)))
        }
        Event::Repaired { path, from, note } => {
            let from = match from {
                Source::Par2 { set } => format!("recovery set {set}"),
                Source::Replica { path: r } => quote_env(path_bytes(r)),
            };
            let note = note.as_ref().map_or(String::new(), |n| format!("; {n}"));
            Some(format!("repaired    {} (from {from}{note})", quote_env(path)))
        }
        Event::Intact { path } => (!quiet)
            .then(|| format!("intact      {} (reads as recorded: finding ended)", quote_env(path))),
        Event::Unrepaired { path, why } => Some(format!("UNREPAIRED  {}: {why}", quote_env(path))),
    }
}

/// Appends the event's line to `out`: its JSON object, or its text when shown.
fn emit(out: &mut Vec<u8>, e: &Event<'_>, (json, verbose, quiet): (bool, bool, bool)) {
    if json {
        out.extend(event_json(e).to_string().bytes());
        out.push(b'\n');
    } else if let Some(t) = event_text(e, verbose, quiet) {
        out.extend(t.bytes());
        out.push(b'\n');
    }
}

/// Writes each event's line as it comes (a long run shows its progress); the first write
/// error is kept, for the command to fail with once the job is over.
struct Lines<'a> {
    stdout: std::io::StdoutLock<'a>,
    show: (bool, bool, bool),
    failed: Option<std::io::Error>,
}

impl Lines<'_> {
    fn new(show: (bool, bool, bool)) -> Self {
        Lines { stdout: std::io::stdout().lock(), show, failed: None }
    }

    fn event(&mut self, e: &Event<'_>) {
        let mut out = Vec::new();
        emit(&mut out, e, self.show);
        if self.failed.is_none() {
            self.failed = self.stdout.write_all(&out).err();
        }
    }

    /// The stream, once every event is written (or the first write error).
    fn done(self) -> anyhow::Result<std::io::StdoutLock<'static>> {
        drop(self.stdout);
        match self.failed {
            Some(e) => Err(e).context("write error"),
            None => Ok(std::io::stdout().lock()),
        }
    }
}

/// The tree `dir` is in (its catalog found upward, said on stderr unless `quiet`), its
/// catalog, and the subtree `dir` is (empty: the whole tree).
fn tree_of(
    dir: &Path,
    catalog: Option<&Path>,
    find: crate::cli::FindArgs,
    quiet: bool,
) -> anyhow::Result<(PathBuf, Option<PathBuf>, Vec<u8>)> {
    super::tree_dir(dir)?;
    let found = super::tree::locate(dir, catalog, None, find, false)?;
    if !(found.found_above || found.is_subtree()) {
        return Ok((dir.to_path_buf(), catalog.map(Path::to_path_buf), Vec::new()));
    }
    super::tree::say(&found, quiet);
    Ok((found.root, Some(found.catalog), found.subtree))
}

/// The paths of the standing findings below the subtree `sub` (missing, corrupt,
/// unreadable), in path order.
fn findings_under(store: &dyn Store, sub: &[u8]) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut found = Vec::new();
    fixity::catalog::under::each_under(store, sub, &mut |r| {
        if r.missing_since.is_some() || r.last_result.is_failure() {
            found.push(r.path);
        }
    })?;
    Ok(found)
}

pub fn protect(args: ProtectArgs) -> anyhow::Result<Status> {
    let dir = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    // A subtree is protected with its tree: recovery sets are made over the tree's
    // records in path order, and kept in step as a whole.
    let (root, catalog, _) = tree_of(&dir, args.catalog.as_deref(), args.find, args.quiet)?;
    let opts = repair::ProtectOptions {
        redundancy: share(&args.redundancy)?,
        memory: memory(&args.memory)?,
        par2_dir: args.par2_dir.clone().unwrap_or_else(|| repair::default_par2_dir(&root)),
        remake: Vec::new(),
    };
    let mut store = open(&root, catalog.as_deref(), args.wait)?;
    let started = std::time::Instant::now();
    let (json, quiet) = (args.json, args.quiet);
    let mut lines = Lines::new((json, args.verbose, quiet));
    let report = repair::protect(&root, store.as_mut(), &opts, &mut |e| lines.event(&e))?;
    let mut stdout = lines.done()?;
    let share_now =
        if report.bytes > 0 { report.written as f64 / report.bytes as f64 } else { 0.0 };
    if json {
        let mut v = serde_json::to_value(&report)?;
        v["event"] = "summary".into();
        v["seconds"] = started.elapsed().as_secs_f64().into();
        if let Some(obj) = v.as_object_mut() {
            obj.extend(json_path("par2_dir", path_bytes(&opts.par2_dir)));
        }
        writeln!(stdout, "{v}")?;
    } else if !quiet || report.left_out > 0 {
        writeln!(
            stdout,
            "protect {}: {} ({}) in sets: {} made, {} current, {} kept, {} removed; read {} in \
             {:.1} s; recovery files {} written this run",
            quote_env(path_bytes(&root)),
            ui::count(report.files, "file"),
            human_bytes(report.bytes),
            report.made,
            report.current,
            report.kept,
            report.removed,
            human_bytes(report.read),
            started.elapsed().as_secs_f64(),
            human_bytes(report.written),
        )?;
        if report.made > 0 && report.read > 0 {
            writeln!(
                stdout,
                "recovery data made this run: {:.1}% of the data read (asked {:.1}%)",
                100.0 * share_now,
                100.0 * opts.redundancy
            )?;
        }
    }
    Ok(if report.left_out > 0 { Status::Failed } else { Status::Ok })
}

pub fn repair(args: RepairArgs) -> anyhow::Result<Status> {
    let (root, catalog, sub) = tree_of(&args.tree, args.catalog.as_deref(), args.find, false)?;
    let base = fixity::sys::absolute(&root).context("cannot resolve the tree")?;
    let named = fixity::sys::absolute(&args.tree).context("cannot resolve the tree")?;
    let mut paths = Vec::new();
    for p in &args.paths {
        let abs = fixity::sys::absolute(p).context("cannot resolve a path")?;
        // As named (TREE's own spelling), or through the directories it resolves to.
        let real = abs.parent().and_then(|d| fixity::sys::canonicalize(d).ok());
        let real = real.zip(abs.file_name()).map(|(d, n)| d.join(n));
        let rel = abs
            .strip_prefix(&named)
            .ok()
            .map(|r| fixity::scrub::full_path(Path::new(OsStr::from_bytes(&sub)), path_bytes(r)))
            .or_else(|| {
                real.as_deref().and_then(|r| r.strip_prefix(&base).ok()).map(Path::to_path_buf)
            });
        let rel = rel.filter(|r| !r.as_os_str().is_empty());
        let Some(rel) = rel else {
            bail!(
                "{} is not inside the tree {}",
                quote_env(path_bytes(p)),
                quote_env(path_bytes(&root))
            )
        };
        paths.push(path_bytes(&rel).to_vec());
    }
    if let Some(from) = &args.from {
        super::tree_dir(from)?;
    }
    if args.force && paths.is_empty() {
        bail!("--force writes over edits: name the files it may write over (PATH...)");
    }
    let opts = repair::RepairOptions {
        par2_dir: args.par2_dir.clone().unwrap_or_else(|| repair::default_par2_dir(&root)),
        memory: memory(&args.memory)?,
        from: args.from.clone(),
        keep_damaged: args.keep_damaged,
        paths,
        force: args.force,
    };
    let mut store = open(&root, catalog.as_deref(), args.wait)?;
    let mut opts = opts;
    let json = args.json;
    // Where the damage was found: by a run before (its command and start), or now, by a
    // look this repair takes when nothing stands and no file is named (as `par2 repair`
    // and `snapraid fix` look before they write). A subtree's: its standing findings, or
    // its look.
    let before = match (opts.paths.is_empty(), sub.is_empty()) {
        (false, _) => Some(Origin::Named),
        (true, true) => standing(store.as_ref())?.map(Origin::Before),
        (true, false) => {
            opts.paths = findings_under(store.as_ref(), &sub)?;
            match opts.paths.is_empty() {
                true => None,
                false => Some(Origin::Before(last_look(store.as_ref())?)),
            }
        }
    };
    let origin = match before {
        Some(o) => o,
        None => {
            let catalog = catalog.clone().unwrap_or_else(|| Catalog::default_path(&root));
            let r = look(&root, &catalog, &sub, store.as_mut())?;
            if !sub.is_empty() {
                opts.paths = findings_under(store.as_ref(), &sub)?;
            }
            Origin::Now { looked: r.files_looked(), read: r.files_read }
        }
    };
    let mut lines = Lines::new((json, false, false));
    // A subtree whose look found nothing: nothing to repair there (an empty list of
    // files would be the whole tree's findings).
    let report = match !sub.is_empty() && opts.paths.is_empty() {
        true => repair::RepairReport::default(),
        false => repair::repair(&root, store.as_mut(), &opts, &mut |e| lines.event(&e))?,
    };
    let mut stdout = lines.done()?;
    let source = match &origin {
        Origin::Now { looked, read } => format!(
            "found now (no finding stood: a scan looked at {} by their size, mtime and ctime, \
             and read {}; a verify reads every file for rot)",
            ui::count(*looked, "file"),
            ui::count(*read, "file")
        ),
        Origin::Before(Some((command, at))) => {
            format!("found by the {command} of {} UTC", fixity::clock::format_time(*at))
        }
        Origin::Before(None) => "found by a run before".to_string(),
        Origin::Named => "the files named".to_string(),
    };
    if json {
        let mut v = serde_json::to_value(&report)?;
        v["event"] = "summary".into();
        v["found"] = match &origin {
            Origin::Now { looked, read } => {
                v["looked"] = serde_json::json!({"files": looked, "read": read});
                "now".into()
            }
            _ => source.clone().into(),
        };
        writeln!(stdout, "{v}")?;
    } else {
        writeln!(
            stdout,
            "repair {}: {} with findings or asked for: {} repaired ({} from recovery data, {} \
             from the replica), {} intact, {} not repaired; {source}",
            quote_env(path_bytes(&root)),
            ui::count(report.targets, "file"),
            report.repaired,
            report.from_par2,
            report.from_replica,
            report.intact,
            report.unrepaired
        )?;
    }
    Ok(if report.unrepaired > 0 { Status::Failed } else { Status::Ok })
}

/// Where the damage a repair works on was found.
enum Origin {
    /// The files named on the command line.
    Named,
    /// Standing findings: found by a run before (the last scan or verify, command and
    /// start ms, when the catalog keeps it).
    Before(Option<(String, i64)>),
    /// Found now, by the look the repair took: the files its scan looked at, and read.
    Now { looked: u64, read: u64 },
}

/// The last scan or verify of `s.runs` (command, start ms). (Not a protect: one runs after
/// each scan and verify of a protected tree, to keep its sets in step.)
fn last_of(s: &fixity::catalog::Summary) -> Option<(String, i64)> {
    // The runs come newest first.
    let by = s.runs.iter().find(|r| ["scan", "verify"].contains(&&*r.command));
    by.map(|r| (r.command.clone(), r.started))
}

/// The last scan or verify before, if the catalog keeps one: what found the findings
/// standing now.
fn last_look(store: &dyn Store) -> anyhow::Result<Option<(String, i64)>> {
    Ok(last_of(&store.summary(fixity::clock::now_ms())?))
}

/// Whether a finding stands in the catalog: `Some`, with the last scan or verify before
/// (see [`last_look`]), when one does.
fn standing(store: &dyn Store) -> anyhow::Result<Option<Option<(String, i64)>>> {
    let s = store.summary(fixity::clock::now_ms())?;
    let findings = s.missing
        + s.by_result
            .iter()
            .filter(|(class, _)| Class::from_name(class).is_some_and(|c| c.is_failure()))
            .map(|(_, n)| n)
            .sum::<u64>();
    Ok((findings > 0).then(|| last_of(&s)))
}

/// The look a repair takes first when nothing stands: a scan of the tree (every file's
/// size, mtime and ctime compared with its record; missing files and edits recorded, a
/// file whose ctime moved read), its findings then repaired as any. Quiet: what it finds
/// is told by the repair's own lines.
fn look(
    root: &Path,
    catalog: &Path,
    sub: &[u8],
    store: &mut dyn Store,
) -> anyhow::Result<scrub::Report> {
    let spec = super::catalog_spec(Some(catalog), root, None);
    let file = matches!(spec, StoreSpec::Sqlite(_)).then_some(catalog);
    let exclude =
        Exclude::new(&super::exclude::tree_patterns(root, file)?).context("bad exclude pattern")?;
    // As `scan` reads with its defaults, quiet.
    let read = crate::cli::ReadArgs {
        jobs: None,
        buffer_memory: None,
        storage: crate::cli::Storage::Auto,
        no_mmap: false,
        progress: false,
        no_progress: true,
        verbose: false,
    };
    let engine = super::engine_config(Some(root), &read);
    let opts = scrub::Options {
        mode: scrub::Mode::Scan,
        follow: false,
        exclude,
        max_bytes: None,
        max_duration: None,
        engine,
        modify_window_ns: None,
    };
    let report = scrub::run_subtree(root, store, &opts, sub, &mut |_| {})?;
    if let Some(e) = &report.catalog_error {
        bail!("the look before the repair could not record what it found: {e}");
    }
    Ok(report)
}

/// What runs after `scan` or `verify` over a whole tree.
pub(super) struct After {
    /// Repair the findings (`verify --repair`, when there are findings).
    pub(super) repair: bool,
    /// Check the recovery files (a verify over the whole tree, not a slice).
    pub(super) check: bool,
}

impl After {
    /// Repairs findings if asked, then keeps a protected tree's sets in step; lines (or
    /// JSON objects) for what it did. Whether anything is left a problem.
    pub(super) fn run(
        &self,
        root: &Path,
        store: &mut dyn Store,
        par2_dir: &Path,
        (json, quiet, verbose): (bool, bool, bool),
    ) -> anyhow::Result<bool> {
        // A catalog opened only to compare with records nothing: nor do the sets change.
        if let Some(why) = store.read_only_reason() {
            if self.repair || par2_dir.is_dir() {
                crate::ui::error(&format!("recovery sets left as they are: {why}"));
            }
            return Ok(false);
        }
        let mut stdout = std::io::stdout().lock();
        let mut out = Vec::new();
        let mut problems = false;
        if self.repair {
            let opts = repair::RepairOptions {
                par2_dir: par2_dir.to_path_buf(),
                memory: repair::DEFAULT_MEMORY,
                from: None,
                keep_damaged: false,
                paths: Vec::new(),
                force: false,
            };
            let r = repair::repair(root, store, &opts, &mut |e| {
                emit(&mut out, &e, (json, verbose, quiet));
            })?;
            problems |= r.unrepaired > 0;
        }
        let kept = repair::upkeep(root, store, par2_dir, self.check, &mut |e| {
            problems |= matches!(e, Event::SetDamaged { .. })
                || matches!(&e, Event::Left { why, .. } if !matches!(why, Left::Finding(_)));
            emit(&mut out, &e, (json, verbose, quiet));
        })?;
        if let Some(r) = kept.filter(|r| !quiet && (r.made > 0 || r.removed > 0)) {
            let line = format!(
                "recovery sets: {} re-made, {} current, {} kept, {} removed\n",
                r.made, r.current, r.kept, r.removed
            );
            if !json {
                out.extend(line.bytes());
            }
        }
        stdout.write_all(&out).context("write error")?;
        Ok(problems)
    }
}
