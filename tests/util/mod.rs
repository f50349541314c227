//! Helpers shared by the integration tests: run the real `fixity` binary in a temp dir.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A `Command` for the built `fixity` binary, run in `dir`.
pub fn fixity(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fixity"));
    cmd.current_dir(dir).env("LC_ALL", "C").stdin(Stdio::null());
    cmd
}

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
    child.stdin.take().unwrap().write_all(input).unwrap();
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
        .env("LC_ALL", "C");
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
