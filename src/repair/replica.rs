//! Good copies in a replica (`repair --from DIR`: a backup mount, an rsync copy): a file
//! is taken only when its digest is the catalog's recorded one. The file at the same path
//! is tried first; the others are found by digest among the replica's files of the same
//! size (so a file moved within the replica is found, and only files of a size some
//! target has are read). The replica is only read, never written.

use crate::catalog::Record;
use crate::digest::Digest;
use crate::pathtext::{STATE_DIR, bytes_path};
use crate::pipeline::hash_path;
use crate::read::{OpenMode, ReadOptions};
use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

/// The digest of the file at `path` in `rec`'s algorithm, if it can be read (unchanged
/// while read).
fn digest(path: &Path, rec: &Record) -> Option<Digest> {
    let opts = ReadOptions::default();
    let h = hash_path(path, OpenMode::Named, &[rec.algo], &mut Vec::new(), &opts, None).ok()?;
    h.digests.into_iter().next()
}

/// For each target, a replica file with its recorded digest, if there is one.
pub(crate) fn find(replica: &Path, targets: &[Record]) -> io::Result<Vec<Option<PathBuf>>> {
    std::fs::read_dir(replica)?;
    let mut out: Vec<Option<PathBuf>> = targets
        .iter()
        .map(|rec| {
            let p = replica.join(bytes_path(&rec.path));
            let m = std::fs::metadata(&p).ok()?;
            let fits = m.is_file() && rec.size.is_none_or(|s| s == m.len());
            fits.then(|| digest(&p, rec)).flatten().filter(|d| d.ct_eq(&rec.digest)).map(|_| p)
        })
        .collect();
    let sizes: HashSet<u64> =
        targets.iter().zip(&out).filter(|(_, o)| o.is_none()).filter_map(|(r, _)| r.size).collect();
    if sizes.is_empty() {
        return Ok(out);
    }
    // Files of those sizes, by size; read one by one until every target is matched.
    let mut by_size: HashMap<u64, Vec<PathBuf>> = HashMap::new();
    walk(replica, &sizes, &mut by_size);
    for (rec, slot) in targets.iter().zip(out.iter_mut()) {
        if slot.is_some() {
            continue;
        }
        let Some(candidates) = rec.size.and_then(|s| by_size.get(&s)) else { continue };
        *slot = candidates
            .iter()
            .find(|p| digest(p, rec).is_some_and(|d| d.ct_eq(&rec.digest)))
            .cloned();
    }
    Ok(out)
}

/// Regular files under `dir` (symbolic links not followed, `.fixity` left out) whose size
/// is in `sizes`.
fn walk(dir: &Path, sizes: &HashSet<u64>, out: &mut HashMap<u64, Vec<PathBuf>>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() && e.file_name() != STATE_DIR {
            walk(&e.path(), sizes, out);
        } else if t.is_file()
            && let Ok(m) = e.metadata()
            && sizes.contains(&m.len())
        {
            out.entry(m.len()).or_default().push(e.path());
        }
    }
}
