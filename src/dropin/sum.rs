//! Drop-in `cksum` and `sum` (GNU coreutils 9.1): `CRC SIZE NAME`, BSD and SysV sums,
//! and `cksum -a ALG` for the coreutils digests, which go through `fixity hash` and
//! `fixity check` the way the `*sum` drop-ins do. Options, messages and exit codes are
//! coreutils'. Two additions from later coreutils are accepted: `--base64` (9.2) and
//! `--raw` is not (it is 9.2's too, but binary output is out of scope here).

use super::getopt::{self, Item, Opt};
use super::{CheckFlags, Length, VERIFY_OPTIONS, check_plan, read_defaults};
use crate::cmd::Status;
use crate::cmd::hash::Job;
use crate::ui;
use fixity::algo::{self, Algorithm};
use fixity::check::CheckPlan;
use fixity::digest::Digest;
use fixity::formats::WriteOptions;
use fixity::formats::cksum::{self, Shape};
use fixity::pathtext::{quote_env, utf8_locale};
use fixity::pipeline::hash_path;
use fixity::read::{OpenMode, ReadError, ReadOptions};
use fixity::sys::OsStrExt;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::Path;

/// A usage error: the message, then coreutils' "Try ..." line; exit 1.
fn usage(tool: &str, msg: Option<&str>) -> Status {
    if let Some(m) = msg {
        ui::error(m);
    }
    eprintln!("Try '{tool} --help' for more information.");
    Status::Failed
}

fn quotes() -> (&'static str, &'static str) {
    if utf8_locale() { ("\u{2018}", "\u{2019}") } else { ("'", "'") }
}

/// Hashes one operand (`-` is standard input): the digest and the size.
fn hash_operand(
    name: &OsStr,
    algo: &'static Algorithm,
    buf: &mut Vec<u8>,
) -> Result<(Digest, u64), ReadError> {
    let mode = if name == "-" { OpenMode::Stdin } else { OpenMode::Named };
    let h = hash_path(Path::new(name), mode, &[algo], buf, &ReadOptions::default(), None)?;
    Ok((h.digests[0], h.size))
}

/// Prints one line per operand in `shape`; `crc_dirs_empty` is coreutils 9.1's `cksum`
/// quirk of summing a directory as if it were empty.
fn print_sums(
    shape: Shape,
    algo: &'static Algorithm,
    files: &[OsString],
    named: bool,
    end: u8,
) -> Status {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut status = Status::Ok;
    let mut buf = Vec::new();
    let mut line = Vec::new();
    for f in files {
        let result = match hash_operand(f, algo, &mut buf) {
            Err(ReadError::Io(e))
                if shape == Shape::Crc && e.kind() == std::io::ErrorKind::IsADirectory =>
            {
                Ok((algo.digest(b""), 0))
            }
            r => r,
        };
        match result {
            Ok((d, size)) => {
                line.clear();
                cksum::write(shape, &d, size, named.then(|| f.as_bytes()), end, &mut line);
                if out.write_all(&line).is_err() {
                    return Status::Failed;
                }
            }
            Err(e) => {
                let _ = out.flush();
                ui::error(&format!("{}: {}", quote_env(f.as_bytes()), e.message()));
                status = Status::Failed;
            }
        }
    }
    if out.flush().is_err() {
        return Status::Failed;
    }
    status
}

const SUM_OPTS: &[Opt] = &[
    Opt { long: "", short: Some(b'r'), arg: false, key: "r" },
    Opt { long: "sysv", short: Some(b's'), arg: false, key: "sysv" },
    Opt { long: "help", short: None, arg: false, key: "help" },
    Opt { long: "version", short: None, arg: false, key: "version" },
];

/// `sum [-r|-s] [FILE]...`.
pub fn run_sum(tool: &str, args: Vec<OsString>) -> anyhow::Result<Status> {
    ui::set_program(tool);
    let mut sysv = false;
    let mut operands = Vec::new();
    // Each option takes effect as it is read (`--help` ends the program there), as in
    // coreutils' getopt loop.
    for item in getopt::args(SUM_OPTS, &args) {
        let k = match item {
            Ok(Item::Operand(f)) => {
                operands.push(f);
                continue;
            }
            Ok(Item::Opt(k, _)) => k,
            Err(m) => return Ok(usage(tool, Some(&m))),
        };
        match k {
            "r" => sysv = false,
            "sysv" => sysv = true,
            "help" => {
                println!(
                    "Usage: {tool} [OPTION]... [FILE]...\n\
                     Print or check BSD (16-bit) checksums (this is fixity in drop-in mode).\n\n\
                     With no FILE, or when FILE is -, read standard input.\n\n\
                     \x20 -r              use BSD sum algorithm (the default), use 1K blocks\n\
                     \x20 -s, --sysv      use System V sum algorithm, use 512 bytes blocks\n\
                     \x20     --help        display this help and exit\n\
                     \x20     --version     output version information and exit"
                );
                return Ok(Status::Ok);
            }
            _ => {
                println!("{tool} (fixity) {}", env!("CARGO_PKG_VERSION"));
                return Ok(Status::Ok);
            }
        }
    }
    let (shape, name) = if sysv { (Shape::Sysv, "sysv") } else { (Shape::Bsd, "sum") };
    let algo = algo::lookup(name).expect("registered");
    let named = !operands.is_empty();
    let files = if named { operands } else { vec![OsString::from("-")] };
    Ok(print_sums(shape, algo, &files, named, b'\n'))
}

