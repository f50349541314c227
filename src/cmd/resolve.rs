//! `fixity accept` and `fixity forget`: the explicit end of a finding. A corrupt or
//! unreadable file is reported by every run until it reads as recorded again or its
//! current content is accepted; a missing file until it is back or forgotten.

use super::Status;
use crate::cli::{ResolveArgs, Store};
use crate::ui;
use anyhow::{Context, bail};
use fixity::catalog::locate::Located;
use fixity::catalog::sqlite::Catalog;
use fixity::catalog::{Class, OpenOptions, StoreSpec, open_store};
use fixity::pathtext::{path_bytes, quote_env};
use fixity::resolve::{Event, Refusal, Tree};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Records the current content of each PATH as good.
pub fn accept(args: ResolveArgs) -> anyhow::Result<Status> {
    resolve(&args, fixity::resolve::accept, "nothing was accepted")
}

/// Drops the records of missing files at each PATH or below it.
pub fn forget(args: ResolveArgs) -> anyhow::Result<Status> {
    resolve(&args, fixity::resolve::forget, "nothing was forgotten")
}

type Resolver = fn(
    &mut dyn fixity::catalog::Store,
    Tree,
    &[PathBuf],
    &mut dyn FnMut(Event),
) -> Result<bool, fixity::resolve::ResolveError>;

/// Runs `accept` or `forget` on the store the PATHs are in and renders its events: a
/// refusal as a message on standard error, what was done on standard output once all of
/// it is recorded.
fn resolve(args: &ResolveArgs, job: Resolver, refused: &str) -> anyhow::Result<Status> {
    let xattr = args.store == Store::Xattr;
    let (tree, spec) = target(args)?;
    let mut store = open_store(&spec, &OpenOptions { wait: args.wait, ..OpenOptions::default() })?;
    let tree = if xattr { Tree::Attributes } else { Tree::Catalog(&tree) };
    let mut out = Vec::new();
    let done = job(store.as_mut(), tree, &args.paths, &mut |event| match event {
        Event::Refused { path, why } => {
            let shown = quote_env(path_bytes(path));
            ui::error(&match why {
                Refusal::RecordedMissing => format!(
                    "{shown}: recorded as missing, nothing to accept (`fixity forget` drops \
                     its record)"
                ),
                Refusal::NoRecord if xattr => {
                    format!("{shown}: no fixity record in its attributes (a scan records it)")
                }
                Refusal::NoRecord => {
                    format!("{shown}: not in the catalog (a scan records new files)")
                }
                Refusal::Unreadable(why) => format!("{shown}: {why}"),
                Refusal::NotMissing => {
                    format!("{shown}: not missing (forget drops the records of missing files only)")
                }
                Refusal::NothingThere => format!("{shown}: nothing recorded there"),
            });
        }
        Event::Accepted { path, was, recorded, now } => {
            let was = match was {
                Class::Corrupt if xattr => " (was CORRUPT)".to_string(),
                Class::Corrupt | Class::Unreadable => format!(" (was {})", was.name()),
                _ => String::new(),
            };
            let changed = if recorded.ct_eq(&now) {
                "content as recorded".to_string()
            } else {
                format!("recorded {}, now {}", recorded.to_hex(), now.to_hex())
            };
            out.extend(
                format!("accepted    {}{was}: {changed}\n", quote_env(path_bytes(path))).bytes(),
            );
        }
        Event::Forgot { path, missing } => {
            let s = if missing == 1 { "" } else { "s" };
            out.extend(
                format!("forgot      {}: {missing} missing file{s}\n", quote_env(path_bytes(path)))
                    .bytes(),
            );
        }
    })?;
    if !done {
        bail!("{refused}");
    }
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
            let spec = super::catalog_spec(Some(&catalog), &tree, None);
            (tree, spec)
        }
    })
}

/// The tree (resolved) and its catalog: `--tree`, or the nearest directory above the
/// first PATH that holds `.fixity/catalog.db` (found as every command finds it, see
/// `tree::locate`, from the nearest directory above PATH that exists: a forgotten
/// directory may be gone), or the tree `--catalog` records (else the current directory).
fn locate(args: &ResolveArgs) -> anyhow::Result<(PathBuf, PathBuf)> {
    let tree = match (&args.tree, &args.catalog) {
        (Some(t), _) => t.clone(),
        (None, catalog) => {
            let first = &args.paths[0];
            let abs = fixity::sys::absolute(first)
                .with_context(|| format!("cannot find {}", quote_env(path_bytes(first))))?;
            let above = abs.ancestors().skip(1).find(|d| d.is_dir()).unwrap_or(Path::new("/"));
            let dir = if catalog.is_some() { Path::new(".") } else { above };
            match super::tree::locate(dir, catalog.as_deref(), None, args.find, false) {
                Ok(found) => {
                    super::tree::say(&Located { subtree: Vec::new(), ..found.clone() }, false);
                    found.root
                }
                Err(e) => bail!("{e}; or pass --tree DIR or --catalog FILE"),
            }
        }
    };
    let resolved = fixity::sys::canonicalize(&tree)
        .with_context(|| format!("cannot find the tree {}", quote_env(path_bytes(&tree))))?;
    let catalog = args.catalog.clone().unwrap_or_else(|| Catalog::default_path(&tree));
    Ok((resolved, catalog))
}
