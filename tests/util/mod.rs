//! Helpers shared by the integration tests: run the real `fixity` binary in a temp dir.

#![allow(dead_code)]

pub mod pg;
pub mod serve;
pub mod webdriver;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A `Command` for the built `fixity` binary, run in `dir`.
pub fn fixity(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fixity"));
    cmd.current_dir(dir).env("LC_ALL", "C").stdin(Stdio::null());
    // Most tests stand for bitrot by writing a file and putting its mtime back, which is
    // an edit the ctime tells apart (CHANGED): they run with ctimes not trusted, the rule
    // of size and mtime alone (as on FUSE). tests/edits.rs runs with them trusted, and
    // stands for rot by changing bytes beneath the file system.
    cmd.env("FIXITY_CTIME", CTIME_IGNORED);
    // The test cluster's password, as libpq's password file (see pg.rs).
    if let Some(passfile) = pg::passfile() {
        cmd.env("PGPASSFILE", passfile);
    }
    cmd
}

/// What [`fixity`] sets `FIXITY_CTIME` to (see there).
pub const CTIME_IGNORED: &str = "ignore";

/// Runs `fixity ARGS` in `dir` and returns its output.
pub fn run<I, S>(dir: &Path, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    fixity(dir).args(args).output().expect("run fixity")
}

/// Runs `fixity ARGS` with `input` on stdin.
pub fn run_stdin<I, S>(dir: &Path, args: I, input: &[u8]) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    use std::io::Write;
    let mut child = fixity(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fixity");
    // A run that does not read its input may have ended before it is written.
    if let Err(e) = child.stdin.take().unwrap().write_all(input) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "writing stdin: {e}");
    }
    child.wait_with_output().expect("wait fixity")
}

/// Whether an external tool is on PATH.
pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool} >/dev/null 2>&1"))
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Prints a visible "skipped: WHAT: WHY" line. It is written to the process's real stderr,
/// past the test harness's capture, so a person running `cargo test` sees it in the summary
/// and not only with `--nocapture`.
pub fn skip(what: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {what}: {why}");
}

/// Whether peers and services must be present: in CI (`CI=true`, or
/// `FIXITY_REQUIRE_PEERS=1` as `.ci/run` sets) a test whose peer is missing fails.
pub fn peers_required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
        || std::env::var("FIXITY_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

/// A peer tool or service the test needs is missing: in CI the test fails naming it;
/// elsewhere it prints "skipped: WHAT: WHY" where a person sees it and the test returns.
pub fn missing(what: &str, why: &str) {
    if peers_required() {
        panic!("{what}: {why} (CI requires every peer and service; see .ci/run)");
    }
    skip(what, why);
}

/// Writes `data` to `dir/rel`, creating parent directories.
pub fn write(dir: &Path, rel: impl AsRef<Path>, data: &[u8]) -> PathBuf {
    let p = dir.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, data).unwrap();
    p
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// A command that runs `fixity` as the unprivileged user `nobody` when the tests run as
/// root (a root process reads files whatever their mode), or as is otherwise. `None`
/// when that cannot be arranged here. As root, the tree at `dir` is handed to nobody.
pub fn unprivileged(dir: &Path) -> Option<Command> {
    let probe = std::fs::read("/proc/self/status").ok()?;
    let root = String::from_utf8_lossy(&probe)
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    if !root {
        return Some(fixity(dir));
    }
    if !have("setpriv") {
        return None;
    }
    let mut c = Command::new("setpriv");
    c.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_fixity"))
        .current_dir(dir)
        .env("LC_ALL", "C")
        .env("FIXITY_CTIME", CTIME_IGNORED);
    // nobody cannot read the test cluster's password file (root's, mode 0600): the
    // password goes in the environment, which only the process's owner can read.
    if pg::passfile().is_some() {
        c.env("PGPASSWORD", pg::PASSWORD);
    }
    let ok = Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_fixity"))
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return None;
    }
    // Hand the tree to nobody.
    let chown = Command::new("chown").args(["-R", "65534:65534"]).arg(dir).status().ok()?;
    chown.success().then_some(c)
}

