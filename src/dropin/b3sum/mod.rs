//! Drop-in `b3sum` (the BLAKE3 team's tool, 1.2.0 as installed here): hex digests of any
//! length (`-l`), `--no-names`, `--raw`, `--keyed`, `--derive-key`, `--num-threads`,
//! `--no-mmap`, and `-c` with its own line grammar (`\` before a line whose name is
//! escaped, only `\\` and `\n` escapes). Its command line is parsed by clap 2, whose
//! error messages (and "Did you mean" suggestions) are reproduced here.

use crate::cmd::Status;
use fixity::algo::Hasher;
use fixity::check::digests_match;
use fixity::digest::Digest;
use fixity::formats::b3sum;
use fixity::read::{self, Fetch, OnChange, OpenMode, ReadError, ReadOptions, ReadPlan, Reader};
use fixity::sys::OsStrExt;
use std::ffi::{OsStr, OsString};
use std::io::{self, BufRead, Read, Write};
use std::path::Path;

mod args;

use args::{CONFLICTS, Opts, arg, clap_error, parse, shown};

/// What the installed b3sum calls itself in its messages.
const NAME: &str = "b3sum";

/// How a file is hashed.
struct Mode {
    key: Option<[u8; 32]>,
    context: Option<String>,
    no_mmap: bool,
}

impl Mode {
    fn hasher(&self) -> blake3::Hasher {
        match (&self.key, &self.context) {
            (Some(k), _) => blake3::Hasher::new_keyed(k),
            (None, Some(c)) => blake3::Hasher::new_derive_key(c),
            (None, None) => blake3::Hasher::new(),
        }
    }

    /// Hashes a file (or standard input for `-`) through the library's reader, on several
    /// threads when it is a large enough regular file. `buf` is the read buffer, reused.
    fn hash(&self, name: &OsStr, buf: &mut Vec<u8>) -> io::Result<blake3::OutputReader> {
        let opts = ReadOptions {
            buffer_size: BLOCK,
            mmap_threshold: None,
            advise: false,
            ..ReadOptions::default()
        };
        let mut reader = Reader { buf, opts: &opts, serial: None };
        let sink = || Box::new(Blake3 { state: self.hasher(), parallel: !self.no_mmap });
        let mut sinks = [sink()];
        // b3sum hashes whatever it reads: a file that grows while it is read is hashed at
        // the length it had when mapped, or to its end when read.
        let whole = ReadPlan { on_change: OnChange::Accept, ..ReadPlan::WHOLE };
        let path = Path::new(name);
        if name == "-" {
            if self.key.is_some() {
                return Err(io::Error::other("Cannot open `-` in keyed mode"));
            }
            reader.read_path(path, OpenMode::Stdin, &whole, &mut sinks).map_err(io_error)?;
            return Ok(sinks[0].state.finalize_xof());
        }
        let file = read::open(path, OpenMode::Named).map_err(io_error)?;
        // b3sum maps a regular file of 16 KiB or more and hashes the map on several
        // threads; a mapped page whose read fails (a bad sector) or that a truncation
        // removed raises SIGBUS and kills it. The library's guarded mapping turns the first
        // into this file's I/O error; after the second (the file shrank) the file is read
        // again (from offset 0: a mapping never moves it) as `b3sum --no-mmap` reads it, so
        // the digest is of what is there now.
        let mapped = Fetch::Mapped { from: 16 * 1024, parallel: true };
        let plan = if self.no_mmap { whole } else { ReadPlan { fetch: mapped, ..whole } };
        match reader.read_file(&file, path, OpenMode::Named, &plan, &mut sinks) {
            Ok(_) => {}
            Err(ReadError::Changed) => {
                sinks = [sink()];
                reader
                    .read_file(&file, path, OpenMode::Named, &whole, &mut sinks)
                    .map_err(io_error)?;
            }
            Err(e) => return Err(io_error(e)),
        }
        Ok(sinks[0].state.finalize_xof())
    }
}

/// The drop-in's BLAKE3 state (plain, keyed or derive-key) as a sink of the library's
/// reader, taken back for its extendable output.
struct Blake3 {
    state: blake3::Hasher,
    /// Hash large chunks on several threads (off with `--no-mmap`, as in b3sum).
    parallel: bool,
}

impl Hasher for Blake3 {
    fn update(&mut self, data: &[u8]) {
        self.state.update(data);
    }
    fn update_parallel(&mut self, data: &[u8]) {
        // Below 128 KiB, splitting the work costs more than it saves.
        if self.parallel && data.len() >= 128 * 1024 {
            self.state.update_rayon(data);
        } else {
            self.state.update(data);
        }
    }
    fn finish(&self) -> Digest {
        Digest::new(self.state.finalize().as_bytes())
    }
}

