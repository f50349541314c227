//! `fixity hash`: the arguments become a [`Job`] (a library [`HashPlan`] and the manifest
//! writer the format asks for, checked once), and the job's events are rendered: records
//! to standard output or the atomic `-o` file, messages to standard error, progress.

use super::{Status, engine_config};
use crate::cli::{HashArgs, Purpose, ReadArgs};
use crate::ui::{self, Progress};
use anyhow::Context;
use fixity::algo::{self, Algorithm, Strength};
use fixity::formats::{FileEntry, Invocation, ManifestWriter, OutputFormat, Stdin, WriteOptions};
use fixity::hashing::{self, HashEvent, HashPlan, Inputs};
use fixity::output::AtomicFile;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::read::io_message;
use fixity::sources::Sources;
use fixity::walk::Exclude;
use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A checked hash run: the files, the writer (which knows the algorithms), how to read.
pub(crate) struct Job {
    pub sources: Sources,
    pub writer: Box<dyn ManifestWriter>,
    pub read: ReadArgs,
    /// `-o FILE`: written atomically instead of standard output.
    pub output: Option<PathBuf>,
}

impl Job {
    /// A run of `algo` over the named `files` as the coreutils drop-ins make it: no walk
    /// (a directory is an error), GNU lines or BSD tags (`tag`), no progress bar.
    pub(crate) fn named_files(
        files: Vec<OsString>,
        algo: &'static Algorithm,
        tag: bool,
        opts: WriteOptions,
        read: ReadArgs,
    ) -> Job {
        let format = if tag { OutputFormat::Bsd } else { OutputFormat::Gnu };
        let opts = WriteOptions { stdin: Stdin::Named, ..opts };
        Job {
            sources: Sources {
                paths: files,
                follow: false,
                exclude: Exclude::default(),
                no_walk: true,
            },
            writer: format.writer(vec![algo], opts).expect("gnu and bsd hold any algorithm"),
            read,
            output: None,
        }
    }
}

/// The format `--format`, `--json`, `--sfv` or `--tag` asks for (gnu without them).
fn chosen_format(args: &HashArgs) -> OutputFormat {
    match args.format {
        Some(f) => f,
        None if args.json => OutputFormat::Json,
        None if args.sfv => OutputFormat::Sfv,
        None if args.tag => OutputFormat::Bsd,
        None => OutputFormat::Gnu,
    }
}

