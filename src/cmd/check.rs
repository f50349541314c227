//! `fixity check`: verify files against manifests with the stdout, stderr and exit status
//! of coreutils' `sha256sum -c` (program name aside). Lines of every manifest are hashed in
//! parallel and reported in manifest order.

use super::{Status, engine_config};
use crate::cli::CheckArgs;
use crate::ui::{self, Progress};
use fixity::algo::{self, Algorithm};
use fixity::digest::Digest;
use fixity::formats::coreutils::{self, Tool};
use fixity::formats::{LineKind, Manifest, json};
use fixity::pathtext::{bytes_path, escape_into, quote_env};
use fixity::pipeline::{self, Task, Work};
use fixity::read::{OpenMode, ReadError};
use fixity::verify::{AlgoHints, Counts, Resolved, plural, reaches_outside, resolve};
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;

/// What the producer hands the printer, in manifest order.
enum Item {
    /// A line to verify (its number: for `--confine`'s refusal).
    Line { lineno: u64, name: Vec<u8>, sums: Vec<(&'static Algorithm, Digest)>, size: Option<u64> },
    /// An improperly formatted line (1-based number); in drop-in `cksum`, the tag its
    /// warning names.
    /// `why`: what a format that recognized the line found wrong with it.
    Malformed { lineno: u64, cksum_tag: Option<&'static str>, why: Option<String> },
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
    // `-a NAME`, or `-a md5,sha1` for lines with several digests (rhash's `name  d1  d2`).
    let (forced, columns) = match &args.algorithm {
        Some(list) if list.contains(',') => {
            let algos = algo::parse_list(list).map_err(anyhow::Error::msg)?;
            let leaked: &'static [&'static Algorithm] = Box::leak(algos.into_boxed_slice());
            (None, Some(leaked))
        }
        Some(n) => (
            Some(algo::lookup(n).ok_or_else(|| {
                anyhow::anyhow!("unknown algorithm '{n}' (`fixity algorithms` lists them)")
            })?),
            None,
        ),
        None => (None, None),
    };
    let manifests: Vec<OsString> =
        if args.manifests.is_empty() { vec![OsString::from("-")] } else { args.manifests.clone() };
    let first = manifests.iter().find(|m| *m != "-").map(std::path::Path::new);
    let mut cfg = engine_config(Some(first.unwrap_or(std::path::Path::new("."))), &args.read);
    let mut progress = Progress::new(args.read.progress, !args.read.no_progress);
    cfg.read.progress = progress.counter();
    let delim = if args.zero { 0u8 } else { b'\n' };

    // Drop-in mode reads lines exactly as the real tool does (its state spans manifests).
    let mut emulate = args.coreutils.then(|| {
        coreutils::Reader::new(if args.cksum_tags {
            Tool::Cksum(forced)
        } else if forced.is_some_and(|a| a.name == "blake2b") {
            Tool::B2sum
        } else {
            Tool::Fixed(forced.expect("a coreutils drop-in names its algorithm"))
        })
    });
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut status = Status::Ok;
    let mut counts = Counts::default();
    let mut current = 0usize;
    let mut ambiguous_said = false;
    let mut files = 0u64;
    let mut line = Vec::with_capacity(256);
    let mut write_err = None;
    pipeline::run(
        &cfg,
        |push| {
            // Drop-in cksum: the tag its warnings name (the last tagged line's, or -a's).
            let mut cksum_tag: &'static str = forced.map_or("CRC", |a| a.tag);
            for m in &manifests {
                let hints = AlgoHints {
                    forced,
                    columns,
                    // A `.cksum` list is named for the tool, whose `-a ALG` writes tagged
                    // lines of any algorithm beside its own `CRC SIZE NAME` lines.
                    from_name: if m == "-" {
                        None
                    } else {
                        algo::by_file_name(m.as_bytes()).filter(|a| a.name != "cksum")
                    },
                };
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
                let mut parser = Manifest::for_name(m.as_bytes());
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
                    if let Some(reader) = emulate.as_mut() {
                        let task = emulated(reader, &buf, m == "-", lineno);
                        if let Some(task) = task
                            && !push(task)
                        {
                            return;
                        }
                        continue;
                    }
                    if buf.last() == Some(&delim) {
                        buf.pop();
                    }
                    let parsed = parser.parse_line(&buf);
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
                    let ck_tag = args.cksum_tags.then_some(cksum_tag);
                    let why = parser.problem().map(str::to_string);
                    let malformed = Item::Malformed { lineno, cksum_tag: ck_tag, why };
                    let task = match parsed {
                        LineKind::Ignored => continue,
                        LineKind::Malformed => Task { payload: malformed, work: None },
                        // cksum 9.1 without -a reads tagged lines only.
                        LineKind::Record(r)
                            if args.cksum_tags && forced.is_none() && r.algo.is_none() =>
                        {
                            Task { payload: malformed, work: None }
                        }
                        LineKind::Record(r) => match resolve(&r, &hints) {
                            Resolved::Malformed => Task { payload: malformed, work: None },
                            Resolved::Ambiguous(fits) => {
                                Task { payload: Item::Ambiguous { lineno, fits }, work: None }
                            }
                            Resolved::Sums(sums) => {
                                if args.cksum_tags && forced.is_none() {
                                    // `BLAKE2b` for BLAKE2b-256 too, as coreutils names it.
                                    cksum_tag = sums[0].0.family().tag;
                                }
                                Task {
                                    work: Some(Work {
                                        path: bytes_path(&r.name),
                                        // --confine: no symlink may lead out either.
                                        mode: if args.confine {
                                            OpenMode::Beneath
                                        } else {
                                            OpenMode::Named
                                        },
                                        algos: sums.iter().map(|s| s.0).collect(),
                                    }),
                                    payload: Item::Line {
                                        lineno,
                                        name: r.name,
                                        sums,
                                        size: r.size,
                                    },
                                }
                            }
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
                Item::Line { lineno, name, sums, size } => {
                    counts.properly_formatted += 1;
                    let algo = algo_label(&sums);
                    match outcome.expect("lines carry work") {
                        Ok(h) => {
                            files += 1;
                            progress.file_done(h.size, files);
                            // Every digest is compared (no early exit), and the size where
                            // the manifest records one.
                            let digests_match = sums
                                .iter()
                                .zip(&h.digests)
                                .fold(true, |ok, ((_, want), got)| got.ct_eq(want) & ok);
                            if digests_match && size.is_none_or(|s| s == h.size) {
                                counts.ok += 1;
                                if args.json {
                                    json::write_check(&name, &algo, "ok", None, &mut line);
                                } else if !args.quiet && !args.status {
                                    result_line(&name, "OK", &mut line);
                                }
                            } else {
                                counts.mismatched += 1;
                                if args.json {
                                    json::write_check(&name, &algo, "failed", None, &mut line);
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
                        Err(ReadError::Escapes) => {
                            counts.refused += 1;
                            ui::error(&format!(
                                "{mname}: {lineno}: {}: refused: the path escapes the tree \
                                 through a symbolic link",
                                quote_env(&name)
                            ));
                            if args.json {
                                let why = "escapes the tree through a symbolic link";
                                json::write_check(&name, &algo, "refused", Some(why), &mut line);
                            }
                        }
                        Err(e) => {
                            counts.unreadable += 1;
                            // stdout is flushed before anything goes to stderr, so that
                            // both through one pipe read as coreutils' (its stdout is
                            // line buffered).
                            let _ = out.flush();
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
                                    &algo,
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
                Item::Malformed { lineno, cksum_tag, why } => {
                    counts.malformed += 1;
                    if args.json {
                        json::write_line_problem(
                            manifest_bytes(manifest),
                            lineno,
                            "malformed",
                            why.as_deref()
                                .unwrap_or("not a checksum line in any format fixity reads"),
                            &mut line,
                        );
                    }
                    if args.warn {
                        let _ = out.flush();
                        let tag = match cksum_tag {
                            Some(t) => format!("{t} "),
                            None => forced
                                .or_else(|| algo::by_file_name(manifest.as_bytes()))
                                .map(|a| format!("{} ", a.tag))
                                .unwrap_or_default(),
                        };
                        // coreutils' words; fixity adds what it found wrong with a line that
                        // a format of its own (hashdeep, cfv .csv) recognized.
                        let why = why.filter(|_| !args.coreutils).map(|w| format!(": {w}"));
                        ui::error(&format!(
                            "{mname}: {lineno}: improperly formatted {tag}checksum line{}",
                            why.unwrap_or_default()
                        ));
                    }
                }
                Item::Ambiguous { lineno, fits } => {
                    counts.ambiguous += 1;
                    if args.json {
                        let names: Vec<&str> = fits.iter().map(|a| a.name).collect();
                        let detail =
                            format!("the digest fits {}: name one with -a", names.join(", "));
                        json::write_line_problem(
                            manifest_bytes(manifest),
                            lineno,
                            "ambiguous",
                            &detail,
                            &mut line,
                        );
                    }
                    if !ambiguous_said {
                        ambiguous_said = true;
                        let _ = out.flush();
                        let names: Vec<&str> = fits.iter().map(|a| a.name).collect();
                        ui::error(&format!(
                            "{mname}: {lineno}: a {}-digit digest fits {}: name the algorithm with -a",
                            fits[0].hex_len(),
                            names.join(", ")
                        ));
                    }
                }
                Item::Outside { lineno } => {
                    let _ = out.flush();
                    ui::error(&format!(
                        "{mname}: {lineno}: note: this manifest names files outside its \
                         directory (absolute or ..); --confine refuses such lines"
                    ));
                }
                Item::Refused { lineno, name } => {
                    counts.refused += 1;
                    counts.properly_formatted += 1;
                    let _ = out.flush();
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
                    let _ = out.flush();
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
                    let _ = out.flush();
                    status = status.max(summarize(&counts, &mname, &args));
                    counts = Counts::default();
                    ambiguous_said = false;
                    current += 1;
                }
            }
            super::emit(&mut out, &line, &mut write_err)
        },
    );
    progress.finish();
    if let Some(e) = write_err {
        return Err(anyhow::Error::new(e).context("write error"));
    }
    out.flush()?;
    Ok(status)
}

/// The task for one line of a drop-in's manifest, read as the real tool reads it (`None`
/// for a line it skips); `raw` still has its newline.
fn emulated(
    reader: &mut coreutils::Reader,
    raw: &[u8],
    from_stdin: bool,
    lineno: u64,
) -> Option<Task<Item>> {
    Some(match reader.parse(raw, from_stdin) {
        coreutils::Line::Skipped => return None,
        coreutils::Line::Malformed => Task {
            payload: Item::Malformed { lineno, cksum_tag: Some(reader.tag()), why: None },
            work: None,
        },
        coreutils::Line::Check { algo, digest, name } => Task {
            work: Some(Work {
                path: bytes_path(&name),
                // A line naming `-` reads standard input, as coreutils does.
                mode: if name == b"-" { OpenMode::Stdin } else { OpenMode::Named },
                algos: vec![algo].into(),
            }),
            payload: Item::Line { lineno, name, sums: vec![(algo, digest)], size: None },
        },
    })
}

/// The algorithm names of a line, as JSON reports them (`md5,sha256` for several).
fn algo_label(sums: &[(&'static Algorithm, Digest)]) -> String {
    sums.iter().map(|(a, _)| a.name).collect::<Vec<_>>().join(",")
}

/// `name: RESULT`, the name escaped (with a leading `\`) only when it holds a newline, as
/// coreutils 9 prints check results.
pub(super) fn result_line(name: &[u8], result: &str, out: &mut Vec<u8>) {
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

fn manifest_bytes(m: &OsString) -> &[u8] {
    if m == "-" { b"-" } else { m.as_bytes() }
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
        // coreutils says so when no file matched (a mismatch is no verified file).
        if args.ignore_missing && c.ok == 0 {
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
