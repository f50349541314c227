//! The arguments of `fixity status` and `fixity export`: commands that read a catalog
//! and not the tree; and of `fixity catalog`, which sets a catalog up.

use super::monitor;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The catalog file (default: PATH/.fixity/catalog.db), or a PostgreSQL URL
    /// (postgresql://USER@HOST/DB): without PATH, every tree of the fleet.
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// With a PostgreSQL catalog: the trees of this host (the fleet view), or with PATH
    /// that host's tree (default: this machine's, FIXITY_HOST or its host name).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// The tree (default: the current directory; with a PostgreSQL catalog, the fleet).
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
    /// Show the last comparison with this remote copy (s3://BUCKET/PREFIX, as given to
    /// `verify --remote`): counts per class and proof, and its findings.
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,
    /// Print the current head of the tree's chain of proofs, a small text to sign (e.g.
    /// `ssh-keygen -Y sign -f KEY -n fixity HEAD_FILE`, or `minisign -S -s KEY -m
    /// HEAD_FILE`) and keep outside the machine, for `fixity audit-proof`.
    #[arg(long, conflicts_with_all = ["remote", "nagios", "metrics", "max_age"])]
    pub proof: bool,
    #[command(flatten)]
    pub find: FindArgs,
    #[command(flatten)]
    pub health: monitor::HealthArgs,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The catalog file (default: PATH/.fixity/catalog.db), or a PostgreSQL URL
    /// (postgresql://USER@HOST/DB) holding PATH's tree.
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// With a PostgreSQL catalog: the host whose tree PATH is (default: this machine's).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Manifest format: any `hash --format` takes (gnu, bsd, sfv, json, hashdeep, cfv-csv,
    /// rhash, rhash-bsd, magnet, cksum, sum, sysv, b3sum, xxhsum ...), or a tool's name (md5sum, sha1sum, sha256sum, sha512sum, b2sum, b3sum ...); all but
    /// gnu, bsd and json need the catalog's algorithm to be one the format holds. `premis`:
    /// PREMIS 3 XML (objects, fixity-check events, the agent).
    #[arg(long, default_value = "gnu")]
    pub format: String,
    /// Write to FILE atomically instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The tree (default: the current directory).
    #[arg(value_name = "PATH", default_value = ".")]
    pub path: PathBuf,
}

/// `fixity catalog ...`: setting up a shared (PostgreSQL) catalog.
#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum CatalogCommand {
    /// Print (or with --apply run) the SQL that gives a PostgreSQL catalog its roles: an
    /// owner of the schema, one login role per host that reads and writes only that
    /// host's trees (row-level security), and monitors that read everything and write
    /// nothing.
    #[command(after_help = super::exit::ROLES_EXIT)]
    InitRoles(InitRolesArgs),
}

#[derive(Args, Debug)]
pub struct InitRolesArgs {
    /// The catalog (postgresql://ADMIN@HOST/DB), connected to as an administrator (a
    /// superuser) with --apply.
    #[arg(long, value_name = "URL")]
    pub catalog: Option<PathBuf>,
    /// The schema's owner: makes and migrates the schema (run upgrades as it); row-level
    /// security does not bind it, so no host should log in as it.
    #[arg(long, value_name = "ROLE")]
    pub owner: String,
    /// A host's login role and the host name its trees are recorded under (FIXITY_HOST or
    /// the machine's name, as scan, verify and status --host use it); repeat for each
    /// host, and for a role that writes under more than one name.
    #[arg(long = "host", value_name = "ROLE=HOSTNAME")]
    pub hosts: Vec<String>,
    /// A login role that reads every host's records (status of the fleet, reports,
    /// exports) and writes nothing; repeatable.
    #[arg(long = "monitor", value_name = "ROLE")]
    pub monitors: Vec<String>,
    /// Run the SQL on --catalog (in one transaction) instead of printing it for review
    /// (psql -v ON_ERROR_STOP=1 -f FILE).
    #[arg(long)]
    pub apply: bool,
}

// How a command finds the catalog of the tree a directory is in (no doc comment: clap
// would take it for the about line of every command that flattens it).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct FindArgs {
    /// Look for the tree's catalog (.fixity/catalog.db in the directory named or a
    /// directory above it) on other file systems too: by default the search stops where
    /// the file system changes (a mount point), as git's does.
    #[arg(long)]
    pub cross_fs: bool,
}
