//! Golden tests: fixity must print, byte for byte, what GNU coreutils printed.
//!
//! The goldens under `tests/fixtures/` were recorded from the real tools by
//! `tests/fixtures/make-golden.py` (see its doc for the layout). Every test here builds
//! the fixture tree `T` from `tests/fixtures/tree.spec` in a fresh temporary directory,
//! runs the built `fixity` there and compares stdout, stderr and the exit code with the
//! recorded ones (the placeholder `PROG` in a recorded stderr stands for `fixity`).

use crate::util;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::Output;

// ------------------------------------------------------------------ fixtures

/// `tests/fixtures/`.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures")
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// One entry of `tree.spec`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A regular file: path relative to the tree root, and its content.
    File(Vec<u8>, Vec<u8>),
    /// An (empty) directory.
    Dir(Vec<u8>),
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length in {s:?}");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

fn decode_content(field: &str) -> Vec<u8> {
    if field == "-" {
        return Vec::new();
    }
    match field.split_once('*') {
        Some((hex, n)) => unhex(hex).repeat(n.parse().expect("repeat count")),
        None => unhex(field),
    }
}

/// Parses `tree.spec` (format documented at its top).
pub fn parse_spec(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        match (f[0], f.len()) {
            ("dir", 2) => out.push(Entry::Dir(unhex(f[1]))),
            ("file", 3) => out.push(Entry::File(unhex(f[1]), decode_content(f[2]))),
            _ => panic!("tree.spec:{}: bad entry {line:?}", i + 1),
        }
    }
    out
}

/// The entries of `tests/fixtures/tree.spec`.
pub fn spec() -> Vec<Entry> {
    let text = std::fs::read_to_string(fixtures().join("tree.spec")).expect("read tree.spec");
    parse_spec(&text)
}

fn os(bytes: &[u8]) -> OsString {
    OsString::from_vec(bytes.to_vec())
}

/// Builds the fixture tree at `root` (created if needed).
pub fn build_tree(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    for e in spec() {
        match e {
            Entry::Dir(rel) => std::fs::create_dir_all(root.join(os(&rel))).unwrap(),
            Entry::File(rel, data) => {
                util::write(root, os(&rel), &data);
            }
        }
    }
}

/// A temporary directory holding the fixture tree as `T`.
fn work_with_tree() -> tempfile::TempDir {
    let dir = util::tempdir();
    build_tree(&dir.path().join("T"));
    dir
}

/// Decodes one line of an `args` / `fixity_args` file: literal, except for the escapes
/// `\\ \n \r \t \xHH`.
fn decode_arg(line: &[u8]) -> OsString {
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        if line[i] == b'\\' {
            match line.get(i + 1) {
                Some(b'\\') => out.push(b'\\'),
                Some(b'n') => out.push(b'\n'),
                Some(b'r') => out.push(b'\r'),
                Some(b't') => out.push(b'\t'),
                Some(b'x') => {
                    let h = std::str::from_utf8(&line[i + 2..i + 4]).unwrap();
                    out.push(u8::from_str_radix(h, 16).unwrap());
                    i += 2;
                }
                other => panic!("bad escape {other:?} in args line {line:?}"),
            }
            i += 2;
        } else {
            out.push(line[i]);
            i += 1;
        }
    }
    OsString::from_vec(out)
}

fn read_args(path: &Path) -> Vec<OsString> {
    if !path.exists() {
        return Vec::new();
    }
    let data = read(path);
    data.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(decode_arg).collect()
}

// ------------------------------------------------------------------ reporting

/// Renders bytes readably: printable ASCII as is, everything else escaped.
pub fn escape(bytes: &[u8]) -> String {
    let mut s = String::new();
    for &b in bytes {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0 => s.push_str("\\0"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    s
}

/// Splits into records ending in `\n` or NUL (kept), for line-wise display.
fn records(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' || b == 0 {
            out.push(&bytes[start..=i]);
            start = i + 1;
        }
    }
    if start < bytes.len() {
        out.push(&bytes[start..]);
    }
    out
}

