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

/// Builds examples/faultfs once per test run and returns its path.
fn faultfs_bin() -> &'static Result<PathBuf, String> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(|| crate::util::example("faultfs"))
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

/// The test tree: two faulty files (5 MiB, mapped by every algorithm's reader; 10 KiB,
/// read with a buffer) among good ones (small, and 300 KiB, mapped for BLAKE3).
fn source() -> (tempfile::TempDir, PathBuf) {
    let d = tempdir();
    let src = d.path().join("src");
    write(&src, "a.txt", b"alpha\n");
    write(&src, "big.bin", &bytes(5 * MIB, 1));
    write(&src, "mid.bin", &bytes(300 * 1024, 2));
    write(&src, "small.bin", &bytes(10 * 1024, 3));
    write(&src, "sub/z.txt", b"zulu\n");
    (d, src)
}

const FILES: &[&str] = &["a.txt", "big.bin", "mid.bin", "small.bin", "sub/z.txt"];
const EIO_RULES: &[&str] = &["big.bin=eio@4600K", "small.bin=eio@4K"];

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
        // The good files' lines, as from the intact tree.
        let argv: Vec<&str> = args.iter().chain(FILES).copied().collect();
        let good = fixity_in(&src, &argv);
        assert_exit(&good, 0, &format!("{} (intact tree)", argv.join(" ")));
        let expected = without(&text(&good.stdout), &["big.bin", "small.bin"]);
        for mmap in [&["--no-mmap"][..], &[][..]] {
            let argv: Vec<&str> = args.iter().chain(mmap).chain(FILES).copied().collect();
            let what = argv.join(" ");
            let out = fixity_in(m.path(), &argv);
            assert_exit(&out, 1, &what);
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
    let made =
        fixity_in(&src, &["hash", "-a", "sha256", "-r", ".", "-o", manifest.to_str().unwrap()]);
    assert_exit(&made, 0, "hash -o");
    let Some(mut m) = Mount::start(&src, EIO_RULES, false) else { return };
    // The known-hashes file for the audit, made through the mount while it is sound (the
    // same paths as the audit sees).
    let known = d.path().join("known.hashdeep");
    let made = fixity_in(
        m.path(),
        &[
            "hash",
            "--format",
            "hashdeep",
            "-a",
            "md5,sha256",
            "-r",
            ".",
            "-o",
            known.to_str().unwrap(),
        ],
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
        assert_eio_lines(
            &err,
            "fixity",
            &["./big.bin", "./small.bin"],
            &["WARNING: 2 listed files could not be read"],
            "check",
        );

        let mut argv = vec!["check", "--audit", "-k", known.to_str().unwrap()];
        argv.extend(mmap);
        let out = fixity_in(m.path(), &argv);
        assert_exit(&out, 1, "check --audit");
        let stdout = text(&out.stdout);
        for line in ["Files matched: 3", "Known files not found: 2", "Input files examined: 3"] {
            assert!(stdout.contains(line), "check --audit {mmap:?}: no {line:?} in:\n{stdout}");
        }
        assert_eio_lines(
            &text(&out.stderr),
            "fixity",
            &["./big.bin", "./small.bin"],
            &["Audit failed"],
            "check --audit",
        );
    }
}

