//! `fixity hash`: walk the arguments, hash every file once with every algorithm asked
//! for, and stream a manifest (GNU, BSD tag, SFV or JSON lines) in sorted order.

use super::rhash_out::RhashOut;
use super::{Status, engine_config};
use crate::cli::{HashArgs, HashFormat};
use crate::ui::{self, Progress};
use anyhow::{Context, bail};
use fixity::algo::{self, Algorithm};
use fixity::formats::{
    self, Format, WriteOptions, b3sum, cfv_csv, cksum, hashdeep, json, sfv, xxhsum,
};
use fixity::output::AtomicFile;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::pipeline::{self, Task, Work};
use fixity::read::{ReadError, io_message};
use fixity::sources::{Source, Sources};
use fixity::walk::Exclude;
use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the producer hands the printer, in order.
enum Entry {
    /// A file being hashed, with its name as printed.
    File(Vec<u8>),
    /// Something the walk reports instead of hashing.
    Note(PathBuf, Note),
}

enum Note {
    Skipped(&'static str),
    Error(io::Error),
}

pub fn run(args: HashArgs) -> anyhow::Result<Status> {
    if let Some(manifest) = args.rhash.update.clone() {
        return super::update::run(args, &manifest);
    }
    if args.rhash.embed_crc {
        return super::embedded::embed(args);
    }
    let mut rhash_out = RhashOut::from_args(&args)?;
    let chosen = match args.format {
        Some(f) => f,
        None if args.json => HashFormat::Json,
        None if args.sfv => HashFormat::Sfv,
        None if args.tag => HashFormat::Bsd,
        None => HashFormat::Gnu,
    };
    let json_out = chosen == HashFormat::Json;
    // The tools' own lines: one algorithm each (fixed for cksum and sum), with its default.
    let tool = match chosen {
        HashFormat::Cksum => Some(("cksum", "cksum")),
        HashFormat::Sum => Some(("sum", "sum")),
        HashFormat::Sysv => Some(("sysv", "sysv")),
        HashFormat::B3sum => Some(("b3sum", "blake3")),
        HashFormat::Xxhsum => Some(("xxhsum", "xxh64")),
        _ => None,
    };
    let mut algos: Vec<&'static Algorithm> = match &args.algorithm {
        _ if rhash_out.is_some() => rhash_out.as_ref().expect("some").algorithms(),
        Some(list) => algo::parse_list(list).map_err(anyhow::Error::msg)?,
        None if matches!(chosen, HashFormat::Sfv | HashFormat::CfvCsv) => {
            vec![algo::lookup("crc32").expect("registered")]
        }
        None if tool.is_some() => vec![algo::lookup(tool.expect("some").1).expect("registered")],
        None if chosen == HashFormat::Hashdeep => {
            hashdeep::DEFAULT.iter().map(|n| algo::lookup(n).expect("registered")).collect()
        }
        None => vec![algo::default_algorithm()],
    };
    for a in &algos {
        match (a.strength, args.purpose) {
            // A sampled hash misses corruption as well as tampering: say so for any purpose.
            (algo::Strength::Sampled, Some(_)) => ui::error(&format!(
                "note: {} is {}: it reads three 16 KiB samples of each file from 128 KiB \
                 on, so it misses corruption and tampering elsewhere that keep the size \
                 (sha256, sha3-256 or blake3 read every byte)",
                a.name,
                a.strength.label()
            )),
            (s, Some(crate::cli::Purpose::Tamper)) if s != algo::Strength::Cryptographic => {
                ui::error(&format!(
                    "note: {} is {}: it catches accidental corruption, not deliberate \
                     tampering (sha256, sha3-256 or blake3 do both)",
                    a.name,
                    a.strength.label()
                ))
            }
            _ => {}
        }
    }
    if chosen == HashFormat::Sfv && (algos.len() != 1 || algos[0].name != "crc32") {
        bail!("SFV files hold CRC32 only: drop -a or use -a crc32");
    }
    let csv_out = chosen == HashFormat::CfvCsv;
    let shape = tool.and_then(|(_, a)| cksum::Shape::of(a));
    if let Some((name, default)) = tool {
        let fits = match (shape, algos.as_slice()) {
            (Some(_), [a]) => a.name == default,
            (None, [a]) => chosen != HashFormat::Xxhsum || xxhsum::supports(a),
            _ => false,
        };
        if !fits && shape.is_some() {
            bail!("{name} lines hold the {default} checksum only: drop -a");
        } else if !fits && chosen == HashFormat::Xxhsum {
            bail!(
                "xxhsum lines hold one of {}: drop -a or name one",
                xxhsum::ALGORITHMS.join(", ")
            );
        } else if !fits {
            bail!("b3sum lines hold one digest: drop -a or name one algorithm");
        }
        if shape.is_none() && (args.zero || args.binary) {
            bail!("{name} has no -z or -b: drop them");
        }
    }
    if csv_out && (algos.len() != 1 || algos[0].name != "crc32") {
        bail!("cfv's .csv files hold CRC32 only: drop -a or use -a crc32");
    }
    let format = match chosen {
        HashFormat::Sfv => Format::Sfv,
        HashFormat::Gnu if algos.len() == 1 => Format::Gnu,
        _ => Format::Bsd,
    };
    let hashdeep_out = chosen == HashFormat::Hashdeep;
    if hashdeep_out {
        algos = hashdeep::column_order(&algos).map_err(|a| {
            anyhow::anyhow!("hashdeep files hold {} only, not {a}", hashdeep::COLUMNS.join(", "))
        })?;
        if args.zero {
            bail!("hashdeep files end lines with newline: -z does not apply");
        }
    }
    let encoding = if rhash_out.is_none() { super::rhash_out::line_encoding(&args) } else { None };
    if encoding.is_some() && !matches!(chosen, HashFormat::Gnu | HashFormat::Bsd) {
        bail!("--base64 goes with gnu, bsd and rhash's formats only");
    }
    let wopts =
        WriteOptions { binary: args.binary && format == Format::Gnu, zero: args.zero, encoding };
    let paths: Vec<OsString> =
        if args.paths.is_empty() { vec![OsString::from("-")] } else { args.paths.clone() };

