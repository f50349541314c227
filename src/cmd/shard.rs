//! `fixity plan`, `fixity hash --plan` (one part) and `fixity merge`: a tree split for
//! many machines (see [`fixity::shard`]). Renders the library's records as `hash` does:
//! the manifest to standard output or `-o`, messages to standard error.

use super::{Status, engine_config};
use crate::cli::{HashArgs, MergeArgs, PlanArgs};
use crate::ui;
use anyhow::{Context, bail};
use fixity::formats::{FileEntry, ManifestWriter, OutputFormat, WriteOptions};
use fixity::output::AtomicFile;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::shard::merge::{self, PartState};
use fixity::shard::part::{self, PartEvent, Record};
use fixity::shard::piece::PieceResult;
use fixity::shard::{MakeEvent, MakeOptions, Plan, host_name};
use fixity::sources::{Source, Sources};
use fixity::sys::OsStringExt;
use fixity::walk::Exclude;
use std::ffi::OsString;
use std::io::{self, BufRead, Write};
use std::path::Path;

/// `fixity plan`.
pub(crate) fn plan(args: PlanArgs) -> anyhow::Result<Status> {
    let exclude = Exclude::new(&args.exclude).context("bad --exclude pattern")?;
    let source = |p: OsString| Sources {
        paths: vec![p],
        follow: args.follow,
        exclude: exclude.clone(),
        no_walk: false,
    };
    if args.from_list.is_none() && args.paths.is_empty() {
        bail!("name the files and trees to plan, or --from-list FILE");
    }
    if args.paths.iter().any(|p| p == "-") {
        bail!("standard input cannot be planned: name files and trees");
    }
    let mut list_error = None;
    let mut walk_failed = false;
    let mut produce = |emit: &mut dyn FnMut(Source) -> bool| match &args.from_list {
        None => {
            for p in &args.paths {
                let mut go_on = true;
                source(p.clone()).each(&mut |s| {
                    go_on = emit(s);
                    go_on
                });
                if !go_on {
                    return;
                }
            }
        }
        Some(list) => {
            let input: Box<dyn BufRead> = if list.as_os_str() == "-" {
                Box::new(io::stdin().lock())
            } else {
                match std::fs::File::open(list) {
                    Ok(f) => Box::new(io::BufReader::new(f)),
                    Err(e) => {
                        list_error = Some((list.clone(), e));
                        return;
                    }
                }
            };
            for item in input.split(0) {
                let item = match item {
                    Ok(i) if i.is_empty() => continue,
                    Ok(i) => i,
                    Err(e) => {
                        list_error = Some((list.clone(), e));
                        return;
                    }
                };
                if item == b"-" {
                    list_error = Some((
                        list.clone(),
                        io::Error::other("standard input (-) cannot be planned"),
                    ));
                    return;
                }
                let mut go_on = true;
                source(OsString::from_vec(item)).each(&mut |s| {
                    go_on = emit(s);
                    go_on
                });
                if !go_on {
                    return;
                }
            }
        }
    };
    // A plan of one directory knows its tree: `scan|verify --plan` take it as the root.
    let root = match (&args.from_list, &args.paths[..]) {
        (None, [one]) if std::fs::metadata(one).is_ok_and(|m| m.is_dir()) => Some(
            fixity::sys::absolute(Path::new(one)).context("cannot find the current directory")?,
        ),
        _ => None,
    };
    let opts = MakeOptions {
        parts: args.parts,
        files_factor: args.files_bound,
        host: host_name(),
        root,
        piece_size: args.piece_size,
    };
    let made = Plan::make(&args.output, &mut produce, &opts, &mut |ev| match ev {
        MakeEvent::Skipped { path, why } => {
            ui::error(&format!("{}: {why}", quote_env(path_bytes(path))))
        }
        MakeEvent::WalkError { path, error } => {
            walk_failed = true;
            ui::error(&format!(
                "{}: {}",
                quote_env(path_bytes(path)),
                fixity::read::io_message(error)
            ));
        }
    });
    if let Some((list, e)) = list_error {
        bail!("cannot read {}: {}", quote_env(path_bytes(&list)), fixity::read::io_message(&e));
    }
    let plan = made?;
    let biggest = plan.parts.iter().map(|p| p.bytes).max().unwrap_or(0);
    println!(
        "plan {}: {}, {}, {} in {} (largest part {})",
        plan.id,
        ui::count(plan.parts.len() as u64, "part"),
        ui::count(plan.files, "file"),
        fixity::units::human_bytes(plan.bytes),
        plan.dir.display(),
        fixity::units::human_bytes(biggest)
    );
    Ok(if walk_failed { Status::Failed } else { Status::Ok })
}