const CKSUM_OPTS: &[Opt] = &[
    Opt { long: "algorithm", short: Some(b'a'), arg: true, key: "algorithm" },
    Opt { long: "base64", short: None, arg: false, key: "base64" },
    Opt { long: "check", short: Some(b'c'), arg: false, key: "check" },
    Opt { long: "length", short: Some(b'l'), arg: true, key: "length" },
    Opt { long: "tag", short: None, arg: false, key: "tag" },
    Opt { long: "untagged", short: None, arg: false, key: "untagged" },
    Opt { long: "zero", short: Some(b'z'), arg: false, key: "zero" },
    Opt { long: "ignore-missing", short: None, arg: false, key: "ignore-missing" },
    Opt { long: "quiet", short: None, arg: false, key: "quiet" },
    Opt { long: "status", short: None, arg: false, key: "status" },
    Opt { long: "strict", short: None, arg: false, key: "strict" },
    Opt { long: "warn", short: Some(b'w'), arg: false, key: "warn" },
    Opt { long: "debug", short: None, arg: false, key: "debug" },
    Opt { long: "help", short: None, arg: false, key: "help" },
    Opt { long: "version", short: None, arg: false, key: "version" },
    // coreutils 9.1 takes -b and -t and answers them with a bare usage error.
    Opt { long: "", short: Some(b'b'), arg: false, key: "b" },
    Opt { long: "", short: Some(b't'), arg: false, key: "t" },
];

/// `cksum -a` arguments, in coreutils' order, with their algorithms (the registry rows'
/// [`Algorithm::cksum`]).
fn cksum_algorithms() -> Vec<(&'static str, &'static Algorithm)> {
    let mut rows: Vec<_> =
        algo::ALGORITHMS.iter().filter_map(|a| a.cksum.map(|(rank, n)| (rank, n, a))).collect();
    rows.sort_by_key(|r| r.0);
    rows.into_iter().map(|(_, n, a)| (n, a)).collect()
}

#[derive(Default)]
struct CksumOpts {
    algo: Option<&'static str>,
    base64: bool,
    check: bool,
    length: Option<Length>,
    untagged: bool,
    zero: bool,
    flags: CheckFlags,
    debug: bool,
}

