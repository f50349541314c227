//! Drop-in mode: `fixity` run through a link named like a coreutils tool must print what
//! that tool prints (stdout, stderr) and exit as it does. Each case runs both, side by
//! side, when the real tool is installed.

use crate::util::{have, missing, tempdir, write};
use std::path::Path;

/// Runs `program` with argv[0] set to `name` (diagnostics start with argv[0]).
fn run(
    program: &Path,
    name: &str,
    dir: &Path,
    args: &[&str],
    stdin: &[u8],
) -> (Vec<u8>, Vec<u8>, Option<i32>) {
    let out = crate::util::run_as_tool(program, name, dir, args, stdin);
    (out.stdout, out.stderr, out.status.code())
}

fn compare(tool: &str, cases: &[&[&str]]) {
    compare_with(tool, &[], cases)
}

/// Like [`compare`], with the manifests made by `tool MAKE_ARGS FILES...` (`cksum -a
/// sha256`); the mismatching one has the last digit of its first line changed.
fn compare_with(tool: &str, make_args: &[&str], cases: &[&[&str]]) {
    compare_norm(tool, make_args, cases, |e| e.to_vec())
}

/// Like [`compare_with`], comparing stderr after `norm` (for lines the drop-in words
/// differently on purpose, such as a version banner).
fn compare_norm(tool: &str, make_args: &[&str], cases: &[&[&str]], norm: fn(&[u8]) -> Vec<u8>) {
    if !have(tool) {
        missing(&format!("drop-in {tool}"), "the real tool is not installed");
        return;
    }
    let d = tempdir();
    let dir = d.path().join("w");
    write(&dir, "a", b"alpha\n");
    write(&dir, "b c", b"with space");
    write(&dir, "back\\slash", b"escaped name");
    write(&dir, "sub/inner", b"x");
    write(&dir, "empty", b"");
    write(&dir, "new\nline", b"newline in the name");
    let links = d.path().join("bin");
    std::fs::create_dir(&links).unwrap();
    let fake = links.join(tool);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &fake).unwrap();
    let real = which(tool);
    // Manifests made by the real tool: good, one mismatch, malformed lines, a missing file.
    let make: Vec<&str> =
        make_args.iter().copied().chain(["a", "b c", "back\\slash", "empty"]).collect();
    let (good, _, _) = run(&real, tool, &dir, &make, b"");
    std::fs::write(dir.join("good.sum"), &good).unwrap();
    let bad = if make_args.is_empty() {
        String::from_utf8_lossy(&good).replacen(|c: char| c.is_ascii_hexdigit(), "0", 1)
    } else {
        let text = String::from_utf8_lossy(&good).into_owned();
        let eol = text.find('\n').unwrap();
        let last = if text[..eol].ends_with('0') { "1" } else { "0" };
        format!("{}{last}{}", &text[..eol - 1], &text[eol..])
    };
    std::fs::write(dir.join("bad.sum"), bad.as_bytes()).unwrap();
    std::fs::write(dir.join("malformed.sum"), [&good[..], b"not a line\n"].concat()).unwrap();
    let first_digest = if make_args.is_empty() {
        good.split(|&b| b == b' ').next().unwrap()
    } else {
        // A tagged line: `TAG (a) = DIGEST`.
        let eol = good.iter().position(|&b| b == b'\n').unwrap();
        good[..eol].rsplit(|&b| b == b' ').next().unwrap()
    };
    // A path that climbs out: coreutils checks it silently, and so must the drop-in.
    std::fs::write(dir.join("up.sum"), [first_digest, b"  ../w/a\n"].concat()).unwrap();
    std::fs::write(dir.join("missing.sum"), [&good[..], first_digest, b"  nothere\n"].concat())
        .unwrap();
    compare_cases(tool, (&real, &fake), &dir, cases, norm);
}

