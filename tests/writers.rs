//! The tools' own line layouts: `hash --format cksum|sum|sysv|b3sum|xxhsum` (and `bsd`
//! as `cksum -a ALG`) against the real tools, `export` in every layout the catalog can
//! fill, and `check` reading cksum's `CRC SIZE NAME` lines from a `*.cksum` manifest.

use crate::util::{fixity, have, missing, run, run_stdin, tempdir, write};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A small tree under `dir/t` with a space, a backslash, a newline and a carriage return
/// in names, an empty file and one over 1 KiB (so block counts differ). Returns the
/// names relative to `dir/t`, in the order `fixity hash` walks them (bytewise).
fn tree(dir: &Path) -> Vec<Vec<u8>> {
    let files: &[(&[u8], &[u8])] = &[
        (b"a", b"alpha\n"),
        (b"a b", b"with a space"),
        (b"back\\slash", b"backslash"),
        (b"c\rr", b"carriage return"),
        (b"empty", b""),
        (b"n\nl", b"newline"),
        (b"sub/big", &[7u8; 3000]),
    ];
    let mut names = Vec::new();
    for (name, data) in files {
        write(&dir.join("t"), OsString::from_vec(name.to_vec()), data);
        names.push(name.to_vec());
    }
    names.sort();
    names
}

fn os(names: &[Vec<u8>]) -> Vec<OsString> {
    names.iter().map(|n| OsString::from_vec(n.clone())).collect()
}

/// `tool ARGS NAMES` in `dir`: its standard output, or a panic with its error.
fn tool(dir: &Path, tool: &str, args: &[&str], names: &[OsString]) -> Vec<u8> {
    let out = Command::new(tool)
        .args(args)
        .args(names)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool} {args:?}: {}", text(&out.stderr));
    out.stdout
}

fn fixity_ok(dir: &Path, args: &[OsString]) -> Vec<u8> {
    let out = run(dir, args);
    assert!(out.status.success(), "fixity {args:?}: {}", text(&out.stderr));
    out.stdout
}

