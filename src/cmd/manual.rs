//! `fixity completions SHELL` and `fixity man`: the shell completion scripts and the
//! manual pages, both made from the command-line definitions (clap), so they never
//! disagree with `--help`.

use super::Status;
use crate::cli::{Cli, CompletionsArgs, ManArgs};
use anyhow::{Context, bail};
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;

/// `fixity completions SHELL`.
pub(crate) fn completions(args: CompletionsArgs) -> anyhow::Result<Status> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "fixity", &mut out);
    std::io::stdout().lock().write_all(&out).context("write error")?;
    Ok(Status::Ok)
}

/// `fixity man [COMMAND...] [--dir DIR]`.
pub(crate) fn man(args: ManArgs) -> anyhow::Result<Status> {
    // Every subcommand's arguments are added when it is built (`defer` in cli/mod.rs, for
    // the start-up of one command): build them all before rendering.
    let mut root = Cli::command();
    root.build();
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
        let mut written = 0;
        write_pages(&root, "fixity", dir, &mut written)?;
        println!("{written} manual pages written into {}", dir.display());
        return Ok(Status::Ok);
    }
    let mut cmd = root;
    let mut name = "fixity".to_string();
    for word in &args.command {
        let Some(sub) = cmd.find_subcommand(word).cloned() else {
            bail!("no command {name} {word} (see fixity --help)");
        };
        name = format!("{name}-{word}");
        cmd = sub;
    }
    let page = render(cmd, &name)?;
    std::io::stdout().lock().write_all(&page).context("write error")?;
    Ok(Status::Ok)
}

/// The page of `cmd`, titled `name` (`fixity-bench-tree`).
fn render(cmd: clap::Command, name: &str) -> anyhow::Result<Vec<u8>> {
    let cmd = cmd.name(name.to_string()).bin_name(name.replace('-', " "));
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd)
        .section("1")
        .source(format!("fixity {}", env!("CARGO_PKG_VERSION")))
        .manual("fixity manual")
        .render(&mut page)
        .context("cannot render the manual page")?;
    // The text after the options (clap's after_help) is a command's exit statuses, or a
    // note: give its section the name man pages use.
    let page = String::from_utf8_lossy(&page).into_owned();
    let heading = match page.contains(".SH EXTRA\nExit status:") {
        true => ".SH \"EXIT STATUS\"\n",
        false => ".SH NOTES\n",
    };
    Ok(page.replacen(".SH EXTRA\n", heading, 1).into_bytes())
}

/// Writes `name.1` for `cmd`, then a page for each of its commands, recursively.
fn write_pages(
    cmd: &clap::Command,
    name: &str,
    dir: &Path,
    written: &mut usize,
) -> anyhow::Result<()> {
    let path = dir.join(format!("{name}.1"));
    let page = render(cmd.clone(), name)?;
    std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    *written += 1;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}
