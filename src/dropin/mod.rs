//! Drop-in mode: when the binary runs under the name of a coreutils checksum tool
//! (`ln -s fixity sha256sum`), it takes that tool's options and prints what that tool
//! prints, diagnostics included (`sha256sum: FILE: No such file or directory`), with its
//! exit codes (usage errors exit 1, as coreutils does).
//!
//! Options are parsed the GNU way: bundled short options (`-bc`), long options and their
//! unambiguous prefixes (`--stat`), `--` ends the options.

mod b3sum;
mod getopt;
mod sum;
mod xxhbench;
mod xxhsum;

use crate::cli::{ReadArgs, Storage};
use crate::cmd::Status;
use crate::cmd::check::Show;
use crate::cmd::hash::Job;
use crate::ui;
use fixity::algo::{self, Algorithm};
use fixity::check::CheckPlan;
use fixity::formats::WriteOptions;
use fixity::sys::OsStrExt;
use getopt::{Item, Opt};
use std::ffi::OsString;

/// The tool `argv0` names and its algorithm, if fixity stands in for it (the registry
/// rows' [`fixity::algo::Algorithm::tools`]).
pub fn tool_for(argv0: &std::ffi::OsStr) -> Option<(&'static str, &'static str)> {
    let base = argv0.as_bytes().rsplit(|&b| b == b'/').next()?;
    let algo = fixity::algo::by_tool(std::str::from_utf8(base).ok()?)?;
    let tool = algo.tools.iter().find(|t| t.as_bytes() == base)?;
    Some((tool, algo.name))
}

/// The options of coreutils' checksum tools (b2sum's `-l` is added for b2sum alone).
const OPTS: &[Opt] = &[
    Opt { long: "binary", short: Some(b'b'), arg: false, key: "binary" },
    Opt { long: "check", short: Some(b'c'), arg: false, key: "check" },
    Opt { long: "tag", short: None, arg: false, key: "tag" },
    Opt { long: "text", short: Some(b't'), arg: false, key: "text" },
    Opt { long: "zero", short: Some(b'z'), arg: false, key: "zero" },
    Opt { long: "ignore-missing", short: None, arg: false, key: "ignore-missing" },
    Opt { long: "quiet", short: None, arg: false, key: "quiet" },
    Opt { long: "status", short: None, arg: false, key: "status" },
    Opt { long: "strict", short: None, arg: false, key: "strict" },
    Opt { long: "warn", short: Some(b'w'), arg: false, key: "warn" },
    Opt { long: "length", short: None, arg: true, key: "length" },
    Opt { long: "help", short: None, arg: false, key: "help" },
    Opt { long: "version", short: None, arg: false, key: "version" },
];

#[derive(Default)]
struct Opts {
    binary: Option<bool>,
    check: bool,
    tag: bool,
    zero: bool,
    flags: CheckFlags,
    length: Option<Length>,
    help: bool,
    version: bool,
    files: Vec<OsString>,
}

/// A usage error: the message, then coreutils' "Try ..." line; exit 1.
fn usage(tool: &str, msg: &str) -> Status {
    ui::error(msg);
    eprintln!("Try '{tool} --help' for more information.");
    Status::Failed
}

fn parse(tool: &str, args: &[OsString]) -> Result<Opts, Status> {
    let b2sum = tool.ends_with("b2sum");
    let spec: Vec<Opt> = OPTS
        .iter()
        .map(|&o| if b2sum && o.key == "length" { Opt { short: Some(b'l'), ..o } } else { o })
        .collect();
    let mut o = Opts::default();
    // Each option takes effect as it is read, so a bad length is reported before
    // anything wrong later on the line, as getopt's loop in coreutils does.
    for item in getopt::args(&spec, args) {
        match item.map_err(|msg| usage(tool, &msg))? {
            Item::Operand(f) => o.files.push(f),
            Item::Opt("length", Some(v)) => o.length = Some(Length::parse(&v.to_string_lossy())?),
            Item::Opt(name, _) => set(&mut o, name),
        }
        // --help and --version end the program where they stand.
        if o.help || o.version {
            break;
        }
    }
    Ok(o)
}

