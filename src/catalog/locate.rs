//! Which tree a directory named on the command line is in, and so which catalog a command
//! uses: as git finds its repository, the directory itself or the nearest directory
//! above it holding `.fixity/catalog.db`, the search stopping where the file system
//! changes (a mount point) unless asked to go on. The directory is then a subtree of
//! that tree: its path below the tree's root is a prefix of the records' paths (raw
//! bytes, relative to the root, in byte order), so the records under it are one range,
//! [`crate::catalog::below`] it.
//!
//! A catalog given explicitly (`--catalog FILE`) wins over the search; when it records
//! its tree (the SQLite catalog does, see `sqlite::tree`) and the directory is inside
//! that tree, the directory is a subtree of it too.

use super::sqlite::Catalog;
use crate::pathtext::{path_bytes, quote_env};
use crate::sys::MetadataExt;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Where a directory's tree and catalog are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The tree's root (canonical).
    pub root: PathBuf,
    /// The catalog file.
    pub catalog: PathBuf,
    /// The directory's path below the root, raw bytes without a leading or trailing `/`;
    /// empty when the directory is the root itself.
    pub subtree: Vec<u8>,
    /// Whether the catalog was found above the directory named (not in it, and not
    /// given).
    pub found_above: bool,
}

impl Located {
    /// Whether the run covers part of the tree only.
    pub fn is_subtree(&self) -> bool {
        !self.subtree.is_empty()
    }
}

/// Why no tree was found.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    /// The directory named cannot be resolved.
    #[error("cannot find {}: {}", quote_env(path_bytes(.0)), crate::read::io_message(.1))]
    Unresolved(PathBuf, std::io::Error),
    /// No catalog in the directory or above it.
    #[error("{}", not_found(.dir, .last, *.boundary))]
    NotFound {
        /// The directory named (canonical).
        dir: PathBuf,
        /// The last directory looked in.
        last: PathBuf,
        /// Whether the search stopped at a file system's boundary (below `last`'s parent).
        boundary: bool,
    },
}

fn not_found(dir: &Path, last: &Path, boundary: bool) -> String {
    let at = quote_env(path_bytes(&Catalog::default_path(dir)));
    let above = if dir == last {
        String::new()
    } else {
        format!(" nor in a directory above it up to {}", quote_env(path_bytes(last)))
    };
    let stop = if boundary {
        " (the search stops where the file system changes; --cross-fs goes on)"
    } else {
        ""
    };
    format!("no catalog at {at}{above}{stop}: run `fixity scan` first, or pass --catalog")
}

/// How to search.
#[derive(Clone, Copy, Debug, Default)]
pub struct Search {
    /// Go on above a file system's boundary (a mount point).
    pub cross_fs: bool,
}

/// The tree `dir` is in: the nearest of `dir` and the directories above it that holds
/// `.fixity/catalog.db` (`dir` is resolved first: `.`, relative paths and symbolic links
/// name the directory they lead to). Only `dir`'s ancestors are looked at, and none
/// above a change of file system unless `how.cross_fs`.
pub fn find(dir: &Path, how: Search) -> Result<Located, LocateError> {
    let dir = resolve(dir)?;
    let device = |d: &Path| std::fs::metadata(d).ok().map(|m| m.dev());
    // A catalog that cannot be looked at (a directory that cannot be searched) ends the
    // search there: the command then says why it cannot open it.
    let holds = |d: &Path| match std::fs::metadata(Catalog::default_path(d)) {
        Ok(m) => m.is_file(),
        Err(e) => !matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory),
    };
    match search(&dir, how.cross_fs, &device, &holds) {
        Ok(root) => {
            let subtree = below_root(&root, &dir).unwrap_or_default();
            let found_above = root != dir;
            Ok(Located { catalog: Catalog::default_path(&root), root, subtree, found_above })
        }
        Err((last, boundary)) => Err(LocateError::NotFound { dir, last, boundary }),
    }
}

/// The tree `dir` is in with the catalog file `catalog` given explicitly: the tree the
/// catalog records, when `dir` is inside it and that tree is still there (a tree that
/// moved below where it was is the catalog's tree from then on: see `sqlite::tree`);
/// else `dir` itself (a catalog not made yet, or one that records no tree, or another
/// tree: the run decides).
pub fn with_catalog(dir: &Path, catalog: &Path) -> Result<Located, LocateError> {
    let dir = resolve(dir)?;
    let recorded = Catalog::open_read_only(catalog).ok().and_then(|c| c.standing_root().ok());
    let (root, subtree) = match recorded.flatten() {
        Some(root) => match below_root(&root, &dir) {
            Some(sub) => (root, sub),
            None => (dir, Vec::new()),
        },
        None => (dir, Vec::new()),
    };
    Ok(Located { root, catalog: catalog.to_path_buf(), subtree, found_above: false })
}

/// The tree among `roots` (absolute, canonical) that `dir` is in, the nearest one: for
/// a catalog that keeps many trees (PostgreSQL, by host and root).
pub fn among(dir: &Path, roots: &[Vec<u8>]) -> Result<Option<(PathBuf, Vec<u8>)>, LocateError> {
    let dir = resolve(dir)?;
    let best = roots
        .iter()
        .map(|r| crate::pathtext::bytes_path(r))
        .filter_map(|r| below_root(&r, &dir).map(|sub| (r, sub)))
        .min_by_key(|(_, sub)| sub.len());
    Ok(best)
}

