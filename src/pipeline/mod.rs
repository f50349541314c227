//! The parallel engine shared by `hash` and `check`: a producer (a tree walk or a manifest
//! parser) emits tasks in order; a pool of workers reads and hashes them; results come
//! back to the caller in the producer's order, as soon as each one's predecessors are done.
//!
//! Memory is bounded: at most `window` tasks exist at once (queued, being hashed, or
//! waiting for a slower predecessor), whatever the size of the tree. Many workers keep
//! many reads in flight, which is what small files on a cold cache need; a seeking disk
//! gets one reader at a time, so the head moves in one sequential sweep, and its files
//! are read in physical order (the storage policy, [`crate::storage`], decides per device).
//!
//! Each worker hashes a file with [`hash_path`]: the engine picks the file's read plan
//! from the algorithms' registry rows (`plan_for`) and the reader carries it out.

use crate::algo::{Access, Algorithm, Hasher};
use crate::digest::Digest;
use crate::read::{Fetch, OnChange, OpenMode, ReadError, ReadOptions, ReadPlan, Reader, Serial};
use crate::storage::Devices;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a worker does for a task.
#[derive(Clone, Debug)]
pub struct Work {
    /// The file to read.
    pub path: PathBuf,
    /// How to open it.
    pub mode: OpenMode,
    /// The algorithms to compute, in output order.
    pub algos: Arc<[&'static Algorithm]>,
}

/// One unit from the producer. A task without work (a warning, a malformed manifest line)
/// passes through to the consumer in its place in the order.
pub struct Task<T> {
    /// The caller's data, handed back with the result.
    pub payload: T,
    /// The file to hash, if any.
    pub work: Option<Work>,
}

/// A file read to the end and hashed.
#[derive(Clone, Debug)]
pub struct Hashed {
    /// Bytes read.
    pub size: u64,
    /// Modification time (ns since the epoch) at the start of the read, if a file.
    pub mtime_ns: Option<i128>,
    /// One digest per requested algorithm, in the order requested.
    pub digests: Vec<Digest>,
    /// (device, inode) of a regular file.
    pub file_id: Option<(u64, u64)>,
    /// Inode change time (ns since the epoch) at the start of the read, if a file.
    pub ctime_ns: Option<i128>,
    /// Its permission bits, owner and group, if a file.
    pub access: Option<crate::device::Access>,
}

/// A finished task.
pub(crate) type Outcome = Option<Result<Hashed, ReadError>>;

/// Files at least this large are mapped rather than copied through a buffer when no
/// algorithm hashes a mapping on several threads: below it, mapping costs more than the
/// copy it saves.
const MAP_SERIAL_FROM: u64 = 4 * 1024 * 1024;

/// The read plan for hashing with `algos`, from what each one's registry row says
/// reading for it needs ([`Algorithm::access`]) and the run's mapping threshold.
pub(crate) fn plan_for(algos: &[&'static Algorithm], opts: &ReadOptions) -> ReadPlan {
    let sampled = algos.iter().find(|a| a.access() == Access::Sampled);
    let fetch = if sampled.is_some() && algos.iter().all(|a| a.access() == Access::Sampled) {
        // Only sampled algorithms: read their ranges, not the file.
        Fetch::Samples
    } else if let Some(t) = opts.mmap_threshold {
        // Map large files: from the threshold for one algorithm that hashes a mapping on
        // several threads (BLAKE3), from `MAP_SERIAL_FROM` for the others.
        let parallel = algos.len() == 1 && algos[0].access() == Access::Parallel;
        Fetch::Mapped { from: if parallel { t } else { t.max(MAP_SERIAL_FROM) }, parallel }
    } else {
        Fetch::Whole
    };
    ReadPlan { fetch, needs_size: sampled.map(|a| a.name), on_change: OnChange::Refuse }
}

/// Opens, reads and hashes `path` with every algorithm in `algos`: what each worker does
/// for a task. `buf` is the caller's reusable read buffer; `serial` the storage policy
/// that may let one reader at a time at a seeking disk (see [`Reader`]).
pub fn hash_path(
    path: &Path,
    mode: OpenMode,
    algos: &[&'static Algorithm],
    buf: &mut Vec<u8>,
    opts: &ReadOptions,
    serial: Option<&dyn Serial>,
) -> Result<Hashed, ReadError> {
    if mode != OpenMode::Stdin {
        let file = crate::read::open(path, mode)?;
        return hash_file(&file, path, mode, algos, buf, opts, serial);
    }
    let (mut hashers, plan) = hashers_and_plan(algos, opts);
    let got = Reader { buf, opts, serial }.read_path(path, mode, &plan, &mut hashers)?;
    Ok(finished(got, &hashers))
}

/// [`hash_path`] for a file already opened from `path` (with [`crate::read::open`], or
/// beneath a directory with `confine`: a repair's look at a tree's file).
pub(crate) fn hash_file(
    file: &std::fs::File,
    path: &Path,
    mode: OpenMode,
    algos: &[&'static Algorithm],
    buf: &mut Vec<u8>,
    opts: &ReadOptions,
    serial: Option<&dyn Serial>,
) -> Result<Hashed, ReadError> {
    let (mut hashers, plan) = hashers_and_plan(algos, opts);
    let got = Reader { buf, opts, serial }.read_file(file, path, mode, &plan, &mut hashers)?;
    Ok(finished(got, &hashers))
}

/// A fresh hasher per algorithm, and the read plan they need.
fn hashers_and_plan(
    algos: &[&'static Algorithm],
    opts: &ReadOptions,
) -> (Vec<Box<dyn Hasher>>, ReadPlan) {
    (algos.iter().map(|a| a.hasher()).collect(), plan_for(algos, opts))
}

/// What hashing a file gave: its digests, with what the read learnt of it.
fn hashed(got: crate::read::Fetched, digests: Vec<Digest>) -> Hashed {
    Hashed {
        size: got.size,
        mtime_ns: got.mtime_ns,
        digests,
        file_id: got.file_id,
        ctime_ns: got.ctime_ns,
        access: got.access,
    }
}

/// The digests of `hashers`, which have read all of `got`.
fn finished(got: crate::read::Fetched, hashers: &[Box<dyn Hasher>]) -> Hashed {
    hashed(got, hashers.iter().map(|h| h.finish()).collect())
}

/// The cores this process may use (its CPU affinity and cgroup quota), asked of the
/// system once per run: the question reads several files under /proc and /sys.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Engine settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Worker threads (reads in flight).
    pub workers: usize,
    /// Most tasks alive at once.
    pub window: usize,
    /// Read settings.
    pub read: ReadOptions,
    /// One reader at a time for every file, whatever its device: reads happen in
    /// producer order, one file after another, while hashing of small files still uses
    /// every worker. Without it, `storage` decides per device.
    pub serial_reads: bool,
    /// The storage policy per device (see [`crate::storage`]): which devices get one
    /// reader at a time and their files in physical order. `None`: every read in parallel
    /// (unless `serial_reads`).
    pub storage: Option<Arc<Devices>>,
}

/// Most worker threads a run starts, whatever `-j` asks: enough reads in flight for any
/// network file system, few enough that thread stacks and buffers stay small.
pub(crate) const MAX_WORKERS: usize = 256;

/// Default ceiling on the read buffers of all workers together.
pub const DEFAULT_BUFFER_BUDGET: u64 = 256 * 1024 * 1024;

/// The smallest read buffer a budget may shrink a worker's to.
const MIN_BUFFER: usize = 64 * 1024;

impl Config {
    /// Applies the user's worker count and the total read-buffer `budget`: workers are
    /// capped at `MAX_WORKERS`, and each worker's buffer shrinks so that all of them
    /// together stay within the budget (down to 64 KiB each; below that, fewer workers).
    /// Returns a note for the user when `jobs` was more than the cap.
    pub fn bounded(mut self, jobs: Option<usize>, budget: u64) -> (Config, Option<String>) {
        let mut note = None;
        if let Some(j) = jobs {
            self.workers = j.max(1);
            if j > MAX_WORKERS {
                note = Some(format!(
                    "-j {j} is more than the {MAX_WORKERS} worker threads fixity runs at most; \
                     using {MAX_WORKERS}"
                ));
            }
        }
        self.workers = self.workers.clamp(1, MAX_WORKERS);
        let budget = usize::try_from(budget).unwrap_or(usize::MAX).max(MIN_BUFFER);
        self.workers = self.workers.min(budget / MIN_BUFFER).max(1);
        let share = (budget / self.workers).max(MIN_BUFFER);
        if self.read.buffer_size > share {
            // Whole multiples of 64 KiB keep reads aligned to pages.
            self.read.buffer_size = share / MIN_BUFFER * MIN_BUFFER;
        }
        (self, note)
    }

    /// Defaults for data on `rotational` or solid-state storage.
    pub fn for_storage(rotational: bool) -> Config {
        let cores = cores();
        if rotational {
            // One sequential reader: seeking between files in flight would cost more than
            // any parallel hashing gains. Files are mapped only when already cached: page
            // faults from several threads come in random order.
            // A wide window: files are read in physical order in batches of up to half of
            // it (`storage::Dispatch`), and a denser batch is a shorter sweep.
            Config {
                workers: cores,
                window: 32768,
                read: ReadOptions {
                    buffer_size: 4 * 1024 * 1024,
                    mmap_threshold: Some(64 * 1024),
                    skip_inodes: [None; 2],
                    progress: None,
                    advise: true,
                },
                serial_reads: true,
                storage: None,
            }
        } else {
            Config {
                workers: (cores * 4).max(8),
                window: 8192,
                read: ReadOptions::default(),
                serial_reads: false,
                storage: None,
            }
        }
    }

    /// Defaults for a run whose storage decisions are `devices`: one sequential reader's
    /// settings when every device decided is seeking, many reads in flight otherwise (more
    /// for network storage); each device's reads are serialized, or not, as its decision
    /// says.
    pub fn for_devices(devices: Arc<Devices>) -> Config {
        let mut c = Config::for_storage(devices.all_seeking());
        if devices.any_network() {
            c.workers = c.workers.max(32);
        }
        c.serial_reads = false;
        c.storage = Some(devices);
        c
    }
}

mod gate;
mod lanes;
mod run;
pub use run::run;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::lookup;

    #[test]
    fn workers_and_buffers_are_bounded() {
        let base = Config::for_storage(true);
        assert_eq!(base.read.buffer_size, 4 << 20);
        let (c, note) = base.clone().bounded(Some(100_000), DEFAULT_BUFFER_BUDGET);
        assert_eq!(c.workers, MAX_WORKERS);
        assert!(note.unwrap().contains("-j 100000"));
        assert!(c.workers as u64 * c.read.buffer_size as u64 <= DEFAULT_BUFFER_BUDGET);
        assert_eq!(c.read.buffer_size, 1 << 20);
        let (c, note) = base.clone().bounded(Some(8), DEFAULT_BUFFER_BUDGET);
        assert_eq!((c.workers, c.read.buffer_size, note), (8, 4 << 20, None));
        // A tight budget shrinks buffers, then the number of workers.
        let (c, _) = base.clone().bounded(Some(8), 1 << 20);
        assert_eq!((c.workers, c.read.buffer_size), (8, 128 << 10));
        let (c, _) = base.bounded(Some(64), 256 << 10);
        assert_eq!((c.workers, c.read.buffer_size), (4, 64 << 10));
        let (c, _) = Config::for_storage(false).bounded(None, 0);
        assert_eq!((c.workers, c.read.buffer_size), (1, 64 << 10));
    }

    /// The plan follows the registry rows: imohash alone reads samples, and with another
    /// algorithm makes streams refused; BLAKE3 alone is mapped from the threshold, the
    /// others from 4 MiB; no threshold, no mapping.
    #[test]
    fn the_read_plan_follows_the_rows() {
        let a = |n| lookup(n).unwrap();
        let o = ReadOptions::default();
        let t = o.mmap_threshold.unwrap();
        let plan = plan_for(&[a("imohash")], &o);
        assert_eq!((plan.fetch, plan.needs_size), (Fetch::Samples, Some("imohash")));
        let plan = plan_for(&[a("md5"), a("imohash")], &o);
        let mapped = Fetch::Mapped { from: MAP_SERIAL_FROM, parallel: false };
        assert_eq!((plan.fetch, plan.needs_size), (mapped, Some("imohash")));
        let plan = plan_for(&[a("blake3")], &o);
        assert_eq!(
            (plan.fetch, plan.needs_size),
            (Fetch::Mapped { from: t, parallel: true }, None)
        );
        let plan = plan_for(&[a("blake3"), a("md5")], &o);
        assert_eq!(plan.fetch, mapped);
        let off = ReadOptions { mmap_threshold: None, ..o };
        assert_eq!(plan_for(&[a("blake3")], &off).fetch, Fetch::Whole);
        assert_eq!(plan_for(&[a("imohash")], &off).fetch, Fetch::Samples);
        assert!(plan_for(&[a("sha256")], &o).on_change == OnChange::Refuse);
    }

    #[test]
    fn results_come_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let md5: Arc<[&'static Algorithm]> = Arc::from(vec![lookup("md5").unwrap()]);
        let mut paths = Vec::new();
        for i in 0..300 {
            let p = dir.path().join(format!("f{i:03}"));
            // Vary sizes so workers finish out of order.
            std::fs::write(&p, vec![i as u8; (i * 7919) % 200_000]).unwrap();
            paths.push(p);
        }
        let cfg =
            Config { workers: 8, window: 16, serial_reads: false, ..Config::for_storage(false) };
        let mut seen = Vec::new();
        run(
            &cfg,
            |push| {
                for (i, p) in paths.iter().enumerate() {
                    let work = (i % 10 != 0).then(|| Work {
                        path: p.clone(),
                        mode: OpenMode::Named,
                        algos: md5.clone(),
                    });
                    if !push(Task { payload: i, work }) {
                        return;
                    }
                }
            },
            |i, outcome| {
                assert_eq!(outcome.is_none(), i % 10 == 0);
                if let Some(Ok(h)) = outcome {
                    assert_eq!(h.size as usize, (i * 7919) % 200_000);
                }
                seen.push(i);
                true
            },
        );
        assert_eq!(seen, (0..300).collect::<Vec<_>>());
    }

    #[test]
    fn sink_can_stop_early() {
        let cfg =
            Config { workers: 2, window: 4, serial_reads: true, ..Config::for_storage(false) };
        let mut count = 0;
        run(
            &cfg,
            |push| {
                for i in 0..1_000_000u32 {
                    if !push(Task { payload: i, work: None }) {
                        return;
                    }
                }
                panic!("producer should have been stopped");
            },
            |_, _| {
                count += 1;
                count < 10
            },
        );
        assert_eq!(count, 10);
    }
}