/// Runs each case with the real tool and the drop-in (`tools`: their paths) in `dir`, and
/// fails listing every case whose stdout, stderr (after `norm`) or exit status differ.
fn compare_cases(
    tool: &str,
    (real, fake): (&Path, &Path),
    dir: &Path,
    cases: &[&[&str]],
    norm: fn(&[u8]) -> Vec<u8>,
) {
    let mut failures = Vec::new();
    for args in cases {
        let mut want = run(real, tool, dir, args, b"from stdin\n");
        let mut got = run(fake, tool, dir, args, b"from stdin\n");
        want.1 = norm(&want.1);
        got.1 = norm(&got.1);
        if want != got {
            failures.push(format!(
                "{tool} {args:?}\n  real:   {:?} {:?} {:?}\n  fixity: {:?} {:?} {:?}",
                String::from_utf8_lossy(&want.0),
                String::from_utf8_lossy(&want.1),
                want.2,
                String::from_utf8_lossy(&got.0),
                String::from_utf8_lossy(&got.1),
                got.2,
            ));
        }
    }
    assert!(failures.is_empty(), "drop-in differs from the real tool:\n{}", failures.join("\n"));
}

fn which(tool: &str) -> std::path::PathBuf {
    crate::util::which(tool).expect("on PATH")
}

const CASES: &[&[&str]] = &[
    &["a", "b c"],
    &["--tag", "a", "back\\slash"],
    &["-b", "a", "empty"],
    &["-z", "a"],
    &["back\\slash"],
    &["nothere", "a"],
    &["sub"],
    &[],
    &["-", "a"],
    &["-c", "good.sum"],
    &["--check", "bad.sum"],
    &["-c", "--quiet", "bad.sum"],
    &["-c", "--status", "bad.sum"],
    &["-c", "malformed.sum"],
    &["-c", "-w", "malformed.sum"],
    &["-c", "--strict", "malformed.sum"],
    &["-c", "missing.sum"],
    &["-c", "--ignore-missing", "missing.sum"],
    &["-c", "nothere.sum"],
    &["--bogus"],
    &["-q", "a"],
    &["--quiet", "a"],
    &["--tag", "-c", "good.sum"],
    &["-b", "-c", "good.sum"],
    &["-c", "-z", "good.sum"],
    &["--s", "-c", "good.sum"],
    &["--tag", "-t", "a"],
    &["--", "a"],
    &["-c", "up.sum"],
];

#[test]
fn sha256sum_drop_in_matches_coreutils() {
    compare("sha256sum", CASES);
}

#[test]
fn md5sum_drop_in_matches_coreutils() {
    compare("md5sum", CASES);
}

#[test]
fn b2sum_drop_in_matches_coreutils() {
    let mut cases = CASES.to_vec();
    cases.extend_from_slice(&[
        &["-l", "512", "a"],
        &["--length=7", "a"],
        &["-l", "1024", "a"],
        &["-l", "256", "a", "new\nline", "-"],
        &["-l8", "-b", "a"],
        &["-l", "8", "--tag", "a", "back\\slash"],
        &["-l", "8", "--tag", "-b", "a"],
        &["-l", "16", "-z", "new\nline"],
        &["-l", "16", "nothere", "sub", "a"],
        &["-l", "8", "-t", "a"],
        &["-l", "8", "--tag", "-t", "a"],
        // -l does not limit what -c reads: every line is checked at its own length.
        &["-l", "256", "-c", "good.sum"],
        &["-l", "8", "-c", "--quiet", "bad.sum"],
        &["-l", "7", "-c", "good.sum"],
        &["-l", "1024", "-c", "good.sum"],
        &["-l", "x", "-c", "good.sum"],
        &["-l", "99999999999999999999999", "a"],
        &["-l", "5000000000", "a"],
        &["-l", " +16", "a"],
        &["-l", "7", "--bogus", "a"],
    ]);
    compare("b2sum", &cases);
}

/// Cases for manifests of shortened BLAKE2b, made by the real tool.
const SHORT_BLAKE2B_CHECKS: &[&[&str]] = &[
    &["-c", "good.sum"],
    &["-l", "256", "-c", "good.sum"],
    &["-l", "8", "-c", "good.sum"],
    &["-l", "512", "-c", "bad.sum"],
    &["-c", "-w", "malformed.sum"],
    &["-l", "256", "-c", "--strict", "malformed.sum"],
    &["-c", "missing.sum"],
    &["-l", "256", "-c", "--ignore-missing", "missing.sum"],
];

