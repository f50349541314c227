//! Differential tests of the coreutils drop-ins (`md5sum`, `sha1sum`, `sha224sum`,
//! `sha256sum`, `sha512sum`, `b2sum`, `cksum`): random checksum files from a fixed seed,
//! checked with random option sets by the real tool and by fixity under the tool's name,
//! compared byte for byte: stdout, stderr, the exit status, and both streams through one
//! pipe (their interleaving).
//!
//! `FIXITY_DIFF_CASES=N` runs N cases instead of the default; `FIXITY_DIFF_SEED=S` (hex)
//! starts from another seed; `FIXITY_DIFF_BIN=PATH` compares another fixity binary. A
//! mismatch is shrunk, then printed: its manifests (escaped), arguments and both outputs.
//! The shapes that differ on purpose are listed in docs/check.md; the generator does not
//! make them.

use crate::util::{Rng, fixity, have, missing, tempdir, write};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// What one run printed.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    out: Vec<u8>,
    err: Vec<u8>,
    code: Option<i32>,
    /// stdout and stderr through one pipe (`2>&1`).
    merged: Vec<u8>,
}

/// Runs `program` as `name` (argv[0]) in `dir` twice: with stdout and stderr apart, then
/// through one pipe.
fn exec(program: &Path, name: &str, dir: &Path, args: &[OsString], stdin: &[u8]) -> Outcome {
    let o = crate::util::run_as_tool(program, name, dir, args, stdin);
    let merged = crate::util::run_as_tool_merged(program, name, dir, args, stdin);
    Outcome { out: o.stdout, err: o.stderr, code: o.status.code(), merged }
}

/// The real tool and a link with its name to fixity, or `None` (reported) without it.
fn pair(tool: &str, links: &Path) -> Option<(PathBuf, PathBuf)> {
    if !have(tool) {
        missing(&format!("differential {tool}"), "the real tool is not installed");
        return None;
    }
    let real = crate::util::which(tool)?;
    let fake = links.join(tool);
    if !fake.exists() {
        std::fs::create_dir_all(links).unwrap();
        // FIXITY_DIFF_BIN: another fixity binary to compare (an older build, to bisect).
        let bin = std::env::var_os("FIXITY_DIFF_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_fixity").into());
        std::os::unix::fs::symlink(bin, &fake).unwrap();
    }
    Some((real, fake))
}

fn show(b: &[u8]) -> String {
    b.escape_ascii().to_string()
}