#[test]
fn eio_scan_and_verify_report_the_file_and_keep_it() {
    let (d, src) = source();
    let catalog = d.path().join("catalog.db");
    let cat = catalog.to_str().unwrap();
    let Some(mut m) = Mount::start(&src, EIO_RULES, false) else { return };
    // Recorded while sound, then the two files fail.
    let out = fixity_in(m.path(), &["scan", "--catalog", cat, "."]);
    assert_exit(&out, 0, "scan (sound)");
    m.arm();
    let unreadable =
        "unreadable  big.bin: Input/output error\nunreadable  small.bin: Input/output error\n";
    // Every verify reports them again: the run is not left interrupted by a signal.
    for round in 0..2 {
        for mmap in [&["--no-mmap"][..], &[][..]] {
            let mut argv = vec!["verify", "--storage", "ssd", "--catalog", cat];
            argv.extend(mmap);
            argv.push(".");
            let out = fixity_in(m.path(), &argv);
            let what = format!("verify {mmap:?} (round {round})");
            assert_exit(&out, 1, &what);
            assert_eq!(
                untimed(&text(&out.stdout)),
                format!(
                    "{unreadable}verify .: 3 files read (300.0 KiB)\n\
                     ok 3, modified 0, CORRUPT 0, missing 0, new 0, moved 0, unreadable 2\n"
                ),
                "{what}: stdout"
            );
            assert_eq!(text(&out.stderr), "", "{what}: stderr");
        }
    }
    // A scan that meets them says so too, and records the good files.
    let fresh = d.path().join("fresh.db");
    for mmap in [&["--no-mmap"][..], &[][..]] {
        let _ = std::fs::remove_file(&fresh);
        let mut argv = vec!["scan", "--catalog", fresh.to_str().unwrap()];
        argv.extend(mmap);
        argv.push(".");
        let out = fixity_in(m.path(), &argv);
        let what = format!("scan {mmap:?}");
        assert_exit(&out, 1, &what);
        assert_eq!(
            untimed(&text(&out.stdout)),
            "unreadable  big.bin: Input/output error\n\
             unreadable  small.bin: Input/output error\n\
             scan .: 3 files read (300.0 KiB)\n\
             ok 0, modified 0, CORRUPT 0, missing 0, new 3, moved 0, unreadable 2\n",
            "{what}: stdout"
        );
    }
}

