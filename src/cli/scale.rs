//! The arguments of `fixity plan` and `fixity merge` (one tree, many machines).

use clap::Args;
use fixity::formats::OutputFormat;
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// Into how many parts to split the files.
    #[arg(long, value_name = "N")]
    pub parts: usize,
    /// The plan directory (made if needed).
    #[arg(short = 'o', long, value_name = "DIR")]
    pub output: PathBuf,
    /// Take the files and trees from FILE (`-`: standard input), NUL-separated (`find
    /// -print0`, GPFS policy lists, dwalk, fpart), instead of PATHs.
    #[arg(long, value_name = "FILE", conflicts_with = "paths")]
    pub from_list: Option<PathBuf>,
    /// A part is cut at K times the even share of files (files / N), even when its bytes
    /// are below its share: many tiny files cost per file, not per byte.
    #[arg(long, value_name = "K", default_value_t = 2)]
    pub files_bound: u64,
    /// Follow symbolic links inside trees.
    #[arg(short = 'L', long)]
    pub follow: bool,
    /// Leave out names matching GLOB (as `hash --exclude`).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// The unit a file larger than a part's share is cut at (a power of two of at least
    /// 1024 bytes; 1 GiB by default). For tests: small files split at small units.
    #[arg(long, value_name = "BYTES", hide = true, default_value_t = fixity::shard::PIECE_SIZE)]
    pub piece_size: u64,
    /// Files and trees, as `fixity hash` takes them.
    #[arg(value_name = "PATH")]
    pub paths: Vec<OsString>,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The plan directory.
    #[arg(value_name = "DIR")]
    pub plan: PathBuf,
    /// Manifest format (any `hash --format`).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "gnu")]
    pub format: OutputFormat,
    /// Write the manifest to FILE atomically instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Show each part's state (done, failed, missing, stale, overlapping) instead.
    #[arg(long)]
    pub status: bool,
    /// With --status: one JSON object.
    #[arg(long, requires = "status")]
    pub json: bool,
}