fn report(o: &Outcome) -> String {
    format!(
        "  exit {:?}\n  stdout: {}\n  stderr: {}\n  2>&1:   {}\n",
        o.code,
        show(&o.out),
        show(&o.err),
        show(&o.merged)
    )
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// Checks `manifests` (name, bytes) in `dir` with `tool ARGS` and with the drop-in, and
/// returns the difference, if any, as a repro.
fn differ(
    tool: &str,
    (real, fake): &(PathBuf, PathBuf),
    dir: &Path,
    args: &[OsString],
    manifests: &[(&str, &[u8])],
    stdin: &[u8],
) -> Option<String> {
    for (name, bytes) in manifests {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let want = exec(real, tool, dir, args, stdin);
    let got = exec(fake, tool, dir, args, stdin);
    (want != got).then(|| {
        let mut s = format!("{tool} {}\n", show(&args.join(&OsString::from(" ")).into_vec()));
        for (name, bytes) in manifests {
            s.push_str(&format!("  manifest {name}: b\"{}\"\n", show(bytes)));
        }
        if !stdin.is_empty() {
            s.push_str(&format!("  stdin: b\"{}\"\n", show(stdin)));
        }
        format!("{s}coreutils:\n{}drop-in:\n{}", report(&want), report(&got))
    })
}

/// A tree for the cases: names with blanks, escapes and stars, a directory, an empty file.
const FILES: &[(&str, &[u8])] = &[
    ("a", b"alpha\n"),
    ("b c", b"with space"),
    (" lead", b"leading space"),
    ("*star", b"star"),
    ("back\\slash", b"escaped name"),
    ("new\nline", b"newline in the name"),
    ("cr\rname", b"carriage return"),
    ("tab\tname", b"tab"),
    ("empty", b""),
    ("na", b"the name before a NUL"),
    ("x)y", b"a parenthesis"),
    ("dir/inner", b"x"),
];

/// Names that are not in the tree (and a directory).
const ABSENT: &[&str] = &["gone", "no such", "dir"];

fn tree(dir: &Path) {
    for (name, data) in FILES {
        write(dir, name, data);
    }
}

fn content(name: &[u8]) -> Option<&'static [u8]> {
    FILES.iter().find(|(n, _)| n.as_bytes() == name).map(|(_, d)| *d)
}

fn digest(algo: &str, data: &[u8]) -> fixity::digest::Digest {
    fixity::algo::lookup(algo).unwrap_or_else(|| panic!("{algo}")).digest(data)
}

// ------------------------------------------------------------------------------------
// Regression cases, each a difference fixity had with coreutils 9.1.
// ------------------------------------------------------------------------------------

fn regression(tool: &str, args: &[&str], manifests: &[(&str, &[u8])], stdin: &[u8]) {
    let d = tempdir();
    let dir = d.path().join("w");
    tree(&dir);
    let Some(p) = pair(tool, &d.path().join("bin")) else { return };
    if let Some(diff) = differ(tool, &p, &dir, &os(args), manifests, stdin) {
        panic!("drop-in differs from coreutils:\n{diff}");
    }
}

fn md5_hex(data: &[u8]) -> String {
    digest("md5", data).to_hex()
}

/// coreutils takes a name up to its first NUL (`na\0me` checks `na`); an escaped name
/// holding a NUL is improperly formatted; so is a digest cut by a NUL.
#[test]
fn a_nul_ends_the_name() {
    let d = md5_hex(b"the name before a NUL");
    let m = format!("{d}  na\0me\n\\{d}  na\0\\\\\nMD5 (na\0x) = {d}\n{}\0  a\n", &d[..31]);
    regression("md5sum", &["-c", "-w", "m"], &[("m", m.as_bytes())], b"");
}

/// In a manifest of BSD `md5 -r` lines (`DIGEST NAME`), a name may start with a space or
/// `*`: coreutils reads them all.
#[test]
fn one_space_names_may_start_with_a_space_or_star() {
    let m = format!(
        "{} a\n{}  lead\n{} *star\n{} b c\n{}  lead\n",
        md5_hex(b"alpha\n"),
        md5_hex(b"leading space"),
        md5_hex(b"star"),
        md5_hex(b"with space"),
        md5_hex(b"leading space"),
    );
    regression("md5sum", &["-c", "m"], &[("m", m.as_bytes())], b"");
    // The form of the first untagged line holds for the next manifest too.
    let two = format!("{}  a\n", md5_hex(b"alpha\n"));
    regression(
        "md5sum",
        &["-c", "-w", "m", "two"],
        &[("m", m.as_bytes()), ("two", two.as_bytes())],
        b"",
    );
}

/// Which lines count as improperly formatted, and which are verified, with empty names,
/// truncated and non-hex digests, and `--ignore-missing`; "no file was verified" when
/// nothing matched, even if something mismatched.
#[test]
fn malformed_counts_and_ignore_missing() {
    let good = md5_hex(b"alpha\n");
    let bad = md5_hex(b"other");
    let m = format!(
        "{good} \n{good}  \n{good}  \0x\n{}  a\n{}g  a\n{bad}  a\n{good}  gone\n  # no\n \t\n",
        &good[..30],
        &good[..31]
    );
    for args in [&["-c", "-w", "--ignore-missing", "m"][..], &["-c", "--strict", "m"]] {
        regression("md5sum", args, &[("m", m.as_bytes())], b"");
    }
    // b2sum and cksum take 3-byte lines: `DIGEST ` names the empty file name.
    let b2 = format!(
        "{} \n{}  a\n",
        digest("blake2b-8", b"x").to_hex(),
        digest("blake2b-8", b"alpha\n").to_hex()
    );
    regression("b2sum", &["-c", "-w", "m"], &[("m", b2.as_bytes())], b"");
    regression("b2sum", &["-c", "--ignore-missing", "m"], &[("m", b2.as_bytes())], b"");
}

/// SM3: `cksum -a sm3` writes and checks as coreutils 9.1 does.
#[test]
fn sm3_as_cksum_writes_and_checks_it() {
    let sm3 = digest("sm3", b"alpha\n").to_hex();
    let m = format!("SM3 (a) = {sm3}\nSM3 (b c) = {sm3}\nSM3 (gone) = {sm3}\n");
    regression("cksum", &["-c", "m"], &[("m", m.as_bytes())], b"");
    regression("cksum", &["-a", "sm3", "a", "empty"], &[], b"");
    regression("cksum", &["-a", "sm3", "--untagged", "a", "-"], &[], b"abc");
    let untagged = format!("{sm3}  a\n");
    regression("cksum", &["-a", "sm3", "-c", "m"], &[("m", untagged.as_bytes())], b"");
}

/// A base64 digest without its `=` padding is improperly formatted for `cksum -c` (9.1
/// reads no base64 at all; 9.2 and later only padded base64).
#[test]
fn unpadded_base64_is_refused() {
    let b64 = digest("sha256", b"alpha\n").to_base64();
    assert!(b64.ends_with('='));
    let m = format!("SHA256 (a) = {}\n", b64.trim_end_matches('='));
    regression("cksum", &["-c", "-w", "m"], &[("m", m.as_bytes())], b"");
    let m = format!("{}  a\n", b64.trim_end_matches('='));
    regression("cksum", &["-a", "sha256", "-c", "-w", "m"], &[("m", m.as_bytes())], b"");
}

/// Through one pipe, each result line comes before the next file's message, as from
/// coreutils' line-buffered stdout: when checking and when hashing.
#[test]
fn stdout_and_stderr_interleave_as_coreutils() {
    let m = format!(
        "{}  a\n{}  gone\n{}  a\nnot a line\n{}  dir\n{}  b c\n",
        md5_hex(b"alpha\n"),
        md5_hex(b""),
        md5_hex(b"x"),
        md5_hex(b""),
        md5_hex(b"with space")
    );
    regression("md5sum", &["-c", "-w", "m"], &[("m", m.as_bytes())], b"");
    regression("md5sum", &["a", "gone", "b c", "dir", "a"], &[], b"");
    regression("b2sum", &["a", "gone", "a"], &[], b"");
}

/// `--tag` selects binary mode: `-t --tag` hashes, `--tag -t` is refused.
#[test]
fn tag_after_text_selects_binary_mode() {
    regression("sha256sum", &["-t", "--tag", "a", "b c"], &[], b"");
    regression("sha256sum", &["--tag", "-t", "a"], &[], b"");
    regression("md5sum", &["-t", "--tag", "-c", "m"], &[("m", b"")], b"");
    regression("md5sum", &["--tag", "-t", "-c", "m"], &[("m", b"")], b"");
}

/// Native mode keeps the same order: `fixity check` and `fixity hash` through one pipe
/// read as `md5sum` (with its name in place of fixity's).
#[test]
fn native_mode_interleaves_as_coreutils() {
    let d = tempdir();
    let dir = d.path().join("w");
    tree(&dir);
    let Some((real, _)) = pair("md5sum", &d.path().join("bin")) else { return };
    let m = format!("{}  a\n{}  gone\n{}  a\n", md5_hex(b"alpha\n"), md5_hex(b""), md5_hex(b"x"));
    write(&dir, "m", m.as_bytes());
    let native = |args: &[&str]| {
        let bin = Path::new(env!("CARGO_BIN_EXE_fixity"));
        let merged = crate::util::run_as_tool_merged(bin, "fixity", &dir, args, b"");
        String::from_utf8_lossy(&merged).replace("fixity:", "md5sum:")
    };
    let merged = |args: &[&str]| {
        let o = exec(&real, "md5sum", &dir, &os(args), b"");
        String::from_utf8_lossy(&o.merged).into_owned()
    };
    assert_eq!(native(&["check", "-a", "md5", "m"]), merged(&["-c", "m"]));
    assert_eq!(native(&["hash", "-a", "md5", "a", "gone", "a"]), merged(&["a", "gone", "a"]));
}

/// Runs `fixity ARGS` in `dir` and returns (stdout, stderr with `fixity:` read as `tool:`,
/// exit status).
fn native_as(tool: &str, dir: &Path, args: &[&str]) -> (Vec<u8>, String, Option<i32>) {
    let o = fixity(dir).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).replace("fixity:", &format!("{tool}:"));
    (o.stdout, err, o.status.code())
}

