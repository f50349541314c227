//! Duplicates by reading a tree that has no catalog, reading as little as proves it.
//!
//! 1. The walk (symbolic links not followed, `--exclude` and fixity's state pruned, each
//!    file stat'ed while its directory is listed) gives every file's size; files whose
//!    size no other file has are done with, unread.
//! 2. Each file left is opened (its inode, for links, comes from the open file) and
//!    probed, on as many threads as the engine has workers: a file of up to [`WHOLE_UP_TO`] bytes is read whole
//!    and its BLAKE3 digest is final; a larger one gives a BLAKE3 digest of its first and
//!    last [`HEAD`] bytes, which tells most different files of one size apart.
//! 3. Large files whose probe another file of their size shares are read whole, once per
//!    inode, through the engine (`pipeline::run`: the storage policy, memory maps, BLAKE3
//!    on several threads inside a large file), in path order.
//!
//! Names are held in one buffer, with 24 bytes a file (size, place, length): the walk's
//! list is the one cost in memory that grows with the tree, as for jdupes, rdfind and
//! fclones; the ranking is bounded (see [`super::rank`]).

use super::rank::{Candidate, Ranker};
use super::{DupsError, Event, Options, Summary};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::pathtext::{bytes_path, path_bytes};
use crate::pipeline::{self, Config, Task, Work};
use crate::read::{OpenMode, ReadError, io_message};
use crate::sys::FileExt;
use crate::walk::{WalkEvent, WalkOptions, walk};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes probed at each end of a larger file.
const HEAD: u64 = 4096;

/// Files up to this size are read whole by the probe: as cheap as reading both ends.
const WHOLE_UP_TO: u64 = 16 * 1024;

/// A walked file of a size worth looking at.
struct Entry {
    size: u64,
    /// Its name: `names[at..at + len]`.
    at: usize,
    len: usize,
}

/// What a probe found of one file.
#[derive(Clone, Copy)]
struct Probe {
    id: (u64, u64),
    /// BLAKE3 of the whole file (`whole`), else of its two ends.
    key: Digest,
    whole: bool,
    read: u64,
}

