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
use std::ffi::{OsStr, OsString};
use std::io::{self, BufRead, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What the installed b3sum calls itself in its messages.
const NAME: &str = "b3sum";

/// The options, with how clap shows them in messages.
struct Arg {
    name: &'static str,
    short: Option<u8>,
    value: Option<&'static str>,
}

const ARGS: &[Arg] = &[
    Arg { name: "check", short: Some(b'c'), value: None },
    Arg { name: "derive-key", short: None, value: Some("<CONTEXT>") },
    Arg { name: "help", short: Some(b'h'), value: None },
    Arg { name: "keyed", short: None, value: None },
    Arg { name: "length", short: Some(b'l'), value: Some("<LEN>") },
    Arg { name: "no-mmap", short: None, value: None },
    Arg { name: "no-names", short: None, value: None },
    Arg { name: "num-threads", short: None, value: Some("<NUM>") },
    Arg { name: "quiet", short: None, value: None },
    Arg { name: "raw", short: None, value: None },
    Arg { name: "version", short: Some(b'V'), value: None },
];

/// Pairs that exclude each other, as (shown first, shown second) in clap's message, in
/// the order b3sum 1.2.0 reports them when several apply (`--keyed --derive-key X -c`,
/// three conflicts, it reports at random: clap 2 walks a hash map).
const CONFLICTS: &[(&str, &str)] = &[
    ("derive-key", "check"),
    ("keyed", "check"),
    ("keyed", "derive-key"),
    ("length", "check"),
    ("raw", "check"),
    ("no-names", "check"),
];

fn shown(a: &Arg) -> String {
    match a.value {
        Some(v) => format!("--{} {v}", a.name),
        None => format!("--{}", a.name),
    }
}

fn arg(name: &str) -> &'static Arg {
    ARGS.iter().find(|a| a.name == name).expect("known argument")
}

/// clap 2's error: the message, a usage line naming the arguments given so far (and those
/// they require), exit 1.
fn clap_error(msg: &str, used: &[&str], extra: Option<&str>) -> Status {
    let mut names: Vec<&str> = used.to_vec();
    if used.contains(&"quiet") {
        names.push("check");
    }
    names.extend(extra);
    names.sort();
    names.dedup();
    let mut usage = String::from(NAME);
    if used.contains(&"keyed") {
        usage.push_str(" <FILE>...");
    }
    if names.is_empty() {
        usage.push_str(" [FLAGS] [OPTIONS] [FILE]...");
    }
    for n in names {
        usage.push(' ');
        usage.push_str(&shown(arg(n)));
    }
    eprint!("error: {msg}\n\nUSAGE:\n    {usage}\n\nFor more information try --help\n");
    Status::Failed
}

/// Jaro-Winkler similarity (Winkler's prefix scale 0.1, prefix up to 4), which clap 2
/// uses to suggest a long option.
fn jaro_winkler(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let window = (a.len().max(b.len()) / 2).saturating_sub(1);
    let mut b_used = vec![false; b.len()];
    let mut a_matches = Vec::new();
    for (i, &c) in a.iter().enumerate() {
        let lo = i.saturating_sub(window);
        let hi = (i + window + 1).min(b.len());
        if let Some(j) = (lo..hi).find(|&j| !b_used[j] && b[j] == c) {
            b_used[j] = true;
            a_matches.push(c);
        }
    }
    let m = a_matches.len();
    if m == 0 {
        return 0.0;
    }
    let b_matches: Vec<char> =
        b.iter().zip(&b_used).filter(|(_, u)| **u).map(|(c, _)| *c).collect();
    let transpositions = a_matches.iter().zip(&b_matches).filter(|(x, y)| x != y).count() / 2;
    let m = m as f64;
    let jaro = (m / a.len() as f64 + m / b.len() as f64 + (m - transpositions as f64) / m) / 3.0;
    let prefix = a.iter().zip(&b).take(4).take_while(|(x, y)| x == y).count() as f64;
    jaro + prefix * 0.1 * (1.0 - jaro)
}

/// The long option clap 2 suggests for `typed`: the most similar above 0.8.
fn suggestion(typed: &str) -> Option<&'static str> {
    let mut best: Option<(f64, &'static str)> = None;
    for a in ARGS {
        let score = jaro_winkler(typed, a.name);
        if score > 0.8 && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, a.name));
        }
    }
    best.map(|(_, n)| n)
}

