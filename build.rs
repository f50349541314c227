//! Build script: the text of `fixity --version`, in FIXITY_VERSION.
//!
//! A build from a git checkout says the commit it was built from and that commit's date,
//! as rustc does: `0.1.0 (41dfd03 2026-11-26)`. Anything else (no git, not a repository,
//! git refusing the directory, a crate unpacked from the registry or by `cargo package`
//! inside some other repository) gives the bare version. In a checkout Cargo reruns this
//! script only when HEAD moves: a new commit, a checkout, a branch switch.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    let manifest_dir = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let text = match git_commit(&manifest_dir) {
        Some((hash, date)) => format!("{version} ({hash} {date})"),
        None => {
            // Outside a checkout, a path that never exists, so Cargo reruns the script on
            // every build. `cargo package` verifies the unpacked crate in the checkout's
            // target directory under the same unit hashes as the checkout's own build:
            // a result kept from there would leave the checkout's binary with the bare
            // version, its git files unwatched. (A crate from the registry is built once.)
            let never = manifest_dir.join(".fixity-no-git-checkout");
            println!("cargo:rerun-if-changed={}", never.display());
            version
        }
    };
    println!("cargo:rustc-env=FIXITY_VERSION={text}");
}

/// The short hash and the date of HEAD, when `dir` is the top of a git work tree; and the
/// files that change when HEAD moves, told to Cargo.
fn git_commit(dir: &Path) -> Option<(String, String)> {
    // Only this crate's own checkout: a crate unpacked under target/package/ of a checkout
    // (cargo package's verify build) must not take the outer repository's commit.
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    if std::fs::canonicalize(&top).ok()? != std::fs::canonicalize(dir).ok()? {
        return None;
    }
    watch(dir, "HEAD");
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        // The branch's loose ref, or packed-refs when the ref is packed (git gc).
        watch(dir, &branch);
        watch(dir, "packed-refs");
    }
    let line = git(dir, &["log", "-1", "--no-show-signature", "--format=%h %cd", "--date=short"])?;
    let (hash, date) = line.split_once(' ')?;
    Some((hash.to_string(), date.to_string()))
}

/// Tells Cargo to rerun when a file of the git directory changes; a file that does not
/// exist is left out (Cargo would rerun the script on every build).
fn watch(dir: &Path, name: &str) {
    if let Some(path) = git(dir, &["rev-parse", "--path-format=absolute", "--git-path", name])
        && Path::new(&path).is_file()
    {
        println!("cargo:rerun-if-changed={path}");
    }
}

/// A git command's trimmed output in `dir`, or None when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}