/// Notes (never refusals) on what `algos` cannot detect, for `--for`.
fn purpose_notes(algos: &[&'static Algorithm], purpose: Option<Purpose>) {
    for a in algos {
        match (a.strength, purpose) {
            // A sampled hash misses corruption as well as tampering: say so for any purpose.
            (Strength::Sampled, Some(_)) => ui::error(&format!(
                "note: {} is {}: it reads three 16 KiB samples of each file from 128 KiB \
                 on, so it misses corruption and tampering elsewhere that keep the size \
                 (sha256, sha3-256 or blake3 read every byte)",
                a.name,
                a.strength.label()
            )),
            (s, Some(Purpose::Tamper)) if s != Strength::Cryptographic => ui::error(&format!(
                "note: {} is {}: it catches accidental corruption, not deliberate \
                 tampering (sha256, sha3-256 or blake3 do both)",
                a.name,
                a.strength.label()
            )),
            _ => {}
        }
    }
}

/// Checks the arguments and makes the job: the format's writer (which refuses algorithms
/// and options it cannot hold), the files, the read options.
pub(crate) fn plan(args: HashArgs) -> anyhow::Result<Job> {
    let format = chosen_format(&args);
    let mut opts = WriteOptions {
        no_header: args.rhash.no_header,
        stdin: if args.paths.is_empty() { Stdin::Implicit } else { Stdin::Named },
        ..WriteOptions::default()
    };
    let writer = match super::rhash_out::writer(&args, &opts)? {
        Some(w) => {
            purpose_notes(w.algorithms(), args.purpose);
            w
        }
        None => {
            let asked = match &args.algorithm {
                Some(list) => Some(algo::parse_list(list).map_err(anyhow::Error::msg)?),
                None => None,
            };
            let algos = format.algorithms(asked);
            purpose_notes(&algos, args.purpose);
            opts.binary = args.binary;
            opts.zero = args.zero;
            opts.encoding = super::rhash_out::line_encoding(&args);
            if format == OutputFormat::Hashdeep {
                let cwd = std::env::current_dir().context("cannot find the current directory")?;
                opts.invocation = Invocation::current(path_bytes(&cwd));
            }
            format.writer(algos, opts).map_err(|r| anyhow::anyhow!(r.hash_message()))?
        }
    };
    let exclude = Exclude::new(&args.exclude).context("bad --exclude pattern")?;
    let paths = if args.paths.is_empty() { vec![OsString::from("-")] } else { args.paths };
    Ok(Job {
        sources: Sources { paths, follow: args.follow, exclude, no_walk: args.no_walk },
        writer,
        read: args.read,
        output: args.output.filter(|p| p.as_os_str() != "-"),
    })
}

/// `fixity hash`.
pub fn run(args: HashArgs) -> anyhow::Result<Status> {
    run_job(plan(args)?)
}

/// Runs `job` to standard output or its `-o` file (committed only when all went well).
pub(crate) fn run_job(job: Job) -> anyhow::Result<Status> {
    let mut atomic = None;
    let mut skip = [None, None];
    if let Some(target) = job.output.as_deref() {
        if let Ok(id) = fixity::sys::path_id(target) {
            skip[1] = Some(id);
        }
        let f = AtomicFile::create(target)
            .with_context(|| format!("cannot write {}", quote_env(path_bytes(target))))?;
        skip[0] = f.inode();
        atomic = Some(f);
    }
    let target = job.output.clone();
    let stdout = io::stdout();
    let mut out: Box<dyn Write> = match atomic.as_mut() {
        Some(f) => Box::new(BufWriter::with_capacity(256 * 1024, f)),
        None => Box::new(BufWriter::with_capacity(64 * 1024, stdout.lock())),
    };
    let failed = || super::write_failed(target.as_deref());
    // Render's only I/O errors are its writes to `out`: an output file's names the file.
    let status = render(job, skip, &mut out).map_err(|e| match e.downcast::<io::Error>() {
        Ok(io) => anyhow::Error::new(io).context(failed()),
        Err(e) => e,
    })?;
    out.flush().with_context(failed)?;
    drop(out);
    if let Some(f) = atomic {
        f.commit().with_context(failed)?;
    }
    Ok(status)
}

/// Runs `job` (leaving out the files `skip` names: the output being written) and renders
/// its events: the writer's header, records and footer to `out`, messages to standard
/// error, the progress bar.
pub(crate) fn render(
    mut job: Job,
    skip: [Option<(u64, u64)>; 2],
    out: &mut dyn Write,
) -> anyhow::Result<Status> {
    let first = job.sources.paths.iter().find(|p| *p != "-").map(Path::new);
    // One file needs no storage policy (`md5sum f` in a loop pays for every probe), unless
    // --verbose asks to see it.
    let lone_file = job.sources.paths.len() == 1 && first.is_some_and(Path::is_file);
    let first = first.filter(|_| !lone_file || job.read.verbose);
    let mut config = engine_config(first, &job.read);
    config.read.skip_inodes = skip;
    let mut progress = Progress::new(job.read.progress, !job.read.no_progress);
    config.read.progress = progress.counter();
    if let Some(bar) = progress.handle() {
        job.sources.count_bytes_in_background(move |n| bar.set_length(n));
    }
    let writer = &mut job.writer;
    let mut line = Vec::with_capacity(512);
    writer.header(&mut line);
    out.write_all(&line)?;
    let inputs = Inputs::Sources(job.sources);
    let plan = HashPlan { inputs, algos: writer.algorithms().to_vec(), config };

    let mut failed = false;
    let mut write_err: Option<io::Error> = None;
    let mut files = 0u64;
    hashing::run(plan, |event| {
        line.clear();
        let problem = match event {
            HashEvent::Hashed { name, hashed } => {
                files += 1;
                progress.file_done(hashed.size, files);
                let mtime = hashed.mtime_ns.map(|ns| ns.div_euclid(1_000_000_000) as i64);
                let file = FileEntry { name, size: hashed.size, mtime, digests: &hashed.digests };
                if let Err(e) = writer.record(&file, &mut line) {
                    ui::error(&e.message(&quote_env(name)));
                    failed = true;
                }
                None
            }
            HashEvent::Unreadable { name, error } => Some((name, error.message(), error.is_skip())),
            HashEvent::Skipped { path, why } => Some((path_bytes(path), why.to_string(), true)),
            HashEvent::WalkError { path, error } => {
                Some((path_bytes(path), io_message(error), false))
            }
        };
        if let Some((name, msg, skipped)) = problem {
            failed |= !skipped;
            // The lines before go out first, as from coreutils' line-buffered stdout, so
            // both streams through one pipe read the same.
            let _ = out.flush();
            ui::error(&format!("{}: {msg}", quote_env(name)));
            writer.problem(name, &msg, skipped, &mut line);
        }
        super::emit(out, &line, &mut write_err)
    });
    progress.finish();
    if let Some(e) = write_err {
        return Err(e).context("write error");
    }
    line.clear();
    writer.footer(&mut line);
    out.write_all(&line).context("write error")?;
    Ok(if failed { Status::Failed } else { Status::Ok })
}
