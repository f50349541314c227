//! The `fixity` binary: parse arguments, run a command, map the outcome to an exit code.

mod cli;
mod cmd;
mod ui;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Die quietly of SIGPIPE like coreutils when the reader of our output goes away.
    ui::restore_sigpipe();
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let usage = e.use_stderr();
            let _ = e.print();
            return ExitCode::from(if usage { 2 } else { 0 });
        }
    };
    match cmd::run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(err) => {
            ui::error(&format!("{err:#}"));
            ExitCode::from(2)
        }
    }
}