/// Bytes read and hashed at once from a file that is not mapped: enough for every thread
/// to have whole BLAKE3 subtrees to hash.
const BLOCK: usize = 8 * 1024 * 1024;

/// The reader's error as an I/O error, which b3sum prints as Rust does. Only `Io` arises
/// for a file named by the user and read as b3sum reads it; the others keep their text.
fn io_error(e: ReadError) -> io::Error {
    match e {
        ReadError::Io(e) => e,
        other => io::Error::other(other.message()),
    }
}

/// An error as the Rust standard library prints it (`... (os error 2)`), which b3sum
/// shows unchanged.
fn io_text(e: &io::Error) -> String {
    e.to_string()
}

/// Runs `b3sum ARGS`.
pub fn run(args: Vec<OsString>) -> anyhow::Result<Status> {
    crate::ui::set_program(NAME);
    let o = match parse(&args) {
        Ok(o) => o,
        Err(s) => return Ok(s),
    };
    if o.has("help") {
        println!(
            "{NAME} (fixity drop-in)\n\n\
             USAGE:\n    {NAME} [FLAGS] [OPTIONS] [FILE]...\n\n\
             FLAGS:\n\
             \x20   -c, --check       Reads BLAKE3 sums from the [file]s and checks them\n\
             \x20   -h, --help        Prints help information\n\
             \x20       --keyed       Keyed mode; the 32-byte key is read from standard input\n\
             \x20       --no-mmap     Disables memory mapping (and multithreading)\n\
             \x20       --no-names    Omits filenames in the output\n\
             \x20       --quiet       Skips printing OK for each verified file (with --check)\n\
             \x20       --raw         Writes the raw output bytes of one input\n\
             \x20   -V, --version     Prints version information\n\n\
             OPTIONS:\n\
             \x20       --derive-key <CONTEXT>    Key derivation mode with this context\n\
             \x20   -l, --length <LEN>            Output bytes before hex encoding (default 32)\n\
             \x20       --num-threads <NUM>       Maximum number of threads"
        );
        return Ok(Status::Ok);
    }
    if o.has("version") {
        println!("{NAME} (fixity) {}", env!("CARGO_PKG_VERSION"));
        return Ok(Status::Ok);
    }
    for &(a, b) in CONFLICTS {
        if o.has(a) && o.has(b) {
            let msg =
                format!("The argument '{}' cannot be used with '{}'", shown(arg(a)), shown(arg(b)));
            return Ok(clap_error(&msg, &o.used, None));
        }
    }
    // clap's usage line for a missing argument names it with every argument given.
    let missing = "The following required arguments were not provided:";
    if o.has("quiet") && !o.has("check") {
        return Ok(clap_error(&format!("{missing}\n    --check"), &o.used, None));
    }
    if o.has("keyed") && o.files.is_empty() {
        return Ok(clap_error(&format!("{missing}\n    <FILE>..."), &o.used, None));
    }
    // After the command line, b3sum refuses --raw with several files, then reads the key,
    // then the number of threads, each ending the run with its own message.
    if o.has("raw") && o.files.len() > 1 {
        eprintln!("Error: Only one filename can be provided when using --raw");
        return Ok(Status::Failed);
    }
    let mut key = None;
    if o.has("keyed") {
        let mut buf = Vec::new();
        io::stdin().lock().take(33).read_to_end(&mut buf)?;
        match <[u8; 32]>::try_from(buf.as_slice()) {
            Ok(k) => key = Some(k),
            Err(_) if buf.len() > 32 => {
                eprintln!("Error: read more than 32 key bytes from stdin");
                return Ok(Status::Failed);
            }
            Err(_) => {
                eprintln!("Error: expected 32 key bytes from stdin, found {}", buf.len());
                return Ok(Status::Failed);
            }
        }
    }
    let threads = match &o.num_threads {
        Some(v) => match v.to_string_lossy().parse::<usize>() {
            Ok(n) => Some(n),
            Err(e) => {
                eprint!("Error: Failed to parse num threads.\n\nCaused by:\n    {e}\n");
                return Ok(Status::Failed);
            }
        },
        None => None,
    };
    // b3sum (clap 2) panics on a context that is not UTF-8; the drop-in says so instead.
    let context = match o.derive_key.as_ref().map(|c| c.to_str()) {
        Some(None) => {
            eprintln!("Error: the context of --derive-key is not valid UTF-8");
            return Ok(Status::Failed);
        }
        Some(Some(c)) => Some(c.to_string()),
        None => None,
    };
    let mode = Mode { key, context, no_mmap: o.has("no-mmap") };
    let work = || {
        if o.has("check") { check(&o, &mode) } else { hash(&o, &mode) }
    };
    let status = match threads.filter(|&n| n > 0) {
        Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n).build()?.install(work),
        None => work(),
    };
    Ok(status)
}

