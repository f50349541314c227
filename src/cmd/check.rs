//! `fixity check`: verify files against manifests with the stdout, stderr and exit status
//! of coreutils' `sha256sum -c` (program name aside). Lines of every manifest are hashed in
//! parallel and reported in manifest order.

use super::{Status, engine_config};
use crate::cli::CheckArgs;
use crate::ui::{self, Progress};
use fixity::algo::{self, Algorithm};
use fixity::digest::Digest;
use fixity::formats::{Format, LineKind, Manifest, Record, cfv_csv, json};
use fixity::pathtext::{bytes_path, escape_into, quote_env};
use fixity::pipeline::{self, Task, Work};
use fixity::read::{OpenMode, ReadError};
use fixity::verify::{AlgoHints, Counts, Resolved, plural, reaches_outside, resolve};
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

/// What the producer hands the printer, in manifest order.
enum Item {
    /// A line to verify.
    Line { name: Vec<u8>, algo: &'static Algorithm, expected: Digest },
    /// An improperly formatted line (1-based number).
    Malformed { lineno: u64 },
    /// A line whose digest length fits several algorithms.
    Ambiguous { lineno: u64, fits: Vec<&'static Algorithm> },
    /// The first line of a manifest whose path leaves the manifest's directory (noticed
    /// once per manifest).
    Outside { lineno: u64 },
    /// A line refused by `--confine`.
    Refused { lineno: u64, name: Vec<u8> },
    /// The manifest could not be opened (with the reason) or read (coreutils says only
    /// "read error" then, and skips the manifest's summary).
    ManifestError(Option<io::Error>),
    /// End of the current manifest: print its summary.
    End,
}

pub fn run(args: CheckArgs) -> anyhow::Result<Status> {
    if args.audit {
        return super::audit::run(args);
    }
    let forced = match &args.algorithm {
        Some(n) => Some(algo::lookup(n).ok_or_else(|| {
            anyhow::anyhow!("unknown algorithm '{n}' (`fixity algorithms` lists them)")
        })?),
        None => None,
    };
    let manifests: Vec<OsString> =
        if args.manifests.is_empty() { vec![OsString::from("-")] } else { args.manifests.clone() };
    let first = manifests.iter().find(|m| *m != "-").map(std::path::Path::new);
    let mut cfg = engine_config(Some(first.unwrap_or(std::path::Path::new("."))), &args.read);
    let mut progress = Progress::new(args.read.progress, !args.read.no_progress);
    cfg.read.progress = progress.counter();
    let delim = if args.zero { 0u8 } else { b'\n' };

    let stdout = io::stdout();
    let tty = stdout.is_terminal();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut status = Status::Ok;
    let mut counts = Counts::default();
    let mut current = 0usize;
    let mut ambiguous_said = false;
    let mut files = 0u64;
    let mut line = Vec::with_capacity(256);
    let mut write_err = None;
    let algo_sets: Vec<Arc<[&'static Algorithm]>> =
        algo::ALGORITHMS.iter().map(|a| Arc::from(vec![a])).collect();
    let set_of = |a: &'static Algorithm| {
        let i = algo::ALGORITHMS.iter().position(|x| x == a).expect("registered");
        algo_sets[i].clone()
    };

    pipeline::run(
        &cfg,
        |push| {
            for m in &manifests {
                let hints = AlgoHints {
                    forced,
                    from_name: if m == "-" { None } else { algo::by_file_name(m.as_bytes()) },
                };
                let is_sfv = m.as_bytes().to_ascii_lowercase().ends_with(b".sfv");
                let is_csv = m.as_bytes().to_ascii_lowercase().ends_with(b".csv");
                let reader: io::Result<Box<dyn Read + Send>> = if m == "-" {
                    Ok(Box::new(io::stdin()))
                } else {
                    std::fs::File::open(m).map(|f| Box::new(f) as Box<dyn Read + Send>)
                };
                let reader = match reader {
                    Ok(r) => r,
                    Err(e) => {
                        if !push(Task { payload: Item::ManifestError(Some(e)), work: None }) {
                            return;
                        }
                        continue;
                    }
                };
                let mut reader = BufReader::with_capacity(256 * 1024, reader);
                let mut parser = Manifest::new(is_sfv);
                let mut buf = Vec::new();
                let mut lineno = 0u64;
                let mut read_failed = false;
                let mut outside_said = false;
                loop {
                    buf.clear();
                    match reader.read_until(delim, &mut buf) {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(_) => {
                            read_failed = true;
                            break;
                        }
                    }
                    lineno += 1;
                    if buf.last() == Some(&delim) {
                        buf.pop();
                    }
                    let parsed = parse_any(&mut parser, is_csv, &buf);
                    if let LineKind::Record(r) = &parsed
                        && reaches_outside(&r.name)
                    {
                        if args.confine {
                            let name = r.name.clone();
                            if !push(Task { payload: Item::Refused { lineno, name }, work: None }) {
                                return;
                            }
                            continue;
                        }
                        if !outside_said && !args.coreutils && !args.status {
                            outside_said = true;
                            if !push(Task { payload: Item::Outside { lineno }, work: None }) {
                                return;
                            }
                        }
                    }
                    let task = match parsed {
                        LineKind::Ignored => continue,
                        LineKind::Malformed => {
                            Task { payload: Item::Malformed { lineno }, work: None }
                        }
                        LineKind::Record(r) => match resolve(&r, &hints) {
                            Resolved::Malformed => {
                                Task { payload: Item::Malformed { lineno }, work: None }
                            }
                            Resolved::Ambiguous(fits) => {
                                Task { payload: Item::Ambiguous { lineno, fits }, work: None }
                            }
                            Resolved::Algo(a) => Task {
                                work: Some(Work {
                                    path: bytes_path(&r.name),
                                    mode: OpenMode::Named,
                                    algos: set_of(a),
                                }),
                                payload: Item::Line { name: r.name, algo: a, expected: r.digest },
                            },
                        },
                    };
                    if !push(task) {
                        return;
                    }
                }
                let end = if read_failed { Item::ManifestError(None) } else { Item::End };
                if !push(Task { payload: end, work: None }) {
                    return;
                }
            }
        },
        |item, outcome| {
            line.clear();
            let manifest = &manifests[current];
            let mname = manifest_name(manifest);
            match item {
                Item::Line { name, algo, expected } => {
                    counts.properly_formatted += 1;
                    match outcome.expect("lines carry work") {
                        Ok(h) => {
                            files += 1;
                            progress.file_done(h.size, files);
                            if h.digests[0].ct_eq(&expected) {
                                counts.ok += 1;
                                if args.json {
                                    json::write_check(&name, algo.name, "ok", None, &mut line);
                                } else if !args.quiet && !args.status {
                                    result_line(&name, "OK", &mut line);
                                }
                            } else {
                                counts.mismatched += 1;
                                if args.json {
                                    json::write_check(&name, algo.name, "failed", None, &mut line);
                                } else if !args.status {
                                    result_line(&name, "FAILED", &mut line);
                                }
                            }
                        }
                        Err(ReadError::Io(e))
                            if args.ignore_missing && e.kind() == io::ErrorKind::NotFound =>
                        {
                            counts.ignored_missing += 1;
                        }
                        Err(e) => {
                            counts.unreadable += 1;
                            if tty {
                                let _ = out.flush();
                            }
                            ui::error(&format!("{}: {}", quote_env(&name), e.message()));
                            if args.json {
                                let kind = match &e {
                                    ReadError::Io(io) if io.kind() == io::ErrorKind::NotFound => {
                                        "missing"
                                    }
                                    ReadError::Changed => "changed",
                                    _ => "unreadable",
                                };
                                json::write_check(
                                    &name,
                                    algo.name,
                                    kind,
                                    Some(&e.message()),
                                    &mut line,
                                );
                            } else if !args.status {
                                result_line(&name, "FAILED open or read", &mut line);
                            }
                        }
                    }
                }
                Item::Malformed { lineno } => {
                    counts.malformed += 1;
                    if args.warn {
                        let tag = forced
                            .or_else(|| algo::by_file_name(manifest.as_bytes()))
                            .map(|a| format!("{} ", a.tag))
                            .unwrap_or_default();
                        ui::error(&format!(
                            "{mname}: {lineno}: improperly formatted {tag}checksum line"
                        ));
                    }
                }
                Item::Ambiguous { lineno, fits } => {
                    counts.ambiguous += 1;
                    if !ambiguous_said {
                        ambiguous_said = true;
                        let names: Vec<&str> = fits.iter().map(|a| a.name).collect();
                        ui::error(&format!(
                            "{mname}: {lineno}: a {}-digit digest fits {}: name the algorithm with -a",
                            fits[0].hex_len(),
                            names.join(", ")
                        ));
                    }
                }
                Item::Outside { lineno } => {
                    ui::error(&format!(
                        "{mname}: {lineno}: note: this manifest names files outside its \
                         directory (absolute or ..); --confine refuses such lines"
                    ));
                }
                Item::Refused { lineno, name } => {
                    counts.refused += 1;
                    counts.properly_formatted += 1;
                    ui::error(&format!(
                        "{mname}: {lineno}: {}: refused: the path leaves the manifest's directory",
                        quote_env(&name)
                    ));
                    if args.json {
                        json::write_check(
                            &name,
                            "",
                            "refused",
                            Some("outside the manifest's directory"),
                            &mut line,
                        );
                    }
                }
                Item::ManifestError(e) => {
                    match e {
                        Some(e) => ui::error(&format!("{mname}: {}", fixity::read::io_message(&e))),
                        None => ui::error(&format!("{mname}: read error")),
                    }
                    status = status.max(Status::Failed);
                    counts = Counts::default();
                    ambiguous_said = false;
                    current += 1;
                }
                Item::End => {
                    if tty {
                        let _ = out.flush();
                    }
                    status = status.max(summarize(&counts, &mname, &args));
                    counts = Counts::default();
                    ambiguous_said = false;
                    current += 1;
                }
            }
            if !line.is_empty()
                && let Err(e) = out.write_all(&line)
            {
                write_err = Some(e);
                return false;
            }
            true
        },
    );
    progress.finish();
    if let Some(e) = write_err {
        return Err(anyhow::Error::new(e).context("write error"));
    }
    out.flush()?;
    Ok(status)
}

/// One manifest line: cfv's `.csv` lines first in a `.csv` file, else the line formats of
/// [`Manifest`], with `.csv` lines (which no other format matches) as the fallback. The
/// size a `.csv` line records is not compared (the CRC covers the content).
fn parse_any(parser: &mut Manifest, is_csv: bool, line: &[u8]) -> LineKind {
    let csv = || {
        cfv_csv::parse_line(line).map(|r| {
            LineKind::Record(Record {
                algo: Some(cfv_csv::algorithm()),
                digest: r.digest,
                name: r.name,
                format: Format::Sfv,
            })
        })
    };
    if is_csv {
        if line.strip_suffix(b"\r").unwrap_or(line).is_empty() {
            return LineKind::Ignored;
        }
        return csv().unwrap_or(LineKind::Malformed);
    }
    match parser.parse_line(line) {
        LineKind::Malformed => csv().unwrap_or(LineKind::Malformed),
        parsed => parsed,
    }
}

/// `name: RESULT`, the name escaped (with a leading `\`) only when it holds a newline, as
/// coreutils 9 prints check results.
fn result_line(name: &[u8], result: &str, out: &mut Vec<u8>) {
    if name.contains(&b'\n') {
        out.push(b'\\');
        escape_into(name, out);
    } else {
        out.extend_from_slice(name);
    }
    out.extend_from_slice(b": ");
    out.extend_from_slice(result.as_bytes());
    out.push(b'\n');
}

fn manifest_name(m: &OsString) -> String {
    if m == "-" { quote_env(b"standard input") } else { quote_env(m.as_bytes()) }
}

/// Prints the end-of-manifest warnings and returns the manifest's status.
fn summarize(c: &Counts, mname: &str, args: &CheckArgs) -> Status {
    if c.ambiguous > 0 {
        return Status::Usage;
    }
    if c.properly_formatted == 0 {
        ui::error(&format!("{mname}: no properly formatted checksum lines found"));
        return Status::Failed;
    }
    if !args.status {
        if c.malformed > 0 {
            let (v, l) = (plural(c.malformed, "line is", "lines are"), c.malformed);
            ui::error(&format!("WARNING: {l} {v} improperly formatted"));
        }
        if c.unreadable > 0 {
            let (l, v) = (c.unreadable, plural(c.unreadable, "listed file", "listed files"));
            ui::error(&format!("WARNING: {l} {v} could not be read"));
        }
        if c.mismatched > 0 {
            let (l, v) =
                (c.mismatched, plural(c.mismatched, "computed checksum", "computed checksums"));
            ui::error(&format!("WARNING: {l} {v} did NOT match"));
        }
        if args.ignore_missing && c.verified() == 0 {
            ui::error(&format!("{mname}: no file was verified"));
        }
        if c.refused > 0 {
            let (l, v) = (c.refused, plural(c.refused, "line was", "lines were"));
            ui::error(&format!(
                "WARNING: {l} {v} refused (paths outside the manifest's directory)"
            ));
        }
    }
    let bad = c.refused > 0
        || c.mismatched > 0
        || c.unreadable > 0
        || (args.strict && c.malformed > 0)
        || (args.ignore_missing && c.verified() == 0);
    if bad { Status::Failed } else { Status::Ok }
}