/// A BLAKE2b output length given with `-l`/`--length` (b2sum, cksum), read as coreutils
/// reads it (gnulib's `xdectoumax`): decimal, after optional blanks and one `+`.
pub(super) struct Length {
    /// Bits; 0 means the full 512.
    pub bits: u64,
    /// As typed, for messages.
    text: String,
}

impl Length {
    /// Parses the option's value; as coreutils does while reading options, says why and
    /// fails (exit 1) unless it is a number and a multiple of 8.
    pub(super) fn parse(text: &str) -> Result<Length, Status> {
        let (lq, rq) = quotes();
        let digits = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
        let digits = digits.strip_prefix('+').unwrap_or(digits);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            ui::error(&format!("invalid length: {lq}{text}{rq}"));
            return Err(Status::Failed);
        }
        let Ok(bits) = digits.parse::<u64>() else {
            ui::error(&format!(
                "invalid length: {lq}{text}{rq}: Value too large for defined data type"
            ));
            return Err(Status::Failed);
        };
        if bits % 8 != 0 {
            ui::error(&format!("invalid length: {lq}{text}{rq}"));
            ui::error("length is not a multiple of 8");
            return Err(Status::Failed);
        }
        Ok(Length { bits, text: text.to_string() })
    }

    /// Whether BLAKE2b has this length (at most 512 bits); coreutils' messages if not,
    /// which it prints once the options are read.
    pub(super) fn fits(&self) -> bool {
        if self.bits <= 512 {
            return true;
        }
        let (lq, rq) = quotes();
        ui::error(&format!("invalid length: {lq}{}{rq}", self.text));
        ui::error(&format!("maximum digest length for {lq}BLAKE2b{rq} is 512 bits"));
        false
    }

    /// The registry row of this length (`blake2b-256`; `blake2b` for 0 and 512), for a
    /// length that [`Length::fits`].
    pub(super) fn algorithm(&self) -> &'static fixity::algo::Algorithm {
        let bits = if self.bits == 0 { 512 } else { self.bits as u32 };
        fixity::algo::blake2b_bits(bits).expect("a multiple of 8, at most 512")
    }
}

/// gnulib quotes with curly quotes in a UTF-8 locale and with ' otherwise.
fn quotes() -> (&'static str, &'static str) {
    if fixity::pathtext::utf8_locale() { ("\u{2018}", "\u{2019}") } else { ("'", "'") }
}

fn set(o: &mut Opts, name: &str) {
    match name {
        "binary" => o.binary = Some(true),
        "text" => o.binary = Some(false),
        "check" => o.check = true,
        // coreutils: --tag also selects binary mode, so `-t --tag` is fine and
        // `--tag -t` is refused.
        "tag" => (o.tag, o.binary) = (true, Some(true)),
        "zero" => o.zero = true,
        "ignore-missing" | "quiet" | "status" | "warn" | "strict" => o.flags.set(name),
        "help" => o.help = true,
        _ => o.version = true,
    }
}

/// The options coreutils' checksum tools take only with `--check`, as the drop-ins'
/// parsers record them.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CheckFlags {
    pub ignore_missing: bool,
    pub quiet: bool,
    pub status: bool,
    pub strict: bool,
    pub warn: bool,
}

impl CheckFlags {
    /// Records the option with long name `name`; of --quiet, --status and --warn the last
    /// one given wins, as in coreutils.
    pub(super) fn set(&mut self, name: &str) {
        match name {
            "ignore-missing" => self.ignore_missing = true,
            "quiet" => (self.quiet, self.status, self.warn) = (true, false, false),
            "status" => (self.quiet, self.status, self.warn) = (false, true, false),
            "warn" => (self.quiet, self.status, self.warn) = (false, false, true),
            "strict" => self.strict = true,
            _ => unreachable!("not a --check option: {name}"),
        }
    }

    /// coreutils' usage error for the first of them (in its order) given without --check.
    pub(super) fn without_check(&self) -> Option<String> {
        [
            (self.ignore_missing, "--ignore-missing"),
            (self.status, "--status"),
            (self.warn, "--warn"),
            (self.quiet, "--quiet"),
            (self.strict, "--strict"),
        ]
        .into_iter()
        .find(|(set, _)| *set)
        .map(|(_, name)| format!("the {name} option is meaningful only when verifying checksums"))
    }
}

