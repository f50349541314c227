//! Differential tests of the `b3sum -c` and `xxhsum -c` drop-ins: random checksum files
//! in each tool's own line grammar and its near misses (escapes, NUL, CR, tabs, one or
//! three spaces, empty names, truncated and non-hex digests, tags, comments, blank lines,
//! a missing final newline), checked with random option sets by the real tool and by
//! fixity run as that tool. Standard output, standard error, the exit status and the order
//! of the two streams through one pipe (`2>&1`) must be the same byte for byte.
//!
//! The seed is fixed, so a failure names a case that reproduces. `FIXITY_DIFF_CASES=N`
//! runs N cases per tool instead of the default few hundred; `FIXITY_DIFF_SEED=S` starts
//! from another seed.

use crate::util::{Rng, have, missing, tempdir, write};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// What one run printed: stdout, stderr, exit status, and both streams through one pipe.
#[derive(PartialEq, Eq)]
struct Outcome {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: Option<i32>,
    merged: Vec<u8>,
}

fn run(program: &Path, arg0: &str, dir: &Path, args: &[OsString], input: &[u8]) -> Outcome {
    let out = crate::util::run_as_tool(program, arg0, dir, args, input);
    let merged = crate::util::run_as_tool_merged(program, arg0, dir, args, input);
    Outcome { stdout: out.stdout, stderr: out.stderr, code: out.status.code(), merged }
}

fn which(tool: &str) -> PathBuf {
    crate::util::which(tool).expect("on PATH")
}

/// One generated case: the checksum files to write, the arguments, standard input.
struct Case {
    files: Vec<(String, Vec<u8>)>,
    args: Vec<OsString>,
    stdin: Vec<u8>,
}

/// The files every case may name: odd names, an empty file, a directory.
const FILES: &[(&[u8], &[u8])] = &[
    (b"a", b"alpha\n"),
    (b"b c", b"with space"),
    (b"back\\slash", b"escaped name"),
    (b"cr\r", b"carriage return"),
    (b"tab\tname", b"tab"),
    (b" lead", b"leading space"),
    (b"*star", b"star"),
    (b"new\nline", b"newline in the name"),
    (b"empty", b""),
    (b"x) = y", b"parenthesis"),
    (b"non\xffutf8", b"not UTF-8"),
    // Large enough for b3sum to map it and hash it on several threads.
    (b"big", &[0x5a; 100_000]),
];

fn tree() -> tempfile::TempDir {
    let d = tempdir();
    let dir = d.path().join("w");
    for (name, data) in FILES {
        write(&dir, PathBuf::from(OsString::from_vec(name.to_vec())), data);
    }
    std::fs::create_dir(dir.join("sub")).unwrap();
    d
}

