//! The probe: what a device does when asked for small blocks at scattered places, and the
//! decision drawn from that. A seeking disk answers a random 4 KiB read in milliseconds
//! (the head moves, the platter turns); flash, virtual disks backed by flash, and RAM
//! answer in a fraction of one. The blocks read belong to files the run reads anyway:
//! the largest regular files near the first one seen on the device. Blocks are read with
//! `O_DIRECT` where the file system allows it (the page cache is bypassed, so what is
//! timed is the device), else only blocks that `preadv2(RWF_NOWAIT)` shows are not cached
//! (after asking the kernel to drop them) are timed. Network file systems are known by
//! their type, memory ones too: neither is probed.
//!
//! [`gather`] collects the facts (file system type, the kernel's rotational flag, the
//! timings); [`decide`] is a pure function of them, so recorded timings test it.

use super::Kind;
use crate::device;
use crate::sys::{FileExt, MetadataExt};
use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The size of each probe read.
pub(crate) const BLOCK: usize = 4096;
/// Most reads one probe makes.
const MAX_READS: usize = 8;
/// Fewest timed reads a decision rests on; fewer, and the kernel's flag decides.
const MIN_READS: usize = 3;
/// A median random read this slow or slower (milliseconds) is a head moving.
const SEEKING_MS: f64 = 2.0;
/// Reads all faster than this (milliseconds) after `MIN_READS` settle it: no disk head
/// moves that fast three times in a row.
const CLEARLY_FLASH_MS: f64 = 0.5;
/// Files sampled per device.
const FILES: usize = 8;
/// Directory entries looked at to find them.
const LOOK_AT: usize = 512;

/// File system types whose data is across a network: many reads in flight hide latency.
const NETWORK: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ncpfs",
    "afs",
    "ceph",
    "fuse.ceph",
    "fuse.cephfs",
    "lustre",
    "gpfs",
    "9p",
    "virtiofs",
    "glusterfs",
    "fuse.glusterfs",
    "beegfs",
    "orangefs",
    "fuse.sshfs",
    "sshfs",
    "fuse.rclone",
    "fuse.s3fs",
    "fuse.gcsfuse",
    "fuse.davfs2",
    "davfs",
    "fuse.juicefs",
    "fuse.mfsmount",
];

/// File system types held in memory: nothing to seek.
const MEMORY: &[&str] = &[
    "tmpfs",
    "ramfs",
    "devtmpfs",
    "proc",
    "sysfs",
    "hugetlbfs",
    "debugfs",
    "tracefs",
    "securityfs",
    "configfs",
    "cgroup",
    "cgroup2",
    "bpf",
    "efivarfs",
    "pstore",
    "mqueue",
];

/// How much a caller wants to know about a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// Its name and file system only (the user chose the policy with `--storage`).
    Name,
    /// Its name, and whether the data sampled is all in the page cache (`--storage hdd`:
    /// files are put in physical order only when they have to be read from the disk).
    Cache,
    /// A decision, unless every block sampled is in the page cache: then nothing would
    /// be read from the device anyway, and the decision waits for a read that would
    /// (before a run: no device read is spent on a warm tree).
    IfCold,
    /// A decision now (a read is about to wait for the device).
    Now,
}

/// What a probe measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    /// Milliseconds per timed read, in the order made.
    pub reads_ms: Vec<f64>,
    /// Blocks found in the page cache and left untimed (they say nothing of the device).
    pub cached: usize,
    /// Whether the reads bypassed the page cache (`O_DIRECT`).
    pub direct: bool,
}

/// Whether and how the device was probed.
#[derive(Clone, Debug, PartialEq)]
pub enum Probe {
    /// Reads were made and timed.
    Timed(Timings),
    /// Not probed, and why (nothing to read, permission, the policy was forced).
    NotRun(String),
    /// Every block sampled was in the page cache ([`Want::IfCold`]): no decision yet.
    Deferred,
}

/// Everything a decision rests on.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    /// How the device is named: the mounted source (`/dev/vda1`, `server:/export`).
    pub device: String,
    /// The file system type.
    pub fs_type: Option<String>,
    /// The kernel's rotational flag, if it has one for the device.
    pub rotational: Option<bool>,
    /// The probe.
    pub probe: Probe,
    /// Whether some of the data sampled is not in the page cache (`None`: not sampled).
    pub uncached: Option<bool>,
}

/// The median of `v` (the mean of the two middle values for an even count).
pub(crate) fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 })
}

/// Whether the reads so far settle the question: all of `MAX_READS`, or at least
/// `MIN_READS` that are all clearly fast or all clearly slow.
pub(crate) fn settled(reads_ms: &[f64]) -> bool {
    let n = reads_ms.len();
    n >= MAX_READS
        || n >= MIN_READS
            && (reads_ms.iter().all(|&t| t < CLEARLY_FLASH_MS)
                || reads_ms.iter().all(|&t| t >= 2.0 * SEEKING_MS))
}

