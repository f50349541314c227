//! The cases of the upstream test suites, run against the drop-ins: coreutils' checksum
//! tests (tests/misc/ at v9.1: md5sum, sha1sum, sha224sum ... sha512sum, sha1sum-vec,
//! md5sum-newline, md5sum-bsd, b2sum, cksum, cksum-a, cksum-c, sum, sum-sysv,
//! md5sum-parallel), b3sum's CLI tests (BLAKE3's b3sum/tests/cli_tests.rs at 1.2.0) and
//! xxHash's CLI tests (the test-xxhsum-c target of its Makefile at v0.8.1). Each case's
//! input and expected behaviour are upstream's; the test code is this project's. Each
//! case runs fixity through a link named like the tool, asserts what upstream asserts,
//! and, where the real tool is installed, that it prints and exits exactly as the real
//! one. Cases about features of versions newer than the peers installed here (coreutils
//! 9.1, b3sum 1.2.0, xxhsum 0.8.1) are listed in docs/check.md instead.

use crate::util::{missing, tempdir};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one run printed.
#[derive(Clone, PartialEq, Eq)]
struct Outcome {
    out: Vec<u8>,
    err: Vec<u8>,
    code: Option<i32>,
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stdout {:?} stderr {:?} exit {:?}",
            String::from_utf8_lossy(&self.out),
            String::from_utf8_lossy(&self.err),
            self.code
        )
    }
}

/// A working directory with the drop-ins linked in: runs a tool as fixity and, when the
/// real one is installed, as the real one too, and insists both did the same (in
/// separate copies of the directory's files, so one run cannot feed the other).
struct Session {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    bin: PathBuf,
}

fn which(tool: &str) -> Option<PathBuf> {
    crate::util::which(tool)
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn bytes_name(name: &[u8]) -> PathBuf {
    PathBuf::from(OsString::from_vec(name.to_vec()))
}

impl Session {
    fn new() -> Session {
        let tmp = tempdir();
        let dir = tmp.path().join("w");
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&dir).unwrap();
        std::fs::create_dir(&bin).unwrap();
        Session { _tmp: tmp, dir, bin }
    }

    fn put(&self, name: impl AsRef<[u8]>, data: impl AsRef<[u8]>) {
        let p = self.dir.join(bytes_name(name.as_ref()));
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, data).unwrap();
    }

    fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.join(name)).unwrap()
    }

    fn fake(&self, tool: &str) -> PathBuf {
        let link = self.bin.join(tool);
        if !link.exists() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &link).unwrap();
        }
        link
    }

    fn exec(program: &Path, tool: &str, dir: &Path, args: &[OsString], stdin: &[u8]) -> Outcome {
        let out = crate::util::run_as_tool(program, tool, dir, args, stdin);
        Outcome { out: out.stdout, err: out.stderr, code: out.status.code() }
    }

    /// Runs `tool ARGS` (fixity as the tool) with `stdin`; when the real tool is
    /// installed, runs it too in a copy of the directory and requires the same result.
    fn run(&self, tool: &str, args: &[OsString], stdin: &[u8]) -> Outcome {
        let got = Self::exec(&self.fake(tool), tool, &self.dir, args, stdin);
        match which(tool) {
            Some(real) => {
                let copy = self._tmp.path().join("real");
                let _ = std::fs::remove_dir_all(&copy);
                let status = Command::new("cp").arg("-a").arg(&self.dir).arg(&copy).status();
                assert!(status.unwrap().success());
                let want = Self::exec(&real, tool, &copy, args, stdin);
                let (got, want) = (banner(got.clone()), banner(want));
                assert_eq!(got, want, "{tool} {args:?}: fixity (left) differs from the real tool");
            }
            None => missing(&format!("upstream case of {tool}"), "the real tool is not installed"),
        }
        got
    }
}

/// xxhsum's usage starts with a banner naming its version and author; the drop-in's
/// names fixity instead (a deliberate difference), and is otherwise the same.
fn banner(mut o: Outcome) -> Outcome {
    let mut err = Vec::new();
    for line in o.err.split_inclusive(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let ours = text.contains(" by Yann Collet") || text.contains("(fixity, drop-in");
        err.extend_from_slice(if text.starts_with("xxh") && ours { b"BANNER\n" } else { line });
    }
    o.err = err;
    o
}

/// One case in the style of coreutils' Perl tests: files (`IN` files are also named on
/// the command line after the arguments, `AUX` files are not), and the expected stdout,
/// stderr (both empty unless given) and exit status.
struct Case {
    id: String,
    tool: &'static str,
    args: Vec<OsString>,
    files: Vec<(Vec<u8>, Vec<u8>)>,
    out: Option<Vec<u8>>,
    err: Option<Vec<u8>>,
    exit: i32,
}

fn case(id: &str, tool: &'static str, args: &[&str]) -> Case {
    Case {
        id: id.to_string(),
        tool,
        args: os(args),
        files: Vec::new(),
        out: Some(Vec::new()),
        err: Some(Vec::new()),
        exit: 0,
    }
}

impl Case {
    /// An `IN` file: created, and named on the command line.
    fn input(mut self, name: impl AsRef<[u8]>, data: impl AsRef<[u8]>) -> Case {
        self.args.push(OsString::from_vec(name.as_ref().to_vec()));
        self.files.push((name.as_ref().to_vec(), data.as_ref().to_vec()));
        self
    }

    /// An `AUX` file: created only.
    fn aux(mut self, name: impl AsRef<[u8]>, data: impl AsRef<[u8]>) -> Case {
        self.files.push((name.as_ref().to_vec(), data.as_ref().to_vec()));
        self
    }

    fn out(mut self, text: impl AsRef<[u8]>) -> Case {
        self.out = Some(text.as_ref().to_vec());
        self
    }

    fn err(mut self, text: impl AsRef<[u8]>) -> Case {
        self.err = Some(text.as_ref().to_vec());
        self
    }

    fn exit(mut self, code: i32) -> Case {
        self.exit = code;
        self
    }