/// `dir`, absolute and canonical.
fn resolve(dir: &Path) -> Result<PathBuf, LocateError> {
    crate::sys::canonicalize(dir).map_err(|e| LocateError::Unresolved(dir.to_path_buf(), e))
}

/// `dir`'s path below `root` (empty for the root itself); `None` when it is not inside.
fn below_root(root: &Path, dir: &Path) -> Option<Vec<u8>> {
    let rel = dir.strip_prefix(root).ok()?;
    Some(path_bytes(rel).to_vec())
}

/// The nearest of `dir` (absolute) and its ancestors for which `holds` is true, not
/// going above a directory whose `device` differs from `dir`'s unless `cross_fs`; else
/// the last directory looked in, and whether a boundary stopped the search.
fn search(
    dir: &Path,
    cross_fs: bool,
    device: &dyn Fn(&Path) -> Option<u64>,
    holds: &dyn Fn(&Path) -> bool,
) -> Result<PathBuf, (PathBuf, bool)> {
    let start = device(dir);
    let mut last = dir;
    for d in dir.ancestors() {
        if !cross_fs && d != dir && device(d) != start {
            return Err((last.to_path_buf(), true));
        }
        if holds(d) {
            return Ok(d.to_path_buf());
        }
        last = d;
    }
    Err((last.to_path_buf(), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn the_nearest_directory_holding_a_catalog_is_the_tree() {
        let dev = |_: &Path| Some(1);
        let holds = |d: &Path| d == Path::new("/srv/data") || d == Path::new("/srv");
        let found = search(Path::new("/srv/data/photos/2020"), false, &dev, &holds);
        assert_eq!(found, Ok(at("/srv/data")));
        assert_eq!(search(Path::new("/srv/data"), false, &dev, &holds), Ok(at("/srv/data")));
        assert_eq!(search(Path::new("/srv/other"), false, &dev, &holds), Ok(at("/srv")));
        // None anywhere: every ancestor up to / was looked in.
        let none = |_: &Path| false;
        assert_eq!(search(Path::new("/a/b"), false, &dev, &none), Err((at("/"), false)));
        // A tree whose root is / itself.
        let root = |d: &Path| d == Path::new("/");
        assert_eq!(search(Path::new("/a/b"), false, &dev, &root), Ok(at("/")));
    }

    #[test]
    fn the_search_stops_where_the_file_system_changes_unless_told() {
        // /mnt/disk is a mount point: it and below are device 2, /mnt and / device 1.
        let dev = |d: &Path| Some(if d.starts_with("/mnt/disk") { 2 } else { 1 });
        let holds = |d: &Path| d == Path::new("/mnt");
        let start = Path::new("/mnt/disk/photos");
        assert_eq!(search(start, false, &dev, &holds), Err((at("/mnt/disk"), true)));
        assert_eq!(search(start, true, &dev, &holds), Ok(at("/mnt")));
        // The mount point itself is on the mounted file system: a tree there is found.
        let at_mount = |d: &Path| d == Path::new("/mnt/disk");
        assert_eq!(search(start, false, &dev, &at_mount), Ok(at("/mnt/disk")));
    }

    #[test]
    fn the_subtree_is_the_path_below_the_root() {
        assert_eq!(
            below_root(Path::new("/srv/data"), Path::new("/srv/data/p/2020")),
            Some(b"p/2020".to_vec())
        );
        assert_eq!(below_root(Path::new("/srv/data"), Path::new("/srv/data")), Some(Vec::new()));
        assert_eq!(below_root(Path::new("/"), Path::new("/srv")), Some(b"srv".to_vec()));
        // A sibling whose name starts like the root's is not inside it.
        assert_eq!(below_root(Path::new("/srv/data"), Path::new("/srv/data2")), None);
        let roots = [b"/srv".to_vec(), b"/srv/data".to_vec(), b"/other".to_vec()];
        let d = tempfile::tempdir().unwrap();
        let real = crate::sys::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(real.join("a/b")).unwrap();
        let mut with = roots.to_vec();
        with.push(path_bytes(&real).to_vec());
        with.push(path_bytes(&real.join("a")).to_vec());
        let found = among(&real.join("a/b"), &with).unwrap();
        assert_eq!(found, Some((real.join("a"), b"b".to_vec())));
        assert_eq!(among(&real, &roots).unwrap(), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_in_a_tree_finds_its_catalog_through_dots_and_links() {
        let d = tempfile::tempdir().unwrap();
        let root = crate::sys::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(root.join(".fixity")).unwrap();
        std::fs::write(Catalog::default_path(&root), b"").unwrap();
        std::fs::create_dir_all(root.join("photos/2020")).unwrap();
        let link = root.join("link");
        std::os::unix::fs::symlink(root.join("photos"), &link).unwrap();
        let found = find(&link.join("2020/."), Search::default()).unwrap();
        assert_eq!(found.root, root);
        assert_eq!(found.subtree, b"photos/2020");
        assert!(found.found_above && found.is_subtree());
        assert_eq!(found.catalog, root.join(".fixity/catalog.db"));
        let top = find(&root, Search::default()).unwrap();
        assert!(!top.found_above && !top.is_subtree());
        let gone = find(&root.join("nothing"), Search::default());
        assert!(matches!(gone, Err(LocateError::Unresolved(..))));
    }
}
