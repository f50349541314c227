//! Drop-in `xxhsum` (xxHash's command line tool, 0.8.1 as installed here): `-H0/1/2/3`
//! (XXH32, XXH64, XXH128, XXH3), `--tag`, `--little-endian`, `-c` with `-q`, `--status`,
//! `--strict`, `-w/--warn`. Its quirks are kept: names are printed unescaped, XXH3 is
//! always printed in the tagged form, standard input is called `stdin` (and a checksum
//! line naming `stdin` reads standard input), options end at the first file name, and the
//! summaries of `-c` go to standard output. The benchmark (`-b`, `-i`, `-B`,
//! `--benchmark-all`) is xxhsum's, on fixity's own implementations (`super::xxhbench`).
//! Run as `xxh32sum` or `xxh128sum` (links xxHash installs), the default algorithm follows.

use super::xxhbench::{self, Selection, read_u32};
use crate::cmd::Status;
use fixity::algo::{self, Algorithm};
use fixity::check::{digests_match, plural};
use fixity::digest::Digest;
use fixity::formats::xxhsum;
use fixity::read::{
    self, OnChange, OpenMode, ReadError, ReadOptions, ReadPlan, Reader, io_message,
};
use fixity::sys::OsStrExt;
use std::ffi::{OsStr, OsString};
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::Path;

/// Standard output as C's stdio buffers it for xxhsum, which never flushes it itself: a
/// terminal gets each line when it ends; anything else (a pipe, a file) gets whole blocks
/// of the descriptor's preferred size (`st_blksize`, 4096 for a pipe) when the buffer
/// overflows, and the rest at exit. So when stdout and stderr share a pipe (`2>&1`), the
/// messages on stderr come first, as xxhsum's do. The block logic is glibc's
/// (`_IO_new_file_xsputn`): fill the buffer, write it out when more is to come, write
/// whole blocks of what remains directly, keep the tail.
struct CStdout {
    buf: Vec<u8>,
    block: usize,
    line: bool,
    out: io::Stdout,
    failed: bool,
}

impl CStdout {
    fn new() -> CStdout {
        let out = io::stdout();
        let line = out.is_terminal();
        let block = fixity::sys::stdout_block().filter(|&b| b > 0).unwrap_or(8192);
        CStdout { buf: Vec::with_capacity(block), block, line, out, failed: false }
    }

    /// Writes `data` out. xxhsum ignores a failed write (and exits 0 with its output
    /// lost); the drop-in says once that standard output could not be written, and
    /// exits 1.
    fn emit(&mut self, data: &[u8]) {
        let mut out = self.out.lock();
        if let Err(e) = out.write_all(data).and_then(|()| out.flush())
            && !self.failed
        {
            self.failed = true;
            eprintln!("Error: could not write to standard output: {}", io_message(&e));
        }
    }

    fn put(&mut self, mut data: &[u8]) {
        let room = self.block - self.buf.len();
        if data.len() > room {
            self.buf.extend_from_slice(&data[..room]);
            data = &data[room..];
            let full = std::mem::take(&mut self.buf);
            self.emit(&full);
            let direct = data.len() - data.len() % self.block;
            self.emit(&data[..direct]);
            data = &data[direct..];
        }
        self.buf.extend_from_slice(data);
        if self.line && data.contains(&b'\n') {
            self.flush();
        }
    }