#[test]
fn b2sum_checks_shortened_blake2b_as_coreutils() {
    compare_with("b2sum", &["-l", "256", "--tag"], SHORT_BLAKE2B_CHECKS);
    compare_with("b2sum", &["-l", "160", "--tag"], SHORT_BLAKE2B_CHECKS);
    compare_with("cksum", &["-a", "blake2b", "-l", "256"], SHORT_BLAKE2B_CHECKS);
    let mut cksum_cases: Vec<&[&str]> = SHORT_BLAKE2B_CHECKS.to_vec();
    cksum_cases.iter_mut().for_each(|c| *c = &c[c.len().min(2)..]);
    cksum_cases.retain(|c| !c.is_empty() && c[0] == "-c");
    compare_with("cksum", &["-a", "blake2b", "-l", "8"], &cksum_cases);
}

/// One manifest holding BLAKE2b of many lengths, tagged and untagged, as the real b2sum
/// wrote them, and one of lines coreutils refuses (a tag's length against its digits, a
/// length that is no multiple of 8 or over 512, an odd number of digits): checked by the
/// real tools and the drop-ins with every -l.
#[test]
fn blake2b_of_every_length_is_checked_as_coreutils() {
    if !have("b2sum") || !have("cksum") {
        missing("drop-in b2sum -l -c", "the real b2sum or cksum is not installed");
        return;
    }
    let d = tempdir();
    let dir = d.path().join("w");
    write(&dir, "a", b"alpha\n");
    write(&dir, "b c", b"with space");
    write(&dir, "back\\slash", b"escaped name");
    write(&dir, "empty", b"");
    write(&dir, "new\nline", b"newline in the name");
    let links = d.path().join("bin");
    std::fs::create_dir(&links).unwrap();
    for tool in ["b2sum", "cksum"] {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), links.join(tool)).unwrap();
    }
    let b2sum = which("b2sum");
    let made = |args: &[&str]| {
        let (out, err, code) = run(&b2sum, "b2sum", &dir, args, b"");
        assert_eq!((err.as_slice(), code), (&b""[..], Some(0)), "b2sum {args:?}");
        String::from_utf8(out).unwrap()
    };
    let mut mixed = String::new();
    mixed += &made(&["-l", "256", "a", "b c"]);
    mixed += &made(&["-l", "8", "empty"]);
    mixed += &made(&["--tag", "-l", "160", "back\\slash"]);
    mixed += &made(&["a"]);
    mixed += &made(&["--tag", "a"]);
    mixed += &made(&["--tag", "-l", "504", "new\nline"]);
    mixed += &made(&["-l", "384", "new\nline"]);
    std::fs::write(dir.join("mixed.sum"), &mixed).unwrap();
    let l256 = made(&["-l", "256", "a"]);
    let hex256 = l256.split(' ').next().unwrap();
    let hex512 = made(&["a"]).split(' ').next().unwrap().to_string();
    let bad = [
        format!("BLAKE2b-256 (a) = {}", &hex256[2..]),
        format!("BLAKE2b-256 (a) = {hex512}"),
        format!("BLAKE2b-160 (a) = {hex256}"),
        format!("BLAKE2b-7 (a) = {}", &hex256[..2]),
        format!("BLAKE2b-0 (a) = {}", &hex256[..2]),
        format!("BLAKE2b-520 (a) = {hex512}{}", &hex256[..2]),
        format!("BLAKE2b-256 (empty) = {hex256}"),
        format!("{}  a", &hex256[..63]),
        format!("{}  a", &hex256[..2]),
        "not a line".to_string(),
        l256.trim_end().to_string(),
    ];
    std::fs::write(dir.join("lengths.bad"), bad.join("\n") + "\n").unwrap();
    let cases: &[&[&str]] = &[
        &["-c", "mixed.sum"],
        &["-l", "256", "-c", "mixed.sum"],
        &["-l", "8", "-c", "mixed.sum"],
        &["-l", "512", "--quiet", "-c", "mixed.sum", "lengths.bad"],
        &["-c", "-w", "lengths.bad"],
        &["-l", "256", "-c", "--strict", "-w", "lengths.bad"],
        &["-l", "160", "-c", "--status", "lengths.bad"],
        &["-l", "0", "-c", "mixed.sum"],
    ];
    let b2 = (b2sum.as_path(), links.join("b2sum"));
    compare_cases("b2sum", (b2.0, &b2.1), &dir, cases, |e| e.to_vec());
    let cksum = (which("cksum"), links.join("cksum"));
    let tools = (cksum.0.as_path(), cksum.1.as_path());
    let with_a: Vec<Vec<&str>> =
        cases.iter().map(|c| [&["-a", "blake2b"][..], c].concat()).collect();
    let with_a: Vec<&[&str]> = with_a.iter().map(Vec::as_slice).collect();
    compare_cases("cksum", tools, &dir, &with_a, |e| e.to_vec());
    // Without -a, cksum reads tagged lines only, and refuses -l.
    let plain: &[&[&str]] = &[
        &["-c", "mixed.sum"],
        &["-c", "-w", "mixed.sum", "lengths.bad"],
        &["-l", "256", "-c", "mixed.sum"],
        &["-l", "1024", "-c", "mixed.sum"],
    ];
    compare_cases("cksum", tools, &dir, plain, |e| e.to_vec());
}