/// The part of coreutils' `--help` about the options of `-c`, the same in every tool.
pub(super) const VERIFY_OPTIONS: &str = "\
The following five options are useful only when verifying checksums:
      --ignore-missing  don't fail or report status for missing files
      --quiet           don't print OK for each successfully verified file
      --status          don't output anything, status code shows success
      --strict          exit non-zero for improperly formatted checksum lines
  -w, --warn            warn about improperly formatted checksum lines";

/// The check plan of every drop-in: coreutils' reading and output, no notices of fixity's
/// own; `forced` is the tool's algorithm (`cksum`: its `-a`, if any).
pub(super) fn check_plan(
    manifests: Vec<OsString>,
    flags: CheckFlags,
    forced: Option<&'static Algorithm>,
) -> CheckPlan {
    CheckPlan {
        manifests,
        forced,
        strict: flags.strict,
        ignore_missing: flags.ignore_missing,
        coreutils: true,
        ..CheckPlan::default()
    }
}

/// Runs a drop-in's check plan, rendered as coreutils renders it (as `flags` ask), with no
/// progress bar.
pub(super) fn check(plan: &CheckPlan, flags: CheckFlags) -> anyhow::Result<Status> {
    let show = Show { quiet: flags.quiet, status: flags.status, warn: flags.warn, json: false };
    crate::cmd::check::execute(plan, show, &read_defaults())
}

/// The read options of every drop-in: the engine's defaults (the storage policy
/// `FIXITY_STORAGE` names, else `auto`; `main` refused a value naming none), no progress
/// bar.
pub(super) fn read_defaults() -> ReadArgs {
    ReadArgs {
        jobs: None,
        buffer_memory: None,
        storage: Storage::from_env().ok().flatten().unwrap_or(Storage::Auto),
        no_mmap: false,
        progress: false,
        no_progress: true,
        verbose: false,
    }
}

/// The diagnostic for an error that ended a run of `tool` (a name from [`tool_for`]), worded
/// as that tool words it: coreutils says "write error" alone for a failed write of its
/// output (the line-by-line flush that failed has already cleared errno by exit); b3sum's
/// and xxhsum's personalities, and every other error, name the cause.
pub fn error_text(tool: &str, err: &anyhow::Error) -> String {
    let coreutils = !matches!(tool, "b3sum" | "xxhsum" | "xxh32sum" | "xxh64sum" | "xxh128sum");
    if coreutils && err.to_string() == "write error" {
        "write error".to_string()
    } else {
        ui::describe(err)
    }
}