/// A manifest named for an algorithm (`x.sha256`) takes that algorithm's lines only: an
/// SFV line (`name 8-hex-digits`) in it is improperly formatted, as `sha256sum -c` says,
/// never checked as CRC32.
#[test]
fn a_manifest_named_for_an_algorithm_takes_no_other() {
    let d = tempdir();
    let dir = d.path().join("w");
    tree(&dir);
    let Some((real, _)) = pair("sha256sum", &d.path().join("bin")) else { return };
    let crc = digest("crc32", b"alpha\n").to_hex();
    let md5 = md5_hex(b"alpha\n");
    let sha = digest("sha256", b"with space").to_hex();
    for (name, body) in [
        ("x.sha256", format!("a {crc}\n")),
        ("y.sha256", format!("a {crc}\n{crc}  a\nMD5 (a) = {md5}\n{sha}  b c\n")),
        ("SHA256SUMS", format!("{crc}  a\na {crc}\n")),
    ] {
        write(&dir, name, body.as_bytes());
        let want = exec(&real, "sha256sum", &dir, &os(&["-c", "-w", name]), b"");
        let (out, err, code) = native_as("sha256sum", &dir, &["check", "-w", name]);
        assert_eq!(
            (show(&out), err, code),
            (show(&want.out), String::from_utf8_lossy(&want.err).into_owned(), want.code),
            "{name}"
        );
    }
}

/// `fixity check` reads the NUL and one-space shapes as coreutils does (program name
/// aside).
#[test]
fn native_check_reads_nul_and_one_space_lines_as_coreutils() {
    let d = tempdir();
    let dir = d.path().join("w");
    tree(&dir);
    let Some((real, _)) = pair("md5sum", &d.path().join("bin")) else { return };
    let one_space = format!(
        "{} a\n{}  lead\n{} *star\n",
        md5_hex(b"alpha\n"),
        md5_hex(b"leading space"),
        md5_hex(b"star")
    );
    let nul = format!(
        "{}  na\0me\nMD5 (na\0x) = {}\n",
        md5_hex(b"the name before a NUL"),
        md5_hex(b"the name before a NUL")
    );
    for (name, body) in [("one.md5", one_space), ("nul.md5", nul)] {
        write(&dir, name, body.as_bytes());
        let want = exec(&real, "md5sum", &dir, &os(&["-c", "-w", name]), b"");
        let (out, err, code) = native_as("md5sum", &dir, &["check", "-w", name]);
        assert_eq!(
            (show(&out), err, code),
            (show(&want.out), String::from_utf8_lossy(&want.err).into_owned(), want.code),
            "{name}"
        );
    }
}

