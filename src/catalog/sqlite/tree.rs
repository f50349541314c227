//! The tree a catalog's records belong to. Their paths are relative to it, so a run over
//! a directory inside it, or around it, would read every path from the wrong place: the
//! directory's files recorded moved, the rest of the tree missing. `meta` holds the tree
//! (`root`: its canonical path's bytes, a blob), recorded by the first run over a whole
//! tree; [`claim`] refuses such a run before anything is written, and takes a tree that
//! moved (another mount point, a copy checked against the original's catalog, even a
//! tree moved below or above where it was) as the catalog's tree from then on.

use super::{Catalog, Result};
use crate::catalog::store::StoreError;
use crate::pathtext::{bytes_path, path_bytes, quote_env};
use std::path::Path;

/// The `meta` key holding the tree.
const ROOT_KEY: &str = "root";

/// How many recorded files are looked for where the catalog's tree was: any one of them
/// there says the tree is still there.
const SAMPLE: usize = 16;

/// Checks that a run over the whole tree at `root` is over the tree of the catalog
/// (whose file is `path`), and records `root` as its tree (when `write`).
pub(super) fn claim(
    cat: &Catalog,
    path: &Path,
    root: &Path,
    write: bool,
) -> std::result::Result<(), StoreError> {
    let root = crate::sys::canonicalize(root)
        .map_err(|e| StoreError::Refused(format!("{}: {e}", quote_env(path_bytes(root)))))?;
    let recorded = cat.root()?.map(|r| bytes_path(&r));
    if let Some(tree) = recorded.as_deref().filter(|t| *t != root) {
        let how = if root.starts_with(tree) {
            Some("is inside")
        } else if tree.starts_with(&root) {
            Some("holds")
        } else {
            None
        };
        // Inside the tree or around it while the tree is still there with its files: a
        // run over part of it, or over more. (A tree that moved below or above where it
        // was has left its files' old paths.)
        if let Some(how) = how
            && cat
                .present_sample(SAMPLE)?
                .iter()
                .any(|rel| tree.join(bytes_path(rel)).symlink_metadata().is_ok())
        {
            let tree = quote_env(path_bytes(tree));
            return Err(StoreError::Refused(format!(
                "{} {how} {tree}, the tree whose files catalog {} records (by their paths \
                 from there): run over {tree}, or give this directory a catalog of its own \
                 (--catalog)",
                quote_env(path_bytes(&root)),
                quote_env(path_bytes(path)),
            )));
        }
    }
    if write && recorded.as_deref() != Some(root.as_path()) {
        cat.set_root(path_bytes(&root))?;
    }
    Ok(())
}

impl Catalog {
    /// The tree the records' paths are relative to (canonical), if a run has recorded it
    /// and it is still there with its files (as [`claim`] tells).
    pub fn standing_root(&self) -> Result<Option<std::path::PathBuf>> {
        let Some(tree) = self.root()?.map(|r| bytes_path(&r)) else { return Ok(None) };
        let there = self.present_sample(SAMPLE)?;
        let there = there.iter().any(|rel| tree.join(bytes_path(rel)).symlink_metadata().is_ok());
        Ok(there.then_some(tree))
    }

    /// The tree the records' paths are relative to, if a run has recorded it.
    fn root(&self) -> Result<Option<Vec<u8>>> {
        self.meta_blob(ROOT_KEY)
    }

    /// Records the tree the records' paths are relative to.
    fn set_root(&self, root: &[u8]) -> Result<()> {
        self.set_meta_blob(ROOT_KEY, Some(root))
    }

    /// Up to `n` paths of files on record as present, in path order.
    fn present_sample(&self, n: usize) -> Result<Vec<Vec<u8>>> {
        let mut st = self
            .conn
            .prepare("SELECT path FROM files WHERE missing_since IS NULL ORDER BY path LIMIT ?1")
            .map_err(|e| self.err(e))?;
        st.query_map([n as i64], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Stamp;

    fn refused(r: std::result::Result<(), StoreError>) -> String {
        match r {
            Err(StoreError::Refused(why)) => why,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_tree_inside_or_around_is_refused_while_the_tree_is_there_and_a_moved_one_taken() {
        let d = tempfile::tempdir().unwrap();
        let base = crate::sys::canonicalize(d.path()).unwrap();
        let tree = crate::sys::join(&base, "t".as_ref());
        std::fs::create_dir_all(tree.join("a")).unwrap();
        std::fs::write(tree.join("a/x"), b"1").unwrap();
        let file = base.join("c.db");
        let c = Catalog::open(&file, true, None).unwrap();
        // A catalog from before the check records the tree its first run is over.
        assert_eq!(c.root().unwrap(), None);
        claim(&c, &file, &tree, true).unwrap();
        assert_eq!(c.root().unwrap().as_deref(), Some(path_bytes(&tree)));
        let mut w = c.writer();
        w.insert(b"a/x", Stamp::sized(1, 1), None, b"d", 10).unwrap();
        w.commit().unwrap();

        let a = crate::sys::join(&tree, "a".as_ref());
        let why = refused(claim(&c, &file, &a, true));
        let q = |p: &Path| quote_env(path_bytes(p));
        let inside = format!("{} is inside {}, ", q(&a), q(&tree));
        assert!(why.starts_with(&inside), "{why}");
        assert!(refused(claim(&c, &file, &base, true)).contains(" holds "));
        assert_eq!(c.root().unwrap().as_deref(), Some(path_bytes(&tree)), "nothing written");
        // Opened only to compare, nothing is recorded either.
        let beside = base.join("beside");
        std::fs::create_dir(&beside).unwrap();
        claim(&c, &file, &beside, false).unwrap();
        assert_eq!(c.root().unwrap().as_deref(), Some(path_bytes(&tree)));

        // The tree moved below its old place: its file's old path is gone.
        let moved = crate::sys::join(&tree, "moved".as_ref());
        std::fs::create_dir(&moved).unwrap();
        std::fs::rename(&a, moved.join("a")).unwrap();
        claim(&c, &file, &moved, true).unwrap();
        assert_eq!(c.root().unwrap().as_deref(), Some(path_bytes(&moved)));
        assert!(refused(claim(&c, &file, &tree, true)).contains(" holds "));
    }
}