    /// Runs the case; the problem, if any.
    fn check(&self) -> Option<String> {
        let s = Session::new();
        for (name, data) in &self.files {
            s.put(name, data);
        }
        let got = s.run(self.tool, &self.args, b"");
        let mut problems = Vec::new();
        if let Some(out) = &self.out
            && &got.out != out
        {
            problems.push(format!("stdout {:?}, want {:?}", lossy(&got.out), lossy(out)));
        }
        if let Some(err) = &self.err
            && &got.err != err
        {
            problems.push(format!("stderr {:?}, want {:?}", lossy(&got.err), lossy(err)));
        }
        if got.code != Some(self.exit) {
            problems.push(format!("exit {:?}, want {}", got.code, self.exit));
        }
        (!problems.is_empty()).then(|| {
            format!("{} ({} {:?}): {}", self.id, self.tool, self.args, problems.join("; "))
        })
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs every case and fails listing those that did not behave as upstream says.
fn run_all(cases: Vec<Case>) {
    let failures: Vec<String> = cases.iter().filter_map(Case::check).collect();
    assert!(failures.is_empty(), "upstream cases failed:\n{}", failures.join("\n"));
}

/// coreutils' Perl tests run `PROG --text ARGS...` unless the first argument is a check.
fn text(mut c: Case) -> Case {
    if !c.args.first().is_some_and(|a| a.to_string_lossy().contains("--check")) {
        c.args.insert(0, "--text".into());
    }
    c
}

fn digest_hex(algo: &str, data: &[u8]) -> String {
    fixity::algo::lookup(algo).unwrap().digest(data).to_hex()
}

// ================================================================ coreutils 9.1

const MD5_EMPTY: &str = "d41d8cd98f00b204e9800998ecf8427e";
const SHA1_EMPTY: &str = "da39a3ee5e6b4b0d3255bfef95601890afd80709";

fn alnum() -> String {
    let mut s = String::new();
    s.extend('A'..='Z');
    s.extend('a'..='z');
    s.extend('0'..='9');
    s
}

/// tests/misc/md5sum.pl
#[test]
fn coreutils_md5sum_pl() {
    let d = MD5_EMPTY;
    let try_help = "Try 'md5sum --help' for more information.\n";
    let m = "md5sum";
    let no_lines = |f: &str| format!("md5sum: {f}: no properly formatted checksum lines found\n");
    let cases = vec![
        case("1", m, &[]).input("f", "").out(format!("{d}  f\n")),
        case("2", m, &[]).input("f", "a").out("0cc175b9c0f1b6a831c399e269772661  f\n"),
        case("3", m, &[]).input("f", "abc").out("900150983cd24fb0d6963f7d28e17f72  f\n"),
        case("4", m, &[])
            .input("f", "message digest")
            .out("f96b697d7cb7938d525a2f31aaf161d0  f\n"),
        case("5", m, &[])
            .input("f", "abcdefghijklmnopqrstuvwxyz")
            .out("c3fcd3d76192e4007dfb496cca67e13b  f\n"),
        case("6", m, &[]).input("f", alnum()).out("d174ab98d277d9f5a5611c2c9f419d9f  f\n"),
        case("7", m, &[])
            .input("f", "1234567890".repeat(8))
            .out("57edf4a22be3c955ac49da2e2107b67a  f\n"),
        case("backslash-1", m, &[]).input(".\nfoo", "").out(format!("\\{d}  .\\nfoo\n")),
        case("backslash-2", m, &[]).input(".\\foo", "").out(format!("\\{d}  .\\\\foo\n")),
        case("backslash-3", m, &[]).input(".\rfoo", "").out(format!("\\{d}  .\\rfoo\n")),
        case("check-1", m, &["--check"]).aux("f", "").input("f.md5", format!("{d}  f\n")).out("f: OK\n"),
        case("check-windows", m, &["--check"])
            .aux("f", "")
            .input("f.md5", format!("{d}  f\r\n"))
            .out("f: OK\n"),
        case("ck-strict-1", m, &["--check", "--strict"])
            .aux("f", "")
            .input("f.md5", format!("{d}  f\n\n"))
            .out("f: OK\n"),
        case("ck-strict-2", m, &["--check", "--strict"])
            .aux("f", "")
            .input("in.md5", format!("ERR\n{d}  f\n"))
            .out("f: OK\n")
            .err("md5sum: WARNING: 1 line is improperly formatted\n")
            .exit(1),
        case("check-2", m, &["--check", "--status"])
            .input("f.md5", format!("{d}  f\n"))
            .aux("f", "foo")
            .exit(1),
        case("check-quiet1", m, &["--check", "--quiet"])
            .aux("f", "")
            .input("f.md5", format!("{d}  f\n")),
        case("check-quiet2", m, &["--check", "--quiet"])
            .input("f.md5", format!("{d}  f\n"))
            .aux("f", "foo")
            .out("f: FAILED\n")
            .err("md5sum: WARNING: 1 computed checksum did NOT match\n")
            .exit(1),
        case("check-multifail", m, &["--check"])
            .input("f.md5", format!("{d}  f\n{d}  f\ninvalid\n"))
            .aux("f", "foo")
            .out("f: FAILED\nf: FAILED\n")
            .err(
                "md5sum: WARNING: 1 line is improperly formatted\n\
                 md5sum: WARNING: 2 computed checksums did NOT match\n",
            )
            .exit(1),
        case("check-multifail-warn", m, &["--check", "--warn"])
            .input("f.md5", format!("{d}  f\n{d}  f\ninvalid\n"))
            .aux("f", "foo")
            .out("f: FAILED\nf: FAILED\n")
            .err(
                "md5sum: f.md5: 3: improperly formatted MD5 checksum line\n\
                 md5sum: WARNING: 1 line is improperly formatted\n\
                 md5sum: WARNING: 2 computed checksums did NOT match\n",
            )
            .exit(1),
        case("check-bsd", m, &["--check"])
            .input("f.sha1", format!("SHA1 (f) = {d}\n"))
            .aux("f", "")
            .err(no_lines("f.sha1"))
            .exit(1),
        case("check-bsd2", m, &["--check"])
            .input("f.md5", format!("MD5 (f) = {d}\n"))
            .aux("f", "")
            .out("f: OK\n"),
        case("check-bsd3", m, &["--check", "--status"])
            .input("f.md5", format!("MD5 (f) = {d}\n"))
            .aux("f", "bar")
            .exit(1),
        case("check-openssl", m, &["--check"])
            .input("f.sha1", format!("SHA1(f)= {d}\n"))
            .aux("f", "")
            .err(no_lines("f.sha1"))
            .exit(1),
        case("check-openssl2", m, &["--check"])
            .input("f.md5", format!("MD5(f)= {d}\n"))
            .aux("f", "")
            .out("f: OK\n"),
        case("check-openssl3", m, &["--check", "--status"])
            .input("f.md5", format!("MD5(f)= {d}\n"))
            .aux("f", "bar")
            .exit(1),
        case("check-ignore-missing-1", m, &["--check", "--ignore-missing"])
            .aux("f", "")
            .input("f.md5", format!("{d}  f\n{d}  f.missing\n"))
            .out("f: OK\n"),
        case("check-ignore-missing-2", m, &["--check", "--ignore-missing"])
            .aux("f", "")
            .input("f.md5", format!("{d}  f\n{d}  f.missing\n"))
            .out("f: OK\n"),
        case("check-ignore-missing-3", m, &["--check", "--quiet", "--ignore-missing"])
            .aux("f", "")
            .input("f.md5", format!("{d}  missing/f\n{d}  f\n")),
        case("check-ignore-missing-4", m, &["--ignore-missing"])
            .input("f", "")
            .err(format!(
                "md5sum: the --ignore-missing option is meaningful only when verifying checksums\n{try_help}"
            ))
            .exit(1),
        case("check-ignore-missing-5", m, &["--check", "--ignore-missing"])
            .aux("f", "")
            .input("f.md5", format!("{d}  missing\n"))
            .err("md5sum: f.md5: no file was verified\n")
            .exit(1),
        case("check-ignore-missing-6", m, &["--check", "--ignore-missing"])
            .aux("f", "9t")
            .input("f.md5", "006999e6df389641adf1fa3a74801d9d  f\n")
            .out("f: OK\n"),
        case("bsd-segv", m, &["--check"]).input("z", "MD5 (").err(no_lines("z")).exit(1),
        case("nul-in-cksum", m, &["--check"])
            .input("h", [&[0u8; 32][..], b"  h\n"].concat())
            .err(no_lines("h"))
            .exit(1),
    ];
    run_all(cases.into_iter().map(text).collect());
}

/// tests/misc/md5sum-newline.pl
#[test]
fn coreutils_md5sum_newline_pl() {
    let d = MD5_EMPTY;
    run_all(vec![
        case("newline", "md5sum", &["--text"]).input("a\nb", "").out(format!("\\{d}  a\\nb\n")),
        case("zero", "md5sum", &["--text", "--zero"]).input("a\nb", "").out(format!("{d}  a\nb\0")),
    ]);
}

/// tests/misc/sha1sum.pl
#[test]
fn coreutils_sha1sum_pl() {
    let d = SHA1_EMPTY;
    let p = "sha1sum";
    let no_lines = |f: &str| format!("sha1sum: {f}: no properly formatted checksum lines found\n");
    let cases = vec![
        case("s1", p, &[]).input("f", "").out(format!("{d}  f\n")),
        case("s2", p, &[]).input("f", "a").out("86f7e437faa5a7fce15d1ddcb9eaeaea377667b8  f\n"),
        case("s3", p, &[]).input("f", "abc").out("a9993e364706816aba3e25717850c26c9cd0d89d  f\n"),
        case("s4", p, &[])
            .input("f", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            .out("84983e441c3bd26ebaae4aa1f95129e5e54670f1  f\n"),
        case("s5", p, &[])
            .input("f", "abcdefghijklmnopqrstuvwxyz")
            .out("32d10c7b8cf96570ca04ce37f2a19d84240d3a89  f\n"),
        case("s6", p, &[]).input("f", alnum()).out("761c457bf73b14d27e9e9265c46f4b4dda11f940  f\n"),
        case("s7", p, &[])
            .input("f", "1234567890".repeat(8))
            .out("50abf5706a150990a08b2c5ea40fa0e585554732  f\n"),
        case("million-a", p, &[])
            .input("f", "a".repeat(1_000_000))
            .out("34aa973cd4c4daa4f61eeb2bdbad27316534016f  f\n"),
        case("bs-sha-1", p, &[]).input(".\nfoo", "").out(format!("\\{d}  .\\nfoo\n")),
        case("bs-sha-2", p, &[]).input(".\\foo", "").out(format!("\\{d}  .\\\\foo\n")),
        case("bs-sha-3", p, &[]).input(".\rfoo", "").out(format!("\\{d}  .\\rfoo\n")),
        case("check-bsd", p, &["--check"])
            .input("f.md5", format!("MD5 (f) = {d}\n"))
            .aux("f", "")
            .err(no_lines("f.md5"))
            .exit(1),
        case("check-bsd2", p, &["--check"])
            .input("f.sha1", format!("SHA1 (f) = {d}\n"))
            .aux("f", "")
            .out("f: OK\n"),
        case("check-bsd3", p, &["--check", "--status"])
            .input("f.sha1", format!("SHA1 (f) = {d}\n"))
            .aux("f", "bar")
            .exit(1),
        case("check-openssl", p, &["--check"])
            .input("f.md5", format!("MD5(f)= {d}\n"))
            .aux("f", "")
            .err(no_lines("f.md5"))
            .exit(1),
        case("check-openssl2", p, &["--check"])
            .input("f.sha1", format!("SHA1(f)= {d}\n"))
            .aux("f", "")
            .out("f: OK\n"),
        case("check-openssl3", p, &["--check", "--status"])
            .input("f.sha1", format!("SHA1(f)= {d}\n"))
            .aux("f", "bar")
            .exit(1),
        case("bsd-segv", p, &["--check"]).input("z", "SHA1 (").err(no_lines("z")).exit(1),
    ];
    run_all(cases.into_iter().map(text).collect());
}

/// tests/misc/sha224sum.pl, sha256sum.pl, sha384sum.pl, sha512sum.pl: the FIPS vectors.
#[test]
fn coreutils_sha2_sums_pl() {
    let abc448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    let abc896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    let million = "a".repeat(1_000_000);
    let vectors: &[(&'static str, &str, &str, &str)] = &[
        ("sha224sum", "s3", "abc", "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"),
        ("sha224sum", "s4", abc448, "75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525"),
        ("sha224sum", "s8", &million, "20794655980c91d8bbb4c1ea97618a4bf03f42581948b2ee4ee7ad67"),
        ("sha256sum", "s1", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (
            "sha256sum",
            "s2",
            "a",
            "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
        ),
        (
            "sha256sum",
            "s3",
            "abc",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
        (
            "sha256sum",
            "s4",
            abc448,
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
        ),
        (
            "sha256sum",
            "s8",
            &million,
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
        ),
        (
            "sha384sum",
            "s1",
            "",
            "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b",
        ),
        (
            "sha384sum",
            "s2",
            "a",
            "54a59b9f22b0b80880d8427e548b7c23abd873486e1f035dce9cd697e85175033caa88e6d57bc35efae0b5afd3145f31",
        ),
        (
            "sha384sum",
            "s3",
            "abc",
            "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
        ),
        (
            "sha384sum",
            "s4",
            abc896,
            "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039",
        ),
        (
            "sha384sum",
            "s8",
            &million,
            "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b07b8b3dc38ecc4ebae97ddd87f3d8985",
        ),
        (
            "sha512sum",
            "s1",
            "",
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
        ),
        (
            "sha512sum",
            "s2",
            "a",
            "1f40fc92da241694750979ee6cf582f2d5d7d28e18335de05abc54d0560e0f5302860c652bf08d560252aa5e74210546f369fbbbce8c12cfc7957b2652fe9a75",
        ),
        (
            "sha512sum",
            "s3",
            "abc",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        ),
        (
            "sha512sum",
            "s4",
            abc896,
            "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
        ),
        (
            "sha512sum",
            "s8",
            &million,
            "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b",
        ),
    ];
    let cases = vectors
        .iter()
        .map(|&(tool, id, data, hex)| {
            text(
                case(&format!("{tool} {id}"), tool, &[])
                    .input("f", data)
                    .out(format!("{hex}  f\n")),
            )
        })
        .collect();
    run_all(cases);
}

/// tests/misc/sm3sum.pl: `cksum --untagged -a sm3` (SM3 is in coreutils 9.1's cksum).
#[test]
fn coreutils_sm3sum_pl() {
    let abc512 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    let million = "a".repeat(1_000_000);
    let v: &[(&str, &str, &str)] = &[
        ("s1", "", "1ab21d8355cfa17f8e61194831e81a8f22bec8c728fefb747ed035eb5082aa2b"),
        ("s2", "a", "623476ac18f65a2909e43c7fec61b49c7e764a91a18ccb82f1917a29c86c5e88"),
        ("s3", "abc", "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"),
        ("s4", abc512, "639b6cc5e64d9e37a390b192df4fa1ea0720ab747ff692b9f38c4e66ad7b8c05"),
        ("s8", &million, "c8aaf89429554029e231941a2acc0ad61ff2a5acd8fadd25847a3a732b3b02c3"),
    ];
    let cases = v
        .iter()
        .map(|&(id, data, hex)| {
            case(id, "cksum", &["--untagged", "-a", "sm3"])
                .input("f", data)
                .out(format!("{hex}  f\n"))
        })
        .collect();
    run_all(cases);
}

/// tests/misc/sha1sum-vec.pl: NIST's bit-oriented SHA-1 vectors (a whole number of
/// bytes each; the 229 of them in tests/fixtures/upstream/sha1sum-vec.txt), written in
/// coreutils' compact form: `N B c1 c2 ... ^`, N runs of bits starting with bit B, each
/// run ci bits long, alternating.
#[test]
fn coreutils_sha1sum_vec_pl() {
    /// coreutils' expansion of the compact form to bytes (most significant bit first).
    fn expand(spec: &str) -> Vec<u8> {
        let mut it = spec.split_whitespace();
        let n: usize = it.next().unwrap().parse().unwrap();
        let mut bit: u8 = it.next().unwrap().parse().unwrap();
        let mut bits = Vec::new();
        for _ in 0..n {
            let run: usize = it.next().unwrap().parse().unwrap();
            bits.extend(std::iter::repeat_n(bit, run));
            bit ^= 1;
        }
        assert_eq!(it.next(), Some("^"));
        assert_eq!(bits.len() % 8, 0, "{spec}");
        bits.chunks(8).map(|c| c.iter().fold(0u8, |acc, &b| (acc << 1) | b)).collect()
    }
    // One run over all of them (each a file named by its test number), with the lines
    // upstream expects one by one.
    let vectors = include_str!("fixtures/upstream/sha1sum-vec.txt");
    let mut c = case("all", "sha1sum", &["--text"]);
    let mut want = String::new();
    for l in vectors.lines().filter(|l| !l.starts_with('#')) {
        let mut fields = l.split('|');
        let (id, spec, hex) =
            (fields.next().unwrap(), fields.next().unwrap(), fields.next().unwrap());
        c = c.input(id, expand(spec));
        want.push_str(&format!("{}  {id}\n", hex.to_lowercase()));
    }
    assert_eq!(c.files.len(), 229, "the vectors of sha1sum-vec.pl");
    run_all(vec![c.out(want)]);
}

/// tests/misc/sum.pl (BSD `sum -r`, the default, and System V `sum -s`).
#[test]
fn coreutils_sum_pl() {
    let k1 = "a".repeat(1024);
    let k2 = "b".repeat(2048);
    let v: &[(&str, &[&str], &str, &str)] = &[
        ("1", &[], "", "00000     0 f\n"),
        ("2", &[], "a", "00097     1 f\n"),
        ("3", &[], "abc", "16556     1 f\n"),
        ("4", &[], "message digest", "26423     1 f\n"),
        ("5", &[], "abcdefghijklmnopqrstuvwxyz", "53553     1 f\n"),
        ("6", &[], &alnum(), "25587     1 f\n"),
        ("7", &[], &"1234567890".repeat(8), "21845     1 f\n"),
        ("a-r-1k", &["-r"], &k1, "65409     1 f\n"),
        ("a-s-1k", &["-s"], &k1, "33793 2 f\n"),
        ("b-r-2k", &["-r"], &k2, "65223     2 f\n"),
        ("b-s-2k", &["-s"], &k2, "4099 4 f\n"),
        ("1s", &["-s"], "", "0 0 f\n"),
        ("2s", &["-s"], "a", "97 1 f\n"),
        ("3s", &["-s"], "abc", "294 1 f\n"),
        ("4s", &["-s"], "message digest", "1413 1 f\n"),
        ("5s", &["-s"], "abcdefghijklmnopqrstuvwxyz", "2847 1 f\n"),
        ("6s", &["-s"], &alnum(), "5387 1 f\n"),
        ("7s", &["-s"], &"1234567890".repeat(8), "4200 1 f\n"),
    ];
    run_all(
        v.iter()
            .map(|&(id, args, data, out)| case(id, "sum", args).input("f", data).out(out))
            .collect(),
    );
}

/// tests/misc/sum-sysv.sh: the System V sum of a large input, whose byte total
/// overflows 32 bits in the middle.
#[test]
fn coreutils_sum_sysv_sh() {
    let block = vec![255u8; 65537];
    let mut big = Vec::with_capacity(65537 * 257 + 1);
    for _ in 0..257 {
        big.extend_from_slice(&block);
    }
    let s = Session::new();
    let got = s.run("sum", &os(&["-s"]), &big);
    assert_eq!((lossy(&got.out).as_str(), got.code), ("65535 32897\n", Some(0)));
    big.push(255);
    let got = s.run("sum", &os(&["-s"]), &big);
    assert_eq!((lossy(&got.out).as_str(), got.code), ("254 32897\n", Some(0)));
}

/// tests/misc/cksum.sh: POSIX cksum (CRC) of inputs crossing its table's and buffer's
/// boundaries.
#[test]
fn coreutils_cksum_sh() {
    let s = Session::new();
    let got = s.run("cksum", &os(&["missing"]), b"");
    assert_eq!(got.code, Some(1), "cksum missing");
    let upto = |n: u32| (0..=n).map(|b| b as u8).collect::<Vec<u8>>();
    let mut first = Vec::new();
    for offset in -1i32..=6 {
        // `printf '\\%03o'` with no numbers (`seq 0 -1`) still prints its format once,
        // with 0: one NUL byte.
        first.extend(upto(offset.max(0) as u32));
        first.extend(upto(255));
    }
    let seq = |n: u32| (1..=n).map(|i| format!("{i}\n")).collect::<String>().into_bytes();
    let inputs: Vec<(Vec<u8>, &str)> = vec![
        (first, "4097727897 2077 in\n"),
        (upto(130), "3800919234 131 in\n"),
        (upto(64), "796287823 65 in\n"),
        (seq(12780), "3720986905 65574 in\n"),
        (seq(12795), "4278270357 65664 in\n"),
    ];
    for (data, want) in inputs {
        s.put("in", &data);
        let got = s.run("cksum", &os(&["in"]), b"");
        assert_eq!((lossy(&got.out).as_str(), got.code), (want, Some(0)));
    }
}

/// tests/misc/cksum-a.sh: `cksum --untagged -a ALGO` prints what each tool prints, and
/// `cksum --check -a ALGO` reads it back; `-a bsd --check` and an unknown algorithm fail.
#[test]
fn coreutils_cksum_a_sh() {
    let s = Session::new();
    s.put("null", "");
    let tools: &[(&str, &str, &[&str])] = &[
        ("bsd", "sum", &["-r"]),
        ("sysv", "sum", &["-s"]),
        ("crc", "cksum", &[]),
        ("md5", "md5sum", &["-t"]),
        ("sha1", "sha1sum", &["-t"]),
        ("sha224", "sha224sum", &["-t"]),
        ("sha256", "sha256sum", &["-t"]),
        ("sha384", "sha384sum", &["-t"]),
        ("sha512", "sha512sum", &["-t"]),
        ("blake2b", "b2sum", &["-t"]),
    ];
    for &(algo, tool, args) in tools {
        let own = s.run(tool, &[os(args), os(&["null"])].concat(), b"");
        let via = s.run("cksum", &os(&["--untagged", &format!("--algorithm={algo}"), "null"]), b"");
        assert_eq!((&via.out, via.code), (&own.out, Some(0)), "cksum -a {algo} vs {tool}");
        if !matches!(algo, "bsd" | "sysv" | "crc") {
            s.put("out-c", &via.out);
            let c = s.run("cksum", &os(&["--check", &format!("--algorithm={algo}"), "out-c"]), b"");
            assert_eq!(c.code, Some(0), "cksum --check -a {algo}: {c:?}");
        }
    }
    assert_eq!(s.run("cksum", &os(&["-a", "bsd", "--check"]), b"").code, Some(1));
    assert_eq!(s.run("cksum", &os(&["-a", "sha22"]), b"").code, Some(1));
}

/// tests/misc/cksum-c.sh: a tagged CHECKSUMS file of several algorithms (SM3 among
/// them, which coreutils 9.1 has) checked with --strict, with leading spaces and `\`,
/// inside a PGP signature; `-a crc` cannot check.
#[test]
fn coreutils_cksum_c_sh() {
    let s = Session::new();
    s.put("input", "3\n9\n1\n10\n5\n2\n8\n6\n4\n7\n");
    let mut sums = Vec::new();
    for args in
        [&["-a", "sha384"][..], &["-a", "blake2b"], &["-a", "blake2b", "-l", "384"], &["-a", "sm3"]]
    {
        let got = s.run("cksum", &[os(args), os(&["input"])].concat(), b"");
        assert_eq!(got.code, Some(0), "cksum {args:?}: {got:?}");
        sums.extend(got.out);
    }
    s.put("CHECKSUMS", &sums);
    let strict = s.run("cksum", &os(&["--strict", "--check", "CHECKSUMS"]), b"");
    assert_eq!(strict.code, Some(0), "{strict:?}");
    let indented: Vec<u8> =
        lossy(&sums).lines().flat_map(|l| format!(" \\{l}\n").into_bytes()).collect();
    let got = s.run("cksum", &os(&["--strict", "-c"]), &indented);
    assert_eq!(got.code, Some(0), "indented: {got:?}");
    let mut signed = b"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA384\n".to_vec();
    signed.extend(&sums);
    s.put("signed_CHECKSUMS", &signed);
    s.put(
        "signed_input",
        "-----BEGIN PGP SIGNATURE-----\n\
         SHA384+BCAAdFiEEjFummQvbJuGfKhqAEWGuaUVxmjkFAmCDId0ACgkQEWGuaUVx\n\
         BLAKE2b/00001EuON62pTEnqrJ5lav61QxRByiuDp/6VODrRL2JWM6Stxu1Myws=\n\
         =AWU7\n\
         -----END PGP SIGNATURE-----\n",
    );
    let got = s.run("cksum", &os(&["--check", "signed_CHECKSUMS"]), b"");
    assert_eq!(got.code, Some(0), "signed: {got:?}");
    let got = s.run("cksum", &os(&["--check", "-a", "sm3", "CHECKSUMS"]), b"");
    assert_eq!(got.code, Some(0), "-a sm3: {got:?}");
    assert_eq!(s.run("cksum", &os(&["-a", "crc", "-c", "CHECKSUMS"]), b"").code, Some(1));
    let crc = s.run("cksum", &os(&["-a", "crc", "input"]), b"");
    s.put("CHECKSUMS.crc", &crc.out);
    assert_eq!(s.run("cksum", &os(&["-c", "CHECKSUMS.crc"]), b"").code, Some(1));
}

/// tests/misc/md5sum-bsd.sh: names with leading spaces and `*` in two-space, one-space
/// (`md5 -r`) and tagged lines; a line of non-hex; --tag refused with --check and --text;
/// tagged names with `\`, newline and tab.
#[test]
fn coreutils_md5sum_bsd_sh() {
    let s = Session::new();
    let names = ["a", " b", "*c", "dd", " "];
    let mut sums = Vec::new();
    for n in names {
        s.put(n, format!("{n}\n"));
        let got = s.run("md5sum", &os(&["--text", n]), b"");
        sums.extend(got.out);
    }
    s.put("check.md5sum", &sums);
    let one_space =
        lossy(&sums).lines().map(|l| format!("{}\n", l.replacen("  ", " ", 1))).collect::<String>();
    s.put("check.md5", &one_space);
    assert_eq!(s.run("md5sum", &os(&["--strict", "-c", "check.md5sum"]), b"").code, Some(0));
    let got = s.run("md5sum", &os(&["--strict", "-c", "check.md5"]), b"");
    assert_eq!(got.code, Some(0), "one-space lines: {got:?}");
    s.put("check2.md5sum", [&b"____not_all_hex_so_no_match_____ blah\n"[..], &sums].concat());
    let got = s.run("md5sum", &os(&["-c", "check2.md5sum"]), b"");
    assert_eq!(
        (lossy(&got.err).as_str(), got.code),
        ("md5sum: WARNING: 1 line is improperly formatted\n", Some(0))
    );
    let rest: String = one_space.lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert_eq!(s.run("md5sum", &os(&["--strict", "-c"]), rest.as_bytes()).code, Some(1));
    assert_eq!(s.run("md5sum", &os(&["--tag", "--check", "/dev/null"]), b"").code, Some(1));
    assert_eq!(s.run("md5sum", &os(&["--tag", "--text", "/dev/null"]), b"").code, Some(1));
    let mut tagged = Vec::new();
    for n in names {
        tagged.extend(s.run("md5sum", &os(&["--tag", n]), b"").out);
    }
    s.put("check.md5", &tagged);
    assert_eq!(s.run("md5sum", &os(&["--strict", "-c", "check.md5"]), b"").code, Some(0));
    let mut tagged = Vec::new();
    for n in ["a\\b", "a\\", "a\nb", "a\tb"] {
        s.put(n, "");
        tagged.extend(s.run("md5sum", &os(&["--tag", n]), b"").out);
    }
    s.put("check.md5", &tagged);
    assert_eq!(s.run("md5sum", &os(&["--strict", "-c", "check.md5"]), b"").code, Some(0));
    s.put("test\n\\\\file", "");
    let got = s.run("md5sum", &os(&["--tag", "test\n\\\\file"]), b"");
    assert_eq!(lossy(&got.out), format!("\\MD5 (test\\n\\\\\\\\file) = {MD5_EMPTY}\n"));
}

/// tests/misc/b2sum.sh, for `b2sum` and `cksum -a blake2b`: lengths 0 (the default)
/// and 128 bits, tagged and untagged, names with spaces and `*`, OpenSSL's spacing, and
/// lines that once crashed the parser.
#[test]
fn coreutils_b2sum_sh() {
    for prog in [&["b2sum"][..], &["cksum", "-a", "blake2b"]] {
        let (tool, pre) = (prog[0], os(&prog[1..]));
        let s = Session::new();
        let b2 = tool == "b2sum";
        let mut sums = Vec::new();
        for n in ["a", " b", "*c", "44", " "] {
            s.put(n, format!("{n}\n"));
            for l in ["0", "128"] {
                let mut args = [pre.clone(), os(&["-l", l])].concat();
                if b2 {
                    args.push("--tag".into());
                }
                args.push(n.into());
                sums.extend(s.run(tool, &args, b"").out);
            }
        }
        s.put("check.b2sum", &sums);
        let strict = [pre.clone(), os(&["--strict", "-c", "check.b2sum"])].concat();
        let got = s.run(tool, &strict, b"");
        assert_eq!(got.code, Some(0), "{prog:?} tagged: {got:?}");
        let openssl: String = lossy(&sums)
            .lines()
            .map(|l| format!("{}\n", l.replacen(' ', "", 1).replacen(" =", "=", 1)))
            .collect();
        s.put("openssl.b2sum", &openssl);
        let got =
            s.run(tool, &[pre.clone(), os(&["--strict", "-c", "openssl.b2sum"])].concat(), b"");
        assert_eq!(got.code, Some(0), "{prog:?} openssl: {got:?}");
        let mut vals = Vec::new();
        for l in ["0", "128"] {
            let mut args = pre.clone();
            if !b2 {
                args.push("--untagged".into());
            } else {
                args.push("--text".into());
            }
            args.extend(os(&["-l", l, "/dev/null"]));
            let line = s.run(tool, &args, b"").out;
            vals.extend(&line);
            s.put("check.b2sum", &line);
            let with_l = [pre.clone(), os(&["-l", l, "--strict", "-c", "check.b2sum"])].concat();
            assert_eq!(s.run(tool, &with_l, b"").code, Some(0), "{prog:?} -l {l} -c");
            assert_eq!(s.run(tool, &strict, b"").code, Some(0), "{prog:?} -c (-l {l})");
        }
        s.put("check.vals", &vals);
        let mut args = pre.clone();
        if !b2 {
            args.push("--untagged".into());
        }
        args.extend(os(&["--length=128", "check.vals"]));
        let got = s.run(tool, &args, b"");
        assert_eq!(lossy(&got.out), "796485dd32fe9b754ea5fd6c721271d9  check.vals\n", "{prog:?}");
        s.put("crash.check", "BLAKE2\nBLAKE2b\nBLAKE2-\nBLAKE2(\nBLAKE2 (\n");
        let got = s.run(tool, &[pre.clone(), os(&["-c", "crash.check"])].concat(), b"");
        assert_eq!(got.code, Some(1), "{prog:?} crash.check");
    }
}

/// tests/misc/md5sum-parallel.sh: md5sum runs over 500 empty files at once print only
/// digest lines, and nothing on stderr.
#[test]
fn coreutils_md5sum_parallel_sh() {
    let s = Session::new();
    let mut names = Vec::new();
    for i in 1..=500 {
        s.put(format!("tmp/{i}"), "");
        names.push(OsString::from(format!("tmp/{i}")));
    }
    // `find tmp tmp tmp -type f | xargs -n500 -P2 md5sum`: three runs of 500, two at once.
    let fake = s.fake("md5sum");
    let runs: Vec<_> = (0..3)
        .map(|_| {
            let (fake, dir, names) = (fake.clone(), s.dir.clone(), names.clone());
            std::thread::spawn(move || Session::exec(&fake, "md5sum", &dir, &names, b""))
        })
        .collect();
    for r in runs {
        let got = r.join().unwrap();
        assert_eq!((got.err.as_slice(), got.code), (&b""[..], Some(0)));
        for line in lossy(&got.out).lines() {
            assert!(line.starts_with(&format!("{MD5_EMPTY}  tmp/")), "{line:?}");
        }
    }
}

// ================================================================ b3sum 1.2.0

fn b3(data: &[u8]) -> String {
    blake3::hash(data).to_hex().to_string()
}

/// b3sum/tests/cli_tests.rs at 1.2.0 (and the wrong-length key cases of later versions,
/// whose messages 1.2.0 already has).
#[test]
fn b3sum_cli_tests() {
    let s = Session::new();
    let t = "b3sum";
    // test_hash_one, test_hash_one_raw
    let got = s.run(t, &[], b"foo");
    assert_eq!(lossy(&got.out), format!("{}  -\n", b3(b"foo")));
    let got = s.run(t, &os(&["--raw"]), b"foo");
    assert_eq!(got.out, blake3::hash(b"foo").as_bytes());
    // test_hash_many: absolute names, then --no-names.
    s.put("file1", "foo");
    s.put("file2", "bar");
    let (f1, f2) = (s.dir.join("file1"), s.dir.join("file2"));
    let abs = vec![f1.clone().into_os_string(), f2.clone().into_os_string()];
    let got = s.run(t, &abs, b"");
    let want = format!("{}  {}\n{}  {}\n", b3(b"foo"), f1.display(), b3(b"bar"), f2.display());
    assert_eq!(lossy(&got.out), want);
    let got = s.run(t, &[os(&["--no-names"]), abs.clone()].concat(), b"");
    assert_eq!(lossy(&got.out), format!("{}\n{}\n", b3(b"foo"), b3(b"bar")));
    // test_missing_files
    let got = s.run(t, &os(&["file1", "missing_file", "file2"]), b"");
    assert_eq!(lossy(&got.out), format!("{}  file1\n{}  file2\n", b3(b"foo"), b3(b"bar")));
    assert_eq!(lossy(&got.err), "b3sum: missing_file: No such file or directory (os error 2)\n");
    assert_ne!(got.code, Some(0));
    // test_hash_length
    let mut long = [0u8; 100];
    blake3::Hasher::new().update(b"foo").finalize_xof().fill(&mut long);
    let hex: String = long.iter().map(|b| format!("{b:02x}")).collect();
    let got = s.run(t, &os(&["--length=100"]), b"foo");
    assert_eq!(lossy(&got.out), format!("{hex}  -\n"));
    // test_keyed, and keys of the wrong length (0, 1, 31, 33 bytes) fail naming key bytes.
    let key = [42u8; 32];
    let got = s.run(t, &os(&["--keyed", "--no-names", "file1"]), &key);
    assert_eq!(lossy(&got.out), format!("{}\n", blake3::keyed_hash(&key, b"foo").to_hex()));
    for bad in [0usize, 1, 31, 33] {
        let got = s.run(t, &os(&["--keyed", "file1"]), &vec![0u8; bad]);
        assert!(got.code != Some(0) && got.out.is_empty(), "{bad}-byte key: {got:?}");
        assert!(lossy(&got.err).contains("key bytes"), "{bad}-byte key: {got:?}");
    }
    let got = s.run(t, &os(&["--keyed", "file1"]), &[0u8; 33]);
    assert_eq!(lossy(&got.err), "Error: read more than 32 key bytes from stdin\n");
    // test_derive_key, test_no_mmap
    let context = "BLAKE3 2019-12-28 10:28:41 example context";
    s.put("material", "key material");
    let got = s.run(t, &os(&["--derive-key", context, "--no-names", "material"]), b"");
    let derived: String =
        blake3::derive_key(context, b"key material").iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(lossy(&got.out), format!("{derived}\n"));
    let got = s.run(t, &os(&["--no-mmap", "--no-names", "file1"]), b"");
    assert_eq!(lossy(&got.out), format!("{}\n", b3(b"foo")));
    // test_length_without_value_is_an_error, test_raw_with_multi_files_is_an_error
    assert_ne!(s.run(t, &os(&["--length"]), b"foo").code, Some(0));
    assert_eq!(s.run(t, &os(&["--raw", "file1"]), b"").code, Some(0));
    assert_ne!(s.run(t, &os(&["--raw", "file1", "file2"]), b"").code, Some(0));
}

/// test_newline_and_backslash_escaping_on_unix and test_invalid_unicode_on_unix.
#[test]
fn b3sum_cli_tests_names() {
    let s = Session::new();
    let e = b3(b"");
    let names = ["abcdef", "abc\ndef", "abc\\def", "abc\rdef", "abc\r\ndef", "subdir/foo"];
    for n in names {
        s.put(n, "");
    }
    let got = s.run("b3sum", &os(&names), b"");
    let want = format!(
        "{e}  abcdef\n\\{e}  abc\\ndef\n\\{e}  abc\\\\def\n{e}  abc\rdef\n\\{e}  abc\r\\ndef\n{e}  subdir/foo\n"
    );
    assert_eq!(lossy(&got.out), want);
    s.put(b"abc\xffdef", "");
    let args = vec![OsString::from("abcdef"), OsString::from_vec(b"abc\xffdef".to_vec())];
    let got = s.run("b3sum", &args, b"");
    assert_eq!(lossy(&got.out), format!("{e}  abcdef\n{e}  abc\u{fffd}def\n"));
}

/// test_check: a checkfile from stdin, twice on the command line, with a corrupt file, a
/// deleted file, and --quiet.
#[test]
fn b3sum_cli_tests_check() {
    let s = Session::new();
    let t = "b3sum";
    s.put("a", "a");
    s.put("b", "b");
    s.put("c/d", "cd");
    let got = s.run(t, &os(&["a", "b", "c/d"]), b"");
    let checkfile = format!("{}  a\n{}  b\n{}  c/d\n", b3(b"a"), b3(b"b"), b3(b"cd"));
    assert_eq!((lossy(&got.out), got.err.len()), (checkfile.clone(), 0));
    let ok = "a: OK\nb: OK\nc/d: OK\n";
    let got = s.run(t, &os(&["--check"]), checkfile.as_bytes());
    assert_eq!((lossy(&got.out).as_str(), got.err.len(), got.code), (ok, 0, Some(0)));
    s.put("checkfile", &checkfile);
    let got = s.run(t, &os(&["--check", "checkfile", "checkfile"]), b"");
    assert_eq!((lossy(&got.out), got.err.len()), (format!("{ok}{ok}"), 0));
    s.put("b", "CORRUPTION");
    let got = s.run(t, &os(&["--check", "checkfile"]), b"");
    assert_eq!(lossy(&got.out), "a: OK\nb: FAILED\nc/d: OK\n");
    assert!(got.err.is_empty() && got.code != Some(0));
    std::fs::remove_file(s.dir.join("b")).unwrap();
    let got = s.run(t, &os(&["--check", "checkfile"]), b"");
    let gone = "No such file or directory (os error 2)";
    assert_eq!(lossy(&got.out), format!("a: OK\nb: FAILED ({gone})\nc/d: OK\n"));
    assert!(got.err.is_empty() && got.code != Some(0));
    let got = s.run(t, &os(&["--check", "--quiet", "checkfile"]), b"");
    assert_eq!(lossy(&got.out), format!("b: FAILED ({gone})\n"));
    assert!(got.err.is_empty() && got.code != Some(0));
}

/// test_check_invalid_characters: a NUL, U+FFFD, or a bad escape in a checked path.
#[test]
fn b3sum_cli_tests_check_invalid_characters() {
    let zeros = "0".repeat(64);
    let cases = [
        (format!("{zeros}  \0"), "b3sum: Null character in path\n"),
        (format!("{zeros}  \u{fffd}"), "b3sum: Unicode replacement character in path\n"),
        (format!("\\{zeros}  \\a"), "b3sum: Invalid backslash escape\n"),
    ];
    let s = Session::new();
    for (line, err) in cases {
        let got = s.run("b3sum", &os(&["--check"]), line.as_bytes());
        assert_eq!((lossy(&got.err).as_str(), got.out.len()), (err, 0), "{line:?}");
        assert_ne!(got.code, Some(0));
    }
}

/// test_globbing: `b3sum *` through the shell.
#[test]
fn b3sum_cli_tests_globbing() {
    let s = Session::new();
    s.put("file1", "foo");
    s.put("file2", "bar");
    let fake = s.fake("b3sum");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("'{}' *", fake.display()))
        .current_dir(&s.dir)
        .output()
        .unwrap();
    assert_eq!(lossy(&out.stdout), format!("{}  file1\n{}  file2\n", b3(b"foo"), b3(b"bar")));
}

// ================================================================ xxhsum 0.8.1

/// The Makefile's test-xxhsum-c target at v0.8.1, step by step. TEST_FILES are three
/// files here (upstream: the xxhsum binary and its sources).
#[test]
fn xxhsum_make_test_xxhsum_c() {
    let s = Session::new();
    let t = "xxhsum";
    let files = ["xxhsum.bin", "xxhash.c", "xxhash.h"];
    for (i, f) in files.iter().enumerate() {
        s.put(f, format!("content of {f}\n").repeat(i * 700 + 1));
    }
    s.put("README.md", "# xxHash\n");
    let test_files = os(&files);
    let ok = |o: &Outcome, what: &str| assert_eq!(o.code, Some(0), "{what}: {o:?}");
    // To and from a pipe.
    for h in [&[][..], &["-H0"]] {
        let sums = s.run(t, &[os(h), test_files.clone()].concat(), b"");
        ok(&s.run(t, &os(&["-c", "-"]), &sums.out), "xxhsum | xxhsum -c -");
    }
    // A checksum of stdin, checked reading stdin (#470).
    let readme = s.read("README.md");
    let sums = s.run(t, &[], &readme);
    assert_eq!(lossy(&sums.out), format!("{}  stdin\n", digest_hex("xxh64", &readme)));
    s.put(".test.README.md.xxh", &sums.out);
    ok(&s.run(t, &os(&["-c", ".test.README.md.xxh"]), &readme), "-c of stdin");
    // No "Loading" progress message, with or without -q.
    for q in [&["-q"][..], &[]] {
        let got = s.run(t, &[os(q), test_files.clone()].concat(), b"");
        assert!(!lossy(&got.err).contains("Loading") && !lossy(&got.out).contains("Loading"));
    }
    let got = s.run(t, &os(&["nonexistent"]), b"");
    assert!(lossy(&got.err).contains("Error: Could not open 'nonexistent'"), "{got:?}");
    // Every algorithm, tagged or not, big or little endian, to files, then checked.
    let mut made = Vec::new();
    for (h, ext) in [("-H1", "xxh64"), ("-H0", "xxh32"), ("-H2", "xxh128"), ("-H3", "xxh3")] {
        for (opts, name) in [
            (&[][..], format!(".test.{ext}")),
            (&["--tag"][..], format!(".test.{ext}_tag")),
            (&["--little-endian"][..], format!(".test.le_{ext}")),
            (&["--tag", "--little-endian"][..], format!(".test.le_{ext}_tag")),
        ] {
            let got = s.run(t, &[os(&[h]), os(opts), test_files.clone()].concat(), b"");
            ok(&got, &name);
            s.put(&name, &got.out);
            made.push(name);
        }
    }
    let pick = |f: &dyn Fn(&str) -> bool| -> Vec<OsString> {
        let mut v: Vec<&String> = made.iter().filter(|n| f(n)).collect();
        v.sort();
        v.into_iter().map(OsString::from).collect()
    };
    ok(
        &s.run(t, &[os(&["-c"]), pick(&|n| n.starts_with(".test.xxh"))].concat(), b""),
        "-c .test.xxh*",
    );
    let le = pick(&|n| n.starts_with(".test.le_xxh"));
    ok(&s.run(t, &[os(&["-c", "--little-endian"]), le].concat(), b""), "-c --little-endian");
    ok(&s.run(t, &[os(&["-c"]), pick(&|n| n.ends_with("_tag"))].concat(), b""), "-c *_tag");
    // Checksum lists on stdin.
    let mut all = Vec::new();
    for ext in ["xxh32", "xxh64", "xxh128", "xxh3"] {
        let list = s.read(&format!(".test.{ext}"));
        ok(&s.run(t, &os(&["-c"]), &list), &format!("-c < .test.{ext}"));
    }
    for n in pick(&|n| n.starts_with(".test.xxh")) {
        all.extend(s.read(&n.to_string_lossy()));
    }
    ok(&s.run(t, &os(&["-c", "-"]), &all), "cat .test.xxh* | xxhsum -c -");
    // `*` as the second separator.
    let star: String = lossy(&s.read(".test.xxh32"))
        .lines()
        .map(|l| format!("{}\n", l.replacen("  ", " *", 1)))
        .collect();
    ok(&s.run(t, &os(&["-c"]), star.as_bytes()), "' *' separator");
    // BSD-style output names the algorithm; XXH3 is tagged even without --tag.
    for (args, tag) in [
        (&["--tag"][..], "XXH64"),
        (&["--tag", "-H0"], "XXH32"),
        (&["--tag", "-H1"], "XXH64"),
        (&["--tag", "-H2"], "XXH128"),
        (&["--tag", "-H3"], "XXH3"),
        (&["-H3"], "XXH3"),
        (&["--tag", "-H32"], "XXH32"),
        (&["--tag", "-H64"], "XXH64"),
        (&["--tag", "-H128"], "XXH128"),
        (&["--tag", "-H0", "--little-endian"], "XXH32_LE"),
        (&["--tag", "-H1", "--little-endian"], "XXH64_LE"),
        (&["--tag", "-H2", "--little-endian"], "XXH128_LE"),
        (&["-H3", "--little-endian"], "XXH3_LE"),
        (&["--tag", "-H32", "--little-endian"], "XXH32_LE"),
        (&["--tag", "-H64", "--little-endian"], "XXH64_LE"),
        (&["--tag", "-H128", "--little-endian"], "XXH128_LE"),
    ] {
        let got = s.run(t, &[os(args), test_files.clone()].concat(), b"");
        assert!(lossy(&got.out).lines().all(|l| l.starts_with(&format!("{tag} ("))), "{args:?}");
    }
    // BSD-style lines check.
    for args in [&["--tag"][..], &["--tag", "-H32", "--little-endian"]] {
        let sums = s.run(t, &[os(args), test_files.clone()].concat(), b"");
        ok(&s.run(t, &os(&["-c"]), &sums.out), &format!("{args:?} | xxhsum -c"));
    }
    // Improperly formatted lines are reported.
    for (file, line) in [(".test.xxh32", "12345678 \n"), (".test.xxh64", "123456789  file\n")] {
        let mut body = s.read(file);
        body.extend(line.as_bytes());
        s.put(file, &body);
        let got = s.run(t, &os(&["-c", file]), b"");
        assert!(lossy(&got.out).contains("improperly"), "{file}: {got:?}");
    }
    // FAILED, and FAILED open or read, exit 1.
    s.put("LICENSE", "license text\n");
    for line in [
        "0000000000000000  LICENSE\n",
        "00000000  LICENSE\n",
        "0000000000000000  test-expects-file-not-found\n",
        "00000000  test-expects-file-not-found\n",
    ] {
        assert_eq!(s.run(t, &os(&["-c", "-"]), line.as_bytes()).code, Some(1), "{line:?}");
    }
}

/// The Makefile's `check` target at v0.8.1 (the parts that are not the benchmark).
#[test]
fn xxhsum_make_check() {
    let s = Session::new();
    let t = "xxhsum";
    s.put("xxhash.c", "int main(void) { return 0; }\n");
    s.put("xxhash.h", "#define XXH 1\n");
    let src = s.read("xxhash.c");
    let got = s.run(t, &[], &src);
    assert_eq!(lossy(&got.out), format!("{}  stdin\n", digest_hex("xxh64", &src)));
    assert_eq!(s.run(t, &os(&["xxhash.c", "xxhash.h"]), b"").code, Some(0));
    let got = s.run(t, &os(&["-H0", "xxhash.c"]), b"");
    assert_eq!(lossy(&got.out), format!("{}  xxhash.c\n", digest_hex("xxh32", &src)));
    let got = s.run(t, &os(&["-H2", "xxhash.c"]), b"");
    assert_eq!(lossy(&got.out), format!("{}  xxhash.c\n", digest_hex("xxh128", &src)));
    let got = s.run(t, &os(&["-H3", "xxhash.c"]), b"");
    assert_eq!(lossy(&got.out), format!("XXH3 (xxhash.c) = {}\n", digest_hex("xxh3", &src)));
    assert_eq!(s.run(t, &os(&["-H9", "xxhash.c"]), b"").code, Some(1));
}

/// tests/cli-comment-line.sh (added after 0.8.1): a `#` comment line before the lines of
/// each algorithm. 0.8.1 has no comment syntax, but the line is only improperly formatted
/// (reported on stdout), so `--check` succeeds as the script requires.
#[test]
fn xxhsum_cli_comment_line_sh() {
    let s = Session::new();
    s.put("Makefile", "all:\n\techo xxhash\n");
    for h in [&[][..], &["-H32"], &["-H64"], &["-H128"]] {
        let sums = s.run("xxhsum", &[os(h), os(&["./Makefile"])].concat(), b"");
        s.put(".test.xxh", [&b"# Test comment line\n"[..], &sums.out].concat());
        let got = s.run("xxhsum", &os(&["--check", "./.test.xxh"]), b"");
        assert_eq!(got.code, Some(0), "{h:?}: {got:?}");
        assert_eq!(lossy(&got.out), "./Makefile: OK\n1 line is improperly formatted\n");
    }
}

/// tests/cli-ignore-missing.sh (added after 0.8.1), the steps without --ignore-missing
/// (an option of later versions, listed in docs/check.md): a good list passes, a list
/// naming a removed file fails.
#[test]
fn xxhsum_cli_ignore_missing_sh() {
    let s = Session::new();
    s.put("Makefile", "all:\n\techo xxhash\n");
    let sums = s.run("xxhsum", &os(&["./Makefile"]), b"");
    s.put(".test.xxh", &sums.out);
    assert_eq!(s.run("xxhsum", &os(&["--check", "./.test.xxh"]), b"").code, Some(0));
    s.put(".test.makefile", s.read("Makefile"));
    let sums = s.run("xxhsum", &os(&["./.test.makefile"]), b"");
    s.put(".test.xxh", &sums.out);
    std::fs::remove_file(s.dir.join(".test.makefile")).unwrap();
    let got = s.run("xxhsum", &os(&["--check", "./.test.xxh"]), b"");
    assert_ne!(got.code, Some(0), "{got:?}");
    // 0.8.1 reads `--ignore-missing` as short options and stops at its `g`.
    let got = s.run("xxhsum", &os(&["--check", "--ignore-missing", "./.test.xxh"]), b"");
    assert!(got.code == Some(1) && lossy(&got.err).starts_with("Wrong parameters"), "{got:?}");
}
