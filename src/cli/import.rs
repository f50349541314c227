//! The arguments of `fixity import`, and the `--xattr-names` values `scan` and `verify`
//! share with it.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Where `fixity import` takes digests from.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportFrom {
    /// Extended attributes: user.checksum.ALGO (checksum scripts; -a picks ALGO, default
    /// md5) or cshatag's user.shatag.sha256 (--xattr-names shatag).
    Xattr,
    /// chkbit's .chkbit index in each directory, or its .chkbit-db at the root.
    Chkbit,
    /// bitrot's .bitrot.db (--source DB; default TREE/.bitrot.db).
    Bitrot,
    /// A scorch database (--source DB, required; gzip-compressed CSV).
    Scorch,
    /// The NTFS alternate data streams RapidCRC-Unicode (:CRC32, :MD5, :SHA256 ...) and
    /// TeraCopy (:MD5 with the write time) keep beside each file; on Linux, as a Samba
    /// share's server (user.DosStream.NAME) or ntfs-3g (user.NAME) shows them. -a picks
    /// one algorithm's.
    Streams,
    /// Checksum manifests fixity check reads (--source FILE, one or more; names relative
    /// to TREE).
    Manifest,
}

/// Other tools' attribute names.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum XattrName {
    /// user.checksum.ALGO, the hex digest (as `setfattr -n user.checksum.md5` scripts
    /// write it).
    Checksum,
    /// cshatag's user.shatag.sha256 and user.shatag.ts.
    Shatag,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Where the digests come from (default: what TREE holds: .chkbit-db or .chkbit:
    /// chkbit; .bitrot.db: bitrot).
    #[arg(long, value_enum, value_name = "KIND")]
    pub from: Option<ImportFrom>,
    /// The source's file: bitrot's or scorch's database; with --from manifest, a
    /// manifest (repeat for several).
    #[arg(long, value_name = "FILE")]
    pub source: Vec<PathBuf>,
    /// With --from xattr: which attributes to read.
    #[arg(long, value_enum, value_name = "NAMES", default_value = "checksum")]
    pub xattr_names: XattrName,
    /// The catalog file (default: TREE/.fixity/catalog.db), or a PostgreSQL URL.
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// The algorithm of the digests to import (default: the catalog's, else the one most
    /// of the source's digests have); with --from xattr --xattr-names checksum, the
    /// attribute read (user.checksum.ALGO, default md5).
    #[arg(short = 'a', long = "algorithm", value_name = "NAME")]
    pub algorithm: Option<String>,
    /// Leave out names matching GLOB (also read from TREE/.fixityignore), as scan does.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Also list each file imported, already in the catalog, left out, or without a
    /// digest after the import.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Print only refused entries, and the summary only then.
    #[arg(short = 'q', long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print one JSON object per entry listed, then one with the summary.
    #[arg(long)]
    pub json: bool,
    /// If another run holds the catalog, wait for it instead of failing.
    #[arg(long)]
    pub wait: bool,
    /// The tree (default: the current directory).
    #[arg(value_name = "TREE")]
    pub path: Option<PathBuf>,
}