    /// What exit does: writes out what is held.
    fn flush(&mut self) {
        let held = std::mem::take(&mut self.buf);
        if !held.is_empty() {
            self.emit(&held);
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algo {
    Xxh32,
    Xxh64,
    Xxh128,
    Xxh3,
}

impl Algo {
    fn registry(self) -> &'static Algorithm {
        let name = match self {
            Algo::Xxh32 => "xxh32",
            Algo::Xxh64 => "xxh64",
            Algo::Xxh128 => "xxh128",
            Algo::Xxh3 => "xxh3",
        };
        algo::lookup(name).expect("registered")
    }
}

/// The first line of xxhsum's usage and version texts. The real one names its version
/// and author; this one says what answers instead.
fn welcome(exe: &str) -> String {
    format!("{exe} {} (fixity, drop-in for xxhsum 0.8.1) \n", env!("CARGO_PKG_VERSION"))
}

/// The default algorithm's number, as the usage text shows it.
fn default_number(exe: &str) -> u8 {
    match default_algo(exe) {
        Algo::Xxh32 => 0,
        Algo::Xxh128 => 2,
        _ => 1,
    }
}

/// xxh32sum, xxh64sum, xxh128sum (links to xxhsum) default to their algorithm.
fn default_algo(exe: &str) -> Algo {
    if exe.contains("xxh32sum") {
        Algo::Xxh32
    } else if exe.contains("xxh128sum") {
        Algo::Xxh128
    } else {
        Algo::Xxh64
    }
}

fn usage(exe: &str) -> String {
    format!(
        "{}Print or verify checksums using fast non-cryptographic algorithm xxHash \n\n\
         Usage: {exe} [options] [files] \n\n\
         When no filename provided or when '-' is provided, uses stdin as input. \n\
         Options: \n\
         \x20 -H#         algorithm selection: 0,1,2,3 or 32,64,128 (default: {}) \n\
         \x20 -c, --check read xxHash checksum from [files] and check them \n\
         \x20 -h, --help  display a long help page about advanced options \n",
        welcome(exe),
        default_number(exe)
    )
}

fn usage_advanced(exe: &str) -> String {
    format!(
        "{}Advanced :\n\
         \x20 -V, --version        Display version information \n\
         \x20     --tag            Produce BSD-style checksum lines \n\
         \x20     --little-endian  Checksum values use little endian convention (default: big endian) \n\
         \x20 -b                   Run benchmark \n\
         \x20 -b#                  Bench only algorithm variant # \n\
         \x20 -i#                  Number of times to run the benchmark (default: {}) \n\
         \x20 -q, --quiet          Don't display version header in benchmark mode \n\n\
         The following four options are useful only when verifying checksums (-c): \n\
         \x20 -q, --quiet          Don't print OK for each successfully verified file \n\
         \x20     --status         Don't output anything, status code shows success \n\
         \x20     --strict         Exit non-zero for improperly formatted checksum lines \n\
         \x20     --warn           Warn about improperly formatted checksum lines \n",
        usage(exe),
        xxhbench::DEFAULT_ROUNDS
    )
}

fn bad_usage(exe: &str) -> Status {
    eprint!("Wrong parameters\n\n{}", usage(exe));
    Status::Failed
}

struct Opts {
    algo: Algo,
    check: bool,
    tag: bool,
    little_endian: bool,
    strict: bool,
    status: bool,
    warn: bool,
    /// Starts at 2; each -q/--quiet lowers it.
    log_level: i32,
    explicit_stdin: bool,
    files: Vec<OsString>,
    /// `-b` or `--benchmark-all` was given: benchmark instead of hashing.
    bench: bool,
    /// The variants `-b` options chose.
    bench_ids: Selection,
    /// `-i#`, read as xxhsum reads it (a C `int` from an unsigned number).
    rounds: u32,
    /// `-B#`: the sample's size.
    sample: u32,
}

impl Opts {
    /// The benchmark the options describe.
    fn bench_plan(&self) -> xxhbench::Plan {
        xxhbench::Plan {
            ids: self.bench_ids.ids(),
            rounds: self.rounds as i32,
            sample: self.sample as usize,
            files: self.files.clone(),
            log_level: self.log_level,
        }
    }
}

/// What parsing ended in: options to run with, or an exit status (help, version, errors).
enum Parsed {
    Run(Opts),
    Done(Status),
}

fn parse(exe: &str, args: &[OsString]) -> Parsed {
    let mut o = Opts {
        algo: default_algo(exe),
        check: false,
        tag: false,
        little_endian: false,
        strict: false,
        status: false,
        warn: false,
        log_level: 2,
        explicit_stdin: false,
        files: Vec::new(),
        bench: false,
        bench_ids: Selection::default(),
        rounds: xxhbench::DEFAULT_ROUNDS,
        sample: xxhbench::DEFAULT_SAMPLE,
    };
    for (i, arg) in args.iter().enumerate() {
        match arg.as_bytes() {
            b"--check" => o.check = true,
            b"--benchmark-all" | b"--bench-all" => {
                o.bench = true;
                o.bench_ids.all();
            }
            b"--quiet" => o.log_level -= 1,
            b"--little-endian" => o.little_endian = true,
            b"--strict" => o.strict = true,
            b"--status" => o.status = true,
            b"--warn" => o.warn = true,
            b"--help" => {
                eprint!("{}", usage_advanced(exe));
                return Parsed::Done(Status::Ok);
            }
            b"--version" => {
                eprint!("{}", welcome(exe));
                return Parsed::Done(Status::Ok);
            }
            b"--tag" => o.tag = true,
            b"--" => {
                o.files = args[i + 1..].to_vec();
                break;
            }
            a if !a.starts_with(b"-") => {
                o.files = args[i..].to_vec();
                break;
            }
            a => {
                if a.len() == 1 {
                    o.explicit_stdin = true;
                }
                let mut p = 1;
                while p < a.len() {
                    let c = a[p];
                    p += 1;
                    match c {
                        b'V' => {
                            eprint!("{}", welcome(exe));
                            return Parsed::Done(Status::Ok);
                        }
                        b'h' => {
                            eprint!("{}", usage_advanced(exe));
                            return Parsed::Done(Status::Ok);
                        }
                        b'H' => {
                            let Some(n) = read_u32(a, &mut p) else {
                                eprintln!("Error: numeric value too large ");
                                return Parsed::Done(Status::Failed);
                            };
                            o.algo = match n {
                                0 | 32 => Algo::Xxh32,
                                1 | 64 => Algo::Xxh64,
                                2 | 128 => Algo::Xxh128,
                                // XXH3 switches to tagged lines for the rest of the run,
                                // even when a later -H picks another algorithm.
                                3 => {
                                    o.tag = true;
                                    Algo::Xxh3
                                }
                                _ => return Parsed::Done(bad_usage(exe)),
                            };
                        }
                        b'c' => o.check = true,
                        b'w' => o.warn = true,
                        b'q' => o.log_level -= 1,
                        b'i' | b'B' => {
                            let Some(n) = read_u32(a, &mut p) else {
                                eprintln!("Error: numeric value too large ");
                                return Parsed::Done(Status::Failed);
                            };
                            if c == b'i' {
                                o.rounds = n;
                            } else {
                                o.sample = n;
                            }
                        }
                        b'b' => {
                            o.bench = true;
                            if o.bench_ids.read(a, &mut p).is_none() {
                                eprintln!("Error: numeric value too large ");
                                return Parsed::Done(Status::Failed);
                            }
                        }
                        _ => return Parsed::Done(bad_usage(exe)),
                    }
                }
            }
        }
    }
    Parsed::Run(o)
}

/// Runs `xxhsum ARGS`; `tool` is argv[0] (its last component names the program in the
/// usage text, as xxhsum's does).
pub fn run(tool: &str, args: Vec<OsString>) -> anyhow::Result<Status> {
    let exe = tool.rsplit('/').next().unwrap_or(tool);
    crate::ui::set_program(exe);
    let o = match parse(exe, &args) {
        Parsed::Run(o) => o,
        Parsed::Done(s) => return Ok(s),
    };
    if o.bench {
        let code = xxhbench::run(&o.bench_plan(), &welcome(exe));
        return Ok(match code {
            0 => Status::Ok,
            // xxhsum's own codes for a file it cannot open or read, or memory it cannot
            // have (11, 13, 12): beyond fixity's statuses, so exit here.
            code => std::process::exit(i32::from(code)),
        });
    }
    // Nothing named and a terminal to read: xxhsum 0.8.1 shows its usage.
    if o.files.is_empty() && !o.explicit_stdin && io::stdin().is_terminal() {
        return Ok(bad_usage(exe));
    }
    Ok(if o.check { check(&o) } else { hash(&o) })
}

/// Why a file could not be hashed.
enum HashError {
    Open(io::Error),
    /// A read failed after the open: xxhsum gives up on everything.
    Read,
}

/// Hashes `name` (standard input for `None`) through the library's reader, as xxhsum
/// reads: front to back to the end, whatever the file does meanwhile.
fn hash_file(name: Option<&OsStr>, algo: &'static Algorithm) -> Result<Digest, HashError> {
    let opts = ReadOptions {
        buffer_size: 256 * 1024,
        mmap_threshold: None,
        advise: false,
        ..Default::default()
    };
    let mut buf = Vec::new();
    let mut reader = Reader { buf: &mut buf, opts: &opts, serial: None };
    let plan = ReadPlan { on_change: OnChange::Accept, ..ReadPlan::WHOLE };
    let mut sinks = [algo.hasher()];
    let read = match name {
        None => reader.read_path(Path::new("-"), OpenMode::Stdin, &plan, &mut sinks),
        Some(n) => {
            let path = Path::new(n);
            let file = match read::open(path, OpenMode::Named) {
                Ok(f) => f,
                Err(ReadError::Io(e)) => return Err(HashError::Open(e)),
                Err(_) => return Err(HashError::Read),
            };
            reader.read_file(&file, path, OpenMode::Named, &plan, &mut sinks)
        }
    };
    read.map_err(|_| HashError::Read)?;
    Ok(sinks[0].finish())
}

/// Ends the run as xxhsum does on a read error: the message, then what standard output
/// held (exit writes it out), exit 1.
fn read_failure(out: &mut CStdout) -> Status {
    eprintln!("Error: a failure occurred reading the input file.");
    out.flush();
    Status::Failed
}

fn hash(o: &Opts) -> Status {
    let algo = o.algo.registry();
    let mut out = CStdout::new();
    let mut status = Status::Ok;
    let names: Vec<Option<&OsStr>> = if o.files.is_empty() {
        vec![None]
    } else {
        o.files.iter().map(|f| Some(f.as_os_str())).collect()
    };
    for name in names {
        let shown: &[u8] = name.map_or(xxhsum::STDIN, |n| n.as_bytes());
        if let Some(n) = name
            && std::fs::metadata(n).is_ok_and(|m| m.is_dir())
        {
            eprintln!("xxhsum: {}: Is a directory ", String::from_utf8_lossy(shown));
            status = Status::Failed;
            continue;
        }
        let d = match hash_file(name, algo) {
            Ok(d) => d,
            Err(HashError::Open(e)) => {
                eprintln!(
                    "Error: Could not open '{}': {}. ",
                    String::from_utf8_lossy(shown),
                    io_message(&e)
                );
                status = Status::Failed;
                continue;
            }
            Err(HashError::Read) => return read_failure(&mut out),
        };
        let mut line = Vec::new();
        xxhsum::write(algo, &d, shown, o.tag, o.little_endian, &mut line);
        out.put(&line);
    }
    // xxhsum clears its progress line once it is done with named files.
    if !o.files.is_empty() && o.log_level >= 2 {
        eprint!("\r{:70}\r", "");
    }
    out.flush();
    if out.failed { Status::Failed } else { status }
}

#[derive(Default)]
struct Report {
    proper: u64,
    improper: u64,
    mismatched: u64,
    unreadable: u64,
    /// A line too long to read ended the file.
    quit: bool,
}

/// Why checking stopped early.
struct Abort;

fn check(o: &Opts) -> Status {
    let quiet = o.log_level < 2;
    let mut ok = true;
    let mut out = CStdout::new();
    let names: Vec<Option<&OsStr>> = if o.files.is_empty() {
        vec![None]
    } else {
        o.files.iter().map(|f| Some(f.as_os_str())).collect()
    };
    for name in names {
        match check_file(name, o, quiet, &mut out) {
            Ok(good) => ok &= good,
            Err(Abort) => return read_failure(&mut out),
        }
    }
    out.flush();
    if out.failed || !ok { Status::Failed } else { Status::Ok }
}

/// The longest line xxhsum 0.8.1 reads, newline included: its buffer grows to 32 KiB and
/// keeps room for a terminating NUL, so the 32768th byte of a line (even its newline)
/// ends the file with "Line too long".
const MAX_LINE: usize = 32 * 1024 - 1;

/// Where a checksum file's lines come from. Standard input is read through the process's
/// one buffer, locked for each line only, so that a line naming `stdin` hashes the rest of
/// it, as xxhsum's shared `FILE` does.
enum Lines {
    Stdin,
    File(io::BufReader<std::fs::File>),
}

impl Lines {
    fn read_line(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        match self {
            Lines::Stdin => io::stdin().lock().read_until(b'\n', buf),
            Lines::File(r) => r.read_until(b'\n', buf),
        }
    }
}

fn check_file(
    name: Option<&OsStr>,
    o: &Opts,
    quiet: bool,
    out: &mut CStdout,
) -> Result<bool, Abort> {
    let shown = String::from_utf8_lossy(name.map_or(b"stdin", |n| n.as_bytes())).into_owned();
    let mut reader = match name {
        None => Lines::Stdin,
        Some(n) => match std::fs::File::open(n) {
            Ok(f) => Lines::File(io::BufReader::new(f)),
            Err(e) => {
                eprintln!("Error: Could not open '{shown}': {}", io_message(&e));
                return Ok(false);
            }
        },
    };
    let mut r = Report::default();
    let mut buf = Vec::new();
    let mut lineno = 0u64;
    loop {
        buf.clear();
        lineno += 1;
        // A checksum file that cannot be read (a directory) reads as empty.
        match reader.read_line(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if buf.len() > MAX_LINE {
            eprintln!("{shown}:{lineno}: Error: Line too long.");
            r.quit = true;
            break;
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        let Some(line) = xxhsum::parse_check_line(&buf, o.little_endian) else {
            r.improper += 1;
            if o.warn {
                eprintln!("{shown}:{lineno}: Error: Improperly formatted checksum line.");
            }
            continue;
        };
        r.proper += 1;
        let target = (line.name != b"stdin").then(|| OsStr::from_bytes(line.name));
        let verdict = match hash_file(target, line.algo) {
            Ok(d) => digests_match([(&line.digest, &d)]),
            Err(HashError::Open(e)) => {
                r.unreadable += 1;
                if !o.status {
                    out.put(format!("{shown}:{lineno}: Could not open or read '").as_bytes());
                    out.put(line.name);
                    out.put(format!("': {}.\n", io_message(&e)).as_bytes());
                }
                continue;
            }
            Err(HashError::Read) => return Err(Abort),
        };
        if !verdict {
            r.mismatched += 1;
        }
        if (!verdict || !quiet) && !o.status {
            out.put(line.name);
            out.put(if verdict { b": OK\n" } else { b": FAILED\n" });
        }
    }
    if r.proper == 0 {
        eprintln!("{shown}: no properly formatted xxHash checksum lines found");
    } else if !o.status {
        if r.improper > 0 {
            let text = plural(r.improper, "line is", "lines are");
            out.put(format!("{} {text} improperly formatted\n", r.improper).as_bytes());
        }
        if r.unreadable > 0 {
            let text = plural(r.unreadable, "file", "files");
            out.put(format!("{} listed {text} could not be read\n", r.unreadable).as_bytes());
        }
        if r.mismatched > 0 {
            let text = plural(r.mismatched, "checksum", "checksums");
            out.put(format!("{} computed {text} did NOT match\n", r.mismatched).as_bytes());
        }
    }
    Ok(r.proper > 0
        && r.mismatched == 0
        && r.unreadable == 0
        && (!o.strict || r.improper == 0)
        && !r.quit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> Option<xxhbench::Plan> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        match parse("xxhsum", &args) {
            Parsed::Run(o) => o.bench.then(|| o.bench_plan()),
            Parsed::Done(_) => None,
        }
    }

    #[test]
    fn benchmark_options_build_xxhsums_plan() {
        // `-bi1`: no number after b (the default set), then one round.
        let p = plan(&["-bi1"]).unwrap();
        assert_eq!((p.ids, p.rounds, p.sample, p.log_level), (vec![1, 3, 5, 11], 1, 102_400, 2));
        // A later -b3 decides the set; -q lowers the level; -B sets the sample.
        let p = plan(&["-bi1", "-b3", "-q", "-B1K", "file"]).unwrap();
        assert_eq!((p.ids, p.rounds, p.sample, p.log_level), (vec![3], 1, 1024, 1));
        assert_eq!(p.files, [OsString::from("file")]);
        let p = plan(&["--benchmark-all", "-c"]).unwrap();
        assert_eq!((p.ids.len(), p.rounds), (28, 3));
        // -i and -B alone do not start the benchmark.
        assert!(plan(&["-i1", "-B10"]).is_none());
        assert!(plan(&["-b1", "-i99999999999"]).is_none());
    }
}