/// `None` when equal; otherwise a readable side-by-side report of the two.
pub fn diff(what: &str, expected: &[u8], got: &[u8]) -> Option<String> {
    if expected == got {
        return None;
    }
    let (e, g) = (records(expected), records(got));
    let first = e.iter().zip(&g).position(|(a, b)| a != b).unwrap_or(e.len().min(g.len()));
    let mut s = format!(
        "--- {what} differs (first difference at line {}; expected {} lines / {} bytes, got {} lines / {} bytes)\n",
        first + 1,
        e.len(),
        expected.len(),
        g.len(),
        got.len()
    );
    let show = |s: &mut String, label: &str, recs: &[&[u8]]| {
        let _ = writeln!(s, "  {label}:");
        if recs.is_empty() {
            let _ = writeln!(s, "    (empty)");
        }
        for (i, r) in recs.iter().enumerate() {
            let mark = if i == first { '>' } else { ' ' };
            let _ = writeln!(s, "  {mark}{:3} {}", i + 1, escape(r));
        }
    };
    show(&mut s, "expected", &e);
    show(&mut s, "got", &g);
    Some(s)
}

/// Compares a run with the expectations: `None` when all match, else every difference.
fn check_output(
    label: &str,
    out: &Output,
    stdout: &[u8],
    stderr: &[u8],
    exit: i32,
) -> Option<String> {
    let mut problems = Vec::new();
    if let Some(d) = diff("stdout", stdout, &out.stdout) {
        problems.push(d);
    }
    if let Some(d) = diff("stderr", stderr, &out.stderr) {
        problems.push(d);
    }
    if out.status.code() != Some(exit) {
        problems.push(format!("--- exit code: expected {exit}, got {:?}\n", out.status));
    }
    if problems.is_empty() {
        None
    } else {
        Some(format!("golden mismatch: {label}\n{}", problems.concat()))
    }
}

/// [`check_output`], panicking on a difference.
fn assert_output(label: &str, out: &Output, stdout: &[u8], stderr: &[u8], exit: i32) {
    if let Some(p) = check_output(label, out, stdout, stderr, exit) {
        panic!("{p}");
    }
}

