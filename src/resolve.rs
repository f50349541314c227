//! The explicit end of a finding, on any store: `accept` records a file's current content
//! as good (ending CORRUPT or UNREADABLE), `forget` drops the records of missing files.
//! Both are all or nothing: every path is checked first, and if one is refused nothing
//! is recorded. The caller renders the events.

use crate::algo::Algorithm;
use crate::catalog::{Class, Found, Record, Store, StoreError};
use crate::device::Stamp;
use crate::digest::Digest;
use crate::pathtext::path_bytes;
use crate::pipeline::{Hashed, hash_path};
use crate::read::{OpenMode, ReadOptions, io_message};
use crate::sys::OsStrExt;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// Where the paths' records are.
#[derive(Clone, Copy, Debug)]
pub enum Tree<'a> {
    /// A catalog of the tree at this (resolved) directory: paths are recorded relative
    /// to it.
    Catalog(&'a Path),
    /// Each file's own extended attributes: paths are taken as given.
    Attributes,
}

/// Why a path is refused.
#[derive(Debug)]
pub enum Refusal {
    /// accept: the file is recorded as missing (forget drops its record).
    RecordedMissing,
    /// No record: not in the catalog, or no fixity attributes on the file.
    NoRecord,
    /// accept: the file (or its attributes) cannot be read; the message says why.
    Unreadable(String),
    /// forget: there are records there, but of files that are present.
    NotMissing,
    /// forget: nothing is recorded at or below the path.
    NothingThere,
}

