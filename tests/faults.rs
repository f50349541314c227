//! Storage faults: files served by the fault-injection file system (examples/faultfs.rs,
//! mounted with FUSE by these tests) fail with EIO at an offset, shrink or grow while they
//! are read, or stall. Every command must report such a file as a per-file error, go on
//! with the others, exit 1, and never die of a signal (a memory-mapped page whose read
//! fails raises SIGBUS). How it works and how to run it: docs/testing.md.

use crate::util::{have, missing, tempdir, write};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const WHAT: &str = "fault-injection FUSE";

/// Builds examples/faultfs once per test run (a no-op when `cargo test --all-targets`
/// built it already) and returns its path, beside this test binary's profile directory.
fn faultfs_bin() -> &'static Result<PathBuf, String> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        // target/PROFILE/deps/integration-HASH
        let profile_dir = exe.parent().and_then(Path::parent).ok_or("no profile directory")?;
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let out = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--example", "faultfs", "--profile", profile])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .map_err(|e| format!("running cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cargo build --example faultfs failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(profile_dir.join("examples").join("faultfs"))
    })
}

/// A mounted faultfs: unmounted, and its process ended, when dropped.
struct Mount {
    child: Child,
    acks: BufReader<ChildStdout>,
    root: PathBuf,
    _dir: tempfile::TempDir,
}