fn replace_all(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

fn command_line(args: &[OsString]) -> String {
    args.iter().map(|a| escape(a.as_encoded_bytes())).collect::<Vec<_>>().join(" ")
}

// ------------------------------------------------------------------ the tree itself

#[test]
fn spec_has_the_hard_names() {
    let names: Vec<Vec<u8>> = spec()
        .into_iter()
        .map(|e| match e {
            Entry::File(p, _) | Entry::Dir(p) => p,
        })
        .collect();
    let has = |pred: &dyn Fn(&[u8]) -> bool| names.iter().any(|n| pred(n));
    assert!(has(&|n| n.contains(&b' ')), "space");
    assert!(has(&|n| n.contains(&b'\\')), "backslash");
    assert!(has(&|n| n.contains(&b'\n')), "newline");
    assert!(has(&|n| n.contains(&b'\r')), "carriage return");
    assert!(has(&|n| n.starts_with(b"-")), "leading dash");
    assert!(has(&|n| std::str::from_utf8(n).is_err()), "non-UTF-8");
    assert!(has(&|n| std::str::from_utf8(n).is_ok_and(|s| !s.is_ascii())), "UTF-8");
    assert!(has(&|n| n == b"a-b") && has(&|n| n.starts_with(b"a/")), "a-b beside a/");
    assert!(spec().iter().any(|e| matches!(e, Entry::File(_, d) if d.is_empty())), "empty file");
    assert!(spec().iter().any(|e| matches!(e, Entry::Dir(_))), "empty dir");
}

// ------------------------------------------------------------------ hash: the tree

/// `fixity hash -a ALGO OPTS T` must print `gnu/<algo>_tree<suffix>.expected`.
fn tree_golden(algo: &str, suffix: &str, opts: &[&str]) {
    let expected = read(&fixtures().join("gnu").join(format!("{algo}_tree{suffix}.expected")));
    let work = work_with_tree();
    let mut args: Vec<OsString> = vec!["hash".into(), "-a".into(), algo.into()];
    args.extend(opts.iter().map(OsString::from));
    args.push("T".into());
    let out = util::run(work.path(), &args);
    assert_output(&format!("fixity {}", command_line(&args)), &out, &expected, b"", 0);
}

macro_rules! tree_goldens {
    ($($name:ident: $algo:literal $suffix:literal [$($opt:literal),*];)*) => {
        $(
            #[test]
            fn $name() {
                tree_golden($algo, $suffix, &[$($opt),*]);
            }
        )*
    };
}

tree_goldens! {
    tree_md5: "md5" "" [];
    tree_md5_tag: "md5" "_tag" ["--tag"];
    tree_md5_zero: "md5" "_zero" ["-z"];
    tree_md5_binary: "md5" "_binary" ["-b"];
    tree_md5_tag_zero: "md5" "_tag_zero" ["--tag", "-z"];
    tree_sha1: "sha1" "" [];
    tree_sha1_tag: "sha1" "_tag" ["--tag"];
    tree_sha1_zero: "sha1" "_zero" ["-z"];
    tree_sha1_binary: "sha1" "_binary" ["-b"];
    tree_sha1_tag_zero: "sha1" "_tag_zero" ["--tag", "-z"];
    tree_sha224: "sha224" "" [];
    tree_sha224_tag: "sha224" "_tag" ["--tag"];
    tree_sha224_zero: "sha224" "_zero" ["-z"];
    tree_sha224_binary: "sha224" "_binary" ["-b"];
    tree_sha224_tag_zero: "sha224" "_tag_zero" ["--tag", "-z"];
    tree_sha256: "sha256" "" [];
    tree_sha256_tag: "sha256" "_tag" ["--tag"];
    tree_sha256_zero: "sha256" "_zero" ["-z"];
    tree_sha256_binary: "sha256" "_binary" ["-b"];
    tree_sha256_tag_zero: "sha256" "_tag_zero" ["--tag", "-z"];
    tree_sha384: "sha384" "" [];
    tree_sha384_tag: "sha384" "_tag" ["--tag"];
    tree_sha384_zero: "sha384" "_zero" ["-z"];
    tree_sha384_binary: "sha384" "_binary" ["-b"];
    tree_sha384_tag_zero: "sha384" "_tag_zero" ["--tag", "-z"];
    tree_sha512: "sha512" "" [];
    tree_sha512_tag: "sha512" "_tag" ["--tag"];
    tree_sha512_zero: "sha512" "_zero" ["-z"];
    tree_sha512_binary: "sha512" "_binary" ["-b"];
    tree_sha512_tag_zero: "sha512" "_tag_zero" ["--tag", "-z"];
    tree_blake2b: "blake2b" "" [];
    tree_blake2b_tag: "blake2b" "_tag" ["--tag"];
    tree_blake2b_zero: "blake2b" "_zero" ["-z"];
    tree_blake2b_binary: "blake2b" "_binary" ["-b"];
    tree_blake2b_tag_zero: "blake2b" "_tag_zero" ["--tag", "-z"];
    tree_sha256_text_flag: "sha256" "" ["-t"];
    tree_sha256_recursive_flag: "sha256" "" ["-r"];
}

/// Runs `fixity hash -a sha256 ARG` and expects the golden with `T/` rewritten to `prefix`
/// at the start of every name.
fn tree_golden_as_typed(arg: &str, prefix: &[u8]) {
    let golden = read(&fixtures().join("gnu").join("sha256_tree.expected"));
    let expected = replace_all(&golden, b"  T/", &[b"  ".as_slice(), prefix].concat());
    let work = work_with_tree();
    let out = util::run(work.path(), ["hash", "-a", "sha256", arg]);
    assert_output(&format!("fixity hash -a sha256 {arg}"), &out, &expected, b"", 0);
}

/// `DIR/` prints `DIR/sub/file`, not `DIR//sub/file`.
#[test]
fn tree_trailing_slash() {
    tree_golden_as_typed("T/", b"T/");
}

/// `./DIR` keeps the `./` the user typed (as `find ./T` does).
#[test]
fn tree_dot_slash() {
    tree_golden_as_typed("./T", b"./T/");
}

/// A sub-tree keeps its own order: the same lines as the whole tree's under T/a/.
#[test]
fn tree_subdirectory() {
    let golden = read(&fixtures().join("gnu").join("sha256_tree.expected"));
    let expected: Vec<u8> = records(&golden)
        .into_iter()
        .filter(|l| l.windows(6).any(|w| w == b"  T/a/"))
        .flatten()
        .copied()
        .collect();
    let work = work_with_tree();
    let out = util::run(work.path(), ["hash", "-a", "sha256", "T/a"]);
    assert_output("fixity hash -a sha256 T/a", &out, &expected, b"", 0);
}

/// A tree without regular files prints nothing and succeeds (`find` lists nothing).
#[test]
fn tree_empty_directory() {
    let work = work_with_tree();
    let out = util::run(work.path(), ["hash", "-a", "sha256", "T/emptydir", "T/a/emptysub"]);
    assert_output("fixity hash -a sha256 T/emptydir T/a/emptysub", &out, b"", b"", 0);
}

// ------------------------------------------------------------------ hash: stdin

/// Every recorded stdin golden for `algo`, run both with no operand and with `-`.
fn stdin_goldens(algo: &str) {
    let dir = fixtures().join("gnu").join("stdin");
    let mut problems = Vec::new();
    let work = util::tempdir();
    for input in ["empty", "abc", "bytes"] {
        let data = read(&dir.join(format!("{input}.input")));
        let mut variants: Vec<(&str, &[&str])> = vec![("", &[])];
        if input == "abc" {
            variants.push(("_tag", &["--tag"]));
            variants.push(("_binary", &["-b"]));
        }
        for (suffix, opts) in variants {
            let expected = read(&dir.join(format!("{algo}_{input}{suffix}.expected")));
            for dash in [false, true] {
                let mut args = vec!["hash", "-a", algo];
                args.extend_from_slice(opts);
                if dash {
                    args.push("-");
                }
                let out = util::run_stdin(work.path(), &args, &data);
                let label = format!("fixity {} < {input}.input", args.join(" "));
                problems.extend(check_output(&label, &out, &expected, b"", 0));
            }
        }
    }
    if !problems.is_empty() {
        panic!("{}", problems.join("\n"));
    }
}

#[test]
fn stdin_md5() {
    stdin_goldens("md5");
}
#[test]
fn stdin_sha1() {
    stdin_goldens("sha1");
}
#[test]
fn stdin_sha224() {
    stdin_goldens("sha224");
}
#[test]
fn stdin_sha256() {
    stdin_goldens("sha256");
}
#[test]
fn stdin_sha384() {
    stdin_goldens("sha384");
}
#[test]
fn stdin_sha512() {
    stdin_goldens("sha512");
}
#[test]
fn stdin_blake2b() {
    stdin_goldens("blake2b");
}

// ------------------------------------------------------------------ recorded cases

/// Runs the recorded case `tests/fixtures/<kind>/<name>/` (`kind` is `hash` or `check`).
fn run_case(kind: &str, name: &str) {
    let dir = fixtures().join(kind).join(name);
    assert!(dir.is_dir(), "no case directory {}", dir.display());
    let work = work_with_tree();
    let files = dir.join("files");
    if files.is_dir() {
        for e in std::fs::read_dir(&files).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), work.path().join(e.file_name())).unwrap();
        }
    }
    let mut args: Vec<OsString> = vec![kind.into()];
    args.extend(read_args(&dir.join("fixity_args")));
    args.extend(read_args(&dir.join("args")));
    let stdin_path = dir.join("stdin");
    let out = if stdin_path.exists() {
        util::run_stdin(work.path(), &args, &read(&stdin_path))
    } else {
        util::run(work.path(), &args)
    };
    let stdout = read(&dir.join("stdout"));
    // `fixity_stderr`: where native mode says more than the tool on purpose (docs/check.md
    // lists each such difference), the text fixity prints instead of the recorded one.
    let own = dir.join("fixity_stderr");
    let recorded = if own.exists() { own } else { dir.join("stderr") };
    let stderr = replace_all(&read(&recorded), b"PROG", b"fixity");
    let exit: i32 = String::from_utf8(read(&dir.join("exit"))).unwrap().trim().parse().unwrap();
    let tool = String::from_utf8(read(&dir.join("tool"))).unwrap();
    let label = format!(
        "{kind}/{name}: fixity {}   (recorded from: {} {}{})",
        command_line(&args),
        tool.trim(),
        if kind == "check" { "-c " } else { "" },
        command_line(&read_args(&dir.join("args")))
    );
    assert_output(&label, &out, &stdout, &stderr, exit);
}