/// Names and inputs only `cksum` and `sum` print (no checking side).
const SUM_CASES: &[&[&str]] = &[
    &["a", "b c"],
    &["a"],
    &[],
    &["-"],
    &["-", "a"],
    &["back\\slash", "new\nline"],
    &["nothere", "a"],
    &["sub", "a"],
    &["empty"],
    &["--bogus"],
    &["-x"],
    &["--", "a"],
    &["-z", "a"],
];

#[test]
fn sum_drop_in_matches_coreutils() {
    let mut cases = SUM_CASES.to_vec();
    cases.retain(|c| !c.contains(&"-z"));
    cases.extend_from_slice(&[
        &["-s", "a", "b c"],
        &["--sysv"],
        &["--sy", "-", "empty"],
        &["-r", "a"],
        &["-s", "-r", "a"],
        &["-r", "-s", "a"],
        &["-rs", "sub", "nothere"],
        &["-c", "a"],
        &["--sysv=1", "a"],
        &["--bogus", "--help"],
    ]);
    compare("sum", &cases);
}

#[test]
fn cksum_drop_in_matches_coreutils() {
    let mut cases = SUM_CASES.to_vec();
    cases.extend_from_slice(&[
        &["-a", "crc", "a"],
        &["--debug", "a"],
        &["--debug", "-a", "md5", "a"],
        &["-a", "bsd", "a", "b c"],
        &["--algorithm=sysv", "-", "new\nline"],
        &["-asysv", "sub"],
        &["-a", "bsd", "sub"],
        &["-a", "sha256", "a", "new\nline", "back\\slash"],
        &["-a", "md5", "--untagged", "a", "new\nline", "back\\slash"],
        &["-a", "sha1", "-z", "new\nline"],
        &["-a", "sha512", "--untagged", "-z", "a"],
        &["-a", "blake2b", "a"],
        &["-a", "blake2b", "-l", "512", "a"],
        &["-a", "blake2b", "--length=0", "a"],
        &["-a", "blake2b", "-l", "7", "a"],
        &["-a", "blake2b", "-l", "256", "a", "new\nline", "-"],
        &["-a", "blake2b", "-l8", "--untagged", "back\\slash", "nothere", "sub"],
        &["-a", "blake2b", "--length=128", "-z", "new\nline"],
        &["-a", "blake2b", "-l", "1024", "a"],
        &["-l", "256", "a"],
        &["-a", "sha2", "a"],
        &["-a"],
        &["--algorithm"],
        &["-a", "md5", "nothere", "sub", "a"],
        &["-a", "sha256", "--tag", "--untagged", "a"],
        &["-a", "sha256", "--untagged", "--tag", "a"],
        &["--untagged", "a"],
        &["--t", "a"],
        &["--s", "a"],
        &["--status", "a"],
        &["-w", "a"],
        &["-b", "a"],
        &["-a", "sha256", "-t", "a"],
        &["--check=x"],
        &["-a", "crc", "-c", "good.sum"],
        &["-a", "bsd", "-c", "good.sum"],
        &["-c", "-z", "good.sum"],
        // Options take effect in order: a bad length before a bad option after it.
        &["-a", "blake2b", "-l", "7", "--bogus", "a"],
        &["-l", "7", "-a", "bogus"],
        &["--bogus", "--help"],
    ]);
    compare("cksum", &cases);
}

