//! The arguments of `fixity protect` and `fixity repair`.

use super::FindArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ProtectArgs {
    /// Recovery data as a share of the data (e.g. 10%, 5%, 0.1).
    #[arg(long, value_name = "SHARE", default_value = "10%")]
    pub redundancy: String,
    /// Most memory the recovery data being computed may take (e.g. 512M, 2G); beyond
    /// it a set is made in passes, each reading its files again.
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub memory: String,
    /// Where the recovery sets are kept (default: TREE/.fixity/par2), e.g. on another disk.
    #[arg(long, value_name = "DIR")]
    pub par2_dir: Option<PathBuf>,
    /// The catalog file (default: TREE/.fixity/catalog.db), or a PostgreSQL URL.
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// List every set (made, current, kept, removed), not only the sets made and the files
    /// left out.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Print only files left out, and the summary only then.
    #[arg(short = 'q', long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print one JSON object per set or file listed, then one with the summary.
    #[arg(long)]
    pub json: bool,
    /// If another run holds the catalog, wait for it instead of failing.
    #[arg(long)]
    pub wait: bool,
    /// The tree (default: the current directory).
    #[command(flatten)]
    pub find: FindArgs,
    #[arg(value_name = "TREE")]
    pub path: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RepairArgs {
    /// Take good copies from this replica of the tree (a backup mount, an rsync copy): a
    /// file whose digest is the recorded one, at the same path or moved. Never written.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Where the recovery sets are (default: TREE/.fixity/par2); PAR2 sets par2cmdline
    /// made there with -B TREE are used too.
    #[arg(long, value_name = "DIR")]
    pub par2_dir: Option<PathBuf>,
    /// Most memory the lost slices may take while computed (e.g. 2G).
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub memory: String,
    /// Keep each damaged file aside, under TREE/.fixity/damaged/RUN/, before replacing it.
    #[arg(long)]
    pub keep_damaged: bool,
    /// Write the recorded content over the files named (PATH, required) even where they
    /// were edited since the catalog recorded them: CHANGED (an edit that put its mtime
    /// back) or another size or mtime. Without it repair never writes over an edit.
    #[arg(long, requires = "paths")]
    pub force: bool,
    /// The catalog file (default: TREE/.fixity/catalog.db), or a PostgreSQL URL.
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// Print one JSON object per file, then one with the summary.
    #[arg(long)]
    pub json: bool,
    /// If another run holds the catalog, wait for it instead of failing.
    #[arg(long)]
    pub wait: bool,
    /// The tree.
    #[command(flatten)]
    pub find: FindArgs,
    #[arg(value_name = "TREE", required = true)]
    pub tree: PathBuf,
    /// Only these files (paths from here, inside TREE); default: every file with a
    /// finding (corrupt, missing, unreadable).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}