/// Where the user chose the storage policy: the command line's `--storage`, or the
/// environment's `FIXITY_STORAGE` (the drop-ins' only way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForcedBy {
    Option,
    Env,
}

/// The policy for a device and the evidence for it, in words: a pure function of the
/// facts. `forced` is the user's choice (`--storage`, `FIXITY_STORAGE`), named as given.
pub(crate) fn decide(facts: &Facts, forced: Option<(Kind, ForcedBy)>) -> (Kind, String) {
    if let Some((kind, by)) = forced {
        let flag = if kind == Kind::Seeking { "hdd" } else { "ssd" };
        return match by {
            ForcedBy::Option => (kind, format!("--storage {flag}")),
            ForcedBy::Env => (kind, format!("FIXITY_STORAGE={flag}")),
        };
    }
    let fs = facts.fs_type.as_deref().unwrap_or("");
    if NETWORK.contains(&fs) {
        return (Kind::Network, format!("network file system {fs}"));
    }
    if MEMORY.contains(&fs) {
        return (Kind::Flash, format!("file system {fs}, in memory"));
    }
    let says = &crate::device::SAYS;
    let flag = match facts.rotational {
        Some(true) => says.rotational,
        Some(false) => says.not_rotational,
        None => says.unknown,
    };
    let fallback = |why: String| {
        let kind = if facts.rotational == Some(true) { Kind::Seeking } else { Kind::Flash };
        (kind, format!("not probed: {why}; {flag}"))
    };
    match &facts.probe {
        Probe::Timed(t) if t.reads_ms.len() >= MIN_READS => {
            let m = median(&t.reads_ms).expect("at least MIN_READS");
            let kind = if m >= SEEKING_MS { Kind::Seeking } else { Kind::Flash };
            let how = if t.direct { says.uncached } else { "uncached" };
            let n = t.reads_ms.len();
            (kind, format!("median random 4 KiB read {m:.2} ms over {n} {how} reads; {flag}"))
        }
        Probe::Timed(t) => fallback(format!(
            "{} uncached block(s) could be timed, {} were in the page cache",
            t.reads_ms.len(),
            t.cached
        )),
        Probe::NotRun(why) => fallback(why.clone()),
        Probe::Deferred => fallback("every block sampled is in the page cache".into()),
    }
}

/// The facts about device `dev` (an `st_dev`), probing files near `seed` (a file or a
/// directory on it) as `want` says.
pub(crate) fn gather(dev: u64, seed: &Path, want: Want) -> Facts {
    let mount = device::mount_of(dev);
    let device = mount.as_ref().map_or_else(|| device::device_name(dev), |m| m.source.clone());
    let fs_type = mount.map(|m| m.fs_type);
    let fs = fs_type.as_deref().unwrap_or("");
    // A file whose sampled blocks are all cached, before a run (a warm one-file run, the
    // way scripts call checksum tools): nothing to decide yet, and nothing more to read.
    if want == Want::IfCold && !NETWORK.contains(&fs) && !MEMORY.contains(&fs) {
        let seed_only: Vec<(PathBuf, u64)> = match std::fs::metadata(seed) {
            Ok(md) if md.is_file() && md.len() > 0 => vec![(seed.to_path_buf(), md.len())],
            _ => Vec::new(),
        };
        let plan = plan(&seed_only);
        if !plan.is_empty() && all_cached(&seed_only, &plan) {
            let probe = Probe::Deferred;
            return Facts { device, fs_type, rotational: None, probe, uncached: Some(false) };
        }
    }
    let rotational = device::rotational(dev);
    let mut uncached = None;
    let probe = if want == Want::Name || NETWORK.contains(&fs) || MEMORY.contains(&fs) {
        Probe::NotRun("not needed".into())
    } else {
        let files = sample_files(dev, seed);
        let plan = plan(&files);
        if plan.is_empty() {
            Probe::NotRun("no file with data to read".into())
        } else {
            let cold = !all_cached(&files, &plan);
            uncached = Some(cold);
            match want {
                Want::Cache => Probe::NotRun("not needed".into()),
                Want::IfCold if !cold => Probe::Deferred,
                _ => time(&files, &plan),
            }
        }
    };
    Facts { device, fs_type, rotational, probe, uncached }
}