#[test]
fn cksum_check_drop_in_matches_coreutils() {
    let cases: &[&[&str]] = &[
        &["-c", "good.sum"],
        &["-a", "sha256", "-c", "good.sum"],
        &["-a", "md5", "-c", "good.sum"],
        &["-c", "bad.sum"],
        &["-c", "--quiet", "bad.sum"],
        &["-c", "--status", "bad.sum"],
        &["-c", "malformed.sum"],
        &["-c", "-w", "malformed.sum"],
        &["-c", "--strict", "malformed.sum"],
        &["-c", "missing.sum"],
        &["-c", "--ignore-missing", "missing.sum"],
        &["-c", "nothere.sum"],
        &["-c", "up.sum"],
        &["-c", "--tag", "good.sum"],
        &["-c"],
        &["-c", "-w", "-"],
        &["-c", "-w", "missing.sum", "malformed.sum", "-"],
        &["-a", "md5", "-c", "-w", "missing.sum"],
        &["-a", "sha256", "--untagged", "-c", "good.sum"],
        &["-c", "-l", "256", "good.sum"],
        &["-c", "--debug", "good.sum"],
        &["-a", "sha512", "-c", "-w", "good.sum"],
    ];
    compare_with("cksum", &["-a", "sha256"], cases);
}

/// `cksum --base64` is coreutils 9.2's (the installed 9.1 refuses it): the digest of the
/// untagged or tagged line in padded base64, checked against fixity's own hex digests
/// re-encoded, and ignored by `--check`.
#[test]
fn cksum_base64_lines() {
    use fixity::algo::lookup;
    let d = tempdir();
    let dir = d.path().join("w");
    write(&dir, "a", b"alpha\n");
    write(&dir, "new\nline", b"x");
    let links = d.path().join("bin");
    std::fs::create_dir(&links).unwrap();
    let fake = links.join("cksum");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &fake).unwrap();
    let b64 = |algo: &str, data: &[u8]| lookup(algo).unwrap().digest(data).to_base64();
    let (out, err, code) = run(&fake, "cksum", &dir, &["-a", "sha256", "--base64", "a"], b"");
    assert_eq!((String::from_utf8_lossy(&err).as_ref(), code), ("", Some(0)));
    assert_eq!(out, format!("SHA256 (a) = {}\n", b64("sha256", b"alpha\n")).into_bytes());
    assert!(b64("sha256", b"").ends_with('='), "32 bytes need one pad byte");
    let args = ["-a", "md5", "--base64", "--untagged", "a", "new\nline", "-"];
    let (out, _, code) = run(&fake, "cksum", &dir, &args, b"in");
    let want = format!(
        "{}  a\n\\{}  new\\nline\n{}  -\n",
        b64("md5", b"alpha\n"),
        b64("md5", b"x"),
        b64("md5", b"in")
    );
    assert_eq!((String::from_utf8_lossy(&out).into_owned(), code), (want, Some(0)));
    // The legacy checksums have no digest to encode: --base64 leaves them alone.
    let (out, _, _) = run(&fake, "cksum", &dir, &["--base64", "a"], b"");
    assert_eq!(out, b"3650393976 6 a\n");
}

/// `cksum -a crc32b` (coreutils 9.6; the 9.1 compared elsewhere lacks it): the CRC-32 of
/// zlib and SFV, printed like `cksum`'s `CRC SIZE NAME`.
#[test]
fn cksum_crc32b_lines() {
    let d = tempdir();
    let dir = d.path().join("w");
    // The CRC-32 check value: "123456789" -> 0xCBF43926.
    write(&dir, "check", b"123456789");
    write(&dir, "empty", b"");
    let links = d.path().join("bin");
    std::fs::create_dir(&links).unwrap();
    let fake = links.join("cksum");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &fake).unwrap();
    let (out, err, code) = run(&fake, "cksum", &dir, &["-a", "crc32b", "check", "empty"], b"");
    assert_eq!((String::from_utf8_lossy(&err).as_ref(), code), ("", Some(0)));
    assert_eq!(String::from_utf8_lossy(&out), format!("{} 9 check\n0 0 empty\n", 0xCBF4_3926u32));
    let (out, _, _) = run(&fake, "cksum", &dir, &["--algorithm=crc32b"], b"123456789");
    assert_eq!(String::from_utf8_lossy(&out), format!("{} 9\n", 0xCBF4_3926u32));
    let (_, err, code) = run(&fake, "cksum", &dir, &["-a", "crc32b", "-c", "check"], b"");
    assert_eq!(code, Some(1));
    assert!(String::from_utf8_lossy(&err).contains("--algorithm={bsd,sysv,crc,crc32b}"));
}