/// A file that fails with EIO while its set is re-made is a finding (reported, recorded)
/// and the old set, which holds its good content, is kept as it was; protect exits 1.
#[test]
fn eio_while_protecting_keeps_the_set_that_can_repair_the_file() {
    let (d, src) = source();
    let catalog = d.path().join("catalog.db");
    let cat = catalog.to_str().unwrap();
    let p2 = d.path().join("p2");
    let p2s = p2.to_str().unwrap();
    let Some(mut m) = Mount::start(&src, EIO_RULES, false) else { return };
    assert_exit(&fixity_in(m.path(), &["scan", "--catalog", cat, "."]), 0, "scan");
    let out = fixity_in(m.path(), &["protect", "-q", "--catalog", cat, "--par2-dir", p2s, "."]);
    assert_exit(&out, 0, "protect (sound)");
    let listing = |dir: &Path| {
        let mut v: Vec<(std::ffi::OsString, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
            .collect();
        v.sort();
        v
    };
    // The set out of step with the catalog (as after an edit a scan recorded): its
    // sidecar says another mtime for a.txt, so protect re-makes it, reading big.bin.
    let side = std::fs::read_dir(&p2)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "fixity"))
        .unwrap();
    let text_of = std::fs::read_to_string(&side).unwrap();
    let stale: String = text_of
        .lines()
        .map(|l| {
            // SIZE MTIME DIGEST SPARSE ACCESS PATH
            let f: Vec<&str> = l.splitn(6, ' ').collect();
            if f.len() == 6 && f[5] == "a.txt" {
                format!("{} 1 {} {} {} a.txt\n", f[0], f[2], f[3], f[4])
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert_ne!(stale, text_of);
    std::fs::write(&side, stale).unwrap();
    let before = listing(&p2);
    m.arm();
    let out = fixity_in(m.path(), &["protect", "--catalog", cat, "--par2-dir", p2s, "."]);
    assert_exit(&out, 1, "protect (EIO)");
    let stdout = text(&out.stdout);
    // The first faulty file met (small.bin's head, or big.bin at 4600K) stops the set.
    let eio = |name: &str| format!("left out    {name}: unreadable: Input/output error");
    assert!(stdout.contains(&eio("small.bin")) || stdout.contains(&eio("big.bin")), "{stdout}");
    assert!(stdout.contains(": a file in it is unreadable"), "{stdout}");
    assert_eq!(listing(&p2), before, "the old set is kept as it was");
    // The finding is recorded: verify reports it (the small one is met there too).
    let out = fixity_in(m.path(), &["verify", "--catalog", cat, "--par2-dir", p2s, "."]);
    assert_exit(&out, 1, "verify");
    assert!(text(&out.stdout).contains("unreadable  small.bin: Input/output error"));
}

#[test]
fn eio_bag_check_reports_the_payload_file() {
    let (_d, src) = source();
    let bag = src.parent().unwrap().join("bag");
    std::fs::create_dir(&bag).unwrap();
    for f in FILES {
        write(&bag, f, &std::fs::read(src.join(f)).unwrap());
    }
    let made = fixity_in(&bag, &["bag", "create", "-a", "sha256", "."]);
    assert_exit(&made, 0, "bag create");
    let sound = fixity_in(&bag, &["bag", "check", "."]);
    assert_exit(&sound, 0, "bag check (sound)");
    let rules = ["data/big.bin=eio@4600K", "data/small.bin=eio@4K"];
    let Some(m) = Mount::start(&bag, &rules, true) else { return };
    for mmap in [&["--no-mmap"][..], &[][..]] {
        let mut argv = vec!["bag", "check"];
        argv.extend(mmap);
        argv.push(".");
        let out = fixity_in(m.path(), &argv);
        let what = format!("bag check {mmap:?}");
        assert_exit(&out, 1, &what);
        // Each faulty payload file, named with its manifest line and its error; the good
        // ones pass; the verdict counts the two.
        assert_eq!(text(&out.stdout), ".: invalid (2 problems)\n", "{what}: stdout");
        assert_eq!(
            text(&out.stderr),
            "fixity: ./manifest-sha256.txt: 2: data/big.bin: Input/output error\n\
             fixity: ./manifest-sha256.txt: 4: data/small.bin: Input/output error\n",
            "{what}: stderr"
        );
    }
}

/// A directory of links named like the drop-in tools, pointing to the fixity binary.
fn links(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    for tool in ["sha256sum", "md5sum", "b3sum", "xxhsum", "cksum"] {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), bin.join(tool)).unwrap();
    }
    bin
}

/// Runs `program` in `dir` with argv[0] `name` (diagnostics start with it).
fn run_as(program: &Path, name: &str, dir: &Path, args: &[&str]) -> Output {
    crate::util::run_as_tool(program, name, dir, args, b"")
}

/// [`run_as`] with the storage policy named (`FIXITY_STORAGE`, the drop-ins' only way to
/// name one), as the fixity runs beside it name `--storage`.
fn run_pinned(program: &Path, name: &str, dir: &Path, args: &[&str], storage: &str) -> Output {
    let mut cmd = crate::util::as_tool(program, name, dir, args);
    cmd.env("FIXITY_STORAGE", storage).output().expect("run the drop-in")
}

fn which(tool: &str) -> PathBuf {
    crate::util::which(tool).expect("on PATH")
}

/// Asserts that `ours` printed and exited exactly as the real `tool` run with `args` in
/// `dir` (when it is installed).
#[track_caller]
/// The XXH64 digests (as xxhsum prints them) of every prefix of `data` whose length is
/// a multiple of `step` from `from` bytes on, the whole of `data` included.
fn xxh64_of_prefixes(data: &[u8], from: usize, step: usize) -> std::collections::HashSet<String> {
    let mut h = xxhash_rust::xxh64::Xxh64::new(0);
    let mut at = 0;
    let mut all = std::collections::HashSet::new();
    for end in (from..=data.len()).step_by(step).chain([data.len()]) {
        h.update(&data[at..end]);
        at = end;
        all.insert(format!("{:016x}", h.digest()));
    }
    all
}