/// Up to `FILES` of the largest non-empty regular files on `dev` near `seed`: the seed
/// itself if a file, the files of its directory (or, for a directory, of it and the
/// directories below it, breadth first: a few entries of each directory, a few of its
/// subdirectories), looking at `LOOK_AT` entries at most.
pub(crate) fn sample_files(dev: u64, seed: &Path) -> Vec<(PathBuf, u64)> {
    /// Entries looked at per directory, and subdirectories taken from each.
    const PER_DIR: usize = 64;
    const SUBDIRS: usize = 4;
    let mut out = Vec::new();
    let mut dirs = VecDeque::new();
    match std::fs::metadata(seed) {
        Ok(md) if md.is_file() => {
            if md.dev() == dev && md.len() > 0 {
                out.push((seed.to_path_buf(), md.len()));
            }
            let parent = seed.parent().filter(|p| !p.as_os_str().is_empty());
            dirs.push_back(parent.unwrap_or(Path::new(".")).to_path_buf());
        }
        Ok(md) if md.is_dir() => dirs.push_back(seed.to_path_buf()),
        _ => return out,
    }
    let mut looked = 0;
    while let Some(dir) = dirs.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut subdirs = 0;
        for entry in entries.flatten().take(PER_DIR) {
            looked += 1;
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_file() {
                let path = entry.path();
                match entry.metadata() {
                    Ok(md) if md.dev() == dev && md.len() > 0 && path != seed => {
                        out.push((path, md.len()))
                    }
                    _ => {}
                }
            } else if ft.is_dir()
                && subdirs < SUBDIRS
                && entry.file_name() != crate::pathtext::STATE_DIR
            {
                // Never fixity's own state: closing a descriptor of the catalog (or its
                // shared-memory index) drops every lock SQLite holds on it in this
                // process, and another process could then reset the index under it.
                subdirs += 1;
                dirs.push_back(entry.path());
            }
        }
        if looked >= LOOK_AT || out.len() >= 4 * FILES {
            break;
        }
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.1));
    out.truncate(FILES);
    out
}

/// Where to read: up to `MAX_READS` (file index, block-aligned offset) pairs, going round
/// the files so that two reads in a row are in different files, and spreading the reads
/// within a file over its length (the middle, near the start, near the end, ...).
pub(crate) fn plan(files: &[(PathBuf, u64)]) -> Vec<(usize, u64)> {
    const SPREAD: [(u64, u64); 8] =
        [(1, 2), (1, 8), (7, 8), (1, 4), (3, 4), (3, 8), (5, 8), (0, 1)];
    let mut out: Vec<(usize, u64)> = Vec::new();
    for (num, den) in SPREAD {
        for (i, (_, size)) in files.iter().enumerate() {
            let at = (*size as u128 * num as u128 / den as u128) as u64;
            let off = at / BLOCK as u64 * BLOCK as u64;
            if off < *size && !out.contains(&(i, off)) {
                out.push((i, off));
                if out.len() == MAX_READS {
                    return out;
                }
            }
        }
    }
    out
}

/// Opens a sample file for probing: never following a symlink, never blocking on a FIFO
/// that replaced it, with `O_DIRECT` when `direct`.
fn open(path: &Path, direct: bool) -> std::io::Result<File> {
    device::open_sample(path, direct)
}

/// Whether every planned block is in the page cache (as far as `RWF_NOWAIT` tells).
fn all_cached(files: &[(PathBuf, u64)], plan: &[(usize, u64)]) -> bool {
    plan.iter().all(|&(i, off)| {
        open(&files[i].0, false).is_ok_and(|f| device::cached_at(&f, off) == Some(true))
    })
}

/// Times the planned reads until [`settled`].
fn time(files: &[(PathBuf, u64)], plan: &[(usize, u64)]) -> Probe {
    // An O_DIRECT buffer is aligned to the block: a slice of a larger allocation.
    let mut raw = vec![0u8; 2 * BLOCK];
    let at = raw.as_ptr().align_offset(BLOCK);
    let buf = &mut raw[at..at + BLOCK];
    let mut t = Timings { direct: true, ..Timings::default() };
    let mut trouble = None;
    for &(i, off) in plan {
        let path = &files[i].0;
        let opened = match open(path, t.direct) {
            // The file system does not do O_DIRECT (tmpfs, some FUSE): cached reads.
            Err(e) if t.direct && device::direct_refused(&e) => {
                t.direct = false;
                open(path, false)
            }
            r => r,
        };
        let file = match opened {
            Ok(f) => f,
            Err(e) => {
                trouble = Some(format!("cannot open {}: {}", path.display(), e));
                continue;
            }
        };
        if !t.direct && device::cached_at(&file, off) == Some(true) {
            // Without O_DIRECT the page cache answers for what it holds: drop the block,
            // and leave it untimed if it stays (a file system that keeps its pages).
            device::advise(&file, off, BLOCK as u64, device::Advice::DontNeed);
            if device::cached_at(&file, off) == Some(true) {
                t.cached += 1;
                continue;
            }
        }
        let start = Instant::now();
        match file.read_at(buf, off) {
            Ok(_) => t.reads_ms.push(start.elapsed().as_secs_f64() * 1e3),
            Err(e) => trouble = Some(format!("cannot read {}: {}", path.display(), e)),
        }
        if settled(&t.reads_ms) {
            break;
        }
    }
    match trouble {
        Some(why) if t.reads_ms.is_empty() => Probe::NotRun(why),
        _ => Probe::Timed(t),
    }
}