    let mut atomic = None;
    let mut skip = [None, None];
    if let Some(target) = args.output.as_deref().filter(|p| p.as_os_str() != "-") {
        if let Ok(md) = std::fs::metadata(target) {
            skip[1] = Some((md.dev(), md.ino()));
        }
        let f = AtomicFile::create(target)
            .with_context(|| format!("cannot write {}", quote_env(path_bytes(target))))?;
        skip[0] = f.inode();
        atomic = Some(f);
    }
    let first = paths.iter().find(|p| *p != "-").map(Path::new);
    let mut cfg = engine_config(first, &args.read);
    cfg.read.skip_inodes = skip;

    let exclude = Exclude::new(&args.exclude).context("bad --exclude pattern")?;
    let sources =
        Sources { paths: paths.clone(), follow: args.follow, exclude, no_walk: args.no_walk };
    let mut progress = Progress::new(args.read.progress, !args.read.no_progress);
    cfg.read.progress = progress.counter();
    if let Some(bar) = progress.handle() {
        sources.count_bytes_in_background(move |n| bar.set_length(n));
    }

    let stdout = io::stdout();
    let mut out: Box<dyn Write> = match atomic.as_mut() {
        Some(f) => Box::new(BufWriter::with_capacity(256 * 1024, f)),
        None => Box::new(BufWriter::with_capacity(64 * 1024, stdout.lock())),
    };
    if hashdeep_out {
        let mut head = Vec::new();
        let cwd = std::env::current_dir().context("cannot find the current directory")?;
        let argv: Vec<Vec<u8>> = std::env::args_os().map(OsStringExt::into_vec).collect();
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        hashdeep::write_header(&algos, path_bytes(&cwd), &argv.join(&b' '), root, &mut head);
        out.write_all(&head)?;
    } else if format == Format::Sfv && !json_out && !args.rhash.no_header {
        out.write_all(&sfv::header())?;
    }