/// Standard output cannot be written (a full disk, a closed pipe): b3sum panics with
/// `failed printing to stdout: ...` (exit 101); the drop-in says the same and exits 1.
fn write_failed(e: &io::Error) -> Status {
    eprintln!("Error: failed printing to stdout: {}", io_text(e));
    Status::Failed
}

fn hash(o: &Opts, mode: &Mode) -> Status {
    let files = if o.files.is_empty() { vec![OsString::from("-")] } else { o.files.clone() };
    let raw = o.has("raw");
    let named = !raw && !o.has("no-names");
    // Rust's standard output, which b3sum writes through too: it holds what it is given
    // until a newline (or the exit), so the `\` of an escaped name, printed before a
    // length that fails to parse, waits for the next line as in b3sum.
    let mut out = io::stdout();
    let mut status = Status::Ok;
    let mut buf = Vec::new();
    for f in &files {
        let name = f.to_string_lossy();
        // As in b3sum: the file is read first, and the length parsed when the digest is
        // printed.
        let mut reader = match mode.hash(f, &mut buf) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{NAME}: {name}: {}", io_text(&e));
                status = Status::Failed;
                continue;
            }
        };
        let escaped = named && b3sum::needs_escape(&name);
        if let Err(e) = out.write_all(if escaped { b"\\" } else { b"" }) {
            return write_failed(&e);
        }
        let len = match &o.length {
            None => 32,
            Some(v) => match v.to_string_lossy().parse::<u64>() {
                Ok(n) => n,
                Err(_) => {
                    eprintln!("{NAME}: {name}: Failed to parse length.");
                    status = Status::Failed;
                    continue;
                }
            },
        };
        // The output is streamed in blocks, so a huge length needs no huge buffer.
        let mut left = len;
        let mut block = [0u8; 64 * 1024];
        while left > 0 {
            let n = left.min(block.len() as u64) as usize;
            reader.fill(&mut block[..n]);
            left -= n as u64;
            let written = if raw {
                out.write_all(&block[..n])
            } else {
                out.write_all(fixity::digest::hex_encode(&block[..n], false).as_bytes())
            };
            if let Err(e) = written {
                return write_failed(&e);
            }
        }
        let mut tail = Vec::new();
        if named {
            // The line for an empty digest is the name's part: `  NAME\n`, after the
            // `\` of an escaped name, already written.
            b3sum::write(&[], Some(f.as_bytes()), &mut tail);
            if escaped {
                tail.remove(0);
            }
        } else if !raw {
            tail.push(b'\n');
        }
        if let Err(e) = out.write_all(&tail).and_then(|()| out.flush()) {
            return write_failed(&e);
        }
    }
    status
}

fn check(o: &Opts, mode: &Mode) -> Status {
    let files = if o.files.is_empty() { vec![OsString::from("-")] } else { o.files.clone() };
    let quiet = o.has("quiet");
    let mut status = Status::Ok;
    let stdout = io::stdout();
    let mut buf = Vec::new();
    for f in &files {
        let reader: Box<dyn BufRead> = if f == "-" {
            Box::new(io::BufReader::new(io::stdin()))
        } else {
            match std::fs::File::open(f) {
                Ok(file) => Box::new(io::BufReader::new(file)),
                Err(e) => {
                    eprintln!("Error: {}", io_text(&e));
                    return Status::Failed;
                }
            }
        };
        let mut reader = reader;
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    let _ = stdout.lock().flush();
                    eprintln!("Error: {}", io_text(&e));
                    return Status::Failed;
                }
            }
            let parsed = match b3sum::parse_check_line(line.trim_end_matches('\n')) {
                Ok(p) => p,
                Err(msg) => {
                    let _ = stdout.lock().flush();
                    eprintln!("{NAME}: {msg}");
                    status = Status::Failed;
                    continue;
                }
            };
            let verdict = match mode.hash(OsStr::new(&parsed.path), &mut buf) {
                Ok(mut r) => {
                    let mut got = [0u8; 32];
                    r.fill(&mut got);
                    let (got, want) = (Digest::new(&got), Digest::new(&parsed.expected));
                    if digests_match([(&want, &got)]) { None } else { Some("FAILED".to_string()) }
                }
                Err(e) => Some(format!("FAILED ({})", io_text(&e))),
            };
            if verdict.is_some() {
                status = Status::Failed;
            }
            if verdict.is_some() || !quiet {
                let mark = if parsed.escaped { "\\" } else { "" };
                let text = verdict.unwrap_or_else(|| "OK".into());
                let mut out = stdout.lock();
                if let Err(e) =
                    writeln!(out, "{mark}{}: {text}", parsed.shown).and_then(|()| out.flush())
                {
                    return write_failed(&e);
                }
            }
        }
    }
    status
}