fn args(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// `fixity hash --format FORMAT EXTRA NAMES` prints what `TOOL TOOL_ARGS NAMES` prints,
/// byte for byte, for the files named one by one and for the tree walked.
fn same_as_tool(format: &str, extra: &[&str], tool_name: &str, tool_args: &[&str]) {
    if !have(tool_name) {
        return missing(&format!("hash --format {format}"), &format!("{tool_name} not installed"));
    }
    let d = tempdir();
    let names = tree(d.path());
    let t = d.path().join("t");
    let expected = tool(&t, tool_name, tool_args, &os(&names));
    let mut named = args(&["hash", "--format", format]);
    named.extend(args(extra));
    let mut walked = named.clone();
    named.extend(os(&names));
    let got = fixity_ok(&t, &named);
    assert_eq!(text(&got), text(&expected), "--format {format} {extra:?} vs {tool_name}");
    // The walk names the same files `t/NAME`, in the same order.
    let in_tree: Vec<OsString> =
        names.iter().map(|n| OsString::from_vec([&b"t/"[..], n].concat())).collect();
    let expected = tool(d.path(), tool_name, tool_args, &in_tree);
    walked.push("t".into());
    let got = fixity_ok(d.path(), &walked);
    assert_eq!(text(&got), text(&expected), "--format {format} {extra:?} t vs {tool_name}");
}

/// Standard input, read because nothing was named: the tools' own name for it (none for
/// cksum and sum, `-` for b3sum, `stdin` for xxhsum).
fn stdin_same_as_tool(format: &str, tool_name: &str, tool_args: &[&str]) {
    if !have(tool_name) {
        return missing(
            &format!("hash --format {format} <stdin"),
            &format!("{tool_name} not installed"),
        );
    }
    let d = tempdir();
    let input = b"standard input\n";
    let mut child = Command::new(tool_name)
        .args(tool_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input).unwrap();
    let expected = child.wait_with_output().unwrap().stdout;
    let got = run_stdin(d.path(), ["hash", "--format", format], input);
    assert!(got.status.success(), "{}", text(&got.stderr));
    assert_eq!(text(&got.stdout), text(&expected), "--format {format} <stdin vs {tool_name}");
}

#[test]
fn cksum_format_is_posix_cksum() {
    same_as_tool("cksum", &[], "cksum", &[]);
    stdin_same_as_tool("cksum", "cksum", &[]);
}

#[test]
fn sum_format_is_bsd_sum() {
    same_as_tool("sum", &[], "sum", &[]);
    same_as_tool("sum", &[], "cksum", &["-a", "bsd"]);
    stdin_same_as_tool("sum", "sum", &[]);
}

#[test]
fn sysv_format_is_sysv_sum() {
    same_as_tool("sysv", &[], "sum", &["-s"]);
    same_as_tool("sysv", &[], "cksum", &["-a", "sysv"]);
}

#[test]
fn b3sum_format_is_b3sum() {
    same_as_tool("b3sum", &[], "b3sum", &[]);
    stdin_same_as_tool("b3sum", "b3sum", &[]);
}

#[test]
fn xxhsum_format_is_xxhsum() {
    same_as_tool("xxhsum", &[], "xxhsum", &[]);
    same_as_tool("xxhsum", &["-a", "xxh32"], "xxhsum", &["-H0"]);
    same_as_tool("xxhsum", &["-a", "xxh128"], "xxhsum", &["-H2"]);
    // xxhsum 0.8.1 tags XXH3 lines.
    same_as_tool("xxhsum", &["-a", "xxh3"], "xxhsum", &["-H3"]);
    stdin_same_as_tool("xxhsum", "xxhsum", &[]);
}

#[test]
fn bsd_format_is_cksum_with_an_algorithm() {
    // `cksum -a ALG` (coreutils 9.1) prints the tagged lines of --format bsd, escaping and
    // all: no separate cksum-tagged format is needed.
    for algo in ["md5", "sha1", "sha256", "sha512", "blake2b"] {
        same_as_tool("bsd", &["-a", algo], "cksum", &["-a", algo]);
    }
}

#[test]
fn tool_formats_refuse_what_the_tool_cannot_print() {
    let d = tempdir();
    write(d.path(), "f", b"x");
    for (argv, msg) in [
        (&["--format", "cksum", "-a", "md5"][..], "cksum lines hold the cksum checksum only"),
        (&["--format", "sysv", "-a", "sum"], "sysv lines hold the sysv checksum only"),
        (&["--format", "xxhsum", "-a", "sha256"], "xxhsum lines hold one of xxh32"),
        (&["--format", "b3sum", "-a", "md5,sha1"], "b3sum lines hold one digest"),
        (&["--format", "b3sum", "-z"], "b3sum has no -z or -b"),
    ] {
        let mut a = vec!["hash"];
        a.extend_from_slice(argv);
        a.push("f");
        let out = run(d.path(), &a);
        assert_eq!(out.status.code(), Some(2), "{a:?}");
        assert!(text(&out.stderr).contains(msg), "{a:?}: {}", text(&out.stderr));
    }
}

// ------------------------------------------------------------------ export

/// Scans `dir/t` with `algo` into `dir/cat.db` (outside the tree, so that the tree holds
/// only its files).
fn scan(dir: &Path, algo: &str) {
    let out = run(dir, ["scan", "-q", "-a", algo, "--catalog", "cat.db", "t"]);
    assert!(out.status.success(), "scan: {}", text(&out.stderr));
}

fn export(dir: &Path, format: &str) -> Output {
    run(dir, ["export", "--catalog", "cat.db", "--format", format, "t"])
}

#[test]
fn exported_hashdeep_file_passes_an_audit() {
    let d = tempdir();
    let names = tree(d.path());
    scan(d.path(), "sha256");
    let out =
        run(d.path(), ["export", "--catalog", "cat.db", "--format", "hashdeep", "-o", "t.hd", "t"]);
    // hashdeep cannot hold the name with a newline: said, and left out.
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("a hashdeep file cannot hold a name with a newline"));
    let file = std::fs::read(d.path().join("t.hd")).unwrap();
    assert!(file.starts_with(b"%%%% HASHDEEP-1.0\n%%%% size,sha256,filename\n"));
    let lines = text(&file).lines().filter(|l| !l.starts_with('%') && !l.starts_with('#')).count();
    assert_eq!(lines, names.len() - 1);
    assert!(text(&file).contains(",./back\\slash\n"), "{}", text(&file));
    // Audited from inside the tree, without the file with a newline.
    std::fs::remove_file(d.path().join("t/n\nl")).unwrap();
    let t = d.path().join("t");
    let audit = run(&t, ["check", "--audit", "-k", "../t.hd"]);
    assert_eq!(audit.status.code(), Some(0), "{}{}", text(&audit.stdout), text(&audit.stderr));
    assert!(text(&audit.stdout).contains("Files matched: 6\n"), "{}", text(&audit.stdout));
    if have("hashdeep") {
        let real = Command::new("hashdeep")
            .args(["-a", "-k", "../t.hd", "-l", "-r", "."])
            .current_dir(&t)
            .output()
            .unwrap();
        assert!(real.status.success(), "{}", text(&real.stdout));
        assert_eq!(text(&real.stdout), "hashdeep: Audit passed\n");
    } else {
        missing("hashdeep -a of an exported file", "hashdeep not installed");
    }
    // A changed file fails the audit.
    write(&t, "a", b"changed\n");
    let audit = run(&t, ["check", "--audit", "-k", "../t.hd"]);
    assert_eq!(audit.status.code(), Some(1), "{}", text(&audit.stdout));
    // hashdeep files hold md5, sha1, sha256, tiger and whirlpool only.
    let d = tempdir();
    tree(d.path());
    scan(d.path(), "blake3");
    let out = export(d.path(), "hashdeep");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("hashdeep files hold md5, sha1, sha256, tiger, whirlpool only; the catalog holds blake3 digests"), "{}", text(&out.stderr));
}

