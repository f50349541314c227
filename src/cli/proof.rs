//! The arguments of `fixity audit-proof` (a tree's catalog and files against a kept head).

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct AuditProofArgs {
    /// The tree.
    #[arg(value_name = "TREE")]
    pub path: PathBuf,
    /// The head kept outside the machine: a file `fixity status --proof` printed (signed
    /// or not).
    #[arg(long, value_name = "HEAD_FILE")]
    pub head: PathBuf,
    /// The catalog file (default: TREE/.fixity/catalog.db), or a PostgreSQL URL
    /// (postgresql://USER@HOST/DB) holding TREE's tree.
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// With a PostgreSQL catalog: the host whose tree TREE is (default: this machine's).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Check the head's OpenSSH signature (`ssh-keygen -Y sign -n fixity`) against this
    /// allowed-signers file (with --identity): runs `ssh-keygen -Y verify -f FILE -I ID
    /// -n fixity -s HEAD_FILE.sig < HEAD_FILE`.
    #[arg(long, value_name = "FILE", requires = "identity", conflicts_with = "minisign_key")]
    pub allowed_signers: Option<PathBuf>,
    /// The signer's identity in --allowed-signers (its first field, e.g. an address).
    #[arg(long, value_name = "ID", requires = "allowed_signers")]
    pub identity: Option<String>,
    /// Check the head's minisign signature with this public key file: runs `minisign -V
    /// -p PUBKEY -m HEAD_FILE` (signature HEAD_FILE.minisig).
    #[arg(long, value_name = "PUBKEY")]
    pub minisign_key: Option<PathBuf>,
    /// The signature file (default: HEAD_FILE.sig for OpenSSH, HEAD_FILE.minisig for
    /// minisign).
    #[arg(long, value_name = "PATH")]
    pub signature: Option<PathBuf>,
    /// Do not read the files: check the head, the chain and the catalog's records only.
    #[arg(long)]
    pub no_read: bool,
    /// Print JSON: each break, then the summary.
    #[arg(long)]
    pub json: bool,
}
