//! Terminal side: diagnostics on stderr (`fixity: ...`), kept clear of the progress bar,
//! and the progress bar itself (only when stderr is a terminal and the work is long).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

static BAR: OnceLock<ProgressBar> = OnceLock::new();
static PROGRAM: OnceLock<String> = OnceLock::new();

/// Sets the name diagnostics start with (`sha256sum` in drop-in mode; `fixity` otherwise).
pub fn set_program(name: &str) {
    let _ = PROGRAM.set(name.to_string());
}

/// The name diagnostics start with.
pub fn program() -> &'static str {
    PROGRAM.get().map_or("fixity", String::as_str)
}

/// Restores the default SIGPIPE action (Rust ignores it), so `fixity ... | head` ends the
/// way `sha256sum ... | head` does.
pub fn restore_sigpipe() {
    fixity::sys::default_sigpipe();
}

/// An error and its causes as one line, `outer: inner: cause`, with system errors worded
/// as the C library words them ("No space left on device", without Rust's "(os error 28)").
pub fn describe(err: &anyhow::Error) -> String {
    err.chain()
        .map(|cause| match cause.downcast_ref::<std::io::Error>() {
            Some(io) => fixity::read::io_message(io),
            None => cause.to_string(),
        })
        .collect::<Vec<_>>()
        .join(": ")
}

/// `n` and `noun`, plural unless `n` is 1: "1 file", "2 files".
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// Prints `fixity: MSG` on stderr.
pub fn error(msg: &str) {
    let line = format!("{}: {msg}\n", program());
    match BAR.get() {
        Some(bar) if !bar.is_hidden() => bar.suspend(|| eprint_raw(&line)),
        _ => eprint_raw(&line),
    }
}

fn eprint_raw(s: &str) {
    // Unit tests: through the harness, which keeps a passing test's messages to itself.
    if cfg!(test) {
        eprint!("{s}");
        return;
    }
    let _ = std::io::stderr().lock().write_all(s.as_bytes());
}

/// Progress reporting for a long run.
pub struct Progress {
    bar: Option<ProgressBar>,
    counter: Option<&'static AtomicU64>,
}

impl Progress {
    /// A progress reporter; draws nothing unless `wanted` (or stderr is a terminal and
    /// `allowed`), and nothing during the first second.
    pub fn new(force: bool, allowed: bool) -> Progress {
        let enabled = force || (allowed && std::io::stderr().is_terminal());
        let bar = enabled.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} {bytes}/{total_bytes} {msg} {bytes_per_sec} {wide_bar} ETA {eta}",
                )
                .expect("valid template"),
            );
            let _ = BAR.set(bar.clone());
            bar
        });
        // The readers add every hashed chunk to this counter; a ticker moves the bar from
        // it, so the bar advances inside a large file too.
        let counter = bar.as_ref().map(|bar| {
            let counter: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
            let bar = bar.clone();
            let start = Instant::now();
            std::thread::spawn(move || {
                let mut shown = false;
                while !bar.is_finished() {
                    bar.set_position(counter.load(Ordering::Relaxed));
                    // Short runs draw nothing: the bar appears after a second.
                    if !shown && start.elapsed() > Duration::from_secs(1) {
                        shown = true;
                        bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            });
            counter
        });
        Progress { bar, counter }
    }

    /// The counter the readers add hashed bytes to (see `ReadOptions::progress`).
    pub fn counter(&self) -> Option<&'static AtomicU64> {
        self.counter
    }

    /// A handle the size-counting thread uses to set the total.
    pub fn handle(&self) -> Option<ProgressBar> {
        self.bar.clone()
    }

    /// Records one finished file of `bytes`.
    pub fn file_done(&mut self, bytes: u64, files: u64) {
        let Some(bar) = &self.bar else { return };
        if files.is_multiple_of(64) || bytes > 1 << 20 {
            bar.set_message(format!("{files} files"));
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