fn assert_same_as_real(ours: &Output, tool: &str, dir: &Path, args: &[&str], what: &str) {
    if !have(tool) {
        missing(&format!("fault cross-check with {tool}"), "the real tool is not installed");
        return;
    }
    let real = run_as(&which(tool), tool, dir, args);
    assert!(real.status.code().is_some(), "{what}: the real {tool} died: {}", real.status);
    assert_eq!(
        (text(&ours.stdout), text(&ours.stderr), ours.status.code()),
        (text(&real.stdout), text(&real.stderr), real.status.code()),
        "{what}: the drop-in (left) and the real tool (right)"
    );
}

#[test]
fn eio_dropins_report_the_file_and_go_on() {
    let (d, src) = source();
    let bin = links(d.path());
    let Some(m) = Mount::start(&src, EIO_RULES, true) else { return };
    let faulty = ["big.bin", "small.bin"];
    let good_lines = |tool: &str, args: &[&str]| {
        let good = run_as(&bin.join(tool), tool, &src, args);
        assert_exit(&good, 0, &format!("{tool} on the intact tree"));
        without(&text(&good.stdout), &faulty)
    };
    // Tools that read with read(2): the drop-in matches them byte for byte.
    for tool in ["sha256sum", "md5sum", "xxhsum"] {
        let ours = run_as(&bin.join(tool), tool, m.path(), FILES);
        assert_exit(&ours, 1, tool);
        if tool == "xxhsum" {
            // xxhsum 0.8.1 stops at the first file it cannot read, with a message that
            // names no file (the comparison with the real one below covers it).
            assert_eq!(text(&ours.stdout), good_lines(tool, &FILES[..1]), "{tool}: stdout");
        } else {
            assert_eq!(text(&ours.stdout), good_lines(tool, FILES), "{tool}: stdout");
            assert_eio_lines(&text(&ours.stderr), tool, &faulty, &[], tool);
        }
        assert_same_as_real(&ours, tool, m.path(), FILES, tool);
    }
    // b3sum maps large files, and the real one dies of SIGBUS here; the drop-in reads them
    // and reports as `b3sum --no-mmap` does.
    for extra in [&[][..], &["--no-mmap"][..]] {
        let args: Vec<&str> = extra.iter().chain(FILES).copied().collect();
        let what = format!("b3sum {extra:?}");
        let ours = run_as(&bin.join("b3sum"), "b3sum", m.path(), &args);
        assert_exit(&ours, 1, &what);
        assert_eq!(text(&ours.stdout), good_lines("b3sum", FILES), "{what}: stdout");
        assert_eq!(
            text(&ours.stderr),
            "b3sum: big.bin: Input/output error (os error 5)\n\
             b3sum: small.bin: Input/output error (os error 5)\n",
            "{what}: stderr"
        );
        let mut real_args = vec!["--no-mmap"];
        real_args.extend(FILES);
        assert_same_as_real(&ours, "b3sum", m.path(), &real_args, &what);
    }
    // coreutils 9.1's cksum prints a CRC of the bytes before the error and exits 0; the
    // drop-in reports the error instead (a deliberate difference: a fault is never silent).
    let ours = run_as(&bin.join("cksum"), "cksum", m.path(), FILES);
    assert_exit(&ours, 1, "cksum");
    assert_eq!(text(&ours.stdout), good_lines("cksum", FILES), "cksum: stdout");
    assert_eio_lines(&text(&ours.stderr), "cksum", &faulty, &[], "cksum");

    // Check mode, with manifests made on the intact tree.
    let checks: &[(&str, &[&str])] = &[
        ("sha256sum", &[]),
        ("md5sum", &[]),
        ("b3sum", &[]),
        ("xxhsum", &[]),
        ("cksum", &["-a", "sha256"]),
    ];
    for (tool, make) in checks {
        let manifest = d.path().join(format!("{tool}-manifest"));
        let make: Vec<&str> = make.iter().chain(FILES).copied().collect();
        std::fs::write(&manifest, run_as(&bin.join(tool), tool, &src, &make).stdout).unwrap();
        let args = ["-c", manifest.to_str().unwrap()];
        let ours = run_as(&bin.join(tool), tool, m.path(), &args);
        let what = format!("{tool} -c");
        assert_exit(&ours, 1, &what);
        let stdout = text(&ours.stdout);
        if *tool == "xxhsum" {
            // xxhsum 0.8.1 stops at the first file it cannot read.
            assert_eq!(stdout, "a.txt: OK\n", "{what}: stdout");
        } else if *tool == "b3sum" {
            assert_eq!(
                stdout,
                "a.txt: OK\nbig.bin: FAILED (Input/output error (os error 5))\nmid.bin: OK\n\
                 small.bin: FAILED (Input/output error (os error 5))\nsub/z.txt: OK\n",
                "{what}: stdout"
            );
        } else {
            assert_eq!(
                stdout,
                "a.txt: OK\nbig.bin: FAILED open or read\nmid.bin: OK\n\
                 small.bin: FAILED open or read\nsub/z.txt: OK\n",
                "{what}: stdout"
            );
        }
        if *tool == "b3sum" {
            // The real b3sum maps the files it checks and dies here: compare with
            // `b3sum --no-mmap -c`.
            let mut real_args = vec!["--no-mmap"];
            real_args.extend(args);
            assert_same_as_real(&ours, tool, m.path(), &real_args, &what);
        } else {
            assert_same_as_real(&ours, tool, m.path(), &args, &what);
        }
    }
}

