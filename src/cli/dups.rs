//! The arguments of `fixity dups` (groups of files with the same content).

use super::{ReadArgs, parse_size_arg};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct DupsArgs {
    /// Read the tree instead of its catalog (for a tree without one): only files whose
    /// size another file shares are opened; their ends first, then, if still alike, the
    /// whole file, once, for BLAKE3.
    #[arg(long = "read", conflicts_with_all = ["catalog", "host"])]
    pub read_tree: bool,
    /// Leave out files smaller than SIZE (1000, 64K, 1M, 1MiB: K, M, G are powers of
    /// 1024). The default 1 leaves out empty files, as jdupes and rdfind do; 0 takes them.
    #[arg(long, value_name = "SIZE", default_value = "1", value_parser = parse_size_arg)]
    pub min_size: u64,
    /// Leave out names matching GLOB (also read from TREE/.fixityignore), as scan does.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Print one JSON object per group, then one with the summary.
    #[arg(long)]
    pub json: bool,
    /// No summary or notes on stderr (errors still are).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// The catalog file (default: TREE/.fixity/catalog.db), or a PostgreSQL URL holding
    /// TREE's records.
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// With a PostgreSQL catalog: the host whose tree TREE is (default: this machine's).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Where the sort writes its runs once its memory is full (default: $TMPDIR, else /tmp).
    #[arg(long, value_name = "DIR")]
    pub temp_dir: Option<PathBuf>,
    #[command(flatten)]
    pub io: ReadArgs,
    /// The tree (default: the current directory).
    #[command(flatten)]
    pub find: super::FindArgs,
    #[arg(value_name = "TREE", default_value = ".")]
    pub path: PathBuf,
}