/// `fixity check` refuses a base64 digest without its padding (coreutils' `cksum -c` 9.2
/// and later read padded base64 only) and takes the padded one.
#[test]
fn native_check_refuses_unpadded_base64() {
    let d = tempdir();
    let dir = d.path();
    write(dir, "a", b"alpha\n");
    let b64 = digest("sha256", b"alpha\n").to_base64();
    write(dir, "padded", format!("SHA256 (a) = {b64}\n").as_bytes());
    let cut = b64.trim_end_matches('=');
    write(dir, "cut", format!("SHA256 (a) = {cut}\n{cut}  a\n").as_bytes());
    let (out, _, code) = native_as("fixity", dir, &["check", "padded"]);
    assert_eq!((show(&out), code), ("a: OK\\n".to_string(), Some(0)));
    let (out, err, code) = native_as("fixity", dir, &["check", "-a", "sha256", "-w", "cut"]);
    assert_eq!(show(&out), "");
    assert_eq!(code, Some(1));
    assert_eq!(
        err,
        "fixity: cut: 1: improperly formatted SHA256 checksum line\n\
         fixity: cut: 2: improperly formatted SHA256 checksum line\n\
         fixity: cut: no properly formatted checksum lines found\n"
    );
}

// ------------------------------------------------------------------------------------
// The random cases.
// ------------------------------------------------------------------------------------

/// One tool as the cases run it.
struct Setup {
    tool: &'static str,
    /// Options before the generated ones (`-a sha256`).
    fixed: &'static [&'static str],
    /// The algorithms whose lines fit (registry name, tag); the first is the tool's.
    algos: &'static [(&'static str, &'static str)],
    /// Lines are tagged (cksum without -a) unless this is set.
    untagged: bool,
}

const SETUPS: &[Setup] = &[
    Setup { tool: "md5sum", fixed: &[], algos: &[("md5", "MD5")], untagged: true },
    Setup { tool: "sha1sum", fixed: &[], algos: &[("sha1", "SHA1")], untagged: true },
    Setup { tool: "sha256sum", fixed: &[], algos: &[("sha256", "SHA256")], untagged: true },
    Setup { tool: "sha224sum", fixed: &[], algos: &[("sha224", "SHA224")], untagged: true },
    Setup { tool: "sha512sum", fixed: &[], algos: &[("sha512", "SHA512")], untagged: true },
    Setup {
        tool: "b2sum",
        fixed: &[],
        algos: &[
            ("blake2b", "BLAKE2b"),
            ("blake2b-256", "BLAKE2b-256"),
            ("blake2b-8", "BLAKE2b-8"),
            // Lengths as strtoumax reads them (hex, octal, a sign, a blank), and refused ones.
            ("blake2b-256", "BLAKE2b-0x100"),
            ("blake2b-256", "BLAKE2b-0400"),
            ("blake2b-256", "BLAKE2b- 256"),
            ("blake2b-8", "BLAKE2b-+8"),
            ("blake2b", "BLAKE2b-512"),
            ("blake2b", "BLAKE2b-520"),
            ("blake2b-8", "BLAKE2b-0"),
            ("blake2b-8", "BLAKE2b--8"),
        ],
        untagged: true,
    },
    Setup {
        tool: "cksum",
        fixed: &[],
        algos: &[
            ("sha256", "SHA256"),
            ("md5", "MD5"),
            ("sha1", "SHA1"),
            ("sha512", "SHA512"),
            ("blake2b", "BLAKE2b"),
            ("blake2b-128", "BLAKE2b-128"),
            ("blake2b-128", "BLAKE2b-0x80"),
            ("sm3", "SM3"),
        ],
        untagged: false,
    },
    Setup {
        tool: "cksum",
        fixed: &["-a", "sha256"],
        algos: &[("sha256", "SHA256")],
        untagged: true,
    },
    Setup {
        tool: "cksum",
        fixed: &["-a", "blake2b"],
        algos: &[("blake2b", "BLAKE2b"), ("blake2b-256", "BLAKE2b-256")],
        untagged: true,
    },
];

/// Digests of other tools, for lines that do not belong.
const STRANGERS: &[(&str, &str)] = &[
    ("md5", "MD5"),
    ("sha1", "SHA1"),
    ("sha256", "SHA256"),
    ("sha512", "SHA512"),
    ("crc32", "CRC"),
];

fn escape_name(name: &[u8]) -> (bool, Vec<u8>) {
    let needs = name.iter().any(|&b| matches!(b, b'\\' | b'\n' | b'\r'));
    if !needs {
        return (false, name.to_vec());
    }
    let mut out = Vec::new();
    for &b in name {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b => out.push(b),
        }
    }
    (true, out)
}

/// The digest text of a line: right or wrong, cut, stretched, with a stray character,
/// in upper case, or another tool's.
fn digest_text(rng: &mut Rng, algo: &str, name: &[u8]) -> Vec<u8> {
    let right = digest(algo, content(name).unwrap_or(b"absent")).to_hex();
    let mut text = match rng.below(100) {
        0..=59 => right,
        60..=71 => digest(algo, b"something else").to_hex(),
        72..=75 => right[..right.len() - 1 - rng.below(2)].to_string(),
        76..=78 => format!("{right}{}", *rng.pick(&["0", "ab"])),
        79..=83 => right.to_uppercase(),
        84..=89 => {
            let (other, _) = *rng.pick(STRANGERS);
            digest(other, content(name).unwrap_or(b"")).to_hex()
        }
        90..=93 => {
            // Unpadded base64 (both refuse it).
            let b64 = digest(algo, content(name).unwrap_or(b"")).to_base64();
            if b64.ends_with('=') { b64.trim_end_matches('=').to_string() } else { right }
        }
        _ => {
            let mut t = right.into_bytes();
            let at = rng.below(t.len());
            t[at] = *rng.pick(b"gz- (");
            String::from_utf8(t).unwrap()
        }
    }
    .into_bytes();
    if rng.chance(2) {
        text.clear();
    }
    text
}