/// SplitMix64: a small pseudo-random sequence, the same on every platform, for the
/// differential tests' generators (a fixed seed makes a failing case reproducible).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Runs `count` random cases (`FIXITY_DIFF_CASES`, else `default_count`) from `seed`
/// (`FIXITY_DIFF_SEED`, hex, else `default_seed`) on up to four threads: `run(seed, first,
/// step, count)` runs every `step`-th case from `first` and returns the differences found;
/// any makes the test fail, naming `what` (what was compared with what) and showing the
/// first five. The differential tests against coreutils and against bagit-python share it.
pub fn random_cases(
    default_count: usize,
    default_seed: u64,
    what: &str,
    run: impl Fn(u64, usize, usize, usize) -> Vec<String> + Sync,
) {
    let count = std::env::var("FIXITY_DIFF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_count);
    let seed = std::env::var("FIXITY_DIFF_SEED")
        .ok()
        .and_then(|v| u64::from_str_radix(v.trim_start_matches("0x"), 16).ok())
        .unwrap_or(default_seed);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(4);
    let found: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let run = &run;
                scope.spawn(move || run(seed, t, threads, count))
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("worker")).collect()
    });
    if !found.is_empty() {
        let shown: Vec<&String> = found.iter().take(5).collect();
        panic!(
            "{} of {count} cases of {what} differ; the first:\n\n{}",
            found.len(),
            shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
        );
    }
}

/// Where `tool` is on PATH.
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(tool)).find(|p| p.is_file())
}

/// A `Command` for `program` run as `name` (argv[0], which diagnostics start with, and by
/// which fixity picks a drop-in personality), in `dir`, under `LC_ALL=C`, stdin piped.
pub fn as_tool<S: AsRef<OsStr>>(program: &Path, name: &str, dir: &Path, args: &[S]) -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(program);
    c.arg0(name).args(args).current_dir(dir).env("LC_ALL", "C").stdin(Stdio::piped());
    c
}

/// Feeds `input` to the child's stdin from another thread (a run may stop reading it, or
/// fill its output pipe first), closing it at the end.
pub fn feed(child: &mut std::process::Child, input: &[u8]) -> std::thread::JoinHandle<()> {
    use std::io::Write;
    let mut stdin = child.stdin.take().expect("stdin piped");
    let input = input.to_vec();
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    })
}

/// Runs [`as_tool`] with `input` on stdin; stdout and stderr apart.
pub fn run_as_tool<S: AsRef<OsStr>>(
    program: &Path,
    name: &str,
    dir: &Path,
    args: &[S],
    input: &[u8],
) -> Output {
    let mut child = as_tool(program, name, dir, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let feeder = feed(&mut child, input);
    let out = child.wait_with_output().expect("wait");
    feeder.join().unwrap();
    out
}

/// What the same run prints with stdout and stderr on one pipe, as `2>&1` makes them: the
/// interleaving a log shows.
pub fn run_as_tool_merged<S: AsRef<OsStr>>(
    program: &Path,
    name: &str,
    dir: &Path,
    args: &[S],
    input: &[u8],
) -> Vec<u8> {
    use std::io::Read;
    let (mut reader, writer) = std::io::pipe().expect("pipe");
    let mut cmd = as_tool(program, name, dir, args);
    cmd.stdout(writer.try_clone().expect("clone pipe")).stderr(writer);
    let mut child = cmd.spawn().expect("spawn");
    // The parent's ends of the pipe go with the command, so the read below ends.
    drop(cmd);
    let feeder = feed(&mut child, input);
    let mut merged = Vec::new();
    reader.read_to_end(&mut merged).expect("read pipe");
    child.wait().expect("wait");
    feeder.join().unwrap();
    merged
}

/// Builds `examples/NAME.rs` (a no-op when `cargo test --all-targets` built it already)
/// and returns its path, beside this test binary's profile directory.
pub fn example(name: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/PROFILE/deps/integration-HASH
    let profile_dir = exe.parent().and_then(Path::parent).ok_or("no profile directory")?;
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev",
        Some(other) => other,
    };
    let out = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--example", name, "--profile", profile])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build --example {name} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(profile_dir.join("examples").join(name))
}