/// Which part to hash: `--part`, else the array index the scheduler gives.
pub(super) fn part_index(arg: Option<usize>) -> anyhow::Result<usize> {
    if let Some(i) = arg {
        return Ok(i);
    }
    for var in ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let v = v.to_string_lossy();
            return v.trim().parse().with_context(|| format!("{var}={v} is not a part number"));
        }
    }
    bail!(
        "which part? give --part I, or run as a Slurm array task (SLURM_ARRAY_TASK_ID) or a \
         Kubernetes Indexed Job (JOB_COMPLETION_INDEX)"
    )
}

/// Which part of `plan` to work on (see [`part_index`]), checked against its parts.
pub(super) fn part_in(plan: &Plan, arg: Option<usize>) -> anyhow::Result<usize> {
    let index = part_index(arg)?;
    if index >= plan.parts.len() {
        bail!(
            "part {index} is out of range: the plan in {} has {} parts (0 to {})",
            plan.dir.display(),
            plan.parts.len(),
            plan.parts.len() - 1
        );
    }
    Ok(index)
}

/// `fixity hash --plan DIR`.
pub(crate) fn part(args: HashArgs) -> anyhow::Result<Status> {
    let dir = fixity::sys::absolute(args.plan.as_deref().expect("--plan"))
        .context("cannot find the plan")?;
    let plan = Plan::read(&dir)?;
    let index = part_in(&plan, args.part)?;
    let asked = match &args.algorithm {
        Some(list) => Some(fixity::algo::parse_list(list).map_err(anyhow::Error::msg)?),
        None => None,
    };
    let algos = OutputFormat::Gnu.algorithms(asked);
    std::env::set_current_dir(&plan.cwd).with_context(|| {
        format!(
            "cannot enter {}, where the plan was made (names are relative to it)",
            plan.cwd.display()
        )
    })?;
    let config = engine_config(Some(Path::new(".")), &args.read);
    let head = part::run(&plan, index, &algos, config, &host_name(), |ev| match ev {
        PartEvent::Record(r) => report(r),
        PartEvent::ReadWhole { name, whole, split } => {
            let (w, s) = (and_list(whole), and_list(split));
            let verb = if whole.len() == 1 { "does" } else { "do" };
            let and = if split.is_empty() { String::new() } else { format!(" ({s} split)") };
            ui::error(&format!(
                "{}: {w} {verb} not combine from ranges; part {index} reads the whole file{and}",
                quote_env(name)
            ));
        }
    })?;
    println!(
        "part {index} of {}: {}, {} hashed into {}{}",
        plan.parts.len(),
        ui::count(head.files, "file"),
        fixity::units::human_bytes(head.bytes),
        plan.part_path(index).display(),
        match (head.problems, head.changed) {
            (0, 0) => String::new(),
            (p, c) => format!(" ({p} not read, {c} changed since the plan)"),
        }
    );
    Ok(if head.problems + head.changed > 0 { Status::Failed } else { Status::Ok })
}

/// Says on standard error what one run would about `r` (nothing for a file hashed as
/// planned).
fn report(r: &Record) {
    match r {
        Record::Hashed { name, changed: true, .. } => ui::error(&format!(
            "{}: changed since the plan (size or modification time)",
            quote_env(name)
        )),
        Record::Hashed { .. } => {}
        Record::Unreadable { name, message, .. } => {
            ui::error(&format!("{}: {message}", quote_env(name)))
        }
        Record::Skipped { path, why } => ui::error(&format!("{}: {why}", quote_env(path))),
        Record::WalkError { path, message } => {
            ui::error(&format!("{}: {message}", quote_env(path)))
        }
        Record::Piece { name, piece, result, .. } => match result {
            PieceResult::Hashed { changed: true, .. } => {
                ui::error(&format!("{}: {}", quote_env(name), fixity::shard::CHANGED))
            }
            PieceResult::Hashed { .. } => {}
            PieceResult::Unreadable { message, .. } => ui::error(&format!(
                "{}: bytes {} to {}: {message}",
                quote_env(name),
                piece.start,
                piece.end
            )),
            PieceResult::Covered => ui::error(&format!(
                "{}: bytes {} to {} are read by the part holding the file's first piece, which \
                 reads the whole file",
                quote_env(name),
                piece.start,
                piece.end
            )),
        },
    }
}