fn gen_name(rng: &mut Rng) -> Vec<u8> {
    match rng.below(100) {
        0..=74 => rng.pick(FILES).0.as_bytes().to_vec(),
        75..=89 => rng.pick(ABSENT).as_bytes().to_vec(),
        90..=93 => b"na\0me".to_vec(),
        94..=96 => Vec::new(),
        _ => b"dir/inner".to_vec(),
    }
}

/// One line of a manifest (without its newline).
fn gen_line(rng: &mut Rng, s: &Setup) -> Vec<u8> {
    match rng.below(100) {
        0..=3 => return b"# a comment".to_vec(),
        4 => return b"  # indented".to_vec(),
        5..=6 => return Vec::new(),
        7 => return rng.pick::<&[u8]>(&[&b" "[..], b"\t", b"\r", b" \r"]).to_vec(),
        8 => return b"not a checksum line".to_vec(),
        9..=10 => {
            // Lines other tools write: SFV, xxhsum, hashdeep, an SFV comment, a magnet link.
            let crc = digest("crc32", b"alpha\n").to_hex();
            let xxh = digest("xxh3", b"alpha\n").to_hex();
            let md5 = md5_hex(b"alpha\n");
            return match rng.below(6) {
                0 => format!("a {crc}"),
                1 => format!("XXH3_{xxh}  a"),
                2 => format!("6,{md5},a"),
                3 => "%%%% HASHDEEP-1.0".to_string(),
                4 => "; generated by cksfv".to_string(),
                _ => format!("magnet:?xl=6&dn=a&xt=urn:md5:{md5}"),
            }
            .into_bytes();
        }
        _ => {}
    }
    let (algo, tag) = if rng.chance(85) { *rng.pick(s.algos) } else { *rng.pick(STRANGERS) };
    let name = gen_name(rng);
    let text = digest_text(rng, algo, &name);
    let tagged = if s.untagged { rng.chance(25) } else { rng.chance(95) };
    let (mut escaped, mut shown) = escape_name(&name);
    if escaped && rng.chance(10) {
        (escaped, shown) = (false, name.clone());
    }
    let mut line = Vec::new();
    if rng.chance(5) {
        line.extend_from_slice(rng.pick::<&[u8]>(&[&b" "[..], b"\t", b"  "]));
    }
    if escaped || rng.chance(3) {
        line.push(b'\\');
    }
    if rng.chance(3) {
        shown.extend_from_slice(rng.pick::<&[u8]>(&[&b"\\x"[..], b"\\"]));
    }
    if tagged {
        line.extend_from_slice(tag.as_bytes());
        line.extend_from_slice(rng.pick::<&[u8]>(&[&b" ("[..], b" (", b" (", b"(", b"  ("]));
        line.extend_from_slice(&shown);
        line.extend_from_slice(rng.pick::<&[u8]>(&[
            &b") = "[..],
            b") = ",
            b")= ",
            b") =",
            b")\t=\t",
        ]));
        line.extend_from_slice(&text);
    } else {
        line.extend_from_slice(&text);
        let sep: &[u8] = match rng.below(100) {
            0..=54 => b"  ",
            55..=74 => b" *",
            75..=89 => b" ",
            90..=94 => b"\t",
            _ => b"\t ",
        };
        line.extend_from_slice(sep);
        line.extend_from_slice(&shown);
    }
    if rng.chance(3) {
        let at = rng.below(line.len() + 1);
        line.insert(at, 0);
    }
    if rng.chance(4) {
        line.push(b'\r');
    }
    if rng.chance(1) {
        let at = rng.below(line.len() + 1);
        line.insert(at, b'\r');
    }
    line
}

fn gen_manifest(rng: &mut Rng, s: &Setup) -> Vec<u8> {
    gen_manifest_for(rng, s, false)
}

/// A line `fixity check` reads otherwise than coreutils on purpose (docs/check.md): a
/// blank-only line or an indented comment (skipped), another tool's header or comment
/// (hashdeep's `%%%%`, SFV's `;`: skipped), a magnet link (checked).
fn native_differs_on_purpose(line: &[u8]) -> bool {
    let body = line.strip_suffix(b"\r").unwrap_or(line);
    let trimmed: &[u8] = body.trim_ascii_start();
    (trimmed.is_empty() && !body.is_empty())
        || (trimmed.starts_with(b"#") && body[0] != b'#')
        || line.starts_with(b"%%%%")
        || trimmed.starts_with(b";")
        || line.starts_with(b"magnet:?")
}

/// A manifest of random lines; for native mode, none that it reads otherwise on purpose.
fn gen_manifest_for(rng: &mut Rng, s: &Setup, native: bool) -> Vec<u8> {
    let mut m = Vec::new();
    for _ in 0..1 + rng.below(7) {
        let mut line = gen_line(rng, s);
        while native && native_differs_on_purpose(&line) {
            line = gen_line(rng, s);
        }
        m.extend_from_slice(&line);
        m.push(b'\n');
    }
    if rng.chance(15) {
        m.pop();
    }
    m
}

