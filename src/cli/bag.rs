//! The arguments of `fixity bag create` and `fixity bag check` (BagIt, RFC 8493).

use super::ReadArgs;
use super::exit::BAG_EXIT;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum BagCommand {
    /// Make DIR a bag in place: its contents move to DIR/data/; manifests, bagit.txt,
    /// bag-info.txt and tag manifests are written beside it.
    #[command(after_help = BAG_EXIT)]
    Create(BagCreateArgs),
    /// Validate a bag: bagit.txt, every manifest complete, every payload and tag file's
    /// digests. Exit 0 valid, 1 invalid, 2 when it cannot be checked.
    #[command(after_help = BAG_EXIT)]
    Check(BagCheckArgs),
}

#[derive(Args, Debug)]
pub struct BagCreateArgs {
    /// Manifest algorithms (comma-separated; default: sha512,sha256).
    #[arg(short = 'a', long = "algorithm", value_name = "LIST")]
    pub algorithm: Option<String>,
    /// A bag-info.txt line (repeatable), e.g. --info Contact-Name="Jo Smith".
    #[arg(long, value_name = "LABEL=VALUE")]
    pub info: Vec<String>,
    /// Follow symbolic links: their targets' content is payload under the links' names.
    #[arg(short = 'L', long)]
    pub follow: bool,
    #[command(flatten)]
    pub read: ReadArgs,
    /// The directory to bag.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

#[derive(Args, Debug)]
pub struct BagCheckArgs {
    /// Check only the Payload-Oxum of bag-info.txt (file count and bytes), reading no file.
    #[arg(long)]
    pub fast: bool,
    /// Print one JSON object per problem and warning, then one with the verdict.
    #[arg(long)]
    pub json: bool,
    /// Warnings make the bag invalid too (exit 1): what RFC 8493 tolerates but strict
    /// validation refuses (md5sum's `*` marker, `./` paths, a SHOULD not followed).
    #[arg(long)]
    pub strict: bool,
    /// Follow symbolic links under data/ (for a bag made with `bag create -L`, or by
    /// bagit.py, which follows them).
    #[arg(short = 'L', long)]
    pub follow: bool,
    #[command(flatten)]
    pub read: ReadArgs,
    /// The bag.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}