/// `export --format FORMAT` of a catalog scanned with `algo` is what `fixity hash
/// --format HASH_FORMAT` prints inside the tree for the same names (and, where the tool
/// is installed, what the tool prints).
fn export_matches(algo: &str, format: &str, hash_format: &str, tool_cmd: Option<(&str, &[&str])>) {
    let d = tempdir();
    let mut names = tree(d.path());
    if format == "cfv-csv" {
        // cfv's .csv cannot hold a newline in a name.
        std::fs::remove_file(d.path().join("t/n\nl")).unwrap();
        names.retain(|n| !n.contains(&b'\n'));
    }
    scan(d.path(), algo);
    let out = export(d.path(), format);
    assert!(out.status.success(), "export {format}: {}", text(&out.stderr));
    let t = d.path().join("t");
    let mut hash = args(&["hash", "--format", hash_format, "-a", algo]);
    hash.extend(os(&names));
    assert_eq!(text(&out.stdout), text(&fixity_ok(&t, &hash)), "export --format {format}");
    match tool_cmd {
        Some((name, targs)) if have(name) => {
            let expected = tool(&t, name, targs, &os(&names));
            assert_eq!(text(&out.stdout), text(&expected), "export --format {format} vs {name}");
        }
        Some((name, _)) => {
            missing(&format!("export --format {format}"), &format!("{name} not installed"))
        }
        None => {}
    }
}

#[test]
fn export_writes_every_tool_layout() {
    export_matches("cksum", "cksum", "cksum", Some(("cksum", &[])));
    export_matches("sum", "sum", "sum", Some(("sum", &[])));
    export_matches("sysv", "sysv", "sysv", Some(("sum", &["-s"])));
    export_matches("blake3", "b3sum", "b3sum", Some(("b3sum", &[])));
    export_matches("xxh3", "xxhsum", "xxhsum", Some(("xxhsum", &["-H3"])));
    export_matches("xxh128", "xxh128sum", "xxhsum", Some(("xxhsum", &["-H2"])));
    export_matches("crc32", "cfv-csv", "cfv-csv", None);
}

#[test]
fn export_refuses_layouts_the_catalog_cannot_fill() {
    let d = tempdir();
    tree(d.path());
    scan(d.path(), "md5");
    for (format, msg) in [
        ("cksum", "cksum lines hold the cksum checksum only; the catalog holds md5 digests"),
        ("sum", "sum lines hold the sum checksum only"),
        ("sysv", "sysv lines hold the sysv checksum only"),
        ("cfv-csv", "cfv's .csv files hold CRC32 only"),
        ("xxhsum", "xxhsum lines hold xxh32, xxh64, xxh128, xxh3"),
        ("b3sum", "the catalog holds md5 digests, not blake3"),
    ] {
        let out = export(d.path(), format);
        assert_eq!(out.status.code(), Some(2), "{format}");
        assert!(text(&out.stderr).contains(msg), "{format}: {}", text(&out.stderr));
    }
}