#[test]
fn files_that_shrink_or_grow_while_read_are_reported() {
    let d = tempdir();
    let src = d.path().join("src");
    write(&src, "a.txt", b"alpha\n");
    write(&src, "shrink.bin", &bytes(5 * MIB, 4));
    write(&src, "grow.bin", &bytes(300 * 1024, 5));
    let rules = ["shrink.bin=shrink@4600K:2M", "grow.bin=grow@200K:400K"];
    let files = ["a.txt", "grow.bin", "shrink.bin"];
    let changed = |prog: &str| {
        format!(
            "{prog}: grow.bin: file changed while it was being read\n\
             {prog}: shrink.bin: file changed while it was being read\n"
        )
    };
    let bin = links(d.path());
    let Some(mut m) = Mount::start(&src, &rules, false) else { return };
    // Recorded while they hold still.
    let catalog = d.path().join("catalog.db");
    let cat = catalog.to_str().unwrap();
    assert_exit(&fixity_in(m.path(), &["scan", "--catalog", cat, "."]), 0, "scan (still)");
    let sorted = |s: String| {
        let mut l: Vec<&str> = s.lines().collect();
        l.sort();
        l.join("\n") + "\n"
    };
    // The fault file system changes a file when a read reaches an offset; the storage
    // probe (`--storage auto`) reads blocks at scattered offsets of the largest files, which
    // would set the change off before the run reads the file (or not: the probe runs on
    // the first read that waits for the device, beside the other files' opens). The runs
    // below name the policy (both: one reader at a time, and many; the drop-ins through
    // FIXITY_STORAGE) so that only their own reads meet the faults.
    for args in [
        &["hash", "--storage", "ssd"][..],
        &["hash", "--storage", "ssd", "-a", "sha256"],
        &["hash", "--storage", "ssd", "--no-mmap"],
        &["hash", "--storage", "hdd"],
    ] {
        let argv: Vec<&str> = args.iter().chain(&files).copied().collect();
        let what = argv.join(" ");
        m.arm();
        let out = fixity_in(m.path(), &argv);
        assert_exit(&out, 1, &what);
        let good = fixity_in(&src, &argv);
        assert_eq!(text(&out.stdout), without(&text(&good.stdout), &files[1..]), "{what}");
        assert_eq!(sorted(text(&out.stderr)), changed("fixity"), "{what}: stderr");
    }
    // Verify, against the catalog: unreadable on every run, the record kept.
    for round in 0..2 {
        for mmap in [&["--no-mmap"][..], &[][..]] {
            let mut argv = vec!["verify", "--storage", "ssd", "--catalog", cat];
            argv.extend(mmap);
            argv.push(".");
            let what = format!("verify {mmap:?} (round {round})");
            m.arm();
            let out = fixity_in(m.path(), &argv);
            assert_exit(&out, 1, &what);
            assert_eq!(
                untimed(&text(&out.stdout)),
                "unreadable  grow.bin: file changed while it was being read\n\
                 unreadable  shrink.bin: file changed while it was being read\n\
                 verify .: 1 file read (6 B)\n\
                 ok 1, modified 0, CORRUPT 0, missing 0, new 0, moved 0, unreadable 2\n",
                "{what}: stdout"
            );
            assert_eq!(text(&out.stderr), "", "{what}: stderr");
        }
    }
    // Check, against a manifest of the files as they were.
    let manifest = d.path().join("m.sha256");
    let argv: Vec<&str> = ["hash", "-a", "sha256"].into_iter().chain(files).collect();
    std::fs::write(&manifest, fixity_in(&src, &argv).stdout).unwrap();
    m.arm();
    let out = fixity_in(m.path(), &["check", "--storage", "ssd", manifest.to_str().unwrap()]);
    assert_exit(&out, 1, "check");
    assert_eq!(
        text(&out.stdout),
        "a.txt: OK\ngrow.bin: FAILED open or read\nshrink.bin: FAILED open or read\n",
        "check: stdout"
    );
    let err = text(&out.stderr);
    assert!(err.starts_with(&changed("fixity")), "check: stderr:\n{err}");

    // coreutils' tools hash whatever they read until the end of the file and exit 0; the
    // drop-ins report the change (a deliberate difference: the digest is of no version the
    // file ever had when it grew or shrank under the reader).
    for tool in ["sha256sum", "md5sum", "cksum"] {
        m.arm();
        let ours = run_pinned(&bin.join(tool), tool, m.path(), &files, "ssd");
        assert_exit(&ours, 1, tool);
        let good = run_as(&bin.join(tool), tool, &src, &["a.txt"]);
        assert_eq!(text(&ours.stdout), text(&good.stdout), "{tool}: stdout");
        assert_eq!(sorted(text(&ours.stderr)), changed(tool), "{tool}: stderr");
    }
    // xxhsum prints a digest of what it read, as the real one does. How much of
    // shrink.bin each reads before the shrink is the kernel's doing, not the tool's: the
    // read request that meets the fault is one of the kernel's readahead windows, whose
    // size and place follow the reader's request sizes and how far ahead the readahead
    // had got. So for shrink.bin both must print the XXH64 of a prefix of its content,
    // in whole pages, no shorter than what the file shrank to and no longer than it was
    // (a digest of something the file held); every other line alike, byte for byte.
    m.arm();
    let ours = run_pinned(&bin.join("xxhsum"), "xxhsum", m.path(), &files, "ssd");
    assert_exit(&ours, 0, "xxhsum");
    let shrunk = bytes(5 * MIB, 4);
    let prefixes = xxh64_of_prefixes(&shrunk, 2 * MIB, 4096);
    let of_a_prefix = |out: &str, who: &str| {
        let line = out.lines().find(|l| l.ends_with("  shrink.bin")).expect("a shrink.bin line");
        let digest = line.trim_end_matches("  shrink.bin");
        assert!(prefixes.contains(digest), "{who}: shrink.bin {digest} is of no prefix");
        without(out, &["shrink.bin"])
    };
    let ours_rest = of_a_prefix(&text(&ours.stdout), "the drop-in");
    if !have("xxhsum") {
        missing("fault cross-check with xxhsum", "the real tool is not installed");
    } else {
        m.arm();
        let real = run_as(&which("xxhsum"), "xxhsum", m.path(), &files);
        assert_eq!(real.status.code(), Some(0), "the real xxhsum: {}", text(&real.stderr));
        assert_eq!(text(&ours.stderr), text(&real.stderr), "xxhsum: stderr");
        assert_eq!(ours_rest, of_a_prefix(&text(&real.stdout), "the real xxhsum"), "xxhsum");
    }
    // b3sum maps a large file as the real one does, so a file that grows is hashed at the
    // length it had when opened, exactly as the real b3sum hashes it; where the real one
    // dies of SIGBUS (the file shrank under its map), the drop-in reads the file again and
    // prints the digest of what is there now, as `b3sum --no-mmap` of it does.
    m.arm();
    let ours = run_as(&bin.join("b3sum"), "b3sum", m.path(), &files);
    assert_exit(&ours, 0, "b3sum");
    assert_eq!(text(&ours.stderr), "", "b3sum: stderr");
    let line = |name: &str| {
        text(&ours.stdout).lines().find(|l| l.ends_with(name)).unwrap().to_string() + "\n"
    };
    if !have("b3sum") {
        missing("fault cross-check with b3sum", "the real tool is not installed");
        return;
    }
    let mount = m.path().to_path_buf();
    let real = |args: &[&str]| text(&run_as(&which("b3sum"), "b3sum", &mount, args).stdout);
    assert_eq!(line("shrink.bin"), real(&["--no-mmap", "shrink.bin"]), "b3sum: shrink.bin");
    assert_eq!(line("a.txt"), real(&["a.txt"]), "b3sum: a.txt");
    m.arm();
    assert_eq!(line("grow.bin"), real(&["grow.bin"]), "b3sum: grow.bin");
}

