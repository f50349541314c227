//! `fixity check --audit -k KNOWN [PATH...]`: hashdeep's audit mode. Load the known
//! hashdeep files, walk the paths hashing each file once with every algorithm they use,
//! classify each file by digest (see `fixity::audit`) and print hashdeep's messages and
//! summary. Exit 0 when the audit passes, 1 when it fails.

use super::{Status, engine_config};
use crate::cli::CheckArgs;
use crate::ui::{self, Progress};
use anyhow::{Context, bail};
use fixity::audit::{Class, Known, Summary};
use fixity::formats::coreutils::result_line;
use fixity::formats::hashdeep::{Line, Parser};
use fixity::formats::json;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::pipeline::{self, Task, Work};
use fixity::read::{ReadError, io_message};
use fixity::sources::{Source, Sources};
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

enum Entry {
    File(Vec<u8>),
    Problem(PathBuf, String, bool),
}

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
    let algos: Arc<[&'static fixity::algo::Algorithm]> = Arc::from(known.algorithms().to_vec());
    let paths: Vec<OsString> =
        if args.manifests.is_empty() { vec![OsString::from(".")] } else { args.manifests.clone() };
    let mut cfg = engine_config(paths.first().map(Path::new), &args.read);
    // Never audit the known files themselves.
    for (slot, k) in args.known.iter().take(2).enumerate() {
        if let Ok(md) = std::fs::metadata(k) {
            cfg.read.skip_inodes[slot] = Some((md.dev(), md.ino()));
        }
    }
    let mut progress = Progress::new(args.read.progress, !args.read.no_progress);
    cfg.read.progress = progress.counter();
    let sources = Sources::new(paths);

    let show = !args.status && !args.quiet;
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut summary = Summary { expecting: known.len() as u64, ..Summary::default() };
    let mut errors = 0u64;
    let mut line = Vec::with_capacity(256);
    let mut write_err = None;
    pipeline::run(
        &cfg,
        |push| {
            sources.each(&mut |source| {
                push(match source {
                    Source::File { name, path, mode } => Task {
                        payload: Entry::File(name),
                        work: Some(Work { path, mode, algos: algos.clone() }),
                    },
                    Source::Skipped { path, why } => {
                        Task { payload: Entry::Problem(path, why.to_string(), true), work: None }
                    }
                    Source::Error { path, error } => Task {
                        payload: Entry::Problem(path, io_message(&error), false),
                        work: None,
                    },
                })
            })
        },
        |entry, outcome| {
            line.clear();
            match (entry, outcome) {
                (Entry::File(name), Some(Ok(h))) => {
                    summary.examined += 1;
                    progress.file_done(h.size, summary.examined);
                    let class = known.classify(&name, h.size, &h.digests);
                    let (msg, from) = match &class {
                        Class::Matched => {
                            summary.matched += 1;
                            ("Ok".to_string(), None)
                        }
                        Class::Moved { from } => {
                            summary.moved += 1;
                            (format!("Moved from {}", String::from_utf8_lossy(from)), Some(from))
                        }
                        Class::Partial { with } => {
                            summary.partial += 1;
                            (
                                format!("Hash collision with {}", String::from_utf8_lossy(with)),
                                Some(with),
                            )
                        }
                        Class::New => {
                            summary.new += 1;
                            ("No match".to_string(), None)
                        }
                    };
                    if class != Class::Matched || args.verbose {
                        if args.json {
                            let note = match &class {
                                Class::Partial { with } => Some(format!(
                                    "some digests or the size differ from {}",
                                    String::from_utf8_lossy(with)
                                )),
                                _ => None,
                            };
                            let moved =
                                matches!(class, Class::Moved { .. }).then_some(from).flatten();
                            json::write_finding(
                                &name,
                                class.key(),
                                moved.map(|v| v.as_slice()),
                                note.as_deref(),
                                &mut line,
                            );
                        } else if show {
                            result_line(&name, &msg, &mut line);
                        }
                    }
                }
                (Entry::File(_), Some(Err(ReadError::OwnOutput))) => {}
                (Entry::File(name), Some(Err(e))) => {
                    if !e.is_skip() {
                        errors += 1;
                    }
                    ui::error(&format!("{}: {}", quote_env(&name), e.message()));
                    if args.json {
                        json::write_error(&name, &e.message(), e.is_skip(), &mut line);
                    }
                }
                (Entry::Problem(path, msg, skipped), _) => {
                    let name = path_bytes(&path);
                    errors += u64::from(!skipped);
                    ui::error(&format!("{}: {msg}", quote_env(name)));
                    if args.json {
                        json::write_error(name, &msg, skipped, &mut line);
                    }
                }
                (Entry::File(_), None) => unreachable!("files always carry work"),
            }
            super::emit(&mut out, &line, &mut write_err)
        },
    );
    progress.finish();
    if let Some(e) = write_err {
        return Err(anyhow::Error::new(e).context("write error"));
    }
    let mut tail = Vec::new();
    for name in known.not_found() {
        summary.not_found += 1;
        if args.json {
            json::write_finding(name, "not_found", None, None, &mut tail);
        } else if show {
            result_line(name, "Known file not used", &mut tail);
        }
    }
    let passed = summary.passed() && errors == 0;
    if args.json {
        let obj = serde_json::json!({ "summary": summary, "errors": errors, "passed": passed });
        serde_json::to_writer(&mut tail, &obj)?;
        tail.push(b'\n');
    } else if !args.status {
        tail.extend_from_slice(if passed {
            b"fixity: Audit passed\n"
        } else {
            b"fixity: Audit failed\n"
        });
        if !args.quiet {
            for l in summary.lines() {
                tail.extend_from_slice(l.as_bytes());
                tail.push(b'\n');
            }
        }
    }
    out.write_all(&tail).context("write error")?;
    out.flush().context("write error")?;
    Ok(if passed { Status::Ok } else { Status::Failed })
}