// ------------------------------------------------------------------ check *.cksum

#[test]
fn check_reads_cksum_lines_from_a_cksum_manifest() {
    let d = tempdir();
    let names: Vec<Vec<u8>> = tree(d.path()).into_iter().filter(|n| !n.contains(&b'\n')).collect();
    let t = d.path().join("t");
    let mut hash = args(&["hash", "--format", "cksum", "-o", "../sums.cksum"]);
    hash.extend(os(&names));
    fixity_ok(&t, &hash);
    if have("cksum") {
        let real = tool(&t, "cksum", &[], &os(&names));
        assert_eq!(text(&std::fs::read(d.path().join("sums.cksum")).unwrap()), text(&real));
    }
    let ok = run(&t, ["check", "../sums.cksum"]);
    assert_eq!(ok.status.code(), Some(0), "{}{}", text(&ok.stdout), text(&ok.stderr));
    assert_eq!(text(&ok.stdout).matches(": OK\n").count(), names.len());
    // The same lines in a file not named .cksum are not cksum's.
    std::fs::copy(d.path().join("sums.cksum"), d.path().join("sums.txt")).unwrap();
    let other = run(&t, ["check", "../sums.txt"]);
    assert_eq!(other.status.code(), Some(1));
    assert!(text(&other.stderr).contains("no properly formatted"), "{}", text(&other.stderr));
    // A different file of the same size fails on its CRC.
    write(&t, "a", b"ALPHA\n");
    let bad = run(&t, ["check", "../sums.cksum"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stdout).contains("a: FAILED\n"), "{}", text(&bad.stdout));
    // The right CRC with the wrong size on the line fails too.
    write(&t, "a", b"alpha\n");
    let manifest = text(&std::fs::read(d.path().join("sums.cksum")).unwrap());
    let crc = cksum_crc(b"alpha\n");
    assert!(manifest.contains(&format!("{crc} 6 a\n")), "{manifest}");
    std::fs::write(
        d.path().join("sums.cksum"),
        manifest.replace(&format!("{crc} 6 a\n"), &format!("{crc} 7 a\n")),
    )
    .unwrap();
    let bad = run(&t, ["check", "../sums.cksum"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stdout).contains("a: FAILED\n"), "{}", text(&bad.stdout));
    assert!(text(&bad.stdout).contains("a b: OK\n"));
    // A line without a name (standard input) is improperly formatted, and said why.
    std::fs::write(d.path().join("stdin.cksum"), format!("{crc} 6\n")).unwrap();
    let out = fixity(&t).args(["check", "-w", "../stdin.cksum"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("without a name"), "{}", text(&out.stderr));
}

/// The POSIX cksum CRC of `data`, by fixity's library.
fn cksum_crc(data: &[u8]) -> u32 {
    let d = fixity::algo::lookup("cksum").unwrap().digest(data);
    u32::from_be_bytes(d.as_bytes().try_into().unwrap())
}

/// `--embed-crc` walks first, then hashes and renames: every file of the tree once, in
/// order, `-` taken as a file's name; a second run finds every name carrying its CRC.
#[test]
fn embed_crc_renames_each_walked_file_once() {
    let dir = tempdir();
    let d = dir.path();
    write(d, "t/a.txt", b"hello\n");
    write(d, "t/b", b"abc");
    write(d, "-", b"abc");
    let out = run(d, ["hash", "--embed-crc", "t", "-"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "t/a.txt -> t/a [363A3020].txt\nt/b -> t/b [352441C2]\n- -> - [352441C2]\n"
    );
    for name in ["t/a [363A3020].txt", "t/b [352441C2]", "- [352441C2]"] {
        assert!(d.join(name).exists(), "{name}");
    }
    let again = run(d, ["hash", "--embed-crc", "t"]);
    assert!(again.status.success());
    assert!(again.stdout.is_empty(), "{}", String::from_utf8_lossy(&again.stdout));
}