/// Runs `args` (without argv[0]) as `tool` would.
pub fn run(tool: &str, algo: &'static str, args: Vec<OsString>) -> anyhow::Result<Status> {
    let base = tool.rsplit('/').next().unwrap_or(tool);
    match base {
        "cksum" => return sum::run_cksum(tool, args),
        "sum" => return sum::run_sum(tool, args),
        "b3sum" => return b3sum::run(args),
        "xxhsum" | "xxh32sum" | "xxh64sum" | "xxh128sum" => {
            return xxhsum::run(tool, args);
        }
        _ => {}
    }
    ui::set_program(tool);
    let o = match parse(tool, &args) {
        Ok(o) => o,
        Err(status) => return Ok(status),
    };
    if o.help {
        println!(
            "Usage: {tool} [OPTION]... [FILE]...\n\
             Print or check {} checksums, as GNU {tool} does (this is fixity in drop-in mode).\n\n\
             With no FILE, or when FILE is -, read standard input.\n\
             \x20 -b, --binary          read in binary mode\n\
             \x20 -c, --check           read checksums from the FILEs and check them\n\
             \x20     --tag             create a BSD-style checksum\n\
             \x20 -t, --text            read in text mode (default)\n\
             \x20 -z, --zero            end each output line with NUL, not newline\n\n\
             {VERIFY_OPTIONS}\n\n\
             \x20     --help            display this help and exit\n\
             \x20     --version         output version information and exit",
            algo.to_uppercase()
        );
        return Ok(Status::Ok);
    }
    if o.version {
        println!("{tool} (fixity) {}", env!("CARGO_PKG_VERSION"));
        return Ok(Status::Ok);
    }
    // `-l BITS`: BLAKE2b with that output length, the registry's `blake2b-BITS` row (0 and
    // 512: the full `blake2b`). It chooses what is written; `-c` checks every line at its
    // own length (an untagged line's from its digits, a tagged one's from its tag), as
    // coreutils does.
    let mut algo = algo.to_string();
    if let Some(l) = &o.length {
        if !l.fits() {
            return Ok(Status::Failed);
        }
        if l.bits != 0 && !o.check {
            algo = l.algorithm().name.to_string();
        }
    }
    // coreutils' own order of option checks.
    if o.tag && o.binary == Some(false) {
        return Ok(usage(tool, "--tag does not support --text mode"));
    }
    if o.zero && o.check {
        return Ok(usage(tool, "the --zero option is not supported when verifying checksums"));
    }
    if o.tag && o.check {
        return Ok(usage(tool, "the --tag option is meaningless when verifying checksums"));
    }
    if o.binary.is_some() && o.check {
        return Ok(usage(
            tool,
            "the --binary and --text options are meaningless when verifying checksums",
        ));
    }
    if let Some(msg) = o.flags.without_check().filter(|_| !o.check) {
        return Ok(usage(tool, &msg));
    }
    let files = if o.files.is_empty() { vec![OsString::from("-")] } else { o.files };
    if o.check {
        let algo = algo::lookup(&algo).expect("a drop-in's algorithm is registered");
        check(&check_plan(files, o.flags, Some(algo)), o.flags)
    } else {
        let algo = algo::lookup(&algo).expect("a registry name");
        let opts =
            WriteOptions { binary: o.binary == Some(true), zero: o.zero, ..Default::default() };
        crate::cmd::hash::run_job(Job::named_files(files, algo, o.tag, opts, read_defaults()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn tools_are_recognized_by_base_name() {
        assert_eq!(tool_for("/usr/local/bin/sha256sum".as_ref()), Some(("sha256sum", "sha256")));
        assert_eq!(tool_for("b2sum".as_ref()), Some(("b2sum", "blake2b")));
        assert_eq!(tool_for("fixity".as_ref()), None);
        assert_eq!(tool_for("/bin/cksum".as_ref()), Some(("cksum", "cksum")));
        assert_eq!(tool_for("sum".as_ref()), Some(("sum", "sum")));
        assert_eq!(tool_for("b3sum".as_ref()), Some(("b3sum", "blake3")));
        assert_eq!(tool_for("xxh128sum".as_ref()), Some(("xxh128sum", "xxh128")));
        assert_eq!(tool_for("xxhsum.bak".as_ref()), None);
        for a in fixity::algo::ALGORITHMS {
            for tool in a.tools {
                assert_eq!(tool_for(tool.as_ref()), Some((*tool, a.name)), "{tool}");
            }
        }
    }

    #[test]
    fn options_parse_the_gnu_way() {
        let o = parse("sha256sum", &os(&["-bc", "--stat", "x", "--", "-c"])).ok().unwrap();
        assert!(o.check && o.flags.status && o.binary == Some(true));
        assert_eq!(o.files, os(&["x", "-c"]));
        let o = parse("b2sum", &os(&["-l", "256", "--ignore", "f"])).ok().unwrap();
        assert_eq!(o.length.map(|l| l.bits), Some(256));
        assert!(o.flags.ignore_missing);
        let o = parse("b2sum", &os(&["-l512", "--length=0"])).ok().unwrap();
        assert_eq!(o.length.map(|l| l.bits), Some(0));
        for (text, bits) in [(" +8", 8), ("08", 8), ("\t512", 512), ("1024", 1024)] {
            assert_eq!(Length::parse(text).ok().map(|l| l.bits), Some(bits), "{text:?}");
        }
        for bad in ["", "x", "-8", "8 ", "++8", "0x10", "7", "18446744073709551616"] {
            assert!(Length::parse(bad).is_err(), "{bad:?}");
        }
        assert!(Length::parse("512").ok().unwrap().fits());
        assert!(!Length::parse("520").ok().unwrap().fits());
        assert_eq!(Length::parse("256").ok().unwrap().algorithm().name, "blake2b-256");
        assert_eq!(Length::parse("0").ok().unwrap().algorithm().name, "blake2b");
        let o = parse("md5sum", &os(&["--quiet", "--warn"])).ok().unwrap();
        assert!(o.flags.warn && !o.flags.quiet, "the last of quiet/status/warn wins");
    }
}