/// What happened to one path.
#[derive(Debug)]
pub enum Event<'a> {
    /// The path is refused (and nothing at all is recorded).
    Refused { path: &'a Path, why: Refusal },
    /// The file's current content is now its recorded content.
    Accepted {
        path: &'a Path,
        /// Its last result before (CORRUPT, UNREADABLE, OK ...).
        was: Class,
        /// The digest recorded before, and the one recorded now.
        recorded: Digest,
        now: Digest,
    },
    /// The records of `missing` missing files at or below the path are gone.
    Forgot { path: &'a Path, missing: usize },
}

/// What stops `accept` or `forget` as a whole.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// A path that does not lead anywhere (not even its parent exists).
    #[error("cannot find {}", crate::pathtext::quote_env(path_bytes(.0)))]
    NotFound(PathBuf),
    /// A path outside the catalog's tree.
    #[error(
        "{} is not inside the tree {}",
        crate::pathtext::quote_env(path_bytes(.0)),
        crate::pathtext::quote_env(path_bytes(.1))
    )]
    OutsideTree(PathBuf, PathBuf),
    /// The new record of a file could not be written (its attributes).
    #[error("cannot record {}: {}", crate::pathtext::quote_env(path_bytes(.0)), io_message(.1))]
    Record(PathBuf, io::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Records the current content of each of `paths` as good; returns whether it did
/// (false: a path was refused, nothing was recorded). Events come in path order: the
/// refusals as the paths are looked at, the acceptances once all are recorded.
pub fn accept(
    store: &mut dyn Store,
    tree: Tree,
    paths: &[PathBuf],
    on: &mut dyn FnMut(Event),
) -> Result<bool, ResolveError> {
    let mut buf = Vec::new();
    let mut todo: Vec<(&Path, Record, Hashed)> = Vec::new();
    let mut refused = false;
    for p in paths {
        let rel = relative(tree, p)?;
        let why = match store.lookup(&rel) {
            Ok(Some(r)) if r.missing_since.is_some() => Refusal::RecordedMissing,
            Ok(Some(r)) => {
                // A file named on the command line is the file meant; one inside a
                // catalog's tree is taken as a scan sees it (a symlink is not followed).
                let (full, mode) = match tree {
                    Tree::Attributes => (p.clone(), OpenMode::Named),
                    Tree::Catalog(root) => {
                        (crate::scrub::full_path(root, &rel), OpenMode::Walked { follow: false })
                    }
                };
                match current(&full, mode, r.algo, &mut buf) {
                    Ok(h) => {
                        todo.push((p, r, h));
                        continue;
                    }
                    Err(message) => Refusal::Unreadable(message),
                }
            }
            Ok(None) => Refusal::NoRecord,
            Err(StoreError::Attributes(e)) => Refusal::Unreadable(io_message(&e)),
            Err(e) => return Err(e.into()),
        };
        refused = true;
        on(Event::Refused { path: p, why });
    }
    if refused {
        return Ok(false);
    }
    let now = store.clock()?;
    // A run of its own, so its changes end with an entry of the catalog's chain of proofs.
    store.start_run("accept", now)?;
    let mut done = Vec::with_capacity(todo.len());
    for (p, rec, h) in todo {
        let stamp = Stamp { size: h.size, mtime_ns: h.mtime_ns.unwrap_or(0), ctime_ns: h.ctime_ns };
        // Whether it has an ACL or other attributes, as a scan records it.
        let access = h.access.map(|a| a.with_attributes(p));
        let found = Found { digest: h.digests[0], stamp, file_id: h.file_id, access };
        match store.record_content(&rec, &found, Class::Ok, now) {
            Ok(()) => {}
            Err(StoreError::Attributes(e)) => return Err(ResolveError::Record(p.into(), e)),
            Err(e) => return Err(e.into()),
        }
        done.push((p, rec.last_result, rec.digest, found.digest));
    }
    store.commit()?;
    store.finish_run(true, &summary("accept", done.len()))?;
    for (path, was, recorded, now) in done {
        on(Event::Accepted { path, was, recorded, now });
    }
    Ok(true)
}

/// The file's current content hashed with `algo`, or why it cannot be read.
fn current(
    path: &Path,
    mode: OpenMode,
    algo: &'static Algorithm,
    buf: &mut Vec<u8>,
) -> Result<Hashed, String> {
    hash_path(path, mode, &[algo], buf, &ReadOptions::default(), None).map_err(|e| e.message())
}

/// Drops the records of the missing files at or below each of `paths`; returns whether
/// it did (false: a path was refused, nothing was dropped).
pub fn forget(
    store: &mut dyn Store,
    tree: Tree,
    paths: &[PathBuf],
    on: &mut dyn FnMut(Event),
) -> Result<bool, ResolveError> {
    let mut todo = Vec::new();
    let mut refused = false;
    for p in paths {
        let rel = relative(tree, p)?;
        let (present, missing) = store.count_under(&rel)?;
        if missing > 0 {
            todo.push((p, rel));
            continue;
        }
        refused = true;
        let why = if present > 0 { Refusal::NotMissing } else { Refusal::NothingThere };
        on(Event::Refused { path: p, why });
    }
    if refused {
        return Ok(false);
    }
    store.start_run("forget", store.clock()?)?;
    let mut done = Vec::with_capacity(todo.len());
    for (p, rel) in todo {
        done.push((p, store.forget_missing(&rel)?));
    }
    store.commit()?;
    let forgotten = done.iter().map(|d| d.1).sum();
    store.finish_run(true, &summary("forget", forgotten))?;
    for (path, missing) in done {
        on(Event::Forgot { path, missing });
    }
    Ok(true)
}

/// The summary an `accept` or `forget` run leaves in the store's runs.
fn summary(command: &str, files: usize) -> String {
    serde_json::json!({ "command": command, "files": files, "complete": true }).to_string()
}

/// `path` as the store records it. In a catalog's tree (resolved): relative to the tree,
/// the longest part of it that exists resolved (symlinks, `..`), the rest (a file or
/// directory that is gone) taken as written; the empty path is the tree itself. In
/// attributes: as given.
pub(crate) fn relative(tree: Tree, path: &Path) -> Result<Vec<u8>, ResolveError> {
    let Tree::Catalog(tree) = tree else {
        return Ok(path_bytes(path).to_vec());
    };
    let not_found = || ResolveError::NotFound(path.to_path_buf());
    let abs = crate::sys::absolute(path).map_err(|_| not_found())?;
    // The last component is kept as written unless it is `.` or `..` (a symlink in the
    // tree is recorded as itself, not as its target).
    let (mut base, mut rest): (PathBuf, Vec<OsString>) = match (abs.file_name(), abs.parent()) {
        (Some(name), Some(parent)) => (parent.to_path_buf(), vec![name.to_owned()]),
        _ => (abs.clone(), Vec::new()),
    };
    let resolved = loop {
        match crate::sys::canonicalize(&base) {
            Ok(r) => break r,
            Err(_) => match (base.file_name(), base.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name.to_owned());
                    base = parent.to_path_buf();
                }
                _ => return Err(not_found()),
            },
        }
    };
    let mut full = resolved;
    for part in rest.iter().rev() {
        full.push(part);
    }
    match full.strip_prefix(tree) {
        // Joined with `/` whatever the system's separator: as the walk writes names.
        Ok(rel) => {
            Ok(rel.components().map(|c| c.as_os_str().as_bytes()).collect::<Vec<_>>().join(&b'/'))
        }
        Err(_) => Err(ResolveError::OutsideTree(path.to_path_buf(), tree.to_path_buf())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_recorded_relative_to_the_resolved_tree() {
        let dir = tempfile::tempdir().unwrap();
        let tree = crate::sys::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(tree.join("sub")).unwrap();
        std::fs::write(tree.join("sub/f"), b"x").unwrap();
        let t = Tree::Catalog(&tree);
        assert_eq!(relative(t, &tree.join("sub/f")).unwrap(), b"sub/f");
        // A file that is gone, in a directory that is gone: taken as written.
        assert_eq!(relative(t, &tree.join("gone/g")).unwrap(), b"gone/g");
        // `..` inside the tree resolves; the tree itself is the empty path.
        assert_eq!(relative(t, &tree.join("sub/..")).unwrap(), b"");
        assert!(matches!(relative(t, Path::new("/")), Err(ResolveError::OutsideTree(..))));
        // Attributes: as given.
        assert_eq!(relative(Tree::Attributes, Path::new("a/../b")).unwrap(), b"a/../b");
    }
}