#[test]
fn a_stalled_read_completes_with_the_right_digest() {
    let (_d, src) = source();
    let rules = ["big.bin=stall@4600K:1500", "small.bin=stall@8K:1500"];
    let Some(m) = Mount::start(&src, &rules, true) else { return };
    for args in [&["hash", "-a", "sha256"][..], &["hash"]] {
        let argv: Vec<&str> = args.iter().chain(FILES).copied().collect();
        let what = argv.join(" ");
        let start = Instant::now();
        let out = fixity_in(m.path(), &argv);
        let took = start.elapsed();
        assert_exit(&out, 0, &what);
        assert!(took >= Duration::from_millis(1500), "{what}: no stall ({took:?})");
        assert_eq!(out.stdout, fixity_in(&src, &argv).stdout, "{what}: stdout");
        assert_eq!(text(&out.stderr), "", "{what}: stderr");
    }
}

/// The catalog deleted while a scan is under way (here, while it waits on a stalled read,
/// so the deletion always falls inside the run) is an error, exit 2, never a clean run.
#[test]
fn a_catalog_deleted_during_a_stalled_scan_is_an_error() {
    let (_d, src) = source();
    let Some(m) = Mount::start(&src, &["big.bin=stall@0:2500"], true) else { return };
    let state = tempdir();
    let catalog = state.path().join("c.db");
    let child = crate::util::fixity(m.path())
        .args(["scan", "-q", "-j", "1", "--catalog"])
        .arg(&catalog)
        .arg(".")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !catalog.exists() && start.elapsed() < Duration::from_millis(2000) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(catalog.exists(), "the scan made no catalog within 2 s");
    std::thread::sleep(Duration::from_millis(200));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(state.path().join(format!("c.db{suffix}")));
    }
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() >= Duration::from_millis(1500), "the read did not stall");
    assert_exit(&out, 2, "scan with its catalog deleted");
    let err = text(&out.stderr);
    assert!(err.contains("was deleted or replaced during the run"), "{err}");
}
