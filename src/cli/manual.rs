//! The arguments of `fixity completions` and `fixity man`.

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// The command whose page to print (`hash`, `bench tree`; default: fixity's own).
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Vec<String>,
    /// Write fixity.1 and a page per command (fixity-hash.1, fixity-bench-tree.1, ...)
    /// into DIR instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}
