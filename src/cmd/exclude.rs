//! What a run over a tree leaves out besides `--exclude`: the patterns of the tree's
//! ignore file, and the catalog itself when it lives inside the tree.

use anyhow::Context;
use fixity::pathtext::{path_bytes, quote_env};
use std::io;
use std::path::Path;

/// The name of the ignore file read from the tree's root.
pub const IGNORE_FILE: &str = ".fixityignore";

/// Patterns from `ROOT/.fixityignore`: one glob per line, `#` comments and blank lines
/// ignored (the same syntax as `--exclude`).
pub(super) fn ignore_file_patterns(root: &Path) -> anyhow::Result<Vec<String>> {
    let path = root.join(IGNORE_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => {
            // A root that cannot be searched is named, not the file looked for inside it.
            let (at, e) = fixity::read::blocked_above(&path, &e).unwrap_or((path, e));
            Err(e).with_context(|| format!("cannot read {}", quote_env(path_bytes(&at))))
        }
    }
}

/// Keeps the catalog (and SQLite's journal files, and the lock) out of the tree's walk
/// when it lives inside the tree.
pub(super) fn catalog_patterns(root: &Path, catalog: &Path) -> Vec<String> {
    let (Ok(root), Some(dir), Some(name)) = (
        fixity::sys::canonicalize(root),
        catalog.parent().map(|d| if d.as_os_str().is_empty() { Path::new(".") } else { d }),
        catalog.file_name(),
    ) else {
        return Vec::new();
    };
    let Ok(dir) = fixity::sys::canonicalize(dir) else { return Vec::new() };
    let Ok(rel) = dir.join(name).strip_prefix(&root).map(Path::to_path_buf) else {
        return Vec::new();
    };
    let Some(text) = rel.to_str() else { return Vec::new() };
    if rel.parent().is_some_and(|p| p == Path::new(".fixity")) {
        return Vec::new();
    }
    let escaped: String = text
        .chars()
        .map(|c| if "*?[]{}\\".contains(c) { format!("[{c}]") } else { c.to_string() })
        .collect();
    // A pattern with '/' matches the path below the root; make sure it has one.
    vec![
        format!("./{escaped}"),
        format!("./{escaped}-*"),
        format!("./{escaped}.lock"),
        format!("./{escaped}.new*"),
    ]
}

/// What a run over the tree at `root` leaves out besides `--exclude`: the ignore file's
/// patterns, the tree's `.fixity`, and the catalog file `catalog` (a SQLite catalog's,
/// `None` for another store) where it lies inside the tree.
pub(super) fn tree_patterns(root: &Path, catalog: Option<&Path>) -> anyhow::Result<Vec<String>> {
    let mut patterns = ignore_file_patterns(root)?;
    patterns.push("./.fixity".into());
    if let Some(catalog) = catalog {
        patterns.extend(catalog_patterns(root, catalog));
    }
    Ok(patterns)
}