/// The duplicates in the tree at `root` (a directory), found by reading (see the module's
/// description). Events go to `on` in order: walk and read errors as they come, then
/// `Reading` before the whole-file reads, then the groups.
pub fn read_tree(
    root: &Path,
    opts: &Options,
    cfg: &Config,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<Summary, DupsError> {
    let blake3 = crate::algo::lookup("blake3").expect("blake3 is in the registry");
    let mut summary = Summary { source: "read", algorithm: blake3.name, ..Summary::default() };

    // 1. The walk, and the sizes shared.
    let mut names = Vec::new();
    let mut entries = Vec::new();
    let walk_opts = WalkOptions {
        follow: false,
        exclude: opts.exclude.clone(),
        threads: crate::walk::default_threads(),
        stat: true,
    };
    walk(root, &walk_opts, &mut |ev| {
        let (path, size) = match ev {
            WalkEvent::File(path, Some(stamp)) => (path, stamp.size),
            // Not stat'ed while listed: it went, or the stat failed; look again.
            WalkEvent::File(path, None) => match std::fs::symlink_metadata(&path) {
                Ok(md) if md.is_file() => (path, md.len()),
                Ok(_) => return true,
                Err(e) => {
                    summary.errors += 1;
                    on(Event::Error { path: path_bytes(&path), message: io_message(&e) });
                    return true;
                }
            },
            WalkEvent::Skipped(..) => return true,
            WalkEvent::Error(path, e) => {
                summary.errors += 1;
                on(Event::Error { path: path_bytes(&path), message: io_message(&e) });
                return true;
            }
        };
        if size >= opts.min_size {
            let name = path_bytes(&path);
            entries.push(Entry { size, at: names.len(), len: name.len() });
            names.extend_from_slice(name);
        }
        true
    });
    summary.files_considered = entries.len() as u64;
    entries.sort_unstable_by_key(|e| (e.size, e.at));
    retain_shared_sizes(&mut entries);
    let name = |e: &Entry| &names[e.at..e.at + e.len];

    // 2. Probes, in parallel.
    let probed = probe_all(&entries, &names, cfg.workers.clamp(1, 64), blake3);
    let mut probes: Vec<Option<Probe>> = Vec::with_capacity(entries.len());
    for (e, p) in entries.iter().zip(probed) {
        summary.files_read += 1;
        match p {
            Ok(p) => {
                summary.bytes_read += p.read;
                probes.push(Some(p));
            }
            Err(err) => {
                summary.errors += 1;
                on(Event::Error { path: name(e), message: err.message() });
                probes.push(None);
            }
        }
    }

    // Classes of (size, probe key) with two files or more: a whole probe is final; the
    // others need one whole read per inode.
    let mut order: Vec<usize> = (0..entries.len()).filter(|&i| probes[i].is_some()).collect();
    let class_of = |i: usize| {
        let p = probes[i].expect("kept");
        (entries[i].size, p.key.as_bytes().to_vec(), p.id)
    };
    order.sort_by_cached_key(|&i| class_of(i));
    let mut wanted = vec![false; entries.len()];
    let mut reps: Vec<usize> = Vec::new();
    for class in order.chunk_by(|&a, &b| {
        let (pa, pb) = (probes[a].expect("kept"), probes[b].expect("kept"));
        entries[a].size == entries[b].size && pa.key.as_bytes() == pb.key.as_bytes()
    }) {
        let first = probes[class[0]].expect("kept");
        if class.iter().all(|&i| probes[i].expect("kept").id == first.id) {
            continue;
        }
        for &i in class {
            wanted[i] = true;
        }
        if !first.whole {
            // One per inode: the class is sorted by inode within.
            reps.extend(
                class
                    .chunk_by(|&a, &b| probes[a].map(|p| p.id) == probes[b].map(|p| p.id))
                    .map(|c| c[0]),
            );
        }
    }

    // 3. Whole reads of the large ones, in path order, through the engine.
    reps.sort_unstable_by_key(|&i| entries[i].at);
    let bytes: u64 = reps.iter().map(|&i| entries[i].size).sum();
    on(Event::Reading { files: reps.len() as u64, bytes });
    let algos: Arc<[&'static Algorithm]> = Arc::from(vec![blake3]);
    let mut whole: HashMap<(u64, u64), Digest> = HashMap::with_capacity(reps.len());
    pipeline::run(
        cfg,
        |push| {
            for &i in &reps {
                let work = Work {
                    path: bytes_path(name(&entries[i])),
                    mode: OpenMode::Walked { follow: false },
                    algos: algos.clone(),
                };
                if !push(Task { payload: i, work: Some(work) }) {
                    return;
                }
            }
        },
        |i, outcome| {
            let e = &entries[i];
            let got = match outcome {
                Some(Ok(h)) if h.size == e.size => Ok(h),
                Some(Ok(_)) => Err(ReadError::Changed),
                Some(Err(err)) => Err(err),
                None => return true,
            };
            match got {
                Ok(h) => {
                    summary.bytes_read += h.size;
                    whole.insert(probes[i].expect("kept").id, h.digests[0]);
                }
                Err(err) => {
                    summary.errors += 1;
                    on(Event::Error { path: name(e), message: err.message() });
                }
            }
            true
        },
    );

    // 4. Ranking.
    let mut ranker = Ranker::new(&opts.temp_dir, opts.sort_budget);
    for (i, e) in entries.iter().enumerate() {
        let Some(p) = probes[i].filter(|_| wanted[i]) else { continue };
        let key = if p.whole { Some(p.key) } else { whole.get(&p.id).copied() };
        if let Some(key) = key {
            ranker.push(&Candidate {
                size: e.size,
                key: key.as_bytes(),
                id: p.id,
                path: name(e),
            })?;
        }
    }
    let [groups, files, links, wasted] = ranker.finish(blake3.name, on)?;
    (summary.groups, summary.files, summary.links, summary.wasted_bytes) =
        (groups, files, links, wasted);
    Ok(summary)
}

/// Probes every entry on `threads` threads, each taking the next entry when it is done
/// with one (no thread waits for another's slow file); the results in the entries' order.
fn probe_all(
    entries: &[Entry],
    names: &[u8],
    threads: usize,
    algo: &'static Algorithm,
) -> Vec<Result<Probe, ReadError>> {
    let next = AtomicUsize::new(0);
    let work = || {
        let (mut buf, mut got) = (Vec::new(), Vec::new());
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(e) = entries.get(i) else { return got };
            let path = bytes_path(&names[e.at..e.at + e.len]);
            got.push((i, probe(&path, e.size, algo, &mut buf)));
        }
    };
    let mut out: Vec<Option<Result<Probe, ReadError>>> = entries.iter().map(|_| None).collect();
    let threads = threads.min(entries.len());
    let done: Vec<Vec<_>> = if threads <= 1 {
        vec![work()]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|_| s.spawn(work)).collect();
            handles.into_iter().map(|h| h.join().expect("a probe thread panicked")).collect()
        })
    };
    for (i, r) in done.into_iter().flatten() {
        out[i] = Some(r);
    }
    out.into_iter().map(|r| r.expect("every entry probed")).collect()
}