    let algo_arc: Arc<[&'static Algorithm]> = Arc::from(algos.clone());
    let mut failed = false;
    let mut write_err: Option<io::Error> = None;
    let mut line = Vec::with_capacity(512);
    let mut files = 0u64;
    pipeline::run(
        &cfg,
        |push| {
            sources.each(&mut |source| {
                push(match source {
                    Source::File { name, path, mode } => Task {
                        payload: Entry::File(name),
                        work: Some(Work { path, mode, algos: algo_arc.clone() }),
                    },
                    Source::Skipped { path, why } => {
                        Task { payload: Entry::Note(path, Note::Skipped(why)), work: None }
                    }
                    Source::Error { path, error } => {
                        Task { payload: Entry::Note(path, Note::Error(error)), work: None }
                    }
                })
            })
        },
        |entry, outcome| {
            line.clear();
            match (entry, outcome) {
                (Entry::File(name), Some(Ok(h))) => {
                    files += 1;
                    progress.file_done(h.size, files);
                    if let Some(r) = rhash_out.as_mut() {
                        if let Err(msg) = r.file(&name, &h, &mut line) {
                            ui::error(&msg);
                            failed = true;
                        }
                    } else if json_out {
                        let pairs: Vec<_> =
                            algos.iter().copied().zip(h.digests.iter().copied()).collect();
                        json::write_file(&name, h.size, &pairs, &mut line);
                    } else if (format == Format::Sfv || hashdeep_out || csv_out)
                        && name.contains(&b'\n')
                    {
                        let what = match chosen {
                            HashFormat::Hashdeep => "a hashdeep file",
                            HashFormat::CfvCsv => "a cfv .csv file",
                            _ => "SFV",
                        };
                        ui::error(&format!(
                            "{}: {what} cannot hold a name with a newline",
                            quote_env(&name)
                        ));
                        failed = true;
                    } else if hashdeep_out {
                        hashdeep::write(h.size, &h.digests, &name, &mut line);
                    } else if csv_out {
                        cfv_csv::write(&name, h.size, &h.digests[0], &mut line);
                    } else if let Some(shape) = shape {
                        // As cksum and sum, no name for standard input read because no
                        // file was named.
                        let named = (!args.paths.is_empty()).then_some(name.as_slice());
                        let end = if args.zero { 0 } else { b'\n' };
                        cksum::write(shape, &h.digests[0], h.size, named, end, &mut line);
                    } else if chosen == HashFormat::B3sum {
                        b3sum::write(h.digests[0].as_bytes(), Some(&name), &mut line);
                    } else if chosen == HashFormat::Xxhsum {
                        let shown = if name == b"-" { xxhsum::STDIN } else { &name };
                        xxhsum::write(algos[0], &h.digests[0], shown, false, false, &mut line);
                    } else {
                        for (a, d) in algos.iter().zip(&h.digests) {
                            formats::write_record(format, wopts, a, d, &name, &mut line);
                        }
                    }
                }
                (Entry::File(_), Some(Err(ReadError::OwnOutput))) => {}
                (Entry::File(name), Some(Err(e))) => {
                    if !e.is_skip() {
                        failed = true;
                    }
                    // The lines before go out first, as from coreutils' line-buffered
                    // stdout, so both streams through one pipe read the same.
                    let _ = out.flush();
                    ui::error(&format!("{}: {}", quote_env(&name), e.message()));
                    if json_out {
                        json::write_error(&name, &e.message(), e.is_skip(), &mut line);
                    }
                }
                (Entry::Note(path, note), _) => {
                    let name = path_bytes(&path);
                    let (msg, skipped) = match note {
                        Note::Skipped(why) => (why.to_string(), true),
                        Note::Error(e) => (io_message(&e), false),
                    };
                    failed |= !skipped;
                    let _ = out.flush();
                    ui::error(&format!("{}: {msg}", quote_env(name)));
                    if json_out {
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
        return Err(e).context("write error");
    }
    if let Some(r) = rhash_out {
        out.write_all(&r.finish()).context("write error")?;
    }
    out.flush().context("write error")?;
    drop(out);
    if let Some(f) = atomic {
        let target = args.output.as_deref().expect("set with atomic");
        f.commit().with_context(|| format!("cannot write {}", quote_env(path_bytes(target))))?;
    }
    Ok(if failed { Status::Failed } else { Status::Ok })
}