#[test]
fn b3sum_drop_in_matches_b3sum() {
    let cases: &[&[&str]] = &[
        &["a", "b c"],
        &[],
        &["-", "a"],
        &["back\\slash", "new\nline"],
        &["nothere", "a"],
        &["sub", "a"],
        &["--", "-x"],
        &["--length", "8", "a"],
        &["-l8", "a", "empty"],
        &["--length=100", "a"],
        &["-l", "0", "a"],
        &["-l", "x", "a"],
        &["--no-names", "a", "back\\slash"],
        &["--raw", "a"],
        &["--raw", "-l", "5"],
        &["--raw", "a", "b c"],
        &["--raw", "nothere"],
        &["--derive-key", "ctx", "a", "-"],
        &["--keyed", "a"],
        &["--keyed", "--derive-key", "x", "a"],
        &["--keyed"],
        &["--num-threads", "1", "a"],
        &["--num-threads", "x", "a"],
        &["--no-mmap", "a"],
        &["--bogus"],
        &["-c", "--bogus"],
        &["-x"],
        &["--chek"],
        &["--raw", "--nonames"],
        &["--len"],
        &["-l"],
        &["--derive-key"],
        &["--tag", "a"],
        &["--raw", "--raw", "a"],
        &["--quiet", "a"],
        &["--quiet", "--quiet", "-c", "good.sum"],
        &["-c", "--no-names", "good.sum"],
        &["--no-names", "-c", "--quiet", "good.sum"],
        &["-c", "-l", "8", "good.sum"],
        &["-cl8", "good.sum"],
        &["-c", "--raw", "good.sum"],
        &["--keyed", "-c", "good.sum"],
        &["-c", "--derive-key", "x", "good.sum"],
        &["-c", "good.sum"],
        &["--check", "bad.sum", "good.sum"],
        &["-c", "--quiet", "bad.sum"],
        &["-c", "malformed.sum"],
        &["-c", "missing.sum"],
        &["-c", "nothere.sum"],
        &["-c", "sub"],
        &["-c", "up.sum"],
        &["-c"],
        &["-c", "-", "good.sum"],
    ];
    compare("b3sum", cases);
}