impl Mount {
    /// Mounts the tree `source` with the rules `PATH=SPEC` (see examples/faultfs.rs),
    /// armed or not. `None` (after saying why, which fails in CI) when FUSE cannot be used.
    fn start(source: &Path, rules: &[&str], armed: bool) -> Option<Mount> {
        if !Path::new("/dev/fuse").exists() {
            missing(WHAT, "/dev/fuse does not exist (load the fuse module)");
            return None;
        }
        if !is_root() && !have("fusermount3") {
            missing(WHAT, "fusermount3 is not installed (Debian package fuse3)");
            return None;
        }
        let bin = match faultfs_bin() {
            Ok(b) => b,
            Err(e) => panic!("{e}"),
        };
        let dir = tempdir();
        let root = dir.path().join("mnt");
        std::fs::create_dir(&root).unwrap();
        let mut cmd = Command::new(bin);
        cmd.arg("--source").arg(source);
        if !armed {
            cmd.arg("--disarmed");
        }
        cmd.arg(&root).args(rules).stdin(Stdio::null()).stdout(Stdio::piped());
        cmd.stderr(Stdio::piped());
        // If this test process dies, the file system unmounts itself (it handles SIGTERM).
        // SAFETY: prctl is async-signal-safe and touches only this process.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let mut child = cmd.spawn().expect("spawn faultfs");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !is_mounted(&root) {
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                use std::io::Read;
                child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
                missing(WHAT, &format!("faultfs could not mount ({status}): {}", err.trim()));
                return None;
            }
            assert!(Instant::now() < deadline, "faultfs did not mount within 10 s");
            std::thread::sleep(Duration::from_millis(10));
        }
        let acks = BufReader::new(child.stdout.take().unwrap());
        Some(Mount { child, acks, root, _dir: dir })
    }

    /// Arms the faults (and puts shrunk or grown files back to their size), once faultfs
    /// says so.
    fn arm(&mut self) {
        self.signal(libc::SIGUSR1, "armed");
    }

    fn signal(&mut self, sig: i32, ack: &str) {
        // SAFETY: kill on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
        let mut line = String::new();
        self.acks.read_line(&mut line).unwrap();
        assert_eq!(line.trim_end(), ack, "faultfs's acknowledgement");
    }

    fn path(&self) -> &Path {
        &self.root
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let unmount = |args: &[&str]| {
            let tool = if have("fusermount3") { "fusermount3" } else { "umount" };
            let args: &[&str] = if tool == "umount" { &args[1..] } else { args };
            Command::new(tool)
                .args(args)
                .arg(&self.root)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        // Lazily when something still holds it.
        if !unmount(&["-u"]) {
            unmount(&["-uz", "-l"]);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.child.try_wait().ok().flatten().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Whether `path` is a mount point, from /proc/self/mountinfo (field 5; spaces and a few
/// other bytes are written as octal escapes there, and the test paths have none).
fn is_mounted(path: &Path) -> bool {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let want = path.to_str().unwrap();
    info.lines().any(|l| l.split(' ').nth(4) == Some(want))
}

/// Deterministic bytes that compress badly (an xorshift stream).
fn bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(n);
    v
}

const MIB: usize = 1024 * 1024;

/// The test tree: two faulty files (8 MiB, mapped by every algorithm's reader; 10 KiB,
/// read with a buffer) among good ones (small, and 300 KiB, mapped for BLAKE3).
fn source() -> (tempfile::TempDir, PathBuf) {
    let d = tempdir();
    let src = d.path().join("src");
    write(&src, "a.txt", b"alpha\n");
    write(&src, "big.bin", &bytes(8 * MIB, 1));
    write(&src, "mid.bin", &bytes(300 * 1024, 2));
    write(&src, "small.bin", &bytes(10 * 1024, 3));
    write(&src, "sub/z.txt", b"zulu\n");
    (d, src)
}

const FILES: &[&str] = &["a.txt", "big.bin", "mid.bin", "small.bin", "sub/z.txt"];
const EIO_RULES: &[&str] = &["big.bin=eio@5M", "small.bin=eio@4K"];

fn fixity_in(dir: &Path, args: &[&str]) -> Output {
    crate::util::run(dir, args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Asserts that `out` ended by itself with `code`, showing everything when not.
#[track_caller]
fn assert_exit(out: &Output, code: i32, what: &str) {
    assert!(
        out.status.code().is_some(),
        "{what}: killed by a signal ({}); stdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: exit status; stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// The lines of `s` that mention none of `names`.
fn without(s: &str, names: &[&str]) -> String {
    s.lines().filter(|l| !names.iter().any(|n| l.contains(n))).map(|l| format!("{l}\n")).collect()
}

/// `s` with its timing figures ("in 0.0 s, 9.3 MiB/s") cut, for comparing summaries.
fn untimed(s: &str) -> String {
    s.lines().map(|l| format!("{}\n", l.split(" in ").next().unwrap())).collect()
}

/// Asserts the stderr of a run over the faulty tree: exactly one line per faulty file,
/// `PREFIX: NAME: Input/output error`, and `extra` lines allowed besides.
#[track_caller]
fn assert_eio_lines(stderr: &str, prefix: &str, names: &[&str], extra: &[&str], what: &str) {
    for n in names {
        let line = format!("{prefix}: {n}: Input/output error");
        assert_eq!(
            stderr.lines().filter(|l| *l == line).count(),
            1,
            "{what}: expected one line {line:?} in stderr:\n{stderr}"
        );
    }
    for l in stderr.lines() {
        assert!(
            l.ends_with(": Input/output error") || extra.iter().any(|e| l.contains(e)),
            "{what}: unexpected stderr line {l:?} in:\n{stderr}"
        );
    }
}

#[test]
fn eio_hash_reports_the_file_and_goes_on() {
    let (_d, src) = source();
    let Some(m) = Mount::start(&src, EIO_RULES, true) else { return };
    let cases: &[&[&str]] = &[
        &["hash"],
        &["hash", "-a", "sha256"],
        &["hash", "-a", "md5,sha256"],
        &["hash", "-a", "xxh3"],
    ];
    for args in cases {
        for mmap in [&["--no-mmap"][..], &[][..]] {
            let argv: Vec<&str> = args.iter().chain(mmap).chain(FILES).copied().collect();
            let what = argv.join(" ");
            let out = fixity_in(m.path(), &argv);
            assert_exit(&out, 1, &what);
            // The good files' lines, as from the intact tree.
            let good = fixity_in(&src, &argv);
            assert_exit(&good, 0, &format!("{what} (intact tree)"));
            let expected = without(&text(&good.stdout), &["big.bin", "small.bin"]);
            assert_eq!(text(&out.stdout), expected, "{what}: stdout");
            assert_eio_lines(&text(&out.stderr), "fixity", &["big.bin", "small.bin"], &[], &what);
        }
    }
    // A walked tree.
    let out = fixity_in(m.path(), &["hash", "-r", "."]);
    assert_exit(&out, 1, "hash -r");
    let good = fixity_in(&src, &["hash", "-r", "."]);
    let expected = without(&text(&good.stdout), &["big.bin", "small.bin"]);
    assert_eq!(text(&out.stdout), expected, "hash -r: stdout");
    assert_eio_lines(&text(&out.stderr), "fixity", &["./big.bin", "./small.bin"], &[], "hash -r");
}

#[test]
fn eio_check_and_audit_report_the_file_and_go_on() {
    let (d, src) = source();
    let manifest = d.path().join("m.sha256");
    let made = fixity_in(&src, &["hash", "-a", "sha256", "-r", ".", "-o", manifest.to_str().unwrap()]);
    assert_exit(&made, 0, "hash -o");
    let Some(mut m) = Mount::start(&src, EIO_RULES, false) else { return };
    // The known-hashes file for the audit, made through the mount while it is sound (the
    // same paths as the audit sees).
    let known = d.path().join("known.hashdeep");
    let made = fixity_in(
        m.path(),
        &["hash", "--format", "hashdeep", "-a", "md5,sha256", "-r", ".", "-o", known.to_str().unwrap()],
    );
    assert_exit(&made, 0, "hash --format hashdeep");
    m.arm();

    for mmap in [&["--no-mmap"][..], &[][..]] {
        let mut argv = vec!["check"];
        argv.extend(mmap);
        argv.push(manifest.to_str().unwrap());
        let out = fixity_in(m.path(), &argv);
        assert_exit(&out, 1, "check");
        assert_eq!(
            text(&out.stdout),
            "./a.txt: OK\n./big.bin: FAILED open or read\n./mid.bin: OK\n\
             ./small.bin: FAILED open or read\n./sub/z.txt: OK\n",
            "check {mmap:?}: stdout"
        );
        let err = text(&out.stderr);
        assert_eio_lines(&err, "fixity", &["./big.bin", "./small.bin"], &["WARNING: 2 listed files could not be read"], "check");

        let mut argv = vec!["check", "--audit", "-k", known.to_str().unwrap()];
        argv.extend(mmap);
        let out = fixity_in(m.path(), &argv);
        assert_exit(&out, 1, "check --audit");
        let stdout = text(&out.stdout);
        for line in ["Files matched: 3", "Known files not found: 2", "Input files examined: 3"] {
            assert!(stdout.contains(line), "check --audit {mmap:?}: no {line:?} in:\n{stdout}");
        }
        assert_eio_lines(&text(&out.stderr), "fixity", &["./big.bin", "./small.bin"], &["Audit failed"], "check --audit");
    }
}