#[derive(Default)]
struct Opts {
    used: Vec<&'static str>,
    length: Option<OsString>,
    num_threads: Option<OsString>,
    derive_key: Option<OsString>,
    files: Vec<OsString>,
    /// The first argument given twice.
    repeated: Option<&'static Arg>,
}

impl Opts {
    fn has(&self, name: &str) -> bool {
        self.used.contains(&name)
    }
}

fn parse(args: &[OsString]) -> Result<Opts, Status> {
    let mut o = Opts::default();
    let mut it = args.iter();
    let mut only_files = false;
    let take = |o: &mut Opts,
                a: &'static Arg,
                value: Option<OsString>,
                it: &mut std::slice::Iter<OsString>| {
        // clap 2 takes a repeated argument (and its value) and refuses it once the whole
        // command line is read, naming in its usage line everything given.
        if o.has(a.name) {
            o.repeated.get_or_insert(a);
        } else {
            o.used.push(a.name);
        }
        if a.value.is_some() {
            let v = match value.or_else(|| it.next().cloned()) {
                Some(v) => v,
                // A repeated option without its value is refused as repeated.
                None if o.repeated.is_some_and(|r| r.name == a.name) => return Ok(()),
                None => {
                    let msg = format!(
                        "The argument '{}' requires a value but none was supplied",
                        shown(a)
                    );
                    o.used.retain(|n| *n != a.name);
                    return Err(clap_error(&msg, &o.used, Some(a.name)));
                }
            };
            if o.repeated.is_some_and(|r| r.name == a.name) {
                return Ok(());
            }
            match a.name {
                "length" => o.length = Some(v),
                "num-threads" => o.num_threads = Some(v),
                _ => o.derive_key = Some(v),
            }
        }
        Ok(())
    };
    while let Some(a) = it.next() {
        let bytes = a.as_bytes();
        if only_files || bytes == b"-" || !bytes.starts_with(b"-") {
            o.files.push(a.clone());
            continue;
        }
        if bytes == b"--" {
            only_files = true;
            continue;
        }
        if let Some(long) = bytes.strip_prefix(b"--") {
            let (name, value) = match long.iter().position(|&b| b == b'=') {
                Some(i) => (&long[..i], Some(OsString::from(OsStr::from_bytes(&long[i + 1..])))),
                None => (long, None),
            };
            let Some(spec) = ARGS.iter().find(|s| s.name.as_bytes() == name) else {
                let typed = String::from_utf8_lossy(name);
                let hint = suggestion(&typed);
                let mut msg = format!(
                    "Found argument '{}' which wasn't expected, or isn't valid in this context",
                    a.to_string_lossy()
                );
                if let Some(h) = hint {
                    msg.push_str(&format!("\n\tDid you mean \x1b[32m--\x1b[0m\x1b[32m{h}\x1b[0m?"));
                }
                return Err(clap_error(&msg, &o.used, hint));
            };
            take(&mut o, spec, value, &mut it)?;
            continue;
        }
        let mut rest = &bytes[1..];
        while let Some((&c, tail)) = rest.split_first() {
            rest = tail;
            let Some(spec) = ARGS.iter().find(|s| s.short == Some(c)) else {
                let msg = format!(
                    "Found argument '-{}' which wasn't expected, or isn't valid in this context",
                    c as char
                );
                return Err(clap_error(&msg, &o.used, None));
            };
            let value = if spec.value.is_some() && !rest.is_empty() {
                let v = OsString::from(OsStr::from_bytes(rest));
                rest = &[];
                Some(v)
            } else {
                None
            };
            take(&mut o, spec, value, &mut it)?;
        }
    }
    if let Some(a) = o.repeated {
        let msg = format!(
            "The argument '{}' was provided more than once, but cannot be used multiple times",
            shown(a)
        );
        return Err(clap_error(&msg, &o.used, None));
    }
    Ok(o)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaro_winkler_matches_published_values() {
        // Winkler's examples (1990) as strsim computes them.
        assert!((jaro_winkler("MARTHA", "MARHTA") - 0.9611).abs() < 1e-4);
        assert!((jaro_winkler("DIXON", "DICKSONX") - 0.8133).abs() < 1e-4);
        assert!((jaro_winkler("DWAYNE", "DUANE") - 0.84).abs() < 1e-4);
        assert_eq!(suggestion("chek"), Some("check"));
        assert_eq!(suggestion("len"), Some("length"));
        assert_eq!(suggestion("bogus"), None);
    }
}
