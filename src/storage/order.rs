//! Physical order on seeking disks: the engine's producer hands its tasks to a
//! [`Dispatch`], which passes most on at once and holds back those of files on a seeking
//! device whose data is not cached, then hands a batch on sorted by where each file's data
//! starts on the device (its first extent, from FIEMAP; the inode number where the file
//! system does not say, as inodes are laid out near their data). The disk's head then
//! sweeps across the batch instead of jumping back and forth in name order. Several
//! seeking devices take turns in a batch, so each has work. The output order does not
//! change: the engine hands results back in the producer's order whatever order they are
//! read in.
//!
//! A batch is bounded in bytes and in files: half the engine's window, so that the next
//! batch gathers while one is read (results go out in order, so a batch's first task may
//! be read last, and the window must hold two). The first batches are smaller (256 files,
//! doubling), so that the disk starts reading soon. A batch goes out early only when the
//! engine can emit nothing until it does (its oldest task is held): handed on in pieces,
//! a batch is read in several sweeps, each skipping over the others' files.

use super::{Devices, Kind, Want};
use crate::device;
use crate::read::OpenMode;
use crate::sys::MetadataExt;
use std::path::{Path, PathBuf};

/// Files in a row without an extent after which a device's are not asked for one.
const GIVE_UP: u32 = 32;
/// Files in the first batch.
const FIRST_BATCH: usize = 256;
/// Most bytes held in one batch (what a disk reads in a few seconds).
const BATCH_BYTES: u64 = 1 << 30;

/// Where a file's data lies: what a batch is sorted by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Place {
    /// Byte offset of the first extent on the device (`u64::MAX`: not known).
    pub extent: u64,
    /// Inode number.
    pub ino: u64,
}

/// The producer's side of the storage policy: see the module notes. `J` is the engine's
/// task; `locate` gives its sequence number, the file it reads and how that is opened.
pub(crate) struct Dispatch<'a, J> {
    devices: Option<&'a Devices>,
    /// Most files in one batch, and in the next one (it doubles up to `batch`).
    batch: usize,
    next_batch: usize,
    locate: fn(&J) -> (u64, &Path, OpenMode),
    /// The directory of the last file looked at, and its device.
    parent: Option<(PathBuf, u64)>,
    held: Vec<(u64, Place, J)>,
    bytes: u64,
    /// Devices and how many of their files in a row had no extent to give.
    unplaced: Vec<(u64, u32)>,
}

impl<'a, J> Dispatch<'a, J> {
    /// A dispatcher for a run whose storage decisions are `devices` (none: every task is
    /// passed on at once), in batches of at most `batch` files.
    pub(crate) fn new(
        devices: Option<&'a Devices>,
        batch: usize,
        locate: fn(&J) -> (u64, &Path, OpenMode),
    ) -> Self {
        let batch = batch.max(1);
        Dispatch {
            devices,
            batch,
            next_batch: FIRST_BATCH.min(batch),
            locate,
            parent: None,
            held: Vec::new(),
            bytes: 0,
            unplaced: Vec::new(),
        }
    }

    /// Whether the task numbered `next`, the next the engine has to emit, is held: nothing
    /// can be emitted until the batch goes out.
    pub(crate) fn holds(&self, next: u64) -> bool {
        self.held.first().is_some_and(|(_, _, job)| (self.locate)(job).0 <= next)
    }

    /// Hands `job` to `send` now, or holds it to go out in physical order.
    pub(crate) fn admit(&mut self, job: J, send: &mut dyn FnMut(J)) {
        match self.place(&job) {
            Some((dev, place, size)) => {
                self.held.push((dev, place, job));
                self.bytes += size;
            }
            None => send(job),
        }
        if self.held.len() >= self.next_batch || self.bytes >= BATCH_BYTES {
            self.flush(send);
        }
    }

