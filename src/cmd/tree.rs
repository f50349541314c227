//! Which tree and catalog a command works on, from the directory it is given: the
//! tree's catalog found upward (`fixity::catalog::locate`), the directory a subtree of
//! that tree; and the one line on standard error that says which catalog was used.

use crate::cli::FindArgs;
use fixity::catalog::locate::{self, LocateError, Located, Search};
use fixity::pathtext::{path_bytes, quote_env};
use std::path::{Path, PathBuf};

/// The tree `dir` is in and its catalog. A catalog given (`catalog`) wins: a file, with
/// the tree it records when `dir` is inside it (else `dir` is the tree); a PostgreSQL URL,
/// with the nearest of this host's trees `dir` is in, if the catalog has one (else `dir`).
/// Otherwise `.fixity/catalog.db` in `dir` or the nearest directory above it; with
/// `fresh` (a scan), a directory in no tree is the root of a new one.
pub(crate) fn locate(
    dir: &Path,
    catalog: Option<&Path>,
    host: Option<&str>,
    find: FindArgs,
    fresh: bool,
) -> anyhow::Result<Located> {
    if let Some(catalog) = catalog {
        if let Some(url) = super::pg_url(catalog) {
            return Ok(in_postgres(dir, catalog, url, host));
        }
        // (A tree that is not there, an unmounted one: the catalog still tells about it.)
        return Ok(locate::with_catalog(dir, catalog).unwrap_or_else(|_| Located {
            root: dir.to_path_buf(),
            catalog: catalog.to_path_buf(),
            subtree: Vec::new(),
            found_above: false,
        }));
    }
    match locate::find(dir, Search { cross_fs: find.cross_fs }) {
        Ok(found) => Ok(found),
        Err(LocateError::NotFound { dir, .. }) if fresh => Ok(Located {
            catalog: fixity::catalog::sqlite::Catalog::default_path(&dir),
            root: dir,
            subtree: Vec::new(),
            found_above: false,
        }),
        Err(e) => Err(e.into()),
    }
}

/// With a PostgreSQL catalog: the nearest tree of `host` (this machine) that holds `dir`;
/// `dir` itself when none does, or the catalog cannot be asked (the run says why).
fn in_postgres(dir: &Path, catalog: &Path, url: &str, host: Option<&str>) -> Located {
    let resolved = fixity::sys::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mine = Located {
        root: resolved.clone(),
        catalog: catalog.to_path_buf(),
        subtree: Vec::new(),
        found_above: false,
    };
    let host = host.map_or_else(fixity::catalog::postgres::this_host, str::to_string);
    let Ok(roots) = fixity::catalog::postgres::tree_roots(url, &host) else { return mine };
    if roots.iter().any(|r| r.as_slice() == path_bytes(&resolved)) {
        return mine;
    }
    match locate::among(&resolved, &roots) {
        Ok(Some((root, subtree))) => {
            Located { root, catalog: catalog.to_path_buf(), subtree, found_above: true }
        }
        _ => mine,
    }
}

/// Says on standard error which catalog a command uses, when that is not plain from its
/// command line (found above the directory named, or a subtree of the tree it records):
/// `fixity: catalog /srv/data/.fixity/catalog.db (tree /srv/data, subtree photos/2020)`.
/// Not under `quiet`.
pub(super) fn say(found: &Located, quiet: bool) {
    if quiet || !(found.found_above || found.is_subtree()) {
        return;
    }
    crate::ui::error(&line(found));
}

/// The line [`say`] prints, without the program's name.
pub(super) fn line(found: &Located) -> String {
    let catalog = match found.catalog.to_str().and_then(|c| super::pg_url(Path::new(c))) {
        Some(url) => fixity::catalog::postgres::mask(url),
        None => quote_env(path_bytes(&found.catalog)),
    };
    let mut text = format!("catalog {catalog} (tree {}", quote_env(path_bytes(&found.root)));
    if found.is_subtree() {
        text.push_str(&format!(", subtree {}", quote_env(&found.subtree)));
    }
    text.push(')');
    text
}

/// The directory of the subtree: `root` joined with `sub`.
pub(super) fn dir_of(found: &Located) -> PathBuf {
    fixity::scrub::full_path(&found.root, &found.subtree)
}