/// The arguments of a case: the setup's, then `-c` and a random choice of the check
/// options in a random order, then the manifests.
fn gen_args(rng: &mut Rng, s: &Setup, manifests: &[&str]) -> Vec<OsString> {
    let mut opts: Vec<&str> =
        ["--strict", "--warn", "--quiet", "--status", "--ignore-missing", "-w"]
            .into_iter()
            .filter(|_| rng.chance(30))
            .collect();
    for i in (1..opts.len()).rev() {
        opts.swap(i, rng.below(i + 1));
    }
    // Now and then an option check mode refuses, or a checksum file that is missing or
    // a directory.
    for misuse in ["-z", "--tag", "-b", "-t"] {
        if rng.chance(2) {
            opts.push(misuse);
        }
    }
    let mut args: Vec<&str> = s.fixed.to_vec();
    args.push(if rng.chance(50) { "-c" } else { "--check" });
    args.extend(opts);
    args.extend(manifests);
    if rng.chance(4) {
        let at = rng.below(args.len() + 1);
        args.insert(at, *rng.pick(&["gone", "dir"]));
    }
    os(&args)
}

/// A run without `-c`: the tool's printing options and some names, present or not.
fn gen_hash_args(rng: &mut Rng, s: &Setup) -> Vec<OsString> {
    let mut args: Vec<&str> = s.fixed.to_vec();
    let mut opts: Vec<&str> =
        ["--tag", "-b", "-t", "-z"].into_iter().filter(|_| rng.chance(20)).collect();
    if s.tool == "cksum" && rng.chance(30) {
        opts.push("--untagged");
    }
    if s.tool == "b2sum" && rng.chance(30) {
        opts.push(*rng.pick(&["-l256", "-l8", "--length=128"]));
    }
    for i in (1..opts.len()).rev() {
        opts.swap(i, rng.below(i + 1));
    }
    args.extend(opts);
    for _ in 0..rng.below(5) {
        args.push(if rng.chance(75) { rng.pick(FILES).0 } else { *rng.pick(ABSENT) });
    }
    if rng.chance(10) {
        args.push("-");
    }
    os(&args)
}

