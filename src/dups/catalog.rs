//! Duplicates from a catalog's records: equal size and equal digest, no content read
//! (unless the catalog's algorithm cannot prove equality; see [`trusted`]).
//!
//! Pass 1 pages through the records and keeps one 8-byte fingerprint of (size, digest)
//! per record considered; sorted, only the fingerprints seen twice or more are kept. Pass
//! 2 pages through again: a record whose fingerprint repeats is a candidate; its file is
//! stat'ed (size and mtime must be the recorded ones, and the inode folds links) and
//! handed to the ranking, or, with an algorithm that is not trusted, read whole through
//! the engine for a BLAKE3 digest first. A fingerprint shared by chance costs a stat,
//! never a wrong group: groups are made on the whole digest.

use super::rank::{Candidate, Ranker};
use super::{DupsError, Event, Left, Options, Summary, joined};
use crate::algo::{Algorithm, Strength};
use crate::catalog::{Class, Record, Store, StoreError};
use crate::device::Stamp;
use crate::digest::Digest;
use crate::pathtext::{bytes_path, path_bytes};
use crate::pipeline::{self, Config, Task, Work};
use crate::read::{OpenMode, io_message};
use crate::sys::MetadataExt;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// Whether equal digests of `algo` (and equal sizes) are taken as equal content: only a
/// cryptographic hash with no known way to make collisions. Checksums (CRCs, xxHash) and
/// sampled hashes (imohash) collide by accident or by design; MD5 and SHA-1 collisions
/// can be made on purpose, and a group is what people delete files from.
pub fn trusted(algo: &Algorithm) -> bool {
    algo.strength == Strength::Cryptographic
}

/// The 8-byte fingerprint of a (size, digest) pair for pass 1.
fn fingerprint(size: u64, digest: &[u8]) -> u64 {
    let mut bytes = Vec::with_capacity(8 + digest.len());
    bytes.extend_from_slice(&size.to_le_bytes());
    bytes.extend_from_slice(digest);
    twox_hash::XxHash3_64::oneshot(&bytes)
}

/// What the options and the record's state make of a record.
#[derive(Debug, PartialEq, Eq)]
enum Look {
    /// Not a candidate at all: missing, too small, excluded.
    Skip,
    /// Left out for its standing finding (counted, said).
    Finding(Class),
    /// Considered, of this size.
    Consider(u64),
}

fn look(rec: &Record, opts: &Options) -> Look {
    let Some(size) = rec.size else { return Look::Skip };
    if rec.missing_since.is_some()
        || size < opts.min_size
        || crate::scrub::excluded(&opts.exclude, &rec.path)
        || !(opts.within.is_empty()
            || rec.path.starts_with(&opts.within) && rec.path.get(opts.within.len()) == Some(&b'/'))
    {
        return Look::Skip;
    }
    if rec.last_result.is_failure() {
        return Look::Finding(rec.last_result);
    }
    Look::Consider(size)
}

/// Calls `each` with every record in path order, until it returns false.
fn each_record(store: &dyn Store, each: &mut dyn FnMut(&Record) -> bool) -> Result<(), StoreError> {
    let mut pages = crate::catalog::RecordPages::after(None);
    while let Some(page) = pages.next(store)? {
        if !page.iter().all(&mut *each) {
            break;
        }
    }
    Ok(())
}

/// Keeps one of each value that occurs twice or more in the sorted `v`.
fn keep_repeated(v: &mut Vec<u64>) {
    let (mut w, mut i) = (0, 0);
    while i < v.len() {
        let j = i + v[i..].iter().take_while(|&&x| x == v[i]).count();
        if j - i >= 2 {
            v[w] = v[i];
            w += 1;
        }
        i = j;
    }
    v.truncate(w);
    v.shrink_to_fit();
}

/// A candidate's way from the producer (the records) to the sink (the ranking).
enum Item {
    /// Left out, and why.
    Left(Vec<u8>, Left),
    /// Could not be stat'ed.
    Error(Vec<u8>, String),
    /// As recorded: its digest stands.
    Fresh { size: u64, digest: Digest, id: (u64, u64), path: Vec<u8> },
    /// As recorded, but the algorithm is not trusted: read for BLAKE3 (`linked`: the
    /// file has other names, whose digest is then kept for them).
    Read { id: (u64, u64), path: Vec<u8>, linked: bool },
    /// Another name of a file read before it: its digest is that file's.
    Link { id: (u64, u64), path: Vec<u8> },
}