macro_rules! cases {
    ($kind:literal, $list:ident, $module:ident: $($name:ident)*) => {
        const $list: &[&str] = &[$(stringify!($name)),*];
        mod $module {
            $(
                #[test]
                fn $name() {
                    super::run_case($kind, stringify!($name));
                }
            )*
        }
    };
}

cases! { "hash", HASH_CASES, hash_case:
    all_missing_operands
    explicit_escaped_names
    explicit_escaped_names_tag
    explicit_files_order
    missing_operand
    missing_operand_tag
    stdin_among_files
}

cases! { "check", CHECK_CASES, check_case:
    all_ok
    b2_failed
    b2_tag_failed
    b2_warn
    binary_marker
    bsd_tag
    bsd_tag_escaped_names
    bsd_tag_failed
    comments_and_blank_lines
    comments_only
    crlf
    crlf_failed
    directory_listed
    empty_manifest
    escaped_names
    escaped_names_failed
    escaped_names_missing
    ignore_missing
    ignore_missing_all
    ignore_missing_failed
    malformed_many
    malformed_one
    malformed_strict
    malformed_warn
    malformed_warn_strict_quiet
    manifest_is_directory
    manifest_is_directory_among
    manifest_missing
    manifest_missing_among
    md5_mixed
    md5_tag_warn
    missing_file
    missing_files_quoted
    mixed
    mixed_markers
    mixed_warn
    no_final_newline
    no_proper_lines
    no_proper_lines_warn
    one_failed
    quiet_failed
    quiet_ok
    sha1_ok
    sha512_malformed_warn
    sha512_ok
    status_failed
    status_malformed
    status_missing
    status_ok
    stdin_manifest
    stdin_manifest_implicit
    stdin_manifest_malformed_warn
    stdin_manifest_no_proper_lines
    strict_ok
    two_failed
    two_manifests
    uppercase_hex
}