/// `cksum [OPTION]... [FILE]...`.
pub fn run_cksum(tool: &str, args: Vec<OsString>) -> anyhow::Result<Status> {
    ui::set_program(tool);
    let (lq, rq) = quotes();
    let mut o = CksumOpts::default();
    let mut operands = Vec::new();
    // Each option takes effect as it is read (a bad length or `--help` ends the program
    // before anything later on the line is looked at), as in coreutils' getopt loop.
    for item in getopt::args(CKSUM_OPTS, &args) {
        let (k, v) = match item {
            Ok(Item::Operand(f)) => {
                operands.push(f);
                continue;
            }
            Ok(Item::Opt(k, v)) => (k, v),
            Err(m) => return Ok(usage(tool, Some(&m))),
        };
        let v = v.as_deref().map(OsStr::to_string_lossy);
        match k {
            "algorithm" => {
                let v = v.unwrap_or_default();
                match cksum_algorithms().into_iter().find(|(n, _)| *n == v) {
                    Some((n, _)) => o.algo = Some(n),
                    None => {
                        ui::error(&format!("invalid argument {lq}{v}{rq} for {lq}--algorithm{rq}"));
                        let mut list = String::from("Valid arguments are:");
                        for (n, _) in cksum_algorithms().iter().filter(|(n, _)| *n != "crc32b") {
                            list.push_str(&format!("\n  - {lq}{n}{rq}"));
                        }
                        eprintln!("{list}");
                        return Ok(usage(tool, None));
                    }
                }
            }
            "length" => match Length::parse(&v.unwrap_or_default()) {
                Ok(l) => o.length = Some(l),
                Err(status) => return Ok(status),
            },
            "base64" => o.base64 = true,
            "check" => o.check = true,
            "tag" => o.untagged = false,
            "untagged" => o.untagged = true,
            "zero" => o.zero = true,
            k @ ("ignore-missing" | "quiet" | "status" | "warn" | "strict") => o.flags.set(k),
            "debug" => o.debug = true,
            "b" | "t" => return Ok(usage(tool, None)),
            "help" => {
                print_cksum_help(tool);
                return Ok(Status::Ok);
            }
            _ => {
                println!("{tool} (fixity) {}", env!("CARGO_PKG_VERSION"));
                return Ok(Status::Ok);
            }
        }
    }
    let name = o.algo.unwrap_or("crc");
    let length = o.length.filter(|l| l.bits != 0);
    if length.is_some() && name != "blake2b" {
        ui::error("--length is only supported with --algorithm=blake2b");
        return Ok(Status::Failed);
    }
    if length.as_ref().is_some_and(|l| !l.fits()) {
        return Ok(Status::Failed);
    }
    let legacy = matches!(name, "bsd" | "sysv" | "crc" | "crc32b");
    if o.check && o.algo.is_some() && legacy {
        ui::error(if name == "crc32b" {
            "--check is not supported with --algorithm={bsd,sysv,crc,crc32b}"
        } else {
            "--check is not supported with --algorithm={bsd,sysv,crc}"
        });
        return Ok(Status::Failed);
    }
    if o.zero && o.check {
        return Ok(usage(
            tool,
            Some("the --zero option is not supported when verifying checksums"),
        ));
    }
    if let Some(msg) = o.flags.without_check().filter(|_| !o.check) {
        return Ok(usage(tool, Some(&msg)));
    }
    let registry =
        cksum_algorithms().into_iter().find(|(n, _)| *n == name).map_or("cksum", |(_, a)| a.name);
    // `-l BITS` writes BLAKE2b of that length (the `blake2b-BITS` row, tagged
    // `BLAKE2b-BITS`; -l 512 is the full `BLAKE2b`). `-c` checks each line at its own
    // length, whatever -l says, as coreutils does.
    let algo = match &length {
        Some(l) => l.algorithm(),
        None => algo::lookup(registry).expect("registered"),
    };
    if o.debug && name == "crc" && !o.check {
        // crc-fast folds with carry-less multiplication where the CPU has it, as
        // coreutils' pclmul path does; coreutils words it this way.
        ui::error(if carryless_multiply() {
            "using pclmul hardware support"
        } else {
            "using generic hardware support"
        });
    }
    let named = !operands.is_empty();
    let files = if named { operands } else { vec![OsString::from("-")] };
    if o.check {
        let forced = o.algo.map(|_| algo::lookup(registry).expect("registered"));
        let plan = CheckPlan { cksum_tags: true, ..check_plan(files, o.flags, forced) };
        return super::check(&plan, o.flags);
    }
    let end = if o.zero { 0 } else { b'\n' };
    let shape = if name == "crc32b" { Some(Shape::Crc) } else { Shape::of(algo.name) };
    if let Some(shape) = shape {
        return Ok(print_sums(shape, algo, &files, named, end));
    }
    // `--base64` (coreutils 9.2): the same lines with the digest in padded base64.
    let encoding = o.base64.then_some(fixity::digest::Encoding::Base64);
    let opts = WriteOptions { zero: o.zero, encoding, ..WriteOptions::default() };
    crate::cmd::hash::run_job(Job::named_files(files, algo, !o.untagged, opts, read_defaults()))
}

/// Whether the CPU multiplies carry-less (x86 PCLMULQDQ, Arm PMULL), which crc-fast uses.
fn carryless_multiply() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("pclmulqdq")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("aes")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

fn print_cksum_help(tool: &str) {
    println!(
        "Usage: {tool} [OPTION]... [FILE]...\n\
         Print or verify checksums (this is fixity in drop-in mode).\n\
         By default use the 32 bit CRC algorithm.\n\n\
         With no FILE, or when FILE is -, read standard input.\n\n\
         \x20 -a, --algorithm=TYPE  select the digest type to use: bsd, sysv, crc, md5, sha1,\n\
         \x20                         sha224, sha256, sha384, sha512, blake2b, sm3\n\
         \x20     --base64          emit base64-encoded digests, not hexadecimal\n\
         \x20 -c, --check           read checksums from the FILEs and check them\n\
         \x20 -l, --length=BITS     digest length in bits (blake2b), a multiple of 8\n\
         \x20     --tag             create a BSD-style checksum (the default)\n\
         \x20     --untagged        create a reversed style checksum, without digest type\n\
         \x20 -z, --zero            end each output line with NUL, not newline,\n\
         \x20                         and disable file name escaping\n\n\
         {VERIFY_OPTIONS}\n\n\
         \x20     --debug           indicate which implementation used\n\
         \x20     --help            display this help and exit\n\
         \x20     --version         output version information and exit"
    );
}
