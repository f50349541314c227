//! `fixity check --audit -k KNOWN [PATH...]`: hashdeep's audit mode. Load the known
//! hashdeep files, walk the paths hashing each file once with every algorithm they use,
//! classify each file by digest (see `fixity::audit`) and print hashdeep's messages and
//! summary. Exit 0 when the audit passes, 1 when it fails.

use super::{Status, engine_config};
use crate::cli::CheckArgs;
use crate::ui::{self, Progress};
use anyhow::{Context, bail};
use fixity::audit::{self, Class, Event, Known};
use fixity::formats::coreutils::result_line;
use fixity::formats::hashdeep::{Line, Parser};
use fixity::formats::json;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::read::io_message;
use fixity::sources::Sources;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// Reads the known hashdeep files into one set. Errors name the file and line.
fn load(files: &[PathBuf]) -> anyhow::Result<Known> {
    let mut known = Known::new();
    for f in files {
        let fname = quote_env(path_bytes(f));
        let file =
            std::fs::File::open(f).map_err(|e| anyhow::anyhow!("{fname}: {}", io_message(&e)))?;
        let mut reader = BufReader::new(file);
        let mut parser = Parser::new();
        let mut buf = Vec::new();
        let mut lineno = 0u64;
        let mut records = 0u64;
        loop {
            buf.clear();
            if reader.read_until(b'\n', &mut buf).with_context(|| format!("{fname}: read error"))?
                == 0
            {
                break;
            }
            lineno += 1;
            if buf.last() == Some(&b'\n') {
                buf.pop();
            }
            match parser.line(&buf) {
                Ok(Line::File(r)) => {
                    records += 1;
                    known.add(r);
                }
                Ok(Line::Header) => {}
                Err(e) => bail!("{fname}: {lineno}: {e}"),
            }
        }
        if records == 0 {
            bail!("{fname}: no known hashes in this file");
        }
    }
    Ok(known)
}

pub fn run(args: CheckArgs) -> anyhow::Result<Status> {
    let mut known = load(&args.known)?;
    let paths: Vec<OsString> =
        if args.manifests.is_empty() { vec![OsString::from(".")] } else { args.manifests.clone() };
    let mut cfg = engine_config(paths.first().map(Path::new), &args.read);
    // Never audit the known files themselves.
    for (slot, k) in args.known.iter().take(2).enumerate() {
        if let Ok(id) = fixity::sys::path_id(Path::new(k)) {
            cfg.read.skip_inodes[slot] = Some(id);
        }
    }
    let mut progress = Progress::new(args.read.progress, !args.read.no_progress);
    cfg.read.progress = progress.counter();

    let show = !args.status && !args.quiet;
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut line = Vec::with_capacity(256);
    let mut write_err = None;
    let mut examined = 0u64;
    let mut tail = Vec::new();
    let outcome = audit::run(&mut known, Sources::new(paths), cfg, &mut |event| {
        line.clear();
        match event {
            Event::Examined { name, size, class } => {
                examined += 1;
                progress.file_done(size, examined);
                if *class != Class::Matched || args.read.verbose {
                    if args.json {
                        let (moved, note) = match class {
                            Class::Moved { from } => (Some(from.as_slice()), None),
                            Class::Partial { with } => (
                                None,
                                Some(format!(
                                    "some digests or the size differ from {}",
                                    String::from_utf8_lossy(with)
                                )),
                            ),
                            _ => (None, None),
                        };
                        json::write_finding(
                            name,
                            class.key(),
                            moved,
                            note.as_deref(),
                            None,
                            &mut line,
                        );
                    } else if show {
                        let msg = match class {
                            Class::Matched => "Ok".to_string(),
                            Class::Moved { from } => {
                                format!("Moved from {}", String::from_utf8_lossy(from))
                            }
                            Class::Partial { with } => {
                                format!("Hash collision with {}", String::from_utf8_lossy(with))
                            }
                            Class::New => "No match".to_string(),
                        };
                        result_line(name, &msg, &mut line);
                    }
                }
            }
            Event::Unreadable { name, error } => {
                ui::error(&format!("{}: {}", quote_env(name), error.message()));
                if args.json {
                    json::write_error(name, &error.message(), error.is_skip(), &mut line);
                }
            }
            Event::Skipped { path, why } => {
                problem(path_bytes(path), why, true, args.json, &mut line)
            }
            Event::WalkError { path, error } => {
                problem(path_bytes(path), &io_message(error), false, args.json, &mut line)
            }
            // After the walk: kept for the end, after the last file's line.
            Event::NotFound { name } => {
                if args.json {
                    json::write_finding(name, "not_found", None, None, None, &mut tail);
                } else if show {
                    result_line(name, "Known file not used", &mut tail);
                }
            }
        }
        super::emit(&mut out, &line, &mut write_err)
    });
    progress.finish();
    if let Some(e) = write_err {
        return Err(anyhow::Error::new(e).context("write error"));
    }
    let passed = outcome.passed();
    if args.json {
        let obj = serde_json::json!({
            "summary": outcome.summary,
            "errors": outcome.errors,
            "passed": passed
        });
        serde_json::to_writer(&mut tail, &obj)?;
        tail.push(b'\n');
    } else if !args.status {
        tail.extend_from_slice(if passed {
            b"fixity: Audit passed\n"
        } else {
            b"fixity: Audit failed\n"
        });
        if !args.quiet {
            for l in outcome.summary.lines() {
                tail.extend_from_slice(l.as_bytes());
                tail.push(b'\n');
            }
        }
    }
    out.write_all(&tail).context("write error")?;
    out.flush().context("write error")?;
    Ok(if passed { Status::Ok } else { Status::Failed })
}

/// A path the walk left out or could not enter: a message, and with `--json` a record.
fn problem(name: &[u8], msg: &str, skipped: bool, json: bool, line: &mut Vec<u8>) {
    ui::error(&format!("{}: {msg}", quote_env(name)));
    if json {
        json::write_error(name, msg, skipped, line);
    }
}