/// Runs cases `first, first + step, ...` below `count`; returns the repros of those that
/// differ.
fn run_cases(
    seed: u64,
    first: usize,
    step: usize,
    count: usize,
    pairs: &[Option<(PathBuf, PathBuf)>],
) -> Vec<String> {
    let d = tempdir();
    let dir = d.path().join("w");
    tree(&dir);
    let mut found = Vec::new();
    for case_number in (first..count).step_by(step) {
        let case_seed = seed ^ (case_number as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        let mut rng = Rng(case_seed);
        let which = rng.below(SETUPS.len());
        let (s, Some(p)) = (&SETUPS[which], &pairs[which]) else { continue };
        if rng.chance(10) {
            let args = gen_hash_args(&mut rng, s);
            if let Some(diff) = differ(s.tool, p, &dir, &args, &[], b"standard input\n") {
                found.push(format!("case {case_number} (seed {case_seed:#x}): {diff}"));
            }
            continue;
        }
        let one = gen_manifest(&mut rng, s);
        // Several checksum files in one run cover more lines per process, and the state
        // coreutils keeps from one file to the next.
        let mode = rng.below(10);
        let two = if mode == 1 || mode >= 3 { gen_manifest(&mut rng, s) } else { Vec::new() };
        let three = if mode >= 7 { gen_manifest(&mut rng, s) } else { Vec::new() };
        let (manifests, stdin): (Vec<(&str, &[u8])>, Vec<u8>) = match mode {
            0 => (vec![("-", &[][..])], one.clone()),
            1 => (vec![("m", &one[..]), ("-", &[][..])], two.clone()),
            2 => (vec![("m", &one[..])], Vec::new()),
            3..=6 => (vec![("m", &one[..]), ("m2", &two[..])], Vec::new()),
            _ => (vec![("m", &one[..]), ("m2", &two[..]), ("m3", &three[..])], Vec::new()),
        };
        let names: Vec<&str> = manifests.iter().map(|(n, _)| *n).collect();
        let args = gen_args(&mut rng, s, &names);
        let files: Vec<(&str, &[u8])> = manifests.into_iter().filter(|(n, _)| *n != "-").collect();
        if differ(s.tool, p, &dir, &args, &files, &stdin).is_some() {
            let mut case = Case {
                args,
                files: files.iter().map(|(n, b)| (n.to_string(), b.to_vec())).collect(),
                stdin,
                native: None,
            };
            let diff = case.shrink(s.tool, p, &dir);
            found.push(format!("case {case_number} (seed {case_seed:#x}), shrunk: {diff}"));
        }
    }
    found
}

/// A check case that differs, as it is made smaller.
struct Case {
    args: Vec<OsString>,
    files: Vec<(String, Vec<u8>)>,
    stdin: Vec<u8>,
    /// `fixity check -a ALGO` against `TOOL -c` (native mode) instead of the drop-in.
    native: Option<&'static str>,
}

impl Case {
    fn differ(&self, tool: &str, p: &(PathBuf, PathBuf), dir: &Path) -> Option<String> {
        let files: Vec<(&str, &[u8])> =
            self.files.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
        match self.native {
            Some(algo) => native_differ(tool, algo, &p.0, dir, &self.args, &files, &self.stdin),
            None => differ(tool, p, dir, &self.args, &files, &self.stdin),
        }
    }

    /// Drops lines (of every checksum file and standard input) and options one at a time
    /// while the difference stays; returns the last repro.
    fn shrink(&mut self, tool: &str, p: &(PathBuf, PathBuf), dir: &Path) -> String {
        let mut last = self.differ(tool, p, dir).unwrap_or_default();
        loop {
            let mut smaller = false;
            for f in 0..=self.files.len() {
                let mut i = 0;
                loop {
                    let text = if f < self.files.len() { &self.files[f].1 } else { &self.stdin };
                    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
                    if i >= lines.len() {
                        break;
                    }
                    let without: Vec<u8> = lines
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .flat_map(|(_, l)| l.iter().copied())
                        .collect();
                    let old = if f < self.files.len() {
                        std::mem::replace(&mut self.files[f].1, without)
                    } else {
                        std::mem::replace(&mut self.stdin, without)
                    };
                    match self.differ(tool, p, dir) {
                        Some(d) => (last, smaller) = (d, true),
                        None => {
                            if f < self.files.len() {
                                self.files[f].1 = old;
                            } else {
                                self.stdin = old;
                            }
                            i += 1;
                        }
                    }
                }
            }
            let mut i = 0;
            while i < self.args.len() {
                let arg = self.args[i].to_string_lossy();
                if !arg.starts_with('-') || arg.len() < 2 || arg == "-c" || arg == "--check" {
                    i += 1;
                    continue;
                }
                let removed = self.args.remove(i);
                match self.differ(tool, p, dir) {
                    Some(d) => (last, smaller) = (d, true),
                    None => {
                        self.args.insert(i, removed);
                        i += 1;
                    }
                }
            }
            if !smaller {
                return last;
            }
        }
    }
}

#[test]
fn random_manifests_check_as_coreutils_checks_them() {
    let d = tempdir();
    let links = d.path().join("bin");
    let pairs: Vec<_> = SETUPS.iter().map(|s| pair(s.tool, &links)).collect();
    if pairs.iter().all(Option::is_none) {
        return;
    }
    crate::util::random_cases(
        3000,
        0x005e_ed0f_c01e_0001,
        "the drop-ins against coreutils",
        |seed, first, step, count| run_cases(seed, first, step, count, &pairs),
    );
}

/// `fixity check` lets a `DIGEST ` line (no name: shorter than coreutils' shortest line)
/// decide nothing: the two-space line after it is read as coreutils reads it, with and
/// without `--ignore-missing`.
#[test]
fn native_check_a_nameless_line_decides_no_form() {
    let d = tempdir();
    let dir = d.path().join("w");
    tree(&dir);
    let Some((real, _)) = pair("md5sum", &d.path().join("bin")) else { return };
    let good = md5_hex(b"alpha\n");
    for (name, body) in [
        ("first.md5", format!("{good} \n{good}  a\n")),
        ("then.md5", format!("{good} \n{good}  a\n{good} a\n")),
        ("cr.md5", format!("{good} \r\n{good}  a\n")),
    ] {
        write(&dir, name, body.as_bytes());
        for opts in [&["-w"][..], &["-w", "--ignore-missing"]] {
            let mut args = opts.to_vec();
            args.push(name);
            let mut c = vec!["-c"];
            c.extend(&args);
            let want = exec(&real, "md5sum", &dir, &os(&c), b"");
            let mut n = vec!["check"];
            n.extend(&args);
            let (out, err, code) = native_as("md5sum", &dir, &n);
            assert_eq!(
                (show(&out), err, code),
                (show(&want.out), String::from_utf8_lossy(&want.err).into_owned(), want.code),
                "{name} {opts:?}"
            );
        }
    }
}

// ------------------------------------------------------------------------------------
// Native mode: `fixity check` against `TOOL -c`.
// ------------------------------------------------------------------------------------

/// Checks `manifests` in `dir` with `TOOL -c ARGS` and with `fixity check -a ALGO ARGS`,
/// and returns the difference, if any, as a repro. Compared: stdout (which lines were
/// checked, with their outcome), stderr with the program's name read as the tool's (the
/// reasons, the warned lines, the counts of improperly formatted lines, unreadable files
/// and mismatches), and the exit status.
fn native_differ(
    tool: &str,
    algo: &str,
    real: &Path,
    dir: &Path,
    args: &[OsString],
    manifests: &[(&str, &[u8])],
    stdin: &[u8],
) -> Option<String> {
    for (name, bytes) in manifests {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let mut c = vec![OsString::from("-c")];
    c.extend(args.iter().cloned());
    let want = crate::util::run_as_tool(real, tool, dir, &c, stdin);
    let mut n = os(&["check", "-a", algo]);
    n.extend(args.iter().cloned());
    let bin =
        std::env::var_os("FIXITY_DIFF_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_fixity").into());
    let got = crate::util::run_as_tool(Path::new(&bin), "fixity", dir, &n, stdin);
    // A directory named as a checksum file: coreutils says "read error", fixity the cause
    // (docs/check.md).
    let got_err = show(&got.stderr)
        .replace("fixity:", &format!("{tool}:"))
        .replace("dir/.: Is a directory", "dir/.: read error");
    let same = want.stdout == got.stdout
        && show(&want.stderr) == got_err
        && want.status.code() == got.status.code();
    (!same).then(|| {
        let mut s = format!("{tool} -c {}\n", show(&args.join(&OsString::from(" ")).into_vec()));
        for (name, bytes) in manifests {
            s.push_str(&format!("  manifest {name}: b\"{}\"\n", show(bytes)));
        }
        if !stdin.is_empty() {
            s.push_str(&format!("  stdin: b\"{}\"\n", show(stdin)));
        }
        format!(
            "{s}coreutils:\n  exit {:?}\n  stdout: {}\n  stderr: {}\n\
             fixity check -a {algo}:\n  exit {:?}\n  stdout: {}\n  stderr: {got_err}\n",
            want.status.code(),
            show(&want.stdout),
            show(&want.stderr),
            got.status.code(),
            show(&got.stdout),
        )
    })
}

/// The tools native mode is compared with, and the algorithm `-a` names.
const NATIVE: &[(usize, &str)] = &[(0, "md5"), (2, "sha256")];

/// Runs native-mode cases `first, first + step, ...` below `count`; returns the repros of
/// those that differ. The options are those both take (`-c`'s misuses are drop-in
/// matters); the manifests hold no line docs/check.md lists as read otherwise on purpose.
fn run_native_cases(
    seed: u64,
    first: usize,
    step: usize,
    count: usize,
    reals: &[Option<PathBuf>],
) -> Vec<String> {
    let d = tempdir();
    let dir = d.path().join("w");
    tree(&dir);
    let mut found = Vec::new();
    for case_number in (first..count).step_by(step) {
        let case_seed = seed ^ (case_number as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        let mut rng = Rng(case_seed);
        let which = rng.below(NATIVE.len());
        let (setup, algo) = NATIVE[which];
        let (s, Some(real)) = (&SETUPS[setup], &reals[which]) else { continue };
        let one = gen_manifest_for(&mut rng, s, true);
        let mode = rng.below(10);
        let two =
            if mode == 1 || mode >= 3 { gen_manifest_for(&mut rng, s, true) } else { Vec::new() };
        let three = if mode >= 7 { gen_manifest_for(&mut rng, s, true) } else { Vec::new() };
        let (manifests, stdin): (Vec<(&str, &[u8])>, Vec<u8>) = match mode {
            0 => (vec![("-", &[][..])], one.clone()),
            1 => (vec![("m", &one[..]), ("-", &[][..])], two.clone()),
            2 => (vec![("m", &one[..])], Vec::new()),
            3..=6 => (vec![("m", &one[..]), ("m2", &two[..])], Vec::new()),
            _ => (vec![("m", &one[..]), ("m2", &two[..]), ("m3", &three[..])], Vec::new()),
        };
        let mut args: Vec<&str> =
            ["--strict", "--warn", "--quiet", "--status", "--ignore-missing", "-w"]
                .into_iter()
                .filter(|_| rng.chance(30))
                .collect();
        // clap takes an option once: `-w` and `--warn` are one.
        if args.contains(&"-w") {
            args.retain(|a| *a != "--warn");
        }
        for i in (1..args.len()).rev() {
            args.swap(i, rng.below(i + 1));
        }
        args.extend(manifests.iter().map(|(n, _)| *n));
        if rng.chance(4) {
            let at = rng.below(args.len() + 1);
            // `dir/.`: named so, never a listed file's name, a directory as a checksum file.
            args.insert(at, *rng.pick(&["gone", "dir/."]));
        }
        let args = os(&args);
        let files: Vec<(&str, &[u8])> = manifests.into_iter().filter(|(n, _)| *n != "-").collect();
        if native_differ(s.tool, algo, real, &dir, &args, &files, &stdin).is_some() {
            let mut case = Case {
                args,
                files: files.iter().map(|(n, b)| (n.to_string(), b.to_vec())).collect(),
                stdin,
                native: Some(algo),
            };
            let diff = case.shrink(s.tool, &(real.clone(), real.clone()), &dir);
            found.push(format!("case {case_number} (seed {case_seed:#x}), shrunk: {diff}"));
        }
    }
    found
}

/// `fixity check` chooses, counts and reports lines as `md5sum -c` and `sha256sum -c` do
/// on random manifests (one- and two-space lines, malformed and empty-name lines, several
/// manifests, `--ignore-missing` ...), the lines docs/check.md lists as read otherwise on
/// purpose left out. `FIXITY_DIFF_CASES` and `FIXITY_DIFF_SEED` as above.
#[test]
fn random_manifests_check_natively_as_coreutils_checks_them() {
    let d = tempdir();
    let links = d.path().join("bin");
    let reals: Vec<Option<PathBuf>> =
        NATIVE.iter().map(|(i, _)| pair(SETUPS[*i].tool, &links).map(|(r, _)| r)).collect();
    if reals.iter().all(Option::is_none) {
        return;
    }
    crate::util::random_cases(
        1500,
        0x005e_ed0f_c01e_0002,
        "fixity check against coreutils",
        |seed, first, step, count| run_native_cases(seed, first, step, count, &reals),
    );
}