/// Runs `cases` generated cases with the real `tool` and the drop-in, and fails listing
/// the first differences (each with its case number, arguments and checksum files).
fn differential(tool: &str, seed: u64, generate: fn(&mut Rng) -> Case) {
    if !have(tool) {
        missing(&format!("differential {tool}"), "the real tool is not installed");
        return;
    }
    let d = tree();
    let dir = d.path().join("w");
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let fake = bin.join(tool);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &fake).unwrap();
    let real = which(tool);
    let cases = setting("FIXITY_DIFF_CASES", 300);
    let mut rng = Rng(setting("FIXITY_DIFF_SEED", seed));
    let mut failures = Vec::new();
    for n in 0..cases {
        let case = generate(&mut rng);
        for (name, text) in &case.files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let want = run(&real, tool, &dir, &case.args, &case.stdin);
        let got = run(&fake, tool, &dir, &case.args, &case.stdin);
        if want != got {
            let show = |b: &[u8]| format!("{:?}", String::from_utf8_lossy(b));
            let mut text = format!("case {n}: {tool} {:?}\n", case.args);
            for (name, body) in &case.files {
                text.push_str(&format!("  {name}: {}\n", show(body)));
            }
            text.push_str(&format!("  stdin: {}\n", show(&case.stdin)));
            for (what, w, g) in [
                ("stdout", &want.stdout, &got.stdout),
                ("stderr", &want.stderr, &got.stderr),
                ("2>&1", &want.merged, &got.merged),
            ] {
                if w != g {
                    text.push_str(&format!(
                        "  {what}\n    real:   {}\n    fixity: {}\n",
                        show(w),
                        show(g)
                    ));
                }
            }
            if want.code != got.code {
                text.push_str(&format!("  exit: real {:?}, fixity {:?}\n", want.code, got.code));
            }
            failures.push(text);
        }
        for (name, _) in &case.files {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    let shown: Vec<&String> = failures.iter().take(8).collect();
    assert!(
        failures.is_empty(),
        "{} of {cases} cases differ from the real {tool}; the first:\n{}",
        failures.len(),
        shown.iter().map(|s| s.as_str()).collect::<String>()
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Changes one hex digit of `h` (a digest that no longer matches).
fn flip(rng: &mut Rng, h: &str) -> String {
    let mut chars: Vec<char> = h.chars().collect();
    let i = rng.below(chars.len());
    chars[i] = if chars[i] == '0' { '1' } else { '0' };
    chars.into_iter().collect()
}

/// Ends a checksum file: usually with a newline after its last line, sometimes without.
fn join(rng: &mut Rng, lines: Vec<Vec<u8>>) -> Vec<u8> {
    let mut out = lines.join(&b"\n"[..]);
    if !lines.is_empty() && !rng.chance(20) {
        out.push(b'\n');
    }
    out
}

/// Which checksum files a case reads (the case's arguments are these names so far): one
/// or two named files, a missing one or a directory after one, or standard input (with
/// `-` or no name at all).
fn sources(rng: &mut Rng, gen_file: &mut dyn FnMut(&mut Rng) -> Vec<u8>) -> Case {
    let stdin = b"from stdin\n".to_vec();
    let (files, args, stdin) = match rng.below(6) {
        0 => (Vec::new(), Vec::new(), gen_file(rng)),
        1 => (Vec::new(), vec!["-".into()], gen_file(rng)),
        2 => {
            let files =
                vec![("m0.sum".to_string(), gen_file(rng)), ("m1.sum".to_string(), gen_file(rng))];
            (files, vec!["m0.sum".into(), "m1.sum".into()], stdin)
        }
        // A checksum file that is missing, or a directory, after one that is not.
        3 if rng.chance(30) => {
            let other = if rng.chance(50) { "nothere.sum" } else { "sub" };
            let files = vec![("m0.sum".to_string(), gen_file(rng))];
            (files, vec!["m0.sum".into(), other.into()], stdin)
        }
        _ => (vec![("m0.sum".to_string(), gen_file(rng))], vec!["m0.sum".into()], stdin),
    };
    Case { files, args, stdin }
}

// ---------------------------------------------------------------- b3sum

/// A name for a b3sum line: as b3sum writes it (escaped when it holds `\` or a newline),
/// with whether the line starts with `\`.
fn b3_name(name: &[u8]) -> (bool, Vec<u8>) {
    let text = String::from_utf8_lossy(name);
    if text.contains('\\') || text.contains('\n') {
        (true, text.replace('\\', "\\\\").replace('\n', "\\n").into_bytes())
    } else {
        (false, text.into_owned().into_bytes())
    }
}

fn b3_line(rng: &mut Rng, stdin_data: &[u8]) -> Vec<u8> {
    let (name, data): (&[u8], &[u8]) = match rng.below(14) {
        0 => (b"nothere", b""),
        1 => (b"sub", b""),
        2 => (b"-", stdin_data),
        i => {
            let (n, d) = FILES[i % FILES.len()];
            (n, d)
        }
    };
    let good = blake3::hash(data).to_hex().to_string();
    let (escaped, shown) = b3_name(name);
    let lead = if escaped { "\\" } else { "" };
    let plain = |h: &str, sep: &str, n: &[u8]| [format!("{lead}{h}{sep}").as_bytes(), n].concat();
    match rng.below(24) {
        0..=5 => plain(&good, "  ", &shown),
        6 | 7 => plain(&flip(rng, &good), "  ", &shown),
        8 => plain(&good.to_uppercase(), "  ", &shown),
        9 => {
            let cut = rng.below(good.len());
            plain(&good[..cut], "  ", &shown)
        }
        10 => plain(&good.replacen(|c: char| c.is_ascii_hexdigit(), "g", 1), "  ", &shown),
        11 => {
            let sep = *rng.pick(&[" ", "   ", "\t", " *", "*", "  *"]);
            plain(&good, sep, &shown)
        }
        12 => plain(&good, "  ", b""),
        13 => plain(&good, "  ", b"a\0b"),
        14 => plain(&good, "  ", "a\u{fffd}".as_bytes()),
        15 => format!("\\{good}  a\\tb").into_bytes(),
        16 => format!("\\{good}  a").into_bytes(),
        17 => format!("\\{good}  a\\").into_bytes(),
        18 => [plain(&good, "  ", &shown), b"\r".to_vec()].concat(),
        19 => Vec::new(),
        20 => b"# a comment".to_vec(),
        21 => {
            let long = hex(&blake3::Hasher::new().update(data).finalize_xof().fill_vec(64));
            plain(&long, "  ", &shown)
        }
        22 => {
            if rng.chance(30) {
                // Not UTF-8: b3sum stops reading the file.
                [plain(&good, "  ", b"x"), b"\xff".to_vec()].concat()
            } else {
                [b"\xc3\xa9".to_vec(), plain(&good, "  ", &shown)].concat()
            }
        }
        _ => format!("{lead}{good}").into_bytes(),
    }
}

trait FillVec {
    fn fill_vec(self, n: usize) -> Vec<u8>;
}

impl FillVec for blake3::OutputReader {
    fn fill_vec(mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.fill(&mut v);
        v
    }
}

fn b3_case(rng: &mut Rng) -> Case {
    let stdin_data = b"from stdin\n".to_vec();
    let mut gen_file = |rng: &mut Rng| {
        let n = rng.below(7);
        let lines = (0..n).map(|_| b3_line(rng, &stdin_data)).collect();
        join(rng, lines)
    };
    let Case { files, args: names, stdin } = sources(rng, &mut gen_file);
    let mut args: Vec<OsString> = vec![rng.pick(&["-c", "--check"]).into()];
    if rng.chance(40) {
        args.push("--quiet".into());
    }
    if rng.chance(10) {
        args.push("--no-mmap".into());
    }
    let at = rng.below(args.len() + 1);
    let mut all: Vec<OsString> = args[..at].to_vec();
    all.extend(names);
    all.extend_from_slice(&args[at..]);
    Case { files, args: all, stdin }
}

#[test]
fn b3sum_check_matches_b3sum_on_random_checkfiles() {
    differential("b3sum", 0xb3b3_0001, b3_case);
}

// ---------------------------------------------------------------- xxhsum

/// xxhsum's algorithms: registry name, tag, digest length in hex digits.
const XXH: &[(&str, &str, usize)] = &[
    ("xxh32", "XXH32", 8),
    ("xxh64", "XXH64", 16),
    ("xxh128", "XXH128", 32),
    ("xxh3", "XXH3", 16),
];

fn xxh_hex(algo: &str, data: &[u8], reversed: bool) -> String {
    let d = fixity::algo::lookup(algo).unwrap().digest(data);
    let mut bytes = d.as_bytes().to_vec();
    if reversed {
        bytes.reverse();
    }
    hex(&bytes)
}

fn xxh_line(rng: &mut Rng, stdin_data: &[u8], le: bool) -> Vec<u8> {
    let (name, data): (&[u8], &[u8]) = match rng.below(15) {
        0 => (b"nothere", b""),
        1 | 2 => (b"stdin", stdin_data),
        i => {
            let (n, d) = FILES[i % FILES.len()];
            if n.contains(&b'\n') { (b"a", b"alpha\n") } else { (n, d) }
        }
    };
    let &(algo, tag, _) = rng.pick(XXH);
    let tagged = algo == "xxh3" || rng.chance(40);
    let tag_le = tagged && rng.chance(25);
    let digest = xxh_hex(algo, data, if tagged { tag_le } else { le });
    let line = |tag_text: &str, h: &str, n: &[u8], sep: &str| -> Vec<u8> {
        if tagged {
            [format!("{tag_text} (").as_bytes(), n, format!(") = {h}").as_bytes()].concat()
        } else {
            [format!("{h}{sep}").as_bytes(), n].concat()
        }
    };
    let tag_text = format!("{tag}{}", if tag_le { "_LE" } else { "" });
    match rng.below(24) {
        0..=6 => line(&tag_text, &digest, name, "  "),
        7 | 8 => line(&tag_text, &flip(rng, &digest), name, "  "),
        9 => line(&tag_text, &digest.to_uppercase(), name, "  "),
        10 => {
            let cut = rng.below(digest.len());
            line(&tag_text, &digest[..cut], name, "  ")
        }
        11 => {
            line(&tag_text, &digest.replacen(|c: char| c.is_ascii_hexdigit(), "z", 1), name, "  ")
        }
        12 => {
            let sep = *rng.pick(&[" ", "   ", " *", "\t", " \t", "*"]);
            line(&tag_text, &digest, name, sep)
        }
        13 => line(&tag_text, &digest, b"", "  "),
        14 => line(&tag_text, &digest, b"a\0b", "  "),
        15 => [line(&tag_text, &digest, name, "  "), b"\r".to_vec()].concat(),
        16 => Vec::new(),
        17 => b"# a comment".to_vec(),
        18 => {
            // Near misses of the tagged form.
            let n = String::from_utf8_lossy(name).into_owned();
            let shapes = [
                format!("{tag_text} ({n})= {digest}"),
                format!("{tag_text} ({n}) =  {digest}"),
                format!("{tag_text}({n}) = {digest}"),
                format!("MD5 ({n}) = {digest}"),
                format!("{tag_text} ({n}) = "),
                format!("{tag_text} ("),
                format!("{tag_text}_{digest}  {n}"),
            ];
            rng.pick(&shapes).clone().into_bytes()
        }
        19 => {
            // Another algorithm's tag on this digest.
            let &(_, other, _) = rng.pick(XXH);
            format!("{other} (a) = {digest}").into_bytes()
        }
        20 => {
            // Rarely a directory, whose read error ends xxhsum's run.
            if rng.chance(20) {
                format!("{digest}  sub").into_bytes()
            } else {
                format!("{digest}  .").into_bytes()
            }
        }
        21 => {
            if rng.chance(10) {
                // Longer than xxhsum reads.
                let mut l = format!("{digest}  ").into_bytes();
                l.resize(32 * 1024 + rng.below(3) - 2, b'n');
                l
            } else {
                digest.clone().into_bytes()
            }
        }
        _ => format!("{digest}  {}", String::from_utf8_lossy(name)).into_bytes(),
    }
}

fn xxh_case(rng: &mut Rng) -> Case {
    let stdin_data = b"from stdin\n".to_vec();
    let le = rng.chance(20);
    let mut gen_file = |rng: &mut Rng| {
        let n = rng.below(7);
        let lines = (0..n).map(|_| xxh_line(rng, &stdin_data, le)).collect();
        join(rng, lines)
    };
    let Case { files, args: names, stdin } = sources(rng, &mut gen_file);
    let mut args: Vec<OsString> = vec![rng.pick(&["-c", "--check"]).into()];
    // Options of hashing, which -c ignores.
    for opt in ["-H0", "-H2", "--tag", "-H3"] {
        if rng.chance(5) {
            args.push(opt.into());
        }
    }
    for (opt, p) in [("q", 30), ("status", 20), ("strict", 25), ("w", 30)] {
        if rng.chance(p) {
            let long = match opt {
                "q" => *rng.pick(&["-q", "--quiet"]),
                "w" => *rng.pick(&["-w", "--warn"]),
                "status" => "--status",
                _ => "--strict",
            };
            args.push(long.into());
        }
    }
    if le {
        args.push("--little-endian".into());
    }
    // xxhsum reads options only before the first name.
    let mut order: Vec<OsString> = Vec::new();
    while !args.is_empty() {
        order.push(args.remove(rng.below(args.len())));
    }
    order.extend(names);
    Case { files, args: order, stdin }
}

#[test]
fn xxhsum_check_matches_xxhsum_on_random_checkfiles() {
    differential("xxhsum", 0x0ec5_0001, xxh_case);
}

/// Hashing runs whose results (stdout) and errors (stderr) alternate, through one pipe
/// (and separately), and command lines the random cases found wrong once:
/// b3sum's output is flushed at each newline (Rust's standard output), xxhsum's in 4 KiB
/// blocks and at exit (C's stdio on a pipe), so its errors come first. Long argument lists
/// make xxhsum's output cross several blocks between errors.
#[test]
fn hashing_interleaves_stdout_and_stderr_as_the_real_tools() {
    let mut long: Vec<OsString> = Vec::new();
    for i in 0..150 {
        long.push(if i % 7 == 3 { "nothere" } else { "a" }.into());
        long.push(if i % 11 == 5 { "sub" } else { "b c" }.into());
    }
    let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
    let b3: Vec<Vec<OsString>> = vec![
        os(&["a", "nothere", "b c", "sub", "a"]),
        // b3sum prints an escaped name's `\` before it parses the length, and its standard
        // output holds it until the next newline (or the exit).
        os(&["-l", "x", "back\\slash", "a", "nothere", "back\\slash"]),
        os(&["-l", "x", "back\\slash", "a", "-l"]),
        os(&["--no-names", "-l", "x", "back\\slash", "nothere"]),
        long.clone(),
        // clap 2 refuses a repeated argument once all are read (its usage line names
        // those that follow), before a missing value of the same argument.
        os(&["-l", "8", "-l", "x", "--raw", "a", "--no-mmap"]),
        os(&["-l", "3", "--raw", "-l"]),
        os(&["--raw", "--raw", "-l"]),
        os(&["--no-names", "--raw", "-c"]),
        os(&["--raw", "--quiet", "a"]),
    ];
    let xxh: Vec<Vec<OsString>> = vec![
        os(&["a", "nothere", "b c", "sub", "a"]),
        os(&["-H3", "a", "nothere", "-"]),
        // -H3 makes the rest of the run tagged, whatever -H follows.
        os(&["-H3", "-H0", "a", "b c"]),
        [os(&["--tag", "-H2"]), long.clone()].concat(),
        long,
    ];
    for (tool, cases) in [("b3sum", b3), ("xxhsum", xxh)] {
        if !have(tool) {
            missing(&format!("interleaving of {tool}"), "the real tool is not installed");
            continue;
        }
        let d = tree();
        let dir = d.path().join("w");
        let fake = d.path().join(tool);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &fake).unwrap();
        let real = which(tool);
        for args in cases {
            let want = run(&real, tool, &dir, &args, b"from stdin\n");
            let got = run(&fake, tool, &dir, &args, b"from stdin\n");
            assert!(
                want == got,
                "{tool} {:?}\n  real 2>&1:   {:?}\n  fixity 2>&1: {:?}",
                &args[..args.len().min(6)],
                String::from_utf8_lossy(&want.merged),
                String::from_utf8_lossy(&got.merged)
            );
        }
    }
}

/// Names a hashing run may be given: the tree's files, a missing file, a directory,
/// standard input.
fn hash_names(rng: &mut Rng) -> Vec<OsString> {
    let n = rng.below(5);
    (0..n)
        .map(|_| match rng.below(12) {
            0 => OsString::from("nothere"),
            1 => OsString::from("sub"),
            2 => OsString::from("-"),
            _ => OsString::from_vec(rng.pick(FILES).0.to_vec()),
        })
        .collect()
}

fn b3_hash_case(rng: &mut Rng) -> Case {
    let mut groups: Vec<Vec<OsString>> = Vec::new();
    let mut stdin = b"from stdin\n".to_vec();
    // At most one length: with an argument given twice and another error, clap 2 reports
    // one of the two at random (docs/check.md).
    if rng.chance(25) {
        let lengths: [&[&str]; 4] =
            [&["-l", "8"], &["--length=100"], &["-l", "x"], &["--length", "0"]];
        let length = *rng.pick(&lengths);
        groups.push(length.iter().map(OsString::from).collect());
    }
    let options: &[(&[&str], u64)] = &[
        (&["--no-names"], 15),
        (&["--raw"], 8),
        (&["--keyed"], 10),
        (&["--derive-key", "ctx"], 8),
        (&["--no-mmap"], 10),
        (&["--num-threads", "2"], 5),
        (&["--quiet"], 3),
        (&["-c"], 3),
    ];
    for (opt, p) in options {
        // --keyed, --derive-key and -c together make three conflicts, and --keyed --quiet
        // without names or -c misses two arguments; clap 2 reports one of them at random.
        let keyed = groups.iter().any(|g| g[0] == "--keyed");
        if rng.chance(*p as usize) && !(keyed && matches!(opt[0], "--derive-key" | "--quiet")) {
            groups.push(opt.iter().map(OsString::from).collect());
            if opt[0] == "--keyed" {
                stdin = vec![7u8; *rng.pick(&[32, 32, 32, 0, 31, 33])];
            }
        }
    }
    // The names go between two options (never between an option and its value: b3sum
    // 1.2.0 panics on a value that is not UTF-8, a difference docs/check.md lists).
    let at = rng.below(groups.len() + 1);
    groups.insert(at, hash_names(rng));
    Case { files: Vec::new(), args: groups.concat(), stdin }
}

#[test]
fn b3sum_hashing_matches_b3sum_with_random_options() {
    differential("b3sum", 0xb3b3_0002, b3_hash_case);
}

fn xxh_hash_case(rng: &mut Rng) -> Case {
    let mut args: Vec<OsString> = Vec::new();
    let options: &[(&str, u64)] = &[
        ("-H0", 15),
        ("-H1", 10),
        ("-H2", 15),
        ("-H3", 15),
        ("-H32", 5),
        ("-H128", 5),
        ("--tag", 25),
        ("--little-endian", 20),
        ("-q", 15),
        ("--quiet", 5),
        ("-", 5),
    ];
    for (opt, p) in options {
        if rng.chance(*p as usize) {
            args.push(opt.into());
        }
    }
    let mut order: Vec<OsString> = Vec::new();
    while !args.is_empty() {
        order.push(args.remove(rng.below(args.len())));
    }
    // A name that is not the first argument is still a name (xxhsum stops reading
    // options at the first one).
    order.extend(hash_names(rng).into_iter().filter(|n| n != "-"));
    Case { files: Vec::new(), args: order, stdin: b"from stdin\n".to_vec() }
}

#[test]
fn xxhsum_hashing_matches_xxhsum_with_random_options() {
    differential("xxhsum", 0x0ec5_0002, xxh_hash_case);
}

/// With no file named and standard input a terminal, xxhsum 0.8.1 shows its usage and
/// exits 1 (`-` reads the terminal). Run under `script`, which gives both a terminal.
#[test]
fn xxhsum_without_input_on_a_terminal() {
    if !have("xxhsum") || !have("script") {
        missing("xxhsum on a terminal", "xxhsum or script (util-linux) is not installed");
        return;
    }
    let d = tree();
    let fake = d.path().join("xxhsum");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &fake).unwrap();
    let real = which("xxhsum");
    let under_tty = |program: &Path, args: &str| {
        let line = format!("'{}' {args}; echo rc=$?", program.display());
        let out = Command::new("script")
            .args(["-qc", &line, "/dev/null"])
            .current_dir(d.path().join("w"))
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).replace("fixity, drop-in for ", "")
    };
    for args in ["", "-c", "-H2 --tag", "--"] {
        let want = under_tty(&real, args);
        let got = under_tty(&fake, args);
        let banner = |s: &str| {
            s.lines().filter(|l| !l.starts_with("xxhsum ")).collect::<Vec<_>>().join("\n")
        };
        assert!(want.contains("Wrong parameters") && want.contains("rc=1"), "{want:?}");
        assert_eq!(banner(&got), banner(&want), "xxhsum {args}");
    }
}

