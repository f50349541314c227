//! Checking a head's signature with the tools admins already have: OpenSSH's
//! `ssh-keygen -Y verify` (namespace `fixity`) or minisign. fixity signs nothing: the
//! head is signed where the key is (`ssh-keygen -Y sign -f KEY -n fixity HEAD`,
//! `minisign -S -s KEY -m HEAD`).

use crate::read::io_message;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The namespace of fixity's SSH signatures: a signature made for another purpose (a git
/// commit, a file signed with `-n file`) does not verify as a head.
pub const NAMESPACE: &str = "fixity";

/// A key to check a head's signature with.
#[derive(Clone, Debug)]
pub enum Signer {
    /// OpenSSH: an allowed-signers file, the signer's identity in it, and the signature
    /// (default: the head's file with `.sig` added).
    Ssh { allowed_signers: PathBuf, identity: String, signature: Option<PathBuf> },
    /// minisign: the public key's file, and the signature (default: `.minisig` added).
    Minisign { public_key: PathBuf, signature: Option<PathBuf> },
}

/// `path` with `suffix` added to its name.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Why a signature was not found good.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// The tool ran and refused it: a forged head, another key, a damaged signature (the
    /// tool's own words).
    #[error("{0}")]
    Refused(String),
    /// The tool could not be run, or the head not opened.
    #[error("{0}")]
    CannotRun(String),
}

/// Checks the signature of the head in `head`.
pub fn verify(signer: &Signer, head: &Path) -> Result<(), SignError> {
    let (tool, mut cmd) = match signer {
        Signer::Ssh { allowed_signers, identity, signature } => {
            let sig = signature.clone().unwrap_or_else(|| beside(head, ".sig"));
            let input = std::fs::File::open(head).map_err(|e| {
                SignError::CannotRun(format!("{}: {}", head.display(), io_message(&e)))
            })?;
            let mut c = Command::new("ssh-keygen");
            c.args(["-Y", "verify", "-f"]).arg(allowed_signers).arg("-I").arg(identity);
            c.args(["-n", NAMESPACE, "-s"]).arg(sig).stdin(input);
            ("ssh-keygen", c)
        }
        Signer::Minisign { public_key, signature } => {
            let sig = signature.clone().unwrap_or_else(|| beside(head, ".minisig"));
            let mut c = Command::new("minisign");
            c.args(["-V", "-q", "-p"]).arg(public_key).arg("-m").arg(head).arg("-x").arg(sig);
            c.stdin(Stdio::null());
            ("minisign", c)
        }
    };
    let out = cmd
        .output()
        .map_err(|e| SignError::CannotRun(format!("cannot run {tool}: {}", io_message(&e))))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let said = said.trim();
    let said = match said.is_empty() {
        true => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        false => said.to_string(),
    };
    Err(SignError::Refused(match said.is_empty() {
        true => format!("{tool} refused the signature ({})", out.status),
        false => format!("{tool}: {}", said.replace('\n', "; ")),
    }))
}