/// xxhsum's usage starts with a banner naming its version and author; the drop-in's names
/// itself instead, and is otherwise byte for byte the same.
fn xxhsum_banner(err: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in err.split_inclusive(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let banner = text.contains(" by Yann Collet") || text.contains("(fixity, drop-in");
        if text.starts_with("xxh") && banner {
            out.extend_from_slice(b"BANNER\n");
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

#[test]
fn xxhsum_drop_in_matches_xxhsum() {
    let cases: &[&[&str]] = &[
        &["a", "b c"],
        &[],
        &["-"],
        &["-", "a"],
        &["a", "-"],
        &["back\\slash", "new\nline"],
        &["nothere", "sub", "a"],
        &["--", "a"],
        &["--"],
        &["a", "-H0"],
        &["-H0", "a", "empty"],
        &["-H32", "a"],
        &["-H1", "a"],
        &["-H64", "a"],
        &["-H2", "a", "new\nline"],
        &["-H128", "a"],
        &["-H3", "a", "b c"],
        &["-H", "a"],
        &["-H4", "a"],
        &["-H1K", "a"],
        &["-H99999999999", "a"],
        &["-H0H2", "a"],
        &["--tag", "a", "new\nline"],
        &["--tag", "-H0", "a"],
        &["--tag", "-H2", "a"],
        &["--tag", "-H3", "a"],
        &["--little-endian", "a"],
        &["--little-endian", "-H2", "a"],
        &["--little-endian", "-H3", "a"],
        &["--tag", "--little-endian", "-H0", "a"],
        &["-q", "a"],
        &["--quiet", "nothere"],
        &["--status", "a"],
        &["-i3", "-B10", "a"],
        &["--bogus"],
        &["--tag=1", "a"],
        &["--ta", "a"],
        &["-x"],
        &["-s1", "a"],
        &["--ignore-missing", "-c", "good.sum"],
        &["-c", "good.sum"],
        &["--check", "bad.sum"],
        &["-c", "-q", "bad.sum"],
        &["-cqq", "bad.sum"],
        &["-c", "--status", "bad.sum"],
        &["-c", "--status", "-q", "good.sum"],
        &["-c", "malformed.sum"],
        &["-c", "-w", "malformed.sum"],
        &["-c", "--warn", "malformed.sum"],
        &["-c", "--strict", "malformed.sum"],
        &["-c", "missing.sum"],
        &["-c", "--status", "missing.sum"],
        &["-c", "good.sum", "nothere.sum", "malformed.sum"],
        &["-c", "sub"],
        &["-c", "up.sum"],
        &["-c"],
        &["-c", "-"],
        &["-c", "--little-endian", "good.sum"],
    ];
    compare_norm("xxhsum", &[], cases, xxhsum_banner);
}

/// Tagged, little-endian and XXH3 manifests made by xxhsum, checked by both.
#[test]
fn xxhsum_checks_every_line_shape_as_xxhsum() {
    let cases: &[&[&str]] = &[
        &["-c", "good.sum"],
        &["-c", "--little-endian", "good.sum"],
        &["-c", "bad.sum"],
        &["-c", "-w", "malformed.sum"],
    ];
    compare_norm("xxhsum", &["--tag", "-H2"], cases, xxhsum_banner);
    compare_norm("xxhsum", &["-H3"], cases, xxhsum_banner);
    compare_norm("xxhsum", &["--little-endian", "-H0"], cases, xxhsum_banner);
    compare_norm("xxhsum", &["--tag", "--little-endian"], cases, xxhsum_banner);
}

/// The form of xxhsum's benchmark output, without its figures: each `\r`-separated
/// segment of a line (what a terminal overwrites) with the numbers after `->` replaced by
/// `N` (their widths vary with the speed), consecutive equal segments merged (a round too
/// short to trust is run again, which depends on the machine), and the banner (two lines
/// in xxhsum, one in the drop-in) as `BANNER`.
fn bench_form(err: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(err);
    let mut lines = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("compiled as ") {
            continue;
        }
        if line.contains(" by Yann Collet") || line.contains("(fixity, drop-in") {
            lines.push("BANNER".to_string());
            continue;
        }
        let mut segments: Vec<String> = Vec::new();
        for seg in line.split_inclusive(['\r', '\n']) {
            let seg = match seg.find("->") {
                Some(at) => {
                    let (head, tail) = seg.split_at(at + 2);
                    let mut figures = String::new();
                    let mut in_number = false;
                    let rest = tail.trim_start_matches(' ');
                    let sep = if rest.len() < tail.len() { " " } else { "" };
                    for c in rest.chars() {
                        let digit = c.is_ascii_digit() || c == '.';
                        if digit && !in_number {
                            figures.push('N');
                        } else if !(digit || c == ' ' && figures.ends_with('(')) {
                            figures.push(c);
                        }
                        in_number = digit;
                    }
                    format!("{head}{sep}{figures}")
                }
                // `-qq`: only the hashes per second, as `N, `.
                None if seg.contains(", ")
                    && seg.chars().all(|c| c.is_ascii_digit() || ", ".contains(c)) =>
                {
                    seg.split(", ")
                        .map(|n| if n.is_empty() { "" } else { "N" })
                        .collect::<Vec<_>>()
                        .join(", ")
                }
                None => seg.to_string(),
            };
            if segments.last() != Some(&seg) {
                segments.push(seg);
            }
        }
        lines.push(segments.concat());
    }
    lines
}

/// Runs each benchmark command line with xxhsum and the drop-in, and compares what they
/// print (its form: [`bench_form`]), on which stream, and the exit status.
fn compare_bench(cases: &[&[&str]]) {
    if !have("xxhsum") {
        missing("drop-in xxhsum -b", "xxhsum is not installed");
        return;
    }
    let d = tempdir();
    write(d.path(), "sample", &[7u8; 5000]);
    let fake = d.path().join("xxhsum");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &fake).unwrap();
    let real = which("xxhsum");
    let mut failures = Vec::new();
    for args in cases {
        let (want_out, want_err, want_code) = run(&real, "xxhsum", d.path(), args, b"");
        let (got_out, got_err, got_code) = run(&fake, "xxhsum", d.path(), args, b"");
        let want = (want_out, bench_form(&want_err), want_code);
        let got = (got_out, bench_form(&got_err), got_code);
        if want != got {
            failures.push(format!("xxhsum {args:?}\n  real:   {want:?}\n  fixity: {got:?}"));
        }
    }
    assert!(failures.is_empty(), "benchmark differs from xxhsum's:\n{}", failures.join("\n"));
}

#[test]
fn bench_form_hides_figures_and_retries_only() {
    let err = b"xxhsum 0.8.1 by Yann Collet \ncompiled as 64-bit\nSample of 100 KB...        \n\
        \r          \r 1-XXH32 : 102400 ->\r 1-XXH32 : 102400 ->\r 1-XXH32 : 102400 -> 115149 it/s (11245.1 MB/s) \r 1#XXH32 : 102400 -> 115149 it/s ( 1245.1 MB/s) \n";
    assert_eq!(
        bench_form(err),
        [
            "BANNER",
            "Sample of 100 KB...        \n",
            "\r          \r 1-XXH32 : 102400 ->\r 1-XXH32 : 102400 -> N it/s (N MB/s) \r 1#XXH32 : 102400 -> N it/s (N MB/s) \n",
        ]
    );
}

/// `-b` as xxhsum 0.8.1 prints it: the default variants, one (`-b1`), a list, ids given
/// by several options (the last decides), `-q`, a file, and the errors.
#[test]
fn xxhsum_benchmark_matches_xxhsum() {
    compare_bench(&[
        &["-b", "-i0"],
        &["-bi0"],
        &["-b1"],
        &["-bi1", "-b3"],
        &["-b1,2,3", "-i0"],
        &["-b29", "-b4", "-i0"],
        &["-b5", "-b", "-i0", "-q"],
        &["-b3", "-i0", "-qq"],
        &["-b3", "-i0", "-qqq"],
        &["-b2", "-i0", "-B1000"],
        &["-b2", "-i0", "-B10K"],
        &["-b2", "-i0", "-B10241"],
        &["-b7", "-i0", "sample", "."],
        &["-b7", "-i0", "nothere"],
        &["-b", "1,3"],
        &["-b-1"],
        &["-bx"],
        &["-b99999999999"],
        &["-b1", "-i99999999999"],
        &["-b1", "-c", "-i0"],
    ]);
}

/// Every variant: `--benchmark-all` (with -i0, as the Makefile's check target runs it).
#[test]
fn xxhsum_benchmark_all_matches_xxhsum() {
    compare_bench(&[&["--benchmark-all", "-i0"]]);
}

/// An id past the last (28) runs every variant, as xxhsum does.
#[test]
fn xxhsum_benchmark_out_of_range_id_runs_all() {
    compare_bench(&[&["-b29", "-i0", "-q"]]);
}

/// The links xxHash installs beside xxhsum pick the default algorithm by name.
#[test]
fn xxh32sum_and_xxh128sum_drop_ins_match() {
    let cases: &[&[&str]] = &[
        &["a", "b c"],
        &["--tag", "a"],
        &["-H1", "a"],
        &["-c", "good.sum"],
        &["-c", "bad.sum"],
        &["--bogus"],
        &["sub", "nothere"],
    ];
    for tool in ["xxh32sum", "xxh64sum", "xxh128sum"] {
        compare_norm(tool, &[], cases, xxhsum_banner);
    }
}

/// `--help` takes effect where it stands, as in coreutils' getopt loop: an unknown option
/// after it is never looked at (the help text itself is fixity's own).
#[test]
fn help_ends_the_options_where_it_stands() {
    let d = tempdir();
    let fixity = Path::new(env!("CARGO_BIN_EXE_fixity"));
    for tool in ["cksum", "sum", "md5sum", "b2sum"] {
        let (out, err, code) = run(fixity, tool, d.path(), &["--help", "--bogus"], b"");
        assert_eq!(code, Some(0), "{tool}: {}", String::from_utf8_lossy(&err));
        assert!(out.starts_with(format!("Usage: {tool} ").as_bytes()), "{tool}");
        assert!(err.is_empty(), "{tool}: {}", String::from_utf8_lossy(&err));
    }
}