/// A digest longer than the drop-in's output block (it streams, as b3sum does): the first
/// and last bytes of `b3sum -l 300000` (600 kB of hex) and `--raw`, as b3sum prints them.
#[test]
fn b3sum_long_output_is_streamed() {
    if !have("b3sum") {
        missing("b3sum long output", "the real tool is not installed");
        return;
    }
    let d = tree();
    let fake = d.path().join("b3sum");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &fake).unwrap();
    let real = which("b3sum");
    let ends = |program: &Path, args: &str| {
        let line = format!("'{}' {args} | od -An -c | sed -n '1p;$p'", program.display());
        let out = Command::new("sh").arg("-c").arg(line).current_dir(d.path().join("w")).output();
        String::from_utf8_lossy(&out.unwrap().stdout).into_owned()
    };
    for args in ["-l 300000 a", "--raw -l 300000 a", "-l 200000 --no-names back\\\\slash"] {
        let (want, got) = (ends(&real, args), ends(&fake, args));
        assert!(!want.is_empty());
        assert_eq!(got, want, "b3sum {args}");
    }
}

/// Standard output on a full disk (/dev/full): the drop-ins say so and exit 1, where
/// xxhsum 0.8.1 exits 0 with its output lost and b3sum 1.2.0 panics (docs/check.md).
#[test]
fn output_to_a_full_disk_is_an_error() {
    let d = tree();
    let dir = d.path().join("w");
    for (tool, args, msg) in [
        (
            "xxhsum",
            &["a", "b c"][..],
            "Error: could not write to standard output: No space left on device\n",
        ),
        (
            "b3sum",
            &["a"],
            "Error: failed printing to stdout: No space left on device (os error 28)\n",
        ),
        (
            "b3sum",
            &["-l", "100000", "a"],
            "Error: failed printing to stdout: No space left on device (os error 28)\n",
        ),
    ] {
        let fake = d.path().join(tool);
        if !fake.exists() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &fake).unwrap();
        }
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = Command::new(&fake).args(args).current_dir(&dir).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.ends_with(msg), "{tool} {args:?}: {err:?}");
        assert_eq!(err.matches("Error:").count(), 1, "{tool} {args:?}: said once: {err:?}");
        assert_eq!(out.status.code(), Some(1), "{tool} {args:?}");
    }
    // The same with the check mode's results.
    let sums = d.path().join("w/sums");
    std::fs::write(&sums, format!("{}  a\n", blake3::hash(b"alpha\n").to_hex())).unwrap();
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = Command::new(d.path().join("b3sum"))
        .args(["-c", "sums"])
        .current_dir(&dir)
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No space left on device"));
}
