//! `fixity accept` and `fixity forget`: the explicit end of a finding. A corrupt or
//! unreadable file is reported by every run until it reads as recorded again or its
//! current content is accepted; a missing file until it is back or forgotten.

use super::Status;
use crate::cli::{ResolveArgs, Store};
use crate::ui;
use anyhow::{Context, bail};
use fixity::catalog::sqlite::Catalog;
use fixity::catalog::{Class, Found, OpenOptions, StoreError, StoreSpec, open_store};
use fixity::clock::now_ms;
use fixity::device::Stamp;
use fixity::digest::Digest;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::pipeline::hash_path;
use fixity::read::{OpenMode, ReadOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Records the current content of each PATH as good.
pub fn accept(args: ResolveArgs) -> anyhow::Result<Status> {
    let xattr = args.store == Store::Xattr;
    let (tree, spec) = target(&args)?;
    let mut store = open_store(&spec, &OpenOptions { wait: args.wait, ..OpenOptions::default() })?;
    let mut buf = Vec::new();
    let mut plan = Vec::new();
    let mut refused = false;
    for p in &args.paths {
        let shown = quote_env(path_bytes(p));
        let rel = relative(&tree, p, xattr)?;
        let rec = match store.lookup(&rel) {
            Ok(Some(r)) if r.missing_since.is_some() => {
                ui::error(&format!(
                    "{shown}: recorded as missing, nothing to accept (`fixity forget` drops \
                     its record)"
                ));
                refused = true;
                continue;
            }
            Ok(Some(r)) => r,
            Ok(None) if xattr => {
                ui::error(&format!(
                    "{shown}: no fixity record in its attributes (a scan records it)"
                ));
                refused = true;
                continue;
            }
            Ok(None) => {
                ui::error(&format!("{shown}: not in the catalog (a scan records new files)"));
                refused = true;
                continue;
            }
            Err(StoreError::Attributes(e)) => {
                ui::error(&format!("{shown}: {}", fixity::read::io_message(&e)));
                refused = true;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        // A file named on the command line is the file meant; one inside a catalog's
        // tree is taken as a scan sees it (a symlink is not followed).
        let (full, mode) = match xattr {
            true => (p.clone(), OpenMode::Named),
            false => (fixity::scrub::full_path(&tree, &rel), OpenMode::Walked { follow: false }),
        };
        match current(&full, mode, rec.algo, &mut buf, &shown) {
            Some(h) => plan.push((p, rec, h)),
            None => refused = true,
        }
    }
    if refused {
        bail!("nothing was accepted");
    }
    let now = now_ms();
    let mut out = Vec::new();
    for (p, rec, h) in &plan {
        let stamp = Stamp { size: h.size, mtime_ns: h.mtime_ns.unwrap_or(0) };
        let found = Found { digest: h.digests[0], stamp, file_id: h.file_id };
        match store.record_content(rec, &found, Class::Ok, now) {
            Ok(()) => {}
            Err(StoreError::Attributes(e)) => {
                return Err(e)
                    .with_context(|| format!("cannot record {}", quote_env(path_bytes(p))));
            }
            Err(e) => return Err(e.into()),
        }
        let was = match rec.last_result {
            Class::Corrupt if xattr => " (was CORRUPT)".to_string(),
            Class::Corrupt | Class::Unreadable => format!(" (was {})", rec.last_result.name()),
            _ => String::new(),
        };
        let changed = change(&rec.digest, &found.digest);
        writeln!(out, "accepted    {}{was}: {changed}", quote_env(path_bytes(p)))?;
    }
    store.commit()?;
    std::io::stdout().lock().write_all(&out).context("write error")?;
    Ok(Status::Ok)
}

/// The file's current content hashed with `algo`, or `None` after saying why it cannot be
/// read.
fn current(
    path: &Path,
    mode: OpenMode,
    algo: &'static fixity::algo::Algorithm,
    buf: &mut Vec<u8>,
    shown: &str,
) -> Option<fixity::pipeline::Hashed> {
    match hash_path(path, mode, &[algo], buf, &ReadOptions::default(), None) {
        Ok(h) => Some(h),
        Err(e) => {
            ui::error(&format!("{shown}: {}", e.message()));
            None
        }
    }
}

/// How an accepted digest relates to the recorded one.
fn change(recorded: &Digest, now: &Digest) -> String {
    if recorded.ct_eq(now) {
        "content as recorded".to_string()
    } else {
        format!("recorded {}, now {}", recorded.to_hex(), now.to_hex())
    }
}

/// Drops the records of missing files at each PATH or below it.
pub fn forget(args: ResolveArgs) -> anyhow::Result<Status> {
    let xattr = args.store == Store::Xattr;
    let (tree, spec) = target(&args)?;
    let mut store = open_store(&spec, &OpenOptions { wait: args.wait, ..OpenOptions::default() })?;
    let mut plan = Vec::new();
    let mut refused = false;
    for p in &args.paths {
        let shown = quote_env(path_bytes(p));
        let rel = relative(&tree, p, xattr)?;
        let (present, missing) = store.count_under(&rel)?;
        if missing == 0 {
            if present > 0 {
                ui::error(&format!(
                    "{shown}: not missing (forget drops the records of missing files only)"
                ));
            } else {
                ui::error(&format!("{shown}: nothing recorded there"));
            }
            refused = true;
            continue;
        }
        plan.push((p, rel));
    }
    if refused {
        bail!("nothing was forgotten");
    }
    let mut out = Vec::new();
    for (p, rel) in &plan {
        let n = store.forget_missing(rel)?;
        writeln!(
            out,
            "forgot      {}: {n} missing file{}",
            quote_env(path_bytes(p)),
            if n == 1 { "" } else { "s" }
        )?;
    }
    store.commit()?;
    std::io::stdout().lock().write_all(&out).context("write error")?;
    Ok(Status::Ok)
}

/// The tree and the store the PATHs are in: the catalog found by [`locate`], or the
/// files' own attributes (PATHs taken as given).
fn target(args: &ResolveArgs) -> anyhow::Result<(PathBuf, StoreSpec)> {
    Ok(match args.store {
        Store::Xattr => (PathBuf::new(), StoreSpec::Xattr(PathBuf::new())),
        Store::Sqlite => {
            let (tree, catalog) = locate(args)?;
            (tree, StoreSpec::Sqlite(catalog))
        }
    })
}

/// The tree (resolved) and its catalog: `--tree`, or the nearest directory above the
/// first PATH that holds `.fixity/catalog.db` (the current directory with `--catalog`).
fn locate(args: &ResolveArgs) -> anyhow::Result<(PathBuf, PathBuf)> {
    let tree = match (&args.tree, &args.catalog) {
        (Some(t), _) => t.clone(),
        (None, Some(_)) => PathBuf::from("."),
        (None, None) => {
            let first = &args.paths[0];
            let abs = std::path::absolute(first)
                .with_context(|| format!("cannot find {}", quote_env(path_bytes(first))))?;
            match abs.ancestors().skip(1).find(|d| Catalog::default_path(d).is_file()) {
                Some(d) => d.to_path_buf(),
                None => bail!(
                    "no catalog (.fixity/catalog.db) in a directory above {}: pass --tree DIR \
                     or --catalog FILE",
                    quote_env(path_bytes(first))
                ),
            }
        }
    };
    let resolved = std::fs::canonicalize(&tree)
        .with_context(|| format!("cannot find the tree {}", quote_env(path_bytes(&tree))))?;
    let catalog = args.catalog.clone().unwrap_or_else(|| Catalog::default_path(&tree));
    Ok((resolved, catalog))
}

/// `path` relative to `tree` (resolved), as the catalog records it: the longest part of
/// it that exists is resolved (symlinks, `..`), the rest (a file or directory that is
/// gone) is taken as written. The empty path is the tree itself. With `as_given` (the
/// xattr store, whose records are in the files) the path is taken as it is.
fn relative(tree: &Path, path: &Path, as_given: bool) -> anyhow::Result<Vec<u8>> {
    if as_given {
        return Ok(path_bytes(path).to_vec());
    }
    let shown = || quote_env(path_bytes(path));
    let abs = std::path::absolute(path).with_context(|| format!("cannot find {}", shown()))?;
    // The last component is kept as written unless it is `.` or `..` (a symlink in the
    // tree is recorded as itself, not as its target).
    let (mut base, mut rest): (PathBuf, Vec<std::ffi::OsString>) = match abs.file_name() {
        Some(name) if abs.parent().is_some() => {
            (abs.parent().expect("checked").to_path_buf(), vec![name.to_owned()])
        }
        _ => (abs.clone(), Vec::new()),
    };
    let resolved = loop {
        match std::fs::canonicalize(&base) {
            Ok(r) => break r,
            Err(_) => match (base.file_name(), base.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name.to_owned());
                    base = parent.to_path_buf();
                }
                _ => bail!("cannot find {}", shown()),
            },
        }
    };
    let mut full = resolved;
    for part in rest.iter().rev() {
        full.push(part);
    }
    match full.strip_prefix(tree) {
        Ok(rel) => Ok(path_bytes(rel).to_vec()),
        Err(_) => bail!("{} is not inside the tree {}", shown(), quote_env(path_bytes(tree))),
    }
}