/// Keeps the entries (sorted by size) whose size another entry has.
fn retain_shared_sizes(entries: &mut Vec<Entry>) {
    let mut keep = vec![false; entries.len()];
    let mut i = 0;
    while i < entries.len() {
        let j = i + entries[i..].iter().take_while(|e| e.size == entries[i].size).count();
        if j - i >= 2 {
            keep[i..j].iter_mut().for_each(|k| *k = true);
        }
        i = j;
    }
    let mut k = keep.into_iter();
    entries.retain(|_| k.next().unwrap_or(false));
}

/// Opens the walked file at `path` (expected of `size` bytes) and probes it with `algo`
/// (see the module's description); `buf` is the thread's buffer.
fn probe(
    path: &Path,
    size: u64,
    algo: &'static Algorithm,
    buf: &mut Vec<u8>,
) -> Result<Probe, ReadError> {
    let file = crate::read::open(path, OpenMode::Walked { follow: false })?;
    let before = file.metadata().map_err(ReadError::Io)?;
    if !before.is_file() {
        return Err(ReadError::NotRegular(crate::device::kind_name(&before.file_type())));
    }
    if before.len() != size {
        return Err(ReadError::Changed);
    }
    let mut h = algo.hasher();
    let whole = size <= WHOLE_UP_TO;
    let read = if whole {
        // One byte more than the size: a file that grew is seen.
        buf.resize(size as usize + 1, 0);
        let n = read_at_most(&file, buf)?;
        if n as u64 != size {
            return Err(ReadError::Changed);
        }
        h.update(&buf[..n]);
        let after = file.metadata().map_err(ReadError::Io)?;
        if crate::device::mtime_ns(&after) != crate::device::mtime_ns(&before)
            || after.len() != size
        {
            return Err(ReadError::Changed);
        }
        size
    } else {
        buf.resize(2 * HEAD as usize, 0);
        let (head, tail) = buf.split_at_mut(HEAD as usize);
        let exact = |part: &mut [u8], at: u64| {
            file.read_exact_at(part, at).map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => ReadError::Changed,
                _ => ReadError::Io(e),
            })
        };
        exact(head, 0)?;
        exact(tail, size - HEAD)?;
        h.update(buf);
        2 * HEAD
    };
    Ok(Probe { id: crate::sys::id(&file, &before), key: h.finish(), whole, read })
}

/// Reads from the start of `file` until `buf` is full or the file ends; the bytes read.
fn read_at_most(file: &std::fs::File, buf: &mut [u8]) -> Result<usize, ReadError> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    Ok(n)
}
