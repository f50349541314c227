//! The `fixity` binary: parse arguments, run a command, map the outcome to an exit code.

mod cli;
mod cmd;
mod dropin;
#[cfg(feature = "serve")]
mod serve;
mod ui;

use clap::{CommandFactory, FromArgMatches};
use std::process::ExitCode;

/// The static (musl) build allocates with mimalloc: musl's malloc is slow under threads.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Die quietly of SIGPIPE like coreutils when the reader of our output goes away.
    ui::restore_sigpipe();
    // Drop-in mode: invoked as md5sum, sha256sum, b2sum ...
    let mut argv = std::env::args_os();
    let argv0 = argv.next().unwrap_or_default();
    if let Some((tool, algo)) = dropin::tool_for(&argv0) {
        // Diagnostics start with the name as invoked, as coreutils' do.
        let name = argv0.to_string_lossy().into_owned();
        ui::set_program(&name);
        if let Err(e) = fixity::simd::from_env().and(cli::Storage::from_env()) {
            ui::error(&e);
            return ExitCode::from(1);
        }
        return match dropin::run(&name, algo, argv.collect()) {
            Ok(code) => ExitCode::from(code as u8),
            Err(err) => {
                ui::error(&dropin::error_text(tool, &err));
                ExitCode::from(1)
            }
        };
    }
    // Parsed from the matches, which also say whether FIXITY_STORAGE set --storage.
    let parsed = cli::Cli::command().try_get_matches().and_then(|m| {
        cli::note_storage_source(&m);
        cli::Cli::from_arg_matches(&m)
    });
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let usage = e.use_stderr();
            let _ = e.print();
            return ExitCode::from(if usage { 2 } else { 0 });
        }
    };
    // The SIMD cap: --simd, else FIXITY_SIMD; a level this CPU lacks is refused.
    let cap = match &cli.simd {
        Some(level) => fixity::simd::checked(level).map(Some).map_err(|e| format!("--simd: {e}")),
        None => fixity::simd::from_env(),
    };
    match cap {
        Ok(Some(level)) => fixity::simd::set_cap(level).expect("a level this CPU has"),
        Ok(None) => {}
        Err(e) => {
            ui::error(&e);
            return ExitCode::from(2);
        }
    }
    match cmd::run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(err) => {
            ui::error(&ui::describe(&err));
            ExitCode::from(2)
        }
    }
}