/// Every recorded case directory has a test above, and every test its directory.
#[test]
fn every_recorded_case_has_a_test() {
    for (kind, listed) in [("hash", HASH_CASES), ("check", CHECK_CASES)] {
        let mut on_disk: Vec<String> = std::fs::read_dir(fixtures().join(kind))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = listed.iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(
            on_disk, listed,
            "tests/fixtures/{kind}/ and the cases! list in golden.rs differ"
        );
    }
}

// ------------------------------------------------------------------ fixity-only round trips

/// coreutils 9.1 refuses `-c -z`, so there is no golden: fixity's own NUL-separated
/// manifest must check clean with `check -z`, one OK per file.
#[test]
fn zero_manifest_round_trip() {
    let work = work_with_tree();
    let out = util::run(work.path(), ["hash", "-a", "sha256", "-z", "T"]);
    assert!(out.status.success(), "hash -z failed: {}", escape(&out.stderr));
    std::fs::write(work.path().join("list.sha256"), &out.stdout).unwrap();
    let out = util::run(work.path(), ["check", "-z", "list.sha256"]);
    let files = spec().iter().filter(|e| matches!(e, Entry::File(..))).count();
    let oks = out.stdout.windows(4).filter(|w| w == b": OK").count();
    assert!(
        out.status.success() && out.stderr.is_empty() && oks == files,
        "fixity check -z of fixity hash -z output: exit {:?}, {oks} OKs for {files} files\nstdout: {}\nstderr: {}",
        out.status,
        escape(&out.stdout),
        escape(&out.stderr)
    );
}

/// Every tree golden, used as a manifest, checks clean (with -a, and from its name).
#[test]
fn tree_goldens_check_clean() {
    let mut problems = Vec::new();
    let work = work_with_tree();
    for (algo, ext) in [
        ("md5", "md5"),
        ("sha1", "sha1"),
        ("sha224", "sha224"),
        ("sha256", "sha256"),
        ("sha384", "sha384"),
        ("sha512", "sha512"),
        ("blake2b", "b2"),
    ] {
        for suffix in ["", "_tag", "_binary"] {
            let name = format!("{algo}_tree{suffix}.{ext}");
            std::fs::copy(
                fixtures().join("gnu").join(format!("{algo}_tree{suffix}.expected")),
                work.path().join(&name),
            )
            .unwrap();
            let out = util::run(work.path(), ["check", "--strict", "--quiet", &name]);
            if !out.status.success() || !out.stdout.is_empty() || !out.stderr.is_empty() {
                problems.push(format!(
                    "fixity check --strict --quiet {name}: exit {:?}\n  stdout: {}\n  stderr: {}",
                    out.status,
                    escape(&out.stdout),
                    escape(&out.stderr)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