    /// Hands every held task on, in physical order.
    pub(crate) fn flush(&mut self, send: &mut dyn FnMut(J)) {
        if self.held.is_empty() {
            return;
        }
        self.bytes = 0;
        self.next_batch = (self.next_batch * 2).min(self.batch);
        for job in arrange(std::mem::take(&mut self.held)) {
            send(job);
        }
    }

    /// The device, place and size of the file `job` reads, if it is to be held: on a
    /// seeking device that has had reads wait for it, a regular file.
    fn place(&mut self, job: &J) -> Option<(u64, Place, u64)> {
        let devices = self.devices.filter(|d| d.ordering())?;
        let (_, path, mode) = (self.locate)(job);
        if mode == OpenMode::Stdin {
            return None;
        }
        let dev = self.dev_of(path)?;
        let policy = devices.policy(dev, path, Want::Now)?;
        if policy.kind != Kind::Seeking || !policy.cold.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let asked = self.unplaced.iter().position(|(d, _)| *d == dev);
        let ask = asked.is_none_or(|i| self.unplaced[i].1 < GIVE_UP);
        let (place, size) = place_of(path, mode, ask)?;
        // Count the files of a device whose file system gives no extents (FUSE, NFS):
        // after `GIVE_UP` in a row it is not asked again (each ask opens the file).
        match (asked, place.extent == u64::MAX && size > 0) {
            (Some(i), true) => self.unplaced[i].1 += 1,
            (None, true) => self.unplaced.push((dev, 1)),
            (Some(i), false) if ask => self.unplaced[i].1 = 0,
            _ => {}
        }
        Some((dev, place, size))
    }

    /// The device of the directory holding `path` (a file's own device but where a file is
    /// a mount point of its own), asked once per directory.
    fn dev_of(&mut self, path: &Path) -> Option<u64> {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if let Some((last, dev)) = &self.parent
            && last == dir
        {
            return Some(*dev);
        }
        let dev = std::fs::metadata(dir).ok()?.dev();
        self.parent = Some((dir.to_path_buf(), dev));
        Some(dev)
    }
}

/// Where the regular file at `path` (opened as `mode` would) has its data, and its size.
/// Only its metadata is read, never its content; a path confined beneath a directory
/// (`--confine`) is not opened here, and goes by its inode.
/// `extents`: whether to ask for the first extent (a file system known not to say is not
/// asked again).
pub(crate) fn place_of(path: &Path, mode: OpenMode, extents: bool) -> Option<(Place, u64)> {
    let nofollow = matches!(mode, OpenMode::Walked { follow: false } | OpenMode::Beneath);
    let md = if nofollow { std::fs::symlink_metadata(path) } else { std::fs::metadata(path) };
    let md = md.ok().filter(|m| m.is_file())?;
    let extent = if mode == OpenMode::Beneath || !extents || md.len() == 0 {
        None
    } else {
        let mut oo = std::fs::OpenOptions::new();
        crate::sys::reading(oo.read(true), Some(!nofollow));
        let file = oo.open(path).ok();
        file.and_then(|f| device::first_extent(&f))
    };
    Some((Place { extent: extent.unwrap_or(u64::MAX), ino: crate::sys::inode_hint(&md) }, md.len()))
}

/// The held tasks in the order to read them: each device's in physical order, the
/// devices taking turns.
pub(crate) fn arrange<J>(mut held: Vec<(u64, Place, J)>) -> Vec<J> {
    held.sort_by_key(|(dev, place, _)| (*dev, *place));
    let mut runs: Vec<std::collections::VecDeque<J>> = Vec::new();
    let mut last = None;
    for (dev, _, job) in held {
        if last != Some(dev) {
            runs.push(std::collections::VecDeque::new());
            last = Some(dev);
        }
        runs.last_mut().expect("pushed").push_back(job);
    }
    let mut out = Vec::new();
    while !runs.is_empty() {
        runs.retain_mut(|run| match run.pop_front() {
            Some(job) => {
                out.push(job);
                true
            }
            None => false,
        });
    }
    out
}