/// The duplicates among the present files `store` records for the tree at `root` (paths
/// are given as `root` joined with the recorded ones). Events go to `on` in order: files
/// left out or failing as pass 2 meets them, then the groups. Reads only when the
/// catalog's algorithm is not [`trusted`] (through the engine, `cfg`).
pub fn from_catalog(
    store: &dyn Store,
    root: &Path,
    opts: &Options,
    cfg: &Config,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<Summary, DupsError> {
    let algo = store.algorithm();
    let blake3 = crate::algo::lookup("blake3").expect("blake3 is in the registry");
    let confirm = !trusted(algo);
    let mut summary = Summary {
        source: "catalog",
        algorithm: if confirm { blake3.name } else { algo.name },
        catalog_algorithm: Some(algo.name),
        confirmed_by_reading: confirm,
        ..Summary::default()
    };

    // Pass 1: fingerprints (8 bytes a record considered, reserved once when the store
    // can count its records).
    let present = store.count_under(b"").map_or(0, |(p, _)| p);
    let mut prints: Vec<u64> = Vec::with_capacity(usize::try_from(present).unwrap_or(0));
    each_record(store, &mut |rec| {
        if let Look::Consider(size) = look(rec, opts) {
            prints.push(fingerprint(size, rec.digest.as_bytes()));
        }
        true
    })?;
    summary.files_considered = prints.len() as u64;
    prints.sort_unstable();
    keep_repeated(&mut prints);

    // Pass 2: candidates, stat'ed (and read if need be), into the ranking.
    let mut ranker = Ranker::new(&opts.temp_dir, opts.sort_budget);
    let root_bytes = path_bytes(root);
    let algos: Arc<[&'static Algorithm]> = Arc::from(vec![blake3]);
    let mut store_failed: Option<StoreError> = None;
    let mut failed: Option<DupsError> = None;
    // Files with several names, read once (confirming only): queued by the producer, and
    // their digests as the sink gets them. Both hold only files of more than one link.
    let mut queued: HashSet<(u64, u64)> = HashSet::new();
    let mut linked: HashMap<(u64, u64), Option<(u64, Digest)>> = HashMap::new();
    let produce = |push: &mut dyn FnMut(Task<Item>) -> bool| {
        let walked = each_record(store, &mut |rec| {
            let size = match look(rec, opts) {
                Look::Skip => return true,
                Look::Finding(class) => {
                    let item = Item::Left(joined(root_bytes, &rec.path), Left::Finding(class));
                    return push(Task { payload: item, work: None });
                }
                Look::Consider(size) => size,
            };
            if prints.binary_search(&fingerprint(size, rec.digest.as_bytes())).is_err() {
                return true;
            }
            let path = joined(root_bytes, &rec.path);
            let (item, work) = match std::fs::metadata(bytes_path(&path)) {
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                    (Item::Left(path, Left::Gone), None)
                }
                Err(e) => (Item::Error(path, io_message(&e)), None),
                Ok(md) if !md.is_file() || !rec.describes(&Stamp::of(&md), 0) => {
                    (Item::Left(path, Left::Changed), None)
                }
                Ok(md) if confirm => {
                    let id = crate::sys::meta_id(&bytes_path(&path), &md);
                    let linked = md.nlink() > 1;
                    if linked && !queued.insert(id) {
                        (Item::Link { id, path }, None)
                    } else {
                        let work = Work {
                            path: bytes_path(&path),
                            mode: OpenMode::Walked { follow: true },
                            algos: algos.clone(),
                        };
                        (Item::Read { id, path, linked }, Some(work))
                    }
                }
                Ok(md) => {
                    let id = crate::sys::meta_id(&bytes_path(&path), &md);
                    (Item::Fresh { size, digest: rec.digest, id, path }, None)
                }
            };
            push(Task { payload: item, work })
        });
        if let Err(e) = walked {
            store_failed = Some(e);
        }
    };
    pipeline::run(cfg, produce, |item, outcome| {
        let pushed = match item {
            Item::Left(path, why) => {
                match why {
                    Left::Finding(_) => summary.left_out_findings += 1,
                    Left::Changed | Left::Gone => summary.changed_since_scan += 1,
                }
                on(Event::Left { path: &path, why });
                Ok(())
            }
            Item::Error(path, message) => {
                summary.errors += 1;
                on(Event::Error { path: &path, message });
                Ok(())
            }
            Item::Fresh { size, digest, id, path } => {
                ranker.push(&Candidate { size, key: digest.as_bytes(), id, path: &path })
            }
            Item::Read { id, path, linked: several } => {
                summary.files_read += 1;
                let got = match outcome {
                    Some(Ok(h)) => {
                        summary.bytes_read += h.size;
                        Some((h.size, h.digests[0]))
                    }
                    Some(Err(e)) => {
                        summary.errors += 1;
                        on(Event::Error { path: &path, message: e.message() });
                        None
                    }
                    None => None,
                };
                if several {
                    linked.insert(id, got);
                }
                match got {
                    Some((size, key)) => {
                        ranker.push(&Candidate { size, key: key.as_bytes(), id, path: &path })
                    }
                    None => Ok(()),
                }
            }
            Item::Link { id, path } => match linked.get(&id).copied().flatten() {
                Some((size, key)) => {
                    ranker.push(&Candidate { size, key: key.as_bytes(), id, path: &path })
                }
                None => Ok(()),
            },
        };
        match pushed {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    });
    if let Some(e) = store_failed {
        return Err(e.into());
    }
    if let Some(e) = failed {
        return Err(e);
    }
    let [groups, files, links, wasted] = ranker.finish(summary.algorithm, on)?;
    (summary.groups, summary.files, summary.links, summary.wasted_bytes) =
        (groups, files, links, wasted);
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_repeated_fingerprints_stay() {
        let mut v = vec![1, 2, 2, 3, 4, 4, 4, 5, 6, 6];
        keep_repeated(&mut v);
        assert_eq!(v, [2, 4, 6]);
        let mut v = vec![7];
        keep_repeated(&mut v);
        assert!(v.is_empty());
    }

    #[test]
    fn only_cryptographic_digests_are_trusted() {
        let t = |n| trusted(crate::algo::lookup(n).unwrap());
        assert!(t("sha256") && t("blake3") && t("sha512"));
        assert!(!t("md5") && !t("sha1") && !t("crc32") && !t("xxh3") && !t("imohash"));
    }

    #[test]
    fn a_fingerprint_takes_the_size_and_the_digest() {
        assert_ne!(fingerprint(1, &[0; 4]), fingerprint(2, &[0; 4]));
        assert_ne!(fingerprint(1, &[0; 4]), fingerprint(1, &[0, 0, 0, 1]));
        assert_eq!(fingerprint(9, &[5; 32]), fingerprint(9, &[5; 32]));
    }
}