/// `a`, `a and b`, `a, b and c`: algorithms named in a sentence.
fn and_list(algos: &[&fixity::algo::Algorithm]) -> String {
    let names: Vec<&str> = algos.iter().map(|a| a.name).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// `fixity merge`.
pub(crate) fn merge(args: MergeArgs) -> anyhow::Result<Status> {
    let plan = Plan::read(&args.plan)?;
    if args.status {
        return show_status(&plan, args.json);
    }
    let mut atomic = match &args.output {
        Some(p) => Some(
            AtomicFile::create(p)
                .with_context(|| format!("cannot write {}", quote_env(path_bytes(p))))?,
        ),
        None => None,
    };
    let stdout = io::stdout();
    let mut out: Box<dyn Write> = match atomic.as_mut() {
        Some(f) => Box::new(io::BufWriter::with_capacity(256 * 1024, f)),
        None => Box::new(io::BufWriter::with_capacity(64 * 1024, stdout.lock())),
    };
    let mut writer: Option<Box<dyn ManifestWriter>> = None;
    // Where each of the writer's algorithms is among the parts' (a writer may put them
    // in its own order, as rhash's do).
    let mut order: Vec<usize> = Vec::new();
    let mut digests = Vec::new();
    let mut line = Vec::with_capacity(512);
    let mut failed = false;
    let mut write_err: Option<io::Error> = None;
    let merged = merge::merge(&plan, &mut |step| {
        let r = match step {
            merge::Step::Start(algos) => {
                let mut w = args
                    .format
                    .writer(args.format.algorithms(Some(algos.to_vec())), WriteOptions::default())
                    .map_err(|r| r.hash_message())?;
                order = w
                    .algorithms()
                    .iter()
                    .map(|a| {
                        algos.iter().position(|b| b.name == a.name).expect("the parts' algorithms")
                    })
                    .collect();
                line.clear();
                w.header(&mut line);
                writer = Some(w);
                return out.write_all(&line).map_err(|e| format!("write error: {e}"));
            }
            merge::Step::Record(r) => r,
        };
        {
            let w = writer.as_mut().expect("started");
            line.clear();
            match r {
                Record::Hashed { name, size, mtime_ns, digests: found, changed } => {
                    let mtime = mtime_ns.map(|ns| ns.div_euclid(1_000_000_000) as i64);
                    digests.clear();
                    digests.extend(order.iter().map(|&i| found[i]));
                    let file = FileEntry { name, size: *size, mtime, digests: &digests };
                    if let Err(e) = w.record(&file, &mut line) {
                        ui::error(&e.message(&quote_env(name)));
                        failed = true;
                    }
                    if *changed {
                        let _ = out.flush();
                        report(r);
                        failed = true;
                    }
                }
                Record::Unreadable { name, message, skipped } => {
                    let _ = out.flush();
                    report(r);
                    failed |= !skipped;
                    w.problem(name, message, *skipped, &mut line);
                }
                Record::Skipped { path, why } => {
                    let _ = out.flush();
                    report(r);
                    w.problem(path, why, true, &mut line);
                }
                Record::WalkError { path, message } => {
                    let _ = out.flush();
                    report(r);
                    failed = true;
                    w.problem(path, message, false, &mut line);
                }
                // The merge hands on a split file joined, never its pieces.
                Record::Piece { .. } => {}
            }
            if write_err.is_none()
                && let Err(e) = out.write_all(&line)
            {
                write_err = Some(e);
            }
        }
        Ok(())
    });
    let merged = match merged {
        Ok(m) => m,
        Err(merge::MergeError::Refused(why)) => {
            ui::error(&why);
            return Ok(Status::Usage);
        }
        Err(e) => return Err(e.into()),
    };
    let cannot = || super::write_failed(args.output.as_deref());
    if let Some(e) = write_err {
        return Err(e).with_context(cannot);
    }
    line.clear();
    writer.as_mut().expect("started").footer(&mut line);
    out.write_all(&line).with_context(cannot)?;
    out.flush().with_context(cannot)?;
    drop(out);
    let names: Vec<&str> = merged.algorithms.iter().map(|a| a.name).collect();
    let root = format!(
        "root blake3:{} over {} of {} ({} bytes)",
        merged.root,
        names.join(","),
        ui::count(merged.files, "file"),
        merged.bytes
    );
    if let (Some(f), Some(target)) = (atomic, &args.output) {
        f.commit().with_context(|| format!("cannot write {}", quote_env(path_bytes(target))))?;
        println!("{root}");
    } else {
        ui::error(&root);
    }
    Ok(if failed { Status::Failed } else { Status::Ok })
}

/// `fixity merge --status`.
fn show_status(plan: &Plan, json: bool) -> anyhow::Result<Status> {
    let st = merge::status(plan)?;
    let all_done = st.complete() && st.parts.iter().all(|p| matches!(p, PartState::Done(_)));
    if json {
        let parts: Vec<serde_json::Value> = st
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut v = serde_json::json!({ "part": i, "state": p.word(), "planned_files": plan.parts[i].files, "planned_bytes": plan.parts[i].bytes });
                match p {
                    PartState::Done(h) | PartState::Failed(h) => {
                        v["files"] = h.files.into();
                        v["bytes"] = h.bytes.into();
                        v["problems"] = h.problems.into();
                        v["changed"] = h.changed.into();
                        v["host"] = h.host.clone().into();
                        v["finished"] = fixity::clock::format_rfc3339(h.finished).into();
                        v["algorithms"] = h.algorithms.iter().map(|a| a.name).collect::<Vec<_>>().into();
                    }
                    PartState::Stale { plan } => v["plan"] = plan.clone().into(),
                    PartState::Overlapping { index } => v["says_part"] = (*index).into(),
                    PartState::Broken(e) => v["error"] = e.clone().into(),
                    PartState::Missing => {}
                }
                v
            })
            .collect();
        let strays: Vec<serde_json::Value> =
            st.strays.iter().map(|(n, w)| serde_json::json!({ "file": n, "why": w })).collect();
        let doc = serde_json::json!({ "plan": plan.id, "parts": parts, "strays": strays, "mixed": st.mixed, "complete": all_done });
        println!("{doc}");
    } else {
        let mut counts = std::collections::BTreeMap::new();
        for (i, p) in st.parts.iter().enumerate() {
            *counts.entry(p.word()).or_insert(0usize) += 1;
            let detail = match p {
                PartState::Done(h) | PartState::Failed(h) => format!(
                    "{}, {}, on {} at {}{}",
                    ui::count(h.files, "file"),
                    fixity::units::human_bytes(h.bytes),
                    h.host,
                    fixity::clock::format_time(h.finished),
                    match (h.problems, h.changed) {
                        (0, 0) => String::new(),
                        (p, c) => format!("; {p} not read, {c} changed since the plan"),
                    }
                ),
                PartState::Missing => format!(
                    "not run ({}, {} planned)",
                    ui::count(plan.parts[i].files, "file"),
                    fixity::units::human_bytes(plan.parts[i].bytes)
                ),
                PartState::Stale { plan: other } => {
                    format!("made for plan {other}, not {}: run it again", plan.id)
                }
                PartState::Overlapping { index } => {
                    format!("hashed another list (it says part {index}): run it again")
                }
                PartState::Broken(e) => e.clone(),
            };
            println!("part-{i}: {}: {detail}", p.word());
        }
        for (name, why) in &st.strays {
            println!("{name}: stray: {why}");
        }
        if let Some(m) = &st.mixed {
            println!("mixed algorithms: {m}: run it again with the others'");
        }
        let summary: Vec<String> = counts.iter().map(|(w, n)| format!("{n} {w}")).collect();
        println!("plan {}: {} parts: {}", plan.id, st.parts.len(), summary.join(", "));
    }
    Ok(if all_done { Status::Ok } else { Status::Failed })
}
