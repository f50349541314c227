//! The arguments of `fixity report` (a tree's state, findings and runs for people).

use super::FindArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The catalog file (default: PATH/.fixity/catalog.db), or a PostgreSQL URL
    /// (postgresql://USER@HOST/DB) holding PATH's tree.
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// With a PostgreSQL catalog: the host whose tree PATH is (default: this machine's).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Write the report as one self-contained HTML page to FILE (atomically).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Print the report as JSON on standard output.
    #[arg(long)]
    pub json: bool,
    /// List at most N findings (the counts stay whole).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_findings: usize,
    /// Show at most the last N runs.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub runs: usize,
    /// The tree (default: the current directory).
    #[command(flatten)]
    pub find: FindArgs,
    #[arg(value_name = "PATH", default_value = ".")]
    pub path: PathBuf,
}
