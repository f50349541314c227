//! CRC32 embedded in file names, as rhash handles them: `fixity check --check-embedded
//! FILE...` (`rhash -k`) verifies the last `[XXXXXXXX]` or `(XXXXXXXX)` in each name, and
//! `fixity hash --embed-crc PATH...` (`rhash -e`) renames files to carry their CRC32.

use super::{Status, engine_config};
use crate::cli::{CheckArgs, HashArgs};
use crate::ui;
use fixity::algo::{self, Algorithm};
use fixity::check::{Outcome, classify, plural};
use fixity::digest::Digest;
use fixity::formats::rhash::{embed_crc, embedded_crc};
use fixity::hashing::{self, HashEvent, HashPlan, Inputs};
use fixity::pathtext::{bytes_path, quote_env};
use fixity::pipeline::hash_path;
use fixity::read::{OpenMode, io_message};
use fixity::sources::{Source, Sources};
use fixity::sys::OsStrExt;
use fixity::walk::Exclude;
use std::path::Path;

fn crc32() -> &'static Algorithm {
    algo::lookup("crc32").expect("registered")
}

/// `fixity check --check-embedded FILE...`.
pub fn run(args: CheckArgs) -> anyhow::Result<Status> {
    let opts = engine_config(None, &args.read).read;
    let (mut failed, mut unreadable, mut without) = (0u64, 0u64, 0u64);
    let mut buf = Vec::new();
    for file in &args.manifests {
        let name = file.as_bytes();
        let Some(expected) = embedded_crc(name) else {
            without += 1;
            if !args.status {
                ui::error(&format!("{}: file name doesn't contain a CRC32", quote_env(name)));
            }
            continue;
        };
        let want = Digest::new(&expected.to_be_bytes());
        let read = hash_path(Path::new(file), OpenMode::Named, &[crc32()], &mut buf, &opts, None);
        let outcome = classify([&want], None, read, false);
        match outcome {
            Outcome::Ok => {
                if !args.quiet && !args.status {
                    println!("{}: OK", String::from_utf8_lossy(name));
                }
            }
            Outcome::Failed => {
                failed += 1;
                if !args.status {
                    println!("{}: FAILED", String::from_utf8_lossy(name));
                }
            }
            other => {
                unreadable += 1;
                if !args.status {
                    let msg = other.error().map_or_else(String::new, |e| e.message());
                    ui::error(&format!("{}: {msg}", quote_env(name)));
                    println!("{}: FAILED open or read", String::from_utf8_lossy(name));
                }
            }
        }
    }
    if !args.status {
        if unreadable > 0 {
            ui::error(&format!(
                "WARNING: {unreadable} listed {} could not be read",
                plural(unreadable, "file", "files")
            ));
        }
        if failed > 0 {
            ui::error(&format!(
                "WARNING: {failed} computed {} did NOT match",
                plural(failed, "checksum", "checksums")
            ));
        }
    }
    // rhash -k exits 1 for a name without a CRC32 too.
    Ok(if failed + unreadable + without > 0 { Status::Failed } else { Status::Ok })
}

/// `fixity hash --embed-crc PATH...`: renames each file to `name [CRC32].ext` (files whose
/// name already carries a CRC32 are left as they are) and prints `old -> new`. The walk is
/// done first, so that it never meets a renamed file; then the hash job reads the files.
pub fn embed(args: HashArgs) -> anyhow::Result<Status> {
    let config = engine_config(None, &args.read);
    let exclude = Exclude::new(&args.exclude)?;
    let sources =
        Sources { paths: args.paths.clone(), follow: args.follow, exclude, no_walk: false };
    let mut files: Vec<Source> = Vec::new();
    let mut failed = super::list_files(&sources, &mut |name, path, mode| {
        // `-` names a file here: standard input has no name to carry a CRC.
        let mode = if mode == OpenMode::Stdin { OpenMode::Named } else { mode };
        files.push(Source::File { name, path, mode });
    });
    let delimiter = args.rhash.embed_crc_delimiter.as_bytes();
    let plan = HashPlan { inputs: Inputs::Listed(files), algos: vec![crc32()], config };
    hashing::run(plan, |event| {
        let (name, crc) = match event {
            HashEvent::Hashed { name, hashed } => {
                let b = hashed.digests[0].as_bytes();
                (name, u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            }
            HashEvent::Unreadable { name, error } => {
                failed = true;
                ui::error(&format!("{}: {}", quote_env(name), error.message()));
                return true;
            }
            // Listed files only: the walk's notes were given above.
            HashEvent::Skipped { .. } | HashEvent::WalkError { .. } => return true,
        };
        let Some(new) = embed_crc(name, crc, delimiter) else { return true };
        let target = bytes_path(&new);
        if std::fs::symlink_metadata(&target).is_ok() {
            failed = true;
            ui::error(&format!("{}: not renamed: {} exists", quote_env(name), quote_env(&new)));
            return true;
        }
        match std::fs::rename(bytes_path(name), &target) {
            Ok(()) => {
                println!("{} -> {}", String::from_utf8_lossy(name), String::from_utf8_lossy(&new))
            }
            Err(e) => {
                failed = true;
                ui::error(&format!("{}: cannot rename: {}", quote_env(name), io_message(&e)));
            }
        }
        true
    });
    Ok(if failed { Status::Failed } else { Status::Ok })
}
